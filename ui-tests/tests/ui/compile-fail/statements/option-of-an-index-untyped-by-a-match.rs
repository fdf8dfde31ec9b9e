use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let first: Option<usize> = if x[0] > 0.0 { Some(0) } else { None };
    // `None` says nothing of what `next` will hold: the match gives an index.
    let mut next = None;
    next = match first {
        Some(i) => Some(i + 1),
        None => None,
    };
    match next {
        Some(i) => x[i],
        None => 0.0,
    }
}

fn main() {}
