//! Tests of a pass, through the pipeline: loop fusion (`reverse/fuse.rs`).

use crate::ir::{Function, Inst};
use crate::testing::stages_of;

/// The number of loops at the top level of `_vjp`, without and with
/// fusion.
fn loops(src: &str) -> (usize, usize) {
    let stages = stages_of(src);
    let count = |func: &Function| {
        func.body
            .insts
            .iter()
            .filter(|&&value| matches!(func.inst(value), Inst::For { .. }))
            .count()
    };
    (count(&stages.unfused), count(&stages.vjp))
}

#[test]
fn a_sum_returned_as_is_fuses() {
    let src =
        "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += x[i].sin(); } s }";
    assert_eq!(loops(src), (2, 1));
}

#[test]
fn a_seed_that_needs_the_loop_does_not() {
    let src = "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += x[i].sin(); } s.ln() }";
    assert_eq!(loops(src), (2, 2));
}

#[test]
fn an_adjoint_carried_other_than_as_a_sum_does_not() {
    // `d_p` is multiplied by `x[i]` every iteration: the adjoint loop
    // needs its iterations in order.
    let src = "fn f(x: &[f64]) -> f64 { let mut p = 1.0; for i in 0..x.len() { p = p * x[i]; } p }";
    assert_eq!(loops(src), (2, 2));
}

#[test]
fn an_adjoint_that_reads_a_buffer_the_loop_writes_does_not() {
    let src = "fn f(x: &[f64], y: &mut [f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() { y[i] = x[i] * 2.0; s += y[i] * y[i]; } s }";
    let (unfused, fused) = loops(src);
    assert_eq!(
        unfused, fused,
        "y is written in the loop and read by its adjoint"
    );
}

#[test]
fn a_callee_pullback_between_that_takes_the_shadow_blocks_it() {
    // `g`'s pullback takes `&mut d_xs` between the loop and its adjoint.
    let src = "fn f(xs: &[f64]) -> f64 { let mut s = 0.0; for i in 0..xs.len() { s += xs[i] * xs[i]; } s + g(xs) }";
    assert_eq!(loops(src), (2, 2));
    let direct = "fn f(xs: &[f64]) -> f64 { let mut s = 0.0; for i in 0..xs.len() { s += xs[i] * xs[i]; } s + xs[0] }";
    assert_eq!(
        loops(direct),
        (2, 1),
        "a plain read of the shadow's buffer does not block it"
    );
}

#[test]
fn a_loop_after_one_that_is_not_fused() {
    let src = "fn f(x: &[f64]) -> f64 { let mut h = vec![0.0; x.len()]; for i in 0..x.len() { h[i] = x[i].tanh(); } let mut s = 0.0; for i in 0..x.len() { s += h[i] * x[i]; } s }";
    assert_eq!(loops(src), (4, 3));
}
