//! Second-order rules: the derivative of each primitive's pullback along a
//! tangent, which `_hvp` (forward mode over reverse mode) needs.
//!
//! A pullback `dx = pb(reads, dy)` is linear in its seed, so its tangent is
//! `pb(reads, t_dy)` (the first-order rule again) plus the part that moves
//! with the primitive's inputs, `dy · f''(x) · t_x`, which is what these
//! functions return. Each takes the pullback's reads (as
//! `ad_runtime::__private` passes them: the input `x`, or the output `y` for
//! rules that read it), the seed `dy`, then the tangent of each float read,
//! and returns one value per float input, like the pullback. Primitives
//! that are piecewise linear (`abs`, `min`, `max`, `clamp`, `copysign`, `%`,
//! `fract`, …) have no second-order part, and no function here.
//!
//! A zero seed gives zero, even where the second derivative is infinite, as
//! the first-order rules do.

use crate::Float;

/// `y = √x`: `dy · (−t_y / (2y²))`, with `t_y` the tangent of `y`.
///
/// ```
/// // f = √x at x = 4: f'' = −1/(4 · 8) = −1/32; t_y = t_x / (2√x) = t_x / 4.
/// let t_x = 2.0;
/// assert_eq!(ad_runtime::__private::curvature::sqrt(2.0, 1.0, t_x / 4.0), -t_x / 32.0);
/// ```
#[inline]
pub fn sqrt<T: Float>(y: T, dy: T, t_y: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    -dy * t_y / (T::TWO * y * y)
}

/// `y = ∛x`: the pullback `dy / (3y²)` moves by `−2 dy t_y / (3y³)`.
#[inline]
pub fn cbrt<T: Float>(y: T, dy: T, t_y: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    -(T::TWO * dy * t_y) / (T::from_i32(3) * y * y * y)
}

/// `y = eˣ`: the pullback `dy · y` moves by `dy · t_y`.
#[inline]
pub fn exp<T: Float>(_y: T, dy: T, t_y: T) -> T {
    dy * t_y
}

/// `y = 2ˣ`: the pullback `dy · y · ln 2` moves by `dy · t_y · ln 2`.
#[inline]
pub fn exp2<T: Float>(_y: T, dy: T, t_y: T) -> T {
    dy * t_y * T::LN_2
}

/// `y = eˣ − 1`: the pullback `dy · (y + 1)` moves by `dy · t_y`.
#[inline]
pub fn exp_m1<T: Float>(_y: T, dy: T, t_y: T) -> T {
    dy * t_y
}

/// `y = tan x`: the pullback `dy · (1 + y²)` moves by `2 dy y t_y`.
#[inline]
pub fn tan<T: Float>(y: T, dy: T, t_y: T) -> T {
    T::TWO * dy * y * t_y
}

/// `y = tanh x`: the pullback `dy · (1 − y²)` moves by `−2 dy y t_y`.
#[inline]
pub fn tanh<T: Float>(y: T, dy: T, t_y: T) -> T {
    -(T::TWO * dy * y * t_y)
}

/// `y = 1/x`: the pullback `−dy · y²` moves by `−2 dy y t_y`.
#[inline]
pub fn recip<T: Float>(y: T, dy: T, t_y: T) -> T {
    -(T::TWO * dy * y * t_y)
}

/// `y = ln x`: the pullback `dy / x` moves by `−dy t_x / x²`.
#[inline]
pub fn ln<T: Float>(x: T, dy: T, t_x: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    -dy * t_x / (x * x)
}

/// `y = ln(1 + x)`: the pullback `dy / (1 + x)` moves by `−dy t_x / (1 + x)²`.
#[inline]
pub fn ln_1p<T: Float>(x: T, dy: T, t_x: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    let u = T::ONE + x;
    -dy * t_x / (u * u)
}

/// `y = log₂ x`: the pullback `dy / (x ln 2)` moves by `−dy t_x / (x² ln 2)`.
#[inline]
pub fn log2<T: Float>(x: T, dy: T, t_x: T) -> T {
    ln(x, dy, t_x) / T::LN_2
}

/// `y = log₁₀ x`: the pullback `dy / (x ln 10)` moves by `−dy t_x / (x² ln 10)`.
#[inline]
pub fn log10<T: Float>(x: T, dy: T, t_x: T) -> T {
    ln(x, dy, t_x) / T::LN_10
}

/// `y = sin x`: the pullback `dy cos x` moves by `−dy sin x · t_x`.
#[inline]
pub fn sin<T: Float>(x: T, dy: T, t_x: T) -> T {
    -(dy * x.sin() * t_x)
}

/// `y = cos x`: the pullback `−dy sin x` moves by `−dy cos x · t_x`.
#[inline]
pub fn cos<T: Float>(x: T, dy: T, t_x: T) -> T {
    -(dy * x.cos() * t_x)
}

/// `y = asin x`: the pullback `dy / √(1 − x²)` moves by `dy x t_x / (1 − x²)^{3/2}`.
#[inline]
pub fn asin<T: Float>(x: T, dy: T, t_x: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    let u = T::ONE - x * x;
    dy * x * t_x / (u * u.sqrt())
}

/// `y = acos x`: minus `asin`'s.
#[inline]
pub fn acos<T: Float>(x: T, dy: T, t_x: T) -> T {
    -asin(x, dy, t_x)
}

/// `y = atan x`: the pullback `dy / (1 + x²)` moves by `−2 dy x t_x / (1 + x²)²`.
#[inline]
pub fn atan<T: Float>(x: T, dy: T, t_x: T) -> T {
    let u = T::ONE + x * x;
    -(T::TWO * dy * x * t_x) / (u * u)
}

/// `y = sinh x`: the pullback `dy cosh x` moves by `dy sinh x · t_x`.
#[inline]
pub fn sinh<T: Float>(x: T, dy: T, t_x: T) -> T {
    dy * x.sinh() * t_x
}

/// `y = cosh x`: the pullback `dy sinh x` moves by `dy cosh x · t_x`.
#[inline]
pub fn cosh<T: Float>(x: T, dy: T, t_x: T) -> T {
    dy * x.cosh() * t_x
}

/// `y = asinh x`: the pullback `dy / √(x² + 1)` moves by `−dy x t_x / (x² + 1)^{3/2}`.
#[inline]
pub fn asinh<T: Float>(x: T, dy: T, t_x: T) -> T {
    let u = x * x + T::ONE;
    -(dy * x * t_x) / (u * u.sqrt())
}

/// `y = acosh x`: the pullback `dy / √(x² − 1)` moves by `−dy x t_x / (x² − 1)^{3/2}`.
#[inline]
pub fn acosh<T: Float>(x: T, dy: T, t_x: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    let u = x * x - T::ONE;
    -(dy * x * t_x) / (u * u.sqrt())
}

/// `y = atanh x`: the pullback `dy / (1 − x²)` moves by `2 dy x t_x / (1 − x²)²`.
#[inline]
pub fn atanh<T: Float>(x: T, dy: T, t_x: T) -> T {
    if dy == T::ZERO {
        return T::ZERO;
    }
    let u = T::ONE - x * x;
    T::TWO * dy * x * t_x / (u * u)
}

/// `y = xⁿ`: the pullback `dy n xⁿ⁻¹` moves by `dy n (n − 1) xⁿ⁻² t_x`.
#[inline]
pub fn powi<T: Float>(x: T, n: i32, _y: T, dy: T, t_x: T, _t_y: T) -> T {
    if n == 0 || n == 1 || dy == T::ZERO {
        return T::ZERO;
    }
    let n_f = T::from_i32(n);
    dy * n_f * (n_f - T::ONE) * x.powi(n.saturating_sub(2)) * t_x
}

/// `y = aᵇ`: how the pullback `(dy b aᵇ⁻¹, dy y ln a)` moves with `t_a`, `t_b`
/// (and `t_y`, the tangent of `y`), with the first-order rule's conventions
/// (`b == 0` gives the base nothing, `y == 0` the exponent nothing).
#[inline]
pub fn powf<T: Float>(a: T, b: T, y: T, dy: T, t_a: T, t_b: T, t_y: T) -> (T, T) {
    if dy == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    // d(b aᵇ⁻¹) = t_b aᵇ⁻¹ + b ((b − 1) aᵇ⁻² t_a + aᵇ⁻¹ ln a · t_b).
    let da = if b == T::ZERO {
        dy * t_b * a.powf(-T::ONE)
    } else {
        let a_b1 = a.powf(b - T::ONE);
        let by_a = if t_a == T::ZERO {
            T::ZERO
        } else {
            (b - T::ONE) * a.powf(b - T::TWO) * t_a
        };
        let by_b = if t_b == T::ZERO {
            T::ZERO
        } else {
            a_b1 * a.ln() * t_b
        };
        dy * (t_b * a_b1 + b * (by_a + by_b))
    };
    // d(y ln a) = t_y ln a + y t_a / a.
    let db = if y == T::ZERO {
        T::ZERO
    } else {
        dy * (t_y * a.ln() + y * t_a / a)
    };
    (da, db)
}

/// `y = log_b a = ln a / ln b`: how the pullback `(dy / (a ln b), −dy y / (b ln b))`
/// moves.
#[inline]
pub fn log<T: Float>(a: T, b: T, y: T, dy: T, t_a: T, t_b: T, t_y: T) -> (T, T) {
    if dy == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    let ln_b = b.ln();
    let u = a * ln_b;
    // d(1 / (a ln b)) = −(t_a ln b + a t_b / b) / (a ln b)².
    let da = -dy * (t_a * ln_b + a * t_b / b) / (u * u);
    // d(−y / (b ln b)) = −(t_y b ln b − y t_b (ln b + 1)) / (b ln b)².
    let v = b * ln_b;
    let db = -dy * (t_y * v - y * t_b * (ln_b + T::ONE)) / (v * v);
    (da, db)
}

/// `y = atan2(a, b)`: how the pullback `(dy b / r², −dy a / r²)`, `r² = a² + b²`,
/// moves; `(0, 0)` at the origin, as the first-order rule.
#[inline]
pub fn atan2<T: Float>(a: T, b: T, dy: T, t_a: T, t_b: T) -> (T, T) {
    let r2 = a * a + b * b;
    if r2 == T::ZERO || dy == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    let dr2 = T::TWO * (a * t_a + b * t_b);
    let da = dy * (t_b * r2 - b * dr2) / (r2 * r2);
    let db = -dy * (t_a * r2 - a * dr2) / (r2 * r2);
    (da, db)
}

/// `y = hypot(a, b)`: how the pullback `(dy a / y, dy b / y)` moves; `(0, 0)` where
/// `y == 0`, as the first-order rule.
#[inline]
pub fn hypot<T: Float>(a: T, b: T, y: T, dy: T, t_a: T, t_b: T, t_y: T) -> (T, T) {
    if y == T::ZERO || dy == T::ZERO {
        return (T::ZERO, T::ZERO);
    }
    let y2 = y * y;
    (dy * (t_a * y - a * t_y) / y2, dy * (t_b * y - b * t_y) / y2)
}

/// `y = a · b + c`: the pullback `(dy b, dy a, dy)` moves by `(dy t_b, dy t_a, 0)`.
#[inline]
pub fn mul_add<T: Float>(_a: T, _b: T, dy: T, t_a: T, t_b: T) -> (T, T, T) {
    (dy * t_b, dy * t_a, T::ZERO)
}

#[cfg(test)]
mod tests {
    use crate::rules;

    /// The tangent of the first-order rule along `t_x`, by central differences
    /// (the output moved with the input), against `curvature` plus the
    /// seed's part (zero here: the seed is fixed).
    fn along(pullback: impl Fn(f64) -> f64, x: f64, t_x: f64) -> f64 {
        let h = 1e-6;
        (pullback(x + h * t_x) - pullback(x - h * t_x)) / (2.0 * h)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn unary_rules_are_the_derivatives_of_the_pullbacks() {
        type Rule = fn(f64, f64, f64) -> f64;
        type Curv = fn(f64, f64, f64) -> f64;
        /// The primitive, its pullback taking `(x, y, dy)`, its curvature,
        /// and whether it reads the output.
        type Case = (fn(f64) -> f64, Rule, Curv, bool);
        let cases: [Case; 22] = [
            (f64::sqrt, rules::sqrt, super::sqrt, true),
            (f64::cbrt, rules::cbrt, super::cbrt, true),
            (f64::exp, rules::exp, super::exp, true),
            (f64::exp2, rules::exp2, super::exp2, true),
            (f64::exp_m1, rules::exp_m1, super::exp_m1, true),
            (f64::tan, rules::tan, super::tan, true),
            (f64::tanh, rules::tanh, super::tanh, true),
            (f64::recip, rules::recip, super::recip, true),
            (f64::ln, rules::ln, super::ln, false),
            (f64::ln_1p, rules::ln_1p, super::ln_1p, false),
            (f64::log2, rules::log2, super::log2, false),
            (f64::log10, rules::log10, super::log10, false),
            (f64::sin, rules::sin, super::sin, false),
            (f64::cos, rules::cos, super::cos, false),
            (f64::asin, rules::asin, super::asin, false),
            (f64::acos, rules::acos, super::acos, false),
            (f64::atan, rules::atan, super::atan, false),
            (f64::sinh, rules::sinh, super::sinh, false),
            (f64::cosh, rules::cosh, super::cosh, false),
            (f64::asinh, rules::asinh, super::asinh, false),
            (f64::atanh, rules::atanh, super::atanh, false),
            (f64::acosh, rules::acosh, super::acosh, false),
        ];
        for (index, (f, rule, curvature, reads_output)) in cases.into_iter().enumerate() {
            // acosh needs x > 1; the others are fine at 0.3 and 0.7.
            let points: &[f64] = if index == 21 {
                &[1.5, 2.5]
            } else {
                &[0.3, 0.7]
            };
            for &x in points {
                let (dy, t_x) = (1.3, -0.8);
                let pullback = |x: f64| rule(x, f(x), dy);
                let expected = along(pullback, x, t_x);
                let y = f(x);
                let t_y = rule(x, y, t_x);
                let read = if reads_output { (y, t_y) } else { (x, t_x) };
                let got = curvature(read.0, dy, read.1);
                assert!(
                    close(got, expected),
                    "case {index} at {x}: {got} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn binary_rules_are_the_derivatives_of_the_pullbacks() {
        let (a, b, dy) = (1.3, 0.7, 0.9);
        let (t_a, t_b) = (0.4, -1.1);
        let moved = |h: f64| (a + h * t_a, b + h * t_b);
        let diff = |pb: &dyn Fn(f64, f64) -> (f64, f64)| {
            let h = 1e-6;
            let (p, q) = (moved(h), moved(-h));
            let (hi, lo) = (pb(p.0, p.1), pb(q.0, q.1));
            ((hi.0 - lo.0) / (2.0 * h), (hi.1 - lo.1) / (2.0 * h))
        };
        let check = |got: (f64, f64), want: (f64, f64), what: &str| {
            assert!(
                close(got.0, want.0) && close(got.1, want.1),
                "{what}: {got:?} vs {want:?}"
            );
        };
        // Tangent of the output: the pullback with the seed 1, against the tangents.
        let t_out = |pb: (f64, f64)| pb.0 * t_a + pb.1 * t_b;

        let powf = |a: f64, b: f64| rules::powf(a, b, a.powf(b), dy);
        let y = a.powf(b);
        let t_y = t_out(rules::powf(a, b, y, 1.0));
        check(super::powf(a, b, y, dy, t_a, t_b, t_y), diff(&powf), "powf");

        let log = |a: f64, b: f64| rules::log(a, b, a.log(b), dy);
        let y = a.log(b);
        let t_y = t_out(rules::log(a, b, y, 1.0));
        check(super::log(a, b, y, dy, t_a, t_b, t_y), diff(&log), "log");

        let atan2 = |a: f64, b: f64| rules::atan2(a, b, a.atan2(b), dy);
        check(super::atan2(a, b, dy, t_a, t_b), diff(&atan2), "atan2");

        let hypot = |a: f64, b: f64| rules::hypot(a, b, a.hypot(b), dy);
        let y = a.hypot(b);
        let t_y = t_out(rules::hypot(a, b, y, 1.0));
        check(
            super::hypot(a, b, y, dy, t_a, t_b, t_y),
            diff(&hypot),
            "hypot",
        );

        // powi: one float input.
        for n in [-3, 0, 1, 2, 5] {
            let pb = |x: f64| rules::powi(x, n, x.powi(n), dy);
            let expected = along(pb, a, t_a);
            let t_y = rules::powi(a, n, a.powi(n), t_a);
            let got = super::powi(a, n, a.powi(n), dy, t_a, t_y);
            assert!(close(got, expected), "powi {n}: {got} vs {expected}");
        }
        // mul_add: bilinear.
        let (da, db, dc) = super::mul_add(a, b, dy, t_a, t_b);
        assert_eq!((da, db, dc), (dy * t_b, dy * t_a, 0.0));
    }

    #[test]
    fn a_zero_seed_gives_zero_where_the_second_derivative_is_infinite() {
        assert_eq!(super::sqrt(0.0, 0.0, 1.0), 0.0);
        assert_eq!(super::ln(0.0, 0.0, 1.0), 0.0);
        assert_eq!(super::atanh(1.0, 0.0, 1.0), 0.0);
        assert_eq!(super::powf(0.0, 0.5, 0.0, 0.0, 1.0, 1.0, 1.0), (0.0, 0.0));
    }
}
