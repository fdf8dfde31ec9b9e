use ad_runtime::differentiate;

// `max_by_key` is not supported: reported once, at the method, and not
// again where the names the pattern binds are used.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let (i, m) = x
        .iter()
        .copied()
        .enumerate()
        .max_by_key(|&(_, v)| (v * 100.0) as i64)
        .unwrap();
    m * x[i]
}

fn main() {}
