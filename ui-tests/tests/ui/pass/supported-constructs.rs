use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, y: f64, n: i32) -> f64 {
    let mut s = x * y;
    s += x.sin() + y.exp().ln_1p();
    let k = match n {
        0 => 1.0,
        1..=3 => 2.0,
        _ => 3.0,
    };
    if s > 0.0 {
        s * k + ad_runtime::detach(x)
    } else {
        -s
    }
}

fn main() {
    let (x, y) = (0.5, 2.0);
    let (out, d_x, d_y) = f_vjp(x, y, 2, 1.0);
    assert_eq!(out, f(x, y, 2));
    assert!((d_x - 2.0 * (y + x.cos())).abs() < 1e-12);
    let e = y.exp();
    assert!((d_y - 2.0 * (x + e / (1.0 + e))).abs() < 1e-12);
}
