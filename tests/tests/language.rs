//! The supported subset of Rust, construct by construct: each function checked
//! against its closed form, finite differences and the dot-product test.

use std::f64::consts::PI;

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar, check_scalar_within};

/// Wraps a two-input `_vjp` for the checkers.
macro_rules! vjp2 {
    ($vjp:ident $(, $constant:expr)*) => {
        |p: &[f64], s: f64| {
            let (out, da, db) = $vjp(p[0], p[1], $($constant,)* s);
            (out, vec![da, db])
        }
    };
}

#[differentiate]
fn compound(x: f64, y: f64) -> f64 {
    let mut s = x;
    s += y;
    s *= x;
    s -= 2.0;
    s /= y;
    s
}

#[test]
fn compound_assignment() {
    let (x, y) = (1.5, -2.0);
    let grad = check_scalar(|p| compound(p[0], p[1]), vjp2!(compound_vjp), &[x, y]);
    // s = ((x + y) x - 2) / y
    assert_close(
        &grad,
        &[(2.0 * x + y) / y, x / y - ((x + y) * x - 2.0) / (y * y)],
    );
}

#[differentiate]
fn blocks_and_shadowing(x: f64, y: f64) -> f64 {
    let z = {
        let x = x * 2.0;
        let y = { y + x };
        x * y
    };
    let z = z + x;
    {
        let x = 10.0;
        z * x
    }
}

#[test]
fn nested_blocks_and_shadowing() {
    let (x, y) = (0.5, 3.0);
    let grad = check_scalar(
        |p| blocks_and_shadowing(p[0], p[1]),
        vjp2!(blocks_and_shadowing_vjp),
        &[x, y],
    );
    // 10 (2x (y + 2x) + x)
    assert_close(&grad, &[10.0 * (2.0 * y + 8.0 * x + 1.0), 20.0 * x]);
}

#[allow(clippy::unnecessary_cast)] // `f64 as f64` is part of what is tested.
#[differentiate]
fn mixed_precision(x: f32, y: f64) -> f64 {
    let a = x as f64 * y;
    let b = (y as f32 * x) as f64;
    a + b + (x as f64) as f64
}

#[test]
fn casts_between_float_types() {
    let (x, y) = (1.5_f32, 2.25_f64);
    let (out, dx, dy) = mixed_precision_vjp(x, y, 1.0);
    assert_eq!(out, mixed_precision(x, y));
    assert_eq!(dx, 2.0 * y as f32 + 1.0);
    assert_eq!(dy, 2.0 * x as f64);
    check_scalar_within(
        1e-3,
        |p| mixed_precision(p[0] as f32, p[1]),
        |p, s| {
            let (out, dx, dy) = mixed_precision_vjp(p[0] as f32, p[1], s);
            (out, vec![f64::from(dx), dy])
        },
        &[0.75, -1.5],
    );
}

#[differentiate]
fn single_precision(x: f32, y: f32) -> f32 {
    let r = (x * x + y * y).sqrt();
    r.ln() * 3.0 + x.atan2(y)
}

#[test]
fn f32_function() {
    let (x, y) = (3.0_f32, 4.0_f32);
    let (out, dx, dy) = single_precision_vjp(x, y, 1.0);
    assert_eq!(out, single_precision(x, y));
    let r2 = x * x + y * y;
    assert!((dx - (3.0 * x / r2 + y / r2)).abs() < 1e-6);
    assert!((dy - (3.0 * y / r2 - x / r2)).abs() < 1e-6);
    check_scalar_within(
        1e-3,
        |p| f64::from(single_precision(p[0] as f32, p[1] as f32)),
        |p, s| {
            let (out, dx, dy) = single_precision_vjp(p[0] as f32, p[1] as f32, s as f32);
            (f64::from(out), vec![f64::from(dx), f64::from(dy)])
        },
        &[3.0, 4.0],
    );
}

const SCALE: f64 = 0.5;

#[differentiate]
fn constants(x: f64) -> f64 {
    PI * x + std::f64::consts::E * SCALE + f64::EPSILON * x * x
}

#[test]
fn constant_paths_are_data() {
    let x = 2.0;
    let grad = check_scalar(
        |p| constants(p[0]),
        |p, s| {
            let (out, dx) = constants_vjp(p[0], s);
            (out, vec![dx])
        },
        &[x],
    );
    assert_close(&grad, &[PI + 2.0 * f64::EPSILON * x]);
}

#[differentiate]
fn integers(x: f64, n: usize, k: i32, flag: bool) -> f64 {
    let m = n * 2 + 1;
    let scale = m as f64 + f64::from(k) * 0.0 + (flag as i32) as f64 + f64::from(flag) * 0.5;
    let y: f64 = x.powi(k) * scale;
    y / n as f64
}

#[test]
fn integer_and_bool_parameters_are_constants() {
    let (x, n, k) = (1.5, 3_usize, 3_i32);
    for flag in [false, true] {
        let (out, dx) = integers_vjp(x, n, k, flag, 1.0);
        assert_eq!(out, integers(x, n, k, flag));
        let scale = 7.0 + 1.5 * f64::from(u8::from(flag));
        assert_close(&[dx], &[3.0 * x * x * scale / 3.0]);
        check_scalar(
            |p| integers(p[0], n, k, flag),
            |p, s| {
                let (out, dx) = integers_vjp(p[0], n, k, flag, s);
                (out, vec![dx])
            },
            &[x],
        );
    }
}

#[differentiate]
fn literal_receivers(x: f64) -> f64 {
    let two = 2.0_f64;
    x * 2.0_f64.sqrt() + f64::sin(1.0) * x + two.ln() * x - (-1.0_f64).abs()
}

#[test]
fn methods_on_literals() {
    let grad = check_scalar(
        |p| literal_receivers(p[0]),
        |p, s| {
            let (out, dx) = literal_receivers_vjp(p[0], s);
            (out, vec![dx])
        },
        &[0.3],
    );
    assert_close(&grad, &[2.0_f64.sqrt() + 1.0_f64.sin() + 2.0_f64.ln()]);
}

#[differentiate]
fn unused_input(x: f64, y: f64) -> f64 {
    let _ = y * 2.0;
    x * 3.0
}

#[test]
fn an_input_that_does_not_reach_the_output_gets_zero() {
    let grad = check_scalar(
        |p| unused_input(p[0], p[1]),
        vjp2!(unused_input_vjp),
        &[1.0, 2.0],
    );
    assert_eq!(grad, [3.0, 0.0]);
}

#[differentiate]
#[allow(clippy::needless_return)] // The explicit `return` is what is tested.
fn explicit_return(x: f64) -> f64 {
    let y = x.exp();
    return y * x;
}

#[test]
fn final_return_statement() {
    let x = 0.7;
    let grad = check_scalar(
        |p| explicit_return(p[0]),
        |p, s| {
            let (out, dx) = explicit_return_vjp(p[0], s);
            (out, vec![dx])
        },
        &[x],
    );
    assert_close(&grad, &[x.exp() * (1.0 + x)]);
}

/// User names that look like generated ones must not collide with them.
#[differentiate]
#[allow(non_snake_case, clippy::let_and_return)]
fn generated_looking_names(d_x: f64, x: f64, d_out: f64, out: f64) -> f64 {
    let t1 = d_x * x;
    let __ad = t1 * d_out;
    let d_t1 = __ad + out;
    let X = d_t1 * x;
    X
}

#[test]
fn hygiene_of_generated_names() {
    let point = [1.5, -2.0, 0.5, 3.0];
    let f = |p: &[f64]| generated_looking_names(p[0], p[1], p[2], p[3]);
    let grad = check_scalar(
        f,
        |p, s| {
            let (out, a, b, c, d) = generated_looking_names_vjp(p[0], p[1], p[2], p[3], s);
            (out, vec![a, b, c, d])
        },
        &point,
    );
    let [a, x, c, d] = point;
    // X = (a x c + d) x
    assert_close(&grad, &[x * c * x, 2.0 * a * x * c + d, a * x * x, x]);
}

#[differentiate]
fn deep_expression(a: f64, b: f64) -> f64 {
    ((a * b).sin() + (a / b).exp()).ln() * (a - b).tanh()
        - a.hypot(b).sqrt() / (1.0 + b * b).recip()
}

#[test]
fn deep_expression_nesting() {
    check_scalar(
        |p| deep_expression(p[0], p[1]),
        vjp2!(deep_expression_vjp),
        &[0.7, 1.3],
    );
    check_scalar(
        |p| deep_expression(p[0], p[1]),
        vjp2!(deep_expression_vjp),
        &[-0.4, 2.1],
    );
}

#[differentiate(wrt(b))]
fn wrt_second(a: f64, b: f64, c: f64) -> f64 {
    a * b * c + b.sin()
}

#[test]
fn wrt_keeps_the_other_floats_constant() {
    let (a, b, c) = (2.0, 0.5, -3.0);
    let (out, db): (f64, f64) = wrt_second_vjp(a, b, c, 1.0);
    assert_eq!(out, wrt_second(a, b, c));
    assert_close(&[db], &[a * c + b.cos()]);
    check_scalar(
        |p| wrt_second(a, p[0], c),
        |p, s| {
            let (out, db) = wrt_second_vjp(a, p[0], c, s);
            (out, vec![db])
        },
        &[b],
    );
}

#[differentiate]
fn detach_in_the_middle(x: f64, y: f64) -> f64 {
    let scale = ad_runtime::detach(x.exp() + y);
    scale * x + y * y
}

#[test]
fn detach_only_stops_the_detached_path() {
    let (x, y) = (0.5, 2.0);
    let (out, dx, dy) = detach_in_the_middle_vjp(x, y, 1.0);
    assert_eq!(out, detach_in_the_middle(x, y));
    assert_close(&[dx, dy], &[x.exp() + y, 2.0 * y]);
    // The dot-product test for the linearization with `scale` held fixed.
    let scale = x.exp() + y;
    ad_runtime::check::dot_product(
        |p| vec![scale * p[0] + p[1] * p[1]],
        |p, v| {
            let (_, dx, dy) = detach_in_the_middle_vjp(p[0], p[1], v[0]);
            vec![dx, dy]
        },
        &[x, y],
    )
    .assert_within(ad_tests::TOL);
}
