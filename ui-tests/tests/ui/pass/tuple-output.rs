//! A tuple output: the seed is a tuple, and seeding basis vectors gives the
//! rows of the Jacobian.
use ad_runtime::differentiate;

#[differentiate]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

fn main() {
    let (out, dr_dx, dr_dy) = polar_vjp(3.0, 4.0, (1.0, 0.0));
    assert_eq!(out, polar(3.0, 4.0));
    assert!((dr_dx - 0.6).abs() < 1e-15 && (dr_dy - 0.8).abs() < 1e-15);
    let (_, dth_dx, dth_dy) = polar_vjp(3.0, 4.0, (0.0, 1.0));
    assert!((dth_dx + 0.16).abs() < 1e-15 && (dth_dy - 0.12).abs() < 1e-15);
}
