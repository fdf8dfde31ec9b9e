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
pub(crate) fn record_tapes_above(mut func: Function, above: usize) -> Function {
    let places = func.places();
    // Each tape's pushes and pops, with their places.
    let mut pushes: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut pops: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut others: HashSet<Value> = HashSet::new();
    let mut tapes = Vec::new();
    func.walk(&mut |_, value| match func.inst(value) {
        Inst::TapeNew { .. } => tapes.push(value),
        Inst::Push(tape, _) => pushes.entry(*tape).or_default().push(value),
        Inst::Pop(tape) => pops.entry(*tape).or_default().push(value),
        Inst::TapeReserve { .. } => {}
        inst => others.extend(inst.operands()),
    });
    // Candidates, by (loop pushing, region popping): a tape of a scalar
    // pushed once in a loop's body and popped once in another region's top.
    let mut groups: HashMap<(Value, Place), Vec<Value>> = HashMap::new();
    let mut order = Vec::new();
    for &tape in &tapes {
        let (Some([push]), Some([pop])) = (
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
            order.push(key);
        }
        group.push(tape);
    }
    let mut gone = HashSet::new();
    for key in order {
        let group = groups.get_mut(&key).expect("grouped");
        if group.len() > above.max(1) {
            // In the order the body saves them.
            let body = &func.regions(key.0)[0].insts;
            let position: HashMap<Value, usize> = body
                .iter()
                .enumerate()
                .map(|(at, &value)| (value, at))
                .collect();
            group.sort_by_key(|tape| position[&pushes[tape][0]]);
            // Records of even length, so none holds a single value.
            let n_records = group.len().div_ceil(RECORD_LEN);
            for chunk in group.chunks(group.len().div_ceil(n_records)) {
                gone.extend(record(&mut func, key.0, chunk, &pushes, &pops));
            }
        }
    }
    if gone.is_empty() {
        return func;
    }
    without(func, &gone)
}

/// Saves the values of `tapes`, pushed in `owner`'s body, as records on the
/// first of them. Returns what goes: the other tapes, the pushes and what
/// reserves room on the other tapes, taken out of their regions.
fn record(
    func: &mut Function,
    owner: Value,
    tapes: &[Value],
    pushes: &HashMap<Value, Vec<Value>>,
    pops: &HashMap<Value, Vec<Value>>,
) -> HashSet<Value> {
    let first = tapes[0];
    let span = func.span(first);
    let mut values = Vec::new();
    let mut tys = Vec::new();
    let mut gone: HashSet<Value> = tapes[1..].iter().copied().collect();
    for tape in tapes {
        let push = pushes[tape][0];
        let Inst::Push(_, value) = func.inst(push) else {
            unreachable!("a push")
        };
        values.push(*value);
        tys.push(func.ty(*value).clone());
        gone.insert(push);
    }
    let record_ty = Ty::Tuple(tys);
    func.names[first.index()] = Some("saved".to_owned());
    func.insts[first.index()].ty = Ty::Tape(Box::new(record_ty.clone()));

    // The push, at the end of the body.
    let tuple = func.push_detached(Inst::Tuple(values), record_ty.clone(), span);
    let push = func.push_detached(Inst::Push(first, tuple), Ty::Unit, span);
    let body = func.region_mut(Place::In(owner, 0));
    body.insts.retain(|value| !gone.contains(value));
    body.insts.extend([tuple, push]);

    // The pop, where the first of the pops was; each pop becomes a component.
    let popped: Vec<Value> = tapes.iter().map(|tape| pops[tape][0]).collect();
    let pop = func.push_detached(Inst::Pop(first), record_ty, span);
    for (index, &value) in popped.iter().enumerate() {
        func.insts[value.index()].inst =
            Inst::Extract(pop, u32::try_from(index).expect("a short record"));
    }
    let popped_set: HashSet<Value> = popped.iter().copied().collect();
    let place = func.places()[popped[0].index()];
    let region = func.region_mut(place);
    let at = region
        .insts
        .iter()
        .position(|value| popped_set.contains(value))
        .expect("the pops are in their region");
    region.insts.insert(at, pop);

    // The other tapes, and what reserves room on them.
    let mut reserves = HashSet::new();
    func.walk(&mut |_, value| {
        if let Inst::TapeReserve { tape, .. } = func.inst(value)
            && gone.contains(tape)
        {
            reserves.insert(value);
        }
    });
    gone.extend(reserves);
    remove(func, &gone);
    gone
}

/// Takes `gone` out of every region.
fn remove(func: &mut Function, gone: &HashSet<Value>) {
    func.body.insts.retain(|value| !gone.contains(value));
    for data in &mut func.insts {
        match &mut data.inst {
            Inst::If { then, els, .. } => {
                then.insts.retain(|value| !gone.contains(value));
                els.insts.retain(|value| !gone.contains(value));
            }
            Inst::For { body, .. } | Inst::While { body, .. } => {
                body.insts.retain(|value| !gone.contains(value));
            }
            _ => {}
        }
    }
}
