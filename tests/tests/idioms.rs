//! Numeric Rust as people write it: iterator chains, closures, sub-slices,
//! tuples. Each function is checked against finite differences and the
//! dot-product test (`check_scalar`), and against a closed form or a second,
//! index-loop implementation of the same gradient.
//!
//! Linted with `clippy::pedantic` (under the workspace's `-D warnings`): the
//! generated functions must add no lint of their own. The lints allowed
//! below fire on what the functions themselves are written as.
#![warn(clippy::pedantic)]
#![allow(
    clippy::cast_precision_loss,
    clippy::float_cmp,
    clippy::many_single_char_names,
    clippy::needless_range_loop,
    clippy::needless_for_each,
    clippy::manual_assert,
    clippy::redundant_closure_for_method_calls,
    clippy::manual_memcpy,
    clippy::implicit_clone,
    clippy::cast_lossless,
    clippy::unreadable_literal,
    clippy::similar_names,
    clippy::cast_possible_truncation,
    clippy::explicit_iter_loop,
    clippy::useless_vec
)]

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_in_place, check_jvp, check_scalar};

/// Checks `f(x: &[f64]) -> f64`, its `_vjp` and its `_jvp` at `x`; returns
/// the gradient.
fn check_slice(
    f: fn(&[f64]) -> f64,
    vjp: fn(&[f64], &mut [f64], f64) -> f64,
    jvp: fn(&[f64], &[f64]) -> (f64, f64),
    x: &[f64],
) -> Vec<f64> {
    let grad = check_scalar(
        f,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            let out = vjp(p, &mut d, s);
            (out, d)
        },
        x,
    );
    check_jvp(f, jvp, &grad, x);
    grad
}

/// The `_jvp` of a function of a slice and a constant (a count, settings).
type CountedJvp<C> = fn(&[f64], &[f64], C) -> (f64, f64);

/// Checks `f(x, k)` of a slice and a constant (a count, a struct of
/// settings) three ways and returns the gradient.
fn check_counted<C: Copy>(
    f: fn(&[f64], C) -> f64,
    vjp: fn(&[f64], &mut [f64], C, f64) -> f64,
    jvp: CountedJvp<C>,
    k: C,
    x: &[f64],
) -> Vec<f64> {
    let grad = check_scalar(
        |p| f(p, k),
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = vjp(p, &mut d, k, seed);
            (out, d)
        },
        x,
    );
    check_jvp(|p| f(p, k), |p, u| jvp(p, u, k), &grad, x);
    grad
}

/// The `_vjp` of a function of two slices.
type PairVjp = fn(&[f64], &mut [f64], &[f64], &mut [f64], f64) -> f64;

/// The `_jvp` of a function of two slices.
type PairJvp = fn(&[f64], &[f64], &[f64], &[f64]) -> (f64, f64);

/// Checks `f(x: &[f64], y: &[f64]) -> f64` at `(x, y)`, its `_vjp` and its
/// `_jvp`; returns the gradient of `x` followed by that of `y`.
fn check_pair(
    f: fn(&[f64], &[f64]) -> f64,
    vjp: PairVjp,
    jvp: PairJvp,
    x: &[f64],
    y: &[f64],
) -> Vec<f64> {
    let n = x.len();
    let point: Vec<f64> = x.iter().chain(y).copied().collect();
    let grad = check_scalar(
        |p| f(&p[..n], &p[n..]),
        |p, s| {
            let mut dx = vec![0.0; n];
            let mut dy = vec![0.0; p.len() - n];
            let out = vjp(&p[..n], &mut dx, &p[n..], &mut dy, s);
            dx.extend(dy);
            (out, dx)
        },
        &point,
    );
    check_jvp(
        |p| f(&p[..n], &p[n..]),
        |p, u| jvp(&p[..n], &u[..n], &p[n..], &u[n..]),
        &grad,
        &point,
    );
    grad
}

const X: [f64; 7] = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9];
const Y: [f64; 7] = [1.1, 0.2, -0.7, 0.5, 1.9, -1.3, 0.6];

mod chains {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn dot(x: &[f64], y: &[f64]) -> f64 {
        x.iter().zip(y).map(|(a, b)| a * b).sum()
    }

    #[test]
    fn zip_map_sum_is_a_dot_product() {
        let grad = check_pair(dot, dot_vjp, dot_jvp, &X, &Y);
        let expected: Vec<f64> = Y.iter().chain(&X).copied().collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn sum_sq(x: &[f64]) -> f64 {
        x.iter().map(|v| v * v).sum::<f64>()
    }

    #[test]
    fn map_sum() {
        let grad = check_slice(sum_sq, sum_sq_vjp, sum_sq_jvp, &X);
        let expected: Vec<f64> = X.iter().map(|v| 2.0 * v).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn total(x: &[f64]) -> f64 {
        x.iter().sum()
    }

    #[differentiate(vjp, jvp)]
    fn factorial_scaled(x: f64, n: usize) -> f64 {
        let k: usize = (1..=n).product();
        let m: usize = (0..n).sum();
        x * k as f64 + m as f64
    }

    #[test]
    fn sums_start_where_std_starts() {
        // `std` sums floats from `-0.0`: the sum of nothing is `-0.0`.
        for x in [&[][..], &[-0.0], &[-0.0, -0.0], &[1.5, -0.0]] {
            let mut d = vec![0.0; x.len()];
            let out = total_vjp(x, &mut d, 1.0);
            assert_eq!(out.to_bits(), total(x).to_bits(), "{x:?}");
            assert!(d.iter().all(|&d| d == 1.0));
        }
        let (out, dx) = factorial_scaled_vjp(0.5, 4, 1.0);
        assert_eq!((out, dx), (0.5 * 24.0 + 6.0, 24.0));
    }

    #[differentiate(vjp, jvp)]
    fn copied_powi(x: &[f64]) -> f64 {
        x.iter().copied().map(|v| v.powi(3)).sum()
    }

    #[test]
    fn copied_and_powi() {
        let grad = check_slice(copied_powi, copied_powi_vjp, copied_powi_jvp, &X);
        let expected: Vec<f64> = X.iter().map(|v| 3.0 * v * v).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn rosenbrock_windows(x: &[f64]) -> f64 {
        x.windows(2)
            .map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2))
            .sum()
    }

    #[differentiate(vjp, jvp)]
    fn rosenbrock_index(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() - 1 {
            s += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
        }
        s
    }

    #[test]
    fn windows_rosenbrock_matches_the_index_loop() {
        let grad = check_slice(
            rosenbrock_windows,
            rosenbrock_windows_vjp,
            rosenbrock_windows_jvp,
            &X,
        );
        let mut d = vec![0.0; X.len()];
        rosenbrock_index_vjp(&X, &mut d, 1.0);
        assert_close(&grad, &d);
    }

    #[differentiate(vjp, jvp)]
    fn neighbours(x: &[f64]) -> f64 {
        x.iter()
            .zip(x.iter().skip(1))
            .map(|(a, b)| (b - a).powi(2))
            .sum()
    }

    #[test]
    fn zip_with_its_own_tail() {
        let grad = check_slice(neighbours, neighbours_vjp, neighbours_jvp, &X);
        let mut expected = vec![0.0; X.len()];
        for i in 0..X.len() - 1 {
            let d = 2.0 * (X[i + 1] - X[i]);
            expected[i] -= d;
            expected[i + 1] += d;
        }
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn weighted(x: &[f64]) -> f64 {
        x.iter()
            .enumerate()
            .map(|(i, &v)| (i as f64 + 1.0) * v.sin())
            .sum()
    }

    #[test]
    fn enumerate_gives_the_position() {
        let grad = check_slice(weighted, weighted_vjp, weighted_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v.cos())
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn log_sum_exp(x: &[f64]) -> f64 {
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = x.iter().map(|&v| (v - m).exp()).sum();
        m + s.ln()
    }

    #[test]
    fn fold_max_and_logsumexp() {
        let grad = check_slice(log_sum_exp, log_sum_exp_vjp, log_sum_exp_jvp, &X);
        let total: f64 = X.iter().map(|v| v.exp()).sum();
        let expected: Vec<f64> = X.iter().map(|v| v.exp() / total).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn mean_var(x: &[f64]) -> f64 {
        let n = x.len() as f64;
        let (s, q) = x.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
        let mean = s / n;
        q / n - mean * mean
    }

    #[test]
    fn fold_with_a_tuple_accumulator() {
        let grad = check_slice(mean_var, mean_var_vjp, mean_var_jvp, &X);
        let n = X.len() as f64;
        let mean = X.iter().sum::<f64>() / n;
        let expected: Vec<f64> = X.iter().map(|v| 2.0 * (v - mean) / n).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn positive_part(x: &[f64]) -> f64 {
        x.iter().filter(|&&v| v > 0.0).map(|v| v * v).sum()
    }

    #[test]
    fn filter_keeps_the_items_that_pass() {
        let grad = check_slice(positive_part, positive_part_vjp, positive_part_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| if v > 0.0 { 2.0 * v } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn count_positive(x: &[f64]) -> f64 {
        let k = x.iter().filter(|v| **v > 0.0).count();
        let s: f64 = x.iter().sum();
        s * k as f64
    }

    #[test]
    fn count_is_constant() {
        let grad = check_slice(count_positive, count_positive_vjp, count_positive_jvp, &X);
        let k = X.iter().filter(|v| **v > 0.0).count() as f64;
        assert_close(&grad, &[k; 7]);
    }

    #[differentiate(vjp, jvp)]
    fn reversed_stride(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut w = 1.0;
        for &v in x.iter().rev().step_by(2) {
            s += w * v;
            w *= 2.0;
        }
        s
    }

    #[test]
    fn rev_then_step_by_visits_from_the_end() {
        let grad = check_slice(
            reversed_stride,
            reversed_stride_vjp,
            reversed_stride_jvp,
            &X,
        );
        // Visited: x[6], x[4], x[2], x[0] with weights 1, 2, 4, 8.
        assert_close(&grad, &[8.0, 0.0, 4.0, 0.0, 2.0, 0.0, 1.0]);
    }

    #[differentiate(vjp, jvp)]
    fn range_rev_step(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in (1..x.len()).rev().step_by(3) {
            s = s * 0.5 + x[i];
        }
        s
    }

    #[test]
    fn range_rev_step_by() {
        let grad = check_slice(range_rev_step, range_rev_step_vjp, range_rev_step_jvp, &X);
        // Visited: 6, 3; s = (x6) * 0.5 + x3.
        assert_close(&grad, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5]);
    }

    #[differentiate(vjp, jvp)]
    fn skip_take(x: &[f64]) -> f64 {
        x.iter().skip(1).take(4).map(|v| v.exp()).sum()
    }

    #[test]
    fn skip_and_take() {
        let grad = check_slice(skip_take, skip_take_vjp, skip_take_jvp, &X);
        let expected: Vec<f64> = (0..7)
            .map(|i| if (1..5).contains(&i) { X[i].exp() } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn triple_zip(x: &[f64], y: &[f64]) -> f64 {
        let mut s = 0.0;
        for ((a, b), i) in x.iter().zip(y.iter()).zip(0..x.len()) {
            s += a * b * i as f64;
        }
        s
    }

    #[test]
    fn zip_of_three() {
        let grad = check_pair(triple_zip, triple_zip_vjp, triple_zip_jvp, &X, &Y);
        let mut expected: Vec<f64> = (0..7).map(|i| Y[i] * i as f64).collect();
        expected.extend((0..7).map(|i| X[i] * i as f64));
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn chunk_norms(x: &[f64]) -> f64 {
        x.chunks(3)
            .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
            .sum()
    }

    #[test]
    fn chunks_and_their_own_iterators() {
        let grad = check_slice(chunk_norms, chunk_norms_vjp, chunk_norms_jvp, &X);
        let mut expected = Vec::new();
        for c in X.chunks(3) {
            let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
            expected.extend(c.iter().map(|v| v / norm));
        }
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn matvec_rows(a: &[f64], x: &[f64]) -> f64 {
        let n = x.len();
        a.chunks_exact(n)
            .map(|row| row.iter().zip(x).map(|(r, v)| r * v).sum::<f64>().tanh())
            .sum()
    }

    #[test]
    fn chunks_exact_rows() {
        let a: Vec<f64> = (0..6).map(|k| 0.1 * k as f64 - 0.2).collect();
        let x = [0.5, -1.0, 2.0];
        let grad = check_pair(matvec_rows, matvec_rows_vjp, matvec_rows_jvp, &a, &x);
        let mut expected = vec![0.0; 9];
        for (r, row) in a.chunks_exact(3).enumerate() {
            let z: f64 = row.iter().zip(&x).map(|(r, v)| r * v).sum();
            let d = 1.0 - z.tanh().powi(2);
            for j in 0..3 {
                expected[3 * r + j] += d * x[j];
                expected[6 + j] += d * row[j];
            }
        }
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn collected(x: &[f64]) -> f64 {
        let sq: Vec<f64> = x.iter().map(|v| v.sin()).collect();
        sq.iter().zip(x).map(|(s, v)| s * v).sum()
    }

    #[test]
    fn collect_into_a_local_vec() {
        let grad = check_slice(collected, collected_vjp, collected_jvp, &X);
        let expected: Vec<f64> = X.iter().map(|v| v.sin() + v * v.cos()).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn scale_in_place(x: &mut [f64], k: f64) {
        x.iter_mut().for_each(|v| *v *= k);
    }

    #[test]
    fn for_each_on_iter_mut() {
        let state = [1.0, 2.0, -3.0];
        let seed = [0.5, -1.0, 2.0];
        let grad = ad_tests::check_in_place(
            |s, k| scale_in_place(s, k),
            |s, d, k| scale_in_place_vjp(s, d, k),
            &state,
            1.5,
            &seed,
        );
        let d_k: f64 = state.iter().zip(&seed).map(|(s, d)| s * d).sum();
        assert_close(&grad, &[0.75, -1.5, 3.0, d_k]);
    }
}

mod closures {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn huber_loss(x: &[f64], y: &[f64]) -> f64 {
        let delta = 1.0;
        let huber = |r: f64| {
            if r.abs() <= delta {
                0.5 * r * r
            } else {
                delta * (r.abs() - 0.5 * delta)
            }
        };
        let mut loss = 0.0;
        for i in 0..x.len() {
            loss += huber(x[i] - y[i]);
        }
        loss
    }

    #[test]
    fn a_closure_called_in_a_loop() {
        let grad = check_pair(huber_loss, huber_loss_vjp, huber_loss_jvp, &X, &Y);
        let g: Vec<f64> = X
            .iter()
            .zip(&Y)
            .map(|(a, b)| (a - b).clamp(-1.0, 1.0))
            .collect();
        let mut expected = g.clone();
        expected.extend(g.iter().map(|v| -v));
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn captured(a: f64, b: f64) -> f64 {
        let scale = a * 2.0;
        let f = move |t: f64| (scale * t).sin();
        let g = |t| f(t) * b;
        g(b) + f(a)
    }

    #[test]
    fn closures_capture_and_call_closures() {
        let (a, b) = (0.7, -0.3);
        let grad = check_scalar(
            |p| captured(p[0], p[1]),
            |p, s| {
                let (out, da, db) = captured_vjp(p[0], p[1], s);
                (out, vec![da, db])
            },
            &[a, b],
        );
        let c1 = (2.0 * a * b).cos();
        let c2 = (2.0 * a * a).cos();
        let da = c1 * 2.0 * b * b + c2 * 4.0 * a;
        let db = (2.0 * a * b).sin() + c1 * 2.0 * a * b;
        assert_close(&grad, &[da, db]);
    }

    #[differentiate(vjp, jvp)]
    fn shadowed_capture(x: f64) -> f64 {
        let k = x * x;
        let f = |t: f64| t * k;
        let k = 100.0;
        f(x) + k
    }

    #[test]
    fn a_closure_sees_what_a_name_meant_where_it_was_written() {
        let grad = check_scalar(
            |p| shadowed_capture(p[0]),
            |p, s| {
                let (out, dx) = shadowed_capture_vjp(p[0], s);
                (out, vec![dx])
            },
            &[1.3],
        );
        assert_close(&grad, &[3.0 * 1.3 * 1.3]);
    }

    #[differentiate(vjp, jvp)]
    fn polar(x: f64, y: f64) -> f64 {
        let to_polar = |x: f64, y: f64| (x.hypot(y), y.atan2(x));
        let (r, theta) = to_polar(x, y);
        r * theta.sin() + r * r * theta
    }

    #[test]
    fn a_closure_returning_a_tuple() {
        let (x, y) = (0.6, 0.8);
        check_scalar(
            |p| polar(p[0], p[1]),
            |p, s| {
                let (out, dx, dy) = polar_vjp(p[0], p[1], s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
    }
}

mod views {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn head_tail(x: &[f64]) -> f64 {
        let head = &x[..3];
        let tail = &x[3..];
        head.iter().sum::<f64>() * tail.iter().map(|v| v * v).sum::<f64>() + x[1..=2][0]
    }

    #[test]
    fn sub_slices_read_the_right_range() {
        let grad = check_slice(head_tail, head_tail_vjp, head_tail_jvp, &X);
        let h: f64 = X[..3].iter().sum();
        let t: f64 = X[3..].iter().map(|v| v * v).sum();
        let mut expected: Vec<f64> = (0..7)
            .map(|i| if i < 3 { t } else { h * 2.0 * X[i] })
            .collect();
        expected[1] += 1.0;
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn halves(x: &[f64]) -> f64 {
        let (left, right) = x.split_at(x.len() / 2);
        let mut s = 0.0;
        for (a, b) in left.iter().zip(right) {
            s += a * b;
        }
        s + right.len() as f64
    }

    #[test]
    fn split_at_gives_two_views() {
        let grad = check_slice(halves, halves_vjp, halves_jvp, &X);
        // left = x[0..3], right = x[3..7]; pairs (0,3), (1,4), (2,5).
        assert_close(&grad, &[X[3], X[4], X[5], X[0], X[1], X[2], 0.0]);
    }
}

mod tuples {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn rotate(x: f64, angle: f64) -> f64 {
        let (s, c) = angle.sin_cos();
        x * c - 2.0 * x * s
    }

    #[test]
    fn sin_cos_destructured() {
        let (x, a) = (1.5, 0.4);
        let grad = check_scalar(
            |p| rotate(p[0], p[1]),
            |p, s| {
                let (out, dx, da) = rotate_vjp(p[0], p[1], s);
                (out, vec![dx, da])
            },
            &[x, a],
        );
        assert_close(
            &grad,
            &[a.cos() - 2.0 * a.sin(), -x * a.sin() - 2.0 * x * a.cos()],
        );
    }
}

mod widths_and_generics {
    use super::*;
    use ad_runtime::Float;
    use ad_tests::check_scalar_within;

    #[differentiate(vjp, jvp)]
    fn dot32(x: &[f32], y: &[f32]) -> f32 {
        x.iter().zip(y).map(|(a, b)| a * b).sum()
    }

    #[test]
    fn f32_chains() {
        let to32 = |p: &[f64]| p.iter().map(|&v| v as f32).collect::<Vec<f32>>();
        let grad = check_scalar_within(
            1e-3,
            |p| {
                let p = to32(p);
                f64::from(dot32(&p[..3], &p[3..]))
            },
            |p, s| {
                let p = to32(p);
                let mut dx = vec![0.0_f32; 3];
                let mut dy = vec![0.0_f32; 3];
                let out = dot32_vjp(&p[..3], &mut dx, &p[3..], &mut dy, s as f32);
                dx.extend(dy);
                (f64::from(out), dx.into_iter().map(f64::from).collect())
            },
            &[0.5, -1.0, 2.0, 1.5, 0.25, -0.5],
        );
        assert_close(&grad, &[1.5, 0.25, -0.5, 0.5, -1.0, 2.0]);
    }

    #[differentiate(vjp, jvp)]
    fn soft_norm<T: Float>(x: &[T], eps: T) -> T {
        let sq = |v: T| v * v;
        (x.iter().map(|&v| sq(v)).sum::<T>() + eps).sqrt()
    }

    #[test]
    fn generic_chains_and_closures() {
        let grad = check_scalar(
            |p| soft_norm(&p[..3], p[3]),
            ad_tests::buffer_then_scalar(soft_norm_vjp),
            &[0.5, -1.0, 2.0, 0.1],
        );
        let n = (0.25_f64 + 1.0 + 4.0 + 0.1).sqrt();
        assert_close(&grad, &[0.5 / n, -1.0 / n, 2.0 / n, 0.5 / n]);
        let (out32, _) = soft_norm_vjp(&[3.0_f32, 4.0], &mut [0.0; 2], 0.0, 1.0);
        assert_eq!(out32, 5.0);
    }

    #[differentiate(vjp, jvp)]
    #[allow(clippy::redundant_closure_call)] // Written so on purpose.
    fn in_place_closure(x: f64) -> f64 {
        (|v: f64| v * v.sin())(x)
            + if x > 0.0 {
                (0..3).map(|i| x * i as f64).sum()
            } else {
                0.0
            }
    }

    #[test]
    fn closures_called_in_place_and_chains_in_branches() {
        for x in [0.7, -0.7] {
            let grad = check_scalar(
                |p| in_place_closure(p[0]),
                |p, s| {
                    let (out, dx) = in_place_closure_vjp(p[0], s);
                    (out, vec![dx])
                },
                &[x],
            );
            let branch = if x > 0.0 { 3.0 } else { 0.0 };
            assert_close(&grad, &[x.sin() + x * x.cos() + branch]);
        }
    }
}

mod macros {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    #[differentiate(vjp, jvp)]
    fn checked_norm(x: &[f64], scale: f64) -> f64 {
        assert!(!x.is_empty());
        assert!(scale.is_finite(), "scale must be finite, not {scale}");
        assert_eq!(x.len() % 2, 0, "pairs of coordinates, got {}", x.len());
        debug_assert!(scale > 0.0);
        // `x != y` names `x`, not a macro `x!`.
        assert!(scale != 0.0);
        let len = x.len();
        debug_assert!(len != 1, "a point has two coordinates");
        let s: f64 = x.iter().map(|v| v * v).sum();
        if s.is_nan() {
            panic!("NaN in the input: {x:?}");
        }
        let n = (s * scale).sqrt();
        if n > 1e300 {
            eprintln!("large norm {n:.3e} for scale {:>w$}", scale, w = 8);
        }
        n
    }

    #[test]
    fn assertions_and_printing_run_in_the_primal_pass() {
        let x = [0.3, -1.2, 0.8, 2.1];
        let grad = check_scalar(
            |p| checked_norm(&p[..4], p[4]),
            |p, s| {
                let mut dx = vec![0.0; 4];
                let (out, d_scale) = checked_norm_vjp(&p[..4], &mut dx, p[4], s);
                dx.push(d_scale);
                (out, dx)
            },
            &[x[0], x[1], x[2], x[3], 2.0],
        );
        let s: f64 = x.iter().map(|v| v * v).sum();
        let n = (2.0 * s).sqrt();
        let mut expected: Vec<f64> = x.iter().map(|v| 2.0 * v / n).collect();
        expected.push(s / (2.0 * n));
        assert_close(&grad, &expected);
    }

    /// The panic message of `f`, which must panic.
    fn message(f: impl FnOnce()) -> String {
        let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("panics");
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .expect("a message")
    }

    #[test]
    fn failed_assertions_say_what_the_function_says() {
        let cases: [(&[f64], f64); 4] = [
            (&[], 1.0),
            (&[1.0, 2.0], f64::INFINITY),
            (&[1.0, 2.0, 3.0], 1.0),
            (&[f64::NAN, 1.0], 1.0),
        ];
        for (x, scale) in cases {
            let primal = message(|| {
                checked_norm(x, scale);
            });
            let vjp = message(|| {
                checked_norm_vjp(x, &mut vec![0.0; x.len()], scale, 1.0);
            });
            let forward = message(|| {
                let _ = checked_norm_forward(x, scale);
            });
            assert_eq!(vjp, primal);
            assert_eq!(forward, primal);
        }
        assert_eq!(
            message(|| {
                checked_norm(&[], 1.0);
            }),
            "assertion failed: !x.is_empty()"
        );
    }

    #[differentiate(vjp, jvp)]
    #[allow(clippy::dbg_macro)] // Written so on purpose: `dbg!` as a value.
    fn piecewise(x: f64) -> f64 {
        let y = dbg!(x * 2.0);
        match y {
            y if y.is_sign_negative() => -y,
            y if y < 10.0 => y * y,
            _ => unreachable!("x = {x} is out of range"),
        }
    }

    #[test]
    fn panics_in_arms_and_dbg_as_a_value() {
        for x in [-1.5, 2.0] {
            let grad = check_scalar(
                |p| piecewise(p[0]),
                |p, s| {
                    let (out, dx) = piecewise_vjp(p[0], s);
                    (out, vec![dx])
                },
                &[x],
            );
            assert_close(&grad, &[if x < 0.0 { -2.0 } else { 8.0 * x }]);
        }
        assert_eq!(
            message(|| {
                piecewise_vjp(6.0, 1.0);
            }),
            message(|| {
                piecewise(6.0);
            })
        );
    }
}

mod calls {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn dot_sum(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() + a[0]
    }

    #[differentiate(vjp, jvp)]
    #[allow(clippy::needless_borrow)] // Both spellings of passing `x`.
    fn self_dot(x: &[f64]) -> f64 {
        dot_sum(x, x) + dot_sum(&x, x) * 0.5
    }

    #[test]
    fn the_same_buffer_passed_twice() {
        let grad = check_slice(self_dot, self_dot_vjp, self_dot_jvp, &X);
        let mut expected: Vec<f64> = X.iter().map(|v| 3.0 * v).collect();
        expected[0] += 1.5;
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn lagged(x: &[f64]) -> f64 {
        dot_sum(x, &x[1..]) + ad_runtime::dot(&x[..2], &x[1..3])
    }

    #[test]
    fn a_buffer_passed_with_a_slice_of_itself() {
        let grad = check_slice(lagged, lagged_vjp, lagged_jvp, &X);
        // dot_sum: Σ x[i] x[i + 1] + x[0]; dot: x0 x1 + x1 x2.
        let mut expected = vec![0.0; X.len()];
        for i in 0..X.len() - 1 {
            expected[i] += X[i + 1];
            expected[i + 1] += X[i];
        }
        for i in 0..2 {
            expected[i] += X[i + 1];
            expected[i + 1] += X[i];
        }
        expected[0] += 1.0;
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn add_twice(a: &mut [f64], b: &[f64], c: &[f64]) {
        for i in 0..a.len() {
            a[i] += b[i] * c[i];
        }
    }

    #[differentiate(vjp, jvp)]
    fn square_in_place(u: &mut [f64], w: &[f64]) {
        add_twice(u, w, w);
    }

    #[test]
    fn a_buffer_passed_twice_beside_a_mut_one() {
        let grad = ad_tests::check_vector(
            |p| {
                let mut u = p[..3].to_vec();
                square_in_place(&mut u, &p[3..]);
                u
            },
            |p, s| {
                let mut u = p[..3].to_vec();
                let mut du = s.to_vec();
                let mut dw = vec![0.0; 3];
                square_in_place_vjp(&mut u, &mut du, &p[3..], &mut dw);
                du.extend(dw);
                (u, du)
            },
            &[1.0, 2.0, 3.0, 0.5, -1.0, 2.0],
            &[1.0, 1.0, 1.0],
        );
        assert_close(&grad, &[1.0, 1.0, 1.0, 1.0, -2.0, 4.0]);
    }
}

mod reductions {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    #[differentiate(vjp, jvp)]
    fn spread(x: &[f64]) -> f64 {
        let hi = x.iter().copied().max_by(|a, b| a.total_cmp(b)).unwrap();
        let lo = x.iter().copied().min_by(f64::total_cmp).expect("values");
        let prod = x.iter().copied().reduce(|a, b| a * b).unwrap_or(1.0);
        hi - lo + prod
    }

    #[test]
    fn max_by_min_by_reduce() {
        let grad = check_slice(spread, spread_vjp, spread_jvp, &X);
        let (imax, imin) = (3, 1); // 2.1 and -1.2
        let prod: f64 = X.iter().product();
        let mut expected: Vec<f64> = X.iter().map(|v| prod / v).collect();
        expected[imax] += 1.0;
        expected[imin] -= 1.0;
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn first_of_ties(x: &[f64]) -> f64 {
        let m = x
            .iter()
            .copied()
            .max_by(|a, b| a.partial_cmp(b).unwrap())
            .unwrap();
        let n = x
            .iter()
            .copied()
            .min_by(|a, b| a.partial_cmp(b).unwrap())
            .unwrap();
        3.0 * m + n
    }

    #[test]
    fn max_by_keeps_the_last_tie_and_min_by_the_first() {
        let x = [1.0, 3.0, 0.5, 3.0, 0.5];
        let mut d = vec![0.0; 5];
        let out = first_of_ties_vjp(&x, &mut d, 1.0);
        assert_eq!(out, first_of_ties(&x));
        assert_eq!(d, [0.0, 0.0, 1.0, 3.0, 0.0]);
    }

    #[test]
    fn empty_iterators_do_what_option_does() {
        let mut d = [];
        let primal = catch_unwind(|| spread(&[])).expect_err("unwrap of None");
        let vjp = catch_unwind(AssertUnwindSafe(|| spread_vjp(&[], &mut d, 1.0)))
            .expect_err("unwrap of None");
        let text = |payload: &Box<dyn std::any::Any + Send>| {
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        };
        assert_eq!(
            text(&primal).as_deref(),
            Some("called `Option::unwrap()` on a `None` value")
        );
        assert_eq!(text(&vjp), text(&primal));
    }
}

mod tuple_calls {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn polar(x: f64, y: f64) -> (f64, f64) {
        (x.hypot(y), y.atan2(x))
    }

    #[differentiate(vjp, jvp)]
    fn spiral(x: f64, y: f64) -> f64 {
        let (r, theta) = polar(x, y);
        r * theta.sin() + r.ln()
    }

    #[differentiate(vjp, jvp)]
    fn radius_only(x: f64, y: f64) -> f64 {
        let (r, _) = polar(x, y);
        r * r
    }

    #[test]
    fn a_callee_returning_a_tuple() {
        let (x, y) = (0.6, 0.8);
        let grad = check_scalar(
            |p| spiral(p[0], p[1]),
            |p, s| {
                let (out, dx, dy) = spiral_vjp(p[0], p[1], s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
        let (r, t) = (1.0_f64, y.atan2(x));
        let (dr, dt) = (t.sin() + 1.0 / r, r * t.cos());
        // ∂r = (x, y) / r, ∂θ = (-y, x) / r².
        assert_close(&grad, &[dr * x - dt * y, dr * y + dt * x]);
        let grad = check_scalar(
            |p| radius_only(p[0], p[1]),
            |p, s| {
                let (out, dx, dy) = radius_only_vjp(p[0], p[1], s);
                (out, vec![dx, dy])
            },
            &[x, y],
        );
        assert_close(&grad, &[2.0 * x, 2.0 * y]);
    }
}

mod buffers_in_loops {
    use super::*;

    /// Explicit heat-equation steps with a fresh `Vec` every step.
    #[differentiate(vjp, jvp)]
    fn heat(u0: &[f64], k: f64, steps: usize) -> f64 {
        let n = u0.len();
        let mut u = u0.to_vec();
        for _ in 0..steps {
            let mut next = vec![0.0; n];
            for i in 1..n - 1 {
                next[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
            }
            next[0] = u[0];
            next[n - 1] = u[n - 1];
            let prev = u.to_vec();
            for i in 0..n {
                u[i] = next[i] + 0.1 * prev[i].sin();
            }
        }
        u.iter().map(|v| v * v).sum()
    }

    /// The same with the buffers made before the loop, as before.
    #[differentiate(vjp, jvp)]
    fn heat_hoisted(u0: &[f64], k: f64, steps: usize) -> f64 {
        let n = u0.len();
        let mut u = u0.to_vec();
        let mut next = vec![0.0; n];
        let mut prev = vec![0.0; n];
        for _ in 0..steps {
            for i in 0..n {
                next[i] = 0.0;
            }
            for i in 1..n - 1 {
                next[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
            }
            next[0] = u[0];
            next[n - 1] = u[n - 1];
            for i in 0..n {
                prev[i] = u[i];
            }
            for i in 0..n {
                u[i] = next[i] + 0.1 * prev[i].sin();
            }
        }
        u.iter().map(|v| v * v).sum()
    }

    type HeatVjp = fn(&[f64], &mut [f64], f64, usize, f64) -> (f64, f64);

    #[test]
    fn a_fresh_vec_every_step() {
        let u0 = [0.1, 0.5, -0.3, 0.8, 0.2];
        let vjp = |f: HeatVjp, p: &[f64], s| {
            let mut d = vec![0.0; 5];
            let (out, dk) = f(&p[..5], &mut d, p[5], 3, s);
            d.push(dk);
            (out, d)
        };
        let mut point = u0.to_vec();
        point.push(0.2);
        let grad = check_scalar(
            |p| heat(&p[..5], p[5], 3),
            |p, s| vjp(heat_vjp, p, s),
            &point,
        );
        let (_, expected) = vjp(heat_hoisted_vjp, &point, 1.0);
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn collected_each_step(x: &[f64], steps: usize, k: f64) -> f64 {
        let mut s = 0.0;
        for t in 0..steps {
            let scaled: Vec<f64> = x.iter().map(|v| (v * k + t as f64).sin()).collect();
            s += scaled.iter().zip(x).map(|(a, b)| a * b).sum::<f64>();
        }
        s
    }

    #[test]
    fn collect_inside_a_loop() {
        let grad = check_scalar(
            |p| collected_each_step(&p[..3], 3, p[3]),
            |p, s| {
                let mut d = vec![0.0; 3];
                let (out, dk) = collected_each_step_vjp(&p[..3], &mut d, 3, p[3], s);
                d.push(dk);
                (out, d)
            },
            &[0.3, -0.5, 0.8, 0.7],
        );
        // Σₜ Σᵢ xᵢ sin(k xᵢ + t).
        let (x, k) = ([0.3, -0.5, 0.8], 0.7);
        let mut expected: Vec<f64> = (0..3)
            .map(|i| {
                (0..3)
                    .map(|t| {
                        let a = k * x[i] + f64::from(t);
                        a.sin() + x[i] * k * a.cos()
                    })
                    .sum()
            })
            .collect();
        expected.push(
            (0..3)
                .map(|t| {
                    (0..3)
                        .map(|i| x[i] * x[i] * (k * x[i] + f64::from(t)).cos())
                        .sum::<f64>()
                })
                .sum(),
        );
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn branch_buffer(x: f64, y: f64, flag: bool) -> f64 {
        let mut s = x * y;
        if flag {
            let tmp = [x, y, x * y];
            let w = vec![y; 3];
            s += tmp.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
        }
        s
    }

    #[test]
    fn buffers_made_in_a_branch() {
        for flag in [true, false] {
            let grad = check_scalar(
                |p| branch_buffer(p[0], p[1], flag),
                |p, s| {
                    let (out, dx, dy) = branch_buffer_vjp(p[0], p[1], flag, s);
                    (out, vec![dx, dy])
                },
                &[0.7, -1.3],
            );
            let (x, y) = (0.7, -1.3);
            let expected = if flag {
                // s = xy + xy + y² + xy²
                [2.0 * y + y * y, 2.0 * x + 2.0 * y + 2.0 * x * y]
            } else {
                [y, x]
            };
            assert_close(&grad, &expected);
        }
    }
}

mod slices_to_calls {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn sq_sum(a: &[f64]) -> f64 {
        a.iter().map(|v| v * v).sum()
    }

    #[differentiate(vjp, jvp)]
    fn rows(a: &[f64], x: &[f64]) -> f64 {
        let n = x.len();
        let mut s = 0.0;
        for i in 0..a.len() / n {
            let row = &a[i * n..(i + 1) * n];
            s += ad_runtime::dot(row, x).tanh() + sq_sum(&a[i * n..][..n]) * 0.1;
        }
        s + sq_sum(&x[1..])
    }

    #[differentiate(vjp, jvp)]
    fn rows_indexed(a: &[f64], x: &[f64]) -> f64 {
        let n = x.len();
        let mut s = 0.0;
        for i in 0..a.len() / n {
            let mut d = 0.0;
            let mut q = 0.0;
            for j in 0..n {
                d += a[i * n + j] * x[j];
                q += a[i * n + j] * a[i * n + j];
            }
            s += d.tanh() + q * 0.1;
        }
        let mut t = 0.0;
        for j in 1..n {
            t += x[j] * x[j];
        }
        s + t
    }

    #[differentiate(vjp, jvp)]
    fn scale(v: &mut [f64], k: f64) {
        for e in v.iter_mut() {
            *e *= k;
        }
    }

    #[differentiate(vjp, jvp)]
    fn halves(u: &mut [f64], k: f64) {
        let n = u.len();
        scale(&mut u[..n / 2], k);
        scale(&mut u[n / 2..], k * k);
    }

    #[test]
    fn slices_to_calls() {
        let a = [0.1, -0.2, 0.3, 0.4, 0.5, -0.6];
        let x = [0.7, -0.8, 0.9];
        let grad = check_pair(rows, rows_vjp, rows_jvp, &a, &x);
        // Against the same function with the rows indexed in place.
        let mut da = vec![0.0; 6];
        let mut dx = vec![0.0; 3];
        rows_indexed_vjp(&a, &mut da, &x, &mut dx, 1.0);
        da.extend(dx);
        assert_close(&grad, &da);
    }

    #[test]
    fn mut_slices_to_calls() {
        let u = [1.0, 2.0, 3.0, 4.0, 5.0];
        let k = 1.5;
        let mut state = u.to_vec();
        let mut shadow = vec![1.0, 0.5, -1.0, 2.0, 0.25];
        let seed = shadow.clone();
        let dk = halves_vjp(&mut state, &mut shadow, k);
        let mut expect = u.to_vec();
        halves(&mut expect, k);
        assert_eq!(state, expect);
        // u[0..2] *= k, u[2..5] *= k².
        let d_u: Vec<f64> = (0..5)
            .map(|i| seed[i] * if i < 2 { k } else { k * k })
            .collect();
        let d_k: f64 = (0..5)
            .map(|i| seed[i] * u[i] * if i < 2 { 1.0 } else { 2.0 * k })
            .sum();
        assert_close(&shadow, &d_u);
        assert_close(&[dk], &[d_k]);
    }
}

mod while_loops {
    use super::*;

    /// A `while` with an integer counter and a condition that reads the
    /// buffer: stops at the first non-positive element.
    #[differentiate(vjp, jvp)]
    fn positive_prefix(x: &[f64]) -> f64 {
        let mut i = 0;
        let mut s = 0.0;
        while i < x.len() && x[i] > 0.0 {
            s += x[i].sqrt() * (i + 1) as f64;
            i += 1;
        }
        s
    }

    #[test]
    fn while_with_a_counter_and_any_condition() {
        let x = [0.5, 2.0, 1.5, -1.0, 3.0];
        let grad = check_slice(
            positive_prefix,
            positive_prefix_vjp,
            positive_prefix_jvp,
            &x,
        );
        let expected: Vec<f64> = (0..5)
            .map(|i| {
                if i < 3 {
                    (i + 1) as f64 * 0.5 / x[i].sqrt()
                } else {
                    0.0
                }
            })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// Found by the idiom suite: gradients that came out zero, and a product
/// that did not compile, in generic functions and through callees.
mod regressions {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn sum_sq<T: Float>(x: &[T]) -> T {
        x.iter().map(|&v| v * v).sum()
    }

    #[differentiate(vjp, jvp)]
    fn prod<T: Float>(x: &[T]) -> T {
        x.iter().copied().product::<T>()
    }

    #[differentiate(vjp, jvp)]
    fn sq(v: f64) -> f64 {
        v * v
    }

    #[differentiate(vjp, jvp)]
    fn total(x: &[f64]) -> f64 {
        x.iter().map(|&v| sq(v)).sum()
    }

    #[test]
    fn sums_of_generic_floats_and_of_callees_carry_gradients() {
        let x = [0.5, -1.0, 2.0];
        let grad = check_slice(sum_sq, sum_sq_vjp, sum_sq_jvp, &x);
        assert_close(&grad, &[1.0, -2.0, 4.0]);
        let grad = check_slice(prod, prod_vjp, prod_jvp, &x);
        assert_close(&grad, &[-2.0, 1.0, -0.5]);
        let grad = check_slice(total, total_vjp, total_jvp, &x);
        assert_close(&grad, &[1.0, -2.0, 4.0]);
        let mut d = [0.0_f32; 3];
        assert_eq!(sum_sq_vjp(&[0.5_f32, -1.0, 2.0], &mut d, 1.0), 5.25);
        assert_eq!(d, [1.0, -2.0, 4.0]);
    }
}

mod fn_mut {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn energy(x: &[f64]) -> f64 {
        let mut s = 0.0;
        x.iter().for_each(|v| s += v * v);
        s
    }

    #[differentiate(vjp, jvp)]
    fn counter(x: &[f64], k: f64) -> f64 {
        let mut total = 0.0;
        let mut calls = 0;
        let mut add = |v: f64| {
            total += v * k;
            calls += 1;
        };
        for &v in x {
            add(v.sin());
        }
        if k > 0.0 {
            add(k);
        }
        total * calls as f64
    }

    #[test]
    fn fn_mut_closures_assign_where_they_are_called() {
        let x = [0.5, -1.0, 2.0];
        let mut d = [0.0; 3];
        let out = energy_vjp(&x, &mut d, 1.0);
        assert_eq!(out, energy(&x));
        assert_eq!(d, [1.0, -2.0, 4.0]);
        let mut d = [0.0; 3];
        let (out, dk) = counter_vjp(&x, &mut d, 0.7, 1.0);
        assert_eq!(out, counter(&x, 0.7));
        let mut g = d.to_vec();
        g.push(dk);
        let grad = check_scalar(
            |p| counter(&p[..3], p[3]),
            ad_tests::buffer_then_scalar(counter_vjp),
            &[0.5, -1.0, 2.0, 0.7],
        );
        // total = k (Σ sin xᵢ + k), called four times.
        let s: f64 = x.iter().map(|v| v.sin()).sum();
        let mut expected: Vec<f64> = x.iter().map(|v| 4.0 * 0.7 * v.cos()).collect();
        expected.push(4.0 * (s + 2.0 * 0.7));
        assert_close(&grad, &expected);
        assert_close(&g, &expected);
    }
}

mod mutable_views {
    use super::*;
    use ad_tests::check_vector;

    #[differentiate(vjp, jvp)]
    fn leapfrog(q: &mut [f64], p: &mut [f64], dt: f64) {
        for (a, b) in q.iter_mut().zip(p.iter_mut()) {
            *b -= a.sin() * dt;
            *a += *b * dt;
        }
    }

    #[differentiate(vjp, jvp)]
    fn normalize_rows(m: &mut [f64], n: usize) {
        for row in m.chunks_exact_mut(n) {
            let s: f64 = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            for v in row.iter_mut() {
                *v /= s;
            }
        }
    }

    #[differentiate(vjp, jvp)]
    fn split_update(u: &mut [f64], k: f64) {
        let (left, right) = u.split_at_mut(2);
        for i in 0..left.len() {
            left[i] *= k;
        }
        right[0] += left[0] * k;
    }

    #[test]
    fn zip_of_two_iter_muts() {
        let (q0, p0, dt) = ([0.1, 0.2], [0.3, -0.4], 0.1);
        check_vector(
            |x| {
                let (mut q, mut p) = (x[..2].to_vec(), x[2..].to_vec());
                leapfrog(&mut q, &mut p, dt);
                q.extend(p);
                q
            },
            |x, s| {
                let (mut q, mut p) = (x[..2].to_vec(), x[2..].to_vec());
                let (mut dq, mut dp) = (s[..2].to_vec(), s[2..].to_vec());
                leapfrog_vjp(&mut q, &mut dq, &mut p, &mut dp, dt);
                q.extend(p);
                dq.extend(dp);
                (q, dq)
            },
            &[q0[0], q0[1], p0[0], p0[1]],
            &[1.0, 0.5, 0.2, 0.1],
        );
    }

    #[test]
    fn chunks_exact_mut_and_split_at_mut() {
        let m0 = [3.0, 4.0, 1.0, 1.0];
        let seed = [1.0, 0.5, -1.0, 2.0];
        let grad = check_vector(
            |x| {
                let mut m = x.to_vec();
                normalize_rows(&mut m, 2);
                m
            },
            |x, s| {
                let mut m = x.to_vec();
                let mut d = s.to_vec();
                normalize_rows_vjp(&mut m, &mut d, 2);
                (m, d)
            },
            &m0,
            &seed,
        );
        // Row (3, 4) has norm 5: the Jacobian of v / |v| is (I - u uᵀ) / 5.
        let u = [0.6, 0.8];
        let j = |a: usize, b: usize| (f64::from(u8::from(a == b)) - u[a] * u[b]) / 5.0;
        assert_close(
            &grad[..2],
            &[j(0, 0) + 0.5 * j(1, 0), j(0, 1) + 0.5 * j(1, 1)],
        );
        ad_tests::check_in_place(
            |u, k| split_update(u, k),
            |u, d, k| split_update_vjp(u, d, k),
            &[1.0, 2.0, 3.0],
            1.5,
            &[1.0, 0.5, -1.0],
        );
    }
}

mod counted_whiles {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn rosen_while(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut i = 0;
        while i + 1 < x.len() {
            s += (1.0 - x[i]).powi(2) + 100.0 * (x[i + 1] - x[i].powi(2)).powi(2);
            i += 1;
        }
        s + i as f64
    }

    /// The counter on the right, the step written `k + i`.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::int_plus_one, clippy::assign_op_pattern)] // The spellings under test.
    fn mirrored(x: &[f64], n: usize) -> f64 {
        let mut s = 0.0;
        let mut i = 1;
        while n >= 1 + i {
            s += x[i].sin() * x[i - 1];
            i = 2 + i;
        }
        s * i as f64
    }

    #[differentiate(vjp, jvp)]
    #[allow(clippy::assign_op_pattern)] // The other spelling of the step.
    fn strided(x: &[f64], n: usize) -> f64 {
        let mut s = 0.0;
        let mut i = 1;
        while i <= n {
            s += x[i - 1] * (i as f64);
            i = i + 2;
        }
        s * i as f64
    }

    #[differentiate(vjp, jvp)]
    fn signed_counter(x: f64) -> f64 {
        let mut k: i32 = -3;
        let mut y = x;
        while k + 1 < 0 {
            y = y * x + k as f64;
            k += 1;
        }
        y + k as f64
    }

    #[test]
    fn while_loops_that_count_are_for_loops() {
        let x = [0.5, -1.0, 2.0, 0.25, 1.5, 0.7];
        for n in 0..=6 {
            let grad = check_scalar(
                |p| mirrored(p, n),
                |p, s| {
                    let mut d = vec![0.0; 6];
                    let out = mirrored_vjp(p, &mut d, n, s);
                    (out, d)
                },
                &x,
            );
            // Visits i = 1, 3, 5, … with i + 1 ≤ n; the counter ends at the
            // first odd i with i + 1 > n.
            let end = n.max(1) | 1;
            let mut expected = vec![0.0; 6];
            for i in (1..n).step_by(2) {
                expected[i] += x[i].cos() * x[i - 1] * end as f64;
                expected[i - 1] += x[i].sin() * end as f64;
            }
            assert_close(&grad, &expected);
        }
        for n in [0usize, 1, 2, 5] {
            let x: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 0.4).collect();
            let grad = check_slice(rosen_while, rosen_while_vjp, rosen_while_jvp, &x);
            let mut expected = vec![0.0; n];
            for i in 0..n.saturating_sub(1) {
                let b = x[i + 1] - x[i] * x[i];
                expected[i] += -2.0 * (1.0 - x[i]) - 400.0 * x[i] * b;
                expected[i + 1] += 200.0 * b;
            }
            assert_close(&grad, &expected);
        }
        let x = [0.5, -1.0, 2.0, 0.25, 1.5, 0.7];
        for n in 0..=6 {
            let grad = check_scalar(
                |p| strided(p, n),
                |p, s| {
                    let mut d = vec![0.0; 6];
                    let out = strided_vjp(p, &mut d, n, s);
                    (out, d)
                },
                &x,
            );
            // Visits i = 1, 3, 5, … ≤ n; the counter ends at the first odd i > n.
            let end = (n + 1) | 1;
            let expected: Vec<f64> = (0..6)
                .map(|j| {
                    if (j + 1) % 2 == 1 && j < n {
                        ((j + 1) * end) as f64
                    } else {
                        0.0
                    }
                })
                .collect();
            assert_close(&grad, &expected);
        }
        let grad = check_scalar(
            |p| signed_counter(p[0]),
            |p, s| {
                let (out, dx) = signed_counter_vjp(p[0], s);
                (out, vec![dx])
            },
            &[0.7],
        );
        // Two trips: y = (x·x − 3)·x − 2.
        assert_close(&grad, &[3.0 * 0.7 * 0.7 - 3.0]);
    }
}

mod swaps {
    use super::*;

    type HeatVjp = fn(&[f64], &mut [f64], f64, usize, f64) -> (f64, f64);

    #[differentiate(vjp, jvp)]
    fn heat_swap(u0: &[f64], k: f64, steps: usize) -> f64 {
        let n = u0.len();
        let mut cur = u0.to_vec();
        let mut next = vec![0.0; n];
        for _ in 0..steps {
            for i in 1..n - 1 {
                next[i] = cur[i] + k * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
            }
            next[0] = cur[0];
            next[n - 1] = cur[n - 1];
            std::mem::swap(&mut cur, &mut next);
        }
        cur.iter().map(|v| v * v).sum()
    }

    #[differentiate(vjp, jvp)]
    fn heat_assign(u0: &[f64], k: f64, steps: usize) -> f64 {
        let n = u0.len();
        let mut cur = u0.to_vec();
        for _ in 0..steps {
            let mut next = vec![0.0; n];
            for i in 1..n - 1 {
                next[i] = cur[i] + k * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
            }
            next[0] = cur[0];
            next[n - 1] = cur[n - 1];
            cur = next;
        }
        cur.iter().map(|v| v * v).sum()
    }

    #[differentiate(vjp, jvp)]
    fn fib_like(a: f64, b: f64, n: usize) -> f64 {
        let mut x = a;
        let mut y = b;
        for _ in 0..n {
            x += y * 0.5;
            std::mem::swap(&mut x, &mut y);
        }
        x * y
    }

    #[test]
    fn swaps_and_buffer_assignments() {
        let u0 = [0.1, 0.5, -0.3, 0.8, 0.2];
        let mut point = u0.to_vec();
        point.push(0.2);
        let vjp = |f: HeatVjp, p: &[f64], s| {
            let mut d = vec![0.0; 5];
            let (out, dk) = f(&p[..5], &mut d, p[5], 3, s);
            d.push(dk);
            (out, d)
        };
        let swapped = check_scalar(
            |p| heat_swap(&p[..5], p[5], 3),
            |p, s| vjp(heat_swap_vjp, p, s),
            &point,
        );
        let assigned = check_scalar(
            |p| heat_assign(&p[..5], p[5], 3),
            |p, s| vjp(heat_assign_vjp, p, s),
            &point,
        );
        assert_close(&swapped, &assigned);
        let grad = check_scalar(
            |p| fib_like(p[0], p[1], 5),
            |p, s| {
                let (out, da, db) = fib_like_vjp(p[0], p[1], 5, s);
                (out, vec![da, db])
            },
            &[0.7, 1.3],
        );
        // Linear in (a, b): the gradient of x·y at the end, by the recurrence.
        let (mut xa, mut xb, mut ya, mut yb) = (1.0, 0.0, 0.0, 1.0);
        for _ in 0..5 {
            (xa, xb) = (xa + ya * 0.5, xb + yb * 0.5);
            std::mem::swap(&mut xa, &mut ya);
            std::mem::swap(&mut xb, &mut yb);
        }
        let (x, y) = (0.7 * xa + 1.3 * xb, 0.7 * ya + 1.3 * yb);
        assert_close(&grad, &[xa * y + x * ya, xb * y + x * yb]);
    }

    #[test]
    fn a_buffer_assigned_one_of_another_length_panics_with_a_message() {
        let result = std::panic::catch_unwind(|| shrink_vjp(&[1.0, 2.0, 3.0], &mut [0.0; 3], 1.0));
        let payload = result.expect_err("lengths differ");
        let text = payload
            .downcast_ref::<String>()
            .expect("a formatted message");
        assert!(text.contains("the lengths must agree"), "{text}");
    }

    #[differentiate(vjp, jvp)]
    fn shrink(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let first = v[0];
        let w = vec![1.0; 2];
        v = w;
        v[0] + first
    }
}

/// Found by the generator: expansions rustc rejected.
mod generator_regressions {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn literal_argument(x: f64) -> f64 {
        let g = |t: f64| t.sin();
        g(2.0 * 1.5) * x
    }

    #[differentiate(vjp, jvp)]
    fn deref_in_assert(xs: &[f64]) -> f64 {
        for e in xs {
            assert!(*e < 1e6, "{}", *e);
        }
        for v in xs.iter().map(|v| v * 2.0) {
            debug_assert!(v.is_finite());
        }
        xs.iter().sum()
    }

    #[test]
    fn literal_arguments_and_elements_by_reference() {
        let grad = check_scalar(
            |p| literal_argument(p[0]),
            |p, s| {
                let (out, dx) = literal_argument_vjp(p[0], s);
                (out, vec![dx])
            },
            &[0.7],
        );
        assert_close(&grad, &[3.0_f64.sin()]);
        let grad = check_slice(
            deref_in_assert,
            deref_in_assert_vjp,
            deref_in_assert_jvp,
            &X,
        );
        assert_close(&grad, &[1.0; 7]);
    }
}

mod array_patterns {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn norm3(p: &[f64; 3]) -> f64 {
        let [x, y, z] = *p;
        (x * x + y * y + z * z).sqrt()
    }

    #[differentiate(vjp, jvp)]
    fn local_array(a: f64, b: f64) -> f64 {
        let v = [a * b, a + b];
        let [s, t] = v;
        s * t
    }

    #[test]
    fn let_with_an_array_pattern() {
        let grad = check_slice(
            |p| norm3(&[p[0], p[1], p[2]]),
            |p, d, s| {
                let mut d3 = [0.0; 3];
                let out = norm3_vjp(&[p[0], p[1], p[2]], &mut d3, s);
                d.copy_from_slice(&d3);
                out
            },
            |p, t| norm3_jvp(&[p[0], p[1], p[2]], &[t[0], t[1], t[2]]),
            &[3.0, 0.0, 4.0],
        );
        assert_close(&grad, &[0.6, 0.0, 0.8]);
        let grad = check_scalar(
            |p| local_array(p[0], p[1]),
            |p, s| {
                let (out, da, db) = local_array_vjp(p[0], p[1], s);
                (out, vec![da, db])
            },
            &[2.0, 3.0],
        );
        // (ab)(a + b): ∂a = b(a + b) + ab, ∂b = a(a + b) + ab.
        assert_close(&grad, &[21.0, 16.0]);
    }
}

mod buffer_returning_calls {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn rhs(y: &[f64], k: f64) -> Vec<f64> {
        let mut dy = vec![0.0; y.len()];
        for i in 0..y.len() {
            dy[i] = -k * y[i] + y[(i + 1) % y.len()].sin();
        }
        dy
    }

    #[differentiate(vjp, jvp)]
    fn rk2(y: &[f64], k: f64, h: f64) -> f64 {
        let k1 = rhs(y, k);
        let mid: Vec<f64> = y.iter().zip(&k1).map(|(a, b)| a + 0.5 * h * b).collect();
        let k2 = rhs(&mid, k);
        let mut s = 0.0;
        for i in 0..y.len() {
            let next = y[i] + h * k2[i];
            s += next * next;
        }
        s
    }

    #[differentiate(vjp, jvp)]
    fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    #[differentiate(vjp, jvp)]
    fn torque(r: &[f64; 3], f: &[f64; 3]) -> f64 {
        let t: [f64; 3] = cross(r, f);
        t.iter().map(|v| v * v).sum()
    }

    #[test]
    fn callees_returning_a_vec_or_an_array() {
        let grad = check_scalar(
            |p| rk2(&p[..3], p[3], p[4]),
            |p, s| {
                let mut d = vec![0.0; 3];
                let (out, dk, dh) = rk2_vjp(&p[..3], &mut d, p[3], p[4], s);
                d.extend([dk, dh]);
                (out, d)
            },
            &[0.3, -0.5, 0.8, 0.7, 0.1],
        );
        // Against the same step with the right-hand side written inline.
        let mut d = vec![0.0; 3];
        let (_, dk, dh) = rk2_inline_vjp(&[0.3, -0.5, 0.8], &mut d, 0.7, 0.1, 1.0);
        d.extend([dk, dh]);
        assert_close(&grad, &d);
        let grad = check_scalar(
            |p| torque(&[p[0], p[1], p[2]], &[p[3], p[4], p[5]]),
            |p, s| {
                let (mut dr, mut df) = ([0.0; 3], [0.0; 3]);
                let out = torque_vjp(
                    &[p[0], p[1], p[2]],
                    &mut dr,
                    &[p[3], p[4], p[5]],
                    &mut df,
                    s,
                );
                let mut d = dr.to_vec();
                d.extend(df);
                (out, d)
            },
            &[1.0, 2.0, 0.5, 0.3, -0.4, 1.5],
        );
        // |r × f|² = |r|²|f|² − (r·f)²: ∂r = 2(|f|² r − (r·f) f), ∂f alike.
        let (r, f) = ([1.0, 2.0, 0.5], [0.3, -0.4, 1.5]);
        let dot = |a: &[f64; 3], b: &[f64; 3]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let (rr, ff, rf) = (dot(&r, &r), dot(&f, &f), dot(&r, &f));
        let mut expected: Vec<f64> = (0..3).map(|i| 2.0 * (ff * r[i] - rf * f[i])).collect();
        expected.extend((0..3).map(|i| 2.0 * (rr * f[i] - rf * r[i])));
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn rk2_inline(y: &[f64], k: f64, h: f64) -> f64 {
        let n = y.len();
        let mut mid = vec![0.0; n];
        for i in 0..n {
            mid[i] = y[i] + 0.5 * h * (-k * y[i] + y[(i + 1) % n].sin());
        }
        let mut s = 0.0;
        for i in 0..n {
            let next = y[i] + h * (-k * mid[i] + mid[(i + 1) % n].sin());
            s += next * next;
        }
        s
    }
}

mod ends {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn ends(x: &[f64]) -> f64 {
        let a = *x.first().unwrap();
        let b = x.last().copied().unwrap_or(0.0);
        let c = x[1..].first().copied().expect("two values");
        let d = x[2..].last().copied().unwrap_or_default();
        let e = x[x.len()..].first().copied().unwrap_or_default();
        a * b + c + d * d + e
    }

    #[test]
    fn first_and_last() {
        let grad = check_slice(ends, ends_vjp, ends_jvp, &X);
        let mut expected = vec![0.0; X.len()];
        expected[0] += X[6];
        expected[6] += X[0] + 2.0 * X[6];
        expected[1] += 1.0;
        assert_close(&grad, &expected);
    }
}

mod scans {
    use super::*;

    /// A running sum by `scan`, collected, and an exponential moving
    /// average whose state is read before it is written.
    #[differentiate(vjp, jvp)]
    fn prefix_sums(x: &[f64]) -> f64 {
        let c: Vec<f64> = x
            .iter()
            .scan(0.0, |s, &v| {
                *s += v;
                Some(*s)
            })
            .collect();
        let ema: f64 = x
            .iter()
            .skip(1)
            .scan(x[0], |m, &v| {
                let next = 0.5 * v + 0.5 * *m;
                *m = next;
                Some(*m * v)
            })
            .sum();
        c.iter().map(|v| v.sin()).sum::<f64>() + ema
    }

    /// The same with loops.
    fn prefix_sums_loops(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut total = 0.0;
        for &v in x {
            s += v;
            total += s.sin();
        }
        let mut m = x[0];
        for &v in &x[1..] {
            m = 0.5 * v + 0.5 * m;
            total += m * v;
        }
        total
    }

    #[test]
    fn scan_is_a_loop_carrying_its_state() {
        let grad = check_slice(prefix_sums, prefix_sums_vjp, prefix_sums_jvp, &X);
        assert!((prefix_sums(&X) - prefix_sums_loops(&X)).abs() < 1e-12);
        ad_runtime::check::gradient(prefix_sums_loops, |_| grad.clone(), &X).assert_within(1e-7);
    }
}

mod comparisons_by_reference {
    use super::*;

    /// `max_by` over `iter()` compares `&&f64`s, as the closures here say.
    #[differentiate(vjp, jvp)]
    fn extremes(x: &[f64]) -> f64 {
        let hi = x.iter().max_by(|a, b| a.total_cmp(b)).unwrap();
        let lo = x
            .iter()
            .min_by(|&&a, &&b| a.partial_cmp(&b).unwrap())
            .unwrap();
        let top = x.iter().copied().max_by(f64::total_cmp).unwrap();
        hi + lo * top
    }

    #[test]
    fn closures_take_what_the_items_are() {
        let grad = check_slice(extremes, extremes_vjp, extremes_jvp, &X);
        // hi = top = x[3] = 2.1, lo = x[1] = -1.2.
        let mut expected = vec![0.0; X.len()];
        expected[3] = 1.0 + X[1];
        expected[1] = X[3];
        assert_close(&grad, &expected);
    }

    /// After a `map` the items are the values it makes, so `f64::total_cmp`
    /// takes `&f64`s (it took `&&f64`s, and rustc rejected the expansion),
    /// also after a `filter`.
    #[differentiate(vjp, jvp)]
    fn largest_square(x: &[f64]) -> f64 {
        let top = x
            .iter()
            .map(|v| v * v)
            .max_by(f64::total_cmp)
            .unwrap_or(0.0);
        let low = x
            .iter()
            .map(|v| v.sin())
            .filter(|s| *s > 0.0)
            .min_by(f64::total_cmp)
            .unwrap_or(1.0);
        top * low
    }

    #[test]
    fn mapped_items_are_values() {
        let grad = check_slice(largest_square, largest_square_vjp, largest_square_jvp, &X);
        // top = 2.1², low = sin(0.3), the smallest positive sine.
        let mut expected = vec![0.0; X.len()];
        expected[3] = 2.0 * X[3] * X[0].sin();
        expected[0] = X[3] * X[3] * X[0].cos();
        assert_close(&grad, &expected);
    }
}

/// A name bound to a float and later, by another `let`, to a buffer; and a
/// buffer a callee returns, returned as it is.
mod shadowed_buffers {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn sq(v: f64) -> f64 {
        v * v
    }

    #[differentiate(vjp, jvp)]
    fn sines(y: &[f64]) -> Vec<f64> {
        y.iter().map(|v| v.sin()).collect()
    }

    #[differentiate(vjp, jvp)]
    fn float_then_buffer(y: &[f64]) -> f64 {
        let s = sq(y[0]);
        let t = s * 2.0;
        let s = sines(y);
        t + s[1]
    }

    #[differentiate(vjp, jvp)]
    #[allow(clippy::let_and_return)] // The spelling under test.
    fn passed_on(y: &[f64]) -> Vec<f64> {
        let v = sines(y);
        v
    }

    #[test]
    fn each_let_is_judged_by_what_follows_it() {
        let grad = check_slice(
            float_then_buffer,
            float_then_buffer_vjp,
            float_then_buffer_jvp,
            &X,
        );
        let mut expected = vec![0.0; X.len()];
        expected[0] = 4.0 * X[0];
        expected[1] = X[1].cos();
        assert_close(&grad, &expected);
        let seed = [1.0, 0.0, 0.5, 0.0, 0.0, 0.0, 2.0];
        let grad = ad_tests::check_vector(
            passed_on,
            |p, s| {
                let mut d = vec![0.0; p.len()];
                let out = passed_on_vjp(p, &mut d, s);
                (out, d)
            },
            &X,
            &seed,
        );
        let expected: Vec<f64> = X.iter().zip(&seed).map(|(x, s)| s * x.cos()).collect();
        assert_close(&grad, &expected);
    }
}

mod tuple_assignment {
    use super::*;

    /// `(a, b) = (b, a + b * k)`: both right sides read the old values.
    #[differentiate(vjp, jvp)]
    fn recurrence(x: &[f64]) -> f64 {
        let (mut a, mut b) = (x[0], x[1]);
        for &k in &x[2..] {
            (a, b) = (b, a + b * k);
        }
        a * b
    }

    /// Swapping elements and locals through a tuple, and `_`.
    #[differentiate(vjp, jvp)]
    fn swaps(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let (mut p, mut q) = (x[0], x[1] * 2.0);
        (v[0], v[1]) = (v[1], v[0]);
        (p, q) = (q, p);
        (p, _) = (p * v[0], q);
        p + q * v[1] + v[2]
    }

    #[test]
    fn the_right_side_is_read_before_any_target_is_written() {
        let x = [0.5, -0.7, 1.2, 0.3, -0.4];
        let grad = check_slice(recurrence, recurrence_vjp, recurrence_jvp, &x);
        // The same recurrence with temporaries, differentiated by hand.
        let (mut a, mut b) = (x[0], x[1]);
        let (mut da, mut db) = (vec![0.0; 5], vec![0.0; 5]);
        da[0] = 1.0;
        db[1] = 1.0;
        for j in 2..5 {
            let k = x[j];
            let next_b: Vec<f64> = (0..5)
                .map(|i| da[i] + db[i] * k + if i == j { b } else { 0.0 })
                .collect();
            (a, b, da, db) = (b, a + b * k, db, next_b);
        }
        let expected: Vec<f64> = (0..5).map(|i| da[i] * b + a * db[i]).collect();
        assert_close(&grad, &expected);

        let grad = check_slice(swaps, swaps_vjp, swaps_jvp, &X);
        // v = [x1, x0, x2, …], p = 2 x1 · x1, q = x0: p + q v1 + v2.
        let mut expected = vec![0.0; X.len()];
        expected[1] = 4.0 * X[1];
        expected[0] = 2.0 * X[0];
        expected[2] = 1.0;
        assert_close(&grad, &expected);
    }
}

mod predicates_and_items {
    use super::*;

    /// `any` and `all` as conditions.
    #[differentiate(vjp, jvp)]
    fn signed_total(x: &[f64]) -> f64 {
        if x.iter().any(|&v| v < -1.0) {
            x.iter().map(|v| v * v).sum()
        } else if x.iter().all(|v| v.abs() < 5.0) {
            x.iter().product()
        } else {
            0.0
        }
    }

    /// `use` and `const` items in the body.
    #[differentiate(vjp, jvp)]
    fn weighted(x: &[f64]) -> f64 {
        use std::f64::consts::PI;
        const W: [f64; 3] = [0.2, 0.3, 0.5];
        const SCALE: f64 = 2.0;
        W.iter()
            .zip(x)
            .map(|(w, v)| w * (PI * v).sin())
            .sum::<f64>()
            * SCALE
    }

    /// A `const` used above where it is written (an item is visible in its
    /// whole block), and one in a loop's body.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::items_after_statements)] // The spelling under test.
    fn consts_anywhere(x: &[f64]) -> f64 {
        let scaled = x[0] * SCALE;
        let mut s = 0.0;
        for &v in x {
            s += v * HALF;
            const HALF: f64 = 0.5;
        }
        const SCALE: f64 = 3.0;
        scaled + s
    }

    #[test]
    fn items_are_visible_in_their_whole_block() {
        let grad = check_slice(
            consts_anywhere,
            consts_anywhere_vjp,
            consts_anywhere_jvp,
            &X,
        );
        let mut expected = vec![0.5; X.len()];
        expected[0] += 3.0;
        assert_close(&grad, &expected);
    }

    #[test]
    fn any_all_and_items() {
        // X has -1.2 < -1: the sum of squares.
        let grad = check_slice(signed_total, signed_total_vjp, signed_total_jvp, &X);
        let expected: Vec<f64> = X.iter().map(|v| 2.0 * v).collect();
        assert_close(&grad, &expected);
        // No element below -1, all below 5: the product.
        let y = [0.5, -0.8, 1.5];
        let grad = check_slice(signed_total, signed_total_vjp, signed_total_jvp, &y);
        assert_close(&grad, &[-0.8 * 1.5, 0.5 * 1.5, 0.5 * -0.8]);
        assert_eq!(signed_total(&[6.0, 1.0]), 0.0);

        let grad = check_slice(weighted, weighted_vjp, weighted_jvp, &X[..3]);
        let pi = std::f64::consts::PI;
        let expected: Vec<f64> = [0.2, 0.3, 0.5]
            .iter()
            .zip(&X)
            .map(|(w, v)| 2.0 * w * pi * (pi * v).cos())
            .collect();
        assert_close(&grad, &expected);
    }
}

/// Constants as Rust scopes them, and code under `#[cfg]`: what the
/// generated functions must read exactly as the function does.
mod constants_and_cfg {
    use super::*;

    /// Shadowed by the body's own `K`, and compared with in `match`.
    const K: f64 = 100.0;
    const LIMIT: usize = 2;

    /// A block constant hiding an outer one, one as an array's length, and
    /// named constants as `match` patterns (outer, inner, in an or-pattern).
    #[differentiate(vjp, jvp)]
    fn scoped_constants(x: &[f64], k: usize) -> f64 {
        const K: f64 = 3.0;
        const N: usize = 2;
        const FIRST: usize = 0;
        let pair = [x[0]; N];
        let mut s = pair[0] * pair[1] * K;
        for (i, &v) in x.iter().enumerate() {
            s += match i {
                FIRST | LIMIT => v * v,
                _ => v * K,
            };
        }
        match k {
            LIMIT => s * 10.0,
            FIRST => s.sin(),
            _ => s,
        }
    }

    #[test]
    fn constants_are_read_as_rust_scopes_them() {
        let x = &X[..4];
        for k in 0..4 {
            let grad = check_counted(
                scoped_constants,
                scoped_constants_vjp,
                scoped_constants_jvp,
                k,
                x,
            );
            // 3 x0² from the pair, then x0² + 3 x1 + x2² + 3 x3 from the loop.
            let s = 4.0 * x[0] * x[0] + x[2] * x[2] + 3.0 * (x[1] + x[3]);
            let ds = [8.0 * x[0], 3.0, 2.0 * x[2], 3.0];
            let outer = match k {
                2 => 10.0,
                0 => s.cos(),
                _ => 1.0,
            };
            let expected: Vec<f64> = ds.iter().map(|d| d * outer).collect();
            assert_close(&grad, &expected);
        }
        // The outer `K` is still 100 outside the function.
        assert_eq!(K, 100.0);
    }

    /// Arrays of integers and of `bool`s are constant data, indexed and
    /// iterated like float arrays.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_wrap)] // `c` is small.
    fn integer_tables(x: &[f64], c: usize) -> f64 {
        const IDX: [usize; 2] = [0, 2];
        let stencil = [-1i32, 0, 1];
        let flags = [true, false, true];
        let mut s = x[IDX[0]] * x[IDX[1]];
        for &o in &stencil {
            s += x[(c as i32 + o) as usize].powi(2);
        }
        for (i, &on) in flags.iter().enumerate() {
            if on {
                s += x[i].sin();
            }
        }
        s
    }

    #[test]
    fn integer_and_bool_arrays_are_data() {
        let x = &X[..5];
        let c = 2;
        let grad = check_counted(integer_tables, integer_tables_vjp, integer_tables_jvp, c, x);
        let mut expected = vec![0.0; x.len()];
        expected[0] += x[2] + x[0].cos();
        expected[2] += x[0] + x[2].cos();
        for j in c - 1..=c + 1 {
            expected[j] += 2.0 * x[j];
        }
        assert_close(&grad, &expected);
    }

    /// Tables outside the function, and functions of integers (`std`'s, the
    /// integer types', the user's own): constant data, run as written.
    const GW: [f64; 3] = [0.25, 0.5, 0.25];
    const IDX: [usize; 2] = [0, 2];
    mod tables {
        pub(super) const NODES: [f64; 3] = [-0.5, 0.0, 0.5];
    }

    fn flat(i: usize, j: usize, width: usize) -> usize {
        i * width + j
    }

    fn weight(k: usize) -> f64 {
        1.0 / (k as f64 + 1.0)
    }

    #[differentiate(vjp, jvp)]
    fn tables_and_integer_calls(x: &[f64], k: usize) -> f64 {
        let mut s = 0.0;
        for i in 0..GW.len() {
            s += GW[i] * x[IDX[i % 2]] * x[flat(i, 1, 1)];
        }
        let last = std::cmp::min(k, x.len() - 1);
        s += x[last].powi(2) * weight(usize::max(k, 1));
        for (w, v) in tables::NODES.iter().zip(x) {
            s += w * v.sin();
        }
        s + ad_runtime::dot(&GW, &x[..3])
    }

    #[test]
    fn constant_tables_and_integer_functions() {
        let x = &X[..5];
        for k in [0, 2, 9] {
            let grad = check_counted(
                tables_and_integer_calls,
                tables_and_integer_calls_vjp,
                tables_and_integer_calls_jvp,
                k,
                x,
            );
            let mut expected = vec![0.0; x.len()];
            // Σᵢ GW[i] x[IDX[i % 2]] x[i + 1]
            expected[0] += GW[0] * x[1] + GW[2] * x[3];
            expected[1] += GW[0] * x[0];
            expected[2] += 2.0 * GW[1] * x[2];
            expected[3] += GW[2] * x[0];
            let last = k.min(x.len() - 1);
            expected[last] += 2.0 * x[last] / (k.max(1) as f64 + 1.0);
            for i in 0..3 {
                expected[i] += tables::NODES[i] * x[i].cos() + GW[i];
            }
            assert_close(&grad, &expected);
        }
    }

    /// A table bound to a local, and copied into one to write into.
    #[differentiate(vjp, jvp)]
    fn copied_table(x: &[f64]) -> f64 {
        let w = GW;
        let mut v: [f64; 3] = GW;
        for i in 0..3 {
            v[i] *= x[i];
        }
        w[0] * x[1] + v.iter().sum::<f64>() * x[2]
    }

    #[test]
    fn tables_bound_and_copied() {
        let x = [0.3, -0.4, 0.9, 1.1];
        let grad = check_slice(copied_table, copied_table_vjp, copied_table_jvp, &x);
        let weighted: f64 = (0..3).map(|i| GW[i] * x[i]).sum();
        let expected = [
            GW[0] * x[2],
            GW[0] + GW[1] * x[2],
            weighted + GW[2] * x[2],
            0.0,
        ];
        assert_close(&grad, &expected);
    }

    /// Orderings as conditions: `total_cmp(..).is_lt()`, `partial_cmp(..)`
    /// compared with `Some(Ordering::Greater)` or matched.
    #[differentiate(vjp, jvp)]
    fn ordered_steps(x: &[f64]) -> f64 {
        use std::cmp::Ordering;
        let mut s = 0.0;
        for i in 1..x.len() {
            if x[i].total_cmp(&x[i - 1]).is_lt() {
                s += x[i];
            } else if x[i].partial_cmp(&x[i - 1]) == Some(Ordering::Greater) {
                s += x[i] * x[i];
            }
            match x[i].partial_cmp(&0.5) {
                Some(Ordering::Less) => s -= x[i],
                None => {}
                _ => s += 0.1 * x[i],
            }
            if x[i].total_cmp(&x[0]) == Ordering::Greater {
                s += x[0] * x[i];
            }
        }
        s
    }

    #[test]
    fn orderings_are_conditions() {
        let x = [0.3, 0.9, 0.2, 0.7, 0.65];
        let grad = check_slice(ordered_steps, ordered_steps_vjp, ordered_steps_jvp, &x);
        let mut expected = [0.0; 5];
        for i in 1..x.len() {
            if x[i] < x[i - 1] {
                expected[i] += 1.0;
            } else if x[i] > x[i - 1] {
                expected[i] += 2.0 * x[i];
            }
            expected[i] += if x[i] < 0.5 { -1.0 } else { 0.1 };
            if x[i] > x[0] {
                expected[0] += x[i];
                expected[i] += x[0];
            }
        }
        assert_close(&grad, &expected);
    }

    /// `max()` and `min()` of a chain of integers (bins of the inputs).
    #[differentiate(vjp, jvp)]
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ 3v < 4.
    fn binned(x: &[f64]) -> f64 {
        let top = x.iter().map(|v| (v * 3.0) as usize).max().unwrap();
        let low = x.iter().map(|&v| (v * 3.0) as usize).min().unwrap_or(0);
        let k = top.min(x.len() - 1);
        x[k] * x[0] + x[low] * x[1]
    }

    #[test]
    fn integer_maxima_of_chains() {
        let x = [0.5, 0.9, 0.1, 0.4];
        let grad = check_slice(binned, binned_vjp, binned_jvp, &x);
        // Bins 1, 2, 0, 1: x[2] x[0] + x[0] x[1].
        assert_close(&grad, &[x[2] + x[1], x[0], x[0], 0.0]);
    }

    /// Tuple variables: the closest element tracked as `(index, distance)`,
    /// and a state pair stepped as a whole and by element.
    #[differentiate(vjp, jvp)]
    fn closest_and_stepped(x: &[f64]) -> f64 {
        let c = x[0];
        let mut best = (1, f64::MAX);
        for (i, &v) in x.iter().enumerate().skip(1) {
            let d = (v - c).abs();
            if d < best.1 {
                best = (i, d);
            }
        }
        let mut state = (x[1], c);
        for _ in 0..3 {
            state = (state.0 * 0.5 + state.1, state.1 * state.0);
            state.1 += 0.1;
        }
        let (p, q) = state;
        x[best.0] * best.1 + p * q
    }

    #[test]
    fn tuple_variables() {
        let x = [0.6, 0.3, 0.9, 0.45];
        let grad = check_slice(
            closest_and_stepped,
            closest_and_stepped_vjp,
            closest_and_stepped_jvp,
            &x,
        );
        // The closest to x₀ is x₃ (0.15 away, below it): x₃ (x₀ - x₃).
        let mut expected = [x[3], 0.0, 0.0, x[0] - 2.0 * x[3]];
        // p q of three steps of (s, t) ↦ (s/2 + t, t s + 0.1), by forward
        // differences of the dual numbers in s = x₁ and t = x₀.
        let (mut s, mut t) = ([x[1], 1.0, 0.0], [x[0], 0.0, 1.0]);
        for _ in 0..3 {
            let next_s = [s[0] * 0.5 + t[0], s[1] * 0.5 + t[1], s[2] * 0.5 + t[2]];
            let next_t = [
                t[0] * s[0] + 0.1,
                t[1] * s[0] + t[0] * s[1],
                t[2] * s[0] + t[0] * s[2],
            ];
            (s, t) = (next_s, next_t);
        }
        expected[1] += s[1] * t[0] + s[0] * t[1];
        expected[0] += s[2] * t[0] + s[0] * t[2];
        assert_close(&grad, &expected);
    }

    fn is_even(k: usize) -> bool {
        k.is_multiple_of(2)
    }

    fn split(i: usize, width: usize) -> (usize, usize) {
        (i / width, i % width)
    }

    /// A constant of an inner block hides the outer `K` in that block only;
    /// helpers of integers returning a `bool` and a tuple.
    #[differentiate(vjp, jvp)]
    fn inner_constants_and_helpers(x: &[f64]) -> f64 {
        let a = K * x[0];
        let b = {
            const K: f64 = 0.5;
            K * x[1] * x[1]
        };
        let mut s = a + b;
        for i in 0..4 {
            let (r, c) = split(i, 2);
            if is_even(i) && !is_even(r + c + 1) {
                s += x[r] * x[c + 2];
            }
        }
        s
    }

    #[test]
    fn inner_constants_and_integer_helpers() {
        let x = [0.3, -0.4, 0.9, 1.1];
        let grad = check_slice(
            inner_constants_and_helpers,
            inner_constants_and_helpers_vjp,
            inner_constants_and_helpers_jvp,
            &x,
        );
        // 100 x₀ + x₁²/2, then i = 0 → (0, 0), r + c + 1 odd: x₀ x₂; i = 2 →
        // (1, 0), r + c + 1 even: nothing.
        assert_close(&grad, &[K + x[2], x[1], x[0], 0.0]);
    }

    /// `return;` in a function that returns nothing, before and in a loop.
    #[differentiate(vjp, jvp)]
    fn squash_until_large(x: &mut [f64], a: f64) {
        if x.len() < 2 {
            return;
        }
        for i in 0..x.len() {
            if x[i] > 2.0 {
                return;
            }
            x[i] = a * x[i] * x[i];
        }
    }

    #[test]
    fn return_without_a_value() {
        let a = 0.3;
        // X[3] = 2.1 stops the loop; one element returns at once.
        for len in [1, 5] {
            let x0 = X[..len].to_vec();
            let mut x = x0.clone();
            let mut d_x = vec![1.0; len];
            let d_a = squash_until_large_vjp(&mut x, &mut d_x, a);
            let mut primal = x0.clone();
            squash_until_large(&mut primal, a);
            assert_eq!(x, primal);
            let seed = vec![1.0; len];
            let checked = check_in_place(
                |x, a| squash_until_large(x, a),
                |x, d_x, a| squash_until_large_vjp(x, d_x, a),
                &x0,
                a,
                &seed,
            );
            assert_close(&checked[..len], &d_x);
            let squashed = if len < 2 { 0 } else { 3 };
            let mut expected = vec![1.0; len];
            for i in 0..squashed {
                expected[i] = 2.0 * a * x0[i];
            }
            assert_close(&d_x, &expected);
            assert_close(&[d_a], &[x0[..squashed].iter().map(|v| v * v).sum()]);
            // Forward mode: the tangent of every output against the seed.
            let (mut y, mut t) = (x0.clone(), vec![0.0; len]);
            squash_until_large_jvp(&mut y, &mut t, a, 1.0);
            assert_eq!(y, primal);
            let dot: f64 = t.iter().sum();
            assert!((dot - d_a).abs() < 1e-12, "{dot} vs {d_a}");
        }
    }

    /// Statements and arms under `#[cfg]`, and `cfg!`: the generated
    /// functions compute what the function compiled here computes.
    #[differentiate(vjp, jvp)]
    #[allow(unused_mut)] // `y` is only reassigned under a false condition.
    fn configured(x: &[f64]) -> f64 {
        let mut y = x[0];
        #[cfg(miri)]
        {
            y += 1000.0 * x[1];
        }
        #[cfg(not(miri))]
        let z = y * x[1];
        #[cfg(miri)]
        let z = y;
        #[cfg(debug_assertions)]
        let w = 2.0 * z;
        #[cfg(not(debug_assertions))]
        let w = 3.0 * z;
        let v = if cfg!(target_pointer_width = "16") {
            0.0
        } else {
            w
        };
        match x.len() {
            #[cfg(miri)]
            3 => v * 100.0,
            _ => v,
        }
    }

    #[test]
    fn code_under_a_false_cfg_does_not_run() {
        let x = &X[..3];
        let grad = check_slice(configured, configured_vjp, configured_jvp, x);
        let scale = if cfg!(debug_assertions) { 2.0 } else { 3.0 };
        assert_close(&grad, &[scale * x[1], scale * x[0], 0.0]);
    }
}

mod options_and_integer_methods {
    use super::*;

    /// `if let Some(…)` of `first`, `last` and `get`, by reference and copied.
    #[differentiate(vjp, jvp)]
    fn ends_and_middle(x: &[f64]) -> f64 {
        let mut s = 0.0;
        if let Some(&first) = x.first() {
            s += first * first;
        }
        if let Some(last) = x.last().copied() {
            s += last.sin();
        } else {
            s -= 1.0;
        }
        for i in 0..x.len() + 2 {
            if let Some(v) = x.get(i * 2) {
                s += v * 0.5;
            }
        }
        if let Some(w) = x[1..].get(1) {
            s += w * w * w;
        }
        s
    }

    /// Integer methods on indices and counts, run as written.
    #[differentiate(vjp, jvp)]
    fn tail_and_strides(x: &[f64]) -> f64 {
        let n = x.len();
        let tail: f64 = x[n.saturating_sub(3)..].iter().sum();
        let mid = n.abs_diff(2).pow(1);
        let weight = if n.is_power_of_two() { 2.0 } else { 3.0 };
        tail * x[mid.min(n - 1)] + weight * x[0]
    }

    #[test]
    fn options_of_elements_and_integer_methods() {
        let grad = check_slice(
            ends_and_middle,
            ends_and_middle_vjp,
            ends_and_middle_jvp,
            &X,
        );
        let mut expected = vec![0.0; X.len()];
        expected[0] += 2.0 * X[0];
        expected[6] += X[6].cos();
        for i in (0..X.len()).step_by(2) {
            expected[i] += 0.5;
        }
        expected[2] += 3.0 * X[2] * X[2];
        assert_close(&grad, &expected);
        // One element: `x[1..]` is empty, so its `get(1)` is `None`.
        let grad = check_slice(
            ends_and_middle,
            ends_and_middle_vjp,
            ends_and_middle_jvp,
            &[0.3],
        );
        assert_close(&grad, &[0.6 + 0.3_f64.cos() + 0.5]);

        // n = 7: the last 3, x[5], weight 3.
        let grad = check_slice(
            tail_and_strides,
            tail_and_strides_vjp,
            tail_and_strides_jvp,
            &X,
        );
        let tail: f64 = X[4..].iter().sum();
        let mut expected = vec![0.0; X.len()];
        for i in 4..7 {
            expected[i] += X[5];
        }
        expected[5] += tail;
        expected[0] += 3.0;
        assert_close(&grad, &expected);
        // n = 4 is a power of two; n = 1 saturates.
        let y = [0.5, -1.0, 2.0, 0.25];
        check_slice(
            tail_and_strides,
            tail_and_strides_vjp,
            tail_and_strides_jvp,
            &y,
        );
        let one = [0.7];
        let grad = check_slice(
            tail_and_strides,
            tail_and_strides_vjp,
            tail_and_strides_jvp,
            &one,
        );
        // 1 is a power of two: weight 2.
        assert_close(&grad, &[2.0 * 0.7 + 2.0]);
    }
}

mod temporaries_filled_in_loops {
    use super::*;

    /// A `Vec` made in a loop and filled by the `for` after it, one push
    /// per iteration: `Vec::new()`, `with_capacity`, `vec![]`.
    #[differentiate(vjp, jvp)]
    fn rows(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for r in 0..3 {
            let mut shifted = Vec::new();
            for &v in x {
                shifted.push(v * (r as f64 + 1.0) - 0.5);
            }
            let mut squares = Vec::with_capacity(shifted.len());
            for s in shifted.iter().skip(1) {
                squares.push(s * s);
            }
            total += squares.iter().sum::<f64>() / squares.len() as f64 + shifted[0];
        }
        if total > 0.0 {
            let mut tail = vec![];
            for i in 1..x.len() {
                tail.push(x[i] - x[i - 1]);
            }
            total += tail.iter().map(|d| d.abs()).sum::<f64>();
        }
        total
    }

    #[test]
    fn pushes_fill_a_buffer_of_the_loops_length() {
        let grad = check_slice(rows, rows_vjp, rows_jvp, &X);
        // By hand: Σ_r [mean over i ≥ 1 of ((r+1) x_i − ½)² + (r+1) x_0 − ½]
        // plus Σ |x_i − x_{i−1}| (the total is positive at X).
        let n = X.len();
        let mut expected = vec![0.0; n];
        for r in 0..3 {
            let c = f64::from(r) + 1.0;
            for i in 1..n {
                expected[i] += 2.0 * (c * X[i] - 0.5) * c / (n - 1) as f64;
            }
            expected[0] += c;
        }
        for i in 1..n {
            let sign = (X[i] - X[i - 1]).signum();
            expected[i] += sign;
            expected[i - 1] -= sign;
        }
        assert_close(&grad, &expected);
    }
}

mod element_swaps {
    use super::*;

    /// Bubble sort with `swap`, then the smallest twice plus the largest.
    #[differentiate(vjp, jvp)]
    fn extremes_by_sorting(xs: &[f64]) -> f64 {
        let mut v = xs.to_vec();
        for i in 0..v.len() {
            for j in 0..v.len() - 1 - i {
                if v[j] > v[j + 1] {
                    v.swap(j, j + 1);
                }
            }
        }
        v[0] * 2.0 + v[v.len() - 1] * v[1]
    }

    #[test]
    fn swap_moves_values_and_their_adjoints() {
        let grad = check_slice(
            extremes_by_sorting,
            extremes_by_sorting_vjp,
            extremes_by_sorting_jvp,
            &X,
        );
        let mut sorted: Vec<(f64, usize)> = X.iter().copied().zip(0..).collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (min, second, max) = (sorted[0], sorted[1], sorted[X.len() - 1]);
        let mut expected = vec![0.0; X.len()];
        expected[min.1] += 2.0;
        expected[max.1] += second.0;
        expected[second.1] += max.0;
        assert_close(&grad, &expected);
    }
}

mod buffers_chosen_by_a_branch {
    use super::*;

    /// `let w = if … { &a } else { &b[1..] };`: the chosen buffer (a copy).
    #[differentiate(vjp, jvp)]
    fn chosen(a: &[f64], b: &[f64]) -> f64 {
        let w = if a[0] > b[0] { a } else { &b[1..] };
        w.iter().map(|x| x * x).sum::<f64>() + w[0]
    }

    #[test]
    fn the_adjoint_goes_to_the_chosen_buffer() {
        // X[0] = 0.3 > Y[0] = 1.1 is false: w = Y[1..].
        let grad = check_pair(chosen, chosen_vjp, chosen_jvp, &X, &Y);
        let n = X.len();
        let mut expected = vec![0.0; 2 * n];
        for i in 1..n {
            expected[n + i] = 2.0 * Y[i];
        }
        expected[n + 1] += 1.0;
        assert_close(&grad, &expected);
        // The other branch: w = a.
        let grad = check_pair(chosen, chosen_vjp, chosen_jvp, &Y, &X);
        let mut expected: Vec<f64> = Y.iter().map(|y| 2.0 * y).collect();
        expected[0] += 1.0;
        expected.extend(vec![0.0; n]);
        assert_close(&grad, &expected);
    }
}

mod cursors {
    use super::*;

    /// `let mut it = x.iter();`, items taken with `next()`, the rest looped over.
    #[differentiate(vjp, jvp)]
    fn ewma(x: &[f64]) -> f64 {
        let mut it = x.iter();
        let mut s = *it.next().unwrap();
        let second = it.next().copied().unwrap_or(0.0);
        s += 0.5 * second;
        for &v in it {
            s = 0.3 * v + 0.7 * s;
        }
        s
    }

    #[test]
    fn next_then_the_rest() {
        let grad = check_slice(ewma, ewma_vjp, ewma_jvp, &X);
        // s₁ = x₀ + ½ x₁, then each later x_k enters with 0.3 · 0.7^(n−1−k).
        let n = X.len();
        let mut expected = vec![0.0; n];
        let tail = 0.7_f64.powi(i32::try_from(n - 2).unwrap());
        expected[0] = tail;
        expected[1] = 0.5 * tail;
        for k in 2..n {
            expected[k] = 0.3 * 0.7_f64.powi(i32::try_from(n - 1 - k).unwrap());
        }
        assert_close(&grad, &expected);
        // One element: the `unwrap_or` takes its fallback, the loop runs no trip.
        let grad = check_slice(ewma, ewma_vjp, ewma_jvp, &[0.4]);
        assert_close(&grad, &[1.0]);
    }
}

mod cursor_consumers {
    use super::*;

    /// The rest of a cursor consumed by `sum` and by a `map` chain.
    #[differentiate(vjp, jvp)]
    fn head_times_rest(x: &[f64]) -> f64 {
        let mut it = x.iter();
        let head = *it.next().unwrap();
        let mut again = x.iter();
        let _ = again.next().unwrap();
        head * it.sum::<f64>() + again.map(|v| v * v).sum::<f64>()
    }

    #[test]
    fn the_rest_of_a_cursor_is_a_sub_slice() {
        let grad = check_slice(
            head_times_rest,
            head_times_rest_vjp,
            head_times_rest_jvp,
            &X,
        );
        let rest: f64 = X[1..].iter().sum();
        let mut expected: Vec<f64> = X.iter().map(|v| X[0] + 2.0 * v).collect();
        expected[0] = rest;
        assert_close(&grad, &expected);
    }
}

mod chunk_remainders {
    use super::*;

    /// Pairs, and what `chunks_exact` leaves over, bound to a name.
    #[differentiate(vjp, jvp)]
    fn pairs_and_rest(x: &[f64]) -> f64 {
        let left = x.chunks_exact(2).remainder();
        let rest: f64 = left.iter().map(|v| v * 3.0).sum();
        let again: f64 = x.chunks_exact(2).remainder().iter().sum();
        x.chunks_exact(2).map(|p| p[0] * p[1]).sum::<f64>() + rest + again
    }

    #[test]
    fn the_remainder_is_the_tail() {
        // X has 7 elements: three pairs, and X[6] left over.
        let grad = check_slice(pairs_and_rest, pairs_and_rest_vjp, pairs_and_rest_jvp, &X);
        let expected = [X[1], X[0], X[3], X[2], X[5], X[4], 3.0 + 1.0];
        assert_close(&grad, &expected);
        let grad = check_slice(
            pairs_and_rest,
            pairs_and_rest_vjp,
            pairs_and_rest_jvp,
            &X[..4],
        );
        assert_close(&grad, &[X[1], X[0], X[3], X[2]]);
    }
}

mod chains_in_variables {
    use super::*;

    /// An iterator chain bound to a name, then consumed: by a `for`, by
    /// more adapters and a consumer.
    #[differentiate(vjp, jvp)]
    fn named_chains(x: &[f64], y: &[f64]) -> f64 {
        let pairs = x.iter().zip(y);
        let mut s = 0.0;
        for (a, b) in pairs {
            s += a * b;
        }
        let chunks = x.chunks_exact(2);
        let scaled = y.iter().map(|v| v * 2.0);
        s + chunks.map(|p| p[0] * p[1]).sum::<f64>() + scaled.sum::<f64>()
    }

    #[test]
    fn a_named_chain_is_lowered_where_it_is_consumed() {
        let grad = check_pair(named_chains, named_chains_vjp, named_chains_jvp, &X, &Y);
        let n = X.len();
        let mut expected: Vec<f64> = Y.iter().chain(&X).copied().collect();
        for k in (0..n - 1).step_by(2) {
            expected[k] += X[k + 1];
            expected[k + 1] += X[k];
        }
        for e in &mut expected[n..] {
            *e += 2.0;
        }
        assert_close(&grad, &expected);
    }
}

mod while_let_next {
    use super::*;

    /// `while let Some(&v) = it.next()` after taking the first item.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::while_let_on_iterator)] // The spelling under test.
    fn decayed(x: &[f64]) -> f64 {
        let mut it = x.iter();
        let mut s = *it.next().unwrap();
        while let Some(&v) = it.next() {
            s = s * 0.5 + v * v;
        }
        s
    }

    #[test]
    fn the_loop_drains_the_cursor() {
        let grad = check_slice(decayed, decayed_vjp, decayed_jvp, &X);
        let n = X.len();
        let mut expected = vec![0.0; n];
        expected[0] = 0.5_f64.powi(i32::try_from(n - 1).unwrap());
        for k in 1..n {
            expected[k] = 2.0 * X[k] * 0.5_f64.powi(i32::try_from(n - 1 - k).unwrap());
        }
        assert_close(&grad, &expected);
    }
}

mod positions {
    use super::*;

    /// `position` taken out of its `Option`, used as an index.
    #[differentiate(vjp, jvp)]
    fn first_large(x: &[f64], t: f64) -> f64 {
        let k = x.iter().position(|&v| v > t).unwrap_or(x.len() - 1);
        x[k] * t
    }

    #[test]
    fn the_first_item_that_passes() {
        // X = [0.3, -1.2, 0.8, 2.1, …]: the first above 0.5 is X[2].
        let n = X.len();
        let point: Vec<f64> = X.iter().copied().chain([0.5]).collect();
        let grad = check_scalar(
            |p| first_large(&p[..n], p[n]),
            |p, s| {
                let mut d = vec![0.0; n];
                let (out, d_t) = first_large_vjp(&p[..n], &mut d, p[n], s);
                d.push(d_t);
                (out, d)
            },
            &point,
        );
        let mut expected = vec![0.0; n + 1];
        expected[2] = 0.5;
        expected[n] = X[2];
        assert_close(&grad, &expected);
        // None passes: the fallback, the last element.
        assert_eq!(first_large(&X, 10.0), X[n - 1] * 10.0);
        let mut d = vec![0.0; n];
        let (out, d_t) = first_large_vjp(&X, &mut d, 10.0, 1.0);
        assert_eq!((out, d_t), (X[n - 1] * 10.0, X[n - 1]));
        assert_eq!(d[n - 1], 10.0);
        let (jvp_out, t) = first_large_jvp(&X, &[0.0; 7], 10.0, 1.0);
        assert_eq!((jvp_out, t), (out, X[n - 1]));
    }
}

mod argmax {
    use super::*;

    /// `max_by` over `enumerate()`: the largest element with its index.
    #[differentiate(vjp, jvp)]
    fn weighted_max(x: &[f64]) -> f64 {
        let (i, &v) = x
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        v * (i as f64 + 1.0)
    }

    /// `min_by` over a `zip`, compared by the product of the pair.
    #[differentiate(vjp, jvp)]
    fn smallest_product(x: &[f64], y: &[f64]) -> f64 {
        let (a, b) = x
            .iter()
            .zip(y)
            .min_by(|p, q| (p.0 * p.1).total_cmp(&(q.0 * q.1)))
            .expect("not empty");
        a * b + a
    }

    #[test]
    fn tuples_compared_as_written() {
        // X's largest is X[3] = 2.1.
        let grad = check_slice(weighted_max, weighted_max_vjp, weighted_max_jvp, &X);
        let mut expected = vec![0.0; X.len()];
        expected[3] = 4.0;
        assert_close(&grad, &expected);
        // Ties: `max_by` keeps the last (a kink: no finite differences).
        let ties = [1.0, 3.0, 3.0, 0.5];
        let mut d = [0.0; 4];
        assert_eq!(weighted_max_vjp(&ties, &mut d, 1.0), weighted_max(&ties));
        assert_eq!(d, [0.0, 0.0, 3.0, 0.0]);

        let grad = check_pair(
            smallest_product,
            smallest_product_vjp,
            smallest_product_jvp,
            &X,
            &Y,
        );
        let k = (0..X.len())
            .min_by(|&p, &q| (X[p] * Y[p]).total_cmp(&(X[q] * Y[q])))
            .unwrap();
        let n = X.len();
        let mut expected = vec![0.0; 2 * n];
        expected[k] = Y[k] + 1.0;
        expected[n + k] = X[k];
        assert_close(&grad, &expected);
    }
}

/// Idioms a user probe found rejected: tuple-valued branches, `where`
/// clauses, `std::iter::zip`.
mod probe {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn ordered(x: &[f64]) -> f64 {
        let (lo, hi) = if x[0] < x[1] {
            (x[0], x[1] * 2.0)
        } else {
            (x[1], x[0] * 2.0)
        };
        lo * hi.sin()
    }

    #[test]
    fn a_tuple_chosen_by_a_branch_is_destructured() {
        for point in [[0.3, 0.7], [0.9, 0.7]] {
            let grad = check_slice(ordered, ordered_vjp, ordered_jvp, &point);
            let (lo, hi, lo_is_first) = if point[0] < point[1] {
                (point[0], point[1] * 2.0, true)
            } else {
                (point[1], point[0] * 2.0, false)
            };
            let (d_lo, d_hi) = (hi.sin(), 2.0 * lo * hi.cos());
            let expected = if lo_is_first {
                [d_lo, d_hi]
            } else {
                [d_hi, d_lo]
            };
            assert_close(&grad, &expected);
        }
    }

    /// A tuple output chosen by `if … else if … else`, and nested tuples in
    /// a loop.
    #[differentiate(vjp, jvp)]
    fn polar_or_not(x: f64, y: f64) -> (f64, f64) {
        let s = x * y;
        if s > 0.0 {
            (s.sqrt(), x)
        } else if s < -1.0 {
            (y, s)
        } else {
            (x + y, s * s)
        }
    }

    #[test]
    fn a_tuple_output_chosen_by_branches() {
        for (x, y) in [(0.3, 0.7), (-3.0, 0.7), (-0.3, 0.7)] {
            let seed = (1.0, -2.0);
            let (out, d_x, d_y) = polar_or_not_vjp(x, y, seed);
            assert_eq!(out, polar_or_not(x, y));
            // Dot-product test between the modes, along (0.4, -1.1).
            let ((_, _), (t_a, t_b)) = polar_or_not_jvp(x, 0.4, y, -1.1);
            let lhs = seed.0 * t_a + seed.1 * t_b;
            assert!((lhs - (d_x * 0.4 - d_y * 1.1)).abs() < 1e-12);
            let fd = |h: f64| {
                let (a, b) = polar_or_not(x + 0.4 * h, y - 1.1 * h);
                let (c, d) = polar_or_not(x - 0.4 * h, y + 1.1 * h);
                (seed.0 * (a - c) + seed.1 * (b - d)) / (2.0 * h)
            };
            assert!((fd(1e-6) - lhs).abs() < 1e-6 * lhs.abs().max(1.0));
        }
    }

    #[differentiate(vjp, jvp)]
    fn nested_in_a_loop(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for &v in x {
            let (a, (b, c)) = if v > 0.0 {
                (v, (1.0, v * 2.0))
            } else {
                (0.5 * v, (v, 3.0))
            };
            total += a * b + c;
        }
        total
    }

    #[test]
    fn nested_tuples_of_a_branch_in_a_loop() {
        let grad = check_slice(
            nested_in_a_loop,
            nested_in_a_loop_vjp,
            nested_in_a_loop_jvp,
            &X,
        );
        let expected: Vec<f64> = X.iter().map(|&v| if v > 0.0 { 3.0 } else { v }).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate]
    fn bounded_by_where<T>(x: T, y: T) -> T
    where
        T: Float,
    {
        x * y + x.sin()
    }

    #[test]
    fn a_where_clause_bounds_the_float_type() {
        let (out, d_x, d_y) = bounded_by_where_vjp(0.5_f64, 2.0, 1.0);
        assert_eq!(out, bounded_by_where(0.5, 2.0));
        assert_close(&[d_x, d_y], &[2.0 + 0.5_f64.cos(), 0.5]);
        let (_, d_x, _) = bounded_by_where_vjp(0.5_f32, 2.0, 1.0);
        assert!((d_x - (2.0 + 0.5_f32.cos())).abs() < 1e-6);
    }

    #[differentiate(vjp, jvp)]
    fn zipped(x: &[f64], y: &[f64]) -> f64 {
        let mut s: f64 = std::iter::zip(x, y).map(|(a, b)| a * b).sum();
        for (a, b) in std::iter::zip(x.iter(), y) {
            s += a * b.sin();
        }
        s
    }

    #[test]
    fn std_iter_zip_is_a_zip() {
        let grad = check_pair(zipped, zipped_vjp, zipped_jvp, &X, &Y);
        let expected: Vec<f64> = Y
            .iter()
            .map(|b| b + b.sin())
            .chain(X.iter().zip(&Y).map(|(a, b)| a + a * b.cos()))
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn spherical(r: f64, th: f64, ph: f64) -> [f64; 3] {
        [
            r * th.sin() * ph.cos(),
            r * th.sin() * ph.sin(),
            r * th.cos(),
        ]
    }

    #[differentiate(vjp, jvp)]
    fn taken_apart(p: &[f64]) -> f64 {
        let [x, y, z] = spherical(p[0], p[1], p[2]);
        let q = spherical(p[2], p[1], p[0]);
        let [u, _, w] = q;
        x * y + z * u - w * q[1]
    }

    #[test]
    fn an_array_returned_by_a_callee_is_taken_apart() {
        let grad = check_slice(
            taken_apart,
            taken_apart_vjp,
            taken_apart_jvp,
            &[1.2, 0.4, 0.9],
        );
        assert!(grad.iter().all(|g| g.is_finite() && *g != 0.0));
    }

    // Written as users write it; clippy suggests `next_back()`.
    #[allow(clippy::double_ended_iterator_last)]
    #[differentiate(vjp, jvp)]
    fn ends_of_chains(x: &[f64]) -> f64 {
        let last = x.iter().map(|v| v * 3.0).last().unwrap();
        let first = x.iter().map(|v| v.sin()).next().unwrap_or(0.0);
        let skipped = x.iter().skip(1).copied().last().expect("two items");
        last + first * skipped
    }

    #[test]
    fn last_and_next_of_a_chain() {
        let grad = check_slice(ends_of_chains, ends_of_chains_vjp, ends_of_chains_jvp, &X);
        let n = X.len();
        let mut expected = vec![0.0; n];
        expected[n - 1] += 3.0 + X[0].sin();
        expected[0] += X[0].cos() * X[n - 1];
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn peak_or_floor(x: &[f64]) -> f64 {
        let floor = 0.1;
        let mut s = if let Some(m) = x.iter().copied().reduce(f64::max) {
            m * 2.0 + floor
        } else {
            floor
        };
        if let Some(&m) = x.iter().min_by(|a, b| a.total_cmp(b)) {
            s += m * m;
        }
        s
    }

    #[test]
    fn if_let_of_a_reduced_chain() {
        let grad = check_slice(peak_or_floor, peak_or_floor_vjp, peak_or_floor_jvp, &X);
        let (max_at, min_at) = (3, 1);
        let mut expected = vec![0.0; X.len()];
        expected[max_at] += 2.0;
        expected[min_at] += 2.0 * X[min_at];
        assert_close(&grad, &expected);
        let (out, _) = peak_or_floor_jvp(&[], &[]);
        assert_eq!(out, 0.1);
    }
}

/// Small arrays taken by value, as geometry code passes points and vectors:
/// `_vjp` returns their adjoints by value, callers pass them by value (from
/// parameters, locals and array literals), in loops too.
mod arrays_by_value {
    use super::*;
    use ad_runtime::Float;
    use ad_tests::check_vector;

    #[differentiate(vjp, jvp)]
    fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }

    #[differentiate(vjp, jvp)]
    fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    #[differentiate(vjp, jvp)]
    fn norm<T: Float>(v: [T; 3]) -> T {
        let mut s = T::ZERO;
        for x in v {
            s += x * x;
        }
        s.sqrt()
    }

    /// Composition by value: each intermediate array is annotated, so the
    /// macro knows the call returns an array.
    #[differentiate(vjp, jvp)]
    fn triangle_area(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
        let ab: [f64; 3] = sub(b, a);
        let ac: [f64; 3] = sub(c, a);
        let n: [f64; 3] = cross(ab, ac);
        0.5 * norm(n)
    }

    /// The `k`th point of a slice of points.
    fn point(p: &[f64], k: usize) -> [f64; 3] {
        [p[3 * k], p[3 * k + 1], p[3 * k + 2]]
    }

    /// The inputs of a function of three points, as one slice.
    fn points(p: &[f64]) -> ([f64; 3], [f64; 3], [f64; 3]) {
        (point(p, 0), point(p, 1), point(p, 2))
    }

    #[test]
    fn a_triangle_area_from_array_helpers() {
        let x = [0.1, 0.2, -0.3, 1.2, 0.4, 0.1, -0.2, 1.1, 0.5];
        let f = |p: &[f64]| {
            let (a, b, c) = points(p);
            triangle_area(a, b, c)
        };
        let grad = check_scalar(
            f,
            |p, seed| {
                let (a, b, c) = points(p);
                let (out, d_a, d_b, d_c) = triangle_area_vjp(a, b, c, seed);
                (out, [d_a, d_b, d_c].concat())
            },
            &x,
        );
        check_jvp(
            f,
            |p, u| {
                let ((a, b, c), (t_a, t_b, t_c)) = (points(p), points(u));
                triangle_area_jvp(a, t_a, b, t_b, c, t_c)
            },
            &grad,
            &x,
        );
        // Closed form: moving a vertex changes the area by half the normal
        // crossed with the opposite edge, d area / d a = ½ n̂ × (c − b).
        let (a, b, c) = points(&x);
        let n = cross(sub(b, a), sub(c, a));
        let unit = n.map(|v| v / norm(n));
        let half = |e: [f64; 3]| cross(unit, e).map(|v| 0.5 * v);
        let expected = [half(sub(c, b)), half(sub(a, c)), half(sub(b, a))].concat();
        assert_close(&grad, &expected);
    }

    /// `let [x, y, z] = cross(a, b);` with arrays passed by value, an array
    /// literal passed by value, and the generic callee at `f64`.
    #[differentiate(vjp, jvp)]
    fn torque(r: [f64; 3], f: [f64; 3], s: f64) -> f64 {
        let [x, y, z] = cross(r, f);
        let w: [f64; 3] = cross([x, y, z], [s, 1.0, 2.0]);
        w[0] + w[1] * w[2] + norm(r)
    }

    #[test]
    fn destructured_results_and_literal_arguments() {
        let x = [1.0, 2.0, 3.0, 0.5, -1.0, 2.0, 0.3];
        let f = |p: &[f64]| torque(point(p, 0), point(p, 1), p[6]);
        let grad = check_scalar(
            f,
            |p, seed| {
                let (out, d_r, d_f, d_s) = torque_vjp(point(p, 0), point(p, 1), p[6], seed);
                (out, [&d_r[..], &d_f[..], &[d_s]].concat())
            },
            &x,
        );
        check_jvp(
            f,
            |p, u| {
                torque_jvp(
                    point(p, 0),
                    point(u, 0),
                    point(p, 1),
                    point(u, 1),
                    p[6],
                    u[6],
                )
            },
            &grad,
            &x,
        );
        // d/ds: w = t × (s, 1, 2) with t = r × f, so dw/ds = t × e₀.
        let t = cross(point(&x, 0), point(&x, 1));
        let w = cross(t, [x[6], 1.0, 2.0]);
        let dw = cross(t, [1.0, 0.0, 0.0]);
        assert_close(&[grad[6]], &[dw[0] + dw[1] * w[2] + w[1] * dw[2]]);
    }

    /// An array returned by value from an array taken by value, changed
    /// through a copy (`let mut q = p;`).
    #[differentiate(vjp, jvp)]
    fn rotate(p: [f64; 2], theta: f64) -> [f64; 2] {
        let mut q = p;
        let (s, c) = theta.sin_cos();
        q[0] = c * p[0] - s * p[1];
        q[1] = s * p[0] + c * p[1];
        q
    }

    #[test]
    fn an_array_output_from_an_array_input() {
        let x = [0.7, -0.2, 0.4];
        let f = |p: &[f64]| rotate([p[0], p[1]], p[2]).to_vec();
        let adjoint = check_vector(
            f,
            |p, seed| {
                let (out, d_p, d_theta) = rotate_vjp([p[0], p[1]], p[2], &[seed[0], seed[1]]);
                (out.to_vec(), vec![d_p[0], d_p[1], d_theta])
            },
            &x,
            &[1.0, -0.5],
        );
        // Rotating a seed back: d_p = Rᵀ seed; d_theta = seed · R' p.
        let (s, c) = x[2].sin_cos();
        let expected = [
            c - 0.5 * s,
            -s - 0.5 * c,
            (-s * x[0] - c * x[1]) - 0.5 * (c * x[0] - s * x[1]),
        ];
        assert_close(&adjoint, &expected);
        // The tangent of the output along (u, t) is R u + t R' p.
        let ((_, t_out), (s, c)) = (rotate_jvp([x[0], x[1]], [0.3, 0.1], x[2], 2.0), (s, c));
        let expected = [
            c * 0.3 - s * 0.1 + 2.0 * (-s * x[0] - c * x[1]),
            s * 0.3 + c * 0.1 + 2.0 * (c * x[0] - s * x[1]),
        ];
        assert_close(&t_out, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn length2(v: [f64; 2]) -> f64 {
        (v[0] * v[0] + v[1] * v[1]).sqrt()
    }

    /// A polyline's length: an array literal made in the loop and passed
    /// by value each iteration.
    #[differentiate(vjp, jvp)]
    fn polyline(x: &[f64]) -> f64 {
        let n = x.len() / 2;
        let mut total = 0.0;
        for i in 1..n {
            total += length2([x[2 * i] - x[2 * i - 2], x[2 * i + 1] - x[2 * i - 1]]);
        }
        total
    }

    #[test]
    fn by_value_calls_in_a_loop() {
        let x = [0.0, 0.0, 1.0, 0.5, 1.5, -0.5, 3.0, 0.2];
        let grad = check_slice(polyline, polyline_vjp, polyline_jvp, &x);
        // Each vertex gets the unit vectors of its two segments.
        let unit = |i: usize| {
            let (dx, dy) = (x[2 * i] - x[2 * i - 2], x[2 * i + 1] - x[2 * i - 1]);
            let l = dx.hypot(dy);
            [dx / l, dy / l]
        };
        let mut expected = vec![0.0; x.len()];
        for i in 1..4 {
            let u = unit(i);
            for k in 0..2 {
                expected[2 * i + k] += u[k];
                expected[2 * i - 2 + k] -= u[k];
            }
        }
        assert_close(&grad, &expected);
    }

    /// `*a` of a `&[f64; 3]` parameter passes a copy; the returned array is
    /// then changed in place (`let mut n = …;`).
    #[differentiate(vjp, jvp)]
    fn scaled_normal(a: &[f64; 3], b: &[f64; 3], s: f64) -> f64 {
        let mut n = cross(*a, *b);
        n[0] *= s;
        norm(n)
    }

    #[test]
    fn copies_of_referenced_arrays_and_written_results() {
        let x = [1.0, 2.0, 3.0, 0.5, -1.0, 2.0, 0.3];
        let f = |p: &[f64]| scaled_normal(&point(p, 0), &point(p, 1), p[6]);
        let grad = check_scalar(
            f,
            |p, seed| {
                let (mut d_a, mut d_b) = ([0.0; 3], [0.0; 3]);
                let (a, b) = (point(p, 0), point(p, 1));
                let (out, d_s) = scaled_normal_vjp(&a, &mut d_a, &b, &mut d_b, p[6], seed);
                (out, [&d_a[..], &d_b[..], &[d_s]].concat())
            },
            &x,
        );
        check_jvp(
            f,
            |p, u| {
                let (a, b, t_a, t_b) = (point(p, 0), point(p, 1), point(u, 0), point(u, 1));
                scaled_normal_jvp(&a, &t_a, &b, &t_b, p[6], u[6])
            },
            &grad,
            &x,
        );
        // d/ds of |(s n₀, n₁, n₂)| is s n₀² / |·|.
        let n = cross(point(&x, 0), point(&x, 1));
        let m = [x[6] * n[0], n[1], n[2]];
        assert_close(&[grad[6]], &[m[0] * n[0] / norm(m)]);
    }

    #[differentiate(vjp, jvp)]
    fn squares(xs: &[f64]) -> Vec<f64> {
        xs.iter().map(|x| x * x).collect()
    }

    /// `&g(x)` passes the buffer a call returns straight on, to the runtime
    /// and to a callee taking an array by value's buffer.
    #[differentiate(vjp, jvp)]
    fn sums_of_powers(xs: &[f64]) -> f64 {
        ad_runtime::sum(&squares(xs)) + ad_runtime::dot(&squares(xs), xs)
    }

    #[test]
    fn a_returned_buffer_borrowed_in_place() {
        let x = [1.0, -2.0, 0.5];
        let grad = check_slice(sums_of_powers, sums_of_powers_vjp, sums_of_powers_jvp, &x);
        // Σ x² + Σ x³: 2x + 3x².
        let expected: Vec<f64> = x.iter().map(|v| 2.0 * v + 3.0 * v * v).collect();
        assert_close(&grad, &expected);
    }

    /// `wrt` leaves an array by value out; an integer array is constant.
    #[differentiate(wrt(a))]
    fn weighted(a: [f64; 2], b: [f64; 2], idx: [usize; 2]) -> f64 {
        a[idx[0]] * b[idx[1]] + a[idx[1]].powi(2)
    }

    #[test]
    fn wrt_and_constant_arrays() {
        let (out, d_a) = weighted_vjp([0.5, 2.0], [3.0, 4.0], [1, 0], 1.0);
        assert_eq!(out, weighted([0.5, 2.0], [3.0, 4.0], [1, 0]));
        // a₁ b₀ + a₀²: d_a = (2 a₀, b₀).
        assert_eq!(d_a, [1.0, 3.0]);
    }

    #[test]
    fn f32_and_the_split_api() {
        let (out, d_v) = norm_vjp([3.0_f32, 4.0, 0.0], 2.0);
        assert_eq!((out, d_v), (5.0, [1.2, 1.6, 0.0]));
        // `_forward` reads the array as a buffer: its pullback takes it
        // again, with a shadow the adjoint is added into.
        let v = [1.0, -2.0, 2.0];
        let (out, pullback) = norm_forward(v);
        let mut d_v = [0.5; 3];
        pullback(&v, &mut d_v, 3.0);
        assert_eq!(out, 3.0);
        assert_close(&d_v, &[1.5, -1.5, 2.5]);
    }
}

/// `return (a, b);` in a function returning a tuple: from a branch, from a
/// loop, and of a call's tuple.
mod early_tuple_returns {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn split(x: f64, y: f64) -> (f64, f64) {
        if x < 0.0 {
            return (y, x * y);
        }
        let s = x.sqrt();
        (s * y, s + y)
    }

    /// The first element above `t`, with its index as a weight; the tail
    /// if there is none.
    #[differentiate(vjp, jvp)]
    fn first_above(xs: &[f64], t: f64) -> (f64, f64) {
        for i in 0..xs.len() {
            if xs[i] > t {
                return (xs[i] * t, (i + 1) as f64 * xs[i]);
            }
        }
        (t, t * t)
    }

    #[differentiate(vjp, jvp)]
    fn polar(x: f64, y: f64) -> (f64, f64) {
        (x.hypot(y), y.atan2(x))
    }

    #[differentiate(vjp, jvp)]
    fn polar_or_scaled(x: f64, y: f64, k: f64) -> (f64, f64) {
        if k > 1.0 {
            return polar(k * x, y);
        }
        (k * x, k * y)
    }

    /// Checks a function of a slice returning two floats, under the seed
    /// `seed`, three ways; returns the adjoint.
    fn check_pair_output(
        f: impl Fn(&[f64]) -> (f64, f64),
        vjp: impl Fn(&[f64], (f64, f64)) -> ((f64, f64), Vec<f64>),
        jvp: impl Fn(&[f64], &[f64]) -> ((f64, f64), (f64, f64)),
        x: &[f64],
        seed: (f64, f64),
    ) -> Vec<f64> {
        let ((a, b), _) = vjp(x, seed);
        assert_eq!((a, b), f(x));
        let grad = check_scalar(
            |p| {
                let (a, b) = f(p);
                seed.0 * a + seed.1 * b
            },
            |p, s| {
                let ((a, b), adjoint) = vjp(p, (seed.0 * s, seed.1 * s));
                (seed.0 * a + seed.1 * b, adjoint)
            },
            x,
        );
        check_jvp(
            |p| {
                let (a, b) = f(p);
                seed.0 * a + seed.1 * b
            },
            |p, u| {
                let ((a, b), (t_a, t_b)) = jvp(p, u);
                (seed.0 * a + seed.1 * b, seed.0 * t_a + seed.1 * t_b)
            },
            &grad,
            x,
        );
        grad
    }

    #[test]
    fn from_a_branch() {
        for x in [[4.0, 2.0], [-4.0, 2.0]] {
            let grad = check_pair_output(
                |p| split(p[0], p[1]),
                |p, seed| {
                    let (out, d_x, d_y) = split_vjp(p[0], p[1], seed);
                    (out, vec![d_x, d_y])
                },
                |p, u| split_jvp(p[0], u[0], p[1], u[1]),
                &x,
                (1.0, -0.5),
            );
            let expected = if x[0] < 0.0 {
                // (y, x y): seed · ((0, 1), (y, x)).
                [-0.5 * x[1], 1.0 - 0.5 * x[0]]
            } else {
                let s = x[0].sqrt();
                [x[1] / (2.0 * s) - 0.5 / (2.0 * s), s - 0.5]
            };
            assert_close(&grad, &expected);
        }
    }

    #[test]
    fn from_a_loop() {
        for t in [0.7, 5.0] {
            let xs = [0.5, 3.0, 1.0];
            let mut point = xs.to_vec();
            point.push(t);
            let grad = check_pair_output(
                |p| first_above(&p[..3], p[3]),
                ad_tests::buffer_then_scalar(first_above_vjp),
                |p, u| first_above_jvp(&p[..3], &u[..3], p[3], u[3]),
                &point,
                (1.0, 2.0),
            );
            let expected = if t < 3.0 {
                // xs[1] = 3 is the first above 0.7: (3 t, 2 · 3).
                [0.0, t + 2.0 * 2.0, 0.0, 3.0]
            } else {
                [0.0, 0.0, 0.0, 1.0 + 2.0 * 2.0 * t]
            };
            assert_close(&grad, &expected);
        }
    }

    #[test]
    fn of_a_call() {
        for k in [2.0, 0.5] {
            let grad = check_pair_output(
                |p| polar_or_scaled(p[0], p[1], p[2]),
                |p, seed| {
                    let (out, d_x, d_y, d_k) = polar_or_scaled_vjp(p[0], p[1], p[2], seed);
                    (out, vec![d_x, d_y, d_k])
                },
                |p, u| polar_or_scaled_jvp(p[0], u[0], p[1], u[1], p[2], u[2]),
                &[0.6, 0.8, k],
                (1.0, 0.0),
            );
            // The first output: |(k x, y)| or k x.
            let expected = if k > 1.0 {
                let r = (k * 0.6_f64).hypot(0.8);
                [k * k * 0.6 / r, 0.8 / r, k * 0.36 / r]
            } else {
                [k, 0.0, 0.6]
            };
            assert_close(&grad, &expected);
        }
    }
}

/// Sorting a copy: medians, trimmed means and quantiles. The gradient goes
/// to the elements the sorted positions read (away from ties).
mod sorting {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn median(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        }
    }

    /// The mean without the `k` smallest and `k` largest.
    #[differentiate(vjp, jvp)]
    fn trimmed_mean(x: &[f64], k: usize) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(f64::total_cmp);
        let kept = &v[k..v.len() - k];
        kept.iter().sum::<f64>() / kept.len() as f64
    }

    /// The largest `m` squared, weighted by rank: a descending sort, as
    /// `sort_unstable_by` with the comparison reversed.
    #[differentiate(vjp, jvp)]
    fn top_weighted<T: Float>(x: &[T], m: usize) -> T {
        let mut v: Vec<T> = x.iter().map(|&e| e * e).collect();
        v.sort_unstable_by(|a, b| b.partial_cmp(a).unwrap());
        let (mut s, mut rank) = (T::ZERO, T::ONE);
        for r in 0..m {
            s += v[r] / rank;
            rank += T::ONE;
        }
        s
    }

    /// The positions of `x` in ascending order (distinct values).
    fn ranks(x: &[f64]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..x.len()).collect();
        order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
        order
    }

    #[test]
    fn medians_of_odd_and_even_lengths() {
        for x in [
            vec![3.0, 1.0, 4.0, 1.5, 9.0],
            vec![3.0, 1.0, 4.0, 1.5, 9.0, 2.6],
        ] {
            let grad = check_slice(median, median_vjp, median_jvp, &x);
            let order = ranks(&x);
            let n = x.len();
            let mut expected = vec![0.0; n];
            if n % 2 == 1 {
                expected[order[n / 2]] = 1.0;
            } else {
                expected[order[n / 2 - 1]] = 0.5;
                expected[order[n / 2]] = 0.5;
            }
            assert_close(&grad, &expected);
        }
    }

    #[test]
    fn a_trimmed_mean() {
        let x = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, -2.0];
        let grad = check_counted(trimmed_mean, trimmed_mean_vjp, trimmed_mean_jvp, 2, &x);
        let order = ranks(&x);
        let mut expected = vec![0.0; x.len()];
        for &i in &order[2..x.len() - 2] {
            expected[i] = 1.0 / 3.0;
        }
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_descending_unstable_sort_in_f32_and_f64() {
        let x = [0.5, -3.0, 1.2, 2.0, -0.1];
        let grad = check_counted(top_weighted, top_weighted_vjp, top_weighted_jvp, 3, &x);
        // Squares by rank: 9 (x₁), 4 (x₃), 1.44 (x₂): d/dxᵢ = 2 xᵢ / rank.
        let mut expected = vec![0.0; 5];
        for (rank, i) in [1, 3, 2].into_iter().enumerate() {
            expected[i] = 2.0 * x[i] / (rank + 1) as f64;
        }
        assert_close(&grad, &expected);
        let x32 = x.map(|v| v as f32);
        let mut d32 = [0.0_f32; 5];
        let out = top_weighted_vjp(&x32, &mut d32, 3, 1.0);
        assert_eq!(out, top_weighted(&x32, 3));
        let d32: Vec<f64> = d32.iter().map(|&v| f64::from(v)).collect();
        for (a, e) in d32.iter().zip(&expected) {
            assert!((a - e).abs() < 1e-5, "{d32:?} vs {expected:?}");
        }
    }
}

/// `collect()` in a loop of a chain whose length changes per iteration
/// but is bounded before the loop: the rows of `chunks(n)`, the last one
/// shorter.
mod collected_rows {
    use super::*;

    /// A batched softmax: per row, the probability of its first and last
    /// entries.
    #[differentiate(vjp, jvp)]
    fn softmax_rows(x: &[f64], n: usize) -> f64 {
        let mut total = 0.0;
        for row in x.chunks(n) {
            let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let exps: Vec<f64> = row.iter().map(|v| (v - m).exp()).collect();
            let z: f64 = exps.iter().sum();
            total += exps[0] / z + 0.5 * exps[exps.len() - 1] / z;
        }
        total
    }

    #[test]
    fn a_batched_softmax_with_a_short_last_row() {
        for n in [3, 4, 7] {
            let x = [0.5, 1.0, -0.3, 2.0, 0.1, 0.7, 1.5];
            let grad = check_counted(softmax_rows, softmax_rows_vjp, softmax_rows_jvp, n, &x);
            // Closed form, row by row: with p = softmax(row) and the weights
            // w (1 on the first, ½ on the last, both on a row of one),
            // d/drowⱼ = pⱼ (wⱼ − Σ wₖ pₖ).
            let mut expected = Vec::new();
            for row in x.chunks(n) {
                let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = row.iter().map(|v| (v - m).exp()).sum();
                let p: Vec<f64> = row.iter().map(|v| (v - m).exp() / z).collect();
                let mut w = vec![0.0; row.len()];
                w[0] += 1.0;
                w[row.len() - 1] += 0.5;
                let mean: f64 = w.iter().zip(&p).map(|(w, p)| w * p).sum();
                expected.extend(p.iter().zip(&w).map(|(p, w)| p * (w - mean)));
            }
            assert_close(&grad, &expected);
        }
    }
}

mod counted_while_shadowed {
    use super::*;

    /// A signed counter that the body shadows with a `usize` index: the
    /// counter is not taken for a `usize` (its loop would run once more).
    #[differentiate]
    #[allow(clippy::cast_sign_loss)]
    fn shadowed(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut i: i64 = -3;
        while i + 1 < 0 {
            let k = (i + 3) as usize;
            {
                let i = k;
                s += x[i] * x[i];
            }
            i += 1;
        }
        s + i as f64
    }

    #[test]
    fn a_shadowed_counter_keeps_its_sign() {
        // Visits i = -3 and -2: x[0] and x[1]; i ends at -1.
        let grad = check_scalar(
            shadowed,
            |p, seed| {
                let mut d = vec![0.0; p.len()];
                let out = shadowed_vjp(p, &mut d, seed);
                (out, d)
            },
            &X,
        );
        let mut expected = vec![0.0; X.len()];
        expected[0] = 2.0 * X[0];
        expected[1] = 2.0 * X[1];
        assert_close(&grad, &expected);
        assert_eq!(shadowed(&X), X[0] * X[0] + X[1] * X[1] - 1.0);
    }
}

mod options_of_chains {
    use super::*;

    /// `unwrap_or(&0.0)` of a chain of references, dereferenced: the largest
    /// element (0 for none), and the last of an empty chain (`a`).
    #[differentiate(vjp, jvp)]
    fn largest_or_zero(x: &[f64], a: f64) -> f64 {
        let m = *x.iter().max_by(|p, q| p.total_cmp(q)).unwrap_or(&0.0);
        let l = x.iter().skip(10).last().unwrap_or(&a);
        m * a + *l
    }

    #[test]
    fn a_reference_to_the_fallback() {
        for x in [vec![0.3, 1.5, -0.2], vec![]] {
            let n = x.len();
            let mut p = x.clone();
            p.push(2.0);
            let grad = check_scalar(
                |p| largest_or_zero(&p[..n], p[n]),
                ad_tests::buffer_then_scalar(largest_or_zero_vjp),
                &p,
            );
            // m a + a: ∂/∂a = m + 1, ∂/∂x_argmax = a.
            let m = x.iter().copied().fold(0.0_f64, f64::max);
            let mut expected: Vec<f64> =
                x.iter().map(|&v| if v == m { 2.0 } else { 0.0 }).collect();
            expected.push(m + 1.0);
            assert_close(&grad, &expected);
            ad_tests::check_jvp(
                |p| largest_or_zero(&p[..n], p[n]),
                |p, u| largest_or_zero_jvp(&p[..n], &u[..n], p[n], u[n]),
                &grad,
                &p,
            );
        }
    }

    /// `opt.map(f).unwrap()` of a chain's `Option`: the argmin's index, and
    /// a function of the largest item.
    #[differentiate(vjp, jvp)]
    fn at_argmin(x: &[f64], c: &[f64], a: f64) -> f64 {
        let i = x
            .iter()
            .enumerate()
            .min_by(|p, q| p.1.partial_cmp(q.1).unwrap())
            .map(|(i, _)| i)
            .unwrap();
        let m = x
            .iter()
            .map(|v| v * a)
            .reduce(f64::max)
            .map(|m| m * m)
            .expect("non-empty");
        c[i] * a + m
    }

    #[test]
    fn a_map_of_the_option() {
        let (x, c, a) = ([0.3, -1.5, 0.2], [1.0, 2.0, 3.0], 2.0);
        let mut p = x.to_vec();
        p.extend(c);
        p.push(a);
        let vjp = |p: &[f64], seed: f64| {
            let (mut d_x, mut d_c) = (vec![0.0; 3], vec![0.0; 3]);
            let (out, d_a) = at_argmin_vjp(&p[..3], &mut d_x, &p[3..6], &mut d_c, p[6], seed);
            d_x.extend(d_c);
            d_x.push(d_a);
            (out, d_x)
        };
        let f = |p: &[f64]| at_argmin(&p[..3], &p[3..6], p[6]);
        let grad = check_scalar(f, vjp, &p);
        // c[1] a + (0.3 a)²: ∂/∂x₀ = 2 (0.3 a) a, ∂/∂c₁ = a, ∂/∂a = c₁ + 2 (0.3 a) 0.3.
        let m = 0.3 * a;
        let expected = [2.0 * m * a, 0.0, 0.0, 0.0, a, 0.0, c[1] + 2.0 * m * 0.3];
        assert_close(&grad, &expected);
        check_jvp(
            f,
            |p, u| at_argmin_jvp(&p[..3], &u[..3], &p[3..6], &u[3..6], p[6], u[6]),
            &grad,
            &p,
        );
    }
}

/// A parameter of the user's own type taken by value (an `enum` choosing
/// the activation or the loss): constant data, matched on as written by
/// `match`, `if let`, `matches!` and `==`, and printed.
mod enum_parameters {
    use super::*;

    #[derive(Clone, Copy, Debug)]
    enum Act {
        Relu,
        Tanh,
        Softplus,
        /// Its slope is bound by the pattern, a constant.
        Leaky(f64),
    }

    /// Neither `Copy` nor `Clone`: never moved by the generated code.
    #[derive(Debug, PartialEq)]
    enum Loss {
        L2,
        L1,
    }

    #[differentiate(vjp, jvp, hvp)]
    fn act(x: f64, kind: Act) -> f64 {
        match kind {
            Act::Relu => x.max(0.0),
            Act::Tanh => x.tanh(),
            Act::Softplus => {
                if x > 20.0 {
                    x
                } else {
                    x.exp().ln_1p()
                }
            }
            Act::Leaky(slope) => {
                if x > 0.0 {
                    x
                } else {
                    slope * x
                }
            }
        }
    }

    /// The derivative of `act`, by hand.
    fn act_derivative(x: f64, kind: Act) -> f64 {
        match kind {
            Act::Relu => f64::from(u8::from(x > 0.0)),
            Act::Tanh => 1.0 - x.tanh().powi(2),
            Act::Softplus => 1.0 / (1.0 + (-x).exp()),
            Act::Leaky(_) if x > 0.0 => 1.0,
            Act::Leaky(slope) => slope,
        }
    }

    /// Settings of a step, some with data (a float, an integer, a
    /// struct variant's fields).
    #[derive(Clone, Copy, Debug)]
    enum Scheme {
        Euler,
        Damped { rate: f64, substeps: usize },
        Clipped(f64),
        Capped(f64),
    }

    /// The data bound by a `match` (by a guard, by a struct variant's
    /// fields, by an or-pattern), by `if let` and by `let … else`: an
    /// integer read as a loop count, floats as constants.
    #[differentiate(vjp, jvp)]
    fn stepped(x: &[f64], scheme: Scheme) -> f64 {
        let mut s = 0.0;
        for &v in x {
            s += match scheme {
                Scheme::Euler => v * v,
                Scheme::Damped { rate, substeps } if substeps > 1 => {
                    let mut y = v;
                    for _ in 0..substeps {
                        y -= rate * y * y;
                    }
                    y
                }
                Scheme::Damped { rate, .. } => v * (1.0 - rate),
                Scheme::Clipped(limit) | Scheme::Capped(limit) => v.min(limit) * v,
            };
        }
        if let Scheme::Clipped(limit) = scheme {
            s += limit * x[0];
        }
        let Scheme::Damped { rate: r, .. } = scheme else {
            return s;
        };
        s * (1.0 + r)
    }

    fn stepped_by_hand(x: &[f64], scheme: Scheme) -> f64 {
        let mut s = 0.0;
        for &v in x {
            s += match scheme {
                Scheme::Euler => v * v,
                Scheme::Damped { rate, substeps } if substeps > 1 => {
                    (0..substeps).fold(v, |y, _| y - rate * y * y)
                }
                Scheme::Damped { rate, .. } => v * (1.0 - rate),
                Scheme::Clipped(limit) | Scheme::Capped(limit) => v.min(limit) * v,
            };
        }
        match scheme {
            Scheme::Clipped(limit) => s + limit * x[0],
            Scheme::Damped { rate, .. } => s * (1.0 + rate),
            _ => s,
        }
    }

    #[test]
    fn the_data_of_variants_bound_as_constants() {
        let schemes = [
            Scheme::Euler,
            Scheme::Damped {
                rate: 0.1,
                substeps: 3,
            },
            Scheme::Damped {
                rate: 0.2,
                substeps: 1,
            },
            Scheme::Clipped(0.5),
            Scheme::Capped(0.25),
        ];
        for scheme in schemes {
            let grad = check_counted(stepped, stepped_vjp, stepped_jvp, scheme, &X);
            assert_eq!(
                stepped(&X, scheme).to_bits(),
                stepped_by_hand(&X, scheme).to_bits()
            );
            ad_runtime::check::gradient(|x| stepped_by_hand(x, scheme), |_| grad.clone(), &X)
                .assert_within(1e-7);
        }
    }

    #[test]
    fn a_match_on_an_enum_chooses_the_derivative() {
        for kind in [Act::Relu, Act::Tanh, Act::Softplus, Act::Leaky(0.3)] {
            for x in [-0.7, 0.4, 1.3] {
                let grad = check_scalar(
                    |p| act(p[0], kind),
                    |p, seed| {
                        let (out, d_x) = act_vjp(p[0], kind, seed);
                        (out, vec![d_x])
                    },
                    &[x],
                );
                assert_close(&grad, &[act_derivative(x, kind)]);
                check_jvp(
                    |p| act(p[0], kind),
                    |p, u| act_jvp(p[0], u[0], kind),
                    &grad,
                    &[x],
                );
                let (out, pullback) = act_forward(x, kind);
                assert_eq!(out.to_bits(), act(x, kind).to_bits());
                assert_close(&[pullback(2.0)], &[2.0 * grad[0]]);
            }
        }
    }

    /// In a loop and a branch, by `if let`, `matches!` and `==` (of a type
    /// that is not `Copy`), with the parameters printed by an assertion.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::needless_pass_by_value)] // `Loss` is not `Copy`, on purpose.
    fn layer(x: &[f64], w: &[f64], kind: Act, loss: Loss) -> f64 {
        assert!(
            !matches!(kind, Act::Softplus),
            "{kind:?} is not for layers ({loss:?})"
        );
        let mut s = 0.0;
        for (a, b) in x.iter().zip(w) {
            let z = a * b;
            let h = if let Act::Tanh = kind {
                z.tanh()
            } else if matches!(kind, Act::Relu | Act::Leaky(_)) {
                z.max(0.0)
            } else {
                z
            };
            s += if loss == Loss::L2 { h * h } else { h.abs() };
        }
        s
    }

    #[test]
    fn if_let_matches_and_equality_in_a_loop() {
        let (x, w) = ([0.3, -0.7, 1.2], [0.5, 0.4, -0.9]);
        for kind in [Act::Relu, Act::Tanh] {
            for l2 in [true, false] {
                let loss = || if l2 { Loss::L2 } else { Loss::L1 };
                let n = x.len();
                let point: Vec<f64> = x.iter().chain(&w).copied().collect();
                let f = |p: &[f64]| layer(&p[..n], &p[n..], kind, loss());
                let grad = check_scalar(
                    f,
                    |p, seed| {
                        let (mut d_x, mut d_w) = (vec![0.0; n], vec![0.0; n]);
                        let out =
                            layer_vjp(&p[..n], &mut d_x, &p[n..], &mut d_w, kind, loss(), seed);
                        d_x.extend(d_w);
                        (out, d_x)
                    },
                    &point,
                );
                // Σ loss(act(xᵢ wᵢ)): the chain rule, term by term.
                let mut expected = vec![0.0; 2 * n];
                for i in 0..n {
                    let z = x[i] * w[i];
                    let (h, dh) = match kind {
                        Act::Tanh => (z.tanh(), 1.0 - z.tanh().powi(2)),
                        _ => (z.max(0.0), f64::from(u8::from(z > 0.0))),
                    };
                    let dl = if l2 {
                        2.0 * h
                    } else {
                        h.signum() * f64::from(u8::from(h != 0.0))
                    };
                    expected[i] = dl * dh * w[i];
                    expected[n + i] = dl * dh * x[i];
                }
                assert_close(&grad, &expected);
                check_jvp(
                    f,
                    |p, u| layer_jvp(&p[..n], &u[..n], &p[n..], &u[n..], kind, loss()),
                    &grad,
                    &point,
                );
            }
        }
    }

    #[test]
    #[should_panic(expected = "Softplus is not for layers (L1)")]
    fn the_assertion_prints_the_parameters() {
        let mut d = [0.0; 1];
        let _ = layer_vjp(
            &[1.0],
            &mut d.clone(),
            &[1.0],
            &mut d,
            Act::Softplus,
            Loss::L1,
            1.0,
        );
    }

    /// Passed on to a differentiated function (`Act` is `Copy`): in a
    /// loop, as a constant `Act::Tanh`, and to a checkpointed call.
    #[differentiate(vjp, jvp, hvp)]
    fn activated_sum(x: &[f64], w: f64, kind: Act) -> f64 {
        let mut s = 0.0;
        for &v in x {
            s += act(v * w, kind) + act(v, Act::Tanh);
        }
        s + ad_runtime::checkpoint(act(w, kind))
    }

    #[test]
    fn passed_on_to_a_differentiated_function() {
        let x = [0.3, -0.7, 1.2];
        for kind in [Act::Relu, Act::Tanh, Act::Leaky(0.5)] {
            let mut point = x.to_vec();
            point.push(0.8);
            let f = |p: &[f64]| activated_sum(&p[..3], p[3], kind);
            let grad = check_scalar(
                f,
                |p, seed| {
                    let mut d_x = vec![0.0; 3];
                    let (out, d_w) = activated_sum_vjp(&p[..3], &mut d_x, p[3], kind, seed);
                    d_x.push(d_w);
                    (out, d_x)
                },
                &point,
            );
            let w = point[3];
            let mut expected: Vec<f64> = x
                .iter()
                .map(|&v| w * act_derivative(v * w, kind) + act_derivative(v, Act::Tanh))
                .collect();
            let d_w: f64 = x.iter().map(|&v| v * act_derivative(v * w, kind)).sum();
            expected.push(d_w + act_derivative(w, kind));
            assert_close(&grad, &expected);
            check_jvp(
                f,
                |p, u| activated_sum_jvp(&p[..3], &u[..3], p[3], u[3], kind),
                &grad,
                &point,
            );
            // `_hvp` along w: its gradient part is the `_vjp`'s, its second
            // part the Hessian along w, against central differences of the
            // `_vjp` (tanh's curvature; relu's is zero).
            let (mut d_x, mut h_x) = ([0.0; 3], [0.0; 3]);
            let (out, d_w, h_w) =
                activated_sum_hvp(&x, &[0.0; 3], &mut d_x, &mut h_x, w, 1.0, kind);
            assert_eq!(out.to_bits(), f(&point).to_bits());
            assert_close(&[d_x[0], d_x[1], d_x[2], d_w], &grad);
            let step = 1e-5;
            let gradient_at = |w: f64| {
                let mut d_x = [0.0; 3];
                let (_, d_w) = activated_sum_vjp(&x, &mut d_x, w, kind, 1.0);
                [d_x[0], d_x[1], d_x[2], d_w]
            };
            let (up, down) = (gradient_at(w + step), gradient_at(w - step));
            let along: Vec<f64> = (0..4).map(|k| (up[k] - down[k]) / (2.0 * step)).collect();
            let hessian = [h_x[0], h_x[1], h_x[2], h_w];
            for (got, want) in hessian.iter().zip(&along) {
                assert!(
                    (got - want).abs() < 1e-5 * want.abs().max(1.0),
                    "{hessian:?} {along:?}"
                );
            }
        }
    }

    /// A layer whose activation is a `#[tangent(skip)]` field: matched on
    /// in a method by `match`, `if let`, `matches!` and `==`.
    #[derive(Clone, ad_runtime::Tangent)]
    struct Layer {
        w: Vec<f64>,
        b: f64,
        #[tangent(skip)]
        act: Act,
    }

    impl PartialEq for Act {
        fn eq(&self, other: &Act) -> bool {
            std::mem::discriminant(self) == std::mem::discriminant(other)
        }
    }

    impl Layer {
        #[differentiate(vjp, jvp)]
        fn forward(&self, x: &[f64]) -> f64 {
            let mut z = self.b;
            for (w, v) in self.w.iter().zip(x) {
                z += w * v;
            }
            let h = match self.act {
                Act::Relu => z.max(0.0),
                Act::Tanh => z.tanh(),
                _ => z,
            };
            let g = if let Act::Tanh = self.act { h * 2.0 } else { h };
            if matches!(self.act, Act::Relu) || (self.act != Act::Tanh && self.act != Act::Softplus)
            {
                g + z
            } else {
                g
            }
        }
    }

    #[test]
    fn a_skipped_field_is_matched_on() {
        let x = [0.3, 0.9];
        for act in [Act::Relu, Act::Tanh, Act::Leaky(0.2), Act::Softplus] {
            let layer = |p: &[f64]| Layer {
                w: p[..2].to_vec(),
                b: p[2],
                act,
            };
            let point = [0.5, -0.3, 0.4];
            let grad = check_scalar(
                |p| layer(p).forward(&x),
                |p, seed| {
                    let mut d = Layer {
                        w: vec![0.0; 2],
                        b: 0.0,
                        act,
                    };
                    let mut d_x = [0.0; 2];
                    let out = layer(p).forward_vjp(&mut d, &x, &mut d_x, seed);
                    (out, vec![d.w[0], d.w[1], d.b])
                },
                &point,
            );
            // z = w·x + b; out = h(z) (twice for tanh), plus z for relu and
            // leaky (which `match` takes as the identity).
            let z = point[0] * x[0] + point[1] * x[1] + point[2];
            let dz = match act {
                Act::Relu | Act::Leaky(_) => 2.0,
                Act::Tanh => 2.0 * (1.0 - z.tanh().powi(2)),
                Act::Softplus => 1.0,
            };
            assert_close(&grad, &[dz * x[0], dz * x[1], dz]);
            let (out, tangent) = layer(&point).forward_jvp(
                &Layer {
                    w: vec![1.0, 0.0],
                    b: 0.0,
                    act,
                },
                &x,
                &[0.0; 2],
            );
            assert_eq!(out.to_bits(), layer(&point).forward(&x).to_bits());
            assert_close(&[tangent], &[grad[0]]);
        }
    }

    /// A function of integers, run as written.
    fn scramble(i: usize, n: usize) -> usize {
        (i * 7) % n
    }

    /// What a function of integers returns is a number, not an opaque
    /// value: a `match` on it binds it (`k => …`) and compares literals.
    #[differentiate(vjp, jvp)]
    fn picked(x: &[f64], i: usize) -> f64 {
        match scramble(i, x.len()) {
            0 => x[0] * 2.0,
            k => x[k] * x[k],
        }
    }

    #[test]
    fn a_match_on_an_integer_function_binds_its_value() {
        let x = &X[..3];
        for i in 0..3 {
            let grad = check_counted(picked, picked_vjp, picked_jvp, i, x);
            let mut expected = vec![0.0; 3];
            match scramble(i, 3) {
                0 => expected[0] = 2.0,
                k => expected[k] = 2.0 * x[k],
            }
            assert_close(&grad, &expected);
        }
    }

    /// Generic over the float type.
    #[differentiate]
    fn gated<T: ad_runtime::Float>(x: T, kind: Act) -> T {
        match kind {
            Act::Tanh => x.tanh(),
            _ => x * x,
        }
    }

    #[test]
    fn f32_and_f64_in_a_generic_function() {
        let (out, d_x) = gated_vjp(0.5_f32, Act::Tanh, 1.0);
        assert_eq!(out, 0.5_f32.tanh());
        assert!((d_x - (1.0 - 0.5_f32.tanh().powi(2))).abs() < 1e-6);
        assert_eq!(gated_vjp(0.5_f64, Act::Relu, 2.0), (0.25, 2.0));
    }
}

/// `x.get(i)` taken out of its `Option` (`unwrap_or`, `map_or`), and a
/// `match` whose arms end in tuples, destructured or as the output.
mod gets_and_tuple_matches {
    use super::*;

    /// Reads past the end fall back to the default.
    #[differentiate(vjp, jvp)]
    fn neighbours(x: &[f64], i: usize) -> f64 {
        let here = x.get(i).copied().unwrap_or(0.0);
        let next = x.get(i + 1).map_or(1.0, |v| v * v);
        let first = x[1..].first().map_or(0.0, |&v| v.sin());
        here * next + first + *x.get(i.min(2)).unwrap_or(&0.0)
    }

    #[test]
    fn get_falls_back_past_the_end() {
        let x = &X[..4];
        for i in 0..6 {
            let grad = check_counted(neighbours, neighbours_vjp, neighbours_jvp, i, x);
            let mut expected = vec![0.0; x.len()];
            let here = x.get(i).copied().unwrap_or(0.0);
            let next = x.get(i + 1).map_or(1.0, |v| v * v);
            if i < x.len() {
                expected[i] += next;
            }
            if i + 1 < x.len() {
                expected[i + 1] += here * 2.0 * x[i + 1];
            }
            expected[1] += x[1].cos();
            expected[i.min(2)] += 1.0;
            assert_close(&grad, &expected);
        }
    }

    /// The first and the last item that passes a test, written with
    /// `position` and a `fold` (`finds_and_tables_of_variants` has
    /// `filter(p).last()`).
    #[differentiate(vjp, jvp)]
    fn first_and_last_positive(x: &[f64], shift: usize) -> f64 {
        let t = shift as f64 - 1.0;
        let first = x.iter().position(|&v| v > t).map_or(-1.0, |i| x[i] * x[i]);
        let last = x.iter().copied().filter(|v| *v > t).fold(0.5, |_, v| v);
        first * last
    }

    #[test]
    fn position_map_or_and_a_fold_keeping_the_last() {
        let x = [-0.5, 0.75, -1.25, 1.5, 0.25];
        for shift in 0..4 {
            let grad = check_counted(
                first_and_last_positive,
                first_and_last_positive_vjp,
                first_and_last_positive_jvp,
                shift,
                &x,
            );
            let t = shift as f64 - 1.0;
            let first = x.iter().position(|&v| v > t);
            let last = x.iter().rposition(|&v| v > t);
            let (f, l) = (
                first.map_or(-1.0, |i| x[i] * x[i]),
                last.map_or(0.5, |i| x[i]),
            );
            let mut expected = vec![0.0; x.len()];
            if let Some(i) = first {
                expected[i] += 2.0 * x[i] * l;
            }
            if let Some(i) = last {
                expected[i] += f;
            }
            assert_close(&grad, &expected);
        }
    }

    /// `let (a, b) = match …`, with an arm that panics, in a loop.
    #[differentiate(vjp, jvp)]
    fn weighted_terms(x: &[f64], k: usize) -> f64 {
        let mut s = 0.0;
        for (i, &v) in x.iter().enumerate() {
            let (term, weight) = match (i + k) % 3 {
                0 => (v, 1.0),
                1 => {
                    let sq = v * v;
                    (sq, 2.0)
                }
                2 => (v.sin(), 0.5),
                _ => unreachable!("a remainder of 3"),
            };
            s += term * weight;
        }
        s
    }

    #[test]
    fn a_match_of_tuples_destructured() {
        let x = &X[..5];
        for k in 0..3 {
            let grad = check_counted(weighted_terms, weighted_terms_vjp, weighted_terms_jvp, k, x);
            let expected: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(i, &v)| match (i + k) % 3 {
                    0 => 1.0,
                    1 => 4.0 * v,
                    _ => 0.5 * v.cos(),
                })
                .collect();
            assert_close(&grad, &expected);
        }
    }

    /// A `match` of tuples as the output of a function returning a tuple.
    #[differentiate(vjp, jvp)]
    fn polar_or_square(x: f64, y: f64, k: u8) -> (f64, f64) {
        match k {
            0 => (x.hypot(y), y.atan2(x)),
            1 => {
                let r = x * x;
                (r, r * y)
            }
            2 => panic!("k = {k} is not a mode"),
            _ => (x, y),
        }
    }

    #[test]
    fn a_match_of_tuples_as_the_output() {
        let (x, y) = (0.6, -0.8);
        for k in [0, 1, 3] {
            // Both rows of the Jacobian, each against finite differences.
            let mut rows = Vec::new();
            for (seed, pick) in [((1.0, 0.0), 0), ((0.0, 1.0), 1)] {
                let pick = move |out: (f64, f64)| if pick == 0 { out.0 } else { out.1 };
                let grad = check_scalar(
                    |p| pick(polar_or_square(p[0], p[1], k)),
                    |p, s| {
                        let (out, d_x, d_y) =
                            polar_or_square_vjp(p[0], p[1], k, (seed.0 * s, seed.1 * s));
                        (pick(out), vec![d_x, d_y])
                    },
                    &[x, y],
                );
                rows.push(grad);
            }
            let expected = match k {
                0 => [[0.6, -0.8], [0.8, 0.6]],
                1 => [[2.0 * x, 0.0], [2.0 * x * y, x * x]],
                _ => [[1.0, 0.0], [0.0, 1.0]],
            };
            assert_close(&rows[0], &expected[0]);
            assert_close(&rows[1], &expected[1]);
            // `_jvp` along (1, 2): J (1, 2).
            let (out, (t0, t1)) = polar_or_square_jvp(x, 1.0, y, 2.0, k);
            assert_eq!(out, polar_or_square(x, y, k));
            assert_close(
                &[t0, t1],
                &[
                    expected[0][0] + 2.0 * expected[0][1],
                    expected[1][0] + 2.0 * expected[1][1],
                ],
            );
        }
    }

    #[test]
    #[should_panic(expected = "k = 2 is not a mode")]
    fn the_arm_that_panics_panics() {
        let _ = polar_or_square_vjp(1.0, 1.0, 2, (1.0, 0.0));
    }
}

/// `std::array::from_fn(|i| …)`: the loop writing a local array that it
/// stands for, its length from the annotation or the turbofish.
mod arrays_from_fn {
    use super::*;
    use std::array::from_fn;

    #[differentiate(vjp, jvp)]
    fn made_by_from_fn(x: &[f64], k: usize) -> f64 {
        let v: [f64; 3] = std::array::from_fn(|i| x[i] * 2.0 - x[i + 1]);
        let w = core::array::from_fn::<f64, 3, _>(|i| v[i] * v[(i + 1) % 3]);
        let mut s = 0.0;
        for j in 0..k {
            // In a loop, imported by its name.
            let u: [f64; 3] = from_fn(|i| w[i] + j as f64 * x[i].sin());
            s += u.iter().sum::<f64>();
        }
        s + v[0]
    }

    #[test]
    fn from_fn_is_the_loop_it_stands_for() {
        let x = &X[..4];
        for k in 0..3 {
            let grad = check_counted(
                made_by_from_fn,
                made_by_from_fn_vjp,
                made_by_from_fn_jvp,
                k,
                x,
            );
            // v_i = 2 x_i - x_{i+1}; w_i = v_i v_{i+1 mod 3};
            // s = k Σ w_i + (0 + 1 + … + k-1) Σ sin x_i + v_0.
            let v: Vec<f64> = (0..3).map(|i| 2.0 * x[i] - x[i + 1]).collect();
            let mut d_v = [0.0; 3];
            for i in 0..3 {
                d_v[i] += k as f64 * v[(i + 1) % 3];
                d_v[(i + 1) % 3] += k as f64 * v[i];
            }
            d_v[0] += 1.0;
            let mut expected = vec![0.0; 4];
            for i in 0..3 {
                expected[i] += 2.0 * d_v[i];
                expected[i + 1] -= d_v[i];
                expected[i] += (k * k.saturating_sub(1) / 2) as f64 * x[i].cos();
            }
            assert_close(&grad, &expected);
        }
    }

    /// In a generic function, `T::ZERO` is the array's start.
    #[differentiate]
    fn squares<T: ad_runtime::Float>(x: [T; 2]) -> T {
        let y: [T; 2] = std::array::from_fn(|i| x[i] * x[i]);
        y[0] + y[1]
    }

    #[test]
    fn from_fn_in_a_generic_function() {
        assert_eq!(squares_vjp([0.5_f32, 2.0], 1.0), (4.25, [1.0, 4.0]));
        assert_eq!(squares_vjp([-1.5_f64, 0.5], 2.0), (2.5, [-6.0, 2.0]));
    }
}

/// Constant tables of tuples, rows and integers outside the function, and
/// integer data passed to plain helpers: spring networks, permutations,
/// stencils, as mesh and graph code writes them.
mod tables_and_integer_data {
    use super::*;

    const EDGES: [(usize, usize); 4] = [(0, 1), (1, 2), (0, 2), (2, 3)];
    const SPRINGS: [(usize, usize, f64); 3] = [(0, 1, 1.0), (1, 3, 0.5), (0, 3, 2.0)];
    const STENCIL: [[f64; 3]; 2] = [[1.0, -2.0, 1.0], [-0.5, 0.0, 0.5]];
    const PERM: [usize; 4] = [2, 0, 3, 1];

    /// The energy of springs of rest length zero along `EDGES`.
    #[differentiate(vjp, jvp)]
    fn edge_energy(x: &[f64]) -> f64 {
        let mut e = 0.0;
        for &(i, j) in EDGES.iter() {
            let d = x[i] - x[j];
            e += d * d;
        }
        e
    }

    /// The same springs, read by index and taken apart by a `let`.
    #[differentiate(vjp, jvp)]
    fn edge_energy_indexed(x: &[f64]) -> f64 {
        let mut e = 0.0;
        for k in 0..EDGES.len() {
            let (i, j) = EDGES[k];
            e += (x[i] - x[j]).powi(2);
        }
        e
    }

    /// The same springs as a chain.
    #[differentiate(vjp, jvp)]
    fn edge_energy_chain(x: &[f64]) -> f64 {
        EDGES.iter().map(|&(i, j)| (x[i] - x[j]).powi(2)).sum()
    }

    /// Springs with rest lengths, the table iterated by value.
    #[differentiate(vjp, jvp)]
    fn spring_energy(x: &[f64]) -> f64 {
        let mut e = 0.0;
        for (i, j, rest) in SPRINGS {
            let d = (x[i] - x[j]).abs() - rest;
            e += 0.5 * d * d;
        }
        e
    }

    fn edge_gradient(x: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; x.len()];
        for &(i, j) in &EDGES {
            g[i] += 2.0 * (x[i] - x[j]);
            g[j] -= 2.0 * (x[i] - x[j]);
        }
        g
    }

    #[test]
    fn tuple_tables_are_taken_apart_as_written() {
        let x = &X[..4];
        let expected = edge_gradient(x);
        for (f, vjp, jvp) in [
            (
                edge_energy as fn(&[f64]) -> f64,
                edge_energy_vjp as fn(&[f64], &mut [f64], f64) -> f64,
                edge_energy_jvp as fn(&[f64], &[f64]) -> (f64, f64),
            ),
            (
                edge_energy_indexed,
                edge_energy_indexed_vjp,
                edge_energy_indexed_jvp,
            ),
            (
                edge_energy_chain,
                edge_energy_chain_vjp,
                edge_energy_chain_jvp,
            ),
        ] {
            assert_close(&check_slice(f, vjp, jvp, x), &expected);
        }
        let mut expected = vec![0.0; 4];
        for (i, j, rest) in SPRINGS {
            let d = (x[i] - x[j]).abs() - rest;
            let s = d * (x[i] - x[j]).signum();
            expected[i] += s;
            expected[j] -= s;
        }
        let grad = check_slice(spring_energy, spring_energy_vjp, spring_energy_jvp, x);
        assert_close(&grad, &expected);
    }

    /// A stencil from a table of rows, `STENCIL[r][k]`, at permuted places.
    #[differentiate(vjp, jvp)]
    fn stencils(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for r in 0..2 {
            let mut acc = 0.0;
            for k in 0..3 {
                acc += STENCIL[r][k] * x[PERM[k + r]];
            }
            s += acc * acc;
        }
        s
    }

    /// A local table written out row by row, and one of computed rows.
    #[differentiate(vjp, jvp)]
    fn quadratic_forms(x: &[f64]) -> f64 {
        let m = [[2.0, 0.5], [0.5, 1.0]];
        let rows = vec![[x[0], 1.0], [0.25, x[1] * x[2]]];
        let mut s = 0.0;
        for i in 0..2 {
            for j in 0..2 {
                s += m[i][j] * x[i] * x[j] + rows[i][j] * x[j + 2];
            }
        }
        s
    }

    #[test]
    fn tables_of_rows_are_read_at_integer_places() {
        let x = &X[..4];
        let mut expected = vec![0.0; 4];
        for r in 0..2 {
            let acc: f64 = (0..3).map(|k| STENCIL[r][k] * x[PERM[k + r]]).sum();
            for k in 0..3 {
                expected[PERM[k + r]] += 2.0 * acc * STENCIL[r][k];
            }
        }
        assert_close(
            &check_slice(stencils, stencils_vjp, stencils_jvp, x),
            &expected,
        );
        // 2x0² + x0x1 + x1² + x0x2 + x3 + 0.25x2 + x1x2x3
        let expected = [
            4.0 * x[0] + x[1] + x[2],
            x[0] + 2.0 * x[1] + x[2] * x[3],
            x[0] + 0.25 + x[1] * x[3],
            1.0 + x[1] * x[2],
        ];
        let grad = check_slice(quadratic_forms, quadratic_forms_vjp, quadratic_forms_jvp, x);
        assert_close(&grad, &expected);
    }

    /// How many of `idx` are above one: a plain function of integers.
    fn count_above_one(idx: &[usize]) -> usize {
        idx.iter().filter(|&&k| k > 1).count()
    }

    fn second(pair: [usize; 2]) -> usize {
        pair[1]
    }

    /// Integer buffers (a parameter, a table, an array, a sub-slice) passed
    /// to plain functions, which run as written.
    #[differentiate(vjp, jvp)]
    fn gathered(x: &[f64], idx: &[usize]) -> f64 {
        let c = count_above_one(idx);
        let d = count_above_one(&idx[1..]) + count_above_one(&PERM);
        let mut s = x[c] * x[d % 4];
        for k in 0..idx.len() {
            s += x[idx[k]] * x[second([k, PERM[k]])].sin();
        }
        s
    }

    #[test]
    fn integer_buffers_go_to_plain_functions() {
        let idx = [3, 0, 2, 2];
        let x = &X[..4];
        let (c, d) = (3, (2 + 2) % 4);
        let mut expected = vec![0.0; 4];
        expected[c] += x[d];
        expected[d] += x[c];
        for k in 0..4 {
            let (i, j) = (idx[k], PERM[k]);
            expected[i] += x[j].sin();
            expected[j] += x[i] * x[j].cos();
        }
        let grad = check_counted_buffer(x, &idx);
        assert_close(&grad, &expected);
    }

    fn check_counted_buffer(x: &[f64], idx: &[usize]) -> Vec<f64> {
        let grad = check_scalar(
            |p| gathered(p, idx),
            |p, seed| {
                let mut d = vec![0.0; p.len()];
                let out = gathered_vjp(p, &mut d, idx, seed);
                (out, d)
            },
            x,
        );
        check_jvp(
            |p| gathered(p, idx),
            |p, u| gathered_jvp(p, u, idx),
            &grad,
            x,
        );
        grad
    }

    #[derive(Clone, ad_runtime::Tangent)]
    struct Quadratic {
        coefficients: [f64; 3],
    }

    /// An array field taken apart by a `let`.
    #[differentiate(vjp, jvp)]
    fn quadratic(q: &Quadratic, x: f64) -> f64 {
        let [a, b, c] = q.coefficients;
        a * x * x + b * x + c
    }

    #[derive(Clone, ad_runtime::Tangent)]
    struct Body {
        pos: [f64; 3],
        vel: [f64; 3],
        mass: f64,
    }

    /// An array field copied whole by a `let` and written: the struct keeps
    /// its values.
    #[differentiate(vjp, jvp)]
    fn energy_after(b: &Body, dt: f64) -> f64 {
        let mut pos = b.pos;
        for i in 0..3 {
            pos[i] += dt * b.vel[i];
        }
        let ke: f64 = 0.5 * b.mass * b.vel.iter().map(|v| v * v).sum::<f64>();
        ke + b.mass * 9.81 * pos[2] + b.pos[2]
    }

    /// A copy of a copy of an array field, at the top and in a loop.
    #[differentiate(vjp, jvp)]
    fn copies_of_a_field(b: &Body) -> f64 {
        let p = b.pos;
        let mut q = p;
        q[0] = 10.0 * b.mass;
        let mut s = q[0] * p[0] + p[1];
        for k in 0..2 {
            let p = b.vel;
            let mut q = p;
            q[k] = b.mass;
            s += q[k] * p[k];
        }
        s
    }

    #[test]
    fn copies_of_an_array_field_are_their_own() {
        let body = Body {
            pos: [0.3, 0.7, 0.1],
            vel: [0.5, -0.5, 1.0],
            mass: 1.5,
        };
        let mut d = Body {
            pos: [0.0; 3],
            vel: [0.0; 3],
            mass: 0.0,
        };
        let out = copies_of_a_field_vjp(&body, &mut d, 1.0);
        // 10 m p0 + p1 + m (v0 + v1).
        assert_eq!(out.to_bits(), copies_of_a_field(&body).to_bits());
        assert_close(&d.pos, &[10.0 * body.mass, 1.0, 0.0]);
        assert_close(&d.vel, &[body.mass, body.mass, 0.0]);
        assert_close(&[d.mass], &[10.0 * body.pos[0] + body.vel[0] + body.vel[1]]);
        let mut t = Body {
            pos: [0.0; 3],
            vel: [0.0; 3],
            mass: 1.0,
        };
        let (_, tangent) = copies_of_a_field_jvp(&body, &t);
        assert_close(&[tangent], &[d.mass]);
        t.mass = 0.0;
        t.pos[0] = 1.0;
        let (_, tangent) = copies_of_a_field_jvp(&body, &t);
        assert_close(&[tangent], &[d.pos[0]]);
    }

    #[test]
    fn an_array_field_is_copied_whole() {
        let body = |p: &[f64]| Body {
            pos: [p[0], p[1], p[2]],
            vel: [p[3], p[4], p[5]],
            mass: p[6],
        };
        let point = [0.0, 1.0, 2.0, 0.5, -0.5, 1.0, 2.0, 0.1];
        let grad = check_scalar(
            |p| energy_after(&body(p), p[7]),
            |p, seed| {
                let mut d = body(&[0.0; 7]);
                let (out, d_dt) = energy_after_vjp(&body(p), &mut d, p[7], seed);
                let mut flat = d.pos.to_vec();
                flat.extend(d.vel);
                flat.extend([d.mass, d_dt]);
                (out, flat)
            },
            &point,
        );
        let (m, dt, v) = (point[6], point[7], [point[3], point[4], point[5]]);
        let g = 9.81;
        let expected = [
            0.0,
            0.0,
            m * g + 1.0,
            m * v[0],
            m * v[1],
            m * v[2] + m * g * dt,
            0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + g * (point[2] + dt * v[2]),
            m * g * v[2],
        ];
        assert_close(&grad, &expected);
        let (_, tangent) = energy_after_jvp(
            &body(&point),
            &body(&[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
            dt,
            1.0,
        );
        assert_close(&[tangent], &[expected[2] + expected[7]]);
    }

    #[test]
    fn an_array_field_is_taken_apart() {
        let point = [0.7, -1.1, 0.4, 1.3];
        let q = |p: &[f64]| Quadratic {
            coefficients: [p[0], p[1], p[2]],
        };
        let grad = check_scalar(
            |p| quadratic(&q(p), p[3]),
            |p, seed| {
                let mut d = Quadratic {
                    coefficients: [0.0; 3],
                };
                let (out, d_x) = quadratic_vjp(&q(p), &mut d, p[3], seed);
                let [a, b, c] = d.coefficients;
                (out, vec![a, b, c, d_x])
            },
            &point,
        );
        let x = point[3];
        assert_close(&grad, &[x * x, x, 1.0, 2.0 * point[0] * x + point[1]]);
        let (_, tangent) = quadratic_jvp(
            &q(&point),
            &Quadratic {
                coefficients: [1.0, 0.0, 0.0],
            },
            x,
            0.0,
        );
        assert_close(&[tangent], &[x * x]);
    }
}

/// Orderings kept in variables, chained and asked with `is_lt`, as sorting
/// and tie-breaking code writes them.
mod orderings {
    use super::*;
    use std::cmp::Ordering;

    #[differentiate(vjp, jvp)]
    fn ordered(a: f64, b: f64, c: f64) -> f64 {
        let o = a.total_cmp(&b);
        let tie = o.then(c.total_cmp(&a));
        if o.is_lt() {
            a * b
        } else if o == Ordering::Equal && tie.is_gt() {
            c * c
        } else if f64::total_cmp(&b, &c).is_ge() {
            a - b
        } else {
            match a.partial_cmp(&c).unwrap_or(Ordering::Equal) {
                Ordering::Less => a * c,
                _ => b + c,
            }
        }
    }

    #[test]
    fn an_ordering_in_a_variable_chooses_the_branch() {
        // At a tie, where finite differences cross a jump: the branch's
        // derivative, `c * c`.
        assert_eq!(ordered_vjp(1.0, 1.0, 2.0, 1.0), (4.0, 0.0, 0.0, 4.0));
        // a < b; a > b ≥ c; b < c and a < c; b < c ≤ a.
        let cases: [([f64; 3], [f64; 3]); 4] = [
            ([0.5, 1.5, 0.2], [1.5, 0.5, 0.0]),
            ([2.0, 1.0, 0.5], [1.0, -1.0, 0.0]),
            ([1.2, 0.3, 1.4], [1.4, 0.0, 1.2]),
            ([2.0, 0.3, 1.4], [0.0, 1.0, 1.0]),
        ];
        for (point, expected) in cases {
            let grad = check_scalar(
                |p| ordered(p[0], p[1], p[2]),
                |p, seed| {
                    let (out, a, b, c) = ordered_vjp(p[0], p[1], p[2], seed);
                    (out, vec![a, b, c])
                },
                &point,
            );
            assert_close(&grad, &expected);
            let (_, tangent) = ordered_jvp(point[0], 1.0, point[1], 1.0, point[2], 1.0);
            assert_close(&[tangent], &[expected.iter().sum()]);
        }
    }
}

/// Meshes and interpolation: rows of integers taken apart by `*t`, a tuple
/// of rows, and a search by `partition_point`.
mod meshes_and_searches {
    use super::*;

    /// The area of a triangle mesh, `tris` holding each triangle's corners.
    #[differentiate(vjp, jvp)]
    fn mesh_area(pts: &[[f64; 2]], tris: &[[usize; 3]]) -> f64 {
        let mut area = 0.0;
        for t in tris {
            let [i, j, k] = *t;
            let (p, q, r) = (pts[i], pts[j], pts[k]);
            let cross = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
            area += 0.5 * cross.abs();
        }
        area
    }

    #[test]
    fn a_mesh_is_read_through_its_connectivity() {
        let tris = [[0, 1, 2], [0, 2, 3]];
        let point = [0.0, 0.0, 2.0, 0.1, 1.9, 1.2, -0.2, 1.0];
        let rows = |p: &[f64]| [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]], [p[6], p[7]]];
        let grad = check_scalar(
            |p| mesh_area(&rows(p), &tris),
            |p, seed| {
                let mut d = [[0.0; 2]; 4];
                let out = mesh_area_vjp(&rows(p), &mut d, &tris, seed);
                (out, d.concat())
            },
            &point,
        );
        // Both triangles are counter-clockwise: the area's gradient at a
        // corner is half the opposite edge turned outwards.
        let mut expected = [0.0; 8];
        for t in tris {
            for c in 0..3 {
                let (a, b) = (t[(c + 1) % 3], t[(c + 2) % 3]);
                expected[2 * t[c]] += 0.5 * (point[2 * a + 1] - point[2 * b + 1]);
                expected[2 * t[c] + 1] += 0.5 * (point[2 * b] - point[2 * a]);
            }
        }
        assert_close(&grad, &expected);
        let (_, tangent) = mesh_area_jvp(&rows(&point), &[[1.0, 0.0]; 4], &tris);
        assert_close(&[tangent], &[(0..4).map(|k| expected[2 * k]).sum()]);
    }

    /// Linear interpolation of `y` at `t`, the interval found by a search.
    #[differentiate(vjp, jvp)]
    fn interpolate(y: &[f64], t: f64) -> f64 {
        let knots = [0.0, 0.5, 1.0, 1.5, 2.0];
        let k = knots.partition_point(|&s| s <= t).clamp(1, knots.len() - 1);
        let w = (t - knots[k - 1]) / (knots[k] - knots[k - 1]);
        y[k - 1] * (1.0 - w) + y[k] * w
    }

    #[test]
    fn partition_point_finds_the_interval() {
        let y = [0.2, 1.1, -0.4, 0.7, 1.9];
        for (t, k) in [(0.3, 1), (0.8, 2), (1.2, 3), (1.7, 4)] {
            let mut point = y.to_vec();
            point.push(t);
            let grad = check_scalar(
                |p| interpolate(&p[..5], p[5]),
                |p, seed| {
                    let mut d = vec![0.0; 5];
                    let (out, d_t) = interpolate_vjp(&p[..5], &mut d, p[5], seed);
                    d.push(d_t);
                    (out, d)
                },
                &point,
            );
            let w = (t - 0.5 * (k - 1) as f64) / 0.5;
            let mut expected = [0.0; 6];
            expected[k - 1] = 1.0 - w;
            expected[k] = w;
            expected[5] = (y[k] - y[k - 1]) / 0.5;
            assert_close(&grad, &expected);
            let (_, tangent) = interpolate_jvp(&y, &[0.0; 5], t, 1.0);
            assert_close(&[tangent], &[expected[5]]);
        }
    }
}

/// Calls of a function returning an array nested in calls of the same
/// function: a rotation by quaternions, `q v q*`.
mod nested_array_calls {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
        [
            a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
        ]
    }

    /// The squared distance of `v` rotated by `q` (not normalised: a
    /// rotation and a scaling by `|q|²`) from a target.
    #[differentiate(vjp, jvp)]
    fn rotated_error(q: &[f64], v: &[f64]) -> f64 {
        let conj = [q[0], -q[1], -q[2], -q[3]];
        let r = qmul(
            qmul([q[0], q[1], q[2], q[3]], [0.0, v[0], v[1], v[2]]),
            conj,
        );
        let target = [0.0, 1.0, -0.5, 0.25];
        (1..4).map(|k| (r[k] - target[k]).powi(2)).sum()
    }

    /// The rotation as a matrix, by hand: `|q|² R(q/|q|) v`.
    fn rotated(q: &[f64], v: &[f64]) -> [f64; 3] {
        let [w, x, y, z] = [q[0], q[1], q[2], q[3]];
        let m = [
            [
                w * w + x * x - y * y - z * z,
                2.0 * (x * y - w * z),
                2.0 * (x * z + w * y),
            ],
            [
                2.0 * (x * y + w * z),
                w * w - x * x + y * y - z * z,
                2.0 * (y * z - w * x),
            ],
            [
                2.0 * (x * z - w * y),
                2.0 * (y * z + w * x),
                w * w - x * x - y * y + z * z,
            ],
        ];
        std::array::from_fn(|i| (0..3).map(|j| m[i][j] * v[j]).sum())
    }

    #[test]
    fn nested_calls_pass_the_inner_array_on() {
        let (q, v) = ([0.9, 0.1, -0.3, 0.2], [1.0, 2.0, -1.0]);
        let target = [1.0, -0.5, 0.25];
        let r = rotated(&q, &v);
        let by_hand: f64 = (0..3).map(|k| (r[k] - target[k]).powi(2)).sum();
        assert!((rotated_error(&q, &v) - by_hand).abs() < 1e-12);
        // The gradient in v by the matrix: 2 Mᵀ (r - target).
        let residual: Vec<f64> = (0..3).map(|k| r[k] - target[k]).collect();
        let mut expected_v = [0.0; 3];
        for (j, e) in expected_v.iter_mut().enumerate() {
            let unit: [f64; 3] = std::array::from_fn(|i| f64::from(u8::from(i == j)));
            let column = rotated(&q, &unit);
            *e = 2.0 * (0..3).map(|i| column[i] * residual[i]).sum::<f64>();
        }
        let grad = check_pair(rotated_error, rotated_error_vjp, rotated_error_jvp, &q, &v);
        assert_close(&grad[4..], &expected_v);
    }
}

/// `v.extend(chain)`: the loop pushing each item that it stands for.
mod extends {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn doubled_then_itself(x: &[f64]) -> f64 {
        let mut v = Vec::with_capacity(2 * x.len());
        v.extend(x.iter().map(|t| t * 2.0));
        v.extend(x.iter().filter(|&&t| t > 0.0));
        v.iter().map(|t| t * t).sum()
    }

    /// A buffer made empty in each iteration and extended.
    #[differentiate(vjp, jvp)]
    fn scaled_sines(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..3 {
            let mut v = Vec::new();
            v.extend(x.iter().map(|t| t * (k as f64 + 1.0)));
            s += v.iter().map(|t| t.sin()).sum::<f64>();
        }
        s
    }

    #[test]
    fn extend_pushes_each_item() {
        let grad = check_slice(
            doubled_then_itself,
            doubled_then_itself_vjp,
            doubled_then_itself_jvp,
            &X,
        );
        let expected: Vec<f64> = X
            .iter()
            .map(|&t| 8.0 * t + if t > 0.0 { 2.0 * t } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
        let grad = check_slice(scaled_sines, scaled_sines_vjp, scaled_sines_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .map(|&t| {
                (1..=3)
                    .map(|k| f64::from(k) * (f64::from(k) * t).cos())
                    .sum()
            })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// `take_while`, and `for` loops over chains whose closures assign what they
/// capture: the loop carries what they assign.
mod take_while_and_stateful_chains {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn leading_squares(x: &[f64]) -> f64 {
        x.iter().take_while(|&&v| v < 1.0).map(|v| v * v).sum()
    }

    #[differentiate(vjp, jvp)]
    fn leading_sines(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x.iter().take_while(|v| v.abs() < 1.5) {
            s += v.sin();
        }
        s
    }

    /// The items from the first one at least 1 in magnitude on.
    #[differentiate(vjp, jvp)]
    fn trailing(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x.iter().skip_while(|v| v.abs() < 1.0) {
            s += v.sin();
        }
        s + x
            .iter()
            .skip_while(|&&v| v > 0.0)
            .map(|v| v * v)
            .sum::<f64>()
    }

    #[test]
    fn skip_while_passes_from_the_first_rejected_item() {
        // X = [0.3, -1.2, 0.8, …]: both skip only the first item.
        let grad = check_slice(trailing, trailing_vjp, trailing_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(k, &x)| if k == 0 { 0.0 } else { x.cos() + 2.0 * x })
            .collect();
        assert_close(&grad, &expected);
    }

    /// A map that counts the items it has seen (an `FnMut`), iterated by
    /// `for`: before the loop carried `seen`, `_vjp` saw it at zero in every
    /// iteration and returned a wrong value.
    #[differentiate(vjp, jvp)]
    fn counted(x: &[f64]) -> f64 {
        let mut seen = 0;
        let mut s = 0.0;
        for v in x.iter().map(|v| {
            seen += 1;
            v * f64::from(seen)
        }) {
            s += v * v;
        }
        s + f64::from(seen)
    }

    #[test]
    fn take_while_stops_at_the_first_rejected_item() {
        // X = [0.3, -1.2, 0.8, 2.1, …]: three items below 1, then 2.1.
        let grad = check_slice(
            leading_squares,
            leading_squares_vjp,
            leading_squares_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        for k in 0..3 {
            expected[k] = 2.0 * X[k];
        }
        assert_close(&grad, &expected);
        let grad = check_slice(leading_sines, leading_sines_vjp, leading_sines_jvp, &X);
        let mut expected = [0.0; 7];
        for k in 0..3 {
            expected[k] = X[k].cos();
        }
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_for_loop_carries_what_its_chain_assigns() {
        let grad = check_slice(counted, counted_vjp, counted_jvp, &X);
        let expected: Vec<f64> = (1..=7u8)
            .zip(X)
            .map(|(k, x)| 2.0 * f64::from(k * k) * x)
            .collect();
        assert_close(&grad, &expected);
        let by_hand: f64 = (1..=7u8)
            .zip(X)
            .map(|(k, x)| (f64::from(k) * x).powi(2))
            .sum::<f64>()
            + 7.0;
        assert!((counted(&X) - by_hand).abs() < 1e-12);
    }
}

/// Copies of a parameter's sub-slice in a loop, of a length the loop
/// finds: at most the parameter's length, so the buffer is made once.
mod slice_copies_in_loops {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn prefix_energies(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 1..x.len() {
            let w = x[..k].to_vec();
            s += w.iter().map(|t| t * t).sum::<f64>() * x[k];
        }
        s
    }

    #[test]
    fn a_prefix_copied_in_a_loop() {
        let grad = check_slice(
            prefix_energies,
            prefix_energies_vjp,
            prefix_energies_jvp,
            &X,
        );
        // d/dx_j: 2 x_j Σ_{k>j} x_k + Σ_{i<j} x_i².
        let n = X.len();
        let expected: Vec<f64> = (0..n)
            .map(|j| {
                let later: f64 = X[j + 1..].iter().sum();
                let earlier: f64 = X[..j].iter().map(|t| t * t).sum();
                2.0 * X[j] * later + earlier
            })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// `let b = a;` of a local array is a copy, as in Rust: writing one leaves
/// the other as it was (the macro shared one buffer between them, a wrong
/// value, until this was pinned). And `a.map(f)` of an array, bound by a
/// `let` or used in place, is the loop writing a copy.
mod array_copies_and_maps {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn copy_then_write_the_copy(x: &[f64]) -> f64 {
        let a = [x[0], x[1], x[2]];
        let mut b = a;
        b[0] = 5.0 * b[1];
        b[0] * a[0] + a[2]
    }

    #[differentiate(vjp, jvp)]
    fn copy_then_write_the_original(x: &[f64]) -> f64 {
        let mut a = [x[0], x[1], x[2]];
        let b = a;
        a[0] = 5.0 * a[1];
        b[0] * a[0] + b[2]
    }

    /// The same in a loop: a window of three taken by value each time.
    #[differentiate(vjp, jvp)]
    fn copies_in_a_loop(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..x.len() - 2 {
            let a = [x[k], x[k + 1], x[k + 2]];
            let mut b = a;
            b[0] = b[1] * b[2];
            s += b[0] * a[0];
        }
        s
    }

    #[test]
    fn a_copy_is_its_own_array() {
        let grad = check_slice(
            copy_then_write_the_copy,
            copy_then_write_the_copy_vjp,
            copy_then_write_the_copy_jvp,
            &X,
        );
        // 5 x1 x0 + x2.
        let mut expected = vec![0.0; X.len()];
        expected[0] = 5.0 * X[1];
        expected[1] = 5.0 * X[0];
        expected[2] = 1.0;
        assert_close(&grad, &expected);

        let grad = check_slice(
            copy_then_write_the_original,
            copy_then_write_the_original_vjp,
            copy_then_write_the_original_jvp,
            &X,
        );
        assert_close(&grad, &expected);

        let grad = check_slice(
            copies_in_a_loop,
            copies_in_a_loop_vjp,
            copies_in_a_loop_jvp,
            &X,
        );
        // Σ_k x_{k+1} x_{k+2} x_k.
        let n = X.len();
        let mut expected = vec![0.0; n];
        for k in 0..n - 2 {
            expected[k] += X[k + 1] * X[k + 2];
            expected[k + 1] += X[k] * X[k + 2];
            expected[k + 2] += X[k] * X[k + 1];
        }
        assert_close(&grad, &expected);
    }

    /// A `move` closure holds a copy of the array it names, made where it
    /// is defined: the write after it is not seen by it.
    #[differentiate(vjp, jvp)]
    fn move_closure_keeps_its_copy(x: &[f64]) -> f64 {
        let mut a = [x[0], x[1]];
        let f = move |t: f64| t * a[0] + a[1];
        a[0] = 10.0 * x[3];
        f(x[2]) * a[0]
    }

    #[test]
    fn a_move_closure_copies_the_array() {
        let grad = check_slice(
            move_closure_keeps_its_copy,
            move_closure_keeps_its_copy_vjp,
            move_closure_keeps_its_copy_jvp,
            &X,
        );
        // (x2 x0 + x1) 10 x3.
        let inner = X[2] * X[0] + X[1];
        let mut expected = vec![0.0; X.len()];
        expected[0] = 10.0 * X[3] * X[2];
        expected[1] = 10.0 * X[3];
        expected[2] = 10.0 * X[3] * X[0];
        expected[3] = 10.0 * inner;
        assert_close(&grad, &expected);
    }

    /// A closure taking an array by value as `mut` writes its own copy.
    #[differentiate(vjp, jvp)]
    fn closure_with_a_mut_array(x: &[f64]) -> f64 {
        let a = [x[0], x[1]];
        let g = |mut v: [f64; 2]| {
            v[0] = 3.0 * v[1];
            v[0] + v[1]
        };
        g(a) * a[0]
    }

    /// Arrays chosen by a branch: a direction written out, or a local one.
    #[differentiate(vjp, jvp)]
    fn chosen_arrays(x: &[f64]) -> f64 {
        let a = [x[0], x[1]];
        let dir = if x[2] > 0.5 {
            [1.0, 0.0]
        } else if x[2] > 0.0 {
            [x[3], x[4]]
        } else {
            a
        };
        let chosen = if x[5] > 0.0 { a } else { [0.0; 2] };
        let mut b = chosen;
        b[0] += 7.0 * x[1];
        (dir[0] * x[0] + dir[1] * x[1]) * b[0] + b[1] + chosen[0] * x[6]
    }

    #[test]
    fn arrays_given_to_closures_and_chosen_by_branches() {
        let grad = check_slice(
            closure_with_a_mut_array,
            closure_with_a_mut_array_vjp,
            closure_with_a_mut_array_jvp,
            &X,
        );
        // 4 x1 x0.
        let mut expected = vec![0.0; X.len()];
        expected[0] = 4.0 * X[1];
        expected[1] = 4.0 * X[0];
        assert_close(&grad, &expected);

        // Each branch of both choices, by x2 and x5.
        for (x2, x5) in [
            (0.9, 0.3),
            (0.2, 0.3),
            (-0.4, 0.3),
            (0.9, -0.3),
            (-0.4, -0.3),
        ] {
            let mut x = X.to_vec();
            x[2] = x2;
            x[5] = x5;
            let grad = check_slice(chosen_arrays, chosen_arrays_vjp, chosen_arrays_jvp, &x);
            let (dir, d_dir_dx): ([f64; 2], [[f64; 2]; 5]) = if x2 > 0.5 {
                ([1.0, 0.0], [[0.0; 2]; 5])
            } else if x2 > 0.0 {
                let mut d = [[0.0; 2]; 5];
                d[3][0] = 1.0;
                d[4][1] = 1.0;
                ([x[3], x[4]], d)
            } else {
                let mut d = [[0.0; 2]; 5];
                d[0][0] = 1.0;
                d[1][1] = 1.0;
                ([x[0], x[1]], d)
            };
            let kept = x5 > 0.0;
            let b0 = if kept { x[0] } else { 0.0 } + 7.0 * x[1];
            let p = dir[0] * x[0] + dir[1] * x[1];
            let mut expected = vec![0.0; x.len()];
            for (k, d) in d_dir_dx.iter().enumerate() {
                expected[k] += (d[0] * x[0] + d[1] * x[1]) * b0;
            }
            expected[0] += dir[0] * b0;
            expected[1] += dir[1] * b0 + p * 7.0;
            if kept {
                // b0 = x0 + 7 x1 and b1 = x1; chosen0 x6 = x0 x6.
                expected[0] += p + x[6];
                expected[1] += 1.0;
                expected[6] += x[0];
            }
            assert_close(&grad, &expected);
        }
    }

    /// A copy of a copy of an array taken by value (generic too): each is
    /// its own array.
    #[differentiate(vjp, jvp)]
    fn copy_of_a_copy<T: ad_runtime::Float>(a: [T; 3]) -> T {
        let b = a.map(|v| v * v);
        let mut c = b;
        c[0] = c[1] + a[2];
        c[0] * b[0] + c[2]
    }

    #[test]
    fn copies_of_an_array_parameter() {
        let a: [f64; 3] = [0.3, 0.7, 1.1];
        let (out, grad) = copy_of_a_copy_vjp(a, 1.0);
        assert_eq!(out.to_bits(), copy_of_a_copy(a).to_bits());
        // (a1² + a2) a0² + a2².
        let expected = [
            2.0 * a[0] * (a[1] * a[1] + a[2]),
            2.0 * a[1] * a[0] * a[0],
            a[0] * a[0] + 2.0 * a[2],
        ];
        assert_close(&grad, &expected);
        check_scalar(
            |p| copy_of_a_copy([p[0], p[1], p[2]]),
            |p, seed| {
                let (out, d) = copy_of_a_copy_vjp([p[0], p[1], p[2]], seed);
                (out, d.to_vec())
            },
            &a,
        );
        let (_, tangent) = copy_of_a_copy_jvp(a, [0.0, 1.0, 0.0]);
        assert_close(&[tangent], &[expected[1]]);
        let (out, grad) = copy_of_a_copy_vjp([0.3_f32, 0.7, 1.1], 1.0);
        assert_eq!(out, copy_of_a_copy([0.3_f32, 0.7, 1.1]));
        assert!((grad[2] - (0.09_f32 + 2.2)).abs() < 1e-5);
    }

    #[differentiate(vjp, jvp)]
    fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    }

    /// `map` bound by a `let` (also shadowing its array, and reading it in
    /// the closure), with a function path, and passed on in a loop.
    #[differentiate(vjp, jvp)]
    fn mapped(x: &[f64]) -> f64 {
        let a = [x[0], x[1], x[2]];
        let b = a.map(|v| v / a[0]);
        let a = a.map(f64::sin);
        let mut s = b[1] + b[2] * a[1];
        for k in 3..x.len() {
            s += dot3(a.map(|v| v * x[k]), b);
        }
        s
    }

    #[differentiate(vjp, jvp)]
    fn sines(a: [f64; 3]) -> [f64; 3] {
        a.map(f64::sin)
    }

    #[test]
    fn map_of_an_array() {
        let grad = check_slice(mapped, mapped_vjp, mapped_jvp, &X);
        // b = (1, x1/x0, x2/x0), a = sin(x0..3), s = b1 + b2 a1 + (a·b) Σ_{k≥3} x_k.
        let (x0, x1, x2) = (X[0], X[1], X[2]);
        let tail: f64 = X[3..].iter().sum();
        let ab = x0.sin() + x1.sin() * x1 / x0 + x2.sin() * x2 / x0;
        let mut expected = vec![ab; X.len()];
        expected[0] = -x1 / (x0 * x0) - x2 / (x0 * x0) * x1.sin()
            + tail * (x0.cos() - x1.sin() * x1 / (x0 * x0) - x2.sin() * x2 / (x0 * x0));
        expected[1] = 1.0 / x0 + x2 / x0 * x1.cos() + tail * (x1.cos() * x1 + x1.sin()) / x0;
        expected[2] = x1.sin() / x0 + tail * (x2.cos() * x2 + x2.sin()) / x0;
        assert_close(&grad, &expected);

        let a = [0.3, -1.2, 2.0];
        assert_eq!(sines(a), a.map(f64::sin));
        let (out, d_a) = sines_vjp(a, &[1.0, 2.0, 3.0]);
        assert_eq!(out, a.map(f64::sin));
        assert_close(&d_a, &[a[0].cos(), 2.0 * a[1].cos(), 3.0 * a[2].cos()]);
        let (out, tangent) = sines_jvp(a, [3.0, 2.0, 1.0]);
        assert_eq!(out, a.map(f64::sin));
        assert_close(&tangent, &[3.0 * a[0].cos(), 2.0 * a[1].cos(), a[2].cos()]);
    }
}

/// Data points as tuples, `points: &[(f64, f64)]`: copied flat on entry,
/// read as tuples, and (for `&mut`) written and copied back.
mod tuple_rows {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn least_squares(points: &[(f64, f64)], a: f64, b: f64) -> f64 {
        let fit: f64 = points.iter().map(|&(x, y)| (a * x + b - y).powi(2)).sum();
        let mut cross = 0.0;
        for i in 0..points.len() {
            let (x, y) = points[i];
            cross += x * y;
        }
        for &(x, _) in points {
            cross += a * x;
        }
        fit + cross * b + points[0].1 * a
    }

    /// The same loss, with the data constant.
    #[differentiate(vjp, wrt(a, b))]
    fn least_squares_in_a_b(points: &[(f64, f64)], a: f64, b: f64) -> f64 {
        points.iter().map(|&(x, y)| (a * x + b - y).powi(2)).sum()
    }

    #[differentiate(vjp, jvp)]
    fn shear(q: &mut [(f64, f64, f64)], k: f64) {
        for i in 0..q.len() {
            q[i].0 *= k;
            q[i].2 += q[i].1 * k;
        }
    }

    /// Tuples passed on, whole and as a sub-range, `&mut` ones too.
    #[differentiate(vjp, jvp)]
    fn passed_on(points: &[(f64, f64)], q: &mut [(f64, f64, f64)], a: f64) -> f64 {
        shear(q, a);
        let tail: f64 = q.iter().map(|&(x, y, z)| x * y + z).sum();
        least_squares(points, a, 0.5) * 2.0 + least_squares(&points[1..], a, 0.1) + tail
    }

    const POINTS: [(f64, f64); 4] = [(0.0, 1.0), (1.0, 2.5), (2.0, 4.2), (-0.5, 0.3)];

    fn to_point(p: &[f64]) -> Vec<(f64, f64)> {
        p.chunks(2).map(|c| (c[0], c[1])).collect()
    }

    #[test]
    fn points_as_tuples() {
        let mut flat: Vec<f64> = POINTS.iter().flat_map(|&(x, y)| [x, y]).collect();
        flat.extend([1.5, 0.8]);
        let n = POINTS.len();
        let grad = check_scalar(
            |p| least_squares(&to_point(&p[..2 * n]), p[2 * n], p[2 * n + 1]),
            |p, seed| {
                let mut d = vec![(0.0, 0.0); n];
                let (out, d_a, d_b) =
                    least_squares_vjp(&to_point(&p[..2 * n]), &mut d, p[2 * n], p[2 * n + 1], seed);
                let mut g: Vec<f64> = d.iter().flat_map(|&(x, y)| [x, y]).collect();
                g.extend([d_a, d_b]);
                (out, g)
            },
            &flat,
        );
        let (a, b) = (1.5, 0.8);
        let mut expected = Vec::new();
        let (mut d_a, mut d_b) = (POINTS[0].1, 0.0);
        for (k, &(x, y)) in POINTS.iter().enumerate() {
            let r = a * x + b - y;
            let first = if k == 0 { a } else { 0.0 };
            expected.extend([2.0 * r * a + y * b + a * b, -2.0 * r + x * b + first]);
            d_a += 2.0 * r * x + x * b;
            d_b += 2.0 * r + x * y + a * x;
        }
        expected.extend([d_a, d_b]);
        assert_close(&grad, &expected);
        // `_jvp` along the tangent of the points only.
        let tangent: Vec<(f64, f64)> = (0..n).map(|k| (0.1 * k as f64, -0.2)).collect();
        let (out, t) = least_squares_jvp(&POINTS, &tangent, a, 0.0, b, 0.0);
        assert_eq!(out, least_squares(&POINTS, a, b));
        let along: f64 = tangent
            .iter()
            .zip(expected.chunks(2))
            .map(|(u, g)| u.0 * g[0] + u.1 * g[1])
            .sum();
        assert_close(&[t], &[along]);

        let (out, d_a, d_b) = least_squares_in_a_b_vjp(&POINTS, a, b, 1.0);
        assert_eq!(out, least_squares_in_a_b(&POINTS, a, b));
        let d: [f64; 2] = POINTS.iter().fold([0.0, 0.0], |[da, db], &(x, y)| {
            let r = a * x + b - y;
            [da + 2.0 * r * x, db + 2.0 * r]
        });
        assert_close(&[d_a, d_b], &d);
    }

    #[test]
    fn tuples_passed_on() {
        let q0 = [(0.0, 1.0, 0.5), (1.0, 2.5, 0.2)];
        let n = POINTS.len();
        let mut flat: Vec<f64> = POINTS.iter().flat_map(|&(x, y)| [x, y]).collect();
        flat.extend(q0.iter().flat_map(|&(x, y, z)| [x, y, z]));
        flat.push(1.5);
        let split = |p: &[f64]| {
            let q: Vec<(f64, f64, f64)> = p[2 * n..2 * n + 6]
                .chunks(3)
                .map(|c| (c[0], c[1], c[2]))
                .collect();
            (to_point(&p[..2 * n]), q, p[2 * n + 6])
        };
        let grad = check_scalar(
            |p| {
                let (points, mut q, a) = split(p);
                passed_on(&points, &mut q, a)
            },
            |p, seed| {
                let (points, mut q, a) = split(p);
                let mut d_points = vec![(0.0, 0.0); n];
                let mut d_q = vec![(0.0, 0.0, 0.0); 2];
                let (out, d_a) = passed_on_vjp(&points, &mut d_points, &mut q, &mut d_q, a, seed);
                let mut g: Vec<f64> = d_points.iter().flat_map(|&(x, y)| [x, y]).collect();
                g.extend(d_q.iter().flat_map(|&(x, y, z)| [x, y, z]));
                g.push(d_a);
                (out, g)
            },
            &flat,
        );
        // Closed form in `a`: the two losses' derivatives and Σ x y + z after the shear.
        let loss_a = |points: &[(f64, f64)], b: f64| -> f64 {
            points
                .iter()
                .map(|&(x, y)| 2.0 * (1.5 * x + b - y) * x + x * b)
                .sum::<f64>()
                + points[0].1
        };
        let tail_a: f64 = q0.iter().map(|&(x, y, _)| x * y + y).sum();
        assert_close(
            &grad[2 * n + 6..],
            &[2.0 * loss_a(&POINTS, 0.5) + loss_a(&POINTS[1..], 0.1) + tail_a],
        );
        let mut q = q0.to_vec();
        let mut t_q = vec![(0.0, 0.0, 0.0); 2];
        let tangent: Vec<(f64, f64)> = vec![(0.0, 0.0); n];
        let (out, t) = passed_on_jvp(&POINTS, &tangent, &mut q, &mut t_q, 1.5, 1.0);
        let mut q = q0.to_vec();
        assert_eq!(out, passed_on(&POINTS, &mut q, 1.5));
        assert_close(&[t], &grad[2 * n + 6..]);
    }

    #[test]
    fn mut_tuples_are_written_back() {
        let k = 2.0;
        let start = vec![(0.0, 1.0, 0.5), (1.0, 2.5, 0.2)];
        let mut q = start.clone();
        let mut d_q = vec![(1.0, 1.0, 1.0), (0.5, -1.0, 2.0)];
        let d_k = shear_vjp(&mut q, &mut d_q, k);
        let mut expected = start.clone();
        shear(&mut expected, k);
        assert_eq!(q, expected);
        // Seeds (s0, s1, s2) of the new elements: d x = k s0, d y = s1 + k s2,
        // d z = s2; d k = Σ x s0 + y s2.
        let seeds = [(1.0, 1.0, 1.0), (0.5, -1.0, 2.0)];
        let mut d_k_expected = 0.0;
        for ((d, s), &(x, y, _)) in d_q.iter().zip(seeds).zip(&start) {
            assert_close(&[d.0, d.1, d.2], &[k * s.0, s.1 + k * s.2, s.2]);
            d_k_expected += x * s.0 + y * s.2;
        }
        assert_close(&[d_k], &[d_k_expected]);
        let mut q = start.clone();
        let mut t_q = vec![(0.0, 0.0, 0.0); 2];
        shear_jvp(&mut q, &mut t_q, k, 1.0);
        assert_eq!(q, expected);
        assert_close(&[t_q[1].0, t_q[1].2], &[start[1].0, start[1].1]);
    }
}

mod finds_and_tables_of_variants {
    use super::*;
    use ad_runtime::Float;

    /// `if let Some(&v) = chain.find(p)`: the first item that passes.
    #[differentiate(vjp, jvp)]
    fn first_above(x: &[f64]) -> f64 {
        if let Some(&v) = x.iter().find(|&&v| v > 0.5) {
            v * v
        } else {
            x[0]
        }
    }

    /// `find` taken out every way: `unwrap`, `copied().unwrap_or`,
    /// after `rev`, after `map` with `map_or`, after `filter`.
    #[differentiate(vjp, jvp)]
    fn finds(x: &[f64]) -> f64 {
        let a = *x.iter().find(|v| **v < 0.0).unwrap();
        let b = x.iter().copied().find(|&v| v > 0.35).unwrap_or(1.0);
        let c = x
            .iter()
            .rev()
            .find(|v| v.abs() < 0.5)
            .copied()
            .unwrap_or(0.0);
        let d = x
            .iter()
            .map(|v| v * 2.0)
            .find(|v| *v > 1.0)
            .map_or(0.0, |v| v * v);
        let e = x
            .iter()
            .filter(|v| **v > 0.0)
            .find(|v| **v < 1.0)
            .copied()
            .unwrap_or(2.0);
        a * b + c + d * e
    }

    /// A threshold that changes in a loop: the item found changes with it.
    #[differentiate(vjp, jvp)]
    fn finds_in_a_loop(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..3 {
            let t = 0.5 * k as f64;
            if let Some(v) = x.iter().find(|&&v| v > t) {
                s += v * t + v.sin();
            }
        }
        s
    }

    /// `next()` and `last()` after `filter`: the first and the last item
    /// that passes (written as users write them; clippy prefers the
    /// spellings of the function below).
    #[differentiate(vjp, jvp)]
    #[allow(clippy::filter_next, clippy::double_ended_iterator_last)]
    fn first_and_last_passing(x: &[f64]) -> f64 {
        let first = x.iter().filter(|v| v.abs() > 1.0).next().unwrap();
        let last = x.iter().copied().filter(|v| *v < 0.0).last().unwrap_or(0.5);
        first * last
    }

    /// The same as clippy would have it: `find` and `rfind`.
    #[differentiate(vjp, jvp)]
    fn first_and_last_passing_by_clippy(x: &[f64]) -> f64 {
        let first = x.iter().find(|v| v.abs() > 1.0).unwrap();
        let last = x.iter().copied().rfind(|v| *v < 0.0).unwrap_or(0.5);
        first * last
    }

    /// `nth(k)`, of a chain and after `rev` and `map`; `next_back()`.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::iter_nth)]
    fn nths(x: &[f64]) -> f64 {
        let a = *x.iter().nth(2).unwrap();
        let b = x.iter().rev().copied().nth(1).unwrap_or(0.0);
        let c = x.iter().map(|v| v * v).nth(4).unwrap();
        let d = x.iter().map(|v| v.sin()).next_back().unwrap();
        a * b + c + d
    }

    #[differentiate(vjp)]
    fn first_negative<T: Float>(x: &[T]) -> T {
        x.iter().copied().find(|v| *v < T::ZERO).unwrap_or(T::ONE) * x[0]
    }

    #[derive(Clone, Copy)]
    enum Act {
        Relu,
        Tanh,
        Square,
    }

    /// A table of an enum's variants, chosen from by the index.
    #[differentiate(vjp, jvp)]
    fn layer_of_kinds(x: &[f64]) -> f64 {
        let kinds = [Act::Relu, Act::Tanh, Act::Square];
        let mut s = 0.0;
        for (i, &v) in x.iter().enumerate() {
            s += match kinds[i % 3] {
                Act::Relu => v.max(0.0),
                Act::Tanh => v.tanh(),
                Act::Square => v * v,
            };
        }
        s
    }

    #[test]
    fn the_first_item_that_passes() {
        // X = [0.3, -1.2, 0.8, 2.1, …]: the first above 0.5 is X[2].
        let grad = check_slice(first_above, first_above_vjp, first_above_jvp, &X);
        let mut expected = vec![0.0; X.len()];
        expected[2] = 2.0 * X[2];
        assert_close(&grad, &expected);
        // None passes: the `else`.
        let small = [0.1, -0.2, 0.3];
        let grad = check_slice(first_above, first_above_vjp, first_above_jvp, &small);
        assert_close(&grad, &[1.0, 0.0, 0.0]);
    }

    #[test]
    fn find_taken_out_every_way() {
        // a = X[1] (the first negative), b = X[2] (the first above 0.35),
        // …: each found by `position` in the test, then the gradient by hand.
        let grad = check_slice(finds, finds_vjp, finds_jvp, &X);
        let a = X.iter().position(|v| *v < 0.0).unwrap();
        let b = X.iter().position(|&v| v > 0.35).unwrap();
        let c = X.len() - 1 - X.iter().rev().position(|v| v.abs() < 0.5).unwrap();
        let d = X.iter().position(|v| v * 2.0 > 1.0).unwrap();
        let e = X.iter().position(|v| *v > 0.0 && *v < 1.0).unwrap();
        let (va, vb, vd, ve) = (X[a], X[b], 2.0 * X[d], X[e]);
        let mut expected = vec![0.0; X.len()];
        expected[a] += vb;
        expected[b] += va;
        expected[c] += 1.0;
        expected[d] += 2.0 * 2.0 * vd * ve;
        expected[e] += vd * vd;
        assert_close(&grad, &expected);
        check_slice(
            finds_in_a_loop,
            finds_in_a_loop_vjp,
            finds_in_a_loop_jvp,
            &X,
        );
    }

    #[test]
    fn next_and_last_after_filter() {
        // X = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9]: first |v| > 1 is X[1],
        // last negative is X[4].
        let grad = check_slice(
            first_and_last_passing,
            first_and_last_passing_vjp,
            first_and_last_passing_jvp,
            &X,
        );
        let mut expected = vec![0.0; X.len()];
        expected[1] = X[4];
        expected[4] = X[1];
        assert_close(&grad, &expected);
        // No negative item: the fallback.
        let x = [0.3, 1.5, 2.5];
        let grad = check_slice(
            first_and_last_passing,
            first_and_last_passing_vjp,
            first_and_last_passing_jvp,
            &x,
        );
        assert_close(&grad, &[0.0, 0.5, 0.0]);
        for x in [&X[..], &x[..]] {
            let by_clippy = check_slice(
                first_and_last_passing_by_clippy,
                first_and_last_passing_by_clippy_vjp,
                first_and_last_passing_by_clippy_jvp,
                x,
            );
            let mut d = vec![0.0; x.len()];
            first_and_last_passing_vjp(x, &mut d, 1.0);
            assert_eq!(by_clippy, d);
        }
    }

    #[test]
    fn the_nth_item() {
        let grad = check_slice(nths, nths_vjp, nths_jvp, &X);
        let n = X.len();
        let mut expected = vec![0.0; n];
        expected[2] += X[n - 2];
        expected[n - 2] += X[2];
        expected[4] += 2.0 * X[4];
        expected[n - 1] += X[n - 1].cos();
        assert_close(&grad, &expected);
    }

    #[test]
    fn find_in_f32_and_f64() {
        let mut d = [0.0_f32; 3];
        let out = first_negative_vjp(&[0.5_f32, 2.0, -3.0], &mut d, 1.0);
        assert_eq!(out, -1.5);
        assert_eq!(d, [-3.0, 0.0, 0.5]);
        let mut d = [0.0_f64; 2];
        let out = first_negative_vjp(&[0.5, 2.0], &mut d, 1.0);
        assert_eq!(out, 0.5);
        assert_eq!(d, [1.0, 0.0]);
    }

    #[test]
    fn a_table_of_variants_chooses_the_derivative() {
        let grad = check_slice(layer_of_kinds, layer_of_kinds_vjp, layer_of_kinds_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, &v)| match i % 3 {
                0 => f64::from(u8::from(v > 0.0)),
                1 => 1.0 - v.tanh().powi(2),
                _ => 2.0 * v,
            })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// Calls that depend on no active input call the function itself: helpers
/// of constants need no `#[differentiate]`.
mod calls_of_constants {
    use super::*;

    fn table() -> [f64; 3] {
        [1.0, 2.0, 3.0]
    }

    fn scale_of(k: f64) -> f64 {
        k * 2.0
    }

    fn weights(n: usize, s: f64) -> Vec<f64> {
        (0..n).map(|i| s * (i + 1) as f64).collect()
    }

    #[derive(Clone, Copy)]
    enum Act {
        Tanh,
    }

    fn act(v: f64, a: Act) -> f64 {
        match a {
            Act::Tanh => v.tanh(),
        }
    }

    /// Each helper's value is a constant of the sum: `w[i] c[i] x[i]²`.
    #[differentiate(vjp, jvp, hvp)]
    fn weighted_squares(x: &[f64], k: usize) -> f64 {
        let t = table();
        let w = weights(x.len(), scale_of(0.25));
        let mut s = 0.0;
        for i in 0..x.len() {
            let c = act(i as f64 - 1.5, Act::Tanh) + scale_of(t[i % 3]);
            s += w[i] * x[i] * x[i] * c;
        }
        s * k as f64
    }

    /// The constant factor of `x[i]²` in `weighted_squares`.
    fn factor(i: usize, k: usize) -> f64 {
        0.5 * (i + 1) as f64 * ((i as f64 - 1.5).tanh() + 2.0 * [1.0, 2.0, 3.0][i % 3]) * k as f64
    }

    #[test]
    fn helpers_of_constants_are_called_as_they_are() {
        let k = 2;
        let grad = check_counted(
            weighted_squares,
            weighted_squares_vjp,
            weighted_squares_jvp,
            k,
            &X,
        );
        let expected: Vec<f64> = (0..X.len()).map(|i| 2.0 * factor(i, k) * X[i]).collect();
        assert_close(&grad, &expected);
        // The Hessian is diagonal: H·e_i = 2 factor(i) e_i.
        for i in 0..X.len() {
            let mut v = vec![0.0; X.len()];
            v[i] = 1.0;
            let (mut d, mut hv) = (vec![0.0; X.len()], vec![0.0; X.len()]);
            let out = weighted_squares_hvp(&X, &v, &mut d, &mut hv, k);
            assert_eq!(out, weighted_squares(&X, k));
            assert_close(&d, &expected);
            let mut column = vec![0.0; X.len()];
            column[i] = 2.0 * factor(i, k);
            assert_close(&hv, &column);
        }
    }
}

/// `Vec<(f64, f64)>` collected in the body: rows of tuples stored flat, as
/// a parameter `&[(f64, f64)]` is.
mod collected_tuples {
    use super::*;
    use ad_runtime::Float;

    /// The squared residuals of the line `w x` through the points.
    #[differentiate(vjp, jvp)]
    fn residuals<T: Float>(points: &[(T, T)], w: T) -> T {
        points.iter().map(|&(x, y)| (w * x - y) * (w * x - y)).sum()
    }

    /// Points made from pairs of the input, read by element, by pattern,
    /// by index and passed on.
    #[differentiate(vjp, jvp)]
    fn pairs_of_the_input(x: &[f64]) -> f64 {
        let pts: Vec<(f64, f64)> = x.chunks(2).map(|c| (c[0], c[1] * 2.0)).collect();
        let mut s = 0.0;
        for &(a, b) in &pts {
            s += a * b;
        }
        s + pts[1].0 * pts.len() as f64 + residuals(&pts, 0.5)
    }

    #[differentiate(vjp)]
    fn triples<T: Float>(x: &[T]) -> T {
        let t: Vec<(T, T, T)> = x
            .windows(3)
            .map(|w| (w[0], w[1] * w[2], w[2].exp()))
            .collect();
        t.iter().map(|&(a, b, c)| a * b + c).sum()
    }

    #[test]
    fn tuples_collected_then_read_and_passed_on() {
        // Three pairs: X's first six elements (a seventh would make a
        // chunk of one, and `c[1]` would panic in the function too).
        let x = &X[..6];
        let grad = check_slice(
            pairs_of_the_input,
            pairs_of_the_input_vjp,
            pairs_of_the_input_jvp,
            x,
        );
        // s = Σ a_k 2 b_k; + a_1 · 3; + Σ (0.5 a_k − 2 b_k)².
        let mut expected = vec![0.0; 6];
        for k in 0..3 {
            let (a, b) = (x[2 * k], x[2 * k + 1]);
            let r = 0.5 * a - 2.0 * b;
            expected[2 * k] += 2.0 * b + 2.0 * r * 0.5;
            expected[2 * k + 1] += 2.0 * a - 2.0 * r * 2.0;
        }
        expected[2] += 3.0;
        assert_close(&grad, &expected);
    }

    #[test]
    fn triples_in_f32_and_f64() {
        let x = [0.5_f32, -1.0, 0.25, 2.0];
        let mut d = [0.0_f32; 4];
        let out = triples_vjp(&x, &mut d, 1.0);
        assert_eq!(out, triples(&x));
        // Σ_k x_k x_{k+1} x_{k+2} + exp(x_{k+2}), k = 0, 1.
        let expected = [
            x[1] * x[2],
            x[0] * x[2] + x[2] * x[3],
            x[0] * x[1] + x[2].exp() + x[1] * x[3],
            x[1] * x[2] + x[3].exp(),
        ];
        for (got, want) in d.iter().zip(expected) {
            assert!((got - want).abs() < 1e-5, "{d:?} {expected:?}");
        }
        let grad = check_scalar(
            triples::<f64>,
            |p, s| {
                let mut d = vec![0.0; p.len()];
                let out = triples_vjp(p, &mut d, s);
                (out, d)
            },
            &X,
        );
        assert_eq!(grad.len(), X.len());
    }
}

/// `(a..b).contains(&v)`, as clippy writes `a <= v && v < b`.
mod range_contains {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn banded(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            if (1..4).contains(&i) {
                s += x[i] * x[i];
            }
            if (4..=5).contains(&i) && !(..0.0).contains(&x[i]) {
                s += x[i].sin();
            }
        }
        let t = if (0.0..1.0).contains(&x[0]) {
            x[0] * 3.0
        } else {
            0.0
        };
        s + t
    }

    #[test]
    fn ranges_test_what_they_contain() {
        for x in [X, X.map(|v| -v)] {
            let grad = check_slice(banded, banded_vjp, banded_jvp, &x);
            let expected: Vec<f64> = (0..x.len())
                .map(|i| match i {
                    0 if (0.0..1.0).contains(&x[0]) => 3.0,
                    1..=3 => 2.0 * x[i],
                    4 | 5 if x[i] >= 0.0 => x[i].cos(),
                    _ => 0.0,
                })
                .collect();
            assert_close(&grad, &expected);
        }
    }
}

/// `len()` of an exact-size iterator: the number of chunks, windows or
/// items left.
mod iterator_lengths {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn weighted_by_counts(x: &[f64]) -> f64 {
        let chunks = x.chunks(4).len();
        let windows = x.windows(2).len() as f64;
        x[0] * chunks as f64 + x[1] * windows + x.iter().skip(2).len() as f64 * x[2]
    }

    #[test]
    fn lengths_of_iterators_are_their_counts() {
        let grad = check_slice(
            weighted_by_counts,
            weighted_by_counts_vjp,
            weighted_by_counts_jvp,
            &X,
        );
        // Seven items: two chunks of four (the last short), six windows,
        // five items after two.
        let mut expected = vec![0.0; X.len()];
        expected[0] = 2.0;
        expected[1] = 6.0;
        expected[2] = 5.0;
        assert_close(&grad, &expected);
    }
}

mod chains_of_parts {
    use super::*;
    use ad_runtime::Float;

    /// The squares of both buffers, the second from its second item on.
    #[differentiate(vjp, jvp)]
    fn chained_squares(x: &[f64], y: &[f64]) -> f64 {
        x.iter().chain(&y[1..]).map(|v| v * v).sum()
    }

    #[test]
    fn sum_over_two_buffers() {
        let grad = check_pair(
            chained_squares,
            chained_squares_vjp,
            chained_squares_jvp,
            &X,
            &Y,
        );
        let mut expected: Vec<f64> = X.iter().map(|v| 2.0 * v).collect();
        expected.push(0.0);
        expected.extend(Y[1..].iter().map(|v| 2.0 * v));
        assert_close(&grad, &expected);
    }

    /// A recurrence over three parts, one reversed, with a `break` in the
    /// second: the third does nothing after it.
    #[differentiate(vjp, jvp)]
    fn decayed(x: &[f64], y: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in x[1..].iter().chain(&y[..5]).chain(x.iter().rev()) {
            if v > 1.8 {
                break;
            }
            s = s * 0.5 + v * v.sin();
        }
        s
    }

    /// The same by index loops, as a person would write it.
    fn decayed_by_hand(x: &[f64], y: &[f64]) -> f64 {
        let mut items: Vec<f64> = x[1..].to_vec();
        items.extend_from_slice(&y[..5]);
        items.extend(x.iter().rev());
        let mut s = 0.0;
        for v in items {
            if v > 1.8 {
                break;
            }
            s = s * 0.5 + v * v.sin();
        }
        s
    }

    #[test]
    fn for_loop_over_parts_breaks_once() {
        // 2.1 in `x` stops it in the first part; 1.9 in `y` in the second;
        // with neither, every part runs.
        let small: Vec<f64> = X.iter().map(|v| v * 0.5).collect();
        for (x, y) in [
            (&X[..], &Y[..]),
            (&small[..], &Y[..]),
            (&small[..], &small[..]),
        ] {
            assert_eq!(decayed(x, y), decayed_by_hand(x, y));
            check_pair(decayed, decayed_vjp, decayed_jvp, x, y);
        }
    }

    /// `map` and `filter` on each part, `rev` over all, then collected, and
    /// consumers that carry state across the parts.
    #[differentiate(vjp, jvp)]
    fn mixed(x: &[f64], y: &[f64]) -> f64 {
        let v: Vec<f64> = x
            .iter()
            .map(|a| a * 2.0)
            .chain(y.iter().copied().filter(|&b| b > 0.0).map(|b| b.exp()))
            .rev()
            .collect();
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let k = v.iter().position(|&a| a > 1.0).unwrap_or(0);
        let first = x
            .iter()
            .chain(y)
            .find(|&&a| a > 1.0)
            .copied()
            .unwrap_or(0.0);
        let last = *y.iter().chain(x).last().unwrap();
        let positive = x.iter().chain(y).filter(|&&a| a > 0.0).count();
        let top = x
            .iter()
            .chain(&y[2..])
            .max_by(|a, b| a.total_cmp(b))
            .unwrap();
        let low = y[y.len()..]
            .iter()
            .chain(x)
            .copied()
            .reduce(f64::min)
            .unwrap();
        let none = x[x.len()..]
            .iter()
            .chain(&y[y.len()..])
            .copied()
            .reduce(|a, b| a * b)
            .unwrap_or(0.5);
        m + v[k] * v[0] + first * last + positive as f64 + v.len() as f64 + top * low + none
    }

    fn mixed_by_hand(x: &[f64], y: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * 2.0).collect();
        v.extend(y.iter().filter(|&&b| b > 0.0).map(|b| b.exp()));
        v.reverse();
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let k = v.iter().position(|&a| a > 1.0).unwrap_or(0);
        let both: Vec<f64> = x.iter().chain(y).copied().collect();
        let first = both.iter().find(|&&a| a > 1.0).copied().unwrap_or(0.0);
        let last = x[x.len() - 1];
        let positive = both.iter().filter(|&&a| a > 0.0).count();
        let top = x
            .iter()
            .chain(&y[2..])
            .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let low = x.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        m + v[k] * v[0] + first * last + positive as f64 + v.len() as f64 + top * low + 0.5
    }

    #[test]
    fn adapters_and_consumers_after_chain() {
        assert_eq!(mixed(&X, &Y), mixed_by_hand(&X, &Y));
        check_pair(mixed, mixed_vjp, mixed_jvp, &X, &Y);
    }

    /// `enumerate`, `skip` and `take` count across the parts.
    #[differentiate(vjp, jvp)]
    fn counted(x: &[f64], y: &[f64], k: usize) -> f64 {
        let weighted: f64 = x[..3]
            .iter()
            .chain(y.iter().rev())
            .enumerate()
            .map(|(i, v)| v * v * (i as f64 + 1.0))
            .sum();
        let mut middle = 0.0;
        for (i, &v) in x.iter().chain(y).skip(k).take(5).enumerate() {
            middle += v.sin() * i as f64;
        }
        weighted + middle
    }

    fn counted_by_hand(x: &[f64], y: &[f64], k: usize) -> f64 {
        let first: Vec<f64> = x[..3].iter().chain(y.iter().rev()).copied().collect();
        let weighted: f64 = (0..first.len())
            .map(|i| first[i] * first[i] * (i as f64 + 1.0))
            .sum();
        let both: Vec<f64> = x.iter().chain(y).copied().collect();
        let mut middle = 0.0;
        for i in 0..5.min(both.len().saturating_sub(k)) {
            middle += both[k + i].sin() * i as f64;
        }
        weighted + middle
    }

    #[test]
    fn enumerate_skip_and_take_across_parts() {
        // Skipping within the first part, across the boundary, and into
        // the second; taking past the end.
        for k in [2, 6, 9, 12] {
            assert_eq!(counted(&X, &Y, k), counted_by_hand(&X, &Y, k), "k = {k}");
            let n = X.len();
            let point: Vec<f64> = X.iter().chain(&Y).copied().collect();
            let grad = check_scalar(
                |p| counted(&p[..n], &p[n..], k),
                |p, s| {
                    let mut dx = vec![0.0; n];
                    let mut dy = vec![0.0; p.len() - n];
                    let out = counted_vjp(&p[..n], &mut dx, &p[n..], &mut dy, k, s);
                    dx.extend(dy);
                    (out, dx)
                },
                &point,
            );
            check_jvp(
                |p| counted(&p[..n], &p[n..], k),
                |p, u| counted_jvp(&p[..n], &u[..n], &p[n..], &u[n..], k),
                &grad,
                &point,
            );
        }
    }

    /// Collected in a loop: a buffer as long as the parts' bounds made
    /// before it (`2 + x.len()`), its first items written; and a tail
    /// `x[k..]`, bounded by `x.len()`.
    #[differentiate(vjp, jvp)]
    fn collected_in_a_loop(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..3 {
            let v: Vec<f64> = x[..2]
                .iter()
                .chain(&x[k..])
                .map(|a| a * (k as f64 + 1.0))
                .collect();
            let tail: Vec<f64> = x[k..].iter().map(|a| a * a).collect();
            s += v.iter().map(|a| a.sin()).sum::<f64>() + tail[0] * v.len() as f64;
        }
        s
    }

    #[test]
    fn collected_in_a_loop_from_parts() {
        let grad = check_slice(
            collected_in_a_loop,
            collected_in_a_loop_vjp,
            collected_in_a_loop_jvp,
            &X,
        );
        let mut expected = vec![0.0; 7];
        for k in 0..3 {
            let w = k as f64 + 1.0;
            for i in (0..2).chain(k..7) {
                expected[i] += w * (X[i] * w).cos();
            }
            expected[k] += 2.0 * X[k] * (2 + 7 - k) as f64;
        }
        assert_close(&grad, &expected);
    }

    /// Generic over the float type, inside a loop: the norm of each row of
    /// `w` followed by `b`.
    #[differentiate(vjp, jvp)]
    fn row_norms<T: Float>(w: &[T], b: &[T]) -> T {
        let mut s = T::ZERO;
        for row in w.chunks(3) {
            s += row.iter().chain(b).map(|&v| v * v).sum::<T>().sqrt();
        }
        s
    }

    #[test]
    fn generic_chains_in_a_loop() {
        let grad = check_pair(row_norms, row_norms_vjp, row_norms_jvp, &X[..6], &Y[..2]);
        let mut expected = vec![0.0; 8];
        for r in 0..2 {
            let row = &X[3 * r..3 * r + 3];
            let norm = row.iter().chain(&Y[..2]).map(|v| v * v).sum::<f64>().sqrt();
            for j in 0..3 {
                expected[3 * r + j] = row[j] / norm;
            }
            for j in 0..2 {
                expected[6 + j] += Y[j] / norm;
            }
        }
        assert_close(&grad, &expected);
        // And in `f32`, through the same expansion.
        let w: Vec<f32> = X[..6].iter().map(|&v| v as f32).collect();
        let b: Vec<f32> = Y[..2].iter().map(|&v| v as f32).collect();
        let mut dw = vec![0.0_f32; 6];
        let mut db = vec![0.0_f32; 2];
        row_norms_vjp(&w, &mut dw, &b, &mut db, 1.0_f32);
        let grad32: Vec<f64> = dw.iter().chain(&db).map(|&v| f64::from(v)).collect();
        for (a, e) in grad32.iter().zip(&expected) {
            assert!((a - e).abs() < 1e-5, "{a} vs {e}");
        }
    }
}

mod let_else {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn ends(x: &[f64]) -> f64 {
        let Some(&first) = x.first() else {
            return 0.0;
        };
        let Some(last) = x.last().copied() else {
            panic!("not empty here");
        };
        first * last + x.iter().sum::<f64>()
    }

    #[test]
    fn first_and_last_or_return() {
        let grad = check_slice(ends, ends_vjp, ends_jvp, &X);
        let mut expected = vec![1.0; X.len()];
        expected[0] += X[6];
        expected[6] += X[0];
        assert_close(&grad, &expected);
        let mut d: [f64; 0] = [];
        assert_eq!(ends_vjp(&[], &mut d, 1.0), 0.0);
    }

    /// `find` in a `let … else`: the statements after it are the `if let`'s
    /// first block.
    #[differentiate(vjp, jvp)]
    fn first_above(x: &[f64], t: usize) -> f64 {
        let limit = t as f64;
        let Some(&v) = x.iter().find(|&&v| v > limit) else {
            return x[0] * 3.0;
        };
        v * v + x[1]
    }

    #[test]
    fn found_or_not() {
        // Above 1: 2.1, the fourth; nothing is above 5.
        let grad = check_counted(first_above, first_above_vjp, first_above_jvp, 1, &X);
        assert_close(&grad, &[0.0, 1.0, 0.0, 4.2, 0.0, 0.0, 0.0]);
        let grad = check_counted(first_above, first_above_vjp, first_above_jvp, 5, &X);
        assert_close(&grad, &[3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }

    /// In a loop, leaving the iteration or the loop; `get` and
    /// `split_first` too.
    #[differentiate(vjp, jvp)]
    fn rows(x: &[f64], k: usize) -> f64 {
        let mut s = 0.0;
        for row in x.chunks(3) {
            let Some(m) = row.iter().copied().reduce(f64::max) else {
                continue;
            };
            let Some((head, tail)) = row.split_first() else {
                break;
            };
            let Some(extra) = row.get(k) else {
                s += m * head;
                continue;
            };
            s += m * head + tail.iter().map(|v| v.sin()).sum::<f64>() + extra;
        }
        s
    }

    fn rows_by_hand(x: &[f64], k: usize) -> f64 {
        let mut s = 0.0;
        for row in x.chunks(3) {
            let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if k < row.len() {
                s += m * row[0] + row[1..].iter().map(|v| v.sin()).sum::<f64>() + row[k];
            } else {
                s += m * row[0];
            }
        }
        s
    }

    #[test]
    fn let_else_in_a_loop() {
        for k in [0, 2] {
            assert_eq!(rows(&X, k), rows_by_hand(&X, k));
            check_counted(rows, rows_vjp, rows_jvp, k, &X);
        }
    }

    #[differentiate(vjp, jvp)]
    fn split_last_sum(x: &[f64]) -> f64 {
        if let Some((last, rest)) = x.split_last() {
            rest.iter().sum::<f64>() * last
        } else {
            0.0
        }
    }

    #[test]
    fn if_let_split_last() {
        let grad = check_slice(split_last_sum, split_last_sum_vjp, split_last_sum_jvp, &X);
        let rest: f64 = X[..6].iter().sum();
        let mut expected = vec![X[6]; 7];
        expected[6] = rest;
        assert_close(&grad, &expected);
    }
}

mod flattened_rows {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn energy(m: &[[f64; 2]]) -> f64 {
        let f = m.as_flattened();
        m.iter().flatten().map(|v| v * v).sum::<f64>()
            + f.iter().zip(&f[1..]).map(|(a, b)| a * b).sum::<f64>()
    }

    #[differentiate(vjp, jvp)]
    fn scale(m: &mut [[f64; 2]], k: f64) {
        for v in m.iter_mut().flatten() {
            *v *= k;
        }
    }

    fn rows(p: &[f64]) -> Vec<[f64; 2]> {
        p.chunks(2).map(|c| [c[0], c[1]]).collect()
    }

    #[test]
    fn flat_views_of_rows() {
        let flat = &X[..6];
        let grad = check_scalar(
            |p| energy(&rows(p)),
            |p, s| {
                let mut d = vec![[0.0; 2]; 3];
                let out = energy_vjp(&rows(p), &mut d, s);
                (out, d.as_flattened().to_vec())
            },
            flat,
        );
        let mut expected: Vec<f64> = flat.iter().map(|v| 2.0 * v).collect();
        for i in 0..5 {
            expected[i] += flat[i + 1];
            expected[i + 1] += flat[i];
        }
        assert_close(&grad, &expected);
        check_jvp(
            |p| energy(&rows(p)),
            |p, u| energy_jvp(&rows(p), &rows(u)),
            &grad,
            flat,
        );
    }

    #[test]
    fn flattened_iter_mut_writes() {
        let mut m = rows(&X[..6]);
        let mut d = rows(&Y[..6]);
        let d_k = scale_vjp(&mut m, &mut d, 1.5);
        assert_close(
            m.as_flattened(),
            &X[..6].iter().map(|v| v * 1.5).collect::<Vec<_>>(),
        );
        assert_close(
            d.as_flattened(),
            &Y[..6].iter().map(|v| v * 1.5).collect::<Vec<_>>(),
        );
        let expected: f64 = X[..6].iter().zip(&Y[..6]).map(|(a, b)| a * b).sum();
        assert_close(&[d_k], &[expected]);
    }
}

mod rpositions {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn around_the_last_positive(x: &[f64]) -> f64 {
        let k = x.iter().rposition(|&v| v > 1.0).unwrap_or(0);
        let j = x[..k].iter().rposition(|&v| v < 0.0).map_or(0.0, |i| x[i]);
        x[k] * x[k] + j
    }

    #[test]
    fn last_position_from_the_front() {
        // The last item above 1 is 1.5 (index 5); before it, the last
        // negative one is -0.4 (index 4).
        let grad = check_slice(
            around_the_last_positive,
            around_the_last_positive_vjp,
            around_the_last_positive_jvp,
            &X,
        );
        assert_close(&grad, &[0.0, 0.0, 0.0, 0.0, 1.0, 3.0, 0.0]);
    }
}

mod positions_taken_apart {
    use super::*;
    use ad_runtime::Float;

    /// `if let Some(i) = ….position(p)` in a loop, with an `else`.
    #[differentiate(vjp, jvp)]
    fn first_above_each(x: &[f64]) -> f64 {
        let mut acc = 0.0;
        for k in 0..4 {
            if let Some(i) = x.iter().position(|&v| v > x[k]) {
                acc += x[i] * x[k];
            } else {
                acc -= x[k];
            }
        }
        acc
    }

    #[test]
    fn if_let_of_position() {
        let grad = check_slice(
            first_above_each,
            first_above_each_vjp,
            first_above_each_jvp,
            &X,
        );
        // k = 0..3 find indices 2, 0, 3; nothing is above 2.1 (k = 3).
        let expected = [X[2] + X[1], X[0], X[0] + X[3], X[2] - 1.0, 0.0, 0.0, 0.0];
        assert_close(&grad, &expected);
    }

    /// `let Some(i) = ….rposition(p) else { return … };`, generic.
    #[differentiate(vjp, jvp)]
    fn tail_after_last_negative<T: Float>(x: &[T]) -> T {
        let Some(i) = x.iter().rposition(|&v| v < T::ZERO) else {
            return x[0] * x[0];
        };
        let tail = x[i + 1..].iter().fold(T::ZERO, |a, &v| a + v);
        tail * x[i]
    }

    #[test]
    fn let_else_of_rposition() {
        let grad = check_slice(
            tail_after_last_negative,
            tail_after_last_negative_vjp,
            tail_after_last_negative_jvp,
            &X,
        );
        // The last negative item is -0.4 (index 4), the tail 1.5 + 0.9.
        assert_close(&grad, &[0.0, 0.0, 0.0, 0.0, 2.4, X[4], X[4]]);
        // None negative: the `else` returns x[0]².
        let grad = check_slice(
            tail_after_last_negative,
            tail_after_last_negative_vjp,
            tail_after_last_negative_jvp,
            &[1.5, 2.0, 0.5],
        );
        assert_close(&grad, &[3.0, 0.0, 0.0]);
        let x32 = [1.5_f32, -2.0, 0.5];
        let mut dx = [0.0_f32; 3];
        let out = tail_after_last_negative_vjp(&x32, &mut dx, 1.0);
        assert_eq!(out, tail_after_last_negative(&x32));
        assert_eq!(dx, [0.0, 0.5, -2.0]);
    }

    /// A function of the user's named like `std::iter::once`: a call
    /// followed by a float method is the user's call.
    #[differentiate(vjp, jvp)]
    fn once(a: f64) -> f64 {
        a * a
    }

    #[differentiate(vjp, jvp)]
    fn through_own_once(x: &[f64]) -> f64 {
        once(x[0]).exp() + once(x[1]).max(x[2])
    }

    #[test]
    fn users_function_named_once() {
        let grad = check_slice(
            through_own_once,
            through_own_once_vjp,
            through_own_once_jvp,
            &X,
        );
        let mut expected = vec![0.0; 7];
        expected[0] = (X[0] * X[0]).exp() * 2.0 * X[0];
        expected[1] = 2.0 * X[1]; // 1.44 > 0.8
        assert_close(&grad, &expected);
    }
}

mod slice_patterns {
    use super::*;
    use ad_runtime::Float;

    /// `if let [a, b, rest @ ..] = …` over the tails of `x`, with an `else`.
    #[differentiate(vjp, jvp)]
    fn heads_and_rests(x: &[f64]) -> f64 {
        let mut acc = 0.0;
        for k in 0..x.len() {
            if let [a, b, rest @ ..] = &x[k..] {
                acc += a * b + rest.iter().sum::<f64>();
            } else {
                acc -= x[k];
            }
        }
        acc
    }

    #[test]
    fn if_let_of_a_slice_pattern() {
        let grad = check_slice(
            heads_and_rests,
            heads_and_rests_vjp,
            heads_and_rests_jvp,
            &X,
        );
        let mut expected = vec![0.0; 7];
        for k in 0..=5 {
            expected[k] += X[k + 1];
            expected[k + 1] += X[k];
            for e in &mut expected[k + 2..] {
                *e += 1.0;
            }
        }
        expected[6] -= 1.0;
        assert_close(&grad, &expected);
    }

    /// A `match` on the length of each sub-slice: empty, one, or more.
    #[differentiate(vjp, jvp)]
    fn ends(x: &[f64]) -> f64 {
        let mut t = 0.0;
        for k in 0..4 {
            t += match &x[2 * k..] {
                [] => 1.0,
                [a] => a * a,
                [a, .., z] => a * z,
            };
        }
        t
    }

    #[test]
    fn match_on_slice_lengths() {
        // Seven items: the last sub-slice holds one, `x[6]`.
        let grad = check_slice(ends, ends_vjp, ends_jvp, &X);
        let expected = [
            X[6],
            0.0,
            X[6],
            0.0,
            X[6],
            0.0,
            X[0] + X[2] + X[4] + 2.0 * X[6],
        ];
        assert_close(&grad, &expected);
        // Six: the last is empty.
        let grad = check_slice(ends, ends_vjp, ends_jvp, &X[..6]);
        let expected = [X[5], 0.0, X[5], 0.0, X[5], X[0] + X[2] + X[4]];
        assert_close(&grad, &expected);
    }

    /// `let [.., y, z] = x else { panic!(…); };`, generic.
    #[differentiate(vjp, jvp)]
    fn ratio_of_last_two<T: Float>(x: &[T]) -> T {
        let [.., y, z] = x else {
            panic!("need two items");
        };
        *y / *z
    }

    #[test]
    fn let_else_of_a_slice_pattern() {
        let grad = check_slice(
            ratio_of_last_two,
            ratio_of_last_two_vjp,
            ratio_of_last_two_jvp,
            &X,
        );
        let expected = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0 / X[6], -X[5] / (X[6] * X[6])];
        assert_close(&grad, &expected);
        let x32 = [3.0_f32, 2.0, 4.0];
        let mut dx = [0.0_f32; 3];
        let out = ratio_of_last_two_vjp(&x32, &mut dx, 1.0);
        assert_eq!(out, ratio_of_last_two(&x32));
        assert_eq!(dx, [0.0, 0.25, -0.125]);
    }

    #[test]
    #[should_panic(expected = "need two items")]
    fn let_else_of_a_slice_pattern_panics_as_written() {
        ratio_of_last_two_vjp(&[1.0_f64], &mut [0.0], 1.0);
    }

    /// Elements bound by value (`match x[..]`), and a name for the whole.
    #[differentiate(vjp, jvp)]
    fn by_place_and_whole(x: &[f64]) -> f64 {
        let head = match x[..] {
            [a, b, ..] => a * b,
            _ => 0.0,
        };
        let tail = match &x[3..] {
            [p, q] => p - q,
            whole => whole.iter().sum::<f64>(),
        };
        head + tail
    }

    #[test]
    fn elements_by_value_and_the_whole() {
        let grad = check_slice(
            by_place_and_whole,
            by_place_and_whole_vjp,
            by_place_and_whole_jvp,
            &X,
        );
        assert_close(&grad, &[X[1], X[0], 0.0, 1.0, 1.0, 1.0, 1.0]);
        // Five items: the tail is the pair.
        let grad = check_slice(
            by_place_and_whole,
            by_place_and_whole_vjp,
            by_place_and_whole_jvp,
            &X[..5],
        );
        assert_close(&grad, &[X[1], X[0], 0.0, 1.0, -1.0]);
    }

    /// Guards on slice arms, and a guarded name for the whole.
    #[differentiate(vjp, jvp)]
    fn guarded_arms(x: &[f64]) -> f64 {
        let mut t = 0.0;
        for k in 0..x.len() {
            t += match &x[k..] {
                [a, b, ..] if a > b => a - b,
                [a, ..] if *a < 0.0 => a * a,
                whole if whole.len() > 3 => whole[0] * 3.0,
                _ => x[k] * 0.5,
            };
        }
        t
    }

    #[test]
    fn guards_on_slice_arms() {
        let grad = check_slice(guarded_arms, guarded_arms_vjp, guarded_arms_jvp, &X);
        // k = 0, 3, 5: a falling pair; k = 1, 4: a negative head; k = 2: a
        // long tail; k = 6: none of these.
        let expected = [
            1.0,
            -1.0 + 2.0 * X[1],
            3.0,
            1.0,
            -1.0 + 2.0 * X[4],
            1.0,
            -1.0 + 0.5,
        ];
        assert_close(&grad, &expected);
    }

    /// A `let … else` whose `else` ends in `panic!(…);` with its semicolon,
    /// as the function's last statement but one.
    #[differentiate(vjp, jvp)]
    fn first_large_squared(x: &[f64]) -> f64 {
        let Some(&y) = x.iter().find(|&&v| v > 0.5) else {
            panic!("nothing above one half");
        };
        y * y
    }

    #[test]
    fn let_else_ending_in_a_panic_statement() {
        let grad = check_slice(
            first_large_squared,
            first_large_squared_vjp,
            first_large_squared_jvp,
            &X,
        );
        assert_close(&grad, &[0.0, 0.0, 2.0 * X[2], 0.0, 0.0, 0.0, 0.0]);
        let caught = std::panic::catch_unwind(|| first_large_squared_vjp(&[0.1], &mut [0.0], 1.0));
        let message = caught
            .expect_err("panics")
            .downcast::<&str>()
            .expect("a literal");
        assert_eq!(*message, "nothing above one half");
    }
}

mod read_before_the_first_push {
    use super::*;
    use ad_runtime::Float;

    /// The `Vec` is read (`out.last()`) before anything is pushed: rustc
    /// must learn its elements' type from the generated code itself.
    #[allow(clippy::unnecessary_map_or)]
    #[differentiate(vjp, jvp)]
    fn sines_of_spread_items<T: Float>(x: &[T]) -> T {
        let mut out: Vec<T> = Vec::new();
        for &v in x {
            if out
                .last()
                .map_or(true, |&l| (l - v).abs() > T::from_f64(0.5))
            {
                out.push(v);
            }
        }
        out.iter().map(|v| v.sin()).sum::<T>()
    }

    #[differentiate(vjp, jvp)]
    fn kept_with_capacity(x: &[f64]) -> f64 {
        let mut kept: Vec<f64> = Vec::with_capacity(x.len());
        for &v in x {
            if kept.last().is_none_or(|&l| v > l) {
                kept.push(v);
            }
        }
        kept.iter().map(|v| v * v).sum()
    }

    #[test]
    fn vecs_read_before_a_push() {
        let x = [0.3, 0.5, 1.2, 1.0, -0.4];
        let grad = check_slice(
            sines_of_spread_items,
            sines_of_spread_items_vjp,
            sines_of_spread_items_jvp,
            &x,
        );
        // 0.5 is within 0.5 of 0.3, and 1.0 of 1.2: not kept.
        let expected = [x[0].cos(), 0.0, x[2].cos(), 0.0, x[4].cos()];
        assert_close(&grad, &expected);
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut dx = vec![0.0_f32; 5];
        sines_of_spread_items_vjp(&x32, &mut dx, 1.0);
        for (a, e) in dx.iter().zip(&expected) {
            assert!((f64::from(*a) - e).abs() < 1e-5, "{a} vs {e}");
        }
        // Kept: the running maxima 0.3, 0.8, 2.1.
        let grad = check_slice(
            kept_with_capacity,
            kept_with_capacity_vjp,
            kept_with_capacity_jvp,
            &X,
        );
        assert_close(
            &grad,
            &[2.0 * X[0], 0.0, 2.0 * X[2], 2.0 * X[3], 0.0, 0.0, 0.0],
        );
    }
}

mod arrays_of_slices_and_single_items {
    use super::*;

    /// `try_into` of a sub-slice into an array, destructured or kept.
    #[differentiate(vjp, jvp)]
    fn cross_of_slices(x: &[f64]) -> f64 {
        let [a, b, c]: [f64; 3] = x[..3].try_into().unwrap();
        let q: [f64; 3] = x[3..x.len() - 1].try_into().expect("three more");
        let cross = [
            b * q[2] - c * q[1],
            c * q[0] - a * q[2],
            a * q[1] - b * q[0],
        ];
        cross.iter().map(|v| v * v).sum::<f64>() + x[6]
    }

    #[test]
    fn try_into_arrays() {
        let grad = check_slice(
            cross_of_slices,
            cross_of_slices_vjp,
            cross_of_slices_jvp,
            &X,
        );
        // By hand: |a × q|² = |a|²|q|² - (a·q)².
        let (a, q) = (&X[..3], &X[3..6]);
        let aa: f64 = a.iter().map(|v| v * v).sum();
        let qq: f64 = q.iter().map(|v| v * v).sum();
        let aq: f64 = a.iter().zip(q).map(|(u, v)| u * v).sum();
        let mut expected = vec![0.0; 7];
        for i in 0..3 {
            expected[i] = 2.0 * a[i] * qq - 2.0 * aq * q[i];
            expected[3 + i] = 2.0 * q[i] * aa - 2.0 * aq * a[i];
        }
        expected[6] = 1.0;
        assert_close(&grad, &expected);
    }

    #[test]
    #[should_panic(expected = "three more: TryFromSliceError(())")]
    fn try_into_of_a_short_slice_panics_as_expect_does() {
        let eight = [X.as_slice(), &[0.5]].concat();
        let mut d = [0.0; 8];
        cross_of_slices_vjp(&eight, &mut d, 1.0);
    }

    /// `once`, `repeat(…).take(n)` and `repeat_n` as the parts of chains.
    #[allow(clippy::manual_repeat_n)]
    #[differentiate(vjp, jvp)]
    fn padded(x: &[f64], x0: f64) -> f64 {
        let with_start: f64 = std::iter::once(x0)
            .chain(x.iter().copied())
            .map(|v| v * v)
            .sum();
        let halves: Vec<f64> = std::iter::repeat(0.5).take(x.len()).collect();
        let weighted: f64 = halves.iter().zip(x).map(|(h, v)| h * v * v).sum();
        let ones = std::iter::repeat_n(x0, 2).fold(0.0, |acc, v| acc + v.sin());
        with_start + weighted + ones + std::iter::once(&x[1]).map(|v| v * 3.0).sum::<f64>()
    }

    #[test]
    fn single_and_repeated_items() {
        let mut point = X.to_vec();
        point.push(0.7);
        let grad = check_scalar(
            |p| padded(&p[..7], p[7]),
            ad_tests::buffer_then_scalar(padded_vjp),
            &point,
        );
        let mut expected: Vec<f64> = X.iter().map(|v| 2.0 * v + v).collect();
        expected[1] += 3.0;
        expected.push(2.0 * 0.7 + 2.0 * 0.7_f64.cos());
        assert_close(&grad, &expected);
        check_jvp(
            |p| padded(&p[..7], p[7]),
            |p, u| padded_jvp(&p[..7], &u[..7], p[7], u[7]),
            &grad,
            &point,
        );
    }

    /// A `let … else` that panics, at the top level of a function with no
    /// `return`.
    #[differentiate(vjp, jvp)]
    fn last_or_panic(x: &[f64]) -> f64 {
        let Some(&last) = x.last() else {
            panic!("no items");
        };
        last * x[0]
    }

    #[test]
    fn let_else_that_panics() {
        let grad = check_slice(last_or_panic, last_or_panic_vjp, last_or_panic_jvp, &X);
        let mut expected = vec![0.0; 7];
        expected[0] = X[6];
        expected[6] = X[0];
        assert_close(&grad, &expected);
        let caught = std::panic::catch_unwind(|| last_or_panic_vjp(&[], &mut [], 1.0));
        assert!(caught.is_err());
    }
}

mod buffer_conveniences {
    use super::*;

    /// `contains` as a guard, `to_owned` as a copy, and the elements of a
    /// buffer collected where it is iterated.
    #[differentiate(vjp, jvp)]
    fn guarded_log_energy(x: &[f64], t: usize) -> f64 {
        let limit = t as f64;
        let own = x.to_owned();
        let squares = x
            .iter()
            .map(|v| v * v)
            .collect::<Vec<_>>()
            .iter()
            .sum::<f64>();
        if x.contains(&limit) {
            squares
        } else {
            own.iter().map(|v| v.abs().ln()).sum::<f64>() + squares
        }
    }

    #[test]
    fn contains_to_owned_and_temporaries() {
        // No element is 5: the logarithms count.
        let grad = check_counted(
            guarded_log_energy,
            guarded_log_energy_vjp,
            guarded_log_energy_jvp,
            5,
            &X,
        );
        let expected: Vec<f64> = X.iter().map(|v| 2.0 * v + 1.0 / v).collect();
        assert_close(&grad, &expected);
        // One element is exactly 2: only the squares (a jump of the
        // function, so no finite differences across it).
        let with_two = [0.3, -1.2, 2.0, 0.8];
        let mut grad = vec![0.0; 4];
        let out = guarded_log_energy_vjp(&with_two, &mut grad, 2, 1.0);
        assert_eq!(out, guarded_log_energy(&with_two, 2));
        let expected: Vec<f64> = with_two.iter().map(|v| 2.0 * v).collect();
        assert_close(&grad, &expected);
    }
}

/// `fn`s written inside the body, inlined where they are called like the
/// closures they are; early `return`s as guards, in closures and in them.
mod functions_in_the_body {
    use super::*;
    use ad_runtime::Float;

    // The items stand after the statement that calls them on purpose.
    #[allow(clippy::items_after_statements)]
    #[differentiate(vjp, jvp)]
    fn leaky_energy(x: &[f64]) -> f64 {
        // Called before it is written, and by the `fn` after it.
        let s: f64 = x.iter().map(|&v| leaky(v) * v + cube(v)).sum();
        fn leaky(v: f64) -> f64 {
            if v < 0.0 {
                return SLOPE * v;
            }
            v
        }
        fn cube(v: f64) -> f64 {
            leaky(v) * v * v
        }
        const SLOPE: f64 = 0.1;
        s + x.iter().copied().map(leaky).sum::<f64>()
    }

    #[differentiate(vjp, jvp)]
    fn soft_threshold<T: Float>(x: &[T]) -> T {
        let shrink = |v: T, t: T| {
            if v > t {
                return v - t;
            }
            if v < -t {
                return v + t;
            }
            T::ZERO
        };
        let mut s = T::ZERO;
        for &v in x {
            let r = shrink(v, T::from_f64(0.5));
            s += r * r;
        }
        s
    }

    /// A `fn` of the body named like a runtime primitive is the body's.
    #[differentiate(vjp, jvp)]
    fn halves_dot(x: &[f64]) -> f64 {
        fn dot(a: &[f64], b: &[f64]) -> f64 {
            a.iter().zip(b).map(|(p, q)| p * q).sum()
        }
        dot(&x[..3], &x[3..6]) + dot(x, x)
    }

    #[test]
    fn functions_in_the_body_are_inlined() {
        let leaky = |v: f64| if v < 0.0 { 0.1 * v } else { v };
        let d_leaky = |v: f64| if v < 0.0 { 0.1 } else { 1.0 };
        let grad = check_slice(leaky_energy, leaky_energy_vjp, leaky_energy_jvp, &X);
        // d/dv of leaky(v) v + leaky(v) v² + leaky(v).
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| {
                let (l, dl) = (leaky(v), d_leaky(v));
                dl * v + l + dl * v * v + 2.0 * l * v + dl
            })
            .collect();
        assert_close(&grad, &expected);
        let grad = check_slice(halves_dot, halves_dot_vjp, halves_dot_jvp, &X);
        let mut expected: Vec<f64> = X.iter().map(|v| 2.0 * v).collect();
        for k in 0..3 {
            expected[k] += X[k + 3];
            expected[k + 3] += X[k];
        }
        assert_close(&grad, &expected);
    }

    #[test]
    fn guards_in_closures_return_early() {
        let shrunk = |v: f64| {
            if v > 0.5 {
                v - 0.5
            } else if v < -0.5 {
                v + 0.5
            } else {
                0.0
            }
        };
        let grad = check_slice(
            soft_threshold::<f64>,
            soft_threshold_vjp,
            soft_threshold_jvp,
            &X,
        );
        let expected: Vec<f64> = X.iter().map(|&v| 2.0 * shrunk(v)).collect();
        assert_close(&grad, &expected);
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut dx = vec![0.0_f32; x32.len()];
        soft_threshold_vjp(&x32, &mut dx, 1.0);
        for (a, e) in dx.iter().zip(&expected) {
            assert!((f64::from(*a) - e).abs() < 1e-5, "{a} vs {e}");
        }
    }
}

/// `*v.last_mut().unwrap()` and `*v.first_mut().unwrap()` as places.
mod ends_written_in_place {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn bumped_ends(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        *v.last_mut().unwrap() += 1.0;
        *v.first_mut().expect("a first element") *= x[1];
        *v.last_mut().unwrap() = v[0] * v[v.len() - 1];
        v.iter().map(|a| a * a).sum()
    }

    #[test]
    fn ends_are_elements() {
        let grad = check_slice(bumped_ends, bumped_ends_vjp, bumped_ends_jvp, &X);
        let n = X.len();
        // v0 = x0 x1, v_last = v0 (x_last + 1), the rest x_i.
        let v0 = X[0] * X[1];
        let vl = v0 * (X[n - 1] + 1.0);
        let mut expected: Vec<f64> = X.iter().map(|v| 2.0 * v).collect();
        // d(v0² + vl²) by x0, x1, x_last.
        let dv0 = 2.0 * v0 + 2.0 * vl * (X[n - 1] + 1.0);
        expected[0] = dv0 * X[1];
        expected[1] += dv0 * X[0];
        expected[n - 1] = 2.0 * vl * v0;
        assert_close(&grad, &expected);
        let empty = std::panic::catch_unwind(|| bumped_ends_vjp(&[], &mut [], 1.0));
        let message = *empty.unwrap_err().downcast::<&str>().unwrap();
        assert_eq!(message, "called `Option::unwrap()` on a `None` value");
    }
}

/// Matrices taken by value (`m: [[f64; 3]; 3]`), as geometry and physics
/// code writes rotations and inertia tensors, and 2-D arrays copied by `let`.
mod matrices_by_value {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn matvec3(m: [[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
        let mut out = [0.0; 3];
        for i in 0..3 {
            for j in 0..3 {
                out[i] += m[i][j] * v[j];
            }
        }
        out
    }

    /// `vᵀ M v · M₀₀`, with a copy of `M` changed in a loop: the copy is
    /// fresh in each iteration and `M` stays as it was.
    #[differentiate(vjp, jvp)]
    fn shifted_forms(m: [[f64; 3]; 3], v: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..3 {
            let mut w = m;
            w[k][k] += v[k];
            for i in 0..3 {
                for j in 0..3 {
                    s += v[i] * w[i][j] * v[j];
                }
            }
        }
        s * m[0][0]
    }

    /// A rotation about `z` by `x[0]`, built in the body and passed by value.
    #[differentiate(vjp, jvp)]
    fn rotated(x: &[f64]) -> f64 {
        let (s, c) = x[0].sin_cos();
        let r = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
        let mut total = 0.0;
        for k in 0..2 {
            let mut q = r;
            q[2][2] += x[k + 1];
            let p = matvec3(q, [x[1], x[2], x[3]]);
            total += p[0] * p[1] + p[2];
        }
        total
    }

    #[differentiate(vjp, jvp)]
    fn trace_product<T: Float>(a: [[T; 2]; 2], b: &[T]) -> T {
        a[0][0] * b[0] * a[1][1] + a[0][1] * b[1]
    }

    fn split(p: &[f64]) -> [[f64; 3]; 3] {
        std::array::from_fn(|i| std::array::from_fn(|j| p[3 * i + j]))
    }

    #[test]
    fn a_matrix_by_value_has_its_adjoint_returned() {
        let p: Vec<f64> = (0..12).map(|k| 0.3 * k as f64 - 1.1).collect();
        let f = |p: &[f64]| shifted_forms(split(p), &p[9..]);
        let grad = check_scalar(
            f,
            |p, seed| {
                let mut d_v = vec![0.0; 3];
                let (out, d_m) = shifted_forms_vjp(split(p), &p[9..], &mut d_v, seed);
                (
                    out,
                    d_m.as_flattened().iter().chain(&d_v).copied().collect(),
                )
            },
            &p,
        );
        check_jvp(
            f,
            |p, u| shifted_forms_jvp(split(p), split(u), &p[9..], &u[9..]),
            &grad,
            &p,
        );
        // Closed form: s = 3 vᵀMv + Σ_k v_k³, times M₀₀.
        let m = split(&p);
        let v = &p[9..];
        let vmv: f64 = (0..9).map(|k| v[k / 3] * m[k / 3][k % 3] * v[k % 3]).sum();
        let s = 3.0 * vmv + v.iter().map(|a| a * a * a).sum::<f64>();
        for k in 0..9 {
            let (i, j) = (k / 3, k % 3);
            let direct = 3.0 * v[i] * v[j] * m[0][0];
            let expected = if k == 0 { direct + s } else { direct };
            assert!((grad[k] - expected).abs() < 1e-9, "m[{i}][{j}]");
        }
        // The `_forward` pullback takes the matrix flat.
        let (out, pullback) = shifted_forms_forward(m, v);
        let (mut d_m, mut d_v) = ([0.0; 9], [0.0; 3]);
        pullback(m.as_flattened(), &mut d_m, v, &mut d_v, 1.0);
        assert_eq!(out, f(&p));
        assert_close(&d_m.iter().chain(&d_v).copied().collect::<Vec<_>>(), &grad);
    }

    #[test]
    fn a_matrix_made_in_the_body_is_copied_and_passed_by_value() {
        let x = [0.4, -0.7, 1.3, 0.6];
        let grad = check_slice(rotated, rotated_vjp, rotated_jvp, &x);
        // Against the same function with the matrix written out.
        let by_hand = |x: &[f64]| {
            let (s, c) = x[0].sin_cos();
            (0..2)
                .map(|k| {
                    let p = [
                        c * x[1] - s * x[2],
                        s * x[1] + c * x[2],
                        (1.0 + x[k + 1]) * x[3],
                    ];
                    p[0] * p[1] + p[2]
                })
                .sum::<f64>()
        };
        assert_eq!(rotated(&x), by_hand(&x));
        ad_runtime::check::gradient(by_hand, |_| grad.clone(), &x).assert_within(1e-7);
    }

    #[test]
    fn a_generic_matrix_in_f32_and_f64() {
        let (out, d_a) = {
            let mut d_b = [0.0; 2];
            let (out, d_a) =
                trace_product_vjp([[1.0, 2.0], [3.0, 4.0]], &[0.5, -1.5], &mut d_b, 1.0);
            assert_eq!(d_b, [4.0, 2.0]);
            (out, d_a)
        };
        assert_eq!(out, 1.0 * 0.5 * 4.0 - 2.0 * 1.5);
        assert_eq!(d_a, [[2.0, -1.5], [0.0, 0.5]]);
        let mut d_b = [0.0_f32; 2];
        let (out, d_a) =
            trace_product_vjp([[1.0_f32, 2.0], [3.0, 4.0]], &[0.5, -1.5], &mut d_b, 1.0);
        assert_eq!(
            (out, d_a, d_b),
            (-1.0, [[2.0, -1.5], [0.0, 0.5]], [4.0, 2.0])
        );
        let (_, tangent) = trace_product_jvp(
            [[1.0, 2.0], [3.0, 4.0]],
            [[0.0, 1.0], [0.0, 0.0]],
            &[0.5, -1.5],
            &[0.0, 0.0],
        );
        assert_eq!(tangent, -1.5);
    }
}

/// `let b = a;` and `let row = m[i];` of matrices and rows copy them, as
/// Rust does: writing the copy leaves the original as it was, and the
/// other way round. (These were shared once: a wrong primal and gradient.)
mod copies_of_matrices_and_rows {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn row_copied(x: &[f64]) -> f64 {
        let m = [[x[0], x[1]], [x[2], x[3]]];
        let mut row = m[0];
        row[1] += x[2];
        m[0][1] * row[1] + row[0]
    }

    #[differentiate(vjp, jvp)]
    fn written_after_the_copy(x: &[f64]) -> f64 {
        let mut a = [[0.5; 2]; 2];
        let b = a;
        a[0][0] = x[0];
        a[1][0] = x[1] * b[0][0];
        b[0][0] + a[0][0] * a[1][0]
    }

    /// Two generations of a grid, the old one a copy taken in the loop.
    #[differentiate(vjp, jvp)]
    fn generations(x: &[f64]) -> f64 {
        let mut g = [[0.0; 3]; 2];
        let mut s = 0.0;
        for k in 0..3 {
            let prev = g;
            for j in 0..3 {
                g[0][j] = prev[1][j] + x[j] * (k as f64 + 1.0);
                g[1][j] = prev[0][j] * x[j];
            }
            s += g[0][k] * prev[1][k];
        }
        s
    }

    /// The same grid as a `Vec` of rows, copied by hand: the reference.
    fn generations_by_hand(x: &[f64]) -> f64 {
        let mut g = vec![vec![0.0; 3]; 2];
        let mut s = 0.0;
        for k in 0..3 {
            let prev = g.clone();
            for j in 0..3 {
                g[0][j] = prev[1][j] + x[j] * (k as f64 + 1.0);
                g[1][j] = prev[0][j] * x[j];
            }
            s += g[0][k] * prev[1][k];
        }
        s
    }

    #[differentiate(vjp, jvp)]
    fn tuple_rows_copied(x: &[f64]) -> f64 {
        let mut pts: Vec<(f64, f64)> = x.chunks(2).map(|c| (c[0], c[1])).collect();
        let first = pts[0];
        pts[0].1 *= 3.0;
        let mut s = first.0 * first.1 + pts[0].1;
        for i in 0..pts.len() {
            let p = pts[i];
            s += p.1 * p.0;
        }
        s
    }

    #[test]
    fn copies_are_fresh() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(row_copied(&x), 2.0 * 5.0 + 1.0);
        let grad = check_slice(row_copied, row_copied_vjp, row_copied_jvp, &x);
        assert_close(&grad, &[1.0, x[1] + x[2] + x[1], x[1], 0.0]);
        assert_eq!(written_after_the_copy(&x), 0.5 + 1.0 * 2.0 * 0.5);
        let grad = check_slice(
            written_after_the_copy,
            written_after_the_copy_vjp,
            written_after_the_copy_jvp,
            &x,
        );
        assert_close(&grad, &[0.5 * x[1], 0.5 * x[0], 0.0, 0.0]);
        let x = [0.7, -1.1, 0.4];
        assert_eq!(generations(&x), generations_by_hand(&x));
        let grad = check_slice(generations, generations_vjp, generations_jvp, &x);
        ad_runtime::check::gradient(generations_by_hand, |_| grad.clone(), &x).assert_within(1e-7);
    }

    /// A step of a 2×2 map written the way a person would: the next state
    /// made from a copy, then assigned back whole.
    // `.clone()` of a `Copy` matrix (row), as users write it.
    #[allow(clippy::clone_on_copy)]
    #[differentiate(vjp, jvp)]
    fn iterated_map(x: &[f64]) -> f64 {
        let mut cur = [[x[0], x[1]], [x[2], x[3]]];
        for _ in 0..3 {
            let mut next = cur.clone();
            next[0][0] = cur[0][1] * cur[1][0];
            next[1][1] = cur[0][0] + cur[1][1];
            cur = next;
        }
        cur[0][0] + cur[1][1] * cur[0][1]
    }

    fn iterated_map_by_hand(x: &[f64]) -> f64 {
        let (mut a, b, c, mut d) = (x[0], x[1], x[2], x[3]);
        for _ in 0..3 {
            (a, d) = (b * c, a + d);
        }
        a + d * b
    }

    /// Rows written whole, from a literal and from an array.
    // `.clone()` of a `Copy` matrix (row), as users write it.
    #[allow(clippy::clone_on_copy)]
    #[differentiate(vjp, jvp)]
    fn rows_written_whole(x: &[f64]) -> f64 {
        let mut v = vec![[0.0; 2]; 3];
        for i in 0..3 {
            v[i] = [x[i], x[i + 1] * x[i]];
        }
        let r = [x[4], x[5]];
        v[1] = r;
        let kept = v[2].clone();
        v[2][0] = 0.0;
        v.iter().map(|p| p[0] * p[1]).sum::<f64>() + kept[0]
    }

    #[test]
    fn matrices_and_rows_assigned_whole() {
        let x = [1.0, 2.0, 3.0, 4.0, 0.5, -1.0];
        assert_eq!(iterated_map(&x), iterated_map_by_hand(&x));
        let grad = check_slice(iterated_map, iterated_map_vjp, iterated_map_jvp, &x);
        ad_runtime::check::gradient(iterated_map_by_hand, |_| grad.clone(), &x).assert_within(1e-7);
        let grad = check_slice(
            rows_written_whole,
            rows_written_whole_vjp,
            rows_written_whole_jvp,
            &x,
        );
        // v = [(x0, x1 x0), (x4, x5), (0, x3 x2)] and kept[0] = x2.
        let expected = [2.0 * x[0] * x[1], x[0] * x[0], 1.0, 0.0, x[5], x[4]];
        assert_close(&grad, &expected);
    }

    #[test]
    fn copies_of_tuple_rows() {
        let x = [0.5, 1.0, 1.5, 2.5, -1.0, 0.3];
        let grad = check_slice(
            tuple_rows_copied,
            tuple_rows_copied_vjp,
            tuple_rows_copied_jvp,
            &x,
        );
        // s = x0 x1 + 3 x1 + 3 x0 x1 + x2 x3 + x4 x5.
        let expected = [4.0 * x[1], 4.0 * x[0] + 3.0, x[3], x[2], x[5], x[4]];
        assert_close(&grad, &expected);
    }
}

/// `reduce`, `max_by` and `min_by` after `filter`: the first item that
/// passes starts the reduction.
mod reductions_after_a_filter {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn smallest_positive(x: &[f64]) -> f64 {
        let m = x
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .min_by(f64::total_cmp)
            .unwrap_or(1.0);
        m * x[2]
    }

    #[differentiate(vjp, jvp)]
    fn largest_square_below<T: Float>(x: &[T]) -> T {
        x.iter()
            .map(|&v| v * v)
            .filter(|s| *s < T::from_f64(2.0))
            .reduce(T::max)
            .expect("one square below 2")
    }

    #[differentiate(vjp, jvp)]
    fn largest_of_none(x: &[f64]) -> f64 {
        let m = x
            .iter()
            .filter(|&&v| v > 10.0)
            .max_by(|a, b| a.total_cmp(b))
            .copied()
            .unwrap_or(-1.0);
        m + x[0]
    }

    #[test]
    fn the_first_item_that_passes_starts_the_reduction() {
        // X = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9]: 0.3 is the smallest positive.
        let grad = check_slice(
            smallest_positive,
            smallest_positive_vjp,
            smallest_positive_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        expected[0] = X[2];
        expected[2] = X[0];
        assert_close(&grad, &expected);
        // Squares below 2: 0.09, 1.44, 0.64, 0.16, 0.81; the largest is 1.2².
        let grad = check_slice(
            largest_square_below::<f64>,
            largest_square_below_vjp,
            largest_square_below_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        expected[1] = 2.0 * X[1];
        assert_close(&grad, &expected);
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut dx = vec![0.0_f32; 7];
        largest_square_below_vjp(&x32, &mut dx, 1.0);
        assert!((f64::from(dx[1]) - 2.0 * X[1]).abs() < 1e-5);
        let grad = check_slice(
            largest_of_none,
            largest_of_none_vjp,
            largest_of_none_jvp,
            &X,
        );
        assert_close(&grad, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(largest_of_none(&X), X[0] - 1.0);
        let none = std::panic::catch_unwind(|| largest_square_below_vjp(&[3.0], &mut [0.0], 1.0));
        let message = *none.unwrap_err().downcast::<String>().unwrap();
        assert_eq!(message, "one square below 2");
    }
}

/// `Option`s of numbers kept in locals: the previous item, a running best
/// that starts as `None`, the index of a first hit, read by `if let`,
/// `match` (with a guard), `let … else` and the methods of `Option`.
mod options_in_locals {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn squared_steps(x: &[f64]) -> f64 {
        let mut prev = None;
        let mut s = 0.0;
        for &v in x {
            if let Some(p) = prev {
                s += (v - p) * (v - p);
            }
            prev = Some(v);
        }
        s
    }

    fn squared_steps_closed(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        (0..n)
            .map(|i| {
                let left = if i > 0 { 2.0 * (x[i] - x[i - 1]) } else { 0.0 };
                let right = if i + 1 < n {
                    -2.0 * (x[i + 1] - x[i])
                } else {
                    0.0
                };
                left + right
            })
            .collect()
    }

    #[differentiate(vjp, jvp)]
    fn running_best<T: Float>(x: &[T]) -> T {
        let mut best: Option<T> = None;
        for &v in x {
            best = Some(match best {
                None => v,
                Some(b) => b.max(v),
            });
        }
        best.unwrap_or(T::ZERO) * T::from_f64(2.0)
    }

    #[differentiate(vjp, jvp)]
    fn first_hit(x: &[f64]) -> f64 {
        let mut hit: Option<usize> = None;
        for (i, &v) in x.iter().enumerate() {
            if v > 1.0 && hit.is_none() {
                hit = Some(i);
            }
        }
        match hit {
            Some(i) => x[i] * x[0],
            None => 0.0,
        }
    }

    #[differentiate(vjp, jvp)]
    fn last_negative_square(x: &[f64]) -> f64 {
        let mut m = None;
        for &v in x {
            if v < 0.0 {
                m = Some(v * v);
            }
        }
        let Some(q) = m else {
            return x[0];
        };
        q + m.map_or(0.0, f64::sin) + m.unwrap_or_default()
    }

    // The forms users write, some of which clippy would rewrite.
    #[allow(
        clippy::unnecessary_literal_unwrap,
        clippy::unnecessary_unwrap,
        clippy::redundant_pattern_matching
    )]
    #[differentiate(vjp, jvp)]
    fn tests_of_options(x: &[f64]) -> f64 {
        let a = Some(x[0]);
        let b: Option<f64> = None;
        let mut s = 0.0;
        if a.is_some() && b.is_none() {
            s += a.unwrap() * 3.0;
        }
        if a.is_some_and(|v| v > 0.0) {
            s += a.expect("a value") * x[1];
        }
        if b.is_none_or(|v| v > 0.0) {
            s += 1.0;
        }
        let c = a;
        if let None = b {
            s += x[2];
        }
        s + c.unwrap()
    }

    #[differentiate(vjp, jvp)]
    fn guarded_best(x: &[f64]) -> f64 {
        let mut best: Option<f64> = None;
        for &v in x {
            let s = v.sin();
            match best {
                Some(b) if b >= s => {}
                _ => best = Some(s),
            }
        }
        best.expect("an item")
    }

    /// Arms in any order, guards, an inner literal, `_` last.
    #[differentiate(vjp, jvp)]
    fn steps_by_arms(x: &[f64]) -> f64 {
        let mut prev: Option<usize> = None;
        let mut s = 0.0;
        for i in 0..x.len() {
            match prev {
                None => s += x[i],
                Some(0) => s *= x[i],
                Some(j) if x[j] > x[i] => s += x[j] - x[i],
                _ => s -= 0.5 * x[i],
            }
            prev = Some(i);
        }
        s
    }

    fn steps_by_arms_by_hand(x: &[f64]) -> f64 {
        let mut s = x[0] * x[1];
        for i in 2..x.len() {
            if x[i - 1] > x[i] {
                s += x[i - 1] - x[i];
            } else {
                s -= 0.5 * x[i];
            }
        }
        s
    }

    /// Options a chain or a buffer gives, kept in a local.
    #[differentiate(vjp, jvp)]
    fn options_of_searches(x: &[f64]) -> f64 {
        let top = x.iter().max_by(|a, b| a.total_cmp(b));
        let first = x.first().copied();
        let third: Option<&f64> = x.get(2);
        let mut s = match top {
            Some(&m) => m * x[0],
            None => 0.0,
        };
        s += first.unwrap_or(0.0) * third.copied().unwrap_or_default();
        let mut best: Option<f64> = None;
        for k in 1..3 {
            best = x[..3 * k].iter().copied().reduce(f64::min);
        }
        s + best.map_or(1.0, |b| b * b)
    }

    #[test]
    fn options_kept_from_searches() {
        let grad = check_slice(
            options_of_searches,
            options_of_searches_vjp,
            options_of_searches_jvp,
            &X,
        );
        // top = x3, first = x0, third = x2, best = min(x0..x5) = x1.
        let mut expected = [0.0; 7];
        expected[3] = X[0];
        expected[0] = X[3] + X[2];
        expected[2] = X[0];
        expected[1] = 2.0 * X[1];
        assert_close(&grad, &expected);
    }

    /// Options an `if` or a `match` makes, compared with `==`, in a
    /// closure and generic.
    #[allow(clippy::partialeq_to_none)]
    #[differentiate(vjp, jvp)]
    fn options_from_branches<T: Float>(x: &[T]) -> T {
        let shift: Option<T> = if x[0] > T::ZERO { Some(x[0]) } else { None };
        let f = |v: T| match shift {
            Some(s) => v - s,
            None => v,
        };
        let mut acc = None;
        let mut hit: Option<usize> = None;
        for (i, &v) in x.iter().enumerate() {
            acc = match acc {
                Some(a) => Some(a * T::from_f64(0.5) + f(v)),
                None => Some(f(v)),
            };
            if hit == None && v < T::ZERO {
                hit = Some(i);
            }
        }
        let bonus = if hit == Some(1) { x[1] * x[1] } else { T::ZERO };
        acc.expect("an item") + bonus
    }

    fn options_from_branches_by_hand(x: &[f64]) -> f64 {
        let s = if x[0] > 0.0 { x[0] } else { 0.0 };
        let acc = x.iter().fold(0.0, |a, &v| a * 0.5 + (v - s));
        let hit = x.iter().position(|&v| v < 0.0);
        acc + if hit == Some(1) { x[1] * x[1] } else { 0.0 }
    }

    #[test]
    fn options_made_by_branches() {
        // The second input's first item is below zero: no shift.
        for x in [&X[..], &[-0.5, 0.25, 2.0]] {
            let grad = check_slice(
                options_from_branches::<f64>,
                options_from_branches_vjp,
                options_from_branches_jvp,
                x,
            );
            assert!((options_from_branches(x) - options_from_branches_by_hand(x)).abs() < 1e-12);
            ad_runtime::check::gradient(options_from_branches_by_hand, |_| grad.clone(), x)
                .assert_within(1e-7);
        }
    }

    /// Options of integers: of an index buffer (`unwrap_or_default()` is
    /// an integer zero), and made by an `if` without a type (its `None`
    /// holds an integer zero). Both expanded to code rustc rejected.
    #[differentiate(vjp, jvp)]
    fn options_of_indices(x: &[f64], idx: &[usize]) -> f64 {
        let first = idx.first();
        let top = idx.iter().copied().max_by(|a, b| a.cmp(b));
        let step = if x[0] > 0.0 { Some(1usize) } else { None };
        let mut s = x[top.unwrap_or_default()];
        if let Some(&i) = first {
            s += x[i] * x[i];
        }
        let last = if idx.is_empty() {
            None
        } else {
            Some(idx.len() - 1)
        };
        s + x[step.map_or(0, |k| k + 1)] + x[last.unwrap_or(0)]
    }

    #[test]
    fn options_holding_integers() {
        const IDX: [usize; 2] = [2, 5];
        let grad = check_slice(
            |x| options_of_indices(x, &IDX),
            |x, d, s| options_of_indices_vjp(x, d, &IDX, s),
            |x, t| options_of_indices_jvp(x, t, &IDX),
            &X,
        );
        // top = 5, first = 2, step = Some(1) (x0 > 0), last = 1:
        // x5 + x2² + x2 + x1.
        let mut expected = [0.0; 7];
        expected[5] = 1.0;
        expected[2] = 2.0 * X[2] + 1.0;
        expected[1] = 1.0;
        assert_close(&grad, &expected);
    }

    /// An arm binding the whole option (`other => other`), as the value
    /// of the match and read in a body.
    #[differentiate(vjp, jvp)]
    fn largest_kept<T: Float>(x: &[T]) -> T {
        let mut best: Option<T> = None;
        let mut misses = T::ZERO;
        for &v in x {
            best = match best {
                None => Some(v),
                Some(b) if v > b => Some(v),
                other => other,
            };
            match best {
                Some(b) if b > v => misses += v * v,
                seen => misses += seen.map_or(T::ZERO, |b| b * T::from_f64(0.5)),
            }
        }
        best.unwrap_or(T::ZERO) * T::from_f64(2.0) + misses
    }

    fn largest_kept_by_hand(x: &[f64]) -> f64 {
        let mut best = f64::NEG_INFINITY;
        let mut misses = 0.0;
        for &v in x {
            best = best.max(v);
            misses += if best > v { v * v } else { best * 0.5 };
        }
        best * 2.0 + misses
    }

    #[test]
    fn an_arm_binding_the_option() {
        for x in [&X[..], &[2.0, -1.0, 0.5]] {
            let grad = check_slice(largest_kept::<f64>, largest_kept_vjp, largest_kept_jvp, x);
            assert_eq!(largest_kept(x), largest_kept_by_hand(x));
            ad_runtime::check::gradient(largest_kept_by_hand, |_| grad.clone(), x)
                .assert_within(1e-7);
        }
    }

    #[test]
    fn arms_tested_in_order() {
        let grad = check_slice(steps_by_arms, steps_by_arms_vjp, steps_by_arms_jvp, &X);
        assert_eq!(steps_by_arms(&X), steps_by_arms_by_hand(&X));
        ad_runtime::check::gradient(steps_by_arms_by_hand, |_| grad.clone(), &X)
            .assert_within(1e-7);
    }

    #[test]
    fn the_previous_item() {
        let grad = check_slice(squared_steps, squared_steps_vjp, squared_steps_jvp, &X);
        assert_close(&grad, &squared_steps_closed(&X));
    }

    #[test]
    fn a_best_that_starts_as_none() {
        let grad = check_slice(running_best::<f64>, running_best_vjp, running_best_jvp, &X);
        let mut expected = [0.0; 7];
        expected[3] = 2.0;
        assert_close(&grad, &expected);
        // In f32 too, and `None` stays `None` on an empty buffer.
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d = vec![0.0_f32; 7];
        let out = running_best_vjp(&x32, &mut d, 1.0);
        assert_eq!(out, running_best(&x32));
        assert_eq!(d[3], 2.0);
        assert_eq!(running_best_vjp::<f64>(&[], &mut [], 1.0), 0.0);
    }

    /// `if let` with a test inside the pattern.
    #[allow(clippy::double_ended_iterator_last)]
    #[differentiate(vjp, jvp)]
    fn first_hit_at_zero(x: &[f64]) -> f64 {
        let hit = x.iter().position(|&v| v > 0.0);
        let mut first: Option<usize> = None;
        if let Some(i) = hit {
            first = Some(i);
        }
        let big = x.iter().find(|&&v| v > 1.0);
        let base = if let Some(0) = first {
            x[0] * x[0]
        } else if let Some(&i) = first.as_ref() {
            x[i]
        } else {
            1.0
        };
        let small = x.iter().copied().filter(|v| *v < 0.0).last();
        base + big.copied().unwrap_or(0.0) * 0.5 + small.unwrap_or(0.0)
    }

    #[test]
    fn a_literal_in_if_let() {
        // x[0] = 0.3 > 0: x0².
        let grad = check_slice(
            first_hit_at_zero,
            first_hit_at_zero_vjp,
            first_hit_at_zero_jvp,
            &X,
        );
        // The first item above 1 is x[3] = 2.1.
        let mut expected = [0.0; 7];
        expected[0] = 2.0 * X[0];
        expected[3] = 0.5;
        // The last negative item is x[4].
        expected[4] = 1.0;
        assert_close(&grad, &expected);
        // The first positive item is x[1]; none above 1; x[0] negative.
        let grad = check_slice(
            first_hit_at_zero,
            first_hit_at_zero_vjp,
            first_hit_at_zero_jvp,
            &[-1.0, 0.5],
        );
        assert_close(&grad, &[1.0, 1.0]);
    }

    #[test]
    fn an_index_found_once() {
        // The first item above 1 is x[3] = 2.1.
        let grad = check_slice(first_hit, first_hit_vjp, first_hit_jvp, &X);
        let mut expected = [0.0; 7];
        expected[3] = X[0];
        expected[0] = X[3];
        assert_close(&grad, &expected);
        let low = [0.5, 0.2];
        let mut d = [0.0; 2];
        assert_eq!(first_hit_vjp(&low, &mut d, 1.0), 0.0);
        assert_eq!(d, [0.0, 0.0]);
    }

    #[test]
    fn let_else_and_methods() {
        // The last negative item is x[4] = -0.4: q = 0.16.
        let grad = check_slice(
            last_negative_square,
            last_negative_square_vjp,
            last_negative_square_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        let q = X[4] * X[4];
        expected[4] = 2.0 * X[4] * (2.0 + q.cos());
        assert_close(&grad, &expected);
        // No negative item: the `else` returns x[0].
        let positive = [0.5, 0.25];
        let grad = check_slice(
            last_negative_square,
            last_negative_square_vjp,
            last_negative_square_jvp,
            &positive,
        );
        assert_close(&grad, &[1.0, 0.0]);

        let grad = check_slice(
            tests_of_options,
            tests_of_options_vjp,
            tests_of_options_jvp,
            &X,
        );
        // s = 3 x0 + x0 x1 + 1 + x2 + x0 (x0 = 0.3 > 0).
        let mut expected = [0.0; 7];
        expected[0] = 4.0 + X[1];
        expected[1] = X[0];
        expected[2] = 1.0;
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_guarded_arm() {
        // The largest sine is sin(1.5).
        let grad = check_slice(guarded_best, guarded_best_vjp, guarded_best_jvp, &X);
        let mut expected = [0.0; 7];
        expected[5] = X[5].cos();
        assert_close(&grad, &expected);
        let none = std::panic::catch_unwind(|| guarded_best_vjp(&[], &mut [], 1.0));
        let message = *none.unwrap_err().downcast::<String>().unwrap();
        assert_eq!(message, "an item");
    }
}

/// A temporary `Vec` refilled on every iteration: emptied by `clear()`, or
/// made afresh and filled by a `for` whose length the iteration decides.
mod buffers_refilled_in_loops {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn cleared_each_step(x: &[f64]) -> f64 {
        let mut tmp = Vec::with_capacity(x.len());
        let mut total = 0.0;
        for k in 1..4 {
            tmp.clear();
            for &v in x.iter().take(k + 2) {
                tmp.push(v * k as f64);
            }
            total += tmp.iter().map(|t| t.sin()).sum::<f64>();
        }
        total
    }

    #[differentiate(vjp, jvp)]
    fn made_each_step(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for k in 1..x.len() {
            let mut tmp = Vec::new();
            for &v in &x[k..] {
                tmp.push(v * v);
            }
            total += tmp.iter().sum::<f64>() * tmp[0];
        }
        total
    }

    fn made_each_step_by_hand(x: &[f64]) -> f64 {
        (1..x.len())
            .map(|k| x[k..].iter().map(|v| v * v).sum::<f64>() * x[k] * x[k])
            .sum()
    }

    #[test]
    fn cleared_buffers_hold_each_steps_items() {
        let grad = check_slice(
            cleared_each_step,
            cleared_each_step_vjp,
            cleared_each_step_jvp,
            &X,
        );
        // d/dx_i of sum_k sum_{i < k + 2} sin(k x_i).
        let expected: Vec<f64> = (0..X.len())
            .map(|i| {
                (1_u32..4)
                    .filter(|&k| i < k as usize + 2)
                    .map(|k| f64::from(k) * (f64::from(k) * X[i]).cos())
                    .sum()
            })
            .collect();
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_buffer_as_long_as_the_step_says() {
        let grad = check_slice(made_each_step, made_each_step_vjp, made_each_step_jvp, &X);
        assert!((made_each_step(&X) - made_each_step_by_hand(&X)).abs() < 1e-12);
        ad_runtime::check::gradient(made_each_step_by_hand, |_| grad.clone(), &X)
            .assert_within(1e-7);
    }
}

/// `match` on a tuple: of comparisons, of loop counters, of a tuple
/// variable, with `|`, guards, names bound to elements and `..`.
mod tuples_matched {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn signs_of_neighbours(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for w in x.windows(2) {
            s += match (w[0] > 0.0, w[1] > 0.0) {
                (true, true) => w[0] * w[1],
                (true, false) | (false, true) => w[0] - w[1],
                (false, false) => 0.0,
            };
        }
        s
    }

    #[test]
    fn comparisons_matched_together() {
        let grad = check_slice(
            signs_of_neighbours,
            signs_of_neighbours_vjp,
            signs_of_neighbours_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        for i in 0..6 {
            let (a, b) = (X[i], X[i + 1]);
            match (a > 0.0, b > 0.0) {
                (true, true) => {
                    expected[i] += b;
                    expected[i + 1] += a;
                }
                (false, false) => {}
                _ => {
                    expected[i] += 1.0;
                    expected[i + 1] -= 1.0;
                }
            }
        }
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn cases_of_a_grid(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                let v = x[i] * x[j + 1];
                s += match (i, j) {
                    (0, 0) => v.exp(),
                    (0, _) | (_, 0) => 2.0 * v,
                    (a, b) if a == b => v * v,
                    (a, _) => v * a as f64,
                };
            }
        }
        s
    }

    fn cases_of_a_grid_by_hand(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                let v = x[i] * x[j + 1];
                s += if i == 0 && j == 0 {
                    v.exp()
                } else if i == 0 || j == 0 {
                    2.0 * v
                } else if i == j {
                    v * v
                } else {
                    v * i as f64
                };
            }
        }
        s
    }

    #[test]
    fn counters_matched_together() {
        let grad = check_slice(
            cases_of_a_grid,
            cases_of_a_grid_vjp,
            cases_of_a_grid_jvp,
            &X,
        );
        assert_eq!(
            cases_of_a_grid(&X).to_bits(),
            cases_of_a_grid_by_hand(&X).to_bits()
        );
        ad_runtime::check::gradient(cases_of_a_grid_by_hand, |_| grad.clone(), &X)
            .assert_within(1e-7);
    }

    /// A tuple variable matched, names bound to its elements, generic.
    #[differentiate(vjp, jvp)]
    fn best_by_case<T: Float>(x: &[T]) -> T {
        let mut best = (0usize, T::NEG_INFINITY);
        for (i, &v) in x.iter().enumerate() {
            if v > best.1 {
                best = (i, v);
            }
        }
        match best {
            (0, v) => v * T::from_f64(2.0),
            (_, v) if v > T::ONE => v.ln(),
            (i, v) => v * T::from_f64(i as f64),
        }
    }

    #[test]
    fn a_tuple_variable_matched() {
        // The largest is x[3] = 2.1 > 1: ln; below one at index 2: times 2;
        // first: doubled.
        for (x, k, slope) in [
            (&X[..], 3, 1.0 / X[3]),
            (&[0.3, 0.5, 0.9, -0.2][..], 2, 2.0),
            (&[0.7, 0.5][..], 0, 2.0),
        ] {
            let grad = check_slice(best_by_case::<f64>, best_by_case_vjp, best_by_case_jvp, x);
            let mut expected = vec![0.0; x.len()];
            expected[k] = slope;
            assert_close(&grad, &expected);
        }
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d = vec![0.0f32; 7];
        let out = best_by_case_vjp(&x32, &mut d, 1.0);
        assert_eq!(out.to_bits(), best_by_case(&x32).to_bits());
        assert!((d[3] - 1.0 / x32[3]).abs() < 1e-6);
    }

    /// `..` in the patterns, and each arm giving a pair.
    #[differentiate(vjp, jvp)]
    fn rest_and_pairs(x: &[f64]) -> f64 {
        let (a, b, c) = (x[0], x[1], x[2]);
        let head = match (a < 0.0, b < 0.0, c < 0.0) {
            (true, ..) => a * b,
            (_, true, _) => b * c,
            (.., last) => {
                if last {
                    c
                } else {
                    a + b + c
                }
            }
        };
        let mut s = head;
        for i in 3..x.len() {
            let (lo, hi) = match (i % 2, i < 5) {
                (0, true) => (x[i], 1.0),
                (0, false) => (1.0, x[i]),
                _ => (x[i], x[i]),
            };
            s += lo * hi;
        }
        s
    }

    fn rest_and_pairs_by_hand(x: &[f64]) -> f64 {
        let (a, b, c) = (x[0], x[1], x[2]);
        let head = if a < 0.0 {
            a * b
        } else if b < 0.0 {
            b * c
        } else if c < 0.0 {
            c
        } else {
            a + b + c
        };
        head + (3..x.len())
            .map(|i| if i % 2 == 0 { x[i] } else { x[i] * x[i] })
            .sum::<f64>()
    }

    #[test]
    fn rests_and_pairs_of_arms() {
        for x in [
            &X[..],
            &[0.5, 0.25, -2.0, 1.5],
            &[0.5, 0.25, 2.0],
            &[-0.5, 0.25, 2.0],
        ] {
            let grad = check_slice(rest_and_pairs, rest_and_pairs_vjp, rest_and_pairs_jvp, x);
            assert!((rest_and_pairs(x) - rest_and_pairs_by_hand(x)).abs() < 1e-12);
            ad_runtime::check::gradient(rest_and_pairs_by_hand, |_| grad.clone(), x)
                .assert_within(1e-7);
        }
    }
}

/// `o.map(f)` of an option (a local, or what a search or a buffer gives),
/// read by its methods or `if let`: `f` runs only on a value.
mod options_mapped {
    use super::*;
    use ad_runtime::Float;

    // Written as users write it; pedantic clippy prefers `map_or`.
    #[allow(clippy::map_unwrap_or)]
    #[differentiate(vjp, jvp)]
    fn maps_of_options(x: &[f64]) -> f64 {
        let first = x.first().map(|v| v * 2.0).unwrap_or(0.0);
        let top = x.iter().max_by(|a, b| a.total_cmp(b)).map(|m| m.exp());
        let far = x.get(50).map(|v| v.sin()).unwrap_or(1.5);
        let idx = x.iter().position(|&v| v < 0.0).map(|i| i + 1).unwrap_or(0);
        let local = Some(x[2]);
        let twice = local.map(|v| v * v).map(|v| v + 1.0);
        let hit = x.iter().copied().find(|v| *v > 5.0).map(f64::ln);
        let mut s = first + top.unwrap_or_default() + far + x[idx] * twice.unwrap();
        if hit.is_none() {
            s += 1.0;
        }
        if let Some(t) = x.iter().copied().reduce(f64::min).map(|m| m * 3.0) {
            s += t;
        }
        s
    }

    fn maps_of_options_by_hand(x: &[f64]) -> f64 {
        let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let idx = x.iter().position(|&v| v < 0.0).map_or(0, |i| i + 1);
        let min = x.iter().copied().fold(f64::INFINITY, f64::min);
        let hit = x.iter().any(|&v| v > 5.0);
        2.0 * x[0]
            + top.exp()
            + 1.5
            + x[idx] * (x[2] * x[2] + 1.0)
            + if hit { 0.0 } else { 1.0 }
            + 3.0 * min
    }

    #[test]
    fn options_mapped_by_their_methods() {
        // The second input has no negative item: `idx` is 0.
        for x in [&X[..], &[0.3, 1.2, 0.8]] {
            let grad = check_slice(maps_of_options, maps_of_options_vjp, maps_of_options_jvp, x);
            assert!((maps_of_options(x) - maps_of_options_by_hand(x)).abs() < 1e-12);
            ad_runtime::check::gradient(maps_of_options_by_hand, |_| grad.clone(), x)
                .assert_within(1e-7);
        }
    }

    /// `f` would panic on the zero a missing value stands for: it must not
    /// run then.
    #[differentiate(vjp, jvp)]
    fn mapped_only_on_a_value<T: Float>(x: &[T]) -> T {
        let last = x
            .iter()
            .rposition(|&v| v > T::from_f64(1.0))
            .map(|i| x[i + 1]);
        last.map_or(x[0], |v| v * v)
    }

    #[test]
    fn the_function_runs_only_on_a_value() {
        // x[5] = 1.5 is the last above one: x[6] squared.
        let grad = check_slice(
            mapped_only_on_a_value::<f64>,
            mapped_only_on_a_value_vjp,
            mapped_only_on_a_value_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        expected[6] = 2.0 * X[6];
        assert_close(&grad, &expected);
        // No item above one, and one item: `x[i + 1]` would be out of bounds.
        let mut d = [0.0f32];
        let out = mapped_only_on_a_value_vjp(&[0.5f32], &mut d, 1.0);
        assert_eq!((out, d), (0.5, [1.0]));
    }
}

/// `return;` in a closure returning nothing (`for_each`), as a guard: the
/// rest of the body is skipped, as `continue` would in a loop.
mod unit_closure_guards {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn skipped_by_guards(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut c = 0.0;
        x.iter().enumerate().for_each(|(i, &v)| {
            if i == 0 {
                return;
            }
            if v < -1.0 {
                c += 1.0;
                return;
            }
            s += v * x[i - 1];
        });
        let mut add = |v: f64| {
            if v > 2.0 {
                return;
            }
            s += v.exp();
        };
        for &v in x {
            add(v);
        }
        s + c
    }

    fn skipped_by_guards_by_hand(x: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut c = 0.0;
        for i in 1..x.len() {
            if x[i] < -1.0 {
                c += 1.0;
            } else {
                s += x[i] * x[i - 1];
            }
        }
        s + x
            .iter()
            .filter(|&&v| v <= 2.0)
            .map(|v| v.exp())
            .sum::<f64>()
            + c
    }

    #[test]
    fn guards_without_a_value() {
        let grad = check_slice(
            skipped_by_guards,
            skipped_by_guards_vjp,
            skipped_by_guards_jvp,
            &X,
        );
        assert!((skipped_by_guards(&X) - skipped_by_guards_by_hand(&X)).abs() < 1e-12);
        ad_runtime::check::gradient(skipped_by_guards_by_hand, |_| grad.clone(), &X)
            .assert_within(1e-7);
    }
}

/// `std::mem::replace(&mut a, e)` and `std::mem::take(&mut a)` of number
/// variables: `let old = a; a = e;`, in loops too.
mod numbers_replaced {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn rotated_pair(x: &[f64]) -> f64 {
        let mut a = x[0];
        let mut b = x[1];
        let mut total = 0.0;
        for &v in &x[2..] {
            let old = std::mem::replace(&mut a, b * 0.5 + v);
            b = old + a;
            total += std::mem::take(&mut b) * v;
            b += old;
        }
        let mut k = 1;
        let first = std::mem::replace(&mut k, 3);
        a * x[first] + b * x[k] + total
    }

    fn rotated_pair_by_hand(x: &[f64]) -> f64 {
        let (mut a, mut b, mut total) = (x[0], x[1], 0.0);
        for &v in &x[2..] {
            let old = a;
            a = b * 0.5 + v;
            total += (old + a) * v;
            b = old;
        }
        a * x[1] + b * x[3] + total
    }

    #[test]
    fn replaced_and_taken() {
        let grad = check_slice(rotated_pair, rotated_pair_vjp, rotated_pair_jvp, &X);
        assert_eq!(
            rotated_pair(&X).to_bits(),
            rotated_pair_by_hand(&X).to_bits()
        );
        ad_runtime::check::gradient(rotated_pair_by_hand, |_| grad.clone(), &X).assert_within(1e-7);
    }
}

/// `collect()` of arrays, `Vec<[f64; 3]>`: rows, as `vec![[0.0; 3]; n]`
/// makes them, read and written by element, iterated by row.
mod arrays_collected_as_rows {
    use super::*;
    use ad_runtime::Float;

    #[differentiate(vjp, jvp)]
    fn drifted_points<T: Float>(x: &[T]) -> T {
        let n = x.len() / 3;
        let mut pos: Vec<[T; 3]> = (0..n)
            .map(|i| [x[3 * i], x[3 * i + 1], x[3 * i + 2]])
            .collect();
        let pairs: Vec<[T; 2]> = x.windows(2).map(|w| [w[0] * w[1], w[1]]).collect();
        for _ in 0..3 {
            for i in 0..n {
                let j = (i + 1) % n;
                for k in 0..3 {
                    let d = pos[j][k] - pos[i][k];
                    pos[i][k] += T::from_f64(0.1) * d * d;
                }
            }
        }
        let spread: T = pos.iter().map(|p| p[0] * p[1] - p[2]).sum();
        let mut s = T::ZERO;
        for p in &pairs {
            s += p[0] + p[1].sin();
        }
        spread + s
    }

    fn drifted_points_by_hand(x: &[f64]) -> f64 {
        let n = x.len() / 3;
        let mut pos = vec![[0.0; 3]; n];
        for i in 0..n {
            pos[i] = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
        }
        for _ in 0..3 {
            for i in 0..n {
                let j = (i + 1) % n;
                for k in 0..3 {
                    let d = pos[j][k] - pos[i][k];
                    pos[i][k] += 0.1 * d * d;
                }
            }
        }
        let spread: f64 = pos.iter().map(|p| p[0] * p[1] - p[2]).sum();
        spread + x.windows(2).map(|w| w[0] * w[1] + w[1].sin()).sum::<f64>()
    }

    #[test]
    fn arrays_collected_are_rows() {
        let x = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9, 0.2, -0.7];
        let grad = check_slice(
            drifted_points::<f64>,
            drifted_points_vjp,
            drifted_points_jvp,
            &x,
        );
        assert!((drifted_points(&x) - drifted_points_by_hand(&x)).abs() < 1e-12);
        ad_runtime::check::gradient(drifted_points_by_hand, |_| grad.clone(), &x)
            .assert_within(1e-7);
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut d = vec![0.0f32; 9];
        let out = drifted_points_vjp(&x32, &mut d, 1.0);
        assert_eq!(out.to_bits(), drifted_points(&x32).to_bits());
        for (a, b) in d.iter().zip(&grad) {
            assert!((f64::from(*a) - b).abs() < 1e-3 * (1.0 + b.abs()));
        }
    }
}

/// A buffer made where it is iterated by pieces: `….collect::<Vec<_>>()
/// .windows(2)`, `x[..4].to_vec().chunks(2)`.
mod temporaries_in_pieces {
    use super::*;

    // Written as users write it; clippy prefers no temporary.
    #[allow(clippy::needless_collect)]
    #[differentiate(vjp, jvp)]
    fn made_then_windows(x: &[f64]) -> f64 {
        let a: f64 = x
            .iter()
            .map(|v| v * 2.0)
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| w[0] * w[1])
            .sum();
        let b: f64 = x[..4]
            .to_vec()
            .chunks(2)
            .map(|c| c[0] - c[1])
            .map(|d| d * d)
            .sum();
        a + b
    }

    #[test]
    fn windows_and_chunks_of_temporaries() {
        let grad = check_slice(
            made_then_windows,
            made_then_windows_vjp,
            made_then_windows_jvp,
            &X,
        );
        let mut expected = vec![0.0; 7];
        for i in 0..6 {
            expected[i] += 4.0 * X[i + 1];
            expected[i + 1] += 4.0 * X[i];
        }
        for c in [0, 2] {
            let d = X[c] - X[c + 1];
            expected[c] += 2.0 * d;
            expected[c + 1] -= 2.0 * d;
        }
        assert_close(&grad, &expected);
    }
}

/// Options read where they are made: `if let` of `chain.next()`, `match`
/// of a search or an element, `is_some()`, `is_some_and(f)` and `map_or`
/// of a search or a reduction after a filter.
mod options_made_where_read {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn read_at_once(x: &[f64]) -> f64 {
        let a = x.first().map_or(0.0, |v| v * 2.0);
        let b = match x.iter().max_by(|p, q| p.total_cmp(q)) {
            Some(&m) if m > 5.0 => 0.0,
            Some(&m) => m.exp(),
            None => 1.0,
        };
        let c = if x.iter().position(|&v| v > 2.0).is_some() {
            x[1]
        } else {
            x[2]
        };
        let d = match x.get(10) {
            Some(v) => *v,
            None => x[3] * 2.0,
        };
        let e = if let Some(t) = x.iter().rev().map(|v| v.sin()).next() {
            t * t
        } else {
            0.0
        };
        let f = x.iter().find(|v| **v < -1.0).is_some_and(|v| *v < -1.1);
        let g = x
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .reduce(f64::min)
            .map_or(0.0, f64::sqrt);
        a + b + c + d + e + if f { x[4] } else { 0.0 } + g
    }

    fn read_at_once_by_hand(x: &[f64]) -> f64 {
        let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let c = if x.iter().any(|&v| v > 2.0) {
            x[1]
        } else {
            x[2]
        };
        let f = x.iter().find(|v| **v < -1.0).is_some_and(|v| *v < -1.1);
        let smallest_positive = x
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        2.0 * x[0]
            + top.exp()
            + c
            + 2.0 * x[3]
            + x[x.len() - 1].sin().powi(2)
            + if f { x[4] } else { 0.0 }
            + smallest_positive.sqrt()
    }

    #[test]
    fn options_read_where_made() {
        // x[1] = -1.2 < -1.1: `f` holds; no element beyond index 10.
        for x in [&X[..], &[0.3, -1.05, 0.8, 2.5, -0.4]] {
            let grad = check_slice(read_at_once, read_at_once_vjp, read_at_once_jvp, x);
            assert!((read_at_once(x) - read_at_once_by_hand(x)).abs() < 1e-12);
            ad_runtime::check::gradient(read_at_once_by_hand, |_| grad.clone(), x)
                .assert_within(1e-7);
        }
    }
}

/// Neighbouring adjoints carried from one iteration to the next in a
/// register (`reverse/updates.rs`): loops forwards and backwards, offsets
/// `-1, 0` and `0, 1`, a helper for the term, and loops that never run
/// (the carried adjoint is then added nowhere).
mod adjoints_carried {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn term(p: f64, q: f64) -> f64 {
        let a = 1.0 - p;
        let b = q - p * p;
        a * a + 100.0 * b * b
    }

    #[differentiate(vjp, jvp)]
    fn chains_both_ways(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 1..x.len() {
            s += term(x[i - 1], x[i]);
        }
        for i in (0..x.len().saturating_sub(1)).rev() {
            s += (x[i] * x[i + 1]).sin();
        }
        s
    }

    fn chains_both_ways_by_hand(x: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; x.len()];
        for i in 1..x.len() {
            let (p, q) = (x[i - 1], x[i]);
            let b = q - p * p;
            g[i - 1] += -2.0 * (1.0 - p) - 400.0 * p * b;
            g[i] += 200.0 * b;
        }
        for i in 0..x.len().saturating_sub(1) {
            let c = (x[i] * x[i + 1]).cos();
            g[i] += c * x[i + 1];
            g[i + 1] += c * x[i];
        }
        g
    }

    #[test]
    fn carried_adjoints_reach_every_element() {
        for x in [&X[..], &[0.5, -0.25], &[0.5], &[]] {
            let grad = check_slice(
                chains_both_ways,
                chains_both_ways_vjp,
                chains_both_ways_jvp,
                x,
            );
            assert_close(&grad, &chains_both_ways_by_hand(x));
        }
    }
}

/// Stencils whose adjoint adds into up to five neighbouring elements of a
/// shadow per iteration, carried in a window of registers (forwards and
/// backwards, offsets with gaps), and one too wide to carry; each against
/// its gradient written by hand, at every length down to none.
mod stencils_carried {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn heat(x: &[f64]) -> f64 {
        let n = x.len();
        let mut cur = x.to_vec();
        for _ in 0..3 {
            let mut next = cur.clone();
            for i in 1..n.saturating_sub(1) {
                next[i] = cur[i] + 0.25 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
            }
            cur = next;
        }
        cur.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v)
            .sum()
    }

    /// The same over `windows(3)`, writing `next[i + 1]`: the write went
    /// through a slice hoisted `&` (a rustc error in the expansion), as the
    /// buffer written was a view of one made before the outer loop.
    #[differentiate(vjp, jvp)]
    fn heat_windows(x: &[f64]) -> f64 {
        let mut cur = x.to_vec();
        for _ in 0..3 {
            let mut next = cur.clone();
            for (i, w) in cur.windows(3).enumerate() {
                next[i + 1] = w[1] + 0.25 * (w[0] - 2.0 * w[1] + w[2]);
            }
            cur = next;
        }
        cur.iter()
            .enumerate()
            .map(|(i, v)| (i as f64 + 1.0) * v)
            .sum()
    }

    fn heat_by_hand(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let mut d: Vec<f64> = (0..n).map(|i| i as f64 + 1.0).collect();
        for _ in 0..3 {
            let mut before = d.clone();
            for i in 1..n.saturating_sub(1) {
                before[i] += -d[i] + 0.5 * d[i];
                before[i - 1] += 0.25 * d[i];
                before[i + 1] += 0.25 * d[i];
            }
            d = before;
        }
        d
    }

    /// Offsets -2 to 2 (four carried), -2, 0 and 1 (a gap), -1 and 1 (no
    /// centre), and -3 to 3 (six: not carried).
    #[differentiate(vjp, jvp)]
    fn stencils(x: &[f64]) -> f64 {
        let n = x.len();
        let mut s = 0.0;
        for i in 2..n.saturating_sub(2) {
            s += (x[i - 2] - 4.0 * x[i - 1] + 6.0 * x[i] - 4.0 * x[i + 1] + x[i + 2]).powi(2);
        }
        for i in 2..n.saturating_sub(1) {
            s += x[i - 2] * x[i].sin() + x[i + 1] * x[i - 2];
        }
        for i in 1..n.saturating_sub(1) {
            s += (x[i + 1] - x[i - 1]).powi(2);
        }
        for i in 3..n.saturating_sub(3) {
            s += (x[i - 3] + x[i + 3] - 2.0 * x[i]).powi(2);
        }
        s
    }

    fn stencils_by_hand(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let mut g = vec![0.0; n];
        for i in 2..n.saturating_sub(2) {
            let c = [1.0, -4.0, 6.0, -4.0, 1.0];
            let r: f64 = (0..5).map(|k| c[k] * x[i + k - 2]).sum();
            for k in 0..5 {
                g[i + k - 2] += 2.0 * r * c[k];
            }
        }
        for i in 2..n.saturating_sub(1) {
            g[i - 2] += x[i].sin() + x[i + 1];
            g[i] += x[i - 2] * x[i].cos();
            g[i + 1] += x[i - 2];
        }
        for i in 1..n.saturating_sub(1) {
            let r = x[i + 1] - x[i - 1];
            g[i + 1] += 2.0 * r;
            g[i - 1] -= 2.0 * r;
        }
        for i in 3..n.saturating_sub(3) {
            let r = x[i - 3] + x[i + 3] - 2.0 * x[i];
            g[i - 3] += 2.0 * r;
            g[i + 3] += 2.0 * r;
            g[i] -= 4.0 * r;
        }
        g
    }

    /// A running value carried through the loop: the adjoint loop runs
    /// backwards, carrying towards the lower offsets.
    #[differentiate(vjp, jvp)]
    fn filtered(x: &[f64]) -> f64 {
        let mut acc = 0.0;
        for i in 1..x.len().saturating_sub(1) {
            acc = 0.5 * acc + x[i - 1] * x[i + 1] - x[i];
        }
        acc
    }

    fn filtered_by_hand(x: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; x.len()];
        let mut d_acc = 1.0;
        for i in (1..x.len().saturating_sub(1)).rev() {
            g[i - 1] += d_acc * x[i + 1];
            g[i + 1] += d_acc * x[i - 1];
            g[i] -= d_acc;
            d_acc *= 0.5;
        }
        g
    }

    #[test]
    fn every_element_gets_its_terms() {
        let long: Vec<f64> = (0..11).map(|k| (f64::from(k) * 0.7).sin()).collect();
        for x in [&long[..], &X[..], &X[..5], &X[..3], &X[..2], &X[..1], &[]] {
            let grad = check_slice(heat, heat_vjp, heat_jvp, x);
            assert_close(&grad, &heat_by_hand(x));
            let grad = check_slice(heat_windows, heat_windows_vjp, heat_windows_jvp, x);
            assert_close(&grad, &heat_by_hand(x));
            let grad = check_slice(stencils, stencils_vjp, stencils_jvp, x);
            assert_close(&grad, &stencils_by_hand(x));
            let grad = check_slice(filtered, filtered_vjp, filtered_jvp, x);
            assert_close(&grad, &filtered_by_hand(x));
        }
    }
}

/// Tuples taken by value: a state `(p, v)` stepped by a helper, taken apart
/// in the parameter list or by element, integer tuples as shapes; the
/// adjoint and the tangent of a tuple are tuples.
mod tuple_parameters {
    use super::*;
    use ad_runtime::{Float, Lanes};

    /// One explicit Euler step of a pendulum.
    #[differentiate(vjp, jvp)]
    fn step((p, v): (f64, f64), dt: f64) -> (f64, f64) {
        (p + dt * v, v - dt * p.sin())
    }

    #[test]
    fn a_tuple_parameter_has_a_tuple_adjoint() {
        let (p, v, dt) = (0.3, 0.7, 0.1);
        let (d0, d1) = (1.0, 0.5);
        let (out, (d_p, d_v), d_dt) = step_vjp((p, v), dt, (d0, d1));
        assert_eq!(out, step((p, v), dt));
        // ∂(p + dt v, v - dt sin p) / ∂(p, v, dt), transposed, times the seed.
        assert_close(
            &[d_p, d_v, d_dt],
            &[d0 - d1 * dt * p.cos(), d0 * dt + d1, d0 * v - d1 * p.sin()],
        );
        // The dot-product test against `_jvp`: <J u, w> = <u, Jᵀ w>.
        let u = [0.4, -0.9, 1.3];
        let (jvp_out, (t0, t1)) = step_jvp((p, v), (u[0], u[1]), dt, u[2]);
        assert_eq!(jvp_out, out);
        let lhs = t0 * d0 + t1 * d1;
        let rhs = u[0] * d_p + u[1] * d_v + u[2] * d_dt;
        assert!((lhs - rhs).abs() < 1e-12, "{lhs} vs {rhs}");
    }

    /// The state kept in a tuple variable and handed to the step.
    #[differentiate(vjp, jvp)]
    fn pendulum(x: &[f64]) -> f64 {
        let mut s = (x[0], x[1]);
        for _ in 0..10 {
            s = step(s, 0.1 * x[2]);
        }
        let (p, v) = step((s.1, s.0), 0.05);
        p * v
    }

    fn pendulum_by_hand(x: &[f64]) -> (f64, Vec<f64>) {
        // The forward pass, then the adjoint of each step in reverse.
        let dt = 0.1 * x[2];
        let mut states = vec![(x[0], x[1])];
        for _ in 0..10 {
            let (p, v) = *states.last().unwrap();
            states.push((p + dt * v, v - dt * p.sin()));
        }
        let (s0, s1) = states[10];
        let (p, v) = (s1 + 0.05 * s0, s0 - 0.05 * s1.sin());
        let out = p * v;
        let (d_p, d_v) = (v, p);
        // Through the last step, of (s1, s0).
        let mut d_s1 = d_p - d_v * 0.05 * s1.cos();
        let mut d_s0 = d_p * 0.05 + d_v;
        let mut d_dt = 0.0;
        for k in (0..10).rev() {
            let (p, v) = states[k];
            d_dt += d_s0 * v - d_s1 * p.sin();
            (d_s0, d_s1) = (d_s0 - d_s1 * dt * p.cos(), d_s0 * dt + d_s1);
        }
        let mut grad = vec![0.0; x.len()];
        grad[0] = d_s0;
        grad[1] = d_s1;
        grad[2] = 0.1 * d_dt;
        (out, grad)
    }

    #[test]
    fn a_state_stepped_by_a_helper() {
        let grad = check_slice(pendulum, pendulum_vjp, pendulum_jvp, &X);
        let (out, expected) = pendulum_by_hand(&X);
        assert!((out - pendulum(&X)).abs() < 1e-14);
        assert_close(&grad, &expected);
    }

    /// A tuple read by element, generic over the float type.
    #[differentiate(vjp, jvp)]
    fn length<T: Float>(p: (T, T, T)) -> T {
        (p.0 * p.0 + p.1 * p.1 + p.2 * p.2).sqrt()
    }

    #[differentiate(vjp, jvp)]
    fn lengths(x: &[f64]) -> f64 {
        length((x[0], x[1] * 2.0, x[2])) + length((1.0, x[3], x[4]))
    }

    #[test]
    fn tuples_made_at_the_call() {
        let grad = check_slice(lengths, lengths_vjp, lengths_jvp, &X);
        let (a, b) = (
            (X[0] * X[0] + 4.0 * X[1] * X[1] + X[2] * X[2]).sqrt(),
            (1.0 + X[3] * X[3] + X[4] * X[4]).sqrt(),
        );
        let mut expected = vec![0.0; 7];
        expected[0] = X[0] / a;
        expected[1] = 4.0 * X[1] / a;
        expected[2] = X[2] / a;
        expected[3] = X[3] / b;
        expected[4] = X[4] / b;
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_generic_tuple_in_f32() {
        let (out, (d0, d1, d2)) = length_vjp((3.0f32, 4.0, 12.0), 1.0);
        assert_eq!(out, 13.0);
        for (d, x) in [(d0, 3.0), (d1, 4.0), (d2, 12.0)] {
            assert!((d - x / 13.0).abs() < 1e-6, "{d} vs {x} / 13");
        }
        let (out, tangent) = length_jvp((3.0f32, 4.0, 12.0), (1.0, 0.0, 0.0));
        assert_eq!(out, 13.0);
        assert!((tangent - d0).abs() < 1e-6, "{tangent} vs {d0}");
    }

    /// A tuple variable reassigned, returned as it is, and printed.
    #[differentiate(vjp, jvp, jvp_lanes)]
    fn swapped(mut s: (f64, f64), k: f64) -> (f64, f64) {
        assert!(s.0.is_finite(), "state {s:?}");
        s = (s.1 * k, s.0);
        s
    }

    #[test]
    fn a_tuple_returned_as_it_is() {
        let (out, (d_s0, d_s1), d_k) = swapped_vjp((0.5, 0.25), 2.0, (1.0, 3.0));
        assert_eq!(out, (0.5, 0.5));
        // out = (s1 k, s0): d_s0 = 3, d_s1 = k, d_k = s1.
        assert_eq!((d_s0, d_s1, d_k), (3.0, 2.0, 0.25));
        let (_, tangent) = swapped_jvp((0.5, 0.25), (1.0, 1.0), 2.0, 1.0);
        assert_eq!(tangent, (2.0 + 0.25, 1.0));
        // Two directions at once: along s.0, then along k.
        let (_, lanes) = swapped_jvp_lanes::<2>(
            (0.5, 0.25),
            (Lanes::basis(0), Lanes::splat(0.0)),
            2.0,
            Lanes::basis(1),
        );
        assert_eq!(lanes.0.0, [0.0, 0.25]);
        assert_eq!(lanes.1.0, [1.0, 0.0]);
    }

    #[test]
    #[should_panic(expected = "state (NaN, 1.0)")]
    fn a_tuple_printed_by_an_assertion() {
        let _ = swapped_vjp((f64::NAN, 1.0), 2.0, (1.0, 1.0));
    }

    /// A tuple taken apart is named after its elements, `p_v`, unless a
    /// parameter is called that; `_` elements are not bound.
    #[differentiate(vjp, jvp)]
    fn named_apart((p, v): (f64, f64), p_v: f64, (_, w): (f64, f64)) -> f64 {
        p * v * p_v + w
    }

    #[test]
    fn names_of_tuples_taken_apart() {
        let (out, d_pv, d_p_v, d_w) = named_apart_vjp((1.0, 2.0), 3.0, (5.0, 7.0), 1.0);
        assert_eq!((out, d_pv, d_p_v, d_w), (13.0, (6.0, 3.0), 2.0, (0.0, 1.0)));
        let (_, tangent) =
            named_apart_jvp((1.0, 2.0), (1.0, 0.0), 3.0, 0.0, (5.0, 7.0), (0.0, 1.0));
        assert_eq!(tangent, 6.0 + 1.0);
    }

    /// A custom rule of a function taking a tuple returns the tuple's
    /// adjoint in its place.
    #[ad_runtime::custom_vjp(area_rule)]
    fn area(s: (f64, f64)) -> f64 {
        s.0 * s.1
    }

    fn area_rule(s: (f64, f64), _out: f64, d_out: f64) -> (f64, f64) {
        (d_out * s.1, d_out * s.0)
    }

    #[differentiate]
    fn areas(x: &[f64]) -> f64 {
        area((x[0], x[1])) + 2.0 * area((x[2], x[0]))
    }

    #[test]
    fn a_custom_rule_of_a_tuple() {
        let grad = check_scalar(
            areas,
            |p, seed| {
                let mut d = vec![0.0; p.len()];
                let out = areas_vjp(p, &mut d, seed);
                (out, d)
            },
            &X,
        );
        let mut expected = vec![0.0; 7];
        expected[0] = X[1] + 2.0 * X[2];
        expected[1] = X[0];
        expected[2] = 2.0 * X[0];
        assert_close(&grad, &expected);
    }

    /// Tuples compared as wholes: element by element.
    #[differentiate(vjp, jvp)]
    fn unless_repeated(x: &[f64]) -> f64 {
        let s = (x[0], x[1]);
        if s == (0.0, 0.0) || s != (x[0], x[2]) {
            s.0 * s.1
        } else {
            x[2] * x[2]
        }
    }

    #[test]
    fn tuples_compared() {
        let grad = check_slice(
            unless_repeated,
            unless_repeated_vjp,
            unless_repeated_jvp,
            &X,
        );
        let mut expected = vec![0.0; 7];
        expected[0] = X[1];
        expected[1] = X[0];
        assert_close(&grad, &expected);
        // `s == (x[0], x[2])`: the other branch.
        let y = [0.3, 0.8, 0.8];
        let mut d_y = [0.0; 3];
        assert_eq!(unless_repeated_vjp(&y, &mut d_y, 1.0), 0.8 * 0.8);
        assert_eq!(d_y, [0.0, 0.0, 1.6]);
    }

    /// An integer tuple is constant: a shape.
    #[differentiate(vjp, jvp)]
    fn weighted(x: &[f64], shape: (usize, usize)) -> f64 {
        let (rows, cols) = shape;
        let mut t = 0.0;
        for i in 0..rows {
            for j in 0..cols {
                t += x[i * cols + j] * (i + 2 * j) as f64;
            }
        }
        t
    }

    #[differentiate(vjp, jvp)]
    fn shaped(x: &[f64]) -> f64 {
        weighted(x, (2, 3)) + weighted(&x[1..], (3, 2)).sin()
    }

    #[test]
    fn an_integer_tuple_is_a_shape() {
        let grad = check_slice(shaped, shaped_vjp, shaped_jvp, &X);
        let mut expected = vec![0.0; 7];
        let inner = weighted(&X[1..], (3, 2)).cos();
        for i in 0..2 {
            for j in 0..3 {
                expected[i * 3 + j] += (i + 2 * j) as f64;
            }
        }
        for i in 0..3 {
            for j in 0..2 {
                expected[1 + i * 2 + j] += inner * (i + 2 * j) as f64;
            }
        }
        assert_close(&grad, &expected);
    }

    /// `wrt` leaves a tuple out: no adjoint for it.
    #[differentiate(wrt(k))]
    fn scaled_by(s: (f64, f64), k: f64) -> f64 {
        s.0 * k * k + s.1
    }

    #[test]
    fn a_tuple_left_out_by_wrt() {
        assert_eq!(scaled_by_vjp((1.0, 2.0), 3.0, 1.0), (11.0, 6.0));
    }

    /// Second order: the Hessian of s.0² s.1 along a direction.
    #[differentiate(vjp, hvp)]
    fn cubic(s: (f64, f64)) -> f64 {
        s.0 * s.0 * s.1
    }

    #[test]
    fn hessian_along_a_tuple() {
        let (out, grad, hv) = cubic_hvp((1.5, 2.0), (1.0, -1.0));
        assert_eq!(out, 4.5);
        assert_eq!(grad, (2.0 * 1.5 * 2.0, 1.5 * 1.5));
        // H = [[2 s1, 2 s0], [2 s0, 0]].
        assert_eq!(hv, (2.0 * 2.0 - 2.0 * 1.5, 2.0 * 1.5));
    }

    /// The split API: the pullback returns the tuple's adjoint.
    #[differentiate]
    fn blend(s: (f64, f64), x: &[f64]) -> f64 {
        s.0 * x[0] + s.1 * x[1] * x[1]
    }

    #[test]
    fn the_split_api_returns_a_tuple_adjoint() {
        let (out, pullback) = blend_forward((1.0, 2.0), &X);
        assert_eq!(out, blend((1.0, 2.0), &X));
        let mut d_x = vec![0.0; 7];
        let d_s = pullback(&X, &mut d_x, 2.0);
        assert_eq!(d_s, (2.0 * X[0], 2.0 * X[1] * X[1]));
        assert_close(&d_x[..2], &[2.0, 2.0 * 2.0 * 2.0 * X[1]]);
    }
}

/// Buffers that change length outside loops: `retain`, `truncate`,
/// `insert`, and a new buffer assigned to a variable.
mod buffers_resized {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn positive_log_mean(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * 1.5).collect();
        v.retain(|&a| a > 0.0);
        let n = v.len() as f64;
        v.iter().map(|a| a.ln()).sum::<f64>() / n
    }

    #[test]
    fn retained_elements() {
        let grad = check_slice(
            positive_log_mean,
            positive_log_mean_vjp,
            positive_log_mean_jvp,
            &X,
        );
        let kept = X.iter().filter(|&&a| a > 0.0).count() as f64;
        let expected: Vec<f64> = X
            .iter()
            .map(|&a| if a > 0.0 { 1.0 / (a * kept) } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn head_energy(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.insert(0, 1.0);
        v.insert(3, x[0] * 2.0);
        v.truncate(5);
        v.windows(2).map(|w| w[0] * w[1]).sum()
    }

    #[test]
    fn inserted_and_truncated() {
        let grad = check_slice(head_energy, head_energy_vjp, head_energy_jvp, &X);
        // v = [1, x0, x1, 2 x0, x2]: 1·x0 + x0·x1 + x1·2x0 + 2x0·x2.
        let mut expected = vec![0.0; 7];
        expected[0] = 1.0 + X[1] + 2.0 * X[1] + 2.0 * X[2];
        expected[1] = X[0] + 2.0 * X[0];
        expected[2] = 2.0 * X[0];
        assert_close(&grad, &expected);
    }

    /// A new buffer of another length assigned outside loops.
    #[differentiate(vjp, jvp)]
    fn smoothed_once(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v = v.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect();
        v.iter().map(|a| a.sin()).sum()
    }

    #[test]
    fn a_shorter_buffer_assigned() {
        let grad = check_slice(smoothed_once, smoothed_once_vjp, smoothed_once_jvp, &X);
        let mut expected = vec![0.0; 7];
        for i in 0..6 {
            let c = 0.5 * (0.5 * (X[i] + X[i + 1])).cos();
            expected[i] += c;
            expected[i + 1] += c;
        }
        assert_close(&grad, &expected);
    }
}

/// Local structs used by their fields: a state updated by a whole
/// literal in a loop (`..s` for the fields kept), a body whose array
/// fields are written in place, a nested struct, shorthand fields.
mod local_structs {
    use super::*;
    use ad_runtime::Float;

    #[derive(Clone, Copy)]
    struct State<T> {
        x: T,
        v: T,
    }

    struct Body {
        pos: [f64; 2],
        vel: [f64; 2],
        mass: f64,
    }

    struct System {
        body: Body,
        time: f64,
    }

    /// A damped oscillator stepped by symplectic Euler, generic.
    #[differentiate(vjp, jvp)]
    fn oscillator<T: Float>(x: &[T]) -> T {
        let (k, dt) = (T::from_f64(2.0), T::from_f64(0.05));
        let mut s = State { x: x[0], v: x[1] };
        for step in 0..20 {
            let a = -k * s.x;
            s = State {
                x: s.x + dt * (s.v + dt * a),
                v: s.v + dt * a,
            };
            if step % 5 == 4 {
                s = State {
                    v: s.v * T::from_f64(0.9),
                    ..s
                };
            }
        }
        s.x * s.x + T::from_f64(0.5) * s.v * s.v
    }

    fn oscillator_by_hand(x: &[f64]) -> f64 {
        let (k, dt) = (2.0, 0.05);
        let (mut p, mut v) = (x[0], x[1]);
        for step in 0..20 {
            let a = -k * p;
            (p, v) = (p + dt * (v + dt * a), v + dt * a);
            if step % 5 == 4 {
                v *= 0.9;
            }
        }
        p * p + 0.5 * v * v
    }

    fn oscillator_f64(x: &[f64]) -> f64 {
        oscillator(x)
    }

    fn oscillator_f64_vjp(x: &[f64], d_x: &mut [f64], seed: f64) -> f64 {
        oscillator_vjp(x, d_x, seed)
    }

    fn oscillator_f64_jvp(x: &[f64], t_x: &[f64]) -> (f64, f64) {
        oscillator_jvp(x, t_x)
    }

    #[test]
    fn a_state_assigned_by_literals() {
        let grad = check_slice(oscillator_f64, oscillator_f64_vjp, oscillator_f64_jvp, &X);
        assert_eq!(oscillator(&X).to_bits(), oscillator_by_hand(&X).to_bits());
        ad_runtime::check::gradient(oscillator_by_hand, |_| grad.clone(), &X).assert_within(1e-7);
        assert!(grad[2..].iter().all(|&g| g == 0.0));
        // In f32 too.
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d = vec![0.0_f32; 7];
        assert_eq!(oscillator_vjp(&x32, &mut d, 1.0), oscillator(&x32));
        assert!((f64::from(d[0]) - grad[0]).abs() < 1e-3 * (1.0 + grad[0].abs()));
    }

    /// A body in a system (a nested literal), its array fields written in
    /// place, made with a shorthand field and a type annotation.
    #[differentiate(vjp, jvp)]
    fn projectile(x: &[f64]) -> f64 {
        let pos = [x[0], x[1]];
        let mut sys: System = System {
            body: Body {
                pos,
                vel: [x[2], x[3]],
                mass: 2.0,
            },
            time: 0.0,
        };
        let dt = 0.1;
        for _ in 0..10 {
            sys.body.vel[1] -= dt * 9.81 / sys.body.mass;
            for i in 0..2 {
                sys.body.pos[i] += dt * sys.body.vel[i];
            }
            sys.time += dt;
        }
        let energy = 0.5 * sys.body.mass * sys.body.vel.iter().map(|v| v * v).sum::<f64>();
        energy + sys.body.pos[1] * sys.time
    }

    #[test]
    fn a_nested_body_written_in_place() {
        let grad = check_slice(projectile, projectile_vjp, projectile_jvp, &X);
        // vel0 is constant, vel1 falls by g·dt/m per step; pos1 gains
        // dt·Σ vel1: ∂/∂x1 = time, ∂/∂x3 = m·vel1_end + dt·10·time.
        let (dt, time) = (0.1, 1.0);
        let vel1_end = X[3] - 10.0 * dt * 9.81 / 2.0;
        let mut expected = [0.0; 7];
        expected[1] = time;
        expected[2] = 2.0 * X[2];
        expected[3] = 2.0 * vel1_end + 10.0 * dt * time;
        for (g, e) in grad.iter().zip(expected) {
            assert!((g - e).abs() < 1e-9, "{grad:?}");
        }
    }
}

/// Tuple structs made by a call and read by position, `let c = Pt(a, b);`
/// then `c.0`: a local per field, as for named fields.
mod tuple_structs {
    use super::*;
    use ad_runtime::Float;

    #[derive(Clone, Copy)]
    struct Pt<T>(T, T);

    struct Total(f64);

    /// The mean distance of points `(x[2i], x[2i + 1])` to their centroid:
    /// the centroid summed in place, assigned a new literal, and a point
    /// made per iteration in a loop.
    #[differentiate(vjp, jvp)]
    fn spread<T: Float>(x: &[T]) -> T {
        let n = x.len() / 2;
        let mut c = Pt(T::ZERO, T::ZERO);
        for i in 0..n {
            c.0 += x[2 * i];
            c.1 += x[2 * i + 1];
        }
        let k = T::from_f64(n as f64);
        c = Pt(c.0 / k, c.1 / k);
        let mut s = T::ZERO;
        for i in 0..n {
            let d = Pt(x[2 * i] - c.0, x[2 * i + 1] - c.1);
            s += (d.0 * d.0 + d.1 * d.1).sqrt();
        }
        s / k
    }

    fn spread_f64(x: &[f64]) -> f64 {
        spread(x)
    }

    fn spread_f64_vjp(x: &[f64], d_x: &mut [f64], seed: f64) -> f64 {
        spread_vjp(x, d_x, seed)
    }

    fn spread_f64_jvp(x: &[f64], t_x: &[f64]) -> (f64, f64) {
        spread_jvp(x, t_x)
    }

    #[test]
    fn points_made_and_assigned_by_calls() {
        let grad = check_slice(spread_f64, spread_f64_vjp, spread_f64_jvp, &X);
        // ∂/∂pᵢ of the mean distance to the centroid: the unit vector from
        // the centroid, less the mean of those (through the centroid).
        let n = 3;
        let (cx, cy) = ((X[0] + X[2] + X[4]) / 3.0, (X[1] + X[3] + X[5]) / 3.0);
        let unit: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let (dx, dy) = (X[2 * i] - cx, X[2 * i + 1] - cy);
                let r = dx.hypot(dy);
                (dx / r, dy / r)
            })
            .collect();
        let (mx, my) = unit
            .iter()
            .fold((0.0, 0.0), |(a, b), u| (a + u.0 / 3.0, b + u.1 / 3.0));
        for i in 0..n {
            assert!(
                (grad[2 * i] - (unit[i].0 - mx) / 3.0).abs() < 1e-12,
                "{grad:?}"
            );
            assert!(
                (grad[2 * i + 1] - (unit[i].1 - my) / 3.0).abs() < 1e-12,
                "{grad:?}"
            );
        }
        assert_eq!(grad[6], 0.0);
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d = vec![0.0_f32; 7];
        assert_eq!(
            spread_vjp(&x32, &mut d, 1.0).to_bits(),
            spread(&x32).to_bits()
        );
        assert!((f64::from(d[0]) - grad[0]).abs() < 1e-5);
    }

    /// A running total in a one-field tuple struct, assigned in a branch.
    #[differentiate(vjp, jvp)]
    fn clipped_total(x: &[f64]) -> f64 {
        let mut t = Total(0.0);
        for &v in x {
            if v > 0.0 {
                t.0 += v * v;
            } else {
                t = Total(t.0 - v);
            }
        }
        t.0
    }

    #[test]
    fn a_total_assigned_in_a_branch() {
        let grad = check_slice(clipped_total, clipped_total_vjp, clipped_total_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| if v > 0.0 { 2.0 * v } else { -1.0 })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// `Vec::resize`: shrinking and growing with a fill outside loops, and
/// shrinking in a loop (a buffer kept in its first storage).
mod buffers_resize {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn padded_energy(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.resize(4, 0.0);
        v.resize(6, x[6] * 2.0);
        v.iter()
            .enumerate()
            .map(|(i, a)| (i as f64 + 1.0) * a * a)
            .sum()
    }

    #[test]
    fn shrunk_then_padded_with_an_active_fill() {
        let grad = check_slice(padded_energy, padded_energy_vjp, padded_energy_jvp, &X);
        // v = [x0, x1, x2, x3, 2 x6, 2 x6]: the fill counts twice, with the
        // weights 5 and 6.
        let mut expected = vec![0.0; 7];
        for (i, e) in expected.iter_mut().enumerate().take(4) {
            *e = 2.0 * (i as f64 + 1.0) * X[i];
        }
        expected[6] = (5.0 + 6.0) * 8.0 * X[6];
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn trimmed_passes(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let mut s = 0.0;
        while v.len() > 2 {
            s += v.iter().map(|a| a.sin()).sum::<f64>();
            let n = v.len();
            v.resize(n - 2, 0.0);
        }
        s + v[0]
    }

    #[test]
    fn trimmed_in_a_loop() {
        let grad = check_slice(trimmed_passes, trimmed_passes_vjp, trimmed_passes_jvp, &X);
        // Lengths 7, 5, 3 are summed: x_i is in the passes with i < len.
        let expected: Vec<f64> = (0..7)
            .map(|i| {
                let passes = [7, 5, 3].iter().filter(|&&n| i < n).count() as f64;
                passes * X[i].cos() + if i == 0 { 1.0 } else { 0.0 }
            })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// Buffers named by a reference (`let w = &a;`, `&mut a`), chosen by a
/// branch inside a loop (`if`, `else if`, `match`; references, names,
/// arrays written out) or written through the choice: each branch runs the
/// rest of the block on its own buffer.
mod buffers_chosen_in_loops {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn alternating(x: &[f64]) -> f64 {
        let a = x[..3].to_vec();
        let b: Vec<f64> = x[3..6].iter().map(|v| v * v).collect();
        let mut s = 0.0;
        for k in 0..4 {
            let w = if k % 2 == 0 { &a } else { &b };
            s += w[0] * w[1] + w[2] * f64::from(k);
        }
        s
    }

    #[test]
    fn a_buffer_chosen_in_a_loop() {
        let grad = check_slice(alternating, alternating_vjp, alternating_jvp, &X);
        // k = 0, 2 read a = x[..3]; k = 1, 3 read b = x[3..6]².
        let x = X;
        let expected = [
            2.0 * x[1],
            2.0 * x[0],
            2.0,
            4.0 * x[4] * x[4] * x[3],
            4.0 * x[3] * x[3] * x[4],
            8.0 * x[5],
            0.0,
        ];
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn doubled_through_an_alias(x: &[f64]) -> f64 {
        let mut a = x[..3].to_vec();
        for k in 0..3 {
            let w = &mut a;
            w[k] *= 2.0;
            w[0] += w[2];
        }
        a.iter().map(|v| v.sin()).sum()
    }

    #[test]
    fn written_through_a_mutable_alias() {
        let grad = check_slice(
            doubled_through_an_alias,
            doubled_through_an_alias_vjp,
            doubled_through_an_alias_jvp,
            &X,
        );
        // a = [2 x0 + 4 x2, 2 x1, 2 x2].
        let first = (2.0 * X[0] + 4.0 * X[2]).cos();
        let mut expected = [0.0; 7];
        expected[0] = 2.0 * first;
        expected[1] = 2.0 * (2.0 * X[1]).cos();
        expected[2] = 4.0 * first + 2.0 * (2.0 * X[2]).cos();
        assert_close(&grad, &expected);
    }

    /// Arrays and `vec![…]` written out in the branches, in a loop.
    #[differentiate(vjp, jvp)]
    fn arrays_chosen(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..4 {
            let v = if k % 2 == 0 {
                [x[0], 1.0]
            } else {
                [x[1] * x[2], 2.0]
            };
            let w = match k {
                0 => vec![x[3]; 2],
                _ => vec![x[4], x[5]],
            };
            s += v[0] * v[1] + w[0] * w[1];
        }
        s
    }

    #[test]
    fn arrays_written_out_chosen_in_a_loop() {
        let grad = check_slice(arrays_chosen, arrays_chosen_vjp, arrays_chosen_jvp, &X);
        // 2 x0 + 4 x1 x2 + x3² + 3 x4 x5.
        let x = X;
        let expected = [
            2.0,
            4.0 * x[2],
            4.0 * x[1],
            2.0 * x[3],
            3.0 * x[5],
            3.0 * x[4],
            0.0,
        ];
        assert_close(&grad, &expected);
    }

    /// Parameters chosen by name (no `&`), in a loop.
    #[differentiate(vjp, jvp)]
    fn parameters_alternating(x: &[f64], y: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..3 {
            let v = if k == 1 { x } else { y };
            s += v[0] * v[1];
        }
        s
    }

    #[test]
    fn parameters_chosen_in_a_loop() {
        let grad = check_pair(
            parameters_alternating,
            parameters_alternating_vjp,
            parameters_alternating_jvp,
            &X,
            &Y,
        );
        // x0 x1 + 2 y0 y1.
        let mut expected = vec![0.0; 14];
        expected[..2].copy_from_slice(&[X[1], X[0]]);
        expected[7..9].copy_from_slice(&[2.0 * Y[1], 2.0 * Y[0]]);
        assert_close(&grad, &expected);
    }

    /// A buffer written through the choice, at the top level: a copy could
    /// not stand for it, so the rest runs in each branch there too.
    #[differentiate(vjp, jvp)]
    fn written_through_a_choice(x: &[f64]) -> f64 {
        let mut a = x[..2].to_vec();
        let mut b = x[2..4].to_vec();
        let w = if x[4] > 0.0 { &mut a } else { &mut b };
        w[0] *= w[1];
        a[0] * b[0] + a[1] - b[1]
    }

    #[test]
    fn a_buffer_written_through_a_choice() {
        let mut positive = X;
        positive[4] = 0.5;
        for x in [X, positive] {
            let grad = check_slice(
                written_through_a_choice,
                written_through_a_choice_vjp,
                written_through_a_choice_jvp,
                &x,
            );
            // x4 > 0: a0 = x0 x1, f = x0 x1 x2 + x1 − x3; else b0 = x2 x3,
            // f = x0 x2 x3 + x1 − x3.
            let expected = if x[4] > 0.0 {
                [
                    x[1] * x[2],
                    x[0] * x[2] + 1.0,
                    x[0] * x[1],
                    -1.0,
                    0.0,
                    0.0,
                    0.0,
                ]
            } else {
                [
                    x[2] * x[3],
                    1.0,
                    x[0] * x[3],
                    x[0] * x[2] - 1.0,
                    0.0,
                    0.0,
                    0.0,
                ]
            };
            assert_close(&grad, &expected);
        }
    }

    /// `&mut` parameters chosen by name at the top level, written through
    /// the choice.
    #[differentiate(vjp)]
    fn product_into_chosen(xs: &mut [f64], ys: &mut [f64], first: bool) {
        let v = if first { xs } else { ys };
        v[0] *= v[1];
    }

    #[test]
    fn mut_parameters_written_through_a_choice() {
        let point = [0.5, -1.5, 2.0, 3.0];
        let seed = [1.0, -2.0, 0.5, 4.0];
        for first in [true, false] {
            let f = |p: &[f64]| {
                let (mut xs, mut ys) = (p[..2].to_vec(), p[2..].to_vec());
                product_into_chosen(&mut xs, &mut ys, first);
                [xs, ys].concat()
            };
            let grad = ad_tests::check_vector(
                f,
                |p, s| {
                    let (mut xs, mut ys) = (p[..2].to_vec(), p[2..].to_vec());
                    let (mut d_xs, mut d_ys) = (s[..2].to_vec(), s[2..].to_vec());
                    product_into_chosen_vjp(&mut xs, &mut d_xs, &mut ys, &mut d_ys, first);
                    ([xs, ys].concat(), [d_xs, d_ys].concat())
                },
                &point,
                &seed,
            );
            // v0 ← v0 v1: d_v0 = s0 v1, d_v1 = s1 + s0 v0; the other as seeded.
            let expected = if first {
                [
                    seed[0] * point[1],
                    seed[1] + seed[0] * point[0],
                    seed[2],
                    seed[3],
                ]
            } else {
                [
                    seed[0],
                    seed[1],
                    seed[2] * point[3],
                    seed[3] + seed[2] * point[2],
                ]
            };
            assert_close(&grad, &expected);
        }
    }

    /// A `match` choosing among a local, a collected buffer and a
    /// sub-slice of the input, with a `break`; an `else if` chain in a
    /// `while` loop.
    #[differentiate(vjp, jvp)]
    fn chosen_by_match_and_else_if(x: &[f64]) -> f64 {
        let a = x[..3].to_vec();
        let b: Vec<f64> = x[3..6].iter().map(|v| v * v).collect();
        let mut s = 0.0;
        for k in 0..6 {
            let w = match k % 3 {
                0 => &a[..],
                1 => &b[..],
                _ => &x[4..],
            };
            s += w[0] * w[1];
            if s > 100.0 {
                break;
            }
        }
        let mut k = 0;
        while k < 5 {
            let w = if k == 0 {
                &a
            } else if k % 2 == 1 {
                &x[1..4]
            } else {
                &x[3..]
            };
            s += w.iter().sum::<f64>() * w[1];
            k += 1;
        }
        s
    }

    fn chosen_by_hand(x: &[f64]) -> f64 {
        let pair = |w: &[f64]| w[0] * w[1];
        let b: Vec<f64> = x[3..6].iter().map(|v| v * v).collect();
        let mut s = 2.0 * (pair(&x[..3]) + pair(&b) + pair(&x[4..]));
        for k in 0..5 {
            let w: &[f64] = match k {
                0 => &x[..3],
                1 | 3 => &x[1..4],
                _ => &x[3..],
            };
            s += w.iter().sum::<f64>() * w[1];
        }
        s
    }

    #[test]
    fn chosen_by_a_match_and_an_else_if_chain() {
        let grad = check_slice(
            chosen_by_match_and_else_if,
            chosen_by_match_and_else_if_vjp,
            chosen_by_match_and_else_if_jvp,
            &X,
        );
        assert!((chosen_by_match_and_else_if(&X) - chosen_by_hand(&X)).abs() < 1e-12);
        ad_runtime::check::gradient(chosen_by_hand, |_| grad.clone(), &X).assert_within(1e-7);
    }
}

/// A table of rows declared in the body (`const FEATS: [[f64; 3]; 2]`):
/// a local matrix, iterated by rows, its rows bound and read.
mod constant_tables {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn featured(x: &[f64]) -> f64 {
        const FEATS: [[f64; 3]; 2] = [[1.0, 0.5, -0.2], [1.0, -1.1, 0.3]];
        let mut s = 0.0;
        for row in &FEATS {
            s += row.iter().zip(x).map(|(p, q)| p * q).sum::<f64>().tanh();
        }
        for i in 0..FEATS.len() {
            let row = FEATS[i];
            s += row[2] * x[1] * x[1];
        }
        s
    }

    #[test]
    fn a_table_of_rows_in_the_body() {
        let grad = check_slice(featured, featured_vjp, featured_jvp, &X);
        let feats = [[1.0, 0.5, -0.2], [1.0, -1.1, 0.3]];
        let mut expected = [0.0; 7];
        for row in feats {
            let z: f64 = row.iter().zip(X).map(|(p, q)| p * q).sum();
            let slope = 1.0 - z.tanh().powi(2);
            for (e, p) in expected.iter_mut().zip(row) {
                *e += slope * p;
            }
        }
        expected[1] += 2.0 * X[1] * (-0.2 + 0.3);
        assert_close(&grad, &expected);
    }
}

/// Parameters written `_`: taken by the generated functions too (a float
/// one gets its adjoint, zero).
mod unnamed_parameters {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn squares(x: &[f64], _: usize, _: f64) -> f64 {
        x.iter().map(|v| v * v).sum()
    }

    #[test]
    fn parameters_written_underscore() {
        let mut d = vec![0.0; 7];
        let (out, d_unused) = squares_vjp(&X, &mut d, 3, 1.5, 2.0);
        assert_eq!(out.to_bits(), squares(&X, 3, 1.5).to_bits());
        assert_eq!(d_unused, 0.0);
        assert_close(&d, &X.map(|v| 4.0 * v));
        let u = [1.0; 7];
        let (value, tangent) = squares_jvp(&X, &u, 3, 1.5, 1.0);
        assert_eq!(value.to_bits(), out.to_bits());
        assert!((tangent - X.iter().map(|v| 2.0 * v).sum::<f64>()).abs() < 1e-12);
    }
}

/// Sub-slices, splits, windows and chunks out of bounds panic in `_vjp`,
/// `_jvp` and `_forward` where the function panics, with its message (the
/// generated code reads a sub-slice by start and length, so it checks the
/// bounds as `&x[a..b]` does first).
mod bounds_checked {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    /// The panic message of `f`, if it panics.
    fn panic_of(f: impl FnOnce()) -> Option<String> {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let caught = catch_unwind(AssertUnwindSafe(f));
        std::panic::set_hook(hook);
        let payload = caught.err()?;
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
    }

    #[differentiate(vjp, jvp)]
    fn ranged(x: &[f64], k: usize) -> f64 {
        let s = &x[2..k];
        let t = &s[1..];
        let (a, b) = x.split_at(k / 2 + 4);
        let w: f64 = x.windows(k % 3).map(|w| w[0]).sum();
        let c: f64 = x[..k - 4].chunks(k % 4).map(|c| c[0]).sum();
        s[0] * t.len() as f64 + a[0] * b.len() as f64 + w + c
    }

    /// Empty sub-slices and chains whose constant bounds fold to empty
    /// ranges in the expansion (clippy's deny-by-default
    /// `reversed_empty_ranges` and `eq_op` must not fire on it).
    #[differentiate(vjp, jvp)]
    fn empty_by_constants(x: &[f64]) -> f64 {
        let head = &x[..3];
        let none = &x[..0];
        let skipped: f64 = head.iter().skip(3).sum();
        let steps: f64 = none.windows(2).map(|w| w[1] - w[0]).sum();
        skipped + steps + head[2] * x[0]
    }

    #[test]
    fn empty_ranges_of_constants() {
        let grad = check_slice(
            empty_by_constants,
            empty_by_constants_vjp,
            empty_by_constants_jvp,
            &X,
        );
        let mut expected = [0.0; 7];
        expected[0] = X[2];
        expected[2] = X[0];
        assert_close(&grad, &expected);
    }

    #[test]
    fn out_of_bounds_panics_as_in_the_function() {
        // Of 7 elements, k = 9: the end past x; 1: the start past the
        // end; 3: `&s[1..]` of one element is empty, then windows(0). Of 5,
        // k = 5: the split at 6. Of 20, k = 8: chunks(0).
        let (x, short, long) = (X, [0.5; 5], [0.5; 20]);
        for (x, k) in [
            (&x[..], 9),
            (&x[..], 1),
            (&x[..], 3),
            (&short[..], 5),
            (&long[..], 8),
        ] {
            let expected = panic_of(|| {
                ranged(x, k);
            });
            assert!(expected.is_some(), "k = {k} must panic");
            let mut d = vec![0.0; x.len()];
            assert_eq!(
                panic_of(|| {
                    ranged_vjp(x, &mut d, k, 1.0);
                }),
                expected,
                "k = {k}"
            );
            assert_eq!(
                panic_of(|| {
                    ranged_jvp(x, x, k);
                }),
                expected,
                "k = {k}"
            );
            assert_eq!(
                panic_of(|| {
                    let _ = ranged_forward(x, k);
                }),
                expected,
                "k = {k}"
            );
        }
        // In bounds, the three ways.
        let grad = check_counted(ranged, ranged_vjp, ranged_jvp, 7, &X);
        assert!(grad.iter().all(|g| g.is_finite()));
    }
}

/// Gaussian elimination with partial pivoting: rows of a matrix swapped
/// (`a.swap(k, p)`), of a local array of rows and of a `Vec` of rows.
mod rows_swapped {
    use super::*;

    /// `1ᵀ A⁻¹ b`, the pivot chosen by the largest magnitude in a column.
    #[differentiate(vjp, jvp)]
    fn solved_sum(x: &[f64]) -> f64 {
        let mut a = [
            [x[0], x[1], 0.5],
            [x[2] + 3.0, x[3], 0.25],
            [0.1, x[4], 4.0],
        ];
        let mut b = vec![1.0, x[5], x[6]];
        let n = b.len();
        for k in 0..n {
            let mut p = k;
            for i in k + 1..n {
                if a[i][k].abs() > a[p][k].abs() {
                    p = i;
                }
            }
            a.swap(k, p);
            b.swap(k, p);
            for i in k + 1..n {
                let f = a[i][k] / a[k][k];
                for j in k..n {
                    a[i][j] -= f * a[k][j];
                }
                b[i] -= f * b[k];
            }
        }
        let mut sol = [0.0; 3];
        for i in (0..n).rev() {
            let mut s = b[i];
            for j in i + 1..n {
                s -= a[i][j] * sol[j];
            }
            sol[i] = s / a[i][i];
        }
        sol.iter().sum()
    }

    /// The same on a `Vec` of rows, its pivot rows swapped whole.
    #[differentiate(vjp, jvp)]
    fn solved_sum_of_vec_rows(x: &[f64]) -> f64 {
        let mut m = vec![
            vec![x[0], x[1], 0.5, 1.0],
            vec![x[2] + 3.0, x[3], 0.25, x[5]],
            vec![0.1, x[4], 4.0, x[6]],
        ];
        let n = m.len();
        for k in 0..n {
            let p = (k..n)
                .max_by(|&i, &j| m[i][k].abs().total_cmp(&m[j][k].abs()))
                .unwrap();
            m.swap(k, p);
            for i in k + 1..n {
                let f = m[i][k] / m[k][k];
                for j in k..=n {
                    m[i][j] -= f * m[k][j];
                }
            }
        }
        let mut sol = vec![0.0; n];
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|j| m[i][j] * sol[j]).sum();
            sol[i] = (m[i][n] - s) / m[i][i];
        }
        sol.iter().sum()
    }

    /// `A x = b` by Cramer's rule.
    fn solve3(a: [[f64; 3]; 3], b: [f64; 3]) -> [f64; 3] {
        let det = |m: [[f64; 3]; 3]| {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        };
        let d = det(a);
        std::array::from_fn(|c| {
            let mut m = a;
            for r in 0..3 {
                m[r][c] = b[r];
            }
            det(m) / d
        })
    }

    /// `∂(1ᵀ A⁻¹ b)`: `y = A⁻ᵀ 1` for `b`, `−y sᵀ` for `A`.
    fn closed_form(x: &[f64]) -> Vec<f64> {
        let a = [
            [x[0], x[1], 0.5],
            [x[2] + 3.0, x[3], 0.25],
            [0.1, x[4], 4.0],
        ];
        let s = solve3(a, [1.0, x[5], x[6]]);
        let at = std::array::from_fn(|i| std::array::from_fn(|j| a[j][i]));
        let y = solve3(at, [1.0; 3]);
        vec![
            -y[0] * s[0],
            -y[0] * s[1],
            -y[1] * s[0],
            -y[1] * s[1],
            -y[2] * s[1],
            y[1],
            y[2],
        ]
    }

    #[test]
    fn rows_swapped_by_the_pivot() {
        // |x2 + 3| beats |x0| in the first column: a swap happens.
        assert!((X[2] + 3.0).abs() > X[0].abs());
        for (f, vjp, jvp) in [
            (
                solved_sum as fn(&[f64]) -> f64,
                solved_sum_vjp as fn(&[f64], &mut [f64], f64) -> f64,
                solved_sum_jvp as fn(&[f64], &[f64]) -> (f64, f64),
            ),
            (
                solved_sum_of_vec_rows,
                solved_sum_of_vec_rows_vjp,
                solved_sum_of_vec_rows_jvp,
            ),
        ] {
            let grad = check_slice(f, vjp, jvp, &X);
            assert_close(&grad, &closed_form(&X));
        }
    }
}

/// `Vec<Vec<f64>>` collected from rows a closure makes: a kernel matrix,
/// rows copied from chunks, a distance matrix of points.
mod matrices_collected {
    use super::*;
    use ad_runtime::Float;

    /// A Gaussian kernel matrix, summed against the inputs.
    #[differentiate(vjp, jvp)]
    fn kernel_energy(x: &[f64]) -> f64 {
        let n = x.len();
        let k: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| (-(x[i] - x[j]).powi(2)).exp()).collect())
            .collect();
        let mut s = 0.0;
        for (i, row) in k.iter().enumerate() {
            s += row.iter().sum::<f64>() * x[i];
        }
        s + k.len() as f64
    }

    #[test]
    fn a_kernel_matrix() {
        let grad = check_slice(kernel_energy, kernel_energy_vjp, kernel_energy_jvp, &X);
        // s = Σᵢⱼ xᵢ kᵢⱼ, kᵢⱼ = e^{-(xᵢ-xⱼ)²}: ∂/∂x_a = Σⱼ k_aj + Σⱼ (x_a + xⱼ) ∂k_aj/∂x_a.
        let n = X.len();
        let k = |i: usize, j: usize| (-(X[i] - X[j]).powi(2)).exp();
        let mut expected = vec![0.0; n];
        for a in 0..n {
            for j in 0..n {
                expected[a] += k(a, j);
                let dk = -2.0 * (X[a] - X[j]) * k(a, j);
                expected[a] += (X[a] + X[j]) * dk;
            }
        }
        assert_close(&grad, &expected);
        assert_eq!(kernel_energy(&X).to_bits(), {
            let mut d = vec![0.0; n];
            kernel_energy_vjp(&X, &mut d, 1.0).to_bits()
        });
    }

    /// Rows copied from chunks, generic over the float type.
    #[differentiate(vjp, jvp)]
    fn pair_products<T: Float>(x: &[T]) -> T {
        let rows: Vec<Vec<T>> = x.chunks(2).take(3).map(|c| c.to_vec()).collect();
        rows.iter().map(|r| r[0] * r[1]).fold(T::ZERO, |a, b| a + b)
    }

    fn pair_products_f64(x: &[f64]) -> f64 {
        pair_products(x)
    }

    fn pair_products_f64_vjp(x: &[f64], d_x: &mut [f64], seed: f64) -> f64 {
        pair_products_vjp(x, d_x, seed)
    }

    fn pair_products_f64_jvp(x: &[f64], t_x: &[f64]) -> (f64, f64) {
        pair_products_jvp(x, t_x)
    }

    #[test]
    fn rows_copied_from_chunks() {
        let grad = check_slice(
            pair_products_f64,
            pair_products_f64_vjp,
            pair_products_f64_jvp,
            &X,
        );
        assert_close(&grad, &[X[1], X[0], X[3], X[2], X[5], X[4], 0.0]);
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d32 = vec![0.0f32; 7];
        let out = pair_products_vjp(&x32, &mut d32, 1.0);
        assert_eq!(out, pair_products(&x32));
        assert_eq!(d32, [x32[1], x32[0], x32[3], x32[2], x32[5], x32[4], 0.0]);
    }

    /// A small matrix written out as `Vec` rows, read by rows, by index and
    /// by chains.
    #[differentiate(vjp, jvp)]
    fn mixed_by_rows(x: &[f64]) -> f64 {
        let a = vec![vec![1.0, 2.0, 0.5], vec![-1.0, 0.3, 2.0]];
        let mut s = 0.0;
        for row in &a {
            s += row.iter().zip(x).map(|(p, q)| p * q).sum::<f64>().tanh();
        }
        for i in 0..a.len() {
            for j in 0..a[i].len() {
                s += a[i][j] * x[j + 3] * x[j + 3];
            }
        }
        s
    }

    #[test]
    fn a_matrix_written_out() {
        let grad = check_slice(mixed_by_rows, mixed_by_rows_vjp, mixed_by_rows_jvp, &X);
        let a = [[1.0, 2.0, 0.5], [-1.0, 0.3, 2.0]];
        let mut expected = vec![0.0; 7];
        for row in &a {
            let z: f64 = row.iter().zip(&X).map(|(p, q)| p * q).sum();
            let c = 1.0 - z.tanh().powi(2);
            for j in 0..3 {
                expected[j] += c * row[j];
                expected[j + 3] += 2.0 * row[j] * X[j + 3];
            }
        }
        assert_close(&grad, &expected);
    }

    /// Rows of different lengths, which Rust allows, are a clear panic:
    /// the matrix is stored flat.
    #[differentiate]
    fn prefixes(x: &[f64]) -> f64 {
        let m: Vec<Vec<f64>> = (1..4).map(|i| x[..i].to_vec()).collect();
        m[2][2]
    }

    #[test]
    #[should_panic(expected = "its rows must have one length")]
    fn ragged_rows_panic_with_a_message() {
        let mut d = vec![0.0; 7];
        let _ = prefixes_vjp(&X, &mut d, 1.0);
    }
}

/// Buffers that get shorter (and longer again) in a loop: De Casteljau's
/// algorithm, repeated smoothing, a filter applied each step; and ranges
/// written with `copy_from_slice` and `fill`.
mod buffers_shrunk_in_loops {
    use super::*;

    /// A Bézier curve at `t = 0.3`, by De Casteljau's algorithm.
    #[differentiate(vjp, jvp)]
    fn bezier(x: &[f64]) -> f64 {
        let t = 0.3;
        let mut pts = x.to_vec();
        while pts.len() > 1 {
            pts = pts
                .windows(2)
                .map(|w| (1.0 - t) * w[0] + t * w[1])
                .collect();
        }
        pts[0]
    }

    #[test]
    fn de_casteljau() {
        let grad = check_slice(bezier, bezier_vjp, bezier_jvp, &X);
        // The gradient is the Bernstein basis: C(n, k) tᵏ (1 - t)ⁿ⁻ᵏ.
        let (n, t) = (X.len() - 1, 0.3f64);
        let mut binomial = 1.0;
        let expected: Vec<f64> = (0..=n)
            .map(|k| {
                let (k32, rest) = (i32::try_from(k).unwrap(), i32::try_from(n - k).unwrap());
                let b = binomial * t.powi(k32) * (1.0 - t).powi(rest);
                binomial = binomial * (n - k) as f64 / (k + 1) as f64;
                b
            })
            .collect();
        assert_close(&grad, &expected);
    }

    /// The same, its buffer shadowing the parameter it copies.
    #[differentiate(vjp, jvp)]
    fn bezier_shadowing(pts: &[f64]) -> f64 {
        let n = pts.len();
        let mut pts = pts.to_vec();
        while pts.len() > 1 {
            pts = pts.windows(2).map(|w| 0.7 * w[0] + 0.3 * w[1]).collect();
        }
        pts[0] + n as f64
    }

    #[test]
    fn de_casteljau_shadowing_its_parameter() {
        let grad = check_slice(
            bezier_shadowing,
            bezier_shadowing_vjp,
            bezier_shadowing_jvp,
            &X,
        );
        let grad_plain = check_slice(bezier, bezier_vjp, bezier_jvp, &X);
        assert_close(&grad, &grad_plain);
        assert_eq!(bezier_shadowing(&X), bezier(&X) + 7.0);
    }

    /// Smoothed twice, then a filter that keeps fewer elements each step.
    #[differentiate(vjp, jvp)]
    fn thinned(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * a).collect();
        for _ in 0..2 {
            v = v.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect();
        }
        let mut s = 0.0;
        for k in 0..3 {
            v = v
                .iter()
                .copied()
                .filter(|&a| a > 0.2 * k as f64)
                .map(|a| a * 0.9)
                .collect();
            s += v.iter().map(|a| a.sin()).sum::<f64>();
        }
        s
    }

    fn thinned_by_hand(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * a).collect();
        for _ in 0..2 {
            v = (0..v.len() - 1).map(|i| 0.5 * (v[i] + v[i + 1])).collect();
        }
        let mut s = 0.0;
        for k in 0..3 {
            v = v
                .iter()
                .filter(|&&a| a > 0.2 * k as f64)
                .map(|a| a * 0.9)
                .collect();
            s += v.iter().map(|a| a.sin()).sum::<f64>();
        }
        s
    }

    #[test]
    fn smoothed_and_filtered() {
        let grad = check_slice(thinned, thinned_vjp, thinned_jvp, &X);
        assert_eq!(thinned(&X).to_bits(), thinned_by_hand(&X).to_bits());
        ad_runtime::check::gradient(thinned_by_hand, |_| grad.clone(), &X).assert_within(1e-7);
    }

    /// Shorter, then longer again: as long as at first at most.
    #[differentiate]
    fn regrown(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let mut s = 0.0;
        for k in 0..4 {
            if k % 2 == 0 {
                v = v.windows(2).map(|w| w[0] * w[1]).collect();
            } else {
                v = x[..=v.len()].to_vec();
            }
            s += v.iter().sum::<f64>();
        }
        s
    }

    #[test]
    fn shorter_and_longer_again() {
        let grad = check_scalar(
            regrown,
            |p, s| {
                let mut d = vec![0.0; p.len()];
                let out = regrown_vjp(p, &mut d, s);
                (out, d)
            },
            &X,
        );
        // s = 2 Σ xᵢ xᵢ₊₁ + 2 Σ xᵢ.
        let expected: Vec<f64> = (0..7)
            .map(|i| {
                let left = if i > 0 { X[i - 1] } else { 0.0 };
                let right = if i < 6 { X[i + 1] } else { 0.0 };
                2.0 * (left + right) + 2.0
            })
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate]
    fn grown(x: &[f64]) -> f64 {
        let mut v = x[..2].to_vec();
        for _ in 0..2 {
            v = x[..=v.len()].to_vec();
        }
        v.iter().sum()
    }

    #[test]
    #[should_panic(expected = "not longer than at first")]
    fn longer_than_at_first_panics_with_a_message() {
        let mut d = vec![0.0; 7];
        let _ = grown_vjp(&X, &mut d, 1.0);
    }

    /// The same with a named buffer moved in, `pts = next;`.
    #[differentiate(vjp, jvp)]
    fn bezier_double_buffered(x: &[f64]) -> f64 {
        let t = 0.3;
        let mut pts = x.to_vec();
        while pts.len() > 1 {
            let next: Vec<f64> = pts
                .windows(2)
                .map(|w| (1.0 - t) * w[0] + t * w[1])
                .collect();
            pts = next;
        }
        pts[0]
    }

    #[test]
    fn de_casteljau_double_buffered() {
        let grad = check_slice(
            bezier_double_buffered,
            bezier_double_buffered_vjp,
            bezier_double_buffered_jvp,
            &X,
        );
        let mut d = vec![0.0; 7];
        bezier_vjp(&X, &mut d, 1.0);
        assert_close(&grad, &d);
    }

    /// Matrices double-buffered in a loop stay matrices (the assignment
    /// copies their rows), `Vec` rows and array rows alike.
    #[differentiate(vjp, jvp)]
    fn matrices_double_buffered(x: &[f64]) -> f64 {
        let n = 3;
        let mut m = vec![vec![0.0; n]; n];
        let mut pts = vec![[0.0; 2]; 3];
        for i in 0..n {
            for j in 0..n {
                m[i][j] = x[(i + j) % x.len()];
            }
            pts[i] = [x[i], x[i + 1]];
        }
        for _ in 0..2 {
            let mut next = vec![vec![0.0; n]; n];
            let mut moved = vec![[0.0; 2]; 3];
            for i in 0..n {
                for j in 0..n {
                    next[i][j] = 0.5 * m[i][j] + 0.25 * m[j][i];
                }
                moved[i] = [pts[i][1], pts[i][0] * 0.5];
            }
            m = next;
            pts = moved;
        }
        m[1][2] * m[2][1] + pts[0][0] * pts[2][1]
    }

    #[test]
    fn matrices_stay_matrices() {
        let grad = check_slice(
            matrices_double_buffered,
            matrices_double_buffered_vjp,
            matrices_double_buffered_jvp,
            &X,
        );
        // Twice m ← m/2 + mᵀ/4 is 0.3125 m + 0.25 mᵀ, and m[1][2] = m[2][1]
        // = x₃; twice (a, b) ← (b, a/2) halves both: f = 0.31640625 x₃² +
        // 0.25 x₀ x₃.
        let mut expected = vec![0.0; 7];
        expected[0] = 0.25 * X[3];
        expected[3] = 2.0 * 0.316_406_25 * X[3] + 0.25 * X[0];
        assert_close(&grad, &expected);
    }

    /// A pyramid of pairwise means, halving each level (`chunks(2)`).
    #[differentiate(vjp, jvp)]
    fn pyramid(x: &[f64]) -> f64 {
        let mut level: Vec<f64> = x.iter().map(|v| v.tanh()).collect();
        let mut total = 0.0;
        while level.len() >= 2 {
            level = level
                .chunks(2)
                .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                .collect();
            total += level.iter().map(|v| v * v).sum::<f64>();
        }
        total + level[0]
    }

    fn pyramid_by_hand(x: &[f64]) -> f64 {
        let mut level: Vec<f64> = x.iter().map(|v| v.tanh()).collect();
        let mut total = 0.0;
        while level.len() >= 2 {
            let mut next = Vec::new();
            for c in level.chunks(2) {
                next.push(c.iter().sum::<f64>() / c.len() as f64);
            }
            level = next;
            total += level.iter().map(|v| v * v).sum::<f64>();
        }
        total + level[0]
    }

    #[test]
    fn halving_levels() {
        let grad = check_slice(pyramid, pyramid_vjp, pyramid_jvp, &X);
        assert_eq!(pyramid(&X).to_bits(), pyramid_by_hand(&X).to_bits());
        ad_runtime::check::gradient(pyramid_by_hand, |_| grad.clone(), &X).assert_within(1e-7);
    }

    /// `retain` before a loop that shrinks further, generic; a filter or
    /// a `truncate` chosen by a branch.
    #[differentiate(vjp, jvp)]
    fn kept_then_halved<T: ad_runtime::Float>(x: &[T]) -> T {
        let half = T::from_f64(0.5);
        let mut v = x.to_vec();
        v.retain(|&a| a > T::ZERO);
        while v.len() > 1 {
            v = v.windows(2).map(|w| half * (w[0] + w[1])).collect();
        }
        v[0]
    }

    fn kept_then_halved_f64(x: &[f64]) -> f64 {
        kept_then_halved(x)
    }

    fn kept_then_halved_f64_vjp(x: &[f64], d_x: &mut [f64], seed: f64) -> f64 {
        kept_then_halved_vjp(x, d_x, seed)
    }

    fn kept_then_halved_f64_jvp(x: &[f64], t_x: &[f64]) -> (f64, f64) {
        kept_then_halved_jvp(x, t_x)
    }

    #[differentiate(vjp, jvp)]
    fn branch_shrunk(x: &[f64]) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a * 2.0).collect();
        if x[0] > 0.0 {
            v = v.iter().copied().filter(|&a| a > 0.0).collect();
        } else {
            v.truncate(3);
        }
        v.iter().map(|a| a.sin()).sum()
    }

    #[test]
    fn retained_halved_and_chosen_by_a_branch() {
        let grad = check_slice(
            kept_then_halved_f64,
            kept_then_halved_f64_vjp,
            kept_then_halved_f64_jvp,
            &X,
        );
        // The positive inputs (five of them) averaged by the binomial
        // weights C(4, k) / 16.
        let weights = [1.0, 4.0, 6.0, 4.0, 1.0].map(|w| w / 16.0);
        let mut expected = vec![0.0; 7];
        let mut k = 0;
        for (i, &v) in X.iter().enumerate() {
            if v > 0.0 {
                expected[i] = weights[k];
                k += 1;
            }
        }
        assert_close(&grad, &expected);
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d32 = vec![0.0f32; 7];
        assert_eq!(
            kept_then_halved_vjp(&x32, &mut d32, 1.0),
            kept_then_halved(&x32)
        );
        let grad = check_slice(branch_shrunk, branch_shrunk_vjp, branch_shrunk_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .map(|&a| if a > 0.0 { 2.0 * (2.0 * a).cos() } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
        let mut y = X;
        y[0] = -0.3;
        let grad = check_slice(branch_shrunk, branch_shrunk_vjp, branch_shrunk_jvp, &y);
        let expected: Vec<f64> = (0..7)
            .map(|i| if i < 3 { 2.0 * (2.0 * y[i]).cos() } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }

    /// Ranges written: `copy_from_slice` and `fill` of sub-slices.
    #[differentiate(vjp, jvp)]
    fn ranges_written(x: &[f64]) -> f64 {
        let mut v = vec![0.0; 7];
        v[1..4].copy_from_slice(&x[3..6]);
        v[4..].fill(x[0] * 2.0);
        v.iter().enumerate().map(|(i, a)| a * a * i as f64).sum()
    }

    /// Ranges reversed and swapped in place.
    #[differentiate(vjp, jvp)]
    fn ranges_permuted(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v[1..5].reverse();
        v[2..].swap(0, 3);
        v.iter()
            .enumerate()
            .map(|(i, a)| a * (i as f64 + 1.0))
            .sum()
    }

    #[test]
    fn reverse_and_swap_of_ranges() {
        let grad = check_slice(
            ranges_permuted,
            ranges_permuted_vjp,
            ranges_permuted_jvp,
            &X,
        );
        // Position of each input after the two moves, plus one.
        let mut at: Vec<usize> = (0..7).collect();
        at[1..5].reverse();
        at[2..].swap(0, 3);
        let mut expected = vec![0.0; 7];
        for (position, &from) in at.iter().enumerate() {
            expected[from] = position as f64 + 1.0;
        }
        assert_close(&grad, &expected);
    }

    /// A buffer of one length assigned in a loop and used through all the
    /// methods a range has: read, written, swapped, reversed, lent.
    #[differentiate(vjp, jvp)]
    fn scale_tail(v: &mut [f64], k: f64) {
        for a in v.iter_mut() {
            *a *= k;
        }
    }

    #[differentiate(vjp, jvp)]
    fn reworked(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        let mut s = 0.0;
        for k in 0..3 {
            v = v.iter().map(|a| (a * 0.9).sin()).collect();
            for a in v.iter_mut() {
                *a *= 1.1;
            }
            v[0] = v[1] * 2.0;
            v[2] += v[3];
            v.swap(0, 4);
            v.reverse();
            scale_tail(&mut v[1..], 0.5 + k as f64);
            s += v.iter().sum::<f64>() + v.len() as f64;
        }
        v.fill(s);
        v.iter().sum::<f64>() * 0.01 + s
    }

    #[test]
    fn a_buffer_reworked_in_a_loop() {
        let grad = check_slice(reworked, reworked_vjp, reworked_jvp, &X);
        // The same steps on a new `Vec` each time.
        let by_hand = |x: &[f64]| {
            let mut v = x.to_vec();
            let mut s = 0.0;
            for k in 0..3 {
                let mut w: Vec<f64> = v.iter().map(|a| (a * 0.9).sin() * 1.1).collect();
                w[0] = w[1] * 2.0;
                w[2] += w[3];
                w.swap(0, 4);
                w.reverse();
                w[1..].iter_mut().for_each(|a| *a *= 0.5 + k as f64);
                s += w.iter().sum::<f64>() + w.len() as f64;
                v = w;
            }
            v.iter().map(|_| s).sum::<f64>() * 0.01 + s
        };
        assert_eq!(by_hand(&X).to_bits(), reworked(&X).to_bits());
        ad_runtime::check::gradient(by_hand, |_| grad.clone(), &X).assert_within(1e-7);
    }

    #[test]
    fn copy_from_slice_and_fill_of_ranges() {
        let grad = check_slice(ranges_written, ranges_written_vjp, ranges_written_jvp, &X);
        let mut expected = vec![0.0; 7];
        for (i, k) in (1..4).zip(3..6) {
            expected[k] = 2.0 * X[k] * i as f64;
        }
        expected[0] = (4..7).map(|i| 2.0 * 2.0 * X[0] * 2.0 * i as f64).sum();
        assert_close(&grad, &expected);
    }
}

/// Integers whose type only the `let` says (`let mut state: u64 = 12345;`)
/// keep it in the generated code: their methods (`wrapping_mul`, `abs`,
/// `rem_euclid`) need it.
mod integers_typed_by_their_let {
    use super::*;

    /// A Monte Carlo mean with its own linear congruential generator.
    #[differentiate(vjp, jvp)]
    fn hinge_mean(x: &[f64]) -> f64 {
        let mut state: u64 = 12345;
        let mut acc = 0.0;
        for _ in 0..100 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            acc += (x[0] + x[1] * u).max(0.0);
        }
        acc / 100.0
    }

    #[test]
    fn a_generator_of_u64() {
        let grad = check_slice(hinge_mean, hinge_mean_vjp, hinge_mean_jvp, &X);
        let mut state: u64 = 12345;
        let mut expected = vec![0.0; 7];
        for _ in 0..100 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            if X[0] + X[1] * u > 0.0 {
                expected[0] += 0.01;
                expected[1] += 0.01 * u;
            }
        }
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn weighted_by_integers(x: &[f64]) -> f64 {
        let mut k: u32 = 0;
        let a: i64 = -3;
        let mut s = 0.0;
        for v in x {
            k += 1;
            s += v * f64::from(k.pow(2)) + a.abs() as f64 * v;
        }
        let m: i32 = -7;
        s + f64::from(m.rem_euclid(3)) + f64::from(1_u8 << 3)
    }

    #[test]
    fn negative_and_unsigned_literals() {
        let grad = check_slice(
            weighted_by_integers,
            weighted_by_integers_vjp,
            weighted_by_integers_jvp,
            &X,
        );
        let expected: Vec<f64> = (1..=7).map(|k| f64::from(k * k) + 3.0).collect();
        assert_close(&grad, &expected);
    }
}

/// Other spellings of buffers made and emptied: `Vec::from`, an array's
/// `to_vec()`, `concat()` of slices, `while let Some(v) = stack.pop()`,
/// `unzip`, `partition`, views collected into a `Vec`, several buffers
/// filled by one loop, and a `for_each` closure ending in an `if` without
/// `else`.
mod buffers_converted_and_popped {
    use super::*;

    #[differentiate(vjp, jvp)]
    fn converted(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..4 {
            let pair = Vec::from([x[i], 2.0 * x[i + 1]]);
            let joined = [&x[i..i + 2], &x[..1]].concat();
            let tail = Vec::from(&x[i..]);
            let lit = [x[6], 1.0].to_vec();
            s += pair[0] * joined[2] + tail.iter().sum::<f64>() + lit[0] * lit[1];
        }
        s
    }

    #[test]
    fn conversions_are_the_buffers_they_make() {
        let grad = check_slice(converted, converted_vjp, converted_jvp, &X);
        // d/dx of Σ_i x[i]·x[0] + Σ_{j ≥ i} x[j] + x[6], i = 0..4.
        let mut expected = vec![0.0; 7];
        for i in 0..4 {
            expected[i] += X[0];
            expected[0] += X[i];
            for e in &mut expected[i..] {
                *e += 1.0;
            }
            expected[6] += 1.0;
        }
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn popped(x: &[f64]) -> f64 {
        let mut stack: Vec<f64> = Vec::new();
        for &v in x {
            stack.push(2.0 * v);
        }
        let mut s = 0.0;
        while let Some(top) = stack.pop() {
            s = 0.5 * s + top;
        }
        s + stack.len() as f64
    }

    /// Emptied in the first trip of a loop: the second finds it empty.
    #[differentiate(vjp, jvp)]
    fn popped_in_a_loop(x: &[f64]) -> f64 {
        let mut stack = x.to_vec();
        let mut s = 0.0;
        for k in 1..3 {
            while let Some(v) = stack.pop() {
                s = 0.5 * s + f64::from(k) * v;
            }
        }
        s
    }

    #[test]
    fn a_stack_emptied_in_a_loop_stays_empty() {
        let grad = check_slice(
            popped_in_a_loop,
            popped_in_a_loop_vjp,
            popped_in_a_loop_jvp,
            &X,
        );
        let expected: Vec<f64> = (0..7).map(|j| 0.5f64.powi(j)).collect();
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_stack_emptied_by_pop_is_read_backwards() {
        let grad = check_slice(popped, popped_vjp, popped_jvp, &X);
        // The last pushed is read first: x[j] is halved j times.
        let expected: Vec<f64> = (0..7).map(|j| 2.0 * 0.5f64.powi(j)).collect();
        assert_close(&grad, &expected);
        assert_eq!(popped(&[]), 0.0);
    }

    /// Two buffers filled by one loop, in an outer loop, and the same
    /// spelled with `unzip`.
    #[differentiate(vjp, jvp)]
    fn split_by_sign(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 1..3 {
            let mut pos = Vec::new();
            let mut neg = Vec::with_capacity(x.len());
            for &v in x {
                if v > 0.0 {
                    pos.push(f64::from(k) * v);
                } else {
                    neg.push(v * v);
                }
            }
            s += pos.iter().sum::<f64>() + neg.iter().sum::<f64>() + pos.len() as f64;
        }
        s
    }

    #[test]
    fn two_buffers_filled_by_one_loop() {
        let grad = check_slice(split_by_sign, split_by_sign_vjp, split_by_sign_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| if v > 0.0 { 3.0 } else { 4.0 * v })
            .collect();
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn unzipped(x: &[f64]) -> f64 {
        let (c, d): (Vec<f64>, Vec<f64>) = x.iter().map(|&v| (v.cos(), 2.0 * v)).unzip();
        let mut s = c.iter().zip(&d).map(|(p, q)| p * q).sum::<f64>();
        for k in 0..2 {
            let (a, b): (Vec<_>, Vec<_>) = x.iter().map(|&v| (f64::from(k) * v, v)).unzip();
            s += a.iter().zip(&b).map(|(p, q)| p * q).sum::<f64>();
        }
        s
    }

    #[differentiate(vjp, jvp)]
    fn partitioned(x: &[f64]) -> f64 {
        let (pos, neg): (Vec<f64>, Vec<f64>) = x.iter().partition(|&&v| v > 0.0);
        let mut s = pos.iter().sum::<f64>() * neg.iter().map(|v| v * v).sum::<f64>();
        for k in 1..3 {
            let (big, small): (Vec<_>, Vec<_>) = x
                .iter()
                .map(|v| v * f64::from(k))
                .partition(|&v| v.abs() > 1.0);
            s += big.iter().sum::<f64>() - small.iter().sum::<f64>();
        }
        s
    }

    #[test]
    fn partition_is_two_filters() {
        let grad = check_slice(partitioned, partitioned_vjp, partitioned_jvp, &X);
        let pos: f64 = X.iter().filter(|&&v| v > 0.0).sum();
        let squares: f64 = X.iter().filter(|&&v| v <= 0.0).map(|v| v * v).sum();
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| {
                let split = if v > 0.0 { squares } else { 2.0 * v * pos };
                let scaled: f64 = (1..3)
                    .map(|k| {
                        let k = f64::from(k);
                        if (v * k).abs() > 1.0 { k } else { -k }
                    })
                    .sum();
                split + scaled
            })
            .collect();
        assert_close(&grad, &expected);
    }

    #[test]
    fn unzip_is_two_buffers_filled() {
        let grad = check_slice(unzipped, unzipped_vjp, unzipped_jvp, &X);
        // d/dv of 2v·cos v + v² (k = 0 gives nothing, k = 1 gives v²).
        let expected: Vec<f64> = X
            .iter()
            .map(|&v| 2.0 * v.cos() - 2.0 * v * v.sin() + 2.0 * v)
            .collect();
        assert_close(&grad, &expected);
    }

    /// A buffer replaced in a loop by a copy of a copy of itself (by
    /// `clone_from`, which clippy asks for): the first copy is a range of a
    /// buffer made before the loop, whose length is found in the loop; the
    /// second was rejected as having no length known before the loop.
    #[differentiate(vjp, jvp)]
    fn copied_twice(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        for k in 0..3 {
            let mut w = v.to_vec();
            w[k] *= 2.0;
            v.clone_from(&w);
        }
        v.iter().map(|a| a * a).sum()
    }

    /// A copy, in a loop, of the items a filter kept there: a view whose
    /// length is found in the loop, bounded by the buffer it is cut from.
    #[differentiate(vjp, jvp)]
    fn filtered_then_copied(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 1..3 {
            let kept: Vec<f64> = x.iter().copied().filter(|&v| v > 0.0).collect();
            let copy = kept.clone();
            s += copy.iter().sum::<f64>() * f64::from(k);
        }
        s
    }

    #[test]
    fn a_copy_of_what_a_filter_kept_in_a_loop() {
        let grad = check_slice(
            filtered_then_copied,
            filtered_then_copied_vjp,
            filtered_then_copied_jvp,
            &X,
        );
        let expected: Vec<f64> = X.iter().map(|&v| if v > 0.0 { 3.0 } else { 0.0 }).collect();
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_copy_of_a_copy_in_a_loop() {
        let grad = check_slice(copied_twice, copied_twice_vjp, copied_twice_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, &v)| if i < 3 { 8.0 * v } else { 2.0 * v })
            .collect();
        assert_close(&grad, &expected);
    }

    /// Views collected into a `Vec` to be indexed: `chunks`,
    /// `chunks_exact`, `windows`, with `len()`, `iter()`, `for … in &rows`
    /// and an index naming the `Vec` again.
    #[differentiate(vjp, jvp)]
    fn views_collected(x: &[f64]) -> f64 {
        let rows: Vec<&[f64]> = x.chunks_exact(2).collect();
        let pairs = x.chunks(3).collect::<Vec<_>>();
        let wins: Vec<&[f64]> = x.windows(3).collect();
        let mut s = 0.0;
        for r in &rows {
            s += r[0] * r[1];
        }
        for (i, w) in wins.iter().enumerate() {
            s += w[1] * i as f64;
        }
        s + rows[rows.len() - 1][0] + pairs[pairs.len() - 1][0] * pairs.len() as f64
    }

    #[test]
    fn views_collected_are_views() {
        let grad = check_slice(
            views_collected,
            views_collected_vjp,
            views_collected_jvp,
            &X,
        );
        // Rows (0, 1), (2, 3), (4, 5); windows centred at 1..=5 weighted
        // 0..=4; the last row's first element x[4]; the last chunk of
        // three is [x[6]], three chunks.
        let mut expected = vec![0.0; 7];
        for r in 0..3 {
            expected[2 * r] += X[2 * r + 1];
            expected[2 * r + 1] += X[2 * r];
        }
        for (i, e) in expected[1..6].iter_mut().enumerate() {
            *e += i as f64;
        }
        expected[4] += 1.0;
        expected[6] += 3.0;
        assert_close(&grad, &expected);
    }

    #[differentiate(vjp, jvp)]
    fn every_other(x: &[f64]) -> f64 {
        let mut s = 0.0;
        x.iter().enumerate().for_each(|(i, &v)| {
            if i % 2 == 0 {
                s += v * v;
            }
        });
        s
    }

    #[test]
    fn a_closure_ending_in_an_if_without_else() {
        let grad = check_slice(every_other, every_other_vjp, every_other_jvp, &X);
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, &v)| if i % 2 == 0 { 2.0 * v } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }
}

/// Spellings met in stop 46's probes: rotations, `Vec::from_iter`, a
/// `match` on `split_first`/`split_last` (and their options mapped), a
/// table named by one letter.
mod rotations_and_other_spellings {
    use super::*;

    /// `Σ i·y[i]` of `x` rotated left by two: `x[j]` lands at `(j − 2) mod n`.
    #[differentiate(vjp, jvp)]
    fn rotated_left(x: &[f64]) -> f64 {
        let mut y = x.to_vec();
        y.rotate_left(2);
        y.iter().enumerate().map(|(i, v)| v * i as f64).sum()
    }

    /// The same rotated right by three, then the tail after the first
    /// element rotated left by one, in a loop of two turns.
    #[differentiate(vjp, jvp)]
    fn rotated_in_a_loop(x: &[f64]) -> f64 {
        let mut y = x.to_vec();
        for _ in 0..2 {
            y.rotate_right(3);
            y[1..].rotate_left(1);
        }
        y.iter().enumerate().map(|(i, v)| v * v * i as f64).sum()
    }

    /// Where each element of `x` ends up after `rotated_in_a_loop`'s moves.
    fn positions_after_the_loop(n: usize) -> Vec<usize> {
        let mut y: Vec<usize> = (0..n).collect();
        for _ in 0..2 {
            y.rotate_right(3);
            y[1..].rotate_left(1);
        }
        let mut at = vec![0; n];
        for (i, &j) in y.iter().enumerate() {
            at[j] = i;
        }
        at
    }

    #[test]
    fn rotations_move_the_adjoints_back() {
        let grad = check_slice(rotated_left, rotated_left_vjp, rotated_left_jvp, &X);
        let n = X.len();
        let expected: Vec<f64> = (0..n).map(|j| ((j + n - 2) % n) as f64).collect();
        assert_close(&grad, &expected);
        let grad = check_slice(
            rotated_in_a_loop,
            rotated_in_a_loop_vjp,
            rotated_in_a_loop_jvp,
            &X,
        );
        let at = positions_after_the_loop(n);
        let expected: Vec<f64> = (0..n).map(|j| 2.0 * X[j] * at[j] as f64).collect();
        assert_close(&grad, &expected);
    }

    #[differentiate]
    fn rotated_too_far(x: &[f64]) -> f64 {
        let mut y = x.to_vec();
        y.rotate_left(x.len() + 1);
        y[0]
    }

    #[test]
    #[should_panic(expected = "mid <= self.len()")]
    fn a_rotation_past_the_length_panics_as_in_the_function() {
        let mut d = [0.0; 7];
        rotated_too_far_vjp(&X, &mut d, 1.0);
    }

    /// `Vec::from_iter` of a chain and of a buffer's items.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::from_iter_instead_of_collect)]
    fn from_iter(x: &[f64]) -> f64 {
        let doubled = Vec::from_iter(x.iter().map(|v| v * 2.0));
        let copy: Vec<f64> = Vec::from_iter(x.iter().copied());
        doubled.iter().zip(&copy).map(|(a, b)| a * b.cos()).sum()
    }

    #[test]
    fn vec_from_iter_is_a_collect() {
        let grad = check_slice(from_iter, from_iter_vjp, from_iter_jvp, &X);
        let expected: Vec<f64> = X.iter().map(|&v| 2.0 * (v.cos() - v * v.sin())).collect();
        assert_close(&grad, &expected);
    }

    /// `match` on `split_last` (the arms in order, `_` last) and on
    /// `split_first` (`None` first).
    #[differentiate(vjp, jvp)]
    fn split_matched(x: &[f64]) -> f64 {
        let a = match x.split_last() {
            Some((last, rest)) => last.exp() + rest.iter().sum::<f64>(),
            _ => 0.0,
        };
        let b = match x.split_first() {
            None => 2.0,
            Some((&first, rest)) => first * rest.len() as f64,
        };
        a * b
    }

    #[test]
    fn a_match_on_split_first_or_split_last() {
        let grad = check_slice(split_matched, split_matched_vjp, split_matched_jvp, &X);
        let n = X.len();
        let a = X[n - 1].exp() + X[..n - 1].iter().sum::<f64>();
        let b = X[0] * (n - 1) as f64;
        let mut expected = vec![b; n];
        expected[n - 1] = b * X[n - 1].exp();
        expected[0] += a * (n - 1) as f64;
        assert_close(&grad, &expected);
        let mut d = [];
        assert_eq!(split_matched_vjp(&[], &mut d, 1.0), 0.0);
    }

    /// A guarded arm, `None` between the arms, `_` last.
    #[differentiate(vjp, jvp)]
    fn split_guarded(x: &[f64]) -> f64 {
        match x.split_first() {
            Some((&h, t)) if h > 0.0 => h * t.iter().sum::<f64>(),
            None => 1.0,
            Some((h, t)) if t.len() > 2 => h * h + t[2],
            _ => 2.0,
        }
    }

    fn split_guarded_by_hand(x: &[f64]) -> f64 {
        if x.is_empty() {
            1.0
        } else if x[0] > 0.0 {
            x[0] * x[1..].iter().sum::<f64>()
        } else if x.len() > 3 {
            x[0] * x[0] + x[3]
        } else {
            2.0
        }
    }

    #[test]
    fn a_guarded_match_on_split_first() {
        let mut negative = X;
        negative[0] = -0.5;
        for x in [&X[..], &negative[..], &[-1.0, 2.0], &[]] {
            let grad = check_slice(split_guarded, split_guarded_vjp, split_guarded_jvp, x);
            assert_eq!(
                split_guarded(x).to_bits(),
                split_guarded_by_hand(x).to_bits()
            );
            ad_runtime::check::gradient(split_guarded_by_hand, |_| grad.clone(), x)
                .assert_within(1e-7);
        }
    }

    /// `split_first().map(…).unwrap_or(d)` and `split_last().map_or(d,
    /// …)`: the `if let` each stands for.
    #[differentiate(vjp, jvp)]
    #[allow(clippy::map_unwrap_or)] // The spelling users write.
    fn split_mapped(x: &[f64]) -> f64 {
        let head = x
            .split_first()
            .map(|(h, t)| h * t.iter().sum::<f64>())
            .unwrap_or(0.0);
        let fallback = 3.0;
        head + x
            .split_last()
            .map_or(fallback, |(&last, _): (&f64, &[f64])| last.sin())
    }

    #[test]
    fn a_split_mapped_then_unwrapped() {
        let grad = check_slice(split_mapped, split_mapped_vjp, split_mapped_jvp, &X);
        let n = X.len();
        let mut expected = vec![X[0]; n];
        expected[0] = X[1..].iter().sum::<f64>();
        expected[n - 1] += X[n - 1].cos();
        assert_close(&grad, &expected);
        let mut d = [];
        assert_eq!(split_mapped_vjp(&[], &mut d, 1.0), 3.0);
    }

    /// Counts made floats as `clippy::pedantic` asks: `try_from` then
    /// `unwrap` or `expect` with a message, then `f64::from`.
    #[differentiate(vjp, jvp)]
    fn weighted_mean(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (i, v) in x.iter().enumerate() {
            s += f64::from(u32::try_from(i).expect("a short slice")) * v;
        }
        s / f64::from(u32::try_from(x.len()).unwrap())
    }

    #[test]
    fn counts_converted_with_try_from() {
        let grad = check_slice(weighted_mean, weighted_mean_vjp, weighted_mean_jvp, &X);
        let n = X.len() as f64;
        let expected: Vec<f64> = (0..X.len()).map(|i| i as f64 / n).collect();
        assert_close(&grad, &expected);
    }

    /// Arrays written where they are iterated: a norm of three
    /// differences, a loop over two values, `into_iter` and a repeat.
    #[differentiate(vjp, jvp)]
    fn arrays_in_place(x: &[f64]) -> f64 {
        let norm = [x[0] - x[1], x[1] - x[2], x[2] - x[3]]
            .iter()
            .map(|d| d * d)
            .sum::<f64>()
            .sqrt();
        let mut s = 0.0;
        for v in [x[4], 2.0 * x[5]] {
            s += v * v;
        }
        for (i, v) in [x[6]; 3].iter().enumerate() {
            s += v * f64::from(u32::try_from(i).unwrap());
        }
        norm + s + [x[0], x[6]].into_iter().product::<f64>()
    }

    #[test]
    fn arrays_iterated_where_they_are_written() {
        let grad = check_slice(
            arrays_in_place,
            arrays_in_place_vjp,
            arrays_in_place_jvp,
            &X,
        );
        let d = [X[0] - X[1], X[1] - X[2], X[2] - X[3]];
        let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut expected = vec![0.0; X.len()];
        for (k, dk) in d.iter().enumerate() {
            expected[k] += dk / norm;
            expected[k + 1] -= dk / norm;
        }
        expected[4] += 2.0 * X[4];
        expected[5] += 8.0 * X[5];
        expected[6] += 3.0 + X[0];
        expected[0] += X[6];
        assert_close(&grad, &expected);
    }

    /// A table outside the function named by one letter.
    const W: [f64; 3] = [0.25, 0.5, 0.25];

    #[differentiate(vjp, jvp)]
    fn smoothed(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 1..x.len() - 1 {
            let mut c = 0.0;
            for k in 0..3 {
                c += W[k] * x[i + k - 1];
            }
            s += c * c;
        }
        s
    }

    #[test]
    fn a_table_named_by_one_letter() {
        let grad = check_slice(smoothed, smoothed_vjp, smoothed_jvp, &X);
        let mut expected = vec![0.0; X.len()];
        for i in 1..X.len() - 1 {
            let c: f64 = (0..3).map(|k| W[k] * X[i + k - 1]).sum();
            for k in 0..3 {
                expected[i + k - 1] += 2.0 * c * W[k];
            }
        }
        assert_close(&grad, &expected);
    }
}

/// A struct of settings taken by value, its fields read as constants.
mod settings_by_value {
    use super::*;

    #[derive(Clone, Copy, Debug)]
    struct Settings {
        scale: f64,
        terms: usize,
        flip: bool,
    }

    const SETTINGS: Settings = Settings {
        scale: 1.5,
        terms: 5,
        flip: true,
    };

    /// `±scale · Σ_{i < terms} xᵢ²`.
    #[differentiate(vjp, jvp)]
    fn weighted(x: &[f64], cfg: Settings) -> f64 {
        let mut s = 0.0;
        for i in 0..cfg.terms.min(x.len()) {
            s += cfg.scale * x[i] * x[i];
        }
        if cfg.flip { -s } else { s }
    }

    /// Settings generic over the float type.
    #[derive(Clone, Copy)]
    struct Scaled<T> {
        scale: T,
        terms: usize,
    }

    #[differentiate(vjp, jvp)]
    fn scaled_squares<T: ad_runtime::Float>(x: &[T], cfg: Scaled<T>) -> T {
        let mut s = T::ZERO;
        for i in 0..cfg.terms.min(x.len()) {
            s += cfg.scale * x[i] * x[i];
        }
        s
    }

    #[test]
    fn generic_settings_by_value() {
        let cfg = Scaled {
            scale: 1.5,
            terms: 4,
        };
        let grad = check_counted(
            scaled_squares,
            scaled_squares_vjp,
            scaled_squares_jvp,
            cfg,
            &X,
        );
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, &v)| if i < 4 { 3.0 * v } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
        let x32: Vec<f32> = X.iter().map(|&v| v as f32).collect();
        let mut d32 = vec![0.0_f32; x32.len()];
        let cfg32 = Scaled {
            scale: 1.5_f32,
            terms: 4,
        };
        scaled_squares_vjp(&x32, &mut d32, cfg32, 1.0);
        for (d, e) in d32.iter().zip(&expected) {
            assert!((f64::from(*d) - e).abs() < 1e-5, "{d} vs {e}");
        }
    }

    /// Fields of several types: an `i32`, a `usize` compared with an index,
    /// a tuple, a string only asserted on; and a tuple struct.
    #[derive(Clone, Copy)]
    struct Mixed {
        k: i32,
        n: usize,
        lo: f64,
        name: &'static str,
        pair: (f64, usize),
    }

    #[derive(Clone, Copy)]
    struct Weight(f64);

    #[differentiate(vjp, jvp)]
    fn mixed(x: &[f64], cfg: Mixed, w: Weight) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            if i < cfg.n {
                s += x[i] * f64::from(cfg.k);
            }
            if x[i] > cfg.lo {
                s += x[i] * w.0;
            }
        }
        assert!(!cfg.name.is_empty(), "named {}", cfg.name);
        s * cfg.pair.0 + cfg.pair.1 as f64
    }

    #[test]
    fn fields_of_several_types_and_a_tuple_struct() {
        let cfg = Mixed {
            k: 2,
            n: 3,
            lo: 0.5,
            name: "settings",
            pair: (1.5, 3),
        };
        let w = Weight(0.5);
        let grad = check_scalar(
            |p| mixed(p, cfg, w),
            |p, seed| {
                let mut d = vec![0.0; p.len()];
                let out = mixed_vjp(p, &mut d, cfg, w, seed);
                (out, d)
            },
            &X,
        );
        check_jvp(
            |p| mixed(p, cfg, w),
            |p, u| mixed_jvp(p, u, cfg, w),
            &grad,
            &X,
        );
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let per = if i < 3 { 2.0 } else { 0.0 } + if v > 0.5 { 0.5 } else { 0.0 };
                1.5 * per
            })
            .collect();
        assert_close(&grad, &expected);
    }

    #[derive(Clone, Copy)]
    struct Stepping {
        dt: f64,
        steps: usize,
        damped: bool,
    }

    /// A damped oscillator stepped by semi-implicit Euler.
    #[differentiate(vjp, jvp)]
    fn oscillator(x: &[f64], cfg: Stepping) -> f64 {
        let (mut p, mut v) = (x[0], x[1]);
        for _ in 0..cfg.steps {
            let mut a = -p;
            if cfg.damped {
                a -= 0.1 * v;
            }
            v += cfg.dt * a;
            p += cfg.dt * v;
        }
        p * p + v * v
    }

    #[test]
    fn fields_of_a_struct_by_value_are_constants() {
        let cfg = SETTINGS;
        let grad = check_counted(weighted, weighted_vjp, weighted_jvp, cfg, &X);
        let expected: Vec<f64> = X
            .iter()
            .enumerate()
            .map(|(i, &v)| if i < 5 { -3.0 * v } else { 0.0 })
            .collect();
        assert_close(&grad, &expected);
    }

    #[test]
    fn a_simulation_with_its_settings_by_value() {
        let cfg = Stepping {
            dt: 0.01,
            steps: 200,
            damped: true,
        };
        let x = [0.7, -0.3];
        let grad = check_counted(oscillator, oscillator_vjp, oscillator_jvp, cfg, &x);
        // The step is linear: the state after it is `Mⁿ (p, v)`, and the
        // gradient of `|s|²` is `2 (Mⁿ)ᵀ Mⁿ (p, v)`.
        let (h, c) = (cfg.dt, 0.1);
        let m = [[1.0 - h * h, h * (1.0 - h * c)], [-h, 1.0 - h * c]];
        let mut mn = [[1.0, 0.0], [0.0, 1.0]];
        for _ in 0..cfg.steps {
            let mut next = [[0.0; 2]; 2];
            for (i, row) in next.iter_mut().enumerate() {
                for (j, e) in row.iter_mut().enumerate() {
                    *e = m[i][0] * mn[0][j] + m[i][1] * mn[1][j];
                }
            }
            mn = next;
        }
        let s = [
            mn[0][0] * x[0] + mn[0][1] * x[1],
            mn[1][0] * x[0] + mn[1][1] * x[1],
        ];
        let expected = [
            2.0 * (mn[0][0] * s[0] + mn[1][0] * s[1]),
            2.0 * (mn[0][1] * s[0] + mn[1][1] * s[1]),
        ];
        assert_close(&grad, &expected);
        // The split API holds the settings in its pullback.
        let (out, pullback) = oscillator_forward(&x, cfg);
        let mut d = [0.0; 2];
        pullback(&x, &mut d, 1.0);
        assert_eq!(out.to_bits(), oscillator(&x, cfg).to_bits());
        assert_close(&d, &grad);
    }
}
