use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, i: usize, j: usize) -> f64 {
    match (i, j) {
        (n, 0) | (0, n) => x * n as f64,
        _ => x * x,
    }
}

fn main() {}
