//! The buffer primitives of `ad_runtime::linalg` and their pullbacks.
//!
//! Every primitive is checked three ways: its value against a closed form on small
//! inputs; its pullbacks against finite differences of the primal, seen as a map from
//! the concatenation of its float inputs to its float outputs; and the dot-product
//! test `<J u, v> == <u, Jᵀ v>`. Then: the pullbacks add into a nonzero shadow, and the
//! `f32` instances agree with the `f64` ones.
//!
//! The pullbacks are called through `ad_runtime::__private`, as generated code calls
//! them; the primal functions through the crate root and `ad_runtime::linalg`.

use ad_runtime::__private as ad;
use ad_runtime::{Float, check, linalg};
use proptest::prelude::*;

/// The tolerance of the comparisons with finite differences.
const TOLERANCE: f64 = 1e-7;

/// The mixed relative error `|a - b| / max(1, |a|, |b|)`.
fn mixed_error(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1.0)
}

#[track_caller]
fn assert_close_to(actual: &[f64], expected: &[f64], tol: f64) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            mixed_error(a, e) <= tol,
            "element {i}: {a:e}, expected {e:e}\n  actual   {actual:?}\n  expected {expected:?}"
        );
    }
}

#[track_caller]
fn assert_close(actual: &[f64], expected: &[f64]) {
    assert_close_to(actual, expected, 1e-12);
}

/// Deterministic, irregular values in `[-scale, scale]`.
fn values(len: usize, seed: f64, scale: f64) -> Vec<f64> {
    (0..len)
        .map(|i| scale * ((i as f64 + 1.0) * 1.618_033_988_7 + seed).sin())
        .collect()
}

/// A primitive with its pullbacks, as a map from the concatenation of its float inputs
/// to its float outputs.
trait Case {
    /// The inputs at which the checks run.
    fn point() -> Vec<f64>;

    /// The primal map.
    fn primal<T: Float>(x: &[T]) -> Vec<T>;

    /// Adds `Jᵀ v` into `adj` (one slot per input), calling the pullbacks as generated
    /// code does.
    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]);
}

fn vjp<C: Case, T: Float>(x: &[T], v: &[T]) -> Vec<T> {
    let mut adj = vec![T::ZERO; x.len()];
    C::pullback(x, v, &mut adj);
    adj
}

/// The pullbacks of `C` against finite differences and the dot-product test.
fn check_case<C: Case>() {
    let x = C::point();
    check::vjp(C::primal::<f64>, vjp::<C, f64>, &x).assert_within(TOLERANCE);
    check::dot_product(C::primal::<f64>, vjp::<C, f64>, &x).assert_within(TOLERANCE);
}

/// [`check_case`] for a primitive with one scalar output, through the gradient helpers.
fn check_scalar_case<C: Case>() {
    check_case::<C>();
    let x = C::point();
    let f = |x: &[f64]| C::primal(x)[0];
    let grad = |x: &[f64]| vjp::<C, f64>(x, &[1.0]);
    check::gradient(f, grad, &x).assert_within(TOLERANCE);
    check::dot_product_scalar(f, grad, &x).assert_within(TOLERANCE);
}

/// The pullbacks of `C` add into a nonzero shadow instead of overwriting it.
fn check_accumulates<C: Case>() {
    let x = C::point();
    let v = values(C::primal(&x).len(), 0.3, 1.0);
    let fresh = vjp::<C, f64>(&x, &v);
    assert!(fresh.iter().any(|&d| d.abs() > 1e-3), "{fresh:?}");
    let start = values(x.len(), 1.7, 2.0);
    let mut accumulated = start.clone();
    C::pullback(&x, &v, &mut accumulated);
    let expected: Vec<f64> = start.iter().zip(&fresh).map(|(s, f)| s + f).collect();
    assert_close(&accumulated, &expected);
    // A second call adds the same contribution again.
    C::pullback(&x, &v, &mut accumulated);
    let expected: Vec<f64> = expected.iter().zip(&fresh).map(|(e, f)| e + f).collect();
    assert_close(&accumulated, &expected);
}

/// The `f32` instances of `C` agree with the `f64` ones, to `f32` precision.
fn check_f32<C: Case>() {
    let to_f32 = |x: &[f64]| x.iter().map(|&xi| xi as f32).collect::<Vec<f32>>();
    let to_f64 = |x: &[f32]| x.iter().map(|&xi| f64::from(xi)).collect::<Vec<f64>>();
    // Compare at the `f32`-rounded point, so only the arithmetic differs.
    let x32 = to_f32(&C::point());
    let x = to_f64(&x32);
    let out32 = C::primal(&x32);
    let out = C::primal(&x);
    assert_close_to(&to_f64(&out32), &out, 1e-5);
    let v32 = to_f32(&values(out.len(), 0.3, 1.0));
    let v = to_f64(&v32);
    assert_close_to(
        &to_f64(&vjp::<C, f32>(&x32, &v32)),
        &vjp::<C, f64>(&x, &v),
        1e-5,
    );
}

/// Runs every generic check on a case.
fn check_all<C: Case>() {
    check_case::<C>();
    check_accumulates::<C>();
    check_f32::<C>();
}

// ---------------------------------------------------------------------------------
// dot

/// `s = dot(x, y)` with `x` and `y` of length `N`.
struct Dot<const N: usize>;

impl<const N: usize> Case for Dot<N> {
    fn point() -> Vec<f64> {
        values(2 * N, 0.0, 1.5)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        let (xs, ys) = x.split_at(N);
        vec![ad_runtime::dot(xs, ys)]
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let (xs, ys) = x.split_at(N);
        let (dxs, dys) = adj.split_at_mut(N);
        ad::dot_dx(ys, v[0], dxs);
        ad::dot_dx(xs, v[0], dys);
    }
}

/// `s = dot(x, x)`: both pullbacks add into the same shadow.
struct DotSelf;

impl Case for DotSelf {
    fn point() -> Vec<f64> {
        values(5, 0.4, 2.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        vec![ad_runtime::dot(x, x)]
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        ad::dot_dx(x, v[0], adj);
        ad::dot_dx(x, v[0], adj);
    }
}

#[test]
fn dot_closed_form() {
    assert_eq!(ad_runtime::dot(&[1.0, 2.0, 3.0], &[4.0, -5.0, 6.0]), 12.0);
    assert_eq!(ad_runtime::dot::<f64>(&[], &[]), 0.0);
    // Longer than one chunk of partial sums, with a remainder: Σ i² for i = 1..=19.
    let x: Vec<f64> = (1..=19).map(f64::from).collect();
    assert_eq!(ad_runtime::dot(&x, &x), 2470.0);
    assert_eq!(ad_runtime::dot(&[1.5_f32, 2.0], &[2.0, -0.25]), 2.5);
}

#[test]
fn dot_dx_closed_form() {
    let mut dx = [1.0, 1.0, 1.0];
    ad::dot_dx(&[1.0, -2.0, 0.5], 2.0, &mut dx);
    assert_eq!(dx, [3.0, -3.0, 2.0]);
}

#[test]
fn dot_pullbacks() {
    check_scalar_case::<Dot<3>>();
    check_scalar_case::<Dot<19>>();
    check_scalar_case::<DotSelf>();
    check_all::<Dot<11>>();
    check_all::<DotSelf>();
}

#[test]
fn dot_self_gradient_is_twice_x() {
    let x = [1.0, -2.0, 3.0];
    assert_eq!(vjp::<DotSelf, f64>(&x, &[0.5]), [1.0, -2.0, 3.0]);
}

// ---------------------------------------------------------------------------------
// sum

/// `s = sum(x)` with `x` of length `N`.
struct Sum<const N: usize>;

impl<const N: usize> Case for Sum<N> {
    fn point() -> Vec<f64> {
        values(N, 0.9, 3.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        vec![ad_runtime::sum(x)]
    }

    fn pullback<T: Float>(_x: &[T], v: &[T], adj: &mut [T]) {
        ad::sum_dx(v[0], adj);
    }
}

#[test]
fn sum_closed_form() {
    assert_eq!(ad_runtime::sum(&[1.0, 2.0, 3.5]), 6.5);
    assert_eq!(ad_runtime::sum::<f64>(&[]), 0.0);
    let x: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(ad_runtime::sum(&x), 210.0);
    assert_eq!(ad_runtime::sum(&[0.5_f32, 0.25]), 0.75);
}

#[test]
fn sum_dx_closed_form() {
    let mut dx = [1.0, -1.0, 0.0];
    ad::sum_dx(2.5, &mut dx);
    assert_eq!(dx, [3.5, 1.5, 2.5]);
}

#[test]
fn sum_pullbacks() {
    check_scalar_case::<Sum<4>>();
    check_all::<Sum<13>>();
}

// ---------------------------------------------------------------------------------
// norm2

/// `r = norm2(x)` with `x` of length `N`.
struct Norm2<const N: usize>;

impl<const N: usize> Case for Norm2<N> {
    fn point() -> Vec<f64> {
        values(N, 0.2, 2.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        vec![ad_runtime::norm2(x)]
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let r = ad_runtime::norm2(x);
        ad::norm2_dx(x, r, v[0], adj);
    }
}

#[test]
fn norm2_closed_form() {
    assert_eq!(ad_runtime::norm2(&[3.0, 4.0]), 5.0);
    assert_eq!(ad_runtime::norm2(&[-3.0, 0.0, 4.0]), 5.0);
    assert_eq!(ad_runtime::norm2(&[1.0; 16]), 4.0);
    assert_eq!(ad_runtime::norm2(&[0.0; 3]), 0.0);
    assert_eq!(ad_runtime::norm2::<f64>(&[]), 0.0);
    assert_eq!(ad_runtime::norm2(&[3.0_f32, 4.0]), 5.0);
}

#[test]
fn norm2_dx_closed_form() {
    let mut dx = [1.0, 1.0];
    ad::norm2_dx(&[3.0, 4.0], 5.0, 10.0, &mut dx);
    assert_eq!(dx, [7.0, 9.0]);
}

#[test]
fn norm2_dx_at_zero_adds_nothing() {
    let mut dx = [1.0, 2.0, 3.0];
    ad::norm2_dx(&[0.0, -0.0, 0.0], 0.0, 1.0, &mut dx);
    assert_eq!(dx, [1.0, 2.0, 3.0]);
    let mut empty: [f64; 0] = [];
    ad::norm2_dx(&[], 0.0, 1.0, &mut empty);
    // A zero seed adds nothing, even where `x / r` would overflow.
    let mut dx = [1.0];
    ad::norm2_dx(&[f64::MAX], f64::INFINITY, 0.0, &mut dx);
    assert_eq!(dx, [1.0]);
}

#[test]
fn norm2_pullbacks() {
    check_scalar_case::<Norm2<5>>();
    check_all::<Norm2<10>>();
}

// ---------------------------------------------------------------------------------
// axpy

/// `y += a · x` with `x` and `y` of length `N`: inputs `[a, x, y]`, output the new `y`.
struct Axpy<const N: usize>;

impl<const N: usize> Case for Axpy<N> {
    fn point() -> Vec<f64> {
        values(1 + 2 * N, 0.6, 1.5)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        let (a, rest) = (x[0], &x[1..]);
        let (xs, ys) = rest.split_at(N);
        let mut y = ys.to_vec();
        ad_runtime::axpy(a, xs, &mut y);
        y
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let (a, xs) = (x[0], &x[1..=N]);
        let (da, rest) = adj.split_first_mut().unwrap();
        let (dxs, dys) = rest.split_at_mut(N);
        // The shadow of `y` holds the seed; the pullbacks leave it as it is, so it
        // becomes the adjoint of `y`'s previous value.
        let d_y = v;
        *da += ad::axpy_da(xs, d_y);
        ad::axpy_dx(a, d_y, dxs);
        ad::add_assign(dys, d_y);
    }
}

#[test]
fn axpy_closed_form() {
    let mut y = [1.0, 1.0, 0.0];
    ad_runtime::axpy(2.0, &[3.0, -1.0, 0.5], &mut y);
    assert_eq!(y, [7.0, -1.0, 1.0]);
    let mut y = [1.0_f32, 2.0];
    ad_runtime::axpy(-1.0, &[1.0, 1.0], &mut y);
    assert_eq!(y, [0.0, 1.0]);
}

#[test]
fn axpy_pullbacks_closed_form() {
    assert_eq!(ad::axpy_da(&[1.0, 2.0, 3.0], &[1.0, -1.0, 2.0]), 5.0);
    let mut dx = [1.0, 1.0];
    ad::axpy_dx(3.0, &[1.0, -2.0], &mut dx);
    assert_eq!(dx, [4.0, -5.0]);
}

#[test]
fn axpy_pullbacks() {
    check_case::<Axpy<3>>();
    check_all::<Axpy<9>>();
}

// ---------------------------------------------------------------------------------
// matvec

/// `y = A · x` with `A` of `M × N`: inputs `[A, x, y]` (the previous `y`, which does not
/// influence the output), output `y`.
struct Matvec<const M: usize, const N: usize>;

impl<const M: usize, const N: usize> Case for Matvec<M, N> {
    fn point() -> Vec<f64> {
        values(M * N + N + M, 0.1, 2.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        let (a, rest) = x.split_at(M * N);
        let (xs, y_old) = rest.split_at(N);
        let mut y = y_old.to_vec();
        ad_runtime::matvec(a, xs, &mut y, M, N);
        y
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let (a, rest) = x.split_at(M * N);
        let xs = &rest[..N];
        let (da, rest) = adj.split_at_mut(M * N);
        let (dxs, dy_old) = rest.split_at_mut(N);
        let mut d_y = v.to_vec();
        ad::matvec_da(xs, &d_y, da, M, N);
        ad::matvec_dx(a, &d_y, dxs, M, N);
        // `y` was overwritten: its previous value gets no gradient.
        ad::zero(&mut d_y);
        ad::add_assign(dy_old, &d_y);
    }
}

#[test]
fn matvec_closed_form() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
    let mut y = [f64::NAN; 2];
    ad_runtime::matvec(&a, &[1.0, 0.0, -1.0], &mut y, 2, 3);
    assert_eq!(y, [-2.0, -2.0]);
    // The same matrix read as 3 × 2.
    let mut y = [9.0; 3];
    linalg::matvec(&a, &[1.0, 1.0], &mut y, 3, 2);
    assert_eq!(y, [3.0, 7.0, 11.0]);
    // Empty rows: `y` is overwritten with zeros.
    let mut y = [5.0, 5.0];
    ad_runtime::matvec(&[], &[], &mut y, 2, 0);
    assert_eq!(y, [0.0, 0.0]);
    let mut y: [f64; 0] = [];
    ad_runtime::matvec(&[], &[1.0, 2.0], &mut y, 0, 2);
    let mut y = [0.0_f32; 2];
    ad_runtime::matvec(&[1.0, 2.0, 3.0, 4.0], &[1.0, -1.0], &mut y, 2, 2);
    assert_eq!(y, [-1.0, -1.0]);
}

#[test]
fn matvec_pullbacks_closed_form() {
    // dA += dy · xᵀ for a 2 × 3 matrix.
    let mut da = [1.0; 6];
    ad::matvec_da(&[1.0, 2.0, 3.0], &[1.0, -2.0], &mut da, 2, 3);
    assert_eq!(da, [2.0, 3.0, 4.0, -1.0, -3.0, -5.0]);
    // dx += Aᵀ · dy.
    let mut dx = [1.0, 0.0, 0.0];
    ad::matvec_dx(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[1.0, -1.0], &mut dx, 2, 3);
    assert_eq!(dx, [-2.0, -3.0, -3.0]);
}

#[test]
fn matvec_pullbacks() {
    check_case::<Matvec<3, 4>>();
    check_case::<Matvec<4, 1>>();
    check_case::<Matvec<1, 4>>();
    check_all::<Matvec<2, 11>>();
    check_all::<Matvec<5, 3>>();
}

// ---------------------------------------------------------------------------------
// matmul

/// `C = A · B` with `A` of `M × K` and `B` of `K × N`: inputs `[A, B, C]` (the previous
/// `C`, which does not influence the output), output `C`.
struct Matmul<const M: usize, const K: usize, const N: usize>;

impl<const M: usize, const K: usize, const N: usize> Case for Matmul<M, K, N> {
    fn point() -> Vec<f64> {
        values(M * K + K * N + M * N, 0.5, 2.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        let (a, rest) = x.split_at(M * K);
        let (b, c_old) = rest.split_at(K * N);
        let mut c = c_old.to_vec();
        ad_runtime::matmul(a, b, &mut c, M, K, N);
        c
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let (a, rest) = x.split_at(M * K);
        let b = &rest[..K * N];
        let (da, rest) = adj.split_at_mut(M * K);
        let (db, dc_old) = rest.split_at_mut(K * N);
        let mut d_c = v.to_vec();
        ad::matmul_da(b, &d_c, da, M, K, N);
        ad::matmul_db(a, &d_c, db, M, K, N);
        // `C` was overwritten: its previous value gets no gradient.
        ad::zero(&mut d_c);
        ad::add_assign(dc_old, &d_c);
    }
}

#[test]
fn matmul_closed_form() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
    let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]; // 3 × 2
    let mut c = [f64::NAN; 4];
    ad_runtime::matmul(&a, &b, &mut c, 2, 3, 2);
    assert_eq!(c, [58.0, 64.0, 139.0, 154.0]);
    // B · A: 3 × 2 by 2 × 3.
    let mut c = [1.0; 9];
    linalg::matmul(&b, &a, &mut c, 3, 2, 3);
    assert_eq!(c, [39.0, 54.0, 69.0, 49.0, 68.0, 87.0, 59.0, 82.0, 105.0]);
    // An outer product (k = 1) and an inner product (m = n = 1).
    let mut c = [0.0; 6];
    ad_runtime::matmul(&[1.0, 2.0, 3.0], &[1.0, -1.0], &mut c, 3, 1, 2);
    assert_eq!(c, [1.0, -1.0, 2.0, -2.0, 3.0, -3.0]);
    let mut c = [0.0];
    ad_runtime::matmul(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], &mut c, 1, 3, 1);
    assert_eq!(c, [32.0]);
    // The identity.
    let identity = [1.0, 0.0, 0.0, 1.0];
    let mut c = [0.0; 6];
    ad_runtime::matmul(&identity, &a, &mut c, 2, 2, 3);
    assert_eq!(c, a);
    // An empty inner dimension gives zeros, overwriting `C`.
    let mut c = [7.0; 6];
    ad_runtime::matmul(&[], &[], &mut c, 2, 0, 3);
    assert_eq!(c, [0.0; 6]);
    let mut c = [0.0_f32; 4];
    ad_runtime::matmul(&[1.0, 2.0], &[3.0, 4.0], &mut c, 2, 1, 2);
    assert_eq!(c, [3.0, 4.0, 6.0, 8.0]);
}

#[test]
fn matmul_pullbacks_closed_form() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
    let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]; // 3 × 2
    let dc = [1.0, 0.0, 0.0, -1.0]; // 2 × 2
    // dA += dC · Bᵀ = [[7, 9, 11], [-8, -10, -12]].
    let mut da = [1.0; 6];
    ad::matmul_da(&b, &dc, &mut da, 2, 3, 2);
    assert_eq!(da, [8.0, 10.0, 12.0, -7.0, -9.0, -11.0]);
    // dB += Aᵀ · dC = [[1, -4], [2, -5], [3, -6]].
    let mut db = [1.0; 6];
    ad::matmul_db(&a, &dc, &mut db, 2, 3, 2);
    assert_eq!(db, [2.0, -3.0, 3.0, -4.0, 4.0, -5.0]);
}

#[test]
fn matmul_pullbacks() {
    check_case::<Matmul<2, 3, 4>>();
    check_case::<Matmul<4, 1, 3>>();
    check_case::<Matmul<1, 5, 2>>();
    check_all::<Matmul<3, 2, 9>>();
    check_all::<Matmul<2, 10, 3>>();
}

// ---------------------------------------------------------------------------------
// softmax

/// `y = softmax(x)` with `x` and `y` of length `N`: inputs `[x, y]` (the previous `y`,
/// which does not influence the output), output `y`.
struct Softmax<const N: usize>;

impl<const N: usize> Case for Softmax<N> {
    fn point() -> Vec<f64> {
        values(2 * N, 0.8, 3.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        let (xs, y_old) = x.split_at(N);
        let mut y = y_old.to_vec();
        ad_runtime::softmax(xs, &mut y);
        y
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let xs = &x[..N];
        let mut y = vec![T::ZERO; N];
        ad_runtime::softmax(xs, &mut y);
        let (dxs, dy_old) = adj.split_at_mut(N);
        let mut d_y = v.to_vec();
        ad::softmax_dx(&y, &d_y, dxs);
        ad::zero(&mut d_y);
        ad::add_assign(dy_old, &d_y);
    }
}

#[test]
fn softmax_closed_form() {
    let mut y = [f64::NAN; 4];
    ad_runtime::softmax(&[0.3; 4], &mut y);
    assert_eq!(y, [0.25; 4]);
    let mut y = [0.0; 3];
    ad_runtime::softmax(&[0.0, 2.0_f64.ln(), 3.0_f64.ln()], &mut y);
    assert_close(&y, &[1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]);
    // Shifting the inputs does not change the result, and large inputs do not overflow.
    let mut y = [0.0; 3];
    ad_runtime::softmax(
        &[1000.0, 1000.0 + 2.0_f64.ln(), 1000.0 + 3.0_f64.ln()],
        &mut y,
    );
    assert_close(&y, &[1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]);
    let mut y = [0.0; 2];
    ad_runtime::softmax(&[-1000.0, -1000.0], &mut y);
    assert_eq!(y, [0.5, 0.5]);
    let mut y = [0.0; 2];
    ad_runtime::softmax(&[1000.0, 0.0], &mut y);
    assert_eq!(y, [1.0, 0.0]);
    let mut y = [0.0; 2];
    ad_runtime::softmax(&[f64::NEG_INFINITY, 1.0], &mut y);
    assert_eq!(y, [0.0, 1.0]);
    let mut y = [0.0; 2];
    ad_runtime::softmax(&[f64::NEG_INFINITY; 2], &mut y);
    assert!(y.iter().all(|yi| yi.is_nan()), "{y:?}");
    let mut y = [0.0_f32; 2];
    ad_runtime::softmax(&[88.0, 88.0], &mut y);
    assert_eq!(y, [0.5, 0.5]);
}

#[test]
fn softmax_dx_closed_form() {
    // y = (1/4, 3/4), dy = (1, 0): <dy, y> = 1/4, dx += (1/4 · 3/4, 3/4 · -1/4).
    let mut dx = [1.0, 1.0];
    ad::softmax_dx(&[0.25, 0.75], &[1.0, 0.0], &mut dx);
    assert_eq!(dx, [1.0 + 0.1875, 1.0 - 0.1875]);
    // Softmax is invariant under adding a constant to its inputs, so a constant seed
    // gives no gradient.
    let mut dx = [0.5, -0.5, 2.0];
    ad::softmax_dx(&[0.5, 0.25, 0.25], &[3.0, 3.0, 3.0], &mut dx);
    assert_eq!(dx, [0.5, -0.5, 2.0]);
}

#[test]
fn softmax_pullbacks() {
    check_case::<Softmax<1>>();
    check_case::<Softmax<4>>();
    check_all::<Softmax<10>>();
}

// ---------------------------------------------------------------------------------
// logsumexp

/// `s = logsumexp(x)` with `x` of length `N`.
struct Logsumexp<const N: usize>;

impl<const N: usize> Case for Logsumexp<N> {
    fn point() -> Vec<f64> {
        values(N, 1.1, 3.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        vec![ad_runtime::logsumexp(x)]
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let s = ad_runtime::logsumexp(x);
        ad::logsumexp_dx(x, s, v[0], adj);
    }
}

#[test]
fn logsumexp_closed_form() {
    let ln2 = 2.0_f64.ln();
    assert_close(&[ad_runtime::logsumexp(&[1000.0, 1000.0])], &[1000.0 + ln2]);
    assert_close(
        &[ad_runtime::logsumexp(&[-1000.0, -1000.0])],
        &[-1000.0 + ln2],
    );
    assert_close(
        &[ad_runtime::logsumexp(&[0.0, ln2, 3.0_f64.ln()])],
        &[6.0_f64.ln()],
    );
    assert_eq!(ad_runtime::logsumexp(&[-2.5]), -2.5);
    assert_eq!(ad_runtime::logsumexp(&[1000.0, 0.0]), 1000.0);
    // The conventions at the ends: empty and all `−∞` give `−∞`, `+∞` gives `+∞`.
    assert_eq!(ad_runtime::logsumexp::<f64>(&[]), f64::NEG_INFINITY);
    assert_eq!(
        ad_runtime::logsumexp(&[f64::NEG_INFINITY; 3]),
        f64::NEG_INFINITY
    );
    assert_eq!(ad_runtime::logsumexp(&[f64::NEG_INFINITY, 0.0]), 0.0);
    assert_eq!(ad_runtime::logsumexp(&[f64::INFINITY, 0.0]), f64::INFINITY);
    assert!(ad_runtime::logsumexp(&[f64::NAN, 0.0]).is_nan());
    assert!(ad_runtime::logsumexp(&[f64::NAN, f64::INFINITY]).is_nan());
    assert!(ad_runtime::logsumexp::<f64>(&[f64::NAN]).is_nan());
    let s = ad_runtime::logsumexp(&[100.0_f32, 100.0]);
    assert!((s - (100.0 + 2.0_f32.ln())).abs() < 1e-4, "{s}");
}

#[test]
fn logsumexp_dx_closed_form() {
    let mut dx = [1.0, 1.0];
    ad::logsumexp_dx(&[1000.0, 1000.0], 1000.0 + 2.0_f64.ln(), 2.0, &mut dx);
    assert_close(&dx, &[2.0, 2.0]);
    // A zero seed adds nothing, also where the adjoint would be NaN.
    let mut dx = [1.0, 2.0];
    ad::logsumexp_dx(&[f64::NEG_INFINITY; 2], f64::NEG_INFINITY, 0.0, &mut dx);
    assert_eq!(dx, [1.0, 2.0]);
    let mut empty: [f64; 0] = [];
    ad::logsumexp_dx(&[], f64::NEG_INFINITY, 1.0, &mut empty);
}

#[test]
fn logsumexp_gradient_is_softmax() {
    let x = values(6, 0.0, 4.0);
    let mut y = vec![0.0; 6];
    ad_runtime::softmax(&x, &mut y);
    assert_close(&vjp::<Logsumexp<6>, f64>(&x, &[1.0]), &y);
}

#[test]
fn logsumexp_pullbacks() {
    check_scalar_case::<Logsumexp<1>>();
    check_scalar_case::<Logsumexp<5>>();
    check_all::<Logsumexp<12>>();
}

/// The same through `logsumexp_keep` and `logsumexp_dx_kept`, the pair `_vjp` calls.
struct LogsumexpKept<const N: usize>;

impl<const N: usize> Case for LogsumexpKept<N> {
    fn point() -> Vec<f64> {
        values(N, 1.1, 3.0)
    }

    fn primal<T: Float>(x: &[T]) -> Vec<T> {
        let mut kept = Vec::new();
        vec![ad::logsumexp_keep(x, &mut kept)]
    }

    fn pullback<T: Float>(x: &[T], v: &[T], adj: &mut [T]) {
        let mut kept = Vec::new();
        ad::logsumexp_keep(x, &mut kept);
        ad::logsumexp_dx_kept(&mut kept, v[0], adj);
        assert!(kept.is_empty(), "the pullback gives the buffer back");
    }
}

#[test]
fn logsumexp_kept_pullbacks() {
    check_scalar_case::<LogsumexpKept<1>>();
    check_scalar_case::<LogsumexpKept<5>>();
    check_all::<LogsumexpKept<12>>();
}

#[test]
fn logsumexp_keep_matches_logsumexp_at_every_input() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let inputs: [&[f64]; 9] = [
        &[1000.0, 1000.0],
        &[-2.5],
        &[0.3, -1.7, 4.0, 2.2],
        &[],
        &[-inf; 3],
        &[-inf, 0.0],
        &[inf, 0.0],
        &[nan, 0.0],
        &[nan],
    ];
    for x in inputs {
        let mut kept = Vec::new();
        let s = ad::logsumexp_keep(x, &mut kept);
        // The output, bit for bit.
        assert_eq!(s.to_bits(), ad_runtime::logsumexp(x).to_bits(), "{x:?}");
        // The pullback: the plain one's values, NaN where it is NaN. (Not
        // bit for bit: `exp(x − s)` loses the rounding of `s`, 2e-13 at
        // `x = 1000`, where the kept form is exact.)
        let (mut kept_dx, mut plain_dx) = (vec![0.5; x.len()], vec![0.5; x.len()]);
        ad::logsumexp_dx_kept(&mut kept, 1.5, &mut kept_dx);
        ad::logsumexp_dx(x, s, 1.5, &mut plain_dx);
        for (k, p) in kept_dx.iter().zip(&plain_dx) {
            assert!(
                (k.is_nan() && p.is_nan()) || (k - p).abs() <= 1e-12 * p.abs().max(1.0),
                "{x:?}: {kept_dx:?} against {plain_dx:?}"
            );
        }
        // A zero seed adds nothing, even where the adjoint would be NaN.
        let mut kept = Vec::new();
        ad::logsumexp_keep(x, &mut kept);
        let mut dx = vec![0.5; x.len()];
        ad::logsumexp_dx_kept(&mut kept, 0.0, &mut dx);
        assert_eq!(dx, vec![0.5; x.len()], "{x:?}");
    }
}

#[test]
fn logsumexp_dx_kept_closed_form() {
    // Two equal inputs: each gets half the seed, exactly.
    let mut kept = Vec::new();
    ad::logsumexp_keep(&[1000.0, 1000.0], &mut kept);
    let mut dx = [1.0, 1.0];
    ad::logsumexp_dx_kept(&mut kept, 2.0, &mut dx);
    assert_eq!(dx, [2.0, 2.0]);
    // exp(x) ∝ (1, 3): the seed splits 1 : 3.
    ad::logsumexp_keep(&[0.0, 3.0_f64.ln()], &mut kept);
    let mut dx = [0.0, 0.0];
    ad::logsumexp_dx_kept(&mut kept, 4.0, &mut dx);
    assert_close(&dx, &[1.0, 3.0]);
}

#[test]
#[should_panic(expected = "`kept` has length 3 but `dx` has length 3")]
fn logsumexp_dx_kept_checks_the_length() {
    let mut kept = Vec::new();
    ad::logsumexp_keep(&[1.0, 2.0], &mut kept);
    ad::logsumexp_dx_kept(&mut kept, 1.0, &mut [0.0; 3]);
}

// ---------------------------------------------------------------------------------
// Helpers for generated code

#[test]
fn zero_fills_with_zeros() {
    let mut d = [1.0, -2.0, f64::NAN];
    ad::zero(&mut d);
    assert_eq!(d, [0.0; 3]);
    let mut d = [3.0_f32];
    ad::zero(&mut d);
    assert_eq!(d, [0.0]);
}

#[test]
fn add_assign_adds_elementwise() {
    let mut dst = [1.0, 2.0, 3.0];
    ad::add_assign(&mut dst, &[0.5, -2.0, 10.0]);
    assert_eq!(dst, [1.5, 0.0, 13.0]);
    let mut dst = [1.0_f32];
    ad::add_assign(&mut dst, &[2.0]);
    assert_eq!(dst, [3.0]);
}

#[test]
fn pop_shadow_takes_the_last_element() {
    let mut d = vec![1.0, 2.0, 3.0];
    assert_eq!(ad::pop_shadow(&mut d), 3.0);
    assert_eq!(ad::pop_shadow(&mut d), 2.0);
    assert_eq!(d, [1.0]);
    let mut d = vec![0.5_f32];
    assert_eq!(ad::pop_shadow(&mut d), 0.5);
    assert!(d.is_empty());
}

// ---------------------------------------------------------------------------------
// Random dimensions, including empty ones

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matmul_any_dimensions(m in 0..5_usize, k in 0..5_usize, n in 0..5_usize, seed in -3.0..3.0_f64) {
        let f = |x: &[f64]| {
            let mut c = vec![f64::NAN; m * n];
            linalg::matmul(&x[..m * k], &x[m * k..], &mut c, m, k, n);
            c
        };
        let pullback = |x: &[f64], v: &[f64]| {
            let mut adj = vec![0.0; x.len()];
            let (da, db) = adj.split_at_mut(m * k);
            linalg::matmul_da(&x[m * k..], v, da, m, k, n);
            linalg::matmul_db(&x[..m * k], v, db, m, k, n);
            adj
        };
        let x = values(m * k + k * n, seed, 2.0);
        let c = f(&x);
        // Against the definition, entry by entry.
        for i in 0..m {
            for j in 0..n {
                let expected: f64 = (0..k).map(|p| x[i * k + p] * x[m * k + p * n + j]).sum();
                prop_assert!(mixed_error(c[i * n + j], expected) <= 1e-12);
            }
        }
        let result = check::vjp(f, pullback, &x);
        prop_assert!(result.passes(TOLERANCE), "{}", result);
        let result = check::dot_product(f, pullback, &x);
        prop_assert!(result.passes(TOLERANCE), "{}", result);
    }

    #[test]
    fn matvec_any_dimensions(m in 0..6_usize, n in 0..6_usize, seed in -3.0..3.0_f64) {
        let f = |x: &[f64]| {
            let mut y = vec![f64::NAN; m];
            linalg::matvec(&x[..m * n], &x[m * n..], &mut y, m, n);
            y
        };
        let pullback = |x: &[f64], v: &[f64]| {
            let mut adj = vec![0.0; x.len()];
            let (da, dx) = adj.split_at_mut(m * n);
            linalg::matvec_da(&x[m * n..], v, da, m, n);
            linalg::matvec_dx(&x[..m * n], v, dx, m, n);
            adj
        };
        let x = values(m * n + n, seed, 2.0);
        let y = f(&x);
        for i in 0..m {
            let expected: f64 = (0..n).map(|j| x[i * n + j] * x[m * n + j]).sum();
            prop_assert!(mixed_error(y[i], expected) <= 1e-12);
        }
        let result = check::vjp(f, pullback, &x);
        prop_assert!(result.passes(TOLERANCE), "{}", result);
        let result = check::dot_product(f, pullback, &x);
        prop_assert!(result.passes(TOLERANCE), "{}", result);
    }
}
