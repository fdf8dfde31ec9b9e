//! Differentiated functions used by more than one test file: the gradient
//! tests check them, the allocation tests measure them.

use ad_runtime::differentiate;

/// `x^n` by repeated multiplication: a loop whose adjoint needs each
/// iteration's `p`, so it is taped.
#[differentiate]
pub fn power(x: f64, n: usize) -> f64 {
    let mut p = 1.0;
    for _ in 0..n {
        p *= x;
    }
    p
}

/// `c x (0 + 1 + … + (n-1))`: a loop whose adjoint needs only the index, so
/// nothing is saved.
#[differentiate]
pub fn weighted_sum(x: f64, c: f64, n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        s += c * x * i as f64;
    }
    s
}
