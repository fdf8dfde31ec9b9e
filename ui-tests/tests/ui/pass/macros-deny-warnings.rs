// Assertions, printing and panics expand to code that a crate denying
// warnings accepts; they run in `_vjp` as in the function.
#![deny(warnings)]

use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64], k: f64) -> f64 {
    assert!(!x.is_empty(), "no input");
    assert_eq!(x.len() % 2, 0);
    debug_assert_ne!(k, 0.0, "k = {k}");
    let s: f64 = x.iter().map(|v| v * k).sum();
    let tail = &x[1..];
    if s.is_nan() {
        panic!("NaN from {tail:?}");
    }
    let y = if s > 0.0 { s } else { unreachable!("s = {s:.3}") };
    eprint!("");
    dbg!(y) + k
}

fn main() {
    let x = [1.0, 2.0];
    let mut d_x = [0.0; 2];
    let (out, d_k) = f_vjp(&x, &mut d_x, 0.5, 1.0);
    assert_eq!(out, f(&x, 0.5));
    assert_eq!(d_x, [0.5, 0.5]);
    assert_eq!(d_k, 3.0 + 1.0);
}
