//! Lowering expressions.

use proc_macro2::Span;
use quote::{ToTokens, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Arm, Expr, ExprCall, ExprCast, ExprIf, ExprLit, ExprMatch, ExprMethodCall, ExprPath, Lit, Pat,
    RangeLimits, Stmt,
};

use super::closures::Item;
use super::{Lower, Lowered, Poison, calls, sig};
use crate::diag::msg;
use crate::ir::{self, BinOp, Callee, Const, Inst, Prim, Scalar, Ty, UnOp, Value};

impl Lower<'_> {
    pub(super) fn expr(&mut self, expr: &Expr) -> Lowered {
        match expr {
            Expr::Lit(lit) => self.literal(lit),
            Expr::Path(path) => self.path(path),
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Binary(binary) if let Some(lowered) = self.option_comparison(binary) => lowered,
            Expr::Binary(binary) if let Some(lowered) = self.tuple_comparison(binary) => lowered,
            Expr::Binary(binary) => match binary_op(&binary.op) {
                Some(op) if op.is_logic() && may_panic(&binary.right) => {
                    self.short_circuit(op, binary)
                }
                // `kind == Kind::A` of a parameter the macro cannot see
                // into: compared as written.
                Some(BinOp::Eq | BinOp::Ne)
                    if self.opaque_of(&binary.left).is_some()
                        || self.opaque_of(&binary.right).is_some() =>
                {
                    self.opaque_comparison(binary)
                }
                // `self.act == Act::Relu` of a field: no float.
                Some(op @ (BinOp::Eq | BinOp::Ne))
                    if names_variant_expr(&binary.left) || names_variant_expr(&binary.right) =>
                {
                    let lhs = self.expr(&binary.left);
                    let rhs = self.expr(&binary.right);
                    let (lhs, rhs) = (lhs?, rhs?);
                    self.opaque_use(lhs);
                    self.opaque_use(rhs);
                    Ok(self.binary(op, lhs, rhs, binary.span()))
                }
                Some(op) => {
                    let lhs = self.scalar_expr(&binary.left);
                    let rhs = self.scalar_expr(&binary.right);
                    Ok(self.binary(op, lhs?, rhs?, binary.span()))
                }
                None => self.unsupported(expr, msg::ASSIGN_IN_EXPR),
            },
            Expr::Unary(unary) => {
                let op = match unary.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    // `*x` for an element of `iter()` or `iter_mut()`.
                    syn::UnOp::Deref(_) => return self.expr(&unary.expr),
                    _ => return self.unsupported(unary.op, msg::DEREF),
                };
                let arg = self.scalar_expr(&unary.expr)?;
                if op == UnOp::Not {
                    self.bool_use(arg);
                }
                let ty = match op {
                    UnOp::Neg => self.ty(arg),
                    UnOp::Not => self.ty(arg).join(&Ty::Bool),
                };
                Ok(self.push(Inst::Unary(op, arg), ty, unary.span()))
            }
            Expr::Cast(cast) => self.cast(cast),
            Expr::MethodCall(call) => self.method(call),
            Expr::Call(call) => self.call(call),
            Expr::Match(match_expr) => match self.match_(match_expr, true)? {
                Some(value) => Ok(value),
                None => self.unsupported(match_expr.match_token, msg::MATCH_WITHOUT_VALUE),
            },
            Expr::If(if_expr) => match self.if_(if_expr, true)? {
                Some(value) => Ok(value),
                None => self.unsupported(if_expr.if_token, msg::IF_WITHOUT_VALUE),
            },
            Expr::Block(block) if block.label.is_none() => match self.block(&block.block, true)? {
                Some(value) => Ok(value),
                None => self.unsupported(expr, msg::UNIT_BLOCK),
            },
            Expr::Block(block) => self.unsupported(&block.label, msg::LABELED_BLOCK),
            Expr::Assign(_) => self.unsupported(expr, msg::ASSIGN_IN_EXPR),
            Expr::Macro(mac)
                if mac
                    .mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|seg| seg.ident == "vec") =>
            {
                self.vec_macro(&mac.mac)
            }
            // `cfg!(…)`: a `bool` rustc decides, constant data.
            Expr::Macro(mac) if mac.mac.path.is_ident("cfg") => Ok(self.push(
                Inst::Const(Const::Path(mac.to_token_stream())),
                Ty::Bool,
                mac.span(),
            )),
            Expr::Macro(mac) if super::macros::is_std_macro(&mac.mac, "matches") => {
                self.matches_macro(&mac.mac)
            }
            Expr::Macro(mac) => match self.effect_macro(&mac.mac) {
                Some(lowered) => lowered,
                None => self.unsupported(&mac.mac, msg::macro_(&mac.mac.path)),
            },
            Expr::Index(index) => self.index(index),
            Expr::Field(field) if let Some(element) = self.tuple_element_of(field) => match element
            {
                Ok(key) => self.lookup(&key).expect("bound"),
                Err(Poison) => Err(Poison),
            },
            // `points[i].0`, `p.1` of a row that is a tuple (`points: &[(f64, f64)]`).
            Expr::Field(field) if let Some(element) = self.tuple_row_element(field) => {
                let (buf, at) = element?;
                Ok(self.load(buf, at, expr.span()))
            }
            Expr::Field(field) => match self.field(field, false) {
                Some(lowered) => lowered,
                // `polar(x, y).0`: an element of the tuple a call returns.
                None if matches!(field.member, syn::Member::Unnamed(_))
                    && self.user_call_of(&field.base).is_some() =>
                {
                    self.unsupported(expr, msg::TUPLE_CALL_ELEMENT)
                }
                // `p.w` of `p: Params` by value.
                None if self.opaque_of(&field.base).is_some() => {
                    self.unsupported(&field.base, msg::OPAQUE_USE)
                }
                // `ps[0].mass` of a parameter whose type was rejected.
                None if self.root_poisoned(&field.base) => Err(Poison),
                None => self.unsupported(expr, msg::FIELD_OF_A_NON_STRUCT),
            },
            Expr::Repeat(repeat) => self.repeat(repeat),
            Expr::Array(array) => self.array(array),
            Expr::Return(ret) if !self.returning => {
                self.unsupported(ret.return_token, msg::EARLY_RETURN)
            }
            // Leaving: the value is never read.
            Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => {
                self.expr_stmt(expr);
                Ok(self.push(Inst::Const(Const::Zero), Ty::Unknown, expr.span()))
            }
            // Used as statements they are fine; as values they have none.
            Expr::ForLoop(for_loop) => self.unsupported(for_loop.for_token, msg::LOOP_AS_VALUE),
            Expr::While(while_loop) => self.unsupported(while_loop.while_token, msg::LOOP_AS_VALUE),
            Expr::Loop(loop_expr) => match self.loop_expr(loop_expr, true)? {
                Some(value) => Ok(value),
                None => self.unsupported(loop_expr.loop_token, msg::LOOP_WITHOUT_VALUE),
            },
            Expr::Tuple(_) => self.unsupported(expr, msg::TUPLE_VALUE),
            _ => {
                let (what, instead) = describe(expr);
                let token = leading_token(expr);
                self.cx
                    .error_spanned_by(token, msg::unsupported_expr(what, instead));
                Err(Poison)
            }
        }
    }

    /// `if c { A } else { B }`, an `else if` chain being an `if` in the `else`.
    pub(super) fn if_(&mut self, expr: &ExprIf, want_value: bool) -> Result<Option<Value>, Poison> {
        if let Expr::Let(binding) = &*expr.cond
            && let Some(lowered) = self.option_if_let(expr, binding, want_value, false)
        {
            return lowered;
        }
        if let Expr::Let(binding) = &*expr.cond
            && let Some(lowered) = self.if_let_element(expr, binding, want_value)
        {
            return lowered;
        }
        if let Expr::Let(binding) = &*expr.cond
            && let Some(lowered) = self.if_let_slice(expr, binding, want_value)
        {
            return lowered;
        }
        if let Expr::Let(binding) = &*expr.cond
            && let Some(desugared) = if_let_reduced(expr, binding)
        {
            return self.if_(&desugared, want_value);
        }
        // `if let Some(v) = chain.next()`: any other option made here.
        if let Expr::Let(binding) = &*expr.cond
            && let Some(lowered) = self.option_if_let(expr, binding, want_value, true)
        {
            return lowered;
        }
        let cond = match &*expr.cond {
            // `if let Kind::A = kind` of a parameter the macro cannot see
            // into, or of a field (`if let Act::Tanh = self.act`).
            Expr::Let(binding)
                if self.opaque_of(&binding.expr).is_some() || names_variant(&binding.pat) =>
            {
                self.let_test(binding)
            }
            cond => self.expr(cond),
        };
        self.branch(
            cond,
            want_value,
            expr.span(),
            |this| this.block(&expr.then_branch, want_value),
            |this| this.else_branch(expr, want_value),
        )
    }

    /// The test of `let pattern = scrutinee` as an `if let` makes it, of a
    /// value matched on by its variants.
    fn let_test(&mut self, binding: &syn::ExprLet) -> Lowered {
        let scrutinee = self.scrutinee(&binding.expr)?;
        self.opaque_use(scrutinee);
        match self.pattern(&binding.pat, scrutinee, &mut Vec::new())? {
            Some(cond) => Ok(cond),
            None => Ok(self.push(Inst::Const(Const::Bool(true)), Ty::Bool, binding.span())),
        }
    }

    /// An `if`'s `else`: a block, an `else if`, or nothing.
    pub(super) fn else_branch(
        &mut self,
        expr: &ExprIf,
        want_value: bool,
    ) -> Result<Option<Value>, Poison> {
        match expr.else_branch.as_ref().map(|(_, els)| &**els) {
            None => Ok(None),
            Some(Expr::Block(block)) if block.label.is_none() => {
                self.block(&block.block, want_value)
            }
            Some(Expr::If(inner)) => self.if_(inner, want_value),
            Some(other) => self.expr(other).map(Some),
        }
    }

    /// `if let Some(p) = x.first() { … } else { … }`, and `x.last()`,
    /// `x.get(i)`, each optionally `.copied()` or `.cloned()`, of a buffer
    /// or a sub-slice: `if` the element exists, `p` bound to it in the first
    /// block. `None` if the condition is not of this form.
    fn if_let_element(
        &mut self,
        expr: &ExprIf,
        binding: &syn::ExprLet,
        want_value: bool,
    ) -> Option<Result<Option<Value>, Poison>> {
        let (pattern, outer) = some_of_method(binding)?;
        let (end, copied) = super::iter::through_copied(outer);
        let which = end.method.to_string();
        // `if let Some(&v) = x.iter().find(|&&v| v > 0.0)`: `if` an item
        // passed, `v` bound to the first that did.
        if super::iter::is_find(end) {
            let chain = self.chain_of(&end.receiver)?;
            let span = expr.span();
            return Some(chain.and_then(|chain| {
                let found = self.find(end, chain)?;
                let item = super::iter::element_item(found.value, copied || found.by_value);
                self.branch(
                    Ok(found.found),
                    want_value,
                    span,
                    |this| this.then_bound(pattern, item, expr, want_value),
                    |this| this.else_branch(expr, want_value),
                )
            }));
        }
        // `if let Some(i) = x.iter().position(|&v| v > 0.0)`: `if` an item
        // passed, `i` bound to the position of the first that did.
        if super::iter::is_position(outer) {
            let chain = self.chain_of(&outer.receiver)?;
            let span = expr.span();
            return Some(chain.and_then(|chain| {
                let (seen, at) = self.positioned(outer, chain)?;
                self.branch(
                    Ok(seen),
                    want_value,
                    span,
                    |this| {
                        this.then_bound(pattern, super::closures::Item::Value(at), expr, want_value)
                    },
                    |this| this.else_branch(expr, want_value),
                )
            }));
        }
        match (which.as_str(), end.args.len()) {
            ("first" | "last", 0) | ("get", 1) => {}
            _ => return None,
        }
        let view = self.view_or_buffer(&end.receiver)?;
        let span = expr.span();
        Some((|| {
            let view = view?;
            let index = match which.as_str() {
                "get" => Some(self.scalar_expr(&end.args[0])?),
                _ => None,
            };
            // Whether the element exists: `len > 0`, or `i < len`.
            let cond = match index {
                Some(index) => Ok(self.binary(BinOp::Lt, index, view.len, span)),
                None => {
                    let zero = self.int_lit(0, span);
                    Ok(self.binary(BinOp::Gt, view.len, zero, span))
                }
            };
            self.branch(
                cond,
                want_value,
                span,
                |this| {
                    let at = match index {
                        Some(index) => this.int_add(view.start, index, span),
                        None => this.end_index(view, which == "last", span),
                    };
                    let element = this.load(view.buf, at, span);
                    let item = super::iter::element_item(element, copied);
                    this.then_bound(pattern, item, expr, want_value)
                },
                |this| this.else_branch(expr, want_value),
            )
        })())
    }

    /// `(a..b).contains(&v)` (`a..=b`, `a..`, `..b`): the comparisons it
    /// makes, `a <= v && v < b`, constant data like any comparison.
    fn range_contains(&mut self, range: &syn::ExprRange, arg: &Expr) -> Lowered {
        let span = range.span();
        let v = self.scalar_expr(super::iter::unreferenced(arg))?;
        let mut tests = Vec::new();
        if let Some(start) = &range.start {
            let start = self.scalar_expr(start)?;
            tests.push(self.binary(BinOp::Le, start, v, span));
        }
        if let Some(end) = &range.end {
            let end = self.scalar_expr(end)?;
            let op = match range.limits {
                syn::RangeLimits::HalfOpen(_) => BinOp::Lt,
                syn::RangeLimits::Closed(_) => BinOp::Le,
            };
            tests.push(self.binary(op, v, end, span));
        }
        Ok(match tests.as_slice() {
            [] => self.push(Inst::Const(Const::Bool(true)), Ty::Bool, span),
            [test] => *test,
            [low, high, ..] => self.binary(BinOp::And, *low, *high, span),
        })
    }

    /// The `if let`'s first block, with `pattern` bound to `item`.
    pub(super) fn then_bound(
        &mut self,
        pattern: &Pat,
        item: super::closures::Item,
        expr: &ExprIf,
        want_value: bool,
    ) -> Result<Option<Value>, Poison> {
        self.scopes.push(super::Scope::default());
        let bound = self.bind_pattern(pattern, item);
        let value = bound.and_then(|()| self.block(&expr.then_branch, want_value));
        self.scopes.pop();
        value
    }

    /// `match s { p1 => e1, p2 if g => e2, _ => e3 }` on an integer or `bool`:
    /// an `if` chain testing each pattern in turn; the last arm needs no test.
    pub(super) fn match_(
        &mut self,
        expr: &ExprMatch,
        want_value: bool,
    ) -> Result<Option<Value>, Poison> {
        self.match_with(expr, want_value, None)
    }

    /// `match` whose arms end in tuples (`let (a, b) = match k { … }`):
    /// each arm assigns the hidden locals `parts`, one per number, as
    /// [`Lower::tuple_if`]'s branches do.
    pub(super) fn match_into(&mut self, expr: &ExprMatch, parts: &[String]) -> Result<(), Poison> {
        self.match_with(expr, false, Some(parts)).map(drop)
    }

    fn match_with(
        &mut self,
        expr: &ExprMatch,
        want_value: bool,
        parts: Option<&[String]>,
    ) -> Result<Option<Value>, Poison> {
        if let Some(item) = self.tuple_scrutinee(&expr.expr) {
            return item.and_then(|item| self.arms(&expr.arms, &item, want_value, parts));
        }
        if parts.is_none()
            && let Some(desugared) = split_match_as_if(expr)
        {
            return self.if_(&desugared, want_value);
        }
        if let Some(lowered) = self.option_match(expr, want_value, parts) {
            return lowered;
        }
        if expr.arms.iter().any(|arm| match &arm.pat {
            Pat::Guard(guarded) => is_slice_pattern(&guarded.pat),
            pattern => is_slice_pattern(pattern),
        }) && let Some(view) = self.view_or_buffer(&expr.expr)
        {
            let by_value = places_by_value(&expr.expr);
            return view
                .and_then(|view| self.slice_arms(&expr.arms, view, by_value, want_value, parts));
        }
        let scrutinee = self.scrutinee(&expr.expr)?;
        if expr.arms.iter().any(|arm| names_variant(&arm.pat)) {
            self.opaque_use(scrutinee);
        }
        if expr.arms.is_empty() {
            return self
                .unsupported(expr.match_token, msg::EMPTY_MATCH)
                .map(Some);
        }
        self.arms(&expr.arms, &Item::Value(scrutinee), want_value, parts)
    }

    /// What `match (a, b) { … }` (or a tuple variable) tests: a tuple of the
    /// values each element is, each lowered once, before the arms; `None`
    /// if the scrutinee is no tuple.
    fn tuple_scrutinee(&mut self, expr: &Expr) -> Option<Result<Item, Poison>> {
        match expr {
            Expr::Paren(paren) => self.tuple_scrutinee(&paren.expr),
            Expr::Tuple(tuple) if !tuple.elems.is_empty() => {
                let mut items = Vec::new();
                let mut poisoned = false;
                for elem in &tuple.elems {
                    let item = match self.tuple_scrutinee(elem) {
                        Some(item) => item,
                        None => self.scrutinee(elem).map(Item::Value),
                    };
                    match item {
                        Ok(item) => items.push(item),
                        Err(Poison) => poisoned = true,
                    }
                }
                Some(match poisoned {
                    true => Err(Poison),
                    false => Ok(Item::Tuple(items)),
                })
            }
            Expr::Path(_)
                if local_name(expr).is_some_and(|name| {
                    matches!(self.special(&name), Some(super::Special::Tuple(_)))
                }) =>
            {
                Some(self.item_expr(expr))
            }
            _ => None,
        }
    }

    /// `match`'s arms from the first: an `if` chain testing each pattern in
    /// turn against `scrutinee` (a number, or a tuple of them).
    fn arms(
        &mut self,
        arms: &[Arm],
        scrutinee: &Item,
        want_value: bool,
        parts: Option<&[String]>,
    ) -> Result<Option<Value>, Poison> {
        let (arm, rest) = arms.split_first().expect("at least one arm");
        let mut bindings = Vec::new();
        // The last arm needs no test: one of variants that binds nothing
        // (`Act::Tanh => …`) is not tested at all.
        let untested =
            rest.is_empty() && names_variant(&arm.pat) && self.binding_in(&arm.pat).is_none();
        self.scopes.push(super::Scope::default());
        let test = match untested {
            true => Ok(None),
            false => self.item_pattern(&arm.pat, scrutinee, &mut bindings),
        };
        self.scopes.pop();
        let body = |this: &mut Self| {
            this.scopes.push(
                bindings
                    .iter()
                    .map(|(name, value)| (name.clone(), Ok(*value)))
                    .collect(),
            );
            let value = this.arm_body(arm, want_value, parts);
            this.scopes.pop();
            value
        };
        match test {
            Ok(Some(cond)) if !rest.is_empty() => {
                self.branch(Ok(cond), want_value, arm.pat.span(), body, |this| {
                    this.arms(rest, scrutinee, want_value, parts)
                })
            }
            Ok(_) => body(self),
            Err(Poison) => Err(Poison),
        }
    }

    /// An arm's body, its names bound: its value if `want_value`, or the
    /// hidden locals `parts` assigned from the tuple it ends in.
    pub(super) fn arm_body(
        &mut self,
        arm: &Arm,
        want_value: bool,
        parts: Option<&[String]>,
    ) -> Result<Option<Value>, Poison> {
        match parts {
            // An arm that panics assigns nothing: its values are never read.
            Some(_) if super::macros::diverges_expr(&arm.body) => {
                self.expr_stmt(&arm.body);
                Ok(None)
            }
            Some(parts) => self
                .item_expr(&arm.body)
                .and_then(|item| self.assign_hidden(parts, item, arm.body.span()))
                .map(|()| None),
            None if want_value => self.expr(&arm.body).map(Some),
            None => {
                self.expr_stmt(&arm.body);
                Ok(None)
            }
        }
    }

    /// `if let [a, b, rest @ ..] = x { … } else { … }` of a buffer or a
    /// sub-slice: `if` its length fits the pattern, with the names bound to
    /// the elements and `rest` to the sub-slice between. `None` if the
    /// condition is not of this form.
    fn if_let_slice(
        &mut self,
        expr: &ExprIf,
        binding: &syn::ExprLet,
        want_value: bool,
    ) -> Option<Result<Option<Value>, Poison>> {
        if !matches!(strip_pat(&binding.pat), Pat::Slice(_)) {
            return None;
        }
        let view = self.view_or_buffer(&binding.expr)?;
        let by_value = places_by_value(&binding.expr);
        let span = expr.span();
        Some(view.and_then(|view| {
            let shape = self.slice_shape(&binding.pat)?;
            let fits = self.slice_fits(&shape, view, span);
            let bound = |this: &mut Self| {
                this.slice_bound(&shape, view, by_value, span, |this| {
                    this.block(&expr.then_branch, want_value)
                })
            };
            match fits {
                Some(fits) => self.branch(Ok(fits), want_value, span, bound, |this| {
                    this.else_branch(expr, want_value)
                }),
                None => bound(self),
            }
        }))
    }

    /// `match x { [] => …, [a] => …, [a, .., z] => … }` of a buffer or a
    /// sub-slice: an `if` chain testing each arm's length in turn, the last
    /// untested (Rust has checked that the arms cover every length).
    fn slice_arms(
        &mut self,
        arms: &[Arm],
        view: super::iter::View,
        by_value: bool,
        want_value: bool,
        parts: Option<&[String]>,
    ) -> Result<Option<Value>, Poison> {
        let (arm, rest) = arms.split_first().expect("at least one arm");
        let span = arm.pat.span();
        let (pattern, guard) = match &arm.pat {
            Pat::Guard(guarded) => (&*guarded.pat, Some(&*guarded.guard)),
            pattern => (pattern, None),
        };
        let shape = self.slice_shape(pattern)?;
        let fits = match rest.is_empty() {
            true => None,
            false => self.slice_fits(&shape, view, span),
        };
        // `[a, b] if a > b`: the guard, with the names bound, where the
        // length fits, `false` elsewhere; the names are bound again in
        // the arm (loads, which cost nothing to repeat).
        let guarded = |this: &mut Self| {
            this.slice_bound(&shape, view, by_value, span, |this| {
                this.expr(guard.expect("a guard"))
            })
        };
        let fits = match (fits, guard) {
            (fits, None) => fits,
            _ if rest.is_empty() => None,
            (None, Some(_)) => Some(guarded(self)?),
            (Some(fits), Some(_)) => self.branch(
                Ok(fits),
                true,
                span,
                |this| guarded(this).map(Some),
                |this| {
                    Ok(Some(this.push(
                        Inst::Const(Const::Bool(false)),
                        Ty::Bool,
                        span,
                    )))
                },
            )?,
        };
        let body = |this: &mut Self| {
            this.slice_bound(&shape, view, by_value, span, |this| {
                this.arm_body(arm, want_value, parts)
            })
        };
        match fits {
            Some(fits) => self.branch(Ok(fits), want_value, span, body, |this| {
                this.slice_arms(rest, view, by_value, want_value, parts)
            }),
            // An arm that matches every length: the later ones never run.
            None => body(self),
        }
    }

    /// The parts of a slice pattern, each checked: names, `_` and `&name`
    /// for elements, one `..` or `rest @ ..`; or a pattern for the whole.
    fn slice_shape<'p>(&mut self, pattern: &'p Pat) -> Result<SliceShape<'p>, Poison> {
        let elems = match strip_pat(pattern) {
            whole @ (Pat::Wild(_) | Pat::Ident(_)) if rest_binding(whole).is_none() => {
                if let Pat::Ident(ident) = whole
                    && (ident.by_ref.is_some() || ident.subpat.is_some())
                {
                    self.cx.error_spanned_by(whole, msg::SLICE_PATTERN);
                    return Err(Poison);
                }
                return Ok(SliceShape::Whole(whole));
            }
            Pat::Slice(slice) => &slice.elems,
            other => {
                self.cx.error_spanned_by(other, msg::SLICE_PATTERN);
                return Err(Poison);
            }
        };
        let mut shape = SliceShape::Parts {
            front: Vec::new(),
            rest: None,
            back: Vec::new(),
        };
        let SliceShape::Parts { front, rest, back } = &mut shape else {
            unreachable!("made above")
        };
        for elem in elems {
            let is_rest = matches!(strip_pat(elem), Pat::Rest(_)) || rest_binding(elem).is_some();
            if is_rest && rest.is_none() {
                *rest = Some(rest_binding(elem));
                continue;
            }
            if !element_pattern(elem) {
                self.cx.error_spanned_by(elem, msg::SLICE_PATTERN);
                return Err(Poison);
            }
            match rest {
                None => front.push(elem),
                Some(_) => back.push(elem),
            }
        }
        Ok(shape)
    }

    /// Whether the view's length fits the shape: `len == n` without a
    /// `..`, `len >= n` with one; `None` if any length does.
    fn slice_fits(
        &mut self,
        shape: &SliceShape<'_>,
        view: super::iter::View,
        span: Span,
    ) -> Option<Value> {
        let SliceShape::Parts { front, rest, back } = shape else {
            return None;
        };
        let n = front.len() + back.len();
        if rest.is_some() && n == 0 {
            return None;
        }
        let n = self.int_lit(n as u64, span);
        let op = match rest {
            Some(_) => BinOp::Ge,
            None => BinOp::Eq,
        };
        Some(self.binary(op, view.len, n, span))
    }

    /// `lower` run in a scope of its own with the names of a slice pattern
    /// bound (see [`Lower::bind_slice`]).
    fn slice_bound<T>(
        &mut self,
        shape: &SliceShape<'_>,
        view: super::iter::View,
        by_value: bool,
        span: Span,
        lower: impl FnOnce(&mut Self) -> Result<T, Poison>,
    ) -> Result<T, Poison> {
        self.scopes.push(super::Scope::default());
        let lowered = self
            .bind_slice(shape, view, by_value, span)
            .and_then(|()| lower(self));
        self.scopes.pop();
        lowered
    }

    /// The names of a slice pattern bound, in the scope on top: elements by
    /// reference (by value when the slice is a place, `match x[..]`), the
    /// rest and the whole as views.
    fn bind_slice(
        &mut self,
        shape: &SliceShape<'_>,
        view: super::iter::View,
        by_value: bool,
        span: Span,
    ) -> Result<(), Poison> {
        let (front, rest, back) = match shape {
            SliceShape::Whole(Pat::Ident(ident)) => {
                let name = ident.ident.unraw().to_string();
                self.bind_special(&name, super::Special::View(view));
                return Ok(());
            }
            SliceShape::Whole(_) => return Ok(()),
            SliceShape::Parts { front, rest, back } => (front, rest, back),
        };
        let mut bound = Ok(());
        for (k, pat) in front.iter().enumerate() {
            let offset = self.int_lit(k as u64, span);
            let at = self.int_add(view.start, offset, span);
            let element = self.load(view.buf, at, span);
            let item = super::iter::element_item(element, by_value);
            bound = bound.and(self.bind_pattern(pat, item));
        }
        let n_back = self.int_lit(back.len() as u64, span);
        let back_start = self.int_op(BinOp::Sub, view.len, n_back, span);
        for (k, pat) in back.iter().enumerate() {
            let offset = self.int_lit(k as u64, span);
            let from_front = self.int_add(back_start, offset, span);
            let at = self.int_add(view.start, from_front, span);
            let element = self.load(view.buf, at, span);
            let item = super::iter::element_item(element, by_value);
            bound = bound.and(self.bind_pattern(pat, item));
        }
        if let Some(Some(name)) = rest {
            let n_front = self.int_lit(front.len() as u64, span);
            let start = self.int_add(view.start, n_front, span);
            let len = self.int_op(BinOp::Sub, back_start, n_front, span);
            let name = name.unraw().to_string();
            let rest = super::iter::View {
                buf: view.buf,
                start,
                len,
            };
            self.bind_special(&name, super::Special::View(rest));
        }
        bound
    }

    /// The test of `pattern` against `scrutinee`, a number or a tuple of
    /// them (`(0, _)`, `(true, n) if n > 2`, `(1 | 2, ..)`), as
    /// [`Lower::pattern`] makes it for a number; `None` if it always
    /// matches. Each name it binds is pushed with its value.
    fn item_pattern(
        &mut self,
        pattern: &Pat,
        scrutinee: &Item,
        bindings: &mut Vec<(String, Value)>,
    ) -> Result<Option<Value>, Poison> {
        let Item::Tuple(items) = scrutinee else {
            let (Item::Value(value) | Item::Ref(value)) = *scrutinee else {
                return self.unsupported(pattern, msg::MATCH_PATTERN).map(Some);
            };
            if names_variant(pattern) {
                self.opaque_use(value);
            }
            return self.pattern(pattern, value, bindings);
        };
        let span = pattern.span();
        let and = |this: &mut Self, acc: Option<Value>, test: Option<Value>| match (acc, test) {
            (Some(acc), Some(test)) => Some(this.binary(BinOp::And, acc, test, span)),
            (acc, test) => acc.or(test),
        };
        match pattern {
            Pat::Wild(_) => Ok(None),
            Pat::Paren(paren) => self.item_pattern(&paren.pat, scrutinee, bindings),
            Pat::Tuple(tuple) => {
                let elems: Vec<&Pat> = tuple.elems.iter().collect();
                let rest = elems.iter().position(|elem| matches!(elem, Pat::Rest(_)));
                let (before, after) = match rest {
                    Some(k) => (&elems[..k], &elems[k + 1..]),
                    None => (&elems[..], &elems[..0]),
                };
                let fits = match rest {
                    Some(_) => before.len() + after.len() <= items.len(),
                    None => before.len() == items.len(),
                };
                if !fits || after.iter().any(|elem| matches!(elem, Pat::Rest(_))) {
                    return self.unsupported(tuple, msg::PATTERN_MISMATCH).map(Some);
                }
                let paired = before
                    .iter()
                    .zip(items)
                    .chain(after.iter().zip(&items[items.len() - after.len()..]));
                let mut test = None;
                for (elem, item) in paired {
                    let elem_test = self.item_pattern(elem, item, bindings)?;
                    test = and(self, test, elem_test);
                }
                Ok(test)
            }
            Pat::Or(or) => {
                let mut test = None;
                for case in &or.cases {
                    let mut names = Vec::new();
                    let case_test = self.item_pattern(case, scrutinee, &mut names)?;
                    if !names.is_empty() {
                        return self.unsupported(case, msg::MATCH_TUPLE_OR).map(Some);
                    }
                    let Some(case_test) = case_test else {
                        return Ok(None);
                    };
                    test = Some(match test {
                        Some(acc) => self.binary(BinOp::Or, acc, case_test, span),
                        None => case_test,
                    });
                }
                Ok(test)
            }
            Pat::Guard(guarded) => {
                let test = self.item_pattern(&guarded.pat, scrutinee, bindings)?;
                let guard = self.expr(&guarded.guard)?;
                Ok(and(self, test, Some(guard)))
            }
            Pat::Ident(ident) if !self.is_constant_name(&ident.ident) => {
                self.unsupported(ident, msg::TUPLE_BINDING).map(Some)
            }
            other => self.unsupported(other, msg::PATTERN_MISMATCH).map(Some),
        }
    }

    /// The test that `pattern` matches `scrutinee` (`None`: it always does),
    /// collecting the names it binds.
    pub(super) fn pattern(
        &mut self,
        pattern: &Pat,
        scrutinee: Value,
        bindings: &mut Vec<(String, Value)>,
    ) -> Result<Option<Value>, Poison> {
        let span = pattern.span();
        // A parameter of a type the macro cannot see into (`kind:
        // Activation`) or a field matched on by variants, and any value of
        // unknown type matched on by variants (an ordering): tested as
        // written, `matches!(kind, …)`. (Other values of unknown type, what
        // a function of integers returns, are numbers: compared below.)
        let opaque = matches!(
            self.builder.func().inst(scrutinee),
            Inst::Param(_) | Inst::Field { .. }
        );
        if matches!(self.ty(scrutinee), Ty::Unknown)
            && (opaque || names_variant(pattern))
            && !matches!(pattern, Pat::Wild(_) | Pat::Guard(_) | Pat::Paren(_))
        {
            // `other => …`, `k @ Kind::A(_) => …`: the value itself.
            if let Pat::Ident(whole) = pattern
                && whole.by_ref.is_none()
                && !self.is_constant_name(&whole.ident)
            {
                let key = whole.ident.unraw().to_string();
                bindings.push((key.clone(), scrutinee));
                self.bind(&key, Ok(scrutinee));
                return match &whole.subpat {
                    Some((_, subpattern)) => self.pattern(subpattern, scrutinee, bindings),
                    None => Ok(None),
                };
            }
            let name = proc_macro2::Ident::new("__ad_scrutinee", span);
            let bound: Vec<syn::Ident> = pattern_idents(pattern)
                .into_iter()
                .filter(|ident| !self.is_constant_name(ident))
                .collect();
            // `Act::Leaky(slope)`: each name bound to its data, constant
            // (a copy, read by the pattern with the other names left out;
            // a default where the variant is another, which the test keeps
            // from being read).
            for ident in &bound {
                let only = only_binding(pattern, &bound, Some(ident));
                let tokens = quote_spanned!(span=>
                    match &#name {
                        #only => ::core::clone::Clone::clone(#ident),
                        _ => ::core::default::Default::default(),
                    }
                );
                let data = self.call_as_written(
                    tokens,
                    vec![(name.clone(), scrutinee)],
                    Ty::Unknown,
                    span,
                );
                let key = ident.unraw().to_string();
                self.name(data, &key);
                bindings.push((key.clone(), data));
                self.bind(&key, Ok(data));
            }
            let tested = only_binding(pattern, &bound, None);
            let tokens = quote_spanned!(span=> ::core::matches!(#name, #tested));
            return Ok(Some(self.call_as_written(
                tokens,
                vec![(name, scrutinee)],
                Ty::Bool,
                span,
            )));
        }
        match pattern {
            Pat::Wild(_) => Ok(None),
            // `LIMIT => …`: a constant, compared with (Rust's own reading of
            // a name that is a constant in scope; one the macro cannot see
            // is told by its case, as Rust's naming lints tell it).
            Pat::Ident(ident)
                if ident.by_ref.is_none()
                    && ident.mutability.is_none()
                    && ident.subpat.is_none()
                    && self.is_constant_name(&ident.ident) =>
            {
                let path = syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: ident.ident.clone().into(),
                };
                let value = self.path(&path)?;
                Ok(Some(self.binary(BinOp::Eq, scrutinee, value, span)))
            }
            Pat::Ident(ident) if ident.by_ref.is_none() => {
                let name = ident.ident.unraw().to_string();
                bindings.push((name.clone(), scrutinee));
                self.bind(&name, Ok(scrutinee));
                match &ident.subpat {
                    Some((_, subpattern)) => self.pattern(subpattern, scrutinee, bindings),
                    None => Ok(None),
                }
            }
            // `true => …` of a `bool`: the value itself is the test.
            Pat::Lit(syn::PatLit {
                lit: syn::Lit::Bool(b),
                ..
            }) if matches!(self.ty(scrutinee), Ty::Bool) => Ok(Some(match b.value {
                true => scrutinee,
                false => self.not(scrutinee, span),
            })),
            Pat::Lit(lit) => {
                let value = self.literal(lit)?;
                Ok(Some(self.binary(BinOp::Eq, scrutinee, value, span)))
            }
            Pat::Path(path) => {
                let value = self.path(path)?;
                Ok(Some(self.binary(BinOp::Eq, scrutinee, value, span)))
            }
            Pat::Range(range) => {
                let mut test = None;
                if let Some(start) = &range.start {
                    let start = self.expr(start)?;
                    test = Some(self.binary(BinOp::Ge, scrutinee, start, span));
                }
                if let Some(end) = &range.end {
                    let end = self.expr(end)?;
                    let op = match range.limits {
                        RangeLimits::HalfOpen(_) => BinOp::Lt,
                        RangeLimits::Closed(_) => BinOp::Le,
                    };
                    let below = self.binary(op, scrutinee, end, span);
                    test = Some(match test {
                        Some(above) => self.binary(BinOp::And, above, below, span),
                        None => below,
                    });
                }
                Ok(test)
            }
            Pat::Or(or) => {
                let mut test = None;
                for case in &or.cases {
                    // A case that always matches makes the whole pattern match.
                    let Some(case_test) = self.pattern(case, scrutinee, bindings)? else {
                        return Ok(None);
                    };
                    test = Some(match test {
                        Some(acc) => self.binary(BinOp::Or, acc, case_test, span),
                        None => case_test,
                    });
                }
                Ok(test)
            }
            Pat::Paren(paren) => self.pattern(&paren.pat, scrutinee, bindings),
            Pat::Guard(guarded) => {
                let test = self.pattern(&guarded.pat, scrutinee, bindings)?;
                let guard = self.expr(&guarded.guard)?;
                Ok(Some(match test {
                    Some(test) => self.binary(BinOp::And, test, guard, span),
                    None => guard,
                }))
            }
            other => self.unsupported(other, msg::MATCH_PATTERN).map(Some),
        }
    }

    /// The first name `pattern` binds (a name that is no constant), if any.
    fn binding_in(&self, pattern: &Pat) -> Option<syn::Ident> {
        pattern_idents(pattern)
            .into_iter()
            .find(|ident| !self.is_constant_name(ident))
    }

    /// `kind == Kind::A` (or `!=`) where a side is a parameter the macro
    /// cannot see into: run as written, each such side written in place
    /// (`PartialEq` compares values, not references), the locals the other
    /// names bound.
    fn opaque_comparison(&mut self, binary: &syn::ExprBinary) -> Lowered {
        let span = binary.span();
        let mut user = proc_macro2::TokenStream::new();
        let mut sides = Vec::new();
        let mut values = Vec::new();
        for (k, side) in [&*binary.left, &*binary.right].into_iter().enumerate() {
            match self.opaque_of(side) {
                Some(value) => {
                    let name = proc_macro2::Ident::new(&format!("__ad_side{k}"), span);
                    sides.push(name.to_token_stream());
                    values.push((name, value));
                }
                None => {
                    sides.push(side.to_token_stream());
                    user.extend(side.to_token_stream());
                }
            }
        }
        let (left, right, op) = (&sides[0], &sides[1], &binary.op);
        let tokens = quote_spanned!(span=> #left #op #right);
        self.written_with(tokens, user, values, Ty::Bool, span)
    }

    /// What a `match`, an `if let` or a `matches!` tests: a parameter the
    /// macro cannot see into as itself, anything else lowered.
    pub(super) fn scrutinee(&mut self, expr: &Expr) -> Lowered {
        match self.opaque_of(expr) {
            Some(value) => Ok(value),
            None => self.expr(expr),
        }
    }

    /// The value of a parameter of a type the macro cannot see into, if
    /// `expr` names one (`kind` of `kind: Activation`).
    pub(super) fn opaque_of(&self, expr: &Expr) -> Option<Value> {
        match self.special(&local_name(expr)?)? {
            super::Special::Opaque(value) => Some(value),
            _ => None,
        }
    }

    /// Whether a name in a pattern is a constant: a block constant of the
    /// body, or a name that starts with an upper-case letter (`LIMIT`,
    /// `Self::MAX` is a path already) and is no local.
    fn is_constant_name(&self, ident: &syn::Ident) -> bool {
        let name = ident.unraw().to_string();
        if self.consts.contains(&name) {
            return true;
        }
        name.starts_with(|c: char| c.is_uppercase()) && self.lookup(&name).is_none()
    }

    /// The value of `cond` on the path being lowered, if the enclosing
    /// branches decided it (see [`Lower::decided`]): a condition they
    /// tested, or its negation.
    fn decided_value(&self, cond: Value) -> Option<bool> {
        let negation_of = |v: Value| match self.builder.func().inst(v) {
            Inst::Unary(UnOp::Not, inner) => Some(*inner),
            _ => None,
        };
        self.decided.iter().rev().find_map(|&(tested, value)| {
            if tested == cond {
                Some(value)
            } else if negation_of(cond) == Some(tested) || negation_of(tested) == Some(cond) {
                Some(!value)
            } else {
                None
            }
        })
    }

    /// `lower`, on a path where `cond` (if there is one) is `value`.
    fn deciding<T>(
        &mut self,
        cond: Option<Value>,
        value: bool,
        lower: impl FnOnce(&mut Self) -> T,
    ) -> T {
        self.decided.extend(cond.map(|cond| (cond, value)));
        let lowered = lower(self);
        if cond.is_some() {
            self.decided.pop();
        }
        lowered
    }

    /// Two regions of one `if` instruction on `cond`, yielding the expression's
    /// value (when `want_value`) and the new value of every outer variable
    /// either branch assigns.
    pub(super) fn branch(
        &mut self,
        cond: Lowered,
        want_value: bool,
        span: Span,
        then: impl FnOnce(&mut Self) -> Result<Option<Value>, Poison>,
        els: impl FnOnce(&mut Self) -> Result<Option<Value>, Poison>,
    ) -> Result<Option<Value>, Poison> {
        if let Ok(cond) = cond {
            self.bool_use(cond);
            // A test the enclosing branches decided: only the branch that
            // runs.
            if let Some(known) = self.decided_value(cond) {
                let tail = if known { then(self) } else { els(self) };
                return tail.map(|tail| tail.filter(|_| want_value));
            }
        }
        let before = self.scopes.clone();

        self.builder.begin_region();
        let then_tail = self.deciding(cond.ok(), true, then);
        let mut then = self.builder.end_region(Vec::new());
        let then_scopes = std::mem::replace(&mut self.scopes, before.clone());

        self.builder.begin_region();
        let else_tail = self.deciding(cond.ok(), false, els);
        let mut els = self.builder.end_region(Vec::new());
        let else_scopes = std::mem::replace(&mut self.scopes, before.clone());

        // Outer variables assigned in either branch, by position in the scopes.
        let mut assigned = Vec::new();
        for (scope_index, scope) in before.iter().enumerate() {
            for (entry_index, (_, value)) in scope.iter().enumerate() {
                let in_then = then_scopes[scope_index][entry_index].1;
                let in_else = else_scopes[scope_index][entry_index].1;
                if in_then != *value || in_else != *value {
                    assigned.push((scope_index, entry_index, in_then, in_else));
                }
            }
        }
        let value = match (want_value, then_tail, else_tail) {
            (false, ..) => Ok(None),
            (true, Ok(Some(a)), Ok(Some(b))) => Ok(Some((a, b))),
            (true, Ok(None), _) | (true, _, Ok(None)) => Ok(None),
            _ => Err(Poison),
        };
        let poisoned = cond.is_err()
            || value.is_err()
            || assigned.iter().any(|(_, _, a, b)| a.is_err() || b.is_err());
        if poisoned {
            for (scope_index, entry_index, _, _) in assigned {
                self.scopes[scope_index][entry_index].1 = Err(Poison);
            }
            return Err(Poison);
        }
        let value = value.expect("checked");
        let cond = cond?;
        // A flag set to `true` in one branch and `false` in the other is the
        // condition itself (or its negation): no need to yield it.
        let mut decided = Vec::new();
        assigned.retain(|&(scope_index, entry_index, a, b)| {
            let (a, b) = (a.expect("checked"), b.expect("checked"));
            let constant = |v: Value| match self.builder.func().inst(v) {
                Inst::Const(Const::Bool(b)) => Some(*b),
                _ => None,
            };
            match (constant(a), constant(b)) {
                (Some(true), Some(false)) => decided.push((scope_index, entry_index, false)),
                (Some(false), Some(true)) => decided.push((scope_index, entry_index, true)),
                _ => return true,
            }
            false
        });
        for (scope_index, entry_index, negated) in decided {
            let flag = if negated { self.not(cond, span) } else { cond };
            self.scopes[scope_index][entry_index].1 = Ok(flag);
        }
        let mut pairs: Vec<(Value, Value)> = value.into_iter().collect();
        pairs.extend(
            assigned
                .iter()
                .map(|(_, _, a, b)| (a.expect("checked"), b.expect("checked"))),
        );
        let is_buffer = |value: Value| matches!(self.builder.func().ty(value), Ty::Buf(_));
        if pairs.iter().any(|&(a, b)| is_buffer(a) || is_buffer(b)) {
            self.cx.error_at(span, msg::BUFFER_IN_BRANCH);
            return Err(Poison);
        }
        let mut tys = Vec::new();
        for &(a, b) in &pairs {
            let ty = self.ty(a).join(&self.ty(b));
            self.builder.refine_ty(a, &ty);
            self.builder.refine_ty(b, &ty);
            tys.push(ty);
            then.yields.push(a);
            els.yields.push(b);
        }
        let if_value = self.push(Inst::If { cond, then, els }, Ty::Tuple(tys.clone()), span);
        let mut results = Vec::new();
        for (index, ty) in tys.into_iter().enumerate() {
            let index = u32::try_from(index).expect("small");
            results.push(self.push(Inst::Extract(if_value, index), ty, span));
        }
        let offset = usize::from(value.is_some());
        for (position, (scope_index, entry_index, _, _)) in assigned.into_iter().enumerate() {
            let result = results[offset + position];
            let name = self.scopes[scope_index][entry_index].0.clone();
            self.name(result, &name);
            self.scopes[scope_index][entry_index].1 = Ok(result);
        }
        Ok(value.map(|_| results[0]))
    }

    /// `a && b` as `if a { b } else { false }`, and `a || b` as
    /// `if a { true } else { b }`: `b` runs only when Rust would run it (it may
    /// index past the end when `a` is false: `i < n && xs[i] > 0.0`).
    fn short_circuit(&mut self, op: BinOp, binary: &syn::ExprBinary) -> Lowered {
        let span = binary.span();
        let lhs = self.expr(&binary.left);
        let decided = op == BinOp::Or;
        let constant = |this: &mut Self| {
            Ok(Some(this.push(
                Inst::Const(Const::Bool(decided)),
                Ty::Bool,
                span,
            )))
        };
        let rhs = |this: &mut Self| this.expr(&binary.right).map(Some);
        let value = if decided {
            self.branch(lhs, true, span, constant, rhs)?
        } else {
            self.branch(lhs, true, span, rhs, constant)?
        };
        Ok(value.expect("both branches have a value"))
    }

    /// Whether `expr` reads a local whose value is poisoned (its error
    /// reported), through fields, indexing and parentheses.
    fn root_poisoned(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Field(field) => self.root_poisoned(&field.base),
            Expr::Index(index) => self.root_poisoned(&index.expr),
            Expr::Paren(paren) => self.root_poisoned(&paren.expr),
            expr => {
                local_name(expr).is_some_and(|name| matches!(self.lookup(&name), Some(Err(Poison))))
            }
        }
    }

    /// Whether `expr` is a tuple written out, `(a, b)`, or a tuple
    /// variable.
    pub(super) fn names_tuple(&self, expr: &Expr) -> bool {
        match super::strip_parens(expr) {
            Expr::Tuple(tuple) => tuple.elems.len() >= 2,
            expr => local_name(expr)
                .is_some_and(|name| matches!(self.special(&name), Some(super::Special::Tuple(_)))),
        }
    }

    /// `p == (0.0, 0.0)` or `p != q` of tuples: their elements compared,
    /// joined by `&&` (by `||` for `!=`).
    fn tuple_comparison(&mut self, binary: &syn::ExprBinary) -> Option<Lowered> {
        if !self.names_tuple(&binary.left) && !self.names_tuple(&binary.right) {
            return None;
        }
        let (op, join) = match binary.op {
            syn::BinOp::Eq(_) => (BinOp::Eq, BinOp::And),
            syn::BinOp::Ne(_) => (BinOp::Ne, BinOp::Or),
            // `p < q`, lexicographic: one error for the comparison.
            _ => return Some(self.unsupported(binary, msg::TUPLE_VALUE)),
        };
        let span = binary.span();
        let mut sides = Vec::new();
        for side in [&binary.left, &binary.right] {
            let values = match self.item_expr(side) {
                Ok(item) => item.tuple_values(),
                Err(Poison) => return Some(Err(Poison)),
            };
            match values {
                Some(values) => sides.push(values),
                None => return Some(self.unsupported(side, msg::TUPLE_VALUE)),
            }
        }
        if sides[0].len() != sides[1].len() {
            return Some(self.unsupported(binary, msg::TUPLE_VALUE));
        }
        let tests: Vec<Value> = sides[0]
            .clone()
            .into_iter()
            .zip(sides[1].clone())
            .map(|(lhs, rhs)| self.binary(op, lhs, rhs, span))
            .collect();
        let joined = tests
            .into_iter()
            .reduce(|acc, test| self.binary(join, acc, test, span))
            .expect("two or more elements");
        Some(Ok(joined))
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: Value, rhs: Value, span: Span) -> Value {
        if self.ty(lhs) == Ty::Int {
            self.int_use(rhs);
        }
        if self.ty(rhs) == Ty::Int {
            self.int_use(lhs);
        }
        if op.is_logic() {
            self.bool_use(lhs);
            self.bool_use(rhs);
        }
        let ty = if op.is_comparison() || op.is_logic() {
            Ty::Bool
        } else {
            let ty = self.ty(lhs).join(&self.ty(rhs));
            self.builder.refine_ty(lhs, &ty);
            self.builder.refine_ty(rhs, &ty);
            ty
        };
        if op.is_comparison() {
            let operand_ty = self.ty(lhs).join(&self.ty(rhs));
            self.builder.refine_ty(lhs, &operand_ty);
            self.builder.refine_ty(rhs, &operand_ty);
        }
        // One normal form for a sum with a negated term: `-p + a` and
        // `a + -p` are `a - p`, and `a - -p` is `a + p`, to the bit (IEEE
        // 754 defines `a - p` as `a + (-p)`, and `+` commutes exactly).
        if ty.is_float() {
            let negated = |value: Value| match self.builder.func().inst(value) {
                Inst::Unary(UnOp::Neg, inner) => Some(*inner),
                _ => None,
            };
            let normal = match (op, negated(lhs), negated(rhs)) {
                (BinOp::Add, _, Some(p)) => Some((BinOp::Sub, lhs, p)),
                (BinOp::Add, Some(p), None) => Some((BinOp::Sub, rhs, p)),
                (BinOp::Sub, _, Some(p)) => Some((BinOp::Add, lhs, p)),
                _ => None,
            };
            if let Some((op, lhs, rhs)) = normal {
                // Each step drops a negation: `-p - -x` is `x - p`.
                return self.binary(op, lhs, rhs, span);
            }
        }
        self.push(Inst::Binary(op, lhs, rhs), ty, span)
    }

    fn literal(&mut self, lit: &ExprLit) -> Lowered {
        let (constant, ty) = match &lit.lit {
            Lit::Float(float) => (
                Const::Lit(float.token()),
                suffix_ty(float.suffix(), Ty::Float),
            ),
            Lit::Int(int) => (Const::Lit(int.token()), suffix_ty(int.suffix(), Ty::Int)),
            Lit::Bool(b) => (Const::Bool(b.value), Ty::Bool),
            _ => return self.unsupported(lit, msg::LITERAL),
        };
        Ok(self.push(Inst::Const(constant), ty, lit.span()))
    }

    fn path(&mut self, path: &ExprPath) -> Lowered {
        if let Some(name) = path_local(path) {
            match self.special(&name) {
                Some(super::Special::Closure(_)) => {
                    return self.unsupported(path, msg::CLOSURE_AS_VALUE);
                }
                Some(
                    super::Special::View(_) | super::Special::Cursor(..) | super::Special::Chain(_),
                ) => {
                    return self.unsupported(path, msg::VIEW_AS_VALUE);
                }
                Some(super::Special::Rows(_)) => {
                    return self.unsupported(path, msg::ROWS_AS_BUFFER);
                }
                Some(super::Special::Tuple(_)) => {
                    return self.unsupported(path, msg::TUPLE_VALUE);
                }
                Some(super::Special::Option) => {
                    return self.unsupported(path, msg::OPTION_VALUE);
                }
                Some(super::Special::Opaque(_)) => {
                    return self.unsupported(path, msg::OPAQUE_USE);
                }
                None => {}
            }
            if let Some((buf, index)) = self.element(&name) {
                return Ok(self.load(buf, index, path.span()));
            }
            if let Some(value) = self.lookup(&name) {
                return value;
            }
        }
        // Anything else is a constant defined outside the function (`PI`,
        // `f64::EPSILON`, a user `const`): data, never active.
        let tokens = path.to_token_stream();
        let ty = match path.path.segments.first() {
            Some(first) if path.path.segments.len() == 2 => {
                match first.ident.to_string().as_str() {
                    "f32" => Ty::F32,
                    "f64" => Ty::F64,
                    // `T::PI` in a function generic over `T: Float`.
                    _ if self.builder.func().float_param.as_ref() == Some(&first.ident) => {
                        Ty::Float
                    }
                    _ => Ty::Unknown,
                }
            }
            _ => Ty::Unknown,
        };
        Ok(self.push(Inst::Const(Const::Path(tokens)), ty, path.span()))
    }

    fn cast(&mut self, cast: &ExprCast) -> Lowered {
        let arg = self.scalar_expr(&cast.expr);
        let Some(to) = sig::scalar_type(&cast.ty, self.builder.func().float_param.as_ref()) else {
            return self.unsupported(&cast.ty, msg::CAST_TARGET);
        };
        let arg = arg?;
        Ok(self.push(Inst::Cast(arg, to), to.ty(), cast.span()))
    }

    fn method(&mut self, call: &ExprMethodCall) -> Lowered {
        if let Some(lowered) = self.option_method(call) {
            return lowered;
        }
        if let Some(item) = self.consume(call) {
            return match item? {
                // `for_each`: no value.
                super::closures::Item::Tuple(items) if items.is_empty() => {
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), call.span()))
                }
                item => self.scalar_item(item, call.span()),
            };
        }
        if let Some(lowered) = self.buffer_method(call) {
            return lowered;
        }
        if let Some(lowered) = self.struct_method(call) {
            return lowered;
        }
        let name = call.method.unraw().to_string();
        if name == "to_f64" && call.args.is_empty() {
            // `Float::to_f64`, in a function generic over `T: Float`.
            let receiver = self.scalar_expr(&call.receiver)?;
            return Ok(self.push(Inst::Cast(receiver, Scalar::F64), Ty::F64, call.span()));
        }
        if let Some(lowered) = self.ordering_method(call, &name) {
            return lowered;
        }
        // `(1..n).contains(&i)`, clippy's spelling of `1 <= i && i < n`.
        if name == "contains"
            && call.args.len() == 1
            && let Expr::Range(range) = super::strip_parens(&call.receiver)
        {
            return self.range_contains(range, &call.args[0]);
        }
        // `x.chunks(3).len()` of an exact-size iterator: its `count()`.
        if name == "len" && call.args.is_empty() && super::iter::is_iterator(&call.receiver) {
            let receiver = &call.receiver;
            let count: ExprMethodCall = syn::parse_quote_spanned!(call.span()=> #receiver.count());
            if let Some(item) = self.consume(&count) {
                return item.and_then(|item| self.scalar_item(item, call.span()));
            }
        }
        // `x.iter().nth(2)`: a method of an iterator none of the above knows;
        // or a known one of a chain that starts from what is no iterator
        // the lowering knows (`m.values().sum()`).
        // `once(x).exp()` of a function of the user's called `once`: no
        // iterator has such a method, so the call is the user's.
        let users_fn = matches!(super::strip_parens(&call.receiver), Expr::Call(inner) if super::iter::bare_iter_fn(inner))
            && !super::iter::iterator_method(&name, call.args.len());
        if super::iter::is_iterator(&call.receiver) && !users_fn {
            if super::iter::CONSUMERS.contains(&name.as_str()) {
                let source = super::iter::chain_source(&call.receiver);
                return self.unsupported(source, msg::ITERATOR_SOURCE);
            }
            return self.unsupported(&call.method, msg::iterator_adapter(&name));
        }
        let Some(prim) = Prim::from_method(&name) else {
            let receiver = self.expr(&call.receiver)?;
            let message = match self.ty(receiver) {
                // `o.is_lt()`, `o.then(p)` of an ordering kept in a
                // variable: constant data of a type only rustc sees, asked
                // with constant data.
                Ty::Unknown if !name.starts_with("to_") => {
                    return self.constant_method(call, receiver, &name);
                }
                Ty::Int => match integer_method(&name) {
                    Some(ty) if call.turbofish.is_none() => {
                        return self.integer_method(call, receiver, ty);
                    }
                    _ => msg::integer_method(&name),
                },
                Ty::Bool => msg::integer_method(&name),
                _ => msg::unknown_method(&name, &Prim::method_list()),
            };
            return self.unsupported(&call.method, message);
        };
        if let Some(turbofish) = &call.turbofish {
            return self.unsupported(turbofish, msg::TURBOFISH);
        }
        if call.args.len() + 1 != prim.arity() {
            return self.unsupported(
                &call.method,
                msg::method_arity(&name, prim.arity() - 1, call.args.len()),
            );
        }
        let receiver = self.scalar_expr(&call.receiver);
        let args: Vec<Lowered> = call.args.iter().map(|arg| self.scalar_expr(arg)).collect();
        let mut operands = vec![receiver?];
        for arg in args {
            operands.push(arg?);
        }
        // `n.max(2)`, `k.abs()` of an integer: the integer method, as written.
        if self.ty(operands[0]) == Ty::Int {
            return self.integer_call(call, operands, Ty::Int);
        }
        Ok(self.prim(prim, operands, None, call.span()))
    }

    /// `best.0` of a tuple variable (`let mut best = (0, f64::MAX);`): the
    /// hidden variable holding that element. `None` if `field` is no such
    /// element; an error if the tuple has no such element.
    pub(super) fn tuple_element_of(
        &mut self,
        field: &syn::ExprField,
    ) -> Option<Result<String, Poison>> {
        let name = local_name(&field.base)?;
        let Some(super::Special::Tuple(n)) = self.special(&name) else {
            return None;
        };
        let syn::Member::Unnamed(index) = &field.member else {
            return Some(
                self.unsupported(field, msg::TUPLE_VALUE)
                    .map(|_| String::new()),
            );
        };
        let k = index.index as usize;
        if k >= n {
            return Some(
                self.unsupported(field, msg::TUPLE_VALUE)
                    .map(|_| String::new()),
            );
        }
        Some(Ok(super::tuple_element(&name, k)))
    }

    /// `a.total_cmp(&b)`, `a.partial_cmp(&b)`: an ordering, constant data
    /// (comparisons have no derivative), run as written; and what is asked
    /// of one: `.is_lt()` (a `bool`), `.unwrap()`, `.reverse()`. It is
    /// compared as written too (`== Ordering::Less`, `== Some(Less)`, a
    /// `match`). `None` if `call` is none of these.
    fn ordering_method(&mut self, call: &ExprMethodCall, name: &str) -> Option<Lowered> {
        let span = call.span();
        let method = &call.method;
        let named = |k: usize| proc_macro2::Ident::new(&format!("__ad_arg{k}"), span);
        let receiver_name = proc_macro2::Ident::new("__ad_receiver", span);
        match (name, call.args.len()) {
            ("total_cmp" | "partial_cmp", 1) => Some((|| {
                let receiver = self.scalar_expr(&call.receiver)?;
                let other = match super::strip_parens(&call.args[0]) {
                    Expr::Reference(reference) => &*reference.expr,
                    other => other,
                };
                let other = self.scalar_expr(other)?;
                let arg = named(0);
                let tokens = quote_spanned!(span=> #receiver_name.#method(&#arg));
                let values = vec![(receiver_name.clone(), receiver), (arg, other)];
                Ok(self.call_as_written(tokens, values, Ty::Unknown, span))
            })()),
            (
                "is_lt" | "is_le" | "is_gt" | "is_ge" | "is_eq" | "is_ne" | "unwrap" | "reverse",
                0,
            ) if is_ordering(&call.receiver) => Some((|| {
                let receiver = self.expr(&call.receiver)?;
                let ty = if name.starts_with("is_") {
                    Ty::Bool
                } else {
                    Ty::Unknown
                };
                let tokens = quote_spanned!(span=> #receiver_name.#method());
                Ok(self.call_as_written(tokens, vec![(receiver_name.clone(), receiver)], ty, span))
            })()),
            _ => None,
        }
    }

    /// `receiver.name(args…)` of constant data of a type the macro cannot
    /// see (an ordering kept in a variable): run as written, a `bool` for a
    /// test (`is_lt`, `is_eq`). Its arguments must be constant data too: a
    /// float passed to a method no rule knows would lose its derivative.
    fn constant_method(&mut self, call: &ExprMethodCall, receiver: Value, name: &str) -> Lowered {
        let span = call.span();
        let receiver_name = proc_macro2::Ident::new("__ad_receiver", span);
        let mut values = vec![(receiver_name.clone(), receiver)];
        let mut args = Vec::new();
        for (k, arg) in call.args.iter().enumerate() {
            // `r.expect("…")`: a string is passed as written.
            if let Expr::Lit(lit) = super::strip_parens(arg)
                && matches!(lit.lit, syn::Lit::Str(_) | syn::Lit::Char(_))
            {
                args.push(lit.to_token_stream());
                continue;
            }
            let (arg, by_ref) = match super::strip_parens(arg) {
                Expr::Reference(reference) if reference.mutability.is_none() => {
                    (&*reference.expr, true)
                }
                arg => (arg, false),
            };
            let value = self.expr(arg)?;
            if !matches!(self.ty(value), Ty::Unknown | Ty::Int | Ty::Bool) {
                return self.unsupported(arg, msg::CONSTANT_METHOD_FLOAT);
            }
            let name = proc_macro2::Ident::new(&format!("__ad_arg{k}"), span);
            let by_ref = by_ref.then(|| quote::quote!(&));
            args.push(quote::quote!(#by_ref #name));
            values.push((name, value));
        }
        let method = &call.method;
        let turbofish = &call.turbofish;
        let tokens = quote_spanned!(span=> #receiver_name.#method #turbofish(#(#args),*));
        let ty = if name.starts_with("is_") {
            Ty::Bool
        } else {
            Ty::Unknown
        };
        Ok(self.call_as_written(tokens, values, ty, span))
    }

    /// `ad_runtime::checkpoint(g(x))`: the call `g(x)` of a differentiated
    /// function, marked so that in a loop its pullback is made again in the
    /// adjoint from its saved arguments instead of being saved.
    fn checkpointed_call(&mut self, func: &syn::ExprPath, call: &ExprCall) -> Lowered {
        if call.args.len() != 1 {
            return self.unsupported(func, msg::method_arity("checkpoint", 1, call.args.len()));
        }
        self.runtime_path(func, "checkpoint");
        let before = self.builder.func().user_calls.len();
        let value = self.expr(&call.args[0])?;
        let made_one_call = self.builder.func().user_calls.len() == before + 1
            && matches!(self.builder.func().inst(value), Inst::Extract(pair, 0)
                if matches!(self.builder.func().inst(*pair), Inst::Forward { callee, .. } if *callee as usize == before));
        if !made_one_call {
            return self.unsupported(&call.args[0], msg::CHECKPOINT_CALL);
        }
        self.builder.func_mut().user_calls[before].checkpoint = true;
        Ok(value)
    }

    /// `f64::sin(x)` and friends, and `ad_runtime::detach(x)`.
    fn call(&mut self, call: &ExprCall) -> Lowered {
        if let Some(callable) = self.closure_callee(&call.func) {
            let callable = callable?;
            let mut args = Vec::new();
            for arg in &call.args {
                args.push(self.item_expr(arg));
            }
            let args = args.into_iter().collect::<Result<Vec<_>, _>>()?;
            return match self.apply(&callable, args, call.span())? {
                // A closure with no value, called as a statement.
                super::closures::Item::Tuple(items) if items.is_empty() => {
                    Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), call.span()))
                }
                item => self.scalar_item(item, call.span()),
            };
        }
        let Expr::Path(func) = super::strip_parens(&call.func) else {
            // `(|v| v * v)(x)`: the closure itself is what is reported.
            self.expr(&call.func)?;
            return self.unsupported(&call.func, msg::call("this expression"));
        };
        let segments = segments(&func.path);
        let shown = segments.join("::");
        if let [name] = segments.as_slice()
            && let Some(local) = self.lookup(name)
        {
            // A local is not a function; a poisoned one (a rejected closure) was
            // reported where it was defined.
            local?;
        }
        let n_segments = func.path.segments.len();
        let generics_before_last = func
            .path
            .segments
            .iter()
            .take(n_segments - 1)
            .any(|seg| !seg.arguments.is_none());
        let turbofish = func
            .path
            .segments
            .last()
            .is_some_and(|seg| !seg.arguments.is_none());
        // `sigmoid::<f64>(x)`: a differentiated function's entry points take
        // the same generic arguments.
        if func.qself.is_some()
            || generics_before_last
            || (turbofish && !calls::is_user_function(func))
        {
            return self.unsupported(func, msg::call(&shown));
        }
        match segments
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["Vec", method] => return self.new_vec(call, method),
            // `Some(Ordering::Less)`, compared with a `partial_cmp`: data.
            ["Some"] if call.args.len() == 1 && is_constant_value(&call.args[0]) => {
                let tokens = call.to_token_stream();
                return Ok(self.push(Inst::Const(Const::Path(tokens)), Ty::Unknown, call.span()));
            }
            ["std" | "core", "mem", "swap"] | ["mem", "swap"] if call.args.len() == 2 => {
                return self.swap(call);
            }
            ["std" | "core", "mem", method @ ("replace" | "take")]
            | ["mem", method @ ("replace" | "take")] => {
                return self.replace(call, *method == "take");
            }
            ["ad_runtime", name] | ["ad_runtime", "linalg", name] => {
                if let Some(callee) = Callee::primitive(name) {
                    self.runtime_path(func, callee.name());
                    return self.runtime_call(callee, call);
                }
            }
            [name] if Callee::primitive(name).is_some() => {
                return self.unsupported(func, msg::runtime_path(name));
            }
            _ => {}
        }
        if names_marker(&segments, "detach") {
            if call.args.len() != 1 {
                return self.unsupported(func, msg::method_arity("detach", 1, call.args.len()));
            }
            self.runtime_path(func, "detach");
            let arg = self.expr(&call.args[0])?;
            let ty = self.ty(arg);
            return Ok(self.push(Inst::Detach(arg), ty, call.span()));
        }
        if names_marker(&segments, "checkpoint") {
            return self.checkpointed_call(func, call);
        }
        let generic = self
            .builder
            .func()
            .float_param
            .as_ref()
            .map(ToString::to_string);
        if let [ty, name] = segments.as_slice()
            && generic.as_ref() == Some(ty)
            && (name == "from_f64" || name == "from_i32")
        {
            // `T::from_f64(x)`: a conversion into the generic float type.
            if call.args.len() != 1 {
                return self.unsupported(func, msg::method_arity(&shown, 1, call.args.len()));
            }
            let arg = self.scalar_expr(&call.args[0])?;
            return Ok(self.push(Inst::Cast(arg, Scalar::Float), Ty::Float, call.span()));
        }
        if let [ty, name] = segments.as_slice()
            && generic.as_ref() == Some(ty)
            && matches!(name.as_str(), "from" | "zero" | "one")
        {
            // `T::from(2.0)`, `T::zero()`: num-traits habits, which `Float`
            // spells `T::from_f64(2.0)` and `T::ZERO`.
            return self.unsupported(func, msg::generic_constructor(ty, name));
        }
        let float_ty = match segments.as_slice() {
            [ty, _] => self.float_type(ty),
            _ => None,
        };
        // `f64::total_cmp(&a, &b)`: the method, `a.total_cmp(&b)`.
        if let (Some(_), [_, name]) = (&float_ty, segments.as_slice())
            && matches!(name.as_str(), "total_cmp" | "partial_cmp")
            && call.args.len() == 2
        {
            let receiver = match super::strip_parens(&call.args[0]) {
                Expr::Reference(reference) => (*reference.expr).clone(),
                receiver => receiver.clone(),
            };
            let method = syn::ExprMethodCall {
                attrs: Vec::new(),
                receiver: Box::new(receiver),
                dot_token: Default::default(),
                method: syn::Ident::new(name, func.span()),
                turbofish: None,
                paren_token: Default::default(),
                args: std::iter::once(call.args[1].clone()).collect(),
            };
            return self.ordering_method(&method, name).expect("an ordering");
        }
        let float_ty = match float_ty {
            Some(float_ty) => float_ty,
            None if call.args.iter().all(|arg| self.is_constant_data(arg)) => {
                return self.constant_call(func, call, &segments);
            }
            None if calls::is_user_function(func) => return self.user_call(func, call),
            None => return self.unsupported(func, msg::call(&shown)),
        };
        if segments[1] == "from" {
            // `f64::from(x)` is the lossless form of `x as f64`.
            if call.args.len() != 1 {
                return self.unsupported(func, msg::method_arity(&shown, 1, call.args.len()));
            }
            let arg = self.expr(&call.args[0])?;
            let to = float_ty.scalar().expect("a float type");
            return Ok(self.push(Inst::Cast(arg, to), float_ty, call.span()));
        }
        let prim = self.float_function(func, &segments, call.args.len())?;
        let args: Vec<Lowered> = call.args.iter().map(|arg| self.scalar_expr(arg)).collect();
        let operands = args.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(self.prim(prim, operands, Some(float_ty), call.span()))
    }

    /// `std::mem::swap(&mut a, &mut b)` of two local floats (the names
    /// trade values) or two local buffers (the elements are swapped).
    fn swap(&mut self, call: &ExprCall) -> Lowered {
        let span = call.span();
        let names: Vec<Option<String>> = call
            .args
            .iter()
            .map(|arg| match arg {
                Expr::Reference(reference) if reference.mutability.is_some() => {
                    local_name(&reference.expr)
                }
                _ => None,
            })
            .collect();
        let [Some(a), Some(b)] = names.as_slice() else {
            return self.unsupported(&call.func, msg::SWAP);
        };
        let (Some(value_a), Some(value_b)) = (self.lookup(a), self.lookup(b)) else {
            return self.unsupported(&call.func, msg::SWAP);
        };
        let (value_a, value_b) = (value_a?, value_b?);
        let is_buf = |this: &Self, value: Value| matches!(this.ty(value), Ty::Buf(_));
        match (is_buf(self, value_a), is_buf(self, value_b)) {
            (false, false) => {
                let (a_expr, b_expr) = (&call.args[0], &call.args[1]);
                let (Expr::Reference(ra), Expr::Reference(rb)) = (a_expr, b_expr) else {
                    unreachable!("checked")
                };
                self.assign(&ra.expr, Ok(value_b));
                self.assign(&rb.expr, Ok(value_a));
            }
            (true, true) => self.swap_buffers(value_a, value_b, span)?,
            _ => return self.unsupported(&call.func, msg::SWAP),
        }
        Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span))
    }

    /// `std::mem::replace(&mut a, e)` (`take(&mut a)`, `e` a zero) of a
    /// number variable: its value, the variable assigned `e`, as `let old
    /// = a; a = e;` would.
    fn replace(&mut self, call: &ExprCall, take: bool) -> Lowered {
        let span = call.span();
        let arity = if take { 1 } else { 2 };
        let target = match call.args.first() {
            Some(Expr::Reference(reference))
                if reference.mutability.is_some() && call.args.len() == arity =>
            {
                local_name(&reference.expr).map(|name| (name, &reference.expr))
            }
            _ => None,
        };
        let old = target
            .as_ref()
            .and_then(|(name, _)| match self.special(name) {
                None => self.lookup(name),
                Some(_) => None,
            });
        let (Some((_, place)), Some(old)) = (target, old) else {
            return self.unsupported(&call.func, msg::REPLACE);
        };
        let old = old?;
        let ty = self.ty(old);
        if !(ty.is_float() || ty == Ty::Int) {
            return self.unsupported(&call.func, msg::REPLACE);
        }
        let new = match take {
            true => self.push(Inst::Const(Const::Zero), ty, span),
            false => self.scalar_expr(&call.args[1])?,
        };
        self.assign(place, Ok(new));
        Ok(old)
    }

    /// Records a path to a runtime function, unless it is absolute
    /// (`::ad_runtime::…`), for the check that it names that function.
    pub(super) fn runtime_path(&mut self, path: &ExprPath, function: &'static str) {
        if path.path.leading_colon.is_none() {
            let tokens = path.path.to_token_stream();
            self.builder
                .func_mut()
                .runtime_paths
                .push((tokens, function));
        }
    }

    pub(super) fn prim(
        &mut self,
        prim: Prim,
        operands: Vec<Value>,
        declared: Option<Ty>,
        span: Span,
    ) -> Value {
        let mut ty = declared.unwrap_or(Ty::Float);
        for index in prim.float_args() {
            ty = ty.join(&self.ty(operands[index]));
        }
        for index in prim.float_args() {
            self.builder.refine_ty(operands[index], &ty);
        }
        // `v.powi(k)` of a `k` read as constant data (a field, a variant's
        // data): an integer.
        if let Some(index) = prim.int_arg() {
            self.int_use(operands[index]);
        }
        if prim.is_predicate() {
            ty = Ty::Bool;
        }
        // `x.powi(2)` is `x * x`, to the bit (`powi` squares by one
        // multiplication): one normal form for the square, whose adjoint
        // is `d * (x + x)` with no call.
        if prim == Prim::Powi
            && let Inst::Const(Const::Lit(lit)) = self.builder.func().inst(operands[1])
            && lit.to_string().trim_end_matches("i32") == "2"
        {
            return self.push(Inst::Binary(BinOp::Mul, operands[0], operands[0]), ty, span);
        }
        // Not `x.powf(2.0)`: libm's `pow` is not correctly rounded (glibc's
        // is within 0.52 ulp), so in a debug build it may differ from
        // `x * x` in the last bit, and `_vjp` returns the primal's bits.
        self.push(Inst::Prim(prim, operands), ty, span)
    }

    /// `n.saturating_sub(k)` and the other integer methods: integers are
    /// constant data, so the call runs as written, its receiver and
    /// arguments bound to their values.
    fn integer_method(&mut self, call: &ExprMethodCall, receiver: Value, ty: Ty) -> Lowered {
        let mut operands = vec![receiver];
        for arg in &call.args {
            operands.push(self.scalar_expr(arg)?);
        }
        self.integer_call(call, operands, ty)
    }

    /// [`Lower::integer_method`] with its receiver and arguments lowered.
    fn integer_call(&mut self, call: &ExprMethodCall, operands: Vec<Value>, ty: Ty) -> Lowered {
        let span = call.span();
        let values: Vec<(proc_macro2::Ident, Value)> = operands
            .into_iter()
            .enumerate()
            .map(|(k, value)| {
                let name = match k {
                    0 => "__ad_receiver".to_owned(),
                    k => format!("__ad_arg{}", k - 1),
                };
                (proc_macro2::Ident::new(&name, span), value)
            })
            .collect();
        let (receiver_name, args) = (&values[0].0, values[1..].iter().map(|(name, _)| name));
        let method = &call.method;
        let tokens = quote_spanned!(span=> #receiver_name.#method(#(#args),*));
        Ok(self.call_as_written(tokens, values, ty, span))
    }

    /// `std::cmp::min(k, n - 1)`, `usize::pow(2, k)`, `idx(i, j, n)`,
    /// `count(&PERM)`: a call whose arguments are all constant data
    /// ([`Self::is_constant_data`]) computes constant data, whatever the
    /// function is, so it runs as written: each integer argument bound to
    /// its value, the others (tables, integer buffers) written as they are
    /// with the locals they name bound. Its type is an integer for the
    /// integer functions of `std` and of the integer types, and unseen for
    /// a function of the user's (a float it returns is a constant like
    /// `PI`).
    pub(super) fn constant_call(
        &mut self,
        func: &ExprPath,
        call: &ExprCall,
        segments: &[String],
    ) -> Lowered {
        let span = call.span();
        let mut values = Vec::new();
        let mut args = Vec::new();
        let mut user = proc_macro2::TokenStream::new();
        for (k, arg) in call.args.iter().enumerate() {
            if !self.is_integer_expr(arg) {
                args.push(arg.to_token_stream());
                user.extend(arg.to_token_stream());
                continue;
            }
            let value = self.scalar_expr(arg)?;
            let name = proc_macro2::Ident::new(&format!("__ad_arg{k}"), span);
            args.push(name.to_token_stream());
            values.push((name, value));
        }
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        let ty = match segments.as_slice() {
            [.., "cmp", "min" | "max"] | ["min" | "max"] => Ty::Int,
            [ty, name] if ir::Scalar::from_name(ty).is_some_and(|ty| !ty.ty().is_float()) => {
                match *name {
                    "min" | "max" | "clamp" | "abs" | "signum" | "rem_euclid" | "div_euclid" => {
                        Ty::Int
                    }
                    name => integer_method(name).unwrap_or(Ty::Unknown),
                }
            }
            _ => Ty::Unknown,
        };
        let tokens = quote_spanned!(span=> #func(#(#args),*));
        self.written_with(tokens, user, values, ty, span)
    }

    /// Whether `expr` is constant data that a call may take as written: an
    /// integer ([`Self::is_integer_expr`]), a buffer of integers (`idx` of
    /// `idx: &[usize]`), a table by its case (`PERM`, `PERM[k]`), an array
    /// of these (`[1, 0, 1]`), or a reference to one (`&PERM`, `&idx[1..]`).
    pub(super) fn is_constant_data(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Paren(paren) => self.is_constant_data(&paren.expr),
            Expr::Group(group) => self.is_constant_data(&group.expr),
            Expr::Reference(reference) => {
                reference.mutability.is_none() && self.is_constant_data(&reference.expr)
            }
            Expr::Array(array) => array.elems.iter().all(|elem| self.is_constant_data(elem)),
            Expr::Repeat(repeat) => {
                self.is_constant_data(&repeat.expr) && self.is_integer_expr(&repeat.len)
            }
            Expr::Index(index) => {
                self.is_constant_data(&index.expr)
                    && match &*index.index {
                        Expr::Range(range) => [&range.start, &range.end]
                            .into_iter()
                            .flatten()
                            .all(|bound| self.is_integer_expr(bound)),
                        index => self.is_integer_expr(index),
                    }
            }
            Expr::Path(path) => {
                self.is_integer_expr(expr)
                    || path_local(path).is_some_and(|name| {
                        matches!(self.lookup(&name), Some(Ok(value))
                            if matches!(self.ty(value), Ty::Buf(elem)
                                if matches!(*elem, Ty::Int | Ty::Bool)))
                    })
            }
            _ => self.is_integer_expr(expr),
        }
    }

    /// Whether `expr` is an integer or a `bool` by its form: a literal, a
    /// local of that type, a constant by its case (`N`), arithmetic of
    /// these, a cast to an integer, a length, or such a call.
    pub(super) fn is_integer_expr(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Int(_) | syn::Lit::Bool(_)),
            Expr::Path(path) => match path_local(path) {
                Some(name) => match self.lookup(&name) {
                    // Also what a function of integers returned (`r` of
                    // `let (r, c) = split(i, n);`): constant data.
                    Some(Ok(value)) => {
                        let func = self.builder.func();
                        matches!(self.ty(value), Ty::Int | Ty::Bool)
                            || matches!(func.inst(value), Inst::Effect { .. })
                            || matches!(func.inst(value), Inst::Extract(whole, _)
                                if matches!(func.inst(*whole), Inst::Effect { .. }))
                    }
                    Some(Err(Poison)) => false,
                    None => {
                        self.special(&name).is_none() && self.element(&name).is_none() && {
                            name.starts_with(|c: char| c.is_uppercase())
                        }
                    }
                },
                None => false,
            },
            Expr::Paren(paren) => self.is_integer_expr(&paren.expr),
            Expr::Group(group) => self.is_integer_expr(&group.expr),
            Expr::Unary(unary) => self.is_integer_expr(&unary.expr),
            Expr::Binary(binary) => {
                self.is_integer_expr(&binary.left) && self.is_integer_expr(&binary.right)
            }
            Expr::Cast(cast) => sig::scalar_type(&cast.ty, None)
                .is_some_and(|scalar| matches!(scalar.ty(), Ty::Int | Ty::Bool)),
            Expr::MethodCall(method) => {
                (method.method == "len" && method.args.is_empty())
                    || (integer_method(&method.method.to_string()).is_some()
                        && self.is_integer_expr(&method.receiver))
            }
            // Not `f64::from(k)`, `T::from_i32(k)`: floats.
            Expr::Call(inner) => {
                let Expr::Path(path) = &*inner.func else {
                    return false;
                };
                let float_path = path.path.segments.first().is_some_and(|first| {
                    self.float_type(&first.ident.unraw().to_string()).is_some()
                });
                !float_path
                    && !inner.args.is_empty()
                    && inner.args.iter().all(|arg| self.is_integer_expr(arg))
            }
            _ => false,
        }
    }

    /// An expression that must be a number, not a buffer.
    pub(super) fn scalar_expr(&mut self, expr: &Expr) -> Lowered {
        let value = self.expr(expr)?;
        if matches!(self.ty(value), Ty::Buf(_)) {
            return self.unsupported(expr, msg::BUFFER_AS_SCALAR);
        }
        Ok(value)
    }

    /// The primitive `f64::name` stands for, given `n_args` arguments; an
    /// error at `path` if there is none or the count is wrong.
    pub(super) fn float_function(
        &self,
        path: &ExprPath,
        segments: &[String],
        n_args: usize,
    ) -> Result<Prim, Poison> {
        let shown = segments.join("::");
        let Some(prim) = Prim::from_method(&segments[1]) else {
            self.cx
                .error_spanned_by(path, msg::unknown_function(&shown, &Prim::method_list()));
            return Err(Poison);
        };
        if n_args != prim.arity() {
            self.cx
                .error_spanned_by(path, msg::method_arity(&shown, prim.arity(), n_args));
            return Err(Poison);
        }
        Ok(prim)
    }

    /// The float type a type name stands for: `f64`, `f32`, or the
    /// function's `T: Float`.
    pub(super) fn float_type(&self, name: &str) -> Option<Ty> {
        match name {
            "f64" => Some(Ty::F64),
            "f32" => Some(Ty::F32),
            _ if self
                .builder
                .func()
                .float_param
                .as_ref()
                .is_some_and(|param| param == name) =>
            {
                Some(Ty::Float)
            }
            _ => None,
        }
    }

    pub(super) fn ty(&self, value: Value) -> Ty {
        self.builder.func().ty(value).clone()
    }

    pub(super) fn unsupported(
        &self,
        node: impl ToTokens,
        message: impl std::fmt::Display,
    ) -> Lowered {
        self.cx.error_spanned_by(node, message);
        Err(Poison)
    }
}

fn suffix_ty(suffix: &str, default: Ty) -> Ty {
    match suffix {
        "" => default,
        suffix => ir::Scalar::from_name(suffix).map_or(default, ir::Scalar::ty),
    }
}

/// The names of a path's segments.
/// Whether a path's segments name the runtime's marker function `marker`
/// (`detach`, `checkpoint`): bare, or as `ad_runtime::marker`.
pub(super) fn names_marker(segments: &[String], marker: &str) -> bool {
    match segments {
        [name] => name == marker,
        [krate, name] => krate == "ad_runtime" && name == marker,
        _ => false,
    }
}

pub(super) fn segments(path: &syn::Path) -> Vec<String> {
    path.segments
        .iter()
        .map(|seg| seg.ident.unraw().to_string())
        .collect()
}

/// `x` for a plain local-variable path.
fn path_local(path: &ExprPath) -> Option<String> {
    if path.qself.is_some() {
        return None;
    }
    path.path.get_ident().map(|ident| ident.unraw().to_string())
}

/// The variable an assignment writes to, if it is a plain local.
pub(super) fn local_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) => path_local(path),
        Expr::Paren(paren) => local_name(&paren.expr),
        _ => None,
    }
}

/// Whether evaluating `expr` can panic (index out of bounds, integer division
/// by zero) or call something: then `&&` and `||` must not evaluate it early.
fn may_panic(expr: &Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Index(_) | Expr::Call(_) | Expr::MethodCall(_) => self.0 = true,
                Expr::Binary(binary)
                    if matches!(
                        binary.op,
                        syn::BinOp::Div(_) | syn::BinOp::Rem(_) | syn::BinOp::Sub(_)
                    ) =>
                {
                    self.0 = true;
                }
                _ => syn::visit::visit_expr(self, expr),
            }
        }
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, expr);
    finder.0
}

fn binary_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinOp::Add,
        syn::BinOp::Sub(_) => BinOp::Sub,
        syn::BinOp::Mul(_) => BinOp::Mul,
        syn::BinOp::Div(_) => BinOp::Div,
        syn::BinOp::Rem(_) => BinOp::Rem,
        syn::BinOp::And(_) => BinOp::And,
        syn::BinOp::Or(_) => BinOp::Or,
        syn::BinOp::BitXor(_) => BinOp::BitXor,
        syn::BinOp::BitAnd(_) => BinOp::BitAnd,
        syn::BinOp::BitOr(_) => BinOp::BitOr,
        syn::BinOp::Shl(_) => BinOp::Shl,
        syn::BinOp::Shr(_) => BinOp::Shr,
        syn::BinOp::Eq(_) => BinOp::Eq,
        syn::BinOp::Lt(_) => BinOp::Lt,
        syn::BinOp::Le(_) => BinOp::Le,
        syn::BinOp::Ne(_) => BinOp::Ne,
        syn::BinOp::Ge(_) => BinOp::Ge,
        syn::BinOp::Gt(_) => BinOp::Gt,
        _ => return None,
    })
}

/// The operation of a compound assignment (`+=` → `+`).
pub(super) fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitXorAssign(_) => BinOp::BitXor,
        syn::BinOp::BitAndAssign(_) => BinOp::BitAnd,
        syn::BinOp::BitOrAssign(_) => BinOp::BitOr,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

/// The keyword or token that names an unsupported construct: errors point at
/// `if`, `for`, `|x|`, not at the whole expression.
fn leading_token(expr: &Expr) -> proc_macro2::TokenStream {
    match expr {
        Expr::Closure(e) => {
            let mut tokens = e.inputs_begin.to_token_stream();
            e.inputs.to_tokens(&mut tokens);
            e.inputs_end.to_tokens(&mut tokens);
            tokens
        }
        Expr::Unsafe(e) => e.unsafe_token.to_token_stream(),
        Expr::Async(e) => e.async_token.to_token_stream(),
        Expr::Reference(e) => {
            let mut tokens = e.and_token.to_token_stream();
            e.mutability.to_tokens(&mut tokens);
            tokens
        }
        Expr::Try(e) => e.question_token.to_token_stream(),
        Expr::Await(e) => e.await_token.to_token_stream(),
        expr => expr.to_token_stream(),
    }
}

/// What an unsupported expression is, and what to write instead.
fn describe(expr: &Expr) -> (&'static str, &'static str) {
    match expr {
        Expr::Closure(_) => ("closures are", "write the computation inline"),
        Expr::Unsafe(_) => ("`unsafe` blocks are", "write the computation in safe code"),
        Expr::Reference(_) => ("references are", "use the `f64` value itself"),
        Expr::RawAddr(_) => ("raw pointers are", "use the `f64` value itself"),
        Expr::Index(_) => (
            "indexing is",
            "pass the elements as separate `f64` parameters",
        ),
        Expr::Field(_) => (
            "field access is",
            "pass the field as its own `f64` parameter",
        ),
        Expr::Array(_) | Expr::Repeat(_) => ("arrays are", "use separate `f64` variables"),
        Expr::Struct(_) => (
            "struct literals other than one bound by a `let` and used by its fields (`let p = Body { x: a, v: b }; p.x * p.v`) are",
            "read its fields where the struct is used, or use separate `f64` variables",
        ),
        Expr::Range(_) => (
            "ranges outside `for` loops, chains and indexing are",
            "use integer or float variables; a sub-slice is `&x[a..b]` (for `x.get(a..b)`, test the bounds and take `&x[a..b]`)",
        ),
        Expr::Try(_) => (
            "the `?` operator is",
            "handle the error outside the differentiated function",
        ),
        Expr::Async(_) | Expr::Await(_) => ("`async` code is", "write synchronous code"),
        Expr::Let(_) => (
            "`if let` and `let` expressions other than `if let Some(v) = xs.first()` (or `.last()`, `.get(i)`, `.split_first()`, a chain's `.find(p)`, `.position(p)`, `.reduce(f)`, `.max_by(cmp)`, `.min_by(cmp)`) and `if let [a, b, rest @ ..] = xs` are",
            "test the value with `==` or a `match` on integers, or bind it with a `let` statement",
        ),
        Expr::Const(_) => (
            "`const` blocks are",
            "use a `const` item outside the function",
        ),
        Expr::Yield(_) => ("`yield` is", "write a plain function"),
        Expr::TryBlock(_) => ("`try` blocks are", "write a plain block"),
        Expr::Infer(_) => ("`_` expressions are", "write the value"),
        _ => (
            "this expression is",
            "write it with float arithmetic and the supported float methods",
        ),
    }
}

/// The type of what an integer method returns, for the methods of integers
/// that return a number or a `bool` (not an `Option`).
fn integer_method(name: &str) -> Option<Ty> {
    match name {
        "saturating_sub" | "saturating_add" | "saturating_mul" | "wrapping_add"
        | "wrapping_sub" | "wrapping_mul" | "abs_diff" | "pow" | "isqrt" | "ilog2" | "ilog10"
        | "next_power_of_two" | "count_ones" | "count_zeros" | "leading_zeros"
        | "trailing_zeros" | "unsigned_abs" => Some(Ty::Int),
        "is_power_of_two" | "is_positive" | "is_negative" => Some(Ty::Bool),
        _ => None,
    }
}

/// `Some(p) = x.method(…)`, the condition of an `if let`: `p` and the call.
fn some_of_method(binding: &syn::ExprLet) -> Option<(&syn::Pat, &ExprMethodCall)> {
    let syn::Pat::TupleStruct(some) = &*binding.pat else {
        return None;
    };
    if !some.path.is_ident("Some") || some.elems.len() != 1 {
        return None;
    }
    let Expr::MethodCall(call) = &*binding.expr else {
        return None;
    };
    Some((&some.elems[0], call))
}

/// `if let Some(m) = chain.reduce(f) { a } else { b }` (also `max_by`,
/// `min_by`, `copied()` before them) as the `if` it stands for:
/// `if chain.count() > 0 { let m = chain.reduce(f).unwrap(); a } else { b }`.
/// The chain is read twice; it holds no `filter` (which `reduce` rejects),
/// so its count is that of its items. `None` if the `if` is not of this form.
///
/// `if let Some((first, rest)) = x.split_first()` (`split_last`) likewise:
/// `if x.len() > 0 { let (first, rest) = x.split_first().unwrap(); … }`.
fn if_let_reduced(expr: &ExprIf, binding: &syn::ExprLet) -> Option<ExprIf> {
    let (pattern, reduced) = some_of_method(binding)?;
    if !matches!(
        reduced.method.to_string().as_str(),
        "reduce" | "max_by" | "min_by" | "split_first" | "split_last"
    ) {
        return None;
    }
    let cond = is_some_test(reduced)?;
    let span = binding.span();
    let whole = &binding.expr;
    let then = &expr.then_branch;
    let stmts = &then.stmts;
    let mut desugared: ExprIf = syn::parse_quote_spanned! {span=>
        if #cond {
            let #pattern = #whole.unwrap();
            #(#stmts)*
        }
    };
    desugared.else_branch.clone_from(&expr.else_branch);
    Some(desugared)
}

/// `match x.split_first() { Some((a, rest)) => e1, None => e2 }`
/// (`split_last`; any arms, in any order, `Some(p) if g` guarded) as the
/// `if let` chain it is, which [`if_let_reduced`] takes apart: each
/// `Some(p)` an `if let Some(p) = x.split_first() { … } else { rest }`, a
/// guarded one `if (if let Some(p) = … { g } else { false }) { if let
/// Some(p) = … { … } else { unreachable!() } } else { rest }` (the names
/// it binds never reach the later arms), `None` an `if let Some(_) = … {
/// rest } else { … }`, `_` the rest. `None` for any other `match`.
fn split_match_as_if(expr: &ExprMatch) -> Option<ExprIf> {
    let Expr::MethodCall(split) = super::strip_parens(&expr.expr) else {
        return None;
    };
    if !(split.method == "split_first" || split.method == "split_last") || !split.args.is_empty() {
        return None;
    }
    let whole = &expr.expr;
    let span = expr.match_token.span;
    // From the last arm back: what the arms from each one on give.
    let mut rest: Option<Expr> = None;
    for arm in expr.arms.iter().rev() {
        let (pat, guard) = match &arm.pat {
            Pat::Guard(guarded) => (&*guarded.pat, Some(&guarded.guard)),
            pat => (pat, None),
        };
        let body = &arm.body;
        let later = rest.take();
        let else_rest = |later: &Option<Expr>| match later {
            Some(later) => quote::quote!({ #later }),
            // Only after an arm taking every value (rustc checked).
            None => quote::quote!({ ::core::unreachable!() }),
        };
        rest = Some(match pat {
            Pat::TupleStruct(some) if some.path.is_ident("Some") && some.elems.len() == 1 => {
                let inner = &some.elems[0];
                let els = else_rest(&later);
                match guard {
                    None => syn::parse_quote_spanned! {span=>
                        if let Some(#inner) = #whole { #body } else #els
                    },
                    Some(guard) => syn::parse_quote_spanned! {span=>
                        if (if let Some(#inner) = #whole { #guard } else { false }) {
                            if let Some(#inner) = #whole { #body } else { ::core::unreachable!() }
                        } else #els
                    },
                }
            }
            pat if super::options::is_none_pattern(pat) && guard.is_none() => {
                let els = else_rest(&later);
                syn::parse_quote_spanned! {span=> if let Some(_) = #whole #els else { #body } }
            }
            Pat::Wild(_) if guard.is_none() => (**body).clone(),
            _ => return None,
        });
    }
    match rest? {
        Expr::If(chain) => Some(chain),
        // `match x.split_first() { _ => e }`: no test at all.
        _ => None,
    }
}

/// The test that an `Option` the lowering takes apart is `Some`, in terms
/// it lowers without the `Option`: `x.len() > 0` for `x.first()`,
/// `x.last()`, `x.split_first()` and `x.split_last()`; `i < x.len()` for
/// `x.get(i)`; `chain.count() > 0` for `chain.next()`, `last()`, `reduce(f)`,
/// `max_by(cmp)` and `min_by(cmp)` of a chain without filters (`copied()`
/// or `cloned()` after any of them changes nothing). `None` for any other
/// method (`find` and `position` know only when the loop has run).
pub(super) fn is_some_test(call: &ExprMethodCall) -> Option<Expr> {
    let (end, _) = super::iter::through_copied(call);
    let span = call.span();
    let receiver = &end.receiver;
    let chain = super::iter::is_iterator_expr(receiver);
    match (end.method.to_string().as_str(), end.args.len(), chain) {
        ("first" | "last" | "split_first" | "split_last", 0, false) => {
            Some(syn::parse_quote_spanned!(span=> #receiver.len() > 0))
        }
        ("get", 1, false) => {
            let index = &end.args[0];
            Some(syn::parse_quote_spanned!(span=> #index < #receiver.len()))
        }
        ("next" | "last", 0, true) if !has_filter(receiver) => {
            Some(syn::parse_quote_spanned!(span=> #receiver.count() > 0))
        }
        // A filter before them is an error `reduce` reports.
        ("reduce" | "max_by" | "min_by", 1, true) => {
            Some(syn::parse_quote_spanned!(span=> #receiver.count() > 0))
        }
        _ => None,
    }
}

/// Whether an iterator chain filters its items anywhere (`filter`,
/// `take_while`, `skip_while`): then its `count()` is not what it yields
/// before them.
fn has_filter(expr: &Expr) -> bool {
    match super::strip_parens(expr) {
        Expr::MethodCall(call) => {
            matches!(
                call.method.to_string().as_str(),
                "filter" | "take_while" | "skip_while"
            ) || has_filter(&call.receiver)
        }
        _ => false,
    }
}

/// `let a: [f64; 3] = s.try_into().unwrap();` (`expect(msg)`, a pattern
/// `let [x, y, z] = …` giving the length), of a buffer or a sub-slice
/// `s`, as the two statements it stands for: the test `try_into` makes,
/// panicking as `unwrap` (`expect`) of its `Err` does, and the array of
/// the elements, `[s[0], s[1], s[2]]` (or `std::array::from_fn(|i| s[i])`
/// for a length written as a constant). `None` for any other statement.
pub(super) fn try_into_split(stmt: &Stmt) -> Option<[Stmt; 2]> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let init = local.init.as_ref()?;
    if init.diverge.is_some() {
        return None;
    }
    let Expr::MethodCall(unwrap) = super::strip_parens(&init.expr) else {
        return None;
    };
    let Expr::MethodCall(try_into) = super::strip_parens(&unwrap.receiver) else {
        return None;
    };
    let unwraps = matches!(
        (unwrap.method.to_string().as_str(), unwrap.args.len()),
        ("unwrap", 0) | ("expect", 1)
    );
    if !unwraps || try_into.method != "try_into" || !try_into.args.is_empty() {
        return None;
    }
    let (pat, annotation) = match &local.pat {
        Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
        pat => (pat, None),
    };
    let written = annotation.and_then(|ty| match ty {
        syn::Type::Array(array) => Some(&array.len),
        _ => None,
    });
    let from_pattern = match pat {
        Pat::Slice(slice) if slice.elems.iter().all(|elem| !matches!(elem, Pat::Rest(_))) => {
            Some(slice.elems.len())
        }
        _ => None,
    };
    let literal = match written {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Int(n), ..
        })) => n.base10_parse::<usize>().ok(),
        Some(_) => None,
        None => from_pattern,
    };
    if written.is_none() && literal.is_none() {
        return None;
    }
    let span = local.span();
    let view = &try_into.receiver;
    let len: Expr = match (written, literal) {
        (_, Some(n)) => syn::parse_quote_spanned!(span=> #n),
        (Some(len), None) => len.clone(),
        (None, None) => unreachable!("checked above"),
    };
    let message = "TryFromSliceError(())";
    let panic: Stmt = match unwrap.args.first() {
        None => {
            let text = format!("called `Result::unwrap()` on an `Err` value: {message}");
            syn::parse_quote_spanned!(span=> if #view.len() != #len { panic!(#text); })
        }
        Some(expect) => {
            let format = format!("{{}}: {message}");
            syn::parse_quote_spanned!(span=> if #view.len() != #len { panic!(#format, #expect); })
        }
    };
    let array: Expr = match literal {
        Some(n) => {
            let elems = (0..n).map(|i| -> Expr {
                let i = proc_macro2::Literal::usize_unsuffixed(i);
                syn::parse_quote_spanned!(span=> #view[#i])
            });
            syn::parse_quote_spanned!(span=> [#(#elems),*])
        }
        None => syn::parse_quote_spanned!(span=> std::array::from_fn(|i| #view[i])),
    };
    let attrs = &local.attrs;
    let pat = &local.pat;
    Some([
        panic,
        syn::parse_quote_spanned!(span=> #(#attrs)* let #pat = #array;),
    ])
}

/// The names a pattern binds (or compares with, for a constant), in order.
pub(super) fn pattern_idents(pattern: &Pat) -> Vec<syn::Ident> {
    struct Names(Vec<syn::Ident>);
    impl<'ast> syn::visit::Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, ident: &'ast syn::PatIdent) {
            self.0.push(ident.ident.clone());
            syn::visit::visit_pat_ident(self, ident);
        }
    }
    let mut names = Names(Vec::new());
    syn::visit::Visit::visit_pat(&mut names, pattern);
    names.0
}

/// The parts of a slice pattern (see [`Lower::slice_shape`]).
enum SliceShape<'p> {
    /// `_` or a name: any length, the name bound to the whole.
    Whole(&'p Pat),
    /// `[a, b, rest @ .., z]`: the patterns before the `..`, the name of the
    /// rest (`Some(None)` for a bare `..`), and the patterns after it.
    Parts {
        front: Vec<&'p Pat>,
        rest: Option<Option<syn::Ident>>,
        back: Vec<&'p Pat>,
    },
}

/// `pattern` with every name of `bound` but `keep` left out (`_`, or its
/// subpattern for `k @ p`), and `keep` bound by plain name (no `ref`, no
/// `mut`: the pattern is matched against a reference).
fn only_binding(pattern: &Pat, bound: &[syn::Ident], keep: Option<&syn::Ident>) -> Pat {
    struct Only<'a> {
        bound: &'a [syn::Ident],
        keep: Option<&'a syn::Ident>,
    }
    impl Only<'_> {
        fn dropped(&self, pat: &Pat) -> bool {
            matches!(pat, Pat::Ident(ident)
                if self.bound.contains(&ident.ident) && Some(&ident.ident) != self.keep)
        }
    }
    impl syn::visit_mut::VisitMut for Only<'_> {
        fn visit_field_pat_mut(&mut self, field: &mut syn::FieldPat) {
            // `Circle { r }` without `r`: `Circle { r: _ }`.
            if self.dropped(&field.pat) {
                field.colon_token.get_or_insert_with(Default::default);
            }
            syn::visit_mut::visit_field_pat_mut(self, field);
        }
        fn visit_pat_mut(&mut self, pat: &mut Pat) {
            if let Pat::Ident(ident) = pat
                && self.bound.contains(&ident.ident)
            {
                if Some(&ident.ident) == self.keep {
                    ident.by_ref = None;
                    ident.mutability = None;
                } else {
                    *pat = match ident.subpat.take() {
                        Some((_, subpattern)) => *subpattern,
                        None => Pat::Wild(syn::PatWild {
                            attrs: Vec::new(),
                            underscore_token: Default::default(),
                        }),
                    };
                }
            }
            syn::visit_mut::visit_pat_mut(self, pat);
        }
    }
    let mut pattern = pattern.clone();
    syn::visit_mut::VisitMut::visit_pat_mut(&mut Only { bound, keep }, &mut pattern);
    pattern
}

/// Whether an arm's pattern is a slice pattern, `[a, .., z]`.
fn is_slice_pattern(pattern: &Pat) -> bool {
    matches!(strip_pat(pattern), Pat::Slice(_))
}

/// `p` of `(p)`.
fn strip_pat(pattern: &Pat) -> &Pat {
    match pattern {
        Pat::Paren(paren) => strip_pat(&paren.pat),
        other => other,
    }
}

/// `rest` of `rest @ ..`.
fn rest_binding(pattern: &Pat) -> Option<syn::Ident> {
    match strip_pat(pattern) {
        Pat::Ident(ident)
            if ident.by_ref.is_none()
                && ident.mutability.is_none()
                && matches!(&ident.subpat, Some((_, sub)) if matches!(**sub, Pat::Rest(_))) =>
        {
            Some(ident.ident.clone())
        }
        _ => None,
    }
}

/// A pattern of one element of a slice pattern the lowering binds: `_`, a
/// name, or `&name`.
fn element_pattern(pattern: &Pat) -> bool {
    match strip_pat(pattern) {
        Pat::Wild(_) => true,
        Pat::Ident(ident) => ident.by_ref.is_none() && ident.subpat.is_none(),
        Pat::Reference(reference) => {
            reference.mutability.is_none() && element_pattern(&reference.pat)
        }
        _ => false,
    }
}

/// Whether a slice matched is a place (`match x[..]`, `match *x`), whose
/// elements the pattern binds by value, not by reference.
fn places_by_value(scrutinee: &Expr) -> bool {
    match super::strip_parens(scrutinee) {
        Expr::Index(_) => true,
        Expr::Unary(unary) => matches!(unary.op, syn::UnOp::Deref(_)),
        _ => false,
    }
}

/// Whether a statement is `let Some(p) = … else { … };`.
pub(super) fn is_let_else(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Local(local)
        if local.init.as_ref().is_some_and(|init| init.diverge.is_some())
            && matches!(&local.pat, Pat::TupleStruct(some)
                if some.path.is_ident("Some") && some.elems.len() == 1))
}

/// Whether a statement is `let Some(p) = chain.find(f) else { … };` (or
/// `rfind`, `.copied()` after either, `position`, `rposition`), `let
/// [a, b, ..] = x else { … };` or `let Kind::A(k) = kind else { … };`,
/// which [`let_else_nested`] lowers;
/// any other `let … else` that [`let_else_split`] does not take is the
/// `LET_ELSE` error.
pub(super) fn let_else_of_search(stmt: &Stmt) -> bool {
    let Stmt::Local(local) = stmt else {
        return false;
    };
    // `let [a, b, ..] = x else { … };`: the `if let` of a slice pattern.
    if is_slice_pattern(&local.pat)
        && local
            .init
            .as_ref()
            .is_some_and(|init| init.diverge.is_some())
    {
        return true;
    }
    // `let Scheme::Damped { rate, .. } = scheme else { … };`: the `if let`
    // of a variant.
    if names_variant(&local.pat)
        && !is_let_else(stmt)
        && local
            .init
            .as_ref()
            .is_some_and(|init| init.diverge.is_some())
    {
        return true;
    }
    if !is_let_else(stmt) {
        return false;
    }
    local.init.as_ref().is_some_and(|init| {
        matches!(super::strip_parens(&init.expr), Expr::MethodCall(call)
            if super::iter::is_find(super::iter::through_copied(call).0)
                || super::iter::is_position(call))
    })
}

/// `let Some(p) = opt else { … }; rest` as `if let Some(p) = opt { rest }
/// else { … }`: the `if let` the lowering knows (`chain.find(f)`,
/// `position(p)`, a slice pattern). The `if` is the block's value if
/// `want_value`.
pub(super) fn let_else_nested(stmt: &Stmt, rest: &[Stmt], want_value: bool) -> Stmt {
    let Stmt::Local(local) = stmt else {
        unreachable!("let_else_of_search");
    };
    let init = local.init.as_ref().expect("let_else_of_search");
    let (_, diverge) = init.diverge.as_ref().expect("let_else_of_search");
    let span = local.span();
    let pattern = &local.pat;
    let scrutinee = &init.expr;
    let nested: Expr = syn::parse_quote_spanned! {span=>
        if let #pattern = #scrutinee { #(#rest)* } else #diverge
    };
    if want_value {
        Stmt::Expr(nested, None)
    } else {
        Stmt::Expr(nested, Some(syn::Token![;](span)))
    }
}

/// `let Some(p) = opt else { … };` (the `else` block diverges), for an
/// `opt` that [`is_some_test`] knows, as the two statements it stands for:
/// `if !(test) { … }` and `let p = opt.unwrap();`. `None` for any other
/// statement.
pub(super) fn let_else_split(stmt: &Stmt) -> Option<[Stmt; 2]> {
    if !is_let_else(stmt) {
        return None;
    }
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let init = local.init.as_ref()?;
    let (_, diverge) = init.diverge.as_ref()?;
    let Pat::TupleStruct(some) = &local.pat else {
        return None;
    };
    // `let Some(b) = best else { … };` of a local: an option local (see
    // `options`), or an error there.
    let test = match &*init.expr {
        Expr::Path(path) if path.path.get_ident().is_some() => {
            syn::parse_quote_spanned!(init.expr.span()=> #path.is_some())
        }
        Expr::MethodCall(call) => is_some_test(call)?,
        _ => return None,
    };
    let span = local.span();
    let pattern = &some.elems[0];
    let whole = &init.expr;
    let attrs = &local.attrs;
    Some([
        syn::parse_quote_spanned!(span=> if !(#test) #diverge),
        syn::parse_quote_spanned!(span=> #(#attrs)* let #pattern = #whole.unwrap();),
    ])
}

/// Whether `expr` is an ordering by its form: `a.total_cmp(&b)`,
/// `a.partial_cmp(&b)`, or what `unwrap` or `reverse` make of one.
fn is_ordering(expr: &Expr) -> bool {
    match super::strip_parens(expr) {
        Expr::MethodCall(call) => match call.method.to_string().as_str() {
            "total_cmp" | "partial_cmp" => call.args.len() == 1,
            "unwrap" | "reverse" => call.args.is_empty() && is_ordering(&call.receiver),
            _ => false,
        },
        _ => false,
    }
}

/// Whether `expr` is a constant written as a path: `Ordering::Less`,
/// `std::cmp::Ordering::Greater`.
fn is_constant_value(expr: &Expr) -> bool {
    matches!(super::strip_parens(expr), Expr::Path(path) if path.path.segments.len() > 1)
}

/// Whether a pattern names an enum's variant (`Act::Relu`, `Act::Leaky(_)`,
/// `Shape::Box { .. }`), which no float matches: a path of a type that is no
/// number (`f64::MAX`, `i32::MIN` and `Self::…` are constants), or a pattern
/// with fields.
pub(super) fn names_variant(pat: &Pat) -> bool {
    match pat {
        Pat::TupleStruct(_) | Pat::Struct(_) => true,
        Pat::Path(path) => is_variant_path(&path.path),
        Pat::Or(or) => or.cases.iter().any(names_variant),
        Pat::Paren(paren) => names_variant(&paren.pat),
        Pat::Guard(guarded) => names_variant(&guarded.pat),
        _ => false,
    }
}

/// Whether an expression is a path naming an enum's variant (see
/// [`names_variant`]).
fn names_variant_expr(expr: &Expr) -> bool {
    match expr {
        Expr::Path(path) if path.qself.is_none() => is_variant_path(&path.path),
        Expr::Paren(paren) => names_variant_expr(&paren.expr),
        _ => false,
    }
}

/// Whether an expression is an enum's variant by value (`Act::Relu`, not
/// `Params::SCALE`, an associated constant by its case): constant data of a
/// type the macro cannot see.
pub(super) fn names_variant_value(expr: &Expr) -> bool {
    match expr {
        Expr::Path(path) if path.qself.is_none() => {
            is_variant_path(&path.path)
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|last| last.ident.to_string().contains(|c: char| c.is_lowercase()))
        }
        Expr::Paren(paren) => names_variant_value(&paren.expr),
        _ => false,
    }
}

/// `Act::Relu`: two segments or more, the type's named in upper case (the
/// number types are not) and not `Self`.
fn is_variant_path(path: &syn::Path) -> bool {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    match segments.as_slice() {
        [.., ty, _] => ty != "Self" && ty.starts_with(|c: char| c.is_uppercase()),
        _ => false,
    }
}
