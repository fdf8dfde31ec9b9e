use ad_runtime::differentiate;

#[differentiate]
fn scale(xs: &mut [f64], k: f64) {
    for x in xs.iter_mut() {
        *x *= k;
    }
}

// `_hvp` handles calls that read buffers; a call that writes one is not
// supported yet.
#[differentiate(vjp, hvp)]
fn f(xs: &mut [f64], k: f64) -> f64 {
    scale(xs, k);
    xs[0] * xs[1]
}

fn main() {}
