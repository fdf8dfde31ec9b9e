//! Helpers shared by the integration tests: every differentiated function is
//! checked three ways — its primal output, finite differences, and the
//! dot-product test — and the gradient is handed back for closed-form checks.

use ad_runtime::{Lanes, check};

pub mod fixtures;
pub use ad_testkit::programs;

/// Tolerance of the finite-difference and dot-product checks (mixed relative
/// error; the checks use Richardson-extrapolated central differences).
pub const TOL: f64 = 1e-7;

/// Checks a scalar function `f` and its `_vjp` (wrapped to take the inputs and
/// the seed, and to return the output and the adjoints), at `x`.
///
/// Asserts that `_vjp` returns exactly `f(x)` as its output, that its gradient
/// matches finite differences, and that it passes the dot-product test with
/// seeds other than one. Returns the gradient for closed-form assertions.
pub fn check_scalar(
    f: impl Fn(&[f64]) -> f64,
    vjp: impl Fn(&[f64], f64) -> (f64, Vec<f64>),
    x: &[f64],
) -> Vec<f64> {
    check_scalar_within(TOL, f, vjp, x)
}

/// [`check_scalar`] with a given tolerance: `f32` functions evaluated through
/// `f64` closures carry `f32` rounding into the finite differences.
pub fn check_scalar_within(
    tol: f64,
    f: impl Fn(&[f64]) -> f64,
    vjp: impl Fn(&[f64], f64) -> (f64, Vec<f64>),
    x: &[f64],
) -> Vec<f64> {
    let (out, grad) = vjp(x, 1.0);
    assert_eq!(
        out.to_bits(),
        f(x).to_bits(),
        "`_vjp` output {out} differs from the primal {}",
        f(x)
    );
    assert_eq!(grad.len(), x.len(), "one adjoint per input");
    check::gradient(&f, |p| vjp(p, 1.0).1, x).assert_within(tol);
    check::dot_product(|p| vec![f(p)], |p, v| vjp(p, v[0]).1, x).assert_within(tol);
    grad
}

/// Checks a scalar function's `_jvp` (wrapped to take the inputs and a
/// direction, and to return the output and the tangent) at `x`, given the
/// gradient its `_vjp` found there.
///
/// Asserts that `_jvp` returns exactly `f(x)` as its output, that its
/// tangents along the coordinate directions match finite differences, and
/// the dot-product identity between the two modes: along a direction `u`
/// with every component non-zero, the tangent is `<∇f, u>`.
pub fn check_jvp(
    f: impl Fn(&[f64]) -> f64,
    jvp: impl Fn(&[f64], &[f64]) -> (f64, f64),
    grad: &[f64],
    x: &[f64],
) {
    let u: Vec<f64> = (0..x.len())
        .map(|index| ((index * 5 % 7) as f64 - 3.0) / 3.0 + 0.2)
        .collect();
    let (out, tangent) = jvp(x, &u);
    assert_eq!(
        out.to_bits(),
        f(x).to_bits(),
        "`_jvp` output {out} differs from the primal {}",
        f(x)
    );
    let along = |p: &[f64]| -> Vec<f64> {
        (0..p.len())
            .map(|index| {
                let mut e = vec![0.0; p.len()];
                e[index] = 1.0;
                jvp(p, &e).1
            })
            .collect()
    };
    check::gradient(&f, along, x).assert_within(TOL);
    let expected: f64 = grad.iter().zip(&u).map(|(g, u)| g * u).sum();
    let scale: f64 = grad.iter().zip(&u).map(|(g, u)| (g * u).abs()).sum();
    assert!(
        (tangent - expected).abs() <= 1e-12 * scale.max(1.0),
        "dot-product test between the modes: `_jvp` gives {tangent} along {u:?}, `<∇f, u>` is {expected}"
    );
}

/// Checks a function's `_jvp_lanes` against its `_jvp` at `x`, each wrapped
/// to take the flat inputs and directions and to return the flat outputs and
/// tangents: three directions at once (a dense one, a basis vector, and an
/// oscillating one) give, in each lane, the outputs and the tangents `_jvp`
/// gives along that lane's direction, bit for bit.
pub fn check_lanes(
    jvp: impl Fn(&[f64], &[f64]) -> (Vec<f64>, Vec<f64>),
    lanes: impl Fn(&[f64], &[Lanes<f64, 3>]) -> (Vec<f64>, Vec<Lanes<f64, 3>>),
    x: &[f64],
) {
    let n = x.len();
    let directions: [Vec<f64>; 3] = [
        (0..n)
            .map(|i| ((i * 5 % 7) as f64 - 3.0) / 3.0 + 0.2)
            .collect(),
        (0..n).map(|i| if i == n / 2 { 1.0 } else { 0.0 }).collect(),
        (0..n).map(|i| (i as f64 * 0.7).sin()).collect(),
    ];
    let u: Vec<Lanes<f64, 3>> = (0..n)
        .map(|i| Lanes(std::array::from_fn(|l| directions[l][i])))
        .collect();
    let (out, tangents) = lanes(x, &u);
    for (lane, direction) in directions.iter().enumerate() {
        let (expected_out, expected) = jvp(x, direction);
        let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&out),
            bits(&expected_out),
            "`_jvp_lanes` output {out:?}, `_jvp` {expected_out:?}"
        );
        let lane_of: Vec<f64> = tangents.iter().map(|t| t[lane]).collect();
        assert_eq!(
            bits(&lane_of),
            bits(&expected),
            "lane {lane} of `_jvp_lanes` is {lane_of:?}, `_jvp` along {direction:?} gives {expected:?}"
        );
    }
}

/// Like [`check_scalar`] for a function with several outputs: `vjp` takes the
/// inputs and a seed with one entry per output.
pub fn check_vector(
    f: impl Fn(&[f64]) -> Vec<f64>,
    vjp: impl Fn(&[f64], &[f64]) -> (Vec<f64>, Vec<f64>),
    x: &[f64],
    seed: &[f64],
) -> Vec<f64> {
    let (out, adjoint) = vjp(x, seed);
    assert_eq!(out, f(x), "`_vjp` output differs from the primal");
    check::vjp(&f, |p, v| vjp(p, v).1, x).assert_within(TOL);
    check::dot_product(&f, |p, v| vjp(p, v).1, x).assert_within(TOL);
    adjoint
}

/// [`check_vector`] for a function that updates a state in place, with one
/// scalar parameter `k`: the map `(state, k) ↦ final state`. `f` runs the
/// function on a state; `vjp` runs its `_vjp` on a state and a shadow (which
/// holds the seed on entry) and returns the adjoint of `k`. Returns the
/// adjoint `(d_state…, d_k)`.
pub fn check_in_place(
    f: impl Fn(&mut Vec<f64>, f64),
    vjp: impl Fn(&mut Vec<f64>, &mut Vec<f64>, f64) -> f64,
    state: &[f64],
    k: f64,
    seed: &[f64],
) -> Vec<f64> {
    let n = state.len();
    let mut point = state.to_vec();
    point.push(k);
    check_vector(
        |p| {
            let mut state = p[..n].to_vec();
            f(&mut state, p[n]);
            state
        },
        |p, s| {
            let mut state = p[..n].to_vec();
            let mut shadow = s.to_vec();
            let d_k = vjp(&mut state, &mut shadow, p[n]);
            shadow.push(d_k);
            (state, shadow)
        },
        &point,
        seed,
    )
}

/// The `_vjp` of `f(xs: &[f64], c: f64)` as a function of the flat point
/// `(xs…, c)`, for [`check_scalar`] and its kin: it returns the output and
/// the shadow of `xs` followed by the adjoint of `c`.
pub fn buffer_then_scalar<S, O>(
    vjp: impl Fn(&[f64], &mut [f64], f64, S) -> (O, f64),
) -> impl Fn(&[f64], S) -> (O, Vec<f64>) {
    move |p, seed| {
        let n = p.len() - 1;
        let mut adjoint = vec![0.0; n];
        let (out, d_c) = vjp(&p[..n], &mut adjoint, p[n], seed);
        adjoint.push(d_c);
        (out, adjoint)
    }
}

/// The `_vjp` of `f(c: f64, xs: &[f64])` as a function of the flat point
/// `(c, xs…)`: [`buffer_then_scalar`] with the scalar first.
pub fn scalar_then_buffer<S, O>(
    vjp: impl Fn(f64, &[f64], &mut [f64], S) -> (O, f64),
) -> impl Fn(&[f64], S) -> (O, Vec<f64>) {
    move |p, seed| {
        let mut adjoint = vec![0.0; p.len()];
        let (out, d_c) = vjp(p[0], &p[1..], &mut adjoint[1..], seed);
        adjoint[0] = d_c;
        (out, adjoint)
    }
}

/// Asserts `actual` equals `expected` to a few ulps (closed forms computed
/// another way round differ in the last bits).
#[track_caller]
pub fn assert_close(actual: &[f64], expected: &[f64]) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "lengths differ: {actual:?} vs {expected:?}"
    );
    for (index, (a, e)) in actual.iter().zip(expected).enumerate() {
        let scale = a.abs().max(e.abs()).max(1.0);
        assert!(
            (a - e).abs() <= 1e-12 * scale,
            "component {index}: {a} != {e} (all: {actual:?} vs {expected:?})"
        );
    }
}
