use ad_runtime::differentiate;

#[differentiate]
fn halvings(x: f64) -> f64 {
    std::iter::successors(Some(x), |&v| Some(v * 0.5)).take(5).sum()
}

fn main() {
    let _ = halvings(1.0);
}
