use ad_runtime::differentiate;

// A Hessian-vector product needs a scalar function.
#[differentiate(hvp)]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

fn main() {}
