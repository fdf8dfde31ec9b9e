use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64], ys: &[f64], first: bool) -> f64 {
    let v = if first { xs } else { ys };
    v[0]
}

fn main() {}
