//! Pullbacks of the primitive float operations: the functions generated code calls.
//!
//! Each function here is the pullback of one primitive and is named after the
//! primitive's method. It takes the primal inputs in the order of the method call
//! (receiver first), then the primal output `y`, then the seed `dy` (the cotangent of
//! the output), and returns the adjoint of each float input: a single value for one
//! float input, a tuple for several. Integer inputs (the exponent of `powi`) are passed
//! but get no adjoint. For example, for `y = a.atan2(b)` the adjoint pass calls
//! `atan2(a, b, y, dy)` and gets `(da, db)`.
//!
//! The rules are pure, `#[inline]` and generic over [`Float`], so they serve `f32` and
//! `f64` alike. Where the primal output makes the adjoint cheaper they use it (the
//! adjoint of `exp` is `dy * y`).
//!
//! # Rules and conventions
//!
//! The table lists every rule with the adjoints it returns and, where the primitive is
//! not differentiable or its derivative is infinite, the convention it follows there.
//! "IEEE" means the adjoint is what IEEE 754 arithmetic gives, infinite or NaN.
//!
//! | Rule | Adjoints returned | Non-smooth or singular points |
//! |------|-------------------|-------------------------------|
//! | `sqrt(x, y, dy)` | `dy / (2 y)` | `x == 0`: IEEE (`±∞`) |
//! | `cbrt(x, y, dy)` | `dy / (3 y²)` | `x == 0`: IEEE (`±∞`) |
//! | `exp(x, y, dy)` | `dy * y` | |
//! | `exp2(x, y, dy)` | `dy * y * ln 2` | |
//! | `exp_m1(x, y, dy)` | `dy * (y + 1)` | |
//! | `ln(x, y, dy)` | `dy / x` | `x == 0`: IEEE (`±∞`) |
//! | `ln_1p(x, y, dy)` | `dy / (1 + x)` | `x == -1`: IEEE (`±∞`) |
//! | `log2(x, y, dy)` | `dy / (x ln 2)` | `x == 0`: IEEE (`±∞`) |
//! | `log10(x, y, dy)` | `dy / (x ln 10)` | `x == 0`: IEEE (`±∞`) |
//! | `sin(x, y, dy)` | `dy * cos x` | |
//! | `cos(x, y, dy)` | `-dy * sin x` | |
//! | `tan(x, y, dy)` | `dy * (1 + y²)` | |
//! | `asin(x, y, dy)` | `dy / sqrt(1 - x²)` | `x == ±1`: IEEE (`±∞`) |
//! | `acos(x, y, dy)` | `-dy / sqrt(1 - x²)` | `x == ±1`: IEEE (`±∞`) |
//! | `atan(x, y, dy)` | `dy / (1 + x²)` | |
//! | `sinh(x, y, dy)` | `dy * cosh x` | |
//! | `cosh(x, y, dy)` | `dy * sinh x` | |
//! | `tanh(x, y, dy)` | `dy * (1 - y²)` | |
//! | `asinh(x, y, dy)` | `dy / sqrt(x² + 1)` | |
//! | `acosh(x, y, dy)` | `dy / sqrt(x² - 1)` | `x == 1`: IEEE (`±∞`) |
//! | `atanh(x, y, dy)` | `dy / (1 - x²)` | `x == ±1`: IEEE (`±∞`) |
//! | `abs(x, y, dy)` | `dy * signum(x)` | `x == 0` (either sign): `0` |
//! | `signum(x, y, dy)` | `0` | `0` everywhere, including the jump at `x == 0` |
//! | `recip(x, y, dy)` | `-dy * y²` | `x == 0`: IEEE (`-∞` for `dy > 0`) |
//! | `powi(x, n, y, dy)` | `dy * n * x^(n-1)` (no adjoint for `n`) | `n == 0`: `0`, even at `x == 0`; `n < 0` at `x == 0`: IEEE |
//! | `log(a, b, y, dy)` | `(dy / (a ln b), -dy * y / (b ln b))` | `a == 0`, `b == 0` or `b == 1`: IEEE |
//! | `powf(a, b, y, dy)` | `(dy * b * a^(b-1), dy * y * ln a)` | `b == 0`: base adjoint `0`, even at `a == 0`; `y == 0`: exponent adjoint `0` (not `0 · ln 0 = NaN`); `a == 0` with `b < 1`: IEEE base adjoint; `a < 0`: exponent adjoint NaN (`aᵇ` is not differentiable in `b` there) |
//! | `atan2(a, b, y, dy)` | `(dy * b / (a² + b²), -dy * a / (a² + b²))` | `(0, 0)`: `(0, 0)` |
//! | `min(a, b, y, dy)` | `(dy, 0)` if `a < b`, `(0, dy)` if `b < a` | tie `a == b` (also `0.0` and `-0.0`): `(dy / 2, dy / 2)`; one input NaN: the other gets `dy` (it is the one `f64::min` returns); both NaN: `(dy / 2, dy / 2)` |
//! | `max(a, b, y, dy)` | `(dy, 0)` if `a > b`, `(0, dy)` if `b > a` | as `min` |
//! | `hypot(a, b, y, dy)` | `(dy * a / y, dy * b / y)` | `(0, 0)`: `(0, 0)` |
//! | `rem(a, b, y, dy)` | `(dy, -dy * q)` with `q = ((a - y) / b).round()`, the quotient of `a == q * b + y` | where `a % b` jumps: the derivative of the branch the returned remainder lies on |
//! | `mul_add(a, b, c, y, dy)` | `(dy * b, dy * a, dy)` | |
//! | `midpoint(a, b, y, dy)` | `(dy / 2, dy / 2)` | |
//!
//! A zero seed always gives exactly zero adjoints, at the singular points too: an input
//! that does not influence the output must not receive `0 · ∞ = NaN`. The rules whose
//! partial derivative can be infinite or NaN at a point of their domain (those with an
//! IEEE entry above), or can overflow to infinity (`exp`, `exp2`, `exp_m1`, `tan`,
//! `sinh`, `cosh`), check for a zero seed first; the others are branch-free, apart from
//! the conventions listed. The quotients check without a branch: they divide by `∞`
//! instead of the denominator when the seed is zero, which gives a zero of the seed's
//! sign (a branch around a division would split the caller's code, and stop LLVM from
//! merging a `sin` and a `cos` of the same value into one `sincos` call).
//!
//! Outside a primitive's domain (`sqrt` or `ln` of a negative number) the primal is
//! NaN; the adjoint is whatever the formula gives there (NaN for `sqrt`, `dy / x` for
//! `ln`), which is meaningless: do not rely on it. Once a primal value overflows to
//! infinity, adjoints for a nonzero seed may be infinite or NaN too.

use crate::Float;

/// `dy / den`, or `dy` itself (a zero) when `dy` is zero, whatever `den` is (zero,
/// infinite or NaN): the division is by `∞` then, so no branch is needed.
#[inline]
fn over<T: Float>(dy: T, den: T) -> T {
    dy / if dy == T::ZERO { T::INFINITY } else { den }
}

/// Pullback of `y = x.sqrt()`: returns `dy / (2 y)`.
///
/// At `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// // y = 4.0.sqrt() = 2.0: the adjoint of x is dy / (2 · 2).
/// assert_eq!(rules::sqrt(4.0, 2.0, 1.0), 0.25);
/// // At 0 it is infinite, unless the seed is zero.
/// assert_eq!(rules::sqrt(0.0, 0.0, 1.0), f64::INFINITY);
/// assert_eq!(rules::sqrt(0.0, 0.0, 0.0), 0.0);
/// ```
#[inline]
pub fn sqrt<T: Float>(_x: T, y: T, dy: T) -> T {
    over(dy, T::TWO * y)
}

/// Pullback of `y = x.cbrt()`: returns `dy / (3 y²)`.
///
/// At `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::cbrt(8.0, 2.0, 1.0), 1.0 / 12.0);
/// ```
#[inline]
pub fn cbrt<T: Float>(_x: T, y: T, dy: T) -> T {
    over(dy, T::from_i32(3) * y * y)
}

/// Pullback of `y = x.exp()`: returns `dy * y`.
///
/// ```
/// use ad_runtime::rules;
///
/// // The adjoint of exp is read off the output: dy · y.
/// assert_eq!(rules::exp(1.0, std::f64::consts::E, 2.0), 2.0 * std::f64::consts::E);
/// ```
#[inline]
pub fn exp<T: Float>(_x: T, y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    dy * y
}

/// Pullback of `y = x.exp2()`: returns `dy * y * ln 2`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::LN_2;
/// assert_eq!(rules::exp2(3.0, 8.0, 1.0), 8.0 * LN_2);
/// ```
#[inline]
pub fn exp2<T: Float>(_x: T, y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    dy * y * T::LN_2
}

/// Pullback of `y = x.exp_m1()`: returns `dy * (y + 1)`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::exp_m1(0.0, 0.0, 1.0), 1.0);
/// ```
#[inline]
pub fn exp_m1<T: Float>(_x: T, y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    dy * (y + T::ONE)
}

/// Pullback of `y = x.ln()`: returns `dy / x`.
///
/// At `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::LN_2;
/// assert_eq!(rules::ln(2.0, LN_2, 1.0), 0.5);
/// ```
#[inline]
pub fn ln<T: Float>(x: T, _y: T, dy: T) -> T {
    over(dy, x)
}

/// Pullback of `y = x.ln_1p()`: returns `dy / (1 + x)`.
///
/// At `x == -1` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::LN_2;
/// assert_eq!(rules::ln_1p(1.0, LN_2, 1.0), 0.5);
/// ```
#[inline]
pub fn ln_1p<T: Float>(x: T, _y: T, dy: T) -> T {
    over(dy, T::ONE + x)
}

/// Pullback of `y = x.log2()`: returns `dy / (x ln 2)`.
///
/// At `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::LN_2;
/// assert_eq!(rules::log2(4.0, 2.0, 1.0), 1.0 / (4.0 * LN_2));
/// ```
#[inline]
pub fn log2<T: Float>(x: T, _y: T, dy: T) -> T {
    over(dy, x * T::LN_2)
}

/// Pullback of `y = x.log10()`: returns `dy / (x ln 10)`.
///
/// At `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::LN_10;
/// assert_eq!(rules::log10(10.0, 1.0, 1.0), 1.0 / (10.0 * LN_10));
/// ```
#[inline]
pub fn log10<T: Float>(x: T, _y: T, dy: T) -> T {
    over(dy, x * T::LN_10)
}

/// `d * factor`, except that a zero `d` gives exactly 0 even when `factor` is
/// infinite or NaN: the contribution of an adjoint that may stand for "no
/// dependence" (a branch not taken, a loop run zero times, the loser of `max`)
/// through a product, so that `0 · ∞` does not turn an exact zero into NaN.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::scale(2.0, 3.0), 6.0);
/// // A zero adjoint stays zero through an infinite factor, where 0 · ∞ is NaN.
/// assert_eq!(rules::scale(0.0, f64::INFINITY), 0.0);
/// ```
#[inline]
pub fn scale<T: Float>(d: T, factor: T) -> T {
    if d == T::ZERO {
        return T::ZERO;
    }
    d * factor
}

/// Pullback of `y = x.sin()`: returns `dy * cos x`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::sin(0.0, 0.0, 1.0), 1.0);
/// ```
#[inline]
pub fn sin<T: Float>(x: T, _y: T, dy: T) -> T {
    dy * x.cos()
}

/// Pullback of `y = x.cos()`: returns `-dy * sin x`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::FRAC_PI_2;
/// assert_eq!(rules::cos(FRAC_PI_2, FRAC_PI_2.cos(), 1.0), -1.0);
/// ```
#[inline]
pub fn cos<T: Float>(x: T, _y: T, dy: T) -> T {
    -dy * x.sin()
}

/// Pullback of `y = x.tan()`: returns `dy * (1 + y²)`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::FRAC_PI_4;
/// // y = tan(π/4) = 1: the adjoint is dy · (1 + 1²).
/// assert_eq!(rules::tan(FRAC_PI_4, 1.0, 1.0), 2.0);
/// ```
#[inline]
pub fn tan<T: Float>(_x: T, y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    dy * (T::ONE + y * y)
}

/// Pullback of `y = x.asin()`: returns `dy / sqrt(1 - x²)`.
///
/// At `x == ±1` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::FRAC_PI_2;
/// assert_eq!(rules::asin(0.0, 0.0, 1.0), 1.0);
/// assert_eq!(rules::asin(1.0, FRAC_PI_2, 1.0), f64::INFINITY);
/// ```
#[inline]
pub fn asin<T: Float>(x: T, _y: T, dy: T) -> T {
    // `(1 - x)(1 + x)` keeps its precision near `±1`, where `1 - x²` cancels.
    over(dy, ((T::ONE - x) * (T::ONE + x)).sqrt())
}

/// Pullback of `y = x.acos()`: returns `-dy / sqrt(1 - x²)`.
///
/// At `x == ±1` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::FRAC_PI_2;
/// assert_eq!(rules::acos(0.0, FRAC_PI_2, 1.0), -1.0);
/// ```
#[inline]
pub fn acos<T: Float>(x: T, _y: T, dy: T) -> T {
    -over(dy, ((T::ONE - x) * (T::ONE + x)).sqrt())
}

/// Pullback of `y = x.atan()`: returns `dy / (1 + x²)`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::FRAC_PI_4;
/// assert_eq!(rules::atan(1.0, FRAC_PI_4, 1.0), 0.5);
/// ```
#[inline]
pub fn atan<T: Float>(x: T, _y: T, dy: T) -> T {
    dy / (T::ONE + x * x)
}

/// Pullback of `y = x.sinh()`: returns `dy * cosh x`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::sinh(0.0, 0.0, 1.0), 1.0);
/// ```
#[inline]
pub fn sinh<T: Float>(x: T, _y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    dy * x.cosh()
}

/// Pullback of `y = x.cosh()`: returns `dy * sinh x`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::cosh(0.0, 1.0, 1.0), 0.0);
/// ```
#[inline]
pub fn cosh<T: Float>(x: T, _y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    dy * x.sinh()
}

/// Pullback of `y = x.tanh()`: returns `dy * (1 - y²)`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::tanh(0.0, 0.0, 1.0), 1.0);
/// ```
#[inline]
pub fn tanh<T: Float>(_x: T, y: T, dy: T) -> T {
    dy * (T::ONE - y * y)
}

/// Pullback of `y = x.asinh()`: returns `dy / sqrt(x² + 1)`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::asinh(0.0, 0.0, 1.0), 1.0);
/// ```
#[inline]
pub fn asinh<T: Float>(x: T, _y: T, dy: T) -> T {
    // `hypot` does not overflow for large `|x|`, where `x² + 1` would.
    dy / x.hypot(T::ONE)
}

/// Pullback of `y = x.acosh()`: returns `dy / sqrt(x² - 1)`.
///
/// At `x == 1` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::acosh(3.0, 3.0_f64.acosh(), 1.0), 1.0 / 8.0_f64.sqrt());
/// assert_eq!(rules::acosh(1.0, 0.0, 1.0), f64::INFINITY);
/// ```
#[inline]
pub fn acosh<T: Float>(x: T, _y: T, dy: T) -> T {
    over(dy, ((x - T::ONE) * (x + T::ONE)).sqrt())
}

/// Pullback of `y = x.atanh()`: returns `dy / (1 - x²)`.
///
/// At `x == ±1` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::atanh(0.5, 0.5_f64.atanh(), 1.0), 1.0 / 0.75);
/// ```
#[inline]
pub fn atanh<T: Float>(x: T, _y: T, dy: T) -> T {
    over(dy, (T::ONE - x) * (T::ONE + x))
}

/// Pullback of `y = x.abs()`: returns `dy * signum(x)`.
///
/// Convention: at `x == 0` (`+0.0` or `-0.0`) the adjoint is `0`, the midpoint of
/// the one-sided derivatives `-dy` and `dy`. A NaN `x` gives a NaN adjoint.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::abs(-3.0, 3.0, 2.0), -2.0);
/// // At 0 the adjoint is 0, between the slopes -1 and 1.
/// assert_eq!(rules::abs(0.0, 0.0, 2.0), 0.0);
/// ```
#[inline]
pub fn abs<T: Float>(x: T, _y: T, dy: T) -> T {
    if x == T::ZERO {
        return T::ZERO;
    }
    dy * x.signum()
}

/// Pullback of `y = x.signum()`: returns `0`.
///
/// Convention: the adjoint is `0` everywhere, including at `x == 0` where `signum`
/// jumps, so `signum` never passes a gradient on.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::signum(-3.0, -1.0, 2.0), 0.0);
/// ```
#[inline]
pub fn signum<T: Float>(_x: T, _y: T, _dy: T) -> T {
    T::ZERO
}

/// Pullback of `y = x.recip()`: returns `-dy * y²`.
///
/// At `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::recip(2.0, 0.5, 1.0), -0.25);
/// ```
#[inline]
pub fn recip<T: Float>(_x: T, y: T, dy: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    -dy * y * y
}

/// Pullback of `y = x.powi(n)`: returns `dy * n * x^(n - 1)`.
///
/// The integer exponent `n` gets no adjoint. Convention: with `n == 0` the adjoint is
/// `0` for every `x`, including `x == 0` (where `0 · 0⁻¹` would be NaN). It is computed
/// as `n * x.powi(n - 1)` rather than `n * y / x`, so `x == 0` never divides by zero.
/// With `n < 0` at `x == 0` the adjoint is infinite (IEEE 754); a zero seed gives `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// // y = 3² = 9: the adjoint of x is dy · 2 · 3.
/// assert_eq!(rules::powi(3.0, 2, 9.0, 1.0), 6.0);
/// // x⁰ is constant, even at x == 0.
/// assert_eq!(rules::powi(0.0, 0, 1.0, 1.0), 0.0);
/// ```
#[inline]
pub fn powi<T: Float>(x: T, n: i32, y: T, dy: T) -> T {
    if n == 0 || dy == T::ZERO {
        return T::ZERO;
    }
    let x_pow = match n.checked_sub(1) {
        Some(n_minus_1) => x.powi(n_minus_1),
        // `n == i32::MIN`: `x^(n - 1)` is `y / x`, with the same result at `x == 0`.
        None => y / x,
    };
    dy * T::from_i32(n) * x_pow
}

/// Pullback of `y = a.log(b)` (the logarithm of `a` in base `b`): returns
/// `(dy / (a ln b), -dy * y / (b ln b))`.
///
/// At `a == 0`, `b == 0` or `b == 1` the adjoints are infinite or NaN (IEEE 754); a
/// zero seed gives `(0, 0)`.
///
/// ```
/// use ad_runtime::rules;
///
/// // y = log₂ 8 = 3.
/// let ln_2 = 2.0_f64.ln();
/// assert_eq!(rules::log(8.0, 2.0, 3.0, 1.0), (1.0 / (8.0 * ln_2), -3.0 / (2.0 * ln_2)));
/// ```
#[inline]
pub fn log<T: Float>(a: T, b: T, y: T, dy: T) -> (T, T) {
    if dy == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    let ln_b = b.ln();
    (dy / (a * ln_b), -dy * y / (b * ln_b))
}

/// Pullback of `y = a.powf(b)`: returns `(dy * b * a^(b - 1), dy * y * ln a)`.
///
/// The base adjoint is computed as `b * a.powf(b - 1)`, not `b * y / a`, so `a == 0`
/// works. Conventions: with `b == 0` the base adjoint is `0` for every `a` (`a⁰ == 1`),
/// including `a == 0`; where `y == 0` the exponent adjoint is `0` (instead of
/// `0 · ln 0 = NaN`). For `a < 0`, where `aᵇ` is only defined at integer `b`, the
/// exponent adjoint is NaN. A zero seed gives `(0, 0)`.
///
/// ```
/// use ad_runtime::rules;
///
/// // y = 2³ = 8: (dy · 3 · 2², dy · 8 · ln 2).
/// let (da, db) = rules::powf(2.0, 3.0, 8.0, 1.0);
/// assert_eq!(da, 12.0);
/// assert!((db - 8.0 * std::f64::consts::LN_2).abs() < 1e-12);
/// // Where y == 0 the exponent gets 0, not 0 · ln 0.
/// assert_eq!(rules::powf(0.0, 2.0, 0.0, 1.0), (0.0, 0.0));
/// ```
#[inline]
pub fn powf<T: Float>(a: T, b: T, y: T, dy: T) -> (T, T) {
    if dy == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    let da = if b == T::ZERO {
        T::ZERO
    } else {
        dy * b * a.powf(b - T::ONE)
    };
    let db = if y == T::ZERO {
        T::ZERO
    } else {
        dy * y * a.ln()
    };
    (da, db)
}

/// Pullback of `y = a.atan2(b)`, the angle of the point `(b, a)`: returns
/// `(dy * b / (a² + b²), -dy * a / (a² + b²))`.
///
/// Here `a` is the receiver (the y coordinate) and `b` the x coordinate. Convention: at
/// `(0, 0)` the adjoints are `(0, 0)`.
///
/// ```
/// use ad_runtime::rules;
///
/// // The point (2, 0): the angle moves with the y coordinate only.
/// assert_eq!(rules::atan2(0.0, 2.0, 0.0, 1.0), (0.5, 0.0));
/// assert_eq!(rules::atan2(0.0, 0.0, 0.0, 1.0), (0.0, 0.0));
/// ```
#[inline]
pub fn atan2<T: Float>(a: T, b: T, _y: T, dy: T) -> (T, T) {
    // Dividing by `r` twice, instead of by `a² + b²` once, cannot underflow to `0 / 0`
    // for tiny nonzero `a` and `b`.
    let r = a.hypot(b);
    if r == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    let dy_over_r = dy / r;
    (dy_over_r * (b / r), -(dy_over_r * (a / r)))
}

/// Pullback of `y = a.min(b)`: the smaller input gets the whole seed.
///
/// Conventions: on a tie (`a == b`, including `0.0` against `-0.0`) each input gets
/// `dy / 2`. If one input is NaN, `f64::min` returns the other, which then gets the
/// whole seed; if both are NaN, each gets `dy / 2`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::min(1.0, 2.0, 1.0, 1.0), (1.0, 0.0));
/// // A tie splits the seed.
/// assert_eq!(rules::min(1.0, 1.0, 1.0, 1.0), (0.5, 0.5));
/// // f64::min(NaN, 2.0) is 2.0, so 2.0 gets the seed.
/// assert_eq!(rules::min(f64::NAN, 2.0, 2.0, 1.0), (0.0, 1.0));
/// ```
#[inline]
pub fn min<T: Float>(a: T, b: T, _y: T, dy: T) -> (T, T) {
    if a < b || (b.is_nan() && !a.is_nan()) {
        (dy, T::ZERO)
    } else if b < a || (a.is_nan() && !b.is_nan()) {
        (T::ZERO, dy)
    } else {
        let half = dy * T::HALF;
        (half, half)
    }
}

/// Pullback of `y = a.max(b)`: the larger input gets the whole seed.
///
/// Conventions: on a tie (`a == b`, including `0.0` against `-0.0`) each input gets
/// `dy / 2`. If one input is NaN, `f64::max` returns the other, which then gets the
/// whole seed; if both are NaN, each gets `dy / 2`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::max(1.0, 2.0, 2.0, 1.0), (0.0, 1.0));
/// // A tie splits the seed.
/// assert_eq!(rules::max(1.0, 1.0, 1.0, 1.0), (0.5, 0.5));
/// ```
#[inline]
pub fn max<T: Float>(a: T, b: T, _y: T, dy: T) -> (T, T) {
    if a > b || (b.is_nan() && !a.is_nan()) {
        (dy, T::ZERO)
    } else if b > a || (a.is_nan() && !b.is_nan()) {
        (T::ZERO, dy)
    } else {
        let half = dy * T::HALF;
        (half, half)
    }
}

/// Pullback of `y = a.hypot(b)`: returns `(dy * a / y, dy * b / y)`.
///
/// Convention: at `(0, 0)` the adjoints are `(0, 0)`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::hypot(3.0, 4.0, 5.0, 1.0), (0.6, 0.8));
/// assert_eq!(rules::hypot(0.0, 0.0, 0.0, 1.0), (0.0, 0.0));
/// ```
#[inline]
pub fn hypot<T: Float>(a: T, b: T, y: T, dy: T) -> (T, T) {
    if y == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    (dy * (a / y), dy * (b / y))
}

/// Pullback of `y = a % b`: returns `(dy, -dy * q)`, where `q` is the integer quotient
/// with `a == q * b + y`.
///
/// `q` is computed as `((a - y) / b).round()`, from the remainder actually returned,
/// rather than as `(a / b).trunc()`, which rounds the wrong way near the jumps: for
/// `1.0 % 0.1 == 0.09999999999999995` the quotient is 9, while `(1.0 / 0.1).trunc()`
/// is 10. Convention: where `a / b` is an integer, so that `a % b` jumps, the adjoints
/// are the one-sided derivatives of the branch `a % b` returned.
///
/// ```
/// use ad_runtime::rules;
///
/// // 7 % 2 == 1, with the quotient 3.
/// assert_eq!(rules::rem(7.0, 2.0, 1.0, 1.0), (1.0, -3.0));
/// ```
#[inline]
pub fn rem<T: Float>(a: T, b: T, y: T, dy: T) -> (T, T) {
    let quotient = ((a - y) / b).round();
    (dy, -dy * quotient)
}

/// Pullback of `y = x.fract()`, that is `x - x.trunc()`: returns `dy`.
///
/// Convention: at the integers, where `fract` jumps, the adjoint is `dy` too
/// (the derivative of either side).
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::fract(2.5, 0.5, 1.0), 1.0);
/// ```
#[inline]
pub fn fract<T: Float>(_x: T, _y: T, dy: T) -> T {
    dy
}

/// Pullback of `y = a.midpoint(b)`, the average `(a + b) / 2`: returns
/// `(dy / 2, dy / 2)`.
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::midpoint(1.0, 4.0, 2.5, 3.0), (1.5, 1.5));
/// ```
#[inline]
pub fn midpoint<T: Float>(_a: T, _b: T, _y: T, dy: T) -> (T, T) {
    let half = dy * T::HALF;
    (half, half)
}

/// Pullback of `y = x.to_radians()`: returns `dy * π / 180`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::PI;
/// assert_eq!(rules::to_radians(180.0, PI, 1.0), PI / 180.0);
/// ```
#[inline]
pub fn to_radians<T: Float>(_x: T, _y: T, dy: T) -> T {
    dy * (T::PI / T::from_f64(180.0))
}

/// Pullback of `y = x.to_degrees()`: returns `dy * 180 / π`.
///
/// ```
/// use ad_runtime::rules;
///
/// use std::f64::consts::PI;
/// assert_eq!(rules::to_degrees(PI, 180.0, 1.0), 180.0 / PI);
/// ```
#[inline]
pub fn to_degrees<T: Float>(_x: T, _y: T, dy: T) -> T {
    dy * (T::from_f64(180.0) / T::PI)
}

/// Pullback of `y = a.rem_euclid(b)`, that is `a - b * a.div_euclid(b)`:
/// returns `(dy, -dy * q)` with `q = a.div_euclid(b)`.
///
/// `q` is computed from the remainder returned, as for [`rem`]. Convention: where
/// `a / b` is an integer, so that `rem_euclid` jumps, the adjoints are the one-sided
/// derivatives of the branch it returned.
///
/// ```
/// use ad_runtime::rules;
///
/// // (-1.0).rem_euclid(3.0) == 2.0, with the quotient -1.
/// assert_eq!(rules::rem_euclid(-1.0, 3.0, 2.0, 1.0), (1.0, 1.0));
/// ```
#[inline]
pub fn rem_euclid<T: Float>(a: T, b: T, y: T, dy: T) -> (T, T) {
    let quotient = ((a - y) / b).round();
    (dy, -dy * quotient)
}

/// Pullback of `y = x.copysign(sign)`, the magnitude of `x` with the sign of `sign`:
/// returns `(dy * s, 0)`, where `s` is `1` if `x` and `sign` have the same sign bit
/// and `-1` otherwise.
///
/// Convention: at `x == 0` (either sign) the adjoint of `x` is `0`, as for
/// [`abs`]; `sign` only ever gets `0`.
///
/// ```
/// use ad_runtime::rules;
///
/// // 2.0.copysign(-1.0) == -2.0: the sign flips the adjoint.
/// assert_eq!(rules::copysign(2.0, -1.0, -2.0, 1.0), (-1.0, 0.0));
/// ```
#[inline]
pub fn copysign<T: Float>(x: T, sign: T, _y: T, dy: T) -> (T, T) {
    if x == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    (dy * T::ONE.copysign(x) * T::ONE.copysign(sign), T::ZERO)
}

/// Pullback of `y = x.clamp(min, max)`: returns `(dy, 0, 0)` when
/// `min <= x <= max`, `(0, dy, 0)` below the range and `(0, 0, dy)` above it.
///
/// Convention: at the ends of the range `x` gets the seed (the range is closed).
///
/// ```
/// use ad_runtime::rules;
///
/// assert_eq!(rules::clamp(0.5, 0.0, 1.0, 0.5, 1.0), (1.0, 0.0, 0.0));
/// // Above the range the upper bound is the output, and gets the seed.
/// assert_eq!(rules::clamp(5.0, 0.0, 1.0, 1.0, 1.0), (0.0, 0.0, 1.0));
/// ```
#[inline]
pub fn clamp<T: Float>(x: T, min: T, max: T, _y: T, dy: T) -> (T, T, T) {
    if x < min {
        (T::ZERO, dy, T::ZERO)
    } else if x > max {
        (T::ZERO, T::ZERO, dy)
    } else {
        (dy, T::ZERO, T::ZERO)
    }
}

/// Pullback of `y = a.mul_add(b, c)`, that is `y = a * b + c`: returns
/// `(dy * b, dy * a, dy)`.
///
/// ```
/// use ad_runtime::rules;
///
/// // y = 2 · 3 + 1.
/// assert_eq!(rules::mul_add(2.0, 3.0, 1.0, 7.0, 1.0), (3.0, 2.0, 1.0));
/// ```
#[inline]
pub fn mul_add<T: Float>(a: T, b: T, _c: T, _y: T, dy: T) -> (T, T, T) {
    (dy * b, dy * a, dy)
}

#[cfg(test)]
mod tests {
    use crate::check::{derivative, mixed_error};
    use proptest::prelude::*;

    /// The tolerance of every comparison with finite differences.
    const TOLERANCE: f64 = 1e-6;

    fn config() -> ProptestConfig {
        ProptestConfig::with_cases(128)
    }

    /// The seed of the rule under test: any value in `[-2, 2]`.
    fn seed() -> impl Strategy<Value = f64> {
        -2.0..2.0_f64
    }

    /// Numbers with `lo <= |x| < hi`, of either sign.
    fn either_sign(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
        (lo..hi, any::<bool>()).prop_map(|(x, negative)| if negative { -x } else { x })
    }

    /// The step of the central differences at `x`.
    fn step(x: f64) -> f64 {
        1e-3 * x.abs().max(1.0)
    }

    fn check(what: &str, rule: f64, numeric: f64) -> Result<(), TestCaseError> {
        prop_assert!(
            mixed_error(rule, numeric) <= TOLERANCE,
            "{what}: the rule gives {rule:e}, finite differences give {numeric:e}"
        );
        Ok(())
    }

    /// Checks a one-input rule against finite differences of its primitive.
    fn check_unary(
        rule: fn(f64, f64, f64) -> f64,
        primitive: fn(f64) -> f64,
        x: f64,
        dy: f64,
    ) -> Result<(), TestCaseError> {
        let numeric = dy * derivative(|t| primitive(x + t), step(x));
        check("dx", rule(x, primitive(x), dy), numeric)
    }

    /// Checks a two-input rule against finite differences of its primitive.
    fn check_binary(
        rule: fn(f64, f64, f64, f64) -> (f64, f64),
        primitive: fn(f64, f64) -> f64,
        a: f64,
        b: f64,
        dy: f64,
    ) -> Result<(), TestCaseError> {
        let (da, db) = rule(a, b, primitive(a, b), dy);
        check("da", da, dy * derivative(|t| primitive(a + t, b), step(a)))?;
        check("db", db, dy * derivative(|t| primitive(a, b + t), step(b)))
    }

    /// One test module per one-input rule: the rule against finite differences of its
    /// primitive, at points of `domain` away from singular and non-smooth points.
    macro_rules! unary_rule_tests {
        ($($rule:ident: $domain:expr;)*) => {$(
            mod $rule {
                use super::*;

                proptest! {
                    #![proptest_config(config())]
                    #[test]
                    fn matches_finite_differences(x in $domain, dy in seed()) {
                        check_unary(crate::rules::$rule, f64::$rule, x, dy)?;
                    }
                }
            }
        )*};
    }

    unary_rule_tests! {
        sqrt: 0.1..100.0;
        cbrt: either_sign(0.1, 100.0);
        exp: -20.0..20.0;
        exp2: -20.0..20.0;
        exp_m1: -20.0..20.0;
        ln: 0.1..100.0;
        ln_1p: -0.9..100.0;
        log2: 0.1..100.0;
        log10: 0.1..100.0;
        sin: -10.0..10.0;
        cos: -10.0..10.0;
        tan: -1.3..1.3;
        asin: -0.95..0.95;
        acos: -0.95..0.95;
        atan: -10.0..10.0;
        sinh: -10.0..10.0;
        cosh: -10.0..10.0;
        tanh: -10.0..10.0;
        asinh: -100.0..100.0;
        acosh: 1.05..100.0;
        atanh: -0.95..0.95;
        abs: either_sign(0.01, 100.0);
        signum: either_sign(0.01, 100.0);
        recip: either_sign(0.2, 100.0);
        // Away from the integers, where `fract` jumps.
        fract: either_sign(0.01, 10.0).prop_filter("off the jumps", |x| (x - x.round()).abs() > 3.0 * step(*x));
        to_radians: -1000.0..1000.0;
        to_degrees: -10.0..10.0;
    }

    mod powi {
        use super::*;
        use crate::rules::powi;

        proptest! {
            #![proptest_config(config())]
            #[test]
            fn matches_finite_differences(x in either_sign(0.5, 10.0), n in -5..=5_i32, dy in seed()) {
                let numeric = dy * derivative(|t| (x + t).powi(n), step(x));
                check("dx", powi(x, n, x.powi(n), dy), numeric)?;
            }
        }

        #[test]
        fn zero_exponent_gives_zero_even_at_zero() {
            assert_eq!(powi(0.0, 0, 1.0, 1.0), 0.0);
            assert_eq!(powi(3.0, 0, 1.0, 1.0), 0.0);
        }

        #[test]
        fn positive_exponent_at_zero() {
            assert_eq!(powi(0.0, 1, 0.0, 2.0), 2.0);
            assert_eq!(powi(0.0, 2, 0.0, 2.0), 0.0);
        }

        #[test]
        fn smallest_exponent_does_not_overflow() {
            assert_eq!(powi(1.0, i32::MIN, 1.0, 1.0), f64::from(i32::MIN));
        }
    }

    /// One test module per two-input rule, as for [`unary_rule_tests`]; `$valid`
    /// rejects the sampled points too close to a singular or non-smooth point.
    macro_rules! binary_rule_tests {
        ($($rule:ident($primitive:expr): $a:expr, $b:expr, |$pa:ident, $pb:ident| $valid:expr;)*) => {$(
            mod $rule {
                use super::*;

                proptest! {
                    #![proptest_config(config())]
                    #[test]
                    fn matches_finite_differences(a in $a, b in $b, dy in seed()) {
                        let ($pa, $pb): (f64, f64) = (a, b);
                        prop_assume!($valid);
                        check_binary(crate::rules::$rule, $primitive, a, b, dy)?;
                    }
                }
            }
        )*};
    }

    binary_rule_tests! {
        log(f64::log): 0.1..100.0, prop_oneof![0.2..0.7, 1.5..10.0], |_a, _b| true;
        powf(f64::powf): 0.1..10.0, -3.0..3.0, |_a, _b| true;
        // Stay away from the origin and from the jump of `atan2` from π to -π, where the
        // receiver `a` changes sign while `b < 0`.
        atan2(f64::atan2): -10.0..10.0, -10.0..10.0, |a, b| a.hypot(b) > 0.5 && (b > 0.0 || a.abs() > 0.05);
        min(f64::min): -10.0..10.0, -10.0..10.0, |a, b| (a - b).abs() > 0.05;
        max(f64::max): -10.0..10.0, -10.0..10.0, |a, b| (a - b).abs() > 0.05;
        hypot(f64::hypot): -10.0..10.0, -10.0..10.0, |a, b| a.hypot(b) > 0.5;
        midpoint(f64::midpoint): -100.0..100.0, -100.0..100.0, |_a, _b| true;
        // Stay away from the jumps of `a % b`, where the remainder is near 0 or `|b|`.
        rem(<f64 as core::ops::Rem>::rem): -10.0..10.0, either_sign(1.0, 5.0), |a, b| {
            let y = a % b;
            y.abs() > 0.05 && b.abs() - y.abs() > 0.05
        };
    }

    mod rem_euclid {
        use super::*;

        proptest! {
            #![proptest_config(config())]
            #[test]
            fn matches_finite_differences(a in -10.0..10.0_f64, b in either_sign(1.0, 5.0), dy in seed()) {
                let y = a.rem_euclid(b);
                // Away from the jumps, where the remainder is near 0 or `|b|`.
                prop_assume!(y > 0.05 && b.abs() - y > 0.05);
                let (da, db) = crate::rules::rem_euclid(a, b, y, dy);
                check("da", da, dy * derivative(|t| (a + t).rem_euclid(b), step(a)))?;
                check("db", db, dy * derivative(|t| a.rem_euclid(b + t), step(b)))?;
            }
        }
    }

    mod copysign {
        use super::*;

        proptest! {
            #![proptest_config(config())]
            #[test]
            fn matches_finite_differences(x in either_sign(0.01, 100.0), sign in either_sign(0.01, 100.0), dy in seed()) {
                let (dx, d_sign) = crate::rules::copysign(x, sign, x.copysign(sign), dy);
                check("dx", dx, dy * derivative(|t| (x + t).copysign(sign), step(x)))?;
                check("dsign", d_sign, dy * derivative(|t| x.copysign(sign + t), step(sign)))?;
            }
        }

        #[test]
        fn zero_magnitude_gives_zero() {
            assert_eq!(crate::rules::copysign(0.0, -1.0, -0.0, 1.0), (0.0, 0.0));
            assert_eq!(crate::rules::copysign(-0.0, 1.0, 0.0, 1.0), (0.0, 0.0));
        }
    }

    mod clamp {
        use super::*;

        proptest! {
            #![proptest_config(config())]
            #[test]
            fn matches_finite_differences(x in -10.0..10.0_f64, lo in -5.0..0.0_f64, width in 0.5..5.0_f64, dy in seed()) {
                let hi = lo + width;
                // Away from the ends of the range, where `clamp` has a kink.
                prop_assume!((x - lo).abs() > 0.05 && (x - hi).abs() > 0.05);
                let (dx, d_lo, d_hi) = crate::rules::clamp(x, lo, hi, x.clamp(lo, hi), dy);
                check("dx", dx, dy * derivative(|t| (x + t).clamp(lo, hi), step(x)))?;
                check("dlo", d_lo, dy * derivative(|t| x.clamp(lo + t, hi), step(lo)))?;
                check("dhi", d_hi, dy * derivative(|t| x.clamp(lo, hi + t), step(hi)))?;
            }
        }

        #[test]
        fn the_ends_of_the_range_give_the_seed_to_x() {
            assert_eq!(
                crate::rules::clamp(0.0, 0.0, 1.0, 0.0, 2.0),
                (2.0, 0.0, 0.0)
            );
            assert_eq!(
                crate::rules::clamp(1.0, 0.0, 1.0, 1.0, 2.0),
                (2.0, 0.0, 0.0)
            );
        }
    }

    mod mul_add {
        use super::*;
        use crate::rules::mul_add;

        proptest! {
            #![proptest_config(config())]
            #[test]
            fn matches_finite_differences(
                a in -10.0..10.0_f64,
                b in -10.0..10.0_f64,
                c in -10.0..10.0_f64,
                dy in seed(),
            ) {
                let (da, db, dc) = mul_add(a, b, c, a.mul_add(b, c), dy);
                check("da", da, dy * derivative(|t| (a + t).mul_add(b, c), step(a)))?;
                check("db", db, dy * derivative(|t| a.mul_add(b + t, c), step(b)))?;
                check("dc", dc, dy * derivative(|t| a.mul_add(b, c + t), step(c)))?;
            }
        }
    }

    mod conventions {
        use crate::rules::*;

        #[test]
        fn abs_at_zero_is_zero() {
            assert_eq!(abs(0.0, 0.0, 1.0), 0.0);
            assert_eq!(abs(-0.0, 0.0, 1.0), 0.0);
            assert_eq!(abs(-2.0, 2.0, 3.0), -3.0);
        }

        #[test]
        fn quotients_give_zero_for_a_zero_seed_where_the_denominator_vanishes() {
            // Each rule with its singular points (and a NaN input): `0 / 0` and
            // `0 / NaN` must not leak out.
            type Rule = fn(f64, f64, f64) -> f64;
            let singular: [(Rule, f64, f64); 12] = [
                (sqrt, 0.0, 0.0),
                (cbrt, 0.0, 0.0),
                (ln, 0.0, f64::NEG_INFINITY),
                (ln_1p, -1.0, f64::NEG_INFINITY),
                (log2, 0.0, f64::NEG_INFINITY),
                (log10, 0.0, f64::NEG_INFINITY),
                (asin, 1.0, std::f64::consts::FRAC_PI_2),
                (acos, -1.0, std::f64::consts::PI),
                (acosh, 1.0, 0.0),
                (atanh, 1.0, f64::INFINITY),
                (ln, f64::NAN, f64::NAN),
                (sqrt, f64::INFINITY, f64::INFINITY),
            ];
            for (rule, x, y) in singular {
                assert_eq!(rule(x, y, 0.0), 0.0, "at {x}");
                assert_eq!(rule(x, y, -0.0), 0.0, "at {x}, seed -0");
            }
            // A nonzero seed still gets IEEE's infinity there, and the plain
            // quotient elsewhere.
            assert_eq!(ln(0.0, f64::NEG_INFINITY, 2.0), f64::INFINITY);
            assert_eq!(sqrt(0.0, 0.0, -1.0), f64::NEG_INFINITY);
            assert_eq!(ln(4.0, 4.0_f64.ln(), 2.0), 0.5);
            assert!(ln(f64::NAN, f64::NAN, 2.0).is_nan());
        }

        #[test]
        fn signum_is_zero_everywhere() {
            for x in [0.0, -0.0, 1.0, -1e-300, 1e300] {
                assert_eq!(signum(x, x.signum(), 1.0), 0.0);
            }
        }

        #[test]
        fn min_max_tie_splits_the_seed() {
            assert_eq!(min(1.5, 1.5, 1.5, 2.0), (1.0, 1.0));
            assert_eq!(max(1.5, 1.5, 1.5, 2.0), (1.0, 1.0));
            assert_eq!(min(0.0, -0.0, 0.0, 2.0), (1.0, 1.0));
            assert_eq!(max(-0.0, 0.0, 0.0, 2.0), (1.0, 1.0));
        }

        #[test]
        fn min_max_send_the_seed_to_the_selected_input() {
            assert_eq!(min(1.0, 2.0, 1.0, 3.0), (3.0, 0.0));
            assert_eq!(min(2.0, 1.0, 1.0, 3.0), (0.0, 3.0));
            assert_eq!(max(1.0, 2.0, 2.0, 3.0), (0.0, 3.0));
            assert_eq!(max(2.0, 1.0, 2.0, 3.0), (3.0, 0.0));
        }

        #[test]
        fn min_max_ignore_a_nan_input() {
            let nan = f64::NAN;
            assert_eq!(min(nan, 1.0, nan.min(1.0), 3.0), (0.0, 3.0));
            assert_eq!(min(1.0, nan, 1.0_f64.min(nan), 3.0), (3.0, 0.0));
            assert_eq!(max(nan, 1.0, nan.max(1.0), 3.0), (0.0, 3.0));
            assert_eq!(max(1.0, nan, 1.0_f64.max(nan), 3.0), (3.0, 0.0));
            assert_eq!(min(nan, nan, nan, 3.0), (1.5, 1.5));
            assert_eq!(max(nan, nan, nan, 3.0), (1.5, 1.5));
        }

        #[test]
        fn hypot_at_origin_is_zero() {
            assert_eq!(hypot(0.0, 0.0, 0.0, 1.0), (0.0, 0.0));
            assert_eq!(hypot(-0.0, 0.0, 0.0, 1.0), (0.0, 0.0));
        }

        #[test]
        fn atan2_at_origin_is_zero() {
            assert_eq!(atan2(0.0, 0.0, 0.0, 1.0), (0.0, 0.0));
            assert_eq!(atan2(0.0, -0.0, 0.0_f64.atan2(-0.0), 1.0), (0.0, 0.0));
        }

        #[test]
        fn atan2_near_origin_does_not_underflow() {
            let (da, db) = atan2(1e-200, 0.0, 1e-200_f64.atan2(0.0), 1.0);
            assert_eq!((da, db), (0.0, -1e200));
        }

        #[test]
        fn powf_at_zero_base() {
            // `0^b` with `b > 1` is flat at 0; its exponent adjoint is 0 by convention.
            assert_eq!(powf(0.0, 2.0, 0.0, 1.0), (0.0, 0.0));
            assert_eq!(powf(0.0, 1.0, 0.0, 1.0), (1.0, 0.0));
            // `0^0 == 1`, and `a^0` is constant in `a`.
            assert_eq!(powf(0.0, 0.0, 1.0, 1.0).0, 0.0);
            // The slope of `sqrt` at 0 is infinite.
            assert_eq!(powf(0.0, 0.5, 0.0, 1.0), (f64::INFINITY, 0.0));
        }

        #[test]
        fn powf_exponent_adjoint_is_nan_for_negative_base() {
            let (da, db) = powf(-2.0, 2.0, 4.0, 1.0);
            assert_eq!(da, -4.0);
            assert!(db.is_nan());
        }

        #[test]
        fn rem_uses_the_quotient_of_the_returned_remainder() {
            let y = 1.0_f64 % 0.1;
            assert_eq!(rem(1.0, 0.1, y, 1.0), (1.0, -9.0));
            assert_eq!(rem(-5.5, 2.0, -5.5_f64 % 2.0, 1.0), (1.0, 2.0));
            assert_eq!(rem(5.5, -2.0, 5.5_f64 % -2.0, 1.0), (1.0, 2.0));
        }

        #[test]
        fn singular_points_follow_ieee() {
            assert_eq!(sqrt(0.0, 0.0, 1.0), f64::INFINITY);
            assert_eq!(cbrt(0.0, 0.0, -1.0), f64::NEG_INFINITY);
            assert_eq!(ln(0.0, f64::NEG_INFINITY, 1.0), f64::INFINITY);
            assert_eq!(asin(1.0, 1.0_f64.asin(), 1.0), f64::INFINITY);
            assert_eq!(recip(0.0, f64::INFINITY, 1.0), f64::NEG_INFINITY);
            assert_eq!(powi(0.0, -1, f64::INFINITY, 1.0), f64::NEG_INFINITY);
        }
    }

    /// A zero seed gives exactly zero at the singular points of the guarded rules.
    mod zero_seed {
        use crate::rules::*;

        fn unary(rule: fn(f64, f64, f64) -> f64, primitive: fn(f64) -> f64, x: f64) {
            let adjoint = rule(x, primitive(x), 0.0);
            assert_eq!(adjoint, 0.0, "at x = {x}");
        }

        #[test]
        fn unary_rules() {
            unary(sqrt, f64::sqrt, 0.0);
            unary(sqrt, f64::sqrt, -1.0);
            unary(cbrt, f64::cbrt, 0.0);
            unary(ln, f64::ln, 0.0);
            unary(ln_1p, f64::ln_1p, -1.0);
            unary(log2, f64::log2, 0.0);
            unary(log10, f64::log10, 0.0);
            for x in [-1.0, 1.0] {
                unary(asin, f64::asin, x);
                unary(acos, f64::acos, x);
                unary(atanh, f64::atanh, x);
            }
            unary(acosh, f64::acosh, 1.0);
            unary(recip, f64::recip, 0.0);
            unary(recip, f64::recip, -0.0);
        }

        /// Where the output (or the derivative) overflows, a zero seed still gives 0.
        #[test]
        fn overflowing_rules() {
            unary(exp, f64::exp, 1000.0);
            unary(exp2, f64::exp2, 2000.0);
            unary(exp_m1, f64::exp_m1, 1000.0);
            unary(sinh, f64::sinh, 1000.0);
            unary(sinh, f64::sinh, -1000.0);
            unary(cosh, f64::cosh, 1000.0);
            unary(tan, f64::tan, std::f64::consts::FRAC_PI_2);
        }

        #[test]
        fn powi_at_zero() {
            for n in [-3, -1, 0, 1] {
                assert_eq!(powi(0.0, n, 0.0_f64.powi(n), 0.0), 0.0, "n = {n}");
            }
        }

        #[test]
        fn binary_rules() {
            for (a, b) in [(0.0, 0.5), (0.0, -1.0), (0.0, 0.0), (-1.0, 0.5)] {
                assert_eq!(powf(a, b, a.powf(b), 0.0), (0.0, 0.0), "powf({a}, {b})");
            }
            for (a, b) in [(0.0, 2.0), (2.0, 1.0), (2.0, 0.0), (0.0, 1.0)] {
                assert_eq!(log(a, b, a.log(b), 0.0), (0.0, 0.0), "log({a}, {b})");
            }
            assert_eq!(hypot(0.0, 0.0, 0.0, 0.0), (0.0, 0.0));
            assert_eq!(atan2(0.0, 0.0, 0.0, 0.0), (0.0, 0.0));
        }
    }

    /// The `f32` instances agree with the `f64` ones at the same points.
    mod f32_instances {
        use super::*;
        use crate::rules;

        /// Checks an `f32` result against the `f64` one, to `f32` precision.
        fn agree(what: &str, single: f32, double: f64) -> Result<(), TestCaseError> {
            let single = f64::from(single);
            prop_assert!(
                mixed_error(single, double) <= 1e-5,
                "{what}: f32 gives {single:e}, f64 gives {double:e}"
            );
            Ok(())
        }

        proptest! {
            #![proptest_config(config())]
            #[test]
            fn unary_rules(x in -3.0..3.0_f32, dy in -2.0..2.0_f32) {
                let (xd, dyd) = (f64::from(x), f64::from(dy));
                agree("sin", rules::sin(x, x.sin(), dy), rules::sin(xd, xd.sin(), dyd))?;
                agree("exp", rules::exp(x, x.exp(), dy), rules::exp(xd, xd.exp(), dyd))?;
                agree("tanh", rules::tanh(x, x.tanh(), dy), rules::tanh(xd, xd.tanh(), dyd))?;
                let (xa, xad) = (x.abs() + 0.1, xd.abs() + 0.1);
                agree("sqrt", rules::sqrt(xa, xa.sqrt(), dy), rules::sqrt(xad, xad.sqrt(), dyd))?;
                agree("powi", rules::powi(x, 3, x.powi(3), dy), rules::powi(xd, 3, xd.powi(3), dyd))?;
            }

            #[test]
            fn binary_rules(a in 0.1..3.0_f32, b in -3.0..3.0_f32, dy in -2.0..2.0_f32) {
                let (ad, bd, dyd) = (f64::from(a), f64::from(b), f64::from(dy));
                let (da, db) = rules::powf(a, b, a.powf(b), dy);
                let (dad, dbd) = rules::powf(ad, bd, ad.powf(bd), dyd);
                agree("powf da", da, dad)?;
                agree("powf db", db, dbd)?;
                let (da, db) = rules::atan2(a, b, a.atan2(b), dy);
                let (dad, dbd) = rules::atan2(ad, bd, ad.atan2(bd), dyd);
                agree("atan2 da", da, dad)?;
                agree("atan2 db", db, dbd)?;
                let (da, db) = rules::hypot(a, b, a.hypot(b), dy);
                let (dad, dbd) = rules::hypot(ad, bd, ad.hypot(bd), dyd);
                agree("hypot da", da, dad)?;
                agree("hypot db", db, dbd)?;
            }
        }

        #[test]
        fn conventions() {
            assert_eq!(rules::abs(0.0_f32, 0.0, 1.0), 0.0);
            assert_eq!(rules::max(1.0_f32, 1.0, 1.0, 1.0), (0.5, 0.5));
            assert_eq!(rules::sqrt(0.0_f32, 0.0, 0.0), 0.0);
        }
    }
}
