//! Checkpointing measured: the peak memory and the time of `_vjp` against
//! the number of saved states `K`, for two long loops, each also without
//! checkpointing (taped):
//!
//! - GradBench's `ode` objective (n = 10⁴ equations, s = 10⁴ Runge–Kutta
//!   steps), whose taped `_vjp` keeps every stage of every step
//!   (`ode::primal` and `ode::primal_checkpointed`);
//! - a mass–spring chain (16 masses) stepped 10⁶ times.
//!
//! Run with `cargo run --release -p ad-examples --example checkpointing`
//! (`-- quick` for small sizes, as CI does); it prints the tables of
//! docs/checkpointing.md and, with `-- plot`, writes docs/checkpointing.svg.

use std::hint::black_box;
use std::time::Instant;

use ad_examples::counting::{Counting, human, measure};
use ad_examples::gradbench::ode;
use ad_runtime::differentiate;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A chain of masses on springs with a cubic term, stepped by
/// semi-implicit Euler.
macro_rules! chain {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x0: &[f64], k: f64, steps: usize, snapshots: usize) -> f64 {
            let _ = snapshots;
            let m = x0.len();
            let mut x = x0.to_vec();
            let mut v = vec![0.0; m];
            let dt = 1e-4;
            $(#[$ck])?
            for _ in 0..steps {
                for i in 1..m - 1 {
                    let pull = x[i - 1] - 2.0 * x[i] + x[i + 1];
                    v[i] += dt * (k * pull - 0.5 * x[i].powi(3));
                }
                for i in 1..m - 1 {
                    x[i] += dt * v[i];
                }
            }
            x.iter().map(|p| p * p).sum()
        }
    };
}
chain!(chain_checkpointed, checkpoint(snapshots = snapshots));
chain!(chain_taped);

/// The median of three runs of `f`, in seconds, and the peak memory of
/// the first.
fn timed<T>(mut f: impl FnMut() -> T) -> (f64, usize) {
    let (_, peak, _) = measure(|| black_box(f()));
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[1], peak)
}

/// One measured configuration: `K` (`None`: taped), seconds, peak bytes.
struct Point {
    snapshots: Option<usize>,
    seconds: f64,
    peak: usize,
}

fn table(title: &str, primal: f64, points: &[Point]) {
    println!("\n{title} (primal {:.3} s)\n", primal);
    println!("| `K` | `_vjp` peak memory | `_vjp` time | ÷ primal | ÷ taped `_vjp` |");
    println!("|---|---|---|---|---|");
    let taped = points
        .iter()
        .find(|point| point.snapshots.is_none())
        .expect("taped");
    for point in points {
        let k = point
            .snapshots
            .map_or_else(|| "taped".to_owned(), |k| k.to_string());
        println!(
            "| {k} | {} | {:.3} s | {:.2} | {:.2} |",
            human(point.peak),
            point.seconds,
            point.seconds / primal,
            point.seconds / taped.seconds
        );
    }
}

/// Ks around √N: √N/4 … 4√N.
fn ks(steps: usize) -> Vec<usize> {
    let root = steps.isqrt().max(4);
    vec![root / 4, root / 2, root, root * 2, root * 4]
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "quick");
    let plot = std::env::args().any(|arg| arg == "plot");
    let (n, s) = if quick { (100, 400) } else { (10_000, 10_000) };
    let x: Vec<f64> = (0..n)
        .map(|i| 0.5 + (i as f64 * 0.37).sin() * 0.1)
        .collect();
    let mut seed = vec![0.0; n];
    seed[n - 1] = 1.0;
    let (primal, _) = timed(|| ode::primal(&x, s));
    let mut ode_points = Vec::new();
    let mut expected = vec![0.0; n];
    let (seconds, peak) = timed(|| {
        expected.iter_mut().for_each(|d| *d = 0.0);
        ode::primal_vjp(&x, &mut expected, s, &seed)
    });
    ode_points.push(Point {
        snapshots: None,
        seconds,
        peak,
    });
    for k in ks(s) {
        let mut d_x = vec![0.0; n];
        let (seconds, peak) = timed(|| {
            d_x.iter_mut().for_each(|d| *d = 0.0);
            ode::primal_checkpointed_vjp(&x, &mut d_x, s, k, &seed)
        });
        assert_eq!(d_x, expected, "the same gradient, bit for bit");
        ode_points.push(Point {
            snapshots: Some(k),
            seconds,
            peak,
        });
    }
    table(&format!("ode, n = {n}, s = {s} steps"), primal, &ode_points);

    let steps = if quick { 10_000 } else { 1_000_000 };
    let x0: Vec<f64> = (0..16).map(|i| (i as f64 * 0.7).sin()).collect();
    let (primal, _) = timed(|| chain_taped(&x0, 30.0, steps, 0));
    let mut chain_points = Vec::new();
    let mut expected = vec![0.0; 16];
    let (seconds, peak) = timed(|| {
        expected.iter_mut().for_each(|d| *d = 0.0);
        chain_taped_vjp(&x0, &mut expected, 30.0, steps, 0, 1.0)
    });
    chain_points.push(Point {
        snapshots: None,
        seconds,
        peak,
    });
    for k in ks(steps) {
        let mut d_x = vec![0.0; 16];
        let (seconds, peak) = timed(|| {
            d_x.iter_mut().for_each(|d| *d = 0.0);
            chain_checkpointed_vjp(&x0, &mut d_x, 30.0, steps, k, 1.0)
        });
        assert_eq!(d_x, expected, "the same gradient, bit for bit");
        chain_points.push(Point {
            snapshots: Some(k),
            seconds,
            peak,
        });
    }
    table(
        &format!("mass–spring chain, 16 masses, {steps} steps"),
        primal,
        &chain_points,
    );

    if plot {
        let svg = svg(&[("ode", &ode_points), ("chain", &chain_points)]);
        std::fs::write("docs/checkpointing.svg", svg).expect("docs/checkpointing.svg is written");
        println!("\nwrote docs/checkpointing.svg");
    }
}

/// Two panels, peak memory and time ÷ taped, against `K` (log scales),
/// one line per workload; the taped `_vjp` is the dashed level.
fn svg(series: &[(&str, &[Point])]) -> String {
    const W: f64 = 360.0;
    const H: f64 = 220.0;
    const PAD: f64 = 48.0;
    let colors = ["#1f77b4", "#d62728"];
    let all: Vec<&Point> = series
        .iter()
        .flat_map(|(_, points)| points.iter())
        .collect();
    let ks: Vec<f64> = all
        .iter()
        .filter_map(|p| p.snapshots)
        .map(|k| k as f64)
        .collect();
    let (kmin, kmax) = (
        ks.iter().copied().fold(f64::INFINITY, f64::min).ln(),
        ks.iter().copied().fold(0.0, f64::max).ln(),
    );
    let x_of = |k: f64| PAD + (k.ln() - kmin) / (kmax - kmin) * (W - 2.0 * PAD);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        2.0 * W,
        H + 34.0
    );
    for (panel, (title, value)) in [
        (
            "peak memory of `_vjp` (log)",
            (|p: &Point| p.peak.max(1) as f64) as fn(&Point) -> f64,
        ),
        ("time ÷ taped `_vjp`", |p: &Point| p.seconds),
    ]
    .into_iter()
    .enumerate()
    {
        let left = panel as f64 * W;
        let log = panel == 0;
        let scale = |v: f64| if log { v.ln() } else { v };
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut lines = Vec::new();
        for (name, points) in series {
            let taped = points
                .iter()
                .find(|p| p.snapshots.is_none())
                .expect("taped");
            let norm = |p: &Point| {
                if log {
                    value(p)
                } else {
                    value(p) / value(taped)
                }
            };
            let ys: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| p.snapshots.map(|k| (k as f64, scale(norm(p)))))
                .collect();
            let level = scale(norm(taped));
            for &(_, y) in &ys {
                lo = lo.min(y);
                hi = hi.max(y);
            }
            lo = lo.min(level);
            hi = hi.max(level);
            lines.push((*name, ys, level));
        }
        let y_of = |v: f64| H - PAD / 2.0 - (v - lo) / (hi - lo).max(1e-12) * (H - PAD);
        // The range of the axis, at its ends.
        for v in [lo, hi] {
            let label = if log {
                human(v.exp().round() as usize)
            } else {
                format!("{v:.2}")
            };
            out.push_str(&format!(
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n",
                left + PAD - 4.0,
                y_of(v) + 4.0
            ));
        }
        out.push_str(&format!(
            "<text x=\"{}\" y=\"14\" text-anchor=\"middle\">{title}</text>\n",
            left + W / 2.0
        ));
        out.push_str(&format!(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\"/>\n<text x=\"{3}\" y=\"{4}\" text-anchor=\"middle\">K (saved states, log)</text>\n",
            left + PAD,
            H - PAD / 2.0,
            left + W - PAD,
            left + W / 2.0,
            H + 26.0
        ));
        for (index, (name, ys, level)) in lines.iter().enumerate() {
            let color = colors[index % colors.len()];
            let path: Vec<String> = ys
                .iter()
                .map(|&(k, y)| format!("{:.1},{:.1}", left + x_of(k), y_of(y)))
                .collect();
            out.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
                path.join(" ")
            ));
            out.push_str(&format!(
                "<line x1=\"{0}\" y1=\"{1:.1}\" x2=\"{2}\" y2=\"{1:.1}\" stroke=\"{color}\" stroke-dasharray=\"4 3\"/>\n",
                left + PAD,
                y_of(*level),
                left + W - PAD
            ));
            // Each K under the axis, in the line's colour.
            for &(k, _) in ys {
                out.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{color}\">{k}</text>\n",
                    left + x_of(k),
                    H - PAD / 2.0 + 12.0 + 11.0 * index as f64
                ));
            }
            let label_y = 30.0 + 14.0 * index as f64;
            out.push_str(&format!(
                "<text x=\"{}\" y=\"{label_y}\" fill=\"{color}\">{name} (dashed: taped)</text>\n",
                left + PAD
            ));
        }
    }
    out.push_str("</svg>\n");
    out
}
