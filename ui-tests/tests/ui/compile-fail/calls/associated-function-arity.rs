use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    f64::powi(x) + x
}

fn main() {}
