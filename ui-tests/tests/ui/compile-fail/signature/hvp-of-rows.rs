use ad_runtime::differentiate;

#[differentiate(hvp)]
fn energy(pts: &[[f64; 2]]) -> f64 {
    pts.iter().map(|p| p[0] * p[1]).sum()
}

fn main() {}
