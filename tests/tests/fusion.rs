//! Loop fusion: `_vjp` runs the adjoint of a loop inside the loop when its seed
//! is known before the loop (see `ad-macros/src/analysis/fuse.rs`). Each
//! function is checked against a closed form, finite differences and the
//! dot-product test, and against its split API (`f_forward`), which is emitted
//! without fusion.

#![allow(clippy::needless_range_loop)]

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar};

/// Mean squared error of a line `a x + b` through points `(x, y)`: the adjoint
/// loop carries the sums `d_a` and `d_b`, and its seed `d_out / n` moves
/// before the loop.
#[differentiate]
fn line_fit(x: &[f64], y: &[f64], a: f64, b: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let r = a * x[i] + b - y[i];
        s += r * r;
    }
    s / x.len() as f64
}

/// Packs `(x, y, a, b)` for the checks.
fn line_fit_point(n: usize) -> Vec<f64> {
    let mut p: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 0.7).collect();
    p.extend((0..n).map(|i| (0.5 * i as f64).sin()));
    p.extend([1.3, -0.4]);
    p
}

fn line_fit_vjp_packed(p: &[f64], seed: f64) -> (f64, Vec<f64>) {
    let n = (p.len() - 2) / 2;
    let (x, y) = (&p[..n], &p[n..2 * n]);
    let (mut d_x, mut d_y) = (vec![0.0; n], vec![0.0; n]);
    let (out, d_a, d_b) = line_fit_vjp(x, &mut d_x, y, &mut d_y, p[2 * n], p[2 * n + 1], seed);
    d_x.extend(d_y);
    d_x.extend([d_a, d_b]);
    (out, d_x)
}

#[test]
fn a_fused_loop_with_scalar_sums() {
    let n = 7;
    let p = line_fit_point(n);
    let grad = check_scalar(
        |p| line_fit(&p[..n], &p[n..2 * n], p[2 * n], p[2 * n + 1]),
        line_fit_vjp_packed,
        &p,
    );
    // ∂/∂a = 2/n Σ rᵢ xᵢ, ∂/∂b = 2/n Σ rᵢ, ∂/∂xᵢ = 2 a rᵢ / n, ∂/∂yᵢ = −2 rᵢ / n.
    let (a, b) = (p[2 * n], p[2 * n + 1]);
    let r: Vec<f64> = (0..n).map(|i| a * p[i] + b - p[n + i]).collect();
    let scale = 2.0 / n as f64;
    let mut expected: Vec<f64> = r.iter().map(|r| scale * a * r).collect();
    expected.extend(r.iter().map(|r| -scale * r));
    expected.push(scale * (0..n).map(|i| r[i] * p[i]).sum::<f64>());
    expected.push(scale * r.iter().sum::<f64>());
    assert_close(&grad, &expected);
}

/// A stencil: each term reads `x[i]` and `x[i + 1]`, so each element's adjoint
/// gets two additions, one from each of two iterations.
#[differentiate]
fn roughness(x: &[f64], w: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i];
        s += w * d * d;
    }
    s
}

#[test]
fn a_fused_stencil_adds_into_neighbours() {
    let x = [0.5, -1.0, 2.0, 0.25, 1.5];
    let n = x.len();
    let mut p = x.to_vec();
    p.push(0.75);
    let grad = check_scalar(
        |p| roughness(&p[..n], p[n]),
        |p, seed| {
            let mut d_x = vec![0.0; n];
            let (out, d_w) = roughness_vjp(&p[..n], &mut d_x, p[n], seed);
            d_x.push(d_w);
            (out, d_x)
        },
        &p,
    );
    // ∂/∂xᵢ = 2w (xᵢ − xᵢ₋₁) − 2w (xᵢ₊₁ − xᵢ), with the missing terms zero at
    // the ends; ∂/∂w = Σ dᵢ².
    let w = p[n];
    let diff = |i: usize| x[i + 1] - x[i];
    let mut expected: Vec<f64> = (0..n)
        .map(|i| {
            let left = if i > 0 { 2.0 * w * diff(i - 1) } else { 0.0 };
            let right = if i + 1 < n { 2.0 * w * diff(i) } else { 0.0 };
            left - right
        })
        .collect();
    expected.push((0..n - 1).map(|i| diff(i) * diff(i)).sum());
    assert_close(&grad, &expected);
}

/// `exp`'s output would be taped for the adjoint loop; fused, the adjoint
/// reads it where the primal computed it.
#[differentiate]
fn soft_energy(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let e = (x[i] * x[i]).sin().exp();
        s += e * e;
    }
    0.5 * s
}

#[test]
fn a_fused_loop_reads_taped_values_in_place() {
    let x = [0.3, -1.1, 0.8, 2.0];
    let grad = check_scalar(
        soft_energy,
        |p, seed| {
            let mut d_x = vec![0.0; p.len()];
            let out = soft_energy_vjp(p, &mut d_x, seed);
            (out, d_x)
        },
        &x,
    );
    // ∂/∂xᵢ = e² · cos(xᵢ²) · 2xᵢ with e = exp(sin(xᵢ²)).
    let expected: Vec<f64> = x
        .iter()
        .map(|&x| {
            let e = (x * x).sin().exp();
            e * e * (x * x).cos() * 2.0 * x
        })
        .collect();
    assert_close(&grad, &expected);
}

/// Two loops, the second reading what the first wrote: the first adjoint loop
/// needs the second's adjoint of `h` and is not fused; the second is.
#[differentiate]
fn two_layers(x: &[f64], w: f64) -> f64 {
    let n = x.len();
    let mut h = vec![0.0; n];
    for i in 0..n {
        h[i] = (w * x[i]).tanh();
    }
    let mut s = 0.0;
    for i in 0..n {
        s += h[i] * h[i] * x[i];
    }
    s
}

#[test]
fn a_fused_loop_after_one_that_is_not() {
    let x = [0.4, -0.9, 1.3];
    let n = x.len();
    let mut p = x.to_vec();
    p.push(0.7);
    let grad = check_scalar(
        |p| two_layers(&p[..n], p[n]),
        |p, seed| {
            let mut d_x = vec![0.0; n];
            let (out, d_w) = two_layers_vjp(&p[..n], &mut d_x, p[n], seed);
            d_x.push(d_w);
            (out, d_x)
        },
        &p,
    );
    // s = Σ tanh²(w xᵢ) xᵢ: ∂/∂xᵢ = t² + 2 t (1 − t²) w xᵢ, ∂/∂w = Σ 2 t (1 − t²) xᵢ².
    let w = p[n];
    let mut expected: Vec<f64> = x
        .iter()
        .map(|&x| {
            let t = (w * x).tanh();
            t * t + 2.0 * t * (1.0 - t * t) * w * x
        })
        .collect();
    expected.push(
        x.iter()
            .map(|&x| {
                let t = (w * x).tanh();
                2.0 * t * (1.0 - t * t) * x * x
            })
            .sum(),
    );
    assert_close(&grad, &expected);
}

#[test]
fn the_split_api_unfused_agrees_with_the_fused_vjp() {
    let n = 9;
    let p = line_fit_point(n);
    let (x, y, a, b) = (&p[..n], &p[n..2 * n], p[2 * n], p[2 * n + 1]);
    let (out, pullback) = line_fit_forward(x, y, a, b);
    for seed in [1.0, -2.5] {
        let (mut d_x, mut d_y) = (vec![0.0; n], vec![0.0; n]);
        let (d_a, d_b) = pullback(x, &mut d_x, y, &mut d_y, seed);
        let (vjp_out, fused) = line_fit_vjp_packed(&p, seed);
        assert_eq!(out.to_bits(), vjp_out.to_bits());
        d_x.extend(d_y);
        d_x.extend([d_a, d_b]);
        assert_close(&d_x, &fused);
    }
}

/// A local `Vec` filled by `push`, then read by a loop whose adjoint adds into
/// its shadow: the shadow must have the `Vec`'s final length.
#[differentiate]
fn pushed_then_summed(x: &[f64]) -> f64 {
    let mut v = Vec::new();
    for i in 0..x.len() {
        v.push(x[i] * x[i]);
    }
    let mut s = 0.0;
    for i in 0..v.len() {
        s += v[i].sin();
    }
    s
}

#[test]
fn a_loop_over_a_pushed_vec() {
    let x = [0.3, -1.2, 0.9];
    let grad = check_scalar(
        pushed_then_summed,
        |p, seed| {
            let mut d_x = vec![0.0; p.len()];
            let out = pushed_then_summed_vjp(p, &mut d_x, seed);
            (out, d_x)
        },
        &x,
    );
    // ∂/∂xᵢ = cos(xᵢ²) · 2xᵢ.
    let expected: Vec<f64> = x.iter().map(|&x| (x * x).cos() * 2.0 * x).collect();
    assert_close(&grad, &expected);
}

/// `s +=` in both branches: the seed of `s` passes through the adjoint `if`
/// unchanged, so the loop is fused as when the `if` is a `let` of its own;
/// `t`, accumulated in one branch only, and `w`, read in both, are not.
#[differentiate]
fn split_accumulation(x: &[f64], w: f64) -> f64 {
    let mut s = 0.0;
    let mut t = 0.0;
    for &v in x {
        if v > 0.0 {
            s += w * v * v;
        } else {
            s += v.sin();
            t += w * v;
        }
    }
    s + t * t
}

#[test]
fn accumulations_in_both_branches() {
    let p = [0.3, -1.1, 0.8, -0.4, 2.0, 0.7];
    let n = p.len() - 1;
    let vjp = |p: &[f64], seed: f64| {
        let mut d_x = vec![0.0; n];
        let (out, d_w) = split_accumulation_vjp(&p[..n], &mut d_x, p[n], seed);
        d_x.push(d_w);
        (out, d_x)
    };
    let grad = check_scalar(|p| split_accumulation(&p[..n], p[n]), vjp, &p);
    // t = w Σ_{v ≤ 0} v; ∂/∂v = 2 w v for v > 0, cos v + 2 t w otherwise;
    // ∂/∂w = Σ_{v > 0} v² + 2 t Σ_{v ≤ 0} v.
    let (x, w) = (&p[..n], p[n]);
    let negatives: f64 = x.iter().filter(|&&v| v <= 0.0).sum();
    let t = w * negatives;
    let mut expected: Vec<f64> = x
        .iter()
        .map(|&v| {
            if v > 0.0 {
                2.0 * w * v
            } else {
                v.cos() + 2.0 * t * w
            }
        })
        .collect();
    expected.push(x.iter().filter(|&&v| v > 0.0).map(|v| v * v).sum::<f64>() + 2.0 * t * negatives);
    assert_close(&grad, &expected);
    // The split API, emitted unfused, agrees.
    let (out, pullback) = split_accumulation_forward(x, w);
    let mut d_x = vec![0.0; n];
    let d_w = pullback(x, &mut d_x, 1.0);
    assert_eq!(out.to_bits(), split_accumulation(x, w).to_bits());
    d_x.push(d_w);
    assert_close(&d_x, &expected);
}
