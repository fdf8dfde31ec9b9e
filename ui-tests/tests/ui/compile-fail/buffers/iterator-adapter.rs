use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    xs.iter().skip_while(|&&x| x > 0.0).sum()
}

fn main() {}
