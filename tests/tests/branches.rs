//! Branches: the executed side is differentiated; both sides of every branch
//! are checked against the closed form, finite differences and the dot-product
//! test (at points away from the switch, where the function is smooth).

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar};

macro_rules! vjp1 {
    ($vjp:ident $(, $constant:expr)*) => {
        |p: &[f64], s: f64| {
            let (out, dx) = $vjp(p[0], $($constant,)* s);
            (out, vec![dx])
        }
    };
}

macro_rules! vjp2 {
    ($vjp:ident) => {
        |p: &[f64], s: f64| {
            let (out, da, db) = $vjp(p[0], p[1], s);
            (out, vec![da, db])
        }
    };
}

#[differentiate]
fn piecewise(x: f64, y: f64) -> f64 {
    if x > y { x * y } else { x.sin() + y }
}

#[test]
fn if_expression_both_sides() {
    for (x, y) in [(2.0, 1.0), (0.5, 1.0)] {
        let grad = check_scalar(|p| piecewise(p[0], p[1]), vjp2!(piecewise_vjp), &[x, y]);
        let expected = if x > y { [y, x] } else { [x.cos(), 1.0] };
        assert_close(&grad, &expected);
    }
}

#[differentiate]
fn reflect(x: f64) -> f64 {
    let mut s = x;
    let mut k = 1;
    if x < 0.0 {
        s *= -x;
        k = 2;
    }
    s * k as f64
}

#[test]
fn if_statement_assigns_outer_variables() {
    for x in [-1.5, 0.75] {
        let grad = check_scalar(|p| reflect(p[0]), vjp1!(reflect_vjp), &[x]);
        let expected = if x < 0.0 { -4.0 * x } else { 1.0 };
        assert_close(&grad, &[expected]);
    }
}

#[differentiate]
fn by_case(x: f64, n: i32) -> f64 {
    if n == 0 {
        x
    } else if n == 1 {
        x * x
    } else if n < 0 {
        -x.exp()
    } else {
        x.powi(n)
    }
}

#[test]
fn else_if_chain_every_arm() {
    let x = 1.3;
    for n in [-1, 0, 1, 3] {
        let grad = check_scalar(|p| by_case(p[0], n), vjp1!(by_case_vjp, n), &[x]);
        let expected = match n {
            0 => 1.0,
            1 => 2.0 * x,
            n if n < 0 => -x.exp(),
            n => f64::from(n) * x.powi(n - 1),
        };
        assert_close(&grad, &[expected]);
    }
}

#[differentiate]
fn nested(x: f64, y: f64) -> f64 {
    let z = if x > 0.0 {
        let t = x.sqrt();
        if y > 0.0 { t * y.ln() } else { t - y }
    } else {
        y * y
    };
    z * 2.0
}

#[test]
fn nested_branches_all_paths() {
    for (x, y) in [(4.0, 2.0), (4.0, -2.0), (-1.0, 3.0)] {
        let grad = check_scalar(|p| nested(p[0], p[1]), vjp2!(nested_vjp), &[x, y]);
        let expected = match (x > 0.0, y > 0.0) {
            (true, true) => [y.ln() / x.sqrt(), 2.0 * x.sqrt() / y],
            (true, false) => [1.0 / x.sqrt(), -2.0],
            (false, _) => [0.0, 4.0 * y],
        };
        assert_close(&grad, &expected);
    }
}

#[differentiate]
fn clamp_soft(x: f64, lo: f64, hi: f64) -> f64 {
    let mut y = x;
    if x < lo {
        y = lo + (x - lo).tanh();
    } else if x > hi {
        y = hi + (x - hi).tanh();
    }
    y * y
}

#[test]
fn branch_on_parameters_with_logic() {
    let (lo, hi) = (-1.0, 2.0);
    for x in [-3.0, 0.5, 4.0] {
        let grad = check_scalar(
            |p| clamp_soft(p[0], p[1], p[2]),
            |p, s| {
                let (out, dx, dlo, dhi) = clamp_soft_vjp(p[0], p[1], p[2], s);
                (out, vec![dx, dlo, dhi])
            },
            &[x, lo, hi],
        );
        let y = if x < lo {
            lo + (x - lo).tanh()
        } else if x > hi {
            hi + (x - hi).tanh()
        } else {
            x
        };
        assert_eq!(clamp_soft(x, lo, hi), y * y);
        let expected = if x < lo {
            let t = (x - lo).tanh();
            [2.0 * y * (1.0 - t * t), 2.0 * y * t * t, 0.0]
        } else if x > hi {
            let t = (x - hi).tanh();
            [2.0 * y * (1.0 - t * t), 0.0, 2.0 * y * t * t]
        } else {
            [2.0 * y, 0.0, 0.0]
        };
        assert_close(&grad, &expected);
    }
}

#[differentiate]
fn logic(x: f64, y: f64, flag: bool) -> f64 {
    if (x > 0.0 && y > 0.0) || !flag {
        x * y
    } else {
        x - y
    }
}

#[test]
fn conditions_with_and_or_not() {
    for (x, y, flag) in [(1.0, 2.0, true), (-1.0, 2.0, true), (-1.0, 2.0, false)] {
        let grad = check_scalar(
            |p| logic(p[0], p[1], flag),
            |p, s| {
                let (out, dx, dy) = logic_vjp(p[0], p[1], flag, s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
        let expected = if (x > 0.0 && y > 0.0) || !flag {
            [y, x]
        } else {
            [1.0, -1.0]
        };
        assert_close(&grad, &expected);
    }
}

#[differentiate]
fn one_sided(x: f64, y: f64) -> f64 {
    // `y` only matters on one side: the other side yields a zero adjoint.
    let mut acc = x * 3.0;
    if x > 1.0 {
        acc += y.exp();
    }
    acc
}

#[test]
fn a_branch_that_does_not_touch_an_input() {
    for x in [0.5, 2.0] {
        let y = 0.25;
        let grad = check_scalar(|p| one_sided(p[0], p[1]), vjp2!(one_sided_vjp), &[x, y]);
        let expected = if x > 1.0 { [3.0, y.exp()] } else { [3.0, 0.0] };
        assert_close(&grad, &expected);
    }
}

#[differentiate]
fn by_match(x: f64, n: i32) -> f64 {
    match n {
        0 => x,
        1 | 2 => x * x,
        3..=5 => x.sin(),
        k if k < 0 => -x * f64::from(k),
        _ => x.exp(),
    }
}

#[test]
fn match_every_arm() {
    let x = 0.8;
    for n in [-2, 0, 1, 2, 3, 5, 9] {
        let grad = check_scalar(|p| by_match(p[0], n), vjp1!(by_match_vjp, n), &[x]);
        let expected = match n {
            0 => 1.0,
            1 | 2 => 2.0 * x,
            3..=5 => x.cos(),
            k if k < 0 => -f64::from(k),
            _ => x.exp(),
        };
        assert_close(&grad, &[expected]);
    }
}

#[differentiate]
fn match_bool_statement(x: f64, y: f64, flag: bool) -> f64 {
    let mut acc = x;
    match flag {
        true => acc *= y,
        false => {
            acc += y.cosh();
        }
    }
    acc
}

#[test]
fn match_on_bool_as_a_statement() {
    let (x, y) = (1.5, 0.5);
    for flag in [true, false] {
        let grad = check_scalar(
            |p| match_bool_statement(p[0], p[1], flag),
            |p, s| {
                let (out, dx, dy) = match_bool_statement_vjp(p[0], p[1], flag, s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
        let expected = if flag { [y, x] } else { [1.0, y.sinh()] };
        assert_close(&grad, &expected);
    }
}

/// A branch whose adjoint folds back to the seed (`x = 0.25 - (0.5 - x)`
/// passes `d_x` through twice negated), beside a `break`: the adjoint passes
/// through both branches, and what the branch computed on the way is kept
/// in the expansion rather than left out of it (the macro panicked).
#[differentiate(vjp, jvp)]
fn shifted_until(a: f64, n: usize) -> f64 {
    let mut x = a;
    for _ in 0..n {
        if x > 1.5 {
            break;
        }
        x = 0.5 - x;
        x = 0.25 - x;
    }
    x * x
}

#[test]
fn an_adjoint_passing_through_both_branches_after_a_break() {
    for (a, n) in [(0.3, 4), (1.9, 3), (1.6, 5)] {
        let grad = check_scalar(
            |p| shifted_until(p[0], n),
            |p, seed| {
                let (out, d_a) = shifted_until_vjp(p[0], n, seed);
                (out, vec![d_a])
            },
            &[a],
        );
        // Each step takes 0.25 off until x > 1.5: x = a − 0.25 k, ∂/∂a = 2x.
        let steps = if a > 1.5 { 0 } else { n };
        let x = a - 0.25 * steps as f64;
        assert_close(&grad, &[2.0 * x]);
        let (_, t) = shifted_until_jvp(a, 1.0, n);
        assert_close(&[t], &grad);
    }
}
