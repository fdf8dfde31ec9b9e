use ad_runtime::differentiate;

#[differentiate(vjp, hvp)]
fn g(xs: &[f64]) -> f64 {
    xs[0] * xs[1]
}

// The twins of `nested` differentiate `f_vjp` once more: a call passing a
// buffer is not supported there yet.
#[differentiate(vjp, nested)]
fn f(xs: &[f64]) -> f64 {
    g(xs) * xs[0]
}

fn main() {}
