// The branches of a tuple-valued `if` give tuples of the same shape.
use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, y: f64) -> f64 {
    let (a, b) = if x < y { (x, y) } else { (x, (y, x)) };
    a * b
}

fn main() {}
