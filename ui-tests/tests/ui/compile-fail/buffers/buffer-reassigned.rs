use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v = vec![0.0; 3];
    v[0]
}

fn main() {}
