use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for x @ &y in xs.iter() {
        s += x * y;
    }
    s
}

fn main() {}
