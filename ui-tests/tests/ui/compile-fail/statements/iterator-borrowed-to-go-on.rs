use ad_runtime::differentiate;

// A cursor lent to a loop would have to know how far the loop went.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut it = xs.iter();
    let mut s = 0.0;
    for &v in it.by_ref().take(2) {
        s += v;
    }
    s * *it.next().unwrap()
}

fn main() {}
