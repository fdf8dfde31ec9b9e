use ad_runtime::differentiate;

#[differentiate]
fn g(x: f64) -> f64 {
    x.sin()
}

// `_hvp` does not differentiate calls of differentiated functions yet.
#[differentiate(vjp, hvp)]
fn f(x: f64) -> f64 {
    g(x) * x
}

fn main() {}
