use ad_runtime::differentiate;

// A buffer keeps one length in each loop iteration: `retain` in a loop
// would change it.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    for _ in 0..2 {
        v.retain(|&a| a > 0.1);
    }
    v.iter().sum()
}

fn main() {}
