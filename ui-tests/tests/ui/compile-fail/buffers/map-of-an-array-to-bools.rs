use ad_runtime::differentiate;

// `a.map(f)` is the loop writing a copy of `a`: a map to `bool`s (or
// integers) is not, and stays a compile error of the macro's.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let a = [x[0], x[1]];
    let positive = a.map(|v| v > 0.0);
    if positive[0] { x[0] } else { x[1] }
}

fn main() {}
