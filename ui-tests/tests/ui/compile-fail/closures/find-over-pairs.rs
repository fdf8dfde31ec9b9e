use ad_runtime::differentiate;

#[differentiate]
fn first_positive_weighted(x: &[f64]) -> f64 {
    let (i, v) = x.iter().enumerate().find(|(_, v)| **v > 0.0).unwrap();
    v * i as f64
}

fn main() {
    let _ = first_positive_weighted(&[1.0, -2.0]);
}
