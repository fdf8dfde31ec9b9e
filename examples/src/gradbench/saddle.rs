//! The `saddle` eval: a saddle point by nested gradient descent
//! (Pearlmutter and Siskind's benchmark of nested differentiation).
//!
//! `f(x, y) = (x₁² + x₂²) − (y₁² + y₂²)`; find `x* = argminₓ maxᵧ f(x, y)`
//! by gradient descent whose objective, `maxᵧ f(x, y)`, is itself a
//! gradient ascent, then `y* = argmaxᵧ f(x*, y)`; both from the input's
//! `start`, with GradBench's solver (`super::descent`). The input is
//! `{start: double[2]}` plus `Runs`, the output `[x₁, x₂, y₁, y₂]`.
//!
//! The outer descent needs the derivative of the inner ascent, which takes
//! derivatives of `f` at every step: nested differentiation. The function
//! names say which mode each level uses, outer first: `ff` differentiates
//! [`inner_max_f`] (whose steps call `f_jvp`) with its `_jvp`, `fr`
//! differentiates [`inner_max_r`] (whose steps call `f_vjp`) with its
//! `_jvp`, `rf` and `rr` the same with their `_vjp`; the final ascent uses
//! the outer mode. `f`'s `nested` twins are what those derivatives call.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::descent::{argmax, argmin};
use super::{Evaluation, parse, timed, unknown_function};

/// The function whose saddle point is sought.
#[differentiate(vjp, jvp, nested)]
pub fn f(x1: f64, x2: f64, y1: f64, y2: f64) -> f64 {
    (x1 * x1 + x2 * x2) - (y1 * y1 + y2 * y2)
}

/// `maxᵧ f(x, y)` by GradBench's ascent from `(s1, s2)`, each step's
/// gradient from `f_jvp`, one direction at a time.
#[differentiate(vjp, jvp)]
pub fn inner_max_f(x1: f64, x2: f64, s1: f64, s2: f64) -> f64 {
    let (mut y1, mut y2) = (s1, s2);
    let mut fy = -f(x1, x2, y1, y2);
    let (_, t1) = f_jvp(x1, 0.0, x2, 0.0, y1, 1.0, y2, 0.0);
    let (_, t2) = f_jvp(x1, 0.0, x2, 0.0, y1, 0.0, y2, 1.0);
    let (mut g1, mut g2) = (-t1, -t2);
    let mut accepted = 0;
    let mut eta = 1e-5;
    loop {
        if (g1 * g1 + g2 * g2).sqrt() <= 1e-5 {
            break;
        } else if accepted == 10 {
            eta *= 2.0;
            accepted = 0;
        } else {
            let (p1, p2) = (y1 - eta * g1, y2 - eta * g2);
            if ((y1 - p1) * (y1 - p1) + (y2 - p2) * (y2 - p2)).sqrt() <= 1e-5 {
                break;
            }
            let fp = -f(x1, x2, p1, p2);
            if fp < fy {
                (y1, y2, fy) = (p1, p2, fp);
                let (_, t1) = f_jvp(x1, 0.0, x2, 0.0, y1, 1.0, y2, 0.0);
                let (_, t2) = f_jvp(x1, 0.0, x2, 0.0, y1, 0.0, y2, 1.0);
                (g1, g2) = (-t1, -t2);
                accepted += 1;
            } else {
                eta /= 2.0;
                accepted = 0;
            }
        }
    }
    f(x1, x2, y1, y2)
}

/// [`inner_max_f`] with each step's gradient from `f_vjp`.
#[differentiate(vjp, jvp)]
pub fn inner_max_r(x1: f64, x2: f64, s1: f64, s2: f64) -> f64 {
    let (mut y1, mut y2) = (s1, s2);
    let mut fy = -f(x1, x2, y1, y2);
    let (_, _, _, d_y1, d_y2) = f_vjp(x1, x2, y1, y2, -1.0);
    let (mut g1, mut g2) = (d_y1, d_y2);
    let mut accepted = 0;
    let mut eta = 1e-5;
    loop {
        if (g1 * g1 + g2 * g2).sqrt() <= 1e-5 {
            break;
        } else if accepted == 10 {
            eta *= 2.0;
            accepted = 0;
        } else {
            let (p1, p2) = (y1 - eta * g1, y2 - eta * g2);
            if ((y1 - p1) * (y1 - p1) + (y2 - p2) * (y2 - p2)).sqrt() <= 1e-5 {
                break;
            }
            let fp = -f(x1, x2, p1, p2);
            if fp < fy {
                (y1, y2, fy) = (p1, p2, fp);
                let (_, _, _, d_y1, d_y2) = f_vjp(x1, x2, y1, y2, -1.0);
                (g1, g2) = (d_y1, d_y2);
                accepted += 1;
            } else {
                eta /= 2.0;
                accepted = 0;
            }
        }
    }
    f(x1, x2, y1, y2)
}

/// The derivative the outer level takes: of `inner_max` in the outer
/// descent, of `f` in the final ascent.
#[derive(Clone, Copy)]
enum Outer {
    Forward,
    Reverse,
}

/// An `inner_max`'s `_jvp`.
type InnerJvp = fn(f64, f64, f64, f64, f64, f64, f64, f64) -> (f64, f64);
/// An `inner_max`'s `_vjp`.
type InnerVjp = fn(f64, f64, f64, f64, f64) -> (f64, f64, f64, f64, f64);

/// The saddle point from `start`, the outer descent's gradient from the
/// `_jvp` (two directions) or the `_vjp` of `inner_max`, the final ascent's
/// from `f_jvp` or `f_vjp` alike.
fn saddle(
    start: [f64; 2],
    inner_max: fn(f64, f64, f64, f64) -> f64,
    inner_max_jvp: InnerJvp,
    inner_max_vjp: InnerVjp,
    outer: Outer,
) -> [f64; 4] {
    let [s1, s2] = start;
    let x = argmin(
        |x| inner_max(x[0], x[1], s1, s2),
        |x| match outer {
            Outer::Forward => [
                inner_max_jvp(x[0], 1.0, x[1], 0.0, s1, 0.0, s2, 0.0).1,
                inner_max_jvp(x[0], 0.0, x[1], 1.0, s1, 0.0, s2, 0.0).1,
            ],
            Outer::Reverse => {
                let (_, d_x1, d_x2, _, _) = inner_max_vjp(x[0], x[1], s1, s2, 1.0);
                [d_x1, d_x2]
            }
        },
        start,
    );
    let y = argmax(
        |y| f(x[0], x[1], y[0], y[1]),
        |y| match outer {
            Outer::Forward => [
                f_jvp(x[0], 0.0, x[1], 0.0, y[0], 1.0, y[1], 0.0).1,
                f_jvp(x[0], 0.0, x[1], 0.0, y[0], 0.0, y[1], 1.0).1,
            ],
            Outer::Reverse => {
                let (_, _, _, d_y1, d_y2) = f_vjp(x[0], x[1], y[0], y[1], 1.0);
                [d_y1, d_y2]
            }
        },
        start,
    );
    [x[0], x[1], y[0], y[1]]
}

/// `ff`: forward mode over forward mode.
#[must_use]
pub fn ff(start: [f64; 2]) -> [f64; 4] {
    saddle(
        start,
        inner_max_f,
        inner_max_f_jvp,
        inner_max_f_vjp,
        Outer::Forward,
    )
}

/// `fr`: forward mode over reverse mode.
#[must_use]
pub fn fr(start: [f64; 2]) -> [f64; 4] {
    saddle(
        start,
        inner_max_r,
        inner_max_r_jvp,
        inner_max_r_vjp,
        Outer::Forward,
    )
}

/// `rf`: reverse mode over forward mode.
#[must_use]
pub fn rf(start: [f64; 2]) -> [f64; 4] {
    saddle(
        start,
        inner_max_f,
        inner_max_f_jvp,
        inner_max_f_vjp,
        Outer::Reverse,
    )
}

/// `rr`: reverse mode over reverse mode.
#[must_use]
pub fn rr(start: [f64; 2]) -> [f64; 4] {
    saddle(
        start,
        inner_max_r,
        inner_max_r_jvp,
        inner_max_r_vjp,
        Outer::Reverse,
    )
}

/// The input.
#[derive(Deserialize)]
struct Input {
    start: [f64; 2],
}

/// Answers an `evaluate` message of module `saddle`.
///
/// # Errors
///
/// If the input does not have the eval's format, or the function is not
/// one of `ff`, `fr`, `rf` and `rr`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { start } = parse(input)?;
    match function {
        "ff" => timed(input, || ff(start)),
        "fr" => timed(input, || fr(start)),
        "rf" => timed(input, || rf(start)),
        "rr" => timed(input, || rr(start)),
        _ => Err(unknown_function("saddle", function)),
    }
}
