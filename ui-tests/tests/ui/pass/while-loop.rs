// A `while` loop running to a tolerance: the Babylonian square root.
use ad_runtime::differentiate;

#[differentiate]
fn sqrt_by_iteration(a: f64) -> f64 {
    let mut y = a;
    while (y * y - a).abs() > 1e-12 * a {
        y = 0.5 * (y + a / y);
    }
    y
}

fn main() {
    let (out, d_a) = sqrt_by_iteration_vjp(2.0, 1.0);
    assert_eq!(out, sqrt_by_iteration(2.0));
    assert!((d_a - 0.5 / 2.0_f64.sqrt()).abs() < 1e-12);
}
