// Buffers, loops, branches and user names that look like the generated ones
// (`d_xs` beside `xs`, `d_u` beside `u`, `out`, `t1`, `tape_t`, `__ad`, `seed`,
// `x_1`) compile in a crate that denies warnings and forbids unsafe code, and
// give the right gradients.
#![deny(warnings)]
#![forbid(unsafe_code)]

use ad_runtime::differentiate;

/// `Σ_i g(xs_i d_xs_i)` with `g(t) = out t` for `t > 0`, `-t` otherwise.
#[differentiate]
fn gated(xs: &[f64], d_xs: &[f64], out: f64) -> f64 {
    let mut tape_t = 0.0;
    for i in 0..xs.len() {
        let t1 = xs[i] * d_xs[i];
        if t1 > 0.0 {
            tape_t += t1 * out;
        } else {
            tape_t -= t1;
        }
    }
    tape_t
}

/// `u_i ← u_i - tape u_i²`, `d_u_i ← d_u_i + u_i` (the old `u_i`).
#[differentiate]
fn relax(u: &mut [f64], d_u: &mut [f64], tape: f64) {
    for i in 0..u.len() {
        let t2 = u[i];
        u[i] = t2 - tape * t2 * t2;
        d_u[i] += t2;
    }
}

/// `out_i = seed x_i` at indices divisible by `k`, `sin x_i` elsewhere.
#[differentiate]
fn scaled(xs: &[f64], seed: f64, k: usize) -> Vec<f64> {
    let mut out = vec![0.0; xs.len()];
    for (i, &x) in xs.iter().enumerate() {
        let __ad = match i % k {
            0 => x * seed,
            _ => x.sin(),
        };
        out[i] = __ad;
    }
    out
}

/// Halves `x` until it is at most `tol`; `tol` only decides how often.
#[differentiate]
fn halve(x: f64, tol: f64) -> f64 {
    let mut x_1 = x;
    while x_1 > tol {
        let x = x_1 * 0.5;
        x_1 = x;
    }
    x_1
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

fn main() {
    // t = xs ⊙ d_xs = (3, -2, -2): the first term is `out t`, the others `-t`.
    let (xs, d_xs) = ([1.0, 2.0, -1.0], [3.0, -1.0, 2.0]);
    let (mut shadow_xs, mut shadow_d_xs) = ([0.0; 3], [0.0; 3]);
    // The shadow of `xs` is `d_xs_`; then come `d_xs` and its shadow `d_d_xs`.
    let (value, d_out) = gated_vjp(&xs, &mut shadow_xs, &d_xs, &mut shadow_d_xs, 0.5, 1.0);
    assert_eq!(value, gated(&xs, &d_xs, 0.5));
    assert_eq!(value, 5.5);
    assert_eq!(shadow_xs, [1.5, 1.0, -2.0]);
    assert_eq!(shadow_d_xs, [0.5, -2.0, 1.0]);
    assert_eq!(d_out, 3.0);

    // Seeds (1, 1) for the final `u` and (1, 0) for the final `d_u`:
    // adjoint of u = seed_u (1 - 2 tape u) + seed_d_u, of d_u = seed_d_u,
    // d_tape = -Σ seed_u u².
    let (mut u, mut d_u) = ([0.5, 2.0], [0.0, 0.0]);
    let (mut shadow_u, mut shadow_d_u) = ([1.0, 1.0], [1.0, 0.0]);
    let d_tape = relax_vjp(&mut u, &mut shadow_u, &mut d_u, &mut shadow_d_u, 0.1);
    assert_eq!(u, [0.5 - 0.025, 2.0 - 0.4]);
    assert_eq!(d_u, [0.5, 2.0]);
    assert!(
        close(shadow_u[0], 1.9) && close(shadow_u[1], 0.6),
        "{shadow_u:?}"
    );
    assert_eq!(shadow_d_u, [1.0, 0.0]);
    assert!(close(d_tape, -4.25), "{d_tape}");

    let xs = [1.0, 2.0, 3.0];
    let mut shadow = [0.0; 3];
    let (y, d_seed) = scaled_vjp(&xs, &mut shadow, 2.0, 2, &[1.0, 1.0, 1.0]);
    assert_eq!(y, scaled(&xs, 2.0, 2));
    assert_eq!(y, vec![2.0, 2.0_f64.sin(), 6.0]);
    assert!(close(shadow[0], 2.0) && close(shadow[1], 2.0_f64.cos()) && close(shadow[2], 2.0));
    assert_eq!(d_seed, 1.0 + 3.0);

    // 8 → 4 → 2 → 1: the output is x / 8.
    let (value, d_x, d_tol) = halve_vjp(8.0, 1.5, 1.0);
    assert_eq!(value, 1.0);
    assert_eq!((d_x, d_tol), (0.125, 0.0));
}
