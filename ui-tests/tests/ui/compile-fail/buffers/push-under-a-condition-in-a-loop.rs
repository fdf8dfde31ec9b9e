use ad_runtime::differentiate;

// A `Vec` made in a loop is filled by the `for` after it only if that loop
// pushes once per iteration; here the push depends on the element.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for _ in 0..2 {
        let mut positive = Vec::new();
        for &x in xs {
            if x > 0.0 {
                positive.push(x);
            }
        }
        s += positive.iter().sum::<f64>();
    }
    s
}

fn main() {}
