use ad_runtime::differentiate;

// A `Vec` made in a loop is filled by the `for` after it only if that loop
// pushes at most once per iteration; here a nested loop pushes many times.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for _ in 0..2 {
        let mut products = Vec::new();
        for &x in xs {
            for &y in xs {
                products.push(x * y);
            }
        }
        s += products.iter().sum::<f64>();
    }
    s
}

fn main() {}
