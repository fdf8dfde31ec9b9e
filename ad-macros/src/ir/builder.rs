//! Appending instructions to a [`Function`] while keeping its side tables in step.

use proc_macro2::Span;

use super::{Function, Inst, Param, Region, Role, Ty, Value};

/// Builds a [`Function`]: every `push` adds an instruction at the end of the
/// innermost open region (the body when none is open) and one entry to each side
/// table.
pub(crate) struct Builder {
    func: Function,
    /// Regions being built, innermost last.
    open: Vec<Vec<Value>>,
    /// Changes whenever a region begins or ends: values pushed under one
    /// stretch number are in one straight run of instructions.
    stretch: usize,
}

impl Builder {
    pub(crate) fn new(name: String) -> Self {
        Builder {
            func: Function {
                name,
                insts: Vec::new(),
                body: Region::default(),
                params: Vec::new(),
                ret: Value(0),
                names: Vec::new(),
                spans: Vec::new(),
                adjoint_of: Vec::new(),
                runtime_paths: Vec::new(),
                items: Vec::new(),
                float_param: None,
                lanes: None,
                user_calls: Vec::new(),
            },
            open: Vec::new(),
            stretch: 0,
        }
    }

    /// Continues building after the last instruction of `func`.
    pub(crate) fn extend(func: Function) -> Self {
        Builder {
            func,
            open: Vec::new(),
            stretch: 0,
        }
    }

    pub(crate) fn func_mut(&mut self) -> &mut Function {
        &mut self.func
    }

    /// Later instructions go into a new region, until [`Builder::end_region`].
    pub(crate) fn begin_region(&mut self) {
        self.stretch += 1;
        self.open.push(Vec::new());
    }

    /// The current straight run of instructions (see [`Builder::stretch`]).
    pub(crate) fn stretch(&self) -> usize {
        self.stretch
    }

    /// How many regions are open; the innermost is number `depth() - 1`.
    pub(crate) fn depth(&self) -> usize {
        self.open.len()
    }

    /// Places an instruction made with [`Builder::push_detached`] at `position`
    /// in open region number `region`.
    pub(crate) fn insert_in_open(&mut self, region: usize, position: usize, value: Value) {
        self.open[region].insert(position, value);
    }

    pub(crate) fn end_region(&mut self, yields: Vec<Value>) -> Region {
        self.stretch += 1;
        let insts = self.open.pop().expect("a region is open");
        Region { insts, yields }
    }

    pub(crate) fn func(&self) -> &Function {
        &self.func
    }

    pub(crate) fn push(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        let value = self.push_detached(inst, ty, span);
        match self.open.last_mut() {
            Some(region) => region.push(value),
            None => self.func.body.insts.push(value),
        }
        value
    }

    /// Adds an instruction to the arena without placing it in any region; the
    /// caller places it.
    pub(crate) fn push_detached(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        self.func.push_detached(inst, ty, span)
    }

    pub(crate) fn param(&mut self, name: String, role: Role, ty: Ty, span: Span) -> Value {
        let index = u32::try_from(self.func.params.len()).expect("fewer than 2^32 parameters");
        let value = self.push(Inst::Param(index), ty, span);
        self.func.names[value.index()] = Some(name.clone());
        self.func.params.push(Param {
            value,
            name,
            role,
            mutable: false,
        });
        value
    }

    /// Marks the last parameter added as a buffer taken by `&mut`.
    pub(crate) fn mark_mutable(&mut self) {
        if let Some(param) = self.func.params.last_mut() {
            param.mutable = true;
        }
    }

    /// Records the user's name for a value, unless it already has one (a value
    /// bound by `let a = b;` keeps the name of `b`).
    pub(crate) fn name(&mut self, value: Value, name: &str) {
        let slot = &mut self.func.names[value.index()];
        if slot.is_none() {
            *slot = Some(name.to_owned());
        }
    }

    pub(crate) fn set_adjoint_of(&mut self, adjoint: Value, primal: Value) {
        let slot = &mut self.func.adjoint_of[adjoint.index()];
        if slot.is_none() {
            *slot = Some(primal);
        }
    }

    /// Changes the type of a value whose type was only inferred so far (an
    /// unsuffixed literal that meets a typed operand; an accumulator that
    /// meets its items, which may be of the generic float type).
    pub(crate) fn refine_ty(&mut self, value: Value, ty: &Ty) {
        let data = &mut self.func.insts[value.index()];
        let refines = match data.ty {
            Ty::Unknown => ty.is_float(),
            Ty::Float => matches!(ty, Ty::F32 | Ty::F64),
            _ => false,
        };
        if refines {
            data.ty = ty.clone();
            // Literal arithmetic (`2.0 * 1.5`) takes the type with its
            // operands, so that rustc sees it too.
            match data.inst {
                Inst::Unary(_, arg) | Inst::Detach(arg) => self.refine_ty(arg, ty),
                Inst::Binary(op, lhs, rhs) if !op.is_comparison() && !op.is_logic() => {
                    self.refine_ty(lhs, ty);
                    self.refine_ty(rhs, ty);
                }
                _ => {}
            }
        }
    }

    pub(crate) fn finish(mut self, ret: Value) -> Function {
        self.func.ret = ret;
        self.func
    }
}
