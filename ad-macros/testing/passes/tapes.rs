//! Tests of a pass, through the pipeline: tapes made early (`reverse/tapes.rs`).

use crate::ir::{Function, Inst};
use crate::testing::stages_of;

/// The top-level statements of the unfused `_vjp` of `src`, as `tape`,
/// `for` or `·` (anything else), in order.
fn shape(src: &str) -> String {
    let stages = stages_of(src);
    let func: &Function = &stages.unfused;
    func.body
        .insts
        .iter()
        .map(|&value| match func.inst(value) {
            Inst::TapeNew { .. } => "tape",
            Inst::For { .. } => "for",
            _ => "·",
        })
        .filter(|&kind| kind != "·")
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn tapes_sized_by_the_inputs_go_before_every_loop_in_order() {
    // Two primal loops with a tape each, then their two adjoint loops.
    assert_eq!(
        shape(
            "fn f(x: &[f64]) -> f64 { let mut m = x[0]; for i in 1..x.len() { m = m.max(2.0 * x[i]); } \
             let mut s = 0.0; for i in 0..x.len() { s += (x[i] - m).exp(); } m + s.ln() }"
        ),
        "tape tape for for for for"
    );
}

#[test]
fn a_tape_sized_by_a_loop_result_stays_after_that_loop() {
    // The second loop's trip count is the first loop's result.
    assert_eq!(
        shape(
            "fn f(x: f64, n: usize) -> f64 { let mut k = 0; for _ in 0..n { k += 2; } \
             let mut p = 1.0; for _ in 0..k { p *= x; } p }"
        ),
        "for tape for for"
    );
}
