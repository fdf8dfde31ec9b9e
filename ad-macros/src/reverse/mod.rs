//! The reverse pass: primal IR → `_vjp` IR.
//!
//! The result is one function: the primal instructions unchanged, a seed
//! parameter, then the adjoint instructions built by a single backward walk over
//! the primal body, and finally a tuple of the primal output and the adjoints of
//! the active parameters.
//!
//! Gradients are summed lazily: the map has no entry for a value whose adjoint is
//! zero so far, the first contribution becomes its adjoint as it is (often an
//! alias of another adjoint, with no instruction at all), and only later
//! contributions emit an addition. So no `+ 0.0` and no zero initialisation is
//! ever built.
//!
//! ```text
//! s = x + y; out = s * s       ⇒   d_s = d_out * s + d_out * s
//!                                   d_x = d_s; d_y = d_s   (aliases)
//! ```
//!
//! Takes the primal IR with its activity; gives the `_vjp` IR. The walk and
//! the gradient map are here; `rules.rs` is the table of every primitive's
//! pullback; `branches.rs`, `loops.rs` and `calls.rs` reverse those
//! constructs; `needs.rs` decides how the adjoint reads a primal value
//! (re-read, recomputed, or saved on a tape). The passes after it work on
//! adjoint IR only: tapes made early (`tapes.rs`), adjoint loops run
//! forwards and sums carried from zero (`order.rs`), loop fusion in `_vjp`
//! (`fuse.rs`), `logsumexp`'s exponentials kept (`keep.rs`), the tapes of
//! loops that save very many values grouped into records (`records.rs`),
//! and, last, shadow updates ordered in their loop's direction
//! (`updates.rs`).

mod branches;
mod calls;
mod fuse;
mod keep;
mod loops;
mod needs;
mod order;
pub(crate) mod records;
pub(crate) mod rules;
mod tapes;
mod updates;

pub(crate) use fuse::fuse_loops;
pub(crate) use keep::keep_exponentials;
pub(crate) use order::{run_forward, sums_from_zero};
pub(crate) use records::record_tapes;
pub(crate) use tapes::make_tapes_early;
pub(crate) use updates::{carry_updates, order_updates};

use std::collections::{HashMap, HashSet};

use crate::analysis::{Activity, Writes};
use crate::lower::Signature;

use crate::ir::{
    BinOp, Builder, Callee, Const, Function, Inst, Place, Region, Role, Scalar, Ty, UnOp, Value,
};

/// The state of the backward walk, handed to the rules.
pub(crate) struct Reverse<'a> {
    primal: &'a Function,
    activity: &'a Activity,
    writes: &'a Writes,
    builder: Builder,
    /// The adjoint of each primal value so far; `None` is zero.
    grads: Vec<Option<Value>>,
    /// Where each value of the function being built is defined.
    places: Vec<Place>,
    /// Primal values defined inside a branch or a loop, and the copies the
    /// adjoint reads: yielded out of the `if`, or popped from a tape.
    exported: HashMap<Value, Value>,
    /// The adjoint loops being built, innermost last.
    loops: Vec<loops::AdjointLoop>,
    /// The `extract`s reading each primal value's components.
    extracts: Vec<Vec<(usize, Value)>>,
    /// Values recomputed so far, with the copy and the depth of the open
    /// region it is in: reused while that region is open.
    recomputed: Vec<(Value, Value, usize)>,
    /// Copies of buffers that runtime calls read and later code overwrites,
    /// by buffer and call, as the adjoint reads them.
    snapshots: HashMap<(Value, Value), Value>,
    /// Adjoints that may be an exact zero standing for "no dependence" (a
    /// branch not taken, a loop that runs no trip, the loser of `max`): a
    /// product with them is guarded, so that `0 · ∞` never becomes NaN.
    maybe_zero: HashSet<Value>,
    /// Scratch shadows of constant buffers passed to calls, by buffer.
    scratch: HashMap<Value, Value>,
    /// Element adjoints not emitted yet (see [`Reverse::defer_update`]).
    pending: Vec<(Value, Value, Value, Value)>,
    /// Tape pushes not yet placed in their primal loop's body: `(loop,
    /// value, push)`, placed all at once at the end (see
    /// [`Reverse::place_pushes`]).
    pushes: Vec<(Value, Value, Value)>,
    /// What the primal keeps of the pullbacks of calls made again in the
    /// adjoint (see [`Inst::Keep`]), as the adjoint reads it, by call;
    /// `None` under `_hvp`, whose forward mode does not take them.
    kept: Option<HashMap<Value, crate::ir::Kept>>,
}

/// Whether reversing `inst` neither reads nor writes a shadow (but through
/// [`Reverse::defer_update`]): deferred updates need not be emitted before.
fn touches_no_shadow(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Param(_)
            | Inst::Const(_)
            | Inst::Unary(..)
            | Inst::Binary(..)
            | Inst::Cast(..)
            | Inst::Prim(..)
            | Inst::Detach(_)
            | Inst::Tuple(_)
            | Inst::Extract(..)
            | Inst::Load(..)
            | Inst::Len(_)
            | Inst::Arg(_)
            | Inst::Field { .. }
    )
}

pub(crate) fn vjp(
    primal: &Function,
    activity: &Activity,
    writes: &Writes,
    sig: &Signature,
    keeps_pullbacks: bool,
) -> Function {
    let mut rx = Reverse {
        primal,
        activity,
        writes,
        builder: Builder::extend(primal.clone()),
        grads: vec![None; primal.insts.len()],
        places: primal.places(),
        exported: HashMap::new(),
        loops: Vec::new(),
        extracts: primal.extracts(),
        recomputed: Vec::new(),
        snapshots: HashMap::new(),
        maybe_zero: HashSet::new(),
        scratch: HashMap::new(),
        pending: Vec::new(),
        pushes: Vec::new(),
        kept: keeps_pullbacks.then(HashMap::new),
    };
    let out = primal.ret;
    let returns_unit = sig.seed_ty.is_none();
    // The active local buffers: made here, or returned by a call
    // (`let v = g(&x);`).
    let mut locals = Vec::new();
    primal.walk(&mut |_, value| {
        let local = match primal.inst(value) {
            Inst::NewBuf(_) | Inst::CloneBuf { .. } => true,
            Inst::Extract(pair, 0) => {
                matches!(primal.inst(*pair), Inst::Forward { .. })
                    && matches!(primal.ty(value), Ty::Buf(_))
            }
            _ => false,
        };
        if local && activity.is_active(value) {
            locals.push(value);
        }
    });
    // The returned local buffer's length, for the check of its seed, taken
    // before the adjoint (whose first instructions are its parameters): the
    // split API's pullback then holds a number rather than the output.
    let out_len = (!returns_unit && locals.contains(&out)).then(|| {
        let len = rx.builder.push(Inst::Len(out), Ty::Int, primal.span(out));
        // Named, so bound where it is taken.
        rx.builder.name(len, "out_len");
        len
    });
    // The shadows of active buffer parameters come right after them.
    for (param, sig_param) in primal.params.iter().zip(&sig.params) {
        if let Some(shadow) = &sig_param.shadow {
            let value = rx.builder.param(
                shadow.name.clone(),
                Role::Shadow,
                primal.ty(param.value).clone(),
                sig_param.span,
            );
            rx.builder.set_adjoint_of(value, param.value);
            rx.grads[param.value.index()] = Some(value);
        }
    }
    let seed = (!returns_unit).then(|| {
        rx.builder.name(out, "out");
        rx.builder.param(
            sig.seed_name.clone(),
            Role::Seed,
            primal.ty(out).clone(),
            primal.span(out),
        )
    });
    // The shadow of a buffer field of an active struct is that field of the
    // struct's shadow.
    let mut fields = Vec::new();
    primal.walk(&mut |_, value| {
        if let Inst::Field { .. } = primal.inst(value)
            && primal.ty(value).elem().is_some()
            && activity.is_active(value)
        {
            fields.push(value);
        }
    });
    for field in fields {
        let Inst::Field { base, path } = primal.inst(field).clone() else {
            unreachable!("a field")
        };
        if let Some(d_base) = rx.grads[base.index()] {
            let shadow = rx.builder.push(
                Inst::Field { base: d_base, path },
                primal.ty(field).clone(),
                primal.span(field),
            );
            rx.builder.set_adjoint_of(shadow, field);
            rx.grads[field.index()] = Some(shadow);
        }
    }
    // Their shadows, zero but for the returned one.
    let seeded = seed.zip(out_len);
    for buf in locals {
        let inst = match seeded {
            Some((seed, len)) if buf == out => Inst::SeedCopy { len, seed },
            _ => Inst::Shadow { of: buf },
        };
        let shadow = rx
            .builder
            .push(inst, primal.ty(buf).clone(), primal.span(buf));
        rx.builder.set_adjoint_of(shadow, buf);
        rx.grads[buf.index()] = Some(shadow);
    }
    if let Some(seed) = seed
        && activity.is_active(out)
        && rx.grads[out.index()].is_none()
    {
        rx.grads[out.index()] = Some(seed);
    }
    rx.reverse_region(&primal.body);
    rx.place_pushes();

    let mut outputs: Vec<Value> = (!returns_unit).then_some(out).into_iter().collect();
    for param in primal
        .params
        .iter()
        .filter(|param| param.role == Role::Active && !primal.ty(param.value).is_by_reference())
    {
        // A tuple's adjoint is the tuple of its elements' (see `call_seed`).
        let adjoint = match primal.ty(param.value) {
            Ty::Tuple(_) => rx.call_seed(param.value, param.value),
            _ => rx.grads[param.value.index()],
        };
        let adjoint = adjoint.unwrap_or_else(|| {
            let ty = primal.ty(param.value).clone();
            rx.builder
                .push(Inst::Const(Const::Zero), ty, primal.span(param.value))
        });
        outputs.push(adjoint);
    }
    let ret = if outputs.len() == 1 {
        outputs[0]
    } else {
        let tys = outputs
            .iter()
            .map(|&value| rx.builder.func().ty(value).clone())
            .collect();
        rx.builder
            .push(Inst::Tuple(outputs), Ty::Tuple(tys), primal.span(out))
    };
    rx.builder.finish(ret)
}

impl Reverse<'_> {
    pub(crate) fn primal(&self) -> &Function {
        self.primal
    }

    pub(crate) fn is_active(&self, value: Value) -> bool {
        self.activity.is_active(value)
    }

    /// The shadow of a primal buffer, if it is active.
    pub(crate) fn shadow(&mut self, buf: Value) -> Option<Value> {
        if let Inst::Slice {
            buf: base,
            start,
            len,
        } = *self.primal.inst(buf)
        {
            // The same range of the buffer's shadow.
            let d_base = self.shadow(base)?;
            let start = self.available(start);
            let len = self.available(len);
            let ty = self.primal.ty(buf).clone();
            let slice = Inst::Slice {
                buf: d_base,
                start,
                len,
            };
            return Some(self.push(slice, ty, buf));
        }
        self.has_shadow(buf)
            .then(|| self.grads[buf.index()])
            .flatten()
    }

    /// Whether `buf` (or the buffer it is a slice of) has a shadow.
    pub(crate) fn has_shadow(&self, buf: Value) -> bool {
        let buf = self.primal.bases(vec![buf])[0];
        self.is_active(buf) && self.grads[buf.index()].is_some()
    }

    /// Whether the regions of `owner` (an `if` or a loop) write into an active
    /// buffer: then they have an adjoint even when no value comes out of them.
    fn writes_active(&self, owner: Value) -> bool {
        let primal = self.primal;
        let mut stack = primal.regions(owner);
        while let Some(region) = stack.pop() {
            for &value in &region.insts {
                let inst = primal.inst(value);
                if primal
                    .bases(inst.written())
                    .iter()
                    .any(|&buf| self.is_active(buf))
                {
                    return true;
                }
                stack.extend(primal.regions(value));
            }
        }
        false
    }

    /// Appends an adjoint instruction; `origin` is the primal value whose
    /// pullback it belongs to (for its span). Primal operands are replaced by
    /// copies the adjoint can see (see [`Reverse::available`]).
    pub(crate) fn push(&mut self, mut inst: Inst, ty: Ty, origin: Value) -> Value {
        inst.map_operands(|operand| self.available(operand));
        let is_zero = matches!(inst, Inst::Const(Const::Zero));
        let value = self.builder.push(inst, ty, self.primal.span(origin));
        if is_zero {
            self.maybe_zero.insert(value);
        }
        value
    }

    /// Marks an adjoint that may be a structural zero (see
    /// [`Reverse::maybe_zero`]).
    pub(crate) fn mark_maybe_zero(&mut self, adjoint: Value) {
        self.maybe_zero.insert(adjoint);
    }

    pub(crate) fn is_maybe_zero(&self, adjoint: Value) -> bool {
        self.maybe_zero.contains(&adjoint)
    }

    /// `d * factor`, the contribution of an adjoint through a product. When
    /// `d` may be a structural zero it is `__ad::scale(d, factor)`, which is 0
    /// for `d == 0` even when `factor` is infinite.
    pub(crate) fn scale(&mut self, d: Value, factor: Value, origin: Value) -> Value {
        if !self.is_maybe_zero(d) {
            return self.binary(BinOp::Mul, d, factor, origin);
        }
        let ty = self.ty(d).join(self.ty(factor));
        let scaled = self.push(Inst::Call(Callee::Scale, vec![d, factor]), ty, origin);
        self.mark_maybe_zero(scaled);
        scaled
    }

    /// Where `value` is defined; values the adjoint creates are never asked about
    /// except the copies made by [`Reverse::export`], recorded there.
    fn place(&self, value: Value) -> Place {
        self.places
            .get(value.index())
            .copied()
            .unwrap_or(Place::Body)
    }

    fn set_place(&mut self, value: Value, place: Place) {
        if self.places.len() <= value.index() {
            self.places.resize(value.index() + 1, Place::Body);
        }
        self.places[value.index()] = place;
    }

    /// Walks `region` backwards, applying each active value's pullback.
    fn reverse_region(&mut self, region: &Region) {
        for &value in region.insts.iter().rev() {
            if !touches_no_shadow(self.primal.inst(value)) {
                self.flush_updates();
            }
            match self.primal.inst(value) {
                // Control flow has no adjoint of its own: its results do.
                Inst::If { .. } => self.reverse_if(value),
                Inst::For { .. } | Inst::While { .. } => self.reverse_for(value),
                Inst::Forward { .. } => self.reverse_call(value),
                inst if !inst.written().is_empty() => rules::write_pullback(self, value),
                _ => {
                    if let Some(adjoint) = self.grads[value.index()] {
                        self.builder.set_adjoint_of(adjoint, value);
                        rules::pullback(self, value, adjoint);
                    }
                }
            }
        }
        self.flush_updates();
    }

    /// `d_buf[index] += d`, the adjoint of reading an element: kept back and
    /// emitted in the order of the reads, at the end of the region or before
    /// anything else that touches a shadow. The backward walk meets the
    /// reads last first, and `d_x[i + 1] += …; d_x[i] += …` makes the next
    /// iteration load what this one only half stored, which defeats
    /// store-to-load forwarding (W1 ran 4.7× slower). Additions into a
    /// shadow commute, so only the order changes.
    pub(crate) fn defer_update(&mut self, d_buf: Value, index: Value, d: Value, origin: Value) {
        self.pending.push((d_buf, index, d, origin));
    }

    fn flush_updates(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (d_buf, index, d, origin) in pending.into_iter().rev() {
            // `d_x[i] += -a` is `d_x[i] -= a`.
            let (d, negative) = self.sign_and_magnitude(d);
            let op = if negative { BinOp::Sub } else { BinOp::Add };
            self.push(Inst::Update(op, d_buf, index, d), Ty::Unit, origin);
        }
    }

    /// The active values from outside `owner` (an `if` or a loop) that its
    /// regions read or yield: the only ones whose adjoints its adjoint changes.
    fn outer_values(&self, owner: Value) -> Vec<Value> {
        let primal = self.primal;
        let mut used = Vec::new();
        let mut stack = primal.regions(owner);
        while let Some(region) = stack.pop() {
            used.extend(region.yields.iter().copied());
            for &value in &region.insts {
                used.extend(primal.inst(value).operands());
                stack.extend(primal.regions(value));
            }
        }
        used.sort_unstable();
        used.dedup();
        // A buffer's or a struct's adjoint is its shadow, changed in place:
        // never carried.
        used.retain(|&value| {
            self.is_active(value)
                && !self.is_inside(value, owner)
                && !primal.ty(value).is_by_reference()
        });
        used
    }

    /// Puts `value`, made by [`Builder::push_detached`], into the primal
    /// region of `anchor`, right before it or right after it.
    fn insert_beside(&mut self, value: Value, anchor: Value, after: bool) {
        let place = self.place(anchor);
        self.set_place(value, place);
        let region = self.builder.func_mut().region_mut(place);
        let position = region
            .insts
            .iter()
            .position(|&inst| inst == anchor)
            .expect("the anchor in its region");
        region.insts.insert(position + usize::from(after), value);
    }

    pub(crate) fn binary(&mut self, op: BinOp, lhs: Value, rhs: Value, origin: Value) -> Value {
        let ty = self.ty(lhs).join(self.ty(rhs));
        self.push(Inst::Binary(op, lhs, rhs), ty, origin)
    }

    pub(crate) fn cast(&mut self, value: Value, to: Scalar, origin: Value) -> Value {
        self.push(Inst::Cast(value, to), to.ty(), origin)
    }

    pub(crate) fn extract(&mut self, tuple: Value, index: usize, origin: Value) -> Value {
        let ty = match self.ty(tuple) {
            Ty::Tuple(elems) => elems[index].clone(),
            other => unreachable!("extract from a value of type {other:?}"),
        };
        let index = u32::try_from(index).expect("small tuple");
        let component = self.push(Inst::Extract(tuple, index), ty, origin);
        if self.is_maybe_zero(tuple) {
            self.mark_maybe_zero(component);
        }
        component
    }

    /// `adjoint(target) += contribution`.
    pub(crate) fn add(&mut self, target: Value, contribution: Value) {
        self.accumulate(target, contribution, false);
    }

    /// `adjoint(target) -= contribution`.
    pub(crate) fn sub(&mut self, target: Value, contribution: Value) {
        self.accumulate(target, contribution, true);
    }

    /// `adjoint(target) += contribution`, or `-=` when `negate`.
    pub(crate) fn accumulate(&mut self, target: Value, contribution: Value, negate: bool) {
        if !self.is_active(target) {
            return;
        }
        // A negation built by this pass is folded into the sign, so that
        // `-(-c)` becomes `c` and `a + -c` becomes `a - c`.
        let (contribution, negate) = match self.negated(contribution) {
            Some(inner) => (inner, !negate),
            None => (contribution, negate),
        };
        let sum = match (self.grads[target.index()], negate) {
            (None, false) => contribution,
            (None, true) => {
                let ty = self.ty(contribution).clone();
                self.push(Inst::Unary(UnOp::Neg, contribution), ty, target)
            }
            // `-a + c` is `c - a`.
            (Some(current), false) => match self.negated(current) {
                Some(inner) => self.binary(BinOp::Sub, contribution, inner, target),
                None => self.binary(BinOp::Add, current, contribution, target),
            },
            (Some(current), true) => self.binary(BinOp::Sub, current, contribution, target),
        };
        // A sum is a structural zero only if every term may be one.
        let zero = self.is_maybe_zero(contribution)
            && self.grads[target.index()].is_none_or(|current| self.is_maybe_zero(current));
        if zero {
            self.mark_maybe_zero(sum);
        }
        self.grads[target.index()] = Some(sum);
    }

    /// `(a, true)` if `adjoint` is a negation `-a` built by this pass, else
    /// `(adjoint, false)`: rules multiply or divide by `a` and put the sign
    /// into the sum they add to.
    pub(crate) fn sign_and_magnitude(&self, adjoint: Value) -> (Value, bool) {
        match self.negated(adjoint) {
            Some(inner) => (inner, true),
            None => (adjoint, false),
        }
    }

    /// `Some(a)` if `value` is a negation `-a` built by this pass.
    fn negated(&self, value: Value) -> Option<Value> {
        if value.index() < self.primal.insts.len() {
            return None;
        }
        match self.builder.func().inst(value) {
            Inst::Unary(UnOp::Neg, inner) => Some(*inner),
            _ => None,
        }
    }

    fn ty(&self, value: Value) -> &Ty {
        self.builder.func().ty(value)
    }
}
