//! Parameter structs: `p: &Params` and `&self`, whose gradient is a value of
//! the same struct type (`#[derive(Tangent)]`), with nested structs, float
//! fields and buffer fields; passed on to differentiated callees.

// The networks index weights and activations together, as numeric code does.
#![allow(clippy::needless_range_loop)]

use ad_runtime::{Tangent, check, differentiate};
use ad_tests::assert_close;

const N_IN: usize = 3;
const N_HIDDEN: usize = 4;
const N_OUT: usize = 2;

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Layer {
    w: Vec<f64>,
    b: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Mlp {
    hidden: Layer,
    output: Layer,
    temperature: f64,
}

/// `tanh(W x + b)` for one layer, a differentiated callee taking a struct.
#[differentiate]
fn dense_tanh(layer: &Layer, x: &[f64], h: &mut [f64], n_in: usize) {
    for j in 0..h.len() {
        let mut s = layer.b[j];
        for i in 0..n_in {
            s += layer.w[j * n_in + i] * x[i];
        }
        h[j] = s.tanh();
    }
}

/// Softmax cross-entropy of a 3-4-2 network, the whole network one parameter.
#[differentiate]
fn loss(p: &Mlp, x: &[f64], label: usize) -> f64 {
    let mut h = [0.0; N_HIDDEN];
    dense_tanh(&p.hidden, x, &mut h, N_IN);
    let mut logits = [0.0; N_OUT];
    for k in 0..N_OUT {
        let mut s = p.output.b[k];
        for j in 0..N_HIDDEN {
            s += p.output.w[k * N_HIDDEN + j] * h[j];
        }
        logits[k] = s / p.temperature;
    }
    let mut total = 0.0;
    for k in 0..N_OUT {
        total += logits[k].exp();
    }
    total.ln() - logits[label]
}

/// The same network with the weights flat in one slice: an independent
/// implementation to compare with.
#[differentiate]
fn flat_loss(w: &[f64], x: &[f64], label: usize) -> f64 {
    let b1 = N_HIDDEN * N_IN;
    let w2 = b1 + N_HIDDEN;
    let b2 = w2 + N_OUT * N_HIDDEN;
    let t = b2 + N_OUT;
    let mut h = [0.0; N_HIDDEN];
    for j in 0..N_HIDDEN {
        let mut s = w[b1 + j];
        for i in 0..N_IN {
            s += w[j * N_IN + i] * x[i];
        }
        h[j] = s.tanh();
    }
    let mut logits = [0.0; N_OUT];
    for k in 0..N_OUT {
        let mut s = w[b2 + k];
        for j in 0..N_HIDDEN {
            s += w[w2 + k * N_HIDDEN + j] * h[j];
        }
        logits[k] = s / w[t];
    }
    let mut total = 0.0;
    for k in 0..N_OUT {
        total += logits[k].exp();
    }
    total.ln() - logits[label]
}

fn flatten(p: &Mlp) -> Vec<f64> {
    let mut flat = p.hidden.w.clone();
    flat.extend(&p.hidden.b);
    flat.extend(&p.output.w);
    flat.extend(&p.output.b);
    flat.push(p.temperature);
    flat
}

fn unflatten(flat: &[f64]) -> Mlp {
    let (w1, rest) = flat.split_at(N_HIDDEN * N_IN);
    let (b1, rest) = rest.split_at(N_HIDDEN);
    let (w2, rest) = rest.split_at(N_OUT * N_HIDDEN);
    let (b2, rest) = rest.split_at(N_OUT);
    Mlp {
        hidden: Layer {
            w: w1.to_vec(),
            b: b1.to_vec(),
        },
        output: Layer {
            w: w2.to_vec(),
            b: b2.to_vec(),
        },
        temperature: rest[0],
    }
}

fn network() -> Mlp {
    let weights: Vec<f64> = (0..N_HIDDEN * N_IN + N_HIDDEN + N_OUT * N_HIDDEN + N_OUT)
        .map(|k| ((k as f64) * 0.37).sin() * 0.8)
        .collect();
    let mut flat = weights;
    flat.push(1.5);
    unflatten(&flat)
}

const X: [f64; N_IN] = [0.5, -1.2, 0.8];

/// `loss_vjp` with a fresh shadow: the gradient as a struct.
fn struct_gradient(p: &Mlp, x: &[f64], label: usize, seed: f64) -> (f64, Mlp, Vec<f64>) {
    let mut d_p = p.zero();
    let mut d_x = vec![0.0; x.len()];
    let out = loss_vjp(p, &mut d_p, x, &mut d_x, label, seed);
    (out, d_p, d_x)
}

#[test]
fn the_gradient_of_a_parameter_struct_is_a_struct() {
    let p = network();
    for label in 0..N_OUT {
        let (out, d_p, _) = struct_gradient(&p, &X, label, 1.0);
        assert_eq!(out.to_bits(), loss(&p, &X, label).to_bits());
        let f = |flat: &[f64]| loss(&unflatten(flat), &X, label);
        let grad = |flat: &[f64]| flatten(&struct_gradient(&unflatten(flat), &X, label, 1.0).1);
        check::gradient(f, grad, &flatten(&p)).assert_within(1e-7);
        check::dot_product_scalar(f, grad, &flatten(&p)).assert_within(1e-7);

        // The flat implementation gives the same gradient.
        let mut d_w = vec![0.0; flatten(&p).len()];
        let mut d_x = vec![0.0; N_IN];
        let flat_out = flat_loss_vjp(&flatten(&p), &mut d_w, &X, &mut d_x, label, 1.0);
        assert_close(&[out], &[flat_out, flat_loss(&flatten(&p), &X, label)][..1]);
        assert_eq!(flat_out, flat_loss(&flatten(&p), &X, label));
        assert_close(&flatten(&d_p), &d_w);
    }
}

#[test]
fn the_shadow_struct_accumulates_and_is_linear_in_the_seed() {
    let p = network();
    let (_, once, d_x) = struct_gradient(&p, &X, 1, 1.0);
    let mut d_p = p.zero();
    let mut d_x2 = vec![0.0; N_IN];
    loss_vjp(&p, &mut d_p, &X, &mut d_x2, 1, 1.0);
    loss_vjp(&p, &mut d_p, &X, &mut d_x2, 1, 2.0);
    let mut thrice = p.zero();
    thrice.add_scaled(3.0, &once);
    assert_close(&flatten(&d_p), &flatten(&thrice));
    assert_close(&d_x2, &d_x.iter().map(|d| 3.0 * d).collect::<Vec<_>>());
    // The inputs' gradient too: against finite differences.
    let f = |x: &[f64]| loss(&p, x, 1);
    let grad = |x: &[f64]| struct_gradient(&p, x, 1, 1.0).2;
    check::gradient(f, grad, &X).assert_within(1e-7);
}

#[test]
fn gradient_descent_on_a_struct_lowers_the_loss() {
    let mut p = network();
    let before = loss(&p, &X, 0);
    for _ in 0..50 {
        let (_, d_p, _) = struct_gradient(&p, &X, 0, 1.0);
        p.add_scaled(-0.2, &d_p);
    }
    let after = loss(&p, &X, 0);
    assert!(after < 0.5 * before, "{before} → {after}");
}

// ---------------------------------------------------------------------------
// Methods: `&self` active, or constant with `wrt`.

impl Layer {
    /// `Σⱼ tanh(wⱼ·x + bⱼ)` for a layer with one input.
    #[differentiate]
    fn response(&self, x: f64) -> f64 {
        let mut s = 0.0;
        for j in 0..self.b.len() {
            s += (self.w[j] * x + self.b[j]).tanh();
        }
        s
    }

    /// The same with the layer constant: only `x` gets an adjoint.
    #[differentiate(wrt(x))]
    fn response_in_x(&self, x: f64) -> f64 {
        let mut s = 0.0;
        for j in 0..self.b.len() {
            s += (self.w[j] * x + self.b[j]).tanh();
        }
        s
    }
}

#[test]
fn methods_with_an_active_or_a_constant_self() {
    let layer = Layer {
        w: vec![0.5, -1.5, 2.0],
        b: vec![0.1, 0.2, -0.3],
    };
    let x = 0.7;
    let mut d_layer = layer.zero();
    let (out, d_x) = layer.response_vjp(&mut d_layer, x, 1.0);
    assert_eq!(out, layer.response(x));
    // d/dwⱼ = x sech²(·), d/dbⱼ = sech²(·), d/dx = Σ wⱼ sech²(·).
    let sech2: Vec<f64> = (0..3)
        .map(|j| 1.0 - (layer.w[j] * x + layer.b[j]).tanh().powi(2))
        .collect();
    assert_close(&d_layer.w, &sech2.iter().map(|s| x * s).collect::<Vec<_>>());
    assert_close(&d_layer.b, &sech2);
    let expected_d_x: f64 = (0..3).map(|j| layer.w[j] * sech2[j]).sum();
    assert_close(&[d_x], &[expected_d_x]);

    let (out2, d_x2) = layer.response_in_x_vjp(x, 1.0);
    assert_eq!(out2, layer.response_in_x(x));
    assert_eq!(out2, out);
    assert_close(&[d_x2], &[expected_d_x]);

    let f = |p: &[f64]| {
        let layer = Layer {
            w: p[..3].to_vec(),
            b: p[3..6].to_vec(),
        };
        layer.response(p[6])
    };
    let grad = |p: &[f64]| {
        let layer = Layer {
            w: p[..3].to_vec(),
            b: p[3..6].to_vec(),
        };
        let mut d_layer = layer.zero();
        let (_, d_x) = layer.response_vjp(&mut d_layer, p[6], 1.0);
        let mut g = d_layer.w;
        g.extend(d_layer.b);
        g.push(d_x);
        g
    };
    let point = [0.5, -1.5, 2.0, 0.1, 0.2, -0.3, 0.7];
    check::gradient(f, grad, &point).assert_within(1e-7);
    check::dot_product_scalar(f, grad, &point).assert_within(1e-7);
}
