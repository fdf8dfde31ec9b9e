use ad_runtime::differentiate;

#[differentiate]
fn g(x: f64) -> f64 {
    x.sin()
}

// The twins of `nested` differentiate `f_vjp` once more: calls are not supported yet.
#[differentiate(vjp, nested)]
fn f(x: f64) -> f64 {
    g(x) * x
}

fn main() {}
