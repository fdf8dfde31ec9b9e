use ad_runtime::differentiate;

// A `Vec` made in the loop keeps one length in each iteration: `retain`
// there would change it.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..2 {
        let mut v = xs.to_vec();
        v.retain(|&a| a > 0.1 * k as f64);
        s += v.iter().sum::<f64>();
    }
    s
}

fn main() {}
