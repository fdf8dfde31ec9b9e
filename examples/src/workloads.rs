//! The benchmark workloads of issue 6, shared by the criterion benchmark
//! (`benches/workloads.rs`), the memory table (`examples/memory.rs`) and the peer
//! benchmarks (`peers/`).
//!
//! Each workload is written once as a plain function with `#[differentiate]`
//! (W1–W4 here, the GradBench problems in [`crate::gradbench`]); next to each is a
//! gradient written by hand with the `_vjp` contract: it returns the value and adds
//! `d_out · ∇f` into shadows the caller zeroed. [`check_all`] compares every
//! hand-written gradient with the generated one.

// Numeric code written with index loops, as `#[differentiate]` takes it.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

use ad_runtime::differentiate;

use crate::gradbench::{gmm, llsq, lse, lstm, ode};

// ---------------------------------------------------------------------------
// W1: extended Rosenbrock over a slice.

/// `Σ (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)²`. With forward mode (also vector
/// mode) and second order too, for the modes benchmark.
#[differentiate(vjp, jvp, jvp_lanes, hvp)]
pub fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

/// [`rosenbrock`] written with an iterator chain over `windows(2)`.
#[differentiate]
pub fn rosenbrock_windows(x: &[f64]) -> f64 {
    x.windows(2)
        .map(|w| {
            let a = 1.0 - w[0];
            let b = w[1] - w[0] * w[0];
            a * a + 100.0 * b * b
        })
        .sum()
}

/// [`rosenbrock`] with its two `let`s in the other order.
#[differentiate]
pub fn rosenbrock_swapped(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let b = x[i + 1] - x[i] * x[i];
        let a = 1.0 - x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

/// [`rosenbrock`] as a `while` loop with `powi(2)`.
#[differentiate]
pub fn rosenbrock_while(x: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while i + 1 < x.len() {
        s += (1.0 - x[i]).powi(2) + 100.0 * (x[i + 1] - x[i].powi(2)).powi(2);
        i += 1;
    }
    s
}

/// Hand-written gradient of [`rosenbrock`].
pub fn rosenbrock_hand(x: &[f64], g: &mut [f64], d_out: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
        g[i] += d_out * (-2.0 * a - 400.0 * x[i] * b);
        g[i + 1] += d_out * (200.0 * b);
    }
    s
}

/// The fastest gradient of [`rosenbrock`] we could write by hand, for the
/// record of what W1's target asks: one loop, and the adjoint of `x[i + 1]`
/// carried to the next iteration in a register instead of added into `g` and
/// read back (re-slicing lets the compiler drop the bounds checks).
pub fn rosenbrock_hand_best(x: &[f64], g: &mut [f64], d_out: f64) -> f64 {
    let n = x.len();
    let (x, g) = (&x[..n], &mut g[..n]);
    let mut s = 0.0;
    let mut carry = 0.0;
    for i in 0..n - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
        g[i] += carry + d_out * (-2.0 * a - 400.0 * x[i] * b);
        carry = d_out * (200.0 * b);
    }
    g[n - 1] += carry;
    s
}

// ---------------------------------------------------------------------------
// RK4: a projectile with quadratic drag, integrated by Runge–Kutta 4 with a
// differentiated right-hand side called four times per step (issue 22's
// "calls without copies" target: `_vjp` within 2× the primal).

/// The right-hand side of the projectile's ODE, state `(x, y, vx, vy)`,
/// written into `out`.
#[differentiate]
pub fn projectile_rhs(s: &[f64], drag: f64, out: &mut [f64]) {
    let v = (s[2] * s[2] + s[3] * s[3]).sqrt();
    out[0] = s[2];
    out[1] = s[3];
    out[2] = -drag * v * s[2];
    out[3] = -9.81 - drag * v * s[3];
}

/// Where the projectile is after `steps` RK4 steps of 1 ms, as `x + y`.
#[differentiate]
pub fn projectile_rk4(v0: f64, angle: f64, drag: f64, steps: usize) -> f64 {
    let dt = 0.001;
    let mut s = [0.0, 0.0, v0 * angle.cos(), v0 * angle.sin()];
    let (mut k1, mut k2, mut k3, mut k4) = ([0.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]);
    let mut t = [0.0; 4];
    for _ in 0..steps {
        projectile_rhs(&s, drag, &mut k1);
        for i in 0..4 {
            t[i] = s[i] + 0.5 * dt * k1[i];
        }
        projectile_rhs(&t, drag, &mut k2);
        for i in 0..4 {
            t[i] = s[i] + 0.5 * dt * k2[i];
        }
        projectile_rhs(&t, drag, &mut k3);
        for i in 0..4 {
            t[i] = s[i] + dt * k3[i];
        }
        projectile_rhs(&t, drag, &mut k4);
        for i in 0..4 {
            s[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    s[0] + s[1]
}

/// [`projectile_rhs`] as users write it first: the state by value, the
/// derivative returned.
#[differentiate]
pub fn projectile_rhs_of(s: [f64; 4], drag: f64) -> [f64; 4] {
    let v = (s[2] * s[2] + s[3] * s[3]).sqrt();
    [s[2], s[3], -drag * v * s[2], -9.81 - drag * v * s[3]]
}

/// [`projectile_rk4`] with each stage returned by the right-hand side, the
/// other spelling of the same steps.
#[differentiate]
pub fn projectile_rk4_returned(v0: f64, angle: f64, drag: f64, steps: usize) -> f64 {
    let dt = 0.001;
    let mut s = [0.0, 0.0, v0 * angle.cos(), v0 * angle.sin()];
    for _ in 0..steps {
        let k1 = projectile_rhs_of(s, drag);
        let mut t = [0.0; 4];
        for i in 0..4 {
            t[i] = s[i] + 0.5 * dt * k1[i];
        }
        let k2 = projectile_rhs_of(t, drag);
        for i in 0..4 {
            t[i] = s[i] + 0.5 * dt * k2[i];
        }
        let k3 = projectile_rhs_of(t, drag);
        for i in 0..4 {
            t[i] = s[i] + dt * k3[i];
        }
        let k4 = projectile_rhs_of(t, drag);
        for i in 0..4 {
            s[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    s[0] + s[1]
}

// ---------------------------------------------------------------------------
// A custom rule in a loop against the same code inline (issue 22's target:
// within 1.1×).

/// SiLU, `x σ(x)`, with its derivative given by hand.
#[ad_runtime::custom_vjp(silu_rule)]
pub fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

/// `d silu / dx = σ(x) (1 + x (1 − σ(x)))`.
pub fn silu_rule(x: f64, _out: f64, d_out: f64) -> f64 {
    let s = 1.0 / (1.0 + (-x).exp());
    d_out * s * (1.0 + x * (1.0 - s))
}

/// `Σ wᵢ silu(xᵢ)`, calling the custom rule.
#[differentiate]
pub fn silu_layer(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w[i] * silu(x[i]);
    }
    s
}

/// [`silu_layer`] with SiLU written inline.
#[differentiate]
pub fn silu_layer_inline(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w[i] * (x[i] / (1.0 + (-x[i]).exp()));
    }
    s
}

/// `tanh`, with the rule written from its output, `1 − out²`, as the
/// runtime's own rule for `tanh` is: the custom rule costs what the inline
/// code costs, so the two `_vjp`s differ only by the call.
#[ad_runtime::custom_vjp(soft_clip_rule)]
pub fn soft_clip(x: f64) -> f64 {
    x.tanh()
}

/// `d tanh / dx = 1 − tanh²`.
pub fn soft_clip_rule(_x: f64, out: f64, d_out: f64) -> f64 {
    d_out * (1.0 - out * out)
}

/// `Σ wᵢ soft_clip(xᵢ)`, calling the custom rule.
#[differentiate]
pub fn clip_layer(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w[i] * soft_clip(x[i]);
    }
    s
}

/// [`clip_layer`] with `tanh` inline.
#[differentiate]
pub fn clip_layer_inline(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w[i] * x[i].tanh();
    }
    s
}

/// `Σ yᵢ yᵢ₊₁` with `yᵢ = soft_clip(xᵢ) wᵢ`: the call's output is stored and
/// a second loop reads it, so the first loop's adjoint runs on its own,
/// backwards (the worst spelling for a call in a loop: its pullback is kept
/// on a tape, since the adjoint cannot run in the iteration that made it).
#[differentiate]
pub fn clip_pairs(x: &[f64], w: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = soft_clip(x[i]) * w[i];
    }
    let mut s = 0.0;
    for i in 0..n - 1 {
        s += y[i] * y[i + 1];
    }
    s
}

/// [`clip_pairs`] with `tanh` inline.
#[differentiate]
pub fn clip_pairs_inline(x: &[f64], w: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = x[i].tanh() * w[i];
    }
    let mut s = 0.0;
    for i in 0..n - 1 {
        s += y[i] * y[i + 1];
    }
    s
}

/// `(Σ soft_clip(xᵢ wᵢ))²`: the sum's adjoint is known only after the loop,
/// so its adjoint runs on its own, and no other adjoint code reads the
/// calls' outputs (the caller keeps each with its rule's builder).
#[differentiate]
pub fn clip_sum_squared(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += soft_clip(x[i] * w[i]);
    }
    s * s
}

/// [`clip_sum_squared`] with `tanh` inline.
#[differentiate]
pub fn clip_sum_squared_inline(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] * w[i]).tanh();
    }
    s * s
}

// ---------------------------------------------------------------------------
// W2: the loss of a 784→128 tanh→10 softmax network, cross-entropy, batch 32.

/// Inputs of the network.
pub const MLP_IN: usize = 784;
/// Hidden units.
pub const MLP_HIDDEN: usize = 128;
/// Classes.
pub const MLP_CLASSES: usize = 10;
/// Samples per batch.
pub const MLP_BATCH: usize = 32;
/// Length of the flat parameter vector: `w1` (`128 × 784`), `b1`, `w2`
/// (`10 × 128`), `b2`, in that order.
pub const MLP_PARAMS: usize =
    MLP_HIDDEN * MLP_IN + MLP_HIDDEN + MLP_CLASSES * MLP_HIDDEN + MLP_CLASSES;

/// The mean softmax cross-entropy of the network on a batch; all weights in one
/// flat slice, `w1` and `w2` with one row per output unit.
///
/// `x` holds one row of 784 inputs per sample, `labels` one class per sample.
#[differentiate(wrt(params))]
pub fn mlp(params: &[f64], x: &[f64], labels: &[usize]) -> f64 {
    let n_in = 784;
    let n_hidden = 128;
    let n_classes = 10;
    let n = labels.len();
    let b1 = n_hidden * n_in;
    let w2 = b1 + n_hidden;
    let b2 = w2 + n_classes * n_hidden;
    let mut h = vec![0.0; n * n_hidden];
    for s in 0..n {
        for j in 0..n_hidden {
            let mut acc = params[b1 + j];
            for i in 0..n_in {
                acc += params[j * n_in + i] * x[s * n_in + i];
            }
            h[s * n_hidden + j] = acc.tanh();
        }
    }
    let mut z = vec![0.0; n_classes];
    let mut total = 0.0;
    for s in 0..n {
        for c in 0..n_classes {
            let mut acc = params[b2 + c];
            for j in 0..n_hidden {
                acc += params[w2 + c * n_hidden + j] * h[s * n_hidden + j];
            }
            z[c] = acc;
        }
        let mut top = z[0];
        for c in 1..n_classes {
            top = top.max(z[c]);
        }
        let top = ad_runtime::detach(top);
        let mut sum = 0.0;
        for c in 0..n_classes {
            sum += (z[c] - top).exp();
        }
        total += top + sum.ln() - z[labels[s]];
    }
    total / n as f64
}

/// Hand-written gradient of [`mlp`].
pub fn mlp_hand(params: &[f64], g: &mut [f64], x: &[f64], labels: &[usize], d_out: f64) -> f64 {
    let (n_in, n_hidden, n_classes) = (MLP_IN, MLP_HIDDEN, MLP_CLASSES);
    let n = labels.len();
    let b1 = n_hidden * n_in;
    let w2 = b1 + n_hidden;
    let b2 = w2 + n_classes * n_hidden;
    let mut h = vec![0.0; n * n_hidden];
    for s in 0..n {
        let xs = &x[s * n_in..(s + 1) * n_in];
        for j in 0..n_hidden {
            let row = &params[j * n_in..(j + 1) * n_in];
            let mut acc = params[b1 + j];
            for i in 0..n_in {
                acc += row[i] * xs[i];
            }
            h[s * n_hidden + j] = acc.tanh();
        }
    }
    let scale = d_out / n as f64;
    let mut total = 0.0;
    let mut z = [0.0; MLP_CLASSES];
    let mut d_h = vec![0.0; n_hidden];
    for s in 0..n {
        let hs = &h[s * n_hidden..(s + 1) * n_hidden];
        for c in 0..n_classes {
            let row = &params[w2 + c * n_hidden..w2 + (c + 1) * n_hidden];
            let mut acc = params[b2 + c];
            for j in 0..n_hidden {
                acc += row[j] * hs[j];
            }
            z[c] = acc;
        }
        let top = z.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        let sum: f64 = z.iter().map(|&v| (v - top).exp()).sum();
        let lse = top + sum.ln();
        total += lse - z[labels[s]];
        d_h.fill(0.0);
        for c in 0..n_classes {
            let target = if c == labels[s] { 1.0 } else { 0.0 };
            let d_z = scale * ((z[c] - lse).exp() - target);
            g[b2 + c] += d_z;
            let base = w2 + c * n_hidden;
            for j in 0..n_hidden {
                g[base + j] += d_z * hs[j];
                d_h[j] += d_z * params[base + j];
            }
        }
        let xs = &x[s * n_in..(s + 1) * n_in];
        for j in 0..n_hidden {
            let d_a = d_h[j] * (1.0 - hs[j] * hs[j]);
            g[b1 + j] += d_a;
            let row = &mut g[j * n_in..(j + 1) * n_in];
            for i in 0..n_in {
                row[i] += d_a * xs[i];
            }
        }
    }
    total / n as f64
}

/// The inputs of W2: parameters, a batch of inputs and their labels.
pub struct MlpProblem {
    /// The flat weights, [`MLP_PARAMS`] of them.
    pub params: Vec<f64>,
    /// `32 × 784` inputs, row-major.
    pub x: Vec<f64>,
    /// One class per sample.
    pub labels: Vec<usize>,
}

impl MlpProblem {
    /// Deterministic weights in `±1/√fan-in`, inputs in `[0, 1)`.
    #[must_use]
    pub fn new() -> MlpProblem {
        let mut params = inputs(MLP_PARAMS, -1.0, 1.0);
        for (e, p) in params.iter_mut().enumerate() {
            let fan_in = if e < MLP_HIDDEN * (MLP_IN + 1) {
                MLP_IN
            } else {
                MLP_HIDDEN
            };
            *p /= (fan_in as f64).sqrt();
        }
        let x = inputs(MLP_BATCH * MLP_IN, 0.0, 1.0);
        let labels = (0..MLP_BATCH).map(|s| (s * 7 + 3) % MLP_CLASSES).collect();
        MlpProblem { params, x, labels }
    }
}

impl Default for MlpProblem {
    fn default() -> Self {
        MlpProblem::new()
    }
}

// ---------------------------------------------------------------------------
// W3: a scalar expression with sin, exp, ln and a division.

/// `(sin x · eʸ + ln(1 + x²)) / (1 + y²)`.
#[differentiate(vjp, jvp, jvp_lanes, hvp)]
pub fn w3(x: f64, y: f64) -> f64 {
    (x.sin() * y.exp() + (1.0 + x * x).ln()) / (1.0 + y * y)
}

/// Hand-written gradient of [`w3`]: `(value, ∂/∂x, ∂/∂y)` times the seed.
#[must_use]
pub fn w3_hand(x: f64, y: f64, d_out: f64) -> (f64, f64, f64) {
    w3_hand_with(x, y, d_out, false)
}

/// [`w3_hand`] returning the primal value bit for bit, as `_vjp` must: `out` is
/// `num / den`, as in [`w3`], not `num · (1 / den)`. The adjoint still
/// multiplies by `1 / den`, which only changes its rounding.
#[must_use]
pub fn w3_hand_exact(x: f64, y: f64, d_out: f64) -> (f64, f64, f64) {
    w3_hand_with(x, y, d_out, true)
}

/// The two hand-written gradients of [`w3`]; `exact` is a constant in each,
/// so each compiles to its own straight-line code.
#[inline(always)]
fn w3_hand_with(x: f64, y: f64, d_out: f64, exact: bool) -> (f64, f64, f64) {
    let (sx, cx) = x.sin_cos();
    let ey = y.exp();
    let p = 1.0 + x * x;
    let num = sx * ey + p.ln();
    let den = 1.0 + y * y;
    let inv = 1.0 / den;
    let out = if exact { num / den } else { num * inv };
    let d_num = d_out * inv;
    let d_x = d_num * (cx * ey + 2.0 * x / p);
    let d_y = d_num * (sx * ey) - out * inv * (2.0 * y) * d_out;
    (out, d_x, d_y)
}

// ---------------------------------------------------------------------------
// A trajectory's Jacobian: few inputs, many outputs.

/// A damped oscillator driven by eight harmonics, `x'' = −p₀ x − p₁ x' +
/// Σₖ pₖ sin(k t)` (`k = 2..=9`), by `steps` semi-implicit Euler steps of
/// `dt`: the position at every step. Ten parameters, `steps` outputs: the
/// shape where forward mode (one column per call, or `K` with vector mode)
/// beats reverse mode (one row per call).
#[differentiate(vjp, jvp, jvp_lanes, wrt(p))]
pub fn driven_oscillator(p: &[f64], steps: usize, dt: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(steps);
    let (mut x, mut v) = (1.0, 0.0);
    for step in 0..steps {
        let t = step as f64 * dt;
        let mut force = -p[0] * x - p[1] * v;
        for k in 2..p.len() {
            force += p[k] * (k as f64 * t).sin();
        }
        v += dt * force;
        x += dt * v;
        out.push(x);
    }
    out
}

// ---------------------------------------------------------------------------
// W4: logsumexp, with index loops, with the shift detached, and through the
// runtime's coarse primitive. (The `lse` GradBench problem is the loops form.)

/// `m + ln Σ exp(xᵢ − m)` with `m = max xᵢ`, as a user would write it.
#[differentiate(vjp, jvp, hvp)]
pub fn lse_loops(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    m + s.ln()
}

/// The same with the shift `m` detached.
#[differentiate]
pub fn lse_detached(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let m = ad_runtime::detach(m);
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    m + s.ln()
}

/// The same with iterator chains: the maximum by `fold(f64::max)`.
#[differentiate]
pub fn lse_fold(x: &[f64]) -> f64 {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = x.iter().map(|&v| (v - m).exp()).sum();
    m + s.ln()
}

/// The same with the running maximum written as an `if`.
#[differentiate]
pub fn lse_if(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        if x[i] > m {
            m = x[i];
        }
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    m + s.ln()
}

/// The same over `for &v in x.iter()` with `v.max(m)`.
#[differentiate]
pub fn lse_iter_max(x: &[f64]) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for &v in x.iter() {
        m = v.max(m);
    }
    let mut s = 0.0;
    for &v in x.iter() {
        s += (v - m).exp();
    }
    m + s.ln()
}

/// The same, through `ad_runtime::logsumexp` and its pullback.
#[differentiate]
pub fn lse_primitive(x: &[f64]) -> f64 {
    ad_runtime::logsumexp(x)
}

/// Steps of the heat equation in [`heat`] and its spellings.
pub const HEAT_STEPS: usize = 20;

/// A heat equation: [`HEAT_STEPS`] explicit steps of the 1-D diffusion
/// stencil (ends held), double-buffered, then the sum of squares. Each
/// step's adjoint is a three-point stencil.
#[differentiate]
pub fn heat(u: &[f64]) -> f64 {
    let n = u.len();
    let mut cur = u.to_vec();
    for _ in 0..HEAT_STEPS {
        let mut next = vec![0.0; n];
        next[0] = cur[0];
        next[n - 1] = cur[n - 1];
        for i in 1..n - 1 {
            next[i] = cur[i] + 0.25 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
        }
        cur = next;
    }
    cur.iter().map(|v| v * v).sum()
}

/// [`heat`] over `windows(3)`, the step made from a copy.
#[differentiate]
pub fn heat_windows(u: &[f64]) -> f64 {
    let mut cur = u.to_vec();
    for _ in 0..HEAT_STEPS {
        let mut next = cur.clone();
        for (i, w) in cur.windows(3).enumerate() {
            next[i + 1] = w[1] + 0.25 * (w[0] - 2.0 * w[1] + w[2]);
        }
        cur = next;
    }
    cur.iter().map(|v| v * v).sum()
}

/// [`heat`] with two buffers swapped, the stencil's weights multiplied out.
#[differentiate]
pub fn heat_swap(u: &[f64]) -> f64 {
    let n = u.len();
    let mut cur = u.to_vec();
    let mut next = u.to_vec();
    for _ in 0..HEAT_STEPS {
        for i in 1..n - 1 {
            next[i] = 0.25 * cur[i - 1] + 0.5 * cur[i] + 0.25 * cur[i + 1];
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur.iter().map(|v| v * v).sum()
}

/// The gradient of [`heat`] by hand: the steps forward in two swapped
/// buffers, then each step's transpose gathered, `d_cur[j]` from
/// `d_next[j - 1..=j + 1]`, with no stores between iterations.
pub fn heat_hand(u: &[f64], g: &mut [f64], d_out: f64) -> f64 {
    let n = u.len();
    let mut cur = u.to_vec();
    let mut next = u.to_vec();
    for _ in 0..HEAT_STEPS {
        for i in 1..n - 1 {
            next[i] = cur[i] + 0.25 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
        }
        std::mem::swap(&mut cur, &mut next);
    }
    let out = cur.iter().map(|v| v * v).sum();
    let mut d: Vec<f64> = cur.iter().map(|v| 2.0 * d_out * v).collect();
    let mut before = vec![0.0; n];
    for _ in 0..HEAT_STEPS {
        if n > 2 {
            before[0] = d[0] + 0.25 * d[1];
            before[n - 1] = d[n - 1] + 0.25 * d[n - 2];
        } else {
            before.copy_from_slice(&d);
        }
        for j in 1..n - 1 {
            let left = if j >= 2 { d[j - 1] } else { 0.0 };
            let right = if j + 2 < n { d[j + 1] } else { 0.0 };
            before[j] = 0.5 * d[j] + 0.25 * (left + right);
        }
        std::mem::swap(&mut d, &mut before);
    }
    for (g, d) in g.iter_mut().zip(&d) {
        *g += d;
    }
    out
}

/// Hand-written gradient of logsumexp: `∂/∂xᵢ = exp(xᵢ − lse)`.
pub fn lse_hand(x: &[f64], g: &mut [f64], d_out: f64) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    let out = m + s.ln();
    for i in 0..x.len() {
        g[i] += d_out * (x[i] - out).exp();
    }
    out
}

// ---------------------------------------------------------------------------
// GradBench: llsq, ode, gmm, lstm (lse is `lse_hand` above).

/// Hand-written gradient of [`llsq::primal`].
pub fn llsq_hand(x: &[f64], g: &mut [f64], n: usize, d_out: f64) -> f64 {
    let mut sum = 0.0;
    for i in 0..n {
        let t = -1.0 + (i as f64) * 2.0 / ((n - 1) as f64);
        let s = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        let mut r = s;
        let mut power = 1.0;
        for j in 0..x.len() {
            r -= x[j] * power;
            power *= t;
        }
        sum += r * r;
        let d_r = d_out * r;
        let mut power = 1.0;
        for j in 0..x.len() {
            g[j] -= d_r * power;
            power *= t;
        }
    }
    sum / 2.0
}

/// Hand-written vector-Jacobian product of [`ode::primal`]: returns `y(2)` and adds
/// `seedᵀ ∂y/∂x` into `g`. It keeps `y` at the start of every step and computes the
/// stages of each step again on the way back.
pub fn ode_hand(x: &[f64], g: &mut [f64], s: usize, seed: &[f64]) -> Vec<f64> {
    let n = x.len();
    let h = 2.0 / (s as f64);
    let mut ys = vec![0.0; (s + 1) * n];
    let (mut k1, mut k2, mut k3, mut k4) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut a, mut b, mut c) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    // One Runge–Kutta step from `y`: the stages `k1..k4` and the points `a, b, c`
    // where `k2, k3, k4` are evaluated.
    let stages = |y: &[f64],
                  k1: &mut [f64],
                  k2: &mut [f64],
                  k3: &mut [f64],
                  k4: &mut [f64],
                  a: &mut [f64],
                  b: &mut [f64],
                  c: &mut [f64]| {
        k1[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 0..n {
            a[i] = y[i] + h * k1[i] / 2.0;
        }
        k2[0] = x[0];
        for i in 1..n {
            k2[i] = x[i] * a[i - 1];
        }
        for i in 0..n {
            b[i] = y[i] + h * k2[i] / 2.0;
        }
        k3[0] = x[0];
        for i in 1..n {
            k3[i] = x[i] * b[i - 1];
        }
        for i in 0..n {
            c[i] = y[i] + h * k3[i];
        }
        k4[0] = x[0];
        for i in 1..n {
            k4[i] = x[i] * c[i - 1];
        }
    };
    for step in 0..s {
        let (done, rest) = ys.split_at_mut((step + 1) * n);
        let y = &done[step * n..];
        stages(
            y, &mut k1, &mut k2, &mut k3, &mut k4, &mut a, &mut b, &mut c,
        );
        for i in 0..n {
            rest[i] = y[i] + h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    // Backwards: `d_y` is the adjoint of `y` at the end of the step being reversed.
    let mut d_y = seed.to_vec();
    let (mut d_a, mut d_b, mut d_c) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for step in (0..s).rev() {
        let y = &ys[step * n..(step + 1) * n];
        stages(
            y, &mut k1, &mut k2, &mut k3, &mut k4, &mut a, &mut b, &mut c,
        );
        // k4 = x ⊙ shift(c), with weight h/6.
        let mut d_x0 = 0.0;
        d_x0 += h / 6.0 * d_y[0];
        d_c[n - 1] = 0.0;
        for i in 1..n {
            let d_k = h / 6.0 * d_y[i];
            g[i] += d_k * c[i - 1];
            d_c[i - 1] = d_k * x[i];
        }
        // c = y + h k3; k3 = x ⊙ shift(b), with weight h/3 from y.
        d_x0 += h / 3.0 * d_y[0] + h * d_c[0];
        d_b[n - 1] = 0.0;
        for i in 1..n {
            let d_k = h / 3.0 * d_y[i] + h * d_c[i];
            g[i] += d_k * b[i - 1];
            d_b[i - 1] = d_k * x[i];
        }
        // b = y + h/2 k2; k2 = x ⊙ shift(a).
        d_x0 += h / 3.0 * d_y[0] + h / 2.0 * d_b[0];
        d_a[n - 1] = 0.0;
        for i in 1..n {
            let d_k = h / 3.0 * d_y[i] + h / 2.0 * d_b[i];
            g[i] += d_k * a[i - 1];
            d_a[i - 1] = d_k * x[i];
        }
        // a = y + h/2 k1; k1 = x ⊙ shift(y).
        d_x0 += h / 6.0 * d_y[0] + h / 2.0 * d_a[0];
        g[0] += d_x0;
        // The new d_y: from y' = y + …, from a, b and c, and from k1 through
        // y[i − 1]. Forwards, so that d_y[i + 1] is still the old one when read.
        for i in 0..n {
            let mut through_k1 = 0.0;
            if i + 1 < n {
                let d_k1 = h / 6.0 * d_y[i + 1] + h / 2.0 * d_a[i + 1];
                g[i + 1] += d_k1 * y[i];
                through_k1 = d_k1 * x[i + 1];
            }
            d_y[i] += d_a[i] + d_b[i] + d_c[i] + through_k1;
        }
    }
    ys[s * n..].to_vec()
}

/// Hand-written gradient of [`gmm::objective`] with `transposed = false`
/// (`Mₖ = Qₖ`, ADBench's layout): one pass over the points, each point's
/// `Qₖ(xᵢ − μₖ)` kept for its own backward step.
pub fn gmm_hand(
    alpha: &[f64],
    d_alpha: &mut [f64],
    mu: &[f64],
    d_mu: &mut [f64],
    q: &[f64],
    d_q: &mut [f64],
    l: &[f64],
    d_l: &mut [f64],
    x: &[f64],
    d: usize,
    n: usize,
    gamma: f64,
    m: f64,
    constant: f64,
    d_out: f64,
) -> f64 {
    let k = alpha.len();
    let tri = d * (d - 1) / 2;
    let diag: Vec<f64> = q.iter().map(|v| v.exp()).collect();
    let sum_q: Vec<f64> = (0..k).map(|c| q[c * d..(c + 1) * d].iter().sum()).collect();
    let mut diff = vec![0.0; k * d];
    let mut z = vec![0.0; k * d];
    let mut beta = vec![0.0; k];
    let mut sum_lse = 0.0;
    for i in 0..n {
        let xi = &x[i * d..(i + 1) * d];
        for c in 0..k {
            let lc = &l[c * tri..(c + 1) * tri];
            let mut norm = 0.0;
            for r in 0..d {
                diff[c * d + r] = xi[r] - mu[c * d + r];
            }
            for r in 0..d {
                let row = &lc[r * r.saturating_sub(1) / 2..];
                let mut zr = diag[c * d + r] * diff[c * d + r];
                for j in 0..r {
                    zr += row[j] * diff[c * d + j];
                }
                z[c * d + r] = zr;
                norm += zr * zr;
            }
            beta[c] = alpha[c] + sum_q[c] - 0.5 * norm;
        }
        let top = beta.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let s: f64 = beta.iter().map(|&b| (b - top).exp()).sum();
        let lse = top + s.ln();
        sum_lse += lse;
        for c in 0..k {
            let w = d_out * (beta[c] - lse).exp();
            d_alpha[c] += w;
            let lc = &l[c * tri..(c + 1) * tri];
            for r in 0..d {
                // β = … − ½‖z‖², so the adjoint of z is −w z.
                let d_z = -w * z[c * d + r];
                let e = c * d + r;
                d_q[e] += w + d_z * diag[e] * diff[e];
                let start = r * r.saturating_sub(1) / 2;
                for j in 0..r {
                    d_l[c * tri + start + j] += d_z * diff[c * d + j];
                    d_mu[c * d + j] -= d_z * lc[start + j];
                }
                d_mu[e] -= d_z * diag[e];
            }
        }
    }
    let top = alpha.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let s: f64 = alpha.iter().map(|&a| (a - top).exp()).sum();
    let lse_alpha = top + s.ln();
    let mut frobenius = 0.0;
    let mut total_q = 0.0;
    for c in 0..k {
        d_alpha[c] -= d_out * (n as f64) * (alpha[c] - lse_alpha).exp();
        for j in 0..d {
            let e = c * d + j;
            frobenius += diag[e] * diag[e];
            d_q[e] += d_out * (m - gamma * gamma * diag[e] * diag[e]);
        }
        for e in 0..tri {
            let e = c * tri + e;
            frobenius += l[e] * l[e];
            d_l[e] -= d_out * gamma * gamma * l[e];
        }
        total_q += sum_q[c];
    }
    constant + sum_lse - (n as f64) * lse_alpha - 0.5 * gamma * gamma * frobenius + m * total_q
}

/// Hand-written gradient of [`lstm::objective`] (back-propagation through time): it
/// keeps the hidden and cell states before every step and computes the gates again
/// on the way back.
pub fn lstm_hand(
    main_params: &[f64],
    d_main: &mut [f64],
    extra_params: &[f64],
    d_extra: &mut [f64],
    state: &[f64],
    sequence: &[f64],
    l: usize,
    b: usize,
    c: usize,
    d_out: f64,
) -> f64 {
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    let lb = l * b;
    let steps = c - 1;
    // hidden[t][j][i], cell[t][j][i]: the states before step t (t = steps: after
    // the last step).
    let mut hidden = vec![0.0; (steps + 1) * lb];
    let mut cell = vec![0.0; (steps + 1) * lb];
    for j in 0..l {
        for i in 0..b {
            hidden[j * b + i] = state[2 * j * b + i];
            cell[j * b + i] = state[(2 * j + 1) * b + i];
        }
    }
    let mut ys = vec![0.0; steps * b];
    let mut norms = vec![0.0; steps];
    let mut total = 0.0;
    for t in 0..steps {
        let (before, after) = (t * lb, (t + 1) * lb);
        for j in 0..l {
            let w = 8 * j * b;
            for i in 0..b {
                let input = if j == 0 {
                    sequence[t * b + i] * extra_params[i]
                } else {
                    hidden[after + (j - 1) * b + i]
                };
                let h = hidden[before + j * b + i];
                let p = &main_params[w..w + 8 * b];
                let forget = sigmoid(input * p[i] + p[4 * b + i]);
                let ingate = sigmoid(h * p[b + i] + p[5 * b + i]);
                let outgate = sigmoid(input * p[2 * b + i] + p[6 * b + i]);
                let change = (h * p[3 * b + i] + p[7 * b + i]).tanh();
                let next = cell[before + j * b + i] * forget + ingate * change;
                cell[after + j * b + i] = next;
                hidden[after + j * b + i] = outgate * next.tanh();
            }
        }
        let mut sum = 0.0;
        for i in 0..b {
            let y = hidden[after + (l - 1) * b + i] * extra_params[b + i] + extra_params[2 * b + i];
            ys[t * b + i] = y;
            sum += y.exp();
        }
        let norm = (sum + 2.0).ln();
        norms[t] = norm;
        for i in 0..b {
            total += sequence[(t + 1) * b + i] * (ys[t * b + i] - norm);
        }
    }
    let scale = -d_out / ((steps * b) as f64);
    let mut d_hidden = vec![0.0; lb];
    let mut d_cell = vec![0.0; lb];
    for t in (0..steps).rev() {
        let (before, after) = (t * lb, (t + 1) * lb);
        let target = &sequence[(t + 1) * b..(t + 2) * b];
        let weight: f64 = target.iter().sum();
        for i in 0..b {
            let y = ys[t * b + i];
            let d_y = scale * (target[i] - weight * (y - norms[t]).exp());
            let top = hidden[after + (l - 1) * b + i];
            d_extra[b + i] += d_y * top;
            d_extra[2 * b + i] += d_y;
            d_hidden[(l - 1) * b + i] += d_y * extra_params[b + i];
        }
        for j in (0..l).rev() {
            let w = 8 * j * b;
            for i in 0..b {
                let input = if j == 0 {
                    sequence[t * b + i] * extra_params[i]
                } else {
                    hidden[after + (j - 1) * b + i]
                };
                let h = hidden[before + j * b + i];
                let prev = cell[before + j * b + i];
                let p = &main_params[w..w + 8 * b];
                let forget = sigmoid(input * p[i] + p[4 * b + i]);
                let ingate = sigmoid(h * p[b + i] + p[5 * b + i]);
                let outgate = sigmoid(input * p[2 * b + i] + p[6 * b + i]);
                let change = (h * p[3 * b + i] + p[7 * b + i]).tanh();
                let tanh_next = cell[after + j * b + i].tanh();
                let e = j * b + i;
                let d_h = d_hidden[e];
                let d_outgate = d_h * tanh_next;
                let d_next = d_cell[e] + d_h * outgate * (1.0 - tanh_next * tanh_next);
                let a_f = d_next * prev * forget * (1.0 - forget);
                let a_i = d_next * change * ingate * (1.0 - ingate);
                let a_o = d_outgate * outgate * (1.0 - outgate);
                let a_c = d_next * ingate * (1.0 - change * change);
                let dp = &mut d_main[w..w + 8 * b];
                dp[i] += a_f * input;
                dp[4 * b + i] += a_f;
                dp[b + i] += a_i * h;
                dp[5 * b + i] += a_i;
                dp[2 * b + i] += a_o * input;
                dp[6 * b + i] += a_o;
                dp[3 * b + i] += a_c * h;
                dp[7 * b + i] += a_c;
                let d_input = a_f * p[i] + a_o * p[2 * b + i];
                d_hidden[e] = a_i * p[b + i] + a_c * p[3 * b + i];
                d_cell[e] = d_next * forget;
                if j == 0 {
                    d_extra[i] += d_input * sequence[t * b + i];
                } else {
                    d_hidden[(j - 1) * b + i] += d_input;
                }
            }
        }
    }
    -total / ((steps * b) as f64)
}

// ---------------------------------------------------------------------------
// Problem sizes and inputs.

/// Deterministic numbers in `[lo, hi)`: a small linear congruential generator.
#[must_use]
pub fn inputs(n: usize, lo: f64, hi: f64) -> Vec<f64> {
    inputs_seeded(n, lo, hi, 0x2545_f491_4f6c_dd1d)
}

/// [`inputs`] from another seed.
#[must_use]
pub fn inputs_seeded(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut rng = crate::support::Lcg(seed);
    (0..n).map(|_| lo + (hi - lo) * rng.unit()).collect()
}

/// `llsq`: `x` has this many coefficients (GradBench's default `m`)…
pub const LLSQ_M: usize = 128;
/// …fitted at this many points (one of GradBench's default `n`).
pub const LLSQ_N: usize = 1024;
/// `lse`: entries of `x`.
pub const LSE_N: usize = 100_000;
/// `ode`: entries of `x` (GradBench's smallest default `n`)…
pub const ODE_N: usize = 1000;
/// …and Runge–Kutta steps (its middle default `s`).
pub const ODE_S: usize = 10;
/// `gmm`: dimension, components and points (ADBench's `d = 10, k = 25`, 1k points).
pub const GMM_DKN: (usize, usize, usize) = (10, 25, 1000);
/// `lstm`: layers, cells per layer and sequence length (ADBench's `l = 2, c = 1024`,
/// `b = 14`).
pub const LSTM_LBC: (usize, usize, usize) = (2, 14, 1024);

/// The `gmm` problem of size [`GMM_DKN`], in the flat layout (`Mₖ = Qₖ`).
#[must_use]
pub fn gmm_problem() -> gmm::Problem {
    let (d, k, n) = GMM_DKN;
    gmm::Problem {
        d,
        k,
        n,
        x: inputs_seeded(n * d, -2.0, 2.0, 1),
        m: 0.0,
        gamma: 1.0,
        alpha: inputs_seeded(k, -1.0, 1.0, 2),
        mu: inputs_seeded(k * d, -2.0, 2.0, 3),
        q: inputs_seeded(k * d, -0.5, 0.5, 4),
        l: inputs_seeded(k * d * (d - 1) / 2, -0.3, 0.3, 5),
        layout: gmm::Layout::Flat,
    }
}

/// The `lstm` problem of size [`LSTM_LBC`]: `main_params`, `extra_params`, `state`,
/// `sequence`, flattened as [`lstm::objective`] takes them.
#[must_use]
pub fn lstm_problem() -> [Vec<f64>; 4] {
    let (l, b, c) = LSTM_LBC;
    [
        inputs_seeded(8 * l * b, -1.0, 1.0, 6),
        inputs_seeded(3 * b, -1.0, 1.0, 7),
        inputs_seeded(2 * l * b, -1.0, 1.0, 8),
        inputs_seeded(c * b, 0.0, 1.0, 9),
    ]
}

/// The `ode` seed: the last basis vector (the gradient of `y(2)`'s last entry).
#[must_use]
pub fn ode_seed(n: usize) -> Vec<f64> {
    let mut seed = vec![0.0; n];
    seed[n - 1] = 1.0;
    seed
}

// ---------------------------------------------------------------------------
// The check.

/// Panics unless `a` and `b` agree to `1e-10` relative, element by element, or to
/// `floor` absolute where that is larger.
pub fn assert_agree(what: &str, a: &[f64], b: &[f64], floor: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths differ");
    let mut worst = 0.0f64;
    for (i, (&u, &v)) in a.iter().zip(b).enumerate() {
        let tolerance = (1e-10 * u.abs().max(v.abs())).max(floor);
        assert!(
            (u - v).abs() <= tolerance,
            "{what}: element {i}: _vjp {u:e} vs hand-written {v:e}"
        );
        let denominator = u.abs().max(v.abs());
        if denominator > 0.0 {
            worst = worst.max((u - v).abs() / denominator);
        }
    }
    eprintln!("check {what}: agree (largest relative difference {worst:.1e})");
}

/// `1e-12` times the largest element of `g`: an absolute floor for [`assert_agree`].
#[must_use]
pub fn floor_of(g: &[f64]) -> f64 {
    1e-12 * g.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

/// A scalar function of a slice.
type Primal = fn(&[f64]) -> f64;
/// Its `_vjp`.
type Vjp = fn(&[f64], &mut [f64], f64) -> f64;

/// Compares every hand-written gradient with the generated one; panics on the first
/// disagreement.
pub fn check_all() {
    for n in [1_000, 1_000_000] {
        let x = inputs(n, -1.5, 1.5);
        let mut d_vjp = vec![0.0; n];
        let mut d_hand = vec![0.0; n];
        let out_vjp = rosenbrock_vjp(&x, &mut d_vjp, 1.0);
        let out_hand = rosenbrock_hand(&x, &mut d_hand, 1.0);
        assert_eq!(out_vjp, rosenbrock(&x));
        assert_agree(&format!("W1 n={n} value"), &[out_vjp], &[out_hand], 0.0);
        let floor = floor_of(&d_hand);
        assert_agree(&format!("W1 n={n} gradient"), &d_vjp, &d_hand, floor);
        let mut d_best = vec![0.0; n];
        let out_best = rosenbrock_hand_best(&x, &mut d_best, 1.0);
        assert_agree(
            &format!("W1 n={n} best value"),
            &[out_best],
            &[out_hand],
            0.0,
        );
        assert_agree(&format!("W1 n={n} best gradient"), &d_best, &d_hand, floor);
        let spellings: [(&str, Primal, Vjp); 3] = [
            ("windows", rosenbrock_windows, rosenbrock_windows_vjp),
            ("swapped", rosenbrock_swapped, rosenbrock_swapped_vjp),
            ("while", rosenbrock_while, rosenbrock_while_vjp),
        ];
        for (spelling, primal, vjp) in spellings {
            let mut d = vec![0.0; n];
            let out = vjp(&x, &mut d, 1.0);
            assert_eq!(out, primal(&x));
            // Another spelling rounds differently: agreement, not bits.
            let value_floor = 1e-12 * out_hand.abs();
            let what = format!("W1 n={n} {spelling}");
            assert_agree(&format!("{what} value"), &[out], &[out_hand], value_floor);
            assert_agree(&format!("{what} gradient"), &d, &d_hand, floor);
        }
    }

    for n in [2, 3, 7, 100_000] {
        let u = inputs(n, -1.0, 1.0);
        let mut d_hand = vec![0.0; n];
        let out_hand = heat_hand(&u, &mut d_hand, 1.0);
        let floor = floor_of(&d_hand);
        let spellings: [(&str, Primal, Vjp); 3] = [
            ("heat", heat, heat_vjp),
            ("heat windows", heat_windows, heat_windows_vjp),
            ("heat swap", heat_swap, heat_swap_vjp),
        ];
        for (spelling, primal, vjp) in spellings {
            let mut d = vec![0.0; n];
            let out = vjp(&u, &mut d, 1.0);
            assert_eq!(out, primal(&u), "{spelling} n={n}: the primal's bits");
            let value_floor = 1e-12 * out_hand.abs();
            let what = format!("{spelling} n={n}");
            assert_agree(&format!("{what} value"), &[out], &[out_hand], value_floor);
            assert_agree(&format!("{what} gradient"), &d, &d_hand, floor);
        }
    }

    let p = MlpProblem::new();
    let mut d_vjp = vec![0.0; MLP_PARAMS];
    let mut d_hand = vec![0.0; MLP_PARAMS];
    let out_vjp = mlp_vjp(&p.params, &mut d_vjp, &p.x, &p.labels, 1.0);
    let out_hand = mlp_hand(&p.params, &mut d_hand, &p.x, &p.labels, 1.0);
    assert_eq!(out_vjp, mlp(&p.params, &p.x, &p.labels));
    assert_agree("W2 value", &[out_vjp], &[out_hand], 0.0);
    assert_agree("W2 gradient", &d_vjp, &d_hand, floor_of(&d_hand));

    for &(x, y) in &[(0.7, -0.3), (-2.1, 1.4), (3.0, 0.01)] {
        let (out, d_x, d_y) = w3_vjp(x, y, 1.0);
        let (out_hand, d_x_hand, d_y_hand) = w3_hand(x, y, 1.0);
        assert_eq!(out, w3(x, y));
        let hand = [out_hand, d_x_hand, d_y_hand];
        assert_agree("W3", &[out, d_x, d_y], &hand, floor_of(&hand));
        let (out_exact, d_x_exact, d_y_exact) = w3_hand_exact(x, y, 1.0);
        assert_eq!(out_exact.to_bits(), w3(x, y).to_bits(), "W3 exact value");
        let exact = [out_exact, d_x_exact, d_y_exact];
        assert_agree("W3 exact", &[out, d_x, d_y], &exact, floor_of(&exact));
    }

    for (what, n) in [("W4", 1_000_000), ("lse", LSE_N)] {
        let x = inputs(n, -5.0, 5.0);
        let mut d_hand = vec![0.0; n];
        let out_hand = lse_hand(&x, &mut d_hand, 1.0);
        // Through `m`, the generated gradient of the loops form adds
        // `d_out · (1 − Σ exp(xᵢ − m) / s)` to the largest element: zero in exact
        // arithmetic, a rounding error of about `1e-15 · d_out`. So the floor is
        // absolute, in units of the seed.
        let forms: [(&str, Primal, Vjp, f64); 7] = [
            ("loops", lse_loops, lse_loops_vjp, 1e-13),
            ("fold", lse_fold, lse_fold_vjp, 1e-13),
            ("if", lse_if, lse_if_vjp, 1e-13),
            ("iter max", lse_iter_max, lse_iter_max_vjp, 1e-13),
            ("gradbench", lse::primal, lse::primal_vjp, 1e-13),
            (
                "detached",
                lse_detached,
                lse_detached_vjp,
                floor_of(&d_hand),
            ),
            (
                "primitive",
                lse_primitive,
                lse_primitive_vjp,
                floor_of(&d_hand),
            ),
        ];
        for (form, primal, vjp, floor) in forms {
            let mut d = vec![0.0; n];
            let out = vjp(&x, &mut d, 1.0);
            assert_eq!(out, primal(&x));
            assert_agree(&format!("{what} {form} value"), &[out], &[out_hand], 0.0);
            assert_agree(&format!("{what} {form} gradient"), &d, &d_hand, floor);
        }
    }

    let x = inputs(LLSQ_M, 0.0, 1.0);
    let mut d_vjp = vec![0.0; LLSQ_M];
    let mut d_hand = vec![0.0; LLSQ_M];
    let out_vjp = llsq::primal_vjp(&x, &mut d_vjp, LLSQ_N, 1.0);
    let out_hand = llsq_hand(&x, &mut d_hand, LLSQ_N, 1.0);
    assert_eq!(out_vjp, llsq::primal(&x, LLSQ_N));
    // The powers tᵢʲ and the residuals cancel: compare with a floor relative to the
    // largest element.
    assert_agree(
        "llsq value",
        &[out_vjp],
        &[out_hand],
        1e-12 * out_hand.abs(),
    );
    assert_agree("llsq gradient", &d_vjp, &d_hand, 10.0 * floor_of(&d_hand));

    let x = inputs(ODE_N, 0.0, 1.0);
    let seed = ode_seed(ODE_N);
    let mut d_vjp = vec![0.0; ODE_N];
    let mut d_hand = vec![0.0; ODE_N];
    let y_vjp = ode::primal_vjp(&x, &mut d_vjp, ODE_S, &seed);
    let y_hand = ode_hand(&x, &mut d_hand, ODE_S, &seed);
    assert_eq!(y_vjp, ode::primal(&x, ODE_S));
    assert_agree("ode value", &y_vjp, &y_hand, floor_of(&y_hand));
    assert_agree("ode gradient", &d_vjp, &d_hand, floor_of(&d_hand));

    let p = gmm_problem();
    let constant = gmm::constant(p.d, p.k, p.n, p.gamma, p.m);
    let zeros = || {
        [
            vec![0.0; p.alpha.len()],
            vec![0.0; p.mu.len()],
            vec![0.0; p.q.len()],
            vec![0.0; p.l.len()],
        ]
    };
    let [mut va, mut vm, mut vq, mut vl] = zeros();
    let [mut ha, mut hm, mut hq, mut hl] = zeros();
    let out_vjp = gmm::objective_vjp(
        &p.alpha, &mut va, &p.mu, &mut vm, &p.q, &mut vq, &p.l, &mut vl, &p.x, p.d, p.n, p.gamma,
        p.m, constant, false, 1.0,
    );
    let out_hand = gmm_hand(
        &p.alpha, &mut ha, &p.mu, &mut hm, &p.q, &mut hq, &p.l, &mut hl, &p.x, p.d, p.n, p.gamma,
        p.m, constant, 1.0,
    );
    assert_eq!(out_vjp, p.objective());
    assert_agree("gmm value", &[out_vjp], &[out_hand], 1e-12 * out_hand.abs());
    for (what, v, h) in [
        ("alpha", &va, &ha),
        ("mu", &vm, &hm),
        ("q", &vq, &hq),
        ("l", &vl, &hl),
    ] {
        assert_agree(&format!("gmm gradient {what}"), v, h, 1e3 * floor_of(h));
    }

    let (l, b, c) = LSTM_LBC;
    let [main, extra, state, sequence] = lstm_problem();
    let mut vm = vec![0.0; main.len()];
    let mut ve = vec![0.0; extra.len()];
    let mut hm = vec![0.0; main.len()];
    let mut he = vec![0.0; extra.len()];
    let out_vjp = lstm::objective_vjp(
        &main, &mut vm, &extra, &mut ve, &state, &sequence, l, b, c, 1.0,
    );
    let out_hand = lstm_hand(
        &main, &mut hm, &extra, &mut he, &state, &sequence, l, b, c, 1.0,
    );
    assert_eq!(
        out_vjp,
        lstm::objective(&main, &extra, &state, &sequence, l, b, c)
    );
    assert_agree(
        "lstm value",
        &[out_vjp],
        &[out_hand],
        1e-12 * out_hand.abs(),
    );
    assert_agree("lstm gradient main", &vm, &hm, 1e3 * floor_of(&hm));
    assert_agree("lstm gradient extra", &ve, &he, 1e3 * floor_of(&he));
}
