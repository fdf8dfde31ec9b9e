//! Appending instructions to a [`Function`] while keeping its side tables in step.

use proc_macro2::Span;

use super::{Block, Function, Inst, InstData, Param, Role, Ty, Value};

/// Builds a [`Function`]: every `push` adds an instruction at the end of the body
/// and one entry to each side table.
pub(crate) struct Builder {
    func: Function,
}

impl Builder {
    pub(crate) fn new(name: String) -> Self {
        Builder {
            func: Function {
                name,
                insts: Vec::new(),
                body: Block::default(),
                params: Vec::new(),
                ret: Value(0),
                names: Vec::new(),
                spans: Vec::new(),
                adjoint_of: Vec::new(),
            },
        }
    }

    /// Continues building after the last instruction of `func`.
    pub(crate) fn extend(func: Function) -> Self {
        Builder { func }
    }

    pub(crate) fn func(&self) -> &Function {
        &self.func
    }

    pub(crate) fn push(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        let value = Value(u32::try_from(self.func.insts.len()).expect("fewer than 2^32 values"));
        self.func.insts.push(InstData { inst, ty });
        self.func.names.push(None);
        self.func.spans.push(span);
        self.func.adjoint_of.push(None);
        self.func.body.insts.push(value);
        value
    }

    pub(crate) fn param(&mut self, name: String, role: Role, ty: Ty, span: Span) -> Value {
        let index = u32::try_from(self.func.params.len()).expect("fewer than 2^32 parameters");
        let value = self.push(Inst::Param(index), ty, span);
        self.func.names[value.index()] = Some(name.clone());
        self.func.params.push(Param { value, name, role });
        value
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
    /// unsuffixed literal that meets a typed operand).
    pub(crate) fn refine_ty(&mut self, value: Value, ty: &Ty) {
        let data = &mut self.func.insts[value.index()];
        if matches!(data.ty, Ty::Float | Ty::Unknown) && matches!(ty, Ty::F32 | Ty::F64) {
            data.ty = ty.clone();
            if let Inst::Unary(_, arg) | Inst::Detach(arg) = data.inst {
                self.refine_ty(arg, ty);
            }
        }
    }

    pub(crate) fn finish(mut self, ret: Value) -> Function {
        self.func.ret = ret;
        self.func
    }
}
