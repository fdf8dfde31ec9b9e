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

use crate::analysis::{Activity, Writes};
use crate::lower::Signature;
use std::collections::{HashMap, HashSet};

use crate::ir::{
    BinOp, Builder, Callee, Const, Function, Inst, LoopRange, Mode, Place, Region, Role, Scalar,
    Ty, UnOp, Value,
};
use crate::rules;

/// How many float operations deep the adjoint recomputes a value rather than
/// saving it on a tape.
const FLOAT_RECOMPUTE_DEPTH: usize = 3;

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
    loops: Vec<AdjointLoop>,
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

/// An adjoint loop under construction.
struct AdjointLoop {
    /// The primal loop it reverses.
    primal: Value,
    /// Its body's open region in the builder.
    region: usize,
    /// How many arguments its body starts with (pops go after them).
    n_args: usize,
    /// Its index: the primal loop's index, visited in reverse.
    index: Value,
}

pub(crate) fn vjp(
    primal: &Function,
    activity: &Activity,
    writes: &Writes,
    sig: &Signature,
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
    };
    let out = primal.ret;
    let returns_unit = sig.seed_ty.is_none();
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
    // The shadows of active local buffers, zero but for the returned one.
    let mut locals = Vec::new();
    primal.walk(&mut |_, value| {
        let local = matches!(primal.inst(value), Inst::NewBuf(_) | Inst::CloneBuf { .. });
        if local && activity.is_active(value) {
            locals.push(value);
        }
    });
    for buf in locals {
        let seed = seed.filter(|_| buf == out);
        let shadow = rx.builder.push(
            Inst::Shadow { of: buf, seed },
            primal.ty(buf).clone(),
            primal.span(buf),
        );
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

    let mut outputs: Vec<Value> = (!returns_unit).then_some(out).into_iter().collect();
    for param in primal
        .params
        .iter()
        .filter(|param| param.role == Role::Active && !primal.ty(param.value).is_by_reference())
    {
        let adjoint = rx.grads[param.value.index()].unwrap_or_else(|| {
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
    pub(crate) fn shadow(&self, buf: Value) -> Option<Value> {
        if self.is_active(buf) {
            self.grads[buf.index()]
        } else {
            None
        }
    }

    /// The contents of `buf` as the runtime call `call` left them, for its
    /// pullback: `buf` itself if nothing writes it afterwards, otherwise a copy
    /// the primal makes right after the call (saved on a tape in a loop).
    pub(crate) fn read_back(&mut self, buf: Value, call: Value) -> Value {
        if self.writes.unchanged_after(buf, call) {
            return buf;
        }
        if let Some(&copy) = self.snapshots.get(&(buf, call)) {
            return copy;
        }
        let ty = self.primal.ty(buf).clone();
        let snapshot = self.builder.push_detached(
            Inst::CloneBuf {
                src: buf,
                clone: false,
            },
            ty,
            self.primal.span(call),
        );
        let name = format!("{}_saved", self.primal.name(buf).unwrap_or("buf"));
        self.builder.name(snapshot, &name);
        self.insert_beside(snapshot, call, true);
        let copy = self.carry_out(snapshot);
        self.snapshots.insert((buf, call), copy);
        copy
    }

    /// Makes a value defined in a branch or a loop visible to the adjoint:
    /// yielded out of each enclosing `if`, up to a loop that saves it on a tape.
    fn carry_out(&mut self, value: Value) -> Value {
        let mut copy = value;
        while let Place::In(owner, branch) = self.place(copy) {
            if let Inst::For { .. } | Inst::While { .. } = self.primal.inst(owner) {
                return self.tape(copy, owner);
            }
            copy = self.export(copy, owner, branch);
        }
        copy
    }

    /// Whether the regions of `owner` (an `if` or a loop) write into an active
    /// buffer: then they have an adjoint even when no value comes out of them.
    fn writes_active(&self, owner: Value) -> bool {
        let primal = self.primal;
        let mut stack = primal.regions(owner);
        while let Some(region) = stack.pop() {
            for &value in &region.insts {
                let inst = primal.inst(value);
                if inst.written().iter().any(|&buf| self.is_active(buf)) {
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

    /// Reverses `if c { A } else { B }` into `if c { A' } else { B' }`.
    ///
    /// Each branch is reversed from the adjoints of the `if`'s results, on its own
    /// copy of the gradient map; the adjoint `if` yields the new adjoint of every
    /// value outside the `if` that either branch changed.
    ///
    /// ```text
    /// let (y,) = if c { (x * x,) } else { (x,) };
    /// ⇒ let (d_x,) = if c { (d_y * x + d_y * x,) } else { (d_y,) };
    /// ```
    fn reverse_if(&mut self, if_value: Value) {
        let primal = self.primal;
        let Inst::If { cond, then, els } = primal.inst(if_value) else {
            unreachable!("reverse_if on a non-`if`")
        };
        let mut seeds = vec![None; then.yields.len()];
        for &(index, extract) in &self.extracts[if_value.index()] {
            seeds[index] = self.grads[extract.index()];
        }
        let writes = self.writes_active(if_value);
        if seeds.iter().all(Option::is_none) && !writes {
            return;
        }
        let before = self.grads.clone();
        let mut branches = Vec::new();
        for region in [then, els] {
            self.grads = before.clone();
            self.builder.begin_region();
            for (&yielded, seed) in region.yields.iter().zip(&seeds) {
                if let Some(seed) = seed {
                    self.add(yielded, *seed);
                }
            }
            self.reverse_region(region);
            let insts = self.end_region(Vec::new());
            branches.push((insts, std::mem::replace(&mut self.grads, before.clone())));
        }
        // A branch changes only the adjoints of the outer values it uses.
        let changed: Vec<Value> = self
            .outer_values(if_value)
            .into_iter()
            .filter(|&value| {
                branches
                    .iter()
                    .any(|(_, grads)| grads[value.index()] != before[value.index()])
            })
            .collect();
        // The adjoint of a branch can write shadows even when no primal
        // value leaves the `if` (`if c { xs[0] } …` adds into `d_xs[0]`).
        let writes = writes
            || branches.iter().any(|(region, _)| {
                region
                    .insts
                    .iter()
                    .any(|&value| self.builder.func().has_effects(value))
            });
        if changed.is_empty() && !writes {
            return;
        }
        let mut regions = Vec::new();
        let mut zero_yields = vec![false; changed.len()];
        for (mut region, grads) in branches {
            region.yields = changed
                .iter()
                .map(|&value| match grads[value.index()] {
                    Some(adjoint) => adjoint,
                    None => self.push(Inst::Const(Const::Zero), primal.ty(value).clone(), value),
                })
                .collect();
            for (zero, &yielded) in zero_yields.iter_mut().zip(&region.yields) {
                *zero |= self.is_maybe_zero(yielded);
            }
            regions.push(region);
        }
        let els = regions.pop().expect("two branches");
        let then = regions.pop().expect("two branches");
        let tys = changed
            .iter()
            .map(|&value| primal.ty(value).clone())
            .collect();
        let adjoint_if = self.push(
            Inst::If {
                cond: *cond,
                then,
                els,
            },
            Ty::Tuple(tys),
            if_value,
        );
        for (index, &value) in changed.iter().enumerate() {
            let adjoint = self.extract(adjoint_if, index, value);
            if zero_yields[index] {
                self.mark_maybe_zero(adjoint);
            }
            self.grads[value.index()] = Some(adjoint);
        }
    }

    /// Reverses `for i in range { body }` into `for i in range.rev() { body' }`.
    ///
    /// The adjoint loop carries the adjoints of the active carried values
    /// (flowing from one iteration to the one before) and of every active value
    /// from outside the loop that the body reads (accumulating over all
    /// iterations). What the body's adjoint needs from an iteration is read
    /// again (values from outside), recomputed (the index, integers derived from
    /// it), or popped from a tape the primal loop pushes it on.
    ///
    /// ```text
    /// for i in 0..n { s = s * x; }
    /// ⇒ for i in (0..n).rev() { let s = tape_s.pop(); (d_s, d_x) = (d_s * x, d_x + d_s * s); }
    /// ```
    fn reverse_for(&mut self, for_value: Value) {
        let primal = self.primal;
        let view = primal
            .inst(for_value)
            .as_loop()
            .expect("reverse_for on a loop");
        let (range, inits, body) = (view.range, view.inits, view.body);
        let (args, next) = (view.args(), view.next());
        let mut seeds = vec![None; inits.len()];
        let mut trips = None;
        for &(index, extract) in &self.extracts[for_value.index()] {
            match seeds.get_mut(index) {
                Some(seed) => *seed = self.grads[extract.index()],
                None => trips = Some(extract),
            }
        }
        if seeds.iter().all(Option::is_none) && !self.writes_active(for_value) {
            return;
        }
        // A slot needs an adjoint if its argument or its next value is active
        // (`loop { break x * x; }` never reads its argument).
        // A slot needs an adjoint if its argument, its next value or its result
        // is active: a loop that overwrites `x` with a constant still passes the
        // seed of `x` to its initial value when it runs no trip.
        let carried: Vec<usize> = (0..inits.len())
            .filter(|&k| self.is_active(args[k]) || self.is_active(next[k]) || seeds[k].is_some())
            .collect();
        let outer = self.outer_values(for_value);
        let span = primal.span(for_value);

        // What the adjoint loop starts from: the seeds, and the outer adjoints so far.
        let mut adjoint_inits = Vec::new();
        let mut tys = Vec::new();
        for &k in &carried {
            let ty = primal.ty(args[k]).clone();
            adjoint_inits.push(
                seeds[k]
                    .unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty.clone(), for_value)),
            );
            tys.push(ty);
        }
        for &value in &outer {
            let ty = primal.ty(value).clone();
            adjoint_inits.push(
                self.grads[value.index()]
                    .unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty.clone(), value)),
            );
            tys.push(ty);
        }

        let before = self.grads.clone();
        self.builder.begin_region();
        let index = self.builder.push(Inst::Arg(0), Ty::Int, span);
        if let Some(name) = primal.name(body.insts[0]) {
            self.builder.name(index, name);
        }
        let mut adjoint_args = Vec::new();
        for (position, ty) in tys.iter().enumerate() {
            let arg_index = u32::try_from(position + 1).expect("small");
            adjoint_args.push(self.builder.push(Inst::Arg(arg_index), ty.clone(), span));
        }
        // A loop may run no trip, and an overwritten carried value passes no
        // adjoint to the iteration before: either can be a structural zero.
        for (position, &arg) in adjoint_args.iter().enumerate() {
            let overwritten = carried
                .get(position)
                .is_some_and(|&k| !self.is_active(args[k]));
            if overwritten || self.is_maybe_zero(adjoint_inits[position]) {
                self.mark_maybe_zero(arg);
            }
        }
        for (position, &k) in carried.iter().enumerate() {
            self.builder.set_adjoint_of(adjoint_args[position], args[k]);
        }
        for (position, &value) in outer.iter().enumerate() {
            let adjoint_arg = adjoint_args[carried.len() + position];
            self.builder.set_adjoint_of(adjoint_arg, value);
            self.grads[value.index()] = Some(adjoint_arg);
        }
        self.loops.push(AdjointLoop {
            primal: for_value,
            region: self.builder.depth() - 1,
            n_args: 1 + adjoint_args.len(),
            index,
        });
        for (position, &k) in carried.iter().enumerate() {
            self.add(next[k], adjoint_args[position]);
        }
        self.reverse_region(body);
        let mut yields = Vec::new();
        for (position, &k) in carried.iter().enumerate() {
            let ty = tys[position].clone();
            yields.push(
                self.grads[args[k].index()]
                    .unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty, for_value)),
            );
        }
        for &value in &outer {
            yields.push(self.grads[value.index()].expect("an outer adjoint is carried"));
        }
        self.loops.pop();
        // With no trip a result is its initial value; otherwise what the last
        // iteration yields.
        let may_be_zero: Vec<bool> = adjoint_args
            .iter()
            .zip(&yields)
            .map(|(&arg, &yielded)| self.is_maybe_zero(arg) || self.is_maybe_zero(yielded))
            .collect();
        let adjoint_body = self.end_region(yields);

        self.grads = before;
        let reversed = match range {
            Some(range) => LoopRange {
                reversed: !range.reversed,
                ..range.clone()
            },
            // A `while` is reversed by running its trips again, backwards.
            None => {
                let zero = self.push(Inst::Const(Const::Zero), Ty::Int, for_value);
                let trips = trips.expect("a `while` has a trip count");
                LoopRange {
                    start: zero,
                    end: trips,
                    inclusive: false,
                    step: None,
                    reversed: true,
                }
            }
        };
        let adjoint_loop = self.push(
            Inst::For {
                range: reversed,
                inits: adjoint_inits,
                body: adjoint_body,
            },
            Ty::Tuple(tys),
            for_value,
        );
        for (position, &value) in outer.iter().enumerate() {
            let adjoint = self.extract(adjoint_loop, carried.len() + position, value);
            if may_be_zero[carried.len() + position] {
                self.mark_maybe_zero(adjoint);
            }
            self.grads[value.index()] = Some(adjoint);
        }
        for (position, &k) in carried.iter().enumerate() {
            let adjoint = self.extract(adjoint_loop, position, args[k]);
            if may_be_zero[position] {
                self.mark_maybe_zero(adjoint);
            }
            self.add(inits[k], adjoint);
        }
    }

    /// Reverses a call of a function with a derivative of its own: calls the
    /// pullback its forward part returned, with the buffers as the call left
    /// them (copied if later code overwrites them), their shadows and the
    /// seed, and adds what it returns to the adjoints of the float arguments.
    ///
    /// ```text
    /// let (y, g_pullback) = g_forward(x, &xs);
    /// ⇒ let d_x = g_pullback(&xs, &mut d_xs, d_y);
    /// ```
    ///
    /// A buffer argument with no shadow of its own (a constant) gets a
    /// scratch one: the callee's pullback computes every adjoint.
    fn reverse_call(&mut self, call: Value) {
        let primal = self.primal;
        let Inst::Forward { args, .. } = primal.inst(call) else {
            unreachable!("reverse_call on a non-call")
        };
        let (mut output, mut pullback) = (None, None);
        for &(index, extract) in &self.extracts[call.index()] {
            match index {
                0 => output = Some(extract),
                _ => pullback = Some(extract),
            }
        }
        let pullback = pullback.expect("a call's pullback is extracted");
        let seed = output.and_then(|output| self.grads[output.index()]);
        let any_active = args.iter().any(|&(arg, _)| self.is_active(arg));
        if !any_active || (seed.is_none() && !self.writes_shadow(call)) {
            return;
        }
        let mut operands = Vec::new();
        let mut floats = Vec::new();
        for &(arg, mode) in args {
            match mode {
                Mode::Val => {
                    if primal.ty(arg).is_float() {
                        floats.push(arg);
                    }
                }
                Mode::Ref | Mode::Mut => {
                    let contents = self.read_back(arg, call);
                    operands.push((contents, Mode::Ref));
                    if primal.ty(arg).is_float_buf() || *primal.ty(arg) == Ty::Struct {
                        let shadow = match self.shadow(arg) {
                            Some(shadow) => shadow,
                            None => self.scratch_shadow(arg),
                        };
                        operands.push((shadow, Mode::Mut));
                    }
                }
            }
        }
        let seed = seed.unwrap_or_else(|| self.push(Inst::Const(Const::Zero), Ty::Unknown, call));
        operands.push((seed, Mode::Val));
        let pullback = self.available(pullback);
        let tys: Vec<Ty> = floats.iter().map(|&arg| primal.ty(arg).clone()).collect();
        let ty = match tys.as_slice() {
            [single] => single.clone(),
            _ => Ty::Tuple(tys.clone()),
        };
        let adjoints = self.push(
            Inst::Apply {
                pullback,
                args: operands,
            },
            ty,
            call,
        );
        if let [arg] = floats.as_slice() {
            self.add(*arg, adjoints);
            return;
        }
        for (position, &arg) in floats.iter().enumerate() {
            if self.is_active(arg) {
                let adjoint = self.extract(adjoints, position, call);
                self.add(arg, adjoint);
            }
        }
    }

    /// A shadow for a constant buffer or struct that a callee's pullback
    /// needs one for: zeros, made once in the body before the adjoint code
    /// that uses it (what the pullback adds into it is never read).
    fn scratch_shadow(&mut self, of: Value) -> Value {
        if let Some(&scratch) = self.scratch.get(&of) {
            return scratch;
        }
        let primal = self.primal;
        let scratch = self.builder.push_detached(
            Inst::Shadow { of, seed: None },
            primal.ty(of).clone(),
            primal.span(of),
        );
        if let Some(name) = primal.name(of) {
            let name = format!("d_{name}");
            self.builder.name(scratch, &name);
        }
        self.builder.func_mut().body.insts.push(scratch);
        self.scratch.insert(of, scratch);
        scratch
    }

    /// Whether the call passes an active buffer by `&mut`: its pullback
    /// turns that buffer's shadow into the adjoint of its contents before.
    fn writes_shadow(&self, call: Value) -> bool {
        self.primal
            .inst(call)
            .written()
            .iter()
            .any(|&buf| self.shadow(buf).is_some())
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
        // A buffer's adjoint is its shadow, changed in place: never carried.
        used.retain(|&value| {
            self.is_active(value)
                && !self.is_inside(value, owner)
                && primal.ty(value).elem().is_none()
        });
        used
    }

    /// Saves `value`, defined in the body of `for_value`, on a tape: pushed by
    /// the primal loop after its definition, popped at the start of each
    /// iteration of the adjoint loop. Returns the popped copy.
    fn tape(&mut self, value: Value, for_value: Value) -> Value {
        let ty = self.builder.func().ty(value).clone();
        let span = self.builder.func().span(value);
        let name = self.builder.func().name(value).map(str::to_owned);

        // The tape lives in the body, before the statement holding the loop;
        // it has room for every iteration if that statement is the loop.
        let mut top = for_value;
        while let Place::In(owner, _) = self.place(top) {
            top = owner;
        }
        let capacity = match self.primal.inst(for_value) {
            Inst::For { range, .. } if top == for_value => Some(range.clone()),
            _ => None,
        };
        let tape = self.builder.push_detached(
            Inst::TapeNew { capacity },
            Ty::Tape(Box::new(ty.clone())),
            span,
        );
        self.builder
            .name(tape, &format!("tape_{}", name.as_deref().unwrap_or("t")));
        self.insert_beside(tape, top, false);

        let push = self
            .builder
            .push_detached(Inst::Push(tape, value), Ty::Unit, span);
        self.set_place(push, Place::In(for_value, 0));
        let func = self.builder.func_mut();
        let (Inst::For { inits, body, .. } | Inst::While { inits, body }) =
            &mut func.insts[for_value.index()].inst
        else {
            unreachable!("taped values come from loops")
        };
        let after = body
            .insts
            .iter()
            .position(|&v| v == value)
            .map_or(0, |position| position + 1);
        body.insts.insert(after.max(inits.len() + 1), push);

        // A `for` inside another statement reserves room for its trips
        // before it runs, so that its pushes never grow the tape (a push that
        // may grow makes the compiler keep the loop's values in memory).
        if let Inst::For { range, .. } = self.primal.inst(for_value)
            && top != for_value
        {
            let reserve = self.builder.push_detached(
                Inst::TapeReserve {
                    tape,
                    range: range.clone(),
                },
                Ty::Unit,
                span,
            );
            self.insert_beside(reserve, for_value, false);
        }

        let adjoint = self
            .loops
            .iter()
            .rev()
            .find(|adjoint| adjoint.primal == for_value)
            .expect("inside the adjoint loop");
        let (region, n_args) = (adjoint.region, adjoint.n_args);
        let pop = self.builder.push_detached(Inst::Pop(tape), ty, span);
        if let Some(name) = &name {
            self.builder.name(pop, name);
        }
        self.builder.insert_in_open(region, n_args, pop);
        pop
    }

    /// Whether `value` is defined inside one of the branches of `if_value`.
    fn is_inside(&self, value: Value, if_value: Value) -> bool {
        let mut place = self.place(value);
        while let Place::In(owner, _) = place {
            if owner == if_value {
                return true;
            }
            place = self.place(owner);
        }
        false
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
    fn recompute(&mut self, value: Value) -> Option<Value> {
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
            operands.push(if self.is_visible(operand) {
                self.available(operand)
            } else {
                self.recompute(operand).expect("checked by `recomputable`")
            });
        }
        let mut operands = operands.into_iter();
        inst.map_operands(|_| operands.next().expect("one per operand"));
        let ty = self.primal.ty(value).clone();
        let copy = self.builder.push(inst, ty, self.primal.span(value));
        if let Some(name) = self.primal.name(value) {
            self.builder.name(copy, name);
        }
        self.recomputed.push((value, copy, self.builder.depth()));
        Some(copy)
    }

    /// Closes the innermost adjoint region: what was recomputed in it is out
    /// of scope.
    fn end_region(&mut self, yields: Vec<Value>) -> Region {
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
    fn recomputable(&self, value: Value, depth: usize) -> bool {
        let inst = self.primal.inst(value);
        let is_data = matches!(self.primal.ty(value), Ty::Int | Ty::Bool)
            || matches!(inst, Inst::Cast(arg, _) if matches!(self.primal.ty(*arg), Ty::Int | Ty::Bool));
        let mut depth = depth;
        let fits = match inst {
            Inst::Arg(0) => {
                return matches!(self.place(value), Place::In(owner, _) if self.loops.iter().any(|adjoint| adjoint.primal == owner));
            }
            Inst::Const(_) => true,
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

    /// Whether the adjoint can read `value` as it is: defined in the body, a
    /// constant, or already exported or taped.
    fn is_visible(&self, value: Value) -> bool {
        matches!(self.place(value), Place::Body)
            || matches!(self.primal.inst(value), Inst::Const(_))
            || self.exported.contains_key(&value)
    }

    /// Adds `value` (defined in branch `branch` of `owner`) to the values `owner`
    /// yields, and returns the `extract` that reads it after `owner`.
    fn export(&mut self, value: Value, owner: Value, branch: u8) -> Value {
        let mut ty = self.builder.func().ty(value).clone();
        let span = self.builder.func().span(value);
        // A pullback or a copy of a buffer has no placeholder: it leaves as
        // `Some(…)`, and the other branch yields `None`.
        let value = if ty == Ty::Pullback || ty.elem().is_some() {
            ty = Ty::Option(Box::new(ty));
            let wrapped = self
                .builder
                .push_detached(Inst::Some(value), ty.clone(), span);
            if let Some(name) = self.builder.func().name(value) {
                let name = name.to_owned();
                self.builder.name(wrapped, &name);
            }
            self.set_place(wrapped, Place::In(owner, branch));
            let func = self.builder.func_mut();
            let Inst::If { then, els, .. } = &mut func.insts[owner.index()].inst else {
                unreachable!("values are exported from `if`s")
            };
            let inside = if branch == 0 { then } else { els };
            inside.insts.push(wrapped);
            wrapped
        } else {
            value
        };
        let placeholder = self
            .builder
            .push_detached(Inst::Const(Const::Zero), ty.clone(), span);
        self.set_place(placeholder, Place::In(owner, 1 - branch));
        let func = self.builder.func_mut();
        let Inst::If { then, els, .. } = &mut func.insts[owner.index()].inst else {
            unreachable!("values are exported from `if`s")
        };
        let (inside, other) = if branch == 0 {
            (then, els)
        } else {
            (els, then)
        };
        inside.yields.push(value);
        other.insts.push(placeholder);
        other.yields.push(placeholder);
        let Ty::Tuple(tys) = &mut func.insts[owner.index()].ty else {
            unreachable!("an `if` has a tuple type")
        };
        tys.push(ty.clone());
        let index = u32::try_from(tys.len() - 1).expect("small");
        let extract = self
            .builder
            .push_detached(Inst::Extract(owner, index), ty, span);
        if let Some(name) = self.builder.func().name(value) {
            let name = name.to_owned();
            self.builder.name(extract, &name);
        }
        self.insert_beside(extract, owner, true);
        extract
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
