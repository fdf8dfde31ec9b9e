use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for x in xs.iter().rev() {
        s += x;
    }
    s
}

fn main() {}
