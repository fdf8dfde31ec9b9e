//! Vector forward mode: `#[differentiate(jvp_lanes)]` generates
//! `_jvp_lanes::<K>`, every tangent a `Lanes<T, K>` of `K` directions.
//! Each function is checked against a closed form, its `_vjp` against finite
//! differences and the dot-product test (`check_scalar`, `check_vector`), its
//! `_jvp` against finite differences and the `_vjp` (`check_jvp`), and its
//! `_jvp_lanes` against the `_jvp`, lane by lane, bit for bit
//! (`check_lanes`). The random programs of the corpus check `_jvp_lanes`
//! the same way.
#![allow(clippy::needless_range_loop)]

use ad_runtime::{Float, Lanes, custom_jvp, custom_vjp, differentiate, jacobian};
use ad_tests::{assert_close, check_jvp, check_lanes, check_scalar, check_vector};

type L3 = Lanes<f64, 3>;

/// The lanes of a float `t`, as `check_lanes` passes them, and back.
fn one(t: L3) -> Vec<L3> {
    vec![t]
}

// ---------------------------------------------------------------------------
// Scalars.

#[differentiate(vjp, jvp, jvp_lanes)]
fn blend(x: f64, y: f64) -> f64 {
    let r = x.atan2(y) / x;
    r.powi(3) + x.max(y) * (x * y).sin() - (y / x).exp().sqrt()
}

#[test]
fn both_partial_derivatives_in_one_call() {
    let (x, y) = (0.7, 1.3);
    let (out, t) = blend_jvp_lanes(x, Lanes([1.0, 0.0]), y, Lanes([0.0, 1.0]));
    assert_eq!(out.to_bits(), blend(x, y).to_bits());
    // Closed form of ∂/∂x and ∂/∂y (here y > x, so max is y).
    let r = x.atan2(y) / x;
    let (dr_dx, dr_dy) = (
        (y / (x * x + y * y)) / x - r / x,
        (-x / (x * x + y * y)) / x,
    );
    let e = (y / x).exp().sqrt();
    let d_x = 3.0 * r * r * dr_dx + y * y * (x * y).cos() + e * y / (2.0 * x * x);
    let d_y = 3.0 * r * r * dr_dy + (x * y).sin() + y * x * (x * y).cos() - e / (2.0 * x);
    assert_close(&t.0, &[d_x, d_y]);
    let grad = check_scalar(
        |p| blend(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_y) = blend_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_y])
        },
        &[x, y],
    );
    check_jvp(
        |p| blend(p[0], p[1]),
        |p, u| blend_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &[x, y],
    );
    check_lanes(
        |p, u| {
            let (out, t) = blend_jvp(p[0], u[0], p[1], u[1]);
            (vec![out], vec![t])
        },
        |p, u| {
            let (out, t) = blend_jvp_lanes(p[0], u[0], p[1], u[1]);
            (vec![out], one(t))
        },
        &[x, y],
    );
}

/// `f32` and a generic function, with a cast between widths and a callee.
#[differentiate(vjp, jvp, jvp_lanes)]
fn softplus_t<T: Float>(x: T, w: T) -> T {
    (T::ONE + (w * x).exp()).ln() + square(x)
}

#[differentiate(vjp, jvp, jvp_lanes)]
fn square<T: Float>(x: T) -> T {
    x * x
}

#[differentiate(jvp, jvp_lanes)]
fn widened(x: f32, y: f64) -> f64 {
    (x.sin() as f64) * y + f64::from(x * x)
}

#[test]
fn f32_generic_functions_casts_and_callees() {
    let (x, w) = (0.4_f32, -1.5_f32);
    let (out, t) = softplus_t_jvp_lanes(x, Lanes([1.0, 0.0, 2.0]), w, Lanes([0.0, 1.0, 1.0]));
    assert_eq!(out.to_bits(), softplus_t(x, w).to_bits());
    let sigma = 1.0 / (1.0 + (-(w * x)).exp());
    let (d_x, d_w) = (w * sigma + 2.0 * x, x * sigma);
    for (lane, expected) in [d_x, d_w, 2.0 * d_x + d_w].into_iter().enumerate() {
        assert!(
            (t[lane] - expected).abs() < 1e-5,
            "lane {lane}: {} vs {expected}",
            t[lane]
        );
    }
    let grad = check_scalar(
        |p| softplus_t(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_w) = softplus_t_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_w])
        },
        &[0.4, -1.5],
    );
    check_jvp(
        |p| softplus_t(p[0], p[1]),
        |p, u| softplus_t_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &[0.4, -1.5],
    );
    check_lanes(
        |p, u| {
            let (out, t) = softplus_t_jvp(p[0], u[0], p[1], u[1]);
            (vec![out], vec![t])
        },
        |p, u| {
            let (out, t) = softplus_t_jvp_lanes(p[0], u[0], p[1], u[1]);
            (vec![out], one(t))
        },
        &[0.4, -1.5],
    );
    // The cast: lanes of `f32` become lanes of `f64`, each as `_jvp` casts.
    let (out, t) = widened_jvp_lanes(0.3, Lanes([1.0_f32, 0.0]), 2.0, Lanes([0.0, 1.0]));
    assert_eq!(out, widened(0.3, 2.0));
    let expected_x = f64::from(0.3_f32.cos()) * 2.0 + f64::from(2.0 * 0.3_f32);
    assert!((t[0] - expected_x).abs() < 1e-6);
    assert_eq!(t[1], f64::from(0.3_f32.sin()));
    for lane in 0..2 {
        let u = [[1.0_f32, 0.0], [0.0, 1.0]][lane];
        let (_, expected) = widened_jvp(0.3, u[0], 2.0, f64::from(u[1]));
        assert_eq!(t[lane].to_bits(), expected.to_bits());
    }
}

// ---------------------------------------------------------------------------
// Control flow and buffers.

/// A `while` loop with an integer counter, a branch, a `break`, and a buffer
/// read and written.
#[differentiate(vjp, jvp, jvp_lanes)]
fn relaxed(xs: &[f64], k: f64) -> f64 {
    let mut v = xs.to_vec();
    let mut i = 1;
    let mut total = 0.0;
    while i < v.len() {
        v[i] = v[i - 1] * k + v[i].tanh();
        if v[i] > 3.0 {
            break;
        }
        total += if v[i] > 0.0 { v[i] * v[i] } else { -v[i] };
        i += 1;
    }
    total + ad_runtime::dot(&v, xs) + ad_runtime::norm2(xs) - ad_runtime::logsumexp(&v)
}

#[test]
fn loops_branches_and_the_coarse_primitives() {
    let p = [
        0.3, -0.8, 0.5, 1.1, -0.2, 0.9, 0.4, -0.6, 0.25, 0.7, -0.1, 0.05, 0.6,
    ];
    let vjp = |p: &[f64], seed: f64| {
        let n = p.len() - 1;
        let mut d_xs = vec![0.0; n];
        let (out, d_k) = relaxed_vjp(&p[..n], &mut d_xs, p[n], seed);
        d_xs.push(d_k);
        (out, d_xs)
    };
    let f = |p: &[f64]| relaxed(&p[..p.len() - 1], p[p.len() - 1]);
    let grad = check_scalar(f, vjp, &p);
    let jvp = |p: &[f64], u: &[f64]| {
        let n = p.len() - 1;
        relaxed_jvp(&p[..n], &u[..n], p[n], u[n])
    };
    check_jvp(f, jvp, &grad, &p);
    check_lanes(
        |p, u| {
            let (out, t) = jvp(p, u);
            (vec![out], vec![t])
        },
        |p, u| {
            let n = p.len() - 1;
            let (out, t) = relaxed_jvp_lanes(&p[..n], &u[..n], p[n], u[n]);
            (vec![out], one(t))
        },
        &p,
    );
}

/// A `Vec` output, an in-place `&mut` buffer, and an iterator chain.
#[differentiate(vjp, jvp, jvp_lanes)]
fn smooth(xs: &[f64], state: &mut [f64], a: f64) -> Vec<f64> {
    for (s, &x) in state.iter_mut().zip(xs) {
        *s = a * *s + (1.0 - a) * x;
    }
    xs.windows(2).map(|w| (w[1] - w[0]) * a).collect()
}

#[test]
fn buffer_outputs_and_in_place_tangents() {
    let xs = [0.5, -1.0, 2.0, 0.25];
    let state0 = [0.1, 0.2, -0.3, 0.4];
    let a = 0.8;
    let mut state = state0;
    let mut t_state = [
        Lanes([1.0, 0.0]),
        Lanes::ZERO,
        Lanes::ZERO,
        Lanes([0.0, 2.0]),
    ];
    let t_xs = [Lanes([0.0, 1.0]); 4];
    let (out, t_out) = smooth_jvp_lanes(&xs, &t_xs, &mut state, &mut t_state, a, Lanes([1.0, 0.0]));
    let mut plain = state0;
    assert_eq!(out, smooth(&xs, &mut plain, a));
    assert_eq!(state, plain);
    // Lane 0 moves state[0] and a; lane 1 moves every x and state[3] by 2.
    assert_close(
        &[t_state[0][0], t_state[1][0], t_state[0][1], t_state[3][1]],
        &[
            a + state0[0] - xs[0],
            state0[1] - xs[1],
            1.0 - a,
            2.0 * a + 1.0 - a,
        ],
    );
    assert_close(
        &t_out.iter().map(|t| t[0]).collect::<Vec<_>>(),
        &[-1.5, 3.0, -1.75],
    );
    assert_close(&t_out.iter().map(|t| t[1]).collect::<Vec<_>>(), &[0.0; 3]);
    // Three ways, over the point (xs…, state…, a), the outputs being the
    // returned `Vec` then the final state.
    let f = |p: &[f64]| {
        let mut state = p[4..8].to_vec();
        let mut out = smooth(&p[..4], &mut state, p[8]);
        out.extend(state);
        out
    };
    let point: Vec<f64> = xs.iter().chain(&state0).copied().chain([a]).collect();
    check_vector(
        f,
        |p, seed| {
            let mut state = p[4..8].to_vec();
            let mut d_xs = vec![0.0; 4];
            let mut d_state = seed[3..].to_vec();
            let (mut out, d_a) = smooth_vjp(
                &p[..4],
                &mut d_xs,
                &mut state,
                &mut d_state,
                p[8],
                &seed[..3],
            );
            out.extend(state);
            d_xs.extend(d_state);
            d_xs.push(d_a);
            (out, d_xs)
        },
        &point,
        &[0.5, -1.0, 2.0, 0.3, 0.1, -0.7, 1.2],
    );
    let jvp = |p: &[f64], u: &[f64]| {
        let mut state = p[4..8].to_vec();
        let mut t_state = u[4..8].to_vec();
        let (mut out, mut t_out) =
            smooth_jvp(&p[..4], &u[..4], &mut state, &mut t_state, p[8], u[8]);
        out.extend(state);
        t_out.extend(t_state);
        (out, t_out)
    };
    let by_rows = jacobian::reverse(7, 9, |seed, row| {
        let mut state = point[4..8].to_vec();
        let mut d_state = seed[3..].to_vec();
        let mut d_xs = vec![0.0; 4];
        let (_, d_a) = smooth_vjp(
            &point[..4],
            &mut d_xs,
            &mut state,
            &mut d_state,
            point[8],
            &seed[..3],
        );
        row[..4].copy_from_slice(&d_xs);
        row[4..8].copy_from_slice(&d_state);
        row[8] = d_a;
    });
    let by_lanes = jacobian::forward_lanes::<f64, 4>(7, 9, |u, columns| {
        let mut state = point[4..8].to_vec();
        let mut t_state = u[4..8].to_vec();
        let (_, t_out) = smooth_jvp_lanes(
            &point[..4],
            &u[..4],
            &mut state,
            &mut t_state,
            point[8],
            u[8],
        );
        columns[..3].copy_from_slice(&t_out);
        columns[3..].copy_from_slice(&t_state);
    });
    assert_close(&by_lanes, &by_rows);
    check_lanes(
        jvp,
        |p, u| {
            let mut state = p[4..8].to_vec();
            let mut t_state = u[4..8].to_vec();
            let (mut out, mut t_out) =
                smooth_jvp_lanes(&p[..4], &u[..4], &mut state, &mut t_state, p[8], u[8]);
            out.extend(state);
            t_out.extend(t_state);
            (out, t_out)
        },
        &point,
    );
}

// ---------------------------------------------------------------------------
// Calls, arrays, rows, tuples, `wrt`.

#[differentiate(vjp, jvp, jvp_lanes)]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[differentiate(vjp, jvp, jvp_lanes)]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

/// Rows of points, a callee returning an array in a loop, a tuple callee.
#[differentiate(vjp, jvp, jvp_lanes)]
fn swept_area(pts: &[[f64; 3]], w: f64) -> f64 {
    let mut total = 0.0;
    for i in 1..pts.len() {
        let c = cross(pts[i - 1], pts[i]);
        let (r, theta) = polar(c[0], c[1] * w);
        total += r * theta.cos() + c[2];
    }
    total
}

#[test]
fn calls_arrays_rows_and_tuples() {
    let pts = [
        [0.3, -0.2, 1.0],
        [0.5, 0.8, -0.4],
        [-0.7, 0.1, 0.6],
        [0.2, 0.9, 0.3],
    ];
    let w = 1.7;
    let mut point: Vec<f64> = pts.as_flattened().to_vec();
    point.push(w);
    let rows = |p: &[f64]| -> Vec<[f64; 3]> {
        p[..12]
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect()
    };
    let f = |p: &[f64]| swept_area(&rows(p), p[12]);
    let grad = check_scalar(
        f,
        |p, seed| {
            let mut d_pts = vec![[0.0; 3]; 4];
            let (out, d_w) = swept_area_vjp(&rows(p), &mut d_pts, p[12], seed);
            let mut grad = d_pts.as_flattened().to_vec();
            grad.push(d_w);
            (out, grad)
        },
        &point,
    );
    let jvp = |p: &[f64], u: &[f64]| swept_area_jvp(&rows(p), &rows(u), p[12], u[12]);
    check_jvp(f, jvp, &grad, &point);
    check_lanes(
        |p, u| {
            let (out, t) = jvp(p, u);
            (vec![out], vec![t])
        },
        |p, u| {
            let t_pts: Vec<[L3; 3]> = u[..12]
                .chunks_exact(3)
                .map(|c| [c[0], c[1], c[2]])
                .collect();
            let (out, t) = swept_area_jvp_lanes(&rows(p), &t_pts, p[12], u[12]);
            (vec![out], one(t))
        },
        &point,
    );
    // The tuple callee by itself: lanes of each component.
    let (out, (t_r, t_theta)) = polar_jvp_lanes(3.0, Lanes([1.0, 0.0]), 4.0, Lanes([0.0, 1.0]));
    assert_eq!(out, polar(3.0, 4.0));
    assert_close(
        &[t_r[0], t_r[1], t_theta[0], t_theta[1]],
        &[0.6, 0.8, -0.16, 0.12],
    );
    // The array callee: e_x × e_y moves to e_x × (e_y + t e_z) = e_z - t e_y.
    let (out, t) = cross_jvp_lanes(
        [1.0, 0.0, 0.0],
        [Lanes::ZERO; 3],
        [0.0, 1.0, 0.0],
        [Lanes::ZERO, Lanes::ZERO, Lanes([1.0])],
    );
    assert_eq!(out, [0.0, 0.0, 1.0]);
    assert_eq!(t.map(|t| t[0]), [0.0, -1.0, 0.0]);
}

/// Only `k` has tangents with `wrt(k)`: the Jacobian of a trajectory with
/// respect to two parameters, both columns in one call.
#[differentiate(vjp, jvp, jvp_lanes, wrt(k))]
fn trajectory(k: &[f64], x0: f64, steps: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(steps);
    let mut x = x0;
    for _ in 0..steps {
        x += 0.1 * (k[0] * x.sin() - k[1] * x);
        out.push(x);
    }
    out
}

#[test]
fn wrt_and_the_jacobian_of_a_trajectory() {
    let (k, x0, steps) = ([1.3, 0.4], 0.5, 25);
    let t_k = [Lanes([1.0, 0.0]), Lanes([0.0, 1.0])];
    let (out, t_out) = trajectory_jvp_lanes(&k, &t_k, x0, steps);
    assert_eq!(out, trajectory(&k, x0, steps));
    // Against the forward recurrence of the two sensitivities, by hand.
    let (mut x, mut s) = (x0, [0.0, 0.0]);
    for step in 0..steps {
        let factor = 1.0 + 0.1 * (k[0] * x.cos() - k[1]);
        s = [factor * s[0] + 0.1 * x.sin(), factor * s[1] - 0.1 * x];
        x += 0.1 * (k[0] * x.sin() - k[1] * x);
        assert_close(&t_out[step].0, &s);
    }
    let by_rows = jacobian::reverse(steps, 2, |seed, row| {
        trajectory_vjp(&k, row, x0, steps, seed);
    });
    let by_lanes = jacobian::forward_lanes::<f64, 2>(steps, 2, |u, columns| {
        columns.copy_from_slice(&trajectory_jvp_lanes(&k, u, x0, steps).1);
    });
    assert_close(&by_lanes, &by_rows);
    let seed: Vec<f64> = (0..steps).map(|i| (i as f64 * 0.3).cos()).collect();
    check_vector(
        |p| trajectory(p, x0, steps),
        |p, seed| {
            let mut d_k = vec![0.0; 2];
            let out = trajectory_vjp(p, &mut d_k, x0, steps, seed);
            (out, d_k)
        },
        &k,
        &seed,
    );
    check_lanes(
        |p, u| trajectory_jvp(p, u, x0, steps),
        |p, u| trajectory_jvp_lanes(p, u, x0, steps),
        &k,
    );
}

// ---------------------------------------------------------------------------
// A callee with its own forward rule: `_jvp_lanes` calls the rule lane by lane.

#[custom_vjp(softplus_vjp_rule)]
#[custom_jvp(softplus_jvp_rule)]
fn softplus(x: f64, k: i32) -> f64 {
    let y = x * f64::from(k);
    if y > 30.0 { y } else { y.exp().ln_1p() }
}

fn softplus_vjp_rule(x: f64, k: i32, _out: f64, d_out: f64) -> f64 {
    d_out * f64::from(k) / (1.0 + (-x * f64::from(k)).exp())
}

fn softplus_jvp_rule(x: f64, t_x: f64, k: i32) -> (f64, f64) {
    (
        softplus(x, k),
        t_x * f64::from(k) / (1.0 + (-x * f64::from(k)).exp()),
    )
}

#[differentiate(vjp, jvp, jvp_lanes)]
fn uses_a_custom_rule(x: f64, y: f64) -> f64 {
    softplus(x * y, 2) + x
}

#[test]
fn callees_with_a_custom_forward_rule() {
    let (x, y) = (0.4, -0.7);
    let (out, t) = uses_a_custom_rule_jvp_lanes(x, Lanes([1.0, 0.0]), y, Lanes([0.0, 1.0]));
    assert_eq!(out.to_bits(), uses_a_custom_rule(x, y).to_bits());
    let sigma = 1.0 / (1.0 + (-2.0 * x * y).exp());
    assert_close(&t.0, &[2.0 * y * sigma + 1.0, 2.0 * x * sigma]);
    let grad = check_scalar(
        |p| uses_a_custom_rule(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_y) = uses_a_custom_rule_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_y])
        },
        &[x, y],
    );
    check_jvp(
        |p| uses_a_custom_rule(p[0], p[1]),
        |p, u| uses_a_custom_rule_jvp(p[0], u[0], p[1], u[1]),
        &grad,
        &[x, y],
    );
    check_lanes(
        |p, u| {
            let (out, t) = uses_a_custom_rule_jvp(p[0], u[0], p[1], u[1]);
            (vec![out], vec![t])
        },
        |p, u| {
            let (out, t) = uses_a_custom_rule_jvp_lanes(p[0], u[0], p[1], u[1]);
            (vec![out], one(t))
        },
        &[x, y],
    );
    // No lanes at all: the output alone.
    let (out, t) = uses_a_custom_rule_jvp_lanes::<0>(x, Lanes([]), y, Lanes([]));
    assert_eq!((out, t.0), (uses_a_custom_rule(x, y), []));
}

/// A function that names something `K` itself: the lanes' const parameter
/// takes another name (a `let K` in scope of `const K` would be a pattern).
#[allow(non_snake_case)]
#[differentiate(jvp, jvp_lanes)]
fn names_k(x: f64, K: f64) -> f64 {
    let k_squared = K * K;
    x * k_squared
}

#[test]
fn a_function_naming_k() {
    let (out, t) = names_k_jvp_lanes(2.0, Lanes([1.0, 0.0]), 3.0, Lanes([0.0, 1.0]));
    assert_eq!((out, t.0), (18.0, [9.0, 12.0]));
    check_lanes(
        |p, u| {
            let (out, t) = names_k_jvp(p[0], u[0], p[1], u[1]);
            (vec![out], vec![t])
        },
        |p, u| {
            let (out, t) = names_k_jvp_lanes(p[0], u[0], p[1], u[1]);
            (vec![out], one(t))
        },
        &[2.0, 3.0],
    );
}
