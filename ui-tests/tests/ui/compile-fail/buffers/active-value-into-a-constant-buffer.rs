use ad_runtime::differentiate;

#[differentiate(wrt(x))]
fn f(x: f64, out: &mut [f64]) {
    out[0] = x * x;
}

fn main() {}
