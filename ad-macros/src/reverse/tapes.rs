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
///
/// One pass over the body: each tape, in order, gets an anchor (the value it
/// goes right after) and the group of values that move with it, computed
/// from the original positions, since only movable values and tapes move
/// and the others keep their order. (Rebuilding the body for each tape was
/// quadratic: 46% of the expansion time of an 800-statement loop body.)
pub(crate) fn make_tapes_early(mut func: Function) -> Function {
    let body = func.body.insts.clone();
    let position: HashMap<Value, usize> = body
        .iter()
        .enumerate()
        .map(|(pos, &value)| (value, pos))
        .collect();
    // Not before the parameters the body starts with: the anchor is the last
    // of them, `None` for the very start.
    let leading_params = body
        .iter()
        .take_while(|&&value| func.is_param(value))
        .count();
    let mut floor: Option<usize> = leading_params.checked_sub(1);
    let mut moved_before: HashSet<Value> = HashSet::new();
    // Each group's values in body order, the tape last, by anchor.
    let mut groups: HashMap<Option<usize>, Vec<Value>> = HashMap::new();
    for &tape in &body {
        if !matches!(func.inst(tape), Inst::TapeNew { .. }) {
            continue;
        }
        // What the tape's size needs, and the latest of those that cannot
        // move; each tape goes after the ones before it.
        let mut anchor = floor;
        let mut moved = HashSet::from([tape]);
        let mut stack = func.inst(tape).operands();
        while let Some(value) = stack.pop() {
            let Some(&pos) = position.get(&value) else {
                continue;
            };
            if moved.contains(&value) || moved_before.contains(&value) {
                continue;
            }
            // Parameters stay first; what is pure and cannot panic moves.
            if !func.is_param(value) && hoistable(&func, value) {
                moved.insert(value);
                stack.extend(func.inst(value).operands());
            } else {
                anchor = anchor.max(Some(pos));
            }
        }
        // What is already before the anchor stays where it is.
        moved.retain(|value| Some(position[value]) > anchor);
        let mut group: Vec<Value> = moved.iter().copied().collect();
        group.sort_by_key(|value| position[value]);
        moved_before.extend(&group);
        groups.entry(anchor).or_default().extend(group);
        floor = anchor;
    }
    let mut top = groups.remove(&None).unwrap_or_default();
    for (pos, &value) in body.iter().enumerate() {
        if !moved_before.contains(&value) {
            top.push(value);
        }
        if let Some(group) = groups.remove(&Some(pos)) {
            top.extend(group);
        }
    }
    func.body.insts = top;
    func
}
