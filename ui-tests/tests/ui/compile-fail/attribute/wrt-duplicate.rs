use ad_runtime::differentiate;

#[differentiate(wrt(x, x))]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
