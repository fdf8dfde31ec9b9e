use ad_runtime::differentiate;

// A `&mut` buffer chosen by a branch is written through the choice: a copy
// cannot stand for it, so this stays an error.
#[differentiate]
fn f(xs: &mut [f64], ys: &mut [f64], first: bool) {
    let v = if first { xs } else { ys };
    v[0] *= 2.0;
}

fn main() {}
