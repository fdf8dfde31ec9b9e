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

use crate::ir::{BinOp, Const, Function, Inst, Region, Role, Ty, Value};

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

/// Adjoints carried to the next iteration in a register.
///
/// After [`order_updates`], a loop with step 1 that adds into neighbouring
/// elements of one shadow, `d_x[i - 1] += a; d_x[i] += b;`, adds into
/// `d_x[i]` again in the next iteration. Read back right after it was
/// stored, that element waits for the store (LLVM may merge the two
/// updates into one 16-byte read-modify-write, which the next iteration's
/// overlapping read cannot be forwarded from: W1 over `x[i - 1]` took 4.3
/// times the hand-written gradient). This pass keeps what the next
/// iteration would add to in a carried value instead, as a hand-written
/// gradient does, and adds it in when that element is last touched:
///
/// ```text
/// for i in 1..n {                        let mut d_x_next = 0.0;
///     …                                  for i in 1..n {
///     d_x[i - 1] += a;           ⇒           …
///     d_x[i] += b;                           d_x[i - 1] += a + d_x_next;
/// }                                          d_x_next = b;
///                                        }
///                                        if 1 < n { d_x[n - 1] += d_x_next; }
/// ```
///
/// Only where nothing else in the loop reads or writes the shadow, and no
/// call in the loop is passed a buffer (a helper for the term passed
/// numbers is fine): then each element receives the same terms, one
/// addition earlier grouped (so only the rounding of that sum changes, as
/// fusion already allows). A loop running backwards carries the element of
/// the lower offset.
pub(crate) fn carry_updates(mut func: Function) -> Function {
    let mut carried_any = false;
    for place in super::fuse::region_places(&func) {
        let insts = func.region_mut(place).insts.clone();
        let mut out = Vec::with_capacity(insts.len());
        for value in insts {
            let mut after = Vec::new();
            while let Some(pair) = carried_pair(&func, value) {
                let (before, then) = carry(&mut func, value, pair);
                carried_any = true;
                out.extend(before);
                after.extend(then);
            }
            out.push(value);
            out.extend(after);
        }
        func.region_mut(place).insts = out;
    }
    if !carried_any {
        return func;
    }
    // The carried updates are gone from their bodies.
    let mut live = vec![false; func.insts.len()];
    func.walk(&mut |_, value| live[value.index()] = true);
    crate::ir::compact(&func, &live)
}

/// The two updates of one shadow in `lp`'s body that [`carry_updates`]
/// joins: the one whose element the next iteration touches again, then
/// the other, with the carried one's offset.
fn carried_pair(func: &Function, lp: Value) -> Option<(Value, Value, i128)> {
    let Inst::For { range, body, .. } = func.inst(lp) else {
        return None;
    };
    if range.checkpoint.is_some() || range.step.is_some() || range.inclusive {
        return None;
    }
    let index = body
        .insts
        .iter()
        .copied()
        .find(|&v| matches!(func.inst(v), Inst::Arg(0)))?;
    let nested = func.nested(lp);
    // A call passed a buffer may read a shadow through a struct or a slice
    // of it; one passed only numbers (a helper for the term) cannot.
    if nested.iter().any(|&v| match func.inst(v) {
        Inst::Apply { args, .. } | Inst::Forward { args, .. } => !super::fuse::by_value(args),
        Inst::Call(..) | Inst::FieldUpdate { .. } => true,
        _ => false,
    }) {
        return None;
    }
    let updates: Vec<(Value, Value, i128)> = body
        .insts
        .iter()
        .filter_map(|&v| match func.inst(v) {
            Inst::Update(BinOp::Add, buf, at, _) => {
                let (base, offset) = offset_of(func, *at);
                (base == index).then_some((v, *buf, offset))
            }
            _ => None,
        })
        .collect();
    for (k, &(first, buf, offset)) in updates.iter().enumerate() {
        let Some(&(second, _, other)) = updates[k + 1..]
            .iter()
            .find(|(_, other_buf, _)| *other_buf == buf)
        else {
            continue;
        };
        // A shadow: of a buffer parameter, or of a local buffer.
        let shadow = match func.inst(buf) {
            Inst::Param(k) => func.params[*k as usize].role == Role::Shadow,
            Inst::Shadow { .. } => true,
            _ => false,
        };
        if (offset - other).abs() != 1 || !shadow {
            continue;
        }
        // Nothing else in the loop names the shadow.
        let base = func.bases(vec![buf]);
        let names_it = nested.iter().any(|&v| {
            v != first
                && v != second
                && (func
                    .inst(v)
                    .operands()
                    .iter()
                    .any(|&op| func.bases(vec![op]) == base)
                    || func
                        .regions(v)
                        .iter()
                        .any(|region| region.yields.iter().any(|&y| func.bases(vec![y]) == base)))
        });
        if names_it {
            continue;
        }
        // Forwards, the higher offset is touched again; backwards, the lower.
        let carried_first = (offset > other) != range.reversed;
        return Some(match carried_first {
            true => (first, second, offset),
            false => (second, first, other),
        });
    }
    None
}

/// Joins the updates `carried` and `kept` of `lp` (see [`carry_updates`]):
/// what goes before the loop (the carried value's zero) and after it (the
/// last element's addition).
fn carry(
    func: &mut Function,
    lp: Value,
    (carried, kept, offset): (Value, Value, i128),
) -> (Vec<Value>, Vec<Value>) {
    let span = func.span(carried);
    let Inst::Update(_, buf, _, carried_addend) = func.inst(carried).clone() else {
        unreachable!("an update")
    };
    let Inst::Update(op, _, kept_at, kept_addend) = func.inst(kept).clone() else {
        unreachable!("an update")
    };
    let Inst::For { range, inits, body } = func.inst(lp).clone() else {
        unreachable!("a loop")
    };
    let args_end = body
        .insts
        .iter()
        .rposition(|&v| matches!(func.inst(v), Inst::Arg(_)))
        .map_or(0, |k| k + 1);
    let ty = func.ty(carried_addend).clone();
    let name = format!("{}_next", func.names[buf.index()].as_deref().unwrap_or("d"));
    let zero = func.push_detached(Inst::Const(Const::Zero), ty.clone(), span);
    let arg = func.push_detached(
        Inst::Arg(u32::try_from(inits.len() + 1).expect("few carried values")),
        ty.clone(),
        span,
    );
    func.names[zero.index()] = Some(name.clone());
    func.names[arg.index()] = Some(name);
    let sum = func.push_detached(Inst::Binary(BinOp::Add, kept_addend, arg), ty.clone(), span);
    func.insts[kept.index()].inst = Inst::Update(op, buf, kept_at, sum);
    if let Inst::For { inits, body, .. } = &mut func.insts[lp.index()].inst {
        inits.push(zero);
        body.insts.insert(args_end, arg);
        body.insts.retain(|&v| v != carried);
        let at = body
            .insts
            .iter()
            .position(|&v| v == kept)
            .expect("in the body");
        body.insts.insert(at, sum);
        body.yields.push(carried_addend);
    }
    if let Ty::Tuple(carried_tys) = &mut func.insts[lp.index()].ty {
        carried_tys.push(ty.clone());
    }
    // After the loop, if it ran: the element its last iteration left
    // carried, `end - 1 + offset` (`start + offset` backwards).
    let extract = func.push_detached(
        Inst::Extract(lp, u32::try_from(inits.len()).expect("few carried values")),
        ty,
        span,
    );
    let ran = func.push_detached(
        Inst::Binary(BinOp::Lt, range.start, range.end),
        Ty::Bool,
        span,
    );
    let (base, shift) = match range.reversed {
        false => (range.end, offset - 1),
        true => (range.start, offset),
    };
    let mut then = Vec::new();
    let at = match shift {
        0 => base,
        _ => {
            let literal = proc_macro2::Literal::u128_unsuffixed(shift.unsigned_abs());
            let amount = func.push_detached(Inst::Const(Const::Lit(literal)), Ty::Int, span);
            let op = if shift > 0 { BinOp::Add } else { BinOp::Sub };
            let at = func.push_detached(Inst::Binary(op, base, amount), Ty::Int, span);
            then.extend([amount, at]);
            at
        }
    };
    let add = func.push_detached(
        Inst::Update(BinOp::Add, buf, at, extract),
        Ty::Tuple(Vec::new()),
        span,
    );
    then.push(add);
    let last = func.push_detached(
        Inst::If {
            cond: ran,
            then: Region {
                insts: then,
                yields: Vec::new(),
            },
            els: Region::default(),
        },
        Ty::Tuple(Vec::new()),
        span,
    );
    (vec![zero], vec![extract, ran, last])
}
