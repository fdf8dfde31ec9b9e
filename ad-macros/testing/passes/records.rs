//! Tests of a pass, through the pipeline: loops that save very many values
//! save them as records (`reverse/records.rs`). That the records compute the
//! same bits is checked on every generated program (`differential.rs`).

use crate::ir::{Function, Inst, Ty};
use crate::reverse::records::RECORD_ABOVE;
use crate::testing::stages_of;

/// A loop whose body saves `n` values (`exp` of a running sum) on tapes.
fn loop_saving(n: usize) -> String {
    let mut body = String::new();
    for _ in 0..n {
        body.push_str("s = s + (s * 0.001).exp(); ");
    }
    format!(
        "fn f(x: &[f64]) -> f64 {{ let mut s = 0.0; for i in 0..x.len() {{ s = s + x[i]; {body} }} s }}"
    )
}

/// The lengths of the values each tape of `func` holds: 1 for a tape of
/// scalars, `k` for a tape of records of `k`.
fn tapes(func: &Function) -> Vec<usize> {
    let mut lengths = Vec::new();
    func.walk(&mut |_, value| {
        if let Inst::TapeNew { .. } = func.inst(value) {
            lengths.push(match func.ty(value) {
                Ty::Tape(elem) => match &**elem {
                    Ty::Tuple(elems) => elems.len(),
                    _ => 1,
                },
                _ => unreachable!("a tape"),
            });
        }
    });
    lengths
}

#[test]
fn an_ordinary_loop_keeps_a_tape_per_value() {
    let stages = stages_of(&loop_saving(10));
    assert_eq!(tapes(&stages.vjp), vec![1; 10]);
    assert_eq!(tapes(&stages.unfused), vec![1; 10]);
}

#[test]
fn a_loop_saving_very_many_values_saves_even_records() {
    let n = RECORD_ABOVE * 2 + 3;
    let stages = stages_of(&loop_saving(n));
    for func in [&stages.vjp, &stages.unfused] {
        let mut lengths = tapes(func);
        lengths.sort_unstable();
        // Three records, of 43 or 44 values each: none of a single value.
        assert_eq!(lengths, vec![43, 44, 44], "{n} values");
        // Each pushed once per iteration, at the end of the body.
        let mut pushes = 0;
        func.walk(&mut |_, value| {
            if let Inst::Push(_, pushed) = func.inst(value) {
                assert!(matches!(func.inst(*pushed), Inst::Tuple(_)));
                pushes += 1;
            }
        });
        assert_eq!(pushes, 3);
    }
}
