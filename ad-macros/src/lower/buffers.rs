//! Lowering buffers: element reads and writes, local `Vec`s and arrays,
//! iteration over elements, reductions, and the runtime's coarse primitives.
//!
//! A buffer is one IR value (a handle) for its whole life; reads and writes
//! of its elements are instructions in program order.
//!
//! ```text
//! let mut v = vec![0.0; n];          %3: [float] = buf.vec [%1; %2]   ; v
//! v[i] = x * x;                 ⇒    %5: () = store %3[%i] = %4
//! v[i] += y;                         %6: () = store %3[%i] add= %y
//! for &x in xs.iter() { … }          for %0..len %xs { %x = load %xs[arg 0] … }
//! ```

use proc_macro2::{Literal, Span};
use quote::{ToTokens, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprIndex, ExprMethodCall, Token};

use super::{Lower, Lowered, Poison};
use crate::diag::msg;
use crate::ir::{BinOp, Callee, Const, Inst, LoopRange, Mode, NewBuf, Ty, Value};

/// An element of a buffer that a loop variable of `iter_mut()` stands for:
/// reading the variable reads the element, `*v = …` writes it.
#[derive(Clone)]
pub(crate) struct ElementPlace {
    pub(super) name: String,
    pub(super) buf: Value,
    pub(super) index: Value,
    /// How many scopes were open when it was bound: a `let` of the same name
    /// in a later scope shadows it.
    pub(super) depth: usize,
}

/// An element read, reused by a later read of the same element (see
/// [`Lower::load`]).
pub(super) struct LoadSeen {
    buf: Value,
    index: Value,
    value: Value,
    /// The builder's stretch when it was read.
    stretch: usize,
}

/// The arguments of `vec![…]`.
enum VecArgs {
    Repeat(Box<(Expr, Expr)>),
    List(Vec<Expr>),
}

impl Lower<'_> {
    /// The buffer an expression names: `xs`, `&xs`, `&mut xs`, `(xs)`; `None`
    /// if it names no buffer.
    pub(super) fn buffer_of(&mut self, expr: &Expr) -> Option<Lowered> {
        match expr {
            // `&g(x)`: the buffer a call of the user's returns (`sum(&g(x))`).
            Expr::Reference(reference)
                if let Some((func, call)) = self.user_call_of(&reference.expr) =>
            {
                Some(self.user_call_buffer(func, call))
            }
            Expr::Reference(reference) => self.buffer_of(&reference.expr),
            Expr::Paren(paren) => self.buffer_of(&paren.expr),
            Expr::Group(group) => self.buffer_of(&group.expr),
            Expr::Field(field) => self.field(field, true),
            Expr::Path(path) => {
                let Some(name) = super::expr::local_name(expr) else {
                    return self.constant_buffer(path);
                };
                if self.element(&name).is_some() {
                    return None;
                }
                let Some(value) = self.lookup(&name) else {
                    return self.constant_buffer(path);
                };
                match value {
                    Ok(value) if matches!(self.builder.func().ty(value), Ty::Buf(_)) => {
                        Some(Ok(value))
                    }
                    Ok(_) => None,
                    Err(Poison) => Some(Err(Poison)),
                }
            }
            _ => None,
        }
    }

    /// `GW` of `const GW: [f64; 3] = …;` outside the function (or
    /// `tables::GW`), read as a buffer (indexed, iterated, lent): constant
    /// data, read where it is. A constant is told by its name, in upper
    /// case as Rust's naming lints want it.
    fn constant_buffer(&mut self, path: &syn::ExprPath) -> Option<Lowered> {
        if !self.names_table(path) {
            return None;
        }
        // At the top of the body, as every buffer (in a loop too).
        let tokens = path.to_token_stream();
        let ty = Ty::Buf(Box::new(Ty::Float));
        Some(Ok(self.push_at_top(
            Inst::Const(Const::Path(tokens)),
            ty,
            path.span(),
        )))
    }

    /// Whether `path` names a table outside the function (see
    /// [`is_constant_path`]) that no local of the body shadows.
    fn names_table(&self, path: &syn::ExprPath) -> bool {
        is_constant_path(path)
            && self
                .special(&path.path.segments[0].ident.to_string())
                .is_none()
    }

    /// The element a loop variable of `iter_mut()` stands for, unless a later
    /// `let` shadows it.
    pub(super) fn element(&self, name: &str) -> Option<(Value, Value)> {
        let place = self
            .elements
            .iter()
            .rev()
            .find(|place| place.name == name)?;
        let shadowed = self.scopes[place.depth.min(self.scopes.len())..]
            .iter()
            .any(|scope| scope.contains(name));
        (!shadowed).then_some((place.buf, place.index))
    }

    /// A buffer of `len` elements made where the function's body is (before
    /// the loop or branch being lowered), so that its shadow and its tapes
    /// are those of any buffer of the body; here, where it is written, its
    /// elements are set to `fill` (or left for the caller to write). Each
    /// iteration sees a fresh buffer, as in the function. `len` must be
    /// known before the loop; `array` is an array's length as written.
    pub(super) fn hoisted_buf(
        &mut self,
        node: impl ToTokens,
        fill: Option<Value>,
        elem: Ty,
        len: Value,
        array: Option<proc_macro2::TokenStream>,
        span: Span,
    ) -> Lowered {
        let Some(top_len) = self.before_regions(len, span) else {
            let of_output = self.reads_output_len(len);
            let message = if of_output {
                msg::OUTPUT_COPY_IN_REGION
            } else {
                msg::BUFFER_IN_REGION
            };
            return self.unsupported(node, message);
        };
        let zero = self.push_at_top(Inst::Const(Const::Zero), elem.clone(), span);
        let new = match array {
            Some(len) => NewBuf::Array { fill: zero, len },
            None => NewBuf::Vec {
                fill: zero,
                len: top_len,
            },
        };
        let buf = self.push_at_top(Inst::NewBuf(new), Ty::Buf(Box::new(elem)), span);
        self.fixed_len.insert(buf);
        if let Some(fill) = fill {
            let start = self.usize_lit(0, span);
            self.index_loop(start, len, span, |this, index| {
                this.write_element((buf, index), None, fill, span);
            })?;
        }
        Ok(buf)
    }

    /// `to = from;` between buffers: the elements copied, after a check
    /// that the lengths agree (`#[differentiate]` keeps one buffer per
    /// variable, so it cannot take `from`'s length).
    pub(super) fn copy_buffer(
        &mut self,
        from: Value,
        to: Value,
        target: &Expr,
    ) -> Result<(), Poison> {
        let span = target.span();
        let shown = quote::ToTokens::to_token_stream(target).to_string();
        let message = format!(
            "`#[differentiate]` copies the buffer assigned to `{shown}` into it: the lengths must agree"
        );
        let (_, len) = self.lengths_agree(to, from, &message, span)?;
        self.copy_elements(from, to, len, span)
    }

    /// `std::mem::swap(&mut a, &mut b)` of two buffers: the elements
    /// swapped one by one, after the same check.
    pub(super) fn swap_buffers(&mut self, a: Value, b: Value, span: Span) -> Result<(), Poison> {
        let message = "`#[differentiate]` swaps buffers element by element: the lengths must agree";
        let (a_len, _) = self.lengths_agree(a, b, message, span)?;
        let start = self.usize_lit(0, span);
        self.index_loop(start, a_len, span, |this, index| {
            this.exchange((a, index), (b, index), span);
        })
    }

    /// `assert_eq!(left.len(), right.len(), message)` where the function
    /// would have moved one buffer into another's variable; the two lengths.
    fn lengths_agree(
        &mut self,
        left: Value,
        right: Value,
        message: &str,
        span: Span,
    ) -> Result<(Value, Value), Poison> {
        let left_len = self.push(Inst::Len(left), Ty::Int, span);
        let right_len = self.push(Inst::Len(right), Ty::Int, span);
        let left_name = proc_macro2::Ident::new("__ad_left_len", span);
        let right_name = proc_macro2::Ident::new("__ad_right_len", span);
        let check = quote::quote_spanned!(span=>
            ::core::assert_eq!(#left_name, #right_name, #message););
        let values = vec![(left_name, left_len), (right_name, right_len)];
        self.effect_with(check, values, span)?;
        Ok((left_len, right_len))
    }

    /// `for j in start..end { body(j) }`, carrying nothing.
    pub(super) fn index_loop(
        &mut self,
        start: Value,
        end: Value,
        span: Span,
        body: impl FnOnce(&mut Self, Value),
    ) -> Result<(), Poison> {
        let range = LoopRange {
            start,
            end,
            inclusive: false,
            step: None,
            reversed: false,
            checkpoint: None,
        };
        let carried = self.carried_body(Default::default(), span, |this, index| {
            body(this, index);
            Ok(None)
        });
        self.finish_for(range, carried, span)
    }

    /// A copy of `buf` (`clone` keeps its type, else a `Vec`). In a loop, a
    /// buffer made before it, overwritten with the elements here.
    pub(super) fn copy_of(
        &mut self,
        buf: Value,
        clone: bool,
        node: impl ToTokens,
        span: Span,
    ) -> Lowered {
        if self.builder.depth() > 0 {
            // A copy of a view (the prefix a shrinking buffer is, the items
            // a filter kept), whose length may be found in the loop.
            if let Inst::Slice { buf, start, len } = *self.builder.func().inst(buf) {
                let view = super::iter::View { buf, start, len };
                return self.view_to_vec(view, &node.to_token_stream(), span);
            }
            let elem = self.elem_ty(buf);
            let len = self.push(Inst::Len(buf), Ty::Int, span);
            // A copy of an array is an array (passed on by value, copied by `let`).
            let array = self.array_len(buf);
            let copy = self.hoisted_buf(node, None, elem, len, array, span)?;
            self.copy_elements(buf, copy, len, span)?;
            if self.may_be_array(buf) {
                self.arrays.insert(copy);
            }
            return Ok(copy);
        }
        let ty = self.builder.func().ty(buf).clone();
        Ok(self.push(
            Inst::CloneBuf {
                src: buf,
                clone,
                saved: false,
            },
            ty,
            span,
        ))
    }

    /// The length of `buf` as written, if it is an array made in the body
    /// or taken by value (or a copy of one).
    pub(super) fn array_len(&self, buf: Value) -> Option<proc_macro2::TokenStream> {
        match self.builder.func().inst(buf) {
            Inst::NewBuf(NewBuf::Array { len, .. }) => Some(len.clone()),
            Inst::Param(_) => self.by_value.get(&buf).cloned(),
            Inst::CloneBuf {
                src, clone: true, ..
            } => self.array_len(*src),
            _ => None,
        }
    }

    /// `v.sort_by(cmp)` (or `sort_unstable_by`): the order the user's
    /// comparison gives, found as written by `__ad::sort_order` (a stable
    /// sort of the positions), then the elements gathered in that order
    /// from a copy, `v[k] = copy[order[k]]`. The adjoint scatters back
    /// through the same order; nothing else about sorting is differentiated.
    fn sort_by(&mut self, buf: Value, call: &ExprMethodCall, span: Span) -> Lowered {
        if self.builder.depth() > 0 {
            return self.unsupported(&call.method, msg::SORT_IN_REGION);
        }
        let cmp = &call.args[0];
        let sorted = proc_macro2::Ident::new("__ad_sorted", span);
        let tokens =
            quote::quote_spanned!(span=> ::ad_runtime::__private::sort_order(#sorted, #cmp));
        let order = self.as_written(
            tokens,
            cmp.to_token_stream(),
            vec![(sorted, buf)],
            Ty::Buf(Box::new(Ty::Int)),
            span,
        )?;
        self.builder.name(order, "order");
        let len = self.push(Inst::Len(buf), Ty::Int, span);
        let copy = self.copy_of(buf, false, call, span)?;
        self.builder.name(copy, "unsorted");
        let start = self.usize_lit(0, span);
        self.index_loop(start, len, span, |this, k| {
            let from = this.load(order, k, span);
            let x = this.load(copy, from, span);
            this.write_element((buf, k), None, x, span);
        })?;
        Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
    }

    /// An array parameter taken by value, bound or returned as a whole
    /// (`let mut b = a;`, `a` as the output): a copy, since the generated
    /// functions hold it by reference.
    pub(super) fn by_value_copy(&mut self, value: Value, node: &impl ToTokens) -> Lowered {
        if !self.by_value.contains_key(&value) {
            return Ok(value);
        }
        let span = node.span();
        self.copy_of(value, true, node, span)
    }

    /// `copy[j] = src[j]` for `j` in `0..len`.
    fn copy_elements(
        &mut self,
        src: Value,
        copy: Value,
        len: Value,
        span: Span,
    ) -> Result<(), Poison> {
        let start = self.usize_lit(0, span);
        self.index_loop(start, len, span, |this, index| {
            let x = this.load(src, index, span);
            this.write_element((copy, index), None, x, span);
        })
    }

    /// `a[i]` and `b[j]` exchanged: both read, then both written, as
    /// `swap` does.
    fn exchange(&mut self, (a, i): (Value, Value), (b, j): (Value, Value), span: Span) {
        let x = self.load(a, i, span);
        let y = self.load(b, j, span);
        self.write_element((a, i), None, y, span);
        self.write_element((b, j), None, x, span);
    }

    /// The `len` elements of `buf` from `start` (`None`: 0) reversed: the
    /// two halves exchanged pairwise, as `reverse` does.
    fn reverse_range(
        &mut self,
        buf: Value,
        start: Option<Value>,
        len: Value,
        span: Span,
    ) -> Result<(), Poison> {
        let two = self.usize_lit(2, span);
        let half = self.int_op(BinOp::Div, len, two, span);
        // `v[..1].reverse()`: nothing to exchange, and no `0..0` loop that
        // clippy would report in the user's code.
        if self.int_const(half) == Some(0) {
            return Ok(());
        }
        let zero = self.usize_lit(0, span);
        self.index_loop(zero, half, span, |this, i| {
            let one = this.usize_lit(1, span);
            let last = this.int_op(BinOp::Sub, len, one, span);
            let j = this.int_op(BinOp::Sub, last, i, span);
            let (at_i, at_j) = match start {
                Some(start) => (
                    this.int_op(BinOp::Add, start, i, span),
                    this.int_op(BinOp::Add, start, j, span),
                ),
                None => (i, j),
            };
            this.exchange((buf, at_i), (buf, at_j), span);
        })
    }

    /// `buf[start..start + len]` rotated left by `k` (right, unless
    /// `left`), as `rotate_left` does it: a `k` past the length panics with
    /// its message, then the part before the cut and the part after it are
    /// reversed, and then the whole.
    fn rotate(
        &mut self,
        buf: Value,
        start: Option<Value>,
        len: Value,
        k: Value,
        left: bool,
        span: Span,
    ) -> Result<(), Poison> {
        let (k_name, len_name) = (
            proc_macro2::Ident::new("__ad_k", span),
            proc_macro2::Ident::new("__ad_len", span),
        );
        // The message of the slice's own assertion, which names its
        // parameter.
        let message = match left {
            true => "assertion failed: mid <= self.len()",
            false => "assertion failed: k <= self.len()",
        };
        let check = quote_spanned!(span=> ::core::assert!(#k_name <= #len_name, #message););
        let _ = self.effect_with(check, vec![(k_name, k), (len_name, len)], span);
        let mid = match left {
            true => k,
            false => self.int_op(BinOp::Sub, len, k, span),
        };
        let rest = self.int_op(BinOp::Sub, len, mid, span);
        let cut = match start {
            Some(start) => self.int_op(BinOp::Add, start, mid, span),
            None => mid,
        };
        self.reverse_range(buf, start, mid, span)?;
        self.reverse_range(buf, Some(cut), rest, span)?;
        self.reverse_range(buf, start, len, span)
    }

    /// Elements `i` and `j` of `view` exchanged (an index past the range's
    /// end panics, as the range's own check would).
    fn swap_in_view(&mut self, view: super::iter::View, i: Value, j: Value, span: Span) {
        let len_name = proc_macro2::Ident::new("__ad_len", span);
        let (i_name, j_name) = (
            proc_macro2::Ident::new("__ad_i", span),
            proc_macro2::Ident::new("__ad_j", span),
        );
        let check = quote_spanned!(span=>
            ::core::assert!(#i_name < #len_name && #j_name < #len_name, "index out of bounds: the len is {} but the index is {}", #len_name, #i_name.max(#j_name));
        );
        let _ = self.effect_with(
            check,
            vec![(i_name, i), (j_name, j), (len_name, view.len)],
            span,
        );
        let at_i = self.int_op(BinOp::Add, view.start, i, span);
        let at_j = self.int_op(BinOp::Add, view.start, j, span);
        self.exchange((view.buf, at_i), (view.buf, at_j), span);
    }

    /// `view.copy_from_slice(&src)` (after the check Rust makes, with its
    /// message) or `view.fill(x)`: each element of the range written.
    fn write_view(
        &mut self,
        view: super::iter::View,
        method: &str,
        arg: &Expr,
        span: Span,
    ) -> super::Lowered {
        let source = if method == "fill" {
            Err(self.expr(arg)?)
        } else {
            let src = self.source_buffer(arg)?;
            // A range as long as the destination by construction: no check.
            if matches!(self.builder.func().inst(src), Inst::Slice { len, .. } if *len == view.len)
            {
                return self.copy_into_view(view, Ok(src), span);
            }
            let src_len = self.push(Inst::Len(src), Ty::Int, span);
            let (src_name, dst_name) = (
                proc_macro2::Ident::new("__ad_source_len", span),
                proc_macro2::Ident::new("__ad_destination_len", span),
            );
            let check = quote_spanned!(span=>
                ::core::assert!(
                    #src_name == #dst_name,
                    "source slice length ({}) does not match destination slice length ({})",
                    #src_name,
                    #dst_name,
                );
            );
            self.effect_with(check, vec![(src_name, src_len), (dst_name, view.len)], span)?;
            Ok(src)
        };
        self.copy_into_view(view, source, span)
    }

    /// Writes each element of `view`: from the buffer `Ok(src)`, or the
    /// value `Err(x)`.
    fn copy_into_view(
        &mut self,
        view: super::iter::View,
        source: Result<Value, Value>,
        span: Span,
    ) -> super::Lowered {
        let start = self.usize_lit(0, span);
        self.index_loop(start, view.len, span, |this, i| {
            let x = match source {
                Ok(src) => this.load(src, i, span),
                Err(value) => value,
            };
            let at = this.int_op(BinOp::Add, view.start, i, span);
            this.write_element((view.buf, at), None, x, span);
        })?;
        Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
    }

    /// An instruction placed in the function's body, before the loops and
    /// branches being lowered.
    pub(super) fn push_at_top(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        let value = self.builder.push_detached(inst, ty, span);
        self.builder.func_mut().body.insts.push(value);
        value
    }

    /// The same integer computed in the function's body, before the loops
    /// and branches being lowered: `value` itself if it is defined there;
    /// a copy of a constant, of a parameter's (or fixed-length buffer's)
    /// length, or of integer arithmetic on such values; `None` otherwise.
    fn before_regions(&mut self, value: Value, span: Span) -> Option<Value> {
        let func = self.builder.func();
        if matches!(func.inst(value), Inst::Param(_)) || func.body.insts.contains(&value) {
            return Some(value);
        }
        let ty = func.ty(value).clone();
        match func.inst(value).clone() {
            Inst::Const(constant) => Some(self.push_at_top(Inst::Const(constant), ty, span)),
            Inst::Len(buf) => self.len_before_regions(buf, span),
            Inst::Binary(op, a, b) if ty == Ty::Int => {
                let a = self.before_regions(a, span)?;
                let b = self.before_regions(b, span)?;
                Some(self.push_at_top(Inst::Binary(op, a, b), ty, span))
            }
            Inst::Prim(prim, args) if ty == Ty::Int => {
                let args = args
                    .into_iter()
                    .map(|arg| self.before_regions(arg, span))
                    .collect::<Option<Vec<_>>>()?;
                Some(self.push_at_top(Inst::Prim(prim, args), ty, span))
            }
            _ => None,
        }
    }

    /// Whether the integer `value` depends on the length of a call's output
    /// buffer in a loop, which is not known before the call.
    fn reads_output_len(&self, value: Value) -> bool {
        let func = self.builder.func();
        match func.inst(value) {
            Inst::Len(buf) => matches!(func.inst(*buf), Inst::NewBuf(NewBuf::Output)),
            Inst::Binary(_, a, b) => self.reads_output_len(*a) || self.reads_output_len(*b),
            Inst::Prim(_, args) => args.iter().any(|&arg| self.reads_output_len(arg)),
            _ => false,
        }
    }

    /// A bound on the length `value` computed before the loops and branches
    /// being lowered, and whether it is the value itself: the value if it is
    /// available there, else a bound of one operand of a `min` (`min(n,
    /// rest)`, the length of a row of `chunks(n)`), of `n` in the count
    /// `(start + n).saturating_sub(start)` of a sequence over a sub-slice,
    /// written `max(start + n, start) - start`, which is `n` for lengths,
    /// of `len` in `len - k` (`x[k..]`), of `a` in `a / b`, of `k` in
    /// `v[..k]` (`v.len()`, see `Lower::slice_bounds`), or the sum (larger)
    /// of bounds of both operands of a `+` (`max`).
    fn bound_before_regions(&mut self, value: Value, span: Span) -> Option<(Value, bool)> {
        if let Some(value) = self.before_regions(value, span) {
            return Some((value, true));
        }
        self.bound_of_arithmetic(value, span).or_else(|| {
            // `k` of `v[..k]`, `b - a` of `v[a..b]`: at most `v.len()`.
            let whole = *self.slice_bounds.get(&value)?;
            self.before_regions(whole, span).map(|bound| (bound, false))
        })
    }

    /// `buf.len()` computed before the loops and branches being lowered, if
    /// `buf` is made there and keeps its length.
    fn len_before_regions(&mut self, buf: Value, span: Span) -> Option<Value> {
        let func = self.builder.func();
        let at_top = func.is_param(buf) || func.body.insts.contains(&buf);
        // A call's output buffer in a loop is empty until the call.
        let output = matches!(func.inst(buf), Inst::NewBuf(NewBuf::Output));
        if !at_top || output || self.grown.contains(&buf) {
            return None;
        }
        self.fixed_len.insert(buf);
        Some(self.push_at_top(Inst::Len(buf), Ty::Int, span))
    }

    /// A bound of `value` before the regions from the arithmetic making it.
    fn bound_of_arithmetic(&mut self, value: Value, span: Span) -> Option<(Value, bool)> {
        let func = self.builder.func();
        let operand = match func.inst(value) {
            Inst::Prim(crate::ir::Prim::Min, args) => {
                let args = args.clone();
                return args
                    .into_iter()
                    .find_map(|arg| self.bound_before_regions(arg, span))
                    .map(|(bound, _)| (bound, false));
            }
            // The items of `a.chain(b)`: the sum of the parts' bounds; of a
            // `max`, the larger bound.
            &Inst::Binary(BinOp::Add, a, b) if func.ty(value) == &Ty::Int => {
                return self.both_bounded(a, b, |a, b| Inst::Binary(BinOp::Add, a, b), span);
            }
            Inst::Prim(crate::ir::Prim::Max, args) if args.len() == 2 => {
                let (a, b) = (args[0], args[1]);
                return self.both_bounded(
                    a,
                    b,
                    |a, b| Inst::Prim(crate::ir::Prim::Max, vec![a, b]),
                    span,
                );
            }
            // `a / b` of unsigned integers is at most `a` (`b` = 0 panics):
            // the rows of `chunks(k)`, `(len + k - 1) / k`.
            &Inst::Binary(BinOp::Div, a, _) if func.ty(value) == &Ty::Int => a,
            &Inst::Binary(BinOp::Sub, larger, start) => match func.inst(larger) {
                Inst::Prim(crate::ir::Prim::Max, args) if args[1] == start => {
                    match *func.inst(args[0]) {
                        Inst::Binary(BinOp::Add, from, n) if from == start => n,
                        _ => larger,
                    }
                }
                // `len - k` of unsigned integers is at most `len`.
                _ => larger,
            },
            _ => return None,
        };
        self.bound_before_regions(operand, span)
            .map(|(bound, _)| (bound, false))
    }

    /// `combine` of bounds of `a` and `b` before the regions, if both have
    /// one (a bound, never the value itself).
    fn both_bounded(
        &mut self,
        a: Value,
        b: Value,
        combine: impl FnOnce(Value, Value) -> Inst,
        span: Span,
    ) -> Option<(Value, bool)> {
        let (a, _) = self.bound_before_regions(a, span)?;
        let (b, _) = self.bound_before_regions(b, span)?;
        Some((self.push_at_top(combine(a, b), Ty::Int, span), false))
    }

    /// A buffer for `len` elements written in a loop or a branch, made
    /// before it (see [`Lower::hoisted_buf`]), and the value standing for
    /// the elements: the buffer itself, or, when only a bound of `len` is
    /// known before the loop (`collect()` of a row of `chunks(n)`: at most
    /// `n`), the buffer made that long and its first `len` elements.
    pub(super) fn hoisted_prefix(
        &mut self,
        node: impl ToTokens,
        elem: Ty,
        len: Value,
        span: Span,
    ) -> Result<(Value, Value), Poison> {
        let Some((bound, exact)) = self.bound_before_regions(len, span) else {
            // Reported as a buffer of unknown length.
            return self
                .hoisted_buf(node, None, elem, len, None, span)
                .map(|buf| (buf, buf));
        };
        let buf = self.hoisted_buf(node, None, elem, bound, None, span)?;
        if exact {
            return Ok((buf, buf));
        }
        Ok((buf, self.prefix(buf, len, span)))
    }

    /// The first `len` elements of `buf`, `&buf[0..][..len]`.
    pub(super) fn prefix(&mut self, buf: Value, len: Value, span: Span) -> Value {
        let start = self.usize_lit(0, span);
        let ty = self.ty(buf);
        self.push(Inst::Slice { buf, start, len }, ty, span)
    }

    /// `&x[a..b]` (or a name bound to a sub-slice) passed to a call: an
    /// [`Inst::Slice`] of the buffer. `None` if `arg` is no sub-slice.
    pub(super) fn slice_arg(&mut self, arg: &Expr) -> Option<Lowered> {
        let view = self.view_of(arg)?;
        Some(view.map(|view| {
            let ty = self.builder.func().ty(view.buf).clone();
            let slice = Inst::Slice {
                buf: view.buf,
                start: view.start,
                len: view.len,
            };
            self.push(slice, ty, arg.span())
        }))
    }

    /// The buffer an argument names or borrows: `&xs`, `xs`, `&xs[a..b]`.
    fn source_buffer(&mut self, arg: &Expr) -> Lowered {
        if let Some(slice) = self.slice_arg(arg) {
            return slice;
        }
        match self.buffer_of(arg) {
            Some(buf) => buf,
            None => self.unsupported(arg, msg::BUFFER_ARGUMENT),
        }
    }

    /// `v.push(value)`.
    pub(super) fn push_elem(&mut self, buf: Value, value: Value, span: Span) -> Value {
        self.refine_elem(buf, value);
        self.push(Inst::PushElem(buf, value), Ty::Unit, span)
    }

    /// `s.to_vec()` of a sub-slice: a new `Vec` of its elements.
    pub(super) fn view_to_vec(
        &mut self,
        view: super::iter::View,
        call: &dyn ToTokens,
        span: Span,
    ) -> Lowered {
        let elem = self.elem_ty(view.buf);
        if self.builder.depth() > 0 {
            // In a loop or a branch: a buffer made before it, as long as the
            // view or a bound of its length (a chunk's), overwritten here.
            let bounded = self.bound_before_regions(view.len, span).is_some();
            let (buf, copy) = match self.len_before_regions(view.buf, span) {
                // `x[..k].to_vec()` of a `k` found in the loop (the items
                // a filter kept): at most the length of the buffer it is
                // cut from (a longer view would have panicked).
                Some(whole) if !bounded => {
                    let buf = self.hoisted_buf(call, None, elem, whole, None, span)?;
                    (buf, self.prefix(buf, view.len, span))
                }
                _ => self.hoisted_prefix(call, elem, view.len, span)?,
            };
            let start = self.usize_lit(0, span);
            self.index_loop(start, view.len, span, |this, j| {
                let index = this.int_add(view.start, j, span);
                let x = this.load(view.buf, index, span);
                this.write_element((buf, j), None, x, span);
            })?;
            return Ok(copy);
        }
        let copy = self.new_buf(
            NewBuf::Empty {
                capacity: Some(view.len),
            },
            elem,
            span,
        );
        self.push_view(copy, view, span)?;
        Ok(copy)
    }

    /// Pushes the elements of `view` onto `copy`, in order.
    pub(super) fn push_view(
        &mut self,
        copy: Value,
        view: super::iter::View,
        span: Span,
    ) -> Result<(), Poison> {
        let end = self.int_op(BinOp::Add, view.start, view.len, span);
        self.index_loop(view.start, end, span, |this, index| {
            let x = this.load(view.buf, index, span);
            this.push_elem(copy, x, span);
        })
    }

    /// `let w = if c { &a } else { &b[1..] };`, `let d = if c { a } else {
    /// [0.0; 2] };` at the top level of the body: a buffer is never chosen
    /// by a branch, so `w` is a copy of the chosen one, filled in its branch
    /// (its shadow's adjoints go back to the chosen buffer's). `None` if
    /// `expr` is not an `if` whose every branch ends in a buffer, a
    /// sub-slice or an array or `vec!` written out.
    pub(super) fn chosen_buffer(&mut self, expr: &Expr) -> Option<Lowered> {
        let Expr::If(if_expr) = expr else {
            return None;
        };
        if self.builder.depth() > 0 || !self.chooses_buffers(if_expr) {
            return None;
        }
        let copy = self.new_buf(NewBuf::Empty { capacity: None }, Ty::Float, expr.span());
        // It may be an array, which `let e = d;` copies (a reference or a
        // `Vec` it may be too, which nothing writes through or uses again).
        self.arrays.insert(copy);
        Some(self.fill_chosen(copy, if_expr).map(|()| copy))
    }

    /// Whether `expr` is the name of a `&mut` buffer parameter.
    pub(super) fn names_written_param(&self, expr: &Expr) -> bool {
        let func = self.builder.func();
        super::expr::local_name(expr).is_some_and(|name| {
            matches!(self.lookup(&name), Some(Ok(value))
                if matches!(func.inst(value), Inst::Param(index) if func.params[*index as usize].mutable))
        })
    }

    /// Whether every branch of `if_expr` ends in a buffer (see
    /// [`Lower::chosen_buffer`]).
    fn chooses_buffers(&self, if_expr: &syn::ExprIf) -> bool {
        let ends_in_buffer = |block: &syn::Block| match block.stmts.last() {
            Some(syn::Stmt::Expr(tail, None)) => {
                self.names_a_buffer(tail)
                    || matches!(super::strip_parens(tail), Expr::Array(_) | Expr::Repeat(_))
                    || matches!(tail, Expr::Macro(mac) if mac.mac.path.is_ident("vec"))
            }
            _ => false,
        };
        ends_in_buffer(&if_expr.then_branch)
            && match if_expr.else_branch.as_ref().map(|(_, els)| &**els) {
                Some(Expr::Block(els)) => ends_in_buffer(&els.block),
                Some(Expr::If(nested)) => self.chooses_buffers(nested),
                _ => false,
            }
    }

    /// `if c { a } else if d { b } else { vec![] }` as the output of a
    /// function returning a buffer (also what `return` guards become, see
    /// [`super::guards_as_branches`]): a buffer is never chosen by a branch,
    /// so the output is a `Vec` filled, in the branch taken, with the
    /// elements of the buffer that branch ends with (an empty `vec![]` or
    /// `Vec::new()` adds none). At the top level of the body only.
    pub(super) fn output_chosen(&mut self, if_expr: &syn::ExprIf) -> Lowered {
        let span = if_expr.span();
        let copy = self.new_buf(NewBuf::Empty { capacity: None }, Ty::Float, span);
        self.fill_chosen(copy, if_expr)?;
        Ok(copy)
    }

    fn fill_chosen(&mut self, copy: Value, if_expr: &syn::ExprIf) -> Result<(), Poison> {
        let span = if_expr.span();
        let Some((_, els)) = &if_expr.else_branch else {
            return self
                .unsupported(if_expr.if_token, msg::OUTPUT_BRANCH)
                .map(|_| ());
        };
        let cond = self.expr(&if_expr.cond);
        self.branch(
            cond,
            false,
            span,
            |this| this.fill_from_block(copy, &if_expr.then_branch),
            |this| match &**els {
                Expr::If(nested) => this.fill_chosen(copy, nested).map(|()| None),
                Expr::Block(block) => this.fill_from_block(copy, &block.block),
                other => this.unsupported(other, msg::OUTPUT_BRANCH).map(|_| None),
            },
        )?;
        Ok(())
    }

    /// The statements of `block`, then the elements of the buffer it ends
    /// with pushed onto `copy` (or those of the branch taken, when it ends
    /// with another choice).
    fn fill_from_block(
        &mut self,
        copy: Value,
        block: &syn::Block,
    ) -> Result<Option<Value>, Poison> {
        let span = block.span();
        let (tail, init) = match block.stmts.split_last() {
            Some((syn::Stmt::Expr(tail, None), init)) => (Some(tail), init),
            _ => (None, &block.stmts[..]),
        };
        self.in_block(&block.stmts, |this| {
            this.stmts(init, false)?;
            let tail = match tail {
                Some(tail) if is_empty_vec(tail) => return Ok(None),
                Some(Expr::If(nested)) => return this.fill_chosen(copy, nested).map(|()| None),
                Some(tail) => tail,
                None => {
                    this.cx
                        .error_at(block.brace_token.span.close(), msg::OUTPUT_BRANCH);
                    return Err(Poison);
                }
            };
            // `&b`, `&b[1..]`: the elements of the buffer or sub-slice.
            if let Expr::Reference(_) = tail
                && let Some(view) = this.view_or_buffer(tail)
            {
                return this.push_view(copy, view?, span).map(|()| None);
            }
            // `return g(x);`: the buffer the callee returns.
            let chosen = match this.user_call_of(tail) {
                Some((func, call)) => this.user_call_buffer(func, call)?,
                None => this.expr(tail)?,
            };
            if !matches!(this.ty(chosen), Ty::Buf(_)) {
                this.cx.error_at(tail.span(), msg::OUTPUT_BRANCH);
                return Err(Poison);
            }
            let start = this.usize_lit(0, span);
            let len = this.push(Inst::Len(chosen), Ty::Int, span);
            let view = super::iter::View {
                buf: chosen,
                start,
                len,
            };
            this.push_view(copy, view, span).map(|()| None)
        })
    }

    /// Whether `expr` names a buffer the function has that a copy can stand
    /// for: `a`, `&a`, `&a[r]`.
    fn names_a_buffer(&self, expr: &Expr) -> bool {
        let base = match expr {
            Expr::Reference(reference) if reference.mutability.is_none() => {
                match &*reference.expr {
                    Expr::Index(index) => &*index.expr,
                    inner => inner,
                }
            }
            Expr::Path(_) => expr,
            _ => return false,
        };
        // Not a `&mut` parameter: writes through the choice must reach it,
        // and they would reach the copy instead.
        let func = self.builder.func();
        super::expr::local_name(base).is_some_and(|name| {
            self.element(&name).is_none()
                && matches!(self.lookup(&name), Some(Ok(value))
                    if matches!(func.ty(value), Ty::Buf(_))
                        && !matches!(func.inst(value), Inst::Param(index) if func.params[*index as usize].mutable))
        })
    }

    /// `xs[i]`.
    pub(super) fn index(&mut self, expr: &ExprIndex) -> Lowered {
        if let Some(read) = self.table_read(expr) {
            return read;
        }
        let (buf, index) = self.element_at(expr)?;
        Ok(self.load(buf, index, expr.span()))
    }

    /// `M2[i][j]` of a table of rows outside the function (`const M2:
    /// [[f64; 3]; 3]`), at integer indices: constant data, read as written.
    /// `None` for any other indexing.
    fn table_read(&mut self, expr: &ExprIndex) -> Option<Lowered> {
        let mut indices = vec![&*expr.index];
        let mut base = super::strip_parens(&expr.expr);
        while let Expr::Index(inner) = base {
            indices.push(&inner.index);
            base = super::strip_parens(&inner.expr);
        }
        let Expr::Path(path) = base else {
            return None;
        };
        if indices.len() < 2
            || !self.names_table(path)
            || !indices.iter().all(|index| self.is_constant_data(index))
        {
            return None;
        }
        let span = expr.span();
        let mut values = Vec::new();
        let mut tokens = path.to_token_stream();
        for (k, index) in indices.into_iter().rev().enumerate() {
            let value = match self.expr(index) {
                Ok(value) => value,
                Err(Poison) => return Some(Err(Poison)),
            };
            let name = proc_macro2::Ident::new(&format!("__ad_arg{k}"), span);
            tokens = quote_spanned!(span=> #tokens[#name]);
            values.push((name, value));
        }
        Some(Ok(self.call_as_written(tokens, values, Ty::Unknown, span)))
    }

    fn element_at(&mut self, expr: &ExprIndex) -> Result<(Value, Value), Poison> {
        if let Some(view) = self.view_of(&expr.expr) {
            let view = view?;
            let index = self.expr(&expr.index)?;
            let span = expr.span();
            return Ok((view.buf, self.int_op(BinOp::Add, view.start, index, span)));
        }
        let buf = match self.buffer_of(&expr.expr) {
            Some(buf) => buf,
            None => {
                self.expr(&expr.expr)?;
                // `p.pos[i][0]` of a field of rows (`Vec<[f64; 2]>`): the
                // macro sees the field as a buffer of numbers.
                let message = match super::strip_parens(&expr.expr) {
                    Expr::Index(inner)
                        if matches!(super::strip_parens(&inner.expr), Expr::Field(_)) =>
                    {
                        msg::FIELD_OF_ROWS
                    }
                    _ => msg::INDEX_NOT_BUFFER,
                };
                self.cx.error_spanned_by(&expr.expr, message);
                return Err(Poison);
            }
        };
        let index = self.expr(&expr.index);
        if let Ok(index) = index {
            self.int_use(index);
        }
        Ok((buf?, index?))
    }

    /// `buf[index]`; an element read again in the same straight run of code,
    /// with nothing written into its buffer since, is the first read.
    pub(super) fn load(&mut self, buf: Value, index: Value, span: Span) -> Value {
        let stretch = self.builder.stretch();
        self.loads.retain(|load| load.stretch == stretch);
        if let Some(load) = self
            .loads
            .iter()
            .find(|load| load.buf == buf && load.index == index)
        {
            return load.value;
        }
        let elem = self.elem_ty(buf);
        let value = self.push(Inst::Load(buf, index), elem, span);
        self.loads.push(LoadSeen {
            buf,
            index,
            value,
            stretch,
        });
        value
    }

    /// Forgets the reads of a buffer something writes into.
    pub(super) fn forget_loads(&mut self, buf: Value) {
        self.loads.retain(|load| load.buf != buf);
    }

    pub(super) fn elem_ty(&self, buf: Value) -> Ty {
        self.builder
            .func()
            .ty(buf)
            .elem()
            .cloned()
            .expect("a buffer")
    }

    /// The element an assignment writes: `v[i]`, or `*v` for a variable of
    /// `iter_mut()`; `None` if the target is no element.
    pub(super) fn element_target(
        &mut self,
        target: &Expr,
    ) -> Option<Result<(Value, Value), Poison>> {
        match target {
            Expr::Index(index) => Some(self.element_at(index)),
            Expr::Paren(paren) => self.element_target(&paren.expr),
            // `points[i].0 = …` of a row that is a tuple.
            Expr::Field(field) => self.tuple_row_element(field),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                if let Some((take, receiver, last)) = end_mut(&unary.expr) {
                    return self.element_at_end(take, receiver, last);
                }
                let name = super::expr::local_name(&unary.expr)?;
                self.element(&name).map(Ok)
            }
            _ => None,
        }
    }

    /// `*v.last_mut().unwrap()` as a place: the element `v[v.len() - 1]`
    /// (`v[0]` for `first_mut`), after the panic `unwrap` (`expect`) makes
    /// on an empty buffer.
    fn element_at_end(
        &mut self,
        take: &ExprMethodCall,
        receiver: &Expr,
        last: bool,
    ) -> Option<Result<(Value, Value), Poison>> {
        let view = self.view_or_buffer(receiver)?;
        let span = take.span();
        Some(view.and_then(|view| {
            let zero = self.int_lit(0, span);
            let empty = self.binary(BinOp::Eq, view.len, zero, span);
            let index = self.unwrapped(take, empty, span, |this| {
                Ok(this.end_index(view, last, span))
            })?;
            Ok((view.buf, index))
        }))
    }

    /// Where `points[i].0` (`p.1` of a row `p`, or of its copy `let p =
    /// points[i];`) is, of rows that are tuples (`points: &[(f64, f64)]`,
    /// stored flat): `None` if `field` is no such element.
    pub(super) fn tuple_row_element(
        &mut self,
        field: &syn::ExprField,
    ) -> Option<Result<(Value, Value), Poison>> {
        let syn::Member::Unnamed(k) = &field.member else {
            return None;
        };
        let row = match self.view_of(&field.base) {
            Some(row) => row,
            // A copy of a row is a buffer of its own.
            None if self.names_buffer(&field.base) => self.view_or_buffer(&field.base)?,
            None => return None,
        };
        let span = field.span();
        Some(row.map(|row| {
            let offset = self.int_lit(u64::from(k.index), span);
            (row.buf, self.int_add(row.start, offset, span))
        }))
    }

    /// `v[i] = value`, or `v[i] op= value`: `+=` and `-=` update the element
    /// in place, other operators read it, compute and store.
    pub(super) fn write_element(
        &mut self,
        (buf, index): (Value, Value),
        op: Option<BinOp>,
        value: Value,
        span: Span,
    ) {
        self.refine_elem(buf, value);
        match op {
            None => {
                self.push(Inst::Store(buf, index, value), Ty::Unit, span);
            }
            Some(op @ (BinOp::Add | BinOp::Sub)) => {
                self.push(Inst::Update(op, buf, index, value), Ty::Unit, span);
            }
            Some(op) => {
                let old = self.load(buf, index, span);
                let new = self.binary(op, old, value, span);
                self.push(Inst::Store(buf, index, new), Ty::Unit, span);
            }
        }
    }

    /// A buffer of floats of unknown width (`vec![0.0; n]`) takes the width of
    /// what is written into it, and what is written takes the buffer's.
    fn refine_elem(&mut self, buf: Value, value: Value) {
        let elem = self.elem_ty(buf);
        let value_ty = self.ty(value);
        if matches!(elem, Ty::Float | Ty::Unknown) && matches!(value_ty, Ty::F32 | Ty::F64) {
            self.builder.func_mut().insts[buf.index()].ty = Ty::Buf(Box::new(value_ty));
        } else {
            self.builder.refine_ty(value, &elem);
        }
    }

    /// Buffers are made once, in the body: a loop or a branch cannot make one.
    fn at_top_level(&self, node: impl ToTokens) -> Result<(), Poison> {
        if self.builder.depth() > 0 {
            self.cx.error_spanned_by(node, msg::BUFFER_IN_REGION);
            return Err(Poison);
        }
        Ok(())
    }

    fn new_buf(&mut self, new: NewBuf, elem: Ty, span: Span) -> Value {
        self.push(Inst::NewBuf(new), Ty::Buf(Box::new(elem)), span)
    }

    /// `vec![fill; len]`, `vec![a, b, …]`, `vec![]`.
    pub(super) fn vec_macro(&mut self, mac: &syn::Macro) -> Lowered {
        let parser = |input: ParseStream| -> syn::Result<VecArgs> {
            if input.is_empty() {
                return Ok(VecArgs::List(Vec::new()));
            }
            let first: Expr = input.parse()?;
            if input.peek(Token![;]) {
                input.parse::<Token![;]>()?;
                return Ok(VecArgs::Repeat(Box::new((first, input.parse()?))));
            }
            let mut elems = vec![first];
            while !input.is_empty() {
                input.parse::<Token![,]>()?;
                if input.is_empty() {
                    break;
                }
                elems.push(input.parse()?);
            }
            Ok(VecArgs::List(elems))
        };
        let span = mac.span();
        match mac.parse_body_with(parser) {
            Ok(VecArgs::Repeat(repeat)) => {
                let (fill, len) = &*repeat;
                let fill = self.expr(fill);
                let len = self.expr(len);
                let (fill, len) = (fill?, len?);
                let elem = self.ty(fill);
                if self.builder.depth() > 0 {
                    return self.hoisted_buf(mac, Some(fill), elem, len, None, span);
                }
                Ok(self.new_buf(NewBuf::Vec { fill, len }, elem, span))
            }
            Ok(VecArgs::List(elems)) => {
                let (values, elem) = self.elements(&elems)?;
                if self.builder.depth() > 0 {
                    // A fresh `vec![a, b]` in a loop: zeros made before it,
                    // overwritten here.
                    let len = self.usize_lit(values.len(), span);
                    let buf = self.hoisted_buf(mac, None, elem, len, None, span)?;
                    for (position, value) in values.into_iter().enumerate() {
                        let index = self.usize_lit(position, span);
                        self.write_element((buf, index), None, value, span);
                    }
                    return Ok(buf);
                }
                let capacity = Some(self.usize_lit(values.len(), span));
                let buf = self.new_buf(NewBuf::Empty { capacity }, elem, span);
                for value in values {
                    self.refine_elem(buf, value);
                    self.push(Inst::PushElem(buf, value), Ty::Unit, span);
                }
                Ok(buf)
            }
            Err(error) => {
                self.cx.push(error);
                Err(Poison)
            }
        }
    }

    /// The listed elements of a new buffer, and their common type.
    fn elements<'e>(
        &mut self,
        exprs: impl IntoIterator<Item = &'e Expr>,
    ) -> Result<(Vec<Value>, Ty), Poison> {
        let exprs: Vec<&Expr> = exprs.into_iter().collect();
        let values = exprs
            .iter()
            .map(|expr| self.expr(expr))
            .collect::<Result<Vec<_>, _>>()?;
        // `vec![vec![1.0, 2.0], vec![3.0]]`, `vec![a, b]` of `Vec`s: rows
        // that `rows_literal` did not take as a matrix.
        if let Some(at) = values
            .iter()
            .position(|&value| matches!(self.ty(value), Ty::Buf(_)))
        {
            self.cx.error_spanned_by(exprs[at], msg::BUFFER_OF_BUFFERS);
            return Err(Poison);
        }
        let tys: Vec<Ty> = values.iter().map(|&value| self.ty(value)).collect();
        // `[0usize, 2]`, `[true, false]`: constant data; anything with a
        // float (or a constant of unseen type only) is a float buffer.
        let all = |ty: Ty| tys.iter().all(|t| *t == ty || *t == Ty::Unknown);
        let elem = if tys.contains(&Ty::Int) && all(Ty::Int) {
            Ty::Int
        } else if tys.contains(&Ty::Bool) && all(Ty::Bool) {
            Ty::Bool
        } else {
            tys.iter().fold(Ty::Float, |ty, other| ty.join(other))
        };
        Ok((values, elem))
    }

    pub(super) fn usize_lit(&mut self, n: usize, span: Span) -> Value {
        self.push(
            Inst::Const(Const::Lit(Literal::usize_unsuffixed(n))),
            Ty::Int,
            span,
        )
    }

    /// `[fill; N]`.
    pub(super) fn repeat(&mut self, repeat: &syn::ExprRepeat) -> Lowered {
        let fill = self.expr(&repeat.expr)?;
        let elem = self.ty(fill);
        let len = repeat.len.to_token_stream();
        if self.builder.depth() > 0 {
            let span = repeat.span();
            let n = self.push(Inst::Const(Const::Path(len.clone())), Ty::Int, span);
            return self.hoisted_buf(repeat, Some(fill), elem, n, Some(len), span);
        }
        Ok(self.new_buf(NewBuf::Array { fill, len }, elem, repeat.span()))
    }

    /// `[a, b, …]`: an array of zeros, then each element stored.
    pub(super) fn array(&mut self, array: &syn::ExprArray) -> Lowered {
        let span = array.span();
        // `[Act::Relu, Act::Tanh]`: constant data of a type the macro cannot
        // see, made as written.
        if !array.elems.is_empty() && array.elems.iter().all(super::expr::names_variant_value) {
            let ty = Ty::Buf(Box::new(Ty::Unknown));
            return Ok(self.call_as_written(array.to_token_stream(), Vec::new(), ty, span));
        }
        let (values, elem) = self.elements(array.elems.iter())?;
        let len = Literal::usize_unsuffixed(values.len()).into_token_stream();
        let buf = if self.builder.depth() > 0 {
            let n = self.usize_lit(values.len(), span);
            self.hoisted_buf(array, None, elem, n, Some(len), span)?
        } else {
            let fill = self.push(Inst::Const(Const::Zero), elem.clone(), span);
            self.new_buf(NewBuf::Array { fill, len }, elem, span)
        };
        for (position, value) in values.into_iter().enumerate() {
            let index = self.usize_lit(position, span);
            self.write_element((buf, index), None, value, span);
        }
        Ok(buf)
    }

    /// `Vec::new()`, `Vec::with_capacity(n)`.
    pub(super) fn new_vec(&mut self, call: &ExprCall, method: &str) -> Lowered {
        self.at_top_level(call)?;
        let capacity = match (method, call.args.len()) {
            ("new", 0) => None,
            ("with_capacity", 1) => Some(self.expr(&call.args[0])?),
            _ => {
                return self.unsupported(&call.func, msg::call(&format!("Vec::{method}")));
            }
        };
        Ok(self.new_buf(NewBuf::Empty { capacity }, Ty::Float, call.span()))
    }

    /// Methods of buffers: `len`, `push`, `to_vec`, `clone`, and the
    /// reductions `iter().sum()` and `iter().product()`. `None` if the
    /// receiver is no buffer.
    pub(super) fn buffer_method(&mut self, call: &ExprMethodCall) -> Option<Lowered> {
        let name = call.method.unraw().to_string();
        // `x.to_owned()` of a buffer or a view is its `to_vec()`.
        if name == "to_owned" && call.args.is_empty() {
            let mut to_vec = call.clone();
            to_vec.method = syn::Ident::new("to_vec", call.method.span());
            if let Some(copied) = self.buffer_method(&to_vec) {
                return Some(copied);
            }
        }
        // `x.contains(&v)`: whether an element equals `v`, as
        // `x.iter().any(|&e| e == v)` finds (constant data).
        if name == "contains"
            && call.args.len() == 1
            && !matches!(super::strip_parens(&call.receiver), Expr::Range(_))
            && !super::iter::is_iterator_expr(&call.receiver)
        {
            let receiver = &call.receiver;
            let v = super::iter::unreferenced(&call.args[0]);
            let any: ExprMethodCall = syn::parse_quote_spanned! {call.span()=>
                #receiver.iter().any(|&__ad_element| __ad_element == (#v))
            };
            if let Some(item) = self.consume(&any) {
                return Some(item.and_then(|item| self.scalar_item(item, call.span())));
            }
        }
        // `p.t.exp()`: a float method of a field is a float field's.
        if crate::ir::Prim::from_method(&name).is_some() && is_field(&call.receiver) {
            return None;
        }
        if matches!(name.as_str(), "len" | "is_empty")
            && call.args.is_empty()
            && let Some(rows) = self.rows_of(&call.receiver)
        {
            let span = call.span();
            return Some(rows.map(|rows| {
                let len = self.int_op(BinOp::Div, rows.flat.len, rows.width, span);
                match name.as_str() {
                    "len" => len,
                    _ => {
                        let zero = self.int_lit(0, span);
                        self.binary(BinOp::Eq, len, zero, span)
                    }
                }
            }));
        }
        // `m.swap(i, j)` of a matrix (Gaussian elimination's pivoting):
        // the two rows' elements exchanged, one column at a time.
        if name == "swap" && call.args.len() == 2 && self.rows_of(&call.receiver).is_some() {
            let (m, i, j) = (&call.receiver, &call.args[0], &call.args[1]);
            let swapped: Expr = syn::parse_quote_spanned! {call.span()=> {
                let (__ad_a, __ad_b) = (#i, #j);
                for __ad_c in 0..#m[__ad_a].len() {
                    let __ad_t = #m[__ad_a][__ad_c];
                    #m[__ad_a][__ad_c] = #m[__ad_b][__ad_c];
                    #m[__ad_b][__ad_c] = __ad_t;
                }
            }};
            self.expr_stmt(&swapped);
            let span = call.span();
            return Some(Ok(self.push(
                Inst::Tuple(Vec::new()),
                Ty::Tuple(Vec::new()),
                span,
            )));
        }
        if let Some(view) = self.view_of(&call.receiver) {
            return Some(match (name.as_str(), call.args.len()) {
                ("len", 0) => view.map(|view| view.len),
                ("is_empty", 0) => view.map(|view| {
                    let zero = self.int_lit(0, call.span());
                    self.binary(BinOp::Eq, view.len, zero, call.span())
                }),
                // `g[i].clone()` of a row (a `Vec` row, or an array row,
                // copied); of a sub-slice, the reference it copies reads
                // the same elements.
                ("to_vec" | "clone", 0) => {
                    let span = call.span();
                    view.and_then(|view| self.view_to_vec(view, call, span))
                }
                // `v[a..b].copy_from_slice(&src)`, `v[a..].fill(x)`: the
                // range's elements written.
                ("copy_from_slice" | "fill", 1) => {
                    let span = call.span();
                    view.and_then(|view| self.write_view(view, &name, &call.args[0], span))
                }
                // `v[a..b].swap(i, j)`, `v[..k].reverse()`: as of a buffer,
                // at the range's offset.
                ("swap", 2) | ("reverse", 0) => {
                    let span = call.span();
                    view.and_then(|view| {
                        if name == "swap" {
                            let i = self.expr(&call.args[0]);
                            let j = self.expr(&call.args[1]);
                            let (i, j) = (i?, j?);
                            self.swap_in_view(view, i, j, span);
                        } else {
                            // Both indices inside the range by construction.
                            self.reverse_range(view.buf, Some(view.start), view.len, span)?;
                        }
                        Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                    })
                }
                ("rotate_left" | "rotate_right", 1) => {
                    let span = call.span();
                    view.and_then(|view| {
                        let k = self.expr(&call.args[0])?;
                        let left = name == "rotate_left";
                        self.rotate(view.buf, Some(view.start), view.len, k, left, span)?;
                        Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                    })
                }
                _ => self.unsupported(&call.method, msg::view_method(&name)),
            });
        }
        // `N.max(k)`, `SCALE.sqrt()`: a constant that is a buffer has only
        // the methods of constant data.
        if let Expr::Path(path) = &*call.receiver
            && is_constant_path(path)
            && !matches!(name.as_str(), "len" | "is_empty" | "to_vec")
        {
            return None;
        }
        let buf = self.buffer_of(&call.receiver)?;
        let span = call.span();
        Some((|| {
            let buf = buf?;
            match (name.as_str(), call.args.len()) {
                ("len", 0) => Ok(self.push(Inst::Len(buf), Ty::Int, span)),
                ("is_empty", 0) => {
                    let len = self.push(Inst::Len(buf), Ty::Int, span);
                    let zero = self.int_lit(0, span);
                    Ok(self.binary(BinOp::Eq, len, zero, span))
                }
                // `knots.partition_point(|&k| k <= t)`: a search by
                // comparisons, so constant data (an integer), run as written
                // with the buffer lent and the locals the predicate names.
                ("partition_point", 1) => {
                    let receiver = proc_macro2::Ident::new("__ad_receiver", span);
                    let predicate = &call.args[0];
                    let tokens = quote_spanned!(span=> #receiver.partition_point(#predicate));
                    let user = predicate.to_token_stream();
                    self.as_written(tokens, user, vec![(receiver, buf)], Ty::Int, span)
                }
                // `v.fill(x)`: every element written.
                ("fill", 1) => {
                    let value = self.expr(&call.args[0])?;
                    let len = self.push(Inst::Len(buf), Ty::Int, span);
                    let start = self.usize_lit(0, span);
                    self.index_loop(start, len, span, |this, i| {
                        this.write_element((buf, i), None, value, span);
                    })?;
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                // `v.reverse()`: the two halves swapped pairwise.
                ("reverse", 0) => {
                    let len = self.push(Inst::Len(buf), Ty::Int, span);
                    self.reverse_range(buf, None, len, span)?;
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                // `v.rotate_left(k)` (`rotate_right`): three reversals, of
                // the two parts and then of the whole.
                ("rotate_left" | "rotate_right", 1) => {
                    let k = self.expr(&call.args[0])?;
                    let len = self.push(Inst::Len(buf), Ty::Int, span);
                    self.rotate(buf, None, len, k, name == "rotate_left", span)?;
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                // `v.copy_from_slice(&src)`: the lengths checked, then the
                // elements copied.
                ("copy_from_slice", 1) => {
                    let src = self.source_buffer(&call.args[0])?;
                    self.copy_buffer(src, buf, &call.receiver)?;
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                // `v.extend_from_slice(&src)`: each element pushed.
                ("extend_from_slice", 1) => {
                    if self.builder.func().is_param(buf) {
                        return self.unsupported(&call.method, msg::PUSH_ON_PARAM);
                    }
                    if self.fixed_len.contains(&buf) || self.positional.contains_key(&buf) {
                        return self.unsupported(&call.method, msg::PUSH_ON_FIXED);
                    }
                    let src = self.source_buffer(&call.args[0])?;
                    self.grown.insert(buf);
                    let len = self.push(Inst::Len(src), Ty::Int, span);
                    let start = self.usize_lit(0, span);
                    self.index_loop(start, len, span, |this, i| {
                        let x = this.load(src, i, span);
                        this.push_elem(buf, x, span);
                    })?;
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                // `v.swap(i, j)`: both read, then both written, as `swap`
                // does (and panicking where it would).
                ("swap", 2) => {
                    let i = self.expr(&call.args[0]);
                    let j = self.expr(&call.args[1]);
                    let (i, j) = (i?, j?);
                    self.exchange((buf, i), (buf, j), span);
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                ("push", 1) => {
                    if self.builder.func().is_param(buf) {
                        return self.unsupported(&call.method, msg::PUSH_ON_PARAM);
                    }
                    if let Some(key) = self.positional.get(&buf).cloned() {
                        // Written at the position of the push, which moves on.
                        let value = self.expr(&call.args[0])?;
                        let at = self.lookup(&key).expect("bound")?;
                        self.write_element((buf, at), None, value, span);
                        let one = self.usize_lit(1, span);
                        let next = self.int_op(BinOp::Add, at, one, span);
                        self.set_hidden(&key, Ok(next));
                        return Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span));
                    }
                    if self.fixed_len.contains(&buf) {
                        return self.unsupported(&call.method, msg::PUSH_ON_FIXED);
                    }
                    self.grown.insert(buf);
                    let value = self.expr(&call.args[0])?;
                    Ok(self.push_elem(buf, value, span))
                }
                // `v.retain(p)`, `v.truncate(k)`, `v.resize(k, x)`,
                // `v.insert(i, x)`, `v.clear()`: the buffer with the elements kept (or one
                // added) is `v` from here on, outside loops and branches (see
                // `assign_moved`).
                ("retain" | "truncate" | "resize" | "insert" | "clear", _)
                    if let Some(resized) = resized(call) =>
                {
                    if self.builder.func().is_param(buf) {
                        return self.unsupported(&call.method, msg::PUSH_ON_PARAM);
                    }
                    if self.builder.depth() > 0 {
                        return self.unsupported(&call.method, msg::RESIZE_IN_REGION);
                    }
                    let value = self.expr(&resized);
                    self.assign_moved(&call.receiver, value, true);
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
                }
                ("clone", 0) if self.builder.func().is_param(buf) => {
                    self.unsupported(&call.method, msg::CLONE_PARAM)
                }
                ("sort_by" | "sort_unstable_by", 1) => self.sort_by(buf, call, span),
                ("map", 1) => match self.array_map(call) {
                    Some(mapped) => mapped,
                    None => self.unsupported(&call.method, msg::buffer_method(&name)),
                },
                (method @ ("to_vec" | "clone"), 0) => {
                    self.copy_of(buf, method == "clone", call, span)
                }
                _ => self.unsupported(&call.method, msg::buffer_method(&name)),
            }
        })())
    }

    /// A call of one of the runtime's coarse primitives: `ad_runtime::dot(&x,
    /// &y)`, `ad_runtime::matmul(&a, &b, &mut c, m, k, n)`.
    pub(super) fn runtime_call(&mut self, callee: Callee, call: &ExprCall) -> Lowered {
        let modes = callee.modes();
        if call.args.len() != modes.len() {
            return self.unsupported(
                &call.func,
                msg::method_arity(
                    &format!("ad_runtime::{}", callee.name()),
                    modes.len(),
                    call.args.len(),
                ),
            );
        }
        let mut args = Vec::new();
        let mut poisoned = false;
        for (arg, mode) in call.args.iter().zip(modes) {
            let value = match mode {
                Mode::Val => self.expr(arg),
                Mode::Ref | Mode::Mut | Mode::Copy => match self.buffer_of(arg) {
                    Some(buf) => buf,
                    None => match self.slice_arg(arg) {
                        Some(slice) => slice,
                        None => self.unsupported(arg, msg::not_a_buffer(callee.name())),
                    },
                },
            };
            match value {
                Ok(value) => args.push(value),
                Err(Poison) => poisoned = true,
            }
        }
        if poisoned {
            return Err(Poison);
        }
        let elem = args
            .iter()
            .zip(modes)
            .filter(|(_, mode)| **mode != Mode::Val)
            .fold(Ty::Float, |ty, (&buf, _)| ty.join(&self.elem_ty(buf)));
        // The scalar of `axpy` has the buffers' float type.
        if callee == Callee::Axpy {
            self.builder.refine_ty(args[0], &elem);
        }
        let ty = if callee.returns_float() {
            elem
        } else {
            Ty::Unit
        };
        Ok(self.push(Inst::Call(callee, args), ty, call.span()))
    }
}

/// Whether `expr` is a field access, `p.t` or `(p.t)`.
fn is_field(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_field(&paren.expr),
        Expr::Group(group) => is_field(&group.expr),
        Expr::Field(_) => true,
        _ => false,
    }
}

/// Whether `path` names a constant by its case: `W`, `GW`, `tables::GW`,
/// upper case, digits and `_` (a const generic `N` is one too, and is never
/// indexed or iterated: it is read as the number it is).
pub(super) fn is_constant_path(path: &syn::ExprPath) -> bool {
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let name = last.ident.unraw().to_string();
    path.qself.is_none()
        && last.arguments.is_none()
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `vec![]`, `Vec::new()`, `Vec::with_capacity(n)`: an empty `Vec`.
fn is_empty_vec(expr: &Expr) -> bool {
    match super::strip_parens(expr) {
        Expr::Macro(mac) => mac.mac.path.is_ident("vec") && mac.mac.tokens.is_empty(),
        Expr::Call(call) => matches!(&*call.func, Expr::Path(path)
            if path.path.segments.len() == 2
                && path.path.segments[0].ident == "Vec"
                && matches!(path.path.segments[1].ident.to_string().as_str(), "new" | "with_capacity")),
        _ => false,
    }
}

/// `v.last_mut().unwrap()` (or `first_mut`, or `.expect(…)`): the
/// `unwrap`, `v`, and whether it is the last element.
fn end_mut(expr: &Expr) -> Option<(&ExprMethodCall, &Expr, bool)> {
    let Expr::MethodCall(take) = super::strip_parens(expr) else {
        return None;
    };
    let arity = match take.method.to_string().as_str() {
        "unwrap" => 0,
        "expect" => 1,
        _ => return None,
    };
    if take.args.len() != arity {
        return None;
    }
    let Expr::MethodCall(end) = super::strip_parens(&take.receiver) else {
        return None;
    };
    let last = match end.method.to_string().as_str() {
        "last_mut" => true,
        "first_mut" => false,
        _ => return None,
    };
    end.args.is_empty().then_some((take, &*end.receiver, last))
}

/// The new buffer `v.retain(p)`, `v.truncate(k)`, `v.resize(k, x)`,
/// `v.insert(i, x)` or `v.clear()` leaves in `v`, as the chain that makes it; `None` for a receiver that is not a
/// local's name.
pub(super) fn resized(call: &syn::ExprMethodCall) -> Option<Expr> {
    let Expr::Path(receiver) = &*call.receiver else {
        return None;
    };
    let args: Vec<&Expr> = call.args.iter().collect();
    let span = call.span();
    Some(match (call.method.to_string().as_str(), args.as_slice()) {
        ("retain", [keep]) => syn::parse_quote_spanned!(span=>
            #receiver.iter().copied().filter(#keep).collect::<Vec<_>>()
        ),
        ("truncate", [len]) => syn::parse_quote_spanned!(span=>
            #receiver.iter().copied().take(#len).collect::<Vec<_>>()
        ),
        // The fill value is made once, as `resize` takes it, and copied
        // into every new element.
        ("resize", [len, fill]) => syn::parse_quote_spanned!(span=> {
            let __ad_len = #len;
            let __ad_fill = #fill;
            (0..__ad_len)
                .map(|__ad_i| if __ad_i < #receiver.len() { #receiver[__ad_i] } else { __ad_fill })
                .collect::<Vec<_>>()
        }),
        ("clear", []) => syn::parse_quote_spanned!(span=>
            #receiver.iter().copied().take(0).collect::<Vec<_>>()
        ),
        // At the front: no empty half (`v[..0]`, a lint in the expansion).
        (
            "insert",
            [
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(at),
                    ..
                }),
                elem,
            ],
        ) if at.base10_digits() == "0" => {
            syn::parse_quote_spanned!(span=>
                ::std::iter::once(#elem).chain(#receiver.iter().copied()).collect::<Vec<_>>()
            )
        }
        ("insert", [at, elem]) => syn::parse_quote_spanned!(span=>
            #receiver[..#at]
                .iter()
                .copied()
                .chain(::std::iter::once(#elem))
                .chain(#receiver[#at..].iter().copied())
                .collect::<Vec<_>>()
        ),
        _ => return None,
    })
}
