//! A 64-32-1 network with a SiLU activation given its own derivative rule,
//! trained by mini-batch Adam on a synthetic regression target.
//!
//! The layers are `ad_runtime::matmul` calls over the whole batch, their
//! weights the fields of one `#[derive(Tangent)]` struct; the activation,
//! `silu(x) = x σ(x)`, has the closed-form derivative
//! `σ(x) (1 + x (1 − σ(x)))` through `#[custom_vjp(silu_rule)]`. The example
//! checks the gradient first, in full on a small network built from the same
//! code and by the dot-product test on the 64-32-1 one, then trains on 128
//! points in batches of 16 for 15 epochs, printing the loss over all points
//! every 3 epochs. The sizes keep a debug build well under a second.
//!
//! Run with `cargo run --example silu_mlp`.

use ad_examples::support::Lcg;
use ad_runtime::check::{self, Step};
use ad_runtime::optim::Adam;
use ad_runtime::{Tangent, custom_vjp, differentiate};

const N_IN: usize = 64;
const N_HIDDEN: usize = 32;
const N_POINTS: usize = 128;
const BATCH: usize = 16;
const EPOCHS: usize = 15;
const LEARNING_RATE: f64 = 0.01;

/// The network's parameters. `w1` is `n_in × n_hidden` and `w2` is
/// `n_hidden × 1`, row-major, so a layer is `X · W + b` for a batch `X` of rows.
#[derive(Clone, Debug, Tangent)]
struct Mlp {
    w1: Vec<f64>,
    b1: Vec<f64>,
    w2: Vec<f64>,
    b2: f64,
}

/// SiLU, `x σ(x)`, with its derivative given by hand.
#[custom_vjp(silu_rule)]
fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

/// `d silu / dx = σ(x) (1 + x (1 − σ(x)))`, times the seed.
fn silu_rule(x: f64, _out: f64, d_out: f64) -> f64 {
    let s = 1.0 / (1.0 + (-x).exp());
    d_out * s * (1.0 + x * (1.0 - s))
}

/// The mean squared error of the network on a batch: `x` holds one row of
/// `n_in` inputs per point, `y` the targets. The sizes come from the buffers,
/// so the same code serves any layer widths.
#[differentiate(wrt(p))]
fn loss(p: &Mlp, x: &[f64], y: &[f64]) -> f64 {
    let n = y.len();
    let n_hidden = p.b1.len();
    let n_in = x.len() / n;

    // Hidden layer: H = silu(X W1 + b1), n × n_hidden.
    let mut pre = vec![0.0; n * n_hidden];
    ad_runtime::matmul(x, &p.w1, &mut pre, n, n_in, n_hidden);
    let mut h = vec![0.0; n * n_hidden];
    for s in 0..n {
        for j in 0..n_hidden {
            h[s * n_hidden + j] = silu(pre[s * n_hidden + j] + p.b1[j]);
        }
    }

    // Output: H W2 + b2, n × 1.
    let mut out = vec![0.0; n];
    ad_runtime::matmul(&h, &p.w2, &mut out, n, n_hidden, 1);
    let mut total = 0.0;
    for s in 0..n {
        let r = out[s] + p.b2 - y[s];
        total += r * r;
    }
    total / n as f64
}

/// A network of the given widths: weights uniform in `±1/√fan_in`, zero biases.
fn network(n_in: usize, n_hidden: usize, rng: &mut Lcg) -> Mlp {
    let scale1 = 1.0 / (n_in as f64).sqrt();
    let scale2 = 1.0 / (n_hidden as f64).sqrt();
    Mlp {
        w1: (0..n_in * n_hidden)
            .map(|_| scale1 * rng.uniform())
            .collect(),
        b1: vec![0.0; n_hidden],
        w2: (0..n_hidden).map(|_| scale2 * rng.uniform()).collect(),
        b2: 0.0,
    }
}

/// The target: a smooth function of all 64 inputs,
/// `sin(Σⱼ aⱼ xⱼ) + 0.5 tanh(2 x₀ x₁)` with `aⱼ = cos j / 4`.
fn target(row: &[f64]) -> f64 {
    let u: f64 = row
        .iter()
        .enumerate()
        .map(|(j, v)| 0.25 * (j as f64).cos() * v)
        .sum();
    u.sin() + 0.5 * (2.0 * row[0] * row[1]).tanh()
}

/// `n` points of `n_in` inputs uniform in `[-1, 1]`, and their targets.
fn data(n: usize, n_in: usize, rng: &mut Lcg) -> (Vec<f64>, Vec<f64>) {
    let x: Vec<f64> = (0..n * n_in).map(|_| rng.uniform()).collect();
    let y = x.chunks_exact(n_in).map(target).collect();
    (x, y)
}

/// The loss's gradient as a struct, from `loss_vjp`.
fn gradient(p: &Mlp, x: &[f64], y: &[f64]) -> Mlp {
    let mut d_p = p.zero();
    loss_vjp(p, &mut d_p, x, y, 1.0);
    d_p
}

pub fn main() {
    let mut rng = Lcg(2024);
    let (x, y) = data(N_POINTS, N_IN, &mut rng);
    let mut p = network(N_IN, N_HIDDEN, &mut rng);
    println!(
        "SiLU network {N_IN}-{N_HIDDEN}-1, {} parameters, {N_POINTS} points, batches of {BATCH}",
        p.len()
    );

    // 1. Every component of the gradient, on a 6-4-1 network and 3 points
    //    (the same `loss`: its sizes come from the buffers).
    let mut small_rng = Lcg(5);
    let small = network(6, 4, &mut small_rng);
    let (small_x, small_y) = data(3, 6, &mut small_rng);
    let full = check::gradient_with(
        |q: &Mlp| loss(q, &small_x, &small_y),
        |q: &Mlp| gradient(q, &small_x, &small_y),
        &small,
        Step::Auto,
    );
    println!("6-4-1 network: {full}");
    full.assert_within(1e-6);

    // 2. The dot-product test on the 64-32-1 network and a batch of 4 points:
    //    4 random directions, 16 evaluations of the loss, however many weights.
    let (batch_x, batch_y) = (&x[..4 * N_IN], &y[..4]);
    let dot = check::dot_product_scalar_with(
        |q: &Mlp| loss(q, batch_x, batch_y),
        |q: &Mlp| gradient(q, batch_x, batch_y),
        &p,
        Step::Auto,
    );
    println!("{N_IN}-{N_HIDDEN}-1 network: {dot}");
    dot.assert_within(1e-6);

    // Training: one gradient struct, cleared in place before each batch.
    let mut grad = p.zero();
    let mut adam = Adam::new(&p, LEARNING_RATE);
    let initial = loss(&p, &x, &y);
    println!("epoch    0  loss {initial:.5}");
    let mut value = initial;
    for epoch in 1..=EPOCHS {
        for batch in 0..N_POINTS / BATCH {
            let xb = &x[batch * BATCH * N_IN..(batch + 1) * BATCH * N_IN];
            let yb = &y[batch * BATCH..(batch + 1) * BATCH];
            grad.set_zero();
            loss_vjp(&p, &mut grad, xb, yb, 1.0);
            adam.step(&mut p, &grad);
        }
        // The loss over all points costs a batch's forward pass eight times
        // over: only every few epochs (EPOCHS is a multiple of 3).
        if epoch % 3 == 0 {
            value = loss(&p, &x, &y);
            println!("epoch {epoch:4}  loss {value:.5}");
        }
    }
    println!("loss over all points: {initial:.5} -> {value:.5}");
    assert!(
        value < 0.5 * initial,
        "training did not halve the loss: {initial:.5} -> {value:.5}"
    );
}
