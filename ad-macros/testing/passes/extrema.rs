//! Tests of a pass, through the pipeline: running maxima and minima become one call (`analysis/extrema.rs`).

use crate::expand;
use crate::ir::Callee;
use crate::ir::{Function, Inst};
use crate::testing::stages_of;

fn calls_and_loops(func: &Function) -> (Vec<Callee>, usize) {
    let (mut calls, mut loops) = (Vec::new(), 0);
    func.walk(&mut |_, value| match func.inst(value) {
        Inst::Call(callee, _) => calls.push(*callee),
        Inst::For { .. } => loops += 1,
        _ => {}
    });
    (calls, loops)
}

#[test]
fn a_running_maximum_or_minimum_becomes_a_call() {
    let stages = stages_of(
        "fn f(x: &[f64], a: f64) -> f64 { let mut m = a; for i in 0..x.len() { m = m.max(x[i]); } \
         let mut l = x[0]; for j in 1..x.len() { l = l.min(x[j]); } m * l }",
    );
    assert_eq!(
        calls_and_loops(&stages.primal),
        (vec![Callee::MaxOver, Callee::MinOver], 0)
    );
    assert_eq!(
        calls_and_loops(&stages.vjp),
        (
            vec![
                Callee::MaxOver,
                Callee::MinOver,
                Callee::MinOverDx,
                Callee::MaxOverDx
            ],
            0
        )
    );
}

#[test]
fn operands_in_either_order_and_every_loop_spelling() {
    for (body, callee) in [
        (
            "for i in 0..x.len() { m = x[i].max(m); }",
            Callee::MaxOverRev,
        ),
        (
            "for i in 0..x.len() { m = f64::min(x[i], m); }",
            Callee::MinOverRev,
        ),
        ("for &v in x.iter() { m = v.max(m); }", Callee::MaxOverRev),
        ("for &v in x { m = f64::max(m, v); }", Callee::MaxOver),
        ("m = x.iter().copied().fold(m, f64::max);", Callee::MaxOver),
        (
            "let mut i = 0; while i < x.len() { m = m.min(x[i]); i += 1; }",
            Callee::MinOver,
        ),
        (
            "let mut i = 0; while x.len() > i { m = m.min(x[i]); i = 1 + i; }",
            Callee::MinOver,
        ),
    ] {
        let src = format!("fn f(x: &[f64]) -> f64 {{ let mut m = 0.5; {body} m }}");
        let stages = stages_of(&src);
        assert_eq!(calls_and_loops(&stages.primal), (vec![callee], 0), "{body}");
    }
}

#[test]
fn without_a_shadow_for_x_only_the_initial_value_gets_an_adjoint() {
    let item = syn::parse_str(
        "fn f(x: &[f64], a: f64) -> f64 { let mut m = a; for i in 0..x.len() { m = m.max(x[i]); } m }",
    )
    .expect("a fn item");
    let wrt = "wrt(a)".parse().expect("tokens");
    let Ok(stages) = expand::stages(wrt, &item, None) else {
        panic!("the fixture differentiates")
    };
    assert_eq!(
        calls_and_loops(&stages.vjp),
        (vec![Callee::MaxOver, Callee::MaxOverDm], 0)
    );
}

#[test]
fn other_loops_stay_loops() {
    for body in [
        // Something else in the body.
        "for i in 0..x.len() { m = m.max(x[i]); s += x[i]; }",
        // Another index, another order, another range.
        "for i in 0..x.len() - 1 { m = m.max(x[i + 1]); }",
        "for i in (0..x.len()).rev() { m = m.max(x[i]); }",
        "for i in (0..x.len()).step_by(2) { m = m.max(x[i]); }",
        "for i in 0..=x.len() - 1 { m = m.max(x[i]); }",
        "for i in 0..x.len() { m = m.max(x[i] * 2.0); }",
    ] {
        let src =
            format!("fn f(x: &[f64]) -> f64 {{ let mut m = x[0]; let mut s = 0.0; {body} m + s }}");
        let stages = stages_of(&src);
        let (calls, loops) = calls_and_loops(&stages.primal);
        assert!(calls.is_empty() && loops == 1, "{body}: {calls:?}, {loops}");
    }
}
