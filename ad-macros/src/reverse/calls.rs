//! Calls: a call of a differentiated function is reversed by its pullback,
//! and buffers a call reads are read back as the call left them.

use super::Reverse;
use crate::ir::{Callee, Const, Inst, Mode, Place, Ty, Value};

impl Reverse<'_> {
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
    pub(super) fn reverse_call(&mut self, call: Value) {
        let primal = self.primal;
        let Inst::Forward { args, callee, .. } = primal.inst(call) else {
            unreachable!("reverse_call on a non-call")
        };
        // An output moved into a buffer (`UserCall::into`): the seed is the
        // buffer's shadow, which the call's overwriting then resets.
        let (into, args) = match args.split_first() {
            Some((&(buf, _), rest)) if primal.user_calls[*callee as usize].into => {
                (self.shadow(buf), rest)
            }
            _ => (None, args.as_slice()),
        };
        let (output, pullback) = self.call_parts(call);
        let pullback = pullback.expect("a call's pullback is extracted");
        let seed = match into {
            Some(shadow) => Some(shadow),
            None => output.and_then(|output| self.call_seed(output, call)),
        };
        let any_active = args.iter().any(|&(arg, _)| self.is_active(arg));
        if !any_active || (seed.is_none() && !self.writes_shadow(call)) {
            if let Some(shadow) = into {
                self.push(Inst::Call(Callee::Zero, vec![shadow]), Ty::Unit, call);
            }
            return;
        }
        let mut operands = Vec::new();
        let mut floats = Vec::new();
        // A buffer passed twice (`g(&x, &x)`, or with a slice of itself,
        // `g(&x, &x[1..])`) gets one shadow per argument: the pullback cannot
        // borrow one shadow mutably twice. The copies start at zero and are
        // added into the shadow (or its range) after the call.
        let mut passed: Vec<Value> = Vec::new();
        let mut aliases = Vec::new();
        for &(arg, mode) in args {
            match mode {
                Mode::Val => {
                    if primal.ty(arg).is_float() || primal.ty(arg).is_float_tuple() {
                        floats.push(arg);
                    }
                }
                Mode::Ref | Mode::Mut | Mode::Copy => {
                    let contents = self.read_back(arg, call);
                    operands.push((contents, Mode::Ref));
                    if primal.ty(arg).is_float_buf() || *primal.ty(arg) == Ty::Struct {
                        let shadow = match self.shadow(arg) {
                            Some(shadow) => shadow,
                            None => self.scratch_shadow_of(arg, contents, call),
                        };
                        let base = self.builder.func().bases(vec![shadow])[0];
                        if passed.contains(&base) && primal.ty(arg).is_float_buf() {
                            let ty = primal.ty(arg).clone();
                            let copy = self.push(Inst::Shadow { of: contents }, ty, call);
                            aliases.push((copy, shadow));
                            operands.push((copy, Mode::Mut));
                        } else {
                            passed.push(base);
                            operands.push((shadow, Mode::Mut));
                        }
                    }
                }
            }
        }
        let seed = seed.unwrap_or_else(|| self.push(Inst::Const(Const::Zero), Ty::Unknown, call));
        // A buffer's seed is its shadow, lent to the pullback.
        let returns_buffer =
            into.is_some() || output.is_some_and(|output| matches!(primal.ty(output), Ty::Buf(_)));
        operands.push((seed, if returns_buffer { Mode::Ref } else { Mode::Val }));
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
        if let Some(shadow) = into {
            self.push(Inst::Call(Callee::Zero, vec![shadow]), Ty::Unit, call);
        }
        for (copy, shadow) in aliases {
            let elem = self
                .builder
                .func()
                .ty(shadow)
                .elem()
                .cloned()
                .expect("a buffer");
            let one = Const::one(&elem, self.builder.func().float_param.as_ref());
            let one = self.push(Inst::Const(one), elem, call);
            self.push(
                Inst::Call(Callee::Axpy, vec![one, copy, shadow]),
                Ty::Unit,
                call,
            );
        }
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

    /// The values a call's pair is taken apart into in the primal: its
    /// output (`None` if nothing reads it) and its pullback.
    pub(super) fn call_parts(&self, call: Value) -> (Option<Value>, Option<Value>) {
        let (mut output, mut pullback) = (None, None);
        for &(index, extract) in &self.extracts[call.index()] {
            match index {
                0 => output = Some(extract),
                _ => pullback = Some(extract),
            }
        }
        (output, pullback)
    }

    /// The seed of a call's pullback: the adjoint of its output, or for a
    /// tuple output the tuple of its components' adjoints (zero for those
    /// with none); `None` if there is no adjoint at all.
    pub(super) fn call_seed(&mut self, output: Value, call: Value) -> Option<Value> {
        let Ty::Tuple(tys) = self.primal.ty(output).clone() else {
            return self.grads[output.index()];
        };
        let mut components: Vec<Option<Value>> = vec![None; tys.len()];
        for &(index, extract) in &self.extracts[output.index()] {
            if let Some(grad) = self.grads[extract.index()] {
                components[index] = Some(grad);
            }
        }
        if components.iter().all(Option::is_none) {
            return None;
        }
        let mut elems = Vec::new();
        for (component, ty) in components.into_iter().zip(&tys) {
            elems.push(
                component.unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty.clone(), call)),
            );
        }
        Some(self.push(Inst::Tuple(elems), Ty::Tuple(tys), call))
    }

    /// A scratch shadow (see [`Reverse::scratch_shadow`]) for the argument
    /// `arg`, read back as `contents`. A range of a buffer made in a loop
    /// (`g(&ring[3 * i..][..3])`, `dist(pts[i], pts[j])` of rows) is the same
    /// range of the whole buffer's scratch shadow; any other buffer made in
    /// a region gets zeros of its own there.
    fn scratch_shadow_of(&mut self, arg: Value, contents: Value, call: Value) -> Value {
        let primal = self.primal;
        // A primal value outside every region (the adjoint's own values are
        // never top-level primal ones).
        let top_level = |value: Value| {
            value.index() < primal.insts.len() && matches!(self.place(value), Place::Body)
        };
        if top_level(arg) {
            return self.scratch_shadow(arg);
        }
        let ty = primal.ty(arg).clone();
        if let Inst::Slice { buf, start, len } = *self.builder.func().inst(contents)
            && top_level(buf)
        {
            let whole = self.scratch_shadow(buf);
            return self.push(
                Inst::Slice {
                    buf: whole,
                    start,
                    len,
                },
                ty,
                call,
            );
        }
        self.push(Inst::Shadow { of: contents }, ty, call)
    }

    /// A shadow for a constant buffer or struct that a callee's pullback
    /// needs one for: zeros, made once in the body before the adjoint code
    /// that uses it (what the pullback adds into it is never read).
    pub(super) fn scratch_shadow(&mut self, of: Value) -> Value {
        if let Some(&scratch) = self.scratch.get(&of) {
            return scratch;
        }
        let primal = self.primal;
        let scratch =
            self.builder
                .push_detached(Inst::Shadow { of }, primal.ty(of).clone(), primal.span(of));
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
    pub(super) fn writes_shadow(&self, call: Value) -> bool {
        self.primal
            .inst(call)
            .written()
            .iter()
            .any(|&buf| self.has_shadow(buf))
    }

    /// The contents of `buf` as the runtime call `call` left them, for its
    /// pullback: `buf` itself if nothing writes it afterwards, otherwise a copy
    /// the primal makes right after the call (saved on a tape in a loop).
    pub(crate) fn read_back(&mut self, buf: Value, call: Value) -> Value {
        let base = self.primal.bases(vec![buf])[0];
        if self.writes.unchanged_after(base, call) {
            if let Inst::Slice { buf, start, len } = *self.primal.inst(buf) {
                // The same range, of the buffer as the primal left it.
                let slice = Inst::Slice {
                    buf: self.read_back(buf, call),
                    start: self.available(start),
                    len: self.available(len),
                };
                return self.push(slice, self.primal.ty(base).clone(), call);
            }
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
                saved: true,
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
}
