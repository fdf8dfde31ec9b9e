use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let old = std::mem::replace(&mut v, vec![0.0; 3]);
    old[0] + v[0]
}

fn main() {}
