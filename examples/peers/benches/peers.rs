//! `#[differentiate]`'s `_vjp` against the peers a user would pick instead, in one
//! run: `num-dual` (forward mode, `Dual64`), `reverse` (a tape of scalar operations)
//! and `candle-core` (tensor autograd on the CPU).
//!
//! Every group times `vjp` (ours) and each peer that can express the workload.
//! `num_dual_1dir` is **one** forward pass, the derivative along one input: a
//! gradient needs one pass per input, so its cost is that time × the number of
//! inputs (`docs/performance.md` reports it so). Before anything is timed, every
//! peer's value and gradient (num-dual's one direction) are checked against `_vjp`.
//!
//! Run with `RAYON_NUM_THREADS=1 cargo bench --manifest-path examples/peers/Cargo.toml`
//! (one thread for candle, as every other contender has one).

use std::hint::black_box;
use std::time::Duration;

use ad_examples::gradbench::{gmm, llsq, lse, lstm, ode};
use ad_examples::workloads::{self as w, inputs};
use ad_peers::{candle, constant, seeded, tape_gradient};
use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use num_dual::Dual64;
use reverse::Tape;

/// Panics unless `peer` agrees with `ours` to `1e-8` relative per element, or to
/// `1e-10` of the largest element (summation orders differ between the two).
fn agree(what: &str, ours: &[f64], peer: &[f64]) {
    assert_eq!(ours.len(), peer.len(), "{what}: lengths differ");
    let largest = ours.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (&u, &v)) in ours.iter().zip(peer).enumerate() {
        let tolerance = (1e-8 * u.abs().max(v.abs())).max(1e-10 * largest);
        assert!(
            (u - v).abs() <= tolerance,
            "{what}: element {i}: _vjp {u:e} vs peer {v:e}"
        );
    }
    eprintln!("check {what}: agrees with _vjp");
}

type Group<'a> = BenchmarkGroup<'a, WallTime>;

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
}

fn bench_w1(c: &mut Criterion) {
    for (n, name) in [
        (1_000, "peers_w1_rosenbrock_1e3"),
        (1_000_000, "peers_w1_rosenbrock_1e6"),
    ] {
        let x = inputs(n, -1.5, 1.5);
        let mut g = vec![0.0; n];
        let value = w::rosenbrock_vjp(&x, &mut g, 1.0);
        let tape = Tape::new();
        let (v, tg) = tape_gradient(&tape, &[&x], |v| ad_peers::rosenbrock(&v[0]));
        agree(&format!("{name} reverse"), &[value], &[v]);
        agree(&format!("{name} reverse gradient"), &g, &tg);
        let d = ad_peers::rosenbrock(&seeded(&x, 0));
        agree(&format!("{name} num-dual"), &[value, g[0]], &[d.re, d.eps]);
        let (v, cg) = candle::rosenbrock(&x).unwrap();
        agree(&format!("{name} candle"), &[value], &[v]);
        agree(&format!("{name} candle gradient"), &g, &cg);

        let mut group = c.benchmark_group(name);
        group.bench_function("vjp", |b| {
            b.iter(|| w::rosenbrock_vjp(black_box(&x), &mut g, 1.0))
        });
        group.bench_function("num_dual_1dir", |b| {
            b.iter(|| ad_peers::rosenbrock(&seeded(black_box(&x), 0)))
        });
        group.bench_function("reverse", |b| {
            b.iter(|| tape_gradient(&tape, &[black_box(&x)], |v| ad_peers::rosenbrock(&v[0])))
        });
        group.bench_function("candle", |b| {
            b.iter(|| candle::rosenbrock(black_box(&x)).unwrap())
        });
        group.finish();
    }
}

fn bench_w2(c: &mut Criterion) {
    let p = w::MlpProblem::new();
    let mut g = vec![0.0; w::MLP_PARAMS];
    let value = w::mlp_vjp(&p.params, &mut g, &p.x, &p.labels, 1.0);
    let tape = Tape::new();
    let (v, tg) = tape_gradient(&tape, &[&p.params], |v| {
        ad_peers::mlp(&v[0], &p.x, &p.labels)
    });
    agree("W2 reverse", &[value], &[v]);
    agree("W2 reverse gradient", &g, &tg);
    let d = ad_peers::mlp(&seeded(&p.params, 0), &p.x, &p.labels);
    agree("W2 num-dual", &[value, g[0]], &[d.re, d.eps]);
    let data = candle::MlpData::new(&p.x, &p.labels, w::MLP_IN, w::MLP_CLASSES).unwrap();
    let (v, cg) = candle::mlp(&p.params, &data).unwrap();
    agree("W2 candle", &[value], &[v]);
    agree("W2 candle gradient", &g, &cg);

    let mut group = c.benchmark_group("peers_w2_mlp");
    group.bench_function("vjp", |b| {
        b.iter(|| w::mlp_vjp(black_box(&p.params), &mut g, &p.x, &p.labels, 1.0))
    });
    group.bench_function("num_dual_1dir", |b| {
        b.iter(|| ad_peers::mlp(&seeded(black_box(&p.params), 0), &p.x, &p.labels))
    });
    group.bench_function("reverse", |b| {
        b.iter(|| {
            tape_gradient(&tape, &[black_box(&p.params)], |v| {
                ad_peers::mlp(&v[0], &p.x, &p.labels)
            })
        })
    });
    group.bench_function("candle", |b| {
        b.iter(|| candle::mlp(black_box(&p.params), &data).unwrap())
    });
    group.finish();
}

fn bench_w3(c: &mut Criterion) {
    let (x, y) = (0.7, -0.3);
    let (value, d_x, d_y) = w::w3_vjp(x, y, 1.0);
    let tape = Tape::new();
    let (v, tg) = tape_gradient(&tape, &[&[x, y]], |v| ad_peers::w3(v[0][0], v[0][1]));
    agree("W3 reverse", &[value, d_x, d_y], &[v, tg[0], tg[1]]);
    let dx = ad_peers::w3(Dual64::new(x, 1.0), Dual64::from_re(y));
    let dy = ad_peers::w3(Dual64::from_re(x), Dual64::new(y, 1.0));
    agree("W3 num-dual", &[value, d_x, d_y], &[dx.re, dx.eps, dy.eps]);
    let (v, cx, cy) = candle::w3(x, y).unwrap();
    agree("W3 candle", &[value, d_x, d_y], &[v, cx, cy]);

    let mut group = c.benchmark_group("peers_w3_scalar");
    group.bench_function("vjp", |b| {
        b.iter(|| w::w3_vjp(black_box(x), black_box(y), 1.0))
    });
    // Two inputs: both directions, the whole gradient.
    group.bench_function("num_dual_all", |b| {
        b.iter(|| {
            let (x, y) = (black_box(x), black_box(y));
            let dx = ad_peers::w3(Dual64::new(x, 1.0), Dual64::from_re(y));
            let dy = ad_peers::w3(Dual64::from_re(x), Dual64::new(y, 1.0));
            (dx.eps, dy.eps)
        })
    });
    group.bench_function("reverse", |b| {
        b.iter(|| {
            tape_gradient(&tape, &[&[black_box(x), black_box(y)]], |v| {
                ad_peers::w3(v[0][0], v[0][1])
            })
        })
    });
    group.bench_function("candle", |b| {
        b.iter(|| candle::w3(black_box(x), black_box(y)).unwrap())
    });
    group.finish();
}

/// W4 (n = 10⁶, `lse_loops`) and the `lse` eval (the same function at GradBench's
/// size).
fn bench_lse(c: &mut Criterion) {
    for (n, name, vjp) in [
        (
            1_000_000,
            "peers_w4_logsumexp_1e6",
            w::lse_loops_vjp as fn(&[f64], &mut [f64], f64) -> f64,
        ),
        (w::LSE_N, "peers_gb_lse", lse::primal_vjp),
    ] {
        let x = inputs(n, -5.0, 5.0);
        let mut g = vec![0.0; n];
        let value = vjp(&x, &mut g, 1.0);
        let tape = Tape::new();
        let (v, tg) = tape_gradient(&tape, &[&x], |v| ad_peers::lse(&v[0]));
        agree(&format!("{name} reverse"), &[value], &[v]);
        agree(&format!("{name} reverse gradient"), &g, &tg);
        let d = ad_peers::lse(&seeded(&x, 0));
        agree(&format!("{name} num-dual"), &[value, g[0]], &[d.re, d.eps]);
        let (v, cg) = candle::lse(&x).unwrap();
        agree(&format!("{name} candle"), &[value], &[v]);
        agree(&format!("{name} candle gradient"), &g, &cg);

        let mut group = c.benchmark_group(name);
        group.bench_function("vjp", |b| b.iter(|| vjp(black_box(&x), &mut g, 1.0)));
        group.bench_function("num_dual_1dir", |b| {
            b.iter(|| ad_peers::lse(&seeded(black_box(&x), 0)))
        });
        group.bench_function("reverse", |b| {
            b.iter(|| tape_gradient(&tape, &[black_box(&x)], |v| ad_peers::lse(&v[0])))
        });
        group.bench_function("candle", |b| b.iter(|| candle::lse(black_box(&x)).unwrap()));
        group.finish();
    }
}

fn bench_llsq(c: &mut Criterion) {
    let (m, n) = (w::LLSQ_M, w::LLSQ_N);
    let x = inputs(m, 0.0, 1.0);
    let mut g = vec![0.0; m];
    let value = llsq::primal_vjp(&x, &mut g, n, 1.0);
    let tape = Tape::new();
    let (v, tg) = tape_gradient(&tape, &[&x], |v| ad_peers::llsq(&v[0], n));
    agree("llsq reverse", &[value], &[v]);
    agree("llsq reverse gradient", &g, &tg);
    let d = ad_peers::llsq(&seeded(&x, 0), n);
    agree("llsq num-dual", &[value, g[0]], &[d.re, d.eps]);
    let data = candle::LlsqData::new(m, n).unwrap();
    let (v, cg) = candle::llsq(&x, &data).unwrap();
    agree("llsq candle", &[value], &[v]);
    agree("llsq candle gradient", &g, &cg);

    let mut group = c.benchmark_group("peers_gb_llsq");
    group.bench_function("vjp", |b| {
        b.iter(|| llsq::primal_vjp(black_box(&x), &mut g, n, 1.0))
    });
    group.bench_function("num_dual_1dir", |b| {
        b.iter(|| ad_peers::llsq(&seeded(black_box(&x), 0), n))
    });
    group.bench_function("reverse", |b| {
        b.iter(|| tape_gradient(&tape, &[black_box(&x)], |v| ad_peers::llsq(&v[0], n)))
    });
    group.bench_function("candle", |b| {
        b.iter(|| candle::llsq(black_box(&x), &data).unwrap())
    });
    group.finish();
}

fn bench_ode(c: &mut Criterion) {
    let (n, s) = (w::ODE_N, w::ODE_S);
    let x = inputs(n, 0.0, 1.0);
    let seed = w::ode_seed(n);
    let mut g = vec![0.0; n];
    let y = ode::primal_vjp(&x, &mut g, s, &seed);
    let tape = Tape::new();
    let (v, tg) = tape_gradient(&tape, &[&x], |v| ad_peers::ode(&v[0], s)[n - 1]);
    agree("ode reverse", &[y[n - 1]], &[v]);
    agree("ode reverse gradient", &g, &tg);
    let d = ad_peers::ode(&seeded(&x, 0), s)[n - 1];
    agree("ode num-dual", &[y[n - 1], g[0]], &[d.re, d.eps]);

    let mut group = c.benchmark_group("peers_gb_ode");
    group.bench_function("vjp", |b| {
        b.iter(|| ode::primal_vjp(black_box(&x), &mut g, s, &seed))
    });
    group.bench_function("num_dual_1dir", |b| {
        b.iter(|| ad_peers::ode(&seeded(black_box(&x), 0), s))
    });
    group.bench_function("reverse", |b| {
        b.iter(|| tape_gradient(&tape, &[black_box(&x)], |v| ad_peers::ode(&v[0], s)[n - 1]))
    });
    group.finish();
}

fn bench_gmm(c: &mut Criterion) {
    let p = w::gmm_problem();
    let k0 = gmm::constant(p.d, p.k, p.n, p.gamma, p.m);
    let mut g = [
        vec![0.0; p.alpha.len()],
        vec![0.0; p.mu.len()],
        vec![0.0; p.q.len()],
        vec![0.0; p.l.len()],
    ];
    let [ga, gm, gq, gl] = &mut g;
    let value = gmm::objective_vjp(
        &p.alpha, ga, &p.mu, gm, &p.q, gq, &p.l, gl, &p.x, p.d, p.n, p.gamma, p.m, k0, false, 1.0,
    );
    let ours: Vec<f64> = g.concat();
    let tape = Tape::new();
    let (v, tg) = tape_gradient(&tape, &[&p.alpha, &p.mu, &p.q, &p.l], |v| {
        ad_peers::gmm(&v[0], &v[1], &v[2], &v[3], &p.x, p.d, p.n, p.gamma, p.m, k0)
    });
    agree("gmm reverse", &[value], &[v]);
    agree("gmm reverse gradient", &ours, &tg);
    let dual = || {
        ad_peers::gmm(
            &seeded(&p.alpha, 0),
            &constant(&p.mu),
            &constant(&p.q),
            &constant(&p.l),
            &p.x,
            p.d,
            p.n,
            p.gamma,
            p.m,
            k0,
        )
    };
    let d = dual();
    agree("gmm num-dual", &[value, ours[0]], &[d.re, d.eps]);

    let mut group = c.benchmark_group("peers_gb_gmm");
    let [ga, gm, gq, gl] = &mut g;
    group.bench_function("vjp", |b| {
        b.iter(|| {
            gmm::objective_vjp(
                black_box(&p.alpha),
                ga,
                &p.mu,
                gm,
                &p.q,
                gq,
                &p.l,
                gl,
                &p.x,
                p.d,
                p.n,
                p.gamma,
                p.m,
                k0,
                false,
                1.0,
            )
        })
    });
    group.bench_function("num_dual_1dir", |b| b.iter(dual));
    group.bench_function("reverse", |b| {
        b.iter(|| {
            tape_gradient(&tape, &[black_box(&p.alpha), &p.mu, &p.q, &p.l], |v| {
                ad_peers::gmm(&v[0], &v[1], &v[2], &v[3], &p.x, p.d, p.n, p.gamma, p.m, k0)
            })
        })
    });
    group.finish();
}

fn bench_lstm(c: &mut Criterion) {
    let (l, b, cc) = w::LSTM_LBC;
    let [main, extra, state, sequence] = w::lstm_problem();
    let mut gm = vec![0.0; main.len()];
    let mut ge = vec![0.0; extra.len()];
    let value = lstm::objective_vjp(
        &main, &mut gm, &extra, &mut ge, &state, &sequence, l, b, cc, 1.0,
    );
    let ours = [gm.clone(), ge.clone()].concat();
    let tape = Tape::new();
    let (v, tg) = tape_gradient(&tape, &[&main, &extra], |v| {
        ad_peers::lstm(&v[0], &v[1], &state, &sequence, l, b, cc)
    });
    agree("lstm reverse", &[value], &[v]);
    agree("lstm reverse gradient", &ours, &tg);
    let dual = || {
        ad_peers::lstm(
            &seeded(&main, 0),
            &constant(&extra),
            &state,
            &sequence,
            l,
            b,
            cc,
        )
    };
    let d = dual();
    agree("lstm num-dual", &[value, ours[0]], &[d.re, d.eps]);

    let mut group: Group<'_> = c.benchmark_group("peers_gb_lstm");
    group.bench_function("vjp", |bench| {
        bench.iter(|| {
            lstm::objective_vjp(
                black_box(&main),
                &mut gm,
                &extra,
                &mut ge,
                &state,
                &sequence,
                l,
                b,
                cc,
                1.0,
            )
        })
    });
    group.bench_function("num_dual_1dir", |bench| bench.iter(dual));
    group.bench_function("reverse", |bench| {
        bench.iter(|| {
            tape_gradient(&tape, &[black_box(&main), &extra], |v| {
                ad_peers::lstm(&v[0], &v[1], &state, &sequence, l, b, cc)
            })
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_w1, bench_w2, bench_w3, bench_lse, bench_llsq, bench_ode, bench_gmm, bench_lstm
}
criterion_main!(benches);
