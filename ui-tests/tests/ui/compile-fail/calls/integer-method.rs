use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    x * n.pow(2) as f64
}

fn main() {}
