//! Benchmarks of `#[differentiate]` against the primal and a hand-written gradient.
//!
//! The workloads of issue 6: W1 (extended Rosenbrock), W2 (an MLP loss), W3 (one
//! scalar expression, call overhead), W4 (logsumexp) and the GradBench problems
//! llsq, lse, ode, gmm and lstm. Each is written once as a plain function with
//! `#[differentiate]` (`ad_examples::workloads` and `ad_examples::gradbench`); next
//! to it is a gradient written by hand. Before anything is timed, every hand-written
//! gradient is checked against the generated one, so a wrong comparison stops the
//! run.
//!
//! Run with `cargo bench -p ad-examples --bench workloads`; the numbers and the
//! machine are in `docs/performance.md`. The peers (num-dual, reverse, candle) are in
//! the separate package `examples/peers`.

use std::hint::black_box;
use std::time::Duration;

use ad_examples::gradbench::{gmm, llsq, lse, lstm, ode};
use ad_examples::workloads::*;
use criterion::{Criterion, criterion_group, criterion_main};

// The shadows are zeroed once and then accumulate, as both the generated and the
// hand-written gradient add into them: no benchmark pays for a `fill(0.0)` the
// others do not.

fn w1(c: &mut Criterion, n: usize, name: &str) {
    let x = inputs(n, -1.5, 1.5);
    let mut g = vec![0.0; n];
    let mut group = c.benchmark_group(name);
    group.bench_function("primal", |b| b.iter(|| rosenbrock(black_box(&x))));
    group.bench_function("vjp", |b| {
        b.iter(|| rosenbrock_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("vjp_windows", |b| {
        b.iter(|| rosenbrock_windows_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("vjp_swapped", |b| {
        b.iter(|| rosenbrock_swapped_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("vjp_while", |b| {
        b.iter(|| rosenbrock_while_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| rosenbrock_hand(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("hand_best", |b| {
        b.iter(|| rosenbrock_hand_best(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.finish();
}

fn bench_w1(c: &mut Criterion) {
    check_all();
    w1(c, 1_000, "w1_rosenbrock_1e3");
    w1(c, 1_000_000, "w1_rosenbrock_1e6");
}

fn bench_w2(c: &mut Criterion) {
    let p = MlpProblem::new();
    let mut g = vec![0.0; MLP_PARAMS];
    let mut group = c.benchmark_group("w2_mlp");
    group.bench_function("primal", |b| {
        b.iter(|| mlp(black_box(&p.params), black_box(&p.x), &p.labels))
    });
    group.bench_function("vjp", |b| {
        b.iter(|| {
            mlp_vjp(
                black_box(&p.params),
                &mut g,
                black_box(&p.x),
                &p.labels,
                1.0,
            )
        })
    });
    group.bench_function("hand", |b| {
        b.iter(|| {
            mlp_hand(
                black_box(&p.params),
                &mut g,
                black_box(&p.x),
                &p.labels,
                1.0,
            )
        })
    });
    group.finish();
}

fn bench_w3(c: &mut Criterion) {
    let mut group = c.benchmark_group("w3_scalar");
    group.bench_function("primal", |b| b.iter(|| w3(black_box(0.7), black_box(-0.3))));
    group.bench_function("vjp", |b| {
        b.iter(|| w3_vjp(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| w3_hand(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.bench_function("hand_exact", |b| {
        b.iter(|| w3_hand_exact(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.finish();
}

fn bench_w4(c: &mut Criterion) {
    let n = 1_000_000;
    let x = inputs(n, -5.0, 5.0);
    let mut g = vec![0.0; n];
    let mut group = c.benchmark_group("w4_logsumexp_1e6");
    group.bench_function("primal_loops", |b| b.iter(|| lse_loops(black_box(&x))));
    group.bench_function("vjp_loops", |b| {
        b.iter(|| lse_loops_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("vjp_if", |b| {
        b.iter(|| lse_if_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("vjp_iter_max", |b| {
        b.iter(|| lse_iter_max_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_fold", |b| b.iter(|| lse_fold(black_box(&x))));
    group.bench_function("vjp_fold", |b| {
        b.iter(|| lse_fold_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_detached", |b| {
        b.iter(|| lse_detached(black_box(&x)))
    });
    group.bench_function("vjp_detached", |b| {
        b.iter(|| lse_detached_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_primitive", |b| {
        b.iter(|| lse_primitive(black_box(&x)))
    });
    group.bench_function("vjp_primitive", |b| {
        b.iter(|| lse_primitive_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| lse_hand(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.finish();
}

/// The heat equation (issue 16): a stencil whose adjoint adds into three
/// neighbouring elements per iteration, in three spellings.
fn bench_heat(c: &mut Criterion) {
    let n = 100_000;
    let u = inputs(n, -1.0, 1.0);
    let mut g = vec![0.0; n];
    let mut group = c.benchmark_group("heat_1e5");
    group.bench_function("primal", |b| b.iter(|| heat(black_box(&u))));
    group.bench_function("vjp", |b| {
        b.iter(|| heat_vjp(black_box(&u), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_windows", |b| b.iter(|| heat_windows(black_box(&u))));
    group.bench_function("vjp_windows", |b| {
        b.iter(|| heat_windows_vjp(black_box(&u), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("primal_swap", |b| b.iter(|| heat_swap(black_box(&u))));
    group.bench_function("vjp_swap", |b| {
        b.iter(|| heat_swap_vjp(black_box(&u), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("hand", |b| {
        b.iter(|| heat_hand(black_box(&u), black_box(&mut g), black_box(1.0)))
    });
    group.finish();
}

fn bench_gradbench(c: &mut Criterion) {
    let x = inputs(LLSQ_M, 0.0, 1.0);
    let mut g = vec![0.0; LLSQ_M];
    let mut group = c.benchmark_group("gb_llsq");
    group.bench_function("primal", |b| b.iter(|| llsq::primal(black_box(&x), LLSQ_N)));
    group.bench_function("vjp", |b| {
        b.iter(|| llsq::primal_vjp(black_box(&x), &mut g, LLSQ_N, 1.0))
    });
    group.bench_function("hand", |b| {
        b.iter(|| llsq_hand(black_box(&x), &mut g, LLSQ_N, 1.0))
    });
    group.finish();

    let x = inputs(LSE_N, -5.0, 5.0);
    let mut g = vec![0.0; LSE_N];
    let mut group = c.benchmark_group("gb_lse");
    group.bench_function("primal", |b| b.iter(|| lse::primal(black_box(&x))));
    group.bench_function("vjp", |b| {
        b.iter(|| lse::primal_vjp(black_box(&x), &mut g, 1.0))
    });
    group.bench_function("hand", |b| b.iter(|| lse_hand(black_box(&x), &mut g, 1.0)));
    group.finish();

    let x = inputs(ODE_N, 0.0, 1.0);
    let seed = ode_seed(ODE_N);
    let mut g = vec![0.0; ODE_N];
    let mut group = c.benchmark_group("gb_ode");
    group.bench_function("primal", |b| b.iter(|| ode::primal(black_box(&x), ODE_S)));
    group.bench_function("vjp", |b| {
        b.iter(|| ode::primal_vjp(black_box(&x), &mut g, ODE_S, &seed))
    });
    group.bench_function("hand", |b| {
        b.iter(|| ode_hand(black_box(&x), &mut g, ODE_S, &seed))
    });
    group.finish();

    let p = gmm_problem();
    let constant = gmm::constant(p.d, p.k, p.n, p.gamma, p.m);
    let mut ga = vec![0.0; p.alpha.len()];
    let mut gm = vec![0.0; p.mu.len()];
    let mut gq = vec![0.0; p.q.len()];
    let mut gl = vec![0.0; p.l.len()];
    let mut group = c.benchmark_group("gb_gmm");
    group.bench_function("primal", |b| {
        b.iter(|| {
            gmm::objective(
                black_box(&p.alpha),
                &p.mu,
                &p.q,
                &p.l,
                &p.x,
                p.d,
                p.n,
                p.gamma,
                p.m,
                constant,
                false,
            )
        })
    });
    group.bench_function("vjp", |b| {
        b.iter(|| {
            gmm::objective_vjp(
                black_box(&p.alpha),
                &mut ga,
                &p.mu,
                &mut gm,
                &p.q,
                &mut gq,
                &p.l,
                &mut gl,
                &p.x,
                p.d,
                p.n,
                p.gamma,
                p.m,
                constant,
                false,
                1.0,
            )
        })
    });
    group.bench_function("hand", |b| {
        b.iter(|| {
            gmm_hand(
                black_box(&p.alpha),
                &mut ga,
                &p.mu,
                &mut gm,
                &p.q,
                &mut gq,
                &p.l,
                &mut gl,
                &p.x,
                p.d,
                p.n,
                p.gamma,
                p.m,
                constant,
                1.0,
            )
        })
    });
    group.finish();

    let (l, bb, cc) = LSTM_LBC;
    let [main, extra, state, sequence] = lstm_problem();
    let mut gm = vec![0.0; main.len()];
    let mut ge = vec![0.0; extra.len()];
    let mut group = c.benchmark_group("gb_lstm");
    group.bench_function("primal", |b| {
        b.iter(|| lstm::objective(black_box(&main), &extra, &state, &sequence, l, bb, cc))
    });
    group.bench_function("vjp", |b| {
        b.iter(|| {
            lstm::objective_vjp(
                black_box(&main),
                &mut gm,
                &extra,
                &mut ge,
                &state,
                &sequence,
                l,
                bb,
                cc,
                1.0,
            )
        })
    });
    group.bench_function("hand", |b| {
        b.iter(|| {
            lstm_hand(
                black_box(&main),
                &mut gm,
                &extra,
                &mut ge,
                &state,
                &sequence,
                l,
                bb,
                cc,
                1.0,
            )
        })
    });
    group.finish();
}

/// Forward mode and second order beside reverse mode, on W1, W3 and W4: one
/// `_jvp` direction against the primal, and `_hvp` against `_vjp`.
fn bench_modes(c: &mut Criterion) {
    for n in [1_000, 1_000_000] {
        let x = inputs(n, -1.5, 1.5);
        let u = inputs_seeded(n, -1.0, 1.0, 7);
        let (mut g, mut hv) = (vec![0.0; n], vec![0.0; n]);
        let mut group = c.benchmark_group(format!("modes_w1_rosenbrock_{n}"));
        group.bench_function("primal", |b| b.iter(|| rosenbrock(black_box(&x))));
        group.bench_function("vjp", |b| {
            b.iter(|| rosenbrock_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
        });
        group.bench_function("jvp", |b| {
            b.iter(|| rosenbrock_jvp(black_box(&x), black_box(&u)))
        });
        group.bench_function("hvp", |b| {
            b.iter(|| {
                rosenbrock_hvp(
                    black_box(&x),
                    black_box(&u),
                    black_box(&mut g),
                    black_box(&mut hv),
                )
            })
        });
        group.finish();
    }
    let mut group = c.benchmark_group("modes_w3_scalar");
    group.bench_function("primal", |b| b.iter(|| w3(black_box(0.7), black_box(-0.3))));
    group.bench_function("vjp", |b| {
        b.iter(|| w3_vjp(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.bench_function("jvp", |b| {
        b.iter(|| {
            w3_jvp(
                black_box(0.7),
                black_box(1.0),
                black_box(-0.3),
                black_box(0.5),
            )
        })
    });
    group.bench_function("hvp", |b| {
        b.iter(|| {
            w3_hvp(
                black_box(0.7),
                black_box(1.0),
                black_box(-0.3),
                black_box(0.5),
            )
        })
    });
    group.finish();
    let n = 1_000_000;
    let x = inputs(n, -5.0, 5.0);
    let u = inputs_seeded(n, -1.0, 1.0, 7);
    let (mut g, mut hv) = (vec![0.0; n], vec![0.0; n]);
    let mut group = c.benchmark_group("modes_w4_logsumexp_1e6");
    group.bench_function("primal", |b| b.iter(|| lse_loops(black_box(&x))));
    group.bench_function("vjp", |b| {
        b.iter(|| lse_loops_vjp(black_box(&x), black_box(&mut g), black_box(1.0)))
    });
    group.bench_function("jvp", |b| {
        b.iter(|| lse_loops_jvp(black_box(&x), black_box(&u)))
    });
    group.bench_function("hvp", |b| {
        b.iter(|| {
            lse_loops_hvp(
                black_box(&x),
                black_box(&u),
                black_box(&mut g),
                black_box(&mut hv),
            )
        })
    });
    group.finish();
}

/// Vector forward mode: `_jvp_lanes` with `K` directions against `K` calls
/// of `_jvp` (W1, W3), and the Jacobian of a trajectory with 10 inputs and
/// 1000 outputs by vector mode, by one `_jvp` per input, and by one `_vjp`
/// per output.
fn bench_lanes(c: &mut Criterion) {
    use ad_runtime::{Lanes, jacobian};
    let n = 1_000;
    let x = inputs(n, -1.5, 1.5);
    let u = inputs_seeded(n, -1.0, 1.0, 7);
    let u4: Vec<Lanes<f64, 4>> = u.iter().map(|&u| Lanes([u, -u, 0.5 * u, 1.0])).collect();
    let u8: Vec<Lanes<f64, 8>> = u
        .iter()
        .map(|&u| Lanes(std::array::from_fn(|l| u * (l as f64 - 3.5))))
        .collect();
    let mut group = c.benchmark_group("lanes_w1_rosenbrock_1000");
    group.bench_function("primal", |b| b.iter(|| rosenbrock(black_box(&x))));
    group.bench_function("jvp", |b| {
        b.iter(|| rosenbrock_jvp(black_box(&x), black_box(&u)))
    });
    group.bench_function("jvp_lanes_4", |b| {
        b.iter(|| rosenbrock_jvp_lanes(black_box(&x), black_box(&u4)))
    });
    group.bench_function("jvp_lanes_8", |b| {
        b.iter(|| rosenbrock_jvp_lanes(black_box(&x), black_box(&u8)))
    });
    group.finish();
    let mut group = c.benchmark_group("lanes_w3_scalar");
    group.bench_function("primal", |b| b.iter(|| w3(black_box(0.7), black_box(-0.3))));
    group.bench_function("jvp", |b| {
        b.iter(|| {
            w3_jvp(
                black_box(0.7),
                black_box(1.0),
                black_box(-0.3),
                black_box(0.0),
            )
        })
    });
    group.bench_function("jvp_lanes_2", |b| {
        b.iter(|| {
            w3_jvp_lanes(
                black_box(0.7),
                black_box(Lanes([1.0, 0.0])),
                black_box(-0.3),
                black_box(Lanes([0.0, 1.0])),
            )
        })
    });
    group.bench_function("vjp", |b| {
        b.iter(|| w3_vjp(black_box(0.7), black_box(-0.3), black_box(1.0)))
    });
    group.finish();
    let (steps, dt) = (1_000, 0.01);
    let p = [2.0, 0.3, 0.5, -0.2, 0.1, 0.05, -0.4, 0.3, 0.2, -0.1];
    let mut group = c.benchmark_group("lanes_jacobian_10_by_1000");
    group.bench_function("primal", |b| {
        b.iter(|| driven_oscillator(black_box(&p), steps, dt))
    });
    group.bench_function("forward_lanes_10", |b| {
        b.iter(|| {
            jacobian::forward_lanes::<f64, 10>(steps, 10, |u, columns| {
                columns
                    .copy_from_slice(&driven_oscillator_jvp_lanes(black_box(&p), u, steps, dt).1);
            })
        })
    });
    group.bench_function("forward_lanes_4", |b| {
        b.iter(|| {
            jacobian::forward_lanes::<f64, 4>(steps, 10, |u, columns| {
                columns
                    .copy_from_slice(&driven_oscillator_jvp_lanes(black_box(&p), u, steps, dt).1);
            })
        })
    });
    group.bench_function("forward_jvp", |b| {
        b.iter(|| {
            jacobian::forward(steps, 10, |u, column| {
                column.copy_from_slice(&driven_oscillator_jvp(black_box(&p), u, steps, dt).1);
            })
        })
    });
    group.bench_function("reverse_vjp", |b| {
        b.iter(|| {
            jacobian::reverse(steps, 10, |seed, row| {
                driven_oscillator_vjp(black_box(&p), row, steps, dt, seed);
            })
        })
    });
    group.finish();
}

fn bench_rk4(c: &mut Criterion) {
    let steps = 100_000;
    let mut group = c.benchmark_group("rk4_projectile");
    group.bench_function("primal", |b| {
        b.iter(|| projectile_rk4(black_box(30.0), black_box(0.7), black_box(0.05), steps))
    });
    group.bench_function("vjp", |b| {
        b.iter(|| projectile_rk4_vjp(black_box(30.0), black_box(0.7), black_box(0.05), steps, 1.0))
    });
    // The same steps with each stage returned as an array.
    group.bench_function("primal_returned", |b| {
        b.iter(|| projectile_rk4_returned(black_box(30.0), black_box(0.7), black_box(0.05), steps))
    });
    group.bench_function("vjp_returned", |b| {
        b.iter(|| {
            projectile_rk4_returned_vjp(
                black_box(30.0),
                black_box(0.7),
                black_box(0.05),
                steps,
                1.0,
            )
        })
    });
    group.finish();
}

fn bench_custom_rule(c: &mut Criterion) {
    let n = 100_000;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
    let w: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
    let (mut d_x, mut d_w) = (vec![0.0; n], vec![0.0; n]);
    let mut group = c.benchmark_group("custom_rule_in_a_loop");
    group.bench_function("primal", |b| b.iter(|| silu_layer(black_box(&x), &w)));
    group.bench_function("vjp_custom", |b| {
        b.iter(|| silu_layer_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    group.bench_function("vjp_inline", |b| {
        b.iter(|| silu_layer_inline_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    // A rule that costs what the inline adjoint costs: only the call differs.
    group.bench_function("clip_primal", |b| b.iter(|| clip_layer(black_box(&x), &w)));
    group.bench_function("clip_vjp_custom", |b| {
        b.iter(|| clip_layer_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    group.bench_function("clip_vjp_inline", |b| {
        b.iter(|| clip_layer_inline_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    // The call's output stored and read by a second loop: the adjoint of the
    // first loop runs on its own, and the rule's pullback comes from a tape.
    group.bench_function("pairs_primal", |b| b.iter(|| clip_pairs(black_box(&x), &w)));
    group.bench_function("pairs_vjp_custom", |b| {
        b.iter(|| clip_pairs_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    group.bench_function("pairs_vjp_inline", |b| {
        b.iter(|| clip_pairs_inline_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    // The outputs read by no other adjoint code: kept with the rule's builder.
    group.bench_function("squared_primal", |b| {
        b.iter(|| clip_sum_squared(black_box(&x), &w))
    });
    group.bench_function("squared_vjp_custom", |b| {
        b.iter(|| clip_sum_squared_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    group.bench_function("squared_vjp_inline", |b| {
        b.iter(|| clip_sum_squared_inline_vjp(black_box(&x), &mut d_x, &w, &mut d_w, 1.0))
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_w1, bench_w2, bench_w3, bench_w4, bench_heat, bench_gradbench, bench_modes,
        bench_lanes, bench_rk4, bench_custom_rule
}
criterion_main!(benches);
