//! Checkpointed loops: `#[checkpoint(snapshots = k)]` and
//! `#[checkpoint(memory = "…")]` on a `for` loop give the same `_vjp`, bit
//! for bit, as the loop without the attribute, for every trip count and
//! every number of snapshots (the schedule only changes which steps run
//! again). Each function is written once, as a `macro_rules!` taking the
//! attribute, and expanded twice: with it and without. Both are checked
//! against finite differences and the dot-product test; the memory the
//! schedule keeps is measured in `tests/checkpoint_memory.rs`.
#![allow(clippy::needless_range_loop)]

use ad_runtime::{Float, differentiate};
use ad_tests::{check_in_place, check_scalar};

/// A damped pendulum stepped by semi-implicit Euler: two carried floats.
macro_rules! pendulum {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(theta: f64, omega: f64, damping: f64, steps: usize, snapshots: usize) -> f64 {
            let _ = snapshots;
            let (mut theta, mut omega) = (theta, omega);
            let dt = 0.01;
            $(#[$ck])?
            for _ in 0..steps {
                let alpha = -9.81 * theta.sin() - damping * omega;
                omega += dt * alpha;
                theta += dt * omega;
            }
            theta * theta + 0.5 * omega * omega
        }
    };
}
pendulum!(pendulum, checkpoint(snapshots = snapshots));
pendulum!(pendulum_taped);

#[test]
fn a_pendulum_is_reversed_alike_for_every_trip_count_and_snapshot_count() {
    for steps in [0, 1, 2, 3, 10, 57] {
        for snapshots in [0, 1, 2, 3, 8, 100] {
            let checkpointed = pendulum_vjp(0.4, -0.2, 0.3, steps, snapshots, 1.0);
            let taped = pendulum_taped_vjp(0.4, -0.2, 0.3, steps, snapshots, 1.0);
            assert_eq!(checkpointed, taped, "steps {steps}, snapshots {snapshots}");
        }
    }
    let grad = check_scalar(
        |p| pendulum(p[0], p[1], p[2], 40, 3),
        |p, seed| {
            let (out, a, b, c) = pendulum_vjp(p[0], p[1], p[2], 40, 3, seed);
            (out, vec![a, b, c])
        },
        &[0.4, -0.2, 0.3],
    );
    // One step from rest at the bottom moves nothing: the closed form at 0.
    let (_, d_theta, d_omega, d_damping) = pendulum_vjp(0.0, 0.0, 0.3, 5, 2, 1.0);
    assert_eq!((d_theta, d_omega, d_damping), (0.0, 0.0, 0.0));
    assert!(grad.iter().all(|g| g.is_finite()));
}

/// Explicit diffusion of a `&mut` buffer in place, with an inner loop and a
/// nonlinearity: the loop state is the buffer.
macro_rules! diffusion {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(u: &mut [f64], c: f64, steps: usize) {
            let n = u.len();
            $(#[$ck])?
            for _ in 0..steps {
                for i in 1..n - 1 {
                    let lap = u[i - 1] - 2.0 * u[i] + u[i + 1];
                    u[i] += c * lap * (1.0 + 0.1 * u[i].tanh());
                }
            }
        }
    };
}
diffusion!(diffusion, checkpoint(memory = "2 KiB"));
diffusion!(diffusion_taped);

fn profile(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64 * 0.37).sin() + 0.1).collect()
}

#[test]
fn a_buffer_updated_in_place_is_restored_and_given_back() {
    // 2 KiB holds 12 states of 20 floats: long runs recompute.
    for steps in [0, 1, 4, 30, 200] {
        let (mut u, mut du) = (profile(20), profile(20));
        let (mut v, mut dv) = (profile(20), profile(20));
        diffusion_vjp(&mut u, &mut du, 0.2, steps);
        let d_c_taped = diffusion_taped_vjp(&mut v, &mut dv, 0.2, steps);
        let d_c = diffusion_vjp(&mut profile(20), &mut profile(20), 0.2, steps);
        assert_eq!(d_c, d_c_taped, "steps {steps}");
        // The buffer ends as the primal leaves it, whatever ran again.
        assert_eq!(u, v, "steps {steps}");
        assert_eq!(du, dv, "steps {steps}");
    }
    check_in_place(
        |state, c| diffusion(state, c, 25),
        |state, shadow, c| diffusion_vjp(state, shadow, c, 25),
        &profile(12),
        0.2,
        &profile(12),
    );
}

/// A running sum over a buffer read-only, a local buffer the loop
/// overwrites, a `break`, and a call to a differentiated function: what a
/// step reads from outside is read again, what it changes is restored.
#[differentiate]
fn smooth(a: f64, b: f64) -> f64 {
    (a * b).tanh() + a
}

macro_rules! mixed {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x: &[f64], w: f64, limit: f64) -> f64 {
            let n = x.len();
            let mut state = vec![0.0; 3];
            let mut total = 0.0;
            $(#[$ck])?
            for t in 0..n {
                if total > limit {
                    break;
                }
                let k = t % 3;
                state[k] = smooth(state[k] + x[t], w);
                total += state[k] * state[(k + 1) % 3];
            }
            total + state[0]
        }
    };
}
mixed!(mixed, checkpoint(snapshots = 2));
mixed!(mixed_taped);

#[test]
fn calls_local_buffers_and_breaks_are_checkpointed() {
    let x: Vec<f64> = (0..23).map(|i| 0.3 * (i as f64).cos()).collect();
    for limit in [-1.0, 0.5, 100.0] {
        let (mut dx, mut dx_taped) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        let checkpointed = mixed_vjp(&x, &mut dx, 0.8, limit, 1.0);
        let taped = mixed_taped_vjp(&x, &mut dx_taped, 0.8, limit, 1.0);
        assert_eq!(checkpointed, taped, "limit {limit}");
        assert_eq!(dx, dx_taped, "limit {limit}");
    }
    let n = x.len();
    check_scalar(
        |p| mixed(&p[..n], p[n], 100.0),
        |p, seed| {
            let mut dx = vec![0.0; n];
            let (out, d_w, _) = mixed_vjp(&p[..n], &mut dx, p[n], 100.0, seed);
            dx.push(d_w);
            (out, dx)
        },
        &[x.as_slice(), &[0.8]].concat(),
    );
}

/// Generic over the float type, stepping a reversed, strided range.
macro_rules! decay {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name<T: Float>(x: T, rate: T, n: usize) -> T {
            let mut y = x;
            $(#[$ck])?
            for i in (0..n).step_by(3).rev() {
                y = y * (T::ONE - rate * T::from_i32(i as i32 % 5)) + y.sin() * rate;
            }
            y
        }
    };
}
decay!(decay, checkpoint(snapshots = 3));
decay!(decay_taped);

#[test]
fn generic_strided_reversed_loops_are_checkpointed_in_f32_and_f64() {
    for n in [0, 1, 5, 31] {
        assert_eq!(
            decay_vjp(0.9_f64, 0.05, n, 1.0),
            decay_taped_vjp(0.9_f64, 0.05, n, 1.0)
        );
        assert_eq!(
            decay_vjp(0.9_f32, 0.05, n, 1.0),
            decay_taped_vjp(0.9_f32, 0.05, n, 1.0)
        );
    }
    check_scalar(
        |p| decay(p[0], p[1], 31),
        |p, seed| {
            let (out, a, b) = decay_vjp(p[0], p[1], 31, seed);
            (out, vec![a, b])
        },
        &[0.9, 0.05],
    );
}

#[test]
fn the_split_api_of_a_checkpointed_function_is_the_taped_one() {
    let (out, pullback) = pendulum_forward(0.4, -0.2, 0.3, 30, 4);
    let (expected, a, b, c) = pendulum_vjp(0.4, -0.2, 0.3, 30, 4, 1.0);
    assert_eq!(out, expected);
    assert_eq!(pullback(1.0), (a, b, c));
}

/// A returned buffer the loop overwrites: the output is the final state,
/// not the state the adjoint's recomputation left in it.
macro_rules! waves {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x: &[f64], c: f64, steps: usize) -> Vec<f64> {
            let mut v = x.to_vec();
            $(#[$ck])?
            for t in 0..steps {
                for i in 0..v.len() {
                    v[i] = (v[i] * c + t as f64 * 0.01).sin();
                }
            }
            v
        }
    };
}
waves!(waves, checkpoint(snapshots = 2));
waves!(waves_taped);

#[test]
fn a_returned_buffer_is_the_final_state() {
    let x = [0.3, -0.7, 1.1];
    let seed = [1.0, -2.0, 0.5];
    for steps in [0, 1, 6, 19] {
        let (mut dx, mut dx_taped) = ([0.0; 3], [0.0; 3]);
        let checkpointed = waves_vjp(&x, &mut dx, 0.9, steps, &seed);
        let taped = waves_taped_vjp(&x, &mut dx_taped, 0.9, steps, &seed);
        assert_eq!(checkpointed.0, waves(&x, 0.9, steps), "steps {steps}");
        assert_eq!(checkpointed, taped, "steps {steps}");
        assert_eq!(dx, dx_taped, "steps {steps}");
    }
    ad_tests::check_vector(
        |p| waves(&p[..3], p[3], 19),
        |p, seed| {
            let mut dx = vec![0.0; 3];
            let (out, d_c) = waves_vjp(&p[..3], &mut dx, p[3], 19, seed);
            dx.push(d_c);
            (out, dx)
        },
        &[0.3, -0.7, 1.1, 0.9],
        &seed,
    );
}

/// A `while` until a tolerance: its trip count is not known when it
/// starts, so the schedule is the online one.
macro_rules! settle {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x0: f64, k: f64, tol: f64) -> f64 {
            let mut x = x0;
            let mut v = 0.0;
            let mut t = 0.0;
            $(#[$ck])?
            while x.abs() > tol {
                v = 0.9 * v - 0.05 * k * x.sin();
                x += v;
                t += x * x;
            }
            t + v
        }
    };
}
settle!(settle, checkpoint(snapshots = 4));
settle!(settle_taped);

/// A `loop` left by a `break`, changing a buffer, with a memory budget.
macro_rules! relax {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x: &mut [f64], c: f64) -> f64 {
            let mut steps = 0;
            let mut e = 1.0;
            $(#[$ck])?
            loop {
                for i in 1..x.len() {
                    x[i] = x[i] * c + x[i - 1].tanh() * 0.1;
                }
                e = e * c + x[0] * x[1];
                steps += 1;
                if steps >= 25 || e > 40.0 {
                    break;
                }
            }
            e + x[2]
        }
    };
}
relax!(relax, checkpoint(memory = "200 B"));
relax!(relax_taped);

/// A counting `while`, which is the `for` it stands for: the offline schedule.
macro_rules! counted {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x: f64, n: usize) -> f64 {
            let mut y = x;
            let mut i = 0;
            $(#[$ck])?
            while i < n {
                y = (y * 1.1).sin() + i as f64 * 0.01;
                i += 1;
            }
            y
        }
    };
}
counted!(counted, checkpoint(snapshots = 3));
counted!(counted_taped);

#[test]
fn while_and_loop_are_checkpointed_online() {
    for x0 in [0.01, 1.0, 2.5, -2.0] {
        for tol in [1e-3, 0.2] {
            assert_eq!(
                settle_vjp(x0, 2.0, tol, 1.0),
                settle_taped_vjp(x0, 2.0, tol, 1.0),
                "x0 {x0}, tol {tol}"
            );
        }
    }
    check_scalar(
        |p| settle(p[0], p[1], 1e-3),
        |p, seed| {
            let (out, a, b, _) = settle_vjp(p[0], p[1], 1e-3, seed);
            (out, vec![a, b])
        },
        &[1.0, 2.0],
    );
    for c in [0.5, 1.3] {
        let (mut x, mut dx) = (vec![0.3, 0.5, -0.2, 0.9], vec![0.1, 0.2, 0.3, 0.4]);
        let (mut y, mut dy) = (x.clone(), dx.clone());
        let checkpointed = relax_vjp(&mut x, &mut dx, c, 1.0);
        assert_eq!(checkpointed, relax_taped_vjp(&mut y, &mut dy, c, 1.0));
        assert_eq!((x, dx), (y, dy), "c {c}");
    }
    for n in [0, 1, 7, 40] {
        assert_eq!(counted_vjp(0.4, n, 1.0), counted_taped_vjp(0.4, n, 1.0));
    }
}

// ---------------------------------------------------------------------------
// Checkpointed calls: `ad_runtime::checkpoint(g(x))` in a loop saves the
// call's arguments, not its pullback, and makes the call again in the
// adjoint loop. Written once per function with and without the marker (the
// `mark` argument of the macros below), they give the same `_vjp`, bit for
// bit.

/// A step with an inner loop: its pullback holds a tape of 64 values.
#[differentiate]
fn substeps(x: f64, k: f64) -> f64 {
    let mut y = x;
    for _ in 0..64 {
        y += 0.01 * (k * y).sin();
    }
    y
}

/// A layer over a weight buffer nothing changes: read again in the adjoint.
#[differentiate]
fn layer(w: &[f64], x: f64) -> f64 {
    let mut s = 0.0;
    for &wi in w {
        s += (wi * x).tanh();
    }
    s / w.len() as f64
}

macro_rules! rollout {
    ($name:ident, $($mark:ident)::*) => {
        #[differentiate]
        fn $name(x0: f64, k: f64, w: &[f64], steps: usize) -> f64 {
            let mut x = x0;
            let mut total = 0.0;
            for i in 0..steps {
                x = $($mark)::*(substeps(x, k));
                // A nested loop, a constant argument and a buffer.
                for j in 0..2 {
                    total += $($mark)::*(layer(w, x + j as f64 * 0.1)) * (i as f64 + 1.0);
                }
            }
            x + total
        }
    };
}
rollout!(rollout_checkpointed, ad_runtime::checkpoint);
rollout!(rollout_taped,);

#[test]
fn a_checkpointed_call_gives_the_same_gradient() {
    let w = [0.3, -0.8, 1.1];
    for steps in [0, 1, 7] {
        let mut d_w = [[0.0; 3]; 2];
        let checkpointed = rollout_checkpointed_vjp(0.4, 1.3, &w, &mut d_w[0], steps, 1.0);
        let taped = rollout_taped_vjp(0.4, 1.3, &w, &mut d_w[1], steps, 1.0);
        assert_eq!(checkpointed, taped, "{steps} steps");
        assert_eq!(d_w[0], d_w[1], "{steps} steps");
        check_scalar(
            |p| rollout_checkpointed(p[0], p[1], &p[2..], steps),
            |p, seed| {
                let mut d = vec![0.0; p.len()];
                let (out, d_x0, d_k) =
                    rollout_checkpointed_vjp(p[0], p[1], &p[2..], &mut d[2..], steps, seed);
                d[0] = d_x0;
                d[1] = d_k;
                (out, d)
            },
            &[0.4, 1.3, 0.3, -0.8, 1.1],
        );
    }
}

#[test]
fn a_checkpointed_call_in_the_split_api() {
    let w = [0.3, -0.8, 1.1];
    let (out, pullback) = rollout_checkpointed_forward(0.4, 1.3, &w, 5);
    assert_eq!(out, rollout_checkpointed(0.4, 1.3, &w, 5));
    for seed in [1.0, -2.0] {
        let mut d_w = [0.0; 3];
        let (d_x0, d_k) = pullback(&w, &mut d_w, seed);
        let mut expected_w = [0.0; 3];
        let (_, e_x0, e_k) = rollout_taped_vjp(0.4, 1.3, &w, &mut expected_w, 5, seed);
        assert_eq!((d_x0, d_k, d_w), (e_x0, e_k, expected_w));
    }
}

#[differentiate]
fn rosen_term(p: f64, q: f64) -> f64 {
    (1.0 - p).powi(2) + 100.0 * (q - p * p).powi(2)
}

/// Calls inside a checkpointed loop: one checkpointed, one whose
/// arguments the adjoint reads again.
macro_rules! calls_in_a_checkpointed_loop {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x: &[f64], k: f64, n: usize) -> f64 {
            let mut y = x[0];
            let mut s = 0.0;
            $(#[$ck])?
            for i in 0..n {
                y = ad_runtime::checkpoint(substeps(y, k));
                s += rosen_term(x[i % x.len()], y) * 0.001;
            }
            s + y
        }
    };
}
calls_in_a_checkpointed_loop!(calls_checkpointed_loop, checkpoint(snapshots = 3));
calls_in_a_checkpointed_loop!(calls_taped_loop);

#[test]
fn calls_inside_a_checkpointed_loop() {
    let x = [0.3, -0.2, 0.9];
    for n in [0, 1, 20] {
        let (mut a, mut b) = ([0.0; 3], [0.0; 3]);
        let checkpointed = calls_checkpointed_loop_vjp(&x, &mut a, 1.3, n, 1.0);
        let taped = calls_taped_loop_vjp(&x, &mut b, 1.3, n, 1.0);
        assert_eq!((checkpointed, a), (taped, b), "{n} steps");
    }
    check_scalar(
        |p| calls_checkpointed_loop(&p[..3], p[3], 20),
        ad_tests::buffer_then_scalar(|xs: &[f64], d: &mut [f64], k, seed| {
            calls_checkpointed_loop_vjp(xs, d, k, 20, seed)
        }),
        &[0.3, -0.2, 0.9, 1.3],
    );
}

// ---------------------------------------------------------------------------
// `ad_runtime::checkpoint(g(…))` of callees returning a buffer or a tuple,
// in loops: the same gradients as the unmarked calls, bit for bit.

#[differentiate]
fn squashed_layer(x: &[f64], w: f64) -> Vec<f64> {
    x.iter().map(|v| (v * w).tanh()).collect()
}

#[differentiate]
fn rotated(x: f64, w: f64) -> (f64, f64) {
    ((x * w).sin(), (x + w).cos())
}

macro_rules! layered {
    ($name:ident $(, $mark:path)?) => {
        #[differentiate]
        fn $name(x: &[f64], w: &[f64]) -> f64 {
            let mut h = x.to_vec();
            for l in 0..w.len() {
                h = $($mark)?(squashed_layer(&h, w[l]));
            }
            let mut s = 0.0;
            for i in 0..3 {
                let (a, b) = $($mark)?(rotated(s + x[0], w[0] * f64::from(i)));
                s += a * b;
            }
            h.iter().sum::<f64>() + s
        }
    };
}

layered!(layers_checkpointed, ad_runtime::checkpoint);
layered!(layers_taped);

/// The `_vjp` of a function of two slices.
type TwoSlicesVjp = fn(&[f64], &mut [f64], &[f64], &mut [f64], f64) -> f64;

#[test]
fn checkpointed_calls_returning_buffers_and_tuples() {
    let point = [0.3, -0.7, 1.1, 0.5, 1.5, -0.8];
    let vjp = |p: &[f64], seed: f64, f: TwoSlicesVjp| {
        let (mut d_x, mut d_w) = (vec![0.0; 3], vec![0.0; 3]);
        let out = f(&p[..3], &mut d_x, &p[3..], &mut d_w, seed);
        d_x.extend(d_w);
        (out, d_x)
    };
    let grad = check_scalar(
        |p| layers_checkpointed(&p[..3], &p[3..]),
        |p, seed| vjp(p, seed, layers_checkpointed_vjp),
        &point,
    );
    let (_, taped) = vjp(&point, 1.0, layers_taped_vjp);
    let bits = |g: &[f64]| g.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&grad), bits(&taped));
}
