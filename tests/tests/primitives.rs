//! Every supported primitive, in method or associated-function form, against its
//! closed-form derivative, finite differences and the dot-product test.

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar};

/// `name: |x| body => derivative, at points;` makes a module `name` holding
/// `#[differentiate] fn f(x: f64) -> f64 { body }` and its test.
macro_rules! unary {
    ($($name:ident: |$x:ident| $body:expr => $deriv:expr, at $points:expr;)*) => {$(
        mod $name {
            use super::*;

            #[differentiate]
            fn f($x: f64) -> f64 {
                $body
            }

            #[test]
            fn gradient() {
                for point in $points {
                    let grad = check_scalar(
                        |p| f(p[0]),
                        |p, s| {
                            let (out, dx) = f_vjp(p[0], s);
                            (out, vec![dx])
                        },
                        &[point],
                    );
                    #[allow(unused_variables)] // Some derivatives are constant.
                    let $x: f64 = point;
                    assert_close(&grad, &[$deriv]);
                }
            }
        }
    )*};
}

/// Like `unary!` for two inputs.
macro_rules! binary {
    ($($name:ident: |$a:ident, $b:ident| $body:expr => ($da:expr, $db:expr), at $points:expr;)*) => {$(
        mod $name {
            use super::*;

            #[differentiate]
            fn f($a: f64, $b: f64) -> f64 {
                $body
            }

            #[test]
            fn gradient() {
                for point in $points {
                    let grad = check_scalar(
                        |p| f(p[0], p[1]),
                        |p, s| {
                            let (out, da, db) = f_vjp(p[0], p[1], s);
                            (out, vec![da, db])
                        },
                        &point,
                    );
                    let [$a, $b]: [f64; 2] = point;
                    assert_close(&grad, &[$da, $db]);
                }
            }
        }
    )*};
}

unary! {
    sqrt: |x| x.sqrt() => 0.5 / x.sqrt(), at [0.25, 2.0, 9.0];
    cbrt: |x| f64::cbrt(x) => 1.0 / (3.0 * x.cbrt() * x.cbrt()), at [-8.0, 0.3, 27.0];
    exp: |x| x.exp() => x.exp(), at [-1.0, 0.0, 2.5];
    exp2: |x| x.exp2() => x.exp2() * std::f64::consts::LN_2, at [-1.0, 0.5, 3.0];
    exp_m1: |x| f64::exp_m1(x) => x.exp(), at [-1.0, 1e-3, 2.0];
    ln: |x| x.ln() => 1.0 / x, at [0.5, 1.0, 30.0];
    ln_1p: |x| x.ln_1p() => 1.0 / (1.0 + x), at [-0.5, 1e-3, 4.0];
    log2: |x| x.log2() => 1.0 / (x * std::f64::consts::LN_2), at [0.5, 8.0];
    log10: |x| f64::log10(x) => 1.0 / (x * std::f64::consts::LN_10), at [0.5, 100.0];
    powi_positive: |x| x.powi(3) => 3.0 * x * x, at [-2.0, 0.0, 1.5];
    powi_negative: |x| x.powi(-2) => -2.0 / (x * x * x), at [-2.0, 0.5];
    powi_zero: |x| f64::powi(x, 0) => 0.0, at [-2.0, 0.0, 3.0];
    sin: |x| x.sin() => x.cos(), at [-1.0, 0.0, 2.0];
    cos: |x| f64::cos(x) => -x.sin(), at [-1.0, 0.0, 2.0];
    tan: |x| x.tan() => 1.0 / (x.cos() * x.cos()), at [-1.0, 0.0, 1.2];
    asin: |x| x.asin() => 1.0 / (1.0 - x * x).sqrt(), at [-0.5, 0.0, 0.7];
    acos: |x| x.acos() => -1.0 / (1.0 - x * x).sqrt(), at [-0.5, 0.0, 0.7];
    atan: |x| f64::atan(x) => 1.0 / (1.0 + x * x), at [-3.0, 0.0, 0.5];
    sinh: |x| x.sinh() => x.cosh(), at [-1.0, 0.0, 2.0];
    cosh: |x| x.cosh() => x.sinh(), at [-1.0, 0.0, 2.0];
    tanh: |x| x.tanh() => 1.0 - x.tanh() * x.tanh(), at [-1.0, 0.0, 2.0];
    asinh: |x| x.asinh() => 1.0 / (x * x + 1.0).sqrt(), at [-1.0, 0.0, 2.0];
    acosh: |x| f64::acosh(x) => 1.0 / (x * x - 1.0).sqrt(), at [1.5, 4.0];
    atanh: |x| x.atanh() => 1.0 / (1.0 - x * x), at [-0.5, 0.0, 0.9];
    abs: |x| x.abs() => x.signum(), at [-2.0, 3.0];
    signum: |x| x.signum() * 2.0 + x => 1.0, at [-2.0, 3.0];
    recip: |x| x.recip() => -1.0 / (x * x), at [-2.0, 0.5];
    // Constant between jumps (derivative 0), taken away from the jumps.
    floor: |x| x.floor() * x => x.floor(), at [-1.5, 0.3, 2.7];
    ceil: |x| x * x.ceil() => x.ceil(), at [-1.5, 0.3, 2.7];
    round: |x| x.round() + x.sin() => x.cos(), at [-1.2, 0.3, 2.7];
    round_ties_even: |x| x.round_ties_even() * x * x => 2.0 * x * x.round_ties_even(), at [-1.2, 0.3, 2.7];
    trunc: |x| f64::trunc(x) + x => 1.0, at [-1.5, 0.3];
    floor_alone: |x| x.floor() => 0.0, at [0.5, -2.5];
    // `x - x.trunc()`: derivative 1 between the integers.
    fract: |x| x.fract() * x.fract() => 2.0 * x.fract(), at [-1.3, 0.3, 2.6];
    to_radians: |x| x.to_radians().sin() => x.to_radians().cos() * std::f64::consts::PI / 180.0, at [-30.0, 45.0, 400.0];
    to_degrees: |x| f64::to_degrees(x) * 2.0 => 360.0 / std::f64::consts::PI, at [-1.0, 0.5];
}

binary! {
    log_base: |x, b| x.log(b) => (1.0 / (x * b.ln()), -x.ln() / (b * b.ln() * b.ln())), at [[8.0, 2.0], [0.5, 10.0]];
    powf: |x, p| x.powf(p) => (p * x.powf(p - 1.0), x.powf(p) * x.ln()), at [[2.0, 3.0], [0.5, -1.5]];
    atan2: |y, x| y.atan2(x) => (x / (x * x + y * y), -y / (x * x + y * y)), at [[1.0, 2.0], [-1.0, -0.5]];
    min: |a, b| f64::min(a, b) => (f64::from(a < b), f64::from(b < a)), at [[1.0, 2.0], [3.0, -1.0]];
    max: |a, b| a.max(b) => (f64::from(a > b), f64::from(b > a)), at [[1.0, 2.0], [3.0, -1.0]];
    hypot: |x, y| x.hypot(y) => (x / x.hypot(y), y / x.hypot(y)), at [[3.0, 4.0], [-1.0, 0.5]];
    midpoint: |a, b| a.midpoint(b) * b => (0.5 * b, 0.5 * b + a.midpoint(b)), at [[1.0, 3.0], [-2.0, 0.5]];
    rem: |x, y| x % y => (1.0, -(x / y).trunc()), at [[7.5, 2.0], [-7.5, 2.0]];
    mul_add_two_active: |a, b| a.mul_add(b, 1.5) => (b, a), at [[2.0, 3.0], [-1.0, 0.5]];
    div_euclid: |a, b| a.div_euclid(b) * a => (a.div_euclid(b), 0.0), at [[7.5, 2.0], [-7.5, 2.0]];
    rem_euclid: |a, b| a.rem_euclid(b) => (1.0, -a.div_euclid(b)), at [[7.5, 2.0], [-7.5, 2.0], [7.5, -2.0]];
    copysign: |x, s| x.copysign(s) * 3.0 => (3.0 * x.signum() * s.signum(), 0.0), at [[1.5, -2.0], [-1.5, -2.0], [2.0, 3.0]];
}

#[differentiate]
fn mul_add(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

#[test]
fn mul_add_three_inputs() {
    let point = [2.0, -3.0, 0.5];
    let grad = check_scalar(
        |p| mul_add(p[0], p[1], p[2]),
        |p, s| {
            let (out, da, db, dc) = mul_add_vjp(p[0], p[1], p[2], s);
            (out, vec![da, db, dc])
        },
        &point,
    );
    assert_eq!(grad, [-3.0, 2.0, 1.0]);
}

#[differentiate]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    x.clamp(lo, hi) * 2.0
}

#[test]
fn clamp_gives_the_seed_to_the_argument_it_returns() {
    // Inside the range, below it and above it.
    for (point, expected) in [
        ([0.5, 0.0, 1.0], [2.0, 0.0, 0.0]),
        ([-0.5, 0.0, 1.0], [0.0, 2.0, 0.0]),
        ([1.5, 0.0, 1.0], [0.0, 0.0, 2.0]),
    ] {
        let grad = check_scalar(
            |p| clamp(p[0], p[1], p[2]),
            |p, s| {
                let (out, dx, d_lo, d_hi) = clamp_vjp(p[0], p[1], p[2], s);
                (out, vec![dx, d_lo, d_hi])
            },
            &point,
        );
        assert_eq!(grad, expected);
    }
}

/// The conventions at non-smooth points (documented in `ad_runtime::rules`),
/// through the generated code.
mod conventions {
    use super::*;

    #[differentiate]
    fn abs(x: f64) -> f64 {
        x.abs()
    }

    #[differentiate]
    fn max(a: f64, b: f64) -> f64 {
        a.max(b)
    }

    #[differentiate]
    fn min(a: f64, b: f64) -> f64 {
        a.min(b)
    }

    #[test]
    fn abs_at_zero_is_zero() {
        assert_eq!(abs_vjp(0.0, 1.0), (abs(0.0), 0.0));
        assert_eq!(abs_vjp(-0.0, 1.0).1, 0.0);
    }

    #[test]
    fn ties_split_the_seed() {
        assert_eq!(max_vjp(2.0, 2.0, 1.0), (max(2.0, 2.0), 0.5, 0.5));
        assert_eq!(min_vjp(2.0, 2.0, 3.0), (min(2.0, 2.0), 1.5, 1.5));
    }

    #[test]
    fn nan_input_gets_nothing() {
        let (out, da, db) = max_vjp(f64::NAN, 2.0, 1.0);
        assert_eq!((out, da, db), (max(f64::NAN, 2.0), 0.0, 1.0));
        let (out, da, db) = min_vjp(1.0, f64::NAN, 1.0);
        assert_eq!((out, da, db), (min(1.0, f64::NAN), 1.0, 0.0));
    }
}

/// `rem_euclid` on an integer index: a periodic neighbour, integer arithmetic
/// as written.
#[differentiate]
fn ring_energy(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        let next = (i + 1).rem_euclid(n);
        s += x[i] * x[next];
    }
    s
}

#[test]
fn an_integer_rem_euclid_indexes_periodically() {
    let x = [0.5, -1.0, 2.0, 1.5];
    let grad = check_scalar(
        ring_energy,
        |p, s| {
            let mut d_x = vec![0.0; p.len()];
            let out = ring_energy_vjp(p, &mut d_x, s);
            (out, d_x)
        },
        &x,
    );
    // d/dx_i = x_{i-1} + x_{i+1}, periodically.
    let n = x.len();
    let expected: Vec<f64> = (0..n)
        .map(|i| x[(i + n - 1) % n] + x[(i + 1) % n])
        .collect();
    assert_close(&grad, &expected);
}
