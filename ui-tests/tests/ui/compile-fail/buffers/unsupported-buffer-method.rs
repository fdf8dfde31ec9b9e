use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let m = xs.first();
    xs[0]
}

fn main() {}
