use ad_runtime::differentiate;

fn total(xs: Vec<f64>) -> f64 {
    xs.iter().sum()
}

#[differentiate]
fn f(x: f64) -> f64 {
    let v = vec![x; 3];
    total(v)
}

fn main() {}
