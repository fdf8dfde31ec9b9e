use ad_runtime::differentiate;

#[differentiate]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

// The twins of `nested` differentiate `f_vjp` once more: a call returning a
// tuple is not supported there yet.
#[differentiate(vjp, nested)]
fn f(x: f64, y: f64) -> f64 {
    let (r, theta) = polar(x, y);
    r * theta
}

fn main() {}
