//! Composition: a small model written as several functions, a custom rule, one
//! generic function for `f32` and `f64`, and its parameters in one struct.
//!
//! Fits a chain of springs with softplus stiffnesses to target positions by
//! gradient descent, then checks the gradient against finite differences.
//!
//! Run with `cargo run --example composition`.

use ad_runtime::{Float, Tangent, check, custom_vjp, differentiate};

/// The model's parameters: one per spring, and a shared scale.
#[derive(Clone, Debug, Tangent)]
struct Springs {
    raw_stiffness: Vec<f64>,
    rest_length: Vec<f64>,
    scale: f64,
}

/// `ln(1 + eˣ)`, positive for every `x`.
#[custom_vjp(softplus_rule)]
fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

/// Its derivative, the logistic function: finite for every `x`, where the
/// derivative of the body above would overflow.
fn softplus_rule(x: f64, _out: f64, d_out: f64) -> f64 {
    d_out / (1.0 + (-x).exp())
}

/// Where the free end of spring `i` rests under `force`: generic, so the same
/// code also runs in `f32` below.
#[differentiate]
fn extension<T: Float>(force: T, stiffness: T, rest: T) -> T {
    rest + force / stiffness
}

/// The positions of the chain's nodes under `force`, and their squared
/// distance to `targets`.
#[differentiate]
fn misfit(p: &Springs, force: f64, targets: &[f64]) -> f64 {
    let mut position = 0.0;
    let mut total = 0.0;
    for (i, &target) in targets.iter().enumerate() {
        let stiffness = p.scale * softplus(p.raw_stiffness[i]);
        position += extension(force, stiffness, p.rest_length[i]);
        let gap = position - target;
        total += gap * gap;
    }
    total
}

fn flatten(p: &Springs) -> Vec<f64> {
    let mut flat = p.raw_stiffness.clone();
    flat.extend(&p.rest_length);
    flat.push(p.scale);
    flat
}

fn unflatten(flat: &[f64], n: usize) -> Springs {
    Springs {
        raw_stiffness: flat[..n].to_vec(),
        rest_length: flat[n..2 * n].to_vec(),
        scale: flat[2 * n],
    }
}

fn main() {
    let targets = [1.5, 2.7, 4.4, 5.2];
    let force = 2.0;
    let n = targets.len();
    let mut p = Springs {
        raw_stiffness: vec![0.0; n],
        rest_length: vec![1.0; n],
        scale: 1.0,
    };
    let before = misfit(&p, force, &targets);
    for _ in 0..300 {
        let mut d_p = p.zero();
        let mut d_targets = vec![0.0; n];
        misfit_vjp(&p, &mut d_p, force, &targets, &mut d_targets, 1.0);
        p.add_scaled(-0.05, &d_p);
    }
    let after = misfit(&p, force, &targets);
    println!("misfit: {before:.4} → {after:.6} after 300 gradient steps");
    assert!(after < 1e-3 * before, "the fit did not converge: {after}");

    // The struct's gradient against finite differences, flattened.
    let f = |flat: &[f64]| misfit(&unflatten(flat, n), force, &targets);
    let grad = |flat: &[f64]| {
        let p = unflatten(flat, n);
        let mut d_p = p.zero();
        let mut d_targets = vec![0.0; n];
        misfit_vjp(&p, &mut d_p, force, &targets, &mut d_targets, 1.0);
        flatten(&d_p)
    };
    let fd = check::gradient(f, grad, &flatten(&p));
    println!("gradient vs finite differences: {fd}");
    fd.assert_within(1e-6);

    // One generic function, two precisions.
    let (_, d_force64, _, _) = extension_vjp(2.0_f64, 4.0, 1.0, 1.0);
    let (_, d_force32, _, _) = extension_vjp(2.0_f32, 4.0, 1.0, 1.0);
    println!("d extension / d force: {d_force64} (f64), {d_force32} (f32)");
    assert_eq!(d_force64, 0.25);
    assert_eq!(d_force32, 0.25);

    // The custom rule where the body's own derivative would overflow.
    let (_, d_x) = softplus_vjp(800.0, 1.0);
    println!("softplus'(800) = {d_x}");
    assert_eq!(d_x, 1.0);
}
