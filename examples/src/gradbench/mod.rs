//! A [GradBench](https://github.com/gradbench/gradbench) tool: the evals `hello`,
//! `llsq`, `lse`, `gmm`, `ode`, `lstm`, `kmeans`, `det` and `ba`, each objective
//! one plain function with `#[differentiate]`, each derivative a generated
//! function (`_vjp`, `_hvp`, `_jvp_lanes`).
//!
//! [`serve`] speaks GradBench's protocol (one JSON object per line, in and out); the
//! binary `gradbench` (`src/bin/gradbench.rs`) runs it on standard input and output.
//! Each eval module has the objective, its input format and an `evaluate` function
//! that answers one `evaluate` message. See `docs/gradbench.md`.

// Numeric code written with index loops, as `#[differentiate]` takes it.
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

pub mod ba;
mod descent;
pub mod det;
pub mod gmm;
pub mod hello;
pub mod kmeans;
pub mod llsq;
pub mod lse;
pub mod lstm;
pub mod ode;
pub mod particle;
pub mod saddle;

mod protocol;

pub use protocol::{TOOL, respond, serve};

/// The modules this tool serves, in the order of the docs.
pub const MODULES: [&str; 11] = [
    "hello", "llsq", "lse", "gmm", "ode", "lstm", "kmeans", "det", "ba", "saddle", "particle",
];

/// One entry of an answer's `timings`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timing {
    /// What was timed; `"evaluate"` for one run of the function.
    pub name: &'static str,
    /// How long it took.
    pub nanoseconds: u64,
}

/// The answer to an `evaluate` message: the `output` and one timing per run.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The function's value, in the eval's published output format.
    pub output: Value,
    /// One `"evaluate"` entry per run.
    pub timings: Vec<Timing>,
}

/// How often to run a function: GradBench's `Runs` fields of an input.
///
/// The function runs at least `min_runs` times and until the runs together took at
/// least `min_seconds`; both may be given as an integer or a float. An input without
/// them (as `hello`'s, a bare number) runs once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Runs {
    /// Evaluate at least this many times.
    pub min_runs: f64,
    /// Evaluate until the total time exceeds this many seconds.
    pub min_seconds: f64,
}

impl Runs {
    /// Reads `min_runs` and `min_seconds` from an input; missing fields mean one run.
    ///
    /// # Errors
    ///
    /// If a field is present but not a finite number.
    pub fn of(input: &Value) -> Result<Runs, String> {
        let field = |name: &str, default: f64| match input.get(name) {
            None => Ok(default),
            Some(value) => value
                .as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{name}` must be a number, not {value}")),
        };
        Ok(Runs {
            min_runs: field("min_runs", 1.0)?,
            min_seconds: field("min_seconds", 0.0)?,
        })
    }

    /// Runs `f` as often as asked, timing each run; returns the last run's value.
    ///
    /// `f` always runs at least once. Every other run's value goes through
    /// [`black_box`], so no run can be optimised away.
    pub fn run<T>(self, mut f: impl FnMut() -> T) -> (T, Vec<Timing>) {
        let mut timings = Vec::new();
        let mut seconds = 0.0;
        loop {
            let start = Instant::now();
            let value = f();
            let nanoseconds = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            timings.push(Timing {
                name: "evaluate",
                nanoseconds,
            });
            seconds += nanoseconds as f64 * 1e-9;
            if timings.len() as f64 >= self.min_runs && seconds >= self.min_seconds {
                return (value, timings);
            }
            black_box(value);
        }
    }
}

/// Evaluates `function` of `module` at `input`, as an `evaluate` message asks.
///
/// # Errors
///
/// If the module or function is unknown or the input does not have the eval's format.
pub fn evaluate(module: &str, function: &str, input: &Value) -> Result<Evaluation, String> {
    match module {
        "hello" => hello::evaluate(function, input),
        "llsq" => llsq::evaluate(function, input),
        "lse" => lse::evaluate(function, input),
        "gmm" => gmm::evaluate(function, input),
        "ode" => ode::evaluate(function, input),
        "lstm" => lstm::evaluate(function, input),
        "kmeans" => kmeans::evaluate(function, input),
        "det" => det::evaluate(function, input),
        "ba" => ba::evaluate(function, input),
        "saddle" => saddle::evaluate(function, input),
        "particle" => particle::evaluate(function, input),
        _ => Err(format!("unknown module `{module}`")),
    }
}

/// Times `f` as `input`'s `Runs` ask and turns its last value into JSON.
fn timed<T: Serialize>(input: &Value, f: impl FnMut() -> T) -> Result<Evaluation, String> {
    let (value, timings) = Runs::of(input)?.run(f);
    let output = serde_json::to_value(value).map_err(|e| e.to_string())?;
    Ok(Evaluation { output, timings })
}

/// Deserializes an eval's input.
fn parse<'a, T: serde::Deserialize<'a>>(input: &'a Value) -> Result<T, String> {
    T::deserialize(input).map_err(|e| format!("invalid input: {e}"))
}

/// The error for a function a module does not have.
fn unknown_function(module: &str, function: &str) -> String {
    format!("module `{module}` has no function `{function}`")
}

/// Concatenates the rows of a matrix given as an array of rows, checking that there
/// are `rows` rows of `cols` numbers each.
fn flatten(name: &str, matrix: &[Vec<f64>], rows: usize, cols: usize) -> Result<Vec<f64>, String> {
    if matrix.len() != rows {
        return Err(format!(
            "`{name}` has {} rows, expected {rows}",
            matrix.len()
        ));
    }
    let mut flat = Vec::with_capacity(rows * cols);
    for (i, row) in matrix.iter().enumerate() {
        if row.len() != cols {
            return Err(format!(
                "`{name}[{i}]` has {} entries, expected {cols}",
                row.len()
            ));
        }
        flat.extend_from_slice(row);
    }
    Ok(flat)
}

/// Splits a row-major matrix into an array of rows of `cols` numbers.
fn rows(flat: &[f64], cols: usize) -> Vec<Vec<f64>> {
    if cols == 0 {
        return Vec::new();
    }
    flat.chunks(cols).map(<[f64]>::to_vec).collect()
}
