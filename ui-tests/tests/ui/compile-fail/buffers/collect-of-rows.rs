use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let m: Vec<Vec<f64>> = x.chunks(2).map(|c| c.to_vec()).collect();
    m.iter().map(|r| r[0] * r[1]).sum()
}

fn main() {
    let _ = f(&[1.0, 2.0]);
}
