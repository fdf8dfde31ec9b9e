//! Running maxima and minima become one runtime call, whose pullback needs no
//! tape.
//!
//! ```text
//! for i in start..end {            ⇒   m = __ad::max_over(m, x, start, end);
//!     m = m.max(x[i]);
//! }
//! ```
//!
//! Reversed step by step, this loop saves the running maximum of every
//! iteration on a tape and visits every element again, though the seed goes
//! to `x[i]` only where `x[i]` is not below the running maximum: W4's `max`
//! loop cost its `_vjp` a third of the primal's time. The pullback
//! `__ad::max_over_dx(m, x, start, end, y, d_y, d_x)` reads `x` once, with
//! no tape and no dependency from one element to the next: it finds where the
//! running maximum became the output `y`, and applies the step's rule only to
//! the elements after that which tie with `y` (`ad-runtime/src/extrema.rs`).
//! The gradient is the step-by-step one.
//!
//! Only the loop that does nothing else is rewritten: a `for` over `start..end`
//! (forwards, step 1) carrying one float `m`, whose body is `m.max(x[i])` or
//! `m.min(x[i])` of the loop's index, or `x[i].max(m)` (`max_over_rev`, which
//! keeps the operands in the order written). The primal value is computed in the
//! same order, so `_vjp` returns the primal's value bit for bit.

use crate::ir::Callee;
use crate::ir::{Function, Inst, Prim, Value};

use crate::ir::compact;

/// `func` with each running maximum or minimum loop replaced by a call of
/// `max_over` or `min_over`.
pub(crate) fn running_extrema(mut func: Function) -> Function {
    let mut loops = Vec::new();
    func.walk(&mut |_, value| {
        if let Some(call) = as_call(&func, value) {
            loops.push((value, call));
        }
    });
    if loops.is_empty() {
        return func;
    }
    let extracts = func.extracts();
    let places = func.places();
    let mut replace = std::collections::HashMap::new();
    let mut removed = Vec::new();
    for &(value, ref call) in &loops {
        let view = func.inst(value).as_loop().expect("a loop");
        let ty = func.ty(view.body.yields[0]).clone();
        func.insts[value.index()].inst = call.clone();
        func.insts[value.index()].ty = ty;
        for &(_, extract) in &extracts[value.index()] {
            replace.insert(extract, value);
            removed.push((places[extract.index()], extract));
            if func.names[value.index()].is_none() {
                func.names[value.index()] = func.names[extract.index()].clone();
            }
        }
    }
    func.replace_uses(&replace);
    for (place, extract) in removed {
        func.region_mut(place)
            .insts
            .retain(|&value| value != extract);
    }
    // The loops' bodies are left in no region: keep what is placed.
    let mut placed = vec![false; func.insts.len()];
    func.walk(&mut |_, value| placed[value.index()] = true);
    compact(&func, &placed)
}

/// The call that computes what the loop `value` does, if it is a running
/// maximum or minimum.
fn as_call(func: &Function, value: Value) -> Option<Inst> {
    let Inst::For { range, inits, body } = func.inst(value) else {
        return None;
    };
    if range.inclusive || range.step.is_some() || range.reversed {
        return None;
    }
    let (&[m0], &[index, m, elem, next], &[yielded]) =
        (&inits[..], &body.insts[..], &body.yields[..])
    else {
        return None;
    };
    let callee = match func.inst(next) {
        Inst::Prim(Prim::Max, args) if args[..] == [m, elem] => Callee::MaxOver,
        Inst::Prim(Prim::Min, args) if args[..] == [m, elem] => Callee::MinOver,
        // `x[i].max(m)`: the same running maximum, operands as written.
        Inst::Prim(Prim::Max, args) if args[..] == [elem, m] => Callee::MaxOverRev,
        Inst::Prim(Prim::Min, args) if args[..] == [elem, m] => Callee::MinOverRev,
        _ => return None,
    };
    let (Inst::Arg(0), Inst::Arg(1), &Inst::Load(x, at)) =
        (func.inst(index), func.inst(m), func.inst(elem))
    else {
        return None;
    };
    let is_float = func.ty(m0).is_float() && func.ty(x).is_float_buf();
    (at == index && yielded == next && is_float)
        .then(|| Inst::Call(callee, vec![m0, x, range.start, range.end]))
}
