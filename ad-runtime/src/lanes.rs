//! Vector forward mode: `K` tangents carried at once.
//!
//! `#[differentiate(jvp_lanes)]` generates `<name>_jvp_lanes::<K>`, which
//! pushes `K` directions through the function in one pass: every active
//! float's tangent is a [`Lanes<T, K>`] (one entry per direction), and a
//! buffer's tangent a buffer of them. The primal runs once; the tangent work
//! of each operation is a loop over the `K` lanes, innermost, which the
//! compiler unrolls and vectorises. Lane `l` of every result is what
//! `<name>_jvp` gives for the directions in lane `l` of the arguments.
//!
//! ```
//! use ad_runtime::{Lanes, differentiate};
//!
//! #[differentiate(jvp_lanes)]
//! fn f(x: f64, y: f64) -> f64 {
//!     x * y.sin()
//! }
//!
//! // Both partial derivatives in one call: lane 0 moves x, lane 1 moves y.
//! let (out, t_out) = f_jvp_lanes(2.0, Lanes([1.0, 0.0]), 0.5, Lanes([0.0, 1.0]));
//! assert_eq!(out, 2.0 * 0.5_f64.sin());
//! assert_eq!(t_out.0, [0.5_f64.sin(), 2.0 * 0.5_f64.cos()]);
//! ```

use core::ops::{
    Add, AddAssign, Div, DivAssign, Index, IndexMut, Mul, MulAssign, Neg, Sub, SubAssign,
};

use crate::Float;

/// `K` tangents of one float, one per direction: the tangent type of vector
/// forward mode (see the [module](self)).
///
/// Arithmetic is lane by lane: `Lanes + Lanes`, `Lanes - Lanes`, `-Lanes`,
/// and scaling by a float, `Lanes * T` and `Lanes / T`.
///
/// ```
/// use ad_runtime::Lanes;
///
/// let t = Lanes([1.0, -2.0, 0.5]);
/// assert_eq!((t + t * 2.0).0, [3.0, -6.0, 1.5]);
/// assert_eq!(Lanes::<f64, 3>::basis(1).0, [0.0, 1.0, 0.0]);
/// ```
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Lanes<T, const K: usize>(pub [T; K]);

impl<T: Float, const K: usize> Lanes<T, K> {
    /// Every lane 0.
    pub const ZERO: Self = Lanes([T::ZERO; K]);

    /// Every lane `value`.
    #[inline]
    #[must_use]
    pub fn splat(value: T) -> Self {
        Lanes([value; K])
    }

    /// Lane `lane` 1, the others 0: the `lane`-th direction of the basis.
    ///
    /// # Panics
    ///
    /// If `lane >= K`.
    #[inline]
    #[must_use]
    #[track_caller]
    pub fn basis(lane: usize) -> Self {
        let mut lanes = Self::ZERO;
        lanes.0[lane] = T::ONE;
        lanes
    }

    /// `f` applied to each lane.
    #[inline]
    #[must_use]
    pub fn map<U, F: FnMut(T) -> U>(self, f: F) -> Lanes<U, K> {
        Lanes(self.0.map(f))
    }
}

impl<T: Float, const K: usize> Default for Lanes<T, K> {
    #[inline]
    fn default() -> Self {
        Self::ZERO
    }
}

impl<T, const K: usize> From<[T; K]> for Lanes<T, K> {
    #[inline]
    fn from(lanes: [T; K]) -> Self {
        Lanes(lanes)
    }
}

impl<T, const K: usize> Index<usize> for Lanes<T, K> {
    type Output = T;
    #[inline]
    fn index(&self, lane: usize) -> &T {
        &self.0[lane]
    }
}

impl<T, const K: usize> IndexMut<usize> for Lanes<T, K> {
    #[inline]
    fn index_mut(&mut self, lane: usize) -> &mut T {
        &mut self.0[lane]
    }
}

impl<T: Float, const K: usize> Add for Lanes<T, K> {
    type Output = Self;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        Lanes(core::array::from_fn(|l| self.0[l] + other.0[l]))
    }
}

impl<T: Float, const K: usize> Sub for Lanes<T, K> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, other: Self) -> Self {
        Lanes(core::array::from_fn(|l| self.0[l] - other.0[l]))
    }
}

impl<T: Float, const K: usize> Neg for Lanes<T, K> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|t| -t)
    }
}

impl<T: Float, const K: usize> Mul<T> for Lanes<T, K> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, factor: T) -> Self {
        self.map(|t| t * factor)
    }
}

impl<T: Float, const K: usize> Div<T> for Lanes<T, K> {
    type Output = Self;
    #[inline(always)]
    fn div(self, divisor: T) -> Self {
        self.map(|t| t / divisor)
    }
}

impl<T: Float, const K: usize> AddAssign for Lanes<T, K> {
    #[inline(always)]
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

impl<T: Float, const K: usize> SubAssign for Lanes<T, K> {
    #[inline(always)]
    fn sub_assign(&mut self, other: Self) {
        *self = *self - other;
    }
}

impl<T: Float, const K: usize> MulAssign<T> for Lanes<T, K> {
    #[inline(always)]
    fn mul_assign(&mut self, factor: T) {
        *self = *self * factor;
    }
}

impl<T: Float, const K: usize> DivAssign<T> for Lanes<T, K> {
    #[inline(always)]
    fn div_assign(&mut self, divisor: T) {
        *self = *self / divisor;
    }
}

/// What `_jvp_lanes` calls: each rule of [`crate::reads`] and
/// [`crate::rules`] with its seed a [`Lanes`], applied lane by lane (a
/// pullback is linear in its seed, so seeding it with a tangent gives the
/// tangent's image), and the helpers of the coarse primitives.
pub(crate) mod emitted {
    use super::Lanes;
    use crate::linalg::LANES;
    use crate::{Float, reads, rules};

    macro_rules! one_output {
        ($($name:ident($($arg:ident: $ty:ty),*) => $rule:path;)*) => {$(
            #[doc = concat!("[`", stringify!($rule), "`], lane by lane.")]
            #[inline(always)]
            pub fn $name<T: Float, const K: usize>($($arg: $ty,)* dy: Lanes<T, K>) -> Lanes<T, K> {
                dy.map(|dy| $rule($($arg,)* dy))
            }
        )*};
    }

    macro_rules! several_outputs {
        ($($name:ident($($arg:ident: $ty:ty),*) -> ($($out:ident),*) => $rule:path;)*) => {$(
            #[doc = concat!("[`", stringify!($rule), "`], lane by lane.")]
            #[inline(always)]
            pub fn $name<T: Float, const K: usize>(
                $($arg: $ty,)*
                dy: Lanes<T, K>,
            ) -> ($(several_outputs!(@lanes $out)),*) {
                $(let mut $out = Lanes::<T, K>::ZERO;)*
                for (lane, &dy) in dy.0.iter().enumerate() {
                    ($($out.0[lane]),*) = $rule($($arg,)* dy);
                }
                ($($out),*)
            }
        )*};
        (@lanes $out:ident) => { Lanes<T, K> };
    }

    one_output! {
        ln(x: T) => reads::ln;
        ln_1p(x: T) => reads::ln_1p;
        log2(x: T) => reads::log2;
        log10(x: T) => reads::log10;
        sin(x: T) => reads::sin;
        cos(x: T) => reads::cos;
        asin(x: T) => reads::asin;
        acos(x: T) => reads::acos;
        atan(x: T) => reads::atan;
        sinh(x: T) => reads::sinh;
        cosh(x: T) => reads::cosh;
        asinh(x: T) => reads::asinh;
        acosh(x: T) => reads::acosh;
        atanh(x: T) => reads::atanh;
        abs(x: T) => reads::abs;
        sqrt(y: T) => reads::sqrt;
        cbrt(y: T) => reads::cbrt;
        exp(y: T) => reads::exp;
        exp2(y: T) => reads::exp2;
        exp_m1(y: T) => reads::exp_m1;
        tan(y: T) => reads::tan;
        tanh(y: T) => reads::tanh;
        recip(y: T) => reads::recip;
        signum() => reads::signum;
        fract() => reads::fract;
        to_radians() => reads::to_radians;
        to_degrees() => reads::to_degrees;
        powi(x: T, n: i32, y: T) => rules::powi;
    }

    several_outputs! {
        atan2(a: T, b: T) -> (da, db) => reads::atan2;
        min(a: T, b: T) -> (da, db) => reads::min;
        max(a: T, b: T) -> (da, db) => reads::max;
        rem_euclid(a: T, b: T, y: T) -> (da, db) => reads::rem_euclid;
        copysign(x: T, sign: T) -> (dx, dsign) => reads::copysign;
        clamp(x: T, lo: T, hi: T) -> (dx, dlo, dhi) => reads::clamp;
        mul_add(a: T, b: T) -> (da, db, dc) => reads::mul_add;
        midpoint() -> (da, db) => reads::midpoint;
        log(a: T, b: T, y: T) -> (da, db) => rules::log;
        powf(a: T, b: T, y: T) -> (da, db) => rules::powf;
        hypot(a: T, b: T, y: T) -> (da, db) => rules::hypot;
        rem(a: T, b: T, y: T) -> (da, db) => rules::rem;
    }

    /// A tangent converted to another float width, lane by lane (`as`
    /// between `f32` and `f64`).
    #[inline(always)]
    pub fn cast<T: Float, U: Float, const K: usize>(t: Lanes<T, K>) -> Lanes<U, K> {
        t.map(|t| U::from_f64(t.to_f64()))
    }

    /// Zero tangents for a buffer: `Vec<Lanes<T, K>>` of its length, or
    /// an array of zeros for an array.
    pub trait LanesLike<const K: usize> {
        /// The owned zeros.
        type Zeros;
        /// Zero tangents of the same shape.
        fn lanes_like(&self) -> Self::Zeros;
    }

    impl<T: Float, const K: usize> LanesLike<K> for [T] {
        type Zeros = Vec<Lanes<T, K>>;
        #[inline]
        fn lanes_like(&self) -> Self::Zeros {
            vec![Lanes::ZERO; self.len()]
        }
    }

    impl<T: Float, const K: usize> LanesLike<K> for Vec<T> {
        type Zeros = Vec<Lanes<T, K>>;
        #[inline]
        fn lanes_like(&self) -> Self::Zeros {
            vec![Lanes::ZERO; self.len()]
        }
    }

    impl<T: Float, const K: usize, const N: usize> LanesLike<K> for [T; N] {
        type Zeros = [Lanes<T, K>; N];
        #[inline]
        fn lanes_like(&self) -> Self::Zeros {
            [Lanes::ZERO; N]
        }
    }

    /// Zero tangents of a buffer's shape (as [`crate::linalg::ZerosLike`] for floats).
    #[inline]
    pub fn zeros_like<const K: usize, B: ?Sized + LanesLike<K>>(buf: &B) -> B::Zeros {
        buf.lanes_like()
    }

    /// `Σ term(i)` for `i < len`, summed as `ad_runtime::sum` and `dot` sum
    /// (in `LANES` interleaved partial sums, then the rest), so that each
    /// lane has the bits `_jvp` gives.
    #[inline(always)]
    fn summed<T: Float, const K: usize>(
        len: usize,
        term: impl Fn(usize) -> Lanes<T, K>,
    ) -> Lanes<T, K> {
        let chunks = len / LANES;
        let mut partial = [Lanes::ZERO; LANES];
        for chunk in 0..chunks {
            for (j, part) in partial.iter_mut().enumerate() {
                *part += term(chunk * LANES + j);
            }
        }
        let rest = (chunks * LANES..len).fold(Lanes::ZERO, |acc, i| acc + term(i));
        partial
            .into_iter()
            .fold(Lanes::ZERO, |acc, part| acc + part)
            + rest
    }

    /// The tangent of `sum(x)`: `Σ txᵢ`, lane by lane.
    #[inline]
    pub fn sum<T: Float, const K: usize>(tx: &[Lanes<T, K>]) -> Lanes<T, K> {
        summed(tx.len(), |i| tx[i])
    }

    /// The part of the tangent of `dot(a, b)` that moves one operand:
    /// `Σ taᵢ · bᵢ`.
    #[inline]
    #[track_caller]
    pub fn dot<T: Float, const K: usize>(ta: &[Lanes<T, K>], b: &[T]) -> Lanes<T, K> {
        crate::linalg::check_same_len("dot", "b", b.len(), "the tangent", ta.len());
        summed(ta.len(), |i| ta[i] * b[i])
    }

    /// The tangent of `r = norm2(x)`: `Σ xᵢ · txᵢ / r`, 0 at `r == 0`.
    #[inline]
    #[track_caller]
    pub fn norm2_jvp<T: Float, const K: usize>(x: &[T], r: T, tx: &[Lanes<T, K>]) -> Lanes<T, K> {
        if r == T::ZERO {
            return Lanes::ZERO;
        }
        dot(tx, x) / r
    }

    /// The tangent of `s = logsumexp(x)`: `Σ exp(xᵢ − s) · txᵢ`.
    #[inline]
    #[track_caller]
    pub fn logsumexp_jvp<T: Float, const K: usize>(
        x: &[T],
        s: T,
        tx: &[Lanes<T, K>],
    ) -> Lanes<T, K> {
        crate::linalg::check_same_len("logsumexp_jvp", "tx", tx.len(), "x", x.len());
        x.iter()
            .zip(tx)
            .fold(Lanes::ZERO, |acc, (&xi, &ti)| acc + ti * (xi - s).exp())
    }
}

#[cfg(test)]
mod tests {
    use super::Lanes;
    use super::emitted as lanes;
    use crate::reads;

    /// Each lane of a rule applied to lanes is the scalar rule of that lane.
    #[test]
    fn rules_apply_lane_by_lane() {
        let dy = Lanes([1.5_f64, -0.25, 2.0]);
        let x = 0.7;
        assert_eq!(lanes::sin(x, dy).0, dy.0.map(|d| reads::sin(x, d)));
        assert_eq!(
            lanes::powi(x, 3, x.powi(3), dy).0,
            dy.0.map(|d| crate::rules::powi(x, 3, x.powi(3), d))
        );
        let (da, db) = lanes::atan2(x, 0.3, dy);
        for lane in 0..3 {
            assert_eq!((da[lane], db[lane]), reads::atan2(x, 0.3, dy[lane]));
        }
        let (dx, dlo, dhi) = lanes::clamp(x, 0.0, 0.5, dy);
        for lane in 0..3 {
            assert_eq!(
                (dx[lane], dlo[lane], dhi[lane]),
                reads::clamp(x, 0.0, 0.5, dy[lane])
            );
        }
    }

    #[test]
    fn arithmetic_is_lane_by_lane() {
        let a = Lanes([1.0_f32, 2.0]);
        let b = Lanes([0.5_f32, -1.0]);
        assert_eq!((a + b).0, [1.5, 1.0]);
        assert_eq!((a - b).0, [0.5, 3.0]);
        assert_eq!((-a).0, [-1.0, -2.0]);
        assert_eq!((a * 3.0).0, [3.0, 6.0]);
        assert_eq!((a / 2.0).0, [0.5, 1.0]);
        let mut c = a;
        c += b;
        c -= a;
        c *= 2.0;
        c /= 4.0;
        assert_eq!(c.0, [0.25, -0.5]);
        assert_eq!(lanes::cast::<f32, f64, 2>(a).0, [1.0, 2.0]);
    }

    #[test]
    fn the_coarse_tangents() {
        let tx = [Lanes([1.0_f64, 0.0]), Lanes([0.0, 1.0])];
        assert_eq!(lanes::sum(&tx).0, [1.0, 1.0]);
        // Long enough for the partial sums: each lane has `sum`'s and `dot`'s bits.
        let x: Vec<f64> = (0..37).map(|i| (f64::from(i) * 0.37).sin()).collect();
        let t: Vec<Lanes<f64, 2>> = x.iter().map(|&v| Lanes([v.cos(), v * v])).collect();
        for lane in 0..2 {
            let t_lane: Vec<f64> = t.iter().map(|t| t[lane]).collect();
            assert_eq!(
                lanes::sum(&t)[lane].to_bits(),
                crate::sum(&t_lane).to_bits()
            );
            assert_eq!(
                lanes::dot(&t, &x)[lane].to_bits(),
                crate::dot(&x, &t_lane).to_bits()
            );
        }
        let x = [3.0, 4.0];
        assert_eq!(lanes::dot(&tx, &x).0, [3.0, 4.0]);
        assert_eq!(lanes::norm2_jvp(&x, 5.0, &tx).0, [0.6, 0.8]);
        let zeros: Vec<Lanes<f64, 2>> = lanes::zeros_like::<2, _>(&x[..]);
        assert_eq!(zeros, vec![Lanes::ZERO; 2]);
        let s = crate::logsumexp(&x);
        let t = lanes::logsumexp_jvp(&x, s, &tx);
        assert!((t[0] + t[1] - 1.0).abs() < 1e-15);
    }
}
