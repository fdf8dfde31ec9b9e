use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let m = xs.first_chunk::<2>();
    xs[0]
}

fn main() {}
