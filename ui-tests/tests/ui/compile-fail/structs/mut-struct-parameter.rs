use ad_runtime::{Tangent, differentiate};

#[derive(Tangent)]
struct Params {
    a: f64,
}

// A struct the function changes is not a parameter struct.
#[differentiate]
fn f(p: &mut Params, x: f64) -> f64 {
    p.a * x
}

fn main() {}
