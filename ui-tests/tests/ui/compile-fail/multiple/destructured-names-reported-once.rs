use ad_runtime::differentiate;

// `partition` is not supported: reported once, at the method, and not again
// where the names the pattern binds are used.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let (pos, neg): (Vec<f64>, Vec<f64>) = x.iter().partition(|&&v| v > 0.0);
    pos.iter().sum::<f64>() * neg.iter().map(|v| v * v).sum::<f64>()
}

fn main() {}
