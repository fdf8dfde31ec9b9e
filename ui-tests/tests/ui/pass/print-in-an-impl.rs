//! `#[differentiate(print)]` on a method and on an associated function: the
//! note is a deprecation warning, and the `impl` block still compiles (its
//! holder used to be a `const _`, which an `impl` block does not allow).
use ad_runtime::{Tangent, differentiate};

#[derive(Clone, Tangent)]
pub struct Spring {
    k: f64,
}

impl Spring {
    #[differentiate(print)]
    pub fn energy(&self, x: f64) -> f64 {
        0.5 * self.k * x * x
    }

    #[differentiate(print)]
    pub fn scaled(k: f64, x: f64) -> f64 {
        k * x.sin()
    }
}

fn main() {
    let spring = Spring { k: 2.0 };
    let mut d_spring = Spring { k: 0.0 };
    let (e, d_x) = spring.energy_vjp(&mut d_spring, 3.0, 1.0);
    assert_eq!((e, d_x, d_spring.k), (9.0, 6.0, 4.5));
    let (s, d_k, _) = Spring::scaled_vjp(2.0, 0.5, 1.0);
    assert_eq!((s, d_k), (2.0 * 0.5f64.sin(), 0.5f64.sin()));
}
