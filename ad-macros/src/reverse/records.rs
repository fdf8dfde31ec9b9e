//! A loop that saves many values per iteration saves them as records.
//!
//! Each taped value has a tape of its own, and each push and each pop checks
//! its tape (room reserved, not empty): a check that panics is an exit of the
//! loop. With thousands of taped values in one loop body (generated code,
//! unrolled kernels), LLVM's loop analysis combines thousands of exits and
//! overflows rustc's stack in release builds (issue 21). So a loop with more
//! than [`RECORD_ABOVE`] tapes of scalars saves them together: one tape of
//! tuples of at most [`RECORD_LEN`] values, pushed once at the end of the
//! iteration (every top-level value of the body is computed and in scope
//! there: exits are flags and guards, and carried values are assigned after
//! the body) and popped once where the separate pops were.
//!
//! ```text
//! for i in 0..n {                          for i in 0..n {
//!     let a = …; tape_a.push(a);               let a = …;
//!     let b = …; tape_b.push(b);       ⇒       let b = …;
//!     …                                        …
//! }                                            tape_a.push((a, b, …));
//!                                          }
//! for i in (0..n).rev() {                  for i in (0..n).rev() {
//!     let a = tape_a.pop();                    let (a, b, …) = tape_a.pop();
//!     let b = tape_b.pop(); …                  …
//! ```
//!
//! Ordinary loops keep a tape per value: their expansion reads as before, and
//! pushing where a value is defined keeps it out of registers across the rest
//! of the body.

use std::collections::{HashMap, HashSet};

use crate::ir::{Function, Inst, Place, Ty, Value, without};

/// Loops with more tapes of scalars than this save records.
pub(crate) const RECORD_ABOVE: usize = 64;

/// The most values in one record: a tuple rustc and readers handle well.
const RECORD_LEN: usize = 64;

/// `func` with the tapes of each loop that has more than [`RECORD_ABOVE`] of
/// them grouped into records.
pub(crate) fn record_tapes(func: Function) -> Function {
    record_tapes_above(func, RECORD_ABOVE)
}

/// `func` with the tapes of each loop that has more than `above` of them (and
/// at least two) grouped into records; the tests group every loop's tapes.
///
/// One walk finds the candidates, one pass over the regions rewrites them:
/// thousands of tapes in one loop must not cost a walk each.
pub(crate) fn record_tapes_above(mut func: Function, above: usize) -> Function {
    // Where each value is defined, and its position in program order.
    let mut places = vec![Place::Body; func.insts.len()];
    let mut order = vec![0; func.insts.len()];
    // Each tape's pushes, pops and reserves.
    let mut pushes: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut pops: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut reserves: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut tapes = Vec::new();
    let mut at = 0;
    func.walk(&mut |place, value| {
        places[value.index()] = place;
        order[value.index()] = at;
        at += 1;
        match func.inst(value) {
            Inst::TapeNew { .. } => tapes.push(value),
            Inst::Push(tape, _) => pushes.entry(*tape).or_default().push(value),
            Inst::Pop(tape) => pops.entry(*tape).or_default().push(value),
            Inst::TapeReserve { tape, .. } => reserves.entry(*tape).or_default().push(value),
            _ => {}
        }
    });
    // Most functions have no loop that saves that much: stop early.
    let mut per_loop: HashMap<Place, usize> = HashMap::new();
    for pushed in pushes.values().flatten() {
        *per_loop.entry(places[pushed.index()]).or_default() += 1;
    }
    if per_loop.values().all(|&count| count <= above.max(1)) {
        return func;
    }
    // Tapes something else reads stay as they are.
    let mut others: HashSet<Value> = HashSet::new();
    func.walk(&mut |_, value| {
        let inst = func.inst(value);
        if !matches!(
            inst,
            Inst::Push(..) | Inst::Pop(_) | Inst::TapeReserve { .. }
        ) {
            others.extend(inst.operands());
        }
    });
    // Candidates, by (loop pushing, region popping): a tape of a scalar
    // pushed once in a loop's body and popped once in another region's top.
    let mut groups: HashMap<(Value, Place), Vec<Value>> = HashMap::new();
    let mut keys = Vec::new();
    for &tape in &tapes {
        let (Some(&[push]), Some(&[pop])) = (
            pushes.get(&tape).map(Vec::as_slice),
            pops.get(&tape).map(Vec::as_slice),
        ) else {
            continue;
        };
        let Ty::Tape(elem) = func.ty(tape) else {
            continue;
        };
        let Place::In(owner, 0) = places[push.index()] else {
            continue;
        };
        if !elem.is_scalar()
            || others.contains(&tape)
            || !matches!(func.inst(owner), Inst::For { .. } | Inst::While { .. })
        {
            continue;
        }
        let key = (owner, places[pop.index()]);
        let group = groups.entry(key).or_default();
        if group.is_empty() {
            keys.push(key);
        }
        group.push(tape);
    }

    let mut edit = Edit::default();
    for key in keys {
        let group = groups.get_mut(&key).expect("grouped");
        if group.len() <= above.max(1) {
            continue;
        }
        // In the order the body saves them.
        group.sort_by_key(|tape| order[pushes[tape][0].index()]);
        // Records of even length, so none holds a single value.
        let n_records = group.len().div_ceil(RECORD_LEN);
        for chunk in group.chunks(group.len().div_ceil(n_records)) {
            let push = |tape: &Value| pushes[tape][0];
            let pop = |tape: &Value| pops[tape][0];
            let first_pop = chunk
                .iter()
                .map(pop)
                .min_by_key(|value| order[value.index()])
                .expect("a record holds values");
            record(&mut func, key.0, chunk, push, pop, first_pop, &mut edit);
            for tape in &chunk[1..] {
                edit.gone.extend(reserves.get(tape).into_iter().flatten());
            }
        }
    }
    if edit.gone.is_empty() {
        return func;
    }
    edit.apply(&mut func);
    without(func, &edit.gone)
}

/// The changes to the regions, made in one pass.
#[derive(Default)]
struct Edit {
    /// Taken out of their regions, then out of the function.
    gone: HashSet<Value>,
    /// Appended to a loop's body: each record and its push.
    append: HashMap<Value, Vec<Value>>,
    /// A record's pop, before the first of the pops it replaces.
    before: HashMap<Value, Value>,
}

impl Edit {
    fn apply(&self, func: &mut Function) {
        let edit = |insts: &mut Vec<Value>| {
            let mut out = Vec::with_capacity(insts.len());
            for &value in insts.iter() {
                if let Some(&pop) = self.before.get(&value) {
                    out.push(pop);
                }
                if !self.gone.contains(&value) {
                    out.push(value);
                }
            }
            *insts = out;
        };
        edit(&mut func.body.insts);
        for (index, data) in func.insts.iter_mut().enumerate() {
            let owner = Value(u32::try_from(index).expect("fewer than 2³² values"));
            let appended = self.append.get(&owner);
            for region in data.inst.regions_mut() {
                edit(&mut region.insts);
                // Only loops have records appended: their one region is the body.
                region.insts.extend(appended.into_iter().flatten());
            }
        }
    }
}

/// Saves the values of `tapes`, pushed in `owner`'s body, as records on the
/// first of them: the other tapes and every push go (into `edit`).
fn record(
    func: &mut Function,
    owner: Value,
    tapes: &[Value],
    push_of: impl Fn(&Value) -> Value,
    pop_of: impl Fn(&Value) -> Value,
    first_pop: Value,
    edit: &mut Edit,
) {
    let first = tapes[0];
    let span = func.span(first);
    let mut values = Vec::new();
    let mut tys = Vec::new();
    for tape in tapes {
        let push = push_of(tape);
        let Inst::Push(_, value) = func.inst(push) else {
            unreachable!("a push")
        };
        values.push(*value);
        tys.push(func.ty(*value).clone());
        edit.gone.insert(push);
    }
    edit.gone.extend(&tapes[1..]);
    let record_ty = Ty::Tuple(tys);
    func.names[first.index()] = Some("saved".to_owned());
    func.insts[first.index()].ty = Ty::Tape(Box::new(record_ty.clone()));

    // The push, at the end of the body.
    let tuple = func.push_detached(Inst::Tuple(values), record_ty.clone(), span);
    let push = func.push_detached(Inst::Push(first, tuple), Ty::Unit, span);
    edit.append.entry(owner).or_default().extend([tuple, push]);

    // The pop, where the first of the pops was; each pop becomes a component.
    let pop = func.push_detached(Inst::Pop(first), record_ty, span);
    for (index, tape) in tapes.iter().enumerate() {
        func.insts[pop_of(tape).index()].inst =
            Inst::Extract(pop, u32::try_from(index).expect("a short record"));
    }
    edit.before.insert(first_pop, pop);
}
