//! The workloads of `ad_examples::workloads` and `ad_examples::gradbench` written
//! once more, generically, for the peers that differentiate by running the code on
//! their own number types: `num-dual`'s `Dual64` (forward mode) and `reverse`'s
//! `Var` (a tape). Each function follows its `#[differentiate]` original operation
//! for operation; `f64` runs them as plain functions, which the start-up check of
//! the benchmark compares with the originals.
//!
//! The candle versions, whole-tensor programs, are in [`candle`].

// Numeric code written with index loops, as the originals are.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

use std::ops::{Add, Div, Mul, Neg, Sub};

use num_dual::{Dual64, DualNum};

pub mod candle;

/// What the workloads need of a number type.
pub trait Real:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
{
    /// The value.
    fn val(self) -> f64;
    /// A constant in the same context as `self` (for `reverse`, on the same tape).
    fn lift(self, c: f64) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sin(self) -> Self;
    fn tanh(self) -> Self;
    fn recip(self) -> Self;
    /// The larger of the two, by value (the derivative follows the one chosen).
    fn max(self, other: Self) -> Self {
        if self.val() >= other.val() {
            self
        } else {
            other
        }
    }
}

impl Real for f64 {
    fn val(self) -> f64 {
        self
    }
    fn lift(self, c: f64) -> Self {
        c
    }
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn ln(self) -> Self {
        f64::ln(self)
    }
    fn sin(self) -> Self {
        f64::sin(self)
    }
    fn tanh(self) -> Self {
        f64::tanh(self)
    }
    fn recip(self) -> Self {
        f64::recip(self)
    }
}

impl Real for Dual64 {
    fn val(self) -> f64 {
        self.re
    }
    fn lift(self, c: f64) -> Self {
        Dual64::from_re(c)
    }
    fn exp(self) -> Self {
        DualNum::exp(&self)
    }
    fn ln(self) -> Self {
        DualNum::ln(&self)
    }
    fn sin(self) -> Self {
        DualNum::sin(&self)
    }
    fn tanh(self) -> Self {
        DualNum::tanh(&self)
    }
    fn recip(self) -> Self {
        DualNum::recip(&self)
    }
}

impl<'a> Real for reverse::Var<'a> {
    fn val(self) -> f64 {
        self.val
    }
    fn lift(self, c: f64) -> Self {
        self.tape.add_var(c)
    }
    fn exp(self) -> Self {
        reverse::Var::exp(&self)
    }
    fn ln(self) -> Self {
        reverse::Var::ln(&self)
    }
    fn sin(self) -> Self {
        reverse::Var::sin(&self)
    }
    fn tanh(self) -> Self {
        reverse::Var::tanh(&self)
    }
    fn recip(self) -> Self {
        reverse::Var::recip(&self)
    }
}

/// W1: the extended Rosenbrock function.
pub fn rosenbrock<T: Real>(x: &[T]) -> T {
    let mut s = x[0].lift(0.0);
    for i in 0..x.len() - 1 {
        let a = -x[i] + 1.0;
        let b = x[i + 1] - x[i] * x[i];
        s = s + (a * a + b * b * 100.0);
    }
    s
}

/// W2: the MLP loss, weights flat in `params` (see `ad_examples::workloads::mlp`).
pub fn mlp<T: Real>(params: &[T], x: &[f64], labels: &[usize]) -> T {
    let (n_in, n_hidden, n_classes) = (784, 128, 10);
    let n = labels.len();
    let b1 = n_hidden * n_in;
    let w2 = b1 + n_hidden;
    let b2 = w2 + n_classes * n_hidden;
    let mut h = Vec::with_capacity(n * n_hidden);
    for s in 0..n {
        for j in 0..n_hidden {
            let mut acc = params[b1 + j];
            for i in 0..n_in {
                acc = acc + params[j * n_in + i] * x[s * n_in + i];
            }
            h.push(acc.tanh());
        }
    }
    let mut total = params[0].lift(0.0);
    let mut z = Vec::with_capacity(n_classes);
    for s in 0..n {
        z.clear();
        for c in 0..n_classes {
            let mut acc = params[b2 + c];
            for j in 0..n_hidden {
                acc = acc + params[w2 + c * n_hidden + j] * h[s * n_hidden + j];
            }
            z.push(acc);
        }
        let mut top = z[0];
        for c in 1..n_classes {
            top = top.max(z[c]);
        }
        let top = top.val();
        let mut sum = (z[0] - top).exp();
        for c in 1..n_classes {
            sum = sum + (z[c] - top).exp();
        }
        total = total + (sum.ln() + top - z[labels[s]]);
    }
    total / n as f64
}

/// W3: `(sin x · eʸ + ln(1 + x²)) / (1 + y²)`.
pub fn w3<T: Real>(x: T, y: T) -> T {
    (x.sin() * y.exp() + (x * x + 1.0).ln()) / (y * y + 1.0)
}

/// W4 and `lse`: logsumexp with a running maximum (not detached, as the `lse`
/// eval and `lse_loops` have it).
pub fn lse<T: Real>(x: &[T]) -> T {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let mut s = (x[0] - m).exp();
    for i in 1..x.len() {
        s = s + (x[i] - m).exp();
    }
    m + s.ln()
}

/// `llsq`: `½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²`.
pub fn llsq<T: Real>(x: &[T], n: usize) -> T {
    let mut sum = x[0].lift(0.0);
    for i in 0..n {
        let t = -1.0 + (i as f64) * 2.0 / ((n - 1) as f64);
        let s = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        let mut r = x[0].lift(s);
        let mut power = 1.0;
        for j in 0..x.len() {
            r = r - x[j] * power;
            power *= t;
        }
        sum = sum + r * r;
    }
    sum / 2.0
}

/// `ode`: `y(2)` after `s` Runge–Kutta steps.
pub fn ode<T: Real>(x: &[T], s: usize) -> Vec<T> {
    let n = x.len();
    let h = 2.0 / (s as f64);
    let zero = x[0].lift(0.0);
    let mut y = vec![zero; n];
    let (mut k1, mut k2, mut k3, mut k4) =
        (vec![zero; n], vec![zero; n], vec![zero; n], vec![zero; n]);
    let mut tmp = vec![zero; n];
    for _ in 0..s {
        k1[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 0..n {
            tmp[i] = y[i] + k1[i] * h / 2.0;
        }
        k2[0] = x[0];
        for i in 1..n {
            k2[i] = x[i] * tmp[i - 1];
        }
        for i in 0..n {
            tmp[i] = y[i] + k2[i] * h / 2.0;
        }
        k3[0] = x[0];
        for i in 1..n {
            k3[i] = x[i] * tmp[i - 1];
        }
        for i in 0..n {
            tmp[i] = y[i] + k3[i] * h;
        }
        k4[0] = x[0];
        for i in 1..n {
            k4[i] = x[i] * tmp[i - 1];
        }
        for i in 0..n {
            y[i] = y[i] + (k1[i] + k2[i] * 2.0 + k3[i] * 2.0 + k4[i]) * h / 6.0;
        }
    }
    y
}

/// `gmm` with `Mₖ = Qₖ` (see `ad_examples::gradbench::gmm::objective`).
pub fn gmm<T: Real>(
    alpha: &[T],
    mu: &[T],
    q: &[T],
    l: &[T],
    x: &[f64],
    d: usize,
    n: usize,
    gamma: f64,
    m: f64,
    constant: f64,
) -> T {
    let k = alpha.len();
    let tri = d * (d - 1) / 2;
    let zero = alpha[0].lift(0.0);
    let diag: Vec<T> = q.iter().map(|v| v.exp()).collect();
    let mut sum_q = vec![zero; k];
    for c in 0..k {
        for j in 0..d {
            sum_q[c] = sum_q[c] + q[c * d + j];
        }
    }
    let mut beta = vec![zero; k];
    let mut sum_lse = zero;
    for i in 0..n {
        for c in 0..k {
            let mut norm = zero;
            for r in 0..d {
                let mut z = diag[c * d + r] * (-mu[c * d + r] + x[i * d + r]);
                for j in 0..r {
                    z = z + l[c * tri + r * (r - 1) / 2 + j] * (-mu[c * d + j] + x[i * d + j]);
                }
                norm = norm + z * z;
            }
            beta[c] = alpha[c] + sum_q[c] - norm * 0.5;
        }
        let mut top = beta[0];
        for c in 1..k {
            top = top.max(beta[c]);
        }
        let top = top.val();
        let mut s = zero;
        for c in 0..k {
            s = s + (beta[c] - top).exp();
        }
        sum_lse = sum_lse + (s.ln() + top);
    }
    let mut top = alpha[0];
    for c in 1..k {
        top = top.max(alpha[c]);
    }
    let top = top.val();
    let mut s = zero;
    for c in 0..k {
        s = s + (alpha[c] - top).exp();
    }
    let lse_alpha = s.ln() + top;
    let mut frobenius = zero;
    let mut total_q = zero;
    for c in 0..k {
        for j in 0..d {
            frobenius = frobenius + diag[c * d + j] * diag[c * d + j];
        }
        for e in 0..tri {
            frobenius = frobenius + l[c * tri + e] * l[c * tri + e];
        }
        total_q = total_q + sum_q[c];
    }
    sum_lse - lse_alpha * (n as f64) - frobenius * (0.5 * gamma * gamma) + total_q * m + constant
}

/// `lstm` (see `ad_examples::gradbench::lstm::objective`).
pub fn lstm<T: Real>(
    main_params: &[T],
    extra_params: &[T],
    state: &[f64],
    sequence: &[f64],
    l: usize,
    b: usize,
    c: usize,
) -> T {
    let zero = main_params[0].lift(0.0);
    let sigmoid = |v: T| ((-v).exp() + 1.0).recip();
    let mut hidden = vec![zero; l * b];
    let mut cell = vec![zero; l * b];
    for j in 0..l {
        for i in 0..b {
            hidden[j * b + i] = zero.lift(state[2 * j * b + i]);
            cell[j * b + i] = zero.lift(state[(2 * j + 1) * b + i]);
        }
    }
    let mut y = vec![zero; b];
    let mut total = zero;
    for t in 0..c - 1 {
        for j in 0..l {
            let w = 8 * j * b;
            let p = &main_params[w..w + 8 * b];
            for i in 0..b {
                let input = if j == 0 {
                    extra_params[i] * sequence[t * b + i]
                } else {
                    hidden[(j - 1) * b + i]
                };
                let h = hidden[j * b + i];
                let forget = sigmoid(input * p[i] + p[4 * b + i]);
                let ingate = sigmoid(h * p[b + i] + p[5 * b + i]);
                let outgate = sigmoid(input * p[2 * b + i] + p[6 * b + i]);
                let change = (h * p[3 * b + i] + p[7 * b + i]).tanh();
                let next = cell[j * b + i] * forget + ingate * change;
                cell[j * b + i] = next;
                hidden[j * b + i] = outgate * next.tanh();
            }
        }
        let mut sum = zero;
        for i in 0..b {
            y[i] = hidden[(l - 1) * b + i] * extra_params[b + i] + extra_params[2 * b + i];
            sum = sum + y[i].exp();
        }
        let norm = (sum + 2.0).ln();
        for i in 0..b {
            total = total + (y[i] - norm) * sequence[(t + 1) * b + i];
        }
    }
    -total / (((c - 1) * b) as f64)
}

/// `x` as dual numbers seeded along input `direction`: one forward pass gives the
/// directional derivative `∂f/∂x_direction`.
pub fn seeded(x: &[f64], direction: usize) -> Vec<Dual64> {
    x.iter()
        .enumerate()
        .map(|(j, &v)| Dual64::new(v, if j == direction { 1.0 } else { 0.0 }))
        .collect()
}

/// `x` as constants for a forward pass that differentiates along another
/// argument.
pub fn constant(x: &[f64]) -> Vec<Dual64> {
    x.iter().map(|&v| Dual64::from_re(v)).collect()
}

/// Runs `f` on a tape over `xs` (cleared first, so its capacity is reused), and
/// returns the value and the gradient with respect to every input, concatenated.
pub fn tape_gradient(
    tape: &reverse::Tape,
    xs: &[&[f64]],
    f: impl for<'t> Fn(&[Vec<reverse::Var<'t>>]) -> reverse::Var<'t>,
) -> (f64, Vec<f64>) {
    tape.clear();
    let vars: Vec<Vec<reverse::Var<'_>>> = xs.iter().map(|x| tape.add_vars(x)).collect();
    let out = f(&vars);
    let derivs = out.grad();
    // The inputs are the first nodes of the tape, in order.
    let total: usize = xs.iter().map(|x| x.len()).sum();
    (out.val, derivs[..total].to_vec())
}
