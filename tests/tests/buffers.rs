//! Buffers: slices, vectors and arrays as parameters and outputs, element reads
//! and writes, in-place updates, iteration forms, and the runtime's coarse
//! primitives. Each function is checked three ways: a closed form (or a second,
//! independent implementation), finite differences, and the dot-product test.

// The functions are written the way numeric code often is: index loops.
#![allow(
    clippy::needless_range_loop,
    clippy::ptr_arg,
    clippy::assign_op_pattern
)]

use ad_runtime::differentiate;
use ad_tests::{assert_close, buffer_then_scalar, check_in_place, check_scalar, check_vector};

/// Splits `p` into the pieces of the given lengths.
fn split<'a>(mut p: &'a [f64], lens: &[usize]) -> Vec<&'a [f64]> {
    let mut pieces = Vec::new();
    for &len in lens {
        let (head, tail) = p.split_at(len);
        pieces.push(head);
        p = tail;
    }
    assert!(p.is_empty(), "lengths cover the input");
    pieces
}

#[differentiate]
fn sum_of_squares(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        s += xs[i] * xs[i];
    }
    s
}

#[test]
fn slice_parameter_gets_its_gradient_in_the_shadow() {
    let x = [1.0, -2.0, 0.5];
    let grad = check_scalar(
        sum_of_squares,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            let out = sum_of_squares_vjp(p, &mut d, s);
            (out, d)
        },
        &x,
    );
    assert_close(&grad, &[2.0, -4.0, 1.0]);
}

#[test]
fn shadows_accumulate_and_are_not_zeroed() {
    let x = [1.0, 2.0];
    let mut d = vec![10.0, 20.0];
    sum_of_squares_vjp(&x, &mut d, 1.0);
    sum_of_squares_vjp(&x, &mut d, 0.5);
    assert_close(&d, &[10.0 + 2.0 + 1.0, 20.0 + 4.0 + 2.0]);
}

/// The extended Rosenbrock function.
#[differentiate]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

fn rosenbrock_gradient(x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for i in 0..x.len() - 1 {
        let b = x[i + 1] - x[i] * x[i];
        g[i] += -2.0 * (1.0 - x[i]) - 400.0 * x[i] * b;
        g[i + 1] += 200.0 * b;
    }
    g
}

#[test]
fn rosenbrock_over_a_slice() {
    let x = [-1.2, 1.0, 0.8, 1.3, -0.4];
    let grad = check_scalar(
        rosenbrock,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            (rosenbrock_vjp(p, &mut d, s), d)
        },
        &x,
    );
    assert_close(&grad, &rosenbrock_gradient(&x));
}

/// `y = x²` elementwise, into a new `Vec`.
#[differentiate]
fn square(x: &Vec<f64>) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        y[i] = x[i] * x[i];
    }
    y
}

fn square_vjp_closure(p: &[f64], seed: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut d = vec![0.0; p.len()];
    let out = square_vjp(&p.to_vec(), &mut d, seed);
    (out, d)
}

#[test]
fn textbook_elementwise_square_with_a_vector_seed() {
    let x = vec![1.0, 2.0, 3.0];
    let mut d_x = vec![0.0; 3];
    let y = square_vjp(&x, &mut d_x, &[10.0, 1.0, 0.1]);
    assert_eq!(y, vec![1.0, 4.0, 9.0]);
    assert_close(&d_x, &[20.0, 4.0, 0.6]);
    let adjoint = check_vector(
        |p| square(&p.to_vec()),
        square_vjp_closure,
        &x,
        &[10.0, 1.0, 0.1],
    );
    assert_close(&adjoint, &[20.0, 4.0, 0.6]);
}

#[test]
fn jacobian_rows_by_seeding_basis_vectors() {
    let x = [0.5, -1.5, 2.0];
    for row in 0..3 {
        let mut seed = [0.0; 3];
        seed[row] = 1.0;
        let (_, d) = square_vjp_closure(&x, &seed);
        let mut expected = [0.0; 3];
        expected[row] = 2.0 * x[row];
        assert_close(&d, &expected);
    }
}

/// Arrays in and out: `y = (x0 x1, x1 x2, x2 x0)`.
#[differentiate]
fn cyclic_products(x: &[f64; 3]) -> [f64; 3] {
    let mut y = [0.0; 3];
    y[0] = x[0] * x[1];
    y[1] = x[1] * x[2];
    y[2] = x[2] * x[0];
    y
}

#[test]
fn array_parameter_and_array_output() {
    let x = [0.5, -2.0, 3.0];
    let adjoint = check_vector(
        |p| cyclic_products(&[p[0], p[1], p[2]]).to_vec(),
        |p, seed| {
            let x = [p[0], p[1], p[2]];
            let mut d = [0.0; 3];
            let y = cyclic_products_vjp(&x, &mut d, &[seed[0], seed[1], seed[2]]);
            (y.to_vec(), d.to_vec())
        },
        &x,
        &[1.0, 2.0, 3.0],
    );
    // Jᵀ v with v = (1, 2, 3).
    let (a, b, c) = (x[0], x[1], x[2]);
    assert_close(&adjoint, &[b + 3.0 * c, a + 2.0 * c, 2.0 * b + 3.0 * a]);
}

/// One explicit step of `u' = -u²` in place, `steps` times.
#[differentiate]
fn decay(u: &mut [f64], dt: f64, steps: usize) {
    for _ in 0..steps {
        for i in 0..u.len() {
            u[i] = u[i] - dt * u[i] * u[i];
        }
    }
}

#[test]
fn in_place_update_takes_the_seed_in_and_gives_the_adjoint_out() {
    let (u0, dt) = ([0.5, -1.0, 2.0], 0.1);
    // One step: u' = u - dt u², so d_u = seed (1 - 2 dt u) and d_dt = -Σ seed u².
    let mut u = u0;
    let mut d_u = [1.0, 2.0, 3.0];
    let d_dt = decay_vjp(&mut u, &mut d_u, dt, 1);
    let expected: Vec<f64> = u0.iter().map(|&x| x - dt * x * x).collect();
    assert_close(&u, &expected);
    let seed = [1.0, 2.0, 3.0];
    let expected_d_u: Vec<f64> = (0..3).map(|i| seed[i] * (1.0 - 2.0 * dt * u0[i])).collect();
    assert_close(&d_u, &expected_d_u);
    assert_close(
        &[d_dt],
        &[-(0..3).map(|i| seed[i] * u0[i] * u0[i]).sum::<f64>()],
    );

    // Several steps: finite differences and the dot-product test on (u, dt) ↦ u_final.
    for steps in [0, 1, 4] {
        check_in_place(
            |u, dt| decay(u, dt, steps),
            |u, d_u, dt| decay_vjp(u, d_u, dt, steps),
            &u0,
            dt,
            &seed,
        );
    }
}

/// Explicit heat-equation time stepping with a reaction term, in place: each
/// step reads the previous step's neighbours (kept in `prev`) while it
/// overwrites the state.
#[differentiate]
fn heat(u: &mut [f64], nu: f64, steps: usize) {
    let n = u.len();
    for _ in 0..steps {
        let mut prev = u[0];
        for i in 1..n - 1 {
            let cur = u[i];
            u[i] = cur + nu * (prev - 2.0 * cur + u[i + 1]) - 0.01 * cur * cur;
            prev = cur;
        }
    }
}

#[test]
fn in_place_time_stepping() {
    let u0 = [0.0, 1.0, 0.5, -0.25, 0.75, 0.0];
    let nu = 0.2;
    let seed = [0.3, -1.0, 2.0, 0.5, 1.0, -0.7];
    let check = |steps| {
        check_in_place(
            |u, nu| heat(u, nu, steps),
            |u, d_u, nu| heat_vjp(u, d_u, nu, steps),
            &u0,
            nu,
            &seed,
        )
    };
    check(5);
    // Closed form for one step: u'_i = u_i + nu (u_{i-1} - 2 u_i + u_{i+1}) - 0.01 u_i²
    // for the interior, with the old neighbours; the ends stay.
    let adjoint = check(1);
    let mut expected = seed.to_vec();
    let mut d_nu = 0.0;
    for i in 1..5 {
        expected[i] -= seed[i];
        expected[i - 1] += seed[i] * nu;
        expected[i] += seed[i] * (1.0 - 2.0 * nu - 0.02 * u0[i]);
        expected[i + 1] += seed[i] * nu;
        d_nu += seed[i] * (u0[i - 1] - 2.0 * u0[i] + u0[i + 1]);
    }
    expected.push(d_nu);
    assert_close(&adjoint, &expected);
}

/// Compound writes: `+=`, `*=`, `-=` on elements of a `&mut` output.
#[differentiate]
fn compound_writes(x: &[f64], y: &mut [f64]) {
    for i in 0..x.len() {
        y[i] += 2.0 * x[i];
        y[i] *= x[i];
        y[i] -= x[i];
    }
}

#[test]
fn compound_element_writes() {
    let (x, y0) = ([0.5, -1.5], [1.0, 2.0]);
    let seed = [1.0, -2.0];
    let vjp = |p: &[f64], s: &[f64]| {
        let mut y = p[2..].to_vec();
        let mut d_y = s.to_vec();
        let mut d_x = vec![0.0; 2];
        compound_writes_vjp(&p[..2], &mut d_x, &mut y, &mut d_y);
        d_x.extend(d_y);
        (y, d_x)
    };
    let p = [x[0], x[1], y0[0], y0[1]];
    let adjoint = check_vector(
        |p| {
            let mut y = p[2..].to_vec();
            compound_writes(&p[..2], &mut y);
            y
        },
        vjp,
        &p,
        &seed,
    );
    // y' = (y + 2x) x - x: dy'/dx = y + 4x - 1, dy'/dy = x.
    let expected = [
        seed[0] * (y0[0] + 4.0 * x[0] - 1.0),
        seed[1] * (y0[1] + 4.0 * x[1] - 1.0),
        seed[0] * x[0],
        seed[1] * x[1],
    ];
    assert_close(&adjoint, &expected);
}

/// Overwrite-heavy: a copy smoothed in place several times (each pass reads
/// neighbours it has just overwritten), then its squared norm.
#[differentiate]
fn smoothed_energy(x: &[f64], passes: usize) -> f64 {
    let mut v = x.to_vec();
    let n = v.len();
    for _ in 0..passes {
        for i in 1..n - 1 {
            v[i] = 0.25 * v[i - 1] + 0.5 * v[i] + 0.25 * v[i + 1];
        }
        v[0] = 0.5 * v[0];
    }
    let mut s = 0.0;
    for i in 0..n {
        s += v[i] * v[i];
    }
    s
}

/// The smoothing of [`smoothed_energy`], without the energy: a linear map.
fn smooth(x: &[f64], passes: usize) -> Vec<f64> {
    let mut v = x.to_vec();
    let n = v.len();
    for _ in 0..passes {
        for i in 1..n - 1 {
            v[i] = 0.25 * v[i - 1] + 0.5 * v[i] + 0.25 * v[i + 1];
        }
        v[0] *= 0.5;
    }
    v
}

#[test]
fn buffer_rewritten_several_times_in_a_loop() {
    let x = [1.0, -0.5, 2.0, 0.25, -1.0];
    for passes in [0, 1, 3] {
        let grad = check_scalar(
            |p| smoothed_energy(p, passes),
            |p, s| {
                let mut d = vec![0.0; p.len()];
                (smoothed_energy_vjp(p, &mut d, passes, s), d)
            },
            &x,
        );
        // Closed form: v = M x, energy = |M x|², gradient = 2 Mᵀ M x, with
        // the columns of M found by smoothing basis vectors.
        let v = smooth(&x, passes);
        let expected: Vec<f64> = (0..x.len())
            .map(|j| {
                let mut e = vec![0.0; x.len()];
                e[j] = 1.0;
                let column = smooth(&e, passes);
                2.0 * column.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>()
            })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// Least squares of a polynomial (Horner) against data.
#[differentiate]
fn poly_least_squares(coeffs: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let mut loss = 0.0;
    for i in 0..xs.len() {
        let mut p = 0.0;
        for k in (0..coeffs.len()).rev() {
            p = p * xs[i] + coeffs[k];
        }
        let r = p - ys[i];
        loss += r * r;
    }
    loss
}

#[test]
fn polynomial_least_squares() {
    let xs = [-1.0, -0.3, 0.2, 0.9, 1.4];
    let ys = [0.5, 0.1, -0.2, 1.1, 2.0];
    let coeffs = [0.3, -0.7, 1.2];
    let grad = check_scalar(
        |c| poly_least_squares(c, &xs, &ys),
        |c, s| {
            let mut d = vec![0.0; c.len()];
            let mut d_xs = vec![0.0; xs.len()];
            let mut d_ys = vec![0.0; ys.len()];
            let out = poly_least_squares_vjp(c, &mut d, &xs, &mut d_xs, &ys, &mut d_ys, s);
            (out, d)
        },
        &coeffs,
    );
    // d/dc_k Σ r_i² = Σ 2 r_i x_i^k.
    let expected: Vec<f64> = (0..3)
        .map(|k| {
            xs.iter()
                .zip(&ys)
                .map(|(&x, &y)| {
                    let p = coeffs[0] + coeffs[1] * x + coeffs[2] * x * x;
                    2.0 * (p - y) * x.powi(k)
                })
                .sum()
        })
        .collect();
    assert_close(&grad, &expected);

    // All three buffers at once: finite differences and the dot-product test.
    let mut all = coeffs.to_vec();
    all.extend(xs);
    all.extend(ys);
    check_scalar(
        |p| {
            let v = split(p, &[3, 5, 5]);
            poly_least_squares(v[0], v[1], v[2])
        },
        |p, s| {
            let v = split(p, &[3, 5, 5]);
            let (mut dc, mut dx, mut dy) = (vec![0.0; 3], vec![0.0; 5], vec![0.0; 5]);
            let out = poly_least_squares_vjp(v[0], &mut dc, v[1], &mut dx, v[2], &mut dy, s);
            dc.extend(dx);
            dc.extend(dy);
            (out, dc)
        },
        &all,
    );
}

/// `wrt` makes only the listed buffers active: the others take no shadow.
#[differentiate(wrt(coeffs))]
fn poly_fit_wrt_coeffs(coeffs: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let mut loss = 0.0;
    for i in 0..xs.len() {
        let mut p = 0.0;
        for k in (0..coeffs.len()).rev() {
            p = p * xs[i] + coeffs[k];
        }
        loss += (p - ys[i]) * (p - ys[i]);
    }
    loss
}

#[test]
fn wrt_selects_buffers() {
    let (xs, ys) = ([-1.0, 0.5, 2.0], [1.0, 0.0, 3.0]);
    let c = [0.1, 0.2];
    let mut d_wrt = vec![0.0; 2];
    let out = poly_fit_wrt_coeffs_vjp(&c, &mut d_wrt, &xs, &ys, 1.0);
    assert_eq!(out, poly_fit_wrt_coeffs(&c, &xs, &ys));
    let mut d_all = vec![0.0; 2];
    let (mut d_xs, mut d_ys) = (vec![0.0; 3], vec![0.0; 3]);
    let expected = poly_least_squares_vjp(&c, &mut d_all, &xs, &mut d_xs, &ys, &mut d_ys, 1.0);
    assert_eq!(out, expected);
    assert_close(&d_wrt, &d_all);
}

/// Softmax cross-entropy written with index loops: `logsumexp(z) - z[target]`.
#[differentiate]
fn softmax_cross_entropy(logits: &[f64], target: usize) -> f64 {
    let mut max = logits[0];
    for i in 1..logits.len() {
        max = max.max(logits[i]);
    }
    let mut total = 0.0;
    for i in 0..logits.len() {
        total += (logits[i] - max).exp();
    }
    max + total.ln() - logits[target]
}

/// The same with the runtime's stable `logsumexp`.
#[differentiate]
fn softmax_cross_entropy_coarse(logits: &[f64], target: usize) -> f64 {
    ad_runtime::logsumexp(logits) - logits[target]
}

#[test]
fn softmax_cross_entropy_both_ways() {
    let z: [f64; 4] = [0.3, -1.2, 2.0, 0.7];
    let target = 2;
    let total: f64 = z.iter().map(|v| v.exp()).sum();
    let mut expected: Vec<f64> = z.iter().map(|v| v.exp() / total).collect();
    expected[target] -= 1.0;
    let loop_grad = check_scalar(
        |p| softmax_cross_entropy(p, target),
        |p, s| {
            let mut d = vec![0.0; p.len()];
            (softmax_cross_entropy_vjp(p, &mut d, target, s), d)
        },
        &z,
    );
    assert_close(&loop_grad, &expected);
    let coarse_grad = check_scalar(
        |p| softmax_cross_entropy_coarse(p, target),
        |p, s| {
            let mut d = vec![0.0; p.len()];
            (softmax_cross_entropy_coarse_vjp(p, &mut d, target, s), d)
        },
        &z,
    );
    assert_close(&coarse_grad, &expected);
}

/// A two-layer perceptron's loss, 3 → 4 (tanh) → 2 (softmax cross-entropy),
/// written with index loops. Weights are row-major.
#[differentiate]
fn mlp_loss_loops(w1: &[f64], b1: &[f64], w2: &[f64], b2: &[f64], x: &[f64], target: usize) -> f64 {
    let n_in = x.len();
    let n_hidden = b1.len();
    let n_out = b2.len();
    let mut h = vec![0.0; n_hidden];
    for j in 0..n_hidden {
        let mut acc = b1[j];
        for k in 0..n_in {
            acc += w1[j * n_in + k] * x[k];
        }
        h[j] = acc.tanh();
    }
    let mut z = vec![0.0; n_out];
    for o in 0..n_out {
        let mut acc = b2[o];
        for j in 0..n_hidden {
            acc += w2[o * n_hidden + j] * h[j];
        }
        z[o] = acc;
    }
    let mut total = 0.0;
    for o in 0..n_out {
        total += z[o].exp();
    }
    total.ln() - z[target]
}

/// The same network with the runtime's `matvec` and `logsumexp`.
#[differentiate]
fn mlp_loss_coarse(
    w1: &[f64],
    b1: &[f64],
    w2: &[f64],
    b2: &[f64],
    x: &[f64],
    target: usize,
) -> f64 {
    let n_in = x.len();
    let n_hidden = b1.len();
    let n_out = b2.len();
    let mut h = vec![0.0; n_hidden];
    ad_runtime::matvec(w1, x, &mut h, n_hidden, n_in);
    let mut a = vec![0.0; n_hidden];
    for j in 0..n_hidden {
        a[j] = (h[j] + b1[j]).tanh();
    }
    let mut z = vec![0.0; n_out];
    ad_runtime::matvec(w2, &a, &mut z, n_out, n_hidden);
    for o in 0..n_out {
        z[o] += b2[o];
    }
    ad_runtime::logsumexp(&z) - z[target]
}

/// The same network again with `matmul` (a batch of one input) and the
/// runtime's `softmax`: the loss is `-ln softmax(z)[target]`.
#[differentiate]
fn mlp_loss_matmul(
    w1: &[f64],
    b1: &[f64],
    w2: &[f64],
    b2: &[f64],
    x: &[f64],
    target: usize,
) -> f64 {
    let n_in = x.len();
    let n_hidden = b1.len();
    let n_out = b2.len();
    let mut h = vec![0.0; n_hidden];
    ad_runtime::matmul(w1, x, &mut h, n_hidden, n_in, 1);
    let mut a = vec![0.0; n_hidden];
    for (j, v) in a.iter_mut().enumerate() {
        *v = (h[j] + b1[j]).tanh();
    }
    let mut z = vec![0.0; n_out];
    ad_runtime::matmul(w2, &a, &mut z, n_out, n_hidden, 1);
    for (o, v) in z.iter_mut().enumerate() {
        *v += b2[o];
    }
    let mut p = vec![0.0; n_out];
    ad_runtime::softmax(&z, &mut p);
    -p[target].ln()
}

/// The same network on a batch of two inputs with `matmul`: `H = X W1ᵀ`
/// computed as `(W1 Xᵀ)ᵀ`, here with the inputs stored as columns.
#[differentiate]
fn mlp_batch_loss_matmul(w1: &[f64], w2: &[f64], xt: &[f64], batch: usize) -> f64 {
    let n_hidden = 4;
    let n_in = 3;
    let n_out = 2;
    let mut h = vec![0.0; n_hidden * batch];
    ad_runtime::matmul(w1, xt, &mut h, n_hidden, n_in, batch);
    let mut a = vec![0.0; n_hidden * batch];
    for i in 0..n_hidden * batch {
        a[i] = h[i].tanh();
    }
    let mut z = vec![0.0; n_out * batch];
    ad_runtime::matmul(w2, &a, &mut z, n_out, n_hidden, batch);
    let mut loss = 0.0;
    for b in 0..batch {
        let mut total = 0.0;
        for o in 0..n_out {
            total += z[o * batch + b].exp();
        }
        loss += total.ln() - z[b];
    }
    loss
}

const LAYERS: [usize; 5] = [12, 4, 8, 2, 3];

fn mlp_params() -> Vec<f64> {
    (0..LAYERS.iter().sum::<usize>())
        .map(|i| ((i * 37 % 17) as f64 - 8.0) / 10.0)
        .collect()
}

#[test]
fn mlp_with_index_loops_and_with_coarse_primitives() {
    let target = 1;
    type Vjp = fn(
        &[f64],
        &mut [f64],
        &[f64],
        &mut [f64],
        &[f64],
        &mut [f64],
        &[f64],
        &mut [f64],
        &[f64],
        &mut [f64],
        usize,
        f64,
    ) -> f64;
    let run = |vjp: Vjp, p: &[f64], s: f64| {
        let v = split(p, &LAYERS);
        let mut d: Vec<Vec<f64>> = LAYERS.iter().map(|&len| vec![0.0; len]).collect();
        let [d0, d1, d2, d3, d4] = d.as_mut_slice() else {
            unreachable!()
        };
        let out = vjp(v[0], d0, v[1], d1, v[2], d2, v[3], d3, v[4], d4, target, s);
        (out, d.concat())
    };
    type Loss = fn(&[f64], &[f64], &[f64], &[f64], &[f64], usize) -> f64;
    let p = mlp_params();
    // Three independent implementations of one network: loops, matvec, matmul.
    let versions: [(Loss, Vjp); 3] = [
        (mlp_loss_loops, mlp_loss_loops_vjp),
        (mlp_loss_coarse, mlp_loss_coarse_vjp),
        (mlp_loss_matmul, mlp_loss_matmul_vjp),
    ];
    let gradients: Vec<Vec<f64>> = versions
        .iter()
        .map(|&(loss, vjp)| {
            check_scalar(
                |p| {
                    let v = split(p, &LAYERS);
                    loss(v[0], v[1], v[2], v[3], v[4], target)
                },
                |p, s| run(vjp, p, s),
                &p,
            )
        })
        .collect();
    // The same gradient.
    for other in &gradients[1..] {
        for (a, b) in gradients[0].iter().zip(other) {
            assert!((a - b).abs() < 1e-12, "{:?}\n{other:?}", gradients[0]);
        }
    }
}

#[test]
fn mlp_batch_with_matmul() {
    let batch = 2;
    let p: Vec<f64> = (0..12 + 8 + 6)
        .map(|i| ((i * 29 % 13) as f64 - 6.0) / 8.0)
        .collect();
    check_scalar(
        |p| {
            let v = split(p, &[12, 8, 6]);
            mlp_batch_loss_matmul(v[0], v[1], v[2], batch)
        },
        |p, s| {
            let v = split(p, &[12, 8, 6]);
            let (mut d1, mut d2, mut dx) = (vec![0.0; 12], vec![0.0; 8], vec![0.0; 6]);
            let out =
                mlp_batch_loss_matmul_vjp(v[0], &mut d1, v[1], &mut d2, v[2], &mut dx, batch, s);
            d1.extend(d2);
            d1.extend(dx);
            (out, d1)
        },
        &p,
    );
}

/// The iteration forms: `for &x in xs.iter()`, `.enumerate()`, `.zip()`.
#[differentiate]
fn iteration_forms(xs: &[f64], ys: &[f64]) -> f64 {
    let mut s = 0.0;
    for &x in xs.iter() {
        s += x * x;
    }
    for (i, y) in ys.iter().enumerate() {
        s += y * (i as f64);
    }
    for (x, &y) in xs.iter().zip(ys) {
        s += *x * y;
    }
    for x in xs {
        s += x.sin();
    }
    s
}

#[test]
fn element_iteration_forms() {
    let (xs, ys): ([f64; 3], [f64; 2]) = ([0.5, -1.0, 2.0], [1.5, 0.25]);
    let p = [0.5, -1.0, 2.0, 1.5, 0.25];
    let grad = check_scalar(
        |p| iteration_forms(&p[..3], &p[3..]),
        |p, s| {
            let (mut dx, mut dy) = (vec![0.0; 3], vec![0.0; 2]);
            let out = iteration_forms_vjp(&p[..3], &mut dx, &p[3..], &mut dy, s);
            dx.extend(dy);
            (out, dx)
        },
        &p,
    );
    let expected = [
        2.0 * xs[0] + ys[0] + xs[0].cos(),
        2.0 * xs[1] + ys[1] + xs[1].cos(),
        2.0 * xs[2] + xs[2].cos(),
        0.0 + xs[0],
        1.0 + xs[1],
    ];
    assert_close(&grad, &expected);
}

/// `iter_mut()` on a local copy, and the reductions `sum` and `product`.
#[differentiate]
fn iter_mut_and_reductions(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    for e in v.iter_mut() {
        *e = *e * *e;
    }
    for (i, e) in v.iter_mut().enumerate() {
        *e += i as f64;
    }
    let s: f64 = v.iter().sum();
    s * xs.iter().product::<f64>()
}

#[test]
fn iter_mut_sum_and_product() {
    let x = [0.5, -1.5, 2.0];
    let grad = check_scalar(
        iter_mut_and_reductions,
        |p, s| {
            let mut d = vec![0.0; 3];
            (iter_mut_and_reductions_vjp(p, &mut d, s), d)
        },
        &x,
    );
    let sum: f64 = x.iter().enumerate().map(|(i, v)| v * v + i as f64).sum();
    let product: f64 = x.iter().product();
    let expected: Vec<f64> = x
        .iter()
        .map(|&v| 2.0 * v * product + sum * product / v)
        .collect();
    assert_close(&grad, &expected);
}

/// `Vec::with_capacity` and `push`, returned.
#[differentiate]
fn sines(x: &[f64]) -> Vec<f64> {
    let mut v = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        v.push(x[i].sin() * x[0]);
    }
    v
}

#[test]
fn pushed_vector_output() {
    let x = [0.5, -1.0, 2.0];
    let seed = [1.0, -2.0, 0.5];
    let adjoint = check_vector(
        sines,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            (sines_vjp(p, &mut d, s), d)
        },
        &x,
        &seed,
    );
    // y_i = sin(x_i) x_0.
    let mut expected: Vec<f64> = (0..3).map(|i| seed[i] * x[i].cos() * x[0]).collect();
    expected[0] += (0..3).map(|i| seed[i] * x[i].sin()).sum::<f64>();
    assert_close(&adjoint, &expected);
}

/// `vec![a; n]` with an active fill, `vec![…]` of values, and `.clone()`.
#[differentiate]
fn fill_and_clone(a: f64, b: f64, n: usize) -> f64 {
    let v = vec![a; n];
    let w = vec![a, b, a * b];
    let mut c = w.clone();
    c[0] = c[0] * b;
    let mut s = 0.0;
    for i in 0..n {
        s += v[i] * v[i];
    }
    s + c[0] + c[1] + c[2] + w[2]
}

#[test]
fn filled_listed_and_cloned_buffers() {
    let (a, b, n) = (1.5, -0.5, 4);
    let grad = check_scalar(
        |p| fill_and_clone(p[0], p[1], n),
        |p, s| {
            let (out, da, db) = fill_and_clone_vjp(p[0], p[1], n, s);
            (out, vec![da, db])
        },
        &[a, b],
    );
    // f = n a² + a b + b + 2 a b.
    assert_close(&grad, &[2.0 * n as f64 * a + 3.0 * b, 3.0 * a + 1.0]);
}

/// The coarse primitives called from differentiated code.
#[differentiate]
fn coarse_primitives(x: &[f64], y: &[f64], a: f64) -> f64 {
    let mut z = y.to_vec();
    ad_runtime::axpy(a, x, &mut z);
    let mut p = vec![0.0; z.len()];
    ad_runtime::softmax(&z, &mut p);
    ad_runtime::dot(x, &p) + ad_runtime::norm2(&z) + ad_runtime::sum(&z) * a
}

#[test]
fn coarse_primitives_in_differentiated_code() {
    let p = [0.5, -1.0, 2.0, 0.3, 0.8, -0.4, 0.7];
    let grad = check_scalar(
        |p| coarse_primitives(&p[..3], &p[3..6], p[6]),
        |p, s| {
            let (mut dx, mut dy) = (vec![0.0; 3], vec![0.0; 3]);
            let (out, da) = coarse_primitives_vjp(&p[..3], &mut dx, &p[3..6], &mut dy, p[6], s);
            dx.extend(dy);
            dx.push(da);
            (out, dx)
        },
        &p,
    );
    // Closed form, by hand.
    let (x, y, a) = (&p[..3], &p[3..6], p[6]);
    let z: Vec<f64> = (0..3).map(|i| y[i] + a * x[i]).collect();
    let total: f64 = z.iter().map(|v| v.exp()).sum();
    let sm: Vec<f64> = z.iter().map(|v| v.exp() / total).collect();
    let norm = z.iter().map(|v| v * v).sum::<f64>().sqrt();
    let x_dot_p: f64 = (0..3).map(|i| x[i] * sm[i]).sum();
    // d/dz of dot(x, softmax(z)) = p ⊙ (x - <x, p>).
    let d_z: Vec<f64> = (0..3)
        .map(|i| sm[i] * (x[i] - x_dot_p) + z[i] / norm + a)
        .collect();
    let mut expected: Vec<f64> = (0..3).map(|i| sm[i] + a * d_z[i]).collect();
    expected.extend(d_z.iter().copied());
    expected.push((0..3).map(|i| x[i] * d_z[i]).sum::<f64>() + z.iter().sum::<f64>());
    assert_close(&grad, &expected);
}

/// A constant buffer of indices: gathered elements.
#[differentiate]
fn gathered_squares(x: &[f64], idx: &[usize]) -> f64 {
    let mut s = 0.0;
    for k in 0..idx.len() {
        s += x[idx[k]] * x[idx[k]] * (k as f64 + 1.0);
    }
    s
}

#[test]
fn integer_buffers_are_constants() {
    let x = [0.5, -1.0, 2.0];
    let idx = [2, 0, 2];
    let grad = check_scalar(
        |p| gathered_squares(p, &idx),
        |p, s| {
            let mut d = vec![0.0; 3];
            (gathered_squares_vjp(p, &mut d, &idx, s), d)
        },
        &x,
    );
    assert_close(&grad, &[2.0 * 2.0 * x[0], 0.0, 2.0 * x[2] * (1.0 + 3.0)]);
}

/// `f32` buffers.
#[differentiate]
fn weighted_norm_f32(x: &[f32], w: f32) -> f32 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w * x[i] * x[i];
    }
    s.sqrt()
}

#[test]
fn f32_buffers() {
    let x = [0.5_f32, -1.5, 2.0];
    let mut d = [0.0_f32; 3];
    let (out, d_w) = weighted_norm_f32_vjp(&x, &mut d, 2.0, 1.0);
    let norm = (2.0_f32 * (0.25 + 2.25 + 4.0)).sqrt();
    assert!((out - norm).abs() < 1e-6);
    for i in 0..3 {
        assert!((d[i] - 2.0 * x[i] / norm).abs() < 1e-6, "{d:?}");
    }
    assert!((d_w - 6.5 / (2.0 * norm)).abs() < 1e-6);
    ad_tests::check_scalar_within(
        1e-3,
        |p| {
            let x: Vec<f32> = p[..3].iter().map(|&v| v as f32).collect();
            f64::from(weighted_norm_f32(&x, p[3] as f32))
        },
        |p, s| {
            let x: Vec<f32> = p[..3].iter().map(|&v| v as f32).collect();
            let mut d = [0.0_f32; 3];
            let (out, d_w) = weighted_norm_f32_vjp(&x, &mut d, p[3] as f32, s as f32);
            let mut grad: Vec<f64> = d.iter().map(|&v| f64::from(v)).collect();
            grad.push(f64::from(d_w));
            (f64::from(out), grad)
        },
        &[0.5, -1.5, 2.0, 2.0],
    );
}

/// A primitive's input overwritten after the call: its pullback reads a copy.
#[differentiate]
fn matvec_then_overwrite(w: &[f64], x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let mut y = vec![0.0; 2];
    ad_runtime::matvec(w, &v, &mut y, 2, 2);
    v[0] = 0.0;
    y[0] + y[1] + v[1]
}

#[test]
fn primitive_input_overwritten_after_the_call() {
    let p = [0.5, -1.0, 2.0, 0.25, 3.0, -2.0];
    let grad = check_scalar(
        |p| matvec_then_overwrite(&p[..4], &p[4..]),
        |p, s| {
            let (mut d_w, mut d_x) = (vec![0.0; 4], vec![0.0; 2]);
            let out = matvec_then_overwrite_vjp(&p[..4], &mut d_w, &p[4..], &mut d_x, s);
            d_w.extend(d_x);
            (out, d_w)
        },
        &p,
    );
    // d/dW_ij = x_j; d/dx_j = Σ_i W_ij, plus 1 for x_1.
    let (w, x) = (&p[..4], &p[4..]);
    assert_close(
        &grad,
        &[x[0], x[1], x[0], x[1], w[0] + w[2], w[1] + w[3] + 1.0],
    );
}

/// Per-row log-sum-exp of a row buffer reused by every iteration: each row's
/// contents are saved for the pullback.
#[differentiate]
fn row_logsumexp(z: &[f64], rows: usize) -> f64 {
    let mut row = vec![0.0; 3];
    let mut total = 0.0;
    for r in 0..rows {
        for j in 0..3 {
            row[j] = z[r * 3 + j];
        }
        total += ad_runtime::logsumexp(&row);
    }
    total
}

#[test]
fn primitive_in_a_loop_on_a_reused_buffer() {
    let z: Vec<f64> = (0..9).map(|i| (f64::from(i) * 0.7).sin()).collect();
    let grad = check_scalar(
        |p| row_logsumexp(p, 3),
        |p, s| {
            let mut d = vec![0.0; p.len()];
            (row_logsumexp_vjp(p, &mut d, 3, s), d)
        },
        &z,
    );
    // Each row's gradient is its softmax.
    let expected: Vec<f64> = z
        .chunks(3)
        .flat_map(|row| {
            let total: f64 = row.iter().map(|v| v.exp()).sum();
            row.iter().map(move |v| v.exp() / total)
        })
        .collect();
    assert_close(&grad, &expected);
}

/// The examples of `docs/buffers.md`.
#[differentiate]
fn energy(xs: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        s += c * xs[i] * xs[i];
    }
    s
}

#[differentiate]
fn decay_once(u: &mut [f64], dt: f64) {
    for i in 0..u.len() {
        u[i] = u[i] - dt * u[i] * u[i];
    }
}

#[test]
fn the_examples_in_the_buffers_doc() {
    let xs = [1.0, -2.0, 0.5];
    let mut d_xs = [0.0; 3];
    let (out, d_c) = energy_vjp(&xs, &mut d_xs, 3.0, 1.0);
    assert_eq!(out, energy(&xs, 3.0));
    assert_eq!(d_xs, [6.0, -12.0, 3.0]);
    assert_eq!(d_c, 1.0 + 4.0 + 0.25);
    check_scalar(
        |p| energy(&p[..3], p[3]),
        ad_tests::buffer_then_scalar(energy_vjp),
        &[1.0, -2.0, 0.5, 3.0],
    );

    let (u0, dt) = ([0.5, 2.0], 0.1);
    let mut u = u0;
    let mut d_u = [1.0, 1.0];
    let d_dt = decay_once_vjp(&mut u, &mut d_u, dt);
    let mut expected = u0;
    decay_once(&mut expected, dt);
    assert_eq!(u, expected);
    assert_close(&d_u, &[1.0 - 2.0 * dt * u0[0], 1.0 - 2.0 * dt * u0[1]]);
    assert_close(&[d_dt], &[-(u0[0] * u0[0] + u0[1] * u0[1])]);
    check_in_place(
        |u, dt| decay_once(u, dt),
        |u, d_u, dt| decay_once_vjp(u, d_u, dt),
        &u0,
        dt,
        &[1.0, -0.5],
    );
}

/// In place on `&mut Vec<f64>` and on `&mut [f64; 2]`.
#[differentiate]
fn scale_vec(v: &mut Vec<f64>, k: f64) {
    for x in v.iter_mut() {
        *x = k * *x * *x;
    }
}

#[differentiate]
fn rotate(p: &mut [f64; 2], angle: f64) {
    let c = angle.cos();
    let s = angle.sin();
    let x = p[0];
    p[0] = c * x - s * p[1];
    p[1] = s * x + c * p[1];
}

#[test]
fn in_place_on_vec_and_array_references() {
    // v_i ↦ k v_i²: d_v = seed 2 k v, d_k = Σ seed v².
    let mut v = vec![0.5, -2.0];
    let mut d_v = [1.0, 3.0];
    let d_k = scale_vec_vjp(&mut v, &mut d_v, 1.5);
    assert_close(&v, &[1.5 * 0.25, 1.5 * 4.0]);
    assert_close(&d_v, &[2.0 * 1.5 * 0.5, 3.0 * 2.0 * 1.5 * -2.0]);
    assert_close(&[d_k], &[0.25 + 3.0 * 4.0]);
    check_in_place(
        scale_vec,
        |v, d_v, k| scale_vec_vjp(v, d_v, k),
        &[0.5, -2.0],
        1.5,
        &[1.0, 3.0],
    );

    // A rotation: the adjoint is the inverse rotation of the seed, and
    // d_angle = ⟨seed, R'(θ) p⟩.
    let (p0, theta) = ([1.0, 2.0], 0.3_f64);
    let mut p = p0;
    let mut d_p = [1.0, -1.0];
    let d_angle = rotate_vjp(&mut p, &mut d_p, theta);
    let (c, s) = (theta.cos(), theta.sin());
    assert_close(&p, &[c - 2.0 * s, s + 2.0 * c]);
    assert_close(&d_p, &[c - s, -s - c]);
    assert_close(&[d_angle], &[(-s - 2.0 * c) - (c - 2.0 * s)]);
    check_in_place(
        |p, angle| {
            let mut q = [p[0], p[1]];
            rotate(&mut q, angle);
            p.copy_from_slice(&q);
        },
        |p, d_p, angle| {
            let (mut q, mut d_q) = ([p[0], p[1]], [d_p[0], d_p[1]]);
            let d_angle = rotate_vjp(&mut q, &mut d_q, angle);
            p.copy_from_slice(&q);
            d_p.copy_from_slice(&d_q);
            d_angle
        },
        &p0,
        theta,
        &[1.0, -1.0],
    );
}

/// Writes in both branches of an `if` inside a loop: no value leaves the `if`,
/// only its writes, which the adjoint `if` reverses.
#[differentiate]
fn piecewise_into(x: &[f64], y: &mut [f64]) {
    for i in 0..x.len() {
        if x[i] > 0.0 {
            y[i] = x[i] * x[i];
        } else {
            y[i] = -3.0 * x[i];
        }
    }
}

#[test]
fn writes_inside_branches() {
    let x = [1.5, -2.0, 0.5];
    let seed = [1.0, 2.0, -1.0];
    let adjoint = check_vector(
        |p| {
            let mut y = vec![7.0; 3];
            piecewise_into(p, &mut y);
            y
        },
        |p, s| {
            let mut y = vec![7.0; 3];
            let mut d_y = s.to_vec();
            let mut d_x = vec![0.0; 3];
            piecewise_into_vjp(p, &mut d_x, &mut y, &mut d_y);
            // Every element of y is overwritten: its initial value has no adjoint.
            assert_eq!(d_y, vec![0.0; 3]);
            (y, d_x)
        },
        &x,
        &seed,
    );
    assert_close(&adjoint, &[2.0 * 1.5, -6.0, -(2.0 * 0.5)]);
}

/// An element chosen by an `if` expression: the adjoint `if` only writes the
/// shadow in one branch (this panicked the macro once).
#[differentiate]
fn element_chosen_by_a_branch(xs: &[f64], c: f64) -> f64 {
    if c > 0.0 { xs[0] * c } else { xs[1] }
}

#[test]
fn an_element_chosen_by_a_branch() {
    for c in [0.5, -0.5] {
        let grad = check_scalar(
            |p| element_chosen_by_a_branch(&p[..2], p[2]),
            ad_tests::buffer_then_scalar(element_chosen_by_a_branch_vjp),
            &[1.5, -2.0, c],
        );
        let expected = if c > 0.0 {
            [c, 0.0, 1.5]
        } else {
            [0.0, 1.0, 0.0]
        };
        assert_close(&grad, &expected);
    }
}

/// `&&` guards an index: the element is read only while `i < n` (this indexed
/// past the end once, when `&&` was evaluated eagerly).
#[differentiate]
fn prefix_sum_while_large(xs: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while i < n && xs[i] * xs[i] > 0.5 {
        s += xs[i] * xs[i];
        i += 1;
    }
    s
}

#[test]
fn short_circuit_guards_an_index() {
    let xs = [1.0, -2.0, 1.5];
    let grad = check_scalar(
        |p| prefix_sum_while_large(p, 3),
        |p, s| {
            let mut d = vec![0.0; 3];
            (prefix_sum_while_large_vjp(p, &mut d, 3, s), d)
        },
        &xs,
    );
    assert_close(&grad, &[2.0, -4.0, 3.0]);
    // Stops at the small element: only the prefix before it counts.
    let ys = [1.0, 0.1, 3.0];
    let mut d = vec![0.0; 3];
    let out = prefix_sum_while_large_vjp(&ys, &mut d, 3, 1.0);
    assert_eq!(out, 1.0);
    assert_close(&d, &[2.0, 0.0, 0.0]);
}

/// Repeated reads of an element are merged until a write, a branch or a
/// call that writes the buffer comes between (`analysis/loads.rs`): each
/// read below must see the write before it.
#[differentiate]
fn reads_between_writes(x: &[f64], c: f64) -> f64 {
    let mut v = x.to_vec();
    let a = v[0] * v[0];
    v[0] = a * c;
    let b = v[0] + v[0];
    if c > 0.0 {
        v[1] = b;
    }
    let d = v[1] * v[1];
    scale_first(&mut v, c);
    a + b + d + v[0] * v[0]
}

#[differentiate]
fn scale_first(v: &mut [f64], c: f64) {
    v[0] *= c;
}

/// The same with an index computed twice, `v[i + 1]`, in a loop: merged
/// until the write between.
#[differentiate]
fn shifted_reads_between_writes(x: &[f64], c: f64) -> f64 {
    let mut v = x.to_vec();
    let mut s = 0.0;
    for i in 0..v.len() - 1 {
        s += v[i + 1] * v[i + 1];
        v[i + 1] = v[i] * c;
        s += v[i + 1] * v[i + 1];
    }
    s
}

#[test]
fn reads_at_an_index_computed_twice_see_the_write_between_them() {
    let (x, c) = ([0.7, -1.3, 0.4, 0.9], 0.8);
    let mut point = x.to_vec();
    point.push(c);
    let grad = check_scalar(
        |p| shifted_reads_between_writes(&p[..4], p[4]),
        buffer_then_scalar(shifted_reads_between_writes_vjp),
        &point,
    );
    // v_{i+1} = c v_i, so v_k = cᵏ x₀ after the writes; s adds x_{i+1}²
    // (before the write) and (c^{i+1} x₀)² for i = 0, 1, 2.
    let mut expected = vec![0.0; 5];
    for i in 0..3 {
        expected[i + 1] += 2.0 * x[i + 1];
        let p = f64::from(i32::try_from(i + 1).unwrap());
        expected[0] += 2.0 * c.powf(2.0 * p) * x[0];
        expected[4] += 2.0 * p * c.powf(2.0 * p - 1.0) * x[0] * x[0];
    }
    assert_close(&grad, &expected);
}

#[test]
fn repeated_reads_see_the_writes_between_them() {
    for (x0, x1, c) in [(0.7, -1.3, 0.9), (0.7, -1.3, -0.4)] {
        let grad = check_scalar(
            |p| reads_between_writes(&p[..2], p[2]),
            buffer_then_scalar(reads_between_writes_vjp),
            &[x0, x1, c],
        );
        // a = x₀², v₀ = a c, b = 2 a c; v₁ = b if c > 0 else x₁; then v₀ = a c².
        let (a, b) = (x0 * x0, 2.0 * x0 * x0 * c);
        let v1 = if c > 0.0 { b } else { x1 };
        let value = a + b + v1 * v1 + (a * c * c).powi(2);
        assert!((reads_between_writes(&[x0, x1], c) - value).abs() < 1e-12);
        let (dv1_dx0, dv1_dx1, dv1_dc) = if c > 0.0 {
            (4.0 * x0 * c, 0.0, 2.0 * x0 * x0)
        } else {
            (0.0, 1.0, 0.0)
        };
        let last = 2.0 * a * c * c; // d (a c²)² / d (a c²)
        let expected = [
            2.0 * x0 + 4.0 * x0 * c + 2.0 * v1 * dv1_dx0 + last * c * c * 2.0 * x0,
            2.0 * v1 * dv1_dx1,
            2.0 * x0 * x0 + 2.0 * v1 * dv1_dc + last * 2.0 * a * c,
        ];
        assert_close(&grad, &expected);
    }
}

// ---------------------------------------------------------------------------
// Temporary buffers of unknown length in loops: `Vec::new()` filled by a
// `for` that pushes in a branch, and `collect()` after a `filter`. Each is a
// buffer made before the loop (as long as the filling loop's trip count),
// the kept elements written first, and the name bound to that prefix.

/// `Σ_r |K_r| Σ K_r` over `r = 0, 1, 2`, `K_r` the `k x_i` above `r / 10`.
#[differentiate]
fn kept_by_push(x: &[f64], k: f64) -> f64 {
    let mut total = 0.0;
    for r in 0..3 {
        let mut kept = Vec::new();
        for &v in x {
            if v * k > f64::from(r) * 0.1 {
                kept.push(v * k);
            } else if v * k < -1.0 {
                total -= v;
            }
        }
        total += kept.iter().sum::<f64>() * kept.len() as f64;
    }
    total
}

/// `Σ_r Σ_{K_r} y²`, the kept elements collected after a `filter`.
#[differentiate]
fn kept_by_filter(x: &[f64], k: f64) -> f64 {
    let mut total = 0.0;
    let mut r = 0;
    while r < 3 {
        let kept: Vec<f64> = x
            .iter()
            .map(|v| v * k)
            .filter(|&v| v > f64::from(r) * 0.1)
            .collect();
        total += kept.iter().map(|v| v * v).sum::<f64>();
        r += 1;
    }
    total
}

#[test]
fn temporary_buffers_of_unknown_length_in_loops() {
    let x = [0.3, -0.7, 1.1, 0.05, 0.5, -1.6];
    let k = 0.9;
    let mut point = x.to_vec();
    point.push(k);
    let by_push = check_scalar(
        |p| kept_by_push(&p[..6], p[6]),
        buffer_then_scalar(kept_by_push_vjp),
        &point,
    );
    let by_filter = check_scalar(
        |p| kept_by_filter(&p[..6], p[6]),
        buffer_then_scalar(kept_by_filter_vjp),
        &point,
    );
    // Closed forms, round by round.
    let mut expected_push = vec![0.0; 7];
    let mut expected_filter = vec![0.0; 7];
    for r in 0..3 {
        let kept: Vec<usize> = (0..6).filter(|&i| x[i] * k > f64::from(r) * 0.1).collect();
        let count = kept.len() as f64;
        for &i in &kept {
            expected_push[i] += k * count;
            expected_push[6] += x[i] * count;
            expected_filter[i] += 2.0 * x[i] * k * k;
            expected_filter[6] += 2.0 * x[i] * x[i] * k;
        }
        for i in (0..6).filter(|&i| x[i] * k < -1.0) {
            expected_push[i] -= 1.0;
        }
    }
    assert_close(&by_push, &expected_push);
    assert_close(&by_filter, &expected_filter);
}

// ---------------------------------------------------------------------------
// Copies of views made in a loop or a branch: a sub-slice, a window, a chunk
// (whose last one is shorter), each `to_vec()`-ed where it is used.

#[differentiate(vjp, jvp)]
fn copied_views(a: f64, xs: &[f64]) -> f64 {
    let head = &xs[..3];
    let mut x = a;
    if x > 0.5 {
        let v = head.to_vec();
        x += v[2];
    }
    for w in xs.windows(3) {
        let v = w.to_vec();
        x += v[0] * x;
    }
    for c in xs.chunks(2) {
        let v = c.to_vec();
        x += v[0] * x + v.iter().sum::<f64>();
    }
    x
}

#[test]
fn views_copied_in_loops_and_branches() {
    for a in [0.7, 0.2] {
        let p = [a, 0.3, -0.5, 0.9, 1.2, -0.4];
        let f = |p: &[f64]| copied_views(p[0], &p[1..]);
        let grad = check_scalar(f, ad_tests::scalar_then_buffer(copied_views_vjp), &p);
        // x ↦ x (1 + w₀) per window, x (1 + c₀) + Σ c per chunk: ∂/∂a is
        // the product of the factors.
        let xs = &p[1..];
        let factors: f64 = xs.windows(3).map(|w| 1.0 + w[0]).product::<f64>()
            * xs.chunks(2).map(|c| 1.0 + c[0]).product::<f64>();
        assert_close(&grad[..1], &[factors]);
        ad_tests::check_jvp(
            f,
            |p, u| copied_views_jvp(p[0], u[0], &p[1..], &u[1..]),
            &grad,
            &p,
        );
    }
}

/// A `Vec` filled by pushes in a branch and in a loop, then a closure with a
/// chain inside it: the chain's loop carries the position of the next push,
/// which the closure leaves as it found it.
#[differentiate(vjp, jvp)]
fn pushed_then_windows(a: f64, xs: &[f64]) -> f64 {
    let mut s = a;
    if a > 0.0 {
        let mut v = Vec::new();
        for &e in xs {
            v.push(e * a);
        }
        s += v[0] * xs.windows(2).map(|w| w.iter().sum::<f64>()).sum::<f64>();
    }
    for k in 0..2 {
        let mut v = Vec::with_capacity(xs.len());
        for &e in xs {
            v.push(e + k as f64);
        }
        let pair_sum = |i: usize| xs[i..].iter().take(2).map(|x| x * v[i]).sum::<f64>();
        s += pair_sum(1) * 0.5;
    }
    s
}

#[test]
fn a_closure_with_a_chain_after_pushes_in_a_block() {
    for a in [0.6, -0.4] {
        let p = [a, 0.3, -0.5, 0.9, 1.2];
        let f = |p: &[f64]| pushed_then_windows(p[0], &p[1..]);
        let grad = check_scalar(f, ad_tests::scalar_then_buffer(pushed_then_windows_vjp), &p);
        // ∂/∂a = 1 + [a > 0] x₀ Σ windows.
        let xs = &p[1..];
        let windows: f64 = xs.windows(2).map(|w| w[0] + w[1]).sum();
        let expected = 1.0 + if a > 0.0 { xs[0] * windows } else { 0.0 };
        assert_close(&grad[..1], &[expected]);
        ad_tests::check_jvp(
            f,
            |p, u| pushed_then_windows_jvp(p[0], u[0], &p[1..], &u[1..]),
            &grad,
            &p,
        );
    }
}
