//! Calls of differentiated functions in loops whose arguments the adjoint
//! can read again (loads of unchanged buffers, indices, constants): the
//! adjoint loop makes the call again for its pullback instead of saving the
//! pullback on a tape. Each function is checked three ways (finite
//! differences, the dot-product test, the primal's bits) and against a
//! closed form or an inlined version of itself.

use ad_runtime::{Tangent, differentiate};
use ad_tests::{assert_close, buffer_then_scalar, check_scalar};

#[differentiate]
fn term(p: f64, q: f64) -> f64 {
    let a = 1.0 - p;
    let b = q - p * p;
    a * a + 100.0 * b * b
}

/// Rosenbrock with its term in a helper: the call's arguments are loads.
#[differentiate]
fn rosenbrock_by_terms(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 1..x.len() {
        s += term(x[i - 1], x[i]);
    }
    s
}

/// A callee with a loop of its own, whose pullback holds a tape: made
/// again in the adjoint, its tape is made again too.
#[differentiate]
fn powers(v: f64, k: usize) -> f64 {
    let mut p = 1.0;
    let mut s = 0.0;
    for _ in 0..k {
        p *= v;
        s += p.sin();
    }
    s
}

/// Calls under a branch and in a nested loop, with a constant argument, a
/// float computed from the index and a buffer read through a slice.
#[differentiate]
fn window_sum(w: &[f64]) -> f64 {
    (w[0] * w[1]).tanh() + w[1]
}

#[differentiate]
fn mixed(x: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        if x[i] > 0.0 {
            s += powers(x[i], 3) * c;
        } else {
            s -= term(x[i], i as f64 * 0.5);
        }
        for j in 0..i {
            s += 0.1 * term(x[j], x[i]);
        }
    }
    for i in 0..x.len() - 1 {
        s += window_sum(&x[i..i + 2]);
    }
    s
}

/// `mixed` with every callee written inline: the reference.
fn mixed_inline(x: &[f64], c: f64) -> f64 {
    let term = |p: f64, q: f64| (1.0 - p).powi(2) + 100.0 * (q - p * p).powi(2);
    let powers = |v: f64, k: usize| (1..=k).map(|e| v.powi(e as i32).sin()).sum::<f64>();
    let mut s = 0.0;
    for i in 0..x.len() {
        if x[i] > 0.0 {
            s += powers(x[i], 3) * c;
        } else {
            s -= term(x[i], i as f64 * 0.5);
        }
        for j in 0..i {
            s += 0.1 * term(x[j], x[i]);
        }
    }
    for i in 0..x.len() - 1 {
        s += (x[i] * x[i + 1]).tanh() + x[i + 1];
    }
    s
}

#[test]
fn a_helper_called_for_each_term() {
    let x = [0.3, -0.7, 1.1, 0.4, -1.2];
    let grad = check_scalar(
        rosenbrock_by_terms,
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = rosenbrock_by_terms_vjp(p, &mut d, seed);
            (out, d)
        },
        &x,
    );
    let mut expected = vec![0.0; x.len()];
    for i in 1..x.len() {
        let b = x[i] - x[i - 1] * x[i - 1];
        expected[i - 1] += -2.0 * (1.0 - x[i - 1]) - 400.0 * x[i - 1] * b;
        expected[i] += 200.0 * b;
    }
    assert_close(&grad, &expected);
}

#[test]
fn calls_under_branches_in_nested_loops_and_with_slices() {
    let x = [0.3, -0.7, 1.1, 0.4, -1.2, 0.9];
    let c = 0.8;
    let mut point = x.to_vec();
    point.push(c);
    let n = x.len();
    let f = |p: &[f64]| mixed(&p[..n], p[n]);
    let vjp = buffer_then_scalar(|xs: &[f64], d: &mut [f64], c, seed| mixed_vjp(xs, d, c, seed));
    let grad = check_scalar(f, &vjp, &point);
    // The same gradient as the inlined function's, by finite differences of it.
    let inline = |p: &[f64]| mixed_inline(&p[..n], p[n]);
    assert!((inline(&point) - f(&point)).abs() < 1e-12 * f(&point).abs().max(1.0));
    ad_runtime::check::gradient(inline, |_| grad.clone(), &point).assert_within(1e-7);
}

#[test]
fn the_split_api_makes_the_calls_again_on_each_pullback() {
    let x = [0.3, -0.7, 1.1, 0.4, -1.2, 0.9];
    let (out, pullback) = mixed_forward(&x, 0.8);
    assert_eq!(out.to_bits(), mixed(&x, 0.8).to_bits());
    let mut once = [0.0; 6];
    let d_c = pullback(&x, &mut once, 1.0);
    let mut twice = [0.0; 6];
    let d_c_2 = pullback(&x, &mut twice, 2.0);
    for (a, b) in once.iter().zip(&twice) {
        assert!((2.0 * a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} {b}");
    }
    assert!((2.0 * d_c - d_c_2).abs() <= 1e-12);
}

#[derive(Clone, Debug, Tangent)]
struct Spring {
    k: f64,
    rest: f64,
}

impl Spring {
    #[differentiate]
    fn energy(&self, a: f64, b: f64) -> f64 {
        let stretch = (b - a) - self.rest;
        0.5 * self.k * stretch * stretch
    }

    /// A method calling a method in a loop, its receiver read again.
    #[differentiate]
    fn chain(&self, x: &[f64]) -> f64 {
        let mut e = 0.0;
        for i in 1..x.len() {
            e += self.energy(x[i - 1], x[i]);
        }
        e
    }
}

#[test]
fn a_method_called_in_a_loop() {
    let spring = Spring { k: 3.0, rest: 0.5 };
    let x = [0.0, 0.7, 1.1, 2.0];
    let grad = check_scalar(
        |p| spring.chain(p),
        |p, seed| {
            let mut d_spring = Spring { k: 0.0, rest: 0.0 };
            let mut d = vec![0.0; p.len()];
            let out = spring.chain_vjp(&mut d_spring, p, &mut d, seed);
            (out, d)
        },
        &x,
    );
    let mut expected = vec![0.0; x.len()];
    let (mut d_k, mut d_rest) = (0.0, 0.0);
    for i in 1..x.len() {
        let stretch = x[i] - x[i - 1] - spring.rest;
        expected[i] += spring.k * stretch;
        expected[i - 1] -= spring.k * stretch;
        d_k += 0.5 * stretch * stretch;
        d_rest -= spring.k * stretch;
    }
    assert_close(&grad, &expected);
    let mut d_spring = Spring { k: 0.0, rest: 0.0 };
    let mut d_x = [0.0; 4];
    spring.chain_vjp(&mut d_spring, &x, &mut d_x, 1.0);
    assert_close(&[d_spring.k, d_spring.rest], &[d_k, d_rest]);
}
