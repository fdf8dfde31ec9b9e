//! Second order: `#[differentiate(hvp)]` generates `_hvp`, forward mode
//! applied to the reverse-mode IR. Each function is checked against its
//! `_vjp` (the same output and gradient), against finite differences of the
//! `_vjp` along the direction (`H v`), for symmetry (`<w, H v> = <v, H w>`),
//! and where it is short, against a closed form.
#![allow(clippy::needless_range_loop)]

use ad_runtime::{Float, differentiate};
use ad_tests::{assert_close, check_scalar};

/// What `_hvp` gives at a point along a direction: the output, the
/// gradient, and `H v`.
type Hvp<'a> = &'a dyn Fn(&[f64], &[f64]) -> (f64, Vec<f64>, Vec<f64>);

/// What `_vjp` gives at a point with the seed 1: the output and the gradient.
type Vjp<'a> = &'a dyn Fn(&[f64]) -> (f64, Vec<f64>);

/// Checks `_hvp` at `x` against `f` and its `_vjp` (flat closures), and
/// returns `H v` for the first direction tried.
fn check_hvp(f: &dyn Fn(&[f64]) -> f64, vjp: Vjp<'_>, hvp: Hvp<'_>, x: &[f64]) -> Vec<f64> {
    let n = x.len();
    // The gradient is right (three ways), and `_hvp` gives the same.
    let grad = check_scalar(
        f,
        |p, seed| {
            let (out, g) = vjp(p);
            (out, g.iter().map(|g| g * seed).collect())
        },
        x,
    );
    let v: Vec<f64> = (0..n)
        .map(|i| ((i * 3 % 5) as f64 - 2.0) / 2.0 + 0.3)
        .collect();
    let w: Vec<f64> = (0..n)
        .map(|i| ((i * 2 % 7) as f64 - 3.0) / 3.0 - 0.2)
        .collect();
    let (out, g, hv) = hvp(x, &v);
    assert_eq!(out.to_bits(), f(x).to_bits(), "`_hvp`'s output");
    assert_close_rel(&g, &grad, 1e-12, "`_hvp`'s gradient against `_vjp`'s");
    // H v by central differences of the gradient along v.
    let h = 1e-5;
    let moved = |t: f64| -> Vec<f64> { x.iter().zip(&v).map(|(x, v)| x + t * v).collect() };
    let (g_plus, g_minus) = (vjp(&moved(h)).1, vjp(&moved(-h)).1);
    let fd: Vec<f64> = g_plus
        .iter()
        .zip(&g_minus)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect();
    assert_close_rel(&hv, &fd, 1e-6, "H v against finite differences of `_vjp`");
    // Symmetry: <w, H v> = <v, H w>.
    let (_, _, hw) = hvp(x, &w);
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
    let (lhs, rhs) = (dot(&w, &hv), dot(&v, &hw));
    let scale = lhs.abs().max(rhs.abs()).max(1.0);
    assert!(
        (lhs - rhs).abs() <= 1e-10 * scale,
        "symmetry: {lhs} vs {rhs}"
    );
    hv
}

#[track_caller]
fn assert_close_rel(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().map(|w| w.abs()).fold(1.0, f64::max);
    for (index, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}: component {index}: {g} vs {w} ({got:?} vs {want:?})"
        );
    }
}

// ---------------------------------------------------------------------------
// Closed forms.

#[differentiate(vjp, hvp)]
fn f(x: f64, y: f64) -> f64 {
    let s = x * y;
    s.sin() + s * x
}

#[test]
fn the_readme_function_has_its_closed_form_hessian() {
    let (x, y) = (0.7, -1.3);
    let (v_x, v_y) = (0.4, 2.0);
    let (out, d_x, d_y, hv_x, hv_y) = f_hvp(x, v_x, y, v_y);
    assert_eq!(out.to_bits(), f(x, y).to_bits());
    let s = x * y;
    assert_close(&[d_x, d_y], &[y * s.cos() + 2.0 * s, x * s.cos() + x * x]);
    // f_xx = −y² sin s + 2y, f_xy = cos s − xy sin s + 2x, f_yy = −x² sin s.
    let (sin, cos) = s.sin_cos();
    let h_xx = -y * y * sin + 2.0 * y;
    let h_xy = cos - s * sin + 2.0 * x;
    let h_yy = -x * x * sin;
    assert_close(
        &[hv_x, hv_y],
        &[h_xx * v_x + h_xy * v_y, h_xy * v_x + h_yy * v_y],
    );
    check_hvp(
        &|p| f(p[0], p[1]),
        &|p| {
            let (out, d_x, d_y) = f_vjp(p[0], p[1], 1.0);
            (out, vec![d_x, d_y])
        },
        &|p, v| {
            let (out, d_x, d_y, hv_x, hv_y) = f_hvp(p[0], v[0], p[1], v[1]);
            (out, vec![d_x, d_y], vec![hv_x, hv_y])
        },
        &[x, y],
    );
}

/// Rosenbrock over a slice: a loop reading neighbours.
#[differentiate(vjp, hvp)]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

#[test]
fn rosenbrock_has_its_tridiagonal_hessian() {
    let x = [0.5, -0.3, 0.8, 1.2, 0.9];
    let n = x.len();
    let hv = check_hvp(
        &|p| rosenbrock(p),
        &|p| {
            let mut d = vec![0.0; p.len()];
            let out = rosenbrock_vjp(p, &mut d, 1.0);
            (out, d)
        },
        &|p, v| {
            let (mut d, mut hv) = (vec![0.0; p.len()], vec![0.0; p.len()]);
            let out = rosenbrock_hvp(p, v, &mut d, &mut hv);
            (out, d, hv)
        },
        &x,
    );
    // The Hessian, term by term: a² gives 2 at (i, i); 100 b² gives
    // 200 (∇b ∇bᵀ + b ∇²b), ∇b = (−2x_i, 1), ∇²b = −2 at (i, i).
    let mut hessian = vec![vec![0.0; n]; n];
    for i in 0..n - 1 {
        let b = x[i + 1] - x[i] * x[i];
        hessian[i][i] += 2.0 + 200.0 * (4.0 * x[i] * x[i] - 2.0 * b);
        hessian[i][i + 1] += -400.0 * x[i];
        hessian[i + 1][i] += -400.0 * x[i];
        hessian[i + 1][i + 1] += 200.0;
    }
    let v: Vec<f64> = (0..n)
        .map(|i| ((i * 3 % 5) as f64 - 2.0) / 2.0 + 0.3)
        .collect();
    let expected: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| hessian[i][j] * v[j]).sum())
        .collect();
    assert_close_rel(&hv, &expected, 1e-12, "closed form");
}

// ---------------------------------------------------------------------------
// Every primitive with a second derivative, control flow, chains.

#[differentiate(vjp, hvp)]
fn primitives(x: f64, y: f64) -> f64 {
    let r = x.hypot(y);
    let t = y.atan2(x).sin() * x.exp().ln_1p() + x.powi(3) + y.powf(x.abs() + 0.5);
    let m = x.max(y).min(r) + x.mul_add(y, 1.0) + x.clamp(-0.5, 0.5);
    let u = x.sqrt().cbrt() + x.tanh().asinh() + (y / 3.0).atanh() + (y + 1.0).acosh();
    let w = x.exp2() + x.exp_m1() + y.ln() + x.log2() + y.log10() + x.recip() + (x * 0.3).tan();
    let z = (x * 0.4).asin() + (y * 0.2).acos() + x.atan() + y.sinh() + x.cosh() + x.cos();
    r * t + m.tanh() / (1.0 + y * y).sqrt() + u + x.log(y + 2.0) + w * 0.1 + z
}

#[test]
fn every_primitive() {
    for point in [[0.7, 1.3], [1.9, 0.6], [0.2, 0.9]] {
        check_hvp(
            &|p| primitives(p[0], p[1]),
            &|p| {
                let (out, d_x, d_y) = primitives_vjp(p[0], p[1], 1.0);
                (out, vec![d_x, d_y])
            },
            &|p, v| {
                let (out, d_x, d_y, hv_x, hv_y) = primitives_hvp(p[0], v[0], p[1], v[1]);
                (out, vec![d_x, d_y], vec![hv_x, hv_y])
            },
            &point,
        );
    }
}

/// A `while` loop of unknown length, a branch, an iterator chain, a tuple
/// fold and a local buffer.
#[differentiate(vjp, hvp)]
fn control_flow(xs: &[f64], k: f64) -> f64 {
    let mut v = vec![0.0; xs.len()];
    for (i, x) in xs.iter().enumerate() {
        v[i] = if *x > 0.0 { (x * k).sin() } else { x * x * k };
    }
    let (s, q) = v.iter().fold((0.0, 0.0), |(s, q), &a| (s + a, q + a * a));
    let mut y = s * s + q;
    let mut steps = 0;
    while y.abs() > 0.5 && steps < 20 {
        y = y * 0.7 + k.tanh() * 0.01;
        steps += 1;
    }
    y * k + xs.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>()
}

#[test]
fn loops_branches_chains_and_buffers() {
    let xs = [0.5, -0.7, 1.1, 0.3];
    let n = xs.len();
    let point: Vec<f64> = xs.iter().copied().chain([0.8]).collect();
    check_hvp(
        &|p| control_flow(&p[..n], p[n]),
        &|p| {
            let mut d = vec![0.0; n];
            let (out, d_k) = control_flow_vjp(&p[..n], &mut d, p[n], 1.0);
            d.push(d_k);
            (out, d)
        },
        &|p, v| {
            let (mut d, mut hv) = (vec![0.0; n], vec![0.0; n]);
            let (out, d_k, hv_k) = control_flow_hvp(&p[..n], &v[..n], &mut d, &mut hv, p[n], v[n]);
            d.push(d_k);
            hv.push(hv_k);
            (out, d, hv)
        },
        &point,
    );
}

/// Generic over the float type, with `wrt`.
#[differentiate(vjp, hvp, wrt(x))]
fn scaled_softplus<T: Float>(x: T, w: T) -> T {
    (w * x).exp().ln_1p() * w
}

#[test]
fn generic_functions_and_wrt() {
    let (out, d_x, hv_x) = scaled_softplus_hvp(0.3_f64, 1.0, 2.0);
    assert_eq!(out, scaled_softplus(0.3, 2.0));
    // f = w softplus(w x): f' = w² σ(w x), f'' = w³ σ(w x)(1 − σ(w x)).
    let sigma = 1.0 / (1.0 + (-0.6_f64).exp());
    assert_close(&[d_x, hv_x], &[4.0 * sigma, 8.0 * sigma * (1.0 - sigma)]);
    let (out32, _, hv32) = scaled_softplus_hvp(0.3_f32, 1.0, 2.0);
    assert_eq!(out32, scaled_softplus(0.3_f32, 2.0));
    assert!((f64::from(hv32) - hv_x).abs() < 1e-5);
}

/// Generic, with a quotient: the seed of `_hvp`'s pullback is `T::ONE`, not
/// a literal `1.0` that rustc cannot divide a `T` by.
#[differentiate(vjp, hvp)]
fn logistic<T: Float>(x: T) -> T {
    T::ONE / (T::ONE + (-x).exp())
}

#[test]
fn generic_quotients() {
    let hv = check_hvp(
        &|p| logistic(p[0]),
        &|p| {
            let (out, d_x) = logistic_vjp(p[0], 1.0);
            (out, vec![d_x])
        },
        &|p, v| {
            let (out, g, hv) = logistic_hvp(p[0], v[0]);
            (out, vec![g], vec![hv])
        },
        &[0.4],
    );
    // σ'' = σ(1 − σ)(1 − 2σ), along the first direction tried, 0.3 - 1.
    let s = logistic(0.4_f64);
    assert_close(&hv, &[s * (1.0 - s) * (1.0 - 2.0 * s) * -0.7]);
    let (_, _, hv32) = logistic_hvp(0.4_f32, 1.0);
    assert!((f64::from(hv32) - s * (1.0 - s) * (1.0 - 2.0 * s)).abs() < 1e-6);
}

#[test]
fn the_dense_hessian_and_its_diagonal_from_hvp() {
    use ad_runtime::jacobian;
    let x = [0.5, -0.3, 0.8, 1.2];
    let n = x.len();
    let hvp = |v: &[f64], hv: &mut [f64]| {
        let mut d = vec![0.0; n];
        rosenbrock_hvp(&x, v, &mut d, hv);
    };
    let hessian = jacobian::hessian(n, hvp);
    let diagonal = jacobian::hessian_diagonal(n, hvp);
    for i in 0..n {
        assert_eq!(diagonal[i], hessian[i * n + i]);
        for j in 0..n {
            // Symmetric, tridiagonal, and as the closed form says.
            assert_eq!(hessian[i * n + j], hessian[j * n + i]);
            if i.abs_diff(j) > 1 {
                assert_eq!(hessian[i * n + j], 0.0);
            }
        }
    }
    let expected_00 = 2.0 + 200.0 * (4.0 * x[0] * x[0] - 2.0 * (x[1] - x[0] * x[0]));
    assert!((hessian[0] - expected_00).abs() < 1e-12);
    assert_eq!(hessian[1], -400.0 * x[0]);
}

/// The runtime's bilinear primitives: their pullbacks' tangents are the same
/// pullbacks, once per operand.
#[differentiate(vjp, hvp)]
fn bilinear(a: &[f64], x: &[f64], m: usize, n: usize) -> f64 {
    let mut y = vec![0.0; m];
    ad_runtime::matvec(a, x, &mut y, m, n);
    let mut c = vec![0.0; m * m];
    ad_runtime::matmul(&y, &y, &mut c, m, 1, m);
    let mut z = y.clone();
    ad_runtime::axpy(ad_runtime::sum(x), &y, &mut z);
    ad_runtime::dot(&z, &y).sin() + ad_runtime::sum(&c) * 0.1
}

#[test]
fn dot_sum_axpy_matvec_and_matmul() {
    let (m, n) = (3, 2);
    let point = [0.5, -0.2, 0.3, 0.8, -0.6, 0.1, 0.7, -0.4];
    check_hvp(
        &|p| bilinear(&p[..6], &p[6..], m, n),
        &|p| {
            let (mut d_a, mut d_x) = (vec![0.0; 6], vec![0.0; 2]);
            let out = bilinear_vjp(&p[..6], &mut d_a, &p[6..], &mut d_x, m, n, 1.0);
            (out, [d_a, d_x].concat())
        },
        &|p, v| {
            let (mut d_a, mut d_x) = (vec![0.0; 6], vec![0.0; 2]);
            let (mut hv_a, mut hv_x) = (vec![0.0; 6], vec![0.0; 2]);
            let out = bilinear_hvp(
                &p[..6],
                &v[..6],
                &mut d_a,
                &mut hv_a,
                &p[6..],
                &v[6..],
                &mut d_x,
                &mut hv_x,
                m,
                n,
            );
            (out, [d_a, d_x].concat(), [hv_a, hv_x].concat())
        },
        &point,
    );
}

// ---------------------------------------------------------------------------
// Calls of differentiated functions: each call through the callee's
// `_jvp_all`, each application of its pullback through its `_hvp_all`.

/// The callee: `g(x, k) = sin(k x) + x³`, called by value with an integer.
#[differentiate(vjp, hvp)]
fn g(x: f64, k: f64, p: i32) -> f64 {
    (x * k).sin() + x.powi(p)
}

/// A caller with calls in a loop (their pullbacks taped) and after it.
#[differentiate(vjp, hvp)]
fn calls(x: f64, y: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        s = g(s, y, 3) * 0.5 + y;
    }
    g(s, x, 2) + s * y
}

#[test]
fn calls_of_differentiated_functions() {
    // One call: g(x, y) = sin(x y) + x³ has the Hessian
    // [[−y² sin + 6x, cos − x y sin], [cos − x y sin, −x² sin]].
    #[differentiate(vjp, hvp)]
    fn once(x: f64, y: f64) -> f64 {
        g(x, y, 3)
    }
    let (x, y) = (0.4, -1.2);
    let (v_x, v_y) = (0.5, 2.0);
    let (out, d_x, d_y, h_x, h_y) = once_hvp(x, v_x, y, v_y);
    let (s, c) = (x * y).sin_cos();
    assert_eq!(out.to_bits(), once(x, y).to_bits());
    assert_close(&[d_x, d_y], &[y * c + 3.0 * x * x, x * c]);
    let (h_xx, h_xy, h_yy) = (-y * y * s + 6.0 * x, c - x * y * s, -x * x * s);
    assert_close(
        &[h_x, h_y],
        &[h_xx * v_x + h_xy * v_y, h_xy * v_x + h_yy * v_y],
    );
    // Calls in a loop and after it, three ways.
    for n in [0, 1, 4] {
        check_hvp(
            &|p| calls(p[0], p[1], n),
            &|p| {
                let (out, d_x, d_y) = calls_vjp(p[0], p[1], n, 1.0);
                (out, vec![d_x, d_y])
            },
            &|p, v| {
                let (out, d_x, d_y, h_x, h_y) = calls_hvp(p[0], v[0], p[1], v[1], n);
                (out, vec![d_x, d_y], vec![h_x, h_y])
            },
            &[0.3, -0.7],
        );
    }
}

/// A callee reading a buffer: the application of its pullback is given the
/// buffer, its direction, its shadow and the shadow's `H·v` part.
#[differentiate(vjp, hvp)]
fn weighted(xs: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        s += (xs[i] * c).sin() * xs[i];
    }
    s
}

/// A callee of a buffer alone, returning its output without adjoints.
#[differentiate(vjp, hvp)]
fn corner(xs: &[f64]) -> f64 {
    xs[0] * xs[1] * xs[1]
}

#[differentiate(vjp, hvp)]
fn calls_with_buffers(xs: &[f64], c: f64, n: usize) -> f64 {
    let mut s = c;
    for _ in 0..n {
        s = weighted(xs, s) * 0.3 + c;
    }
    weighted(xs, s * c) + corner(xs) * s
}

#[test]
fn calls_passing_buffers() {
    let point = [0.3, -0.5, 0.8, 0.7];
    for n in [0, 2] {
        check_hvp(
            &|p| calls_with_buffers(&p[..3], p[3], n),
            &|p| {
                let mut d_xs = vec![0.0; 3];
                let (out, d_c) = calls_with_buffers_vjp(&p[..3], &mut d_xs, p[3], n, 1.0);
                d_xs.push(d_c);
                (out, d_xs)
            },
            &|p, v| {
                let (mut d_xs, mut hv_xs) = (vec![0.0; 3], vec![0.0; 3]);
                let (out, d_c, hv_c) =
                    calls_with_buffers_hvp(&p[..3], &v[..3], &mut d_xs, &mut hv_xs, p[3], v[3], n);
                d_xs.push(d_c);
                hv_xs.push(hv_c);
                (out, d_xs, hv_xs)
            },
            &point,
        );
    }
    // `corner` alone: H = [[0, 2y], [2y, 2x]] at (x, y) = (0.3, -0.5).
    #[differentiate(vjp, hvp)]
    fn just_corner(xs: &[f64]) -> f64 {
        corner(xs)
    }
    let (mut d, mut hv) = ([0.0; 2], [0.0; 2]);
    just_corner_hvp(&[0.3, -0.5], &[1.0, 2.0], &mut d, &mut hv);
    assert_close(&d, &[0.25, -0.3]);
    assert_close(&hv, &[-2.0, -1.0 + 1.2]);
}
