use ad_runtime::differentiate;

#[differentiate(respect(x))]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
