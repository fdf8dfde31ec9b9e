//! The `gmm` eval: the log posterior of a Gaussian mixture model with a Wishart prior
//! on its precision matrices (ADBench's GMM objective, as GradBench defines it).
//!
//! `K` components in `D` dimensions, `N` points `xᵢ`. Component `k` has the weight
//! parameter `αₖ`, the mean `μₖ`, and the lower-triangular `Qₖ` with diagonal
//! `exp(qₖ)` and strictly lower part `Lₖ`. With `βᵢₖ = αₖ + Σⱼ qₖⱼ − ½ ‖Mₖ (xᵢ − μₖ)‖²`,
//! the objective is
//!
//! ```text
//! −N (D/2 ln 2π + lse(α)) + Σᵢ lse(βᵢ)                            (log likelihood)
//! + K (n D ln(γ/√2) − ln Γ_D(n/2)) − γ²/2 Σₖ ‖Qₖ‖²_F + m Σₖ Σⱼ qₖⱼ   (log prior)
//! ```
//!
//! with `n = D + m + 1` and `lse` a stable log-sum-exp. The input is
//! `{d, k, n, x, m, gamma, alpha, mu, q, l}` plus `Runs` (`x`, `mu`, `q` arrays of
//! rows); `objective` returns the value, `jacobian` its gradient as
//! `{alpha, mu, q, l}` of the same shapes as the input's.
//!
//! `l` comes in two layouts, and the answer uses the layout of the input:
//!
//! - **jagged** (the eval's published description): `l[k][r]` holds row `r` of `Lₖ`,
//!   `r` entries. Its definition says `Σₖ⁻¹ = Qₖ Qₖᵀ`, so `Mₖ = Qₖᵀ`.
//! - **flat** (GradBench's C++ reference `cpp/gradbench/evals/gmm.hpp`): `l[k]` holds
//!   the `D(D−1)/2` entries of `Lₖ` column after column, and `Mₖ = Qₖ`, as ADBench.

#![allow(clippy::too_many_arguments)]

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Evaluation, Runs, flatten, parse, rows, timed, unknown_function};

/// The log posterior; `transposed` chooses `Mₖ = Qₖᵀ` over `Mₖ = Qₖ`.
///
/// `alpha` has `K` entries; `mu`, `q` and `x` are row-major (`K × D`, `K × D`,
/// `N × D`); `l` holds each `Lₖ`'s strictly lower part row after row,
/// `D(D−1)/2` entries per component (entry `(r, j)`, `j < r`, at
/// `r(r−1)/2 + j`). `constant` is the part of the objective that depends on no
/// parameter ([`constant`]).
#[differentiate(wrt(alpha, mu, q, l))]
pub fn objective(
    alpha: &[f64],
    mu: &[f64],
    q: &[f64],
    l: &[f64],
    x: &[f64],
    d: usize,
    n: usize,
    gamma: f64,
    m: f64,
    constant: f64,
    transposed: bool,
) -> f64 {
    let k = alpha.len();
    let tri = d * (d - 1) / 2;
    let mut diag = vec![0.0; k * d];
    let mut sum_q = vec![0.0; k];
    for c in 0..k {
        let mut s = 0.0;
        for j in 0..d {
            diag[c * d + j] = q[c * d + j].exp();
            s += q[c * d + j];
        }
        sum_q[c] = s;
    }

    let mut beta = vec![0.0; n * k];
    for i in 0..n {
        for c in 0..k {
            let mut norm = 0.0;
            for r in 0..d {
                let mut z = diag[c * d + r] * (x[i * d + r] - mu[c * d + r]);
                if transposed {
                    for j in r + 1..d {
                        z += l[c * tri + j * (j - 1) / 2 + r] * (x[i * d + j] - mu[c * d + j]);
                    }
                } else {
                    for j in 0..r {
                        z += l[c * tri + r * (r - 1) / 2 + j] * (x[i * d + j] - mu[c * d + j]);
                    }
                }
                norm += z * z;
            }
            beta[i * k + c] = alpha[c] + sum_q[c] - 0.5 * norm;
        }
    }

    // Σᵢ lse(βᵢ), each shifted by its row's maximum; the shift changes neither the
    // value nor the gradient, so it is detached.
    let mut sum_lse = 0.0;
    for i in 0..n {
        let mut top = beta[i * k];
        for c in 1..k {
            top = top.max(beta[i * k + c]);
        }
        let top = ad_runtime::detach(top);
        let mut s = 0.0;
        for c in 0..k {
            s += (beta[i * k + c] - top).exp();
        }
        sum_lse += top + s.ln();
    }

    let mut top = alpha[0];
    for c in 1..k {
        top = top.max(alpha[c]);
    }
    let top = ad_runtime::detach(top);
    let mut s = 0.0;
    for c in 0..k {
        s += (alpha[c] - top).exp();
    }
    let lse_alpha = top + s.ln();

    let mut frobenius = 0.0;
    let mut total_q = 0.0;
    for c in 0..k {
        for j in 0..d {
            frobenius += diag[c * d + j] * diag[c * d + j];
        }
        for e in 0..tri {
            frobenius += l[c * tri + e] * l[c * tri + e];
        }
        total_q += sum_q[c];
    }

    constant + sum_lse - (n as f64) * lse_alpha - 0.5 * gamma * gamma * frobenius + m * total_q
}

/// The terms of the objective that depend on no parameter:
/// `−N D/2 ln 2π + K (n D ln(γ/√2) − ln Γ_D(n/2))` with `n = D + m + 1`.
#[must_use]
pub fn constant(d: usize, k: usize, n: usize, gamma: f64, m: f64) -> f64 {
    let (d, k, n) = (d as f64, k as f64, n as f64);
    let dof = d + m + 1.0;
    let per_component =
        dof * d * (gamma.ln() - 0.5 * std::f64::consts::LN_2) - ln_multigamma(0.5 * dof, d);
    -n * d * 0.5 * (2.0 * std::f64::consts::PI).ln() + k * per_component
}

/// `ln Γ_p(a) = p(p−1)/4 ln π + Σⱼ₌₁..ₚ ln Γ(a + (1 − j)/2)`, the multivariate gamma
/// function.
#[must_use]
pub fn ln_multigamma(a: f64, p: f64) -> f64 {
    let mut sum = 0.25 * p * (p - 1.0) * std::f64::consts::PI.ln();
    let mut j = 1.0;
    while j <= p {
        sum += ln_gamma(a + 0.5 * (1.0 - j));
        j += 1.0;
    }
    sum
}

/// `ln |Γ(x)|` by the Lanczos approximation (`g = 7`, 9 terms), accurate to about
/// `1e-15` relative; reflection below `½`.
#[must_use]
pub fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    use std::f64::consts::PI;
    if x < 0.5 {
        return (PI / (PI * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = COEFFICIENTS[0];
    for (i, &c) in COEFFICIENTS.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// How the input gives `l`; the answer gives it the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `l[k][r]` is row `r` of `Lₖ` (the published description); `Mₖ = Qₖᵀ`.
    Jagged,
    /// `l[k]` is `Lₖ` column after column (the C++ reference); `Mₖ = Qₖ`.
    Flat,
}

/// A GMM problem with its parameters flattened as [`objective`] takes them.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Dimension `D`.
    pub d: usize,
    /// Components `K`.
    pub k: usize,
    /// Points `N`.
    pub n: usize,
    /// `N × D`, row-major.
    pub x: Vec<f64>,
    /// Wishart degrees of freedom beyond `D + 1`.
    pub m: f64,
    /// Wishart scale `γ`.
    pub gamma: f64,
    /// `K` weight parameters.
    pub alpha: Vec<f64>,
    /// `K × D` means, row-major.
    pub mu: Vec<f64>,
    /// `K × D` logarithms of the diagonals of the `Qₖ`, row-major.
    pub q: Vec<f64>,
    /// The strictly lower parts of the `Qₖ`, row after row (see [`objective`]).
    pub l: Vec<f64>,
    /// How the input gave `l`.
    pub layout: Layout,
}

/// The input as the eval sends it.
#[derive(Deserialize)]
struct Input {
    d: usize,
    k: usize,
    n: usize,
    x: Vec<Vec<f64>>,
    m: f64,
    gamma: f64,
    alpha: Vec<f64>,
    mu: Vec<Vec<f64>>,
    q: Vec<Vec<f64>>,
    l: Vec<Value>,
}

/// Where entry `e` of a column-after-column strictly lower triangle of size `d` is in
/// the row-after-row order.
fn column_to_row_major(d: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(d * d.saturating_sub(1) / 2);
    for j in 0..d {
        for r in j + 1..d {
            order.push(r * (r - 1) / 2 + j);
        }
    }
    order
}

impl Problem {
    /// Reads and checks an input.
    ///
    /// # Errors
    ///
    /// If the input does not have the eval's format or its sizes disagree.
    pub fn from_input(input: &Value) -> Result<Problem, String> {
        let Input {
            d,
            k,
            n,
            x,
            m,
            gamma,
            alpha,
            mu,
            q,
            l,
        } = parse(input)?;
        if d == 0 || k == 0 {
            return Err(format!("`d` and `k` must be at least 1, not {d} and {k}"));
        }
        if alpha.len() != k {
            return Err(format!("`alpha` has {} entries, expected {k}", alpha.len()));
        }
        if l.len() != k {
            return Err(format!("`l` has {} entries, expected {k}", l.len()));
        }
        let tri = d * (d - 1) / 2;
        let jagged = l
            .iter()
            .any(|lk| lk.as_array().is_some_and(|e| e.iter().any(Value::is_array)));
        let (layout, flat_l) = if jagged {
            let mut flat = Vec::with_capacity(k * tri);
            for (c, lk) in l.iter().enumerate() {
                let lk: Vec<Vec<f64>> = parse(lk)?;
                if lk.len() != d {
                    return Err(format!("`l[{c}]` has {} rows, expected {d}", lk.len()));
                }
                for (r, row) in lk.iter().enumerate() {
                    if row.len() != r {
                        return Err(format!(
                            "`l[{c}][{r}]` has {} entries, expected {r}",
                            row.len()
                        ));
                    }
                    flat.extend_from_slice(row);
                }
            }
            (Layout::Jagged, flat)
        } else {
            let columns: Vec<Vec<f64>> = l.iter().map(parse).collect::<Result<_, _>>()?;
            let by_column = flatten("l", &columns, k, tri)?;
            let order = column_to_row_major(d);
            let mut flat = vec![0.0; k * tri];
            for c in 0..k {
                for (e, &to) in order.iter().enumerate() {
                    flat[c * tri + to] = by_column[c * tri + e];
                }
            }
            (Layout::Flat, flat)
        };
        Ok(Problem {
            d,
            k,
            n,
            x: flatten("x", &x, n, d)?,
            m,
            gamma,
            alpha,
            mu: flatten("mu", &mu, k, d)?,
            q: flatten("q", &q, k, d)?,
            l: flat_l,
            layout,
        })
    }

    /// The value of [`objective`] at this problem.
    #[must_use]
    pub fn objective(&self) -> f64 {
        let p = self;
        objective(
            &p.alpha,
            &p.mu,
            &p.q,
            &p.l,
            &p.x,
            p.d,
            p.n,
            p.gamma,
            p.m,
            constant(p.d, p.k, p.n, p.gamma, p.m),
            p.layout == Layout::Jagged,
        )
    }

    /// The gradient of [`objective`] with respect to `alpha`, `mu`, `q` and `l` (in
    /// the flattened layouts of [`Problem`]), from its `_vjp`.
    #[must_use]
    pub fn gradient(&self) -> Gradient {
        let p = self;
        let mut g = Gradient {
            alpha: vec![0.0; p.alpha.len()],
            mu: vec![0.0; p.mu.len()],
            q: vec![0.0; p.q.len()],
            l: vec![0.0; p.l.len()],
        };
        objective_vjp(
            &p.alpha,
            &mut g.alpha,
            &p.mu,
            &mut g.mu,
            &p.q,
            &mut g.q,
            &p.l,
            &mut g.l,
            &p.x,
            p.d,
            p.n,
            p.gamma,
            p.m,
            constant(p.d, p.k, p.n, p.gamma, p.m),
            p.layout == Layout::Jagged,
            1.0,
        );
        g
    }

    /// A gradient as the eval's output: `{alpha, mu, q, l}`, with `l` in the
    /// input's layout.
    #[must_use]
    pub fn output(&self, g: &Gradient) -> Value {
        let (d, k) = (self.d, self.k);
        let tri = d * (d - 1) / 2;
        let l: Value = match self.layout {
            Layout::Jagged => (0..k)
                .map(|c| {
                    (0..d)
                        .map(|r| {
                            let start = c * tri + r * r.saturating_sub(1) / 2;
                            g.l[start..start + r].to_vec()
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
                .into(),
            Layout::Flat => {
                let order = column_to_row_major(d);
                (0..k)
                    .map(|c| {
                        order
                            .iter()
                            .map(|&from| g.l[c * tri + from])
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
                    .into()
            }
        };
        json!({
            "alpha": g.alpha,
            "mu": rows(&g.mu, d),
            "q": rows(&g.q, d),
            "l": l,
        })
    }
}

/// The gradient of the objective, in the flattened layouts of [`Problem`].
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    /// With respect to `alpha`.
    pub alpha: Vec<f64>,
    /// With respect to `mu`, row-major.
    pub mu: Vec<f64>,
    /// With respect to `q`, row-major.
    pub q: Vec<f64>,
    /// With respect to `l`, each component's rows after one another.
    pub l: Vec<f64>,
}

/// Answers an `evaluate` message of module `gmm`.
///
/// # Errors
///
/// If the input does not have the eval's format or the function is not `objective`
/// or `jacobian`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let problem = Problem::from_input(input)?;
    match function {
        "objective" => timed(input, || problem.objective()),
        "jacobian" => {
            let (gradient, timings) = Runs::of(input)?.run(|| problem.gradient());
            let output = problem.output(&gradient);
            Ok(Evaluation { output, timings })
        }
        _ => Err(unknown_function("gmm", function)),
    }
}
