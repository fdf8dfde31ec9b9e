//! Differentiates a few functions and prints values, gradients, and the
//! finite-difference and dot-product checks.
//!
//! Run with `cargo run --example demo`.

use ad_runtime::{check, differentiate};

/// The Rosenbrock function in two variables.
#[differentiate]
fn rosenbrock(x: f64, y: f64) -> f64 {
    let a = 1.0 - x;
    let b = y - x * x;
    a * a + 100.0 * b * b
}

/// A smooth function of three variables using several primitives.
#[differentiate]
fn blend(x: f64, y: f64, z: f64) -> f64 {
    let r = x.hypot(y);
    let w = (z * r).sin() + (x / (1.0 + y * y)).exp();
    w.ln_1p() * z.tanh()
}

/// Polar coordinates: two outputs, so the seed is a pair.
#[differentiate]
fn to_polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

fn main() {
    let (x, y) = (-1.2, 1.0);
    let (value, d_x, d_y) = rosenbrock_vjp(x, y, 1.0);
    println!("rosenbrock({x}, {y}) = {value}");
    println!("  gradient      = [{d_x}, {d_y}]");
    println!(
        "  closed form   = [{}, {}]",
        -2.0 * (1.0 - x) - 400.0 * x * (y - x * x),
        200.0 * (y - x * x)
    );
    report(
        |p| rosenbrock(p[0], p[1]),
        |p| {
            let (_, d_x, d_y) = rosenbrock_vjp(p[0], p[1], 1.0);
            vec![d_x, d_y]
        },
        &[x, y],
    );

    let point = [0.3, -0.7, 1.1];
    let (value, d_x, d_y, d_z) = blend_vjp(point[0], point[1], point[2], 1.0);
    println!("blend{point:?} = {value}");
    println!("  gradient      = [{d_x}, {d_y}, {d_z}]");
    report(
        |p| blend(p[0], p[1], p[2]),
        |p| {
            let (_, d_x, d_y, d_z) = blend_vjp(p[0], p[1], p[2], 1.0);
            vec![d_x, d_y, d_z]
        },
        &point,
    );

    // A Jacobian, one row per basis seed.
    let (x, y) = (3.0, 4.0);
    println!("to_polar({x}, {y}) = {:?}", to_polar(x, y));
    for (row, seed) in [(1.0, 0.0), (0.0, 1.0)].into_iter().enumerate() {
        let (_, d_x, d_y) = to_polar_vjp(x, y, seed);
        println!("  Jacobian row {row} = [{d_x}, {d_y}]");
    }
    let polar = |p: &[f64]| {
        let (r, theta) = to_polar(p[0], p[1]);
        vec![r, theta]
    };
    let pullback = |p: &[f64], v: &[f64]| {
        let (_, d_x, d_y) = to_polar_vjp(p[0], p[1], (v[0], v[1]));
        vec![d_x, d_y]
    };
    println!("  {}", check::vjp(polar, pullback, &[x, y]));
    println!("  {}", check::dot_product(polar, pullback, &[x, y]));
}

fn report(f: impl Fn(&[f64]) -> f64, grad: impl Fn(&[f64]) -> Vec<f64>, x: &[f64]) {
    println!("  {}", check::gradient(&f, &grad, x));
    println!("  {}", check::dot_product_scalar(&f, &grad, x));
}
