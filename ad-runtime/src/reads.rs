//! The rules as generated code calls them: each takes only what it reads, so
//! that the adjoint keeps nothing else alive (in a loop, tapes nothing else).
//!
//! [`crate::rules`] documents every rule with the uniform signature `(inputs…,
//! output, seed)`; these forward to it, filling the operands it ignores with
//! one it has (the rule does not read them).

use crate::Float;
use crate::rules;

macro_rules! reads_input {
    ($($name:ident)*) => {$(
        #[doc = concat!("[`rules::", stringify!($name), "`], which reads only its input.")]
        #[inline(always)]
        pub fn $name<T: Float>(x: T, dy: T) -> T {
            rules::$name(x, x, dy)
        }
    )*};
}

macro_rules! reads_output {
    ($($name:ident)*) => {$(
        #[doc = concat!("[`rules::", stringify!($name), "`], which reads only its output.")]
        #[inline(always)]
        pub fn $name<T: Float>(y: T, dy: T) -> T {
            rules::$name(y, y, dy)
        }
    )*};
}

macro_rules! reads_inputs {
    ($($name:ident)*) => {$(
        #[doc = concat!("[`rules::", stringify!($name), "`], which reads only its inputs.")]
        #[inline(always)]
        pub fn $name<T: Float>(a: T, b: T, dy: T) -> (T, T) {
            rules::$name(a, b, a, dy)
        }
    )*};
}

reads_input!(ln ln_1p log2 log10 sin cos asin acos atan sinh cosh asinh acosh atanh abs);
reads_output!(sqrt cbrt exp exp2 exp_m1 tan tanh recip);
reads_inputs!(atan2 min max);

/// [`rules::signum`], which reads nothing: its adjoint is zero.
#[inline(always)]
pub fn signum<T: Float>(dy: T) -> T {
    rules::signum(dy, dy, dy)
}

macro_rules! reads_nothing {
    ($($name:ident)*) => {$(
        #[doc = concat!("[`rules::", stringify!($name), "`], which reads only the seed.")]
        #[inline(always)]
        pub fn $name<T: Float>(dy: T) -> T {
            rules::$name(dy, dy, dy)
        }
    )*};
}

reads_nothing!(fract to_radians to_degrees);

/// [`rules::midpoint`], which reads only the seed.
#[inline(always)]
pub fn midpoint<T: Float>(dy: T) -> (T, T) {
    rules::midpoint(dy, dy, dy, dy)
}

/// [`rules::rem_euclid`], which reads its inputs and its output.
#[inline(always)]
pub fn rem_euclid<T: Float>(a: T, b: T, y: T, dy: T) -> (T, T) {
    rules::rem_euclid(a, b, y, dy)
}

/// [`rules::copysign`], which reads only its inputs.
#[inline(always)]
pub fn copysign<T: Float>(x: T, sign: T, dy: T) -> (T, T) {
    rules::copysign(x, sign, x, dy)
}

/// [`rules::clamp`], which reads only its inputs.
#[inline(always)]
pub fn clamp<T: Float>(x: T, min: T, max: T, dy: T) -> (T, T, T) {
    rules::clamp(x, min, max, x, dy)
}

/// [`rules::mul_add`], which reads only `a` and `b`.
#[inline(always)]
pub fn mul_add<T: Float>(a: T, b: T, dy: T) -> (T, T, T) {
    rules::mul_add(a, b, a, a, dy)
}

#[cfg(test)]
mod tests {
    use crate::rules;

    /// Each adapter gives what the rule gives with every operand.
    #[test]
    fn adapters_agree_with_the_rules() {
        let (x, dy) = (0.7_f64, -1.3);
        assert_eq!(super::sin(x, dy), rules::sin(x, x.sin(), dy));
        assert_eq!(super::ln(x, dy), rules::ln(x, x.ln(), dy));
        assert_eq!(super::abs(-x, dy), rules::abs(-x, x, dy));
        assert_eq!(super::exp(x.exp(), dy), rules::exp(x, x.exp(), dy));
        assert_eq!(super::tanh(x.tanh(), dy), rules::tanh(x, x.tanh(), dy));
        assert_eq!(super::sqrt(x.sqrt(), dy), rules::sqrt(x, x.sqrt(), dy));
        assert_eq!(super::max(x, 0.2, dy), rules::max(x, 0.2, x, dy));
        assert_eq!(
            super::atan2(x, 0.2, dy),
            rules::atan2(x, 0.2, x.atan2(0.2), dy)
        );
        assert_eq!(
            super::mul_add(x, 0.2, dy),
            rules::mul_add(x, 0.2, 3.0, x.mul_add(0.2, 3.0), dy)
        );
        assert_eq!(super::signum(dy), 0.0);
    }
}
