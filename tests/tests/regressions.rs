//! Programs the random program generator (`ad_testkit::programs`) found wrong or
//! rejected, shrunk by it, each checked against its closed form, finite
//! differences and the dot-product test.

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar};

/// A loop that overwrites `x` with a constant: with no trip, the seed of `x`
/// reaches its initial value (the adjoint was 0 for `n = 0`).
#[differentiate]
fn overwritten_by_a_constant(a: f64, n: usize) -> f64 {
    let mut x = a * a;
    for i in 0..n {
        x = i as f64;
    }
    x
}

#[test]
fn a_zero_trip_loop_passes_the_seed_through() {
    for n in [0, 1, 3] {
        let grad = check_scalar(
            |p| overwritten_by_a_constant(p[0], n),
            |p, s| {
                let (out, d_a) = overwritten_by_a_constant_vjp(p[0], n, s);
                (out, vec![d_a])
            },
            &[3.0],
        );
        let expected = if n == 0 { 6.0 } else { 0.0 };
        assert_close(&grad, &[expected]);
    }
}

/// An `if` that writes a buffer which never reaches the output, and assigns a
/// variable that is not read afterwards (its expansion did not compile).
#[differentiate]
#[allow(unused_assignments)]
fn writes_that_do_not_matter(a: f64, xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    let mut x = a;
    if a > 0.5 {
        x -= 0.5;
        v[0] += x;
    }
    a * v[1]
}

#[test]
fn an_if_kept_for_its_writes_yields_nothing() {
    let grad = check_scalar(
        |p| writes_that_do_not_matter(p[0], &p[1..]),
        |p, s| {
            let mut d_xs = vec![0.0; 2];
            let (out, d_a) = writes_that_do_not_matter_vjp(p[0], &p[1..], &mut d_xs, s);
            let mut grad = vec![d_a];
            grad.extend(d_xs);
            (out, grad)
        },
        &[0.75, 1.5, -2.0],
    );
    assert_close(&grad, &[-2.0, 0.0, 0.75]);
}

/// A cast on the left of `<` (printed without its parentheses, it did not
/// parse), a typed literal bound to a variable, and a literal assigned to a
/// variable, both used as method receivers (their type was lost).
#[differentiate]
#[allow(unused_assignments)]
fn literals_and_casts(a0: f64, n: usize) -> f64 {
    let x: f64 = 0.5;
    let mut y = a0;
    y = -0.25;
    let z = if (n as f64) < a0 { a0 } else { 2.0 * a0 };
    x.abs() * z + y.abs() * a0
}

#[test]
fn casts_and_literals_keep_their_types() {
    for (a0, n) in [(3.0, 2), (0.5, 2)] {
        let grad = check_scalar(
            |p| literals_and_casts(p[0], n),
            |p, s| {
                let (out, d) = literals_and_casts_vjp(p[0], n, s);
                (out, vec![d])
            },
            &[a0],
        );
        let expected = if (n as f64) < a0 {
            0.5 + 0.25
        } else {
            1.0 + 0.25
        };
        assert_close(&grad, &[expected]);
    }
}
