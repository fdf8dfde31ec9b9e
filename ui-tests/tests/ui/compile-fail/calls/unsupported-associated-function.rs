use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    f64::floor(x) * x
}

fn main() {}
