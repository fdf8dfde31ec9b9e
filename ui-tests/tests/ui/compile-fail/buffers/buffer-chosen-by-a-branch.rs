use ad_runtime::differentiate;

// A buffer chosen by a branch is supported anywhere when each branch is the
// buffer alone (`let v = if first { xs } else { ys };`, `[xs[0], 1.0]`: each
// branch runs the rest); inside a loop, not a branch holding statements.
#[differentiate]
fn f(xs: &[f64], ys: &[f64], first: bool) -> f64 {
    let mut s = 0.0;
    for _ in 0..2 {
        let v = if first {
            let t = xs[0] * 2.0;
            [t, 1.0]
        } else {
            [ys[0], 2.0]
        };
        s += v[0] * v[1];
    }
    s
}

fn main() {}
