use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    ad_runtime::dot(xs, &[1.0, 2.0])
}

fn main() {}
