//! Loops that index buffers at an offset from their index (`w[j * m + i]`,
//! `x[i + k]`): the generated code slices such buffers once before the loop
//! (`emit/hoist.rs`). Each function is checked three ways, and against a
//! plain Rust evaluation of its closed form; the guards are checked where the
//! offset itself would fail for a loop that does not run, and an index out
//! of bounds must still panic.

#![allow(clippy::needless_range_loop)]

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_in_place, check_scalar};

/// One `tanh` layer, summed: the rows of `w` are read at `j * m + i`.
#[differentiate]
fn layer(w: &[f64], x: &[f64]) -> f64 {
    let m = x.len();
    let n = w.len() / m;
    let mut s = 0.0;
    for j in 0..n {
        let mut acc = 0.0;
        for i in 0..m {
            acc += w[j * m + i] * x[i];
        }
        s += acc.tanh();
    }
    s
}

#[test]
fn rows_of_a_matrix() {
    let (n, m) = (3, 4);
    let p: Vec<f64> = (0..n * m + m)
        .map(|k| ((k * 7 % 11) as f64 - 5.0) / 8.0)
        .collect();
    let f = |p: &[f64]| layer(&p[..n * m], &p[n * m..]);
    let grad = check_scalar(
        f,
        |p, s| {
            let (w, x) = p.split_at(n * m);
            let (mut d_w, mut d_x) = (vec![0.0; n * m], vec![0.0; m]);
            let out = layer_vjp(w, &mut d_w, x, &mut d_x, s);
            d_w.extend(d_x);
            (out, d_w)
        },
        &p,
    );
    let (w, x) = p.split_at(n * m);
    let mut expected = vec![0.0; n * m + m];
    for j in 0..n {
        let acc: f64 = (0..m).map(|i| w[j * m + i] * x[i]).sum();
        let d_acc = 1.0 - acc.tanh().powi(2);
        for i in 0..m {
            expected[j * m + i] += d_acc * x[i];
            expected[n * m + i] += d_acc * w[j * m + i];
        }
    }
    assert_close(&grad, &expected);
}

/// `‖Lx‖²` for a unit lower-triangular `L` whose strict lower part is packed
/// row after row: row `r` starts at `r (r − 1) / 2`, which underflows for
/// `r = 0`, where the inner loop does not run.
#[differentiate]
fn triangular(l: &[f64], x: &[f64]) -> f64 {
    let mut s = 0.0;
    for r in 0..x.len() {
        let mut z = x[r];
        for j in 0..r {
            z += l[r * (r - 1) / 2 + j] * x[j];
        }
        s += z * z;
    }
    s
}

#[test]
fn packed_triangular_rows() {
    let d = 4;
    let tri = d * (d - 1) / 2;
    let p: Vec<f64> = (0..tri + d)
        .map(|k| ((k * 5 % 9) as f64 - 4.0) / 6.0)
        .collect();
    let f = |p: &[f64]| triangular(&p[..tri], &p[tri..]);
    let grad = check_scalar(
        f,
        |p, s| {
            let (l, x) = p.split_at(tri);
            let (mut d_l, mut d_x) = (vec![0.0; tri], vec![0.0; d]);
            let out = triangular_vjp(l, &mut d_l, x, &mut d_x, s);
            d_l.extend(d_x);
            (out, d_l)
        },
        &p,
    );
    let (l, x) = p.split_at(tri);
    let mut expected = vec![0.0; tri + d];
    for r in 0..d {
        let start = r * r.saturating_sub(1) / 2;
        let z = x[r] + (0..r).map(|j| l[start + j] * x[j]).sum::<f64>();
        expected[tri + r] += 2.0 * z;
        for j in 0..r {
            expected[start + j] += 2.0 * z * x[j];
            expected[tri + j] += 2.0 * z * l[start + j];
        }
    }
    assert_close(&grad, &expected);
}

/// A recurrence over `(1..len − k).rev()` reading `x[i + k]` and `x[i]`.
#[differentiate]
fn shifted(x: &[f64], k: usize) -> f64 {
    let mut s = 0.0;
    for i in (1..x.len() - k).rev() {
        s = 0.5 * s + x[i + k] * x[i];
    }
    s
}

#[test]
fn a_reversed_range_with_an_offset() {
    let x = [0.5, -1.0, 2.0, 0.25, 1.5, -0.75];
    for k in [0, 2, 4, 5] {
        let grad = check_scalar(
            |p| shifted(p, k),
            |p, s| {
                let mut d_x = vec![0.0; p.len()];
                let out = shifted_vjp(p, &mut d_x, k, s);
                (out, d_x)
            },
            &x,
        );
        // s = Σᵢ 0.5^(i − 1) x[i + k] x[i] over i in 1..len − k.
        let mut expected = vec![0.0; x.len()];
        for i in 1..x.len() - k {
            let weight = 0.5_f64.powi(i as i32 - 1);
            expected[i + k] += weight * x[i];
            expected[i] += weight * x[i + k];
        }
        assert_close(&grad, &expected);
    }
}

/// In place, reading `u[i]` and writing `u[i + 1]`: `u` is written in the loop
/// at another index than its other accesses, so it is not sliced (its
/// slice would be borrowed `&mut` beside them).
#[differentiate]
fn running(u: &mut [f64], a: f64) {
    for i in 0..u.len() - 1 {
        u[i + 1] += a * u[i];
    }
}

#[test]
fn in_place_at_two_offsets() {
    let u = [1.0, -0.5, 2.0, 0.25];
    let seed = [0.5, 1.0, -1.0, 2.0];
    let a = 0.7;
    let adjoint = check_in_place(
        |u, a| running(u, a),
        |u, d_u, a| running_vjp(u, d_u, a),
        &u,
        a,
        &seed,
    );
    // Backwards from the last element: each d_u[i] gains a · d_u[i + 1],
    // and d_a gathers d_u[i + 1] · u[i] with u[i] as the loop left it.
    let mut forward = u.to_vec();
    for i in 0..u.len() - 1 {
        forward[i + 1] += a * forward[i];
    }
    let mut d_u = seed.to_vec();
    let mut d_a = 0.0;
    for i in (0..u.len() - 1).rev() {
        d_a += d_u[i + 1] * forward[i];
        d_u[i] += a * d_u[i + 1];
    }
    d_u.push(d_a);
    assert_close(&adjoint, &d_u);
}

#[test]
#[should_panic(expected = "out of range")]
fn an_index_out_of_bounds_still_panics() {
    // Four rows need six packed entries; with five, the last row's slice
    // (`l[3..][..3]`) fails before its loop runs.
    let (l, x) = (vec![0.1; 5], vec![1.0; 4]);
    let (mut d_l, mut d_x) = (vec![0.0; 5], vec![0.0; 4]);
    let _ = triangular_vjp(&l, &mut d_l, &x, &mut d_x, 1.0);
}

// Twins that nothing is sliced in: their indices are multiplied by `one`
// (1 at run time), which is no `base + j`. Slicing must not change a bit of
// the output or the gradient, for any size, empty loops included.

#[differentiate]
fn layer_unsliced(w: &[f64], x: &[f64], one: usize) -> f64 {
    let m = x.len();
    let n = w.len() / m;
    let mut s = 0.0;
    for j in 0..n {
        let mut acc = 0.0;
        for i in 0..m {
            acc += w[(j * m + i) * one] * x[i];
        }
        s += acc.tanh();
    }
    s
}

#[differentiate]
fn triangular_unsliced(l: &[f64], x: &[f64], one: usize) -> f64 {
    let mut s = 0.0;
    for r in 0..x.len() {
        let mut z = x[r];
        for j in 0..r {
            z += l[(r * (r - 1) / 2 + j) * one] * x[j];
        }
        s += z * z;
    }
    s
}

#[differentiate]
fn shifted_unsliced(x: &[f64], k: usize, one: usize) -> f64 {
    let mut s = 0.0;
    for i in (1..x.len() - k).rev() {
        s = 0.5 * s + x[(i + k) * one] * x[i];
    }
    s
}

/// Deterministic values in [-1, 1).
fn values(len: usize, seed: usize) -> Vec<f64> {
    (0..len)
        .map(|k| (((k + 3) * (seed + 7) * 2_654_435_761) % 1000) as f64 / 500.0 - 1.0)
        .collect()
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn slicing_changes_no_bit() {
    for m in 1..5 {
        for n in 0..4 {
            let (w, x) = (values(n * m, m), values(m, n));
            let mut sliced = (vec![0.0; n * m], vec![0.0; m]);
            let mut plain = sliced.clone();
            let a = layer_vjp(&w, &mut sliced.0, &x, &mut sliced.1, 0.75);
            let b = layer_unsliced_vjp(&w, &mut plain.0, &x, &mut plain.1, 1, 0.75);
            assert_eq!(a.to_bits(), b.to_bits(), "layer {n}×{m}");
            assert_eq!(b.to_bits(), layer_unsliced(&w, &x, 1).to_bits());
            assert_eq!(bits(&sliced.0), bits(&plain.0), "layer {n}×{m}");
            assert_eq!(bits(&sliced.1), bits(&plain.1), "layer {n}×{m}");
        }
    }
    for d in 0..6_usize {
        let (l, x) = (values(d * d.saturating_sub(1) / 2, d), values(d, d + 1));
        let mut sliced = (vec![0.0; l.len()], vec![0.0; d]);
        let mut plain = sliced.clone();
        let a = triangular_vjp(&l, &mut sliced.0, &x, &mut sliced.1, -1.5);
        let b = triangular_unsliced_vjp(&l, &mut plain.0, &x, &mut plain.1, 1, -1.5);
        assert_eq!(a.to_bits(), b.to_bits(), "triangular {d}");
        assert_eq!(b.to_bits(), triangular_unsliced(&l, &x, 1).to_bits());
        assert_eq!(bits(&sliced.0), bits(&plain.0), "triangular {d}");
        assert_eq!(bits(&sliced.1), bits(&plain.1), "triangular {d}");
    }
    for len in 1..7 {
        let x = values(len, len);
        for k in 0..len {
            let (mut sliced, mut plain) = (vec![0.0; len], vec![0.0; len]);
            let a = shifted_vjp(&x, &mut sliced, k, 2.0);
            let b = shifted_unsliced_vjp(&x, &mut plain, k, 1, 2.0);
            assert_eq!(a.to_bits(), b.to_bits(), "shifted {len}, {k}");
            assert_eq!(b.to_bits(), shifted_unsliced(&x, k, 1).to_bits());
            assert_eq!(bits(&sliced), bits(&plain), "shifted {len}, {k}");
        }
    }
}
