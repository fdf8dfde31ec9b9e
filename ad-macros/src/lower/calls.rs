//! Lowering calls of functions that have a derivative of their own: a
//! `#[differentiate]`d function, or one with a custom rule.
//!
//! The macro sees only the path, so it relies on the convention every such
//! function follows: beside `f` there is `f_forward`, which runs `f` and
//! returns its output and its pullback. A call becomes one instruction whose
//! value is that pair; the adjoint calls the pullback.
//!
//! ```text
//! let y = g(x, &xs);       %4: (float, pullback) = forward g %x, &%xs
//!                    ⇒     %5: float = extract %4.0    ; y
//!                          %6: pullback = extract %4.1 ; g_pullback
//! ```

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprPath};

use super::{Lower, Lowered, Poison};
use crate::diag::msg;
use crate::ir::{Inst, Mode, Ty, UserCall};

/// Types whose associated functions (`usize::pow`) are not user functions.
const PRIMITIVE_TYPES: [&str; 16] = [
    "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
    "usize", "bool", "char",
];

/// Whether `path` can name a function of the user's: not a constructor
/// (`Some`, `Point`), not a method of a standard type, not in `std`.
pub(super) fn is_user_function(path: &ExprPath) -> bool {
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.unraw().to_string())
        .collect();
    let Some(last) = segments.last() else {
        return false;
    };
    let lower_case = last.starts_with(|c: char| c.is_lowercase() || c == '_');
    let foreign = segments.first().is_some_and(|first| {
        ["std", "core", "alloc", "Vec", "Box", "String"].contains(&first.as_str())
            || PRIMITIVE_TYPES.contains(&first.as_str())
    });
    lower_case && !foreign && path.qself.is_none()
}

/// Whether `buf` is a `Vec` the function made (`vec![…]`, `Vec::new()`,
/// `to_vec()`, or a clone of one), which no differentiated function takes
/// by value.
fn is_vec(func: &crate::ir::Function, buf: crate::ir::Value) -> bool {
    match func.inst(buf) {
        Inst::NewBuf(crate::ir::NewBuf::Vec { .. } | crate::ir::NewBuf::Empty { .. }) => true,
        Inst::CloneBuf { clone: false, .. } => true,
        Inst::CloneBuf {
            src, clone: true, ..
        } => is_vec(func, *src),
        _ => false,
    }
}

/// What a call of a differentiated function returns, as the caller's
/// code shows it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Returns {
    Float,
    /// `let (a, b) = g(x);`
    Tuple(usize),
    /// `let v = g(&x);` where `v` is used as a buffer: a `Vec<f64>` or an
    /// array.
    Buffer,
    /// The same in a loop or a branch: moved into the call's first
    /// argument (see [`UserCall::into`]).
    Into,
}

impl Lower<'_> {
    /// `g(x, &xs, &mut u, n)`: floats and integers are passed by value,
    /// buffers by `&` or `&mut` as written.
    pub(super) fn user_call(&mut self, func: &ExprPath, call: &ExprCall) -> Lowered {
        self.user_call_returning(func, call, Returns::Float)
    }

    /// `let v = g(&x);` of a callee returning a `Vec` or an array: the
    /// buffer. In a loop or a branch, a buffer made in the body that the
    /// output is moved into (see [`UserCall::into`]), as for the other
    /// buffers made there.
    pub(super) fn user_call_buffer(&mut self, func: &ExprPath, call: &ExprCall) -> Lowered {
        let path = func.path.to_token_stream().to_string();
        let outer = self.buffer_callee.replace(path);
        let buf = self.user_call_buffer_of(func, call);
        self.buffer_callee = outer;
        buf
    }

    fn user_call_buffer_of(&mut self, func: &ExprPath, call: &ExprCall) -> Lowered {
        if self.builder.depth() == 0 {
            return self.user_call_returning(func, call, Returns::Buffer);
        }
        let span = call.span();
        let args = self.call_args(Vec::new(), &call.args)?;
        let elem = Ty::Buf(Box::new(Ty::Float));
        let buf = self.push_at_top(Inst::NewBuf(crate::ir::NewBuf::Output), elem, span);
        self.fixed_len.insert(buf);
        let mut all = vec![(buf, Mode::Mut)];
        all.extend(args);
        self.user_call_with(func, all, span, Returns::Into)?;
        Ok(buf)
    }

    /// `let (r, theta) = polar(x, y);`: a call whose value is a tuple of
    /// `n` floats, destructured.
    pub(super) fn user_call_tuple(
        &mut self,
        func: &ExprPath,
        call: &ExprCall,
        n: usize,
    ) -> Result<Vec<crate::ir::Value>, Poison> {
        let output = self.user_call_returning(func, call, Returns::Tuple(n))?;
        let span = call.span();
        // The callee's float type (see `user_call_with`).
        let elem = match self.ty(output) {
            Ty::Tuple(elems) if !elems.is_empty() => elems[0].clone(),
            _ => Ty::Float,
        };
        Ok((0..n)
            .map(|k| {
                let k = u32::try_from(k).expect("a small tuple");
                self.push(Inst::Extract(output, k), elem.clone(), span)
            })
            .collect())
    }

    fn user_call_returning(
        &mut self,
        func: &ExprPath,
        call: &ExprCall,
        returns: Returns,
    ) -> Lowered {
        let args = self.call_args(Vec::new(), &call.args)?;
        self.user_call_with(func, args, call.span(), returns)
    }

    /// `first`, then each of `args` lowered as an argument of a call;
    /// every argument is lowered (for its errors) before a poisoned one
    /// poisons the call.
    fn call_args<'e>(
        &mut self,
        first: Vec<(crate::ir::Value, Mode)>,
        args: impl IntoIterator<Item = &'e Expr>,
    ) -> Result<Vec<(crate::ir::Value, Mode)>, Poison> {
        let mut lowered = first;
        let mut poisoned = false;
        for arg in args {
            match self.call_arg(arg) {
                Ok(arg) => lowered.push(arg),
                Err(Poison) => poisoned = true,
            }
        }
        if poisoned { Err(Poison) } else { Ok(lowered) }
    }

    /// A call of `func` with arguments already lowered.
    pub(super) fn user_call_with(
        &mut self,
        func: &ExprPath,
        args: Vec<(crate::ir::Value, Mode)>,
        span: proc_macro2::Span,
        returns: Returns,
    ) -> Lowered {
        let name = func
            .path
            .segments
            .last()
            .map(|segment| segment.ident.unraw().to_string())
            .unwrap_or_default();
        let passes_rows = args.iter().any(|(arg, _)| self.flat_rows.contains(arg));
        let user_calls = &mut self.builder.func_mut().user_calls;
        let callee = u32::try_from(user_calls.len()).expect("fewer than 2³² calls");
        user_calls.push(UserCall {
            path: func.path.clone(),
            suffix: "_forward_all",
            checkpoint: false,
            into: returns == Returns::Into,
            passes_rows,
            plain: false,
        });
        // The callee's float type is its arguments' when they agree
        // (`sq(x as f64)` in an `f32` function returns an `f64`), and left
        // to inference otherwise.
        let mut widths = args.iter().filter_map(|&(arg, _)| match self.ty(arg) {
            Ty::F32 | Ty::F64 => Some(self.ty(arg)),
            Ty::Buf(elem) if matches!(*elem, Ty::F32 | Ty::F64) => Some(*elem),
            _ => None,
        });
        let float = match widths.next() {
            Some(first) if widths.all(|other| other == first) => first,
            _ => Ty::Float,
        };
        let output_ty = match returns {
            Returns::Tuple(n) => Ty::Tuple(vec![float; n]),
            Returns::Float => float,
            Returns::Buffer => Ty::Buf(Box::new(float)),
            Returns::Into => Ty::Tuple(Vec::new()),
        };
        let pair = self.push(
            Inst::Forward {
                callee,
                args,
                kept: None,
            },
            Ty::Tuple(vec![output_ty.clone(), Ty::Pullback]),
            span,
        );
        let output = self.push(Inst::Extract(pair, 0), output_ty, span);
        let pullback = self.push(Inst::Extract(pair, 1), Ty::Pullback, span);
        self.builder.name(pullback, &format!("{name}_pullback"));
        Ok(output)
    }

    /// `self.predict(x)` in a method taking `&self` (or `p.predict(x)` of a
    /// parameter struct `p: &Params`), where `predict` is not a float
    /// method: the method's own derivative, as the call
    /// `Self::predict(self, x)` (`Params::predict(p, x)`) of a
    /// differentiated function.
    pub(super) fn struct_method(&mut self, call: &syn::ExprMethodCall) -> Option<Lowered> {
        let Expr::Path(receiver) = &*call.receiver else {
            return None;
        };
        let name = receiver.path.get_ident()?.unraw().to_string();
        if crate::ir::Prim::from_method(&call.method.unraw().to_string()).is_some() {
            return None;
        }
        let this = match self.lookup(&name)? {
            Ok(this) if self.ty(this) == Ty::Struct => this,
            Ok(_) => return None,
            Err(Poison) => return Some(Err(Poison)),
        };
        let method = &call.method;
        let path: ExprPath = if name == "self" {
            syn::parse_quote_spanned!(method.span()=> Self::#method)
        } else {
            let (_, ty) = self.struct_types.iter().find(|(value, _)| *value == this)?;
            let mut path = ty.clone();
            path.segments.push(method.clone().into());
            ExprPath {
                attrs: Vec::new(),
                qself: None,
                path,
            }
        };
        if let Some(turbofish) = &call.turbofish {
            return Some(self.unsupported(turbofish, msg::TURBOFISH));
        }
        Some(
            self.call_args(vec![(this, Mode::Ref)], &call.args)
                .and_then(|args| self.user_call_with(&path, args, call.span(), Returns::Float)),
        )
    }

    /// One argument of a call and how it is passed.
    ///
    /// A `&mut` buffer parameter passed as it is (`g(u)`), or reborrowed
    /// (`g(&mut *u)`), is taken to be changed by the call: the macro cannot
    /// see whether `g` takes `&` or `&mut`, and for a callee that only reads
    /// it the adjoint is the same, only more conservative.
    fn call_arg(&mut self, arg: &Expr) -> Result<(crate::ir::Value, Mode), Poison> {
        // `step(state, dt)` of a tuple variable or `step((p, v), dt)`: the
        // tuple of its elements, by value.
        if self.names_tuple(arg) {
            let item = self.item_expr(arg)?;
            let Some(values) = item.tuple_values() else {
                return self
                    .unsupported(arg, msg::TUPLE_VALUE)
                    .map(|value| (value, Mode::Val));
            };
            let func = self.builder.func();
            let tys = values.iter().map(|&value| func.ty(value).clone()).collect();
            let tuple = self.push(Inst::Tuple(values), crate::ir::Ty::Tuple(tys), arg.span());
            return Ok((tuple, Mode::Val));
        }
        // `act(z, kind)` of a parameter of another type: constant data,
        // passed by value (a copy: the generated code may pass it again).
        if let Some(value) = self.opaque_of(arg) {
            let span = arg.span();
            let name = proc_macro2::Ident::new("__ad_passed", span);
            let check = quote::quote_spanned!(span=> ::ad_runtime::__private::passed_on(&#name););
            self.call_as_written(check, vec![(name, value)], crate::ir::Ty::Unit, span);
            return Ok((value, Mode::Val));
        }
        // A buffer of rows is passed flat: the twins callers call take it so.
        if let Some(rows) = self.rows_of(arg) {
            let rows = rows?;
            let func = self.builder.func();
            if self.vec_rows.contains(&func.bases(vec![rows.flat.buf])[0]) {
                return self
                    .unsupported(arg, msg::VEC_ROWS_CALL)
                    .map(|value| (value, Mode::Ref));
            }
            let whole = matches!(
                func.inst(rows.flat.start),
                Inst::Const(crate::ir::Const::Zero)
            ) && matches!(func.inst(rows.flat.len), Inst::Len(of) if *of == rows.flat.buf);
            let mutable = match arg {
                Expr::Reference(reference) => reference.mutability.is_some(),
                _ => {
                    matches!(func.inst(rows.flat.buf), Inst::Param(index) if func.params[*index as usize].mutable)
                }
            };
            let mode = if mutable { Mode::Mut } else { Mode::Ref };
            if whole {
                self.flat_rows.insert(rows.flat.buf);
                return Ok((rows.flat.buf, mode));
            }
            let ty = func.ty(rows.flat.buf).clone();
            let slice = Inst::Slice {
                buf: rows.flat.buf,
                start: rows.flat.start,
                len: rows.flat.len,
            };
            let slice = self.push(slice, ty, arg.span());
            self.flat_rows.insert(slice);
            return Ok((slice, mode));
        }
        // `dist(pts[i], *q)` of rows: a copy of the row, an array by value.
        let row = match arg {
            Expr::Index(index) if !matches!(&*index.index, Expr::Range(_)) => Some(arg),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => Some(&*unary.expr),
            _ => None,
        };
        if let Some(row) = row
            && let Some(slice) = self.slice_arg(row)
        {
            return slice.map(|slice| (slice, Mode::Copy));
        }
        if let Some(slice) = self.slice_arg(arg) {
            let mode = match arg {
                Expr::Reference(reference) if reference.mutability.is_some() => Mode::Mut,
                _ => Mode::Ref,
            };
            return slice.map(|slice| (slice, mode));
        }
        // `h(&g(x))`: the buffer `g` returns, lent to `h`.
        if let Expr::Reference(reference) = arg
            && reference.mutability.is_none()
            && let Some((func, call)) = self.user_call_of(&reference.expr)
        {
            return self
                .user_call_buffer(func, call)
                .map(|buf| (buf, Mode::Ref));
        }
        if let Expr::Reference(reference) = arg {
            let inner = match &*reference.expr {
                Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => &*unary.expr,
                inner => inner,
            };
            let mode = if reference.mutability.is_some() {
                Mode::Mut
            } else {
                Mode::Ref
            };
            // `mean(&[x, 2.0 * y])`: an array made for the call, lent.
            if matches!(super::strip_parens(inner), Expr::Array(_) | Expr::Repeat(_)) {
                return self.expr(inner).map(|buf| (buf, mode));
            }
            return match self.buffer_of(inner) {
                Some(buf) => Ok((buf?, mode)),
                None => self
                    .unsupported(arg, msg::CALL_REFERENCE)
                    .map(|value| (value, Mode::Val)),
            };
        }
        // `qmul(qmul(a, b), c)` of a function returning an array: the
        // inner call's buffer, passed by value.
        if let Some((func, call)) = self.user_call_of(arg)
            && self.buffer_callee.as_ref() == Some(&func.path.to_token_stream().to_string())
        {
            return self
                .user_call_buffer(func, call)
                .map(|buf| (buf, Mode::Copy));
        }
        // `g(*a)` of an array parameter `a: &[f64; 3]`: a copy.
        if let Expr::Unary(unary) = arg
            && matches!(unary.op, syn::UnOp::Deref(_))
            && let Some(buf) = self.buffer_of(&unary.expr)
        {
            return buf.map(|buf| (buf, Mode::Copy));
        }
        let value = self.expr(arg)?;
        let func = self.builder.func();
        match func.ty(value) {
            // An array taken by value, or a local one: passed by value, a copy.
            Ty::Buf(_)
                if self.by_value.contains_key(&value)
                    || !(func.is_param(value) || is_vec(func, value)) =>
            {
                Ok((value, Mode::Copy))
            }
            Ty::Buf(_) | Ty::Struct => match func.inst(value) {
                Inst::Param(index) if func.params[*index as usize].mutable => {
                    Ok((value, Mode::Mut))
                }
                Inst::Param(_) => Ok((value, Mode::Ref)),
                _ => self
                    .unsupported(arg, msg::CALL_BUFFER_BY_VALUE)
                    .map(|value| (value, Mode::Val)),
            },
            _ => Ok((value, Mode::Val)),
        }
    }
}
