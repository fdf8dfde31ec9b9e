//! Tapes are made as early as their size is known.
//!
//! The reverse pass makes a loop's tapes right before the statement holding
//! the loop. Making a tape calls the runtime (its pool, or the allocator), and
//! a call between two loops can make the compiler keep the first loop's
//! carried value on the stack for the whole loop instead of in a register:
//! GradBench's `lse` ran 1.7× slower for a `max` loop that loaded and stored
//! its running maximum each iteration. So each tape moves up, with the pure
//! integer arithmetic its size is computed from (`x.len()`, `n - 1`), to right
//! after the last value it needs that cannot move (a loop's result, an
//! element read), or to the top of the body. The tapes then sit together,
//! before the loops.
//!
//! ```text
//! let t1 = x.len();                            let t1 = x.len();
//! let mut tape_m = Tape::with_capacity(…);     let mut tape_m = Tape::with_capacity(…);
//! for i in 1..t1 { … }                   ⇒     let t2 = x.len();
//! let t2 = x.len();                            let mut tape_t = Tape::with_capacity(…);
//! let mut tape_t = Tape::with_capacity(…);     for i in 1..t1 { … }
//! for i in 0..t2 { … }                         for i in 0..t2 { … }
//! ```

use std::collections::{HashMap, HashSet};

use super::fuse::hoistable;
use crate::ir::{Function, Inst, Value};

/// `func` with each top-level tape made as early as it can be.
pub(crate) fn make_tapes_early(mut func: Function) -> Function {
    let tapes: Vec<Value> = func
        .body
        .insts
        .iter()
        .copied()
        .filter(|&value| matches!(func.inst(value), Inst::TapeNew { .. }))
        .collect();
    // Each tape goes after the ones before it, so they keep their order.
    let mut floor = 0;
    for tape in tapes {
        let body = &func.body.insts;
        let position: HashMap<Value, usize> = body
            .iter()
            .enumerate()
            .map(|(pos, &value)| (value, pos))
            .collect();
        let tape_pos = position[&tape];
        // What the tape's size needs, and where the earliest of those that
        // cannot move is.
        let mut moved = HashSet::from([tape]);
        // Not before the parameters the body starts with.
        let mut target = body
            .iter()
            .position(|&value| !func.is_param(value))
            .unwrap_or(body.len())
            .max(floor);
        let mut stack = func.inst(tape).operands();
        while let Some(value) = stack.pop() {
            let Some(&pos) = position.get(&value) else {
                continue;
            };
            if moved.contains(&value) {
                continue;
            }
            // Parameters stay first; what is pure and cannot panic moves.
            if !func.is_param(value) && hoistable(&func, value) {
                moved.insert(value);
                stack.extend(func.inst(value).operands());
            } else {
                target = target.max(pos + 1);
            }
        }
        // What is already before the target stays where it is.
        moved.retain(|value| position[value] >= target);
        let mut top: Vec<Value> = body[..target].to_vec();
        top.extend(body[target..=tape_pos].iter().filter(|v| moved.contains(v)));
        floor = top.len();
        top.extend(body[target..].iter().filter(|v| !moved.contains(v)));
        func.body.insts = top;
    }
    func
}
