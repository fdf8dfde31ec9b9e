use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, v) in x.iter().chain(y).enumerate() {
        s += v * i as f64;
    }
    s
}

#[differentiate]
fn g(x: &[f64], y: &[f64]) -> f64 {
    x.iter().chain(y).copied().reduce(f64::max).unwrap()
}

fn main() {}
