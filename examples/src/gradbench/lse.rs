//! The `lse` eval: LogSumExp, computed stably from its parts.
//!
//! `LSE(x) = a + ln Σᵢ exp(xᵢ − a)` with `a = max x`, written with a running maximum
//! and a sum (not `ad_runtime::logsumexp`, whose derivative is hand-written), as the
//! eval asks. The input is `{x: double[]}` plus `Runs`; `primal` returns `LSE(x)`,
//! `gradient` returns `∇LSE(x)`, the softmax of `x`.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::{Evaluation, parse, timed, unknown_function};

/// `max x + ln Σᵢ exp(xᵢ − max x)`, for a non-empty `x`.
///
/// The maximum is differentiated too: its adjoint `1 − Σᵢ softmaxᵢ` is zero up to
/// rounding.
#[differentiate]
pub fn primal(x: &[f64]) -> f64 {
    let mut a = x[0];
    for i in 1..x.len() {
        a = a.max(x[i]);
    }
    let mut sum = 0.0;
    for i in 0..x.len() {
        sum += (x[i] - a).exp();
    }
    a + sum.ln()
}

/// The gradient of [`primal`], from its `_vjp`.
#[must_use]
pub fn gradient(x: &[f64]) -> Vec<f64> {
    let mut d_x = vec![0.0; x.len()];
    primal_vjp(x, &mut d_x, 1.0);
    d_x
}

/// The input of both functions.
#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
}

/// Answers an `evaluate` message of module `lse`.
///
/// # Errors
///
/// If the input does not have the eval's format, `x` is empty, or the function is
/// not `primal` or `gradient`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { x } = parse(input)?;
    if x.is_empty() {
        return Err("`x` must not be empty".to_owned());
    }
    match function {
        "primal" => timed(input, || primal(&x)),
        "gradient" => timed(input, || gradient(&x)),
        _ => Err(unknown_function("lse", function)),
    }
}
