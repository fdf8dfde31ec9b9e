use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    xs.iter().map(|x| x * x).sum()
}

fn main() {}
