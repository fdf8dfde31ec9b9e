use ad_runtime::differentiate;

// Rows written out with different lengths: no flat matrix holds them.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let a = vec![vec![1.0, 2.0, 0.5], vec![-1.0, 0.3]];
    let mut s = 0.0;
    for row in &a {
        s += row.iter().zip(x).map(|(p, q)| p * q).sum::<f64>();
    }
    s
}

fn main() {}
