//! Differential testing through rustc: a corpus of generated programs (see
//! `build.rs` and `ad_testkit::programs`) compiled with the real `#[differentiate]`,
//! each checked against the generator's own evaluator (the primal, bit for bit),
//! finite differences and the dot-product test (the gradient), and its `_jvp`
//! against the `_vjp` (`J u = <∇f, u>` along a direction `u`).
//!
//! With `AD_CORPUS_DIGEST=<file>` set, the outputs and gradients of every
//! program are also written to that file, bit for bit: `.ci/run` builds the
//! corpus in debug and in release and compares the two files.

use std::fmt::Write as _;

use ad_tests::programs::{Config, Input, Program, check_gradient};

type Primal = fn(f64, f64, f64, &[f64], usize) -> f64;
type Vjp = fn(f64, f64, f64, &[f64], &mut [f64], usize, f64) -> (f64, f64, f64, f64);
type Jvp = fn(f64, f64, f64, f64, f64, f64, &[f64], &[f64], usize) -> (f64, f64);

/// The generated programs; lints on randomly generated code are not ours.
#[allow(unused, clippy::all, clippy::pedantic)]
mod corpus {
    use super::{Jvp, Primal, Vjp};
    include!(concat!(env!("OUT_DIR"), "/corpus.rs"));
}

/// Inputs each program is checked at.
const INPUTS: u64 = 3;

/// The gradient `(d_a0, d_a1, d_a2, d_xs…)` and the output, at `input`, for the seed.
fn gradient(vjp: Vjp, input: &Input, seed: f64) -> (f64, Vec<f64>) {
    let [a0, a1, a2] = input.scalars;
    let mut d_xs = vec![0.0; input.xs.len()];
    let (out, d_a0, d_a1, d_a2) = vjp(a0, a1, a2, &input.xs, &mut d_xs, input.n, seed);
    let mut grad = vec![d_a0, d_a1, d_a2];
    grad.extend(d_xs);
    (out, grad)
}

/// Forward mode against reverse mode: along a direction `u`, the tangent
/// `_jvp` gives is the gradient's `<∇f, u>`, and the output is the
/// function's, bit for bit.
fn check_jvp(jvp: Jvp, value: f64, grad: &[f64], input: &Input) -> Result<(), String> {
    let [a0, a1, a2] = input.scalars;
    let u: Vec<f64> = (0..grad.len())
        .map(|index| ((index * 5 % 7) as f64 - 3.0) / 3.0 + 0.2)
        .collect();
    let (out, tangent) = jvp(a0, u[0], a1, u[1], a2, u[2], &input.xs, &u[3..], input.n);
    if out.to_bits() != value.to_bits() {
        return Err(format!(
            "`_jvp` returns the output {out}, the function {value}"
        ));
    }
    let expected: f64 = grad.iter().zip(&u).map(|(g, u)| g * u).sum();
    let scale: f64 = grad.iter().zip(&u).map(|(g, u)| (g * u).abs()).sum();
    if (tangent - expected).abs() > 1e-9 * scale.max(1.0) {
        return Err(format!(
            "`_jvp` gives the tangent {tangent} along {u:?}, the gradient {expected}"
        ));
    }
    Ok(())
}

/// Checks one program at one input; `Err` says what is wrong.
fn check(
    seed: u64,
    primal: Primal,
    (vjp, jvp): (Vjp, Jvp),
    input: &Input,
    digest: &mut String,
) -> Result<(), String> {
    let program = Program::generate(seed, &Config::default());
    let reference = program.eval(input);
    let [a0, a1, a2] = input.scalars;
    let value = primal(a0, a1, a2, &input.xs, input.n);
    if value.to_bits() != reference.value.to_bits() {
        return Err(format!(
            "the function returns {value}, the generator's evaluator {}",
            reference.value
        ));
    }
    let (out, grad) = gradient(vjp, input, 1.0);
    if out.to_bits() != value.to_bits() {
        return Err(format!(
            "`_vjp` returns the output {out}, the function {value}"
        ));
    }
    for g in &grad {
        write!(digest, " {:016x}", g.to_bits()).unwrap();
    }
    writeln!(digest, " {:016x}", out.to_bits()).unwrap();
    if grad.iter().any(|g| !g.is_finite()) {
        return Err(format!("a gradient component is not finite: {grad:?}"));
    }
    check_jvp(jvp, value, &grad, input)?;
    check_gradient(&program, input, |seed| Ok(gradient(vjp, input, seed).1)).map(|_| ())
}

#[test]
fn the_corpus_compiled_by_rustc_has_correct_gradients() {
    let mut digest = String::new();
    let mut failures = Vec::new();
    for &(seed, primal, vjp, jvp) in corpus::CORPUS {
        write!(digest, "{seed}").unwrap();
        for k in 0..INPUTS {
            let input = Input::generate(seed * INPUTS + k);
            if let Err(problem) = check(seed, primal, (vjp, jvp), &input, &mut digest) {
                let program = Program::generate(seed, &Config::default());
                failures.push(format!(
                    "program {seed} at {input:?}: {problem}\n{}",
                    program.to_rust(&format!("p{seed}"))
                ));
                break;
            }
        }
    }
    if let Some(path) = std::env::var_os("AD_CORPUS_DIGEST") {
        std::fs::write(path, &digest).expect("the digest is written");
    }
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n\n{}",
        failures.len(),
        corpus::CORPUS.len(),
        failures.join("\n\n")
    );
    eprintln!(
        "report: through rustc, debug and release | {} programs | {INPUTS} inputs each",
        corpus::CORPUS.len()
    );
}
