//! Benchmarks of `#[differentiate]` against the primal and a hand-written gradient.
//!
//! The first slice of issue 6: workloads W1 (extended Rosenbrock), W3 (one scalar
//! expression, call overhead) and W4 (logsumexp). Each is written once as a plain
//! function with `#[differentiate]`; next to it is a gradient written by hand. Before
//! anything is timed, every hand-written gradient is checked against the generated
//! one, so a wrong comparison stops the run.
//!
//! Run with `cargo bench -p ad-examples --bench workloads`; the numbers and the
//! machine are in `docs/performance.md`.

// Numeric code written with index loops, as the workloads are.
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;
use std::time::Duration;

use ad_runtime::differentiate;
use criterion::{Criterion, criterion_group, criterion_main};

// ---------------------------------------------------------------------------
// W1: extended Rosenbrock over a slice.

/// `Σ (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)²`.
#[differentiate]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

/// Hand-written gradient of [`rosenbrock`], with the `_vjp` contract: returns the
/// value and adds `d_out · ∇f` into `g`.
fn rosenbrock_hand(x: &[f64], g: &mut [f64], d_out: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
        g[i] += d_out * (-2.0 * a - 400.0 * x[i] * b);
        g[i + 1] += d_out * (200.0 * b);
    }
    s
}

// ---------------------------------------------------------------------------
// W3: a scalar expression with sin, exp, ln and a division.

#[differentiate]
fn w3(x: f64, y: f64) -> f64 {
    (x.sin() * y.exp() + (1.0 + x * x).ln()) / (1.0 + y * y)
}

/// Hand-written gradient of [`w3`]: `(value, ∂/∂x, ∂/∂y)` times the seed.
fn w3_hand(x: f64, y: f64, d_out: f64) -> (f64, f64, f64) {
    let (sx, cx) = x.sin_cos();
    let ey = y.exp();
    let p = 1.0 + x * x;
    let num = sx * ey + p.ln();
    let den = 1.0 + y * y;
    let inv = 1.0 / den;
    let out = num * inv;
    let d_num = d_out * inv;
    let d_x = d_num * (cx * ey + 2.0 * x / p);
    let d_y = d_num * (sx * ey) - out * inv * (2.0 * y) * d_out;
    (out, d_x, d_y)
}

// ---------------------------------------------------------------------------
// W4: logsumexp, with index loops (max pass, then sum of exponentials), and
// through the runtime's coarse primitive.

/// `m + ln Σ exp(xᵢ − m)` with `m = max xᵢ`, as a user would write it.
#[differentiate]
fn lse_loops(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    m + s.ln()
}

/// The same with the shift `m` detached: it changes neither the value nor the
/// gradient, so no gradient needs to flow through it.
#[differentiate]
fn lse_detached(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let m = ad_runtime::detach(m);
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    m + s.ln()
}

/// The same, through `ad_runtime::logsumexp` and its pullback.
#[differentiate]
fn lse_primitive(x: &[f64]) -> f64 {
    ad_runtime::logsumexp(x)
}

/// Hand-written gradient of logsumexp: `∂/∂xᵢ = exp(xᵢ − lse)`, added into `g`.
fn lse_hand(x: &[f64], g: &mut [f64], d_out: f64) -> f64 {
    let mut m = x[0];
    for i in 1..x.len() {
        m = m.max(x[i]);
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - m).exp();
    }
    let out = m + s.ln();
    for i in 0..x.len() {
        g[i] += d_out * (x[i] - out).exp();
    }
    out
}

// ---------------------------------------------------------------------------
// Inputs and the start-up check.

/// Deterministic inputs in `[lo, hi)`: a small linear congruential generator.
fn inputs(n: usize, lo: f64, hi: f64) -> Vec<f64> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            lo + (hi - lo) * unit
        })
        .collect()
}

/// Panics unless `a` and `b` agree to `1e-10` relative, element by element, or to
/// `floor` absolute where that is larger: an element that is a cancellation of large
/// terms (near zero) cannot be held to a relative bound rounding cannot meet.
fn assert_agree(what: &str, a: &[f64], b: &[f64], floor: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths differ");
    let mut worst = 0.0f64;
    for (i, (&u, &v)) in a.iter().zip(b).enumerate() {
        let tolerance = (1e-10 * u.abs().max(v.abs())).max(floor);
        assert!(
            (u - v).abs() <= tolerance,
            "{what}: element {i}: _vjp {u:e} vs hand-written {v:e}"
        );
        let denominator = u.abs().max(v.abs());
        if denominator > 0.0 {
            worst = worst.max((u - v).abs() / denominator);
        }
    }
    eprintln!("check {what}: agree (largest relative difference {worst:.1e})");
}

/// `1e-12` times the largest element of `g`: the absolute floor of [`assert_agree`].
fn floor_of(g: &[f64]) -> f64 {
    1e-12 * g.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

fn check_gradients() {
    for n in [1_000, 1_000_000] {
        let x = inputs(n, -1.5, 1.5);
        let mut d_vjp = vec![0.0; n];
        let mut d_hand = vec![0.0; n];
        let out_vjp = rosenbrock_vjp(&x, &mut d_vjp, 1.0);
        let out_hand = rosenbrock_hand(&x, &mut d_hand, 1.0);
        assert_eq!(out_vjp, rosenbrock(&x));
        assert_agree(&format!("W1 n={n} value"), &[out_vjp], &[out_hand], 0.0);
        assert_agree(
            &format!("W1 n={n} gradient"),
            &d_vjp,
            &d_hand,
            floor_of(&d_hand),
        );
    }

    for &(x, y) in &[(0.7, -0.3), (-2.1, 1.4), (3.0, 0.01)] {
        let (out, d_x, d_y) = w3_vjp(x, y, 1.0);
        let (out_hand, d_x_hand, d_y_hand) = w3_hand(x, y, 1.0);
        assert_eq!(out, w3(x, y));
        let hand = [out_hand, d_x_hand, d_y_hand];
        assert_agree("W3", &[out, d_x, d_y], &hand, floor_of(&hand));
    }

    let n = 1_000_000;
    let x = inputs(n, -5.0, 5.0);
    let mut d_hand = vec![0.0; n];
    let out_hand = lse_hand(&x, &mut d_hand, 1.0);
    let mut d_loops = vec![0.0; n];
    let out_loops = lse_loops_vjp(&x, &mut d_loops, 1.0);
    assert_eq!(out_loops, lse_loops(&x));
    assert_agree("W4 loops value", &[out_loops], &[out_hand], 0.0);
    // Through `m`, the generated gradient adds `d_out · (1 − Σ exp(xᵢ − m) / s)` to
    // the largest element: zero in exact arithmetic, a rounding error of about
    // `1e-15 · d_out` here, on an element of about `1e-5`. So the floor is absolute,
    // in units of the seed, not relative to the element.
    assert_agree("W4 loops gradient", &d_loops, &d_hand, 1e-13);
    let mut d_detached = vec![0.0; n];
    let out_detached = lse_detached_vjp(&x, &mut d_detached, 1.0);
    assert_eq!(out_detached, lse_detached(&x));
    assert_agree("W4 detached value", &[out_detached], &[out_hand], 0.0);
    assert_agree(
        "W4 detached gradient",
        &d_detached,
        &d_hand,
        floor_of(&d_hand),
    );
    let mut d_prim = vec![0.0; n];
    let out_prim = lse_primitive_vjp(&x, &mut d_prim, 1.0);
    assert_eq!(out_prim, lse_primitive(&x));
    assert_agree("W4 primitive value", &[out_prim], &[out_hand], 0.0);
    assert_agree("W4 primitive gradient", &d_prim, &d_hand, floor_of(&d_hand));
}

// ---------------------------------------------------------------------------
// The benchmarks. Shadows are zeroed once and then accumulate, as both the
// generated and the hand-written gradient add into them: no benchmark pays for
// a `fill(0.0)` the others do not.

fn w1(c: &mut Criterion, n: usize, name: &str) {
    let x = inputs(n, -1.5, 1.5);
    let mut g = vec![0.0; n];
    let mut group = c.benchmark_group(name);
    group.bench_function("primal", |b| b.iter(|| rosenbrock(black_box(&x))));
    group.bench_function("vjp", |b| {
        b.iter(|| rosenbrock_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| rosenbrock_hand(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.finish();
}

fn bench_w1(c: &mut Criterion) {
    check_gradients();
    w1(c, 1_000, "w1_rosenbrock_1e3");
    w1(c, 1_000_000, "w1_rosenbrock_1e6");
}

fn bench_w3(c: &mut Criterion) {
    let mut group = c.benchmark_group("w3_scalar");
    group.bench_function("primal", |b| b.iter(|| w3(black_box(0.7), black_box(-0.3))));
    group.bench_function("vjp", |b| {
        b.iter(|| w3_vjp(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| w3_hand(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.finish();
}

fn bench_w4(c: &mut Criterion) {
    let n = 1_000_000;
    let x = inputs(n, -5.0, 5.0);
    let mut g = vec![0.0; n];
    let mut group = c.benchmark_group("w4_logsumexp_1e6");
    group.bench_function("primal_loops", |b| b.iter(|| lse_loops(black_box(&x))));
    group.bench_function("vjp_loops", |b| {
        b.iter(|| lse_loops_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_detached", |b| {
        b.iter(|| lse_detached(black_box(&x)))
    });
    group.bench_function("vjp_detached", |b| {
        b.iter(|| lse_detached_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_primitive", |b| {
        b.iter(|| lse_primitive(black_box(&x)))
    });
    group.bench_function("vjp_primitive", |b| {
        b.iter(|| lse_primitive_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| lse_hand(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_w1, bench_w3, bench_w4
}
criterion_main!(benches);
