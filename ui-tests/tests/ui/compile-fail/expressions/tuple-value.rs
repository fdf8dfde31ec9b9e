use ad_runtime::differentiate;

// A tuple lives as one variable per element: ordered as a whole (which
// compares lexicographically) it would need a tuple value.
#[differentiate]
fn f(x: f64, y: f64) -> f64 {
    let p = (x, y);
    if p < (1.0, 0.0) { 0.0 } else { p.0 * p.1 }
}

fn main() {}
