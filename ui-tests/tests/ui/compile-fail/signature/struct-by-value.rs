use ad_runtime::{Tangent, differentiate};

#[derive(Clone, Tangent)]
struct Params {
    w: f64,
}

#[differentiate]
fn scaled(p: Params, x: f64) -> f64 {
    p.w * x
}

fn main() {}
