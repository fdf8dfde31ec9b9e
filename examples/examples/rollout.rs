//! A long physics rollout optimised by gradient descent, in bounded memory.
//!
//! A chain of masses on springs is stepped 200,000 times (semi-implicit
//! Euler); the stiffness and damping are fitted so that the chain ends where a
//! reference run with other values ends. The stepping loop is
//! `#[checkpoint(snapshots = 500)]`: `_vjp` keeps 500 loop states (the two
//! buffers and nothing else) instead of a tape of every step, and runs steps
//! again from them. Each iteration prints the loss, the steps per second
//! (forward and adjoint together) and the peak memory of the `_vjp` call,
//! measured by a counting global allocator.
//!
//! Run with `cargo run --release --example rollout` (`-- 50000` for fewer
//! steps); see docs/checkpointing.md.

use std::time::Instant;

use ad_examples::counting::{Counting, measure};
use ad_runtime::differentiate;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The chain's final positions' distance to `target`, after `steps` steps
/// from rest with the first mass displaced.
#[differentiate]
fn misfit(stiffness: f64, damping: f64, target: &[f64], steps: usize) -> f64 {
    let m = target.len();
    let mut x = vec![0.0_f64; m];
    let mut v = vec![0.0; m];
    x[1] = 1.0;
    let dt = 1e-5;
    #[checkpoint(snapshots = 500)]
    for _ in 0..steps {
        for i in 1..m - 1 {
            let pull = x[i - 1] - 2.0 * x[i] + x[i + 1];
            v[i] += dt * (stiffness * pull - damping * v[i] - 0.5 * x[i].powi(3));
        }
        for i in 1..m - 1 {
            x[i] += dt * v[i];
        }
    }
    x.iter().zip(target).map(|(p, q)| (p - q).powi(2)).sum()
}

/// Where the chain ends with the given coefficients: the reference run, the
/// same stepping as `misfit`'s, returning the positions.
fn final_positions(stiffness: f64, damping: f64, m: usize, steps: usize) -> Vec<f64> {
    let mut x = vec![0.0_f64; m];
    let mut v = vec![0.0; m];
    x[1] = 1.0;
    let dt = 1e-5;
    for _ in 0..steps {
        for i in 1..m - 1 {
            let pull = x[i - 1] - 2.0 * x[i] + x[i + 1];
            v[i] += dt * (stiffness * pull - damping * v[i] - 0.5 * x[i].powi(3));
        }
        for i in 1..m - 1 {
            x[i] += dt * v[i];
        }
    }
    x
}

fn main() {
    let steps: usize = std::env::args()
        .nth(1)
        .map_or(200_000, |arg| arg.parse().expect("a number of steps"));
    let m = 8;
    let target = final_positions(30.0, 0.5, m, steps);
    let (mut stiffness, mut damping) = (27.0, 0.7);
    let first = misfit(stiffness, damping, &target, steps);
    let mut d_target = vec![0.0; m];
    let mut rate = 0.5;
    let mut loss = first;
    println!("{steps} steps of a chain of {m} masses; fitting stiffness and damping");
    for iteration in 1..=15 {
        let start = Instant::now();
        let ((value, d_stiffness, d_damping), peak, _) =
            measure(|| misfit_vjp(stiffness, damping, &target, &mut d_target, steps, 1.0));
        let seconds = start.elapsed().as_secs_f64();
        loss = value;
        println!(
            "iteration {iteration:2}: loss {loss:.3e}, stiffness {stiffness:.4}, damping {damping:.4}, \
             {:.2e} steps/s, peak {:.1} KiB",
            steps as f64 / seconds,
            peak as f64 / 1024.0
        );
        // Gradient descent with a step that backs off when the loss grows.
        let norm = (d_stiffness * d_stiffness + d_damping * d_damping)
            .sqrt()
            .max(1e-300);
        loop {
            let (s, d) = (
                stiffness - rate * d_stiffness / norm,
                damping - rate * d_damping / norm,
            );
            if misfit(s, d, &target, steps) < loss || rate < 1e-6 {
                (stiffness, damping) = (s, d);
                break;
            }
            rate *= 0.5;
        }
        rate *= 1.5;
    }
    assert!(
        loss < first * 0.1,
        "gradient descent lowers the misfit tenfold: {first} -> {loss}"
    );
    // Taped, every step would keep at least the `m - 2` cubes' inputs and
    // the velocities they update: two floats per inner mass per step.
    let taped = (steps * 16 * (m - 2)) as f64 / f64::from(1 << 20);
    println!("taped, the loop would keep at least {taped:.1} MiB");
}
