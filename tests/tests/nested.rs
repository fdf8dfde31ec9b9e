//! Nested differentiation: a differentiated function that calls a generated
//! `_vjp` or `_jvp`, differentiated in forward mode (through the callee's
//! `nested` twins `f_vjp_jvp_all` and `f_jvp_jvp_all`) and in reverse mode
//! (through `f_vjp_forward_all` and `f_jvp_forward_all`): all four
//! combinations. Each outer function is checked against a closed form, its
//! `_vjp` against finite differences and the dot-product test, and its
//! `_jvp` against finite differences and the `_vjp`.

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_jvp, check_scalar};

/// `f(x, y) = x² y + sin(x y)`.
#[differentiate(vjp, jvp, nested)]
fn f(x: f64, y: f64) -> f64 {
    x * x * y + (x * y).sin()
}

/// `∂f/∂x (x, y) · k`, by reverse mode inside.
#[differentiate(vjp, jvp)]
fn slope_r(x: f64, y: f64, k: f64) -> f64 {
    let (_, d_x, _) = f_vjp(x, y, k);
    d_x
}

/// `∂f/∂x (x, y) · k`, by forward mode inside.
#[differentiate(vjp, jvp)]
fn slope_f(x: f64, y: f64, k: f64) -> f64 {
    let (_, t) = f_jvp(x, k, y, 0.0);
    t
}

/// `∂f/∂x = 2xy + y cos(xy)`, and its gradient `(2y − y² sin(xy),
/// 2x + cos(xy) − xy sin(xy))`, each times `k`.
fn slope_closed_form(x: f64, y: f64, k: f64) -> (f64, [f64; 3]) {
    let s = x * y;
    let slope = 2.0 * x * y + y * s.cos();
    let d_x = 2.0 * y - y * y * s.sin();
    let d_y = 2.0 * x + s.cos() - s * s.sin();
    (k * slope, [k * d_x, k * d_y, slope])
}

#[test]
fn all_four_combinations_differentiate_a_derivative() {
    let p = [0.7, -1.3, 1.5];
    let (value, grad) = slope_closed_form(p[0], p[1], p[2]);
    type Primal = fn(f64, f64, f64) -> f64;
    type Vjp = fn(f64, f64, f64, f64) -> (f64, f64, f64, f64);
    type Jvp = fn(f64, f64, f64, f64, f64, f64) -> (f64, f64);
    let cases: [(&str, Primal, Vjp, Jvp); 2] = [
        ("reverse inside", slope_r, slope_r_vjp, slope_r_jvp),
        ("forward inside", slope_f, slope_f_vjp, slope_f_jvp),
    ];
    for (name, primal, vjp, jvp) in cases {
        assert!((primal(p[0], p[1], p[2]) - value).abs() < 1e-12, "{name}");
        // Reverse mode outside, three ways.
        let got = check_scalar(
            |q| primal(q[0], q[1], q[2]),
            |q, seed| {
                let (out, d_x, d_y, d_k) = vjp(q[0], q[1], q[2], seed);
                (out, vec![d_x, d_y, d_k])
            },
            &p,
        );
        assert_close(&got, &grad);
        // Forward mode outside, against finite differences and the `_vjp`.
        check_jvp(
            |q| primal(q[0], q[1], q[2]),
            |q, u| jvp(q[0], u[0], q[1], u[1], q[2], u[2]),
            &got,
            &p,
        );
    }
}

/// A potential of a buffer of positions, its gradient taken inside a loop
/// by reverse mode: the outer function is the squared force.
#[differentiate(vjp, nested)]
fn energy(xs: &[f64], k: f64) -> f64 {
    let mut e = 0.0;
    for i in 1..xs.len() {
        let d = xs[i] - xs[i - 1];
        e += k * (d * d * d * d) / 4.0 + (xs[i] * xs[i]) / 2.0;
    }
    e
}

/// `‖∇ₓ energy‖²`: forward mode over the reverse mode inside.
#[differentiate(jvp)]
fn squared_force(xs: &[f64], k: f64) -> f64 {
    let mut g = vec![0.0; xs.len()];
    let _ = energy_vjp(xs, &mut g, k, 1.0);
    g.iter().map(|g| g * g).sum()
}

#[test]
fn forward_mode_over_the_gradient_of_a_buffer() {
    let xs = [0.3, -0.5, 0.9, 0.2];
    let k = 1.7;
    // The gradient by hand, and the squared force.
    let force = |xs: &[f64], k: f64| -> Vec<f64> {
        let mut g = vec![0.0; xs.len()];
        for i in 1..xs.len() {
            let d = xs[i] - xs[i - 1];
            g[i] += k * d * d * d + xs[i];
            g[i - 1] -= k * d * d * d;
        }
        g
    };
    let value: f64 = force(&xs, k).iter().map(|g| g * g).sum();
    assert!((squared_force(&xs, k) - value).abs() < 1e-12);
    // The directional derivative along (u, u_k) by central differences of
    // the closed form, and by `_jvp` with tangents (u, u_k).
    let u = [0.4, -0.2, 0.1, 0.7];
    let u_k = -0.3;
    let (out, t) = squared_force_jvp(&xs, &u, k, u_k);
    assert_eq!(out.to_bits(), squared_force(&xs, k).to_bits());
    let h = 1e-6;
    let at = |s: f64| -> f64 {
        let moved: Vec<f64> = xs.iter().zip(&u).map(|(x, u)| x + s * u).collect();
        force(&moved, k + s * u_k).iter().map(|g| g * g).sum()
    };
    let fd = (at(h) - at(-h)) / (2.0 * h);
    assert!((t - fd).abs() < 1e-6 * fd.abs().max(1.0), "{t} vs {fd}");
}

/// A `nested` function that calls another differentiated function: its twin
/// of `_vjp` goes through the callee's `_jvp_all` and `_hvp_all`.
#[differentiate(vjp, jvp, hvp)]
fn inner(x: f64, y: f64) -> f64 {
    (x * y).sin()
}

#[differentiate(vjp, nested)]
fn outer(x: f64, y: f64) -> f64 {
    inner(x, y) * x + y * y
}

/// `∂outer/∂y`, by reverse mode inside, differentiated by both modes.
#[differentiate(vjp, jvp)]
fn outer_slope(x: f64, y: f64) -> f64 {
    let (_, _, d_y) = outer_vjp(x, y, 1.0);
    d_y
}

#[test]
fn a_nested_function_may_call_functions_with_hvp() {
    // outer = x sin(xy) + y², ∂/∂y = x² cos(xy) + 2y, whose gradient is
    // (2x cos(xy) − x² y sin(xy), −x³ sin(xy) + 2).
    let (x, y): (f64, f64) = (0.6, -0.9);
    let s = x * y;
    let expected = [
        2.0 * x * s.cos() - x * x * y * s.sin(),
        -x * x * x * s.sin() + 2.0,
    ];
    assert!((outer_slope(x, y) - (x * x * s.cos() + 2.0 * y)).abs() < 1e-12);
    let grad = check_scalar(
        |p| outer_slope(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_y) = outer_slope_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_y])
        },
        &[x, y],
    );
    assert_close(&grad, &expected);
    check_jvp(
        |p| outer_slope(p[0], p[1]),
        |p, u| outer_slope_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &[x, y],
    );
}

/// Floats of two widths: the twins keep each parameter's own type.
#[differentiate(vjp, jvp, nested)]
fn mixed(x: f32, y: f64) -> f64 {
    f64::from(x * x) * y.sin()
}

/// `∂mixed/∂y` by reverse mode inside, and the same by forward mode inside.
#[differentiate(vjp, jvp)]
fn mixed_slopes(x: f32, y: f64) -> f64 {
    let (_, _, d_y) = mixed_vjp(x, y, 1.0);
    let (_, t_y) = mixed_jvp(x, 0.0, y, 1.0);
    d_y + t_y
}

#[test]
fn the_twins_keep_each_parameters_width() {
    // 2 x² cos y, whose derivatives are 4 x cos y and −2 x² sin y.
    let (x, y) = (0.5_f32, 0.3_f64);
    let xf = f64::from(x);
    assert!((mixed_slopes(x, y) - 2.0 * xf * xf * y.cos()).abs() < 1e-12);
    let (_, d_x, d_y) = mixed_slopes_vjp(x, y, 1.0);
    assert!((f64::from(d_x) - 4.0 * xf * y.cos()).abs() < 1e-6);
    assert!((d_y + 2.0 * xf * xf * y.sin()).abs() < 1e-12);
    let (_, t) = mixed_slopes_jvp(x, 0.0, y, 1.0);
    assert!((t - d_y).abs() < 1e-12);
}

/// A parameter named `out`, the name the generated code gives the output.
#[differentiate(vjp, jvp, nested)]
fn named_out(out: f64, x: f64) -> f64 {
    out * x.exp()
}

#[differentiate(vjp)]
fn through_named_out(a: f64) -> f64 {
    let (_, d_out, _) = named_out_vjp(a, a, 1.0);
    d_out
}

#[test]
fn a_parameter_named_out() {
    // d/d out = eˣ at x = a, whose derivative in a is eᵃ.
    let a: f64 = 0.4;
    let (value, d_a) = through_named_out_vjp(a, 1.0);
    assert_eq!(value, a.exp());
    assert!((d_a - a.exp()).abs() < 1e-12);
}
