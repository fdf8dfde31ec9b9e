use ad_runtime::differentiate;

// A tuple of names is taken apart where it is taken; a nested pattern is not.
#[differentiate]
fn f(((a, b), c): ((f64, f64), f64)) -> f64 {
    a * b + c
}

fn main() {}
