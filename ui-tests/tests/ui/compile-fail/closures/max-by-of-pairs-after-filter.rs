use ad_runtime::differentiate;

// Of numbers, `max_by` after `filter` works; of pairs (an argmax) it does not.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let (i, v) = x
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap();
    v * i as f64
}

fn main() {}
