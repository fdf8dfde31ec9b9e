//! Differential testing through rustc: a corpus of generated programs (see
//! `build.rs` and `ad_testkit::programs`) compiled with the real `#[differentiate]`,
//! each checked against the generator's own evaluator (the primal, bit for bit),
//! finite differences and the dot-product test (the gradient), its `_jvp`
//! against the `_vjp` (`J u = <∇f, u>` along a direction `u`), its
//! `_jvp_lanes` against `_jvp` lane by lane (bit for bit), and its `_hvp`
//! against finite differences of the `_vjp` and for symmetry.
//!
//! With `AD_CORPUS_DIGEST=<file>` set, the outputs and gradients of every
//! program are also written to that file, bit for bit: `.ci/run` builds the
//! corpus in debug and in release and compares the two files.

use std::fmt::Write as _;

use ad_runtime::Lanes;
use ad_tests::programs::{Config, Input, Program, check_gradient};

type Primal = fn(f64, f64, f64, &[f64], usize) -> f64;
type Vjp = fn(f64, f64, f64, &[f64], &mut [f64], usize, f64) -> (f64, f64, f64, f64);
type Jvp = fn(f64, f64, f64, f64, f64, f64, &[f64], &[f64], usize) -> (f64, f64);
/// `_jvp_lanes` with three directions.
type L3 = Lanes<f64, 3>;
type JvpLanes = fn(f64, L3, f64, L3, f64, L3, &[f64], &[L3], usize) -> (f64, L3);
type Hvp = fn(
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    &[f64],
    &[f64],
    &mut [f64],
    &mut [f64],
    usize,
) -> (f64, f64, f64, f64, f64, f64, f64);

/// The generated programs; lints on randomly generated code are not ours.
#[allow(unused, clippy::all, clippy::pedantic)]
mod corpus {
    use super::{Hvp, Jvp, JvpLanes, Primal, Vjp};
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

/// Vector forward mode against forward mode: `_jvp_lanes` along three
/// directions at once gives, in each lane, the output and the tangent
/// `_jvp` gives along that lane's direction, bit for bit.
fn check_lanes(jvp: Jvp, lanes: JvpLanes, input: &Input) -> Result<(), String> {
    let [a0, a1, a2] = input.scalars;
    let dim = 3 + input.xs.len();
    let directions: [Vec<f64>; 3] = [
        (0..dim)
            .map(|i| ((i * 5 % 7) as f64 - 3.0) / 3.0 + 0.2)
            .collect(),
        (0..dim)
            .map(|i| if i == dim / 2 { 1.0 } else { 0.0 })
            .collect(),
        (0..dim).map(|i| (i as f64 * 0.7).sin()).collect(),
    ];
    let lane = |i: usize| Lanes(std::array::from_fn(|l| directions[l][i]));
    let t_xs: Vec<L3> = (3..dim).map(lane).collect();
    let (out, tangent) = lanes(
        a0,
        lane(0),
        a1,
        lane(1),
        a2,
        lane(2),
        &input.xs,
        &t_xs,
        input.n,
    );
    for (l, u) in directions.iter().enumerate() {
        let (expected_out, expected) =
            jvp(a0, u[0], a1, u[1], a2, u[2], &input.xs, &u[3..], input.n);
        if out.to_bits() != expected_out.to_bits() || tangent[l].to_bits() != expected.to_bits() {
            return Err(format!(
                "`_jvp_lanes` gives ({out}, {}) in lane {l}, `_jvp` ({expected_out}, {expected})",
                tangent[l]
            ));
        }
    }
    Ok(())
}

/// `_hvp` at `input` along `v`: the output, the gradient, `H v`.
fn hvp_at(hvp: Hvp, input: &Input, v: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
    let [a0, a1, a2] = input.scalars;
    let n = input.xs.len();
    let (mut d_xs, mut hv_xs) = (vec![0.0; n], vec![0.0; n]);
    let (out, d0, d1, d2, h0, h1, h2) = hvp(
        a0,
        v[0],
        a1,
        v[1],
        a2,
        v[2],
        &input.xs,
        &v[3..],
        &mut d_xs,
        &mut hv_xs,
        input.n,
    );
    let mut grad = vec![d0, d1, d2];
    grad.extend(d_xs);
    let mut hv = vec![h0, h1, h2];
    hv.extend(hv_xs);
    (out, grad, hv)
}

/// Second order: `_hvp` returns the function's output and `_vjp`'s
/// gradient; `H v` matches central differences of the `_vjp` along `v`
/// (where the program is smooth around the input), and `<w, H v> = <v, H w>`.
fn check_hvp(
    program: &Program,
    vjp: Vjp,
    hvp: Hvp,
    value: f64,
    grad: &[f64],
    input: &Input,
) -> Result<(), String> {
    let dim = grad.len();
    let v: Vec<f64> = (0..dim)
        .map(|i| ((i * 3 % 5) as f64 - 2.0) / 2.0 + 0.3)
        .collect();
    let w: Vec<f64> = (0..dim)
        .map(|i| ((i * 2 % 7) as f64 - 3.0) / 3.0 - 0.2)
        .collect();
    let (out, g, hv) = hvp_at(hvp, input, &v);
    if out.to_bits() != value.to_bits() {
        return Err(format!(
            "`_hvp` returns the output {out}, the function {value}"
        ));
    }
    let close = |a: f64, b: f64, tol: f64, scale: f64| (a - b).abs() <= tol * scale.max(1.0);
    let g_scale = grad.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
    if let Some(k) = (0..dim).find(|&k| !close(g[k], grad[k], 1e-9, g_scale)) {
        return Err(format!(
            "`_hvp`'s gradient component {k} is {}, `_vjp`'s {}",
            g[k], grad[k]
        ));
    }
    if hv.iter().any(|h| !h.is_finite()) {
        return Err(format!("H v is not finite: {hv:?}"));
    }
    let (_, _, hw) = hvp_at(hvp, input, &w);
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
    let scale = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| (a * b).abs()).sum::<f64>();
    let (lhs, rhs) = (dot(&w, &hv), dot(&v, &hw));
    if !close(lhs, rhs, 1e-8, scale(&w, &hv).max(scale(&v, &hw))) {
        return Err(format!("symmetry: <w, H v> = {lhs}, <v, H w> = {rhs}"));
    }
    if program.eval(input).margin < 1e-2 {
        return Ok(());
    }
    // Central differences of the gradient along v, at two steps: the
    // smaller must agree, or get closer than the larger (steep programs).
    let moved = |t: f64| {
        let mut moved = input.clone();
        for (scalar, v) in moved.scalars.iter_mut().zip(&v) {
            *scalar += t * v;
        }
        for (x, v) in moved.xs.iter_mut().zip(&v[3..]) {
            *x += t * v;
        }
        gradient(vjp, &moved, 1.0).1
    };
    let fd = |h: f64| -> Vec<f64> {
        let (plus, minus) = (moved(h), moved(-h));
        plus.iter()
            .zip(&minus)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect()
    };
    let hv_scale = hv.iter().fold(0.0_f64, |m, h| m.max(h.abs()));
    let (coarse, fine) = (fd(1e-4), fd(1e-5));
    for k in 0..dim {
        let (e_coarse, e_fine) = ((hv[k] - coarse[k]).abs(), (hv[k] - fine[k]).abs());
        if !close(hv[k], fine[k], 1e-4, hv_scale) && e_fine >= e_coarse {
            return Err(format!(
                "H v component {k} is {}, finite differences of `_vjp` give {}",
                hv[k], fine[k]
            ));
        }
    }
    Ok(())
}

/// Checks one program at one input; `Err` says what is wrong.
fn check(
    seed: u64,
    primal: Primal,
    (vjp, jvp, lanes, hvp): (Vjp, Jvp, JvpLanes, Hvp),
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
    check_lanes(jvp, lanes, input)?;
    check_hvp(&program, vjp, hvp, value, &grad, input)?;
    check_gradient(&program, input, |seed| Ok(gradient(vjp, input, seed).1)).map(|_| ())
}

#[test]
fn the_corpus_compiled_by_rustc_has_correct_gradients() {
    let mut digest = String::new();
    let mut failures = Vec::new();
    for &(seed, primal, vjp, jvp, lanes, hvp) in corpus::CORPUS {
        write!(digest, "{seed}").unwrap();
        for k in 0..INPUTS {
            let input = Input::generate(seed * INPUTS + k);
            if let Err(problem) = check(seed, primal, (vjp, jvp, lanes, hvp), &input, &mut digest) {
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

/// Checkpointing changes which steps run again, never a value: each
/// program with a `for` loop at the top level of its body has a twin with
/// `#[checkpoint(snapshots = 2)]` on each such loop, whose `_vjp` must give
/// the same output and gradient, bit for bit.
#[test]
fn checkpointed_twins_give_the_same_gradients_bit_for_bit() {
    let mut failures = Vec::new();
    for &(seed, taped, checkpointed) in corpus::CHECKPOINTED {
        for k in 0..INPUTS {
            let input = Input::generate(seed * INPUTS + k);
            let (expected, got) = (
                gradient(taped, &input, 1.5),
                gradient(checkpointed, &input, 1.5),
            );
            let bits = |(out, grad): &(f64, Vec<f64>)| {
                (
                    out.to_bits(),
                    grad.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
                )
            };
            if bits(&expected) != bits(&got) {
                failures.push(format!(
                    "program {seed} at {input:?}: taped {expected:?}, checkpointed {got:?}"
                ));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The generator makes top-level loops often: the family is not empty.
    assert!(
        corpus::CHECKPOINTED.len() >= 30,
        "only {} programs have a top-level loop",
        corpus::CHECKPOINTED.len()
    );
    eprintln!(
        "report: checkpointed twins, against the taped `_vjp` | {} programs | {INPUTS} inputs each, bit for bit",
        corpus::CHECKPOINTED.len()
    );
}

/// Each program called by a differentiated function, twice in a loop and
/// then in a branch (`caller` in `build.rs`): the caller's `_vjp` returns its
/// primal's bits, and its gradient is the program's, scaled as the caller
/// says: `2.5 a1 ∇p + 2.5 p e_a1` if `a0 > 0`, else `2.5 ∇p + e_a2`.
#[test]
fn the_programs_called_in_loops_and_branches() {
    let mut failures = Vec::new();
    for &(seed, callee, caller, caller_vjp) in corpus::CALLERS {
        for k in 0..INPUTS {
            let input = Input::generate(seed * INPUTS + k);
            let [a0, a1, a2] = input.scalars;
            let (p, grad_p) = gradient(callee, &input, 1.0);
            let (out, grad) = gradient(caller_vjp, &input, 1.0);
            let primal = caller(a0, a1, a2, &input.xs, input.n);
            let mut expected: Vec<f64> = if a0 > 0.0 {
                grad_p.iter().map(|g| 2.5 * a1 * g).collect()
            } else {
                grad_p.iter().map(|g| 2.5 * g).collect()
            };
            if a0 > 0.0 {
                expected[1] += 2.5 * p;
            } else {
                expected[2] += 1.0;
            }
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
            if out.to_bits() != primal.to_bits() {
                failures.push(format!(
                    "caller of {seed} at {input:?}: `_vjp` gives {out}, the caller {primal}"
                ));
            } else if !grad.iter().zip(&expected).all(|(&a, &b)| close(a, b)) {
                failures.push(format!(
                    "caller of {seed} at {input:?}: gradient {grad:?}, expected {expected:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(corpus::CALLERS.len() >= 100);
    eprintln!(
        "report: programs called in loops and branches | {} callers | {INPUTS} inputs each",
        corpus::CALLERS.len()
    );
}

/// `_hvp` through calls: every fourth program's caller (two calls in a loop,
/// their pullbacks taped) has an `_hvp`, which goes through the program's
/// `_jvp_all` and `_hvp_all`; it must give the caller's output and
/// gradient, and `H v` as finite differences of the caller's `_vjp` and
/// symmetric.
#[test]
fn hvp_through_calls_matches_the_callers_gradient() {
    let mut failures = Vec::new();
    for &(seed, vjp, hvp) in corpus::HVP_CALLERS {
        let program = Program::generate(seed, &Config::default());
        for k in 0..INPUTS {
            let input = Input::generate(seed * INPUTS + k);
            let (value, grad) = gradient(vjp, &input, 1.0);
            if let Err(problem) = check_hvp(&program, vjp, hvp, value, &grad, &input) {
                failures.push(format!("caller of {seed} at {input:?}: {problem}"));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(corpus::HVP_CALLERS.len() >= 70);
}
