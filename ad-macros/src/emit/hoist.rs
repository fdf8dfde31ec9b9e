//! Bounds checks hoisted out of loops: a buffer read or written at
//! `base + j` in a `for j in start..end` is sliced once before the loop, so
//! that rustc checks one range instead of every element.
//!
//! ```text
//! for j in 0..r {                               if r > 0 {
//!     z += l[o + j] * x[i * d + j];       ⇒         let l_s = &l[o..][..r];
//! }                                                 let x_s = &x[i * d..][..r];
//!                                                   for j in 0..r {
//!                                                       z += l_s[j] * x_s[j];
//!                                                   }
//!                                               }
//! ```
//!
//! `x_s[j]` with `j < r == x_s.len()` needs no check, and a loop without
//! checks is one LLVM can vectorize: gmm's `_vjp`, whose triangular products
//! index `l`, `x` and `mu` (and their shadows) this way, ran 29% faster.
//!
//! An access is hoisted when it is in the loop's body itself (so every
//! iteration makes it: the slice fails exactly when one of the accesses
//! would), its buffer exists before the loop, its index is `base + j` or
//! `j + base` for the loop's index `j`, and `base` does not change in the
//! loop: defined before it, or computed in the body from such values by
//! integer arithmetic (computed again before the loop, after the guard, so
//! an overflow panics where the first iteration's would). The loop is a `for` over `start..end` or its reverse,
//! with no `step_by` and not `..=`. A buffer written in the loop is sliced
//! `&mut` only if every use of it in the loop is such an access with the same
//! base; a buffer only read may also be used otherwise.
//!
//! The one difference: an out-of-bounds access panics before the loop
//! instead of at the iteration that makes it, with the slice's message.

use std::collections::HashMap;

use crate::ir::{BinOp, Const, Function, Inst, Place, Ty, Value};

/// A slice made before a loop.
pub(crate) struct Slice {
    pub(crate) buf: Value,
    pub(crate) base: Value,
    pub(crate) mutable: bool,
}

/// What to hoist out of which loop.
#[derive(Default)]
pub(crate) struct Plan {
    /// For each loop, the slices made before it.
    pub(crate) loops: HashMap<Value, Vec<Slice>>,
    /// For each hoisted access, its loop and its slice in that loop's list.
    pub(crate) accesses: HashMap<Value, (Value, usize)>,
}

impl Plan {
    pub(crate) fn new(func: &Function, places: &[Place]) -> Plan {
        let mut plan = Plan::default();
        func.walk(&mut |_, value| {
            // A checkpointed loop's body is emitted again in its adjoint,
            // where slices made before the primal loop are out of scope.
            if matches!(func.inst(value), Inst::For { range, .. } if range.checkpoint.is_some()) {
                return;
            }
            let slices = hoisted(func, places, value);
            for (position, (slice, accesses)) in slices.into_iter().enumerate() {
                for access in accesses {
                    plan.accesses.insert(access, (value, position));
                }
                plan.loops.entry(value).or_default().push(slice);
            }
        });
        plan
    }

    /// `func.uses()` as emitted with this plan: a hoisted access uses the
    /// loop's index instead of its index expression, and what only such
    /// expressions used is not emitted either.
    pub(super) fn uses(&self, func: &Function, places: &[Place]) -> Vec<Vec<Place>> {
        let mut uses = func.uses();
        if self.accesses.is_empty() {
            return uses;
        }
        for (&access, &(owner, _)) in &self.accesses {
            let index = index_of(func.inst(access)).expect("an access");
            let place = places[access.index()];
            let at = uses[index.index()]
                .iter()
                .position(|&used| used == place)
                .expect("the access uses its index");
            uses[index.index()].remove(at);
            let body = &func.inst(owner).as_loop().expect("a loop").body;
            uses[body.insts[0].index()].push(place);
        }
        // A slice's base is written before its loop, with the values from
        // outside the body that it reads.
        for (&owner, slices) in &self.loops {
            let body = Place::In(owner, 0);
            for slice in slices {
                for read in outside_operands(func, places, slice.base, body) {
                    uses[read.index()].push(places[owner.index()]);
                }
            }
        }
        // Unused, unnamed integer arithmetic is not emitted: neither are its
        // uses of its operands. Operands come first, so walk backwards.
        let mut values = Vec::new();
        func.walk(&mut |_, value| values.push(value));
        for &value in values.iter().rev() {
            if uses[value.index()].is_empty()
                && func.name(value).is_none()
                && matches!(func.inst(value), Inst::Binary(..))
            {
                for operand in func.inst(value).operands() {
                    let place = places[value.index()];
                    if let Some(at) = uses[operand.index()].iter().position(|&p| p == place) {
                        uses[operand.index()].remove(at);
                    }
                }
            }
        }
        uses
    }
}

/// The buffer an access reads or writes, and its index.
fn access(inst: &Inst) -> Option<(Value, Value)> {
    match *inst {
        Inst::Load(buf, index) | Inst::Store(buf, index, _) | Inst::Update(_, buf, index, _) => {
            Some((buf, index))
        }
        _ => None,
    }
}

fn index_of(inst: &Inst) -> Option<Value> {
    access(inst).map(|(_, index)| index)
}

/// The slices to make before `value`, if it is a loop, with the accesses
/// each serves.
fn hoisted(func: &Function, places: &[Place], value: Value) -> Vec<(Slice, Vec<Value>)> {
    let Inst::For { range, body, .. } = func.inst(value) else {
        return Vec::new();
    };
    if range.inclusive || range.step.is_some() {
        return Vec::new();
    }
    // A loop that never runs: nothing to check.
    if let (Some(start), Some(end)) = (func.int_literal(range.start), func.int_literal(range.end))
        && end <= start
    {
        return Vec::new();
    }
    let here = Place::In(value, 0);
    let j = body.insts[0];
    // Candidate accesses in the body itself, by buffer, with their bases.
    let mut by_buf: Vec<(Value, Vec<(Value, Value)>)> = Vec::new();
    for &inst in &body.insts {
        // The buffer must exist before the loop (a copy popped from a tape
        // in the body does not).
        let Some((buf, index)) = access(func.inst(inst))
            .filter(|&(buf, _)| !is_inside(places, places[buf.index()], here))
        else {
            continue;
        };
        let Some(base) =
            base_of(func, index, j).filter(|&base| is_invariant(func, places, base, here))
        else {
            continue;
        };
        match by_buf.iter_mut().find(|(b, _)| *b == buf) {
            Some((_, accesses)) => accesses.push((inst, base)),
            None => by_buf.push((buf, vec![(inst, base)])),
        }
    }
    let nested = func.nested(value);
    let mut slices = Vec::new();
    for (buf, accesses) in by_buf {
        let base = accesses[0].1;
        let same_base = accesses
            .iter()
            .all(|&(_, other)| same_expr(func, base, other));
        // Written through any view of the same storage (`buf` may be a view
        // itself, `&t[..k]` of a buffer made before an outer loop).
        let storage = func.bases(vec![buf]);
        let shares = |values: Vec<Value>| func.bases(values).iter().any(|b| storage.contains(b));
        let written = nested
            .iter()
            .any(|&inner| shares(func.inst(inner).written()));
        // Every use of the buffer's storage in the loop is one of these
        // accesses (or the slice would be borrowed `&mut` beside another
        // borrow).
        let only_these = nested.iter().all(|&inner| {
            accesses.iter().any(|&(access, _)| access == inner)
                || !func.inst(inner).operands().into_iter().any(|op| {
                    op == buf || (written && matches!(func.ty(op), Ty::Buf(_)) && shares(vec![op]))
                })
        });
        if written && !(same_base && only_these) {
            continue;
        }
        // A read-only buffer: one slice per base; keep the first base's.
        let served = accesses
            .iter()
            .filter(|&&(_, other)| same_expr(func, base, other))
            .map(|&(access, _)| access)
            .collect();
        slices.push((
            Slice {
                buf,
                base,
                mutable: written,
            },
            served,
        ));
    }
    slices
}

/// The values defined outside the loop body `body` that `value` is computed
/// from in it (`value` itself if it is defined outside).
fn outside_operands(func: &Function, places: &[Place], value: Value, body: Place) -> Vec<Value> {
    if places[value.index()] != body {
        return vec![value];
    }
    func.inst(value)
        .operands()
        .into_iter()
        .flat_map(|operand| outside_operands(func, places, operand, body))
        .collect()
}

/// `base` if `index` is `base + j` or `j + base`.
fn base_of(func: &Function, index: Value, j: Value) -> Option<Value> {
    match *func.inst(index) {
        Inst::Binary(BinOp::Add, base, other) if other == j && base != j => Some(base),
        Inst::Binary(BinOp::Add, other, base) if other == j && base != j => Some(base),
        _ => None,
    }
}

/// Whether `value` has the same value in every iteration of the loop whose
/// body is `body`: defined outside it, or integer arithmetic of such values
/// in the body itself.
fn is_invariant(func: &Function, places: &[Place], value: Value, body: Place) -> bool {
    let place = places[value.index()];
    if place != body {
        return !is_inside(places, place, body);
    }
    match func.inst(value) {
        Inst::Const(_) => true,
        Inst::Binary(op, lhs, rhs) if !op.is_comparison() && !op.is_logic() => {
            *func.ty(value) == Ty::Int
                && is_invariant(func, places, *lhs, body)
                && is_invariant(func, places, *rhs, body)
        }
        _ => false,
    }
}

/// Whether `place` is `body` or a region nested in it.
fn is_inside(places: &[Place], mut place: Place, body: Place) -> bool {
    loop {
        if place == body {
            return true;
        }
        match place {
            Place::Body => return false,
            Place::In(owner, _) => place = places[owner.index()],
        }
    }
}

/// Whether two integer expressions are the same computation: the same
/// value, the same constant, or the same operation of the same operands.
fn same_expr(func: &Function, a: Value, b: Value) -> bool {
    if a == b {
        return true;
    }
    match (func.inst(a), func.inst(b)) {
        (Inst::Binary(op_a, lhs_a, rhs_a), Inst::Binary(op_b, lhs_b, rhs_b)) => {
            op_a == op_b && same_expr(func, *lhs_a, *lhs_b) && same_expr(func, *rhs_a, *rhs_b)
        }
        (Inst::Const(a), Inst::Const(b)) => match (a, b) {
            (Const::Lit(a), Const::Lit(b)) => a.to_string() == b.to_string(),
            (Const::Bool(a), Const::Bool(b)) => a == b,
            (Const::Path(a), Const::Path(b)) => a.to_string() == b.to_string(),
            (Const::Zero, Const::Zero) => true,
            _ => false,
        },
        _ => false,
    }
}
