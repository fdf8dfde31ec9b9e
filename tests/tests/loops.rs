//! `for` loops over integer ranges: closed form, finite differences and the
//! dot-product test for each, including zero-trip loops.

use ad_runtime::differentiate;
use ad_tests::fixtures::{power, power_vjp, weighted_sum, weighted_sum_vjp};
use ad_tests::{assert_close, check_scalar};

macro_rules! vjp1 {
    ($vjp:ident $(, $constant:expr)*) => {
        |p: &[f64], s: f64| {
            let (out, dx) = $vjp(p[0], $($constant,)* s);
            (out, vec![dx])
        }
    };
}

#[test]
fn loop_carried_product() {
    let x = 1.3;
    for n in [0_usize, 1, 2, 5] {
        let grad = check_scalar(|p| power(p[0], n), vjp1!(power_vjp, n), &[x]);
        let expected = if n == 0 {
            0.0
        } else {
            n as f64 * x.powi(n as i32 - 1)
        };
        assert_close(&grad, &[expected]);
    }
}

#[test]
fn loop_carried_sum_with_index() {
    let (x, c) = (0.7, 2.5);
    for n in [0_usize, 4] {
        let grad = check_scalar(
            |p| weighted_sum(p[0], p[1], n),
            |p, s| {
                let (out, dx, dc) = weighted_sum_vjp(p[0], p[1], n, s);
                (out, vec![dx, dc])
            },
            &[x, c],
        );
        let total = (0..n).sum::<usize>() as f64;
        assert_close(&grad, &[c * total, x * total]);
    }
}

/// Newton's iteration for sqrt(a), a fixed number of steps.
#[differentiate]
fn newton_sqrt(a: f64) -> f64 {
    let mut y = a;
    for _ in 0..30 {
        y = 0.5 * (y + a / y);
    }
    y
}

#[test]
fn fixed_count_newton_iteration() {
    for a in [0.5, 2.0, 9.0] {
        let grad = check_scalar(|p| newton_sqrt(p[0]), vjp1!(newton_sqrt_vjp), &[a]);
        // Converged: the derivative of sqrt.
        assert!((grad[0] - 0.5 / a.sqrt()).abs() < 1e-12, "{grad:?}");
    }
}

#[differentiate]
fn nested(x: f64, n: usize, m: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let mut row = x;
        for j in 0..m {
            row = row * x + (i * j) as f64;
        }
        s += row.sin();
    }
    s
}

#[test]
fn nested_loops() {
    let x = 0.4;
    for (n, m) in [(3, 2), (2, 0), (0, 3)] {
        let grad = check_scalar(
            |p| nested(p[0], n, m),
            |p, s| {
                let (out, dx) = nested_vjp(p[0], n, m, s);
                (out, vec![dx])
            },
            &[x],
        );
        let mut expected = 0.0;
        for i in 0..n {
            let (mut row, mut d_row) = (x, 1.0);
            for j in 0..m {
                d_row = d_row * x + row;
                row = row * x + (i * j) as f64;
            }
            expected += row.cos() * d_row;
        }
        assert_close(&grad, &[expected]);
    }
}

#[differentiate]
fn ranges(x: f64, n: i32) -> f64 {
    let mut a = x;
    for i in (1..=n).rev() {
        a = a * f64::from(i) + x;
    }
    let mut b = 0.0;
    for k in (0..10).step_by(3) {
        b += x.powi(k);
    }
    let mut c = 1.0;
    for _ in (0..n).step_by(2).rev() {
        c *= x;
    }
    a + b + c
}

#[test]
fn rev_inclusive_and_step_by() {
    let x = 0.9;
    for n in [0, 3, 4] {
        let grad = check_scalar(|p| ranges(p[0], n), vjp1!(ranges_vjp, n), &[x]);
        let mut da = 1.0;
        for i in (1..=n).rev() {
            da = da * f64::from(i) + 1.0;
        }
        let db: f64 = (0..10)
            .step_by(3)
            .map(|k| f64::from(k) * x.powi(k - 1))
            .sum();
        let steps = (0..n).step_by(2).count() as i32;
        let dc = f64::from(steps) * x.powi(steps - 1);
        assert_close(&grad, &[da + db + if steps == 0 { 0.0 } else { dc }]);
    }
}

#[differentiate]
fn branch_in_loop(x: f64, n: usize) -> f64 {
    let mut s = x;
    for i in 0..n {
        if i % 2 == 0 {
            s = s.sin() + x;
        } else {
            s *= s;
        }
    }
    s
}

#[test]
fn branches_inside_a_loop() {
    for x in [0.3, 1.1] {
        for n in [0, 1, 4] {
            let grad = check_scalar(
                |p| branch_in_loop(p[0], n),
                vjp1!(branch_in_loop_vjp, n),
                &[x],
            );
            let (mut s, mut ds) = (x, 1.0);
            for i in 0..n {
                if i % 2 == 0 {
                    ds = s.cos() * ds + 1.0;
                    s = s.sin() + x;
                } else {
                    ds *= 2.0 * s;
                    s *= s;
                }
            }
            assert_close(&grad, &[ds]);
        }
    }
}

#[differentiate]
fn loop_in_branch(x: f64, y: f64, n: usize) -> f64 {
    let mut acc = y;
    if x > 0.0 {
        for _ in 0..n {
            acc = acc * x + y;
        }
    } else {
        acc = -acc;
    }
    acc
}

#[test]
fn a_loop_inside_a_branch() {
    for (x, y) in [(0.8, 1.5), (-0.5, 1.5)] {
        let n = 3;
        let grad = check_scalar(
            |p| loop_in_branch(p[0], p[1], n),
            |p, s| {
                let (out, dx, dy) = loop_in_branch_vjp(p[0], p[1], n, s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
        let expected = if x > 0.0 {
            let (mut acc, mut d_acc_dx, mut d_acc_dy) = (y, 0.0, 1.0);
            for _ in 0..n {
                d_acc_dx = d_acc_dx * x + acc;
                d_acc_dy = d_acc_dy * x + 1.0;
                acc = acc * x + y;
            }
            [d_acc_dx, d_acc_dy]
        } else {
            [0.0, -1.0]
        };
        assert_close(&grad, &expected);
    }
}

#[differentiate]
fn swap_carried(x: f64, y: f64, n: usize) -> f64 {
    let mut a = x;
    let mut b = y;
    for _ in 0..n {
        let t = a;
        a = b;
        b = t * 2.0;
    }
    a * 3.0 + b
}

#[test]
fn carried_values_that_swap() {
    for n in [0_usize, 1, 2, 3] {
        let grad = check_scalar(
            |p| swap_carried(p[0], p[1], n),
            |p, s| {
                let (out, dx, dy) = swap_carried_vjp(p[0], p[1], n, s);
                (out, vec![dx, dy])
            },
            &[1.5, -0.5],
        );
        // After n steps: a, b are x and y scaled by powers of 2, swapped when n is odd.
        let half = 2.0_f64.powi((n / 2) as i32);
        let (da_dx, db_dx, da_dy, db_dy) = if n % 2 == 0 {
            (half, 0.0, 0.0, half)
        } else {
            (0.0, 2.0 * half, half, 0.0)
        };
        assert_close(&grad, &[3.0 * da_dx + db_dx, 3.0 * da_dy + db_dy]);
    }
}

/// The Babylonian square root, iterated until a tolerance is met.
#[differentiate]
fn babylonian_sqrt(a: f64) -> f64 {
    let mut y = a;
    while (y * y - a).abs() > 1e-12 * a {
        y = 0.5 * (y + a / y);
    }
    y
}

#[test]
fn while_to_a_tolerance() {
    for a in [0.25, 2.0, 9.0, 1e4] {
        let grad = check_scalar(|p| babylonian_sqrt(p[0]), vjp1!(babylonian_sqrt_vjp), &[a]);
        assert!(
            (grad[0] - 0.5 / a.sqrt()).abs() < 1e-9 * (0.5 / a.sqrt()),
            "a = {a}: {grad:?}"
        );
    }
    // a = 1: the loop never runs, y = a.
    assert_eq!(babylonian_sqrt_vjp(1.0, 1.0), (1.0, 1.0));
}

#[differentiate]
fn halve_until_small(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    let mut steps = 0;
    while a > 1.0 {
        a *= 0.5;
        b = b * a + 1.0;
        steps += 1;
    }
    a * b + f64::from(steps)
}

#[test]
fn while_with_several_carried_values_and_zero_trips() {
    for (x, y) in [(10.0, 0.5), (0.5, 2.0)] {
        let grad = check_scalar(
            |p| halve_until_small(p[0], p[1]),
            |p, s| {
                let (out, dx, dy) = halve_until_small_vjp(p[0], p[1], s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
        // Forward by hand: (da/dx, da/dy) and (db/dx, db/dy).
        let (mut a, mut b) = (x, y);
        let (mut da, mut db) = ([1.0, 0.0], [0.0, 1.0]);
        while a > 1.0 {
            a *= 0.5;
            da = [da[0] * 0.5, da[1] * 0.5];
            db = [db[0] * a + b * da[0], db[1] * a + b * da[1]];
            b = b * a + 1.0;
        }
        assert_close(&grad, &[da[0] * b + a * db[0], da[1] * b + a * db[1]]);
    }
}

#[differentiate]
fn break_and_continue(x: f64, n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        if i % 3 == 1 {
            continue;
        }
        s += x * i as f64;
        if s > 10.0 {
            break;
        }
        s = s.sin() + s;
    }
    s
}

#[test]
fn break_and_continue_in_a_for() {
    for x in [0.3, 2.5] {
        for n in [0, 2, 7] {
            let grad = check_scalar(
                |p| break_and_continue(p[0], n),
                vjp1!(break_and_continue_vjp, n),
                &[x],
            );
            // The same control flow, differentiated forward by hand.
            let (mut s, mut ds) = (0.0_f64, 0.0);
            for i in 0..n {
                if i % 3 == 1 {
                    continue;
                }
                s += x * i as f64;
                ds += i as f64;
                if s > 10.0 {
                    break;
                }
                ds += s.cos() * ds;
                s = s.sin() + s;
            }
            assert_close(&grad, &[ds]);
        }
    }
}

#[differentiate]
fn loop_with_break_value(x: f64) -> f64 {
    let mut y = x;
    let mut k = 0;
    let found = loop {
        y = y * 1.5 + 0.1;
        k += 1;
        if y > 4.0 {
            break y * 2.0;
        }
        if k > 50 {
            break 0.0;
        }
    };
    found + y
}

#[test]
fn loop_and_break_with_a_value() {
    for x in [0.5, 3.0, 5.0] {
        let grad = check_scalar(
            |p| loop_with_break_value(p[0]),
            vjp1!(loop_with_break_value_vjp),
            &[x],
        );
        let (mut y, mut dy, mut k) = (x, 1.0, 0);
        let d_found = loop {
            y = y * 1.5 + 0.1;
            dy *= 1.5;
            k += 1;
            if y > 4.0 {
                break 2.0 * dy;
            }
            if k > 50 {
                break 0.0;
            }
        };
        assert_close(&grad, &[d_found + dy]);
    }
}

#[differentiate]
fn labeled(x: f64, n: usize) -> f64 {
    let mut s = x;
    'outer: for i in 0..n {
        let mut j = 0;
        while j < n {
            j += 1;
            if j > i {
                continue 'outer;
            }
            s = s * x + 0.5;
            if s > 100.0 {
                break 'outer;
            }
        }
    }
    s
}

#[test]
fn labeled_break_and_continue_across_nested_loops() {
    for x in [0.9, 1.3, 3.0] {
        for n in [0, 1, 4] {
            let grad = check_scalar(|p| labeled(p[0], n), vjp1!(labeled_vjp, n), &[x]);
            let (mut s, mut ds) = (x, 1.0);
            'outer: for i in 0..n {
                let mut j = 0;
                while j < n {
                    j += 1;
                    if j > i {
                        continue 'outer;
                    }
                    ds = ds * x + s;
                    s = s * x + 0.5;
                    if s > 100.0 {
                        break 'outer;
                    }
                }
            }
            assert_close(&grad, &[ds]);
        }
    }
}

#[differentiate]
fn early_return(x: f64, n: usize) -> f64 {
    if x < 0.0 {
        return -x * 2.0;
    }
    let mut s = x;
    for _ in 0..n {
        s = s * s;
        if s > 1e3 {
            return s.ln();
        }
    }
    s + 1.0
}

#[test]
fn early_return_from_a_branch_and_from_inside_a_loop() {
    for x in [-1.5, 0.9, 1.5, 20.0] {
        for n in [0, 3, 6] {
            let grad = check_scalar(|p| early_return(p[0], n), vjp1!(early_return_vjp, n), &[x]);
            let expected = 'value: {
                if x < 0.0 {
                    break 'value -2.0;
                }
                let (mut s, mut ds) = (x, 1.0);
                for _ in 0..n {
                    ds *= 2.0 * s;
                    s *= s;
                    if s > 1e3 {
                        break 'value ds / s;
                    }
                }
                ds
            };
            assert_close(&grad, &[expected]);
        }
    }
}

/// Newton's iteration for `√a` whose tail is a `loop` left by `return`, the
/// way a solver is usually written.
#[differentiate(vjp, jvp)]
fn newton_sqrt_tail_loop(a: f64) -> f64 {
    let mut x = a;
    loop {
        let next = 0.5 * (x + a / x);
        if (next - x).abs() < 1e-12 {
            return next;
        }
        x = next;
    }
}

/// A tail `if` with a `return` in one branch and the value in the other, and
/// a tail `for` that returns from inside. (The `return` is the point here.)
#[allow(clippy::needless_return)]
#[differentiate(vjp, jvp)]
fn tail_if_returning(x: f64, y: f64) -> f64 {
    let s = x * y;
    if s > 1.0 {
        return s.ln();
    } else {
        s * s
    }
}

#[differentiate(vjp, jvp)]
fn tail_for_returning(x: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        if s > 10.0 {
            return s.sqrt();
        }
        s = s * s + 1.0;
    }
    s
}

#[test]
fn returns_from_inside_the_tail_expression() {
    for a in [0.5, 2.0, 9.0] {
        let grad = check_scalar(
            |p| newton_sqrt_tail_loop(p[0]),
            vjp1!(newton_sqrt_tail_loop_vjp),
            &[a],
        );
        assert!((newton_sqrt_tail_loop(a) - a.sqrt()).abs() < 1e-12);
        assert_close(&grad, &[0.5 / a.sqrt()]);
        let (out, t) = newton_sqrt_tail_loop_jvp(a, 1.0);
        assert_eq!(out.to_bits(), newton_sqrt_tail_loop(a).to_bits());
        assert!((t - grad[0]).abs() < 1e-12);
    }
    for (x, y) in [(2.0, 3.0), (0.2, 0.3)] {
        let grad = check_scalar(
            |p| tail_if_returning(p[0], p[1]),
            |p, seed| {
                let (out, d_x, d_y) = tail_if_returning_vjp(p[0], p[1], seed);
                (out, vec![d_x, d_y])
            },
            &[x, y],
        );
        let s = x * y;
        let expected = if s > 1.0 {
            [1.0 / x, 1.0 / y]
        } else {
            [2.0 * s * y, 2.0 * s * x]
        };
        assert_close(&grad, &expected);
        let (_, t) = tail_if_returning_jvp(x, 1.0, y, 0.0);
        assert!((t - grad[0]).abs() < 1e-12);
    }
    for n in [0, 1, 2, 4] {
        let x = 1.3;
        let grad = check_scalar(
            |p| tail_for_returning(p[0], n),
            vjp1!(tail_for_returning_vjp, n),
            &[x],
        );
        // By hand: s ← s² + 1 until s > 10, then √s.
        let (mut s, mut ds) = (x, 1.0);
        let mut expected = None;
        for _ in 0..n {
            if s > 10.0 {
                expected = Some(ds / (2.0 * s.sqrt()));
                break;
            }
            ds *= 2.0 * s;
            s = s * s + 1.0;
        }
        assert_close(&grad, &[expected.unwrap_or(ds)]);
        let (_, t) = tail_for_returning_jvp(x, 1.0, n);
        assert!((t - grad[0]).abs() < 1e-9 * grad[0].abs().max(1.0));
    }
}

// The user's loop never loops: clippy says so about it, and must say nothing
// more about the generated one.
#[allow(clippy::never_loop)]
#[differentiate]
fn loop_once(x: f64) -> f64 {
    loop {
        break x * x;
    }
}

#[test]
fn a_loop_that_breaks_at_once() {
    let grad = check_scalar(|p| loop_once(p[0]), vjp1!(loop_once_vjp), &[1.5]);
    assert_close(&grad, &[3.0]);
}

// A loop that only takes a running maximum or minimum is one runtime call
// with a pullback that needs no tape (`analysis::running_extrema`); the
// `_stepwise` twins, whose `1.0 * x[i]` keeps them loops, are reversed step by
// step, and both must agree everywhere, ties and NaNs included.

/// `max(a, x[1..])·min(x[0..])`, with the index loop and the element loop.
#[allow(clippy::needless_range_loop)] // the index loop users write
#[differentiate]
fn max_times_min(a: f64, x: &[f64]) -> f64 {
    let mut m = a;
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let mut l = f64::INFINITY;
    for &v in x {
        l = l.min(v);
    }
    m * l
}

#[allow(clippy::needless_range_loop)]
#[differentiate]
fn max_times_min_stepwise(a: f64, x: &[f64]) -> f64 {
    let mut m = a;
    for i in 1..x.len() {
        m = m.max(1.0 * x[i]);
    }
    let mut l = f64::INFINITY;
    for &v in x {
        l = l.min(1.0 * v);
    }
    m * l
}

/// `(a, x, d_x, seed) -> (out, d_a)`.
type MaxTimesMinVjp = fn(f64, &[f64], &mut [f64], f64) -> (f64, f64);

fn max_times_min_grad(vjp: MaxTimesMinVjp) -> impl Fn(&[f64], f64) -> (f64, Vec<f64>) {
    move |p: &[f64], s: f64| {
        let mut d_x = vec![0.0; p.len() - 1];
        let (out, d_a) = vjp(p[0], &p[1..], &mut d_x, s);
        d_x.insert(0, d_a);
        (out, d_x)
    }
}

#[test]
fn running_maximum_and_minimum() {
    // (a, x): the maximum at `a`, then inside `x`; the minimum at x[0], then
    // at the end.
    for p in [
        [5.0, 0.5, 2.0, -1.0, 3.0],
        [0.0, 0.5, 2.0, 4.0, 3.0],
        [0.0, -0.5, 2.0, 1.0, -3.0],
    ] {
        let f = |p: &[f64]| max_times_min(p[0], &p[1..]);
        let grad = check_scalar(f, max_times_min_grad(max_times_min_vjp), &p);
        let f = |p: &[f64]| max_times_min_stepwise(p[0], &p[1..]);
        let stepwise = check_scalar(f, max_times_min_grad(max_times_min_stepwise_vjp), &p);
        assert_eq!(grad, stepwise);
        let (a, x) = (p[0], &p[1..]);
        let m = x[1..].iter().fold(a, |m, &v| m.max(v));
        let l = x.iter().fold(f64::INFINITY, |l, &v| l.min(v));
        let mut expected = vec![0.0; p.len()];
        // d/da and d/dx[k] of m·l: l at the maximum, m at the minimum.
        let at_max = if a >= m {
            0
        } else {
            2 + x[1..].iter().position(|&v| v == m).unwrap()
        };
        let at_min = 1 + x.iter().position(|&v| v == l).unwrap();
        expected[at_max] += l;
        expected[at_min] += m;
        assert_close(&grad, &expected);
    }
}

#[test]
fn running_extrema_agree_with_the_loop_reversed_step_by_step() {
    let nan = f64::NAN;
    for p in [
        // Ties with `a` and inside `x`, signed zeros, NaNs.
        [1.0, 1.0, 1.0, 0.0, 1.0],
        [0.0, -0.0, 0.0, -0.0, 0.0],
        [nan, nan, 2.0, 2.0, -1.0],
        [3.0, 2.0, nan, 3.0, nan],
        [nan, nan, nan, nan, nan],
        [-1.0, 4.0, 4.0, 4.0, 4.0],
    ] {
        for seed in [1.0, -0.5] {
            let (out, grad) = max_times_min_grad(max_times_min_vjp)(&p, seed);
            let (want_out, want) = max_times_min_grad(max_times_min_stepwise_vjp)(&p, seed);
            let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
            assert!(same(out, want_out), "{p:?}: {out} vs {want_out}");
            assert!(
                grad.iter().zip(&want).all(|(&g, &w)| same(g, w)),
                "{p:?}, seed {seed}: {grad:?} vs {want:?}"
            );
        }
    }
}

/// With `x` constant, the pullback gives `a` its adjoint alone.
#[differentiate(wrt(a))]
fn max_with(a: f64, x: &[f64]) -> f64 {
    let mut m = a;
    for &v in x {
        m = m.max(v);
    }
    m * a
}

#[test]
fn running_maximum_of_a_constant_buffer() {
    let x = [1.0, 3.0, 2.0];
    for (a, expected) in [(5.0, 10.0), (2.0, 3.0), (3.0, 4.5)] {
        let f = |p: &[f64]| max_with(p[0], &x);
        let vjp = |p: &[f64], s: f64| {
            let (out, d_a) = max_with_vjp(p[0], &x, s);
            (out, vec![d_a])
        };
        // At the tie a = 3 the function has a kink: no finite differences.
        let grad = if a == 3.0 {
            vec![vjp(&[a], 1.0).1[0]]
        } else {
            check_scalar(f, vjp, &[a])
        };
        // `m · a`: `2a` when `a` is the maximum, `max x` otherwise; at the
        // tie, half of `d_m = a` goes to `a`.
        assert_close(&grad, &[expected]);
    }
}
