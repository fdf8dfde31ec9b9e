use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    // `None` says nothing of what the option will hold: an index here.
    let mut hit = None;
    for (i, &v) in x.iter().enumerate() {
        if v > 1.0 {
            hit = Some(i);
        }
    }
    match hit {
        Some(i) => x[i],
        None => 0.0,
    }
}

fn main() {}
