//! Running maxima and minima over a slice, and their pullbacks without a tape.
//!
//! `#[differentiate]` turns the loop `for i in start..end { m = m.max(x[i]); }`
//! into `m = max_over(m, x, start, end)` (and `min` alike): the same value,
//! computed the same way. Reversed step by step, that loop needs the running
//! maximum of every iteration on a tape, and its adjoint loop visits every
//! element, though the seed moves to `x[i]` only where `x[i]` is not below the
//! running maximum. [`max_over_dx`] instead finds the step where the running
//! maximum became the output (the first element equal to it), and applies the
//! step's rule only after it, where an element ties with the output. Before
//! that step the seed is exactly zero, and after it the other steps keep the
//! whole seed, so those elements would only get `+= 0`: they are left alone
//! (the one difference: a shadow element that is `-0.0` stays `-0.0`).

use crate::Float;
use crate::rules;

/// `m0.max(x[start]).max(x[start + 1])…` up to `x[end - 1]`: the loop
/// `for i in start..end { m = m.max(x[i]); }`; `m0` if `start >= end`.
///
/// # Panics
///
/// Panics if `end > x.len()` and `start < end`.
#[inline]
#[track_caller]
pub fn max_over<T: Float>(m0: T, x: &[T], start: usize, end: usize) -> T {
    over(m0, x, start..end, T::max)
}

/// `m0.min(x[start])…`: the loop `for i in start..end { m = m.min(x[i]); }`.
///
/// # Panics
///
/// Panics if `end > x.len()` and `start < end`.
#[inline]
#[track_caller]
pub fn min_over<T: Float>(m0: T, x: &[T], start: usize, end: usize) -> T {
    over(m0, x, start..end, T::min)
}

/// `x[start].max(m0)`, then `x[start + 1].max(…)`…: the loop
/// `for i in start..end { m = x[i].max(m); }`, the operands in the order the
/// user wrote them (the same pullback as [`max_over`]: its step rule treats
/// both sides alike).
///
/// # Panics
///
/// Panics if `end > x.len()` and `start < end`.
#[inline]
#[track_caller]
pub fn max_over_rev<T: Float>(m0: T, x: &[T], start: usize, end: usize) -> T {
    over(m0, x, start..end, |m, xi| xi.max(m))
}

/// `x[start].min(m0)`…: the loop `for i in start..end { m = x[i].min(m); }`.
///
/// # Panics
///
/// Panics if `end > x.len()` and `start < end`.
#[inline]
#[track_caller]
pub fn min_over_rev<T: Float>(m0: T, x: &[T], start: usize, end: usize) -> T {
    over(m0, x, start..end, |m, xi| xi.min(m))
}

/// Pullback of [`max_over`], whose output was `y`: adds the adjoint of
/// `x[start..end]` for the seed `dy` into `dx`, and returns the adjoint of
/// `m0`. The result is the one of reversing the loop step by step with
/// [`rules::max`] (ties split the seed, a NaN gives it to the other side).
///
/// # Panics
///
/// Panics if `end > x.len()` or `end > dx.len()`, and `start < end`.
#[inline]
#[track_caller]
pub fn max_over_dx<T: Float>(
    m0: T,
    x: &[T],
    start: usize,
    end: usize,
    y: T,
    dy: T,
    dx: &mut [T],
) -> T {
    pullback(rules::max, m0, x, start..end, y, dy, Some(dx))
}

/// The adjoint of `m0` alone, for an `x` with no shadow: see [`max_over_dx`].
#[inline]
#[track_caller]
pub fn max_over_dm<T: Float>(m0: T, x: &[T], start: usize, end: usize, y: T, dy: T) -> T {
    pullback(rules::max, m0, x, start..end, y, dy, None)
}

/// Pullback of [`min_over`]: see [`max_over_dx`], with [`rules::min`].
#[inline]
#[track_caller]
pub fn min_over_dx<T: Float>(
    m0: T,
    x: &[T],
    start: usize,
    end: usize,
    y: T,
    dy: T,
    dx: &mut [T],
) -> T {
    pullback(rules::min, m0, x, start..end, y, dy, Some(dx))
}

/// The adjoint of `m0` alone, for an `x` with no shadow: see [`min_over_dx`].
#[inline]
#[track_caller]
pub fn min_over_dm<T: Float>(m0: T, x: &[T], start: usize, end: usize, y: T, dy: T) -> T {
    pullback(rules::min, m0, x, start..end, y, dy, None)
}

/// `op(…op(op(m0, x[start]), x[start + 1])…, x[end - 1])`.
#[inline]
#[track_caller]
fn over<T: Float>(m0: T, x: &[T], range: std::ops::Range<usize>, op: fn(T, T) -> T) -> T {
    if range.is_empty() {
        return m0;
    }
    x[range].iter().fold(m0, |m, &xi| op(m, xi))
}

/// The adjoint of `m0`, adding that of `x[range]` into `dx`, for the seed
/// `dy` of the output `y` of the running `max` (or `min`) whose step rule is
/// `rule` ([`rules::max`], [`rules::min`]).
///
/// The last step that gave the whole seed to its element (and none to the
/// running value) is where the running value first became `y`: the first
/// element equal to `y`, unless `m0` already was. Before it, the seed is
/// zero. From it on, the running value compares equal to `y` (it is NaN only
/// if every value was), so `rule(y, x[i], …)` is the step's rule, and the
/// steps where it gives `x[i]` nothing are skipped.
#[inline]
#[track_caller]
fn pullback<T: Float>(
    rule: fn(T, T, T, T) -> (T, T),
    m0: T,
    x: &[T],
    range: std::ops::Range<usize>,
    y: T,
    dy: T,
    mut dx: Option<&mut [T]>,
) -> T {
    if range.is_empty() {
        return dy;
    }
    let start = range.start;
    let x = &x[range];
    let reached = if m0 == y {
        None
    } else {
        x.iter().position(|&xi| xi == y)
    };
    let after = reached.map_or(0, |at| at + 1);
    let mut d = dy;
    for (i, &xi) in x.iter().enumerate().skip(after).rev() {
        // The rule's share for `x[i]`, whatever the seed: 0 when the running
        // value keeps it all.
        if rule(y, xi, y, T::ONE).1 == T::ZERO {
            continue;
        }
        let (d_m, d_xi) = rule(y, xi, y, d);
        if let Some(dx) = dx.as_deref_mut() {
            dx[start + i] += d_xi;
        }
        d = d_m;
    }
    match reached {
        Some(at) => {
            if let Some(dx) = dx {
                dx[start + at] += d;
            }
            T::ZERO
        }
        None => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `max` (or `min`) and its rule.
    type Step = (fn(f64, f64) -> f64, fn(f64, f64, f64, f64) -> (f64, f64));

    const MAX: Step = (f64::max, rules::max::<f64>);
    const MIN: Step = (f64::min, rules::min::<f64>);

    /// The loop reversed step by step, with a tape of the running value: the
    /// adjoint of `m0` and of `x`.
    fn stepwise((op, rule): Step, m0: f64, x: &[f64], start: usize, dy: f64) -> (f64, Vec<f64>) {
        let mut tape = Vec::new();
        let mut m = m0;
        for &xi in &x[start.min(x.len())..] {
            tape.push(m);
            m = op(m, xi);
        }
        let mut dx = vec![0.0; x.len()];
        let mut d = dy;
        for i in (start..x.len()).rev() {
            let before = tape.pop().expect("one value per step");
            let (d_m, d_xi) = rule(before, x[i], op(before, x[i]), d);
            dx[i] += d_xi;
            d = d_m;
        }
        (d, dx)
    }

    /// Values with many ties, signed zeros, infinities and NaNs.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-3i8..=3).prop_map(f64::from),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            -10.0..10.0f64,
        ]
    }

    fn same(a: f64, b: f64) -> bool {
        a == b || (a.is_nan() && b.is_nan())
    }

    proptest! {
        #[test]
        fn the_pullbacks_agree_with_the_loop_reversed_step_by_step(
            m0 in value(),
            x in proptest::collection::vec(value(), 0..12),
            start in 0usize..4,
            dy in prop_oneof![Just(1.0), Just(-2.5), Just(0.0), Just(f64::NAN)],
        ) {
            let end = x.len();
            for (is_max, step) in [(true, MAX), (false, MIN)] {
                let (want_m0, want) = stepwise(step, m0, &x, start, dy);
                let mut dx = vec![0.0; x.len()];
                let y = if is_max { max_over(m0, &x, start, end) } else { min_over(m0, &x, start, end) };
                let (d_m0, d_m0_alone) = if is_max {
                    (
                        max_over_dx(m0, &x, start, end, y, dy, &mut dx),
                        max_over_dm(m0, &x, start, end, y, dy),
                    )
                } else {
                    (
                        min_over_dx(m0, &x, start, end, y, dy, &mut dx),
                        min_over_dm(m0, &x, start, end, y, dy),
                    )
                };
                let looped = x[start.min(end)..].iter().fold(m0, |m, &xi| step.0(m, xi));
                prop_assert_eq!(y.to_bits(), looped.to_bits());
                prop_assert!(same(d_m0, want_m0), "d_m0 {} != {}", d_m0, want_m0);
                prop_assert!(same(d_m0_alone, want_m0));
                for (i, (got, want)) in dx.iter().zip(&want).enumerate() {
                    prop_assert!(same(*got, *want), "dx[{}] {} != {}", i, got, want);
                }
            }
        }
    }

    /// [`stepwise`] for the loop written `m = x[i].max(m)`.
    fn stepwise_rev(
        (op, rule): Step,
        m0: f64,
        x: &[f64],
        start: usize,
        dy: f64,
    ) -> (f64, Vec<f64>) {
        let mut tape = Vec::new();
        let mut m = m0;
        for &xi in &x[start.min(x.len())..] {
            tape.push(m);
            m = op(xi, m);
        }
        let mut dx = vec![0.0; x.len()];
        let mut d = dy;
        for i in (start..x.len()).rev() {
            let before = tape.pop().expect("one value per step");
            let (d_xi, d_m) = rule(x[i], before, op(x[i], before), d);
            dx[i] += d_xi;
            d = d_m;
        }
        (d, dx)
    }

    proptest! {
        #[test]
        fn operands_as_written_give_the_same_pullbacks(
            m0 in value(),
            x in proptest::collection::vec(value(), 0..12),
            start in 0usize..4,
            dy in prop_oneof![Just(1.0), Just(-2.5), Just(0.0)],
        ) {
            let end = x.len();
            for (is_max, step) in [(true, MAX), (false, MIN)] {
                let (want_m0, want) = stepwise_rev(step, m0, &x, start, dy);
                let mut dx = vec![0.0; x.len()];
                let (y, d_m0) = if is_max {
                    let y = max_over_rev(m0, &x, start, end);
                    (y, max_over_dx(m0, &x, start, end, y, dy, &mut dx))
                } else {
                    let y = min_over_rev(m0, &x, start, end);
                    (y, min_over_dx(m0, &x, start, end, y, dy, &mut dx))
                };
                let looped = x[start.min(end)..].iter().fold(m0, |m, &xi| step.0(xi, m));
                prop_assert_eq!(y.to_bits(), looped.to_bits());
                prop_assert!(same(d_m0, want_m0), "d_m0 {} != {}", d_m0, want_m0);
                for (i, (got, want)) in dx.iter().zip(&want).enumerate() {
                    prop_assert!(same(*got, *want), "dx[{}] {} != {}", i, got, want);
                }
            }
        }
    }

    #[test]
    fn ties_after_the_last_new_maximum_split_the_seed() {
        // A new maximum at 1, then ties at 3 and 4: 1/4, 1/4 and 1/2.
        let x = [1.0, 3.0, 0.0, 3.0, 3.0];
        let mut dx = [0.0; 5];
        let d_m0 = max_over_dx(f64::NEG_INFINITY, &x, 0, 5, 3.0, 1.0, &mut dx);
        assert_eq!(d_m0, 0.0);
        assert_eq!(dx, [0.0, 0.25, 0.0, 0.25, 0.5]);
        // No new minimum: the seed stays with `m0`, less what the tie takes.
        let mut dx = [0.0; 2];
        assert_eq!(
            min_over_dx(-1.0, &[-1.0, 5.0], 0, 2, -1.0, 1.0, &mut dx),
            0.5
        );
        assert_eq!(dx, [0.5, 0.0]);
    }

    #[test]
    fn an_empty_range_gives_the_seed_to_the_initial_value() {
        let mut dx = [0.0; 2];
        assert_eq!(max_over(4.0, &[9.0, 9.0], 2, 1), 4.0);
        assert_eq!(max_over_dx(4.0, &[9.0, 9.0], 2, 1, 4.0, 3.0, &mut dx), 3.0);
        assert_eq!(dx, [0.0, 0.0]);
    }
}
