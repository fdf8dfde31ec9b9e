//! The textbook cases, with exact values.

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar, check_vector};

#[differentiate]
fn square_of_sum(x: f64, y: f64) -> f64 {
    (x + y) * (x + y)
}

#[test]
fn square_of_sum_at_2_3_is_10_10() {
    let grad = check_scalar(
        |p| square_of_sum(p[0], p[1]),
        |p, s| {
            let (out, dx, dy) = square_of_sum_vjp(p[0], p[1], s);
            (out, vec![dx, dy])
        },
        &[2.0, 3.0],
    );
    assert_eq!(grad, [10.0, 10.0]);
}

#[differentiate]
fn square_plus_self(x: f64) -> f64 {
    x * x + x
}

#[test]
fn square_plus_self_at_3_is_7() {
    let grad = check_scalar(
        |p| square_plus_self(p[0]),
        |p, s| {
            let (out, dx) = square_plus_self_vjp(p[0], s);
            (out, vec![dx])
        },
        &[3.0],
    );
    assert_eq!(grad, [7.0]);
    assert_eq!(square_plus_self_vjp(3.0, 1.0).0, 12.0);
}

#[differentiate]
fn product_plus_sum(x: f64, y: f64) -> f64 {
    x * y + x + y
}

#[test]
fn product_plus_sum_at_2_3_is_4_3() {
    let grad = check_scalar(
        |p| product_plus_sum(p[0], p[1]),
        |p, s| {
            let (out, dx, dy) = product_plus_sum_vjp(p[0], p[1], s);
            (out, vec![dx, dy])
        },
        &[2.0, 3.0],
    );
    assert_eq!(grad, [4.0, 3.0]);
}

#[differentiate]
fn product_plus_sine(x1: f64, x2: f64) -> f64 {
    x1 * x2 + x1.sin()
}

#[test]
fn product_plus_sine_matches_closed_form() {
    for point in [[2.0, 3.0], [-1.5, 0.25], [0.0, 7.0]] {
        let grad = check_scalar(
            |p| product_plus_sine(p[0], p[1]),
            |p, s| {
                let (out, d1, d2) = product_plus_sine_vjp(p[0], p[1], s);
                (out, vec![d1, d2])
            },
            &point,
        );
        assert_close(&grad, &[point[1] + point[0].cos(), point[0]]);
    }
}

// Written as the textbook writes it, not as `x += 1.0`.
#[allow(clippy::assign_op_pattern)]
#[differentiate]
fn reassigned(x: f64) -> f64 {
    let mut x = x;
    x = x * x;
    x = x + 1.0;
    x
}

#[test]
fn reassignment_keeps_every_version() {
    for x in [-2.0, 0.5, 3.0] {
        let grad = check_scalar(
            |p| reassigned(p[0]),
            |p, s| {
                let (out, dx) = reassigned_vjp(p[0], s);
                (out, vec![dx])
            },
            &[x],
        );
        assert_eq!(grad, [2.0 * x]);
    }
}

#[differentiate]
fn product_and_sum(x: f64, y: f64) -> (f64, f64) {
    (x * y, x + y)
}

#[test]
fn tuple_output_takes_a_tuple_seed() {
    let (x, y) = (2.0, 3.0);
    let adjoint = check_vector(
        |p| {
            let (a, b) = product_and_sum(p[0], p[1]);
            vec![a, b]
        },
        |p, s| {
            let ((a, b), dx, dy) = product_and_sum_vjp(p[0], p[1], (s[0], s[1]));
            (vec![a, b], vec![dx, dy])
        },
        &[x, y],
        &[10.0, 1.0],
    );
    // d_x = s0 * y + s1, d_y = s0 * x + s1.
    assert_eq!(adjoint, [31.0, 21.0]);
    // The Jacobian's rows, by seeding basis vectors.
    let (_, dx, dy) = product_and_sum_vjp(x, y, (1.0, 0.0));
    assert_eq!((dx, dy), (y, x));
    let (_, dx, dy) = product_and_sum_vjp(x, y, (0.0, 1.0));
    assert_eq!((dx, dy), (1.0, 1.0));
}

#[differentiate(wrt(y))]
fn only_y(x: f64, y: f64) -> f64 {
    x * y * y
}

#[test]
fn wrt_returns_only_the_listed_adjoints() {
    let (x, y) = (2.0, 3.0);
    // The signature itself is the check that `d_x` is not returned.
    let (out, dy): (f64, f64) = only_y_vjp(x, y, 1.0);
    assert_eq!(out, 18.0);
    assert_eq!(dy, 2.0 * x * y);
    check_scalar(
        |p| only_y(x, p[0]),
        |p, s| {
            let (out, dy) = only_y_vjp(x, p[0], s);
            (out, vec![dy])
        },
        &[y],
    );
}

#[differentiate]
fn detached(x: f64) -> f64 {
    let c = ad_runtime::detach(x * x);
    c * x
}

#[test]
fn detach_stops_the_gradient() {
    let x = 3.0;
    let (out, dx) = detached_vjp(x, 1.0);
    assert_eq!(out, detached(x));
    assert_eq!(out, 27.0);
    // Only the direct use of `x` contributes: d/dx (c * x) with c constant.
    assert_eq!(dx, x * x);
    // The dot-product test still holds for the map as differentiated: it is
    // linear in the seed, with `c` held fixed.
    ad_runtime::check::dot_product(
        |p| vec![(x * x) * p[0]],
        |p, v| vec![detached_vjp(p[0], v[0]).1],
        &[x],
    )
    .assert_within(ad_tests::TOL);
}
