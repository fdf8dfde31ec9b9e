// One function generic over the float type serves `f32` and `f64`; a call
// between generic functions goes through the callee's split API.
use ad_runtime::{Float, differentiate};

#[differentiate]
fn cube<T: Float>(x: T) -> T {
    x * x * x
}

#[differentiate]
fn f<T: Float>(x: T, ys: &[T]) -> T {
    let mut s = T::ZERO;
    for i in 0..ys.len() {
        s += cube(x * ys[i]);
    }
    s
}

fn main() {
    let mut d_ys = [0.0_f64; 2];
    let (out, d_x) = f_vjp(2.0_f64, &[1.0, 3.0], &mut d_ys, 1.0);
    // Σ (x y)³ = 8 + 216; ∂/∂x = 3 x² Σ y³ = 12 · 28; ∂/∂y = 3 x³ y².
    assert_eq!((out, d_x), (224.0, 336.0));
    assert_eq!(d_ys, [24.0, 216.0]);
    let mut d_ys = [0.0_f32; 2];
    let (out, d_x) = f_vjp(2.0_f32, &[1.0, 3.0], &mut d_ys, 1.0);
    assert_eq!((out, d_x), (224.0, 336.0));
    assert_eq!(d_ys, [24.0, 216.0]);
}
