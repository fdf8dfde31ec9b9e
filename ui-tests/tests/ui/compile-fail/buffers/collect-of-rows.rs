use ad_runtime::differentiate;

// Sub-slices collected as they are (a `Vec<&[f64]>`): the rows a matrix is
// collected from are made by the closure (`c.to_vec()`).
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let m: Vec<&[f64]> = x.chunks(2).collect();
    m.iter().map(|r| r[0] * r[1]).sum()
}

fn main() {
    let _ = f(&[1.0, 2.0]);
}
