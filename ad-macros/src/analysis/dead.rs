//! Dead primal work: what neither the output nor an effect needs is removed
//! before the reverse pass, so `_vjp` does not compute it.
//!
//! A value is live if the output, a parameter, or a *root* uses it: an effect
//! (a write into a buffer, a call of another differentiated function), or
//! something that can panic (an element read, integer division), which the
//! primal would do and so must `_vjp`. A `while` is a root (it may not end),
//! and so are its trip count and a call's pullback, which the adjoint reads. A
//! value inside a branch or a loop keeps that `if` or loop live, and a live
//! `if` or loop keeps what its regions yield. Everything else is removed, and
//! the function is rebuilt with the values it keeps.
//!
//! ```text
//! let unused = x.exp() * 2.0;      (removed)
//! for i in 0..n { acc += … }       (removed, if `acc` is not used)
//! ```

use crate::ir::{BinOp, Function, Inst, Place, Ty, Value, compact};

/// `func` without its dead values.
pub(crate) fn dead_code(func: Function) -> Function {
    let live = live(&func);
    if live.iter().all(|&live| live) {
        return func;
    }
    compact(&func, &live)
}

fn is_root(func: &Function, value: Value) -> bool {
    let inst = func.inst(value);
    match inst {
        Inst::Param(_) | Inst::While { .. } | Inst::Load(..) | Inst::Call(..) => true,
        Inst::Forward { .. } | Inst::Apply { .. } => true,
        Inst::Binary(BinOp::Div | BinOp::Rem, ..) => *func.ty(value) == Ty::Int,
        _ => inst.is_effect(),
    }
}

fn live(func: &Function) -> Vec<bool> {
    let places = func.places();
    let extracts = func.extracts();
    let mut live = vec![false; func.insts.len()];
    let mut stack = vec![func.ret];
    func.walk(&mut |_, value| {
        if is_root(func, value) {
            stack.push(value);
        }
    });
    while let Some(value) = stack.pop() {
        if std::mem::replace(&mut live[value.index()], true) {
            continue;
        }
        stack.extend(func.inst(value).operands());
        if let Place::In(owner, _) = places[value.index()] {
            stack.push(owner);
        }
        // The reverse pass reads a call's pullback and a `while`'s trip
        // count, which the primal does not use.
        if let Inst::Forward { .. } | Inst::While { .. } = func.inst(value) {
            stack.extend(extracts[value.index()].iter().map(|&(_, extract)| extract));
        }
        for region in func.regions(value) {
            stack.extend(region.yields.iter().copied());
            // A loop's arguments come with it.
            if let Some(view) = func.inst(value).as_loop() {
                stack.extend(view.body.insts[..=view.inits.len()].iter().copied());
            }
        }
    }
    live
}
