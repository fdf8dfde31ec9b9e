use ad_runtime::differentiate;

const ORIGIN: (f64, f64) = (1.0, 2.0);

#[differentiate]
fn f(x: f64) -> f64 {
    x * ORIGIN.0
}

fn main() {}
