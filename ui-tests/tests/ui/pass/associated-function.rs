//! An associated function (no `self`) is supported: `_vjp` is generated in the
//! same `impl` block, with the same visibility.
use ad_runtime::differentiate;

pub struct Spring;

impl Spring {
    #[differentiate]
    pub fn energy(k: f64, x: f64) -> f64 {
        0.5 * k * x.powi(2)
    }
}

fn main() {
    let (e, d_k, d_x) = Spring::energy_vjp(2.0, 3.0, 1.0);
    assert_eq!(e, Spring::energy(2.0, 3.0));
    assert_eq!((d_k, d_x), (4.5, 6.0));
}
