use ad_runtime::differentiate;

// At the top level of the body, `let v = if first { xs } else { ys };` is a
// copy of the chosen buffer; inside a loop it is not supported.
#[differentiate]
fn f(xs: &[f64], ys: &[f64], first: bool) -> f64 {
    let mut s = 0.0;
    for _ in 0..2 {
        let v = if first { xs } else { ys };
        s += v[0];
    }
    s
}

fn main() {}
