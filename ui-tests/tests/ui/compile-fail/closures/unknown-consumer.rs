use ad_runtime::differentiate;

#[differentiate]
fn first_positive(x: &[f64]) -> f64 {
    x.iter().find_map(|&v| if v > 0.0 { Some(v) } else { None }).unwrap()
}

fn main() {
    let _ = first_positive(&[1.0, -2.0]);
}
