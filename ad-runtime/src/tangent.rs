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
//!
//! # The derive
//!
//! `#[derive(Tangent)]` implements [`Tangent`] field by field, for structs
//! with named or unnamed fields. Each field is a float (`f32`, `f64`), a
//! `Vec` or an array of floats, or a struct that is itself `Tangent`, and all
//! have the same float type. A field that is none of these (a size, a label,
//! a name) is marked `#[tangent(skip)]`: it is left out of the arithmetic and
//! the flat view, and the zero (the shadow) holds a clone of it, so a skipped
//! field's type must be `Clone`. A field that is not a float and not skipped
//! is a compile error at the field, saying to add `#[tangent(skip)]`.
//!
//! ```
//! use ad_runtime::Tangent;
//!
//! #[derive(Clone, Debug, PartialEq, Tangent)]
//! struct Layer {
//!     w: Vec<f64>,
//!     b: Vec<f64>,
//!     #[tangent(skip)]
//!     n_in: usize,
//!     #[tangent(skip)]
//!     name: String,
//! }
//!
//! let layer = Layer { w: vec![1.0, 2.0], b: vec![3.0], n_in: 2, name: "first".into() };
//! assert_eq!(layer.to_flat(), [1.0, 2.0, 3.0]);
//! let zero = layer.zero();
//! assert_eq!((zero.w, zero.n_in, zero.name), (vec![0.0, 0.0], 2, "first".to_string()));
//! ```
//!
//! The struct may be generic over its float type. The derive bounds the
//! implementation by what fields of concrete types need (`f64: Tangent` for
//! a field `rate: f64`, `String: Clone` for a skipped `name: String`), and
//! fields of the type parameter need nothing more than `T: Float` (that is
//! `f32` or `f64`), which implies what they need. So `Lin<T: Float>` is
//! `Tangent` with no bounds of yours beyond `T: Float`.
//!
//! ```
//! use ad_runtime::{Float, Tangent};
//!
//! #[derive(Clone, Debug, PartialEq, Tangent)]
//! struct Lin<T: Float> {
//!     w: Vec<T>,
//!     b: T,
//! }
//!
//! let mut p = Lin { w: vec![1.0_f32, 2.0], b: 0.5 };
//! p.scale(2.0);
//! assert_eq!(p, Lin { w: vec![2.0, 4.0], b: 1.0 });
//! ```
//!
//! # The flat view
//!
//! The floats of a value have one order, used by [`Tangent::for_each_float`],
//! [`Tangent::map_floats`], [`Tangent::zip_map_floats`], [`Tangent::to_flat`]
//! and [`Tangent::set_from_flat`], by the optimisers in [`crate::optim`] and by
//! the indices that [`crate::check`] reports: fields in declaration order,
//! depth first into nested structs, the elements of a buffer by index.

use crate::Float;
use crate::linalg::ZerosLike;

/// A value a gradient can be: floats, float buffers, and structs of them
/// (`#[derive(Tangent)]`, see the [module documentation](self)). Gives the
/// shadow's zero and the arithmetic that optimisers and checks need.
///
/// Implemented for `f32`, `f64`, `Vec<T>` and `[T; N]` with `T: Float`, and
/// by the derive. Everything works in place and allocates nothing, except
/// [`zero`](Tangent::zero), [`to_flat`](Tangent::to_flat) and
/// [`from_flat`](Tangent::from_flat), which build a new value.
///
/// Two values combined by a method ([`add_scaled`](Tangent::add_scaled),
/// [`dot`](Tangent::dot), [`zip_map_floats`](Tangent::zip_map_floats)) must
/// have the same shape: a `Vec` field of one as long as the same field of the
/// other. A gradient from `_vjp` into a shadow made by
/// [`zero`](Tangent::zero) always has the shape of its parameter.
///
/// ```
/// use ad_runtime::Tangent;
///
/// let mut p = vec![1.0, -2.0];
/// let d_p = vec![0.5, 0.25];
/// p.axpy(-2.0, &d_p); // a gradient step: p -= 2 · d_p
/// assert_eq!(p, [0.0, -2.5]);
/// assert_eq!(p.dot(&d_p), -0.625);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a float, a float buffer or a struct with `#[derive(Tangent)]`",
    label = "not a float, a float buffer or a `Tangent` struct",
    note = "a field of a `#[derive(Tangent)]` struct that is not a parameter (a size, a label) is marked `#[tangent(skip)]`"
)]
pub trait Tangent: ZerosLike<Zeros = Self> {
    /// The float type of its elements.
    type Scalar: Float;

    /// `self += alpha · other`, element by element: a gradient step is
    /// `p.add_scaled(-rate, &d_p)`. [`axpy`](Tangent::axpy) is the same
    /// operation under its BLAS name.
    ///
    /// # Panics
    ///
    /// Panics if a buffer of `other` has another length than in `self`.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut p = [1.0, 2.0];
    /// p.add_scaled(-0.5, &[2.0, 2.0]);
    /// assert_eq!(p, [0.0, 1.0]);
    /// ```
    fn add_scaled(&mut self, alpha: Self::Scalar, other: &Self);

    /// `Σ selfᵢ · otherᵢ` over all elements: for dot-product tests.
    ///
    /// # Panics
    ///
    /// Panics if a buffer of `other` has another length than in `self`.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// assert_eq!(vec![1.0, 2.0].dot(&vec![3.0, 4.0]), 11.0);
    /// ```
    fn dot(&self, other: &Self) -> Self::Scalar;

    /// How many floats it holds.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// assert_eq!(Tangent::len(&[0.0_f32; 3]), 3);
    /// assert_eq!(Tangent::len(&1.5_f64), 1);
    /// ```
    fn len(&self) -> usize;

    /// Calls `f` on each float, in the flat order (see the
    /// [module documentation](self#the-flat-view)).
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut largest = 0.0_f64;
    /// vec![1.0_f64, -3.0, 2.0].for_each_float(|x| largest = largest.max(x.abs()));
    /// assert_eq!(largest, 3.0);
    /// ```
    fn for_each_float(&self, f: impl FnMut(Self::Scalar));

    /// Replaces each float `x` by `f(x)`, in place, in the flat order.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut g = vec![0.5_f64, -4.0];
    /// g.map_floats(|x| x.clamp(-1.0, 1.0)); // gradient clipping
    /// assert_eq!(g, [0.5, -1.0]);
    /// ```
    fn map_floats(&mut self, f: impl FnMut(Self::Scalar) -> Self::Scalar);

    /// Replaces each float `x` of `self` by `f(x, y)`, where `y` is the float
    /// at the same place in `other`, in place, in the flat order.
    ///
    /// # Panics
    ///
    /// Panics if a buffer of `other` has another length than in `self`.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// // A running average of squared gradients, as RMSProp keeps.
    /// let mut average = vec![1.0, 1.0];
    /// average.zip_map_floats(&vec![2.0, 0.0], |a, g| 0.5 * a + 0.5 * g * g);
    /// assert_eq!(average, [2.5, 0.5]);
    /// ```
    fn zip_map_floats(
        &mut self,
        other: &Self,
        f: impl FnMut(Self::Scalar, Self::Scalar) -> Self::Scalar,
    );

    /// Zeros of the same shape: a shadow to pass to `_vjp`. Allocates its
    /// buffers; to clear a shadow between steps, [`set_zero`](Tangent::set_zero)
    /// reuses them.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// assert_eq!(vec![1.0, 2.0].zero(), [0.0, 0.0]);
    /// ```
    fn zero(&self) -> Self
    where
        Self: Sized,
    {
        self.zeros_like()
    }

    /// Whether it holds no float.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// assert!(Vec::<f64>::new().is_empty());
    /// ```
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets every float to zero, in place, without allocating: clears a
    /// shadow before the next `_vjp` (which adds into it).
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut d_p = vec![0.5, -1.5];
    /// d_p.set_zero();
    /// assert_eq!(d_p, [0.0, 0.0]);
    /// ```
    fn set_zero(&mut self) {
        self.map_floats(|_| Self::Scalar::ZERO);
    }

    /// `self = alpha · self`, in place.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut g = [1.0, -2.0];
    /// g.scale(0.5);
    /// assert_eq!(g, [0.5, -1.0]);
    /// ```
    fn scale(&mut self, alpha: Self::Scalar) {
        self.map_floats(|x| alpha * x);
    }

    /// `self += alpha · x`: [`add_scaled`](Tangent::add_scaled) under its
    /// BLAS name (`y ← αx + y`, `self` being `y`), as
    /// [`ad_runtime::axpy`](crate::axpy) is for slices.
    ///
    /// # Panics
    ///
    /// Panics if a buffer of `x` has another length than in `self`.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut y = vec![1.0, 1.0];
    /// y.axpy(2.0, &vec![3.0, -1.0]);
    /// assert_eq!(y, [7.0, -1.0]);
    /// ```
    fn axpy(&mut self, alpha: Self::Scalar, x: &Self) {
        self.add_scaled(alpha, x);
    }

    /// The floats in the flat order (see the
    /// [module documentation](self#the-flat-view)), in a new `Vec` of
    /// [`len`](Tangent::len) elements.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// assert_eq!([1.0_f32, 2.0].to_flat(), vec![1.0, 2.0]);
    /// ```
    fn to_flat(&self) -> Vec<Self::Scalar> {
        let mut flat = Vec::with_capacity(self.len());
        self.for_each_float(|x| flat.push(x));
        flat
    }

    /// Overwrites the floats with `flat`, taken in the flat order; the
    /// inverse of [`to_flat`](Tangent::to_flat). Allocates nothing.
    ///
    /// # Panics
    ///
    /// Panics if `flat` does not have [`len`](Tangent::len) elements.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let mut p = vec![0.0; 3];
    /// p.set_from_flat(&[1.0, 2.0, 3.0]);
    /// assert_eq!(p, [1.0, 2.0, 3.0]);
    /// ```
    #[track_caller]
    fn set_from_flat(&mut self, flat: &[Self::Scalar]) {
        assert_eq!(
            flat.len(),
            self.len(),
            "set_from_flat: the slice has {} floats but the value holds {}",
            flat.len(),
            self.len()
        );
        let mut floats = flat.iter();
        self.map_floats(|x| floats.next().copied().unwrap_or(x));
    }

    /// A value of the shape of `shape` holding the floats of `flat`, in the
    /// flat order: `to_flat`'s inverse for code that works on flat vectors
    /// (skipped fields are cloned from `shape`).
    ///
    /// # Panics
    ///
    /// Panics if `flat` does not have `shape.len()` elements.
    ///
    /// ```
    /// use ad_runtime::Tangent;
    ///
    /// let shape = [0.0_f64; 2];
    /// assert_eq!(<[f64; 2]>::from_flat(&shape, &[3.0, 4.0]), [3.0, 4.0]);
    /// ```
    #[track_caller]
    fn from_flat(shape: &Self, flat: &[Self::Scalar]) -> Self
    where
        Self: Sized,
    {
        let mut value = shape.zero();
        value.set_from_flat(flat);
        value
    }
}

/// A field of a `#[derive(Tangent)]` struct whose float type is `S`: the
/// derive bounds each field by it and calls [`Tangent`]'s methods through it.
///
/// Not a public API. It is a trait of its own, without `Tangent` as a
/// supertrait, because a `Vec<T>: Tangent` bound on the implementation would
/// hide the implementation's `Scalar = T` from the methods, and a
/// `Tangent<Scalar = …>` bound on two fields of one type (`Vec<f64>` and an
/// alias of it) sends rustc into a cycle; and so that a field that is not
/// `Tangent`, or of another float type, is one error, at the field.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a float, a float buffer or a struct with `#[derive(Tangent)]` of the struct's float type `{S}`",
    label = "not a float, a float buffer or a `Tangent` struct of `{S}`",
    note = "a field that is not a parameter (a size, a label) is marked `#[tangent(skip)]`; all the others have one float type"
)]
pub trait TangentField<S> {
    fn zero(&self) -> Self;
    fn add_scaled(&mut self, alpha: S, other: &Self);
    fn dot(&self, other: &Self) -> S;
    fn n_floats(&self) -> usize;
    fn for_each_float(&self, f: impl FnMut(S));
    fn map_floats(&mut self, f: impl FnMut(S) -> S);
    fn zip_map_floats(&mut self, other: &Self, f: impl FnMut(S, S) -> S);
}

impl<X: Tangent> TangentField<X::Scalar> for X {
    #[inline]
    fn zero(&self) -> Self {
        self.zeros_like()
    }
    #[inline]
    fn add_scaled(&mut self, alpha: X::Scalar, other: &Self) {
        Tangent::add_scaled(self, alpha, other);
    }
    #[inline]
    fn dot(&self, other: &Self) -> X::Scalar {
        Tangent::dot(self, other)
    }
    #[inline]
    fn n_floats(&self) -> usize {
        Tangent::len(self)
    }
    #[inline]
    fn for_each_float(&self, f: impl FnMut(X::Scalar)) {
        Tangent::for_each_float(self, f);
    }
    #[inline]
    fn map_floats(&mut self, f: impl FnMut(X::Scalar) -> X::Scalar) {
        Tangent::map_floats(self, f);
    }
    #[inline]
    fn zip_map_floats(&mut self, other: &Self, f: impl FnMut(X::Scalar, X::Scalar) -> X::Scalar) {
        Tangent::zip_map_floats(self, other, f);
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
            #[inline]
            fn for_each_float(&self, mut f: impl FnMut($t)) {
                f(*self);
            }
            #[inline]
            fn map_floats(&mut self, mut f: impl FnMut($t) -> $t) {
                *self = f(*self);
            }
            #[inline]
            fn zip_map_floats(&mut self, other: &$t, mut f: impl FnMut($t, $t) -> $t) {
                *self = f(*self, *other);
            }
        }
    )*};
}

scalar_tangent!(f32, f64);

/// Panics unless two buffers combined element by element have one length.
#[inline]
#[track_caller]
fn assert_same_len(what: &str, len: usize, other_len: usize) {
    assert_eq!(
        len, other_len,
        "{what}: a buffer of length {other_len} combined with one of length {len}; \
         the two values must have the same shape"
    );
}

impl<T: Float> Tangent for Vec<T> {
    type Scalar = T;
    #[inline]
    fn add_scaled(&mut self, alpha: T, other: &Self) {
        assert_same_len("add_scaled", self.len(), other.len());
        for (x, y) in self.iter_mut().zip(other) {
            *x += alpha * *y;
        }
    }
    #[inline]
    fn dot(&self, other: &Self) -> T {
        assert_same_len("dot", self.len(), other.len());
        self.iter().zip(other).map(|(x, y)| *x * *y).sum()
    }
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline]
    fn for_each_float(&self, f: impl FnMut(T)) {
        self.iter().copied().for_each(f);
    }
    #[inline]
    fn map_floats(&mut self, mut f: impl FnMut(T) -> T) {
        for x in self.iter_mut() {
            *x = f(*x);
        }
    }
    #[inline]
    fn zip_map_floats(&mut self, other: &Self, mut f: impl FnMut(T, T) -> T) {
        assert_same_len("zip_map_floats", self.len(), other.len());
        for (x, y) in self.iter_mut().zip(other) {
            *x = f(*x, *y);
        }
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
    #[inline]
    fn for_each_float(&self, f: impl FnMut(T)) {
        self.iter().copied().for_each(f);
    }
    #[inline]
    fn map_floats(&mut self, mut f: impl FnMut(T) -> T) {
        for x in self.iter_mut() {
            *x = f(*x);
        }
    }
    #[inline]
    fn zip_map_floats(&mut self, other: &Self, mut f: impl FnMut(T, T) -> T) {
        for (x, y) in self.iter_mut().zip(other) {
            *x = f(*x, *y);
        }
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

    #[test]
    fn in_place_arithmetic() {
        let mut v = vec![1.0, -2.0, 4.0];
        v.scale(-0.5);
        assert_eq!(v, [-0.5, 1.0, -2.0]);
        v.axpy(2.0, &vec![1.0, 1.0, 1.0]);
        assert_eq!(v, [1.5, 3.0, 0.0]);
        let capacity = v.capacity();
        v.set_zero();
        assert_eq!(
            (v.as_slice(), v.capacity()),
            (&[0.0, 0.0, 0.0][..], capacity)
        );
        let mut x = 3.0_f32;
        x.scale(2.0);
        x.axpy(-1.0, &1.0);
        assert_eq!(x, 5.0);
        x.set_zero();
        assert_eq!(x, 0.0);
    }

    #[test]
    fn visitors_walk_in_index_order() {
        let mut seen = Vec::new();
        [3.0_f64, 1.0, 2.0].for_each_float(|x| seen.push(x));
        assert_eq!(seen, [3.0, 1.0, 2.0]);
        let mut index = 0.0;
        let mut v = vec![0.0; 3];
        v.map_floats(|_| {
            index += 1.0;
            index
        });
        assert_eq!(v, [1.0, 2.0, 3.0]);
        v.zip_map_floats(&vec![10.0, 20.0, 30.0], |x, y| y - x);
        assert_eq!(v, [9.0, 18.0, 27.0]);
        let mut x = 2.0_f64;
        x.zip_map_floats(&5.0, |x, y| x * y);
        assert_eq!(x, 10.0);
    }

    #[test]
    fn flat_round_trip() {
        let v = vec![1.0_f32, -2.0, 0.5];
        assert_eq!(v.to_flat(), v);
        let mut w = vec![0.0_f32; 3];
        w.set_from_flat(&[4.0, 5.0, 6.0]);
        assert_eq!(w, [4.0, 5.0, 6.0]);
        assert_eq!(Vec::from_flat(&w, &v.to_flat()), v);
        assert_eq!(7.0_f64.to_flat(), [7.0]);
        assert_eq!(f64::from_flat(&0.0, &[2.5]), 2.5);
    }

    /// The message of the panic `f` raises.
    fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let payload = std::panic::catch_unwind(f).expect_err("a panic");
        payload
            .downcast_ref::<String>()
            .cloned()
            .or(payload.downcast_ref::<&str>().map(|text| text.to_string()))
            .unwrap_or_default()
    }

    #[test]
    fn shapes_are_checked() {
        let message = panic_message(|| vec![0.0; 3].set_from_flat(&[1.0, 2.0]));
        assert!(
            message.contains("the slice has 2 floats but the value holds 3"),
            "{message}"
        );
        let message = panic_message(|| vec![0.0, 0.0].zip_map_floats(&vec![1.0], |x, y| x + y));
        assert!(
            message.contains("a buffer of length 1 combined with one of length 2"),
            "{message}"
        );
    }
}
