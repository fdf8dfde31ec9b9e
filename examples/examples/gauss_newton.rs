//! A Gauss–Newton fit with the Jacobian from forward mode.
//!
//! Fits the decay `y = a · e^(−k t) + c` to 40 noisy samples. The residuals
//! form a map from the 3 parameters to 40 values, so its Jacobian is cheapest
//! by columns: vector forward mode gives all three in one call of the
//! generated `residuals_jvp_lanes` (`ad_runtime::jacobian::forward_lanes`).
//! Each Gauss–Newton step solves the normal equations `JᵀJ δ = −Jᵀr` (a 3 × 3
//! system).
//!
//! Run with `cargo run --example gauss_newton`.

// Small dense linear algebra reads best with indices.
#![allow(clippy::needless_range_loop)]

use ad_examples::support::solve3;
use ad_runtime::{differentiate, jacobian};

/// The residuals of the model against the samples, one per sample; the
/// samples are data (`wrt(p)`).
#[differentiate(vjp, jvp, jvp_lanes, wrt(p))]
fn residuals(p: &[f64], t: &[f64], y: &[f64]) -> Vec<f64> {
    t.iter()
        .zip(y)
        .map(|(&t, &y)| p[0] * (-p[1] * t).exp() + p[2] - y)
        .collect()
}

fn main() {
    // Samples of 2.5 e^(−1.3 t) + 0.4, with a deterministic "noise".
    let t: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.1).collect();
    let y: Vec<f64> = t
        .iter()
        .enumerate()
        .map(|(i, &t)| 2.5 * (-1.3 * t).exp() + 0.4 + 0.01 * ((i * 7 % 11) as f64 - 5.0) / 5.0)
        .collect();
    let (m, n) = (t.len(), 3);
    let mut p = vec![1.0, 0.5, 0.0];
    println!("Gauss-Newton fit of y = a e^(-k t) + c to {m} samples");
    for iteration in 0..20 {
        let r = residuals(&p, &t, &y);
        let cost: f64 = r.iter().map(|r| r * r).sum::<f64>() / 2.0;
        // 40 × 3: vector forward mode, the three columns in one call.
        let j = jacobian::forward_lanes::<f64, 3>(m, n, |u, columns| {
            let (_, tangents) = residuals_jvp_lanes(&p, u, &t, &y);
            columns.copy_from_slice(&tangents);
        });
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for i in 0..m {
            let row = &j[i * n..(i + 1) * n];
            for a in 0..n {
                jtr[a] -= row[a] * r[i];
                for b in 0..n {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        let delta = solve3(jtj, jtr);
        let size = delta.iter().map(|d| d.abs()).fold(0.0, f64::max);
        println!(
            "  iteration {iteration:2}: cost = {cost:.6e}, a = {:.5}, k = {:.5}, c = {:.5}",
            p[0], p[1], p[2]
        );
        for (p, d) in p.iter_mut().zip(delta) {
            *p += d;
        }
        if size < 1e-12 {
            break;
        }
    }
    println!("fitted a = {:.4}, k = {:.4}, c = {:.4}", p[0], p[1], p[2]);
    assert!((p[0] - 2.5).abs() < 0.05 && (p[1] - 1.3).abs() < 0.05 && (p[2] - 0.4).abs() < 0.05);

    // The Jacobian from forward mode, one `_jvp` per column, has the bits of
    // vector mode's, and agrees with the one from reverse mode.
    let by_columns = jacobian::forward(m, n, |u, column| {
        column.copy_from_slice(&residuals_jvp(&p, u, &t, &y).1);
    });
    let by_lanes = jacobian::forward_lanes::<f64, 3>(m, n, |u, columns| {
        columns.copy_from_slice(&residuals_jvp_lanes(&p, u, &t, &y).1);
    });
    assert_eq!(by_lanes, by_columns);
    let by_rows = jacobian::reverse(m, n, |seed, row| {
        residuals_vjp(&p, row, &t, &y, seed);
    });
    let gap = by_columns
        .iter()
        .zip(&by_rows)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("forward and reverse Jacobians differ by at most {gap:.1e}");
    assert!(gap < 1e-12);
}
