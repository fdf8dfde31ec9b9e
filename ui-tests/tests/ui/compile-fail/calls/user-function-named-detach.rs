use ad_runtime::differentiate;

/// Not the runtime's `detach`: it doubles. `#[differentiate]` must not treat
/// it as a stop-gradient.
fn detach(x: f64) -> f64 {
    2.0 * x
}

#[differentiate]
fn f(x: f64) -> f64 {
    x * detach(x)
}

fn main() {}
