//! What a caller in a loop keeps of a callee's pullback for its adjoint.
//!
//! A call of a differentiated function in a loop is usually made again in
//! the adjoint loop for its pullback, rather than saving the pullback on a
//! tape: for a small callee the call costs less than a tape of everything
//! its pullback captures. A custom rule (`#[custom_vjp(rule)]`) is the
//! exception: its pullback captures only the call's arguments and output,
//! and making the call again costs the whole primal (a `tanh`, an `exp`)
//! that the rule exists to avoid.
//!
//! The macro cannot see which kind of callee it calls, so the type tells:
//! a custom rule's forward part returns its pullback as a [`Rule`]. In the
//! primal loop the caller writes `keep!(pullback)`, which is the pullback
//! itself for a [`Rule`] and [`Remake`], a zero-sized marker, for any other
//! (autoref specialization: the two impls are found at different steps of
//! method lookup, so they do not overlap). The kept value goes on the
//! loop's tape, and in the adjoint loop [`remade`] gives back the pullback,
//! calling the callee again only for a [`Remake`].
//!
//! ```text
//! for i in 0..n {                            for i in (0..n).rev() {
//!     let (y, g_pullback) = g_forward_all(x[i]);   let kept = tape.pop();
//!     tape.push(keep!(g_pullback));                let (_, g_pullback) = remade(kept, || g_forward_all(x[i]));
//!     …                                            d_x[i] += g_pullback(d_y);
//! }                                          }
//! ```

use core::ops::Deref;

/// The pullback of a function with a custom rule: the closure calling the
/// rule, callable as it is through [`Deref`]. Callers in loops keep it on
/// their tape rather than make the call again (see the module).
#[derive(Clone, Copy)]
pub struct Rule<F>(pub F);

impl<F> Deref for Rule<F> {
    type Target = F;

    #[inline(always)]
    fn deref(&self) -> &F {
        &self.0
    }
}

/// What a caller keeps of a pullback that is not a [`Rule`]: nothing; the
/// adjoint makes the call again.
#[derive(Clone, Copy, Debug, Default)]
pub struct Remake;

/// A pullback being kept: [`KeepRule`] and [`KeepOther`] tell the two
/// kinds apart.
pub struct Keep<P>(pub P);

/// `Keep(rule).kept()`: the rule's pullback itself. Found by value, before
/// [`KeepOther`], which is found by reference.
pub trait KeepRule {
    /// The pullback kept.
    type Kept;
    /// The pullback kept.
    fn kept(self) -> Self::Kept;
}

impl<F> KeepRule for Keep<Rule<F>> {
    type Kept = Rule<F>;

    #[inline(always)]
    fn kept(self) -> Rule<F> {
        self.0
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

/// `keep!(pullback)`: what a caller in a loop keeps of a callee's pullback
/// for its adjoint (see `ad_runtime`'s `kept.rs`).
#[doc(hidden)]
#[macro_export]
macro_rules! __keep_pullback {
    ($pullback:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{KeepOther as _, KeepRule as _};
        $crate::__private::Keep($pullback).kept()
    }};
}

/// A kept pullback made whole again in the adjoint: a [`Rule`] is the
/// pullback; a [`Remake`] makes the call again. The split API's pullback,
/// which may run more than once, reads its tapes by reference, and so
/// holds `&Rule` and `&Remake`.
pub trait Kept<P> {
    /// What is called: the pullback, or a reference to it.
    type Pullback;
    /// The pullback, `remake` called if it must be.
    fn pullback(self, remake: impl FnOnce() -> P) -> Self::Pullback;
}

impl<F> Kept<Rule<F>> for Rule<F> {
    type Pullback = Self;

    #[inline(always)]
    fn pullback(self, _remake: impl FnOnce() -> Self) -> Self {
        self
    }
}

impl<F> Kept<Rule<F>> for &Rule<F> {
    type Pullback = Self;

    #[inline(always)]
    fn pullback(self, _remake: impl FnOnce() -> Rule<F>) -> Self {
        self
    }
}

impl<P> Kept<P> for Remake {
    type Pullback = P;

    #[inline(always)]
    fn pullback(self, remake: impl FnOnce() -> P) -> P {
        remake()
    }
}

impl<P> Kept<P> for &Remake {
    type Pullback = P;

    #[inline(always)]
    fn pullback(self, remake: impl FnOnce() -> P) -> P {
        remake()
    }
}

/// `((), pullback)`: the call's pair as the adjoint binds it, its output
/// unused, the pullback from `kept` or from the call made again.
#[inline(always)]
pub fn remade<K: Kept<P>, O, P>(kept: K, call: impl FnOnce() -> (O, P)) -> ((), K::Pullback) {
    ((), kept.pullback(|| call().1))
}

#[cfg(test)]
mod tests {
    use super::{Remake, Rule, remade};
    use core::cell::Cell;

    fn rule_forward(x: f64) -> (f64, Rule<impl Fn(f64) -> f64>) {
        (x * x, Rule(move |d: f64| 2.0 * x * d))
    }

    fn plain_forward(x: f64) -> (f64, impl Fn(f64) -> f64) {
        (x * x, move |d: f64| 2.0 * x * d)
    }

    #[test]
    fn a_rule_is_kept_and_never_made_again() {
        let calls = Cell::new(0);
        let (_, pullback) = rule_forward(3.0);
        let kept = crate::__keep_pullback!(pullback);
        let (_, pullback) = remade(kept, || {
            calls.set(calls.get() + 1);
            rule_forward(3.0)
        });
        assert_eq!(pullback(0.5), 3.0);
        assert_eq!(calls.get(), 0);
        // As the split API's pullback reads it from its tape.
        let (_, pullback) = rule_forward(2.0);
        let kept = crate::__keep_pullback!(pullback);
        let (_, pullback) = remade(&kept, || {
            calls.set(calls.get() + 1);
            rule_forward(2.0)
        });
        assert_eq!(pullback(1.0), 4.0);
        assert_eq!(calls.get(), 0);
    }

    #[test]
    fn any_other_pullback_is_made_again() {
        let calls = Cell::new(0);
        let (_, pullback) = plain_forward(3.0);
        let kept: Remake = crate::__keep_pullback!(pullback);
        assert_eq!(core::mem::size_of_val(&kept), 0);
        let (_, pullback) = remade(kept, || {
            calls.set(calls.get() + 1);
            plain_forward(3.0)
        });
        assert_eq!(pullback(0.5), 3.0);
        assert_eq!(calls.get(), 1);
        let (_, pullback) = remade(&kept, || {
            calls.set(calls.get() + 1);
            plain_forward(2.0)
        });
        assert_eq!(pullback(1.0), 4.0);
        assert_eq!(calls.get(), 2);
    }
}
