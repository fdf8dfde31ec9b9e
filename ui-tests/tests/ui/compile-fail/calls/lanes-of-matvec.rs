use ad_runtime::differentiate;

// `matvec` writes its output into a `&mut [T]`: no lanes version yet.
#[differentiate(jvp_lanes)]
fn layer(a: &[f64], x: &[f64], y: &mut [f64]) {
    ad_runtime::matvec(a, x, y, 2, 2);
}

fn main() {}
