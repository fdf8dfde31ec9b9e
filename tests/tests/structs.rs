//! Parameter structs: `p: &Params` and `&self`, whose gradient is a value of
//! the same struct type (`#[derive(Tangent)]`), with nested structs, float
//! fields and buffer fields; passed on to differentiated callees. What
//! optimisers and checks use: the flat view, in-place arithmetic, checks on
//! the struct itself, `#[tangent(skip)]` fields and structs generic over
//! their float type.

// The networks index weights and activations together, as numeric code does.
#![allow(clippy::needless_range_loop)]

use ad_runtime::check::{self, Step};
use ad_runtime::{Float, Tangent, differentiate};
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
    #[differentiate(vjp, jvp)]
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

impl Layer {
    /// A method calling another with `self.response(x)`: `_vjp` calls its
    /// split API, `Self::response_forward_all(self, x)`, and the split API
    /// of this one is there for methods calling it in turn.
    #[differentiate(vjp, jvp)]
    fn fit(&self, x: f64, y: f64) -> f64 {
        let r = self.response(x) - y;
        r * r + 0.1 * self.b[0] * self.response(0.5 * x)
    }

    #[differentiate]
    fn twice(&self, x: f64) -> f64 {
        self.fit(x, 1.0) + self.fit(-x, 0.0)
    }
}

/// A layer of three weights and biases from `p[..6]`.
fn layer_of(p: &[f64]) -> Layer {
    Layer {
        w: p[..3].to_vec(),
        b: p[3..6].to_vec(),
    }
}

/// The gradient of a function of a layer and `x`, flat: weights, biases, `x`.
fn flat_gradient(d_layer: Layer, d_x: f64) -> Vec<f64> {
    let mut g = d_layer.w;
    g.extend(d_layer.b);
    g.push(d_x);
    g
}

/// A function calling a method of its parameter struct, `layer.response(x)`:
/// `Layer::response_forward_all(layer, x)`.
#[differentiate]
fn response_squared(layer: &Layer, x: f64) -> f64 {
    let r = layer.response(x);
    r * r
}

#[test]
fn a_function_calling_a_method_of_its_parameter() {
    let f = |p: &[f64]| response_squared(&layer_of(p), p[6]);
    let grad = |p: &[f64]| {
        let layer = layer_of(p);
        let mut d_layer = layer.zero();
        let (out, d_x) = response_squared_vjp(&layer, &mut d_layer, p[6], 1.0);
        assert_eq!(out, response_squared(&layer, p[6]));
        flat_gradient(d_layer, d_x)
    };
    let point = [0.5, -1.5, 2.0, 0.1, 0.2, -0.3, 0.7];
    check::gradient(f, grad, &point).assert_within(1e-7);
    check::dot_product_scalar(f, grad, &point).assert_within(1e-7);
    // d/dx = 2 r · d response/dx, the closed form of `response` above.
    let layer = layer_of(&point);
    let r = layer.response(0.7);
    let d_response: f64 = (0..3)
        .map(|j| layer.w[j] * (1.0 - (layer.w[j] * 0.7 + layer.b[j]).tanh().powi(2)))
        .sum();
    assert_close(&[grad(&point)[6]], &[2.0 * r * d_response]);
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Scale {
    a: f64,
}

impl Scale {
    /// `a xⁿ`, a method calling itself: its split API boxes its own pullback.
    #[differentiate]
    fn power(&self, x: f64, n: usize) -> f64 {
        if n == 0 {
            self.a
        } else {
            x * self.power(x, n - 1)
        }
    }
}

#[test]
fn a_method_calling_itself() {
    let f = |p: &[f64]| Scale { a: p[0] }.power(p[1], 3);
    let grad = |p: &[f64]| {
        let scale = Scale { a: p[0] };
        let mut d_scale = scale.zero();
        let (out, d_x) = scale.power_vjp(&mut d_scale, p[1], 3, 1.0);
        assert_eq!(out, scale.power(p[1], 3));
        vec![d_scale.a, d_x]
    };
    let point = [2.0, -1.5];
    check::gradient(f, grad, &point).assert_within(1e-7);
    check::dot_product_scalar(f, grad, &point).assert_within(1e-7);
    // d/da = x³, d/dx = 3 a x².
    assert_close(&grad(&point), &[-3.375, 13.5]);
}

#[test]
fn methods_calling_methods() {
    let flat = [0.5, -1.5, 2.0, 0.1, 0.2, -0.3, 0.7];
    let f = |p: &[f64]| layer_of(p).twice(p[6]);
    let grad = |p: &[f64]| {
        let layer = layer_of(p);
        let mut d_layer = layer.zero();
        let (out, d_x) = layer.twice_vjp(&mut d_layer, p[6], 1.0);
        assert_eq!(out, layer.twice(p[6]));
        flat_gradient(d_layer, d_x)
    };
    check::gradient(f, grad, &flat).assert_within(1e-7);
    check::dot_product_scalar(f, grad, &flat).assert_within(1e-7);
    // Closed form of `fit` in `y`: d/dy = −2 r.
    let layer = layer_of(&flat);
    let mut d_layer = layer.zero();
    let (_, _, d_y) = layer.fit_vjp(&mut d_layer, 0.7, 0.4, 1.0);
    assert_close(&[d_y], &[-2.0 * (layer.response(0.7) - 0.4)]);
    // `_jvp` along x and y against `_vjp`.
    let zero = layer.zero();
    let (_, t_out) = layer.fit_jvp(&zero, 0.7, 1.0, 0.4, 1.0);
    let (_, d_x, d_y) = layer.fit_vjp(&mut layer.zero(), 0.7, 0.4, 1.0);
    assert_close(&[t_out], &[d_x + d_y]);
}

// ---------------------------------------------------------------------------
// What optimisers and checks use: the flat view, in-place arithmetic, checks
// on the struct itself.

#[test]
fn the_flat_view_follows_the_declaration_order() {
    let p = network();
    assert_eq!(p.to_flat(), flatten(&p));
    assert_eq!(Tangent::len(&p), flatten(&p).len());
    assert_eq!(Mlp::from_flat(&p, &flatten(&p)), p);
    let mut q = p.zero();
    q.set_from_flat(&flatten(&p));
    assert_eq!(q, p);
    let mut visited = Vec::new();
    p.for_each_float(|x| visited.push(x));
    assert_eq!(visited, flatten(&p));
}

#[test]
fn in_place_arithmetic_on_a_struct_matches_the_flat_vector() {
    let p = network();
    let flat = flatten(&p);
    let mut q = p.clone();
    q.scale(-2.0);
    assert_eq!(
        flatten(&q),
        flat.iter().map(|x| -2.0 * x).collect::<Vec<_>>()
    );
    q.axpy(3.0, &p);
    assert_close(&flatten(&q), &flat);
    q.map_floats(|x| x * x);
    assert_eq!(flatten(&q).len(), flat.len());
    q.zip_map_floats(&p, |square, x| square - x * x);
    assert!(flatten(&q).iter().all(|d| d.abs() < 1e-12), "{q:?}");
    let expected_dot: f64 = flat.iter().map(|x| x * x).sum();
    assert_close(&[p.dot(&p)], &[expected_dot]);
    let capacity = q.hidden.w.capacity();
    q.set_zero();
    assert_eq!(q, p.zero());
    assert_eq!(q.hidden.w.capacity(), capacity);
}

#[test]
fn check_takes_the_struct_and_finds_the_wrong_field() {
    let p = network();
    let f = |p: &Mlp| loss(p, &X, 1);
    let grad = |p: &Mlp| struct_gradient(p, &X, 1, 1.0).1;
    check::gradient_with(f, grad, &p, Step::Auto).assert_within(1e-7);
    check::dot_product_scalar_with(f, grad, &p, Step::Auto).assert_within(1e-7);
    check::vjp_with(
        |p: &Mlp| [loss(p, &X, 0), loss(p, &X, 1)],
        |p: &Mlp, seed: &[f64; 2]| {
            let mut d_p = p.zero();
            let mut d_x = vec![0.0; N_IN];
            loss_vjp(p, &mut d_p, &X, &mut d_x, 0, seed[0]);
            loss_vjp(p, &mut d_p, &X, &mut d_x, 1, seed[1]);
            d_p
        },
        &p,
        Step::Relative(1e-4),
    )
    .assert_within(1e-7);

    // A gradient wrong in one field: the check points at that field's float.
    let wrong = |p: &Mlp| {
        let mut d_p = grad(p);
        d_p.output.b[1] += 0.5;
        d_p
    };
    let result = check::gradient_with(f, wrong, &p, Step::Auto);
    assert!(!result.passes(1e-3), "{result}");
    let index_of_output_b1 = N_HIDDEN * N_IN + N_HIDDEN + N_OUT * N_HIDDEN + 1;
    assert_eq!(result.index, index_of_output_b1);
}

/// A layer with sizes and a name beside its weights.
#[derive(Clone, Debug, PartialEq, Tangent)]
struct NamedLayer {
    w: Vec<f64>,
    #[tangent(skip)]
    n_in: usize,
    bias: f64,
    #[tangent(skip)]
    name: String,
}

/// `Σᵢ tanh(wᵢ x + bias)` over the first `n_in` weights: the size is read as a
/// loop bound.
#[differentiate]
fn named_response(p: &NamedLayer, x: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..p.n_in {
        s += (p.w[i] * x + p.bias).tanh();
    }
    s
}

#[test]
fn skipped_fields_are_cloned_into_the_zero_and_left_out_of_the_rest() {
    let p = NamedLayer {
        w: vec![0.5, -1.5, 2.0],
        n_in: 2,
        bias: 0.25,
        name: "hidden".to_string(),
    };
    let zero = p.zero();
    assert_eq!(
        zero,
        NamedLayer {
            w: vec![0.0; 3],
            n_in: 2,
            bias: 0.0,
            name: "hidden".to_string()
        }
    );
    assert_eq!(p.to_flat(), [0.5, -1.5, 2.0, 0.25]);
    assert_eq!(Tangent::len(&p), 4);
    let mut q = p.clone();
    q.add_scaled(2.0, &p);
    q.set_zero();
    q.scale(3.0);
    assert_eq!((q.n_in, q.name.as_str()), (2, "hidden"));
    assert_eq!(
        NamedLayer::from_flat(&p, &[1.0, 2.0, 3.0, 4.0]).name,
        "hidden"
    );

    let mut d_p = p.zero();
    let (_, d_x) = named_response_vjp(&p, &mut d_p, 0.7, 1.0);
    // Only the first `n_in` weights are read: the third gets no gradient.
    assert_eq!(d_p.w[2], 0.0);
    assert_eq!((d_p.n_in, d_p.name.as_str()), (2, "hidden"));
    let f = |p: &NamedLayer| named_response(p, 0.7);
    let grad = |p: &NamedLayer| {
        let mut d_p = p.zero();
        named_response_vjp(p, &mut d_p, 0.7, 1.0);
        d_p
    };
    check::gradient_with(f, grad, &p, Step::Auto).assert_within(1e-8);
    let expected_d_x: f64 = (0..2)
        .map(|i| p.w[i] * (1.0 - (p.w[i] * 0.7 + p.bias).tanh().powi(2)))
        .sum();
    assert_close(&[d_x], &[expected_d_x]);
}

/// A dense layer stored row by row; its row length, a skipped field, is read
/// in index arithmetic and sub-slice bounds inside the loop.
#[derive(Clone, Debug, PartialEq, Tangent)]
struct Dense {
    w: Vec<f64>,
    #[tangent(skip)]
    n_in: usize,
}

/// `Σₒ tanh(wₒ · x) + wₒ₀ / 2` over two rows.
#[differentiate]
fn dense_energy(p: &Dense, x: &[f64]) -> f64 {
    let mut s = 0.0;
    for o in 0..2 {
        let row = &p.w[o * p.n_in..(o + 1) * p.n_in];
        let z: f64 = row.iter().zip(x).map(|(w, v)| w * v).sum();
        s += z.tanh() + p.w[o * p.n_in] * 0.5;
    }
    s
}

#[test]
fn a_skipped_size_in_index_arithmetic_inside_a_loop() {
    let p = Dense {
        w: vec![0.5, -1.5, 2.0, 0.3, 0.8, -0.6],
        n_in: 3,
    };
    let x = [0.4, -0.2, 0.9];
    let mut d_p = p.zero();
    let mut d_x = [0.0; 3];
    dense_energy_vjp(&p, &mut d_p, &x, &mut d_x, 1.0);
    assert_eq!(d_p.n_in, 3, "the size is no adjoint");
    // ∂/∂w[o n + i] = (1 − tanh² zₒ) xᵢ (+ 1/2 for i = 0), ∂/∂xᵢ = Σₒ (1 − tanh² zₒ) w[o n + i].
    let mut expected_w = vec![0.0; 6];
    let mut expected_x = [0.0; 3];
    for o in 0..2 {
        let z: f64 = (0..3).map(|i| p.w[o * 3 + i] * x[i]).sum();
        let dz = 1.0 - z.tanh().powi(2);
        for i in 0..3 {
            expected_w[o * 3 + i] = dz * x[i] + if i == 0 { 0.5 } else { 0.0 };
            expected_x[i] += dz * p.w[o * 3 + i];
        }
    }
    assert_close(&d_p.w, &expected_w);
    assert_close(&d_x, &expected_x);
    let f = |p: &Dense| dense_energy(p, &x);
    let grad = |p: &Dense| {
        let mut d_p = p.zero();
        dense_energy_vjp(p, &mut d_p, &x, &mut [0.0; 3], 1.0);
        d_p
    };
    check::gradient_with(f, grad, &p, Step::Auto).assert_within(1e-8);
    // The dot-product test over the weights: <J u, 1> = <u, Jᵀ 1>.
    check::dot_product(
        |w| {
            vec![dense_energy(
                &Dense {
                    w: w.to_vec(),
                    n_in: 3,
                },
                &x,
            )]
        },
        |w, seed| {
            let q = Dense {
                w: w.to_vec(),
                n_in: 3,
            };
            let mut d_q = q.zero();
            dense_energy_vjp(&q, &mut d_q, &x, &mut [0.0; 3], seed[0]);
            d_q.w
        },
        &p.w,
    )
    .assert_within(1e-8);
}

/// A pendulum's state, read with float methods called on its fields.
#[derive(Clone, Debug, PartialEq, Tangent)]
struct Pendulum {
    theta: f64,
    omega: f64,
    drag: Vec<f64>,
}

/// `exp(θ) + hypot(ω, y) + sin(θ) · max(drag₀, ω)`: methods of float fields
/// (`p.theta.exp()`, `(p.theta).sin()`) and of a buffer field's element.
#[differentiate]
fn pendulum_energy(p: &Pendulum, y: f64) -> f64 {
    p.theta.exp() + p.omega.hypot(y) + (p.theta).sin() * p.drag[0].max(p.omega)
}

#[test]
fn float_methods_of_fields() {
    let p = Pendulum {
        theta: 0.3,
        omega: -0.7,
        drag: vec![0.2],
    };
    let y = 0.5;
    let mut d_p = p.zero();
    let (out, d_y) = pendulum_energy_vjp(&p, &mut d_p, y, 1.0);
    assert_eq!(out.to_bits(), pendulum_energy(&p, y).to_bits());
    let r = p.omega.hypot(y);
    // max(drag₀, ω) = drag₀ here.
    assert_close(
        &[d_p.theta, d_p.omega, d_p.drag[0], d_y],
        &[
            p.theta.exp() + p.theta.cos() * p.drag[0],
            p.omega / r,
            p.theta.sin(),
            y / r,
        ],
    );
    let f = |p: &Pendulum| pendulum_energy(p, y);
    let grad = |p: &Pendulum| {
        let mut d_p = p.zero();
        pendulum_energy_vjp(p, &mut d_p, y, 1.0);
        d_p
    };
    check::gradient_with(f, grad, &p, Step::Auto).assert_within(1e-8);
    check::dot_product(
        |v| {
            let q = Pendulum {
                theta: v[0],
                omega: v[1],
                drag: vec![v[2]],
            };
            vec![pendulum_energy(&q, y)]
        },
        |v, seed| {
            let q = Pendulum {
                theta: v[0],
                omega: v[1],
                drag: vec![v[2]],
            };
            let mut d_q = q.zero();
            pendulum_energy_vjp(&q, &mut d_q, y, seed[0]);
            vec![d_q.theta, d_q.omega, d_q.drag[0]]
        },
        &[p.theta, p.omega, p.drag[0]],
    )
    .assert_within(1e-8);
}

/// A layer generic over its float type: the derive needs only `T: Float`.
#[derive(Clone, Debug, PartialEq, Tangent)]
struct Lin<T: Float> {
    w: [T; 2],
    b: T,
    #[tangent(skip)]
    label: &'static str,
}

#[differentiate]
fn lin_softplus<T: Float>(p: &Lin<T>, x: T, y: T) -> T {
    (p.w[0] * x + p.w[1] * y + p.b).exp().ln_1p()
}

fn lin_gradient<T: Float>(p: &Lin<T>) -> Lin<T> {
    let mut d_p = p.zero();
    lin_softplus_vjp(p, &mut d_p, T::from_f64(0.5), T::from_f64(-2.0), T::ONE);
    d_p
}

#[test]
fn a_struct_generic_over_its_float_in_f32_and_f64() {
    let p64 = Lin {
        w: [0.3_f64, -0.7],
        b: 0.1,
        label: "lin",
    };
    let p32 = Lin {
        w: [0.3_f32, -0.7],
        b: 0.1,
        label: "lin",
    };
    let f64_loss = |p: &Lin<f64>| lin_softplus(p, 0.5, -2.0);
    let f32_loss = |p: &Lin<f32>| lin_softplus(p, 0.5, -2.0);
    check::gradient_with(f64_loss, lin_gradient, &p64, Step::Auto).assert_within(1e-8);
    check::gradient_with(f32_loss, lin_gradient, &p32, Step::Auto).assert_within(1e-3);
    check::dot_product_scalar_with(f32_loss, lin_gradient, &p32, Step::Auto).assert_within(1e-3);
    // The f32 gradient is the f64 one, rounded.
    let (g64, g32) = (lin_gradient(&p64).to_flat(), lin_gradient(&p32).to_flat());
    for (a, b) in g64.iter().zip(&g32) {
        assert!((a - f64::from(*b)).abs() < 1e-6, "{g64:?} vs {g32:?}");
    }
    assert_eq!(lin_gradient(&p32).label, "lin");
}
