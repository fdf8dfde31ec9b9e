//! Numerics at the edges, as documented in `docs/numerics.md`: NaN and infinite
//! inputs, the points where a rule is singular or not differentiable, overflow in
//! intermediates, and the promise that an input that does not reach the output
//! gets exactly zero, whatever the other inputs are.
//!
//! Each function is checked against its closed form, finite differences and the
//! dot-product test at a regular point; at the edges its output and adjoints are
//! compared exactly with the documented values, and with finite differences
//! wherever they are meaningful (central differences at a kink, or in the
//! finite coordinates with the infinite ones held fixed).

use ad_runtime::{check, detach, differentiate, rules};
use ad_tests::{TOL, assert_close, check_scalar};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

/// Asserts that `actual` is `expected`: NaN matches NaN and infinities match by
/// sign; a zero matches a zero of either sign.
#[track_caller]
fn assert_same(actual: &[f64], expected: &[f64]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (index, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            a == e || (a.is_nan() && e.is_nan()),
            "component {index}: {a} is not {e} (all: {actual:?} vs {expected:?})"
        );
    }
}

/// A two-input function and its `_vjp`.
type Binary = fn(f64, f64) -> f64;
type BinaryVjp = fn(f64, f64, f64) -> (f64, f64, f64);

/// The output and the adjoint of a one-input `_vjp` for the seed 1.
fn at(vjp: fn(f64, f64) -> (f64, f64), x: f64) -> [f64; 2] {
    let (out, d_x) = vjp(x, 1.0);
    [out, d_x]
}

/// The output and the adjoints of a two-input `_vjp` for the seed 1.
fn at2(vjp: BinaryVjp, a: f64, b: f64) -> [f64; 3] {
    let (out, d_a, d_b) = vjp(a, b, 1.0);
    [out, d_a, d_b]
}

/// [`check_scalar`] on a one-input function, against its closed-form derivative.
#[track_caller]
fn check_unary(f: fn(f64) -> f64, vjp: fn(f64, f64) -> (f64, f64), x: f64, derivative: f64) {
    let grad = check_scalar(
        |p| f(p[0]),
        |p, s| {
            let (out, d_x) = vjp(p[0], s);
            (out, vec![d_x])
        },
        &[x],
    );
    assert_close(&grad, &[derivative]);
}

/// [`check_scalar`] on a two-input function; returns the gradient.
#[track_caller]
fn check_binary(f: Binary, vjp: BinaryVjp, a: f64, b: f64) -> Vec<f64> {
    check_scalar(
        |p| f(p[0], p[1]),
        |p, s| {
            let (out, d_a, d_b) = vjp(p[0], p[1], s);
            (out, vec![d_a, d_b])
        },
        &[a, b],
    )
}

/// Finite differences and the dot-product test in the finite coordinates of
/// `point`, the infinite ones held fixed (a finite-difference step cannot move an
/// infinite input). Returns the whole gradient.
#[track_caller]
fn check_finite_coordinates(
    f: impl Fn(&[f64]) -> f64,
    vjp: impl Fn(&[f64], f64) -> (f64, Vec<f64>),
    point: &[f64],
) -> Vec<f64> {
    let free: Vec<usize> = (0..point.len())
        .filter(|&i| !point[i].is_infinite())
        .collect();
    let embed = |q: &[f64]| {
        let mut full = point.to_vec();
        for (&i, &qi) in free.iter().zip(q) {
            full[i] = qi;
        }
        full
    };
    let sub: Vec<f64> = free.iter().map(|&i| point[i]).collect();
    check_scalar(
        |q| f(&embed(q)),
        |q, s| {
            let (out, grad) = vjp(&embed(q), s);
            (out, free.iter().map(|&i| grad[i]).collect())
        },
        &sub,
    );
    vjp(point, 1.0).1
}

// One-input functions: each is one primitive.

/// `eˣ`.
#[differentiate]
fn exp_of(x: f64) -> f64 {
    x.exp()
}

/// `tanh x`.
#[differentiate]
fn tanh_of(x: f64) -> f64 {
    x.tanh()
}

/// `atan x`.
#[differentiate]
fn atan_of(x: f64) -> f64 {
    x.atan()
}

/// `√x`.
#[differentiate]
fn sqrt_of(x: f64) -> f64 {
    x.sqrt()
}

/// `1 / x`.
#[differentiate]
fn recip_of(x: f64) -> f64 {
    x.recip()
}

/// `ln x`.
#[differentiate]
fn ln_of(x: f64) -> f64 {
    x.ln()
}

/// `|x|`.
#[differentiate]
fn abs_of(x: f64) -> f64 {
    x.abs()
}

/// `sin x`.
#[differentiate]
fn sin_of(x: f64) -> f64 {
    x.sin()
}

/// `x²` as a product: the adjoint is `d x + d x`.
#[differentiate]
fn square(x: f64) -> f64 {
    x * x
}

/// `x - x`, that is `0` for every real `x`: the adjoint is `d - d`.
#[differentiate]
fn self_difference(x: f64) -> f64 {
    let y = x;
    x - y
}

/// `xⁿ` with an integer exponent.
#[differentiate]
fn powi_of(x: f64, n: i32) -> f64 {
    x.powi(n)
}

#[test]
fn one_input_primitives_at_regular_points() {
    let x: f64 = 0.7;
    check_unary(exp_of, exp_of_vjp, x, x.exp());
    check_unary(tanh_of, tanh_of_vjp, x, 1.0 - x.tanh().powi(2));
    check_unary(atan_of, atan_of_vjp, x, 1.0 / (1.0 + x * x));
    check_unary(sqrt_of, sqrt_of_vjp, x, 0.5 / x.sqrt());
    check_unary(recip_of, recip_of_vjp, x, -1.0 / (x * x));
    check_unary(ln_of, ln_of_vjp, x, 1.0 / x);
    check_unary(abs_of, abs_of_vjp, -x, -1.0);
    check_unary(sin_of, sin_of_vjp, x, x.cos());
    check_unary(square, square_vjp, x, 2.0 * x);
    check_unary(self_difference, self_difference_vjp, x, 0.0);
    for n in [-2, 0, 3] {
        let grad = check_scalar(
            |p| powi_of(p[0], n),
            |p, s| {
                let (out, d_x) = powi_of_vjp(p[0], n, s);
                (out, vec![d_x])
            },
            &[x],
        );
        assert_close(&grad, &[f64::from(n) * x.powi(n - 1)]);
    }
}

#[test]
fn nan_input_gives_nan_output_and_nan_adjoint() {
    for (vjp, name) in [
        (exp_of_vjp as fn(f64, f64) -> (f64, f64), "exp"),
        (tanh_of_vjp, "tanh"),
        (atan_of_vjp, "atan"),
        (sqrt_of_vjp, "sqrt"),
        (recip_of_vjp, "recip"),
        (ln_of_vjp, "ln"),
        (abs_of_vjp, "abs"),
        (sin_of_vjp, "sin"),
        (square_vjp, "square"),
    ] {
        let [out, d_x] = at(vjp, NAN);
        assert!(out.is_nan() && d_x.is_nan(), "{name}: {out}, {d_x}");
    }
    // `x - x` reads no primal value in its adjoint: `d - d` is 0 even for NaN.
    assert_same(&at(self_difference_vjp, NAN), &[NAN, 0.0]);
}

#[test]
fn infinite_inputs_follow_ieee() {
    // The adjoints are the derivative's formula evaluated in IEEE arithmetic: where
    // it is the limit of the derivative, it is that limit.
    assert_same(&at(exp_of_vjp, -INF), &[0.0, 0.0]);
    assert_same(&at(exp_of_vjp, INF), &[INF, INF]);
    assert_same(&at(tanh_of_vjp, INF), &[1.0, 0.0]);
    assert_same(&at(tanh_of_vjp, -INF), &[-1.0, 0.0]);
    assert_same(&at(atan_of_vjp, INF), &[std::f64::consts::FRAC_PI_2, 0.0]);
    assert_same(&at(sqrt_of_vjp, INF), &[INF, 0.0]);
    assert_same(&at(recip_of_vjp, INF), &[0.0, 0.0]);
    assert_same(&at(recip_of_vjp, -INF), &[0.0, 0.0]);
    assert_same(&at(ln_of_vjp, INF), &[INF, 0.0]);
    assert_same(&at(abs_of_vjp, -INF), &[INF, -1.0]);
    assert_same(&at(square_vjp, INF), &[INF, INF]);
    assert_same(&at(square_vjp, -INF), &[INF, -INF]);
    // No limit: `sin ∞` is NaN, and so is its adjoint `cos ∞`.
    assert_same(&at(sin_of_vjp, INF), &[NAN, NAN]);
    // `∞ - ∞` is NaN, but the adjoint `d - d` does not read `x`.
    assert_same(&at(self_difference_vjp, INF), &[NAN, 0.0]);
}

#[test]
fn singular_points_of_one_input_rules() {
    // sqrt at 0: the slope is infinite (IEEE `dy / (2 · 0)`); at -0.0, where
    // `sqrt(-0.0) == -0.0`, the same formula gives -∞.
    assert_same(&at(sqrt_of_vjp, 0.0), &[0.0, INF]);
    assert_same(&at(sqrt_of_vjp, -0.0), &[0.0, -INF]);
    // ln at 0: the output is -∞ and the adjoint `dy / x` is ±∞ with the sign of the zero.
    assert_same(&at(ln_of_vjp, 0.0), &[-INF, INF]);
    assert_same(&at(ln_of_vjp, -0.0), &[-INF, -INF]);
    // recip at 0.
    assert_same(&at(recip_of_vjp, 0.0), &[INF, -INF]);
    // Outside the domain the output is NaN; the adjoint is the rule's formula,
    // NaN for sqrt (`dy / (2 · NaN)`) but finite for ln (`dy / x`).
    assert_same(&at(sqrt_of_vjp, -1.0), &[NAN, NAN]);
    assert_same(&at(ln_of_vjp, -1.0), &[NAN, -1.0]);
    // powi: `x⁰` is constant even at 0; a negative power at 0 is IEEE.
    let (out, d_x) = powi_of_vjp(0.0, 0, 1.0);
    assert_same(&[out, d_x], &[1.0, 0.0]);
    let (out, d_x) = powi_of_vjp(0.0, -1, 1.0);
    assert_same(&[out, d_x], &[INF, -INF]);
    let (out, d_x) = powi_of_vjp(0.0, 1, 1.0);
    assert_same(&[out, d_x], &[0.0, 1.0]);
}

#[test]
fn zero_seed_gives_zero_at_singular_points() {
    for (vjp, x) in [
        (sqrt_of_vjp as fn(f64, f64) -> (f64, f64), 0.0),
        (sqrt_of_vjp, -0.0),
        (ln_of_vjp, 0.0),
        (recip_of_vjp, 0.0),
        (abs_of_vjp, 0.0),
        (sqrt_of_vjp, -1.0),
        (ln_of_vjp, -1.0),
    ] {
        let (_, d_x) = vjp(x, 0.0);
        assert_same(&[d_x], &[0.0]);
    }
    let (_, d_x) = powi_of_vjp(0.0, -1, 0.0);
    assert_same(&[d_x], &[0.0]);
    for (a, b) in [
        (0.0, 0.5),
        (0.0, 0.0),
        (0.0, -1.0),
        (-2.0, 2.0),
        (-2.0, 0.5),
    ] {
        let (_, d_a, d_b) = power_vjp(a, b, 0.0);
        assert_same(&[d_a, d_b], &[0.0, 0.0]);
    }
    for vjp in [angle_vjp as BinaryVjp, radius_vjp, smaller_vjp, larger_vjp] {
        let (_, d_a, d_b) = vjp(0.0, 0.0, 0.0);
        assert_same(&[d_a, d_b], &[0.0, 0.0]);
    }
}

#[test]
fn abs_at_zero_is_zero_as_central_differences_say() {
    // The convention `0` is the symmetric derivative: central differences agree.
    check_unary(abs_of, abs_of_vjp, 0.0, 0.0);
    check_unary(abs_of, abs_of_vjp, -0.0, 0.0);
}

// Two-input primitives.

/// `min(a, b)`.
#[differentiate]
fn smaller(a: f64, b: f64) -> f64 {
    a.min(b)
}

/// `max(a, b)`.
#[differentiate]
fn larger(a: f64, b: f64) -> f64 {
    a.max(b)
}

/// `max(max(x, y), z)`: the split of a tie follows the nesting.
#[differentiate]
fn largest(x: f64, y: f64, z: f64) -> f64 {
    x.max(y).max(z)
}

/// `aᵇ`.
#[differentiate]
fn power(a: f64, b: f64) -> f64 {
    a.powf(b)
}

/// `x²` through `powf` with a constant exponent.
#[differentiate]
fn square_by_powf(x: f64) -> f64 {
    x.powf(2.0)
}

/// `aᵇ` differentiated in the base only.
#[differentiate(wrt(a))]
fn power_in_base(a: f64, b: f64) -> f64 {
    a.powf(b)
}

/// `atan2(a, b)`, the angle of the point `(b, a)`.
#[differentiate]
fn angle(a: f64, b: f64) -> f64 {
    a.atan2(b)
}

/// `√(a² + b²)`.
#[differentiate]
fn radius(a: f64, b: f64) -> f64 {
    a.hypot(b)
}

#[test]
fn two_input_primitives_at_regular_points() {
    let (a, b): (f64, f64) = (1.5, 0.5);
    assert_close(&check_binary(smaller, smaller_vjp, a, b), &[0.0, 1.0]);
    assert_close(&check_binary(larger, larger_vjp, a, b), &[1.0, 0.0]);
    let grad = check_binary(power, power_vjp, a, b);
    assert_close(&grad, &[b * a.powf(b - 1.0), a.powf(b) * a.ln()]);
    let r2 = a * a + b * b;
    assert_close(&check_binary(angle, angle_vjp, a, b), &[b / r2, -a / r2]);
    let r = r2.sqrt();
    assert_close(&check_binary(radius, radius_vjp, a, b), &[a / r, b / r]);
    let grad = check_scalar(
        |p| largest(p[0], p[1], p[2]),
        |p, s| {
            let (out, d_x, d_y, d_z) = largest_vjp(p[0], p[1], p[2], s);
            (out, vec![d_x, d_y, d_z])
        },
        &[0.5, 2.0, -1.0],
    );
    assert_close(&grad, &[0.0, 1.0, 0.0]);
}

#[test]
fn ties_in_min_and_max_split_the_seed() {
    for (a, b) in [(1.5, 1.5), (0.0, -0.0), (-0.0, 0.0)] {
        let (out, d_a, d_b) = smaller_vjp(a, b, 2.0);
        assert_same(&[out, d_a, d_b], &[a.min(b), 1.0, 1.0]);
        let (out, d_a, d_b) = larger_vjp(a, b, 2.0);
        assert_same(&[out, d_a, d_b], &[a.max(b), 1.0, 1.0]);
    }
    // Half each is the symmetric derivative of a two-way tie: central differences
    // and the dot-product test agree.
    assert_close(&check_binary(smaller, smaller_vjp, 1.5, 1.5), &[0.5, 0.5]);
    assert_close(&check_binary(larger, larger_vjp, 1.5, 1.5), &[0.5, 0.5]);
    // A three-way tie through nested `max` splits by the nesting: the inner tie
    // shares the half the outer one gave it. (Central differences give 1/2 in
    // each coordinate, so they are not compared here.)
    let (out, d_x, d_y, d_z) = largest_vjp(1.0, 1.0, 1.0, 1.0);
    assert_same(&[out, d_x, d_y, d_z], &[1.0, 0.25, 0.25, 0.5]);
}

#[test]
fn min_and_max_give_a_nan_input_nothing() {
    // `f64::min` and `max` return the other input, which gets the whole seed.
    let grad = check_binary(smaller, smaller_vjp, 0.5, NAN);
    assert_same(&grad, &[1.0, 0.0]);
    let grad = check_binary(larger, larger_vjp, NAN, 0.5);
    assert_same(&grad, &[0.0, 1.0]);
    // Both NaN: a tie.
    assert_same(&at2(smaller_vjp, NAN, NAN), &[NAN, 0.5, 0.5]);
}

#[test]
fn min_and_max_give_an_infinite_loser_nothing() {
    let grad = check_finite_coordinates(
        |p| smaller(p[0], p[1]),
        |p, s| {
            let (out, d_a, d_b) = smaller_vjp(p[0], p[1], s);
            (out, vec![d_a, d_b])
        },
        &[0.5, INF],
    );
    assert_same(&grad, &[1.0, 0.0]);
    let grad = check_finite_coordinates(
        |p| larger(p[0], p[1]),
        |p, s| {
            let (out, d_a, d_b) = larger_vjp(p[0], p[1], s);
            (out, vec![d_a, d_b])
        },
        &[-INF, 0.5],
    );
    assert_same(&grad, &[0.0, 1.0]);
    // An infinite winner gets the seed.
    assert_same(&at2(larger_vjp, INF, 0.5), &[INF, 1.0, 0.0]);
}

#[test]
fn powf_at_zero_and_negative_bases() {
    // `0^b` with `b > 1` is flat: both adjoints 0, as partial central differences say.
    assert_same(&at2(power_vjp, 0.0, 2.0), &[0.0, 0.0, 0.0]);
    check::gradient(
        |p| power(p[0], p[1]),
        |p| {
            let (_, d_a, d_b) = power_vjp(p[0], p[1], 1.0);
            vec![d_a, d_b]
        },
        &[0.0, 2.0],
    )
    .assert_within(TOL);
    // `0^1`: slope 1 in the base; the exponent adjoint is 0, not `0 · ln 0`.
    assert_same(&at2(power_vjp, 0.0, 1.0), &[0.0, 1.0, 0.0]);
    // `0^0.5` is `√0`: infinite slope in the base.
    assert_same(&at2(power_vjp, 0.0, 0.5), &[0.0, INF, 0.0]);
    // `0^0 == 1`: the base adjoint is 0 by convention; the exponent adjoint is
    // `1 · ln 0 = -∞` (`0^b` jumps from ∞ to 0 across `b = 0`).
    assert_same(&at2(power_vjp, 0.0, 0.0), &[1.0, 0.0, -INF]);
    // A negative base: `aᵇ` is not differentiable in `b`, the exponent adjoint is NaN.
    assert_same(&at2(power_vjp, -2.0, 2.0), &[4.0, -4.0, NAN]);
    assert_same(&at2(power_vjp, -2.0, 0.5), &[NAN, NAN, NAN]);
}

#[test]
fn powf_with_a_constant_exponent_has_no_nan_from_the_exponent() {
    // The exponent's NaN adjoint at a negative base is dropped when the exponent
    // is a constant, or is not differentiated.
    check_unary(square_by_powf, square_by_powf_vjp, -3.0, -6.0);
    let grad = check_scalar(
        |p| power_in_base(p[0], 3.0),
        |p, s| {
            let (out, d_a) = power_in_base_vjp(p[0], 3.0, s);
            (out, vec![d_a])
        },
        &[-2.0],
    );
    assert_close(&grad, &[12.0]);
}

#[test]
fn atan2_and_hypot_at_the_origin() {
    assert_same(&at2(angle_vjp, 0.0, 0.0), &[0.0, 0.0, 0.0]);
    assert_same(
        &at2(angle_vjp, 0.0, -0.0),
        &[std::f64::consts::PI, 0.0, 0.0],
    );
    // `hypot` is a cone at the origin: `(0, 0)` is its symmetric derivative, and
    // central differences and the dot-product test agree.
    assert_same(&check_binary(radius, radius_vjp, 0.0, 0.0), &[0.0, 0.0]);
}

#[test]
fn atan2_and_hypot_at_infinity() {
    // The rules divide by the radius: with an infinite input, `∞ / ∞` is NaN where
    // the limit of the derivative is 1 (hypot) or 0 (atan2).
    assert_same(&at2(radius_vjp, INF, 1.0), &[INF, NAN, 0.0]);
    assert_same(
        &at2(angle_vjp, INF, 1.0),
        &[std::f64::consts::FRAC_PI_2, 0.0, NAN],
    );
}

// Overflow in intermediates.

/// `x · 10³⁰⁰ · 10³⁰⁰`: overflows for `|x| > 1.8e-292`.
#[differentiate]
fn blow_up(x: f64) -> f64 {
    x * 1e300 * 1e300
}

/// `min(x · 10⁶⁰⁰, x)`: `x` for `x > 0`, where the product overflows and loses.
#[differentiate]
fn overflowed_loser(x: f64) -> f64 {
    (x * 1e300 * 1e300).min(x)
}

/// `min(x³, x)`: `x` for `x > 1`; `x³` overflows for `x > 5.6e102`.
#[differentiate]
fn overflowed_cube_loser(x: f64) -> f64 {
    (x * x * x).min(x)
}

#[test]
fn overflow_to_infinity() {
    // The derivative 10⁶⁰⁰ is not a finite `f64`: ∞ is its correctly rounded value,
    // at every point, also where the output is finite or zero. (No finite
    // differences: any step overflows the output.)
    for x in [1.0, -1.0, 1e-300, 0.0] {
        let [out, d_x] = at(blow_up_vjp, x);
        assert_same(&[out, d_x], &[blow_up(x), INF]);
    }
    assert!(blow_up(1e-300).is_finite());
    assert_same(&[blow_up_vjp(1.0, -2.0).1], &[-INF]);
    // `eˣ` overflows for `x > 709.78`, and so does its derivative.
    assert_same(&at(exp_of_vjp, 1000.0), &[INF, INF]);
}

#[test]
fn an_overflowed_loser_with_finite_partials_gets_nothing() {
    // The loser's adjoint is 0, and `0 · 1e300` is 0: the gradient is exactly 1.
    check_unary(overflowed_loser, overflowed_loser_vjp, 1.0, 1.0);
    check_unary(overflowed_loser, overflowed_loser_vjp, 1e200, 1.0);
}

#[test]
fn an_overflowed_factor_times_a_zero_adjoint_gives_zero() {
    // `x³ = (x · x) · x` overflows at `x = 1e200` and loses the `min`, so its
    // adjoint is 0; the adjoint of the product `t · x` is then `0 · t` with
    // `t = x · x = ∞`. The `min` marks that 0 as standing for "no dependence",
    // and the product's pullback is `__ad::scale(0, ∞) = 0`, not NaN: the
    // gradient is exactly 1, as central differences say.
    let x = 1e200;
    let (out, d_x) = overflowed_cube_loser_vjp(x, 1.0);
    assert_eq!(out, x);
    assert_eq!(d_x, 1.0);
    let fd = check::gradient(|p| overflowed_cube_loser(p[0]), |_| vec![1.0], &[x]);
    fd.assert_within(TOL);
    // Below the overflow, it is exact too.
    check_unary(overflowed_cube_loser, overflowed_cube_loser_vjp, 1e100, 1.0);
}

/// `signum(x y) + x`: `x` plus a step, so `∂f/∂x = 1` and `∂f/∂y = 0` wherever
/// `x y ≠ 0`.
#[differentiate]
fn sign_of_product_plus(x: f64, y: f64) -> f64 {
    (x * y).signum() + x
}

#[test]
fn a_zero_adjoint_from_signum_meets_an_infinite_input() {
    assert_close(
        &check_binary(sign_of_product_plus, sign_of_product_plus_vjp, 0.5, 2.0),
        &[1.0, 0.0],
    );
    // `signum` gives `x y` the adjoint 0, marked as standing for "no
    // dependence", so the product's pullback `__ad::scale(0, ∞)` is 0, not NaN:
    // finite differences in `x` (with `y = ∞` held) say 1.
    assert_same(&at2(sign_of_product_plus_vjp, 0.5, INF), &[1.5, 1.0, 0.0]);
    check::gradient(|p| sign_of_product_plus(p[0], INF), |_| vec![1.0], &[0.5]).assert_within(TOL);
}

/// The logistic function, written the textbook way.
#[differentiate]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `min(eˣ, x)`: `x` wherever `eˣ > x`, that is everywhere.
#[differentiate]
fn exp_loser(x: f64) -> f64 {
    x.exp().min(x)
}

/// `min(sinh x, x)` for `x > 0`: `x`.
#[differentiate]
fn sinh_loser(x: f64) -> f64 {
    x.sinh().min(x)
}

#[test]
fn sigmoid_at_regular_points_and_where_exp_does_not_overflow() {
    for x in [-3.0, 0.5, 1000.0] {
        let s = sigmoid(x);
        check_unary(sigmoid, sigmoid_vjp, x, s * (1.0 - s));
    }
    check_unary(exp_loser, exp_loser_vjp, 1.5, 1.0);
    check_unary(sinh_loser, sinh_loser_vjp, 1.5, 1.0);
}

/// The rules promise that a zero seed gives exactly zero adjoints
/// (`docs/supported.md`), so that `0 · ∞` never turns into NaN. Here the adjoint
/// reaching `exp` (or `sinh`) is exactly 0, but the primal output of the rule
/// has overflowed to ∞; a branch-free rule `dy · y` would give `0 · ∞ = NaN`.
/// The exact gradients are finite, and finite differences find them. (This
/// failed until the `exp` family tested for a zero seed.) Every case is
/// evaluated, and the failing ones are listed together.
#[test]
fn zero_adjoint_into_an_overflowed_exp_gives_zero() {
    let mut failures = Vec::new();
    let mut expect = |what: &str, actual: f64, expected: f64| {
        if actual != expected {
            failures.push(format!("{what}: {actual}, expected {expected}"));
        }
    };
    // σ'(-1000) = e⁻¹⁰⁰⁰ / (1 + e⁻¹⁰⁰⁰)², which rounds to 0: `(-x).exp()` is ∞,
    // `1 / ∞` is 0, so the adjoint reaching `exp` is exactly 0.
    expect("sigmoid'(-1000)", sigmoid_vjp(-1000.0, 1.0).1, 0.0);
    // The overflowed `eˣ` (`sinh x`) loses the `min`: the gradient is exactly 1.
    expect(
        "d/dx min(exp x, x) at 1000",
        exp_loser_vjp(1000.0, 1.0).1,
        1.0,
    );
    expect(
        "d/dx min(sinh x, x) at 1000",
        sinh_loser_vjp(1000.0, 1.0).1,
        1.0,
    );
    // With the seed 0, every adjoint is 0.
    expect("exp at 1000, seed 0", exp_of_vjp(1000.0, 0.0).1, 0.0);
    // The rules themselves, at an overflowed output with a zero seed.
    expect("rules::exp", rules::exp(1000.0, INF, 0.0), 0.0);
    expect("rules::exp2", rules::exp2(2000.0, INF, 0.0), 0.0);
    expect("rules::exp_m1", rules::exp_m1(1000.0, INF, 0.0), 0.0);
    expect("rules::sinh", rules::sinh(1000.0, INF, 0.0), 0.0);
    expect("rules::cosh", rules::cosh(1000.0, INF, 0.0), 0.0);
    // Finite differences agree with the exact values above.
    let zero = |_: &[f64]| vec![0.0];
    let one = |_: &[f64]| vec![1.0];
    check::gradient(|p| sigmoid(p[0]), zero, &[-1000.0]).assert_within(TOL);
    check::gradient(|p| exp_loser(p[0]), one, &[1000.0]).assert_within(TOL);
    check::gradient(|p| sinh_loser(p[0]), one, &[1000.0]).assert_within(TOL);
    assert!(
        failures.is_empty(),
        "NaN where the exact adjoint is finite:\n{}",
        failures.join("\n")
    );
}

// Inputs that do not reach the output get exactly zero.

/// `eˣ`, with a product of `x` and `y` computed and dropped.
#[differentiate]
fn unused_beside(x: f64, y: f64) -> f64 {
    let _ = x * y;
    x.exp()
}

/// `x + detach(x y)`: `y` reaches the output only through `detach`.
#[differentiate]
fn plus_detached(x: f64, y: f64) -> f64 {
    x + detach(x * y)
}

/// `x · detach(y)`.
#[differentiate]
fn times_detached(x: f64, y: f64) -> f64 {
    x * detach(y)
}

/// `√x` for `x > 0`, `x y` otherwise.
#[differentiate]
fn branch_not_taken(x: f64, y: f64) -> f64 {
    if x > 0.0 { x.sqrt() } else { x * y }
}

/// `x²` if `x > y`, else `-x`: `y` is only compared.
#[differentiate]
fn compared(x: f64, y: f64) -> f64 {
    if x > y { x * x } else { -x }
}

/// `x + 0 · y`: `x` for every real `y`.
#[differentiate]
fn zero_weight(x: f64, y: f64) -> f64 {
    let w = 0.0;
    x + w * y
}

/// `min(x, 2 y)`.
#[differentiate]
fn smaller_than_double(x: f64, y: f64) -> f64 {
    x.min(y * 2.0)
}

/// `x yⁿ`, by a loop of `n` trips.
#[differentiate]
fn times_power(x: f64, y: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        s *= y;
    }
    s
}

#[test]
fn regular_points_of_the_reachability_functions() {
    let (x, y): (f64, f64) = (0.8, 1.7);
    assert_close(
        &check_binary(unused_beside, unused_beside_vjp, x, y),
        &[x.exp(), 0.0],
    );
    assert_close(
        &check_binary(zero_weight, zero_weight_vjp, x, y),
        &[1.0, 0.0],
    );
    assert_close(
        &check_binary(branch_not_taken, branch_not_taken_vjp, x, y),
        &[0.5 / x.sqrt(), 0.0],
    );
    assert_close(
        &check_binary(branch_not_taken, branch_not_taken_vjp, -x, y),
        &[y, -x],
    );
    assert_close(&check_binary(compared, compared_vjp, y, x), &[2.0 * y, 0.0]);
    assert_close(&check_binary(compared, compared_vjp, x, y), &[-1.0, 0.0]);
    assert_close(
        &check_binary(smaller_than_double, smaller_than_double_vjp, x, y),
        &[1.0, 0.0],
    );
    assert_close(
        &check_binary(smaller_than_double, smaller_than_double_vjp, y, x),
        &[0.0, 2.0],
    );
    for n in [0_usize, 3] {
        let grad = check_scalar(
            |p| times_power(p[0], p[1], n),
            |p, s| {
                let (out, d_x, d_y) = times_power_vjp(p[0], p[1], n, s);
                (out, vec![d_x, d_y])
            },
            &[x, y],
        );
        let k = i32::try_from(n).unwrap();
        let d_y = if n == 0 {
            0.0
        } else {
            f64::from(k) * x * y.powi(k - 1)
        };
        assert_close(&grad, &[y.powi(k), d_y]);
    }
    // `detach` holds `x y` fixed: the linearisation is `x ↦ x + const`, `y ↦ const`.
    let (out, d_x, d_y) = plus_detached_vjp(x, y, 1.0);
    assert_eq!(out, plus_detached(x, y));
    assert_same(&[d_x, d_y], &[1.0, 0.0]);
    let held = x * y;
    check::dot_product(
        |p| vec![p[0] + held],
        |p, v| {
            let (_, d_x, d_y) = plus_detached_vjp(p[0], p[1], v[0]);
            vec![d_x, d_y]
        },
        &[x, y],
    )
    .assert_within(TOL);
    let (out, d_x, d_y) = times_detached_vjp(x, y, 1.0);
    assert_eq!(out, times_detached(x, y));
    assert_same(&[d_x, d_y], &[y, 0.0]);
    check::dot_product(
        |p| vec![p[0] * y],
        |p, v| {
            let (_, d_x, d_y) = times_detached_vjp(p[0], p[1], v[0]);
            vec![d_x, d_y]
        },
        &[x, y],
    )
    .assert_within(TOL);
}

#[test]
fn an_input_that_does_not_reach_the_output_gets_zero_beside_nan_and_infinity() {
    for y in [INF, -INF, NAN] {
        // Unused: the dropped product `x · y` does not feed `d_x`.
        assert_same(
            &at2(unused_beside_vjp, 0.5, y),
            &[0.5_f64.exp(), 0.5_f64.exp(), 0.0],
        );
        // Only through `detach`.
        let [out, d_x, d_y] = at2(plus_detached_vjp, 0.5, y);
        assert_same(&[out, d_x, d_y], &[0.5 + detach(0.5 * y), 1.0, 0.0]);
        // `x · detach(y)`: `d_x` is `y`, infinite or NaN as `y` is; `d_y` is 0.
        assert_same(&at2(times_detached_vjp, 0.5, y), &[0.5 * y, y, 0.0]);
        // Only in the branch not taken.
        assert_same(&at2(branch_not_taken_vjp, 4.0, y), &[2.0, 0.25, 0.0]);
        // Through a constant zero weight: the output is NaN (`0 · ∞`), but the
        // adjoints are those of `x + 0 · y`, `(1, 0)`.
        assert_same(&at2(zero_weight_vjp, 0.5, y), &[0.5 + 0.0 * y, 1.0, 0.0]);
        // In a loop that runs no trips.
        let (out, d_x, d_y) = times_power_vjp(0.5, y, 0, 1.0);
        assert_same(&[out, d_x, d_y], &[0.5, 1.0, 0.0]);
    }
    // Only in a comparison: `-∞` makes `x > y` true, `∞` and NaN make it false.
    assert_same(&at2(compared_vjp, 0.5, -INF), &[0.25, 1.0, 0.0]);
    assert_same(&at2(compared_vjp, 0.5, NAN), &[-0.5, -1.0, 0.0]);
    assert_same(&at2(compared_vjp, 0.5, INF), &[-0.5, -1.0, 0.0]);
}

#[test]
fn reachability_against_finite_differences() {
    // Where the output is finite, finite differences in the finite inputs (NaN
    // inputs included: a step leaves them NaN) agree with the adjoints.
    let functions: [(Binary, BinaryVjp); 4] = [
        (unused_beside, unused_beside_vjp),
        (branch_not_taken, branch_not_taken_vjp),
        (compared, compared_vjp),
        (smaller_than_double, smaller_than_double_vjp),
    ];
    for (f, vjp) in functions {
        for y in [INF, -INF, NAN] {
            if !f(4.0, y).is_finite() {
                // `min(4, 2 · -∞)`: `y` is the winner, and the output is not finite.
                continue;
            }
            let grad = check_finite_coordinates(
                |p| f(p[0], p[1]),
                |p, s| {
                    let (out, d_x, d_y) = vjp(p[0], p[1], s);
                    (out, vec![d_x, d_y])
                },
                &[4.0, y],
            );
            assert_eq!(grad[1], 0.0, "y = {y}");
        }
    }
}

/// The sum of the squares of the even-indexed elements.
#[differentiate]
fn even_squares(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in (0..xs.len()).step_by(2) {
        s += xs[i] * xs[i];
    }
    s
}

/// `xs₀ xs₂` if `xs₁ > 0`, else `xs₀`: `xs₁` is only compared.
#[differentiate]
fn element_in_a_condition(xs: &[f64]) -> f64 {
    let first = xs[0];
    if xs[1] > 0.0 { first * xs[2] } else { first }
}

#[test]
fn buffer_elements_not_read_get_zero() {
    let vjp = |p: &[f64], s: f64| {
        let mut d = vec![0.0; p.len()];
        let out = even_squares_vjp(p, &mut d, s);
        (out, d)
    };
    let grad = check_scalar(even_squares, vjp, &[1.0, -2.0, 0.5, 3.0, -1.5]);
    assert_close(&grad, &[2.0, 0.0, 1.0, 0.0, -3.0]);
    for odd in [INF, -INF, NAN] {
        let xs = [1.0, odd, 0.5, odd, -1.5];
        let grad = check_finite_coordinates(even_squares, vjp, &xs);
        assert_same(&grad, &[2.0, 0.0, 1.0, 0.0, -3.0]);
    }

    let vjp = |p: &[f64], s: f64| {
        let mut d = vec![0.0; p.len()];
        let out = element_in_a_condition_vjp(p, &mut d, s);
        (out, d)
    };
    let grad = check_scalar(element_in_a_condition, vjp, &[1.5, 1.0, -2.0]);
    assert_close(&grad, &[-2.0, 0.0, 1.5]);
    for middle in [INF, -INF, NAN] {
        let xs = [1.5, middle, -2.0];
        let grad = check_finite_coordinates(element_in_a_condition, vjp, &xs);
        let expected = if middle > 0.0 {
            [-2.0, 0.0, 1.5]
        } else {
            [1.0, 0.0, 0.0]
        };
        assert_same(&grad, &expected);
    }
}

#[test]
fn nan_input_adjoints_read_the_nan() {
    // `f = x y + y`: `d_x = y` reads only `y`, `d_y = x + 1` reads only `x`, so a
    // NaN in one input leaves the other's adjoint finite. The output is NaN.
    let (out, d_x, d_y) = product_plus_vjp(NAN, 2.0, 1.0);
    assert!(out.is_nan());
    assert_same(&[d_x, d_y], &[2.0, NAN]);
    let (out, d_x, d_y) = product_plus_vjp(3.0, NAN, 1.0);
    assert!(out.is_nan());
    assert_same(&[d_x, d_y], &[NAN, 4.0]);
    assert_close(
        &check_binary(product_plus, product_plus_vjp, 3.0, 2.0),
        &[2.0, 4.0],
    );
    // A NaN discarded by `max` after a rule that reads it: `max` gives the NaN
    // branch an adjoint of 0, but the `sin` rule multiplies it by `cos(NaN)`.
    let (out, d_x, d_y) = sin_or_vjp(NAN, 0.5, 1.0);
    assert_same(&[out, d_x, d_y], &[0.5, NAN, 1.0]);
    let grad = check_binary(sin_or, sin_or_vjp, 0.3, 0.9);
    assert_close(&grad, &[0.0, 1.0]);
}

/// `x y + y`.
#[differentiate]
fn product_plus(x: f64, y: f64) -> f64 {
    x * y + y
}

/// `max(sin x, y)`.
#[differentiate]
fn sin_or(x: f64, y: f64) -> f64 {
    x.sin().max(y)
}

/// A product computed but not used on the branch taken: `x · y` with `y = ∞`.
#[differentiate]
fn product_on_the_branch_not_taken(x: f64, y: f64, take: bool) -> f64 {
    let z = x * y;
    if take { z } else { x }
}

/// A product added by a loop that runs `n` times.
#[differentiate]
fn product_in_a_loop_run_n_times(x: f64, y: f64, n: usize) -> f64 {
    let z = x * y;
    let mut s = x;
    for _ in 0..n {
        s += z;
    }
    s
}

#[test]
fn an_unused_product_with_an_infinite_partner_gives_no_nan() {
    // Not taken: the output is `x`, so d_x = 1 and d_y = 0, exactly, though
    // the adjoint of `z` (0) meets `y = ∞` in the product's pullback.
    let (out, d_x, d_y) = product_on_the_branch_not_taken_vjp(0.5, INF, false, 1.0);
    assert_same(&[out, d_x, d_y], &[0.5, 1.0, 0.0]);
    assert_close(
        &check_binary(
            |x, y| product_on_the_branch_not_taken(x, y, false),
            |x, y, s| product_on_the_branch_not_taken_vjp(x, y, false, s),
            0.5,
            2.0,
        ),
        &[1.0, 0.0],
    );
    assert_close(
        &check_binary(
            |x, y| product_on_the_branch_not_taken(x, y, true),
            |x, y, s| product_on_the_branch_not_taken_vjp(x, y, true, s),
            0.5,
            2.0,
        ),
        &[2.0, 0.5],
    );
    // No trip: the output is `x`.
    let (out, d_x, d_y) = product_in_a_loop_run_n_times_vjp(0.5, INF, 0, 1.0);
    assert_same(&[out, d_x, d_y], &[0.5, 1.0, 0.0]);
    for n in [0_u32, 3] {
        let grad = check_scalar(
            |p| product_in_a_loop_run_n_times(p[0], p[1], n as usize),
            |p, s| {
                let (out, d_x, d_y) = product_in_a_loop_run_n_times_vjp(p[0], p[1], n as usize, s);
                (out, vec![d_x, d_y])
            },
            &[0.5, 2.0],
        );
        assert_close(&grad, &[1.0 + 2.0 * f64::from(n), 0.5 * f64::from(n)]);
    }
}

/// A running minimum and a clipped sum in a loop: the loop saves the running
/// minimum for `min`'s pullback, which must split the seed on a tie.
#[differentiate]
#[allow(clippy::needless_range_loop)]
fn running_min_and_relu(x: &[f64]) -> f64 {
    let mut m = x[0];
    let mut s = 0.0;
    for i in 1..x.len() {
        m = m.min(x[i]);
        s += (x[i] * m).max(0.0);
    }
    s + m
}

#[test]
fn max_and_min_in_a_loop_split_ties_and_clip() {
    let grad_at = |x: &[f64], seed: f64| {
        let mut d_x = vec![0.0; x.len()];
        let out = running_min_and_relu_vjp(x, &mut d_x, seed);
        (out, d_x)
    };
    // Away from ties and kinks: finite differences and the dot-product test.
    let x = [0.8, 1.3, -0.4, 2.0, -0.9, 0.5];
    check_scalar(running_min_and_relu, grad_at, &x);
    // A tie in the running minimum (x[2] == x[0]) splits the seed in halves,
    // and a negative product is clipped to 0 by `max`: the closed form.
    let x = [0.5, 1.0, 0.5, 2.0];
    let (out, grad) = grad_at(&x, 1.0);
    assert_eq!(out, running_min_and_relu(&x));
    // m: 0.5, then 0.5 (0.5 vs 1.0), then a tie (0.5 vs 0.5), then 0.5.
    // s = 1.0·0.5 + 0.5·0.5 + 2.0·0.5; the output is s + m.
    // Through m, each `min` passes its seed to the smaller input, half each on
    // the tie; the seed of m is 1 (output) + x[1] + x[2] + x[3] after each
    // step's product.
    let d_m_last = 1.0 + 2.0; // the output, and x[3]·m.
    let d_m_tie = d_m_last + 0.5; // … and x[2]·m, before the tie splits it.
    let d_m_first = d_m_tie / 2.0 + 1.0; // half of the tie, and x[1]·m.
    let expected = [d_m_first, 0.5, 0.5 + d_m_tie / 2.0, 0.5];
    assert_close(&grad, &expected);
}

/// A `Vec` output's seed is a slice: a seed of another length is reported
/// as such, where `_vjp` is called, not as an index out of bounds.
#[differentiate]
fn smoothed(x: &[f64], k: f64) -> Vec<f64> {
    let mut y = x.to_vec();
    for i in 1..y.len() {
        y[i] += k * x[i - 1];
    }
    y
}

#[test]
#[should_panic(expected = "the seed of the output has 2 elements, the output 3")]
fn a_seed_of_the_wrong_length_is_reported() {
    let mut d_x = [0.0; 3];
    let _ = smoothed_vjp(&[1.0, 2.0, 3.0], &mut d_x, 0.5, &[1.0, 1.0]);
}

/// A shadow (or a tangent) shorter than its buffer is reported by name at
/// the top of `_vjp` (`_jvp`), not as an index out of bounds inside it.
#[differentiate(vjp, jvp)]
fn weighted_sumsq(xs: &[f64], w: &Vec<f64>) -> f64 {
    xs.iter().zip(w).map(|(x, w)| w * x * x).sum()
}

#[test]
#[should_panic(expected = "`d_w` has 2 elements and `w` has 3")]
fn a_short_shadow_is_reported() {
    let (mut d_xs, mut d_w) = ([0.0; 3], [0.0; 2]);
    let _ = weighted_sumsq_vjp(&[1.0; 3], &mut d_xs, &vec![1.0; 3], &mut d_w, 1.0);
}

#[test]
#[should_panic(expected = "`t_xs` has 4 elements and `xs` has 3")]
fn a_long_tangent_is_reported() {
    let _ = weighted_sumsq_jvp(&[1.0; 3], &[0.0; 4], &vec![1.0; 3], &[0.0; 3]);
}

#[test]
fn shadows_of_the_right_length_give_the_gradient() {
    let (xs, w) = ([1.0, -2.0, 0.5], vec![0.5, 2.0, 3.0]);
    let (mut d_xs, mut d_w) = ([0.0; 3], [0.0; 3]);
    let out = weighted_sumsq_vjp(&xs, &mut d_xs, &w, &mut d_w, 1.0);
    assert_eq!(out, weighted_sumsq(&xs, &w));
    // d/dx = 2 w x, d/dw = x².
    assert_eq!(d_xs, [1.0, -8.0, 3.0]);
    assert_eq!(d_w, [1.0, 4.0, 0.25]);
    // Finite differences and the dot-product test, over (xs, w).
    check_scalar(
        |p| weighted_sumsq(&p[..3], &p[3..].to_vec()),
        |p, seed| {
            let (mut d_xs, mut d_w) = (vec![0.0; 3], vec![0.0; 3]);
            let out = weighted_sumsq_vjp(&p[..3], &mut d_xs, &p[3..].to_vec(), &mut d_w, seed);
            d_xs.extend(d_w);
            (out, d_xs)
        },
        &[1.0, -2.0, 0.5, 0.5, 2.0, 3.0],
    );
}

#[test]
fn a_seed_of_the_right_length_gives_the_gradient() {
    let x = [1.0, 2.0, 3.0];
    let seed = [1.0, -1.0, 0.5];
    let grad = ad_tests::check_vector(
        |p| smoothed(&p[..3], p[3]),
        |p, seed| {
            let mut d_x = vec![0.0; 3];
            let (out, d_k) = smoothed_vjp(&p[..3], &mut d_x, p[3], seed);
            d_x.push(d_k);
            (out, d_x)
        },
        &[x[0], x[1], x[2], 0.5],
        &seed,
    );
    // y₁ = x₁ + k x₀, y₂ = x₂ + k x₁: the closed form.
    assert_eq!(grad, vec![1.0 - 0.5, -1.0 + 0.25, 0.5, -1.0 + 1.0]);
}
