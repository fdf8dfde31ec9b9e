use ad_runtime::differentiate;

#[differentiate]
fn rhs(y: &[f64]) -> Vec<f64> {
    y.iter().map(|v| -v).collect()
}

#[differentiate]
fn f(y: &[f64], steps: usize) -> f64 {
    let mut s = 0.0;
    for _ in 0..steps {
        let k = rhs(y);
        s += k[0];
    }
    s
}

fn main() {}
