//! What a caller in a loop keeps of a callee's pullback for its adjoint.
//!
//! A call of a differentiated function in a loop is usually made again in
//! the adjoint loop for its pullback, rather than saving the pullback on a
//! tape: for a small callee the call costs less than a tape of everything
//! its pullback captures. A custom rule (`#[custom_vjp(rule)]`) is the
//! exception: making its call again runs the whole primal (a `tanh`, an
//! `exp`) that the rule exists to avoid, while its pullback needs only the
//! call's arguments, which the adjoint reads again, and its output.
//!
//! The macro cannot see which kind of callee a path names, so the type
//! tells: a custom rule's forward part returns its pullback as a [`Rule`],
//! which also holds how to build that pullback from the arguments and the
//! output (a closure capturing nothing, so zero-sized). In the primal loop
//! the caller tapes `keep!(pullback)` (or `keep!(pullback, output)` when
//! its adjoint does not have the output at hand), which is that builder
//! ([`Built`], [`WithOut`]) for a [`Rule`] and [`Remake`], a zero-sized
//! marker, for any other pullback (autoref specialization: the two impls
//! are found at different steps of method lookup, so they do not overlap).
//! In the adjoint loop [`rebuilt`] gives the pullback back: built from the
//! arguments and the output, or by making the call again.
//!
//! ```text
//! for i in 0..n {                              for i in (0..n).rev() {
//!     let (y, g_pullback) = g_forward_all(x[i]);   let kept = tape.pop();
//!     tape.push(keep!(g_pullback));                let (_, g_pullback) =
//!     …                                                rebuilt(kept, (x[i],), y, || g_forward_all(x[i]));
//! }                                                d_x[i] += g_pullback(d_y);
//!                                              }
//! ```

use core::marker::PhantomData;
use core::ops::Deref;

/// How a custom rule's pullback is built from the call's arguments taken by
/// value (a tuple, `A`) and its output (`O`): implemented by every closure
/// `Fn(a₁, …, aₖ, out) -> pullback`.
pub trait Build<A, O> {
    /// The pullback built.
    type Pullback;
    /// The pullback of the call with these arguments and this output.
    fn build(&self, args: A, out: O) -> Self::Pullback;
}

macro_rules! build_impls {
    ($(($($arg:ident $name:ident),*))*) => {$(
        impl<F, $($arg,)* O, P> Build<($($arg,)*), O> for F
        where
            F: Fn($($arg,)* O) -> P,
        {
            type Pullback = P;

            #[inline(always)]
            fn build(&self, ($($name,)*): ($($arg,)*), out: O) -> P {
                self($($name,)* out)
            }
        }
    )*};
}

build_impls! {
    ()
    (A1 a1)
    (A1 a1, A2 a2)
    (A1 a1, A2 a2, A3 a3)
    (A1 a1, A2 a2, A3 a3, A4 a4)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7, A8 a8)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7, A8 a8, A9 a9)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7, A8 a8, A9 a9, A10 a10)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7, A8 a8, A9 a9, A10 a10, A11 a11)
    (A1 a1, A2 a2, A3 a3, A4 a4, A5 a5, A6 a6, A7 a7, A8 a8, A9 a9, A10 a10, A11 a11, A12 a12)
}

/// The pullback of a function with a custom rule, callable as it is through
/// [`Deref`], and the builder that made it, which callers in loops keep
/// (see the module).
pub struct Rule<A, O, B: Build<A, O>> {
    pullback: B::Pullback,
    build: B,
    types: PhantomData<fn(A, O)>,
}

impl<A, O, B: Build<A, O>> Rule<A, O, B> {
    /// The pullback of the call with these arguments and this output.
    #[inline(always)]
    pub fn new(build: B, args: A, out: O) -> Self {
        Rule {
            pullback: build.build(args, out),
            build,
            types: PhantomData,
        }
    }
}

impl<A, O, B: Build<A, O>> Deref for Rule<A, O, B> {
    type Target = B::Pullback;

    #[inline(always)]
    fn deref(&self) -> &B::Pullback {
        &self.pullback
    }
}

/// What a caller keeps of a [`Rule`] whose adjoint has the call's output:
/// the builder alone.
#[derive(Clone, Copy)]
pub struct Built<B>(B);

/// What a caller keeps of a [`Rule`] whose adjoint does not have the
/// call's output: the builder and the output.
#[derive(Clone, Copy)]
pub struct WithOut<B, O>(B, O);

/// What a caller keeps of a pullback that is not a [`Rule`]: nothing; the
/// adjoint makes the call again.
#[derive(Clone, Copy, Debug, Default)]
pub struct Remake;

/// A pullback being kept (`keep!(pullback)`).
pub struct Keep<P>(pub P);

/// A pullback being kept with the call's output (`keep!(pullback, out)`).
pub struct KeepOut<P, O>(pub P, pub O);

/// `Keep(rule).kept()`: the rule's builder. Found by value, before
/// [`KeepOther`], which is found by reference.
pub trait KeepRule {
    /// What is kept.
    type Kept;
    /// What is kept.
    fn kept(self) -> Self::Kept;
}

impl<A, O, B: Build<A, O>> KeepRule for Keep<Rule<A, O, B>> {
    type Kept = Built<B>;

    #[inline(always)]
    fn kept(self) -> Built<B> {
        Built(self.0.build)
    }
}

impl<A, O, B: Build<A, O>> KeepRule for KeepOut<Rule<A, O, B>, O> {
    type Kept = WithOut<B, O>;

    #[inline(always)]
    fn kept(self) -> WithOut<B, O> {
        WithOut(self.0.build, self.1)
    }
}

/// `Keep(pullback).kept()` for any other pullback: [`Remake`].
pub trait KeepOther {
    /// [`Remake`].
    fn kept(&self) -> Remake;
}

impl<P> KeepOther for Keep<P> {
    #[inline(always)]
    fn kept(&self) -> Remake {
        Remake
    }
}

impl<P, O> KeepOther for KeepOut<P, O> {
    #[inline(always)]
    fn kept(&self) -> Remake {
        Remake
    }
}

/// `keep!(pullback)` or `keep!(pullback, out)`: what a caller in a loop
/// keeps of a callee's pullback for its adjoint (see `ad_runtime`'s
/// `kept.rs`).
#[doc(hidden)]
#[macro_export]
macro_rules! __keep_pullback {
    ($pullback:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{KeepOther as _, KeepRule as _};
        $crate::__private::Keep($pullback).kept()
    }};
    ($pullback:expr, $out:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{KeepOther as _, KeepRule as _};
        $crate::__private::KeepOut($pullback, $out).kept()
    }};
}

/// A kept pullback made whole again in the adjoint, given the call's
/// arguments taken by value (`A`) and its output (`Q`, or `()` if it was
/// kept): built from them, or made by the call again (`P`, the call's
/// pullback). The split API's pullback, which may run more than once, reads
/// its tapes by reference, and so holds references to what was kept.
pub trait Rebuild<A, Q, P> {
    /// The pullback.
    type Pullback;
    /// The pullback, `remake` called if it must be.
    fn pullback(self, args: A, out: Q, remake: impl FnOnce() -> P) -> Self::Pullback;
}

impl<A, O, B: Build<A, O>, P> Rebuild<A, O, P> for Built<B> {
    type Pullback = B::Pullback;

    #[inline(always)]
    fn pullback(self, args: A, out: O, _remake: impl FnOnce() -> P) -> B::Pullback {
        self.0.build(args, out)
    }
}

impl<A, O, B: Build<A, O>, P> Rebuild<A, O, P> for &Built<B> {
    type Pullback = B::Pullback;

    #[inline(always)]
    fn pullback(self, args: A, out: O, _remake: impl FnOnce() -> P) -> B::Pullback {
        self.0.build(args, out)
    }
}

impl<A, Q, O, B: Build<A, O>, P> Rebuild<A, Q, P> for WithOut<B, O> {
    type Pullback = B::Pullback;

    #[inline(always)]
    fn pullback(self, args: A, _out: Q, _remake: impl FnOnce() -> P) -> B::Pullback {
        self.0.build(args, self.1)
    }
}

impl<A, Q, O: Copy, B: Build<A, O>, P> Rebuild<A, Q, P> for &WithOut<B, O> {
    type Pullback = B::Pullback;

    #[inline(always)]
    fn pullback(self, args: A, _out: Q, _remake: impl FnOnce() -> P) -> B::Pullback {
        self.0.build(args, self.1)
    }
}

impl<A, Q, P> Rebuild<A, Q, P> for Remake {
    type Pullback = P;

    #[inline(always)]
    fn pullback(self, _args: A, _out: Q, remake: impl FnOnce() -> P) -> P {
        remake()
    }
}

impl<A, Q, P> Rebuild<A, Q, P> for &Remake {
    type Pullback = P;

    #[inline(always)]
    fn pullback(self, _args: A, _out: Q, remake: impl FnOnce() -> P) -> P {
        remake()
    }
}

/// `((), pullback)`: the call's pair as the adjoint binds it, its output
/// unused; the pullback rebuilt from what was kept, the call's arguments
/// taken by value and its output (`()` if that was kept too), or from the
/// call made again.
#[inline(always)]
pub fn rebuilt<K: Rebuild<A, Q, P>, A, Q, O, P>(
    kept: K,
    args: A,
    out: Q,
    call: impl FnOnce() -> (O, P),
) -> ((), K::Pullback) {
    ((), kept.pullback(args, out, || call().1))
}

#[cfg(test)]
mod tests {
    use super::{Build, Remake, Rule, rebuilt};
    use core::cell::Cell;

    /// `x²` with its rule, as `#[custom_vjp]` writes its forward part.
    #[allow(clippy::type_complexity)]
    fn square_forward(
        x: f64,
    ) -> (
        f64,
        Rule<(f64,), f64, impl Build<(f64,), f64, Pullback = impl Fn(f64) -> f64>>,
    ) {
        let out = x * x;
        let build = |x: f64, out: f64| move |d: f64| 2.0 * x * d + 0.0 * out;
        (out, Rule::new(build, (x,), out))
    }

    fn plain_forward(x: f64) -> (f64, impl Fn(f64) -> f64) {
        (x * x, move |d: f64| 2.0 * x * d)
    }

    #[test]
    fn a_rule_is_rebuilt_and_never_made_again() {
        let calls = Cell::new(0);
        let remake = |x| {
            calls.set(calls.get() + 1);
            square_forward(x)
        };
        let (out, pullback) = square_forward(3.0);
        assert_eq!(pullback(0.5), 3.0);
        // The output at hand in the adjoint: the builder alone is kept.
        let kept = crate::__keep_pullback!(pullback);
        assert_eq!(core::mem::size_of_val(&kept), 0);
        // As the split API's pullback reads it from its tape.
        let (_, pullback) = rebuilt(&kept, (3.0,), out, || remake(3.0));
        assert_eq!(pullback(1.0), 6.0);
        let (_, pullback) = rebuilt(kept, (3.0,), out, || remake(3.0));
        assert_eq!(pullback(0.5), 3.0);
        // The output kept too.
        let (out, pullback) = square_forward(2.0);
        let kept = crate::__keep_pullback!(pullback, out);
        let (_, pullback) = rebuilt(&kept, (2.0,), (), || remake(2.0));
        assert_eq!(pullback(1.0), 4.0);
        let (_, pullback) = rebuilt(kept, (2.0,), (), || remake(2.0));
        assert_eq!(pullback(1.0), 4.0);
        assert_eq!(calls.get(), 0);
    }

    #[test]
    fn any_other_pullback_is_made_again() {
        let calls = Cell::new(0);
        let remake = |x| {
            calls.set(calls.get() + 1);
            plain_forward(x)
        };
        let (out, pullback) = plain_forward(3.0);
        let kept: Remake = crate::__keep_pullback!(pullback);
        assert_eq!(core::mem::size_of_val(&kept), 0);
        let (_, pullback) = rebuilt(kept, (3.0,), out, || remake(3.0));
        assert_eq!(pullback(0.5), 3.0);
        assert_eq!(calls.get(), 1);
        let (_, pullback) = rebuilt(&kept, (2.0,), (), || remake(2.0));
        assert_eq!(pullback(1.0), 4.0);
        assert_eq!(calls.get(), 2);
        let (out, pullback) = plain_forward(1.0);
        let kept: Remake = crate::__keep_pullback!(pullback, out);
        let (_, pullback) = rebuilt(kept, (1.0,), (), || remake(1.0));
        assert_eq!(pullback(1.0), 2.0);
        assert_eq!(calls.get(), 3);
    }
}
