//! Lowering the fields of parameter structs (`p: &Params`, `&self`).
//!
//! The macro cannot see the struct's definition, so each field path the body
//! reads becomes a value of its own, typed by how it is used: a buffer where
//! it is indexed, iterated or passed by reference, a float otherwise. The
//! struct is immutable, so the value is read once, at the start of the body,
//! like a parameter; its adjoint goes into the same field of the shadow.
//!
//! ```text
//! p.w[i] * p.b        %2: [float] = field %0.w     (hoisted)
//!                 ⇒   %3: float = field %0.b       (hoisted)
//!                     … load %2[%i] …
//! ```

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, ExprField};

use super::{Lower, Lowered, Poison, Special, expr::local_name};
use crate::diag::msg;
use crate::ir::{Inst, Ty, Value};

/// A field path read so far, and how.
pub(super) struct FieldSeen {
    base: Value,
    path: String,
    value: Value,
}

impl Lower<'_> {
    /// `p.a.b` as a float (`as_buffer` false) or as a buffer; `None` if
    /// `expr` is not a field of a parameter struct.
    pub(super) fn field(&mut self, expr: &ExprField, as_buffer: bool) -> Option<Lowered> {
        let mut path = vec![expr.member.clone()];
        let mut base = &*expr.base;
        loop {
            match base {
                Expr::Field(inner) => {
                    path.push(inner.member.clone());
                    base = &inner.base;
                }
                Expr::Paren(paren) => base = &paren.expr,
                _ => break,
            }
        }
        path.reverse();
        let name = local_name(base)?;
        // `cfg.dt` of `cfg: Config` taken by value: constant data, whose
        // numbers are read as they are (no adjoint). A field indexed as a
        // buffer stays an error: the split API's pullback could not hold it.
        let root = if let Some(Special::Opaque(root)) = self.special(&name) {
            if as_buffer {
                return Some(self.unsupported(expr, msg::OPAQUE_USE));
            }
            root
        } else {
            match self.lookup(&name)? {
                Ok(root) if self.builder.func().ty(root) == &Ty::Struct => root,
                // A parameter whose type was rejected: reported there already.
                Ok(root) if self.builder.func().ty(root) == &Ty::Unknown => {
                    return Some(Err(Poison));
                }
                Ok(_) => return None,
                Err(Poison) => return Some(Err(Poison)),
            }
        };
        let key: Vec<String> = path
            .iter()
            .map(|member| member.to_token_stream().to_string())
            .collect();
        let key = key.join(".");
        if let Some(seen) = self
            .fields
            .iter()
            .find(|seen| seen.base == root && seen.path == key)
        {
            let value = seen.value;
            let is_buffer = matches!(self.builder.func().ty(value), Ty::Buf(_));
            if is_buffer != as_buffer {
                return Some(self.unsupported(expr, msg::field_both(&key)));
            }
            return Some(Ok(value));
        }
        let ty = if as_buffer {
            Ty::Buf(Box::new(Ty::Float))
        } else {
            Ty::Float
        };
        let value = self
            .builder
            .push_detached(Inst::Field { base: root, path }, ty, expr.span());
        // Read once, after the parameters and the fields read before.
        let func = self.builder.func_mut();
        let position = func
            .body
            .insts
            .iter()
            .position(|&inst| {
                !matches!(
                    func.insts[inst.index()].inst,
                    Inst::Param(_) | Inst::Field { .. }
                )
            })
            .unwrap_or(func.body.insts.len());
        func.body.insts.insert(position, value);
        self.fields.push(FieldSeen {
            base: root,
            path: key,
            value,
        });
        Some(Ok(value))
    }

    /// A field matched on by variants (`match self.act { Act::Relu => … }`,
    /// `self.act == Act::Relu`) is no float: constant data of a type the
    /// macro cannot see (a `#[tangent(skip)]` enum), tested as written.
    pub(super) fn opaque_use(&mut self, value: Value) {
        let data = &mut self.builder.func_mut().insts[value.index()];
        if matches!(data.inst, Inst::Field { .. }) && data.ty == Ty::Float {
            data.ty = Ty::Unknown;
        }
    }

    /// What a function of the user's returns, run as written, used as a
    /// condition (`if is_even(i)`), is a `bool`.
    pub(super) fn bool_use(&mut self, value: Value) {
        let data = &mut self.builder.func_mut().insts[value.index()];
        if matches!(data.inst, Inst::Effect { .. }) && data.ty == Ty::Unknown {
            data.ty = Ty::Bool;
        }
        // `if cfg.clamp` of a field taken for a float until used.
        if matches!(data.inst, Inst::Field { .. }) && data.ty == Ty::Float {
            data.ty = Ty::Bool;
        }
    }

    /// A field read where an integer goes (an index, a range bound, an
    /// operand of integer arithmetic) is an integer: a field is taken for a
    /// float until a use says otherwise (`#[tangent(skip)] n: usize` read as
    /// `p.w[o * p.n]`), so that no adjoint is kept for it.
    /// The same holds for what a function of the user's returns, run as
    /// written (`x[idx(i, j, n)]`, see [`Lower::constant_call`]).
    pub(super) fn int_use(&mut self, value: Value) {
        let data = &self.builder.func().insts[value.index()];
        let guessed = match data.inst {
            Inst::Field { .. } => data.ty == Ty::Float,
            Inst::Effect { .. } => data.ty == Ty::Unknown,
            // `x[r]` of `let (r, c) = split(i, n);`.
            Inst::Extract(tuple, _) => {
                data.ty == Ty::Unknown
                    && matches!(self.builder.func().inst(tuple), Inst::Effect { .. })
            }
            // `x[IDX[k]]` of a constant outside the function.
            Inst::Load(buf, _) => matches!(
                self.builder.func().inst(buf),
                Inst::Const(crate::ir::Const::Path(_))
            ),
            _ => false,
        };
        let data = &mut self.builder.func_mut().insts[value.index()];
        if guessed {
            data.ty = Ty::Int;
        }
    }
}
