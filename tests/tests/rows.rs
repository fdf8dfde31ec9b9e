//! Buffers of rows: `pts: &[[f64; 2]]`, `m: &[[f64; D]; D]`, `&mut [[f64; 3]]`.
//! Each function is checked three ways (`check_scalar`: finite differences,
//! the dot-product test, the primal's bits; `check_jvp` for forward mode)
//! and against a closed form.
#![allow(clippy::needless_range_loop)]

use ad_runtime::{Float, differentiate};
use ad_tests::{assert_close, buffer_then_scalar, check_in_place, check_jvp, check_scalar};

/// `flat` as rows of two.
fn pairs(flat: &[f64]) -> &[[f64; 2]] {
    let (rows, rest) = flat.as_chunks::<2>();
    assert!(rest.is_empty(), "whole rows");
    rows
}

fn pairs_mut(flat: &mut [f64]) -> &mut [[f64; 2]] {
    flat.as_chunks_mut::<2>().0
}

/// The `_vjp` of a function of rows of two: the rows, their shadow, the seed.
type PairsVjp = fn(&[[f64; 2]], &mut [[f64; 2]], f64) -> f64;

/// `check_scalar` for a function of rows of two and its `_vjp`, at the flat
/// point `x`; returns the flat gradient.
fn check_pairs(f: fn(&[[f64; 2]]) -> f64, vjp: PairsVjp, x: &[f64]) -> Vec<f64> {
    check_scalar(
        |p| f(pairs(p)),
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = vjp(pairs(p), pairs_mut(&mut d), seed);
            (out, d)
        },
        x,
    )
}

/// Least squares of a line through points: rows iterated with `for`, and
/// the parameters as a plain slice.
#[differentiate(vjp, jvp)]
fn line_fit(points: &[[f64; 2]], w: &[f64]) -> f64 {
    assert!(!points.is_empty(), "no points: {points:?}");
    let mut s = 0.0;
    for p in points {
        let r = w[0] * p[0] + w[1] - p[1];
        s += r * r;
    }
    s
}

#[test]
fn rows_iterated_by_for() {
    // (points…, w0, w1): both buffers active.
    let x = [0.5, 1.0, 1.5, 2.5, -1.0, 0.25, 2.0, 3.5, 0.3, 0.1];
    let n = 8;
    let f = |p: &[f64]| line_fit(pairs(&p[..n]), &p[n..]);
    let grad = check_scalar(
        f,
        |p, seed| {
            let mut d_points = vec![0.0; n];
            let mut d_w = vec![0.0; 2];
            let out = line_fit_vjp(
                pairs(&p[..n]),
                pairs_mut(&mut d_points),
                &p[n..],
                &mut d_w,
                seed,
            );
            d_points.extend(d_w);
            (out, d_points)
        },
        &x,
    );
    check_jvp(
        f,
        |p, u| line_fit_jvp(pairs(&p[..n]), pairs(&u[..n]), &p[n..], &u[n..]),
        &grad,
        &x,
    );
    // Closed form: r = w0·px + w1 − py; ∂/∂px = 2r·w0, ∂/∂py = −2r,
    // ∂/∂w0 = Σ 2r·px, ∂/∂w1 = Σ 2r.
    let (w0, w1) = (x[n], x[n + 1]);
    let mut expected = vec![0.0; n + 2];
    for (k, p) in pairs(&x[..n]).iter().enumerate() {
        let r = w0 * p[0] + w1 - p[1];
        expected[2 * k] = 2.0 * r * w0;
        expected[2 * k + 1] = -2.0 * r;
        expected[n] += 2.0 * r * p[0];
        expected[n + 1] += 2.0 * r;
    }
    assert_close(&grad, &expected);
}

/// Rows read every way a person reads them: `pts[i][j]` in an index loop,
/// a sub-range of rows destructured, one row bound by a slice pattern, and
/// an iterator chain over the rows.
#[differentiate(vjp, jvp)]
fn rows_every_way(pts: &[[f64; 2]]) -> f64 {
    let mut s = 0.0;
    for i in 0..pts.len() {
        s += pts[i][0] * pts[i][1];
    }
    for &[a, b] in &pts[1..] {
        s += a.sin() * b;
    }
    let [x, y] = pts[0];
    let last = pts[pts.len() - 1];
    s + pts.iter().map(|q| q[0] - q[1]).sum::<f64>() + x * y * last[1]
}

#[test]
fn rows_indexed_sliced_and_destructured() {
    let x = [0.7, -1.2, 1.5, 0.4, -0.3, 2.0];
    let f = |p: &[f64]| rows_every_way(pairs(p));
    let grad = check_pairs(rows_every_way, rows_every_way_vjp, &x);
    check_jvp(f, |p, u| rows_every_way_jvp(pairs(p), pairs(u)), &grad, &x);
    let (x0, y0, x2, y2) = (x[0], x[1], x[4], x[5]);
    let mut expected = vec![0.0; 6];
    for k in 0..3 {
        let (a, b) = (x[2 * k], x[2 * k + 1]);
        expected[2 * k] += b + 1.0;
        expected[2 * k + 1] += a - 1.0;
        if k > 0 {
            expected[2 * k] += a.cos() * b;
            expected[2 * k + 1] += a.sin();
        }
    }
    expected[0] += y0 * y2;
    expected[1] += x0 * y2;
    expected[5] += x0 * y0;
    let _ = x2;
    assert_close(&grad, &expected);
}

const D: usize = 3;

/// A quadratic form with a matrix of a constant's size.
#[differentiate(vjp, jvp)]
fn quadratic_form(m: &[[f64; D]; D], x: &[f64]) -> f64 {
    assert_eq!(m.len(), x.len(), "{m:?} is {D}×{D}");
    let mut s = 0.0;
    for i in 0..D {
        for j in 0..D {
            s += x[i] * m[i][j] * x[j];
        }
    }
    s
}

#[test]
fn a_square_matrix_of_rows() {
    let p = [
        1.0, 2.0, 0.5, -1.0, 1.5, 0.25, 3.0, 0.0, 1.0, // m
        1.0, -2.0, 0.5, // x
    ];
    let to_m = |p: &[f64]| -> [[f64; D]; D] {
        let rows = p[..9].as_chunks::<D>().0;
        [rows[0], rows[1], rows[2]]
    };
    let f = |p: &[f64]| quadratic_form(&to_m(p), &p[9..]);
    let grad = check_scalar(
        f,
        |p, seed| {
            let mut d_m = [[0.0; D]; D];
            let mut d_x = vec![0.0; D];
            let out = quadratic_form_vjp(&to_m(p), &mut d_m, &p[9..], &mut d_x, seed);
            let mut d = d_m.as_flattened().to_vec();
            d.extend(d_x);
            (out, d)
        },
        &p,
    );
    check_jvp(
        f,
        |p, u| quadratic_form_jvp(&to_m(p), &to_m(u), &p[9..], &u[9..]),
        &grad,
        &p,
    );
    // ∂/∂m_ij = x_i x_j, ∂/∂x = (M + Mᵀ) x.
    let (m, x) = (to_m(&p), &p[9..]);
    let mut expected = Vec::new();
    for i in 0..D {
        for j in 0..D {
            expected.push(x[i] * x[j]);
        }
    }
    for i in 0..D {
        expected.push((0..D).map(|j| (m[i][j] + m[j][i]) * x[j]).sum());
    }
    assert_close(&grad, &expected);
}

/// Generic over the float type, rows walked by `enumerate`.
#[differentiate]
fn weighted_products<T: Float>(pts: &[[T; 2]]) -> T {
    let mut s = T::ZERO;
    for (i, p) in pts.iter().enumerate() {
        s += p[0] * p[1] * T::from_f64(i as f64 + 1.0);
    }
    s
}

#[test]
fn generic_rows_in_f32_and_f64() {
    let x = [0.5, 1.5, -2.0, 0.25, 1.0, 3.0];
    let grad = check_pairs(weighted_products, weighted_products_vjp, &x);
    let expected: Vec<f64> = (0..6).map(|k| x[k ^ 1] * ((k / 2) as f64 + 1.0)).collect();
    assert_close(&grad, &expected);
    // f32: the same closed form, in f32.
    let p32 = [[0.5f32, 1.5], [-2.0, 0.25], [1.0, 3.0]];
    let mut d32 = [[0.0f32; 2]; 3];
    let out = weighted_products_vjp(&p32, &mut d32, 1.0);
    assert_eq!(out.to_bits(), weighted_products(&p32).to_bits());
    for (k, d) in d32.as_flattened().iter().enumerate() {
        assert!((f64::from(*d) - expected[k]).abs() < 1e-6, "{k}: {d}");
    }
}

#[differentiate(vjp, jvp)]
fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// Pairwise Coulomb energy: rows passed by value to a differentiated
/// callee, twice per call from one buffer, in a nested loop.
#[differentiate(vjp, jvp)]
fn coulomb(pts: &[[f64; 2]]) -> f64 {
    let mut e = 0.0;
    for i in 0..pts.len() {
        for j in (i + 1)..pts.len() {
            e += 1.0 / distance(pts[i], pts[j]);
        }
    }
    e
}

/// A callee taking rows, called with all of them and with a sub-range.
#[differentiate(vjp, jvp)]
fn springs(pts: &[[f64; 2]], k: f64) -> f64 {
    pts.iter()
        .zip(&pts[1..])
        .map(|(a, b)| k * distance(*a, *b).powi(2))
        .sum()
}

#[differentiate(vjp, jvp)]
fn two_calls(pts: &[[f64; 2]], k: f64) -> f64 {
    springs(pts, k) + coulomb(&pts[1..])
}

#[test]
fn rows_passed_to_differentiated_callees() {
    let x = [0.0, 0.0, 1.0, 0.5, -0.5, 2.0, 1.5, 1.0];
    let f = |p: &[f64]| coulomb(pairs(p));
    let grad = check_pairs(coulomb, coulomb_vjp, &x);
    check_jvp(f, |p, u| coulomb_jvp(pairs(p), pairs(u)), &grad, &x);
    // ∂/∂p_i Σ 1/r_ij = Σ_j (p_j − p_i) / r_ij³.
    let pts = pairs(&x);
    let mut expected = vec![0.0; x.len()];
    for i in 0..pts.len() {
        for j in 0..pts.len() {
            if i == j {
                continue;
            }
            let r = distance(pts[i], pts[j]);
            for c in 0..2 {
                expected[2 * i + c] += (pts[j][c] - pts[i][c]) / r.powi(3);
            }
        }
    }
    assert_close(&grad, &expected);

    // (pts…, k): a caller passing rows, whole and a sub-range.
    let mut p = x.to_vec();
    p.push(0.7);
    let n = x.len();
    let f = |p: &[f64]| two_calls(pairs(&p[..n]), p[n]);
    let vjp = buffer_then_scalar(|xs: &[f64], d: &mut [f64], k, seed| {
        two_calls_vjp(pairs(xs), pairs_mut(d), k, seed)
    });
    let grad = check_scalar(f, &vjp, &p);
    check_jvp(
        f,
        |p, u| two_calls_jvp(pairs(&p[..n]), pairs(&u[..n]), p[n], u[n]),
        &grad,
        &p,
    );
    // ∂/∂k: the squared lengths of the springs.
    let springs_sum: f64 = pts.windows(2).map(|w| distance(w[0], w[1]).powi(2)).sum();
    assert!((grad[n] - springs_sum).abs() < 1e-12);
}

#[test]
#[should_panic(expected = "no points: []")]
fn a_macro_sees_the_rows_as_the_function_does() {
    let mut d_w = [0.0; 2];
    line_fit_vjp(&[], &mut [], &[1.0, 0.0], &mut d_w, 1.0);
}

#[test]
fn the_split_api_reads_rows_flat() {
    let pts = [[0.0, 0.0], [1.0, 0.5], [-0.5, 2.0]];
    let (out, pullback) = coulomb_forward(&pts);
    assert_eq!(out.to_bits(), coulomb(&pts).to_bits());
    let mut flat = [0.0; 6];
    pullback(pts.as_flattened(), &mut flat, 1.0);
    let mut rows = [[0.0; 2]; 3];
    coulomb_vjp(&pts, &mut rows, 1.0);
    assert_eq!(flat, rows.as_flattened());
}

/// Rows updated in place.
#[differentiate]
fn scale_rows(pts: &mut [[f64; 2]], k: f64) {
    for p in pts.iter_mut() {
        for v in p.iter_mut() {
            *v = (*v * k).sin();
        }
    }
    pts[0][1] *= k;
}

#[test]
fn rows_updated_in_place() {
    let state = [0.3, -0.7, 1.1, 0.2];
    let k = 1.3;
    let seed = [1.0, -0.5, 0.25, 2.0];
    let adjoint = check_in_place(
        |s, k| scale_rows(pairs_mut(s), k),
        |s, d, k| scale_rows_vjp(pairs_mut(s), pairs_mut(d), k),
        &state,
        k,
        &seed,
    );
    // y_i = sin(k x_i) (times k for the second element): ∂y_i/∂x_i = k cos(k x_i).
    let mut expected: Vec<f64> = (0..4).map(|i| seed[i] * k * (k * state[i]).cos()).collect();
    expected[1] *= k;
    let d_k: f64 = (0..4)
        .map(|i| seed[i] * state[i] * (k * state[i]).cos() * if i == 1 { k } else { 1.0 })
        .sum::<f64>()
        + seed[1] * (k * state[1]).sin();
    expected.push(d_k);
    assert_close(&adjoint, &expected);
}

/// `&Vec<[f64; 2]>`, destructured by an array pattern without `&`.
#[differentiate(vjp, jvp)]
#[allow(clippy::ptr_arg)]
fn vec_of_rows(pts: &Vec<[f64; 2]>) -> f64 {
    let mut s = 0.0;
    for [a, b] in pts {
        s += a * b.exp();
    }
    s
}

#[test]
fn a_vec_of_rows() {
    let x = [0.5, -0.25, 1.5, 0.75];
    let rows = |p: &[f64]| pairs(p).to_vec();
    let f = |p: &[f64]| vec_of_rows(&rows(p));
    let grad = check_scalar(
        f,
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = vec_of_rows_vjp(&rows(p), pairs_mut(&mut d), seed);
            (out, d)
        },
        &x,
    );
    check_jvp(f, |p, u| vec_of_rows_jvp(&rows(p), pairs(u)), &grad, &x);
    let expected = [x[1].exp(), x[0] * x[1].exp(), x[3].exp(), x[2] * x[3].exp()];
    assert_close(&grad, &expected);
}

/// A polyline's length over windows of two rows, and triangles' signed
/// areas over chunks of three.
#[differentiate(vjp, jvp)]
fn polyline_and_triangles(pts: &[[f64; 2]]) -> f64 {
    let mut len = 0.0;
    for w in pts.windows(2) {
        len += distance(w[0], w[1]);
    }
    let area: f64 = pts
        .chunks_exact(3)
        .map(|t| {
            let (a, b, c) = (t[0], t[1], t[2]);
            0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
        })
        .sum();
    let ends: f64 = pts.chunks(4).map(|c| c[0][0] * c[c.len() - 1][1]).sum();
    len + area + ends
}

#[test]
fn windows_and_chunks_of_rows() {
    // Seven points: two whole triangles, chunks of four and of three.
    let x = [
        0.0, 0.0, 1.0, 0.5, -0.5, 2.0, 1.5, 1.0, 0.3, 0.9, 2.0, -1.0, 0.7, 0.2,
    ];
    let f = |p: &[f64]| polyline_and_triangles(pairs(p));
    let grad = check_pairs(polyline_and_triangles, polyline_and_triangles_vjp, &x);
    check_jvp(
        f,
        |p, u| polyline_and_triangles_jvp(pairs(p), pairs(u)),
        &grad,
        &x,
    );
    // Closed form, term by term.
    let p = pairs(&x);
    let mut expected = vec![0.0; x.len()];
    for i in 0..p.len() - 1 {
        let r = distance(p[i], p[i + 1]);
        for c in 0..2 {
            let unit = (p[i + 1][c] - p[i][c]) / r;
            expected[2 * i + c] -= unit;
            expected[2 * (i + 1) + c] += unit;
        }
    }
    for t in 0..2 {
        let (a, b, c) = (3 * t, 3 * t + 1, 3 * t + 2);
        // ½ ((bx − ax)(cy − ay) − (cx − ax)(by − ay))
        expected[2 * a] += 0.5 * (-(p[c][1] - p[a][1]) + (p[b][1] - p[a][1]));
        expected[2 * a + 1] += 0.5 * (-(p[b][0] - p[a][0]) + (p[c][0] - p[a][0]));
        expected[2 * b] += 0.5 * (p[c][1] - p[a][1]);
        expected[2 * b + 1] -= 0.5 * (p[c][0] - p[a][0]);
        expected[2 * c] -= 0.5 * (p[b][1] - p[a][1]);
        expected[2 * c + 1] += 0.5 * (p[b][0] - p[a][0]);
    }
    for (first, last) in [(0, 3), (4, 6)] {
        expected[2 * first] += p[last][1];
        expected[2 * last + 1] += p[first][0];
    }
    assert_close(&grad, &expected);
}

/// Forces accumulated in a local buffer of rows, `vec![[0.0; 2]; n]`, made
/// again in every step of a loop.
#[differentiate]
fn forces_energy(pos: &[[f64; 2]], dt: f64, steps: usize) -> f64 {
    let n = pos.len();
    let mut e = 0.0;
    for step in 0..steps {
        let mut forces = vec![[0.0; 2]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let dx = pos[j][0] - pos[i][0];
                    let dy = pos[j][1] - pos[i][1];
                    let r3 = (dx * dx + dy * dy).powf(1.5);
                    forces[i][0] += dx / r3;
                    forces[i][1] += dy / r3;
                }
            }
        }
        for f in &forces {
            e += (f[0] * f[0] + f[1] * f[1]) * dt * (step as f64 + 1.0);
        }
    }
    e
}

/// The same over flat indices: the reference.
fn forces_energy_flat(p: &[f64], dt: f64, steps: usize) -> f64 {
    let n = p.len() / 2;
    let mut e = 0.0;
    for step in 0..steps {
        let mut forces = vec![0.0; 2 * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let dx = p[2 * j] - p[2 * i];
                    let dy = p[2 * j + 1] - p[2 * i + 1];
                    let r3 = (dx * dx + dy * dy).powf(1.5);
                    forces[2 * i] += dx / r3;
                    forces[2 * i + 1] += dy / r3;
                }
            }
        }
        for f in forces.chunks(2) {
            e += (f[0] * f[0] + f[1] * f[1]) * dt * (step as f64 + 1.0);
        }
    }
    e
}

#[test]
fn a_local_buffer_of_rows_in_a_loop() {
    let x = [0.0, 0.0, 1.0, 0.5, -0.5, 2.0, 1.5, 1.0];
    let grad = check_scalar(
        |p| forces_energy(pairs(p), 0.1, 3),
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let (out, _) = forces_energy_vjp(pairs(p), pairs_mut(&mut d), 0.1, 3, seed);
            (out, d)
        },
        &x,
    );
    assert!((forces_energy(pairs(&x), 0.1, 3) - forces_energy_flat(&x, 0.1, 3)).abs() < 1e-12);
    ad_runtime::check::gradient(|p| forces_energy_flat(p, 0.1, 3), |_| grad.clone(), &x)
        .assert_within(1e-7);
}

/// Rows whose length is a constant expression, `D - 1`: it is one operand
/// wherever the flat indices use it (`len / (D - 1)`, not `len / D - 1`).
#[differentiate]
fn rows_of_an_expression(pts: &[[f64; D - 1]]) -> f64 {
    let mut s = 0.0;
    for (i, p) in pts.iter().enumerate() {
        s += p[1] * (i as f64 + 1.0) + pts.len() as f64 * p[0];
    }
    s
}

#[test]
fn a_row_length_written_as_an_expression() {
    let x = [0.5, -1.0, 2.0, 0.25, 1.5, 0.75];
    let grad = check_pairs(rows_of_an_expression, rows_of_an_expression_vjp, &x);
    assert_close(&grad, &[3.0, 1.0, 3.0, 2.0, 3.0, 3.0]);
}
