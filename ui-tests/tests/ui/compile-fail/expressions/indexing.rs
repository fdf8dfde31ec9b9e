use ad_runtime::differentiate;

const WEIGHTS: [f64; 2] = [1.0, 2.0];

#[differentiate]
fn f(x: f64) -> f64 {
    x * WEIGHTS[1]
}

fn main() {}
