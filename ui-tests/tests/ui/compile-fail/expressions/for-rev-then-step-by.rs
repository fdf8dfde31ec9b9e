use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in (0..n).rev().step_by(2) {
        y *= x;
    }
    y
}

fn main() {}
