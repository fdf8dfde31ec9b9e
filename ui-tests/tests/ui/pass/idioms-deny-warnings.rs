// Iterator chains, closures, sub-slices and tuples expand to code that a
// crate denying warnings accepts, in `_vjp` and `_forward`.
#![deny(warnings)]
#![forbid(unsafe_code)]

use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64], y: &[f64], k: f64) -> f64 {
    let scale = |v: f64| v * k;
    let dot: f64 = x.iter().zip(y).map(|(a, b)| scale(a * b)).sum();
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (s, c) = k.sin_cos();
    let tail = &x[1..];
    let smooth: f64 = x.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum();
    let firsts: f64 = x.chunks(2).map(|c| c[0]).sum();
    let (sum, count) = tail
        .iter()
        .filter(|&&v| v > 0.0)
        .fold((0.0, 0.0_f64), |(s, n), &v| (s + v, n + 1.0));
    dot + m * s + c * smooth + firsts + sum / count.max(1.0)
}

fn main() {
    let x = [0.5, -1.0, 2.0, 0.25];
    let y = [1.5, 0.5, -0.5, 2.0];
    let mut d_x = [0.0; 4];
    let mut d_y = [0.0; 4];
    let (out, d_k) = f_vjp(&x, &mut d_x, &y, &mut d_y, 0.7, 1.0);
    assert_eq!(out, f(&x, &y, 0.7));
    let h = 1e-6;
    let fd = (f(&x, &y, 0.7 + h) - f(&x, &y, 0.7 - h)) / (2.0 * h);
    assert!((d_k - fd).abs() < 1e-6, "{d_k} vs {fd}");
    let (out, pullback) = f_forward(&x, &y, 0.7);
    assert_eq!(out, f(&x, &y, 0.7));
    let mut e_x = [0.0; 4];
    let mut e_y = [0.0; 4];
    assert_eq!(pullback(&x, &mut e_x, &y, &mut e_y, 1.0), d_k);
    assert_eq!(e_x, d_x);
}
