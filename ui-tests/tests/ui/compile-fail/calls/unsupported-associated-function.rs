use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    f64::midpoint(x, 1.0) * x
}

fn main() {}
