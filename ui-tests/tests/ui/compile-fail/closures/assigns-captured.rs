use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut add = move |v: f64| {
        total += v;
        total
    };
    let mut last = 0.0;
    for &x in xs {
        last = add(x * x);
    }
    last + total
}

fn main() {}
