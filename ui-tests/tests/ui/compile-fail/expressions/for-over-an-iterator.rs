use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    for w in std::iter::repeat(2.0).take(3) {
        y += x * w;
    }
    y
}

fn main() {}
