use ad_runtime::differentiate;

// Sub-slices collected as they are (a `Vec<&[f64]>`): supported where every
// use is `m[i]`, `m.len()`, `m.iter()` or a `for`, which stand for the
// views themselves; `m.last()` is none of those.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let m: Vec<&[f64]> = x.chunks(2).collect();
    let last = m.last().unwrap();
    last[0] * m[0][1]
}

fn main() {
    let _ = f(&[1.0, 2.0]);
}
