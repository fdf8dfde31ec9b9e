use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut v = vec![0.0; 2];
    v.copy_from_slice(&[x[0], x[1]]);
    v[0] * v[1]
}

fn main() {}
