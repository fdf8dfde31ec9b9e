use ad_runtime::differentiate;

const WEIGHTS: [f64; 3] = [1.0, 2.0, 3.0];

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    for w in WEIGHTS.iter() {
        y += x * w;
    }
    y
}

fn main() {}
