use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        let tmp = vec![xs[i]; 2];
        s += tmp[0];
    }
    s
}

fn main() {}
