//! Long and deeply nested functions build with rustc in debug (full debug
//! info) and release, and their gradients are right (issue 21: the `_vjp` of
//! a few hundred statements crashed rustc's debug info writer). The functions
//! come from `ad_testkit::long` through `build.rs`; their reference gradient
//! is computed there by dual numbers, without the macro. Each is also checked
//! against finite differences and by the dot-product test, and through the
//! split API.

use ad_testkit::long::Family;
use ad_tests::{check_scalar, check_vector};

/// Relative closeness: the reference sums in another order.
fn assert_close(what: &str, got: f64, want: f64) {
    let scale = want.abs().max(1.0);
    assert!(
        (got - want).abs() <= 1e-10 * scale,
        "{what}: got {got}, want {want}"
    );
}

/// A function of two scalars: its `_vjp` against the reference, finite
/// differences and the dot-product test, and its split API against `_vjp`.
fn check_scalars(
    family: Family,
    f: impl Fn(f64, f64) -> f64,
    vjp: impl Fn(f64, f64, f64) -> (f64, f64, f64),
    split: impl Fn(f64, f64, f64) -> (f64, f64, f64),
) {
    // Both sides of `if a0 > b0`.
    for (a0, b0) in [(0.7, 0.3), (-0.4, 0.9)] {
        let (out, d_a0, d_b0) = vjp(a0, b0, 1.0);
        assert_eq!(out.to_bits(), f(a0, b0).to_bits(), "{family:?}: the output");
        let (value, along_a0) = family.directional(&[a0], b0, &[1.0], 0.0);
        let (_, along_b0) = family.directional(&[a0], b0, &[0.0], 1.0);
        assert_close("the value", out, value);
        assert_close("d_a0", d_a0, along_a0);
        assert_close("d_b0", d_b0, along_b0);
        let (split_out, split_a0, split_b0) = split(a0, b0, 1.0);
        assert_eq!(split_out.to_bits(), out.to_bits());
        assert_close("the split API's d_a0", split_a0, d_a0);
        assert_close("the split API's d_b0", split_b0, d_b0);
        check_scalar(
            |p| f(p[0], p[1]),
            |p, seed| {
                let (out, d_a0, d_b0) = vjp(p[0], p[1], seed);
                (out, vec![d_a0, d_b0])
            },
            &[a0, b0],
        );
    }
}

/// A function of a buffer and a scalar, likewise.
fn check_buffer(
    family: Family,
    f: impl Fn(&[f64], f64) -> f64,
    vjp: impl Fn(&[f64], &mut [f64], f64, f64) -> (f64, f64),
    split: impl Fn(&[f64], &mut [f64], f64, f64) -> (f64, f64),
) {
    let xs = [0.5, -0.25, 0.8];
    let b0 = 0.3;
    let mut d_xs = [0.0; 3];
    let (out, d_b0) = vjp(&xs, &mut d_xs, b0, 1.0);
    assert_eq!(
        out.to_bits(),
        f(&xs, b0).to_bits(),
        "{family:?}: the output"
    );
    for k in 0..xs.len() {
        let mut direction = [0.0; 3];
        direction[k] = 1.0;
        let (value, along) = family.directional(&xs, b0, &direction, 0.0);
        assert_close("the value", out, value);
        assert_close("d_xs", d_xs[k], along);
    }
    let (_, along_b0) = family.directional(&xs, b0, &[0.0; 3], 1.0);
    assert_close("d_b0", d_b0, along_b0);
    let mut split_d_xs = [0.0; 3];
    let (split_out, split_b0) = split(&xs, &mut split_d_xs, b0, 1.0);
    assert_eq!(split_out.to_bits(), out.to_bits());
    assert_close("the split API's d_b0", split_b0, d_b0);
    for k in 0..xs.len() {
        assert_close("the split API's d_xs", split_d_xs[k], d_xs[k]);
    }
    let mut point = xs.to_vec();
    point.push(b0);
    check_vector(
        |p| vec![f(&p[..3], p[3])],
        |p, seed| {
            let mut d_xs = vec![0.0; 3];
            let (out, d_b0) = vjp(&p[..3], &mut d_xs, p[3], seed[0]);
            d_xs.push(d_b0);
            (vec![out], d_xs)
        },
        &point,
        &[1.0],
    );
}

macro_rules! scalars {
    ($test:ident, $family:expr, $f:ident, $vjp:ident, $forward:ident) => {
        #[test]
        fn $test() {
            check_scalars($family, $f, $vjp, |a0, b0, seed| {
                let (out, pullback) = $forward(a0, b0);
                let (d_a0, d_b0) = pullback(seed);
                (out, d_a0, d_b0)
            });
        }
    };
}

macro_rules! buffer {
    ($test:ident, $family:expr, $f:ident, $vjp:ident, $forward:ident) => {
        #[test]
        fn $test() {
            check_buffer($family, $f, $vjp, |xs, d_xs, b0, seed| {
                let (out, pullback) = $forward(xs, b0);
                (out, pullback(xs, d_xs, seed))
            });
        }
    };
}

/// The generated functions: their statements are written the way generated
/// numerical code is (`a = a * 0.999 + …`), which clippy would restyle.
#[allow(clippy::assign_op_pattern, clippy::needless_range_loop)]
mod long {
    use super::{Family, check_buffer, check_scalars};
    include!(concat!(env!("OUT_DIR"), "/long.rs"));
}
