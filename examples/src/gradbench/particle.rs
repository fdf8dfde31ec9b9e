//! The `particle` eval: aiming a charged particle by nested gradient
//! descent (Pearlmutter and Siskind's benchmark of nested differentiation).
//!
//! A particle starts at `(0, 8)` with velocity `(0.75, 0)` between two
//! charges, at `(10, 10 − w)` and `(10, 0)`, and is accelerated by minus
//! the gradient of the potential `Σ 1 / ‖x − c‖`, by Euler steps of `0.1`
//! until it crosses `y = 0`; the cost is the square of where it crosses.
//! The control `w` that minimises it is found by GradBench's descent
//! (`super::descent`) from the input's `w`. The input is `{w: double}` plus
//! `Runs`, the output `w*`.
//!
//! Every Euler step takes the potential's gradient, and the descent
//! differentiates the whole flight: nested differentiation. `ff`
//! differentiates [`naive_euler_f`] (whose steps call `accel_jvp`) with its
//! `_jvp`, `fr` differentiates [`naive_euler_r`] (whose steps call
//! `accel_vjp`) with its `_jvp`; `rf` and `rr` differentiate them with
//! their `_vjp`. `accel`'s `nested` twins are what those derivatives call.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::descent::argmin;
use super::{Evaluation, parse, timed, unknown_function};

/// The potential at `(x, y)` of the charges at `(c0x, c0y)` and `(c1x, c1y)`.
#[differentiate(vjp, jvp, nested)]
pub fn accel(c0x: f64, c0y: f64, c1x: f64, c1y: f64, x: f64, y: f64) -> f64 {
    let mut a = 0.0;
    a += 1.0 / ((c0x - x) * (c0x - x) + (c0y - y) * (c0y - y)).sqrt();
    a += 1.0 / ((c1x - x) * (c1x - x) + (c1y - y) * (c1y - y)).sqrt();
    a
}

/// The squared crossing point of the flight for the control `w`, the
/// acceleration from `accel_jvp`, one direction at a time.
#[differentiate(vjp, jvp)]
pub fn naive_euler_f(w: f64) -> f64 {
    let (c0x, c0y, c1x, c1y) = (10.0, 10.0 - w, 10.0, 0.0);
    let (mut x, mut y) = (0.0, 8.0);
    let (mut vx, mut vy) = (0.75, 0.0);
    let dt = 0.1;
    loop {
        let (_, gx) = accel_jvp(c0x, 0.0, c0y, 0.0, c1x, 0.0, c1y, 0.0, x, 1.0, y, 0.0);
        let (_, gy) = accel_jvp(c0x, 0.0, c0y, 0.0, c1x, 0.0, c1y, 0.0, x, 0.0, y, 1.0);
        let (ax, ay) = (-gx, -gy);
        x += dt * vx;
        y += dt * vy;
        if y <= 0.0 {
            let dt_f = -y / vy;
            let x_f = x + dt_f * vx;
            break x_f * x_f;
        }
        vx += dt * ax;
        vy += dt * ay;
    }
}

/// [`naive_euler_f`] with the acceleration from `accel_vjp`.
#[differentiate(vjp, jvp)]
pub fn naive_euler_r(w: f64) -> f64 {
    let (c0x, c0y, c1x, c1y) = (10.0, 10.0 - w, 10.0, 0.0);
    let (mut x, mut y) = (0.0, 8.0);
    let (mut vx, mut vy) = (0.75, 0.0);
    let dt = 0.1;
    loop {
        let (_, _, _, _, _, gx, gy) = accel_vjp(c0x, c0y, c1x, c1y, x, y, 1.0);
        let (ax, ay) = (-gx, -gy);
        x += dt * vx;
        y += dt * vy;
        if y <= 0.0 {
            let dt_f = -y / vy;
            let x_f = x + dt_f * vx;
            break x_f * x_f;
        }
        vx += dt * ax;
        vy += dt * ay;
    }
}

/// The best control from `w0`, the descent's derivative from `derivative`.
fn aim(w0: f64, cost: fn(f64) -> f64, derivative: impl Fn(f64) -> f64) -> f64 {
    argmin(|w| cost(w[0]), |w| [derivative(w[0])], [w0])[0]
}

/// `ff`: forward mode over forward mode.
#[must_use]
pub fn ff(w0: f64) -> f64 {
    aim(w0, naive_euler_f, |w| naive_euler_f_jvp(w, 1.0).1)
}

/// `fr`: forward mode over reverse mode.
#[must_use]
pub fn fr(w0: f64) -> f64 {
    aim(w0, naive_euler_r, |w| naive_euler_r_jvp(w, 1.0).1)
}

/// `rf`: reverse mode over forward mode.
#[must_use]
pub fn rf(w0: f64) -> f64 {
    aim(w0, naive_euler_f, |w| naive_euler_f_vjp(w, 1.0).1)
}

/// `rr`: reverse mode over reverse mode.
#[must_use]
pub fn rr(w0: f64) -> f64 {
    aim(w0, naive_euler_r, |w| naive_euler_r_vjp(w, 1.0).1)
}

/// The input.
#[derive(Deserialize)]
struct Input {
    w: f64,
}

/// Answers an `evaluate` message of module `particle`.
///
/// # Errors
///
/// If the input does not have the eval's format, or the function is not
/// one of `ff`, `fr`, `rf` and `rr`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { w } = parse(input)?;
    match function {
        "ff" => timed(input, || ff(w)),
        "fr" => timed(input, || fr(w)),
        "rf" => timed(input, || rf(w)),
        "rr" => timed(input, || rr(w)),
        _ => Err(unknown_function("particle", function)),
    }
}
