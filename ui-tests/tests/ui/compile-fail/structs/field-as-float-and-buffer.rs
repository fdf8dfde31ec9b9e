use ad_runtime::{Tangent, differentiate};

#[derive(Tangent)]
struct Params {
    w: [f64; 2],
}

#[differentiate]
fn sq_norm(a: [f64; 2]) -> f64 {
    a[0] * a[0] + a[1] * a[1]
}

// `copy` is only passed on by value, so `p.w` reads like a float there.
#[differentiate]
fn f(p: &Params, x: f64) -> f64 {
    let n = p.w.len() as f64;
    let copy = p.w;
    n * sq_norm(copy) * x
}

fn main() {}
