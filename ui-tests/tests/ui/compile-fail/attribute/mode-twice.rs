use ad_runtime::differentiate;

#[differentiate(jvp, vjp, jvp)]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
