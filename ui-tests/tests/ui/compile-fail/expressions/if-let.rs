use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    if let 0 = n { x } else { x * x }
}

fn main() {}
