//! A copy of a `Vec` a call returns in a loop has no length before the
//! loop: the message says to read the output itself.
use ad_runtime::differentiate;

#[differentiate]
fn rhs(y: &[f64]) -> Vec<f64> {
    vec![y[1], -y[0]]
}

#[differentiate]
fn steps(y0: &[f64], n: usize) -> f64 {
    let mut y = y0.to_vec();
    for _ in 0..n {
        let k = rhs(&y);
        let scaled: Vec<f64> = k.iter().map(|v| 0.1 * v).collect();
        y[0] += scaled[0];
        y[1] += scaled[1];
    }
    y[0]
}

fn main() {
    let _ = steps(&[1.0, 0.0], 3);
}
