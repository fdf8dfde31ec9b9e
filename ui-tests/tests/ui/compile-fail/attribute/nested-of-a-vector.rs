use ad_runtime::differentiate;

// `nested` needs a scalar function: its `_vjp` takes one float seed.
#[differentiate(vjp, nested)]
fn f(x: f64) -> Vec<f64> {
    vec![x, x * x]
}

fn main() {}
