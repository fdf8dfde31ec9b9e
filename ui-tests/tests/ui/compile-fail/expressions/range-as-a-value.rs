use ad_runtime::differentiate;

// A range is read by `for` loops, chains and indexing; `x.get(a..b)` is not
// one of those: the message says to take `&x[a..b]`.
#[differentiate]
fn middle(x: &[f64]) -> f64 {
    let s = x.get(2..5).unwrap();
    s[0] * s[2]
}

fn main() {
    let _ = middle(&[1.0; 6]);
}
