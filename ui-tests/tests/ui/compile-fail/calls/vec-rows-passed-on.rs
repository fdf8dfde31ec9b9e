use ad_runtime::differentiate;

#[differentiate]
fn total(a: &[Vec<f64>]) -> f64 {
    let mut s = 0.0;
    for row in a {
        s += row[0];
    }
    s
}

#[differentiate]
fn f(a: &[Vec<f64>], k: f64) -> f64 {
    total(a) * k
}

fn main() {}
