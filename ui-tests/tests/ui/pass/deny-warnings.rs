// The expansion is accepted by a crate that denies warnings and unsafe code.
#![deny(warnings)]
#![forbid(unsafe_code)]

use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, y: f64, flag: bool) -> f64 {
    let z = if flag { x * y } else { x.atan2(y) };
    z.tanh() + y.powi(2)
}

fn main() {
    let (out, d_x, d_y) = f_vjp(1.0, 2.0, true, 1.0);
    assert_eq!(out, f(1.0, 2.0, true));
    let t = 2.0_f64.tanh();
    assert!((d_x - 2.0 * (1.0 - t * t)).abs() < 1e-12);
    assert!((d_y - ((1.0 - t * t) + 4.0)).abs() < 1e-12);
}
