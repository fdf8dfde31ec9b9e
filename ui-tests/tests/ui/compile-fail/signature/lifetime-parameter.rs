use ad_runtime::differentiate;

#[differentiate]
fn f<'a>(x: f64, _weights: &'a [f64]) -> f64 {
    x * x
}

fn main() {}
