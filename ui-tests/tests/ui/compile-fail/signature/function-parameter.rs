use ad_runtime::differentiate;

// A function passed in cannot be differentiated through: one error, at
// the parameter's type, and none where it is called.
#[differentiate]
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    let n = 10;
    let h = (b - a) / n as f64;
    (0..n).map(|i| f(a + (i as f64 + 0.5) * h)).sum::<f64>() * h
}

#[differentiate]
fn integrate_dyn(f: &dyn Fn(f64) -> f64, a: f64) -> f64 {
    f(a) * a
}

fn main() {}
