use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    for w in std::iter::successors(Some(2.0), |&v| Some(v * 0.5)).take(3) {
        y += x * w;
    }
    y
}

fn main() {}
