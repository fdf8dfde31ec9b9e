use ad_runtime::{Tangent, differentiate};

#[derive(Tangent)]
struct Params {
    w: [f64; 2],
}

#[differentiate]
fn f(p: &Params, x: f64) -> f64 {
    let n = p.w.len() as f64;
    let copy = p.w;
    n * copy[0] * x
}

fn main() {}
