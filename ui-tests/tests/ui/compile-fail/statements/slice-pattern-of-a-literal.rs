use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64], k: &[usize]) -> f64 {
    match k {
        [0, ..] => x[0],
        _ => x[1],
    }
}

fn main() {}
