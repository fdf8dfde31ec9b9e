//! A parameter called `d_out` renames the seed (`d_out_`), without capturing it.
use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, d_out: f64) -> f64 {
    x * d_out + d_out.sin()
}

fn main() {
    let (out, d_x, d_d_out) = f_vjp(2.0, 3.0, 0.5);
    assert_eq!(out, f(2.0, 3.0));
    assert_eq!(d_x, 0.5 * 3.0);
    assert!((d_d_out - 0.5 * (2.0 + 3.0_f64.cos())).abs() < 1e-15);
}
