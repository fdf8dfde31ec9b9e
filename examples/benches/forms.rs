//! The forms benchmark: every spelling of a workload (`ad_examples::forms`,
//! made by random rewrites in `ad_testkit::forms`) timed against the
//! workload's hand-written gradient. Speed should be a property of what is
//! computed, not of how it is spelled: the table this prints reports each
//! workload's worst spelling, which is what docs/performance.md records.
//!
//! Run with `cargo bench -p ad-examples --bench forms`. Every spelling's
//! gradient is checked against the hand-written one before anything is
//! timed (and, at small sizes, by `examples/tests/forms.rs` on CI).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ad_examples::forms::{LLSQ, LSE, ROSENBROCK, W3};
use ad_examples::workloads::{
    LLSQ_M, LLSQ_N, LSE_N, assert_agree, floor_of, inputs, llsq_hand, lse_hand, rosenbrock_hand,
    w3_hand_exact,
};
use criterion::Criterion;

/// A gradient into `g` at `x`, returning the output: a spelling's `_vjp`
/// or the hand-written one, with the other arguments fixed.
type Grad = Box<dyn Fn(&[f64], &mut [f64]) -> f64>;

/// Where criterion writes its estimates, read back for the table.
fn output() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion")
}

/// One group: the hand-written gradient and every spelling's `_vjp`, each
/// checked against the hand-written one first.
fn slice_group(c: &mut Criterion, group: &str, x: &[f64], hand: &Grad, spellings: &[(&str, Grad)]) {
    let mut expected = vec![0.0; x.len()];
    hand(x, &mut expected);
    for (name, vjp) in spellings {
        let mut g = vec![0.0; x.len()];
        vjp(x, &mut g);
        assert_agree(name, &g, &expected, floor_of(&expected));
    }
    let mut g = vec![0.0; x.len()];
    let mut bench = c.benchmark_group(group);
    bench.bench_function("hand", |b| b.iter(|| hand(black_box(x), black_box(&mut g))));
    for (name, vjp) in spellings {
        bench.bench_function(*name, |b| b.iter(|| vjp(black_box(x), black_box(&mut g))));
    }
    bench.finish();
}

fn main() {
    let mut c = Criterion::default()
        .output_directory(&output())
        .sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
        .configure_from_args();
    let mut groups: Vec<(String, Vec<(&str, &str)>)> = Vec::new();

    for n in [1_000, 1_000_000] {
        let group = format!("forms_w1_{n}");
        let spellings: Vec<(&str, Grad)> = ROSENBROCK
            .iter()
            .map(|&(name, _, _, vjp)| {
                (
                    name,
                    Box::new(move |x: &[f64], g: &mut [f64]| vjp(x, g, 1.0)) as Grad,
                )
            })
            .collect();
        let hand: Grad = Box::new(|x, g| rosenbrock_hand(x, g, 1.0));
        slice_group(&mut c, &group, &inputs(n, -1.5, 1.5), &hand, &spellings);
        groups.push((group, ROSENBROCK.iter().map(|s| (s.0, s.1)).collect()));
    }

    let spellings: Vec<(&str, Grad)> = LSE
        .iter()
        .map(|&(name, _, _, vjp)| {
            (
                name,
                Box::new(move |x: &[f64], g: &mut [f64]| vjp(x, g, 1.0)) as Grad,
            )
        })
        .collect();
    let hand: Grad = Box::new(|x, g| lse_hand(x, g, 1.0));
    slice_group(
        &mut c,
        "forms_lse",
        &inputs(LSE_N, -5.0, 5.0),
        &hand,
        &spellings,
    );
    groups.push((
        "forms_lse".to_owned(),
        LSE.iter().map(|s| (s.0, s.1)).collect(),
    ));

    let spellings: Vec<(&str, Grad)> = LLSQ
        .iter()
        .map(|&(name, _, _, vjp)| {
            (
                name,
                Box::new(move |x: &[f64], g: &mut [f64]| vjp(x, g, LLSQ_N, 1.0)) as Grad,
            )
        })
        .collect();
    let hand: Grad = Box::new(|x, g| llsq_hand(x, g, LLSQ_N, 1.0));
    slice_group(
        &mut c,
        "forms_llsq",
        &inputs(LLSQ_M, 0.0, 1.0),
        &hand,
        &spellings,
    );
    groups.push((
        "forms_llsq".to_owned(),
        LLSQ.iter().map(|s| (s.0, s.1)).collect(),
    ));

    // W3: one scalar expression; the seed and inputs pass through
    // `black_box` so that nothing is folded.
    let (x, y) = (0.7, -0.4);
    let expected = w3_hand_exact(x, y, 1.0);
    let mut bench = c.benchmark_group("forms_w3");
    bench.bench_function("hand", |b| {
        b.iter(|| w3_hand_exact(black_box(x), black_box(y), black_box(1.0)))
    });
    for &(name, _, _, vjp) in W3 {
        let (out, d_x, d_y) = vjp(x, y, 1.0);
        assert_agree(
            name,
            &[out, d_x, d_y],
            &[expected.0, expected.1, expected.2],
            1.0,
        );
        bench.bench_function(name, |b| {
            b.iter(|| vjp(black_box(x), black_box(y), black_box(1.0)))
        });
    }
    bench.finish();
    groups.push((
        "forms_w3".to_owned(),
        W3.iter().map(|s| (s.0, s.1)).collect(),
    ));

    c.final_summary();
    table(&groups);
}

/// The median of one benchmark, in nanoseconds, from criterion's estimates.
fn median(group: &str, id: &str) -> Option<f64> {
    let path = output().join(group).join(id).join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// Per group: the hand-written gradient's median, then each spelling's
/// `_vjp` ÷ that, worst first; and one line per group with the worst.
fn table(groups: &[(String, Vec<(&str, &str)>)]) {
    println!("\n| group | worst spelling | ÷ hand-written | best | median of spellings |");
    println!("|---|---|---|---|---|");
    let mut details = String::new();
    for (group, spellings) in groups {
        let Some(hand) = median(group, "hand") else {
            continue;
        };
        let mut ratios: Vec<(f64, &str, &str)> = spellings
            .iter()
            .filter_map(|&(name, rewrites)| Some((median(group, name)? / hand, name, rewrites)))
            .collect();
        if ratios.is_empty() {
            continue;
        }
        ratios.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (worst, name, rewrites) = ratios[0];
        let best = ratios[ratios.len() - 1].0;
        let middle = ratios[ratios.len() / 2].0;
        println!("| {group} | `{name}` ({rewrites}) | {worst:.2} | {best:.2} | {middle:.2} |");
        for (ratio, name, rewrites) in &ratios {
            details.push_str(&format!("{group} {name} {ratio:.2} ({rewrites})\n"));
        }
    }
    println!("\n{details}");
}
