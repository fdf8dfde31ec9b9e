use ad_runtime::differentiate;

#[differentiate(wrt(x))]
fn f(x: f32, scale: f32, n: u8) -> f32 {
    (x * scale).sqrt() * f32::from(n)
}

fn main() {
    // Only `x` is active: the result is `(out, d_x)`.
    let (out, d_x): (f32, f32) = f_vjp(4.0, 4.0, 3, 1.0);
    assert_eq!(out, f(4.0, 4.0, 3));
    assert!((d_x - 3.0 * 4.0 / (2.0 * 4.0)).abs() < 1e-6);
}
