//! Tests of a pass, through the pipeline: adjoint loops run forwards and sums carried from zero (`reverse/order.rs`).

use crate::ir::{Const, Function, Inst, Value};
use crate::testing::stages_of;

/// The unfused `_vjp` IR of `src`.
fn vjp(src: &str) -> Function {
    stages_of(src).unfused
}

/// Every `for` of `func` with whether it runs backwards, in body order.
fn directions(func: &Function) -> Vec<bool> {
    let mut out = Vec::new();
    func.walk(&mut |_, value| {
        if let Inst::For { range, .. } = func.inst(value) {
            out.push(range.reversed);
        }
    });
    out
}

#[test]
fn an_adjoint_loop_that_only_adds_into_shadows_runs_forwards() {
    // Primal outer, primal inner, adjoint outer (pops `tanh`), adjoint inner.
    let func = vjp(
        "fn f(w: &[f64], x: &[f64], n: usize) -> f64 { let m = x.len(); let mut s = 0.0; for j in 0..n { let mut acc = 0.0; for i in 0..m { acc += w[j * m + i] * x[i]; } s += acc.tanh(); } s.ln() }",
    );
    assert_eq!(directions(&func), [false, false, true, false]);
}

#[test]
fn an_adjoint_loop_that_carries_a_sum_or_pops_keeps_its_order() {
    // `d_c` is a sum.
    let func = vjp(
        "fn f(x: &[f64], c: f64) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += c * x[i]; } s.ln() }",
    );
    assert_eq!(directions(&func), [false, true]);
    // The product pops the running value.
    let func =
        vjp("fn f(x: &[f64]) -> f64 { let mut p = 1.0; for i in 0..x.len() { p = p * x[i]; } p }");
    assert_eq!(directions(&func), [false, true]);
}

#[test]
fn an_adjoint_loop_touching_its_own_element_only_runs_forwards() {
    // The adjoint reads `d_y[i]`, zeroes it and adds into `d_x[i]`.
    let func = vjp(
        "fn f(x: &[f64]) -> Vec<f64> { let mut y = vec![0.0; x.len()]; for i in 0..x.len() { y[i] = x[i].sin(); } y }",
    );
    assert_eq!(directions(&func), [false, false]);
    // Adding into the shadow one element over (no tape: a sum) makes the
    // order matter.
    let func = vjp(
        "fn f(x: &[f64]) -> Vec<f64> { let mut y = x.to_vec(); for i in 1..x.len() { y[i] = y[i - 1] + x[i]; } y }",
    );
    assert_eq!(directions(&func), [false, true]);
}

#[test]
fn a_carried_sum_starts_from_zero() {
    // The adjoint loop carries `d_m`; it used to start from `d_out`.
    let func = vjp(
        "fn f(x: &[f64], m: f64) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += (x[i] - m).exp(); } m + s.ln() }",
    );
    let mut inits: Vec<Value> = Vec::new();
    func.walk(&mut |_, value| {
        if let Inst::For {
            range,
            inits: carried,
            ..
        } = func.inst(value)
            && range.reversed
        {
            inits.extend(carried);
        }
    });
    // It also carries `d_s`, unchanged: that one keeps its initial value.
    let zeros = inits
        .iter()
        .filter(|&&init| matches!(func.inst(init), Inst::Const(Const::Zero)))
        .count();
    assert_eq!((inits.len(), zeros), (2, 1), "`d_s` and `d_m` from zero");
}
