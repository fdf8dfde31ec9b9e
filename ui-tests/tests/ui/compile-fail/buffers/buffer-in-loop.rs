use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        // The length changes every iteration: not made before the loop.
        let v = vec![xs[i]; i + 1];
        s += v.iter().sum::<f64>();
    }
    s
}

fn main() {}
