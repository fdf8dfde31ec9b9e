//! Peak heap memory of `_vjp` against the primal, for every benchmark workload.
//!
//! A counting global allocator tracks the bytes currently allocated and their
//! peak. For each call, the peak is reset to the current level just before it, so
//! the number printed is what the call itself added at its highest point (inputs
//! and shadows, allocated by the caller beforehand, are not counted; a returned
//! vector is). It also prints how many allocations each call made.
//!
//! Run with `cargo run --release --example memory`; the table is in
//! `docs/performance.md`.

use std::hint::black_box;

use ad_examples::counting::{Counting, human};
use ad_examples::gradbench::{gmm, llsq, lse, lstm, ode};
use ad_examples::workloads::*;

/// A scalar function of a slice, and its `_vjp`.
type Primal = fn(&[f64]) -> f64;
type Vjp = fn(&[f64], &mut [f64], f64) -> f64;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` once and returns the peak bytes it added over what was in use before,
/// and the number of allocations it made (see [`ad_examples::counting::measure`]).
fn measure<T>(f: impl FnOnce() -> T) -> (usize, usize) {
    let ((), peak, allocations) = ad_examples::counting::measure(|| {
        black_box(f());
    });
    (peak, allocations)
}

/// The size of the inputs, for scale.
fn input_bytes(n: usize) -> String {
    human(n * std::mem::size_of::<f64>())
}

fn row(name: &str, inputs: String, primal: (usize, usize), vjp: (usize, usize)) {
    let ratio = if primal.0 == 0 {
        if vjp.0 == 0 {
            "–".to_owned()
        } else {
            "∞".to_owned()
        }
    } else {
        format!("{:.1}", vjp.0 as f64 / primal.0 as f64)
    };
    println!(
        "| {name} | {inputs} | {} ({} allocs) | {} ({} allocs) | {ratio} |",
        human(primal.0),
        primal.1,
        human(vjp.0),
        vjp.1
    );
}

fn main() {
    println!("| workload | inputs | primal peak | `_vjp` peak | ratio |");
    println!("|---|---|---|---|---|");

    for (n, name) in [
        (1_000, "W1 rosenbrock n=1e3"),
        (1_000_000, "W1 rosenbrock n=1e6"),
    ] {
        let x = inputs(n, -1.5, 1.5);
        let mut g = vec![0.0; n];
        let p = measure(|| rosenbrock(&x));
        let v = measure(|| rosenbrock_vjp(&x, &mut g, 1.0));
        row(name, input_bytes(n), p, v);
    }

    let m = MlpProblem::new();
    let mut g = vec![0.0; MLP_PARAMS];
    let p = measure(|| mlp(&m.params, &m.x, &m.labels));
    let v = measure(|| mlp_vjp(&m.params, &mut g, &m.x, &m.labels, 1.0));
    row("W2 mlp", input_bytes(MLP_PARAMS + m.x.len()), p, v);

    let p = measure(|| w3(0.7, -0.3));
    let v = measure(|| w3_vjp(0.7, -0.3, 1.0));
    row("W3 scalar", "16 B".to_owned(), p, v);

    let n = 1_000_000;
    let x = inputs(n, -5.0, 5.0);
    let mut g = vec![0.0; n];
    let forms: [(&str, Primal, Vjp); 3] = [
        ("W4 logsumexp loops n=1e6", lse_loops, lse_loops_vjp),
        (
            "W4 logsumexp detached n=1e6",
            lse_detached,
            lse_detached_vjp,
        ),
        (
            "W4 logsumexp primitive n=1e6",
            lse_primitive,
            lse_primitive_vjp,
        ),
    ];
    for (name, primal, vjp) in forms {
        let p = measure(|| primal(&x));
        let v = measure(|| vjp(&x, &mut g, 1.0));
        row(name, input_bytes(n), p, v);
    }

    let x = inputs(LLSQ_M, 0.0, 1.0);
    let mut g = vec![0.0; LLSQ_M];
    let p = measure(|| llsq::primal(&x, LLSQ_N));
    let v = measure(|| llsq::primal_vjp(&x, &mut g, LLSQ_N, 1.0));
    row("llsq m=128 n=1024", input_bytes(LLSQ_M), p, v);

    let x = inputs(LSE_N, -5.0, 5.0);
    let mut g = vec![0.0; LSE_N];
    let p = measure(|| lse::primal(&x));
    let v = measure(|| lse::primal_vjp(&x, &mut g, 1.0));
    row("lse n=1e5", input_bytes(LSE_N), p, v);

    let x = inputs(ODE_N, 0.0, 1.0);
    let seed = ode_seed(ODE_N);
    let mut g = vec![0.0; ODE_N];
    let p = measure(|| ode::primal(&x, ODE_S));
    let v = measure(|| ode::primal_vjp(&x, &mut g, ODE_S, &seed));
    row("ode n=1000 s=10", input_bytes(ODE_N), p, v);

    let q = gmm_problem();
    let k0 = gmm::constant(q.d, q.k, q.n, q.gamma, q.m);
    let mut ga = vec![0.0; q.alpha.len()];
    let mut gm = vec![0.0; q.mu.len()];
    let mut gq = vec![0.0; q.q.len()];
    let mut gl = vec![0.0; q.l.len()];
    let p = measure(|| {
        gmm::objective(
            &q.alpha, &q.mu, &q.q, &q.l, &q.x, q.d, q.n, q.gamma, q.m, k0, false,
        )
    });
    let v = measure(|| {
        gmm::objective_vjp(
            &q.alpha, &mut ga, &q.mu, &mut gm, &q.q, &mut gq, &q.l, &mut gl, &q.x, q.d, q.n,
            q.gamma, q.m, k0, false, 1.0,
        )
    });
    let params = q.alpha.len() + q.mu.len() + q.q.len() + q.l.len();
    row(
        "gmm d=10 k=25 n=1000",
        input_bytes(params + q.x.len()),
        p,
        v,
    );

    let (l, b, c) = LSTM_LBC;
    let [main, extra, state, sequence] = lstm_problem();
    let mut gm = vec![0.0; main.len()];
    let mut ge = vec![0.0; extra.len()];
    let p = measure(|| lstm::objective(&main, &extra, &state, &sequence, l, b, c));
    let v = measure(|| {
        lstm::objective_vjp(
            &main, &mut gm, &extra, &mut ge, &state, &sequence, l, b, c, 1.0,
        )
    });
    let all = main.len() + extra.len() + state.len() + sequence.len();
    row("lstm l=2 b=14 c=1024", input_bytes(all), p, v);
}
