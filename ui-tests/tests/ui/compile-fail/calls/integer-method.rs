use ad_runtime::differentiate;

// Integer methods returning a number run as written (`n.pow(2)`); one
// returning an `Option` is not supported.
#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    x * n.pow(2) as f64 * n.checked_sub(1).unwrap_or(0) as f64
}

fn main() {}
