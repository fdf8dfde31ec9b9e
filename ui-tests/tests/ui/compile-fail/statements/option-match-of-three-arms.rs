use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut prev: Option<f64> = None;
    let mut s = 0.0;
    for &v in x {
        s += match prev {
            Some(p) if p > v => p - v,
            Some(p) => v - p,
            None => 0.0,
        };
        prev = Some(v);
    }
    s
}

fn main() {}
