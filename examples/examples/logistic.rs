//! Logistic regression whose parameters are one struct.
//!
//! A `#[derive(Tangent)]` struct holds the weights, the bias and a name (a
//! skipped field, cloned into the gradient). The loss, the mean binary
//! cross-entropy over 200 points in 4 dimensions, is written in its stable
//! softplus form, `max(z, 0) + ln(1 + e^(−|z|)) − y z`, and differentiated with
//! respect to the struct only (`wrt(m)`): the data get no shadow. The example
//! checks the struct's gradient against finite differences, then trains with
//! [`ad_runtime::optim::Adam`], reusing one gradient struct cleared with
//! `set_zero()` each step, so a step allocates nothing of its own.
//!
//! Run with `cargo run --example logistic`.

use ad_examples::support::Lcg;
use ad_runtime::check::{self, Step};
use ad_runtime::optim::Adam;
use ad_runtime::{Tangent, differentiate};

/// Points and their features.
const N_POINTS: usize = 200;
const N_FEATURES: usize = 4;
const STEPS: usize = 400;
const LEARNING_RATE: f64 = 0.05;

/// The model: `P(y = 1 | x) = σ(w · x + b)`.
#[derive(Clone, Debug, Tangent)]
struct Model {
    w: Vec<f64>,
    b: f64,
    /// Not a parameter: left out of the gradient, cloned into the shadow.
    #[tangent(skip)]
    name: String,
}

/// The mean binary cross-entropy of the model on the points: `x` holds one
/// row of `m.w.len()` features per point (row-major), `y` the labels, 0 or 1.
///
/// Per point, with `z = w · x + b`, the loss `ln(1 + eᶻ) − y z` is written as
/// `max(z, 0) + ln(1 + e^(−|z|)) − y z`, which never overflows.
#[differentiate(wrt(m))]
fn loss(m: &Model, x: &[f64], y: &[f64]) -> f64 {
    let n = y.len();
    let d = m.w.len();
    let mut total = 0.0;
    for s in 0..n {
        let mut z = m.b;
        for j in 0..d {
            z += m.w[j] * x[s * d + j];
        }
        total += z.max(0.0) + (-z.abs()).exp().ln_1p() - y[s] * z;
    }
    total / n as f64
}

/// Points uniform in `[-1, 1]⁴`, labelled by the side of a hyperplane they
/// fall on, with a little label noise near it (so the classes overlap and the
/// optimum is finite).
fn data() -> (Vec<f64>, Vec<f64>) {
    let true_w = [2.0, -3.0, 1.5, 0.5];
    let true_b = 0.25;
    let mut rng = Lcg(7);
    let mut x = Vec::with_capacity(N_POINTS * N_FEATURES);
    let mut y = Vec::with_capacity(N_POINTS);
    for _ in 0..N_POINTS {
        let mut z = true_b;
        for w in true_w {
            let v = rng.uniform();
            x.push(v);
            z += w * v;
        }
        let noise = 0.5 * rng.uniform();
        y.push(if z + noise > 0.0 { 1.0 } else { 0.0 });
    }
    (x, y)
}

/// The fraction of points on the right side of the model's boundary.
fn accuracy(m: &Model, x: &[f64], y: &[f64]) -> f64 {
    let correct = x
        .chunks_exact(N_FEATURES)
        .zip(y)
        .filter(|&(row, &label)| {
            let z: f64 = m.b + row.iter().zip(&m.w).map(|(a, b)| a * b).sum::<f64>();
            (z > 0.0) == (label > 0.5)
        })
        .count();
    correct as f64 / y.len() as f64
}

pub fn main() {
    let (x, y) = data();
    let positives = y.iter().filter(|&&label| label > 0.5).count();
    println!(
        "logistic regression: {N_POINTS} points, {N_FEATURES} features, {positives} labelled 1"
    );

    // The gradient of the struct against finite differences, at a point
    // where every weight matters.
    let probe = Model {
        w: vec![0.3, -0.2, 0.1, 0.4],
        b: 0.1,
        name: "probe".to_string(),
    };
    let gradient = |m: &Model| {
        let mut d_m = m.zero();
        loss_vjp(m, &mut d_m, &x, &y, 1.0);
        d_m
    };
    let result = check::gradient_with(|m: &Model| loss(m, &x, &y), gradient, &probe, Step::Auto);
    println!("{result}");
    result.assert_within(1e-6);

    // Training: one gradient struct, cleared in place each step.
    let mut model = Model {
        w: vec![0.0; N_FEATURES],
        b: 0.0,
        name: "logistic".to_string(),
    };
    let mut grad = model.zero();
    let mut adam = Adam::new(&model, LEARNING_RATE);
    let initial = loss(&model, &x, &y);
    let mut value = initial;
    for step in 0..=STEPS {
        grad.set_zero();
        value = loss_vjp(&model, &mut grad, &x, &y, 1.0);
        if step % 50 == 0 {
            println!(
                "step {step:4}  loss {value:.5}  accuracy {:.1}%",
                100.0 * accuracy(&model, &x, &y)
            );
        }
        if step < STEPS {
            adam.step(&mut model, &grad);
        }
    }
    println!(
        "{}: w = {:.3?}, b = {:.3}, gradient's name field: {:?}",
        model.name, model.w, model.b, grad.name
    );
    let accuracy = accuracy(&model, &x, &y);
    println!(
        "loss {initial:.4} -> {value:.4}, accuracy {:.1}%",
        100.0 * accuracy
    );
    assert!(
        value < 0.5 * initial,
        "training did not halve the loss: {initial:.4} -> {value:.4}"
    );
    assert!(accuracy > 0.85, "accuracy {accuracy} is not above 85%");
}
