use ad_runtime::differentiate;

// A matrix of the function's own is assigned by copying; a view of rows
// cannot be made to view other rows.
#[differentiate]
fn f(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    let mut cur = a;
    let first = cur[0][0];
    cur = b;
    first * cur[0][1]
}

fn main() {}
