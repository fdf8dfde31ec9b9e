use ad_runtime::differentiate;

#[differentiate]
fn last_positive(x: &[f64]) -> f64 {
    x.iter().copied().filter(|v| *v > 0.0).last().unwrap_or(0.0)
}

fn main() {
    let _ = last_positive(&[1.0, -2.0]);
}
