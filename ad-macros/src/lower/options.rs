//! `Option`s of numbers kept in locals: `let mut best: Option<f64> = None;`,
//! `best = Some(v);`, `prev = Some(x[i]);`, read by `if let Some(b) = best`,
//! `match best { Some(b) if b > v => …, Some(b) => …, None => … }`, `let Some(b) = best else { … };`,
//! `best.unwrap()`, `expect`, `unwrap_or(d)`, `unwrap_or_default()`,
//! `map_or(d, f)`, `is_some()`, `is_none()`, `is_some_and(f)`, `is_none_or(f)`.
//!
//! Such a local is two hidden variables, like a tuple's elements
//! ([`option_part`]): whether it holds a value (a
//! `bool`, constant data) and the value (a zero while it holds none, which
//! nothing reads). A loop that assigns it carries both; a branch merges both.

use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprIf, ExprMatch, ExprMethodCall, Pat};

use super::closures::Item;
use super::{Lower, Lowered, Poison, Special};
use crate::diag::msg;
use crate::ir::{BinOp, Const, Inst, Ty, UnOp, Value};

/// What an option is made of: whether it holds a value, and the value.
type Parts = Result<(Value, Value), Poison>;

/// An option local matched on, and what the `match` gives (see
/// [`Lower::arm_body`]).
#[derive(Clone, Copy)]
struct Scrutinee<'p> {
    flag: Value,
    value: Value,
    want_value: bool,
    parts: Option<&'p [String]>,
    /// The `match` keyword's.
    span: proc_macro2::Span,
}

impl Lower<'_> {
    /// `let [mut] name[: Option<T>] = init;` of an option: `None`,
    /// `Some(e)`, or another option local (a copy). False if `init` is none
    /// of these and the annotation names no `Option`.
    pub(super) fn option_let(
        &mut self,
        name: &str,
        annotation: Option<&syn::Type>,
        init: &Expr,
    ) -> bool {
        let declared = annotation.and_then(option_type);
        if annotation.is_some() && declared.is_none() && !is_option_form(init) {
            return false;
        }
        // `Option<&f64>` (of `x.first()`) holds the number all the same.
        let declared = declared.map(|mut inner| {
            while let syn::Type::Reference(reference) = inner {
                inner = &reference.elem;
            }
            inner
        });
        let ty = match declared {
            Some(inner) => {
                match super::sig::scalar_type(inner, self.builder.func().float_param.as_ref()) {
                    Some(scalar) => Some(scalar.ty()),
                    None => {
                        self.cx.error_spanned_by(inner, msg::OPTION_TYPE);
                        self.bind(name, Err(Poison));
                        return true;
                    }
                }
            }
            None => None,
        };
        let Some(parts) = self.option_parts(init, ty.as_ref()) else {
            if declared.is_none() {
                return false;
            }
            self.cx.error_spanned_by(init, msg::OPTION_VALUE);
            self.bind(name, Err(Poison));
            return true;
        };
        match parts {
            Ok((some, value)) => self.bind_option(name, some, value),
            Err(Poison) => self.bind(name, Err(Poison)),
        }
        true
    }

    /// Binds the option local `name` to its parts: whether it holds a
    /// value, and the value.
    fn bind_option(&mut self, name: &str, flag: Value, value: Value) {
        for (k, part) in [flag, value].into_iter().enumerate() {
            let key = option_part(name, k);
            self.name(part, &key);
            self.bind(&key, Ok(part));
        }
        self.bind_special(name, Special::Option);
    }

    /// `name = None;`, `name = Some(e);`, `name = other;` of an option
    /// local: both parts assigned. False if `name` is no option local.
    pub(super) fn option_assign(&mut self, assign: &syn::ExprAssign) -> bool {
        let Some(name) = self.option_local(&assign.left) else {
            return false;
        };
        let Ok((_, old_value)) = self.option_of(&name) else {
            return true;
        };
        let ty = self.ty(old_value);
        let Some(parts) = self.option_parts(&assign.right, Some(&ty)) else {
            self.cx.error_spanned_by(&assign.right, msg::OPTION_VALUE);
            return true;
        };
        let Ok((some, value)) = parts else {
            return true;
        };
        let new_ty = self.ty(value);
        if new_ty.is_float() != ty.is_float() && new_ty != Ty::Unknown {
            self.cx.error_spanned_by(&assign.right, msg::OPTION_TYPE);
            return true;
        }
        self.builder.refine_ty(value, &ty);
        for (k, part) in [some, value].into_iter().enumerate() {
            let key = option_part(&name, k);
            self.set_hidden(&key, Ok(part));
            self.name(part, &key);
        }
        true
    }

    /// The parts of `expr` as an option of element type `ty` (a float if
    /// not known): `None`, `Some(e)`, an option local. `None` if `expr` is
    /// none of these.
    fn option_parts(&mut self, expr: &Expr, ty: Option<&Ty>) -> Option<Parts> {
        let span = expr.span();
        match super::strip_parens(expr) {
            Expr::Path(path) if path.path.is_ident("None") => {
                let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
                let ty = ty.cloned().unwrap_or(Ty::Float);
                let zero = self.push(Inst::Const(Const::Zero), ty, span);
                Some(Ok((no, zero)))
            }
            Expr::Call(call)
                if matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                    && call.args.len() == 1 =>
            {
                let value = self.scalar_expr(&call.args[0]);
                let yes = self.push(Inst::Const(Const::Bool(true)), Ty::Bool, span);
                Some(value.map(|value| {
                    if let Some(ty) = ty {
                        self.builder.refine_ty(value, ty);
                    }
                    (yes, value)
                }))
            }
            // `x.first()`, `x.get(i)`, `chain.reduce(f)`, `chain.max_by(cmp)`,
            // `chain.last()`, `position(p)`, `find(p)`: whether there is an
            // item, and the item (a zero if there is none).
            Expr::MethodCall(call) => {
                // `o.map(f)` of an option: `f` runs only on a value.
                if self.is_mapped_option(expr) {
                    return Some(self.option_mapped(call, ty));
                }
                // `chain.position(p)`: whether an item passed, and where.
                if super::iter::is_position(call) {
                    let chain = self.chain_of(&call.receiver)?;
                    return Some(chain.and_then(|chain| self.positioned(call, chain)));
                }
                // `chain.filter(p).next()` (`last()`): `chain.find(p)`
                // (`rfind`).
                if call.args.is_empty()
                    && let Expr::MethodCall(filter) = &*call.receiver
                    && filter.method == "filter"
                    && filter.args.len() == 1
                    && let Some(method) = match call.method.to_string().as_str() {
                        "next" => Some("find"),
                        "last" => Some("rfind"),
                        _ => None,
                    }
                {
                    let (chain, p) = (&filter.receiver, &filter.args[0]);
                    let method = syn::Ident::new(method, call.method.span());
                    let found: Expr = syn::parse_quote_spanned!(span=> #chain.#method(#p));
                    return self.option_parts(&found, ty);
                }
                let (end, _) = super::iter::through_copied(call);
                // `chain.find(p)`: whether an item passed, and the first.
                if super::iter::is_find(end) {
                    let chain = self.chain_of(&end.receiver)?;
                    return Some(chain.and_then(|chain| {
                        let found = self.find(end, chain)?;
                        Ok((found.found, found.value))
                    }));
                }
                if matches!(
                    end.method.to_string().as_str(),
                    "split_first" | "split_last"
                ) {
                    return None;
                }
                let test = super::expr::is_some_test(call)?;
                let span = call.span();
                let item: Expr = syn::parse_quote_spanned!(span=> #call.unwrap_or_default());
                let flag = self.scalar_expr(&test);
                let value = self.scalar_expr(&item);
                Some(flag.and_then(|flag| {
                    let value = value?;
                    if let Some(ty) = ty {
                        self.builder.refine_ty(value, ty);
                    }
                    Ok((flag, value))
                }))
            }
            // `if c { Some(a) } else { None }`, a `match` whose arms end in
            // options, a block ending in one: the pairs they stand for,
            // `(true, a)` and `(false, 0.0)`, which the branches assign.
            Expr::If(_) | Expr::Match(_) | Expr::Block(_) => {
                // Undeclared: an integer if a `Some` it ends in holds one
                // by its form (`Some(i)` of an index, `Some(3)`), so that
                // its `None` holds an integer zero.
                let ty = match ty {
                    // `hit = match o { … Some(i + 1) … }` of a `hit` that
                    // started as an untyped `None`, a float.
                    Some(ty) if ty.is_float() && self.holds_integer(expr) => {
                        self.cx.error_spanned_by(expr, msg::OPTION_TYPE);
                        return Some(Err(Poison));
                    }
                    Some(ty) => ty.clone(),
                    None if self.holds_integer(expr) => Ty::Int,
                    None => Ty::Float,
                };
                let zero = self.zero_tokens(&ty, span);
                let is_local = |path: &syn::Path| {
                    path.get_ident().is_some_and(|ident| {
                        matches!(self.special(&ident.to_string()), Some(Special::Option))
                    })
                };
                let tupled = tupled(expr, &zero, &is_local)?;
                let parts = self.item_expr(&tupled).and_then(|item| {
                    let mut values = Vec::new();
                    self.flatten(item, span, &mut values)?;
                    match values[..] {
                        [flag, value] => {
                            self.builder.refine_ty(value, &ty);
                            Ok((flag, value))
                        }
                        _ => {
                            self.cx.error_spanned_by(expr, msg::OPTION_VALUE);
                            Err(Poison)
                        }
                    }
                });
                Some(parts)
            }
            _ => {
                let name = self.option_local(expr)?;
                Some(self.option_of(&name))
            }
        }
    }

    /// `o == Some(e)`, `o != None`, `a == b` of option locals (one side at
    /// least an option local): equal when both hold none, or both hold
    /// equal values. `None` if neither side is an option local.
    pub(super) fn option_comparison(&mut self, binary: &syn::ExprBinary) -> Option<Lowered> {
        let negated = match binary.op {
            syn::BinOp::Eq(_) => false,
            syn::BinOp::Ne(_) => true,
            _ => return None,
        };
        let typed = match (
            self.option_local(&binary.left),
            self.option_local(&binary.right),
        ) {
            (Some(name), _) | (None, Some(name)) => self.option_of(&name).ok().map(|(_, v)| v),
            (None, None) => return None,
        };
        let span = binary.span();
        let ty = typed.map(|value| self.ty(value));
        let Some(left) = self.option_parts(&binary.left, ty.as_ref()) else {
            self.cx.error_spanned_by(&binary.left, msg::OPTION_VALUE);
            return Some(Err(Poison));
        };
        let Some(right) = self.option_parts(&binary.right, ty.as_ref()) else {
            self.cx.error_spanned_by(&binary.right, msg::OPTION_VALUE);
            return Some(Err(Poison));
        };
        Some((|| {
            let ((fa, va), (fb, vb)) = (left?, right?);
            let both = self.binary(BinOp::And, fa, fb, span);
            let same = self.binary(BinOp::Eq, va, vb, span);
            let equal_values = self.binary(BinOp::And, both, same, span);
            let either = self.binary(BinOp::Or, fa, fb, span);
            let neither = self.push(Inst::Unary(UnOp::Not, either), Ty::Bool, span);
            let equal = self.binary(BinOp::Or, neither, equal_values, span);
            Ok(match negated {
                true => self.push(Inst::Unary(UnOp::Not, equal), Ty::Bool, span),
                false => equal,
            })
        })())
    }

    /// Whether an option written as `if`s, blocks and `match` arms ends in
    /// a `Some(e)` of an integer by its form: an integer literal, a cast to
    /// an integer type, a local holding an integer, `len()` or `count()`,
    /// or arithmetic on one.
    fn holds_integer(&self, expr: &Expr) -> bool {
        self.holds_integer_with(expr, &[])
    }

    /// [`Lower::holds_integer`], `ints` being names the arms around bind to
    /// integers (`Some(i) => Some(i + 1)` of an option local of integers).
    fn holds_integer_with(&self, expr: &Expr, ints: &[String]) -> bool {
        let is_integer = |e: &Expr| -> bool {
            let mut e = super::strip_parens(e);
            while let Expr::Binary(binary) = e {
                e = super::strip_parens(&binary.left);
            }
            match e {
                Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Int(_)),
                // `v.len()`, `chain.count()`.
                Expr::MethodCall(call) => {
                    call.args.is_empty()
                        && matches!(call.method.to_string().as_str(), "len" | "count")
                }
                Expr::Cast(cast) => super::sig::scalar_type(&cast.ty, None)
                    .is_some_and(|scalar| scalar.ty() == Ty::Int),
                _ => super::expr::local_name(e).is_some_and(|name| {
                    ints.contains(&name)
                        || matches!(self.lookup(&name), Some(Ok(v)) if self.ty(v) == Ty::Int)
                }),
            }
        };
        match super::strip_parens(expr) {
            Expr::Call(call)
                if matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                    && call.args.len() == 1 =>
            {
                is_integer(&call.args[0])
            }
            Expr::If(if_expr) => {
                tail(&if_expr.then_branch).is_some_and(|t| self.holds_integer_with(t, ints))
                    || if_expr
                        .else_branch
                        .as_ref()
                        .is_some_and(|(_, els)| self.holds_integer_with(els, ints))
            }
            Expr::Block(block) => {
                tail(&block.block).is_some_and(|t| self.holds_integer_with(t, ints))
            }
            Expr::Match(m) => {
                // `Some(i)` of an option local holding integers binds one.
                let of_integers = self
                    .option_local(&m.expr)
                    .and_then(|name| self.option_of(&name).ok())
                    .is_some_and(|(_, value)| self.ty(value) == Ty::Int);
                m.arms.iter().any(|arm| {
                    let mut ints = ints.to_vec();
                    if of_integers
                        && let Pat::TupleStruct(some) = &arm.pat
                        && let Some(Pat::Ident(name)) = some.elems.first()
                    {
                        ints.push(name.ident.to_string());
                    }
                    self.holds_integer_with(&arm.body, &ints)
                })
            }
            _ => false,
        }
    }

    /// A zero of `ty` as the function writes it: `0` of an integer, `0.0`,
    /// or `T::ZERO` in a function generic over `T: Float`.
    fn zero_tokens(&self, ty: &Ty, span: proc_macro2::Span) -> proc_macro2::TokenStream {
        match (ty, self.builder.func().float_param.as_ref()) {
            (Ty::Int, _) => quote::quote_spanned!(span=> 0),
            (Ty::Float, Some(param)) => quote::quote_spanned!(span=> #param::ZERO),
            _ => quote::quote_spanned!(span=> 0.0),
        }
    }

    /// The name of the option local `expr` names, if it names one (also
    /// through `copied()`, `cloned()` and `as_ref()`, which change only
    /// whether Rust sees the value behind a reference).
    fn option_local(&self, expr: &Expr) -> Option<String> {
        let mut expr = super::strip_parens(expr);
        while let Expr::MethodCall(call) = expr
            && call.args.is_empty()
            && matches!(
                call.method.to_string().as_str(),
                "copied" | "cloned" | "as_ref"
            )
        {
            expr = super::strip_parens(&call.receiver);
        }
        let name = super::expr::local_name(expr)?;
        matches!(self.special(&name), Some(Special::Option)).then_some(name)
    }

    /// The current parts of the option local `name`.
    fn option_of(&self, name: &str) -> Parts {
        let some = self.lookup(&option_part(name, 0)).unwrap_or(Err(Poison))?;
        let value = self.lookup(&option_part(name, 1)).unwrap_or(Err(Poison))?;
        Ok((some, value))
    }

    /// `if let Some(p) = name { … } else { … }` of an option local: `if`
    /// it holds a value, `p` bound to it. `None` if the `if` is not of
    /// this form.
    pub(super) fn option_if_let(
        &mut self,
        expr: &ExprIf,
        binding: &syn::ExprLet,
        want_value: bool,
        temporaries: bool,
    ) -> Option<Result<Option<Value>, Poison>> {
        let local = self.option_local(&binding.expr);
        let temporary = match temporaries {
            true => self.is_option_source(&binding.expr),
            false => self.is_mapped_option(&binding.expr),
        };
        if local.is_none() && !temporary {
            return None;
        }
        let span = expr.span();
        // `if let Some(0) = hit`: a test inside, as a `match` makes it.
        if local.is_some()
            && let Pat::TupleStruct(some) = &*binding.pat
            && some.path.is_ident("Some")
            && some.elems.len() == 1
            && !binds_only(&some.elems[0])
        {
            let (pat, scrutinee, then) = (&binding.pat, &binding.expr, &expr.then_branch);
            let els = match &expr.else_branch {
                Some((_, els)) => quote::quote!(#els),
                None => quote::quote!({}),
            };
            let desugared: ExprMatch = syn::parse_quote_spanned!(span=>
                match #scrutinee { #pat => #then, _ => #els }
            );
            return Some(self.match_(&desugared, want_value));
        }
        let (some, negated) = match &*binding.pat {
            Pat::TupleStruct(some) if some.path.is_ident("Some") && some.elems.len() == 1 => {
                (Some(&some.elems[0]), false)
            }
            Pat::Ident(none) if none.ident == "None" => (None, true),
            Pat::Path(none) if none.path.is_ident("None") => (None, true),
            _ => {
                self.cx.error_spanned_by(&binding.pat, msg::OPTION_VALUE);
                return Some(Err(Poison));
            }
        };
        Some((|| {
            let (flag, value) = self.option_parts_of(local.as_deref(), &binding.expr)?;
            let cond = match negated {
                true => self.push(Inst::Unary(UnOp::Not, flag), Ty::Bool, span),
                false => flag,
            };
            self.branch(
                Ok(cond),
                want_value,
                span,
                |this| match some {
                    Some(pattern) => this.then_bound(pattern, Item::Value(value), expr, want_value),
                    None => this.block(&expr.then_branch, want_value),
                },
                |this| this.else_branch(expr, want_value),
            )
        })())
    }

    /// `match name { Some(p) => a, None => b }` of an option local, any
    /// arms (`Some(p) if g`, `Some(0.0)`, `None`, `_`, in any order): each
    /// arm tests whether the option holds a value, then its inner pattern
    /// and its guard with the names bound, falling through to the arms
    /// after it (lowered again on each path that reaches them). `None` if
    /// the scrutinee is no option local.
    pub(super) fn option_match(
        &mut self,
        expr: &ExprMatch,
        want_value: bool,
        parts: Option<&[String]>,
    ) -> Option<Result<Option<Value>, Poison>> {
        let local = self.option_local(&expr.expr);
        // `match chain.position(p) { Some(i) => …, None => … }`: an option
        // made where it is matched, its arms naming the variants.
        let temporary = local.is_none()
            && self.is_option_source(&expr.expr)
            && expr.arms.iter().any(|arm| is_option_pattern(&arm.pat));
        if local.is_none() && !temporary {
            return None;
        }
        if expr.arms.is_empty() {
            self.cx
                .error_spanned_by(expr.match_token, msg::OPTION_MATCH);
            return Some(Err(Poison));
        }
        let taken_apart = self.option_parts_of(local.as_deref(), &expr.expr);
        Some(taken_apart.and_then(|(flag, value)| {
            let option = Scrutinee {
                flag,
                value,
                want_value,
                parts,
                span: expr.match_token.span,
            };
            self.option_arms(&expr.arms, option, None)
        }))
    }

    /// The `match` from `arms` on, on a path where whether the option holds
    /// a value is `known` (after an arm that tested it): an arm of the
    /// other variant is skipped there, one of this variant tests nothing
    /// more.
    fn option_arms(
        &mut self,
        arms: &[syn::Arm],
        option: Scrutinee<'_>,
        known: Option<bool>,
    ) -> Result<Option<Value>, Poison> {
        let Some((arm, rest)) = arms.split_first() else {
            // Only a `match` rustc rejects (not exhaustive) gets here.
            self.cx.error_at(option.span, msg::OPTION_MATCH);
            return Err(Poison);
        };
        let (pat, guard) = match &arm.pat {
            Pat::Guard(guarded) => (&*guarded.pat, Some(&*guarded.guard)),
            pat => (pat, None),
        };
        // `Some(Some(p))` for `Some(p)`, `Some(None)` for `None`, `None`
        // for `_`.
        let inner = match pat {
            Pat::TupleStruct(some) if some.path.is_ident("Some") && some.elems.len() == 1 => {
                Some(Some(&some.elems[0]))
            }
            pat if is_none_pattern(pat) => Some(None),
            Pat::Wild(_) => None,
            // `other => …`: every option, bound as a whole.
            Pat::Ident(whole) if whole.subpat.is_none() && whole.by_ref.is_none() => None,
            _ => {
                self.cx.error_spanned_by(pat, msg::OPTION_MATCH);
                return Err(Poison);
            }
        };
        let variant = inner.map(|inner| inner.is_some());
        if variant.is_some() && known.is_some() && variant != known {
            return self.option_arms(rest, option, known);
        }
        // The last arm takes what is left (Rust checked that it all
        // matches), so it tests nothing.
        let last = rest.is_empty();
        let span = arm.pat.span();
        let Scrutinee {
            value,
            want_value,
            parts,
            ..
        } = option;
        // The arm once the option is known to have its variant: the inner
        // pattern's names bound, its test and the guard, then the body.
        let matched = |this: &mut Self, known: Option<bool>| -> Result<Option<Value>, Poison> {
            this.scopes.push(super::Scope::default());
            let mut bindings = Vec::new();
            let test = match inner.flatten() {
                // `Some(&m)` of an `Option<&f64>`: the number.
                Some(mut inner) => {
                    while let Pat::Reference(reference) = inner {
                        inner = &reference.pat;
                    }
                    this.pattern(inner, value, &mut bindings)?
                }
                None => None,
            };
            this.scopes.pop();
            this.scopes.push(
                bindings
                    .iter()
                    .map(|(name, value)| (name.clone(), Ok(*value)))
                    .collect(),
            );
            // `other => …`: a new option local, the scrutinee's parts.
            if let (None, Pat::Ident(whole)) = (inner, pat) {
                this.bind_option(&whole.ident.unraw().to_string(), option.flag, value);
            }
            let result = (|| {
                let body = |this: &mut Self| this.arm_body(arm, want_value, parts);
                if last {
                    return body(this);
                }
                let rest = |this: &mut Self| this.option_arms(rest, option, known);
                let guarded = |this: &mut Self| match guard {
                    Some(guard) => {
                        let cond = this.scalar_expr(guard);
                        this.branch(cond, want_value, span, body, rest)
                    }
                    None => body(this),
                };
                match test {
                    Some(cond) => this.branch(Ok(cond), want_value, span, guarded, rest),
                    None => guarded(this),
                }
            })();
            this.scopes.pop();
            result
        };
        let holds = match variant {
            _ if last || known.is_some() => return matched(self, known),
            None => return matched(self, known),
            Some(true) => option.flag,
            Some(false) => self.push(Inst::Unary(UnOp::Not, option.flag), Ty::Bool, span),
        };
        self.branch(
            Ok(holds),
            want_value,
            span,
            |this| matched(this, variant),
            |this| this.option_arms(rest, option, variant.map(|v| !v)),
        )
    }

    /// The methods of an option local: `is_some()`, `is_none()`,
    /// `is_some_and(f)`, `is_none_or(f)`, `unwrap()`, `expect(m)`,
    /// `unwrap_or(d)`, `unwrap_or_default()`, `map_or(d, f)`. `None` if the
    /// receiver is no option local.
    pub(super) fn option_method(&mut self, call: &ExprMethodCall) -> Option<Lowered> {
        let local = self.option_local(&call.receiver);
        // Of an option made here (`chain.filter(p).reduce(f).map_or(d, g)`,
        // `x.iter().position(p).is_some()`): the methods that take it
        // apart as a whole. `unwrap`, `expect`, `unwrap_or` and
        // `unwrap_or_default` of elements and reductions are lowered where
        // those are (what `option_parts` itself lowers them to).
        let temporary = self.is_mapped_option(&call.receiver)
            || (self.is_option_source(&call.receiver)
                && matches!(
                    call.method.to_string().as_str(),
                    "map_or" | "is_some" | "is_none" | "is_some_and" | "is_none_or"
                ));
        if local.is_none() && !temporary {
            return None;
        }
        let span = call.span();
        let method = call.method.to_string();
        Some((|| {
            let (flag, value) = self.option_parts_of(local.as_deref(), &call.receiver)?;
            let empty = self.push(Inst::Unary(UnOp::Not, flag), Ty::Bool, span);
            match (method.as_str(), call.args.len()) {
                ("is_some", 0) => Ok(flag),
                ("is_none", 0) => Ok(empty),
                ("unwrap", 0) | ("expect" | "unwrap_or", 1) => {
                    self.unwrapped(call, empty, span, |_| Ok(value))
                }
                ("unwrap_or_default", 0) => {
                    let ty = self.ty(value);
                    self.chosen(
                        flag,
                        span,
                        |_| Ok(value),
                        |this| Ok(this.push(Inst::Const(Const::Zero), ty, span)),
                    )
                }
                // `map_or(d, f)`: `f` runs only on a value.
                ("map_or", 2) => {
                    let f = self.callable(&call.args[1])?;
                    let fallback = &call.args[0];
                    self.chosen(
                        flag,
                        span,
                        |this| this.applied(&f, value, span),
                        |this| this.expr(fallback),
                    )
                }
                // `is_some_and(f)`: likewise, `false` without a value;
                // `is_none_or(f)`: `true` without one.
                ("is_some_and" | "is_none_or", 1) => {
                    let f = self.callable(&call.args[0])?;
                    let otherwise = Inst::Const(Const::Bool(method == "is_none_or"));
                    self.chosen(
                        flag,
                        span,
                        |this| this.applied(&f, value, span),
                        |this| Ok(this.push(otherwise, Ty::Bool, span)),
                    )
                }
                _ => {
                    self.cx.error_spanned_by(&call.method, msg::OPTION_VALUE);
                    Err(Poison)
                }
            }
        })())
    }

    /// Whether `expr` is `o.map(f)` of an option: an option local, or what
    /// [`Lower::option_parts`] takes apart from a method (`x.first()`,
    /// `chain.position(p)`, `chain.find(p)`, `chain.reduce(f)`, …), or
    /// such a `map` again.
    fn is_mapped_option(&self, expr: &Expr) -> bool {
        let Expr::MethodCall(call) = super::strip_parens(expr) else {
            return false;
        };
        if call.method != "map" || call.args.len() != 1 {
            return false;
        }
        let receiver = super::strip_parens(&call.receiver);
        self.option_local(receiver).is_some() || self.is_option_source(receiver)
    }

    /// Whether `expr` is an option made where it is read that
    /// [`Lower::option_parts`] takes apart: a search (`chain.position(p)`,
    /// `chain.find(p)`, `chain.filter(p).next()`), an element (`x.first()`,
    /// `x.get(i)`), a reduction (`chain.reduce(f)`, `max_by`, `min_by`),
    /// `chain.next()`, or `map(f)` of one.
    pub(super) fn is_option_source(&self, expr: &Expr) -> bool {
        let Expr::MethodCall(source) = super::strip_parens(expr) else {
            return false;
        };
        if self.is_mapped_option(expr) {
            return true;
        }
        let searched =
            |call: &ExprMethodCall| super::iter::is_position(call) || super::iter::is_find(call);
        let filtered_next = matches!(source.method.to_string().as_str(), "next" | "last")
            && source.args.is_empty()
            && matches!(&*source.receiver, Expr::MethodCall(filter) if filter.method == "filter");
        searched(source)
            || searched(super::iter::through_copied(source).0)
            || filtered_next
            || super::expr::is_some_test(source).is_some()
    }

    /// The parts of `o.map(f)` (see [`Lower::is_mapped_option`]): whether
    /// `o` holds a value, and `f` of it, run only then (a zero of `f`'s
    /// type otherwise).
    fn option_mapped(&mut self, call: &ExprMethodCall, ty: Option<&Ty>) -> Parts {
        let span = call.span();
        let local = self.option_local(&call.receiver);
        let (flag, value) = self.option_parts_of(local.as_deref(), &call.receiver)?;
        let f = self.callable(&call.args[0])?;
        let mapped_ty = std::cell::RefCell::new(ty.cloned().unwrap_or(Ty::Float));
        let mapped = self.chosen(
            flag,
            span,
            |this| {
                let mapped = this.applied(&f, value, span)?;
                match ty {
                    Some(ty) => this.builder.refine_ty(mapped, ty),
                    None => *mapped_ty.borrow_mut() = this.ty(mapped),
                }
                Ok(mapped)
            },
            |this| Ok(this.push(Inst::Const(Const::Zero), mapped_ty.borrow().clone(), span)),
        )?;
        Ok((flag, mapped))
    }

    /// The parts of the option local `local`, or else of `expr`, an option
    /// [`Lower::is_option_source`] accepts (an error if it cannot be taken
    /// apart after all: a search over no chain the lowering knows).
    fn option_parts_of(&mut self, local: Option<&str>, expr: &Expr) -> Parts {
        match local {
            Some(name) => self.option_of(name),
            None => self.option_parts(expr, None).unwrap_or_else(|| {
                self.cx.error_spanned_by(expr, msg::OPTION_VALUE);
                Err(Poison)
            }),
        }
    }

    /// `if flag { then } else { otherwise }`, each a value.
    fn chosen(
        &mut self,
        flag: Value,
        span: proc_macro2::Span,
        then: impl FnOnce(&mut Self) -> Lowered,
        otherwise: impl FnOnce(&mut Self) -> Lowered,
    ) -> Lowered {
        self.branch(
            Ok(flag),
            true,
            span,
            |this| then(this).map(Some),
            |this| otherwise(this).map(Some),
        )
        .map(|value| value.expect("both branches have a value"))
    }

    /// `f(value)`, a number.
    fn applied(
        &mut self,
        f: &super::closures::Callable,
        value: Value,
        span: proc_macro2::Span,
    ) -> Lowered {
        let item = self.apply(f, vec![Item::Value(value)], span)?;
        self.scalar_item(item, span)
    }
}

/// The hidden variable holding part `k` of the option local `name`:
/// `#best?some` (whether it holds a value), shown as `best_some`, and
/// `#best?` (the value), shown as `best`.
pub(super) fn option_part(name: &str, k: usize) -> String {
    match k {
        0 => format!("#{name}?some"),
        _ => format!("#{name}?"),
    }
}

/// `expr`, whose value is an option, with each option it ends in written as
/// the pair it is made of: `Some(e)` as `(true, e)`, `None` as `(false,
/// zero)`, an option local `o` (one `is_local` knows) as `(o.is_some(),
/// o.unwrap_or_default())`, through the tails of `if`s, blocks and `match`
/// arms (an arm that panics stays as it is). `None` if some tail is no
/// option.
fn tupled(
    expr: &Expr,
    zero: &proc_macro2::TokenStream,
    is_local: &dyn Fn(&syn::Path) -> bool,
) -> Option<Expr> {
    let span = expr.span();
    match super::strip_parens(expr) {
        Expr::Path(path) if path.path.is_ident("None") => {
            Some(syn::parse_quote_spanned!(span=> (false, #zero)))
        }
        Expr::Path(path) if is_local(&path.path) => Some(syn::parse_quote_spanned!(
            span=> (#path.is_some(), #path.unwrap_or_default())
        )),
        Expr::Call(call)
            if matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                && call.args.len() == 1 =>
        {
            let value = &call.args[0];
            Some(syn::parse_quote_spanned!(span=> (true, #value)))
        }
        Expr::If(if_expr) => {
            let (else_token, els) = if_expr.else_branch.as_ref()?;
            let then = tupled_block(&if_expr.then_branch, zero, is_local)?;
            let els = tupled(els, zero, is_local)?;
            let mut tupled_if = if_expr.clone();
            tupled_if.then_branch = then;
            tupled_if.else_branch = Some((*else_token, Box::new(els)));
            Some(Expr::If(tupled_if))
        }
        Expr::Block(block) if block.label.is_none() => {
            let inner = tupled_block(&block.block, zero, is_local)?;
            let mut tupled_block_expr = block.clone();
            tupled_block_expr.block = inner;
            Some(Expr::Block(tupled_block_expr))
        }
        Expr::Match(match_expr) => {
            let bodies = match_expr
                .arms
                .iter()
                .map(|arm| match super::macros::diverges_expr(&arm.body) {
                    true => Some((*arm.body).clone()),
                    false => match &arm.pat {
                        // `other => other`: the option matched on, whole.
                        Pat::Ident(whole) if whole.subpat.is_none() && whole.ident != "None" => {
                            let bound =
                                |path: &syn::Path| is_local(path) || path.is_ident(&whole.ident);
                            tupled(&arm.body, zero, &bound)
                        }
                        _ => tupled(&arm.body, zero, is_local),
                    },
                })
                .collect::<Option<Vec<Expr>>>()?;
            let mut tupled_match = match_expr.clone();
            for (arm, body) in tupled_match.arms.iter_mut().zip(bodies) {
                *arm.body = body;
            }
            Some(Expr::Match(tupled_match))
        }
        _ => None,
    }
}

/// The expression a block ends in, if any.
fn tail(block: &syn::Block) -> Option<&Expr> {
    match block.stmts.last() {
        Some(syn::Stmt::Expr(tail, None)) => Some(tail),
        _ => None,
    }
}

/// A block whose tail is an option, its tail [`tupled`].
fn tupled_block(
    block: &syn::Block,
    zero: &proc_macro2::TokenStream,
    is_local: &dyn Fn(&syn::Path) -> bool,
) -> Option<syn::Block> {
    let tail = tupled(tail(block)?, zero, is_local)?;
    let mut block = block.clone();
    *block.stmts.last_mut().expect("a tail") = syn::Stmt::Expr(tail, None);
    Some(block)
}

/// Whether a pattern only binds (`v`, `&v`, `_`, `mut v`), testing nothing.
fn binds_only(pat: &Pat) -> bool {
    match pat {
        Pat::Ident(ident) => ident.subpat.is_none(),
        Pat::Wild(_) => true,
        Pat::Reference(reference) => binds_only(&reference.pat),
        _ => false,
    }
}

/// `T` of `Option<T>` (or `std::option::Option<T>`), if `ty` is one.
fn option_type(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

/// Whether a `match` arm's pattern names an option's variant: `Some(…)`,
/// `None` (also under a guard or in `|`).
fn is_option_pattern(pat: &Pat) -> bool {
    match pat {
        Pat::TupleStruct(some) => some.path.is_ident("Some"),
        Pat::Ident(_) | Pat::Path(_) => is_none_pattern(pat),
        Pat::Guard(guarded) => is_option_pattern(&guarded.pat),
        Pat::Or(or) => or.cases.iter().any(is_option_pattern),
        Pat::Paren(paren) => is_option_pattern(&paren.pat),
        _ => false,
    }
}

/// Whether a pattern is `None` (read as a name or as a path).
pub(super) fn is_none_pattern(pat: &Pat) -> bool {
    match pat {
        Pat::Ident(none) => none.ident == "None" && none.subpat.is_none(),
        Pat::Path(none) => none.path.is_ident("None"),
        _ => false,
    }
}

/// Whether `expr` is written as an option: `None` or `Some(e)`.
fn is_option_form(expr: &Expr) -> bool {
    match super::strip_parens(expr) {
        Expr::If(_) | Expr::Match(_) | Expr::Block(_) => {
            tupled(expr, &proc_macro2::TokenStream::new(), &|_| false).is_some()
        }
        Expr::Path(path) => path.path.is_ident("None"),
        Expr::Call(call) => {
            matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                && call.args.len() == 1
        }
        _ => false,
    }
}
