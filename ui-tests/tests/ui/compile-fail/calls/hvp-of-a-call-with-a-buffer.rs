use ad_runtime::differentiate;

#[differentiate(vjp, hvp)]
fn g(xs: &[f64]) -> f64 {
    xs[0] * xs[1]
}

// `_hvp` handles calls of functions of floats and integers; a buffer argument
// is not supported yet.
#[differentiate(vjp, hvp)]
fn f(xs: &[f64], k: f64) -> f64 {
    g(xs) * k
}

fn main() {}
