use ad_runtime::differentiate;

#[differentiate]
fn step(s: (f64, f64), dt: f64) -> f64 {
    s.0 + dt * s.1
}

// `_hvp` of a caller does not pass tuples to its callees yet.
#[differentiate(vjp, hvp)]
fn f(x: f64, y: f64) -> f64 {
    step((x, y), 0.1) * x
}

fn main() {}
