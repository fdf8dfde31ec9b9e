// Buffers compile in a crate that denies warnings and unsafe code, and the
// shadows receive the right adjoints.
#![deny(warnings)]
#![forbid(unsafe_code)]

use ad_runtime::differentiate;

#[differentiate]
fn energy(xs: &[f64], scale: f64) -> f64 {
    let mut s = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        s += scale * x * x * (i as f64 + 1.0);
    }
    s
}

#[differentiate]
fn squares(xs: &[f64; 3]) -> Vec<f64> {
    let mut out = Vec::with_capacity(3);
    for x in xs.iter() {
        out.push(x * x);
    }
    out
}

#[differentiate]
fn relax(state: &mut [f64], rate: f64) {
    for v in state.iter_mut() {
        *v -= rate * *v;
    }
}

fn main() {
    let xs = [1.0, 2.0];
    let mut d_xs = [0.0; 2];
    let (out, d_scale) = energy_vjp(&xs, &mut d_xs, 0.5, 1.0);
    assert_eq!(out, energy(&xs, 0.5));
    assert_eq!(d_xs, [1.0, 4.0]);
    assert_eq!(d_scale, 1.0 + 8.0);

    let mut d = [0.0; 3];
    let y = squares_vjp(&[1.0, 2.0, 3.0], &mut d, &[10.0, 1.0, 0.1]);
    assert_eq!(y, vec![1.0, 4.0, 9.0]);
    assert!((d[0] - 20.0).abs() < 1e-12 && (d[1] - 4.0).abs() < 1e-12 && (d[2] - 0.6).abs() < 1e-12);

    let mut state = [1.0, -2.0];
    let mut d_state = [1.0, 1.0];
    let d_rate = relax_vjp(&mut state, &mut d_state, 0.25);
    assert_eq!(state, [0.75, -1.5]);
    assert_eq!(d_state, [0.75, 0.75]);
    assert_eq!(d_rate, -1.0 + 2.0);
}
