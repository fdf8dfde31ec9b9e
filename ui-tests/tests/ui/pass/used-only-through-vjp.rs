//! A function called only through its `_vjp` is used: no `dead_code`
//! warning, for a free function and an associated function, in a crate that
//! denies warnings.
#![deny(warnings)]

use ad_runtime::differentiate;

#[differentiate]
fn loss(x: f64, y: f64) -> f64 {
    (x - y).powi(2)
}

struct Spring;

impl Spring {
    #[differentiate]
    fn energy(k: f64, x: f64) -> f64 {
        0.5 * k * x * x
    }
}

fn main() {
    let (out, d_x, d_y) = loss_vjp(3.0, 1.0, 1.0);
    assert_eq!((out, d_x, d_y), (4.0, 4.0, -4.0));
    let (e, d_k, d_x) = Spring::energy_vjp(2.0, 3.0, 1.0);
    assert_eq!((e, d_k, d_x), (9.0, 4.5, 6.0));
}
