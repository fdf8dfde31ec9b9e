use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let v = std::array::from_fn(|i| x[i] * 2.0);
    let w: [f64; 2] = v;
    w[0] + w[1]
}

fn main() {
    let _ = f(&[1.0, 2.0]);
}
