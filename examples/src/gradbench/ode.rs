//! The `ode` eval: an ODE solved by Runge–Kutta (cmpad's `an_ode`).
//!
//! `y₀' = x₀`, `yᵢ' = xᵢ yᵢ₋₁` for `i > 0`, `y(0) = 0`, integrated to `t = 2` by `s`
//! classical fourth-order Runge–Kutta steps. The input is `{x: double[], s: int}`
//! plus `Runs`; `primal` returns `y(2)`, `gradient` the gradient of its last entry
//! with respect to `x`; both have as many entries as `x`.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::{Evaluation, parse, timed, unknown_function};

/// The objective, written once: `primal`, and `primal_checkpointed` with its
/// step loop under `#[checkpoint]` (for `examples/checkpointing.rs`).
macro_rules! runge_kutta {
    ($(#[$doc:meta])* $name:ident ($($snapshots:ident)?) $(, $ck:meta)?) => {
        $(#[$doc])*
        #[differentiate]
        pub fn $name(x: &[f64], s: usize $(, $snapshots: usize)?) -> Vec<f64> {
            let n = x.len();
            let h = 2.0 / (s as f64);
            let mut y = vec![0.0; n];
            let mut k1 = vec![0.0; n];
            let mut k2 = vec![0.0; n];
            let mut k3 = vec![0.0; n];
            let mut k4 = vec![0.0; n];
            let mut tmp = vec![0.0; n];
            $(#[$ck])?
            for _ in 0..s {
                k1[0] = x[0];
                for i in 1..n {
                    k1[i] = x[i] * y[i - 1];
                }
                for i in 0..n {
                    tmp[i] = y[i] + h * k1[i] / 2.0;
                }
                k2[0] = x[0];
                for i in 1..n {
                    k2[i] = x[i] * tmp[i - 1];
                }
                for i in 0..n {
                    tmp[i] = y[i] + h * k2[i] / 2.0;
                }
                k3[0] = x[0];
                for i in 1..n {
                    k3[i] = x[i] * tmp[i - 1];
                }
                for i in 0..n {
                    tmp[i] = y[i] + h * k3[i];
                }
                k4[0] = x[0];
                for i in 1..n {
                    k4[i] = x[i] * tmp[i - 1];
                }
                for i in 0..n {
                    y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
                }
            }
            y
        }
    };
}

runge_kutta!(
    /// `y(2)` after `s ≥ 1` Runge–Kutta steps of size `2 / s`.
    primal()
);

runge_kutta!(
    /// [`primal`] with its steps checkpointed, keeping at most `snapshots`
    /// states (docs/checkpointing.md): the same values and gradient.
    primal_checkpointed(snapshots),
    checkpoint(snapshots = snapshots)
);

/// The gradient of the last entry of [`primal`], from its `_vjp` seeded with the last
/// basis vector.
#[must_use]
pub fn gradient(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let mut seed = vec![0.0; n];
    seed[n - 1] = 1.0;
    let mut d_x = vec![0.0; n];
    primal_vjp(x, &mut d_x, s, &seed);
    d_x
}

/// The input of both functions.
#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    s: usize,
}

/// Answers an `evaluate` message of module `ode`.
///
/// # Errors
///
/// If the input does not have the eval's format, `x` is empty, `s` is zero, or the
/// function is not `primal` or `gradient`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { x, s } = parse(input)?;
    if x.is_empty() || s == 0 {
        return Err("`x` must not be empty and `s` must be at least 1".to_owned());
    }
    match function {
        "primal" => timed(input, || primal(&x, s)),
        "gradient" => timed(input, || gradient(&x, s)),
        _ => Err(unknown_function("ode", function)),
    }
}
