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
    let best = x.iter().chain(y).enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    best.0 as f64 * best.1
}

fn main() {}
