//! Parameter structs: [`Tangent`], what `#[derive(Tangent)]` implements.
//!
//! A struct of floats, float buffers and nested such structs can be a
//! parameter of a differentiated function (`p: &Params`, or `&self` in a
//! method). Its shadow is a value of the same type, `d_p: &mut Params`,
//! into whose fields the adjoint adds, as for a buffer.
//!
//! ```
//! use ad_runtime::{Tangent, differentiate};
//!
//! #[derive(Clone, Debug, PartialEq, Tangent)]
//! struct Line {
//!     slope: f64,
//!     offsets: Vec<f64>,
//! }
//!
//! #[differentiate]
//! fn at(p: &Line, x: f64) -> f64 {
//!     p.slope * x + p.offsets[0]
//! }
//!
//! let p = Line { slope: 2.0, offsets: vec![1.0] };
//! let mut d_p = p.zero();
//! let (y, d_x) = at_vjp(&p, &mut d_p, 3.0, 1.0);
//! assert_eq!((y, d_x), (7.0, 2.0));
//! assert_eq!(d_p, Line { slope: 3.0, offsets: vec![1.0] });
//! ```

use crate::Float;
use crate::linalg::ZerosLike;

/// A value a gradient can be: floats, float buffers, and structs of them
/// (`#[derive(Tangent)]`). Gives the shadow's zero and the arithmetic that
/// optimisers and checks need.
pub trait Tangent: ZerosLike<Zeros = Self> {
    /// The float type of its elements.
    type Scalar: Float;

    /// `self += alpha · other`, element by element: a gradient step is
    /// `p.add_scaled(-rate, &d_p)`.
    fn add_scaled(&mut self, alpha: Self::Scalar, other: &Self);

    /// `Σ selfᵢ · otherᵢ` over all elements: for dot-product tests.
    fn dot(&self, other: &Self) -> Self::Scalar;

    /// How many floats it holds.
    fn len(&self) -> usize;

    /// Zeros of the same shape: a shadow to pass to `_vjp`.
    fn zero(&self) -> Self
    where
        Self: Sized,
    {
        self.zeros_like()
    }

    /// Whether it holds no float.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

macro_rules! scalar_tangent {
    ($($t:ty),*) => {$(
        impl ZerosLike for $t {
            type Zeros = $t;
            #[inline]
            fn zeros_like(&self) -> $t {
                0.0
            }
        }

        impl Tangent for $t {
            type Scalar = $t;
            #[inline]
            fn add_scaled(&mut self, alpha: $t, other: &$t) {
                *self += alpha * other;
            }
            #[inline]
            fn dot(&self, other: &$t) -> $t {
                self * other
            }
            #[inline]
            fn len(&self) -> usize {
                1
            }
        }
    )*};
}

scalar_tangent!(f32, f64);

impl<T: Float> Tangent for Vec<T> {
    type Scalar = T;
    #[inline]
    fn add_scaled(&mut self, alpha: T, other: &Self) {
        assert_eq!(self.len(), other.len(), "add_scaled: lengths differ");
        for (x, y) in self.iter_mut().zip(other) {
            *x += alpha * *y;
        }
    }
    #[inline]
    fn dot(&self, other: &Self) -> T {
        assert_eq!(self.len(), other.len(), "dot: lengths differ");
        self.iter().zip(other).map(|(x, y)| *x * *y).sum()
    }
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
}

impl<T: Float, const N: usize> Tangent for [T; N] {
    type Scalar = T;
    #[inline]
    fn add_scaled(&mut self, alpha: T, other: &Self) {
        for (x, y) in self.iter_mut().zip(other) {
            *x += alpha * *y;
        }
    }
    #[inline]
    fn dot(&self, other: &Self) -> T {
        self.iter().zip(other).map(|(x, y)| *x * *y).sum()
    }
    #[inline]
    fn len(&self) -> usize {
        N
    }
}

#[cfg(test)]
mod tests {
    use super::Tangent;
    use crate::linalg::ZerosLike;

    #[test]
    fn buffers_and_scalars() {
        let mut v = vec![1.0, 2.0];
        v.add_scaled(2.0, &vec![0.5, -1.0]);
        assert_eq!(v, [2.0, 0.0]);
        assert_eq!(v.dot(&vec![3.0, 5.0]), 6.0);
        assert_eq!(v.zeros_like(), [0.0, 0.0]);
        let mut a = [1.0_f32; 3];
        a.add_scaled(-1.0, &[1.0, 2.0, 3.0]);
        assert_eq!(a, [0.0, -1.0, -2.0]);
        assert_eq!(Tangent::len(&a), 3);
        let mut x = 1.5_f64;
        x.add_scaled(2.0, &0.25);
        assert_eq!((x, x.dot(&2.0), x.zeros_like()), (2.0, 4.0, 0.0));
    }
}
