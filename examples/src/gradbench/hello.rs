//! The `hello` eval: `square(x) = x²` and its derivative `double(x) = 2x`.
//!
//! The input is a bare number and so is the output; there are no `Runs` fields, so
//! each function runs once.

use ad_runtime::differentiate;
use serde_json::Value;

use super::{Evaluation, timed, unknown_function};

/// `x²`.
#[differentiate]
pub fn square(x: f64) -> f64 {
    x * x
}

/// The derivative of [`square`], from its `_vjp`.
#[must_use]
pub fn double(x: f64) -> f64 {
    square_vjp(x, 1.0).1
}

/// Answers an `evaluate` message of module `hello`.
///
/// # Errors
///
/// If the input is not a number or the function is not `square` or `double`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let x = input
        .as_f64()
        .ok_or_else(|| format!("the input of `hello` is a number, not {input}"))?;
    match function {
        "square" => timed(input, || square(x)),
        "double" => timed(input, || double(x)),
        _ => Err(unknown_function("hello", function)),
    }
}
