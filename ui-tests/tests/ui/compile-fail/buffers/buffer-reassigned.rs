use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64], ys: &[f64], flag: bool) -> f64 {
    let mut v = xs;
    if flag {
        // A parameter rebound to another buffer: not a copy of its elements.
        v = ys;
    }
    v[0]
}

fn main() {}
