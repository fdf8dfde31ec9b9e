//! Tests of a pass, through the pipeline: `logsumexp`'s exponentials kept (`reverse/keep.rs`).

use crate::ir::Callee;
use crate::ir::Inst;
use crate::testing::stages_of;

fn callees(func: &crate::ir::Function) -> Vec<Callee> {
    let mut out = Vec::new();
    func.walk(&mut |_, value| {
        if let Inst::Call(callee, _) = func.inst(value) {
            out.push(*callee);
        }
    });
    out
}

#[test]
fn a_top_level_call_keeps_its_exponentials_in_vjp_only() {
    let stages = stages_of("fn f(x: &[f64]) -> f64 { ad_runtime::logsumexp(x) * 2.0 }");
    assert_eq!(
        callees(&stages.vjp),
        [Callee::LogsumexpKeep, Callee::LogsumexpDxKept]
    );
    assert_eq!(
        callees(&stages.unfused),
        [Callee::Logsumexp, Callee::LogsumexpDx]
    );
}

#[test]
fn a_call_in_a_loop_recomputes() {
    let stages = stages_of(
        "fn f(z: &[f64], rows: usize) -> f64 { let mut row = vec![0.0; 3]; let mut total = 0.0; \
         for r in 0..rows { for j in 0..3 { row[j] = z[r * 3 + j]; } total += ad_runtime::logsumexp(&row); } total }",
    );
    let found = callees(&stages.vjp);
    assert!(found.contains(&Callee::Logsumexp), "{found:?}");
    assert!(found.contains(&Callee::LogsumexpDx), "{found:?}");
    assert!(!found.contains(&Callee::LogsumexpKeep), "{found:?}");
}
