use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    xs.iter()
        .filter(|&&x| x > 0.0)
        .enumerate()
        .map(|(i, x)| x * i as f64)
        .sum()
}

fn main() {}
