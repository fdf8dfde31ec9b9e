//! Arrays taken by value, passed by value between differentiated functions,
//! under `deny(warnings)`.
#![deny(warnings)]

use ad_runtime::differentiate;

#[differentiate(vjp, jvp)]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[differentiate(vjp, jvp)]
fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[differentiate(vjp, jvp)]
fn area(a: [f64; 3], b: [f64; 3]) -> f64 {
    let n: [f64; 3] = cross(a, b);
    0.5 * norm(n)
}

fn main() {
    // The unit square's half: n = (0, 0, 1), d area / d a = ½ b × n̂.
    let (out, d_a, d_b) = area_vjp([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], 1.0);
    assert_eq!(out, 0.5);
    assert_eq!(d_a, [0.5, 0.0, 0.0]);
    assert_eq!(d_b, [0.0, 0.5, 0.0]);
    let (_, tangent) = area_jvp([1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0; 3]);
    assert_eq!(tangent, 0.5);
}
