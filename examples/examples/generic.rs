//! One model, written once over `T: Float`, trained in `f32` and in `f64`.
//!
//! The parameters are a struct generic over its float type,
//! `Params<T: Float>` with `#[derive(Tangent)]`, and the loss a generic
//! `#[differentiate]` function: the one generated `loss_vjp` serves both
//! precisions, and so does the training loop, generic too (Adam over the
//! struct, one gradient struct cleared in place each step). The example checks
//! the gradient against finite differences in both types (to `1e-6` in `f64`,
//! `1e-3` in `f32`, where the differences themselves are only that good),
//! trains both from the same start on the same data, and prints how far apart
//! the two runs end.
//!
//! Run with `cargo run --example generic`.

use ad_runtime::check::{self, Step};
use ad_runtime::optim::Adam;
use ad_runtime::{Float, Tangent, differentiate};

const N_POINTS: usize = 64;
const N_FEATURES: usize = 3;
const STEPS: usize = 300;
const LEARNING_RATE: f64 = 0.05;

/// A single neuron with an output scale: `a · tanh(w · x + b)`.
#[derive(Clone, Debug, Tangent)]
struct Params<T: Float> {
    w: Vec<T>,
    b: T,
    a: T,
}

/// The mean squared error of the neuron on the points: `x` holds one row of
/// `p.w.len()` features per point, `y` the targets.
#[differentiate(wrt(p))]
fn loss<T: Float>(p: &Params<T>, x: &[T], y: &[T]) -> T {
    let n = y.len();
    let d = p.w.len();
    let mut total = T::ZERO;
    for s in 0..n {
        let mut z = p.b;
        for j in 0..d {
            z += p.w[j] * x[s * d + j];
        }
        let r = p.a * z.tanh() - y[s];
        total += r * r;
    }
    total / T::from_i32(n as i32)
}

/// The data in `f64`: features on a deterministic grid of sines, targets from
/// `1.5 tanh(0.8 x₀ − 1.2 x₁ + 0.5 x₂ + 0.2)` with a small deterministic error.
fn data() -> (Vec<f64>, Vec<f64>) {
    let mut x = Vec::with_capacity(N_POINTS * N_FEATURES);
    let mut y = Vec::with_capacity(N_POINTS);
    for s in 0..N_POINTS {
        let t = s as f64;
        let row = [
            (0.7 * t).sin(),
            (1.3 * t + 0.4).cos(),
            (0.37 * t + 1.0).sin(),
        ];
        let z = 0.8 * row[0] - 1.2 * row[1] + 0.5 * row[2] + 0.2;
        x.extend(row);
        y.push(1.5 * z.tanh() + 0.01 * (5.3 * t).sin());
    }
    (x, y)
}

/// The starting point, the same in both types.
fn start<T: Float>() -> Params<T> {
    Params {
        w: vec![T::ZERO; N_FEATURES],
        b: T::ZERO,
        a: T::HALF,
    }
}

/// The gradient of the loss as a struct, from the generic `loss_vjp`.
fn gradient<T: Float>(p: &Params<T>, x: &[T], y: &[T]) -> Params<T> {
    let mut d_p = p.zero();
    loss_vjp(p, &mut d_p, x, y, T::ONE);
    d_p
}

/// Checks the gradient against finite differences at a point where every
/// parameter matters, to `tol`.
fn check_gradient<T: Float>(x: &[T], y: &[T], tol: f64, label: &str) {
    let probe = Params {
        w: vec![T::from_f64(0.4), T::from_f64(-0.3), T::from_f64(0.2)],
        b: T::from_f64(0.1),
        a: T::from_f64(0.9),
    };
    let result = check::gradient_with(
        |p: &Params<T>| loss(p, x, y),
        |p: &Params<T>| gradient(p, x, y),
        &probe,
        Step::Auto,
    );
    println!("{label}: {result}");
    result.assert_within(tol);
}

/// Trains from [`start`] with Adam and a decaying rate; returns the
/// parameters, the initial loss and the final loss.
fn train<T: Float>(x: &[T], y: &[T], label: &str) -> (Params<T>, f64, f64) {
    let mut p = start::<T>();
    let mut grad = p.zero();
    let mut adam = Adam::new(&p, T::from_f64(LEARNING_RATE));
    let initial = loss(&p, x, y).to_f64();
    let mut value = initial;
    for step in 0..=STEPS {
        grad.set_zero();
        value = loss_vjp(&p, &mut grad, x, y, T::ONE).to_f64();
        if step % 100 == 0 {
            println!("{label} step {step:4}  loss {value:.6}");
        }
        if step < STEPS {
            // A decaying rate, so that both runs settle instead of hovering
            // around the minimum by about the rate (which Adam would do).
            let rate = LEARNING_RATE / (1.0 + step as f64 / 50.0);
            adam.set_rate(T::from_f64(rate));
            adam.step(&mut p, &grad);
        }
    }
    (p, initial, value)
}

pub fn main() {
    let (x64, y64) = data();
    let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
    let y32: Vec<f32> = y64.iter().map(|&v| v as f32).collect();
    println!("a neuron a·tanh(w·x + b) on {N_POINTS} points, in f64 and in f32");

    check_gradient(&x64, &y64, 1e-6, "f64");
    check_gradient(&x32, &y32, 1e-3, "f32");

    let (p64, initial64, final64) = train(&x64, &y64, "f64");
    let (p32, initial32, final32) = train(&x32, &y32, "f32");

    // The two runs, parameter by parameter (in the flat order: w, b, a).
    let (flat64, flat32) = (p64.to_flat(), p32.to_flat());
    let gap = flat64
        .iter()
        .zip(&flat32)
        .map(|(a, b)| (a - f64::from(*b)).abs())
        .fold(0.0, f64::max);
    println!("f64: w = {:.5?}, b = {:.5}, a = {:.5}", p64.w, p64.b, p64.a);
    println!("f32: w = {:.5?}, b = {:.5}, a = {:.5}", p32.w, p32.b, p32.a);
    println!(
        "largest parameter difference {gap:.2e}, loss difference {:.2e}",
        (final64 - final32).abs()
    );

    for (label, initial, last) in [("f64", initial64, final64), ("f32", initial32, final32)] {
        assert!(
            last < 0.5 * initial,
            "{label}: training did not halve the loss: {initial:.5} -> {last:.5}"
        );
    }
    assert!(
        (final64 - final32).abs() < 0.05 * initial64,
        "the f32 and f64 runs ended far apart: {final64} against {final32}"
    );
}
