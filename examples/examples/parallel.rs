//! Data-parallel gradients: a logistic regression over a batch of 400,000
//! points, its gradient computed on 1, 2 and 4 threads by
//! `ad_runtime::parallel::gradient_sum`, which gives the same bits for every
//! thread count (the chunks and the order of their sums do not depend on the
//! threads). Prints the time of each and the speedup on this machine.
//!
//! Run with `cargo run --release --example parallel`.

use std::time::Instant;

use ad_runtime::{differentiate, parallel};

/// The logistic loss of weights `w` (the last one a bias) over a chunk of
/// points, each `dim` features then a label in {0, 1}, stored flat.
#[differentiate(wrt(w))]
fn chunk_loss(w: &[f64], points: &[f64], dim: usize) -> f64 {
    points
        .chunks_exact(dim + 1)
        .map(|p| {
            let z: f64 = p[..dim].iter().zip(w).map(|(x, w)| x * w).sum::<f64>() + w[dim];
            let label = p[dim];
            // ln(1 + e^z) − label · z, stable for large |z|.
            z.max(0.0) + (-z.abs()).exp().ln_1p() - label * z
        })
        .sum()
}

/// Features per point.
const DIM: usize = 16;

fn main() {
    let n = 400_000;
    // Points on both sides of a plane, with a deterministic scatter: the
    // features, then the label.
    let points: Vec<[f64; DIM + 1]> = (0..n)
        .map(|i| {
            let mut p = [0.0; DIM + 1];
            for (j, x) in p.iter_mut().take(DIM).enumerate() {
                *x = ((i * 31 + j * 17) % 1000) as f64 / 500.0 - 1.0;
            }
            let side: f64 = p.iter().take(4).sum();
            p[DIM] = if side > 0.0 { 1.0 } else { 0.0 };
            p
        })
        .collect();
    let dim = DIM;
    let w: Vec<f64> = (0..=dim).map(|j| 0.1 * (j as f64).sin()).collect();
    let gradient = |threads: usize| {
        parallel::gradient_sum(&points, 4096, w.len(), threads, |chunk, d_w| {
            chunk_loss_vjp(&w, d_w, chunk.as_flattened(), dim, 1.0)
        })
    };
    let mut reference = None;
    let mut single = 0.0;
    for threads in [1, 2, 4] {
        let start = Instant::now();
        let mut result = gradient(threads);
        for _ in 0..4 {
            result = gradient(threads);
        }
        let seconds = start.elapsed().as_secs_f64() / 5.0;
        if threads == 1 {
            single = seconds;
        }
        println!(
            "{threads} thread(s): {:.1} ms per gradient, {:.2}x the speed of one",
            seconds * 1e3,
            single / seconds
        );
        match &reference {
            None => reference = Some(result),
            Some(expected) => assert_eq!(&result, expected, "the same bits for {threads} threads"),
        }
    }
    let (loss, grad) = reference.expect("computed");
    println!(
        "loss {loss:.6}, |gradient| {:.6}: the same bits on 1, 2 and 4 threads",
        grad.iter().map(|g| g * g).sum::<f64>().sqrt()
    );
}
