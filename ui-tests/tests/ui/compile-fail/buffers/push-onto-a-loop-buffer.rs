use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for &x in xs {
        let mut v = vec![x; 2];
        v.push(x * x);
        s += v[2];
    }
    s
}

fn main() {}
