//! Forward mode: `#[differentiate(jvp)]` generates `_jvp`, each active
//! parameter followed by its tangent, returning the output and its tangent.
//! Each function is checked against a closed form, against finite
//! differences, and against its `_vjp` by the dot-product identity between
//! the modes (`J u = <∇f, u>`, through `ad_tests::check_jvp`). The random
//! programs of the corpus and the idiom suites check `_jvp` too.
#![allow(clippy::needless_range_loop)]

use ad_runtime::{Float, Tangent, custom_jvp, custom_vjp, differentiate};
use ad_tests::{assert_close, check_jvp, check_scalar, check_vector};

// ---------------------------------------------------------------------------
// Scalars: closed forms.

#[differentiate(vjp, jvp)]
fn f(x: f64, y: f64) -> f64 {
    let s = x * y;
    s.sin() + s * x
}

#[test]
fn the_readme_function_has_its_closed_form_tangent() {
    let (x, y) = (0.7, -1.3);
    let (t_x, t_y) = (0.4, 2.0);
    let (out, t_out) = f_jvp(x, t_x, y, t_y);
    assert_eq!(out.to_bits(), f(x, y).to_bits());
    // ∂f/∂x = y cos(xy) + 2xy, ∂f/∂y = x cos(xy) + x².
    let s = x * y;
    let expected = (y * s.cos() + 2.0 * s) * t_x + (x * s.cos() + x * x) * t_y;
    assert_close(&[t_out], &[expected]);
    let grad = check_scalar(
        |p| f(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_y) = f_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_y])
        },
        &[x, y],
    );
    check_jvp(
        |p| f(p[0], p[1]),
        |p, u| f_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &[x, y],
    );
}

/// Only `x` has a tangent with `wrt(x)`.
#[differentiate(jvp, wrt(x))]
fn scaled_exp(x: f64, k: f64) -> f64 {
    (k * x).exp() / k
}

#[test]
fn wrt_selects_the_parameters_with_a_tangent() {
    let (out, t_out) = scaled_exp_jvp(0.3, 1.0, 2.5);
    assert_eq!(out.to_bits(), scaled_exp(0.3, 2.5).to_bits());
    assert_close(&[t_out], &[(2.5_f64 * 0.3).exp()]);
}

/// Every primitive with a tangent rule, in one function.
#[differentiate(vjp, jvp)]
fn primitives(x: f64, y: f64) -> f64 {
    let r = x.hypot(y);
    let t = y.atan2(x).sin() * x.exp().ln_1p() + x.powi(3) + y.powf(x.abs() + 0.5);
    let m = x.max(y).min(r) + x.mul_add(y, 1.0) + (x % 0.3) + x.clamp(-0.5, 0.5);
    let u = x.sqrt().cbrt() + x.tanh().asinh() + (y / 3.0).atanh() + y.cosh().acosh();
    r * t + m.tanh() / (1.0 + y * y).sqrt() + u + x.log(y + 2.0)
}

#[test]
fn every_primitive_agrees_with_finite_differences_and_the_vjp() {
    for point in [[0.7, 1.3], [1.9, 0.6], [0.2, 0.9]] {
        let grad = check_scalar(
            |p| primitives(p[0], p[1]),
            |p, seed| {
                let (out, d_x, d_y) = primitives_vjp(p[0], p[1], seed);
                (out, vec![d_x, d_y])
            },
            &point,
        );
        check_jvp(
            |p| primitives(p[0], p[1]),
            |p, u| primitives_jvp(p[0], u[0], p[1], u[1]),
            &grad,
            &point,
        );
    }
}

/// `f32` and a generic float type.
#[differentiate(jvp)]
fn cubic_f32(x: f32) -> f32 {
    x * x * x - 2.0 * x
}

#[differentiate(vjp, jvp)]
fn softplus_t<T: Float>(x: T, w: T) -> T {
    (w * x).exp().ln_1p()
}

#[test]
fn f32_and_generic_functions() {
    let (out, t_out) = cubic_f32_jvp(1.5, 2.0);
    assert_eq!(out, cubic_f32(1.5));
    assert_eq!(t_out, (3.0 * 1.5 * 1.5 - 2.0) * 2.0);
    let (out, t_out) = softplus_t_jvp(0.5_f32, 1.0, 2.0, 0.0);
    let logistic = 1.0 / (1.0 + (-1.0_f32).exp());
    assert_eq!(out, softplus_t(0.5_f32, 2.0));
    assert!((t_out - 2.0 * logistic).abs() < 1e-6);
    let point = [0.5, -1.5];
    let grad = check_scalar(
        |p| softplus_t(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_w) = softplus_t_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_w])
        },
        &point,
    );
    check_jvp(
        |p| softplus_t(p[0], p[1]),
        |p, u| softplus_t_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &point,
    );
}

// ---------------------------------------------------------------------------
// Control flow.

/// Newton's iteration for `√a`, a `while` loop with an unknown trip count,
/// and an early return.
#[differentiate(vjp, jvp)]
fn newton_sqrt(a: f64) -> f64 {
    if a == 0.0 {
        return 0.0;
    }
    let mut x = a.max(1.0);
    let mut steps = 0;
    while (x * x - a).abs() > 1e-14 * a && steps < 100 {
        x = 0.5 * (x + a / x);
        steps += 1;
    }
    x
}

#[test]
fn a_while_loop_carries_its_tangents() {
    for a in [0.25, 2.0, 9.0] {
        let (out, t_out) = newton_sqrt_jvp(a, 1.0);
        assert_eq!(out.to_bits(), newton_sqrt(a).to_bits());
        // d√a/da = 1 / (2√a), reached by the iteration's own derivative.
        assert!((t_out - 0.5 / a.sqrt()).abs() < 1e-12, "{a}: {t_out}");
    }
    assert_eq!(newton_sqrt_jvp(0.0, 1.0), (0.0, 0.0));
}

/// A loop with a branch and a `break`.
#[differentiate(vjp, jvp)]
fn clipped_sum(xs: &[f64], limit: f64) -> f64 {
    let mut s = 0.0;
    for &x in xs {
        if x > 0.0 {
            s += x * x;
        } else {
            s -= x * limit;
        }
        if s > limit * 10.0 {
            break;
        }
    }
    s
}

#[test]
fn loops_with_branches_and_breaks() {
    let xs = [0.5, -1.0, 2.0, -0.3, 3.0, 1.0];
    for limit in [0.9, 1.5] {
        let n = xs.len();
        let point: Vec<f64> = xs.iter().copied().chain([limit]).collect();
        let grad = check_scalar(
            |p| clipped_sum(&p[..n], p[n]),
            |p, seed| {
                let mut d_xs = vec![0.0; n];
                let (out, d_limit) = clipped_sum_vjp(&p[..n], &mut d_xs, p[n], seed);
                d_xs.push(d_limit);
                (out, d_xs)
            },
            &point,
        );
        check_jvp(
            |p| clipped_sum(&p[..n], p[n]),
            |p, u| clipped_sum_jvp(&p[..n], &u[..n], p[n], u[n]),
            &grad,
            &point,
        );
    }
}

// ---------------------------------------------------------------------------
// Buffers: outputs, `&mut` parameters, runtime primitives.

/// A `Vec` output: `_jvp` returns it and its tangent.
#[differentiate(vjp, jvp)]
fn scaled_squares(xs: &[f64], w: f64) -> Vec<f64> {
    xs.iter().map(|x| w * x * x).collect()
}

/// A `&mut` buffer: its tangent is updated in place beside it.
#[differentiate(vjp, jvp)]
fn relax(state: &mut [f64], k: f64) {
    for i in 1..state.len() {
        state[i] = state[i] + k * (state[i - 1] - state[i]).tanh();
    }
}

#[test]
fn buffer_outputs_and_in_place_tangents() {
    let xs = [0.5, -1.0, 2.0];
    let (out, t_out) = scaled_squares_jvp(&xs, &[1.0, 0.0, -2.0], 3.0, 0.5);
    assert_eq!(out, scaled_squares(&xs, 3.0));
    // t_i = 2 w x_i t_xi + x_i² t_w.
    let expected: Vec<f64> = [(0.5, 1.0), (-1.0, 0.0), (2.0, -2.0)]
        .iter()
        .map(|&(x, t)| 2.0 * 3.0 * x * t + x * x * 0.5)
        .collect();
    assert_close(&t_out, &expected);

    // The in-place map (state, k) ↦ state: its Jacobian, column by column
    // from `_jvp`, against `_vjp`'s rows.
    let state = [0.3, -0.4, 0.8, 0.1];
    let k = 0.7;
    let n = state.len();
    let mut point = state.to_vec();
    point.push(k);
    let run = |p: &[f64]| {
        let mut s = p[..n].to_vec();
        relax(&mut s, p[n]);
        s
    };
    let seed = [0.5, -1.0, 2.0, 0.25];
    let row = check_vector(
        run,
        |p, v| {
            let mut s = p[..n].to_vec();
            let mut d = v.to_vec();
            let d_k = relax_vjp(&mut s, &mut d, p[n]);
            d.push(d_k);
            (s, d)
        },
        &point,
        &seed,
    );
    // <v, J u> from `_jvp` for each basis direction u is component u of Jᵀ v.
    for direction in 0..=n {
        let mut s = state.to_vec();
        let mut t_s = vec![0.0; n];
        let mut t_k = 0.0;
        if direction < n {
            t_s[direction] = 1.0;
        } else {
            t_k = 1.0;
        }
        relax_jvp(&mut s, &mut t_s, k, t_k);
        assert_eq!(s, run(&point));
        let projected: f64 = seed.iter().zip(&t_s).map(|(v, t)| v * t).sum();
        assert!(
            (projected - row[direction]).abs() < 1e-12,
            "direction {direction}: {projected} vs {}",
            row[direction]
        );
    }
}

/// The coarse primitives of the runtime, each with its tangent rule.
#[differentiate(vjp, jvp)]
fn layers(a: &[f64], x: &[f64], b: &[f64], m: usize, n: usize) -> f64 {
    let mut y = vec![0.0; m];
    ad_runtime::matvec(a, x, &mut y, m, n);
    let mut c = vec![0.0; m * m];
    ad_runtime::matmul(&y, &y, &mut c, m, 1, m);
    let mut p = vec![0.0; m];
    ad_runtime::softmax(&y, &mut p);
    ad_runtime::axpy(ad_runtime::sum(b), b, &mut p);
    ad_runtime::dot(&p, &y)
        + ad_runtime::norm2(x)
        + ad_runtime::logsumexp(&c)
        + ad_runtime::sum(&c) * 0.01
}

#[test]
fn runtime_primitives_have_tangent_rules() {
    let (m, n) = (3, 2);
    let a = [0.5, -0.2, 0.3, 0.8, -0.6, 0.1];
    let x = [0.7, -0.4];
    let b = [0.1, 0.2, -0.3];
    let point: Vec<f64> = [&a[..], &x, &b].concat();
    let split = |p: &[f64]| (p[..6].to_vec(), p[6..8].to_vec(), p[8..].to_vec());
    let f = |p: &[f64]| {
        let (a, x, b) = split(p);
        layers(&a, &x, &b, m, n)
    };
    let grad = check_scalar(
        f,
        |p, seed| {
            let (a, x, b) = split(p);
            let (mut d_a, mut d_x, mut d_b) = (vec![0.0; 6], vec![0.0; 2], vec![0.0; 3]);
            let out = layers_vjp(&a, &mut d_a, &x, &mut d_x, &b, &mut d_b, m, n, seed);
            (out, [d_a, d_x, d_b].concat())
        },
        &point,
    );
    check_jvp(
        f,
        |p, u| {
            let ((a, x, b), (t_a, t_x, t_b)) = (split(p), split(u));
            layers_jvp(&a, &t_a, &x, &t_x, &b, &t_b, m, n)
        },
        &grad,
        &point,
    );
}

// ---------------------------------------------------------------------------
// Calls, custom rules, tuples, structs, methods.

#[differentiate(vjp, jvp)]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

/// Its own forward rule: the logistic function.
#[custom_vjp(softplus_vjp_rule)]
#[custom_jvp(softplus_jvp_rule)]
fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

fn softplus_vjp_rule(x: f64, _out: f64, d_out: f64) -> f64 {
    d_out / (1.0 + (-x).exp())
}

fn softplus_jvp_rule(x: f64, t_x: f64) -> (f64, f64) {
    (softplus(x), t_x / (1.0 + (-x).exp()))
}

#[differentiate(vjp, jvp)]
fn uses_callees(x: f64, y: f64) -> f64 {
    let (r, theta) = polar(x, y);
    softplus(r * theta.cos()) + r
}

#[test]
fn callees_are_called_through_their_jvp() {
    let point = [0.8, -0.5];
    let grad = check_scalar(
        |p| uses_callees(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_y) = uses_callees_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_y])
        },
        &point,
    );
    check_jvp(
        |p| uses_callees(p[0], p[1]),
        |p, u| uses_callees_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &point,
    );
    // A tuple output has a tuple tangent.
    let ((r, theta), (t_r, t_theta)) = polar_jvp(3.0, 1.0, 4.0, 0.0);
    assert_eq!((r, theta), polar(3.0, 4.0));
    assert_close(&[t_r, t_theta], &[3.0 / 5.0, -4.0 / 25.0]);
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Line {
    w: Vec<f64>,
    b: f64,
}

impl Line {
    /// `Σᵢ tanh(wᵢ x + b)`: `&self` has a tangent of its own type.
    #[differentiate(vjp, jvp)]
    fn response(&self, x: f64) -> f64 {
        let mut s = 0.0;
        for j in 0..self.w.len() {
            s += (self.w[j] * x + self.b).tanh();
        }
        s
    }
}

/// The same response as a free function, called with the struct.
#[differentiate(vjp, jvp)]
fn response(line: &Line, x: f64) -> f64 {
    line.w.iter().map(|w| (w * x + line.b).tanh()).sum()
}

#[differentiate(vjp, jvp)]
fn loss(line: &Line, xs: &[f64]) -> f64 {
    xs.iter().map(|&x| response(line, x).powi(2)).sum::<f64>() + line.b * line.b
}

#[test]
fn parameter_structs_and_methods() {
    let line = Line {
        w: vec![0.5, -1.0],
        b: 0.2,
    };
    let tangent = Line {
        w: vec![1.0, 0.5],
        b: -2.0,
    };
    let x = 0.7;
    let (out, t_out) = line.response_jvp(&tangent, x, 0.25);
    assert_eq!(out.to_bits(), line.response(x).to_bits());
    let sech2 = |z: f64| 1.0 - z.tanh().powi(2);
    let expected: f64 = (0..2)
        .map(|j| {
            let z = line.w[j] * x + line.b;
            sech2(z) * (tangent.w[j] * x + line.w[j] * 0.25 + tangent.b)
        })
        .sum();
    assert_close(&[t_out], &[expected]);

    // `loss` against its `_vjp`: <∇loss, u> along the struct's tangent.
    let xs = [0.3, -0.8];
    let mut d_line = line.zero();
    let (out, _) = {
        let mut d_xs = [0.0; 2];
        (loss_vjp(&line, &mut d_line, &xs, &mut d_xs, 1.0), d_xs)
    };
    let (jvp_out, t_loss) = loss_jvp(&line, &tangent, &xs, &[0.0; 2]);
    assert_eq!(jvp_out.to_bits(), out.to_bits());
    let expected: f64 = d_line
        .w
        .iter()
        .zip(&tangent.w)
        .map(|(g, t)| g * t)
        .sum::<f64>()
        + d_line.b * tangent.b;
    assert!((t_loss - expected).abs() < 1e-12, "{t_loss} vs {expected}");
}

// ---------------------------------------------------------------------------
// Jacobians: by columns (`_jvp`) and by rows (`_vjp`), the same matrix.

/// A trajectory of a damped oscillator under three parameters, Euler steps:
/// few inputs, many outputs.
#[differentiate(vjp, jvp, wrt(p))]
fn trajectory(p: &[f64], steps: usize) -> Vec<f64> {
    let (mut x, mut v) = (1.0, 0.0);
    let mut out = Vec::with_capacity(steps);
    for _ in 0..steps {
        let a = -p[0] * x - p[1] * v + p[2];
        (x, v) = (x + 0.05 * v, v + 0.05 * a);
        out.push(x);
    }
    out
}

#[test]
fn jacobians_by_columns_and_by_rows_agree() {
    use ad_runtime::jacobian;
    let p = [2.0, 0.3, 0.5];
    let steps = 50;
    let by_columns = jacobian::forward(steps, 3, |u, column| {
        column.copy_from_slice(&trajectory_jvp(&p, u, steps).1);
    });
    let by_rows = jacobian::reverse(steps, 3, |seed, row| {
        trajectory_vjp(&p, row, steps, seed);
    });
    let picked = jacobian::jacobian(
        steps,
        3,
        |u, column| column.copy_from_slice(&trajectory_jvp(&p, u, steps).1),
        |_, _| unreachable!("50 outputs and 3 inputs: forward mode"),
    );
    assert_eq!(picked, by_columns);
    for (a, b) in by_columns.iter().zip(&by_rows) {
        assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{a} vs {b}");
    }
    // Against finite differences, column by column.
    for j in 0..3 {
        let h = 1e-6;
        let (mut plus, mut minus) = (p, p);
        plus[j] += h;
        minus[j] -= h;
        let (f_plus, f_minus) = (trajectory(&plus, steps), trajectory(&minus, steps));
        for i in 0..steps {
            let fd = (f_plus[i] - f_minus[i]) / (2.0 * h);
            let entry = by_columns[i * 3 + j];
            assert!((entry - fd).abs() < 1e-6, "({i}, {j}): {entry} vs {fd}");
        }
    }
}

/// A callee with `wrt`: its `_jvp` takes a tangent for `x` only, and callers
/// call its all-active twin.
#[differentiate(vjp, jvp, wrt(x))]
fn scaled(x: f64, k: f64) -> f64 {
    (k * x).sin()
}

#[differentiate(vjp, jvp)]
fn calls_scaled(x: f64, k: f64) -> f64 {
    scaled(x, k) * scaled(k, x)
}

#[test]
fn callees_with_wrt_are_called_with_every_tangent() {
    let (out, t) = scaled_jvp(0.3, 1.0, 2.0);
    assert_eq!(out, scaled(0.3, 2.0));
    assert_close(&[t], &[2.0 * 0.6_f64.cos()]);
    let point = [0.3, 2.0];
    let grad = check_scalar(
        |p| calls_scaled(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_k) = calls_scaled_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_k])
        },
        &point,
    );
    check_jvp(
        |p| calls_scaled(p[0], p[1]),
        |p, u| calls_scaled_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &point,
    );
}
