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

/// Adjoints carried to the next iterations in registers.
///
/// After [`order_updates`], a loop with step 1 that adds into neighbouring
/// elements of one shadow, `d_x[i - 1] += a; d_x[i] += b;`, adds into
/// `d_x[i]` again in the next iteration. Read back right after it was
/// stored, that element waits for the store (LLVM may merge the two
/// updates into one 16-byte read-modify-write, which the next iteration's
/// overlapping read cannot be forwarded from: W1 over `x[i - 1]` took 4.3
/// times the hand-written gradient), and the loop cannot be vectorised.
/// This pass keeps what later iterations would add to in carried values
/// instead, a window of registers as a hand-written gradient does, and
/// adds an element in once, when it is last touched:
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
/// With offsets spanning `D` elements (a three-point stencil's adjoint,
/// `d_u[i - 1] += t; d_u[i] += c; d_u[i + 1] += t;`, spans two), `D` values
/// are carried, each moving down one place per iteration, and the `D`
/// elements the last iteration left carried are added after the loop: the
/// adjoint of a heat-equation step went from 12 to 3.7 times its primal.
///
/// Only where nothing else in the loop reads or writes the shadow, the
/// updates are statements of the loop's body (not of a branch), and no
/// call in the loop is passed a buffer (a helper for the term passed
/// numbers is fine): then each element receives the same terms, grouped
/// differently (so only the rounding of that sum changes, as fusion
/// already allows). A loop running backwards carries towards the lower
/// offsets.
pub(crate) fn carry_updates(mut func: Function) -> Function {
    let mut carried_any = false;
    for place in super::fuse::region_places(&func) {
        let insts = func.region_mut(place).insts.clone();
        let mut out = Vec::with_capacity(insts.len());
        for value in insts {
            let mut after = Vec::new();
            while let Some(group) = carried_group(&func, value) {
                let (before, then) = carry(&mut func, value, &group);
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

/// The widest span of offsets carried: the registers a loop keeps.
const MAX_CARRIED: i128 = 4;

/// The updates of one shadow in `lp`'s body that [`carry_updates`] joins,
/// each with its offset from the loop's index: at least two, at offsets
/// spanning one to [`MAX_CARRIED`] elements.
fn carried_group(func: &Function, lp: Value) -> Option<Vec<(Value, i128)>> {
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
    let mut tried = Vec::new();
    for &(_, buf, _) in &updates {
        if tried.contains(&buf) {
            continue;
        }
        tried.push(buf);
        let group: Vec<(Value, i128)> = updates
            .iter()
            .filter(|(_, other, _)| *other == buf)
            .map(|&(update, _, offset)| (update, offset))
            .collect();
        let lo = group.iter().map(|&(_, offset)| offset).min()?;
        let hi = group.iter().map(|&(_, offset)| offset).max()?;
        if group.len() < 2 || hi == lo || hi - lo > MAX_CARRIED {
            continue;
        }
        // A shadow: of a buffer parameter, or of a local buffer.
        let shadow = match func.inst(buf) {
            Inst::Param(k) => func.params[*k as usize].role == Role::Shadow,
            Inst::Shadow { .. } => true,
            _ => false,
        };
        if !shadow {
            continue;
        }
        // Nothing else in the loop names the shadow.
        let base = func.bases(vec![buf]);
        let names_it = nested.iter().any(|&v| {
            !group.iter().any(|&(update, _)| update == v)
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
        if !names_it {
            return Some(group);
        }
    }
    None
}

/// Joins the updates of `group` in `lp` (see [`carry_updates`]): what goes
/// before the loop (the carried values' zeros) and after it (the additions
/// of the elements left carried).
///
/// In the direction the loop runs, an update's place is its offset (its
/// negation backwards); the lowest place is the element the iteration
/// touches last. The carried value `c[d]` (`d` = 1 to `D`) holds what the
/// earlier iterations added into the element `d - 1` places above it. An
/// iteration adds `c[1]` and its own terms of the lowest place into that
/// element, and carries `c[d + 1]` plus its terms of place `d` as the new
/// `c[d]`.
fn carry(func: &mut Function, lp: Value, group: &[(Value, i128)]) -> (Vec<Value>, Vec<Value>) {
    let Inst::For { range, inits, body } = func.inst(lp).clone() else {
        unreachable!("a loop")
    };
    let (first, _) = group[0];
    let span = func.span(first);
    let Inst::Update(_, buf, _, first_addend) = func.inst(first).clone() else {
        unreachable!("an update")
    };
    let ty = func.ty(first_addend).clone();
    let place = |offset: i128| if range.reversed { -offset } else { offset };
    let lowest = group
        .iter()
        .map(|&(_, offset)| place(offset))
        .min()
        .expect("two");
    let span_d = group
        .iter()
        .map(|&(_, offset)| place(offset))
        .max()
        .expect("two")
        - lowest;
    let width = usize::try_from(span_d).expect("within MAX_CARRIED");
    // The terms of each place, in the body's order, and where the lowest
    // place's element is.
    let mut terms: Vec<Vec<Value>> = vec![Vec::new(); width + 1];
    let mut lowest_at = None;
    for &(update, offset) in group {
        let Inst::Update(_, _, at, addend) = *func.inst(update) else {
            unreachable!("an update")
        };
        let d = usize::try_from(place(offset) - lowest).expect("at or above the lowest");
        terms[d].push(addend);
        if d == 0 {
            lowest_at.get_or_insert(at);
        }
    }
    let lowest_at = lowest_at.expect("the lowest place has an update");
    let args_end = body
        .insts
        .iter()
        .rposition(|&v| matches!(func.inst(v), Inst::Arg(_)))
        .map_or(0, |k| k + 1);
    let shadow_name = func.names[buf.index()]
        .clone()
        .unwrap_or_else(|| "d".to_owned());
    let mut zeros = Vec::new();
    let mut carried = Vec::new();
    for d in 1..=width {
        let name = match d {
            1 => format!("{shadow_name}_next"),
            _ => format!("{shadow_name}_next{d}"),
        };
        let zero = func.push_detached(Inst::Const(Const::Zero), ty.clone(), span);
        let index = u32::try_from(inits.len() + d).expect("few carried values");
        let arg = func.push_detached(Inst::Arg(index), ty.clone(), span);
        func.names[zero.index()] = Some(name.clone());
        func.names[arg.index()] = Some(name);
        zeros.push(zero);
        carried.push(arg);
    }
    // The sums, made where the last of the group's updates was.
    let mut made = Vec::new();
    let sum = |func: &mut Function, parts: Vec<Value>, made: &mut Vec<Value>| {
        let mut parts = parts.into_iter();
        let mut total = parts.next()?;
        for part in parts {
            total = func.push_detached(Inst::Binary(BinOp::Add, total, part), ty.clone(), span);
            made.push(total);
        }
        Some(total)
    };
    let mut lowest_terms = terms[0].clone();
    lowest_terms.push(carried[0]);
    let total = sum(func, lowest_terms, &mut made).expect("a term");
    let update = func.push_detached(
        Inst::Update(BinOp::Add, buf, lowest_at, total),
        Ty::Tuple(Vec::new()),
        span,
    );
    made.push(update);
    let mut yields = Vec::new();
    for d in 1..=width {
        let mut parts = Vec::new();
        if d < width {
            parts.push(carried[d]);
        }
        parts.extend(terms[d].iter().copied());
        yields.push(sum(func, parts, &mut made).expect("a term or a carried value"));
    }
    let members: Vec<Value> = group.iter().map(|&(update, _)| update).collect();
    if let Inst::For { inits, body, .. } = &mut func.insts[lp.index()].inst {
        inits.extend(zeros.iter().copied());
        let last = body
            .insts
            .iter()
            .rposition(|v| members.contains(v))
            .expect("in the body");
        body.insts.splice(last + 1..last + 1, made);
        body.insts.retain(|v| !members.contains(v));
        for (k, &arg) in carried.iter().enumerate() {
            body.insts.insert(args_end + k, arg);
        }
        body.yields.extend(yields);
    }
    if let Ty::Tuple(carried_tys) = &mut func.insts[lp.index()].ty {
        carried_tys.extend(std::iter::repeat_n(ty.clone(), width));
    }
    // After the loop, if it ran: the elements its last iteration left
    // carried, `end + lowest + d - 1` (`start - lowest - d` backwards).
    let ran = func.push_detached(
        Inst::Binary(BinOp::Lt, range.start, range.end),
        Ty::Bool,
        span,
    );
    let mut after = Vec::new();
    let mut then = Vec::new();
    for d in 1..=width {
        let k = u32::try_from(inits.len() + d - 1).expect("few carried values");
        let extract = func.push_detached(Inst::Extract(lp, k), ty.clone(), span);
        after.push(extract);
        let d = i128::try_from(d).expect("small");
        let (base, shift) = match range.reversed {
            false => (range.end, lowest + d - 1),
            true => (range.start, -lowest - d),
        };
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
    }
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
    after.extend([ran, last]);
    (zeros, after)
}
