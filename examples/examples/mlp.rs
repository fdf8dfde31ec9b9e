//! Trains a small neural network on the Iris data set with gradients from
//! `#[differentiate]`.
//!
//! The network is a multilayer perceptron: 4 standardized flower measurements,
//! 8 `tanh` hidden units, 3 logits, one per species. Its loss, the mean softmax
//! cross-entropy over all 150 flowers, is a plain Rust function over slices;
//! `#[differentiate(wrt(...))]` generates `loss_vjp`, which adds the gradient of
//! the loss with respect to the weights into shadow slices. The example checks
//! that gradient once against finite differences with [`ad_runtime::check`]
//! for each activation the loss can be given (an `enum` parameter, matched on
//! in the differentiated function), then trains full batch with
//! [`ad_runtime::optim::Adam`], printing the loss as it goes down and the
//! final training accuracy.
//!
//! The data comes from the `iris` feature of the `linfa-datasets` crate, which
//! bundles it: nothing is downloaded at run time.
//!
//! Run with `cargo run --example mlp`.

use ad_runtime::optim::Adam;
use ad_runtime::{check, differentiate};

/// Features per flower: sepal length and width, petal length and width.
const N_IN: usize = 4;
/// Hidden units.
const N_HIDDEN: usize = 8;
/// Classes: setosa, versicolor, virginica.
const N_CLASSES: usize = 3;
/// The lengths of the parameter blocks `w1`, `b1`, `w2`, `b2`, in this order,
/// in the flat parameter vector.
const SHAPES: [usize; 4] = [N_IN * N_HIDDEN, N_HIDDEN, N_HIDDEN * N_CLASSES, N_CLASSES];

const EPOCHS: usize = 300;
/// Adam's learning rate: about how far each weight moves per epoch at first.
const LEARNING_RATE: f64 = 0.02;

/// The hidden units' activation: a parameter of the user's own type, which
/// `#[differentiate]` takes as constant data and matches on as written.
#[derive(Clone, Copy, Debug)]
enum Activation {
    Tanh,
    /// `x / (1 + |x|)`, tanh's cheaper cousin.
    Softsign,
}

/// The mean cross-entropy of the network on a batch.
///
/// `x` holds one row of `n_in` features per sample (row-major); `labels[s]` is
/// the class of sample `s`. The weights are row-major too: `w1` is
/// `n_in × n_hidden` and `w2` is `n_hidden × n_classes`, so a layer is `X · W + b`.
/// Only the weights are differentiated (`wrt`): the data is constant, so it
/// gets no shadow and no gradient is computed for it.
#[differentiate(wrt(w1, b1, w2, b2))]
fn loss(
    w1: &[f64],
    b1: &[f64],
    w2: &[f64],
    b2: &[f64],
    x: &[f64],
    labels: &[usize],
    act: Activation,
) -> f64 {
    let n = labels.len();
    let n_in = x.len() / n;
    let n_hidden = b1.len();
    let n_classes = b2.len();

    // Hidden layer for the whole batch: H = act(X W1 + b1), n × n_hidden.
    let mut pre = vec![0.0; n * n_hidden];
    ad_runtime::matmul(x, w1, &mut pre, n, n_in, n_hidden);
    let mut h = vec![0.0; n * n_hidden];
    for s in 0..n {
        for j in 0..n_hidden {
            let a = pre[s * n_hidden + j] + b1[j];
            h[s * n_hidden + j] = match act {
                Activation::Tanh => a.tanh(),
                Activation::Softsign => a / (1.0 + a.abs()),
            };
        }
    }

    // Logits: Z = H W2 + b2, n × n_classes.
    let mut z = vec![0.0; n * n_classes];
    ad_runtime::matmul(&h, w2, &mut z, n, n_hidden, n_classes);
    for s in 0..n {
        for c in 0..n_classes {
            z[s * n_classes + c] += b2[c];
        }
    }

    // Cross-entropy of sample s: -ln softmax(z_s)[label] = logsumexp(z_s) - z_s[label],
    // with the log-sum-exp shifted by the row's largest logit so `exp` cannot overflow
    // (the shift changes neither the value nor the gradient). It is written out rather
    // than calling `ad_runtime::logsumexp`, which takes a whole buffer, not one row.
    let mut total = 0.0;
    for s in 0..n {
        let row = s * n_classes;
        let mut top = z[row];
        for c in 1..n_classes {
            top = top.max(z[row + c]);
        }
        let mut sum = 0.0;
        for c in 0..n_classes {
            sum += (z[row + c] - top).exp();
        }
        total += top + sum.ln() - z[row + labels[s]];
    }
    total / n as f64
}

/// The training data: standardized features, row-major, and the class labels.
struct Data {
    x: Vec<f64>,
    labels: Vec<usize>,
}

impl Data {
    /// Loads Iris and standardizes each feature to mean 0 and variance 1.
    fn iris() -> Self {
        let iris = linfa_datasets::iris();
        let records = iris.records();
        assert_eq!(records.ncols(), N_IN);
        let mut x: Vec<f64> = records.iter().copied().collect();
        let labels: Vec<usize> = iris.targets().iter().copied().collect();
        let n = labels.len();
        for feature in 0..N_IN {
            let column = || (0..n).map(|s| x[s * N_IN + feature]);
            let mean = column().sum::<f64>() / n as f64;
            let var = column().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
            let sd = var.sqrt();
            for s in 0..n {
                x[s * N_IN + feature] = (x[s * N_IN + feature] - mean) / sd;
            }
        }
        Data { x, labels }
    }

    fn len(&self) -> usize {
        self.labels.len()
    }
}

/// Splits the flat parameter vector into `[w1, b1, w2, b2]`.
fn split(params: &[f64]) -> [&[f64]; 4] {
    let (w1, rest) = params.split_at(SHAPES[0]);
    let (b1, rest) = rest.split_at(SHAPES[1]);
    let (w2, b2) = rest.split_at(SHAPES[2]);
    [w1, b1, w2, b2]
}

/// [`split`] for a mutable vector, such as the gradient.
fn split_mut(params: &mut [f64]) -> [&mut [f64]; 4] {
    let (w1, rest) = params.split_at_mut(SHAPES[0]);
    let (b1, rest) = rest.split_at_mut(SHAPES[1]);
    let (w2, b2) = rest.split_at_mut(SHAPES[2]);
    [w1, b1, w2, b2]
}

/// The loss at `params`, from the primal function.
fn loss_at(params: &[f64], data: &Data, act: Activation) -> f64 {
    let [w1, b1, w2, b2] = split(params);
    loss(w1, b1, w2, b2, &data.x, &data.labels, act)
}

/// The loss and its gradient at `params`, from the generated `loss_vjp`.
fn loss_and_gradient(params: &[f64], data: &Data, act: Activation) -> (f64, Vec<f64>) {
    let [w1, b1, w2, b2] = split(params);
    // The shadows receive the gradient added to them, so they start at zero.
    let mut gradient = vec![0.0; params.len()];
    let [d_w1, d_b1, d_w2, d_b2] = split_mut(&mut gradient);
    let value = loss_vjp(
        w1,
        d_w1,
        b1,
        d_b1,
        w2,
        d_w2,
        b2,
        d_b2,
        &data.x,
        &data.labels,
        act,
        1.0,
    );
    (value, gradient)
}

/// Deterministic initial weights: uniform in `±1/√fan_in` from a small linear
/// congruential generator; zero biases.
fn initial_params() -> Vec<f64> {
    let mut state: u64 = 42;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // The top 53 bits as a number in [-1, 1).
        (state >> 11) as f64 / (1_u64 << 52) as f64 - 1.0
    };
    let mut layer = |fan_in: usize, len: usize| -> Vec<f64> {
        let scale = 1.0 / (fan_in as f64).sqrt();
        (0..len).map(|_| scale * uniform()).collect()
    };
    let mut params = layer(N_IN, SHAPES[0]);
    params.extend(vec![0.0; SHAPES[1]]);
    params.extend(layer(N_HIDDEN, SHAPES[2]));
    params.extend(vec![0.0; SHAPES[3]]);
    params
}

/// The logits of every sample, n × n_classes: the forward pass of [`loss`]
/// without the loss, as ordinary Rust.
fn logits(params: &[f64], data: &Data) -> Vec<f64> {
    let [w1, b1, w2, b2] = split(params);
    let n = data.len();
    let mut h = vec![0.0; n * N_HIDDEN];
    ad_runtime::matmul(&data.x, w1, &mut h, n, N_IN, N_HIDDEN);
    for row in h.chunks_mut(N_HIDDEN) {
        for (h, b) in row.iter_mut().zip(b1) {
            *h = (*h + b).tanh();
        }
    }
    let mut z = vec![0.0; n * N_CLASSES];
    ad_runtime::matmul(&h, w2, &mut z, n, N_HIDDEN, N_CLASSES);
    for row in z.chunks_mut(N_CLASSES) {
        for (z, b) in row.iter_mut().zip(b2) {
            *z += b;
        }
    }
    z
}

/// The fraction of samples whose largest logit is the one of their class.
fn accuracy(params: &[f64], data: &Data) -> f64 {
    let logits = logits(params, data);
    let correct = logits
        .chunks(N_CLASSES)
        .zip(&data.labels)
        .filter(|&(row, &label)| {
            let predicted = (0..N_CLASSES).max_by(|&a, &b| row[a].total_cmp(&row[b]));
            predicted == Some(label)
        })
        .count();
    correct as f64 / data.len() as f64
}

fn main() {
    let data = Data::iris();
    println!(
        "Iris: {} flowers, {N_IN} features, {N_CLASSES} classes; network {N_IN}-{N_HIDDEN}-{N_CLASSES}, {} parameters",
        data.len(),
        SHAPES.iter().sum::<usize>()
    );

    let mut params = initial_params();

    // Check the generated gradient against finite differences before trusting it.
    // With either activation: the `match` on it chooses the derivative too.
    for act in [Activation::Tanh, Activation::Softsign] {
        let gradient_check = check::gradient(
            |p| loss_at(p, &data, act),
            |p| loss_and_gradient(p, &data, act).1,
            &params,
        );
        println!("{act:?}: {gradient_check}");
        gradient_check.assert_within(1e-6);
    }

    // The flat parameter vector is a `Tangent` like any parameter struct: Adam
    // sizes its moments from it once, and each step updates it in place.
    let mut adam = Adam::new(&params, LEARNING_RATE);
    let initial_loss = loss_at(&params, &data, Activation::Tanh);
    let mut final_loss = initial_loss;
    for epoch in 0..=EPOCHS {
        let (value, gradient) = loss_and_gradient(&params, &data, Activation::Tanh);
        final_loss = value;
        if epoch % 20 == 0 {
            println!("epoch {epoch:4}  loss {value:.4}");
        }
        if epoch < EPOCHS {
            adam.step(&mut params, &gradient);
        }
    }
    let accuracy = accuracy(&params, &data);
    println!("training accuracy {:.1}%", 100.0 * accuracy);

    assert!(
        final_loss < 0.5 * initial_loss,
        "training did not reduce the loss enough: {initial_loss:.4} -> {final_loss:.4}"
    );
    assert!(
        accuracy > 0.9,
        "training accuracy {:.1}% is not above 90%",
        100.0 * accuracy
    );
}
