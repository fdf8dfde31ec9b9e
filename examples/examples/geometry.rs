//! Geometry with arrays by value: points and vectors are `[f64; 3]`, passed
//! and returned by value between differentiated helpers, and a ring of
//! points is a buffer of rows, `&[[f64; 3]]`, as geometry code is usually
//! written.
//!
//! A soap film spans a bent ring: the ring's points are fixed, and one free
//! vertex in the middle is joined to each edge of the ring by a triangle.
//! Gradient descent moves the vertex to where the film's area is least. The
//! gradient is checked against finite differences first.
//!
//! Run with `cargo run --example geometry`.

use ad_runtime::{check, differentiate};

#[differentiate]
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[differentiate]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[differentiate]
fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Half the length of the normal. The intermediate arrays are annotated:
/// the macro cannot see what a call returns, and a result only passed on
/// would otherwise be taken for a float (a compile error says so).
#[differentiate]
fn triangle_area(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let ab: [f64; 3] = sub(b, a);
    let ac: [f64; 3] = sub(c, a);
    let normal: [f64; 3] = cross(ab, ac);
    0.5 * norm(normal)
}

/// The film's area: a triangle from `center` to each edge of the ring
/// (a buffer of rows: its points).
#[differentiate(wrt(center))]
fn film_area(center: [f64; 3], ring: &[[f64; 3]]) -> f64 {
    let n = ring.len();
    let mut total = 0.0;
    for i in 0..n {
        let j = (i + 1) % n;
        total += triangle_area(center, ring[i], ring[j]);
    }
    total
}

fn main() {
    // A unit circle bent into a saddle, z = 0.3 sin 2θ.
    let n = 24;
    let ring: Vec<[f64; 3]> = (0..n)
        .map(|k| {
            let theta = std::f64::consts::TAU * f64::from(k) / f64::from(n);
            [theta.cos(), theta.sin(), 0.3 * (2.0 * theta).sin()]
        })
        .collect();

    // `_vjp` returns the adjoint of the array by value.
    let mut center = [0.4, -0.2, 1.0];
    let area = |p: &[f64]| film_area([p[0], p[1], p[2]], &ring);
    let gradient = |p: &[f64]| film_area_vjp([p[0], p[1], p[2]], &ring, 1.0).1.to_vec();
    check::gradient(area, gradient, &center).assert_within(1e-7);
    println!("gradient matches finite differences at {center:?}");

    let (start, _) = film_area_vjp(center, &ring, 1.0);
    let mut steps = 0;
    loop {
        let (_, d_center) = film_area_vjp(center, &ring, 1.0);
        if norm(d_center) < 1e-10 || steps == 10_000 {
            break;
        }
        for (c, d) in center.iter_mut().zip(d_center) {
            *c -= 0.2 * d;
        }
        steps += 1;
    }
    let (end, d_center) = film_area_vjp(center, &ring, 1.0);
    println!(
        "area {start:.6} -> {end:.6} in {steps} steps; the free vertex rests at ({:.1e}, {:.1e}, {:.1e})",
        center[0], center[1], center[2]
    );
    assert!(end < start && norm(d_center) < 1e-10, "descent converges");
    // The saddle is symmetric under θ → θ + π and z → -z at θ → -θ: the
    // least area puts the vertex at the ring's centre.
    assert!(norm(center) < 1e-8, "the vertex ends at the centre");
}
