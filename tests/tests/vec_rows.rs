//! Matrices written as a `Vec` of rows: `a: &[Vec<f64>]`, `&Vec<Vec<f64>>`,
//! `&mut [Vec<f64>]`. Generated code copies the rows into one flat buffer on
//! entry (and copies `&mut` rows, shadows and tangents back on exit), then
//! reads them as it reads `&[[f64; N]]`. Each function is checked against a
//! closed form, finite differences and the dot-product test (`check_scalar`,
//! `check_in_place`), forward mode against reverse mode (`check_jvp`), and
//! the split API against `_vjp`.
#![allow(clippy::needless_range_loop, clippy::ptr_arg)]

use ad_runtime::{Float, differentiate};
use ad_tests::{assert_close, check_in_place, check_jvp, check_scalar};

/// `flat` as `rows` rows.
fn rows_of(flat: &[f64], rows: usize) -> Vec<Vec<f64>> {
    flat.chunks(flat.len() / rows)
        .map(<[f64]>::to_vec)
        .collect()
}

fn flat(rows: &[Vec<f64>]) -> Vec<f64> {
    rows.concat()
}

/// A least-squares loss of `W x` against `y`: rows indexed `w[i][j]`,
/// `w.len()` and `w[i].len()`.
#[differentiate(vjp, jvp, wrt(w, x))]
fn residuals(w: &Vec<Vec<f64>>, x: &[f64], y: &[f64]) -> f64 {
    let mut loss = 0.0;
    for i in 0..w.len() {
        let mut r = -y[i];
        for j in 0..w[i].len() {
            r += w[i][j] * x[j];
        }
        loss += r * r;
    }
    loss
}

#[test]
fn rows_indexed_by_position() {
    // (W as 2 × 3, x…)
    let point = [0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 0.3, -0.7, 1.1];
    let y = [0.2, -0.4];
    let f = |p: &[f64]| residuals(&rows_of(&p[..6], 2), &p[6..], &y);
    let grad = check_scalar(
        f,
        |p, seed| {
            let w = rows_of(&p[..6], 2);
            let mut d_w = vec![vec![0.0; 3]; 2];
            let mut d_x = vec![0.0; 3];
            let out = residuals_vjp(&w, &mut d_w, &p[6..], &mut d_x, &y, seed);
            let mut grad = flat(&d_w);
            grad.extend(d_x);
            (out, grad)
        },
        &point,
    );
    check_jvp(
        f,
        |p, u| {
            residuals_jvp(
                &rows_of(&p[..6], 2),
                &rows_of(&u[..6], 2),
                &p[6..],
                &u[6..],
                &y,
            )
        },
        &grad,
        &point,
    );
    // Closed form: r_i = W_i·x − y_i; ∂/∂W_ij = 2 r_i x_j, ∂/∂x_j = Σ 2 r_i W_ij.
    let (w, x) = (rows_of(&point[..6], 2), &point[6..]);
    let r: Vec<f64> = (0..2)
        .map(|i| (0..3).map(|j| w[i][j] * x[j]).sum::<f64>() - y[i])
        .collect();
    let mut expected: Vec<f64> = (0..6).map(|k| 2.0 * r[k / 3] * x[k % 3]).collect();
    expected.extend((0..3).map(|j| (0..2).map(|i| 2.0 * r[i] * w[i][j]).sum::<f64>()));
    assert_close(&grad, &expected);
}

/// The rows iterated as users iterate them: `for row in a`, `for &v in row`,
/// `a.iter().map(…)`, and a row passed whole to an iterator chain.
#[differentiate(vjp, jvp)]
fn row_norms(a: &[Vec<f64>], s: f64) -> f64 {
    let mut total = 0.0;
    for row in a {
        let mut sq = 0.0;
        for &v in row {
            sq += v * v;
        }
        total += (sq + s * s).sqrt();
    }
    let maxima: f64 = a
        .iter()
        .map(|row| row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)))
        .sum();
    total + maxima
}

#[test]
fn rows_iterated() {
    let point = [0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 0.3, -0.7, 1.1, 0.8];
    let f = |p: &[f64]| row_norms(&rows_of(&p[..9], 3), p[9]);
    let grad = check_scalar(
        f,
        |p, seed| {
            let a = rows_of(&p[..9], 3);
            let mut d_a = vec![vec![0.0; 3]; 3];
            let (out, d_s) = row_norms_vjp(&a, &mut d_a, p[9], seed);
            let mut grad = flat(&d_a);
            grad.push(d_s);
            (out, grad)
        },
        &point,
    );
    check_jvp(
        f,
        |p, u| row_norms_jvp(&rows_of(&p[..9], 3), &rows_of(&u[..9], 3), p[9], u[9]),
        &grad,
        &point,
    );
    // Closed form: each row's norm, then the row maximum's 1.
    let a = rows_of(&point[..9], 3);
    let s = point[9];
    let mut expected = vec![0.0; 10];
    for (i, row) in a.iter().enumerate() {
        let norm = (row.iter().map(|v| v * v).sum::<f64>() + s * s).sqrt();
        for j in 0..3 {
            expected[3 * i + j] = row[j] / norm;
        }
        expected[9] += s / norm;
        let argmax = (0..3).max_by(|&p, &q| row[p].total_cmp(&row[q])).unwrap();
        expected[3 * i + argmax] += 1.0;
    }
    assert_close(&grad, &expected);
}

/// Rows updated in place: the flat copy the function writes is copied back
/// into the caller's rows, and the shadow's too.
#[differentiate(vjp, jvp)]
fn diffuse(u: &mut [Vec<f64>], k: f64) {
    for i in 0..u.len() {
        for j in 1..u[i].len() {
            u[i][j] = u[i][j] + k * (u[i][j - 1] - u[i][j]).tanh();
        }
    }
}

#[test]
fn rows_updated_in_place() {
    let state = [0.1, 0.5, -0.3, 1.0, 0.0, 0.2];
    let seed = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
    let adjoint = check_in_place(
        |s, k| {
            let mut rows = rows_of(s, 2);
            diffuse(&mut rows, k);
            *s = flat(&rows);
        },
        |s, d, k| {
            let mut rows = rows_of(s, 2);
            let mut d_rows = rows_of(d, 2);
            let d_k = diffuse_vjp(&mut rows, &mut d_rows, k);
            *s = flat(&rows);
            *d = flat(&d_rows);
            d_k
        },
        &state,
        0.7,
        &seed,
    );
    assert_eq!(adjoint.len(), 7);
    // The rows are written back: the same state as the function leaves.
    let mut by_vjp = rows_of(&state, 2);
    let mut shadow = vec![vec![0.0; 3]; 2];
    let _ = diffuse_vjp(&mut by_vjp, &mut shadow, 0.7);
    let mut by_primal = rows_of(&state, 2);
    diffuse(&mut by_primal, 0.7);
    assert_eq!(by_vjp, by_primal);
    // Forward mode updates the tangent rows in place, beside the rows.
    let mut rows = rows_of(&state, 2);
    let mut tangent = vec![vec![1.0, 0.0, 0.0], vec![0.0, 0.0, 0.0]];
    diffuse_jvp(&mut rows, &mut tangent, 0.7, 0.0);
    assert_eq!(rows, by_primal);
    // ∂u₀₁/∂u₀₀ = k (1 − tanh²(u₀₀ − u₀₁)).
    let t = (state[0] - state[1]).tanh();
    assert!((tangent[0][1] - 0.7 * (1.0 - t * t)).abs() < 1e-12);
    assert_eq!(tangent[1], [0.0; 3]);
}

/// Generic code, run in `f32`.
#[differentiate]
fn weighted<T: Float>(a: &[Vec<T>], w: &[T]) -> T {
    let mut s = T::ZERO;
    for row in a {
        for j in 0..row.len() {
            s += row[j] * w[j];
        }
    }
    s
}

#[test]
fn generic_rows_in_f32() {
    let a = vec![vec![1.0_f32, 2.0], vec![3.0, 4.0]];
    let w = [0.5_f32, -1.0];
    let mut d_a = vec![vec![0.0_f32; 2]; 2];
    let mut d_w = [0.0_f32; 2];
    let out = weighted_vjp(&a, &mut d_a, &w, &mut d_w, 1.0);
    assert_eq!(out, weighted(&a, &w));
    assert_eq!(d_a, vec![vec![0.5, -1.0], vec![0.5, -1.0]]);
    assert_eq!(d_w, [4.0, 6.0]);
}

#[test]
fn the_split_api_reads_vec_rows_flat() {
    let w = vec![vec![0.5, -1.0, 2.0], vec![0.25, 1.5, -0.5]];
    let (x, y) = ([0.3, -0.7, 1.1], [0.2, -0.4]);
    let (out, pullback) = residuals_forward(&w, &x, &y);
    assert_eq!(out, residuals(&w, &x, &y));
    // The pullback takes the rows flat, as the body reads them.
    let (mut d_w, mut d_x) = (vec![0.0; 6], vec![0.0; 3]);
    pullback(&flat(&w), &mut d_w, &x, &mut d_x, &y, 2.0);
    let (mut e_w, mut e_x) = (vec![vec![0.0; 3]; 2], vec![0.0; 3]);
    residuals_vjp(&w, &mut e_w, &x, &mut e_x, &y, 2.0);
    assert_close(&d_w, &flat(&e_w));
    assert_close(&d_x, &e_x);
}

#[test]
fn no_rows_at_all() {
    let (out, d_s) = row_norms_vjp(&[], &mut [], 0.5, 1.0);
    assert_eq!((out, d_s), (0.0, 0.0));
}

#[test]
#[should_panic(expected = "row 1 has 2 elements and row 0 has 3")]
fn rows_of_different_lengths_are_refused_by_name() {
    let a = vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0]];
    let mut d_a = vec![vec![0.0; 3], vec![0.0; 2]];
    let _ = row_norms_vjp(&a, &mut d_a, 0.5, 1.0);
}

/// A local matrix made as a `Vec` of rows, `vec![vec![0.0; n]; m]`, at the
/// top level and inside a loop: the flat `vec![0.0; m * n]`, read and
/// written by rows.
#[differentiate]
fn local_grids(x: &[f64], k: f64) -> f64 {
    let n = x.len();
    let mut outer = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            outer[i][j] = x[i] * x[j];
        }
    }
    let mut acc = 0.0;
    for row in &outer {
        acc += row.iter().sum::<f64>() * row[0];
    }
    for r in 0..2 {
        let mut grid = vec![vec![0.0; 3]; n];
        for i in 0..n {
            for j in 0..3 {
                grid[i][j] = (x[i] * k + (j + r) as f64).sin();
            }
        }
        for i in 1..grid.len() {
            for j in 0..grid[i].len() {
                acc += grid[i][j] * grid[i - 1][j];
            }
        }
    }
    acc + outer.len() as f64
}

#[test]
fn local_matrices_of_vec_rows() {
    let point = [0.3, -0.7, 1.1, 0.8];
    let grad = check_scalar(
        |p| local_grids(&p[..3], p[3]),
        ad_tests::buffer_then_scalar(local_grids_vjp),
        &point,
    );
    // Closed form of the first part, Σ_i x_i x_0 Σ_j x_i x_j = x_0 S₂ S₁
    // (S₁ = Σ x, S₂ = Σ x²), and of the grids' products.
    let (x, k) = (&point[..3], point[3]);
    let (s1, s2) = (x.iter().sum::<f64>(), x.iter().map(|v| v * v).sum::<f64>());
    let mut expected: Vec<f64> = (0..3)
        .map(|i| {
            let own = x[0] * (2.0 * x[i] * s1 + s2);
            if i == 0 { own + s2 * s1 } else { own }
        })
        .collect();
    expected.push(0.0);
    let g = |i: usize, j: usize, r: usize| (x[i] * k + (j + r) as f64).sin();
    let dg = |i: usize, j: usize, r: usize| (x[i] * k + (j + r) as f64).cos();
    for r in 0..2 {
        for i in 1..3 {
            for j in 0..3 {
                expected[i] += k * dg(i, j, r) * g(i - 1, j, r);
                expected[i - 1] += k * dg(i - 1, j, r) * g(i, j, r);
                expected[3] +=
                    x[i] * dg(i, j, r) * g(i - 1, j, r) + x[i - 1] * dg(i - 1, j, r) * g(i, j, r);
            }
        }
    }
    assert_close(&grad, &expected);
}
