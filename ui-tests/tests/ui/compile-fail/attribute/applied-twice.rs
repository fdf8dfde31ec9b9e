use ad_runtime::differentiate;

#[differentiate]
#[differentiate]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
