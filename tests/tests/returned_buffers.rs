//! Calls of differentiated functions that return a buffer (`Vec<T>` or
//! `[T; N]`) inside loops and branches: the RK4 step that calls its
//! right-hand side four times per step, a map applied again and again
//! (`cur = step(&cur)`), arrays destructured where they are returned. Each
//! function is checked against a closed form where there is one, finite
//! differences and the dot-product test, in `_vjp`, `_forward` and `_jvp`.

use ad_runtime::{Float, differentiate};
use ad_tests::{assert_close, buffer_then_scalar, check_jvp, check_scalar, check_scalar_within};

// ---------------------------------------------------------------------------
// RK4 on a linear system: the stages are arrays returned by the right-hand side.

/// `s' = (-a s₀, -2a s₁)`.
#[differentiate(vjp, jvp)]
fn decay(s: [f64; 2], a: f64) -> [f64; 2] {
    [-a * s[0], -2.0 * a * s[1]]
}

/// `n` RK4 steps of `decay`, each stage a call in the loop.
#[differentiate(vjp, jvp)]
fn rk4_decay(s0: f64, s1: f64, a: f64, n: usize) -> f64 {
    let h = 0.1;
    let mut s = [s0, s1];
    for _ in 0..n {
        let k1 = decay(s, a);
        let k2 = decay([s[0] + 0.5 * h * k1[0], s[1] + 0.5 * h * k1[1]], a);
        let k3 = decay([s[0] + 0.5 * h * k2[0], s[1] + 0.5 * h * k2[1]], a);
        let k4: [f64; 2] = decay([s[0] + h * k3[0], s[1] + h * k3[1]], a);
        for j in 0..2 {
            s[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
    }
    s[0] + s[1]
}

/// RK4's amplification factor for `s' = -λ s` with step `h`, and its
/// derivative in `λ`.
fn amplification(lambda: f64, h: f64) -> (f64, f64) {
    let z = h * lambda;
    let r = 1.0 - z + z * z / 2.0 - z.powi(3) / 6.0 + z.powi(4) / 24.0;
    let dr = (-1.0 + z - z * z / 2.0 + z.powi(3) / 6.0) * h;
    (r, dr)
}

#[test]
fn rk4_stages_returned_as_arrays() {
    let (s0, s1, a, n) = (1.5, -0.5, 0.8, 7);
    let grad = check_scalar(
        |p| rk4_decay(p[0], p[1], p[2], n),
        |p, seed| {
            let (out, d0, d1, da) = rk4_decay_vjp(p[0], p[1], p[2], n, seed);
            (out, vec![d0, d1, da])
        },
        &[s0, s1, a],
    );
    // s(n) = s₀ R(a)ⁿ + s₁ R(2a)ⁿ.
    let (r1, dr1) = amplification(a, 0.1);
    let (r2, dr2) = amplification(2.0 * a, 0.1);
    let n_f = n as f64;
    let expected = [
        r1.powi(7),
        r2.powi(7),
        s0 * n_f * r1.powi(6) * dr1 + s1 * n_f * r2.powi(6) * dr2 * 2.0,
    ];
    assert_close(&grad, &expected);
    check_jvp(
        |p| rk4_decay(p[0], p[1], p[2], n),
        |p, u| rk4_decay_jvp(p[0], u[0], p[1], u[1], p[2], u[2], n),
        &grad,
        &[s0, s1, a],
    );
    // No steps: the calls never run, and the gradient is the identity's.
    let (out, d0, d1, da) = rk4_decay_vjp(s0, s1, a, 0, 1.0);
    assert_eq!((out, d0, d1, da), (s0 + s1, 1.0, 1.0, 0.0));
}

#[test]
fn rk4_split_api() {
    let (s0, s1, a, n) = (0.7, 1.2, 0.3, 5);
    let (out, pullback) = rk4_decay_forward(s0, s1, a, n);
    assert_eq!(out, rk4_decay(s0, s1, a, n));
    let (d0, d1, da) = pullback(2.0);
    let (_, e0, e1, ea) = rk4_decay_vjp(s0, s1, a, n, 2.0);
    assert_close(&[d0, d1, da], &[e0, e1, ea]);
}

// ---------------------------------------------------------------------------
// A map applied again and again: `cur = step(&cur, a)`, a `Vec` each time.

#[differentiate(vjp, jvp)]
fn squash(x: &[f64], a: f64) -> Vec<f64> {
    x.iter().map(|v| (v * a).tanh()).collect()
}

#[differentiate(vjp, jvp)]
fn iterated(x: &[f64], a: f64) -> f64 {
    let mut cur = x.to_vec();
    for _ in 0..3 {
        cur = squash(&cur, a);
    }
    cur.iter().map(|v| v * v).sum()
}

/// The gradient of `Σ cᵢ²` after three steps `c ↦ step(c, a)` from
/// `cᵢ = xᵢ`, at `point = (x₀, x₁, x₂, a)`: `step` gives the next value and
/// its derivatives in `c` and in `a`.
fn squares_after_steps(point: &[f64], step: impl Fn(f64, f64) -> (f64, f64, f64)) -> Vec<f64> {
    let a = point[3];
    let mut expected = vec![0.0; 4];
    for (i, &x) in point[..3].iter().enumerate() {
        let (mut c, mut dc_dx, mut dc_da) = (x, 1.0, 0.0);
        for _ in 0..3 {
            let (next, dn_dc, dn_da) = step(c, a);
            (dc_dx, dc_da) = (dn_dc * dc_dx, dn_da + dn_dc * dc_da);
            c = next;
        }
        expected[i] = 2.0 * c * dc_dx;
        expected[3] += 2.0 * c * dc_da;
    }
    expected
}

#[test]
fn a_map_applied_in_a_loop() {
    let point = [0.3, -0.7, 1.1, 0.9];
    let grad = check_scalar(
        |p| iterated(&p[..3], p[3]),
        buffer_then_scalar(iterated_vjp),
        &point,
    );
    // Closed form, element by element: c ↦ tanh(a c) three times.
    let expected = squares_after_steps(&point, |c, a| {
        let t = (a * c).tanh();
        let dt = 1.0 - t * t;
        (t, dt * a, dt * c)
    });
    assert_close(&grad, &expected);
    check_jvp(
        |p| iterated(&p[..3], p[3]),
        |p, u| iterated_jvp(&p[..3], &u[..3], p[3], u[3]),
        &grad,
        &point,
    );
}

/// An Euler step written with a chain: the stage, a `Vec` the call returns
/// in the loop, zipped with the state and collected. The collected buffer
/// is bounded by the state's length, known before the loop.
#[differentiate(vjp, jvp)]
fn euler_collected(x: &[f64], a: f64) -> f64 {
    let mut cur = x.to_vec();
    for _ in 0..3 {
        let k = squash(&cur, a);
        let next: Vec<f64> = k.iter().zip(&cur).map(|(d, c)| c + 0.5 * d).collect();
        cur = next;
    }
    cur.iter().map(|v| v * v).sum()
}

#[test]
fn a_returned_stage_zipped_and_collected_in_a_loop() {
    let point = [0.3, -0.7, 1.1, 0.9];
    let grad = check_scalar(
        |p| euler_collected(&p[..3], p[3]),
        buffer_then_scalar(euler_collected_vjp),
        &point,
    );
    // Closed form, element by element: c ↦ c + tanh(a c) / 2 three times.
    let expected = squares_after_steps(&point, |c, a| {
        let t = (a * c).tanh();
        let dt = 0.5 * (1.0 - t * t);
        (c + 0.5 * t, 1.0 + dt * a, dt * c)
    });
    assert_close(&grad, &expected);
    check_jvp(
        |p| euler_collected(&p[..3], p[3]),
        |p, u| euler_collected_jvp(&p[..3], &u[..3], p[3], u[3]),
        &grad,
        &point,
    );
}

// ---------------------------------------------------------------------------
// Buffers returned in branches, `while` loops with `break`, borrowed at once
// (`sum(&g(x))`) and iterated.

#[differentiate(vjp, jvp)]
fn mixed(x: &[f64], a: f64) -> f64 {
    let mut total = 0.0;
    let mut round = 0;
    while round < 4 {
        let y = squash(x, a + round as f64 * 0.5);
        total += y.iter().map(|v| v.sin()).sum::<f64>();
        if total > 1.0 {
            let z = squash(&y, a);
            total += z[0] * z[1];
            break;
        }
        total += ad_runtime::sum(&squash(x, a));
        round += 1;
    }
    if a > 0.0 {
        let w = squash(x, total);
        total += w[2];
    }
    total
}

#[test]
fn buffers_returned_in_branches_and_while_loops() {
    // Points where the loop breaks at different rounds, and one where it
    // runs out and the last branch is not taken.
    for point in [
        [0.3, -0.7, 1.1, 0.4],
        [0.1, 0.2, -0.1, 0.2],
        [-0.3, -0.6, -0.2, -0.5],
    ] {
        let grad = check_scalar(
            |p| mixed(&p[..3], p[3]),
            buffer_then_scalar(mixed_vjp),
            &point,
        );
        check_jvp(
            |p| mixed(&p[..3], p[3]),
            |p, u| mixed_jvp(&p[..3], &u[..3], p[3], u[3]),
            &grad,
            &point,
        );
    }
}

// ---------------------------------------------------------------------------
// Arrays returned by value and destructured in a loop.

#[differentiate]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `r` precessing about `q`, with the components of each cross product
/// bound by a pattern.
#[differentiate]
fn precess(p: [f64; 3], q: [f64; 3]) -> f64 {
    let mut r = p;
    let mut acc = 0.0;
    for _ in 0..4 {
        let [a, b, c] = cross(r, q);
        acc += a * b + c;
        let n = cross(r, q);
        for j in 0..3 {
            r[j] += 0.1 * n[j];
        }
    }
    acc + r[0]
}

#[test]
fn arrays_destructured_in_a_loop() {
    let point = [0.3, 0.5, 0.7, 1.0, -0.2, 0.4];
    let split = |p: &[f64]| ([p[0], p[1], p[2]], [p[3], p[4], p[5]]);
    check_scalar(
        |p| {
            let (a, b) = split(p);
            precess(a, b)
        },
        |p, seed| {
            let (a, b) = split(p);
            let (out, da, db) = precess_vjp(a, b, seed);
            (out, da.iter().chain(&db).copied().collect())
        },
        &point,
    );
}

// ---------------------------------------------------------------------------
// Generic code, in `f32`.

#[differentiate]
fn doubled<T: Float>(x: &[T]) -> Vec<T> {
    x.iter().map(|&v| v + v).collect()
}

#[differentiate]
fn repeated_products<T: Float>(x: &[T], n: usize) -> T {
    let mut s = T::ZERO;
    for _ in 0..n {
        let y = doubled(x);
        s += y[0] * y[1];
    }
    s
}

#[test]
fn generic_callees_in_loops() {
    // s = 4 n x₀ x₁.
    let x = [0.5_f32, 2.0];
    let mut d = [0.0_f32; 2];
    let out = repeated_products_vjp(&x, &mut d, 3, 1.0);
    assert_eq!(out, repeated_products(&x, 3));
    assert_eq!(d, [24.0, 6.0]);
    let grad = check_scalar_within(
        1e-3,
        |p| f64::from(repeated_products(&[p[0] as f32, p[1] as f32], 2)),
        |p, seed| {
            let mut d = [0.0_f32; 2];
            let out = repeated_products_vjp(&[p[0] as f32, p[1] as f32], &mut d, 2, seed as f32);
            (f64::from(out), d.iter().map(|&v| f64::from(v)).collect())
        },
        &[0.5, 2.0],
    );
    assert_close(&grad, &[16.0, 4.0]);
}

// ---------------------------------------------------------------------------
// One buffer per call: a callee whose output changes length is refused at
// run time, by name, rather than given a wrong gradient.

#[differentiate]
fn prefix(x: &[f64], n: usize) -> Vec<f64> {
    x[..n].to_vec()
}

#[differentiate]
fn growing(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for n in 1..3 {
        let y = prefix(x, n);
        s += y[0];
    }
    s
}

#[test]
#[should_panic(expected = "returned 2 elements after 1")]
fn an_output_that_changes_length_panics() {
    let x = [1.0, 2.0];
    let mut d = [0.0; 2];
    let _ = growing_vjp(&x, &mut d, 1.0);
}

// ---------------------------------------------------------------------------
// Sorting in a loop, the way the error for a sort in a loop suggests: in a
// function of its own that returns the sorted `Vec`.

#[differentiate]
fn shifted_sorted(x: &[f64], k: f64, r: f64) -> Vec<f64> {
    let mut v: Vec<f64> = x.iter().map(|a| a * k + r).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// `Σ_r med_r · min_r` of the shifted, scaled values.
#[differentiate]
fn medians_times_minima(x: &[f64], k: f64) -> f64 {
    let mut s = 0.0;
    for r in 0..2 {
        let v = shifted_sorted(x, k, f64::from(r));
        s += v[v.len() / 2] * v[0];
    }
    s
}

#[test]
fn sorting_in_a_loop_through_a_callee() {
    let point = [0.3, -0.7, 1.1, 0.05, 0.5, 0.9];
    let grad = check_scalar(
        |p| medians_times_minima(&p[..5], p[5]),
        buffer_then_scalar(medians_times_minima_vjp),
        &point,
    );
    // The median is x[0] (0.3), the minimum x[1] (−0.7), after scaling by
    // k > 0: Σ_r (k x₀ + r)(k x₁ + r).
    let (x0, x1, k) = (point[0], point[1], point[5]);
    let mut expected = vec![0.0; 6];
    for r in 0..2 {
        let r = f64::from(r);
        expected[0] += k * (k * x1 + r);
        expected[1] += k * (k * x0 + r);
        expected[5] += x0 * (k * x1 + r) + x1 * (k * x0 + r);
    }
    assert_close(&grad, &expected);
}

// ---------------------------------------------------------------------------
// The pullback of a call whose output went into a buffer reads that
// buffer's shadow, which the adjoint then resets: the pullback must run
// before the reset even when its value is only added into a shadow later
// (it gave zero gradients once, here).

#[differentiate]
fn on_circle(t: f64) -> [f64; 2] {
    [t.cos(), t.sin()]
}

#[differentiate]
#[allow(clippy::needless_range_loop)] // The index loop is the shape that failed.
fn half_sines(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let p = on_circle(x[i]);
        if p[0] < 0.0 {
            continue;
        }
        s += p[0] * p[1];
    }
    s
}

#[test]
fn a_pullback_reads_the_seed_before_it_is_reset() {
    let x = [0.3, -0.7, 1.1, 2.0, -2.5];
    let grad = check_scalar(
        half_sines,
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            (half_sines_vjp(p, &mut d, seed), d)
        },
        &x,
    );
    // cos t sin t = sin(2t) / 2 where cos t ≥ 0: derivative cos(2t).
    let expected: Vec<f64> = x
        .iter()
        .map(|t| if t.cos() < 0.0 { 0.0 } else { (2.0 * t).cos() })
        .collect();
    assert_close(&grad, &expected);
}

// ---------------------------------------------------------------------------
// A returned buffer lent straight to another differentiated function,
// `tot(&squares(x))`, at the top level and in a loop.

#[differentiate]
fn squares(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v * v).collect()
}

#[differentiate]
fn total(x: &[f64]) -> f64 {
    x.iter().sum()
}

/// `Σ_r r k Σx² + Σx²`, with `r` in `0..3`: `(3k + 1) Σx²`.
#[differentiate]
fn nested_calls(x: &[f64], k: f64) -> f64 {
    let mut s = total(&squares(x));
    for r in 0..3 {
        s += total(&squares(x)) * k * f64::from(r);
    }
    s
}

#[test]
fn a_returned_buffer_lent_to_another_call() {
    let point = [0.3, -0.7, 1.1, 0.8];
    let grad = check_scalar(
        |p| nested_calls(&p[..3], p[3]),
        buffer_then_scalar(nested_calls_vjp),
        &point,
    );
    let k = point[3];
    let mut expected: Vec<f64> = point[..3]
        .iter()
        .map(|v| 2.0 * v * (3.0 * k + 1.0))
        .collect();
    expected.push(3.0 * point[..3].iter().map(|v| v * v).sum::<f64>());
    assert_close(&grad, &expected);
}

// ---------------------------------------------------------------------------
// A returned buffer chosen by a branch: `return` guards, and an `if` as the
// final expression.

/// `x / |x|`, with guards for the empty and the zero vector.
#[differentiate(vjp, jvp)]
fn normalized(x: &[f64]) -> Vec<f64> {
    if x.is_empty() {
        return vec![];
    }
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm == 0.0 {
        return x.to_vec();
    }
    let mut out = vec![0.0; x.len()];
    for i in 0..x.len() {
        out[i] = x[i] / norm;
    }
    out
}

/// Twice `x`, or `x` itself: a callee's buffer returned by a guard.
#[differentiate(vjp, jvp)]
fn twice(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| 2.0 * v).collect()
}

#[differentiate(vjp, jvp)]
fn doubled_if_long(x: &[f64]) -> Vec<f64> {
    if x.len() > 2 {
        return twice(x);
    }
    x.to_vec()
}

/// Three branches: a scaled copy, a buffer of its own length, nothing.
#[differentiate(vjp, jvp)]
fn picked(x: &[f64], a: f64) -> Vec<f64> {
    if a > 0.0 {
        let mut v = x.to_vec();
        v[0] *= a;
        v
    } else if a < -1.0 {
        vec![a; 2]
    } else {
        Vec::new()
    }
}

#[test]
fn a_returned_buffer_chosen_by_a_branch() {
    let x = [0.3, -0.4, 1.2];
    let seed = [1.0, 0.5, -0.25];
    let vjp = |p: &[f64], s: &[f64]| {
        let mut d = vec![0.0; p.len()];
        let out = normalized_vjp(p, &mut d, s);
        (out, d)
    };
    let adjoint = ad_tests::check_vector(normalized, vjp, &x, &seed);
    // d(x/|x|)ᵀ s = (s - (u·s) u) / |x|, u = x / |x|.
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let u: Vec<f64> = x.iter().map(|v| v / norm).collect();
    let us: f64 = u.iter().zip(&seed).map(|(a, b)| a * b).sum();
    let expected: Vec<f64> = (0..3).map(|i| (seed[i] - us * u[i]) / norm).collect();
    assert_close(&adjoint, &expected);
    // The guards: nothing, and the copy.
    assert_eq!(normalized_vjp(&[], &mut [], &[]), Vec::<f64>::new());
    let mut d = [0.0; 2];
    assert_eq!(normalized_vjp(&[0.0, 0.0], &mut d, &[2.0, 3.0]), [0.0, 0.0]);
    assert_eq!(d, [2.0, 3.0]);
    // Forward mode agrees: <J u, s> = <u, Jᵀ s>.
    let direction = [0.2, -0.7, 0.4];
    let (out, tangent) = normalized_jvp(&x, &direction);
    assert_eq!(out, normalized(&x));
    let lhs: f64 = tangent.iter().zip(&seed).map(|(a, b)| a * b).sum();
    let rhs: f64 = direction.iter().zip(&adjoint).map(|(a, b)| a * b).sum();
    assert!((lhs - rhs).abs() < 1e-12, "{lhs} vs {rhs}");

    for len in [2, 3] {
        let seed = [0.5, -1.0, 2.0];
        let adjoint = ad_tests::check_vector(
            doubled_if_long,
            |p, s| {
                let mut d = vec![0.0; p.len()];
                let out = doubled_if_long_vjp(p, &mut d, s);
                (out, d)
            },
            &x[..len],
            &seed[..len],
        );
        let factor = if len > 2 { 2.0 } else { 1.0 };
        let expected: Vec<f64> = seed[..len].iter().map(|s| factor * s).collect();
        assert_close(&adjoint, &expected);
        let (out, tangent) = doubled_if_long_jvp(&x[..len], &seed[..len]);
        assert_eq!(out, doubled_if_long(&x[..len]));
        assert_close(&tangent, &expected);
    }

    for a in [0.5, -2.0, -0.5] {
        let n = picked(&x, a).len();
        let seed = vec![0.75; n];
        let point: Vec<f64> = x.iter().copied().chain([a]).collect();
        let adjoint = ad_tests::check_vector(
            |p| picked(&p[..3], p[3]),
            |p, s| {
                let mut d = vec![0.0; 3];
                let (out, d_a) = picked_vjp(&p[..3], &mut d, p[3], s);
                d.push(d_a);
                (out, d)
            },
            &point,
            &seed,
        );
        let expected = match n {
            3 => vec![0.75 * a, 0.75, 0.75, 0.75 * x[0]],
            2 => vec![0.0, 0.0, 0.0, 1.5],
            _ => vec![0.0; 4],
        };
        assert_close(&adjoint, &expected);
    }
}
