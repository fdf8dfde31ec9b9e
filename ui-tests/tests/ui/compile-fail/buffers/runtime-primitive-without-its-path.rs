use ad_runtime::differentiate;

use ad_runtime::dot;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    dot(xs, xs)
}

fn main() {}
