use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut prev: Option<usize> = None;
    let mut s = 0.0;
    for i in 0..x.len() {
        s += match prev {
            // An or-pattern: one arm per variant is supported.
            None | Some(0) => x[i],
            Some(j) => x[j] * x[i],
        };
        prev = Some(i);
    }
    s
}

fn main() {}
