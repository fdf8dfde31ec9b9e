use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut best: Option<f64> = None;
    for &v in x {
        if best.is_none_or(|b| v > b) {
            best = Some(v);
        }
    }
    // An option is read by `if let`, `match` or its methods, not printed.
    println!("{best:?}");
    best.unwrap_or(0.0)
}

fn main() {}
