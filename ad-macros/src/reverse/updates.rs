//! Shadow updates in the direction of their loop.
//!
//! The adjoint of one iteration often adds into neighbouring elements of one
//! shadow: `d_x[i] += …` and `d_x[i + 1] += …` for the extended Rosenbrock
//! function. They come out of the reverse pass in the order the primal read
//! the elements, which depends on how the user ordered two independent
//! `let`s. Within a run of such updates, this pass orders the ones of one
//! shadow at `base + c` (constant offsets `c`) by `c`, upwards in a loop that
//! runs forwards and downwards in one that runs backwards: the element the
//! next iteration adds into again is then the one stored last, which the
//! processor forwards from the store buffer. In the other order the next
//! iteration's read waits on a store behind another: W1 with its `let`s
//! swapped took 4× as long.
//!
//! Only consecutive updates are reordered, only among the updates of one
//! shadow at one base, and two updates of the same element keep their
//! order, so no value changes: each element receives the same additions in
//! the same order.
//!
//! ```text
//! for i in 0..n {                         for i in 0..n {
//!     d_x[i + 1] += d_b;          ⇒           d_x[i] += d_t1;
//!     d_x[i] += d_t1;                         d_x[i + 1] += d_b;
//! }                                       }
//! ```

use crate::ir::{BinOp, Const, Function, Inst, Value};

/// `func` with the updates in each loop body ordered as the loop runs.
pub(crate) fn order_updates(mut func: Function) -> Function {
    let mut loops = Vec::new();
    func.walk(&mut |_, value| {
        if let Inst::For { range, .. } = func.inst(value) {
            loops.push((value, range.reversed));
        }
    });
    for (value, reversed) in loops {
        let Inst::For { body, .. } = func.inst(value) else {
            unreachable!("collected as a loop")
        };
        let mut insts = body.insts.clone();
        let mut start = 0;
        while start < insts.len() {
            let mut end = start;
            while end < insts.len() && matches!(func.inst(insts[end]), Inst::Update(..)) {
                end += 1;
            }
            if end - start > 1 {
                order_run(&func, &mut insts[start..end], reversed);
            }
            start = end + 1;
        }
        if let Inst::For { body, .. } = &mut func.insts[value.index()].inst {
            body.insts = insts;
        }
    }
    func
}

/// Orders a run of updates of each shadow by offset, each shadow's updates
/// keeping the places they had among the others'. A run in which one shadow
/// is updated at two bases (`d_x[i]`, `d_x[j]`, which may be one element)
/// is left as it is.
fn order_run(func: &Function, run: &mut [Value], reversed: bool) {
    let mut bases: Vec<(Value, Value)> = Vec::new();
    let mut keys = Vec::new();
    for &update in run.iter() {
        let Inst::Update(_, buf, index, _) = func.inst(update) else {
            unreachable!("a run of updates")
        };
        let (base, offset) = offset_of(func, *index);
        match bases.iter().find(|(known, _)| known == buf) {
            Some(&(_, known)) if known != base => return,
            Some(_) => {}
            None => bases.push((*buf, base)),
        }
        keys.push((*buf, if reversed { -offset } else { offset }));
    }
    for &(buf, _) in &bases {
        let slots: Vec<usize> = (0..run.len()).filter(|&k| keys[k].0 == buf).collect();
        let mut sorted = slots.clone();
        // Stable: updates of one element keep their order.
        sorted.sort_by_key(|&k| keys[k].1);
        let values: Vec<Value> = sorted.iter().map(|&k| run[k]).collect();
        for (slot, value) in slots.into_iter().zip(values) {
            run[slot] = value;
        }
    }
}

/// `index` as `base + offset` for a constant offset: `i + 1`, `1 + i`,
/// `i - 2`, `i`.
fn offset_of(func: &Function, index: Value) -> (Value, i128) {
    let constant = |value: Value| match func.inst(value) {
        Inst::Const(Const::Zero) => Some(0),
        _ => func.int_literal(value).and_then(|c| i128::try_from(c).ok()),
    };
    match func.inst(index) {
        Inst::Binary(BinOp::Add, a, b) => match (constant(*a), constant(*b)) {
            (_, Some(c)) => (*a, c),
            (Some(c), _) => (*b, c),
            _ => (index, 0),
        },
        Inst::Binary(BinOp::Sub, a, b) => match constant(*b) {
            Some(c) => (*a, -c),
            None => (index, 0),
        },
        _ => (index, 0),
    }
}
