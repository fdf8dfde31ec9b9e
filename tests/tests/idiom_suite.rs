//! Numeric Rust written the way it is written in practice — losses, physics
//! steps, statistics, geometry, small neural layers, signal filters, root
//! finders and fixed-point iterations — many of them rewritten in our own words
//! from the published test suites of other AD tools (Clad, JAX, Enzyme, and
//! Tapenade examples); each such function names its source.
//!
//! Every function is checked three ways: its `_vjp` against a closed-form
//! gradient or against a second, independent implementation (`assert_close`);
//! against finite differences and the dot-product test (the `check_*` helpers,
//! which also require the `_vjp` output to be the function's, bit for bit); and
//! some of them against their split API, `_forward`. Points are chosen away
//! from kinks.

use ad_runtime::{Float, differentiate};
use ad_tests::{
    assert_close, check_in_place, check_jvp, check_scalar, check_scalar_within, check_vector,
};

// ---------------------------------------------------------------------------
// Helpers: each wraps a `_vjp` into the flat form the `check_*` helpers take.

/// Checks a function of `N` scalars at `x`; `vjp` returns the output and the
/// `N` adjoints. Returns the gradient.
fn scalars<const N: usize>(
    f: impl Fn([f64; N]) -> f64,
    vjp: impl Fn([f64; N], f64) -> (f64, [f64; N]),
    x: [f64; N],
) -> Vec<f64> {
    let at = |p: &[f64]| -> [f64; N] { p.try_into().expect("one value per input") };
    check_scalar(
        |p| f(at(p)),
        |p, s| {
            let (out, grad) = vjp(at(p), s);
            (out, grad.to_vec())
        },
        &x,
    )
}

/// The consecutive parts of a flat point with the given lengths, then the rest.
fn parts<'a>(p: &'a [f64], lens: &[usize]) -> Vec<&'a [f64]> {
    let mut rest = p;
    let mut out = Vec::new();
    for &n in lens {
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out.push(rest);
    out
}

/// Checks `f(x)` of one slice at `x`, its `_vjp` and its `_jvp`; returns the
/// gradient.
fn slice(
    f: impl Fn(&[f64]) -> f64,
    vjp: impl Fn(&[f64], &mut [f64], f64) -> f64,
    jvp: impl Fn(&[f64], &[f64]) -> (f64, f64),
    x: &[f64],
) -> Vec<f64> {
    let grad = check_scalar(
        &f,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            let out = vjp(p, &mut d, s);
            (out, d)
        },
        x,
    );
    check_jvp(&f, jvp, &grad, x);
    grad
}

/// Checks `f(x, y)` of two slices; the gradient of `x`, then of `y`.
fn pair(
    f: impl Fn(&[f64], &[f64]) -> f64,
    vjp: impl Fn(&[f64], &mut [f64], &[f64], &mut [f64], f64) -> f64,
    jvp: impl Fn(&[f64], &[f64], &[f64], &[f64]) -> (f64, f64),
    x: &[f64],
    y: &[f64],
) -> Vec<f64> {
    let n = x.len();
    let point = [x, y].concat();
    let grad = check_scalar(
        |p| f(&p[..n], &p[n..]),
        |p, s| {
            let (mut dx, mut dy) = (vec![0.0; n], vec![0.0; p.len() - n]);
            let out = vjp(&p[..n], &mut dx, &p[n..], &mut dy, s);
            dx.extend(dy);
            (out, dx)
        },
        &point,
    );
    check_jvp(
        |p| f(&p[..n], &p[n..]),
        |p, u| jvp(&p[..n], &u[..n], &p[n..], &u[n..]),
        &grad,
        &point,
    );
    grad
}

/// Checks `f(x, k)` of a slice and a scalar; the gradient of `x`, then of `k`.
fn slice_k(
    f: impl Fn(&[f64], f64) -> f64,
    vjp: impl Fn(&[f64], &mut [f64], f64, f64) -> (f64, f64),
    jvp: impl Fn(&[f64], &[f64], f64, f64) -> (f64, f64),
    x: &[f64],
    k: f64,
) -> Vec<f64> {
    let n = x.len();
    let point = [x, &[k]].concat();
    let grad = check_scalar(
        |p| f(&p[..n], p[n]),
        |p, s| {
            let mut dx = vec![0.0; n];
            let (out, dk) = vjp(&p[..n], &mut dx, p[n], s);
            dx.push(dk);
            (out, dx)
        },
        &point,
    );
    check_jvp(
        |p| f(&p[..n], p[n]),
        |p, u| jvp(&p[..n], &u[..n], p[n], u[n]),
        &grad,
        &point,
    );
    grad
}

/// Checks `f(x, y, k)` of two slices and a scalar; the gradients of `x`, `y`,
/// then `k`.
fn pair_k(
    f: impl Fn(&[f64], &[f64], f64) -> f64,
    vjp: impl Fn(&[f64], &mut [f64], &[f64], &mut [f64], f64, f64) -> (f64, f64),
    jvp: impl Fn(&[f64], &[f64], &[f64], &[f64], f64, f64) -> (f64, f64),
    x: &[f64],
    y: &[f64],
    k: f64,
) -> Vec<f64> {
    let lens = [x.len(), y.len()];
    let point = [x, y, &[k]].concat();
    let grad = check_scalar(
        |p| {
            let v = parts(p, &lens);
            f(v[0], v[1], v[2][0])
        },
        |p, s| {
            let v = parts(p, &lens);
            let (mut dx, mut dy) = (vec![0.0; lens[0]], vec![0.0; lens[1]]);
            let (out, dk) = vjp(v[0], &mut dx, v[1], &mut dy, v[2][0], s);
            (out, [dx, dy, vec![dk]].concat())
        },
        &point,
    );
    check_jvp(
        |p| {
            let v = parts(p, &lens);
            f(v[0], v[1], v[2][0])
        },
        |p, u| {
            let (v, t) = (parts(p, &lens), parts(u, &lens));
            jvp(v[0], t[0], v[1], t[1], v[2][0], t[2][0])
        },
        &grad,
        &point,
    );
    grad
}

/// The `_vjp` of a function of three slices.
type TripleVjp = fn(&[f64], &mut [f64], &[f64], &mut [f64], &[f64], &mut [f64], f64) -> f64;

/// Checks `f(a, b, c)` of three slices; their gradients in order.
fn triple(
    f: fn(&[f64], &[f64], &[f64]) -> f64,
    vjp: TripleVjp,
    a: &[f64],
    b: &[f64],
    c: &[f64],
) -> Vec<f64> {
    let lens = [a.len(), b.len()];
    check_scalar(
        |p| {
            let v = parts(p, &lens);
            f(v[0], v[1], v[2])
        },
        |p, s| {
            let v = parts(p, &lens);
            let mut d: Vec<Vec<f64>> = v.iter().map(|x| vec![0.0; x.len()]).collect();
            let [da, db, dc] = &mut d[..] else {
                unreachable!()
            };
            let out = vjp(v[0], da, v[1], db, v[2], dc, s);
            (out, d.concat())
        },
        &[a, b, c].concat(),
    )
}

/// Checks `f(x) -> Vec` of one slice with the seed `seed`; returns `Jᵀ seed`.
fn slice_vec(
    f: impl Fn(&[f64]) -> Vec<f64>,
    vjp: impl Fn(&[f64], &mut [f64], &[f64]) -> Vec<f64>,
    x: &[f64],
    seed: &[f64],
) -> Vec<f64> {
    check_vector(
        &f,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            let out = vjp(p, &mut d, s);
            (out, d)
        },
        x,
        seed,
    )
}

fn to32(p: &[f64]) -> Vec<f32> {
    p.iter().map(|&v| v as f32).collect()
}

fn to64(p: &[f32]) -> Vec<f64> {
    p.iter().map(|&v| f64::from(v)).collect()
}

/// [`slice`] for a function over `f32`: finite differences of `f32` code are
/// good to about `1e-3` (see `ad_runtime::check`).
fn slice32(
    f: impl Fn(&[f32]) -> f32,
    vjp: impl Fn(&[f32], &mut [f32], f32) -> f32,
    x: &[f64],
) -> Vec<f64> {
    check_scalar_within(
        1e-3,
        |p| f64::from(f(&to32(p))),
        |p, s| {
            let p = to32(p);
            let mut d = vec![0.0_f32; p.len()];
            let out = vjp(&p, &mut d, s as f32);
            (f64::from(out), to64(&d))
        },
        x,
    )
}

/// [`assert_close`] for gradients computed in `f32`, against a closed form
/// evaluated in `f64`: agreement to `f32` rounding.
#[track_caller]
fn assert_close_f32(actual: &[f64], expected: &[f64]) {
    assert_eq!(actual.len(), expected.len());
    for (index, (a, e)) in actual.iter().zip(expected).enumerate() {
        let scale = a.abs().max(e.abs()).max(1.0);
        assert!(
            (a - e).abs() <= 1e-5 * scale,
            "component {index}: {a} != {e} (all: {actual:?} vs {expected:?})"
        );
    }
}

const X: [f64; 7] = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9];
const Y: [f64; 7] = [1.1, 0.2, -0.7, 0.5, 1.9, -1.3, 0.6];

// ---------------------------------------------------------------------------

mod losses {
    use super::*;

    /// Mean squared error, as every training loop writes it.
    #[differentiate(vjp, jvp)]
    fn mse(pred: &[f64], target: &[f64]) -> f64 {
        let n = pred.len() as f64;
        pred.iter()
            .zip(target)
            .map(|(p, t)| (p - t).powi(2))
            .sum::<f64>()
            / n
    }

    #[test]
    fn mean_squared_error() {
        let grad = pair(mse, mse_vjp, mse_jvp, &X, &Y);
        let d: Vec<f64> = X.iter().zip(&Y).map(|(p, t)| 2.0 * (p - t) / 7.0).collect();
        let minus: Vec<f64> = d.iter().map(|v| -v).collect();
        assert_close(&grad, &[d, minus].concat());

        // The split API: one forward pass, a pullback per seed.
        let (out, pullback) = mse_forward(&X, &Y);
        assert_eq!(out.to_bits(), mse(&X, &Y).to_bits());
        for seed in [1.0, -2.5] {
            let (mut dp, mut dt) = ([0.0; 7], [0.0; 7]);
            pullback(&X, &mut dp, &Y, &mut dt, seed);
            let (mut vp, mut vt) = ([0.0; 7], [0.0; 7]);
            mse_vjp(&X, &mut vp, &Y, &mut vt, seed);
            assert_close(&[dp, dt].concat(), &[vp, vt].concat());
        }
    }

    /// Softmax cross-entropy of a vector of logits and a class label, with the
    /// maximum subtracted for stability.
    #[differentiate(vjp, jvp)]
    fn cross_entropy(logits: &[f64], label: usize) -> f64 {
        let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log_total = logits.iter().map(|&z| (z - m).exp()).sum::<f64>().ln();
        m + log_total - logits[label]
    }

    #[test]
    fn softmax_cross_entropy() {
        for label in [0, 3] {
            let grad = slice(
                |x| cross_entropy(x, label),
                |x, d, s| cross_entropy_vjp(x, d, label, s),
                |x, t| cross_entropy_jvp(x, t, label),
                &X,
            );
            let total: f64 = X.iter().map(|z| z.exp()).sum();
            let mut expected: Vec<f64> = X.iter().map(|z| z.exp() / total).collect();
            expected[label] -= 1.0;
            assert_close(&grad, &expected);
        }
    }

    /// The logistic-regression cost of the Tapenade example
    /// `Shreyas911/tapenade_logistic_regression` (`logistic_regression.f90`,
    /// `subroutine logistic`): a sigmoid of `w0 + w1 x`, then the mean
    /// negative log-likelihood. The weights are active, the data constant.
    #[differentiate(vjp, jvp, wrt(w0, w1))]
    fn logistic_cost(w0: f64, w1: f64, x: &[f64], y: &[f64]) -> f64 {
        let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
        let m = x.len() as f64;
        let total: f64 = x
            .iter()
            .zip(y)
            .map(|(&xi, &yi)| {
                let s = sigmoid(w0 + w1 * xi);
                yi * s.ln() + (1.0 - yi) * (1.0 - s).ln()
            })
            .sum();
        -total / m
    }

    #[test]
    fn logistic_regression_after_tapenade() {
        let x: Vec<f64> = (1..=9).map(f64::from).collect();
        let y = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let (w0, w1) = (-4.0, 0.8);
        let grad = scalars(
            |[a, b]| logistic_cost(a, b, &x, &y),
            |[a, b], s| {
                let (out, da, db) = logistic_cost_vjp(a, b, &x, &y, s);
                (out, [da, db])
            },
            [w0, w1],
        );
        // ∂/∂w = mean((σ(z) - y) · (1, x)).
        let residual: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(xi, yi)| 1.0 / (1.0 + (-(w0 + w1 * xi)).exp()) - yi)
            .collect();
        let d0 = residual.iter().sum::<f64>() / 9.0;
        let d1 = residual.iter().zip(&x).map(|(r, xi)| r * xi).sum::<f64>() / 9.0;
        assert_close(&grad, &[d0, d1]);
    }

    /// A linear SVM: the hinge loss over the rows of a data matrix, plus an L2
    /// penalty on the weights.
    #[differentiate(vjp, jvp, wrt(w))]
    fn svm_loss(w: &[f64], xs: &[f64], labels: &[f64]) -> f64 {
        let hinge: f64 = xs
            .chunks_exact(w.len())
            .zip(labels)
            .map(|(x, &y)| {
                let score: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
                (1.0 - y * score).max(0.0)
            })
            .sum();
        hinge + 0.05 * w.iter().map(|v| v * v).sum::<f64>()
    }

    #[test]
    fn hinge_loss() {
        let w = [0.5, -0.3, 0.8];
        let xs = [
            1.0, 0.5, -0.2, -0.3, 1.2, 0.4, 0.7, -0.8, 1.1, -1.0, 0.1, -0.6,
        ];
        let labels = [1.0, -1.0, 1.0, 1.0];
        let grad = slice(
            |w| svm_loss(w, &xs, &labels),
            |w, d, s| svm_loss_vjp(w, d, &xs, &labels, s),
            |w, t| svm_loss_jvp(w, t, &xs, &labels),
            &w,
        );
        let mut expected: Vec<f64> = w.iter().map(|v| 0.1 * v).collect();
        for (x, y) in xs.chunks_exact(3).zip(labels) {
            let margin = 1.0 - y * (x[0] * w[0] + x[1] * w[1] + x[2] * w[2]);
            assert!(margin.abs() > 0.1, "away from the kink");
            if margin > 0.0 {
                for j in 0..3 {
                    expected[j] -= y * x[j];
                }
            }
        }
        assert_close(&grad, &expected);
    }

    /// The Huber loss, its per-residual rule a closure passed to `map`.
    #[differentiate(vjp, jvp)]
    fn huber(pred: &[f64], target: &[f64], delta: f64) -> f64 {
        let loss = |r: f64| {
            if r.abs() <= delta {
                0.5 * r * r
            } else {
                delta * (r.abs() - 0.5 * delta)
            }
        };
        pred.iter().zip(target).map(|(p, t)| loss(p - t)).sum()
    }

    #[test]
    fn huber_loss() {
        let delta = 1.0;
        let grad = pair_k(huber, huber_vjp, huber_jvp, &X, &Y, delta);
        let r: Vec<f64> = X.iter().zip(&Y).map(|(p, t)| p - t).collect();
        let d: Vec<f64> = r.iter().map(|r| r.clamp(-delta, delta)).collect();
        let minus: Vec<f64> = d.iter().map(|v| -v).collect();
        let d_delta: f64 = r
            .iter()
            .filter(|r| r.abs() > delta)
            .map(|r| r.abs() - delta)
            .sum();
        assert_close(&grad, &[d, minus, vec![d_delta]].concat());
    }

    /// The pinball (quantile) loss: residuals above and below weighted by
    /// `tau` and `tau - 1`.
    #[differentiate(vjp, jvp)]
    fn pinball(pred: &[f64], target: &[f64], tau: f64) -> f64 {
        let n = pred.len() as f64;
        pred.iter()
            .zip(target)
            .map(|(p, t)| {
                let r = t - p;
                if r >= 0.0 { tau * r } else { (tau - 1.0) * r }
            })
            .sum::<f64>()
            / n
    }

    #[test]
    fn quantile_loss() {
        let tau = 0.3;
        let grad = pair_k(pinball, pinball_vjp, pinball_jvp, &X, &Y, tau);
        let w: Vec<f64> = X
            .iter()
            .zip(&Y)
            .map(|(p, t)| if t - p >= 0.0 { tau } else { tau - 1.0 })
            .collect();
        let d_pred: Vec<f64> = w.iter().map(|w| -w / 7.0).collect();
        let d_target: Vec<f64> = w.iter().map(|w| w / 7.0).collect();
        let d_tau = X.iter().zip(&Y).map(|(p, t)| t - p).sum::<f64>() / 7.0;
        assert_close(&grad, &[d_pred, d_target, vec![d_tau]].concat());
    }

    /// The Kullback–Leibler divergence `Σ p ln(p / q)` over the support of `p`.
    #[differentiate(vjp, jvp)]
    fn kl_divergence(p: &[f64], q: &[f64]) -> f64 {
        p.iter()
            .zip(q)
            .filter(|(pi, _)| **pi > 0.0)
            .map(|(pi, qi)| pi * (pi / qi).ln())
            .sum()
    }

    #[test]
    fn kullback_leibler() {
        let p = [0.1, 0.4, 0.2, 0.3];
        let q = [0.25, 0.25, 0.3, 0.2];
        let grad = pair(kl_divergence, kl_divergence_vjp, kl_divergence_jvp, &p, &q);
        let dp: Vec<f64> = p.iter().zip(&q).map(|(p, q)| (p / q).ln() + 1.0).collect();
        let dq: Vec<f64> = p.iter().zip(&q).map(|(p, q)| -p / q).collect();
        assert_close(&grad, &[dp, dq].concat());
    }

    /// Log-cosh loss in `f32`.
    #[differentiate(vjp, jvp)]
    fn log_cosh(pred: &[f32], target: &[f32]) -> f32 {
        let n = pred.len() as f32;
        pred.iter()
            .zip(target)
            .map(|(p, t)| (p - t).cosh().ln())
            .sum::<f32>()
            / n
    }

    #[test]
    fn log_cosh_in_f32() {
        let point = [X, Y].concat();
        let grad = slice32(
            |p| log_cosh(&p[..7], &p[7..]),
            |p, d, s| {
                let (dp, dt) = d.split_at_mut(7);
                log_cosh_vjp(&p[..7], dp, &p[7..], dt, s)
            },
            &point,
        );
        let d: Vec<f64> = X
            .iter()
            .zip(&Y)
            .map(|(p, t)| (p - t).tanh() / 7.0)
            .collect();
        let minus: Vec<f64> = d.iter().map(|v| -v).collect();
        assert_close_f32(&grad, &[d, minus].concat());
    }
}

// ---------------------------------------------------------------------------

mod physics {
    use super::*;

    /// One semi-implicit Euler step of unit masses on springs to the origin;
    /// the state slice interleaves positions and velocities.
    #[differentiate(vjp, jvp)]
    fn spring_step(state: &mut [f64], dt: f64) {
        let k = 4.0;
        for i in (0..state.len()).step_by(2) {
            let a = -k * state[i];
            state[i + 1] += a * dt;
            state[i] += state[i + 1] * dt;
        }
    }

    #[test]
    fn spring_mass_euler_step() {
        let state = [0.5, -0.2, -1.0, 0.3, 0.8, 0.1];
        let seed = [1.0, 0.5, -0.3, 2.0, 0.7, -1.1];
        let dt = 0.1;
        let grad = check_in_place(
            |s, k| spring_step(s, k),
            |s, d, k| spring_step_vjp(s, d, k),
            &state,
            dt,
            &seed,
        );
        // x' = x (1 - k dt²) + v dt, v' = v - k x dt.
        let k = 4.0;
        let mut expected = Vec::new();
        let mut d_dt = 0.0;
        for (s, w) in state.chunks_exact(2).zip(seed.chunks_exact(2)) {
            let (x, v, sx, sv) = (s[0], s[1], w[0], w[1]);
            expected.push(sx * (1.0 - k * dt * dt) - sv * k * dt);
            expected.push(sx * dt + sv);
            d_dt += sx * (v - 2.0 * k * x * dt) - sv * k * x;
        }
        expected.push(d_dt);
        assert_close(&grad, &expected);
    }

    /// Three leapfrog (velocity Verlet) steps of independent anharmonic
    /// oscillators, positions then velocities in one state slice; the force is
    /// a closure.
    #[differentiate(vjp, jvp)]
    fn leapfrog(state: &mut [f64], dt: f64) {
        let n = state.len() / 2;
        let force = |q: f64| -q - 0.1 * q.powi(3);
        for _ in 0..3 {
            for i in 0..n {
                state[n + i] += 0.5 * dt * force(state[i]);
            }
            for i in 0..n {
                state[i] += dt * state[n + i];
            }
            for i in 0..n {
                state[n + i] += 0.5 * dt * force(state[i]);
            }
        }
    }

    /// The same steps, one oscillator at a time, in local scalars.
    #[differentiate(vjp, jvp)]
    fn leapfrog_plain(state: &mut [f64], dt: f64) {
        let n = state.len() / 2;
        for i in 0..n {
            let mut q = state[i];
            let mut p = state[n + i];
            for _ in 0..3 {
                p += 0.5 * dt * (-q - 0.1 * (q * q * q));
                q += dt * p;
                p += 0.5 * dt * (-q - 0.1 * (q * q * q));
            }
            state[i] = q;
            state[n + i] = p;
        }
    }

    #[test]
    fn leapfrog_matches_the_plain_steps() {
        let state = [0.9, -0.4, 1.3, 0.2, -0.6, 0.5];
        let seed = [0.3, -1.0, 0.8, 1.5, 0.25, -0.7];
        let dt = 0.2;
        let grad = check_in_place(
            |s, k| leapfrog(s, k),
            |s, d, k| leapfrog_vjp(s, d, k),
            &state,
            dt,
            &seed,
        );
        let mut s = state.to_vec();
        let mut d = seed.to_vec();
        let d_dt = leapfrog_plain_vjp(&mut s, &mut d, dt);
        d.push(d_dt);
        assert_close(&grad, &d);
    }

    /// The energy of a pendulum after RK4 steps, the right-hand side a closure
    /// returning a tuple.
    #[differentiate(vjp, jvp)]
    fn pendulum_rk4(theta: f64, omega: f64, dt: f64, steps: usize) -> f64 {
        let g = 9.81;
        let rhs = |th: f64, om: f64| (om, -g * th.sin());
        let mut th = theta;
        let mut om = omega;
        for _ in 0..steps {
            let (k1t, k1o) = rhs(th, om);
            let (k2t, k2o) = rhs(th + 0.5 * dt * k1t, om + 0.5 * dt * k1o);
            let (k3t, k3o) = rhs(th + 0.5 * dt * k2t, om + 0.5 * dt * k2o);
            let (k4t, k4o) = rhs(th + dt * k3t, om + dt * k3o);
            th += dt / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t);
            om += dt / 6.0 * (k1o + 2.0 * k2o + 2.0 * k3o + k4o);
        }
        0.5 * om * om - g * th.cos()
    }

    #[differentiate(vjp, jvp)]
    fn pendulum_accel(theta: f64) -> f64 {
        -9.81 * theta.sin()
    }

    /// The same integration with the stages written out and a called helper.
    #[differentiate(vjp, jvp)]
    fn pendulum_rk4_plain(theta: f64, omega: f64, dt: f64, steps: usize) -> f64 {
        let mut th = theta;
        let mut om = omega;
        for _ in 0..steps {
            let a1 = pendulum_accel(th);
            let o2 = om + 0.5 * dt * a1;
            let a2 = pendulum_accel(th + 0.5 * dt * om);
            let o3 = om + 0.5 * dt * a2;
            let a3 = pendulum_accel(th + 0.5 * dt * o2);
            let o4 = om + dt * a3;
            let a4 = pendulum_accel(th + dt * o3);
            th += dt / 6.0 * (om + 2.0 * o2 + 2.0 * o3 + o4);
            om += dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
        }
        0.5 * om * om - 9.81 * th.cos()
    }

    #[test]
    fn pendulum_rk4_with_closures() {
        let steps = 20;
        let point = [0.8, 0.3, 0.05];
        let grad = scalars(
            |[t, o, h]| pendulum_rk4(t, o, h, steps),
            |[t, o, h], s| {
                let (out, dt, dom, dh) = pendulum_rk4_vjp(t, o, h, steps, s);
                (out, [dt, dom, dh])
            },
            point,
        );
        let (_, dt, dom, dh) = pendulum_rk4_plain_vjp(0.8, 0.3, 0.05, steps, 1.0);
        assert_close(&grad, &[dt, dom, dh]);
        // The split API agrees with `_vjp`.
        let (out, pullback) = pendulum_rk4_forward(0.8, 0.3, 0.05, steps);
        assert_eq!(out.to_bits(), pendulum_rk4(0.8, 0.3, 0.05, steps).to_bits());
        let (a, b, c) = pullback(-0.5);
        assert_close(&[a, b, c], &[-0.5 * dt, -0.5 * dom, -0.5 * dh]);
    }

    /// The gravitational energy of bodies in the plane, pairwise, with nested
    /// `chunks_exact`/`zip`/`enumerate`/`skip` loops.
    #[differentiate(vjp, jvp)]
    fn nbody_energy(pos: &[f64], mass: &[f64]) -> f64 {
        let mut energy = 0.0;
        for (i, (a, ma)) in pos.chunks_exact(2).zip(mass).enumerate() {
            for (b, mb) in pos.chunks_exact(2).zip(mass).skip(i + 1) {
                let r = (a[0] - b[0]).hypot(a[1] - b[1]);
                energy -= ma * mb / r;
            }
        }
        energy
    }

    #[test]
    fn nbody_pairwise_energy() {
        let pos = [0.0, 0.0, 1.0, 0.2, -0.5, 1.1, 0.7, -0.9];
        let mass = [1.0, 0.5, 0.8, 1.2];
        let grad = pair(
            nbody_energy,
            nbody_energy_vjp,
            nbody_energy_jvp,
            &pos,
            &mass,
        );
        let mut d_pos = [0.0; 8];
        let mut d_mass = [0.0; 4];
        for i in 0..4 {
            for j in 0..4 {
                if i != j {
                    let (dx, dy) = (pos[2 * i] - pos[2 * j], pos[2 * i + 1] - pos[2 * j + 1]);
                    let r = dx.hypot(dy);
                    d_pos[2 * i] += mass[i] * mass[j] * dx / r.powi(3);
                    d_pos[2 * i + 1] += mass[i] * mass[j] * dy / r.powi(3);
                    d_mass[i] -= mass[j] / r;
                }
            }
        }
        assert_close(&grad, &[&d_pos[..], &d_mass[..]].concat());
    }

    /// A chain of springs of rest length `rest` between neighbours
    /// (`windows`), plus a weak bending term between next neighbours (`zip`
    /// with `skip`).
    #[differentiate(vjp, jvp)]
    fn chain_energy(x: &[f64], rest: f64) -> f64 {
        let stretch: f64 = x
            .windows(2)
            .map(|w| 0.5 * (w[1] - w[0] - rest).powi(2))
            .sum();
        let bend: f64 = x
            .iter()
            .zip(x.iter().skip(2))
            .map(|(a, c)| 0.05 * (c - a).powi(2))
            .sum();
        stretch + bend
    }

    #[test]
    fn spring_chain_with_windows() {
        let rest = 0.75;
        let grad = slice_k(chain_energy, chain_energy_vjp, chain_energy_jvp, &X, rest);
        let mut expected = vec![0.0; 8];
        for i in 0..6 {
            let e = X[i + 1] - X[i] - rest;
            expected[i] -= e;
            expected[i + 1] += e;
            expected[7] -= e;
        }
        for i in 0..5 {
            let b = 0.1 * (X[i + 2] - X[i]);
            expected[i] -= b;
            expected[i + 2] += b;
        }
        assert_close(&grad, &expected);
    }

    /// After Enzyme's integration test `integrateexp.cpp`, which integrates
    /// `x' = -1.2 x` with an ODE stepper and differentiates the final state by
    /// the end time: here forward Euler, a `fold` over the steps.
    #[differentiate(vjp, jvp)]
    fn decay_euler(k: f64, t: f64, steps: usize) -> f64 {
        let dt = t / steps as f64;
        (0..steps).fold(1.0, |x, _| x - k * x * dt)
    }

    #[test]
    fn exponential_decay_after_enzyme() {
        let steps = 50;
        let (k, t) = (1.2, 1.7);
        let grad = scalars(
            |[k, t]| decay_euler(k, t, steps),
            |[k, t], s| {
                let (out, dk, dt) = decay_euler_vjp(k, t, steps, s);
                (out, [dk, dt])
            },
            [k, t],
        );
        // x_n = (1 - k t / n)ⁿ.
        let n = steps as f64;
        let base = (1.0 - k * t / n).powi(steps as i32 - 1);
        assert_close(&grad, &[-t * base, -k * base]);
    }

    /// One explicit step of a nonlinear diffusion of an ice thickness `h`
    /// (flux `-D(h) ∂h` with `D = h³`), clipped at zero: after the Tapenade
    /// glacier toy problem `Shreyas911/tapenade_toy_problem` (`forward.f90`).
    #[differentiate(vjp, jvp)]
    fn glacier_step(h: &mut [f64], dt: f64) {
        let old = h.to_vec();
        let flux: Vec<f64> = old
            .windows(2)
            .map(|w| -(0.5 * (w[0] + w[1])).powi(3) * (w[1] - w[0]))
            .collect();
        for i in 1..old.len() - 1 {
            h[i] = (old[i] - dt * (flux[i] - flux[i - 1])).max(0.0);
        }
    }

    /// The same step with index loops and an `if` for the clip.
    #[differentiate(vjp, jvp)]
    fn glacier_step_plain(h: &mut [f64], dt: f64) {
        let n = h.len();
        let mut flux = vec![0.0; n - 1];
        for i in 0..n - 1 {
            let d = 0.5 * (h[i] + h[i + 1]);
            flux[i] = -(d * d * d) * (h[i + 1] - h[i]);
        }
        for i in 1..n - 1 {
            let next = h[i] - dt * (flux[i] - flux[i - 1]);
            h[i] = if next > 0.0 { next } else { 0.0 };
        }
    }

    #[test]
    fn glacier_diffusion_step_after_tapenade() {
        let h = [1.0, 1.4, 1.9, 1.6, 1.2, 0.9, 0.4];
        let seed = [0.5, 1.0, -0.5, 2.0, 0.3, -1.0, 0.7];
        let dt = 0.01;
        let grad = check_in_place(
            |s, k| glacier_step(s, k),
            |s, d, k| glacier_step_vjp(s, d, k),
            &h,
            dt,
            &seed,
        );
        let mut state = h.to_vec();
        let mut d = seed.to_vec();
        let d_dt = glacier_step_plain_vjp(&mut state, &mut d, dt);
        d.push(d_dt);
        assert_close(&grad, &d);
    }
}

// ---------------------------------------------------------------------------

mod statistics {
    use super::*;

    /// The mean, once for `f32` and `f64`.
    #[differentiate(vjp, jvp)]
    fn mean<T: Float>(x: &[T]) -> T {
        x.iter().copied().sum::<T>() / T::from_i32(x.len() as i32)
    }

    #[test]
    fn generic_mean() {
        let grad = slice(mean::<f64>, mean_vjp::<f64>, mean_jvp::<f64>, &X);
        assert_close(&grad, &[1.0 / 7.0; 7]);
        let x8 = [0.5, -1.0, 2.0, 1.5, 0.25, -0.5, 3.0, 1.0];
        let grad = slice32(mean::<f32>, mean_vjp::<f32>, &x8);
        assert_close(&grad, &[0.125; 8]);
    }

    /// The sample variance by Welford's one-pass update, in a `fold` with a
    /// tuple accumulator destructured with `_`.
    #[differentiate(vjp, jvp)]
    fn variance_welford(x: &[f64]) -> f64 {
        let (n, _, m2) = x.iter().fold((0.0, 0.0, 0.0), |(n, mean, m2), &v| {
            let n1 = n + 1.0;
            let delta = v - mean;
            let mean1 = mean + delta / n1;
            (n1, mean1, m2 + delta * (v - mean1))
        });
        m2 / (n - 1.0)
    }

    #[test]
    fn welford_variance_via_fold() {
        let grad = slice(
            variance_welford,
            variance_welford_vjp,
            variance_welford_jvp,
            &X,
        );
        let mean = X.iter().sum::<f64>() / 7.0;
        let expected: Vec<f64> = X.iter().map(|v| 2.0 * (v - mean) / 6.0).collect();
        assert_close(&grad, &expected);
    }

    /// The expectation of `values` under the softmax of `logits`, the
    /// exponentials collected into a `Vec`.
    #[differentiate(vjp, jvp)]
    fn softmax_expectation(logits: &[f64], values: &[f64]) -> f64 {
        let m = logits.iter().copied().max_by(f64::total_cmp).unwrap();
        let exps: Vec<f64> = logits.iter().map(|z| (z - m).exp()).collect();
        let total: f64 = exps.iter().sum();
        exps.iter().zip(values).map(|(e, v)| e / total * v).sum()
    }

    #[test]
    fn softmax_weighted_expectation() {
        let grad = pair(
            softmax_expectation,
            softmax_expectation_vjp,
            softmax_expectation_jvp,
            &X,
            &Y,
        );
        let total: f64 = X.iter().map(|z| z.exp()).sum();
        let p: Vec<f64> = X.iter().map(|z| z.exp() / total).collect();
        let e: f64 = p.iter().zip(&Y).map(|(p, v)| p * v).sum();
        let d_logits: Vec<f64> = p.iter().zip(&Y).map(|(p, v)| p * (v - e)).collect();
        assert_close(&grad, &[d_logits, p].concat());
    }

    /// Log-sum-exp with the maximum found by `reduce`.
    #[differentiate(vjp, jvp)]
    fn logsumexp(x: &[f64]) -> f64 {
        let m = x.iter().copied().reduce(f64::max).expect("values");
        m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
    }

    #[test]
    fn logsumexp_with_reduce() {
        let grad = slice(logsumexp, logsumexp_vjp, logsumexp_jvp, &X);
        let total: f64 = X.iter().map(|v| v.exp()).sum();
        let expected: Vec<f64> = X.iter().map(|v| v.exp() / total).collect();
        assert_close(&grad, &expected);
    }

    /// A weighted average, numerator and denominator accumulated in one `fold`.
    #[differentiate(vjp, jvp)]
    fn weighted_mean(x: &[f64], w: &[f64]) -> f64 {
        let (num, den) = x
            .iter()
            .zip(w)
            .fold((0.0, 0.0), |(num, den), (xi, wi)| (num + xi * wi, den + wi));
        num / den
    }

    #[test]
    fn weighted_average() {
        let w = [0.5, 1.5, 0.25, 2.0, 1.0, 0.75, 1.25];
        let grad = pair(weighted_mean, weighted_mean_vjp, weighted_mean_jvp, &X, &w);
        let total: f64 = w.iter().sum();
        let mean = X.iter().zip(&w).map(|(x, w)| x * w).sum::<f64>() / total;
        let dx: Vec<f64> = w.iter().map(|w| w / total).collect();
        let dw: Vec<f64> = X.iter().map(|x| (x - mean) / total).collect();
        assert_close(&grad, &[dx, dw].concat());
        // The split API: the pullback takes the buffers and their shadows.
        let (out, pullback) = weighted_mean_forward(&X, &w);
        assert_eq!(out.to_bits(), weighted_mean(&X, &w).to_bits());
        let (mut dx, mut dw) = ([0.0; 7], [0.0; 7]);
        pullback(&X, &mut dx, &w, &mut dw, -3.0);
        let scaled: Vec<f64> = grad.iter().map(|g| -3.0 * g).collect();
        assert_close(&[dx, dw].concat(), &scaled);
    }

    /// Pearson's correlation coefficient, the centred sums in one `fold`.
    #[differentiate(vjp, jvp)]
    fn correlation(x: &[f64], y: &[f64]) -> f64 {
        let n = x.len() as f64;
        let mx = x.iter().sum::<f64>() / n;
        let my = y.iter().sum::<f64>() / n;
        let (sxy, sxx, syy) = x
            .iter()
            .zip(y)
            .fold((0.0, 0.0, 0.0), |(sxy, sxx, syy), (a, b)| {
                let (da, db) = (a - mx, b - my);
                (sxy + da * db, sxx + da * da, syy + db * db)
            });
        sxy / (sxx * syy).sqrt()
    }

    #[test]
    fn pearson_correlation() {
        let grad = pair(correlation, correlation_vjp, correlation_jvp, &X, &Y);
        let mx = X.iter().sum::<f64>() / 7.0;
        let my = Y.iter().sum::<f64>() / 7.0;
        let cx: Vec<f64> = X.iter().map(|v| v - mx).collect();
        let cy: Vec<f64> = Y.iter().map(|v| v - my).collect();
        let sxy: f64 = cx.iter().zip(&cy).map(|(a, b)| a * b).sum();
        let sxx: f64 = cx.iter().map(|a| a * a).sum();
        let syy: f64 = cy.iter().map(|b| b * b).sum();
        let (root, r) = ((sxx * syy).sqrt(), sxy / (sxx * syy).sqrt());
        let dx: Vec<f64> = cx
            .iter()
            .zip(&cy)
            .map(|(a, b)| b / root - r * a / sxx)
            .collect();
        let dy: Vec<f64> = cx
            .iter()
            .zip(&cy)
            .map(|(a, b)| a / root - r * b / syy)
            .collect();
        assert_close(&grad, &[dx, dy].concat());
    }

    /// The geometric mean of the positive entries: `filter`, `count` and
    /// `product`.
    #[differentiate(vjp, jvp)]
    fn geometric_mean_positive(x: &[f64]) -> f64 {
        let k = x.iter().filter(|&&v| v > 0.0).count();
        let p: f64 = x.iter().filter(|&&v| v > 0.0).product();
        p.powf(1.0 / k as f64)
    }

    #[test]
    fn geometric_mean_of_positives() {
        let grad = slice(
            geometric_mean_positive,
            geometric_mean_positive_vjp,
            geometric_mean_positive_jvp,
            &X,
        );
        let pos: Vec<f64> = X.iter().copied().filter(|&v| v > 0.0).collect();
        let k = pos.len() as f64;
        let g = pos.iter().product::<f64>().powf(1.0 / k);
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| if v > 0.0 { g / (k * v) } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }

    /// Skewness: z-scores collected into a `Vec`, then their mean cube.
    #[differentiate(vjp, jvp)]
    fn skewness(x: &[f64]) -> f64 {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        let z: Vec<f64> = x.iter().map(|v| (v - mean) / sd).collect();
        z.iter().map(|v| v.powi(3)).sum::<f64>() / n
    }

    /// The same with index loops and the moments kept as scalars.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::needless_range_loop)] // The index form is the point.
    fn skewness_index(x: &[f64]) -> f64 {
        let n = x.len();
        let mut s = 0.0;
        for i in 0..n {
            s += x[i];
        }
        let mean = s / n as f64;
        let mut m2 = 0.0;
        let mut m3 = 0.0;
        for i in 0..n {
            let d = x[i] - mean;
            m2 += d * d;
            m3 += d * d * d;
        }
        let m2 = m2 / n as f64;
        m3 / n as f64 / (m2 * m2.sqrt())
    }

    #[test]
    fn skewness_matches_the_index_loop() {
        let grad = slice(skewness, skewness_vjp, skewness_jvp, &X);
        let mut d = vec![0.0; 7];
        skewness_index_vjp(&X, &mut d, 1.0);
        assert_close(&grad, &d);
    }

    /// The sample standard deviation, once for `f32` and `f64`.
    #[differentiate(vjp, jvp)]
    fn std_dev<T: Float>(x: &[T]) -> T {
        let n = T::from_i32(x.len() as i32);
        let mean = x.iter().copied().sum::<T>() / n;
        let ss = x.iter().map(|&v| (v - mean) * (v - mean)).sum::<T>();
        (ss / (n - T::ONE)).sqrt()
    }

    #[test]
    fn generic_standard_deviation() {
        let sd = |x: &[f64]| {
            let m = x.iter().sum::<f64>() / x.len() as f64;
            let ss: f64 = x.iter().map(|v| (v - m).powi(2)).sum();
            let s = (ss / (x.len() - 1) as f64).sqrt();
            let grad: Vec<f64> = x
                .iter()
                .map(|v| (v - m) / ((x.len() - 1) as f64 * s))
                .collect();
            grad
        };
        let grad = slice(std_dev::<f64>, std_dev_vjp::<f64>, std_dev_jvp::<f64>, &X);
        assert_close(&grad, &sd(&X));
        let grad = slice32(std_dev::<f32>, std_dev_vjp::<f32>, &X);
        assert_close_f32(&grad, &sd(&X));
    }

    /// The mean and the (population) variance together, as a tuple, from one
    /// `fold`.
    #[differentiate(vjp, jvp)]
    fn mean_and_variance(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let (s, q) = x.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
        let mean = s / n;
        (mean, q / n - mean * mean)
    }

    #[test]
    fn mean_and_variance_as_a_tuple() {
        let seed = [0.5, -2.0];
        let grad = check_vector(
            |p| {
                let (m, v) = mean_and_variance(p);
                vec![m, v]
            },
            |p, s| {
                let mut d = vec![0.0; p.len()];
                let (m, v) = mean_and_variance_vjp(p, &mut d, (s[0], s[1]));
                (vec![m, v], d)
            },
            &X,
            &seed,
        );
        let mean = X.iter().sum::<f64>() / 7.0;
        let expected: Vec<f64> = X
            .iter()
            .map(|v| seed[0] / 7.0 + seed[1] * 2.0 * (v - mean) / 7.0)
            .collect();
        assert_close(&grad, &expected);
    }

    /// The geometric mean, once for `f32` and `f64`.
    #[differentiate(vjp, jvp)]
    fn geometric_mean<T: Float>(x: &[T]) -> T {
        let p = x.iter().copied().product::<T>();
        p.powf(T::ONE / T::from_i32(x.len() as i32))
    }

    #[test]
    fn generic_geometric_mean() {
        let x = [0.5, 1.25, 2.0, 0.75, 1.5];
        let g = x.iter().product::<f64>().powf(0.2);
        let expected: Vec<f64> = x.iter().map(|v| g / (5.0 * v)).collect();
        let grad = slice(
            geometric_mean::<f64>,
            geometric_mean_vjp::<f64>,
            geometric_mean_jvp::<f64>,
            &x,
        );
        assert_close(&grad, &expected);
        let grad = slice32(geometric_mean::<f32>, geometric_mean_vjp::<f32>, &x);
        assert_close_f32(&grad, &expected);
    }

    /// The mean absolute deviation from the mean.
    #[differentiate(vjp, jvp)]
    fn mean_abs_deviation(x: &[f64]) -> f64 {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        x.iter().map(|v| (v - mean).abs()).sum::<f64>() / n
    }

    #[test]
    fn mean_absolute_deviation() {
        let grad = slice(
            mean_abs_deviation,
            mean_abs_deviation_vjp,
            mean_abs_deviation_jvp,
            &X,
        );
        let mean = X.iter().sum::<f64>() / 7.0;
        let s: Vec<f64> = X.iter().map(|v| (v - mean).signum()).collect();
        let ms = s.iter().sum::<f64>() / 7.0;
        let expected: Vec<f64> = s.iter().map(|s| (s - ms) / 7.0).collect();
        assert_close(&grad, &expected);
    }
}

// ---------------------------------------------------------------------------

mod geometry {
    use super::*;

    /// Cosine similarity: a dot product over two norms.
    #[differentiate(vjp, jvp)]
    fn cosine_similarity(a: &[f64], b: &[f64]) -> f64 {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
        let nb = b.iter().map(|y| y * y).sum::<f64>().sqrt();
        dot / (na * nb)
    }

    #[test]
    fn cosine_of_two_vectors() {
        let grad = pair(
            cosine_similarity,
            cosine_similarity_vjp,
            cosine_similarity_jvp,
            &X,
            &Y,
        );
        let na = X.iter().map(|v| v * v).sum::<f64>().sqrt();
        let nb = Y.iter().map(|v| v * v).sum::<f64>().sqrt();
        let c = X.iter().zip(&Y).map(|(a, b)| a * b).sum::<f64>() / (na * nb);
        let da: Vec<f64> = X
            .iter()
            .zip(&Y)
            .map(|(a, b)| b / (na * nb) - c * a / (na * na))
            .collect();
        let db: Vec<f64> = X
            .iter()
            .zip(&Y)
            .map(|(a, b)| a / (na * nb) - c * b / (nb * nb))
            .collect();
        assert_close(&grad, &[da, db].concat());
    }

    /// The p-norm `(Σ |xᵢ|ᵖ)^(1/p)`, differentiable in `p` too: after Clad's
    /// `test/Gradient/Gradients.C`, `f_norm` (there over three scalars through
    /// a helper `sum_of_powers`).
    #[differentiate(vjp, jvp)]
    fn p_norm(x: &[f64], p: f64) -> f64 {
        x.iter()
            .map(|v| v.abs().powf(p))
            .sum::<f64>()
            .powf(p.recip())
    }

    #[test]
    fn p_norm_after_clad() {
        let p = 3.0;
        let grad = slice_k(p_norm, p_norm_vjp, p_norm_jvp, &X, p);
        let s: f64 = X.iter().map(|v| v.abs().powf(p)).sum();
        let norm = s.powf(1.0 / p);
        let mut expected: Vec<f64> = X
            .iter()
            .map(|v| norm / s * v.abs().powf(p - 1.0) * v.signum())
            .collect();
        let weighted: f64 = X.iter().map(|v| v.abs().powf(p) * v.abs().ln()).sum();
        expected.push(norm * (-s.ln() / (p * p) + weighted / (p * s)));
        assert_close(&grad, &expected);
    }

    /// The cross product of two arrays, returned as an array.
    #[differentiate(vjp, jvp)]
    fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    fn cross_plain(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    #[test]
    fn cross_product_of_arrays() {
        let arr = |p: &[f64]| -> [f64; 3] { p.try_into().unwrap() };
        let seed = [0.5, -1.0, 2.0];
        let (a, b) = ([0.3, -1.2, 0.8], [2.1, -0.4, 1.5]);
        let grad = check_vector(
            |p| cross(&arr(&p[..3]), &arr(&p[3..])).to_vec(),
            |p, s| {
                let (mut da, mut db) = ([0.0; 3], [0.0; 3]);
                let out = cross_vjp(&arr(&p[..3]), &mut da, &arr(&p[3..]), &mut db, &arr(s));
                (out.to_vec(), [da, db].concat())
            },
            &[a, b].concat(),
            &seed,
        );
        // ⟨s, a × b⟩ = ⟨a, b × s⟩ = ⟨b, s × a⟩.
        let expected = [cross_plain(b, seed), cross_plain(seed, a)].concat();
        assert_close(&grad, &expected);
    }

    /// The area of a triangle in space from its nine coordinates, the corners
    /// taken apart with `split_at` and the edges and normal in local arrays.
    #[differentiate(vjp, jvp)]
    fn triangle_area(p: &[f64]) -> f64 {
        let (a, rest) = p.split_at(3);
        let (b, c) = rest.split_at(3);
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        0.5 * n.iter().map(|x| x * x).sum::<f64>().sqrt()
    }

    #[test]
    fn triangle_area_in_space() {
        let p = [0.1, 0.2, -0.3, 1.5, 0.1, 0.4, 0.3, 1.2, 0.9];
        let grad = slice(triangle_area, triangle_area_vjp, triangle_area_jvp, &p);
        let sub = |x: &[f64], y: &[f64]| [x[0] - y[0], x[1] - y[1], x[2] - y[2]];
        let (u, v) = (sub(&p[3..6], &p[..3]), sub(&p[6..], &p[..3]));
        let n = cross_plain(u, v);
        let len = n.iter().map(|x| x * x).sum::<f64>().sqrt();
        let unit = n.map(|x| x / len);
        // A = ½|u × v|: ∂A/∂u = ½ v × n̂, ∂A/∂v = ½ n̂ × u.
        let db = cross_plain(v, unit).map(|x| 0.5 * x);
        let dc = cross_plain(unit, u).map(|x| 0.5 * x);
        let da = [-(db[0] + dc[0]), -(db[1] + dc[1]), -(db[2] + dc[2])];
        assert_close(&grad, &[da, db, dc].concat());
    }

    /// The shoelace formula, consecutive vertices paired by `zip` with `skip`,
    /// the closing edge added by index.
    #[differentiate(vjp, jvp)]
    fn polygon_area(xs: &[f64], ys: &[f64]) -> f64 {
        let n = xs.len();
        let inner: f64 = xs
            .iter()
            .zip(ys.iter().skip(1))
            .zip(xs.iter().skip(1).zip(ys))
            .map(|((x0, y1), (x1, y0))| x0 * y1 - x1 * y0)
            .sum();
        0.5 * (inner + xs[n - 1] * ys[0] - xs[0] * ys[n - 1])
    }

    #[test]
    fn shoelace_polygon_area() {
        let xs = [0.0, 2.0, 2.5, 1.0, -0.5];
        let ys = [0.0, -0.2, 1.5, 2.5, 1.2];
        let grad = pair(polygon_area, polygon_area_vjp, polygon_area_jvp, &xs, &ys);
        let n = xs.len();
        let next = |i: usize| (i + 1) % n;
        let prev = |i: usize| (i + n - 1) % n;
        let dx: Vec<f64> = (0..n).map(|i| 0.5 * (ys[next(i)] - ys[prev(i)])).collect();
        let dy: Vec<f64> = (0..n).map(|i| 0.5 * (xs[prev(i)] - xs[next(i)])).collect();
        assert_close(&grad, &[dx, dy].concat());
    }

    /// The length of a polyline: `windows` of both coordinates, zipped.
    #[differentiate(vjp, jvp)]
    fn polyline_length(xs: &[f64], ys: &[f64]) -> f64 {
        xs.windows(2)
            .zip(ys.windows(2))
            .map(|(x, y)| (x[1] - x[0]).hypot(y[1] - y[0]))
            .sum()
    }

    #[test]
    fn polyline_length_with_windows() {
        let grad = pair(
            polyline_length,
            polyline_length_vjp,
            polyline_length_jvp,
            &X,
            &Y,
        );
        let mut expected = vec![0.0; 14];
        for i in 0..6 {
            let (dx, dy) = (X[i + 1] - X[i], Y[i + 1] - Y[i]);
            let len = dx.hypot(dy);
            expected[i] -= dx / len;
            expected[i + 1] += dx / len;
            expected[7 + i] -= dy / len;
            expected[7 + i + 1] += dy / len;
        }
        assert_close(&grad, &expected);
    }

    /// A rotation by `angle`, with `sin_cos`, returning the rotated point.
    #[differentiate(vjp, jvp)]
    fn rotate(x: f64, y: f64, angle: f64) -> (f64, f64) {
        let (s, c) = angle.sin_cos();
        (c * x - s * y, s * x + c * y)
    }

    #[test]
    fn rotation_jacobian_rows() {
        let (x, y, a): (f64, f64, f64) = (1.5, -0.5, 0.7);
        let (s, c) = a.sin_cos();
        let rows = [[c, -s, -s * x - c * y], [s, c, c * x - s * y]];
        let seeds = [(1.0, 0.0), (0.0, 1.0), (0.5, -2.0)];
        for seed in seeds {
            let grad = check_vector(
                |p| {
                    let (u, v) = rotate(p[0], p[1], p[2]);
                    vec![u, v]
                },
                |p, s| {
                    let ((u, v), dx, dy, da) = rotate_vjp(p[0], p[1], p[2], (s[0], s[1]));
                    (vec![u, v], vec![dx, dy, da])
                },
                &[x, y, a],
                &[seed.0, seed.1],
            );
            let expected: Vec<f64> = (0..3)
                .map(|j| seed.0 * rows[0][j] + seed.1 * rows[1][j])
                .collect();
            assert_close(&grad, &expected);
        }
        // The split API: one forward pass, one pullback per row.
        let (out, pullback) = rotate_forward(x, y, a);
        assert_eq!(out, rotate(x, y, a));
        for (row, seed) in rows.iter().zip([(1.0, 0.0), (0.0, 1.0)]) {
            let (dx, dy, da) = pullback(seed);
            assert_close(&[dx, dy, da], row);
        }
    }

    /// The distance from a point to a segment: the foot of the perpendicular,
    /// its parameter clamped to the segment.
    #[differentiate(vjp, jvp)]
    fn segment_distance(p: &[f64; 2], a: &[f64; 2], b: &[f64; 2]) -> f64 {
        let ab = [b[0] - a[0], b[1] - a[1]];
        let ap = [p[0] - a[0], p[1] - a[1]];
        let t = ((ap[0] * ab[0] + ap[1] * ab[1]) / (ab[0] * ab[0] + ab[1] * ab[1])).clamp(0.0, 1.0);
        (ap[0] - t * ab[0]).hypot(ap[1] - t * ab[1])
    }

    /// The distance from a point to the line through `a` and `b`, as
    /// `|ab × ap| / |ab|`: the same where the foot falls inside the segment.
    #[differentiate(vjp, jvp)]
    fn line_distance(p: &[f64; 2], a: &[f64; 2], b: &[f64; 2]) -> f64 {
        let cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        cross.abs() / (b[0] - a[0]).hypot(b[1] - a[1])
    }

    fn check_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> Vec<f64> {
        let arr = |p: &[f64]| -> [f64; 2] { p.try_into().unwrap() };
        check_scalar(
            |q| segment_distance(&arr(&q[..2]), &arr(&q[2..4]), &arr(&q[4..])),
            |q, s| {
                let mut d = [[0.0; 2]; 3];
                let [dp, da, db] = &mut d;
                let out = segment_distance_vjp(
                    &arr(&q[..2]),
                    dp,
                    &arr(&q[2..4]),
                    da,
                    &arr(&q[4..]),
                    db,
                    s,
                );
                (out, d.concat())
            },
            &[p, a, b].concat(),
        )
    }

    #[test]
    fn point_to_segment_distance() {
        let (a, b) = ([0.0, 0.5], [2.0, 1.5]);
        // The foot inside the segment: the distance to the line.
        let p = [0.8, 1.9];
        let grad = check_segment(p, a, b);
        let mut d = [[0.0; 2]; 3];
        let [dp, da, db] = &mut d;
        line_distance_vjp(&p, dp, &a, da, &b, db, 1.0);
        assert_close(&grad, &d.concat());
        // Beyond `b`: the distance to `b`, which `a` does not move.
        let p = [3.0, 1.0];
        let grad = check_segment(p, a, b);
        let r = (p[0] - b[0]).hypot(p[1] - b[1]);
        let u = [(p[0] - b[0]) / r, (p[1] - b[1]) / r];
        assert_close(&grad, &[u[0], u[1], 0.0, 0.0, -u[0], -u[1]]);
    }

    /// The distance from a point to the nearest of a set of centres:
    /// `min_by` over mapped distances.
    #[differentiate(vjp, jvp)]
    fn nearest_center(p: &[f64; 2], centers: &[f64]) -> f64 {
        centers
            .chunks_exact(2)
            .map(|c| (c[0] - p[0]).hypot(c[1] - p[1]))
            .min_by(|a, b| a.partial_cmp(b).unwrap())
            .unwrap()
    }

    #[test]
    fn distance_to_the_nearest_center() {
        let p = [0.4, 0.3];
        let centers = [2.0, 2.0, 0.9, -0.2, -1.0, 0.5, 0.2, 1.8];
        let arr = |q: &[f64]| -> [f64; 2] { q.try_into().unwrap() };
        let grad = check_scalar(
            |q| nearest_center(&arr(&q[..2]), &q[2..]),
            |q, s| {
                let mut dp = [0.0; 2];
                let mut dc = vec![0.0; 8];
                let out = nearest_center_vjp(&arr(&q[..2]), &mut dp, &q[2..], &mut dc, s);
                (out, [&dp[..], &dc[..]].concat())
            },
            &[&p[..], &centers[..]].concat(),
        );
        // The nearest is (0.9, -0.2), at distance √0.5.
        let r = 0.5_f64.sqrt();
        let u = [(0.4 - 0.9) / r, (0.3 + 0.2) / r];
        let mut expected = vec![0.0; 10];
        expected[..2].copy_from_slice(&u);
        expected[4] = -u[0];
        expected[5] = -u[1];
        assert_close(&grad, &expected);
    }

    /// The Rosenbrock function over `windows`, once for `f32` and `f64`: after
    /// Clad's `demos/RosenbrockFunction.cpp`.
    #[differentiate(vjp, jvp)]
    fn rosenbrock<T: Float>(x: &[T]) -> T {
        let hundred = T::from_f64(100.0);
        x.windows(2)
            .map(|w| hundred * (w[1] - w[0] * w[0]).powi(2) + (T::ONE - w[0]).powi(2))
            .sum()
    }

    #[test]
    fn rosenbrock_after_clad() {
        let closed = |x: &[f64]| {
            let mut g = vec![0.0; x.len()];
            for i in 0..x.len() - 1 {
                let e = x[i + 1] - x[i] * x[i];
                g[i] += -400.0 * x[i] * e - 2.0 * (1.0 - x[i]);
                g[i + 1] += 200.0 * e;
            }
            g
        };
        let grad = slice(
            rosenbrock::<f64>,
            rosenbrock_vjp::<f64>,
            rosenbrock_jvp::<f64>,
            &X,
        );
        assert_close(&grad, &closed(&X));
        // Dyadic values: the `f32` gradient is exact.
        let x = [0.5, 0.25, 0.125, 0.0625];
        let grad = slice32(rosenbrock::<f32>, rosenbrock_vjp::<f32>, &x);
        assert_close(&grad, &closed(&x));
    }
}

// ---------------------------------------------------------------------------

mod layers {
    use super::*;

    /// A dense layer with `tanh`, one output per row of `w` (`chunks_exact`),
    /// the outputs collected into a `Vec`.
    #[differentiate(vjp, jvp)]
    fn dense_tanh(w: &[f64], b: &[f64], x: &[f64]) -> Vec<f64> {
        w.chunks_exact(x.len())
            .zip(b)
            .map(|(row, bias)| (row.iter().zip(x).map(|(a, v)| a * v).sum::<f64>() + bias).tanh())
            .collect()
    }

    #[test]
    fn dense_layer_over_rows() {
        let w = [
            0.2, -0.5, 0.9, 0.4, 0.1, -0.3, -0.7, 0.6, 0.35, 0.8, -0.2, 0.5,
        ];
        let b = [0.1, -0.2, 0.05];
        let x = [0.5, -1.0, 2.0, 0.3];
        let seed = [1.0, -0.5, 2.0];
        let grad = check_vector(
            |p| {
                let v = parts(p, &[12, 3]);
                dense_tanh(v[0], v[1], v[2])
            },
            |p, s| {
                let v = parts(p, &[12, 3]);
                let (mut dw, mut db, mut dx) = (vec![0.0; 12], vec![0.0; 3], vec![0.0; 4]);
                let out = dense_tanh_vjp(v[0], &mut dw, v[1], &mut db, v[2], &mut dx, s);
                (out, [dw, db, dx].concat())
            },
            &[&w[..], &b[..], &x[..]].concat(),
            &seed,
        );
        let (mut dw, mut db, mut dx) = (vec![0.0; 12], vec![0.0; 3], vec![0.0; 4]);
        for r in 0..3 {
            let z: f64 = (0..4).map(|j| w[4 * r + j] * x[j]).sum::<f64>() + b[r];
            let g = seed[r] * (1.0 - z.tanh().powi(2));
            db[r] = g;
            for j in 0..4 {
                dw[4 * r + j] = g * x[j];
                dx[j] += g * w[4 * r + j];
            }
        }
        assert_close(&grad, &[dw, db, dx].concat());
    }

    /// A two-layer perceptron: a ReLU hidden layer (`max`) collected into a
    /// `Vec`, then a linear read-out.
    #[differentiate(vjp, jvp)]
    fn mlp(w1: &[f64], b1: &[f64], w2: &[f64], x: &[f64]) -> f64 {
        let hidden: Vec<f64> = w1
            .chunks_exact(x.len())
            .zip(b1)
            .map(|(row, b)| (row.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() + b).max(0.0))
            .collect();
        hidden.iter().zip(w2).map(|(h, w)| h * w).sum()
    }

    /// The same perceptron with index loops and an `if` for the ReLU.
    #[differentiate(vjp, jvp)]
    fn mlp_index(w1: &[f64], b1: &[f64], w2: &[f64], x: &[f64]) -> f64 {
        let n = x.len();
        let mut out = 0.0;
        for j in 0..b1.len() {
            let mut z = 0.0;
            for i in 0..n {
                z += w1[j * n + i] * x[i];
            }
            z += b1[j];
            let h = if z > 0.0 { z } else { 0.0 };
            out += h * w2[j];
        }
        out
    }

    #[test]
    fn relu_perceptron_matches_the_index_loop() {
        let w1 = [
            0.3, -0.8, 0.5, 1.1, 0.2, -0.4, -0.6, 0.9, 0.7, 0.25, -0.3, 0.6,
        ];
        let b1 = [0.1, -0.6, -0.2, 0.05];
        let w2 = [1.2, -0.7, 0.5, 0.9];
        let x = [0.8, -0.6, 1.1];
        let lens = [12, 4, 4];
        let point = [&w1[..], &b1[..], &w2[..], &x[..]].concat();
        type MlpVjp = fn(
            &[f64],
            &mut [f64],
            &[f64],
            &mut [f64],
            &[f64],
            &mut [f64],
            &[f64],
            &mut [f64],
            f64,
        ) -> f64;
        let run = |vjp: MlpVjp, p: &[f64], s: f64| {
            let v = parts(p, &lens);
            let mut d: Vec<Vec<f64>> = v.iter().map(|x| vec![0.0; x.len()]).collect();
            let [d1, d2, d3, d4] = &mut d[..] else {
                unreachable!()
            };
            let out = vjp(v[0], d1, v[1], d2, v[2], d3, v[3], d4, s);
            (out, d.concat())
        };
        let grad = check_scalar(
            |p| {
                let v = parts(p, &lens);
                mlp(v[0], v[1], v[2], v[3])
            },
            |p, s| run(mlp_vjp, p, s),
            &point,
        );
        // Pre-activations well away from the ReLU's kink.
        for (row, b) in w1.chunks_exact(3).zip(&b1) {
            let z: f64 = row.iter().zip(&x).map(|(w, v)| w * v).sum::<f64>() + b;
            assert!(z.abs() > 0.1, "{z}");
        }
        assert_close(&grad, &run(mlp_index_vjp, &point, 1.0).1);
    }

    /// Layer normalisation with a scale and a shift, returning the normalised
    /// vector.
    #[differentiate(vjp, jvp)]
    fn layer_norm(x: &[f64], gamma: &[f64], beta: &[f64]) -> Vec<f64> {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let inv = (var + 1e-5).sqrt().recip();
        x.iter()
            .zip(gamma)
            .zip(beta)
            .map(|((v, g), b)| g * (v - mean) * inv + b)
            .collect()
    }

    #[test]
    fn layer_normalisation() {
        let gamma = [1.0, 0.5, 1.5, 0.8, 1.2, 0.9, 1.1];
        let seed = [0.3, -1.0, 0.5, 2.0, -0.4, 0.7, 1.0];
        let grad = check_vector(
            |p| {
                let v = parts(p, &[7, 7]);
                layer_norm(v[0], v[1], v[2])
            },
            |p, s| {
                let v = parts(p, &[7, 7]);
                let mut d = vec![vec![0.0; 7]; 3];
                let [dx, dg, db] = &mut d[..] else {
                    unreachable!()
                };
                let out = layer_norm_vjp(v[0], dx, v[1], dg, v[2], db, s);
                (out, d.concat())
            },
            &[&X[..], &gamma[..], &Y[..]].concat(),
            &seed,
        );
        let mean = X.iter().sum::<f64>() / 7.0;
        let var = X.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 7.0;
        let inv = 1.0 / (var + 1e-5).sqrt();
        let xhat: Vec<f64> = X.iter().map(|v| (v - mean) * inv).collect();
        let gs: Vec<f64> = gamma.iter().zip(&seed).map(|(g, s)| g * s).collect();
        let m1 = gs.iter().sum::<f64>() / 7.0;
        let m2 = gs.iter().zip(&xhat).map(|(a, b)| a * b).sum::<f64>() / 7.0;
        let dx: Vec<f64> = gs
            .iter()
            .zip(&xhat)
            .map(|(g, h)| inv * (g - m1 - h * m2))
            .collect();
        let dg: Vec<f64> = seed.iter().zip(&xhat).map(|(s, h)| s * h).collect();
        assert_close(&grad, &[dx, dg, seed.to_vec()].concat());
    }

    /// A recurrent network's squared error over a sequence: after JAX's
    /// `tests/lax_control_flow_test.py`, `testScanRnn` (a `tanh` cell over the
    /// state stacked with the input, a `tanh` read-out), written with a loop
    /// over `chunks_exact` of the inputs instead of `lax.scan`.
    #[differentiate(vjp, jvp, wrt(w_trans, w_out))]
    fn rnn_loss(
        w_trans: &[f64],
        w_out: &[f64],
        inputs: &[f64],
        targets: &[f64],
        n_hid: usize,
    ) -> f64 {
        let n_in = inputs.len() / targets.len();
        let mut state = vec![0.0; n_hid];
        let mut stacked = vec![0.0; n_hid + n_in];
        let mut loss = 0.0;
        for (input, &target) in inputs.chunks_exact(n_in).zip(targets) {
            for (j, &s) in state.iter().enumerate() {
                stacked[j] = s;
            }
            for (k, &v) in input.iter().enumerate() {
                stacked[n_hid + k] = v;
            }
            let output = w_out
                .iter()
                .zip(&stacked)
                .map(|(w, s)| w * s)
                .sum::<f64>()
                .tanh();
            for (j, row) in w_trans.chunks_exact(n_hid + n_in).enumerate() {
                state[j] = row
                    .iter()
                    .zip(&stacked)
                    .map(|(w, s)| w * s)
                    .sum::<f64>()
                    .tanh();
            }
            loss += (output - target).powi(2);
        }
        loss
    }

    /// The same network with index loops over flat matrices.
    #[differentiate(vjp, jvp, wrt(w_trans, w_out))]
    #[allow(clippy::manual_memcpy)] // Written out as the index form.
    fn rnn_loss_index(
        w_trans: &[f64],
        w_out: &[f64],
        inputs: &[f64],
        targets: &[f64],
        n_hid: usize,
    ) -> f64 {
        let n_in = inputs.len() / targets.len();
        let width = n_hid + n_in;
        let mut h = vec![0.0; n_hid];
        let mut next = vec![0.0; n_hid];
        let mut loss = 0.0;
        for t in 0..targets.len() {
            let mut z = 0.0;
            for j in 0..n_hid {
                z += w_out[j] * h[j];
            }
            for k in 0..n_in {
                z += w_out[n_hid + k] * inputs[t * n_in + k];
            }
            let r = z.tanh() - targets[t];
            loss += r * r;
            for i in 0..n_hid {
                let mut a = 0.0;
                for j in 0..n_hid {
                    a += w_trans[i * width + j] * h[j];
                }
                for k in 0..n_in {
                    a += w_trans[i * width + n_hid + k] * inputs[t * n_in + k];
                }
                next[i] = a.tanh();
            }
            for i in 0..n_hid {
                h[i] = next[i];
            }
        }
        loss
    }

    #[test]
    fn recurrent_network_after_jax_scan_rnn() {
        let (n_in, n_hid, length) = (4, 2, 3);
        let wave = |k: usize, a: f64| (a * k as f64 + 0.3).sin();
        let w_trans: Vec<f64> = (0..n_hid * (n_hid + n_in))
            .map(|k| 0.8 * wave(k, 1.7))
            .collect();
        let w_out: Vec<f64> = (0..n_hid + n_in).map(|k| 0.9 * wave(k, 2.3)).collect();
        let inputs: Vec<f64> = (0..length * n_in).map(|k| wave(k, 0.9)).collect();
        let targets = [0.3, -0.5, 0.8];
        let nt = w_trans.len();
        let grad = check_scalar(
            |p| rnn_loss(&p[..nt], &p[nt..], &inputs, &targets, n_hid),
            |p, s| {
                let (mut dt, mut dout) = (vec![0.0; nt], vec![0.0; p.len() - nt]);
                let out = rnn_loss_vjp(
                    &p[..nt],
                    &mut dt,
                    &p[nt..],
                    &mut dout,
                    &inputs,
                    &targets,
                    n_hid,
                    s,
                );
                dt.extend(dout);
                (out, dt)
            },
            &[&w_trans[..], &w_out[..]].concat(),
        );
        let (mut dt, mut dout) = (vec![0.0; nt], vec![0.0; w_out.len()]);
        rnn_loss_index_vjp(
            &w_trans, &mut dt, &w_out, &mut dout, &inputs, &targets, n_hid, 1.0,
        );
        dt.extend(dout);
        assert_close(&grad, &dt);
    }

    /// Single-query attention: scaled scores of the keys (`chunks_exact`),
    /// their softmax, and the weighted mean of the values.
    #[differentiate(vjp, jvp)]
    fn attention(q: &[f64], keys: &[f64], values: &[f64]) -> f64 {
        let d = q.len();
        let scale = (d as f64).sqrt().recip();
        let scores: Vec<f64> = keys
            .chunks_exact(d)
            .map(|k| k.iter().zip(q).map(|(a, b)| a * b).sum::<f64>() * scale)
            .collect();
        let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().zip(values).map(|(w, v)| w * v).sum::<f64>() / total
    }

    /// The same with index loops and a running maximum.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::needless_range_loop)] // The index form is the point.
    fn attention_index(q: &[f64], keys: &[f64], values: &[f64]) -> f64 {
        let d = q.len();
        let n = values.len();
        let mut scores = vec![0.0; n];
        for j in 0..n {
            let mut s = 0.0;
            for i in 0..d {
                s += keys[j * d + i] * q[i];
            }
            scores[j] = s / (d as f64).sqrt();
        }
        let mut m = scores[0];
        for j in 1..n {
            m = m.max(scores[j]);
        }
        let mut num = 0.0;
        let mut den = 0.0;
        for j in 0..n {
            let w = (scores[j] - m).exp();
            num += w * values[j];
            den += w;
        }
        num / den
    }

    #[test]
    fn attention_matches_the_index_loop() {
        let q = [0.5, -1.0, 0.3, 0.8];
        let keys: Vec<f64> = (0..20).map(|k| (0.7 * k as f64).sin()).collect();
        let values = [1.0, -0.5, 2.0, 0.3, -1.2];
        let grad = triple(attention, attention_vjp, &q, &keys, &values);
        let mut d = [vec![0.0; 4], vec![0.0; 20], vec![0.0; 5]];
        let [dq, dk, dv] = &mut d[..] else {
            unreachable!()
        };
        attention_index_vjp(&q, dq, &keys, dk, &values, dv, 1.0);
        assert_close(&grad, &d.concat());
    }

    /// A one-dimensional convolution with `tanh`: `windows` zipped with the
    /// kernel.
    #[differentiate(vjp, jvp)]
    fn conv_tanh(x: &[f64], kernel: &[f64]) -> f64 {
        x.windows(kernel.len())
            .map(|w| w.iter().zip(kernel).map(|(a, k)| a * k).sum::<f64>().tanh())
            .sum()
    }

    #[test]
    fn convolution_with_windows() {
        let kernel = [0.25, -0.5, 0.4];
        let grad = pair(conv_tanh, conv_tanh_vjp, conv_tanh_jvp, &X, &kernel);
        let mut expected = vec![0.0; 10];
        for n in 0..5 {
            let z: f64 = (0..3).map(|k| X[n + k] * kernel[k]).sum();
            let g = 1.0 - z.tanh().powi(2);
            for k in 0..3 {
                expected[n + k] += g * kernel[k];
                expected[7 + k] += g * X[n + k];
            }
        }
        assert_close(&grad, &expected);
    }

    /// The logistic sigmoid, a helper with its own derivative.
    #[differentiate(vjp, jvp)]
    fn sigmoid(z: f64) -> f64 {
        1.0 / (1.0 + (-z).exp())
    }

    /// A gated sum calling the differentiated helper `sigmoid` inside a `map`
    /// closure. (A closure whose whole body is the call,
    /// `gate.iter().map(|&g| sigmoid(g)).sum()`, gets a zero gradient from the
    /// current macro; with the product around the call it is right.)
    #[differentiate(vjp, jvp)]
    fn gated_sum(x: &[f64], gate: &[f64]) -> f64 {
        x.iter().zip(gate).map(|(v, g)| v * sigmoid(*g)).sum()
    }

    #[test]
    fn gate_through_a_called_helper() {
        let grad = pair(gated_sum, gated_sum_vjp, gated_sum_jvp, &X, &Y);
        let s: Vec<f64> = Y.iter().map(|g| 1.0 / (1.0 + (-g).exp())).collect();
        let dg: Vec<f64> = X.iter().zip(&s).map(|(v, s)| v * s * (1.0 - s)).collect();
        assert_close(&grad, &[s, dg].concat());
    }

    /// A gradient-descent step in place on `f(p) = Σ (1 - cos pᵢ)`, its
    /// gradient collected first, the update through `iter_mut().zip`.
    #[differentiate(vjp, jvp)]
    fn sgd_step(params: &mut [f64], lr: f64) {
        let grads: Vec<f64> = params.iter().map(|p| p.sin()).collect();
        for (p, g) in params.iter_mut().zip(&grads) {
            *p -= lr * g;
        }
    }

    #[test]
    fn sgd_step_in_place() {
        let seed = [1.0, -0.5, 2.0, 0.3, 0.8, -1.2, 0.4];
        let lr = 0.1;
        let grad = check_in_place(
            |s, k| sgd_step(s, k),
            |s, d, k| sgd_step_vjp(s, d, k),
            &X,
            lr,
            &seed,
        );
        // p' = p - lr sin p.
        let mut expected: Vec<f64> = X
            .iter()
            .zip(&seed)
            .map(|(p, s)| s * (1.0 - lr * p.cos()))
            .collect();
        expected.push(-X.iter().zip(&seed).map(|(p, s)| s * p.sin()).sum::<f64>());
        assert_close(&grad, &expected);
    }

    /// The sum of softplus activations, once for `f32` and `f64`.
    #[differentiate(vjp, jvp)]
    fn softplus_sum<T: Float>(x: &[T]) -> T {
        x.iter().map(|&v| v.exp().ln_1p()).sum::<T>()
    }

    #[test]
    fn generic_softplus() {
        let sigmoid: Vec<f64> = X.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect();
        let grad = slice(
            softplus_sum::<f64>,
            softplus_sum_vjp::<f64>,
            softplus_sum_jvp::<f64>,
            &X,
        );
        assert_close(&grad, &sigmoid);
        let grad = slice32(softplus_sum::<f32>, softplus_sum_vjp::<f32>, &X);
        assert_close_f32(&grad, &sigmoid);
    }
}

// ---------------------------------------------------------------------------

mod signal {
    use super::*;

    /// A moving average: the mean of each `window`, collected.
    #[differentiate(vjp, jvp)]
    fn moving_average(x: &[f64], width: usize) -> Vec<f64> {
        x.windows(width)
            .map(|w| w.iter().sum::<f64>() / width as f64)
            .collect()
    }

    #[test]
    fn moving_average_with_windows() {
        let seed = [1.0, -0.5, 2.0, 0.25, 1.5];
        let grad = slice_vec(
            |x| moving_average(x, 3),
            |x, d, s| moving_average_vjp(x, d, 3, s),
            &X,
            &seed,
        );
        let mut expected = vec![0.0; 7];
        for (n, s) in seed.iter().enumerate() {
            for e in &mut expected[n..n + 3] {
                *e += s / 3.0;
            }
        }
        assert_close(&grad, &expected);
    }

    /// Simple exponential smoothing: a `fold` over a sub-slice, started from
    /// the first sample.
    #[differentiate(vjp, jvp)]
    fn exp_smoothing(x: &[f64], alpha: f64) -> f64 {
        let rest = &x[1..];
        rest.iter()
            .fold(x[0], |level, &v| alpha * v + (1.0 - alpha) * level)
    }

    #[test]
    fn exponential_smoothing_with_fold() {
        let alpha = 0.3;
        let grad = slice_k(
            exp_smoothing,
            exp_smoothing_vjp,
            exp_smoothing_jvp,
            &X,
            alpha,
        );
        // ∂/∂x₀ = (1 - α)ⁿ⁻¹, ∂/∂xₖ = α (1 - α)ⁿ⁻¹⁻ᵏ; ∂/∂α by the recursion.
        let n = X.len();
        let mut expected: Vec<f64> = (0..n)
            .map(|k| {
                let w = (1.0 - alpha).powi((n - 1 - k) as i32);
                if k == 0 { w } else { alpha * w }
            })
            .collect();
        let (mut level, mut d_alpha) = (X[0], 0.0);
        for &v in &X[1..] {
            d_alpha = v - level + (1.0 - alpha) * d_alpha;
            level = alpha * v + (1.0 - alpha) * level;
        }
        expected.push(d_alpha);
        assert_close(&grad, &expected);
        // The split API agrees.
        let (out, pullback) = exp_smoothing_forward(&X, alpha);
        assert_eq!(out.to_bits(), exp_smoothing(&X, alpha).to_bits());
        let mut d = vec![0.0; n];
        let da = pullback(&X, &mut d, 1.0);
        d.push(da);
        assert_close(&d, &grad);
    }

    /// A finite impulse response filter: each output the reversed window
    /// (`rev`) zipped with the taps.
    #[differentiate(vjp, jvp)]
    fn fir(x: &[f64], taps: &[f64]) -> Vec<f64> {
        x.windows(taps.len())
            .map(|w| w.iter().rev().zip(taps).map(|(a, h)| a * h).sum::<f64>())
            .collect()
    }

    #[test]
    fn fir_filter_with_rev() {
        let taps = [0.5, 0.3, -0.2];
        let seed = [1.0, -2.0, 0.5, 0.75, -1.0];
        let grad = check_vector(
            |p| fir(&p[..7], &p[7..]),
            |p, s| {
                let (mut dx, mut dh) = (vec![0.0; 7], vec![0.0; 3]);
                let out = fir_vjp(&p[..7], &mut dx, &p[7..], &mut dh, s);
                dx.extend(dh);
                (out, dx)
            },
            &[&X[..], &taps[..]].concat(),
            &seed,
        );
        // yₙ = Σₖ hₖ x[n + 2 - k].
        let mut expected = vec![0.0; 10];
        for (n, s) in seed.iter().enumerate() {
            for (k, h) in taps.iter().enumerate() {
                expected[n + 2 - k] += s * h;
                expected[7 + k] += s * X[n + 2 - k];
            }
        }
        assert_close(&grad, &expected);
    }

    /// Holt's linear-trend forecast: level and trend carried through a `fold`,
    /// one step of the update a closure taking and returning a tuple.
    #[differentiate(vjp, jvp)]
    fn holt_forecast(x: &[f64], alpha: f64, beta: f64) -> f64 {
        let update = |(level, trend): (f64, f64), v: f64| {
            let next = alpha * v + (1.0 - alpha) * (level + trend);
            (next, beta * (next - level) + (1.0 - beta) * trend)
        };
        let (level, trend) = x
            .iter()
            .skip(1)
            .fold((x[0], x[1] - x[0]), |(l, t), &v| update((l, t), v));
        level + trend
    }

    /// The same recursion with an index loop and two carried scalars.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::needless_range_loop)] // The index form is the point.
    fn holt_forecast_index(x: &[f64], alpha: f64, beta: f64) -> f64 {
        let mut level = x[0];
        let mut trend = x[1] - x[0];
        for i in 1..x.len() {
            let next = alpha * x[i] + (1.0 - alpha) * (level + trend);
            trend = beta * (next - level) + (1.0 - beta) * trend;
            level = next;
        }
        level + trend
    }

    #[test]
    fn holt_trend_matches_the_index_loop() {
        let (alpha, beta) = (0.4, 0.25);
        let n = X.len();
        let grad = check_scalar(
            |p| holt_forecast(&p[..n], p[n], p[n + 1]),
            |p, s| {
                let mut d = vec![0.0; n];
                let (out, da, db) = holt_forecast_vjp(&p[..n], &mut d, p[n], p[n + 1], s);
                d.extend([da, db]);
                (out, d)
            },
            &[&X[..], &[alpha, beta]].concat(),
        );
        let mut d = vec![0.0; n];
        let (_, da, db) = holt_forecast_index_vjp(&X, &mut d, alpha, beta, 1.0);
        d.extend([da, db]);
        assert_close(&grad, &d);
    }

    /// The output energy of a one-pole low-pass filter, in `f32`.
    #[differentiate(vjp, jvp)]
    fn one_pole(x: &[f32], a: f32) -> f32 {
        let mut y = 0.0;
        let mut energy = 0.0;
        for &v in x {
            y = a * y + (1.0 - a) * v;
            energy += y * y;
        }
        energy
    }

    #[test]
    fn one_pole_filter_in_f32() {
        let x = [0.5, -1.0, 0.75, 1.5, -0.25];
        let a = 0.5;
        let grad = check_scalar_within(
            1e-3,
            |p| f64::from(one_pole(&to32(&p[..5]), p[5] as f32)),
            |p, s| {
                let mut d = vec![0.0_f32; 5];
                let (out, da) = one_pole_vjp(&to32(&p[..5]), &mut d, p[5] as f32, s as f32);
                d.push(da);
                (f64::from(out), to64(&d))
            },
            &[&x[..], &[a]].concat(),
        );
        // Forward-mode by hand: yₙ and its derivatives in each xₖ and in a.
        let mut expected = vec![0.0; 6];
        let (mut y, mut dy, mut dy_da) = (0.0, [0.0; 5], 0.0);
        for (n, &v) in x.iter().enumerate() {
            dy_da = y - v + a * dy_da;
            y = a * y + (1.0 - a) * v;
            for (k, d) in dy.iter_mut().enumerate() {
                *d = a * *d + if k == n { 1.0 - a } else { 0.0 };
                expected[k] += 2.0 * y * *d;
            }
            expected[5] += 2.0 * y * dy_da;
        }
        // Dyadic data: the `f32` gradient is exact.
        assert_close(&grad, &expected);
    }

    /// The power of a signal at one frequency: a DFT bin accumulated in a
    /// `fold` over `enumerate`, with `sin_cos`.
    #[differentiate(vjp, jvp)]
    fn dft_power(x: &[f64], freq: f64) -> f64 {
        let (re, im) = x.iter().enumerate().fold((0.0, 0.0), |(re, im), (n, &v)| {
            let (s, c) = (freq * n as f64).sin_cos();
            (re + v * c, im - v * s)
        });
        re * re + im * im
    }

    #[test]
    fn dft_bin_power() {
        let freq = 0.9;
        let grad = slice_k(dft_power, dft_power_vjp, dft_power_jvp, &X, freq);
        let (mut re, mut im) = (0.0, 0.0);
        for (n, v) in X.iter().enumerate() {
            re += v * (freq * n as f64).cos();
            im -= v * (freq * n as f64).sin();
        }
        let mut expected: Vec<f64> = (0..7)
            .map(|n| {
                let (s, c) = (freq * n as f64).sin_cos();
                2.0 * (re * c - im * s)
            })
            .collect();
        let d_freq: f64 = X
            .iter()
            .enumerate()
            .map(|(n, v)| {
                let (s, c) = (freq * n as f64).sin_cos();
                -2.0 * v * n as f64 * (re * s + im * c)
            })
            .sum();
        expected.push(d_freq);
        assert_close(&grad, &expected);
    }

    /// The energy of a decimated signal: every other sample (`step_by`), the
    /// first three of them (`take`), after a gain.
    #[differentiate(vjp, jvp)]
    fn decimated_energy(x: &[f64], gain: f64) -> f64 {
        x.iter()
            .step_by(2)
            .take(3)
            .map(|v| (gain * v).powi(2))
            .sum()
    }

    #[test]
    fn decimation_with_step_by_and_take() {
        let gain = 1.5;
        let grad = slice_k(
            decimated_energy,
            decimated_energy_vjp,
            decimated_energy_jvp,
            &X,
            gain,
        );
        let mut expected = vec![0.0; 8];
        for i in [0, 2, 4] {
            expected[i] = 2.0 * gain * gain * X[i];
            expected[7] += 2.0 * gain * X[i] * X[i];
        }
        assert_close(&grad, &expected);
    }
}

// ---------------------------------------------------------------------------

mod iterations {
    use super::*;

    /// Newton's iteration for `√a` in a `while` loop, to a relative tolerance.
    #[differentiate(vjp, jvp)]
    fn newton_sqrt(a: f64) -> f64 {
        let mut x = a.max(1.0);
        let mut iters = 0;
        while (x * x - a).abs() > 1e-15 * a && iters < 100 {
            x = 0.5 * (x + a / x);
            iters += 1;
        }
        x
    }

    #[test]
    fn newton_square_root_to_a_tolerance() {
        for a in [0.3, 2.0, 50.0] {
            let grad = scalars(
                |[a]| newton_sqrt(a),
                |[a], s| {
                    let (out, da) = newton_sqrt_vjp(a, s);
                    (out, [da])
                },
                [a],
            );
            assert_close(&grad, &[0.5 / a.sqrt()]);
        }
    }

    /// After JAX's `tests/custom_root_test.py`, `test_custom_root_scalar`:
    /// `sqrt_cubed(x)` solves `y² - x³ = 0` from `y = 1` by Newton–Raphson
    /// (there through `lax.custom_root`, here as a plain `while` loop with the
    /// function and its derivative as closures); the gradient is that of
    /// `x^1.5`.
    #[differentiate(vjp, jvp)]
    fn sqrt_cubed(x: f64) -> f64 {
        let f = |y: f64| y * y - x.powi(3);
        let df = |y: f64| 2.0 * y;
        let mut y = 1.0;
        let mut step = f64::INFINITY;
        let mut iters = 0;
        while step.abs() > 1e-15 * y.abs() && iters < 100 {
            step = f(y) / df(y);
            y -= step;
            iters += 1;
        }
        y
    }

    #[test]
    fn sqrt_cubed_after_jax_custom_root() {
        let grad = scalars(
            |[x]| sqrt_cubed(x),
            |[x], s| {
                let (out, dx) = sqrt_cubed_vjp(x, s);
                (out, [dx])
            },
            [5.0],
        );
        assert_close(&grad, &[1.5 * 5.0_f64.sqrt()]);
        assert_close(&[sqrt_cubed(5.0)], &[5.0_f64.powf(1.5)]);
    }

    /// The fixed point of `x = a cos x`, iterated in a `loop` that breaks with
    /// the converged value: after Enzyme's integration test `fixed_point.c`
    /// (there `u = C sin(A u) + p²` in four dimensions), in one dimension.
    #[differentiate(vjp, jvp)]
    fn fixed_point_cos(a: f64) -> f64 {
        let mut x = 0.5;
        let mut iters = 0;
        loop {
            let next = a * x.cos();
            iters += 1;
            if (next - x).abs() <= 1e-16 || iters == 500 {
                break next;
            }
            x = next;
        }
    }

    #[test]
    fn fixed_point_iteration_after_enzyme() {
        let a = 0.7;
        let grad = scalars(
            |[a]| fixed_point_cos(a),
            |[a], s| {
                let (out, da) = fixed_point_cos_vjp(a, s);
                (out, [da])
            },
            [a],
        );
        // Implicit differentiation: x = a cos x ⇒ dx/da = cos x / (1 + a sin x).
        let x = fixed_point_cos(a);
        assert_close(&grad, &[x.cos() / (1.0 + a * x.sin())]);
    }

    /// Kepler's equation `E - e sin E = M`, solved by Newton in a `for` loop
    /// that breaks once the step is negligible.
    #[differentiate(vjp, jvp)]
    fn kepler(mean_anomaly: f64, ecc: f64) -> f64 {
        let mut e = mean_anomaly;
        for _ in 0..50 {
            let step = (e - ecc * e.sin() - mean_anomaly) / (1.0 - ecc * e.cos());
            e -= step;
            if step.abs() < 1e-15 {
                break;
            }
        }
        e
    }

    #[test]
    fn kepler_equation_by_newton() {
        let (m, ecc) = (1.1, 0.3);
        let grad = scalars(
            |[m, e]| kepler(m, e),
            |[m, e], s| {
                let (out, dm, de) = kepler_vjp(m, e, s);
                (out, [dm, de])
            },
            [m, ecc],
        );
        let e = kepler(m, ecc);
        let denom = 1.0 - ecc * e.cos();
        assert_close(&grad, &[1.0 / denom, e.sin() / denom]);
        let (out, pullback) = kepler_forward(m, ecc);
        assert_eq!(out.to_bits(), e.to_bits());
        let (dm, de) = pullback(2.0);
        assert_close(&[dm, de], &[2.0 * grad[0], 2.0 * grad[1]]);
    }

    /// The temperature at which a mixture has the energy `e`, by Newton with a
    /// clamped iterate and a `break` on a converged step: after Enzyme's
    /// integration test `newton_inversion.c` (the state `(e, Y₀, Y₁,
    /// T_guess)`, with the implicit-function gradient `(1/c_v, -e₀/c_v,
    /// -e₁/c_v, 0)`), with a quadratic energy per species.
    #[differentiate(vjp, jvp)]
    fn temperature(e: f64, y: &[f64], t_guess: f64) -> f64 {
        let a = [0.7, 0.65];
        let b = [0.05, 0.08];
        let mut t = t_guess;
        for _ in 0..100 {
            let mut energy = 0.0;
            let mut cv = 0.0;
            for ((ys, ak), bk) in y.iter().zip(&a).zip(&b) {
                energy += ys * (ak * t + bk * t * t);
                cv += ys * (ak + 2.0 * bk * t);
            }
            let step = (energy - e) / cv;
            t = (t - step).clamp(0.05, 20.0);
            if step.abs() < 1e-12 * t {
                break;
            }
        }
        t
    }

    #[test]
    fn temperature_inversion_after_enzyme() {
        let y = [0.767, 0.233];
        // Temperatures in thousands of kelvin, energies to match.
        let species = |t: f64| [0.7 * t + 0.05 * t * t, 0.65 * t + 0.08 * t * t];
        let t_ref = 1.0;
        let e: f64 = species(t_ref).iter().zip(&y).map(|(e, y)| e * y).sum();
        let grad = check_scalar(
            |p| temperature(p[0], &p[1..3], p[3]),
            |p, s| {
                let mut dy = vec![0.0; 2];
                let (out, de, dt) = temperature_vjp(p[0], &p[1..3], &mut dy, p[3], s);
                (out, vec![de, dy[0], dy[1], dt])
            },
            &[e, y[0], y[1], 0.5],
        );
        let t = temperature(e, &y, 0.5);
        let cv = y[0] * (0.7 + 0.1 * t) + y[1] * (0.65 + 0.16 * t);
        let es = species(t);
        // The gradient keeps no memory of the initial guess.
        assert_close(&grad, &[1.0 / cv, -es[0] / cv, -es[1] / cv, 0.0]);
    }

    /// Jacobi relaxation for `-u'' = f` on a grid with `u = 0` at both ends,
    /// swept in a `while` loop until the update is below a tolerance; the
    /// result's energy `Σ u²`.
    #[differentiate(vjp, jvp)]
    fn jacobi_energy(f: &[f64]) -> f64 {
        let n = f.len();
        let mut u = vec![0.0; n];
        let mut next = vec![0.0; n];
        let mut change = f64::INFINITY;
        let mut sweeps = 0;
        while change > 1e-15 && sweeps < 5000 {
            for i in 1..n - 1 {
                next[i] = 0.5 * (u[i - 1] + u[i + 1] + f[i]);
            }
            change = 0.0;
            for i in 1..n - 1 {
                change = change.max((next[i] - u[i]).abs());
                u[i] = next[i];
            }
            sweeps += 1;
        }
        u.iter().map(|v| v * v).sum()
    }

    #[test]
    fn jacobi_relaxation_to_a_tolerance() {
        let f = [0.0, 0.3, -0.2, 0.5, 0.1, -0.4, 0.0];
        let grad = slice(jacobi_energy, jacobi_energy_vjp, jacobi_energy_jvp, &f);
        // The converged u solves 2uᵢ - uᵢ₋₁ - uᵢ₊₁ = fᵢ; the gradient of Σ u²
        // is 2 A⁻¹ u (A symmetric), zero at the fixed ends. Solve both by
        // elimination.
        let solve = |rhs: &[f64]| {
            let m = rhs.len();
            let (mut c, mut d) = (vec![0.0; m], vec![0.0; m]);
            for i in 0..m {
                let denom = 2.0 + if i > 0 { c[i - 1] } else { 0.0 };
                c[i] = -1.0 / denom;
                d[i] = (rhs[i] + if i > 0 { d[i - 1] } else { 0.0 }) / denom;
            }
            let mut x = vec![0.0; m];
            for i in (0..m).rev() {
                x[i] = d[i] - c[i] * if i + 1 < m { x[i + 1] } else { 0.0 };
            }
            x
        };
        let u = solve(&f[1..6]);
        let twice: Vec<f64> = u.iter().map(|v| 2.0 * v).collect();
        let inner = solve(&twice);
        let expected = [&[0.0][..], &inner[..], &[0.0][..]].concat();
        assert_close(&grad, &expected);
    }

    /// After Enzyme's integration test `mycos.c`, `my_sin`: the Taylor series
    /// of `sin` to degree 12, skipping the even terms with `continue`.
    #[differentiate(vjp, jvp)]
    fn taylor_sin(x: f64) -> f64 {
        let mut result = 0.0;
        let mut factorial = 1.0;
        for i in 1..=12 {
            factorial *= i as f64;
            if i % 2 == 0 {
                continue;
            }
            let sign = if i % 4 == 1 { 1.0 } else { -1.0 };
            result += sign * x.powi(i) / factorial;
        }
        result
    }

    #[test]
    fn taylor_series_after_enzyme_mycos() {
        let x = 1.23;
        let grad = scalars(
            |[x]| taylor_sin(x),
            |[x], s| {
                let (out, dx) = taylor_sin_vjp(x, s);
                (out, [dx])
            },
            [x],
        );
        // The derivative: the Taylor series of `cos` to degree 10.
        let mut cos = 0.0;
        let mut factorial = 1.0;
        for i in 0..=10 {
            if i > 0 {
                factorial *= f64::from(i);
            }
            if i % 2 == 0 {
                let sign = if i % 4 == 0 { 1.0 } else { -1.0 };
                cos += sign * x.powi(i) / factorial;
            }
        }
        assert_close(&grad, &[cos]);
        assert!((grad[0] - x.cos()).abs() < 1e-6);
    }

    /// The trapezoid rule for `∫₀¹ sin(k t) dt`, the integrand a closure, the
    /// interior points visited by a `while` loop on an integer counter.
    #[differentiate(vjp, jvp)]
    fn trapezoid(k: f64, n: usize) -> f64 {
        let h = 1.0 / n as f64;
        let f = |t: f64| (k * t).sin();
        let mut s = 0.5 * (f(0.0) + f(1.0));
        let mut i = 1;
        while i < n {
            s += f(i as f64 * h);
            i += 1;
        }
        s * h
    }

    #[test]
    fn trapezoid_rule_in_a_while_loop() {
        let (k, n) = (2.5, 16);
        let grad = scalars(
            |[k]| trapezoid(k, n),
            |[k], s| {
                let (out, dk) = trapezoid_vjp(k, n, s);
                (out, [dk])
            },
            [k],
        );
        // The same rule applied to ∂/∂k sin(k t) = t cos(k t).
        let h = 1.0 / n as f64;
        let g = |t: f64| t * (k * t).cos();
        let inner: f64 = (1..n).map(|i| g(i as f64 * h)).sum();
        assert_close(&grad, &[(0.5 * (g(0.0) + g(1.0)) + inner) * h]);
    }
}

// ---------------------------------------------------------------------------

mod sources {
    use super::*;

    /// After Clad's `test/Gradient/Loops.C`, `f1` and `f2`: `t *= x` in two
    /// nested loops of three trips, `x⁹`.
    #[differentiate(vjp, jvp)]
    fn nested_power(x: f64) -> f64 {
        let mut t = 1.0;
        for _ in 0..3 {
            for _ in 0..3 {
                t *= x;
            }
        }
        t
    }

    #[test]
    fn nested_loops_after_clad() {
        let grad = scalars(
            |[x]| nested_power(x),
            |[x], s| {
                let (out, dx) = nested_power_vjp(x, s);
                (out, [dx])
            },
            [1.1],
        );
        assert_close(&grad, &[9.0 * 1.1_f64.powi(8)]);
    }

    /// After Clad's `test/Gradient/Loops.C`, `f3`: a `return` from inside the
    /// loop at its second trip, `x²`.
    #[differentiate(vjp, jvp)]
    fn early_return_power(x: f64) -> f64 {
        let mut t = 1.0;
        for i in 0..3 {
            t *= x;
            if i == 1 {
                return t;
            }
        }
        t
    }

    #[test]
    fn early_return_after_clad() {
        let grad = scalars(
            |[x]| early_return_power(x),
            |[x], s| {
                let (out, dx) = early_return_power_vjp(x, s);
                (out, [dx])
            },
            [1.7],
        );
        assert_close(&grad, &[2.0 * 1.7]);
    }

    /// After Clad's `test/Gradient/Loops.C`, `f_const_local`: a local made
    /// from the loop index in each trip, `3x² + 3x`; here a `map` over a range
    /// with a block closure.
    #[differentiate(vjp, jvp)]
    fn const_local(x: f64) -> f64 {
        (0..3)
            .map(|i| {
                let n = x + i as f64;
                x * n
            })
            .sum()
    }

    #[test]
    fn loop_local_after_clad() {
        let grad = scalars(
            |[x]| const_local(x),
            |[x], s| {
                let (out, dx) = const_local_vjp(x, s);
                (out, [dx])
            },
            [0.6],
        );
        assert_close(&grad, &[6.0 * 0.6 + 3.0]);
    }

    /// After Clad's `test/Gradient/Loops.C`, `f_log_gaus`: the log-likelihood
    /// of an n-dimensional Gaussian with covariance `σ² I`, its squares taken
    /// by a closure `sq`; differentiated in the means and `σ`.
    #[differentiate(vjp, jvp, wrt(p, sigma))]
    fn log_gaussian(x: &[f64], p: &[f64], sigma: f64) -> f64 {
        let sq = |v: f64| v * v;
        let n = x.len() as f64;
        let power = -x.iter().zip(p).map(|(a, b)| sq(a - b)).sum::<f64>() / (2.0 * sq(sigma));
        let gaus = 1.0 / ((2.0 * std::f64::consts::PI).powf(n) * sigma).sqrt() * power.exp();
        gaus.ln()
    }

    #[test]
    fn gaussian_log_likelihood_after_clad() {
        let x = [1.0, 0.5, -0.3, 2.0];
        let p = [0.8, 0.1, 0.2, 1.5];
        let sigma = 1.3;
        let grad = slice_k(
            |p, s| log_gaussian(&x, p, s),
            |p, d, s, seed| log_gaussian_vjp(&x, p, d, s, seed),
            |p, t, s, t_s| log_gaussian_jvp(&x, p, t, s, t_s),
            &p,
            sigma,
        );
        let ss: f64 = x.iter().zip(&p).map(|(a, b)| (a - b).powi(2)).sum();
        let mut expected: Vec<f64> = x
            .iter()
            .zip(&p)
            .map(|(a, b)| (a - b) / (sigma * sigma))
            .collect();
        expected.push(-0.5 / sigma + ss / sigma.powi(3));
        assert_close(&grad, &expected);
    }

    /// After JAX's `tests/api_test.py`, `test_grad_argnums`: `x + 2y + 3z`
    /// behind a flag that must be set, differentiated in all its arguments,
    /// then (`wrt`, like `argnums=(2, 0)`) in `z` and `x` only.
    #[differentiate(vjp, jvp)]
    fn linear3(x: f64, y: f64, z: f64, flag: bool) -> f64 {
        assert!(flag);
        x + 2.0 * y + 3.0 * z
    }

    #[differentiate(vjp, jvp, wrt(z, x))]
    fn linear3_zx(x: f64, y: f64, z: f64, flag: bool) -> f64 {
        assert!(flag);
        x + 2.0 * y + 3.0 * z
    }

    #[test]
    fn argnums_after_jax() {
        let grad = scalars(
            |[x, y, z]| linear3(x, y, z, true),
            |[x, y, z], s| {
                let (out, dx, dy, dz) = linear3_vjp(x, y, z, true, s);
                (out, [dx, dy, dz])
            },
            [1.0, 1.0, 1.0],
        );
        assert_close(&grad, &[1.0, 2.0, 3.0]);
        // Only `x` and `z` active; the adjoints come in parameter order.
        let grad = scalars(
            |[x, z]| linear3_zx(x, 1.0, z, true),
            |[x, z], s| {
                let (out, dx, dz) = linear3_zx_vjp(x, 1.0, z, true, s);
                (out, [dx, dz])
            },
            [1.0, 1.0],
        );
        assert_close(&grad, &[1.0, 3.0]);
        let unset = std::panic::catch_unwind(|| linear3_vjp(1.0, 1.0, 1.0, false, 1.0));
        assert!(unset.is_err(), "the assertion runs in `_vjp`");
    }

    /// After Enzyme's integration test `manymax.c`, `alldiv`: the running
    /// maximum of an array from a starting value; here a `fold` whose closure
    /// keeps the larger.
    #[differentiate(vjp, jvp)]
    fn running_max(a: &[f64], start: f64) -> f64 {
        a.iter().fold(start, |m, &v| if v > m { v } else { m })
    }

    #[test]
    fn running_maximum_after_enzyme() {
        let mut a = [1.0, 2.0, 3.0, 4.0, 5.0];
        a[3] = 102.0;
        let grad = slice_k(running_max, running_max_vjp, running_max_jvp, &a, 3.25);
        assert_close(&grad, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        // A start above every element: the gradient goes to the start.
        let grad = slice_k(
            running_max,
            running_max_vjp,
            running_max_jvp,
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            102.0,
        );
        assert_close(&grad, &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    }

    /// After Enzyme's integration test `loopsdouble.c`: `a + b` summed in two
    /// nested loops of a hundred trips, in `f32`.
    #[differentiate(vjp, jvp)]
    fn double_loop(a: f32, b: f32) -> f32 {
        let mut sum0 = 0.0;
        for _ in 0..100 {
            let mut sum1 = 0.0;
            for _ in 0..100 {
                sum1 += a + b;
            }
            sum0 += sum1;
        }
        sum0
    }

    #[test]
    fn nested_sums_in_f32_after_enzyme() {
        // Ten thousand `f32` additions: the finite differences (at a step of
        // 1e-3) carry their rounding, about 1e-2 of the slope.
        let grad = check_scalar_within(
            2e-2,
            |p| f64::from(double_loop(p[0] as f32, p[1] as f32)),
            |p, s| {
                let (out, da, db) = double_loop_vjp(p[0] as f32, p[1] as f32, s as f32);
                (f64::from(out), vec![f64::from(da), f64::from(db)])
            },
            &[2.0, 3.0],
        );
        assert_close(&grad, &[10000.0, 10000.0]);
    }

    /// After Clad's `test/Gradient/Gradients.C`, `f_sin`:
    /// `(sin x + sin y)(x + y)`.
    #[differentiate(vjp, jvp)]
    fn sin_sum_product(x: f64, y: f64) -> f64 {
        (x.sin() + y.sin()) * (x + y)
    }

    #[test]
    fn sin_product_after_clad() {
        let (x, y) = (0.7, -1.9);
        let grad = scalars(
            |[x, y]| sin_sum_product(x, y),
            |[x, y], s| {
                let (out, dx, dy) = sin_sum_product_vjp(x, y, s);
                (out, [dx, dy])
            },
            [x, y],
        );
        let s = x.sin() + y.sin();
        assert_close(&grad, &[x.cos() * (x + y) + s, y.cos() * (x + y) + s]);
    }
}

// ---------------------------------------------------------------------------

mod idioms {
    use super::*;

    /// Legendre polynomials: a `match` on the degree, the recurrence for the
    /// higher ones with two carried values bound by one `let`.
    #[differentiate(vjp, jvp)]
    fn legendre(x: f64, n: u32) -> f64 {
        match n {
            0 => 1.0,
            1 => x,
            2 => 0.5 * (3.0 * x * x - 1.0),
            _ => {
                let (mut p0, mut p1) = (1.0, x);
                for k in 1..n {
                    let p2 = (f64::from(2 * k + 1) * x * p1 - f64::from(k) * p0) / f64::from(k + 1);
                    p0 = p1;
                    p1 = p2;
                }
                p1
            }
        }
    }

    #[test]
    fn legendre_by_match_and_recurrence() {
        let x = 0.35;
        let p = |n: u32| {
            let (mut p0, mut p1) = (1.0, x);
            if n == 0 {
                return 1.0;
            }
            for k in 1..n {
                let p2 = (f64::from(2 * k + 1) * x * p1 - f64::from(k) * p0) / f64::from(k + 1);
                p0 = p1;
                p1 = p2;
            }
            p1
        };
        for n in 0..=6 {
            let grad = scalars(
                |[x]| legendre(x, n),
                |[x], s| {
                    let (out, dx) = legendre_vjp(x, n, s);
                    (out, [dx])
                },
                [x],
            );
            // P'ₙ = n (x Pₙ - Pₙ₋₁) / (x² - 1).
            let expected = if n == 0 {
                0.0
            } else {
                f64::from(n) * (x * p(n) - p(n - 1)) / (x * x - 1.0)
            };
            assert_close(&grad, &[expected]);
        }
    }

    /// Horner's scheme: a `fold` over the reversed coefficients.
    #[differentiate(vjp, jvp)]
    fn horner(coeffs: &[f64], x: f64) -> f64 {
        coeffs.iter().rev().fold(0.0, |acc, &c| acc * x + c)
    }

    #[test]
    fn horner_with_rev_and_fold() {
        let x = -0.8;
        let grad = slice_k(horner, horner_vjp, horner_jvp, &X, x);
        let mut expected: Vec<f64> = (0..7).map(|k| x.powi(k)).collect();
        expected.push(
            (1..7)
                .map(|k| f64::from(k) * X[k as usize] * x.powi(k - 1))
                .sum(),
        );
        assert_close(&grad, &expected);
        let (out, pullback) = horner_forward(&X, x);
        assert_eq!(out.to_bits(), horner(&X, x).to_bits());
        let mut d = vec![0.0; 7];
        let dx = pullback(&X, &mut d, 1.0);
        d.push(dx);
        assert_close(&d, &grad);
    }

    /// The cost of an angle error wrapped into `[-π, π)` with `floor`, a
    /// signed square root with `copysign`, and a guard on `is_nan`.
    #[differentiate(vjp, jvp)]
    fn angle_cost(theta: f64, target: f64) -> f64 {
        let tau = std::f64::consts::TAU;
        let d = theta - target;
        let wrapped = d - tau * (d / tau + 0.5).floor();
        if wrapped.is_nan() {
            return 0.0;
        }
        wrapped.abs().sqrt().copysign(wrapped) + 0.1 * wrapped * wrapped
    }

    #[test]
    fn wrapped_angle_with_floor_and_copysign() {
        for (theta, target) in [(5.0, -0.5), (0.4, 1.3)] {
            let grad = scalars(
                |[t, g]| angle_cost(t, g),
                |[t, g], s| {
                    let (out, dt, dg) = angle_cost_vjp(t, g, s);
                    (out, [dt, dg])
                },
                [theta, target],
            );
            let tau = std::f64::consts::TAU;
            let d: f64 = theta - target;
            let w = d - tau * (d / tau + 0.5).floor();
            let dw = 0.5 / w.abs().sqrt() + 0.2 * w;
            assert_close(&grad, &[dw, -dw]);
        }
        let (out, d_theta, _) = angle_cost_vjp(f64::NAN, 0.0, 1.0);
        assert_eq!((out, d_theta), (0.0, 0.0));
    }

    /// The first time a running sum of squares passes a level: a `return`
    /// from inside a loop over `enumerate`.
    #[differentiate(vjp, jvp)]
    fn first_passage(x: &[f64], level: f64) -> f64 {
        let mut total = 0.0;
        for (i, &v) in x.iter().enumerate() {
            total += v * v;
            if total > level {
                return total.sqrt() + i as f64;
            }
        }
        total
    }

    #[test]
    fn early_return_from_a_loop() {
        let x = [0.3, -0.5, 0.9, 1.2, -0.7, 0.4];
        let grad = slice_k(first_passage, first_passage_vjp, first_passage_jvp, &x, 2.0);
        // Passes at index 3, with 2.59 > 2.
        let total: f64 = x[..4].iter().map(|v| v * v).sum();
        let mut expected: Vec<f64> = (0..6)
            .map(|i| if i < 4 { x[i] / total.sqrt() } else { 0.0 })
            .collect();
        expected.push(0.0);
        assert_close(&grad, &expected);
        // Never passed: the total.
        let grad = slice_k(
            first_passage,
            first_passage_vjp,
            first_passage_jvp,
            &x,
            10.0,
        );
        let mut expected: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        expected.push(0.0);
        assert_close(&grad, &expected);
    }

    /// A root mean square with the checks a library function makes:
    /// `assert!`, `debug_assert!`, `panic!` and `println!`.
    #[differentiate(vjp, jvp)]
    fn checked_rms(x: &[f64]) -> f64 {
        assert!(!x.is_empty(), "the rms of nothing");
        let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
        debug_assert!(ms >= 0.0);
        if ms.is_nan() {
            panic!("NaN in {x:?}");
        }
        if ms > 1e200 {
            println!("rms: a large mean square {ms:e}");
        }
        ms.sqrt()
    }

    #[test]
    fn macros_in_the_primal_pass() {
        let grad = slice(checked_rms, checked_rms_vjp, checked_rms_jvp, &X);
        let rms = (X.iter().map(|v| v * v).sum::<f64>() / 7.0).sqrt();
        let expected: Vec<f64> = X.iter().map(|v| v / (7.0 * rms)).collect();
        assert_close(&grad, &expected);
        let empty = std::panic::catch_unwind(|| checked_rms_vjp(&[], &mut [], 1.0));
        assert!(empty.is_err());
    }
}

// ---------------------------------------------------------------------------

/// Sub-slices passed to calls and buffers made inside loops, the forms the
/// macro has just learned.
mod views_and_fresh_buffers {
    use super::*;

    /// The Euclidean norm, a helper with its own derivative.
    #[differentiate(vjp, jvp)]
    fn norm(v: &[f64]) -> f64 {
        v.iter().map(|a| a * a).sum::<f64>().sqrt()
    }

    /// The product of the norms of the two halves of a vector, each half a
    /// view passed to the helper: one from `split_at`, one from a range.
    #[differentiate(vjp, jvp)]
    fn half_norms(x: &[f64]) -> f64 {
        let (head, _) = x.split_at(3);
        norm(head) * norm(&x[3..])
    }

    #[test]
    fn views_passed_to_a_callee() {
        let grad = slice(half_norms, half_norms_vjp, half_norms_jvp, &X);
        let (h, t) = (
            X[..3].iter().map(|v| v * v).sum::<f64>().sqrt(),
            X[3..].iter().map(|v| v * v).sum::<f64>().sqrt(),
        );
        let expected: Vec<f64> = (0..7)
            .map(|i| if i < 3 { X[i] / h * t } else { h * X[i] / t })
            .collect();
        assert_close(&grad, &expected);
    }

    /// Least squares over the rows of a matrix, each row a range of the flat
    /// matrix passed to `ad_runtime::dot`.
    #[differentiate(vjp, jvp)]
    fn least_squares(a: &[f64], w: &[f64], y: &[f64]) -> f64 {
        let n = w.len();
        let mut loss = 0.0;
        for (i, yi) in y.iter().enumerate() {
            let r = ad_runtime::dot(&a[i * n..(i + 1) * n], w) - yi;
            loss += r * r;
        }
        0.5 * loss
    }

    #[test]
    fn rows_passed_to_dot() {
        let a: Vec<f64> = (0..12).map(|k| (0.9 * f64::from(k)).cos()).collect();
        let w = [0.5, -1.0, 0.25];
        let y = [0.3, -0.2, 1.1, 0.4];
        let grad = triple(least_squares, least_squares_vjp, &a, &w, &y);
        let (mut da, mut dw, mut dy) = (vec![0.0; 12], vec![0.0; 3], vec![0.0; 4]);
        for i in 0..4 {
            let r: f64 = (0..3).map(|j| a[3 * i + j] * w[j]).sum::<f64>() - y[i];
            for j in 0..3 {
                da[3 * i + j] = r * w[j];
                dw[j] += r * a[3 * i + j];
            }
            dy[i] = -r;
        }
        assert_close(&grad, &[da, dw, dy].concat());
    }

    /// Explicit steps of the heat equation, each reading a fresh copy of the
    /// state made inside the loop.
    #[differentiate(vjp, jvp)]
    fn heat_steps(u: &mut [f64], r: f64) {
        for _ in 0..4 {
            let prev = u.to_vec();
            for (i, w) in prev.windows(3).enumerate() {
                u[i + 1] = w[1] + r * (w[0] - 2.0 * w[1] + w[2]);
            }
        }
    }

    /// The same steps with the copy made once, before the loop.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::manual_memcpy)] // Written out as the index form.
    fn heat_steps_hoisted(u: &mut [f64], r: f64) {
        let n = u.len();
        let mut prev = vec![0.0; n];
        for _ in 0..4 {
            for i in 0..n {
                prev[i] = u[i];
            }
            for i in 1..n - 1 {
                u[i] = prev[i] + r * (prev[i - 1] - 2.0 * prev[i] + prev[i + 1]);
            }
        }
    }

    #[test]
    fn heat_equation_with_a_fresh_copy_per_step() {
        let seed = [0.2, 1.0, -0.5, 0.7, 2.0, -1.0, 0.4];
        let grad = check_in_place(
            |s, k| heat_steps(s, k),
            |s, d, k| heat_steps_vjp(s, d, k),
            &X,
            0.2,
            &seed,
        );
        let mut state = X.to_vec();
        let mut d = seed.to_vec();
        let d_r = heat_steps_hoisted_vjp(&mut state, &mut d, 0.2);
        d.push(d_r);
        assert_close(&grad, &d);
    }
}

// ---------------------------------------------------------------------------
// Whole-buffer methods: `fill`, `reverse`, `copy_from_slice`,
// `extend_from_slice`, each checked against the closed form.

mod whole_buffer_methods {
    use super::{assert_close, differentiate, slice};

    /// A causal filter run backwards: the signal reversed, smoothed, reversed.
    #[differentiate(vjp, jvp)]
    fn backward_smoothing(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.reverse();
        for i in 1..v.len() {
            v[i] = 0.5 * v[i] + 0.5 * v[i - 1];
        }
        v.reverse();
        v.iter().enumerate().map(|(i, e)| e * (i + 1) as f64).sum()
    }

    /// A window copied into a scratch buffer that is then reset.
    #[differentiate(vjp, jvp)]
    fn windowed_energy(x: &[f64]) -> f64 {
        let mut window = [0.0; 3];
        window.copy_from_slice(&x[1..4]);
        let energy: f64 = window.iter().map(|w| w * w).sum();
        window.fill(x[0]);
        energy + window.iter().sum::<f64>()
    }

    /// Two signals concatenated with `extend_from_slice`, then weighted.
    #[differentiate(vjp, jvp)]
    fn concatenated(x: &[f64]) -> f64 {
        let mut both = Vec::new();
        both.extend_from_slice(&x[..2]);
        both.extend_from_slice(x);
        both.iter().enumerate().map(|(i, e)| e * e * i as f64).sum()
    }

    const X: [f64; 5] = [0.4, -1.2, 0.9, 2.0, -0.3];

    #[test]
    fn reverse_fill_and_copies() {
        // Backward smoothing: v = rev(x), w_i = (v_i + w_{i-1}) / 2 for i ≥ 1,
        // out = Σ (i + 1) rev(w)_i; the gradient by a unit-vector sweep of
        // the same linear map.
        let n = X.len();
        let linear = |x: &[f64]| backward_smoothing(x);
        let grad = slice(linear, backward_smoothing_vjp, backward_smoothing_jvp, &X);
        let expected: Vec<f64> = (0..n)
            .map(|k| {
                let mut e = vec![0.0; n];
                e[k] = 1.0;
                linear(&e)
            })
            .collect();
        assert_close(&grad, &expected);
        // Windowed energy: Σ_{1..4} x² + 3 x₀.
        let grad = slice(
            windowed_energy,
            windowed_energy_vjp,
            windowed_energy_jvp,
            &X,
        );
        assert_close(&grad, &[3.0, 2.0 * X[1], 2.0 * X[2], 2.0 * X[3], 0.0]);
        // Concatenated: positions 0, 1 hold x₀, x₁, positions 2.. hold x.
        let grad = slice(concatenated, concatenated_vjp, concatenated_jvp, &X);
        let mut expected: Vec<f64> = (0..n).map(|i| 2.0 * X[i] * (i + 2) as f64).collect();
        expected[1] += 2.0 * X[1];
        assert_close(&grad, &expected);
    }
}

// ---------------------------------------------------------------------------
// `split_first`/`split_last` taken out with `unwrap`, and a maximum taken
// out through `copied()`.

mod split_ends {
    use super::{assert_close, differentiate, slice};

    /// The first element times the sum of the rest, plus the last times the
    /// maximum of the others.
    #[differentiate(vjp, jvp)]
    fn ends(x: &[f64]) -> f64 {
        let (first, rest) = x.split_first().unwrap();
        let (last, others) = x.split_last().expect("not empty");
        let top = others
            .iter()
            .max_by(|a, b| a.total_cmp(b))
            .copied()
            .unwrap();
        first * rest.iter().sum::<f64>() + last * top
    }

    #[test]
    fn split_first_split_last_and_a_copied_maximum() {
        let x = [0.4, -1.2, 0.9, 2.0, -0.3];
        let grad = slice(ends, ends_vjp, ends_jvp, &x);
        // first · Σrest + last · max(others): the maximum of the others is
        // x₃ = 2.0.
        let rest: f64 = x[1..].iter().sum();
        let expected = [rest, x[0], x[0], x[0] + x[4], x[0] + x[3]];
        assert_close(&grad, &expected);
    }
}
