use ad_runtime::differentiate;

// Each buffer chosen by a branch inside a loop writes the rest of the loop
// body once per branch in the expansion: four in one block would make
// sixteen copies, so a block takes at most three.
#[differentiate]
fn f(xs: &[f64], ys: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..4 {
        let a = if k == 0 { xs } else { ys };
        let b = if k == 1 { xs } else { ys };
        let c = if k == 2 { xs } else { ys };
        let d = if k == 3 { xs } else { ys };
        s += a[0] * b[0] + c[0] * d[0];
    }
    s
}

fn main() {}
