use ad_runtime::differentiate;

type Real = f64;

#[differentiate]
fn f(x: Real) -> f64 {
    x * 2.0
}

fn main() {}
