//! Source-transformation reverse-mode automatic differentiation for plain Rust
//! functions over `f32` and `f64`.
//!
//! Put `#[differentiate]` on a numeric function and you get, next to the untouched
//! function, a generated `<name>_vjp` function: ordinary Rust that runs the primal
//! computation, keeping the intermediate values the adjoint needs, then runs the
//! adjoint (reverse) pass, which was reversed at compile time. Straight-line code records
//! nothing at run time: no tape, no boxing, no dynamic dispatch, no heap. The generated
//! code works on stable Rust and is readable in `cargo expand`.
//!
//! ```
//! use ad_runtime::differentiate;
//!
//! #[differentiate]
//! fn f(a: f64, b: f64) -> f64 {
//!     a * b + a.sin()
//! }
//!
//! // Generated beside `f`: returns the primal output and the adjoint of each active
//! // float parameter, for the seed `d_out` (the cotangent of the output).
//! // fn f_vjp(a: f64, b: f64, d_out: f64) -> (f64, f64, f64)
//! let (out, d_a, d_b) = f_vjp(0.5, -1.5, 1.0);
//! assert_eq!(out, f(0.5, -1.5));
//! assert_eq!(d_b, 0.5);
//!
//! // Compare the gradient with finite differences of `f`.
//! let grad = |x: &[f64]| {
//!     let (_, d_a, d_b) = f_vjp(x[0], x[1], 1.0);
//!     vec![d_a, d_b]
//! };
//! ad_runtime::check::gradient(|x| f(x[0], x[1]), grad, &[0.5, -1.5]).assert_within(1e-6);
//! ```
//!
//! Float parameters taken by value are active and get an adjoint; integers and `bool`
//! are constants. The seed comes last. Branch conditions are constants: the executed
//! trace is differentiated. Use [`detach`] to stop the gradient through a value.
//!
//! Float buffers (`&[f64]`, `&Vec<f64>`, `&[f64; N]`) are active too: `_vjp` takes a
//! shadow `&mut [f64]` (`&mut [f64; N]` for an array) right after each, and adds the
//! buffer's adjoint into it. A `&mut [f64]` parameter the function updates in place is
//! an output: its shadow carries the seed of its final contents in and the adjoint of
//! its initial contents out.
//!
//! ```
//! use ad_runtime::differentiate;
//!
//! #[differentiate]
//! fn energy(xs: &[f64], c: f64) -> f64 {
//!     let mut s = 0.0;
//!     for &x in xs.iter() {
//!         s += c * x * x;
//!     }
//!     s
//! }
//!
//! let mut d_xs = [0.0; 2];
//! let (out, d_c) = energy_vjp(&[1.0, -2.0], &mut d_xs, 3.0, 1.0);
//! assert_eq!((out, d_c), (15.0, 5.0));
//! assert_eq!(d_xs, [6.0, -12.0]);
//! ```
//!
//! The reference is the documentation of the macros: [`differentiate`] has its
//! arguments (`wrt`, `jvp`, `hvp`, `print`), the calling convention of every generated
//! function (`_vjp`, the split API `_forward`, `_jvp`, `_hvp`), the supported Rust in
//! brief and how to see the generated code; [`custom_vjp`] and [`custom_jvp`] have the
//! signature of a rule of your own, and [`Tangent`](derive@Tangent) what a parameter
//! struct needs.
//!
//! Besides the macro, this crate holds what the generated code and your tests need:
//!
//! - [`Float`], the trait to write code generic over `f32` and `f64`;
//! - [`rules`], the pullback of each primitive float operation, with the conventions
//!   used where a primitive is not differentiable (the derivative of `abs` at 0, ties in
//!   `max` and `min`, ...);
//! - [`linalg`], buffer primitives ([`dot`], [`matmul`], [`softmax`], ...) and their
//!   pullbacks;
//! - [`check`], helpers that compare derivatives with finite differences and run the
//!   dot-product test, to use in your own tests;
//! - [`Tangent`] and `#[derive(Tangent)]`, which make a struct a parameter whose
//!   gradient is a struct, with the in-place arithmetic and flat view optimisers use;
//! - [`optim`], SGD with momentum and Adam over any [`Tangent`], allocating nothing
//!   per step;
//! - [`parallel`], the gradient of a sum over a batch on several threads, the
//!   same bits for any number of threads;
//! - [`jacobian`], dense Jacobians (by `_jvp` columns or `_vjp` rows, the cheaper
//!   for the shape), Hessians and Hessian diagonals (from `_hvp`).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// On docs.rs, items behind a cargo feature say which feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use ad_macros::{Tangent, custom_jvp, custom_vjp, differentiate};

pub mod check;
pub mod checkpoint;
mod curvature;
mod extrema;
pub mod float;
pub mod jacobian;
mod kept;
pub mod lanes;
pub mod linalg;
pub mod optim;
pub mod parallel;
mod pool;
mod reads;
pub mod rules;
pub mod tangent;
pub mod tape;

pub use float::Float;
pub use lanes::Lanes;
pub use linalg::{axpy, dot, logsumexp, matmul, matvec, norm2, softmax, sum};
pub use tangent::Tangent;

// The crate's README (its page on crates.io) runs as a doctest, so its examples
// cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Stops the gradient: returns `x` unchanged, but `#[differentiate]` treats the result as a constant.
///
/// ```
/// // Outside differentiated code, `detach` is the identity.
/// assert_eq!(ad_runtime::detach(2.5), 2.5);
/// ```
#[inline(always)]
pub fn detach<T>(x: T) -> T {
    x
}

/// Marks a call of a differentiated function whose forward values the
/// adjoint recomputes rather than keeps: in a loop, `_vjp` saves the call's
/// arguments each iteration, not its pullback (everything the callee's
/// adjoint reads, its own tapes included), and makes the call again in the
/// adjoint loop. The `torch.utils.checkpoint(block, x)` pattern: memory per
/// iteration falls to the arguments, time rises by one more forward pass of
/// the callee.
///
/// The argument must be one call of a function with `#[differentiate]` (or
/// a custom rule) returning a float, whose buffer arguments nothing changes
/// after the call. Outside a loop, and outside differentiated code, it is
/// the identity.
///
/// ```
/// use ad_runtime::{checkpoint, differentiate};
///
/// #[differentiate]
/// fn substeps(x: f64, k: f64) -> f64 {
///     let mut y = x;
///     for _ in 0..100 {
///         y += 0.01 * (k * y).sin();
///     }
///     y
/// }
///
/// #[differentiate]
/// fn rollout(x0: f64, k: f64, steps: usize) -> f64 {
///     let mut x = x0;
///     for _ in 0..steps {
///         // Keeps `x` per step, not `substeps`' tape of 100 values.
///         x = checkpoint(substeps(x, k));
///     }
///     x
/// }
///
/// let (out, d_x0, d_k) = rollout_vjp(0.3, 1.2, 50, 1.0);
/// assert_eq!(out, rollout(0.3, 1.2, 50));
/// let h = 1e-6;
/// let fd = (rollout(0.3, 1.2 + h, 50) - rollout(0.3, 1.2 - h, 50)) / (2.0 * h);
/// assert!((d_k - fd).abs() < 1e-6 * fd.abs().max(1.0));
/// # let _ = d_x0;
/// ```
#[inline(always)]
pub fn checkpoint<T>(value: T) -> T {
    value
}

/// Items called by the code `#[differentiate]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    /// The second-order rules `_hvp` calls (`crate::curvature`).
    pub mod curvature {
        pub use crate::curvature::*;
    }
    /// The rules and helpers `_jvp_lanes` calls (`crate::lanes`).
    pub mod lanes {
        pub use crate::lanes::emitted::*;
    }
    pub use crate::__keep_pullback as keep;
    pub use crate::__recycle_shadow as recycle;
    pub use crate::checkpoint::emitted::{RestoreFrom, nth, state_bytes, trips};
    pub use crate::checkpoint::{Checkpoints, Step};
    pub use crate::extrema::{
        max_over, max_over_dm, max_over_dx, max_over_rev, min_over, min_over_dm, min_over_dx,
        min_over_rev,
    };
    pub use crate::kept::{
        Build, Built, Keep, KeepOther, KeepOut, KeepRule, Rebuild, Remake, Rule, WithOut, rebuilt,
    };
    pub use crate::lanes::Lanes;
    pub use crate::linalg::{RecycleOther, RecycleVec, Recycling};
    pub use crate::linalg::{
        add_assign, axpy_da, axpy_dx, check_range, check_shadow, check_size, check_split, dot_dx,
        flatten_rows, logsumexp_dx, logsumexp_dx_kept, logsumexp_jvp, logsumexp_keep, matmul_acc,
        matmul_da, matmul_db, matvec_acc, matvec_da, matvec_dx, norm2_dx, norm2_jvp, output_buffer,
        pop_shadow, returned_into, returned_into_jvp, seed_copy, snapshot, softmax_dx, sort_order,
        sum_dx, to_array, unflatten_rows, zero, zeros_like,
    };
    pub use crate::reads::{
        abs, acos, acosh, asin, asinh, atan, atan2, atanh, cbrt, clamp, copysign, cos, cosh, exp,
        exp_m1, exp2, fract, ln, ln_1p, log2, log10, max, midpoint, min, mul_add, recip,
        rem_euclid, signum, sin, sinh, sqrt, tan, tanh, to_degrees, to_radians,
    };
    pub use crate::rules::*;
    pub use crate::tangent::TangentField;
    pub use crate::tape::{Tape, TapeReader};

    /// `cmp(a, b)`: the comparison the user gave `max_by` or `min_by`, called
    /// where the generated code decides between two items. Passing it through
    /// a generic function gives a closure its parameter types.
    #[inline]
    pub fn compare<T, F: FnOnce(&T, &T) -> core::cmp::Ordering>(
        a: &T,
        b: &T,
        cmp: F,
    ) -> core::cmp::Ordering {
        cmp(a, b)
    }

    /// Implemented by the floats: the type of a call's result that the macro
    /// took for a float (see [`float_result`]).
    #[diagnostic::on_unimplemented(
        message = "`#[differentiate]` took the result of this call for a float, and it is `{Self}`",
        label = "this call returns `{Self}`",
        note = "a result that is only passed on by value looks like a float to the macro: give its binding a type (`let v: [f64; 3] = …;`) or use it as a buffer (index it, iterate it, or pass `&v`)"
    )]
    pub trait FloatResult {}

    impl FloatResult for f32 {}
    impl FloatResult for f64 {}

    /// Compiles only if the first part of a call's `(result, pullback)` is a
    /// float: the macro cannot see a callee's return type, and takes a result
    /// it sees used only as a value for a float. This makes a wrong guess an
    /// error that says so, before the errors it causes.
    #[inline(always)]
    pub fn float_result<F: FloatResult, P>(pair: (F, P)) -> (F, P) {
        pair
    }

    /// A value of the user's own type (`kind: Activation`) passed on to a
    /// differentiated function: the functions `#[differentiate]` generates
    /// may pass it more than once (a checkpointed call runs again, `_hvp`
    /// keeps it for the second pass), so it must be `Copy`.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is passed on to a differentiated function and is not `Copy`",
        label = "passed on here",
        note = "the functions `#[differentiate]` generates may pass it more than once: derive `Clone, Copy` for `{Self}`, or match on it here and pass what the callee needs"
    )]
    pub trait PassedOn {}

    impl<T: Copy> PassedOn for T {}

    /// Compiles only if `value` is [`PassedOn`]: see there.
    #[inline(always)]
    pub fn passed_on<T: PassedOn>(value: &T) {
        let _ = value;
    }

    /// Implemented by a function item for itself only (each function item has a
    /// type of its own): see [`same_fn`].
    #[diagnostic::on_unimplemented(
        message = "this is not the runtime's function `{F}`",
        label = "`#[differentiate]` differentiates this call with the pullback of `{F}`",
        note = "call the runtime's function by its absolute path, `::ad_runtime::…`, or rename yours"
    )]
    pub trait Is<F> {}

    impl<F> Is<F> for F {}

    /// A parameter taken by value whose fields the body reads (`cfg.dt` of
    /// `cfg: Config`): generated code calls `constant_data(kind)` with what
    /// [`TangentParam`] or [`ConstantParam`] says of it (autoref
    /// specialization: the first is found by value, for a type that is
    /// [`Tangent`](crate::Tangent), the second by reference, for any other).
    /// Such a struct is constant data (its numbers get no adjoint), which is
    /// what a configuration struct is and not what a struct deriving `Tangent`
    /// is meant for: that one must be taken by reference (`p: &Params`) to
    /// get its gradient, so for it the call does not compile, with the
    /// message of [`ConstantData`]. (The macro sees only the type's name, so
    /// the check is the compiler's.)
    pub struct Param<'a, T: ?Sized>(pub &'a T);

    /// What [`TangentParam`] says of a parameter struct taken by value.
    pub struct TangentByValue<T: ?Sized>(core::marker::PhantomData<T>);

    /// What [`ConstantParam`] says of any other value: constant data.
    pub struct Constant;

    /// `(&Param(&p)).kind()` for a type that is [`Tangent`](crate::Tangent).
    pub trait TangentParam<T: ?Sized> {
        /// [`TangentByValue`].
        fn kind(&self) -> TangentByValue<T>;
    }

    impl<T: ?Sized + crate::Tangent> TangentParam<T> for Param<'_, T> {
        #[inline(always)]
        fn kind(&self) -> TangentByValue<T> {
            TangentByValue(core::marker::PhantomData)
        }
    }

    /// `(&Param(&cfg)).kind()` for any other type.
    pub trait ConstantParam {
        /// [`Constant`].
        fn kind(&self) -> Constant;
    }

    impl<T: ?Sized> ConstantParam for &Param<'_, T> {
        #[inline(always)]
        fn kind(&self) -> Constant {
            Constant
        }
    }

    /// Implemented by [`Constant`] only: see [`Param`].
    #[diagnostic::on_unimplemented(
        message = "this parameter's type derives `Tangent`, and a parameter struct is taken by reference: taken by value, its fields would be constants and get no gradient",
        label = "take this parameter by reference (`p: &Params`), or give a settings struct no `Tangent`",
        note = "a struct taken by value is constant data, read by its fields (`cfg.dt`), as a settings struct is"
    )]
    pub trait ConstantData {}

    impl ConstantData for Constant {}

    /// Compiles only for [`Constant`]: see [`Param`].
    #[inline(always)]
    pub fn constant_data<K: ConstantData>(kind: K) {
        let _ = kind;
    }

    /// `by_value!(cfg)`: compiles only if `cfg`'s type is not
    /// [`Tangent`](crate::Tangent); see [`Param`].
    #[doc(hidden)]
    #[macro_export]
    macro_rules! __by_value {
        ($param:expr) => {{
            #[allow(unused_imports)]
            use $crate::__private::{ConstantParam as _, TangentParam as _};
            $crate::__private::constant_data((&$crate::__private::Param(&$param)).kind())
        }};
    }

    pub use crate::__by_value as by_value;

    /// Compiles only if `user` is the function `runtime`: generated code checks
    /// that a path the user wrote (`detach`, `ad_runtime::dot`) names the
    /// runtime's function, whose pullback the adjoint uses, and not a function
    /// of the user's.
    #[inline(always)]
    pub fn same_fn<F, G: Is<F>>(runtime: F, user: G) {
        let _ = (runtime, user);
    }
}

#[cfg(test)]
mod tests {
    /// Generated code's helpers must stay out of the documentation: users see
    /// only the API. Rustdoc has no check for this, so the source is read.
    #[test]
    fn the_private_module_is_hidden_from_the_docs() {
        let source = include_str!("lib.rs");
        assert!(
            source.contains("#[doc(hidden)]\npub mod __private {"),
            "`pub mod __private` in ad-runtime/src/lib.rs must be `#[doc(hidden)]`"
        );
    }
}
