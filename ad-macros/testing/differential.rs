//! Differential testing in-process: thousands of generated programs (see
//! [`programs`](ad_testkit::programs)) go through the whole pipeline — lowering,
//! verification, analysis, reversal — and both IRs run on the interpreter
//! ([`interp`](super::interp)). The primal IR must compute what the
//! generator's own evaluator computes, bit for bit; the adjoint must match
//! finite differences and pass the dot-product test. A failing program is
//! shrunk and printed as Rust source, ready to paste into a regression test.

use std::fmt::Write as _;

use proc_macro2::TokenStream;

use super::interp::{self, Arg, Val};
use crate::expand::{self, Stages};
use crate::ir::{Function, Role};
use crate::reverse::records;
use ad_testkit::programs::{Config, Input, Program, check_gradient};

/// How many programs one run checks.
const PROGRAMS: u64 = 2000;
/// Inputs each program is checked at.
const INPUTS: u64 = 2;
/// A bound on interpreted steps: generated loops are short.
const MAX_STEPS: u64 = 1_000_000;

/// Lowers and reverses a program.
fn stages(program: &Program) -> Result<Stages, String> {
    let source = program.to_rust("f");
    let item: syn::ItemFn =
        syn::parse_str(&source).map_err(|error| format!("does not parse: {error}"))?;
    expand::stages(TokenStream::new(), &item, None)
        .map_err(|failed| format!("rejected: {}", failed.1))
}

/// The arguments of `func` at `input`: the user's parameters, then for a `_vjp`
/// the shadow of `xs` (zeros) and the seed.
fn arguments(func: &Function, input: &Input, seed: f64) -> Vec<Arg> {
    let mut floats = input.scalars.iter();
    func.params
        .iter()
        .map(|param| match (param.role, param.name.as_str()) {
            (Role::Shadow, _) => Arg::Buf(vec![0.0; input.xs.len()]),
            (Role::Seed, _) => Arg::Float(seed),
            (_, "xs") => Arg::Buf(input.xs.clone()),
            (_, "n") => Arg::Int(i128::try_from(input.n).expect("small")),
            _ => Arg::Float(*floats.next().expect("three scalars")),
        })
        .collect()
}

fn float(value: &Val) -> Result<f64, String> {
    match value {
        Val::Float(x) => Ok(*x),
        other => Err(format!("expected a float, got {other:?}")),
    }
}

/// The output and the gradient `(d_a0, d_a1, d_a2, d_xs…)` from the `_vjp` IR.
fn run_vjp(vjp: &Function, input: &Input, seed: f64) -> Result<(f64, Vec<f64>), String> {
    let outcome = interp::run(vjp, &arguments(vjp, input, seed), MAX_STEPS)?;
    let Val::Tuple(results) = &outcome.ret else {
        return Err(format!("`_vjp` returned {:?}", outcome.ret));
    };
    let out = float(&results[0])?;
    let mut grad = results[1..]
        .iter()
        .map(float)
        .collect::<Result<Vec<_>, _>>()?;
    let shadow = vjp
        .params
        .iter()
        .position(|param| param.role == Role::Shadow)
        .ok_or("no shadow for `xs`")?;
    grad.extend(
        outcome.params[shadow]
            .clone()
            .ok_or("the shadow is a buffer")?,
    );
    Ok((out, grad))
}

/// Checks one program at one input; `Ok(true)` if the gradient was compared
/// with finite differences too (the input is far enough from a kink).
fn check(program: &Program, input: &Input) -> Result<bool, String> {
    let stages = stages(program)?;
    let value = program.eval(input).value;
    let primal = interp::run(
        &stages.primal,
        &arguments(&stages.primal, input, 0.0),
        MAX_STEPS,
    )?;
    let primal_value = float(&primal.ret)?;
    if primal_value.to_bits() != value.to_bits() {
        return Err(format!(
            "the primal IR computes {primal_value}, the program {value}"
        ));
    }
    let (out, grad) = run_vjp(&stages.vjp, input, 1.0)?;
    if out.to_bits() != value.to_bits() {
        return Err(format!(
            "`_vjp` computes the output {out}, the program {value}"
        ));
    }
    if grad.iter().any(|g| !g.is_finite()) {
        return Err(format!("a gradient component is not finite: {grad:?}"));
    }
    // Saving every loop's values as records (`reverse/records.rs`, done only
    // for very long loop bodies) computes the same bits.
    for (what, func) in [
        ("`_vjp`", &stages.vjp),
        ("the split API's IR", &stages.unfused),
    ] {
        let recorded = records::record_tapes_above(func.clone(), 0);
        let expected = run_vjp(func, input, 1.0)?;
        let got = run_vjp(&recorded, input, 1.0)?;
        if !bits_equal(&expected, &got) {
            return Err(format!(
                "{what} with records computes {got:?}, without {expected:?}"
            ));
        }
    }
    check_gradient(program, input, |seed| {
        run_vjp(&stages.vjp, input, seed).map(|(_, grad)| grad)
    })
}

/// Whether two outputs with their gradients are the same bits.
fn bits_equal((a, da): &(f64, Vec<f64>), (b, db): &(f64, Vec<f64>)) -> bool {
    a.to_bits() == b.to_bits()
        && da.len() == db.len()
        && da.iter().zip(db).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The smallest program that still fails at `input`, by repeatedly taking the
/// first shrink candidate that fails.
fn shrink(mut program: Program, input: &Input) -> (Program, String) {
    let mut problem = check(&program, input).expect_err("a failing program");
    'smaller: loop {
        for candidate in program.shrink() {
            if let Err(smaller_problem) = check(&candidate, input) {
                program = candidate;
                problem = smaller_problem;
                continue 'smaller;
            }
        }
        return (program, problem);
    }
}

/// Constructs counted in the generated programs, by what their source shows.
const CONSTRUCTS: [(&str, &str); 17] = [
    ("`if`/`else`", "if "),
    ("`for` over a range", "in 0.."),
    ("`for` over elements", ".iter()"),
    ("`.enumerate()`", ".enumerate()"),
    ("`while`", "while "),
    ("`break`", "break"),
    ("`continue`", "continue"),
    ("element read `xs[…]`", "xs["),
    ("local buffer `vec![…]`", "vec!["),
    ("buffer copy `.to_vec()`", ".to_vec()"),
    ("sorted copy `.sort_by(…)`", ".sort_by("),
    ("element write `v[i] = …`", "] = "),
    ("element update `v[i] += …`", "] += "),
    ("reduction `.sum()`", ".sum"),
    ("transcendental (`exp`, `ln`, `sin`, …)", "()."),
    ("local struct `Cell { v: … }`", "Cell { v: "),
    ("local tuple struct `Wrap(…)`", "Wrap("),
];

#[test]
fn generated_programs_differentiate_correctly() {
    let config = Config::default();
    let mut report = String::new();
    let mut checked = 0;
    let mut differentiated = 0;
    let mut counts = [0_usize; CONSTRUCTS.len()];
    // `AD_DIFFERENTIAL_SEEDS=a..b` checks other programs (a longer campaign).
    let seeds = std::env::var("AD_DIFFERENTIAL_SEEDS")
        .ok()
        .and_then(|range| {
            let (a, b) = range.split_once("..")?;
            Some(a.parse::<u64>().ok()?..b.parse::<u64>().ok()?)
        })
        .unwrap_or(0..PROGRAMS);
    for seed in seeds {
        let program = Program::generate(seed, &config);
        let source = program.to_rust("f");
        for (count, (_, shows)) in counts.iter_mut().zip(CONSTRUCTS) {
            *count += usize::from(source.contains(shows));
        }
        for k in 0..INPUTS {
            let input = Input::generate(seed * INPUTS + k);
            checked += 1;
            let outcome = check(&program, &input);
            differentiated += usize::from(outcome == Ok(true));
            if outcome.is_err() {
                let (smallest, problem) = shrink(program.clone(), &input);
                writeln!(
                    report,
                    "program {seed} fails at {input:?}: {problem}\nshrunk to:\n{}\n",
                    smallest.to_rust("f")
                )
                .unwrap();
                break;
            }
        }
    }
    assert!(report.is_empty(), "{report}");
    eprintln!(
        "report: in-process, through the interpreter | {PROGRAMS} programs | {checked} checks of the primal, {differentiated} of the gradient"
    );
    for ((construct, _), count) in CONSTRUCTS.iter().zip(counts) {
        eprintln!("report: construct | {construct} | {count} of {PROGRAMS} programs");
    }
}
