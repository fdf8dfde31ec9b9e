//! Lowering: the user's function (`syn`) → primal IR.
//!
//! Variables become SSA values: a scope maps each name to the value it holds
//! now, and reassignment (`x = x * x`, `s += …`) binds the name to a new value,
//! so every version stays available to the adjoint. Unsupported constructs are
//! reported at their span and lowered to nothing ([`Poison`]); uses of what they
//! would have defined stay silent, so each mistake is reported once.

mod expr;
mod loops;
mod sig;

pub(crate) use sig::{Signature, signature};

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Block, Expr, ItemFn, Local, Pat, Stmt};

use crate::diag::{Ctxt, msg};
use crate::ir::{Builder, Function, Inst, Ty, Value};

/// The result of lowering something that failed: the error is already reported.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Poison;

type Lowered = Result<Value, Poison>;

/// Lowers the body of `func` into primal IR.
pub(crate) fn body(cx: &Ctxt, func: &ItemFn, sig: &Signature) -> Option<Function> {
    let mut lower = Lower {
        cx,
        builder: Builder::new(sig.ident.unraw().to_string()),
        scopes: vec![Vec::new()],
    };
    for param in &sig.params {
        let value = lower.builder.param(
            param.name.clone(),
            param.role,
            param.ir_ty.clone(),
            param.span,
        );
        lower.bind(&param.name, Ok(value));
    }
    let out = lower.fn_body(&func.block, &sig.output_ty).ok()?;
    lower.builder.refine_ty(out, &sig.output_ty);
    Some(lower.builder.finish(out))
}

struct Lower<'a> {
    cx: &'a Ctxt,
    builder: Builder,
    /// Innermost scope last; each maps a name to its current value.
    scopes: Vec<Vec<(String, Result<Value, Poison>)>>,
}

impl Lower<'_> {
    fn fn_body(&mut self, block: &Block, output_ty: &Ty) -> Lowered {
        let (last, init) = match block.stmts.split_last() {
            Some((last, init)) => (Some(last), init),
            None => (None, &[][..]),
        };
        for stmt in init {
            self.stmt(stmt);
        }
        let tail = match last {
            Some(Stmt::Expr(expr, None)) => expr,
            Some(Stmt::Expr(Expr::Return(ret), Some(_))) if ret.expr.is_some() => {
                ret.expr.as_deref().expect("checked")
            }
            last => {
                if let Some(stmt) = last {
                    self.stmt(stmt);
                }
                // Without a float return type, the missing value is part of the
                // error already reported on the signature.
                if *output_ty != Ty::Unknown {
                    self.cx
                        .error_at(block.brace_token.span.close(), msg::NO_VALUE);
                }
                return Err(Poison);
            }
        };
        self.output(tail, output_ty)
    }

    /// The returned expression: a tuple output is lowered element by element.
    fn output(&mut self, expr: &Expr, output_ty: &Ty) -> Lowered {
        match (expr, output_ty) {
            (Expr::Tuple(tuple), Ty::Tuple(tys)) if tuple.elems.len() == tys.len() => {
                let mut elems = Vec::new();
                let mut poisoned = false;
                for (elem, ty) in tuple.elems.iter().zip(tys) {
                    match self.expr(elem) {
                        Ok(value) => {
                            self.builder.refine_ty(value, ty);
                            elems.push(value);
                        }
                        Err(Poison) => poisoned = true,
                    }
                }
                if poisoned {
                    return Err(Poison);
                }
                let tys = elems
                    .iter()
                    .map(|&value| self.builder.func().ty(value).clone())
                    .collect();
                Ok(self
                    .builder
                    .push(Inst::Tuple(elems), Ty::Tuple(tys), expr.span()))
            }
            // The return type was rejected: lower the elements for their own
            // errors, without a follow-on one for the tuple.
            (Expr::Tuple(tuple), Ty::Unknown) => {
                for elem in &tuple.elems {
                    let _ = self.expr(elem);
                }
                Err(Poison)
            }
            (Expr::Paren(paren), _) => self.output(&paren.expr, output_ty),
            _ => self.expr(expr),
        }
    }

    /// Lowers a block in a new scope; its value is its tail expression, when
    /// `want_value` (otherwise the tail is lowered as a statement).
    fn block(&mut self, block: &Block, want_value: bool) -> Result<Option<Value>, Poison> {
        self.scopes.push(Vec::new());
        let mut tail = Ok(None);
        for (index, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(expr, None) if index + 1 == block.stmts.len() && want_value => {
                    tail = self.expr(expr).map(Some);
                }
                // A rejected `return` leaves the block without a known value;
                // no follow-on "no value" error.
                Stmt::Expr(Expr::Return(_), _) if index + 1 == block.stmts.len() && want_value => {
                    self.stmt(stmt);
                    tail = Err(Poison);
                }
                stmt => self.stmt(stmt),
            }
        }
        self.scopes.pop();
        tail
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => self.local(local),
            Stmt::Item(item) => self.cx.error_spanned_by(item, msg::ITEM),
            Stmt::Macro(mac) => self.cx.error_spanned_by(&mac.mac, msg::MACRO),
            Stmt::Expr(expr, _) => self.expr_stmt(expr),
        }
    }

    /// An expression whose value is not used: assignments, and branches and
    /// blocks for what they assign.
    fn expr_stmt(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => {
                let value = self.expr(&assign.right);
                self.assign(&assign.left, value);
            }
            Expr::Binary(binary) if expr::compound_op(&binary.op).is_some() => {
                let op = expr::compound_op(&binary.op).expect("checked");
                let value = match (self.expr(&binary.left), self.expr(&binary.right)) {
                    (Ok(lhs), Ok(rhs)) => Ok(self.binary(op, lhs, rhs, binary.span())),
                    _ => Err(Poison),
                };
                self.assign(&binary.left, value);
            }
            Expr::Block(block) if block.label.is_none() => {
                let _ = self.block(&block.block, false);
            }
            Expr::If(if_expr) => {
                let _ = self.if_(if_expr, false);
            }
            Expr::Match(match_expr) => {
                let _ = self.match_(match_expr, false);
            }
            Expr::ForLoop(for_loop) => {
                let _ = self.for_loop(for_loop);
            }
            Expr::While(while_loop) => {
                let _ = self.while_loop(while_loop);
            }
            // `()`, as in a `match` arm `_ => ()`: nothing to do.
            Expr::Tuple(tuple) if tuple.elems.is_empty() => {}
            Expr::Return(ret) => self
                .cx
                .error_spanned_by(ret.return_token, msg::EARLY_RETURN),
            expr => {
                let _ = self.expr(expr);
            }
        }
    }

    fn local(&mut self, local: &Local) {
        let (pat, annotation) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
        let name = match pat {
            Pat::Ident(ident) if ident.by_ref.is_some() => {
                self.cx.error_spanned_by(ident, msg::REF_BINDING);
                None
            }
            Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.unraw().to_string()),
            Pat::Wild(_) => None,
            pat => {
                // The value is not lowered: what it would be bound to is unknown.
                self.cx.error_spanned_by(pat, msg::LET_PATTERN);
                return;
            }
        };
        let Some(init) = &local.init else {
            self.cx.error_spanned_by(local, msg::LET_WITHOUT_INIT);
            if let Some(name) = &name {
                self.bind(name, Err(Poison));
            }
            return;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.cx.error_spanned_by(else_token, msg::LET_ELSE);
        }
        let value = self.expr(&init.expr);
        if let (Ok(value), Some(annotation)) = (value, annotation) {
            match sig::scalar_type(annotation) {
                Some(scalar) => self.builder.refine_ty(value, &scalar.ty()),
                None => self.cx.error_spanned_by(
                    annotation,
                    msg::param_type(&quote::quote!(#annotation).to_string()),
                ),
            }
        }
        if let Some(name) = name {
            if let Ok(value) = value {
                self.builder.name(value, &name);
            }
            self.bind(&name, value);
        }
    }

    fn assign(&mut self, target: &Expr, value: Lowered) {
        let Some(name) = expr::local_name(target) else {
            self.cx.error_spanned_by(target, msg::ASSIGN_TARGET);
            return;
        };
        let Some(slot) = self.lookup_mut(&name) else {
            self.cx.error_spanned_by(target, msg::ASSIGN_TARGET);
            return;
        };
        *slot = value;
        if let Ok(value) = value {
            self.builder.name(value, &name);
        }
    }

    fn bind(&mut self, name: &str, value: Lowered) {
        self.scopes
            .last_mut()
            .expect("a scope")
            .push((name.to_owned(), value));
    }

    fn lookup(&self, name: &str) -> Option<Lowered> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(bound, _)| bound == name)
            .map(|(_, value)| *value)
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Lowered> {
        self.scopes
            .iter_mut()
            .rev()
            .flat_map(|scope| scope.iter_mut().rev())
            .find(|(bound, _)| bound == name)
            .map(|(_, value)| value)
    }

    fn push(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        self.builder.push(inst, ty, span)
    }
}
