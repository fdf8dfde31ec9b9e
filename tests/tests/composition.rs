//! Composition: differentiated functions calling each other (across modules,
//! in loops and branches, with buffers, recursively), custom rules, and the
//! split API `f_forward` used directly. Each function is checked against a
//! closed form, finite differences and the dot-product test.

use ad_runtime::{custom_vjp, differentiate};
use ad_tests::{assert_close, check_scalar};

// ---------------------------------------------------------------------------
// A chain of three functions across two modules.

mod shapes {
    use ad_runtime::differentiate;

    #[differentiate]
    pub(crate) fn radius(x: f64, y: f64) -> f64 {
        (x * x + y * y).sqrt()
    }

    /// Calls `radius` in the same module.
    #[differentiate]
    pub(crate) fn area(x: f64, y: f64) -> f64 {
        std::f64::consts::PI * radius(x, y).powi(2)
    }
}

mod energy {
    use ad_runtime::differentiate;

    /// Calls into another module by an absolute path.
    #[differentiate]
    pub(crate) fn potential(x: f64, y: f64, k: f64) -> f64 {
        k * crate::shapes::area(x, y).ln()
    }
}

/// Calls both modules by relative paths.
#[differentiate]
fn total(x: f64, y: f64, k: f64) -> f64 {
    energy::potential(x, y, k) + shapes::radius(x, y)
}

#[test]
fn a_chain_of_three_functions_across_two_modules() {
    let (x, y, k) = (0.8, -1.3, 2.5);
    let grad = check_scalar(
        |p| total(p[0], p[1], p[2]),
        |p, seed| {
            let (out, d_x, d_y, d_k) = total_vjp(p[0], p[1], p[2], seed);
            (out, vec![d_x, d_y, d_k])
        },
        &[x, y, k],
    );
    // total = k ln(π r²) + r with r² = x² + y².
    let r2 = x * x + y * y;
    let r = r2.sqrt();
    assert_close(
        &grad,
        &[
            2.0 * k * x / r2 + x / r,
            2.0 * k * y / r2 + y / r,
            (std::f64::consts::PI * r2).ln(),
        ],
    );
}

// ---------------------------------------------------------------------------
// A callee in a loop and in both arms of a branch.

#[differentiate]
fn logistic(r: f64, x: f64) -> f64 {
    r * x * (1.0 - x)
}

#[differentiate]
fn iterate(r: f64, x0: f64, n: usize) -> f64 {
    let mut x = x0;
    for _ in 0..n {
        x = logistic(r, x);
    }
    x
}

#[differentiate]
fn square(x: f64) -> f64 {
    x * x
}

#[differentiate]
fn branchy(x: f64, y: f64) -> f64 {
    if x > y {
        square(x - y) * y
    } else {
        square(y - x) + x
    }
}

#[test]
fn a_callee_in_a_loop_keeps_one_pullback_per_iteration() {
    let (r, x0) = (2.5, 0.3);
    for n in [0, 1, 2, 6] {
        check_scalar(
            |p| iterate(p[0], p[1], n),
            |p, seed| {
                let (out, d_r, d_x0) = iterate_vjp(p[0], p[1], n, seed);
                (out, vec![d_r, d_x0])
            },
            &[r, x0],
        );
    }
    // Two steps, by hand: x1 = r x0 (1 − x0), x2 = r x1 (1 − x1).
    let x1 = r * x0 * (1.0 - x0);
    let (_, d_r, d_x0) = iterate_vjp(r, x0, 2, 1.0);
    let dx2_dx1 = r * (1.0 - 2.0 * x1);
    let expected_r = x1 * (1.0 - x1) + dx2_dx1 * x0 * (1.0 - x0);
    assert_close(&[d_r, d_x0], &[expected_r, dx2_dx1 * r * (1.0 - 2.0 * x0)]);
}

#[test]
fn a_callee_in_both_arms_of_a_branch() {
    for (x, y) in [(2.0, 0.5), (0.5, 2.0)] {
        let grad = check_scalar(
            |p| branchy(p[0], p[1]),
            |p, seed| {
                let (out, d_x, d_y) = branchy_vjp(p[0], p[1], seed);
                (out, vec![d_x, d_y])
            },
            &[x, y],
        );
        let expected = if x > y {
            // (x − y)² y
            vec![2.0 * (x - y) * y, -2.0 * (x - y) * y + (x - y) * (x - y)]
        } else {
            // (y − x)² + x
            vec![-2.0 * (y - x) + 1.0, 2.0 * (y - x)]
        };
        assert_close(&grad, &expected);
    }
}

// ---------------------------------------------------------------------------
// Buffers: a callee that reads slices, one that updates a slice in place.

#[differentiate]
fn weighted(w: &[f64], xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        s += w[i] * xs[i] * xs[i];
    }
    s
}

#[differentiate]
fn relax(u: &mut [f64], c: f64) {
    for v in u.iter_mut() {
        *v -= c * v.sin();
    }
}

/// `steps` in-place updates, then a weighted energy of the result.
#[differentiate]
fn relaxed_energy(u: &mut [f64], w: &[f64], c: f64, steps: usize) -> f64 {
    for _ in 0..steps {
        relax(u, c);
    }
    weighted(w, u)
}

#[test]
fn callees_with_slices_and_in_place_updates() {
    let u0 = [0.3, -1.2, 2.0];
    let w = [1.5, 0.5, -2.0];
    let c = 0.4;
    let n = u0.len();
    let f = |p: &[f64]| {
        let mut u = p[..n].to_vec();
        relaxed_energy(&mut u, &p[n..2 * n], p[2 * n], 3)
    };
    let vjp = |p: &[f64], seed: f64| {
        let mut u = p[..n].to_vec();
        let mut d_u = vec![0.0; n];
        let mut d_w = vec![0.0; n];
        let (out, d_c) =
            relaxed_energy_vjp(&mut u, &mut d_u, &p[n..2 * n], &mut d_w, p[2 * n], 3, seed);
        let mut grad = d_u;
        grad.extend(d_w);
        grad.push(d_c);
        (out, grad)
    };
    let mut point = u0.to_vec();
    point.extend(w);
    point.push(c);
    let grad = check_scalar(f, vjp, &point);
    // One step, by hand: u1 = u0 − c sin u0, E = Σ w u1².
    let (_, d_c) = {
        let mut u = u0.to_vec();
        let mut d_u = vec![0.0; n];
        let mut d_w = vec![0.0; n];
        let result = relaxed_energy_vjp(&mut u, &mut d_u, &w, &mut d_w, c, 1, 1.0);
        let u1: Vec<f64> = u0.iter().map(|u| u - c * u.sin()).collect();
        let expected_d_u: Vec<f64> = (0..n)
            .map(|i| 2.0 * w[i] * u1[i] * (1.0 - c * u0[i].cos()))
            .collect();
        assert_close(&d_u, &expected_d_u);
        assert_close(&d_w, &u1.iter().map(|u| u * u).collect::<Vec<_>>());
        result
    };
    let u1: Vec<f64> = u0.iter().map(|u| u - c * u.sin()).collect();
    let expected_d_c: f64 = (0..n).map(|i| -2.0 * w[i] * u1[i] * u0[i].sin()).sum();
    assert_close(&[d_c], &[expected_d_c]);
    assert_eq!(grad.len(), 2 * n + 1);
}

// ---------------------------------------------------------------------------
// `wrt` on either side: the split API differentiates with respect to every
// float parameter, so a callee's `wrt` never drops a caller's gradient.

#[differentiate(wrt(a))]
fn scaled(a: f64, b: f64) -> f64 {
    a * b.exp()
}

#[differentiate(wrt(x))]
fn uses_scaled(x: f64, c: f64) -> f64 {
    scaled(c, x * x)
}

#[test]
fn wrt_of_the_callee_does_not_drop_the_callers_gradient() {
    let (x, c) = (0.7, 1.9);
    let (out, d_x) = uses_scaled_vjp(x, c, 1.0);
    assert_eq!(out, uses_scaled(x, c));
    // d/dx c e^{x²} = 2 x c e^{x²}.
    assert_close(&[d_x], &[2.0 * x * c * (x * x).exp()]);
    check_scalar(
        |p| uses_scaled(p[0], c),
        |p, seed| {
            let (out, d_x) = uses_scaled_vjp(p[0], c, seed);
            (out, vec![d_x])
        },
        &[x],
    );
}

// ---------------------------------------------------------------------------
// Custom rules.

/// `ln(1 + eˣ)`: the naive derivative `eˣ / (1 + eˣ)` is NaN for large `x`.
#[custom_vjp(softplus_rule)]
fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

/// The logistic function, stable for every `x`.
fn softplus_rule(x: f64, _out: f64, d_out: f64) -> f64 {
    d_out / (1.0 + (-x).exp())
}

#[differentiate]
fn softplus_loss(w: f64, x: f64) -> f64 {
    softplus(w * x) + softplus(-w)
}

#[test]
fn a_custom_rule_is_used_by_its_vjp_and_by_callers() {
    let sigmoid = |t: f64| 1.0 / (1.0 + (-t).exp());
    for x in [-3.0, 0.0, 2.5, 800.0] {
        let (out, d_x) = softplus_vjp(x, 1.0);
        assert_eq!(out, softplus(x));
        assert_close(&[d_x], &[sigmoid(x)]);
    }
    let (w, x) = (0.9, -1.7);
    let grad = check_scalar(
        |p| softplus_loss(p[0], p[1]),
        |p, seed| {
            let (out, d_w, d_x) = softplus_loss_vjp(p[0], p[1], seed);
            (out, vec![d_w, d_x])
        },
        &[w, x],
    );
    assert_close(
        &grad,
        &[x * sigmoid(w * x) - sigmoid(-w), w * sigmoid(w * x)],
    );
}

/// A rule for a function of a slice: the rule adds into the shadow.
#[custom_vjp(norm_rule)]
fn norm(xs: &[f64]) -> f64 {
    xs.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn norm_rule(xs: &[f64], d_xs: &mut [f64], out: f64, d_out: f64) {
    for (d, x) in d_xs.iter_mut().zip(xs) {
        *d += d_out * x / out;
    }
}

#[differentiate]
fn normalized_first(xs: &[f64]) -> f64 {
    xs[0] / norm(xs)
}

#[test]
fn a_custom_rule_with_a_buffer() {
    let xs = [3.0, 4.0, 12.0];
    let f = |p: &[f64]| normalized_first(p);
    let vjp = |p: &[f64], seed: f64| {
        let mut d_xs = vec![0.0; p.len()];
        let out = normalized_first_vjp(p, &mut d_xs, seed);
        (out, d_xs)
    };
    let grad = check_scalar(f, vjp, &xs);
    // x₀ / ‖x‖: δ₀ⱼ/‖x‖ − x₀ xⱼ/‖x‖³.
    let n = 13.0_f64;
    let expected: Vec<f64> = (0..3)
        .map(|j| f64::from(u8::from(j == 0)) / n - xs[0] * xs[j] / (n * n * n))
        .collect();
    assert_close(&grad, &expected);
}

// ---------------------------------------------------------------------------
// A custom rule in a loop whose adjoint runs on its own (the call's output is
// stored, and a second loop reads it): the caller keeps the rule's pullback
// on its tape, and the adjoint never calls the function again.

thread_local! {
    /// How many times `counted_clip` ran.
    static CLIP_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn clip_calls() -> usize {
    CLIP_CALLS.with(std::cell::Cell::get)
}

#[custom_vjp(counted_clip_rule)]
fn counted_clip<T: ad_runtime::Float>(x: T) -> T {
    CLIP_CALLS.with(|calls| calls.set(calls.get() + 1));
    x.tanh()
}

fn counted_clip_rule<T: ad_runtime::Float>(_x: T, out: T, d_out: T) -> T {
    d_out * (T::ONE - out * out)
}

/// `Σ yᵢ yᵢ₊₁` with `yᵢ = tanh(xᵢ) wᵢ` for every third `i` and `xᵢ wᵢ`
/// otherwise: the rule's call sits in a branch, in a loop whose adjoint
/// runs backwards after the second loop's.
#[differentiate]
fn clipped_pairs<T: ad_runtime::Float>(x: &[T], w: &[T]) -> T {
    let n = x.len();
    let mut y = vec![T::ZERO; n];
    for i in 0..n {
        if i % 3 == 0 {
            y[i] = counted_clip(x[i]) * w[i];
        } else {
            y[i] = x[i] * w[i];
        }
    }
    let mut s = T::ZERO;
    for i in 0..n - 1 {
        s += y[i] * y[i + 1];
    }
    s
}

/// The same with every element clipped, outside any branch.
#[differentiate]
fn all_clipped_pairs(x: &[f64], w: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = counted_clip(x[i]) * w[i];
    }
    let mut s = 0.0;
    for i in 0..n - 1 {
        s += y[i] * y[i + 1];
    }
    s
}

/// `∂/∂xᵢ Σ yⱼ yⱼ₊₁ = (yᵢ₋₁ + yᵢ₊₁) ∂yᵢ/∂xᵢ`, and `∂/∂wᵢ` likewise.
fn clipped_pairs_gradient(x: &[f64], w: &[f64], clipped: impl Fn(usize) -> bool) -> Vec<f64> {
    let n = x.len();
    let y: Vec<f64> = (0..n)
        .map(|i| if clipped(i) { x[i].tanh() } else { x[i] } * w[i])
        .collect();
    let neighbours = |i: usize| {
        let before = if i > 0 { y[i - 1] } else { 0.0 };
        before + y.get(i + 1).copied().unwrap_or(0.0)
    };
    let d_x = (0..n).map(|i| {
        let slope = if clipped(i) {
            1.0 - x[i].tanh().powi(2)
        } else {
            1.0
        };
        neighbours(i) * w[i] * slope
    });
    let d_w = (0..n).map(|i| neighbours(i) * if clipped(i) { x[i].tanh() } else { x[i] });
    d_x.chain(d_w).collect()
}

/// The `_vjp` of `f(x, w)` over the flat point `(x…, w…)`.
fn pairs_vjp(
    vjp: impl Fn(&[f64], &mut [f64], &[f64], &mut [f64], f64) -> f64,
) -> impl Fn(&[f64], f64) -> (f64, Vec<f64>) {
    move |p, seed| {
        let n = p.len() / 2;
        let mut grad = vec![0.0; 2 * n];
        let (d_x, d_w) = grad.split_at_mut(n);
        let out = vjp(&p[..n], d_x, &p[n..], d_w, seed);
        (out, grad)
    }
}

#[test]
fn a_custom_rule_in_a_loop_is_kept_not_called_again() {
    let x = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9];
    let w = [1.1, 0.7, -0.5, 0.9, 1.3, -0.8, 0.6];
    let point: Vec<f64> = x.iter().chain(&w).copied().collect();
    let n = x.len();
    let split = |p: &[f64]| (p[..n].to_vec(), p[n..].to_vec());

    let grad = check_scalar(
        |p| all_clipped_pairs(&split(p).0, &split(p).1),
        pairs_vjp(all_clipped_pairs_vjp),
        &point,
    );
    assert_close(&grad, &clipped_pairs_gradient(&x, &w, |_| true));
    let grad = check_scalar(
        |p| clipped_pairs(&split(p).0, &split(p).1),
        pairs_vjp(clipped_pairs_vjp),
        &point,
    );
    assert_close(&grad, &clipped_pairs_gradient(&x, &w, |i| i % 3 == 0));

    // One call per element the primal clips: none in the adjoint.
    let (mut d_x, mut d_w) = ([0.0; 7], [0.0; 7]);
    let before = clip_calls();
    all_clipped_pairs_vjp(&x, &mut d_x, &w, &mut d_w, 1.0);
    assert_eq!(clip_calls() - before, n);
    let before = clip_calls();
    clipped_pairs_vjp(&x, &mut d_x, &w, &mut d_w, 1.0);
    assert_eq!(clip_calls() - before, 3);

    // The split API's pullback, run twice, reads what it kept.
    let before = clip_calls();
    let (_, pullback) = clipped_pairs_forward(&x, &w);
    let mut twice = Vec::new();
    for _ in 0..2 {
        let (mut d_x, mut d_w) = ([0.0; 7], [0.0; 7]);
        pullback(&x, &mut d_x, &w, &mut d_w, 1.0);
        twice.push(d_x.iter().chain(&d_w).copied().collect::<Vec<f64>>());
    }
    assert_eq!(clip_calls() - before, 3);
    assert_close(&twice[0], &clipped_pairs_gradient(&x, &w, |i| i % 3 == 0));
    assert_eq!(twice[0], twice[1]);

    // In `f32`, the same gradient to `f32` rounding.
    let (x32, w32) = (x.map(|v| v as f32), w.map(|v| v as f32));
    let (mut d_x32, mut d_w32) = ([0.0_f32; 7], [0.0_f32; 7]);
    let before = clip_calls();
    clipped_pairs_vjp(&x32, &mut d_x32, &w32, &mut d_w32, 1.0);
    assert_eq!(clip_calls() - before, 3);
    let expected = clipped_pairs_gradient(&x, &w, |i| i % 3 == 0);
    for (got, want) in d_x32.iter().chain(&d_w32).zip(&expected) {
        assert!(
            (f64::from(*got) - want).abs() < 1e-5,
            "{got} against {want}"
        );
    }
}

/// `c · tanh(xs[i])`, with a rule taking a buffer, an index and a float:
/// the kept builder takes `i` and `c`, the pullback `xs` and its shadow.
#[custom_vjp(scaled_clip_rule)]
fn scaled_clip(xs: &[f64], i: usize, c: f64) -> f64 {
    CLIP_CALLS.with(|calls| calls.set(calls.get() + 1));
    c * xs[i].tanh()
}

fn scaled_clip_rule(xs: &[f64], d_xs: &mut [f64], i: usize, c: f64, out: f64, d_out: f64) -> f64 {
    let t = out / c;
    d_xs[i] += d_out * c * (1.0 - t * t);
    d_out * xs[i].tanh()
}

/// `(Σᵢ c tanh xᵢ)²`: the sum's adjoint is known only after the loop, and
/// no other adjoint code reads the calls' outputs, so each is kept with
/// what builds its pullback.
#[differentiate]
fn squared_clip_sum(x: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += scaled_clip(x, i, c);
    }
    s * s
}

#[test]
fn a_custom_rule_of_a_buffer_an_index_and_a_float_in_a_loop() {
    let x = [0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.9];
    let c = 0.7;
    let mut point = x.to_vec();
    point.push(c);
    let grad = check_scalar(
        |p| squared_clip_sum(&p[..7], p[7]),
        ad_tests::buffer_then_scalar(squared_clip_sum_vjp),
        &point,
    );
    // d/dxᵢ (Σ c tanh x)² = 2 s c (1 − tanh² xᵢ); d/dc = 2 s Σ tanh x.
    let total: f64 = x.iter().map(|v| v.tanh()).sum();
    let s = c * total;
    let mut expected: Vec<f64> = x
        .iter()
        .map(|v| 2.0 * s * c * (1.0 - v.tanh().powi(2)))
        .collect();
    expected.push(2.0 * s * total);
    assert_close(&grad, &expected);
    let before = clip_calls();
    let mut d_x = [0.0; 7];
    squared_clip_sum_vjp(&x, &mut d_x, c, 1.0);
    assert_eq!(
        clip_calls() - before,
        7,
        "one call per element, none in the adjoint"
    );
}

/// `Σ cₖ aₖ` over thirteen floats: more arguments than the runtime builds a
/// rule's pullback from (twelve), so a caller in a loop makes the call again.
#[custom_vjp(weighted13_rule)]
#[allow(clippy::too_many_arguments)]
fn weighted13(
    a0: f64,
    a1: f64,
    a2: f64,
    a3: f64,
    a4: f64,
    a5: f64,
    a6: f64,
    a7: f64,
    a8: f64,
    a9: f64,
    a10: f64,
    a11: f64,
    a12: f64,
) -> f64 {
    let a = [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12];
    a.iter().enumerate().map(|(k, v)| (k + 1) as f64 * v).sum()
}

#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn weighted13_rule(
    _a0: f64,
    _a1: f64,
    _a2: f64,
    _a3: f64,
    _a4: f64,
    _a5: f64,
    _a6: f64,
    _a7: f64,
    _a8: f64,
    _a9: f64,
    _a10: f64,
    _a11: f64,
    _a12: f64,
    _out: f64,
    d: f64,
) -> (
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
) {
    (
        d,
        2.0 * d,
        3.0 * d,
        4.0 * d,
        5.0 * d,
        6.0 * d,
        7.0 * d,
        8.0 * d,
        9.0 * d,
        10.0 * d,
        11.0 * d,
        12.0 * d,
        13.0 * d,
    )
}

/// `(Σᵢ weighted13(xᵢ, …, xᵢ))²`, the loop's adjoint on its own.
#[differentiate]
fn squared_weighted13(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += weighted13(v, v, v, v, v, v, v, v, v, v, v, v, v);
    }
    s * s
}

#[test]
fn a_custom_rule_of_thirteen_floats_in_a_loop() {
    let x = [0.3, -1.2, 0.8];
    let grad = check_scalar(
        squared_weighted13,
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = squared_weighted13_vjp(p, &mut d, seed);
            (out, d)
        },
        &x,
    );
    // s = 91 Σ x, so the gradient is 2 · 91² Σ x in every coordinate.
    let expected = 2.0 * 91.0 * 91.0 * x.iter().sum::<f64>();
    assert_close(&grad, &[expected; 3]);
}

// ---------------------------------------------------------------------------
// Recursion: the determinant by expansion in minors along the first row.

#[differentiate]
fn det(a: &[f64], n: usize) -> f64 {
    let mut minor = vec![0.0; (n - 1) * (n - 1)];
    if n == 1 {
        return a[0];
    }
    let mut total = 0.0;
    for j in 0..n {
        for r in 1..n {
            let mut k = 0;
            for c in 0..n {
                if c != j {
                    minor[(r - 1) * (n - 1) + k] = a[r * n + c];
                    k += 1;
                }
            }
        }
        let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
        total += sign * a[j] * det(&minor, n - 1);
    }
    total
}

#[test]
fn recursion_determinant_by_minors() {
    let a = [2.0, -1.0, 0.5, 1.5, 3.0, -2.0, 0.25, 1.0, 4.0];
    let f = |p: &[f64]| det(p, 3);
    let vjp = |p: &[f64], seed: f64| {
        let mut d_a = vec![0.0; p.len()];
        let out = det_vjp(p, &mut d_a, 3, seed);
        (out, d_a)
    };
    let grad = check_scalar(f, vjp, &a);
    // ∂ det A / ∂ a_ij is the cofactor C_ij.
    let m = |i: usize, j: usize| a[i * 3 + j];
    let cofactor = |i: usize, j: usize| {
        let rows: Vec<usize> = (0..3).filter(|&r| r != i).collect();
        let cols: Vec<usize> = (0..3).filter(|&c| c != j).collect();
        let minor =
            m(rows[0], cols[0]) * m(rows[1], cols[1]) - m(rows[0], cols[1]) * m(rows[1], cols[0]);
        if (i + j).is_multiple_of(2) {
            minor
        } else {
            -minor
        }
    };
    let expected: Vec<f64> = (0..9).map(|k| cofactor(k / 3, k % 3)).collect();
    assert_close(&grad, &expected);
    let direct = (0..3).map(|j| m(0, j) * cofactor(0, j)).sum::<f64>();
    assert_close(&[det(&a, 3)], &[direct]);
}

// ---------------------------------------------------------------------------
// The split API used directly: one forward pass, several pullbacks.

#[differentiate]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

#[test]
fn one_forward_pass_and_a_pullback_per_row_of_the_jacobian() {
    let (out, pullback) = polar_forward(3.0, 4.0);
    assert_eq!(out, polar(3.0, 4.0));
    let rows = [pullback((1.0, 0.0)), pullback((0.0, 1.0))];
    for (row, seed) in rows.iter().zip([(1.0, 0.0), (0.0, 1.0)]) {
        let (_, d_x, d_y) = polar_vjp(3.0, 4.0, seed);
        assert_eq!(*row, (d_x, d_y));
    }
    assert_close(
        &[rows[0].0, rows[0].1, rows[1].0, rows[1].1],
        &[0.6, 0.8, -0.16, 0.12],
    );
}

#[test]
fn a_pullback_that_reads_tapes_can_run_again() {
    let (out, pullback) = iterate_forward(3.3, 0.3, 5);
    assert_eq!(out, iterate(3.3, 0.3, 5));
    let first = pullback(1.0);
    let again = pullback(1.0);
    let scaled = pullback(-2.0);
    assert_eq!(first, again);
    let (_, d_r, d_x0) = iterate_vjp(3.3, 0.3, 5, 1.0);
    assert_eq!(first, (d_r, d_x0));
    assert_close(&[scaled.0, scaled.1], &[-2.0 * d_r, -2.0 * d_x0]);
}

#[test]
fn the_split_api_with_buffers() {
    let w = [1.0, 2.0];
    let xs = [0.5, -1.5];
    let (out, pullback) = weighted_forward(&w, &xs);
    assert_eq!(out, weighted(&w, &xs));
    let (mut d_w, mut d_xs) = (vec![0.0; 2], vec![0.0; 2]);
    pullback(&w, &mut d_w, &xs, &mut d_xs, 1.0);
    assert_close(&d_w, &[0.25, 2.25]);
    assert_close(&d_xs, &[1.0, -6.0]);

    let mut u = vec![0.5, 1.0];
    let ((), pullback) = relax_forward(&mut u, 0.5);
    let mut d_u = vec![1.0, 0.0];
    let d_c = pullback(&u, &mut d_u, ());
    assert_close(&d_u, &[1.0 - 0.5 * 0.5_f64.cos(), 0.0]);
    assert_close(&[d_c], &[-(0.5_f64.sin())]);
}

// ---------------------------------------------------------------------------
// Generic floats: one function for `f32` and `f64`.

use ad_runtime::Float;

/// `½ Σᵢ ln(1 + e^{w xᵢ}) / (i + 1)`, with a generic helper call.
#[differentiate]
fn smooth_sum<T: Float>(xs: &[T], w: T) -> T {
    let mut s = T::ZERO;
    for (i, &x) in xs.iter().enumerate() {
        s += generic_softplus(w * x) / T::from_i32(i as i32 + 1);
    }
    s * T::HALF
}

#[differentiate]
fn generic_softplus<T: Float>(x: T) -> T {
    x.exp().ln_1p()
}

#[test]
fn one_generic_function_for_f32_and_f64() {
    let xs = [0.5, -1.0, 2.0];
    let w = 0.75;
    let sigmoid = |t: f64| 1.0 / (1.0 + (-t).exp());
    let f = |p: &[f64]| smooth_sum(&p[..3], p[3]);
    let vjp = |p: &[f64], seed: f64| {
        let mut d_xs = vec![0.0; 3];
        let (out, d_w) = smooth_sum_vjp(&p[..3], &mut d_xs, p[3], seed);
        d_xs.push(d_w);
        (out, d_xs)
    };
    let grad = check_scalar(f, vjp, &[xs[0], xs[1], xs[2], w]);
    let expected_xs: Vec<f64> = (0..3)
        .map(|i| 0.5 * w * sigmoid(w * xs[i]) / (i as f64 + 1.0))
        .collect();
    let expected_w: f64 = (0..3)
        .map(|i| 0.5 * xs[i] * sigmoid(w * xs[i]) / (i as f64 + 1.0))
        .sum();
    assert_close(&grad[..3], &expected_xs);
    assert_close(&grad[3..], &[expected_w]);

    // The same function in single precision agrees to f32 accuracy.
    let xs32 = xs.map(|x| x as f32);
    let mut d_xs32 = [0.0_f32; 3];
    let (out32, d_w32) = smooth_sum_vjp(&xs32, &mut d_xs32, w as f32, 1.0_f32);
    assert!((f64::from(out32) - f(&[xs[0], xs[1], xs[2], w])).abs() < 1e-6);
    assert!((f64::from(d_w32) - expected_w).abs() < 1e-6);
    for (d32, d64) in d_xs32.iter().zip(&expected_xs) {
        assert!((f64::from(*d32) - d64).abs() < 1e-6, "{d32} vs {d64}");
    }
}

/// Conversions through `f64` inside a generic function.
#[differentiate]
fn through_f64<T: Float>(w: T) -> T {
    T::from_f64(w.to_f64().sin()) * w
}

#[test]
fn conversions_through_f64_in_a_generic_function() {
    for w in [0.3, -1.2] {
        let grad = check_scalar(
            |p| through_f64(p[0]),
            |p, seed| {
                let (out, d_w) = through_f64_vjp(p[0], seed);
                (out, vec![d_w])
            },
            &[w],
        );
        assert_close(&grad, &[w.cos() * w + w.sin()]);
        let (_, d_w32) = through_f64_vjp(w as f32, 1.0_f32);
        assert!((f64::from(d_w32) - grad[0]).abs() < 1e-6);
    }
}

/// Callees of another float type than the caller: `sq(x as f64)` in an
/// `f32` function returns an `f64`, and its pullback takes one.
#[differentiate(vjp, jvp)]
fn square64(x: f64) -> f64 {
    x * x
}

#[differentiate(vjp, jvp)]
fn cube32(x: f32) -> f32 {
    x * x * x
}

#[differentiate(vjp, jvp)]
fn single_through_double(x: f32) -> f32 {
    (square64(f64::from(x)) as f32).sin() + x
}

#[differentiate(vjp, jvp)]
fn double_through_single(x: f64) -> f64 {
    f64::from(cube32(x as f32)) * x
}

#[differentiate(vjp, jvp)]
fn generic_through_double<T: Float>(x: T) -> T {
    T::from_f64(square64(x.to_f64()).ln_1p()) * x
}

/// A tuple callee of another float type, its elements cast.
#[differentiate(vjp, jvp)]
fn polar64(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

#[differentiate(vjp, jvp)]
fn single_through_tuple(x: f32, y: f32) -> f32 {
    let (r, t) = polar64(f64::from(x), f64::from(y));
    (r as f32) * (t as f32).sin()
}

#[test]
fn callees_of_another_float_type() {
    // r sin t = y.
    let (out, d_x, d_y) = single_through_tuple_vjp(0.6, 0.8, 1.0);
    assert!((out - 0.8).abs() < 1e-6 && d_x.abs() < 1e-6 && (d_y - 1.0).abs() < 1e-6);
    let (_, tangent) = single_through_tuple_jvp(0.6, 0.3, 0.8, 0.5);
    assert!((tangent - 0.5).abs() < 1e-6);

    let x = 0.7_f32;
    let xd = f64::from(x);
    let close = |a: f32, b: f64| assert!((f64::from(a) - b).abs() < 1e-5 * (1.0 + b.abs()));
    // d/dx sin(x²) + x
    let expected = 2.0 * xd * (xd * xd).cos() + 1.0;
    let (out, d_x) = single_through_double_vjp(x, 1.0);
    assert_eq!(out, single_through_double(x));
    close(d_x, expected);
    close(single_through_double_jvp(x, 1.0).1, expected);
    // d/dx x³·x with x³ in single precision.
    let (out, d_x) = double_through_single_vjp(xd, 1.0);
    assert_eq!(out, double_through_single(xd));
    assert!((d_x - 4.0 * xd.powi(3)).abs() < 1e-5);
    // Forward mode rounds its `f32` tangent in another order.
    assert!((double_through_single_jvp(xd, 1.0).1 - d_x).abs() < 1e-5);
    // d/dx ln(1 + x²)·x, in f32 and in f64.
    let expected = 2.0 * xd * xd / (1.0 + xd * xd) + (xd * xd).ln_1p();
    close(generic_through_double_vjp(x, 1.0).1, expected);
    close(generic_through_double_jvp(x, 1.0).1, expected);
    let grad = check_scalar(
        |p| generic_through_double(p[0]),
        |p, seed| {
            let (out, d_x) = generic_through_double_vjp(p[0], seed);
            (out, vec![d_x])
        },
        &[xd],
    );
    assert_close(&grad, &[expected]);
}

// ---------------------------------------------------------------------------
// A constant buffer passed to a callee in a loop: the callee's pullback gets
// a scratch shadow for it.

#[differentiate]
fn scaled_sum(a: f64, xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for &x in xs {
        s += a * x * x;
    }
    s
}

#[differentiate(wrt(x))]
fn repeated(x: f64, data: &[f64], n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        s = 0.5 * s + scaled_sum(s, data);
    }
    s
}

#[test]
fn a_constant_buffer_passed_to_a_callee_in_a_loop() {
    let data = [0.1, -0.2, 0.3];
    let q: f64 = data.iter().map(|d| d * d).sum();
    for n in [0, 1, 3] {
        let grad = check_scalar(
            |p| repeated(p[0], &data, n),
            |p, seed| {
                let (out, d_x) = repeated_vjp(p[0], &data, n, seed);
                (out, vec![d_x])
            },
            &[0.8],
        );
        // s ↦ (0.5 + q) s, n times.
        assert_close(&grad, &[(0.5 + q).powi(n as i32)]);
    }
}

// ---------------------------------------------------------------------------
// A callee in another crate: `ad_tests::fixtures::power` is `pub`, and so is
// its `power_forward`.

#[differentiate]
fn across_crates(x: f64, n: usize) -> f64 {
    ad_tests::fixtures::power(x.sin(), n) + x
}

#[test]
fn a_callee_in_another_crate() {
    for n in [0, 1, 4] {
        let grad = check_scalar(
            |p| across_crates(p[0], n),
            |p, seed| {
                let (out, d_x) = across_crates_vjp(p[0], n, seed);
                (out, vec![d_x])
            },
            &[0.9],
        );
        // d/dx sin(x)ⁿ + x = n sin(x)ⁿ⁻¹ cos x + 1.
        let expected = if n == 0 {
            1.0
        } else {
            n as f64 * 0.9_f64.sin().powi(n as i32 - 1) * 0.9_f64.cos() + 1.0
        };
        assert_close(&grad, &[expected]);
    }
}

// ---------------------------------------------------------------------------
// A callee imported with a glob brings its `_forward` with it.

mod glob_importer {
    use super::shapes::*;
    use ad_runtime::differentiate;

    #[differentiate]
    pub(crate) fn doubled_radius(x: f64, y: f64) -> f64 {
        2.0 * radius(x, y)
    }
}

#[test]
fn a_callee_imported_with_a_glob() {
    let (x, y) = (3.0, 4.0);
    let grad = check_scalar(
        |p| glob_importer::doubled_radius(p[0], p[1]),
        |p, seed| {
            let (out, d_x, d_y) = glob_importer::doubled_radius_vjp(p[0], p[1], seed);
            (out, vec![d_x, d_y])
        },
        &[x, y],
    );
    assert_close(&grad, &[2.0 * 0.6, 2.0 * 0.8]);
}

// ---------------------------------------------------------------------------
// The split API of a function calling in a branch inside a loop: the
// pullbacks are carried out of the branch as `Option` and taped; the outer
// pullback reads them back, and can run twice.

#[differentiate]
fn branchy_sum(x: f64, n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        let t = x + i as f64 * 0.1;
        if i % 2 == 0 {
            s += square(t);
        } else {
            s += t.sin();
        }
    }
    s
}

#[test]
fn pullbacks_of_branches_in_a_loop_run_again() {
    let x = 0.4;
    let n = 5;
    let grad = check_scalar(
        |p| branchy_sum(p[0], n),
        |p, seed| {
            let (out, d_x) = branchy_sum_vjp(p[0], n, seed);
            (out, vec![d_x])
        },
        &[x],
    );
    let expected: f64 = (0..n)
        .map(|i| {
            let t = x + i as f64 * 0.1;
            if i % 2 == 0 { 2.0 * t } else { t.cos() }
        })
        .sum();
    assert_close(&grad, &[expected]);
    let (out, pullback) = branchy_sum_forward(x, n);
    assert_eq!(out, branchy_sum(x, n));
    // `_vjp` runs the adjoint in the primal loop (fusion), adding the same
    // terms in the other order: equal to rounding. The pullback, run twice,
    // gives the same bits.
    let once = pullback(1.0);
    assert_close(&[once], &grad);
    assert_eq!(pullback(1.0).to_bits(), once.to_bits());
    assert_close(&[pullback(-3.0)], &[-3.0 * grad[0]]);
}

/// A callee in a `while` loop: its tape grows as the loop runs.
#[differentiate]
fn halvings(x: f64) -> f64 {
    let mut y = x;
    while y > 1.0 {
        y = square(y.sqrt() * 0.5);
    }
    y
}

#[test]
fn a_callee_in_a_while_loop() {
    // y ↦ y / 4 until y ≤ 1: for x = 20, three steps give x / 64.
    let grad = check_scalar(
        |p| halvings(p[0]),
        |p, seed| {
            let (out, d_x) = halvings_vjp(p[0], seed);
            (out, vec![d_x])
        },
        &[20.0],
    );
    assert_close(&grad, &[1.0 / 64.0]);
    let (_, pullback) = halvings_forward(20.0);
    assert_close(&[pullback(1.0), pullback(2.0)], &[1.0 / 64.0, 2.0 / 64.0]);
}

// ---------------------------------------------------------------------------
// The split API honours `wrt` as `_vjp` does (issue 22): each combination of
// active and constant scalars and buffers; callers still get every adjoint.

// Through `macro_rules!`, generated functions this test does not call are
// reported as unused.
#[allow(dead_code)]
mod split_wrt {
    use ad_runtime::differentiate;

    /// The function under every `wrt`.
    macro_rules! model {
        ($name:ident, $($wrt:tt)*) => {
            #[differentiate($($wrt)*)]
            pub(super) fn $name(a: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
                xs.iter().zip(ys).map(|(x, y)| (a * x - y).powi(2)).sum::<f64>() * b.exp()
            }
        };
    }
    model!(all,);
    model!(scalar_a, wrt(a));
    model!(buffer_xs, wrt(xs));
    model!(mixed, wrt(b, ys));

    /// A caller of the `wrt` versions: it gets every adjoint through
    /// `_forward_all`.
    #[differentiate]
    pub(super) fn caller(a: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
        scalar_a(a, b, xs, ys) + buffer_xs(a, b, xs, ys) + mixed(a, b, xs, ys)
    }
}

#[test]
fn the_split_api_honours_wrt() {
    use split_wrt::*;
    let (a, b) = (0.7, -0.3);
    let xs = [0.5, -1.0, 2.0];
    let ys = [1.5, 0.25, -0.5];
    let (out, d_a, d_b) = {
        let (mut d_xs, mut d_ys) = ([0.0; 3], [0.0; 3]);
        let (out, d_a, d_b) = all_vjp(a, b, &xs, &mut d_xs, &ys, &mut d_ys, 1.0);
        assert_eq!(
            all_vjp(a, b, &xs, &mut [0.0; 3], &ys, &mut [0.0; 3], 1.0).0,
            out
        );
        (out, d_a, d_b)
    };
    let (mut all_xs, mut all_ys) = ([0.0; 3], [0.0; 3]);
    all_vjp(a, b, &xs, &mut all_xs, &ys, &mut all_ys, 1.0);

    // wrt(a): the pullback takes the buffers as they are, returns d_a.
    let (o, pullback) = scalar_a_forward(a, b, &xs, &ys);
    assert_eq!(o, out);
    assert_eq!(pullback(&xs, &ys, 1.0), d_a);
    assert_eq!(scalar_a_vjp(a, b, &xs, &ys, 1.0), (out, d_a));

    // wrt(xs): a shadow for xs only, no float adjoint.
    let (o, pullback) = buffer_xs_forward(a, b, &xs, &ys);
    assert_eq!(o, out);
    let mut d_xs = [0.0; 3];
    pullback(&xs, &mut d_xs, &ys, 1.0);
    assert_eq!(d_xs, all_xs);

    // wrt(b, ys): d_b returned, ys's adjoint added into its shadow.
    let (o, pullback) = mixed_forward(a, b, &xs, &ys);
    assert_eq!(o, out);
    let mut d_ys = [0.0; 3];
    assert_eq!(pullback(&xs, &ys, &mut d_ys, 1.0), d_b);
    assert_eq!(d_ys, all_ys);

    // Without `wrt`, everything.
    let (o, pullback) = all_forward(a, b, &xs, &ys);
    assert_eq!(o, out);
    let (mut d_xs, mut d_ys) = ([0.0; 3], [0.0; 3]);
    assert_eq!(pullback(&xs, &mut d_xs, &ys, &mut d_ys, 1.0), (d_a, d_b));
    assert_eq!((d_xs, d_ys), (all_xs, all_ys));

    // A caller of the three `wrt` versions gets three times every adjoint.
    let (mut c_xs, mut c_ys) = ([0.0; 3], [0.0; 3]);
    let (c_out, c_a, c_b) = caller_vjp(a, b, &xs, &mut c_xs, &ys, &mut c_ys, 1.0);
    assert_eq!(c_out, 3.0 * out);
    assert!((c_a - 3.0 * d_a).abs() < 1e-12 && (c_b - 3.0 * d_b).abs() < 1e-12);
    for k in 0..3 {
        assert!((c_xs[k] - 3.0 * all_xs[k]).abs() < 1e-12);
        assert!((c_ys[k] - 3.0 * all_ys[k]).abs() < 1e-12);
    }
}

/// A generic callee, called with its type written out (`gate::<f64>(…)`):
/// its entry points take the same generic arguments, in every mode.
#[differentiate(vjp, jvp, jvp_lanes)]
fn gate<T: ad_runtime::Float>(x: T) -> T {
    x.tanh() * T::HALF + T::HALF
}

#[differentiate(vjp, jvp, jvp_lanes)]
fn gated_sum(xs: &[f64], w: f64) -> f64 {
    let mut s = 0.0;
    for &v in xs {
        s += gate::<f64>(w * v);
    }
    s
}

#[test]
fn a_generic_callee_called_with_a_turbofish() {
    let p = [0.3, -0.5, 1.2, 0.7];
    let n = p.len() - 1;
    let grad = check_scalar(
        |p| gated_sum(&p[..n], p[n]),
        ad_tests::buffer_then_scalar(gated_sum_vjp),
        &p,
    );
    // d/dz (tanh z + 1)/2 = (1 − tanh² z)/2 at z = w v.
    let w = p[n];
    let dz = |v: f64| 0.5 * (1.0 - (w * v).tanh().powi(2));
    let mut expected: Vec<f64> = p[..n].iter().map(|&v| dz(v) * w).collect();
    expected.push(p[..n].iter().map(|&v| dz(v) * v).sum());
    assert_close(&grad, &expected);
    ad_tests::check_jvp(
        |p| gated_sum(&p[..n], p[n]),
        |p, u| gated_sum_jvp(&p[..n], &u[..n], p[n], u[n]),
        &grad,
        &p,
    );
    ad_tests::check_lanes(
        |p, u| {
            let (out, t) = gated_sum_jvp(&p[..n], &u[..n], p[n], u[n]);
            (vec![out], vec![t])
        },
        |p, u| {
            let (out, t) = gated_sum_jvp_lanes(&p[..n], &u[..n], p[n], u[n]);
            (vec![out], vec![t])
        },
        &p,
    );
}

#[differentiate(vjp, jvp)]
fn mean_of(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Arrays written where they are lent (`mean_of(&[x, 2.0 * y])`), also in a
/// loop, and one of constants (`&[0.5; 2]`).
#[differentiate(vjp, jvp)]
fn means_of_literals(x: f64, y: f64, xs: &[f64]) -> f64 {
    let mut s = mean_of(&[x, 2.0 * y]);
    for &v in xs {
        s += mean_of(&[v * x, y, 1.0]) * mean_of(&[0.5; 2]);
    }
    s
}

#[test]
fn arrays_written_at_the_call() {
    let p = [0.3, -0.5, 1.2, 0.7, 1.1];
    let n = 3;
    let vjp = |p: &[f64], seed: f64| {
        let mut d_xs = vec![0.0; n];
        let (out, d_x, d_y) = means_of_literals_vjp(p[n], p[n + 1], &p[..n], &mut d_xs, seed);
        d_xs.extend([d_x, d_y]);
        (out, d_xs)
    };
    let f = |p: &[f64]| means_of_literals(p[n], p[n + 1], &p[..n]);
    let grad = check_scalar(f, vjp, &p);
    // s = (x + 2y)/2 + Σ (v x + y + 1)/6.
    let (x, xs) = (p[n], &p[..n]);
    let mut expected: Vec<f64> = xs.iter().map(|_| x / 6.0).collect();
    expected.push(0.5 + xs.iter().sum::<f64>() / 6.0);
    expected.push(1.0 + n as f64 / 6.0);
    assert_close(&grad, &expected);
    ad_tests::check_jvp(
        f,
        |p, u| means_of_literals_jvp(p[n], u[n], p[n + 1], u[n + 1], &p[..n], &u[..n]),
        &grad,
        &p,
    );
}
