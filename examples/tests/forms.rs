//! Every spelling of the forms benchmark (`ad_examples::forms`, made by
//! `ad_testkit::forms`) computes the workload it spells: its output agrees
//! with the workload's, its `_vjp` with the hand-written gradient (the closed
//! form), finite differences and the dot-product test, at small sizes.

use ad_examples::forms::{LLSQ, LSE, ROSENBROCK, W3};
use ad_examples::workloads::{inputs_seeded, llsq_hand, lse_hand, rosenbrock_hand, w3_hand_exact};
use ad_runtime::check;

const TOL: f64 = 1e-7;

/// A `_vjp` of a function of a slice, the other arguments fixed: adds the
/// gradient times the seed into the shadow and returns the output.
type Vjp<'a> = &'a dyn Fn(&[f64], &mut [f64], f64) -> f64;

/// `a` and `b` agree to rounding: a spelling may reorder a product.
#[track_caller]
fn assert_agree(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}");
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-12 * scale, "{what}[{k}]: {x} vs {y}");
    }
}

/// A spelling of a function of a slice: the output and gradient agree with
/// the hand-written gradient's, finite differences and the dot-product test
/// agree with the gradient, and `_vjp` returns the spelling's own output.
fn check_slice(name: &str, f: &dyn Fn(&[f64]) -> f64, vjp: Vjp<'_>, hand: Vjp<'_>, x: &[f64]) {
    let grad = |p: &[f64]| {
        let mut d = vec![0.0; p.len()];
        let out = vjp(p, &mut d, 1.0);
        assert_eq!(
            out.to_bits(),
            f(p).to_bits(),
            "{name}: `_vjp` returns the primal"
        );
        d
    };
    let mut expected = vec![0.0; x.len()];
    let out = hand(x, &mut expected, 1.0);
    assert_agree(name, &[f(x)], &[out]);
    assert_agree(name, &grad(x), &expected);
    check::gradient(f, grad, x).assert_within(TOL);
    check::dot_product_scalar(f, grad, x).assert_within(TOL);
}

#[test]
fn every_spelling_of_rosenbrock() {
    for &(name, _, f, vjp) in ROSENBROCK {
        for n in [2, 3, 12] {
            let x = inputs_seeded(n, -1.5, 1.5, n as u64);
            check_slice(name, &f, &vjp, &rosenbrock_hand, &x);
        }
    }
}

#[test]
fn every_spelling_of_logsumexp() {
    for &(name, _, f, vjp) in LSE {
        for n in [1, 2, 9] {
            let x = inputs_seeded(n, -5.0, 5.0, n as u64);
            check_slice(name, &f, &vjp, &lse_hand, &x);
        }
    }
}

#[test]
fn every_spelling_of_llsq() {
    for &(name, _, f, vjp) in LLSQ {
        for (d, n) in [(1, 2), (3, 5), (4, 8)] {
            let x = inputs_seeded(d, -1.0, 1.0, d as u64);
            check_slice(
                name,
                &|p| f(p, n),
                &|p, g, s| vjp(p, g, n, s),
                &|p, g, s| llsq_hand(p, g, n, s),
                &x,
            );
        }
    }
}

#[test]
fn every_spelling_of_w3() {
    for &(name, _, f, vjp) in W3 {
        for (x, y) in [(0.3, -0.7), (1.9, 0.4), (-2.5, 1.1)] {
            let (out, d_x, d_y) = vjp(x, y, 1.0);
            assert_eq!(out.to_bits(), f(x, y).to_bits(), "{name}");
            let (hand, h_x, h_y) = w3_hand_exact(x, y, 1.0);
            assert_agree(name, &[out, d_x, d_y], &[hand, h_x, h_y]);
            let f = |p: &[f64]| f(p[0], p[1]);
            let grad = |p: &[f64]| {
                let (_, d_x, d_y) = vjp(p[0], p[1], 1.0);
                vec![d_x, d_y]
            };
            check::gradient(f, grad, &[x, y]).assert_within(TOL);
            check::dot_product_scalar(f, grad, &[x, y]).assert_within(TOL);
        }
    }
}
