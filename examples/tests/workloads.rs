//! The benchmark workloads' gradients, checked as every differentiated function
//! in the suite is: against a closed form (the hand-written gradients, compared
//! by `check_all` at the benchmarked sizes), finite differences and the
//! dot-product test (at small sizes, where finite differences are cheap).

use ad_examples::workloads::{
    check_all, inputs, lse_detached, lse_detached_vjp, lse_loops, lse_loops_vjp, lse_primitive,
    lse_primitive_vjp, rosenbrock, rosenbrock_hand_best, rosenbrock_vjp, w3, w3_vjp,
};
use ad_runtime::check;

const TOL: f64 = 1e-7;

/// Finite differences and the dot-product test for a scalar function of a
/// slice and its `_vjp`; the `_vjp` must return the primal's output and be
/// linear in the seed.
fn check_slice_vjp(f: fn(&[f64]) -> f64, vjp: fn(&[f64], &mut [f64], f64) -> f64, x: &[f64]) {
    let grad = |seed: f64| {
        move |p: &[f64]| {
            let mut d = vec![0.0; p.len()];
            let out = vjp(p, &mut d, seed);
            assert_eq!(out.to_bits(), f(p).to_bits(), "`_vjp` returns the primal");
            d
        }
    };
    check::gradient(f, grad(1.0), x).assert_within(TOL);
    check::dot_product_scalar(f, grad(1.0), x).assert_within(TOL);
    let (once, thrice) = (grad(1.0)(x), grad(3.0)(x));
    for (a, b) in once.iter().zip(&thrice) {
        assert!((3.0 * a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} {b}");
    }
}

#[test]
fn hand_written_gradients_agree_with_the_generated_ones() {
    // Panics on the first disagreement, naming the workload.
    check_all();
}

#[test]
fn w1_and_w4_against_finite_differences_and_the_dot_product_test() {
    check_slice_vjp(rosenbrock, rosenbrock_vjp, &inputs(12, -1.5, 1.5));
    let x = inputs(9, -5.0, 5.0);
    check_slice_vjp(lse_loops, lse_loops_vjp, &x);
    check_slice_vjp(lse_detached, lse_detached_vjp, &x);
    check_slice_vjp(lse_primitive, lse_primitive_vjp, &x);
}

#[test]
fn the_best_hand_written_rosenbrock_gradient_is_a_gradient() {
    let x = inputs(12, -1.5, 1.5);
    let grad = |p: &[f64]| {
        let mut g = vec![0.0; p.len()];
        rosenbrock_hand_best(p, &mut g, 1.0);
        g
    };
    check::gradient(rosenbrock, grad, &x).assert_within(TOL);
}

#[test]
fn w3_against_finite_differences_and_the_dot_product_test() {
    let f = |p: &[f64]| w3(p[0], p[1]);
    let grad = |p: &[f64]| {
        let (out, d_x, d_y) = w3_vjp(p[0], p[1], 1.0);
        assert_eq!(out.to_bits(), w3(p[0], p[1]).to_bits());
        vec![d_x, d_y]
    };
    for point in [[0.7, -0.3], [-2.1, 1.4]] {
        check::gradient(f, grad, &point).assert_within(TOL);
        check::dot_product_scalar(f, grad, &point).assert_within(TOL);
    }
}

#[test]
fn the_rk4_projectile_against_finite_differences_and_the_dot_product_test() {
    use ad_examples::workloads::{projectile_rk4, projectile_rk4_vjp};
    let f = |p: &[f64]| projectile_rk4(p[0], p[1], p[2], 200);
    let grad = |p: &[f64]| {
        let (out, d_v0, d_angle, d_drag) = projectile_rk4_vjp(p[0], p[1], p[2], 200, 1.0);
        assert_eq!(out.to_bits(), f(p).to_bits(), "`_vjp` returns the primal");
        vec![d_v0, d_angle, d_drag]
    };
    // Moderate scales: the dot-product test steps along random directions.
    let x = [3.0, 0.7, 0.5];
    check::gradient(f, grad, &x).assert_within(TOL);
    check::dot_product_scalar(f, grad, &x).assert_within(TOL);
    // Without drag, the closed form: x + y = v0 t (cos a + sin a) − g t² / 2.
    let (_, d_v0, d_angle, _) = projectile_rk4_vjp(30.0, 0.7, 0.0, 200, 1.0);
    let time = 0.2;
    assert!((d_v0 - time * (0.7f64.cos() + 0.7f64.sin())).abs() < 1e-9);
    assert!((d_angle - 30.0 * time * (0.7f64.cos() - 0.7f64.sin())).abs() < 1e-9);
}

/// The `_vjp` of a function of `(x, w)`, two halves of a flat point.
type PairVjp = fn(&[f64], &mut [f64], &[f64], &mut [f64], f64) -> f64;

/// Checks `f`'s `_vjp` at `point` (its output, finite differences, the
/// dot-product test) and that the `_vjp` of the same code with the rule's
/// function written inline gives the same gradient.
fn same_as_inline(point: &[f64], f: fn(&[f64], &[f64]) -> f64, vjp: PairVjp, inline: PairVjp) {
    let n = point.len() / 2;
    let primal = |p: &[f64]| f(&p[..n], &p[n..]);
    let grad = |vjp: PairVjp, p: &[f64]| {
        let (mut d_x, mut d_w) = (vec![0.0; n], vec![0.0; n]);
        let out = vjp(&p[..n], &mut d_x, &p[n..], &mut d_w, 1.0);
        d_x.extend(d_w);
        (out, d_x)
    };
    assert_eq!(grad(vjp, point).0.to_bits(), primal(point).to_bits());
    check::gradient(primal, |p| grad(vjp, p).1, point).assert_within(TOL);
    check::dot_product_scalar(primal, |p| grad(vjp, p).1, point).assert_within(TOL);
    for (a, b) in grad(vjp, point).1.iter().zip(&grad(inline, point).1) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
}

#[test]
fn a_custom_rule_in_a_loop_and_the_same_code_inline() {
    use ad_examples::workloads::{
        clip_layer, clip_layer_inline_vjp, clip_layer_vjp, clip_pairs, clip_pairs_inline_vjp,
        clip_pairs_vjp, clip_sum_squared, clip_sum_squared_inline_vjp, clip_sum_squared_vjp,
        silu_layer, silu_layer_inline, silu_layer_inline_vjp, silu_layer_vjp,
    };
    let n = 7;
    let point: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.9).sin() * 2.0).collect();
    // SiLU, whose rule recomputes `σ(x)`: the inline spelling is the same
    // function to rounding.
    same_as_inline(&point, silu_layer, silu_layer_vjp, silu_layer_inline_vjp);
    let (x, w) = point.split_at(n);
    assert!((silu_layer(x, w) - silu_layer_inline(x, w)).abs() < 1e-12);
    // A rule from the output, against `tanh` inline, in three loops: fused
    // with its adjoint; its output stored and read by a second loop (the
    // rule's pullback rebuilt from the taped output); the outputs read by no
    // other adjoint code (each kept with the rule's builder).
    same_as_inline(&point, clip_layer, clip_layer_vjp, clip_layer_inline_vjp);
    same_as_inline(&point, clip_pairs, clip_pairs_vjp, clip_pairs_inline_vjp);
    same_as_inline(
        &point,
        clip_sum_squared,
        clip_sum_squared_vjp,
        clip_sum_squared_inline_vjp,
    );
}

#[test]
fn the_rk4_projectile_with_returned_stages_is_the_same_function() {
    use ad_examples::workloads::{
        projectile_rk4, projectile_rk4_returned, projectile_rk4_returned_vjp, projectile_rk4_vjp,
    };
    let f = |p: &[f64]| projectile_rk4_returned(p[0], p[1], p[2], 200);
    let grad = |p: &[f64]| {
        let (out, d_v0, d_angle, d_drag) = projectile_rk4_returned_vjp(p[0], p[1], p[2], 200, 1.0);
        assert_eq!(out.to_bits(), f(p).to_bits(), "`_vjp` returns the primal");
        vec![d_v0, d_angle, d_drag]
    };
    let x = [3.0, 0.7, 0.5];
    check::gradient(f, grad, &x).assert_within(TOL);
    check::dot_product_scalar(f, grad, &x).assert_within(TOL);
    // The same arithmetic in the same order as the `&mut` spelling.
    assert_eq!(
        f(&x).to_bits(),
        projectile_rk4(x[0], x[1], x[2], 200).to_bits()
    );
    let (_, a, b, c) = projectile_rk4_vjp(x[0], x[1], x[2], 200, 1.0);
    let other = grad(&x);
    for (mine, theirs) in other.iter().zip([a, b, c]) {
        assert!((mine - theirs).abs() <= 1e-12 * theirs.abs().max(1.0));
    }
}
