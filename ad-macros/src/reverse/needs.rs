//! What the adjoint reads from the primal, in order of preference: the
//! value itself where the adjoint can see it, a recomputation from values
//! it can see (indices, decisions, cheap arithmetic), or a copy carried out
//! of branches and saved on a loop's tape.

use super::Reverse;
use crate::ir::{BinOp, Inst, Kept, Place, Region, Ty, UnOp, Value};

/// How many float operations deep the adjoint recomputes a value rather than
/// saving it on a tape.
const FLOAT_RECOMPUTE_DEPTH: usize = 3;

impl Reverse<'_> {
    /// Makes a value defined in a branch or a loop visible to the adjoint:
    /// yielded out of each enclosing `if`, up to a loop that saves it on a tape.
    pub(super) fn carry_out(&mut self, value: Value) -> Value {
        let mut copy = value;
        while let Place::In(owner, branch) = self.place(copy) {
            if let Inst::For { .. } | Inst::While { .. } = self.primal.inst(owner) {
                return self.tape(copy, owner);
            }
            copy = self.export(copy, owner, branch);
        }
        copy
    }

    /// A value the adjoint code can read in place of `value`.
    ///
    /// Adjoint code sits in the body or in the branches of adjoint `if`s, so it
    /// cannot see primal values defined inside a primal branch: those are yielded
    /// out of each enclosing `if` (the other branch yields a placeholder zero),
    /// once, and the copy is used. Constants are simply repeated.
    pub(crate) fn available(&mut self, value: Value) -> Value {
        if value.index() >= self.primal.insts.len() {
            return value;
        }
        if let Place::Body = self.place(value) {
            return value;
        }
        if let Some(&copy) = self.exported.get(&value) {
            return copy;
        }
        if let Inst::Const(constant) = self.primal.inst(value) {
            let copy = Inst::Const(constant.clone());
            return self
                .builder
                .push(copy, self.primal.ty(value).clone(), self.primal.span(value));
        }
        if let Some(copy) = self.recompute(value) {
            return copy;
        }
        let copy = self.carry_out(value);
        self.exported.insert(value, copy);
        copy
    }

    /// Recomputes an integer or `bool` value (a decision, an index) from
    /// operands the adjoint can see, rather than exporting it: it is cheap, and
    /// the adjoint then reads like the primal (`if n == 1` twice).
    pub(super) fn recompute(&mut self, value: Value) -> Option<Value> {
        if let Some(&(_, copy, _)) = self.recomputed.iter().find(|(v, ..)| *v == value) {
            return Some(copy);
        }
        if !self.recomputable(value, FLOAT_RECOMPUTE_DEPTH) {
            return None;
        }
        let mut inst = match self.primal.inst(value) {
            // A loop's index is the index of the adjoint loop reversing it.
            Inst::Arg(0) => {
                let Place::In(owner, _) = self.place(value) else {
                    unreachable!("an index is in a loop")
                };
                return self
                    .loops
                    .iter()
                    .rev()
                    .find(|adjoint| adjoint.primal == owner)
                    .map(|adjoint| adjoint.index);
            }
            inst => inst.clone(),
        };
        let mut operands = Vec::new();
        for operand in inst.operands() {
            // What is not recomputable is saved (the arguments of a
            // checkpointed call: see `call_recomputable`).
            operands.push(if self.is_visible(operand) {
                self.available(operand)
            } else if let Some(copy) = self.recompute(operand) {
                copy
            } else {
                self.available(operand)
            });
        }
        let mut operands = operands.into_iter();
        inst.map_operands(|_| operands.next().expect("one per operand"));
        if let Inst::Forward { kept, .. } = &mut inst {
            *kept = self.kept_pullback(value);
        }
        let ty = self.primal.ty(value).clone();
        let copy = self.builder.push(inst, ty, self.primal.span(value));
        if let Some(name) = self.primal.name(value) {
            self.builder.name(copy, name);
        }
        self.recomputed.push((value, copy, self.builder.depth()));
        Some(copy)
    }

    /// What the primal keeps of the pullback of `call`, a call made again in
    /// the adjoint for its pullback (see [`Kept`]): a custom rule's pullback
    /// is then built from the arguments and the output rather than by the
    /// call again; any other call keeps a zero-sized marker. The output is
    /// kept with it unless the adjoint has it already (taped for other
    /// adjoint code, which is reversed before the call).
    ///
    /// Nothing is kept (the call is made again, whatever its callee) for a
    /// call whose output the primal never reads, and for a call marked
    /// `ad_runtime::checkpoint(…)`, which asks for that.
    fn kept_pullback(&mut self, call: Value) -> Option<Kept> {
        if let Some(&kept) = self.kept.as_ref()?.get(&call) {
            return Some(kept);
        }
        let Inst::Forward { callee, .. } = self.primal.inst(call) else {
            unreachable!("a call is kept")
        };
        if self.primal.user_calls[*callee as usize].checkpoint {
            return None;
        }
        let (Some(output), Some(pullback)) = self.call_parts(call) else {
            return None;
        };
        let at_hand = self.is_visible(output);
        let keep = self.builder.push_detached(
            Inst::Keep(pullback, (!at_hand).then_some(output)),
            Ty::Pullback,
            self.primal.span(call),
        );
        if let Some(name) = self.primal.name(pullback) {
            let name = format!("{}_kept", name.trim_end_matches("_pullback"));
            self.builder.name(keep, &name);
        }
        self.insert_beside(keep, pullback, true);
        let kept = Kept {
            value: self.carry_out(keep),
            out: at_hand.then(|| self.available(output)),
        };
        self.kept.as_mut()?.insert(call, kept);
        Some(kept)
    }

    /// Closes the innermost adjoint region: what was recomputed in it is out
    /// of scope.
    pub(super) fn end_region(&mut self, yields: Vec<Value>) -> Region {
        let depth = self.builder.depth();
        self.recomputed.retain(|&(.., at)| at < depth);
        self.builder.end_region(yields)
    }

    /// Whether [`Reverse::recompute`] can rebuild `value` from what the adjoint
    /// sees: integers and booleans (indices, decisions) and floats converted
    /// from them; elements and lengths of buffers not changed since they were
    /// read; and cheap float arithmetic (`+ - * /`, negation, casts) on such
    /// values, at most `depth` operations deep, so that a recomputation never
    /// costs more than a few operations.
    pub(super) fn recomputable(&self, value: Value, depth: usize) -> bool {
        let inst = self.primal.inst(value);
        let is_data = matches!(self.primal.ty(value), Ty::Int | Ty::Bool)
            || matches!(inst, Inst::Cast(arg, _) if matches!(self.primal.ty(*arg), Ty::Int | Ty::Bool));
        let mut depth = depth;
        let fits = match inst {
            Inst::Arg(0) => {
                return matches!(self.place(value), Place::In(owner, _) if self.loops.iter().any(|adjoint| adjoint.primal == owner));
            }
            Inst::Const(_) => true,
            // A call's pullback in a loop: the call made again in the
            // adjoint loop (see `call_recomputable`), not a tape of closures.
            Inst::Extract(pair, 1) if matches!(self.primal.inst(*pair), Inst::Forward { .. }) => {
                true
            }
            Inst::Forward { .. } => return self.call_recomputable(value, depth),
            Inst::Slice { buf, .. } => {
                let base = self.primal.bases(vec![*buf])[0];
                self.writes.unchanged_after(base, value)
            }
            Inst::Load(buf, _) => self.writes.unchanged_after(*buf, value),
            Inst::Len(buf) => self.writes.len_unchanged_after(*buf, value),
            Inst::Unary(..) | Inst::Binary(..) | Inst::Cast(..) if is_data => true,
            Inst::Unary(UnOp::Neg, _)
            | Inst::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, ..)
            | Inst::Cast(..)
                if depth > 0 =>
            {
                depth -= 1;
                true
            }
            _ => false,
        };
        fits && inst
            .operands()
            .into_iter()
            .all(|operand| self.is_visible(operand) || self.recomputable(operand, depth))
    }

    /// Whether a call of a differentiated function in a loop can be made
    /// again in the adjoint loop for its pullback rather than saving the
    /// pullback on a tape: its arguments are numbers the adjoint can see or
    /// recompute, or buffers nothing changes after the call; it changes no
    /// buffer and returns no buffer.
    ///
    /// Making the call again costs the callee's forward part once more; a
    /// tape costs a store and a load of every value its pullback captures
    /// (the callee's own tapes included) and their memory. The call's
    /// reverse pass does at least the work of its forward part, so the
    /// recomputation costs at most about half again the call's share, and
    /// for a small callee in a long loop (a helper for a loop's term) it
    /// saves most of the time: see docs/performance.md, the forms benchmark.
    fn call_recomputable(&self, call: Value, depth: usize) -> bool {
        let primal = self.primal;
        let Inst::Forward { args, callee, .. } = primal.inst(call) else {
            return false;
        };
        // `ad_runtime::checkpoint(g(x))`: arguments the adjoint cannot
        // recompute are saved instead, the numbers a call takes rather than
        // everything its pullback captures.
        let checkpointed = primal.user_calls[*callee as usize].checkpoint;
        let returns_buffer =
            matches!(primal.ty(call), Ty::Tuple(tys) if matches!(tys.first(), Some(Ty::Buf(_))));
        if returns_buffer || !self.in_loop(call) {
            return false;
        }
        args.iter().all(|&(arg, mode)| {
            let readable = self.is_visible(arg) || self.recomputable(arg, depth);
            let readable = readable || (checkpointed && mode == crate::ir::Mode::Val);
            match mode {
                crate::ir::Mode::Val => readable,
                crate::ir::Mode::Ref | crate::ir::Mode::Copy => {
                    let base = primal.bases(vec![arg])[0];
                    readable && self.writes.unchanged_after(base, call)
                }
                crate::ir::Mode::Mut => false,
            }
        })
    }

    /// Whether `value` is inside a loop, where the adjoint would save it on
    /// a tape.
    fn in_loop(&self, value: Value) -> bool {
        let mut at = value;
        while let Place::In(owner, _) = self.place(at) {
            if let Inst::For { .. } | Inst::While { .. } = self.primal.inst(owner) {
                return true;
            }
            at = owner;
        }
        false
    }

    /// Whether the adjoint can read `value` as it is: defined in the body, a
    /// constant, or already exported or taped.
    pub(super) fn is_visible(&self, value: Value) -> bool {
        matches!(self.place(value), Place::Body)
            || matches!(self.primal.inst(value), Inst::Const(_))
            || self.exported.contains_key(&value)
    }
}
