//! A projectile with quadratic drag: explicit Euler against RK4, then a
//! Gauss–Newton fit of its launch speed, angle and drag to observed positions,
//! with the Jacobian from the split API.
//!
//! The state is `[x, y, vx, vy]`, the parameters `(v0, angle, drag)`; the
//! right-hand side `rhs` is a `#[differentiate]` function that RK4 calls four
//! times per step. `observe_rk4` returns the positions at 6 times as one
//! `Vec` of 12 numbers; `observe_rk4_forward` runs it once and returns its
//! pullback, which each Gauss–Newton iteration calls once per residual with a
//! one-hot seed: 12 rows of the 12 × 3 Jacobian from one forward pass. The
//! example first checks the gradient of the scalar misfit against finite
//! differences, and that `Jᵀ r` from the rows is that gradient.
//!
//! Run with `cargo run --example projectile`.

// Small dense linear algebra reads best with indices.
#![allow(clippy::needless_range_loop)]

use ad_examples::support::solve3;
use ad_runtime::{check, differentiate};

/// The RK4 step used for fitting, in seconds.
const DT: f64 = 0.01;
/// Observations: every `STEPS_PER_OBS` steps (0.25 s), `N_OBS` of them.
const STEPS_PER_OBS: usize = 25;
const N_OBS: usize = 6;
/// The parameters the observations were made with: `(v0, angle, drag)`.
const TRUE_PARAMS: [f64; 3] = [20.0, 0.8, 0.01];

/// The right-hand side of the projectile's ODE for the state
/// `s = (x, y, vx, vy)`, written into `out`: gravity and quadratic drag.
#[differentiate]
fn rhs(s: &[f64], drag: f64, out: &mut [f64]) {
    let v = (s[2] * s[2] + s[3] * s[3]).sqrt();
    out[0] = s[2];
    out[1] = s[3];
    out[2] = -drag * v * s[2];
    out[3] = -9.81 - drag * v * s[3];
}

/// One RK4 step of `dt` on the state `s`, in place.
#[differentiate]
fn rk4_step(s: &mut [f64], drag: f64, dt: f64) {
    let (mut k1, mut k2, mut k3, mut k4) = ([0.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]);
    let mut t = [0.0; 4];
    rhs(s, drag, &mut k1);
    for i in 0..4 {
        t[i] = s[i] + 0.5 * dt * k1[i];
    }
    rhs(&t, drag, &mut k2);
    for i in 0..4 {
        t[i] = s[i] + 0.5 * dt * k2[i];
    }
    rhs(&t, drag, &mut k3);
    for i in 0..4 {
        t[i] = s[i] + dt * k3[i];
    }
    rhs(&t, drag, &mut k4);
    for i in 0..4 {
        s[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

/// The positions `(x, y)` after every `steps_per_obs` RK4 steps of `dt`,
/// `n_obs` times, flat: `[x₁, y₁, x₂, y₂, …]`. Differentiated with respect
/// to the launch parameters only; `dt` is a setting.
#[differentiate(wrt(v0, angle, drag))]
fn observe_rk4(
    v0: f64,
    angle: f64,
    drag: f64,
    dt: f64,
    steps_per_obs: usize,
    n_obs: usize,
) -> Vec<f64> {
    let mut s = [0.0, 0.0, v0 * angle.cos(), v0 * angle.sin()];
    let mut out = vec![0.0; 2 * n_obs];
    for k in 0..n_obs {
        for _ in 0..steps_per_obs {
            rk4_step(&mut s, drag, dt);
        }
        out[2 * k] = s[0];
        out[2 * k + 1] = s[1];
    }
    out
}

/// Half the squared distance between the RK4 positions and `observed`
/// (flat pairs): the Gauss–Newton cost, one scalar to check.
#[differentiate(wrt(v0, angle, drag))]
fn misfit(v0: f64, angle: f64, drag: f64, dt: f64, observed: &[f64], steps_per_obs: usize) -> f64 {
    let n_obs = observed.len() / 2;
    let model = observe_rk4(v0, angle, drag, dt, steps_per_obs, n_obs);
    let mut total = 0.0;
    for i in 0..observed.len() {
        let r = model[i] - observed[i];
        total += r * r;
    }
    0.5 * total
}

/// The same positions by explicit Euler, in plain Rust (`rhs` is still an
/// ordinary function).
fn observe_euler(
    v0: f64,
    angle: f64,
    drag: f64,
    dt: f64,
    steps_per_obs: usize,
    n_obs: usize,
) -> Vec<f64> {
    let mut s = [0.0, 0.0, v0 * angle.cos(), v0 * angle.sin()];
    let mut out = Vec::with_capacity(2 * n_obs);
    for _ in 0..n_obs {
        for _ in 0..steps_per_obs {
            step(&mut s, drag, dt, false);
        }
        out.push(s[0]);
        out.push(s[1]);
    }
    out
}

/// One step of Euler or RK4 on `s`.
fn step(s: &mut [f64; 4], drag: f64, dt: f64, rk4: bool) {
    if rk4 {
        rk4_step(s, drag, dt);
        return;
    }
    let mut k = [0.0; 4];
    rhs(&s[..], drag, &mut k);
    for i in 0..4 {
        s[i] += dt * k[i];
    }
}

/// Where the projectile lands (`y = 0` again), interpolated linearly within
/// the last step.
fn landing_distance(v0: f64, angle: f64, drag: f64, dt: f64, rk4: bool) -> f64 {
    let mut s = [0.0, 0.0, v0 * angle.cos(), v0 * angle.sin()];
    loop {
        let before = s;
        step(&mut s, drag, dt, rk4);
        if s[1] < 0.0 {
            let f = before[1] / (before[1] - s[1]);
            return before[0] + f * (s[0] - before[0]);
        }
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The residuals `model − observed` at `p` and the Jacobian's rows, from one
/// forward pass and one pullback per residual.
fn residuals_and_jacobian(p: [f64; 3], observed: &[f64]) -> (Vec<f64>, Vec<[f64; 3]>) {
    let (model, pullback) = observe_rk4_forward(p[0], p[1], p[2], DT, STEPS_PER_OBS, N_OBS);
    let r: Vec<f64> = model.iter().zip(observed).map(|(m, o)| m - o).collect();
    let mut seed = vec![0.0; r.len()];
    let mut rows = Vec::with_capacity(r.len());
    for i in 0..r.len() {
        seed[i] = 1.0;
        let (d_v0, d_angle, d_drag) = pullback(seed.as_slice());
        seed[i] = 0.0;
        rows.push([d_v0, d_angle, d_drag]);
    }
    (r, rows)
}

pub fn main() {
    let [v0, angle, drag] = TRUE_PARAMS;

    // Euler against RK4, at the same step, against RK4 at a step 100 times finer.
    println!("projectile: v0 = {v0} m/s, angle = {angle} rad, drag = {drag} /m");
    let euler = observe_euler(v0, angle, drag, DT, STEPS_PER_OBS, N_OBS);
    let rk4 = observe_rk4(v0, angle, drag, DT, STEPS_PER_OBS, N_OBS);
    let reference = observe_rk4(v0, angle, drag, DT / 100.0, 100 * STEPS_PER_OBS, N_OBS);
    let last = 2 * N_OBS - 2;
    println!(
        "position at t = {:.2} s: Euler ({:.4}, {:.4}), RK4 ({:.4}, {:.4}), reference ({:.4}, {:.4})",
        DT * (STEPS_PER_OBS * N_OBS) as f64,
        euler[last],
        euler[last + 1],
        rk4[last],
        rk4[last + 1],
        reference[last],
        reference[last + 1]
    );
    let error = |v: &[f64]| {
        norm(
            &v.iter()
                .zip(&reference)
                .map(|(a, b)| a - b)
                .collect::<Vec<_>>(),
        )
    };
    let (euler_error, rk4_error) = (error(&euler), error(&rk4));
    println!(
        "error over the {N_OBS} positions at dt = {DT}: Euler {euler_error:.2e} m, RK4 {rk4_error:.2e} m"
    );
    assert!(
        rk4_error < 1e-2 * euler_error,
        "RK4 is not far more accurate than Euler"
    );
    println!(
        "landing distance: Euler {:.4} m, RK4 {:.4} m, RK4 at dt/100 {:.4} m",
        landing_distance(v0, angle, drag, DT, false),
        landing_distance(v0, angle, drag, DT, true),
        landing_distance(v0, angle, drag, DT / 100.0, true)
    );

    // The observations: the RK4 positions with a small deterministic error.
    let observed: Vec<f64> = rk4
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.002 * (1.7 * i as f64).sin())
        .collect();

    // The misfit's gradient against finite differences, at the starting point.
    let start = [15.0, 0.6, 0.03];
    let f = |q: &[f64]| misfit(q[0], q[1], q[2], DT, &observed, STEPS_PER_OBS);
    let grad = |q: &[f64]| {
        let (_, d_v0, d_angle, d_drag) =
            misfit_vjp(q[0], q[1], q[2], DT, &observed, STEPS_PER_OBS, 1.0);
        vec![d_v0, d_angle, d_drag]
    };
    let result = check::gradient(f, grad, &start);
    println!("misfit: {result}");
    result.assert_within(1e-6);

    // The rows of the split API give the same gradient: ∇(½ |r|²) = Jᵀ r.
    let (r, rows) = residuals_and_jacobian(start, &observed);
    let mut jt_r = [0.0; 3];
    for (row, r) in rows.iter().zip(&r) {
        for a in 0..3 {
            jt_r[a] += row[a] * r;
        }
    }
    let g = grad(&start);
    for a in 0..3 {
        assert!(
            (jt_r[a] - g[a]).abs() <= 1e-9 * g[a].abs().max(1.0),
            "Jᵀr {jt_r:?} against the gradient {g:?}"
        );
    }

    // Gauss–Newton from the starting point, with a backtracking step.
    println!("Gauss-Newton fit of (v0, angle, drag) to {N_OBS} positions");
    let mut p = start;
    let first = norm(&r);
    let mut residual_norm = first;
    for iteration in 0..20 {
        let (r, rows) = residuals_and_jacobian(p, &observed);
        residual_norm = norm(&r);
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for (row, r) in rows.iter().zip(&r) {
            for a in 0..3 {
                jtr[a] -= row[a] * r;
                for b in 0..3 {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        let delta = solve3(jtj, jtr);
        let cost = 0.5 * residual_norm * residual_norm;
        let mut t = 1.0;
        loop {
            let trial = [
                p[0] + t * delta[0],
                p[1] + t * delta[1],
                p[2] + t * delta[2],
            ];
            if misfit(trial[0], trial[1], trial[2], DT, &observed, STEPS_PER_OBS) < cost || t < 1e-6
            {
                p = trial;
                break;
            }
            t *= 0.5;
        }
        println!(
            "  iteration {iteration:2}: |r| = {residual_norm:.3e}, step {t}, v0 = {:.5}, angle = {:.5}, drag = {:.6}",
            p[0], p[1], p[2]
        );
        let size = delta.iter().map(|d| d.abs()).fold(0.0, f64::max);
        if t * size < 1e-10 {
            break;
        }
    }
    println!(
        "fitted v0 = {:.4}, angle = {:.4}, drag = {:.5} (true {v0}, {angle}, {drag})",
        p[0], p[1], p[2]
    );
    assert!(
        residual_norm < 1e-2 * first,
        "Gauss-Newton did not reduce the residual: {first:.3e} -> {residual_norm:.3e}"
    );
    assert!(
        (p[0] - v0).abs() < 0.05 && (p[1] - angle).abs() < 0.005 && (p[2] - drag).abs() < 0.001,
        "the fit is off: {p:?}"
    );
}
