use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter().chain(y).step_by(2) {
        s += v * v;
    }
    s
}

#[differentiate]
fn g(x: &[f64], y: &[f64]) -> f64 {
    x.iter().chain(y).copied().reduce(f64::max).unwrap()
}

fn main() {}
