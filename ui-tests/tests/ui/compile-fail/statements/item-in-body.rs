use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    const SCALE: f64 = 2.0;
    x * SCALE
}

fn main() {}
