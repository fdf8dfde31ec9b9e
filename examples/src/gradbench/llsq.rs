//! The `llsq` eval: a linear least-squares objective (cmpad's `llsq_obj`).
//!
//! `y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²` over `n` points `tᵢ = −1 + 2i / (n − 1)` with
//! targets `sᵢ = sign(tᵢ)` (`0` at `tᵢ = 0`). The input is `{x: double[], n: int}`
//! plus `Runs`; `primal` returns `y(x)`, `gradient` returns `∇y(x)`, one entry per
//! entry of `x`.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::{Evaluation, parse, timed, unknown_function};

/// `½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²` over `n ≥ 2` points.
#[differentiate]
pub fn primal(x: &[f64], n: usize) -> f64 {
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
    }
    sum / 2.0
}

/// The gradient of [`primal`], from its `_vjp`.
#[must_use]
pub fn gradient(x: &[f64], n: usize) -> Vec<f64> {
    let mut d_x = vec![0.0; x.len()];
    primal_vjp(x, &mut d_x, n, 1.0);
    d_x
}

/// The input of both functions.
#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    n: usize,
}

/// Answers an `evaluate` message of module `llsq`.
///
/// # Errors
///
/// If the input does not have the eval's format, `n < 2`, or the function is not
/// `primal` or `gradient`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { x, n } = parse(input)?;
    if n < 2 {
        return Err(format!("`n` must be at least 2, not {n}"));
    }
    match function {
        "primal" => timed(input, || primal(&x, n)),
        "gradient" => timed(input, || gradient(&x, n)),
        _ => Err(unknown_function("llsq", function)),
    }
}
