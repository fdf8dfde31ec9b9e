use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut add = |v: f64| total += v;
    for &x in xs {
        add(x * x);
    }
    total
}

fn main() {}
