//! Macros that do not compute the output: assertions, printing, panics and
//! `dbg!`. Each becomes an [`Inst::Effect`] that the primal pass runs where
//! the macro stands; the adjoint never runs it.
//!
//! The invocation is emitted as the user wrote it, in a block that binds
//! each local it names (in its arguments or captured by its format string,
//! `"{x}"`) to the value the local holds there. So the conditions, the
//! messages (`assertion failed: !x.is_empty()`) and what is printed are
//! those of the function itself.
//!
//! ```text
//! assert!(s > 0.0, "s = {s}");   ⇒   %6 = effect assert! %s
//!                                    ; { let s = s_1; assert!(s > 0.0, "s = {s}"); }
//! ```

use std::rc::Rc;

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Macro};

use super::{Lower, Lowered, Poison, Special};
use crate::diag::msg;
use crate::ir::{Binding, BindingKind, Const, EffectMacro, Inst, Ty, Value};

/// Whether a macro is one this module lowers, and whether it diverges.
fn diverges(name: &str) -> Option<bool> {
    Some(match name {
        "println" | "print" | "eprintln" | "eprint" | "dbg" => false,
        "assert" | "debug_assert" | "assert_eq" | "assert_ne" | "debug_assert_eq"
        | "debug_assert_ne" => false,
        "panic" | "unreachable" | "todo" | "unimplemented" => true,
        _ => return None,
    })
}

/// Whether `mac` is written `name!`, `std::name!` or `core::name!`: the
/// macros this module knows are `std`'s.
fn std_path(mac: &Macro) -> bool {
    let segments = &mac.path.segments;
    segments.len() == 1
        || segments
            .first()
            .is_some_and(|first| first.ident == "std" || first.ident == "core")
}

/// Whether `expr` is a macro that panics (`unreachable!()`, `panic!(…)`).
pub(super) fn diverges_expr(expr: &Expr) -> bool {
    let mac = match expr {
        Expr::Macro(mac) => &mac.mac,
        Expr::Block(block) => match block.block.stmts.as_slice() {
            [syn::Stmt::Macro(mac)] => &mac.mac,
            [syn::Stmt::Expr(inner, _)] => return diverges_expr(inner),
            _ => return false,
        },
        _ => return false,
    };
    diverges_macro(mac)
}

/// Whether `mac` panics (`unreachable!()`, `panic!(…)`).
pub(super) fn diverges_macro(mac: &Macro) -> bool {
    std_path(mac)
        && mac
            .path
            .segments
            .last()
            .and_then(|last| diverges(&last.ident.to_string()))
            .unwrap_or(false)
}

/// Whether `mac` is `name!`, `std::name!` or `core::name!`.
pub(super) fn is_std_macro(mac: &Macro, name: &str) -> bool {
    std_path(mac)
        && mac
            .path
            .segments
            .last()
            .is_some_and(|last| last.ident == name)
}

impl Lower<'_> {
    /// `matches!(e, pattern)`: `e` lowered, the test run as written with the
    /// locals the pattern (and its guard) names bound. A `bool`: constant
    /// data, like a comparison.
    pub(super) fn matches_macro(&mut self, mac: &Macro) -> Lowered {
        let span = mac.path.span();
        let parsed = mac.parse_body_with(|input: syn::parse::ParseStream| {
            let expr: Expr = input.parse()?;
            input.parse::<syn::Token![,]>()?;
            let rest: TokenStream = input.parse()?;
            Ok((expr, rest))
        });
        let Ok((expr, rest)) = parsed else {
            return self.unsupported(mac, msg::macro_(&mac.path));
        };
        let scrutinee = self.scrutinee(&expr)?;
        // `matches!(self.act, Act::Relu)`: the field is no float.
        let pattern = syn::parse::Parser::parse2(syn::Pat::parse_multi_with_leading_vert, {
            let mut pattern = TokenStream::new();
            for token in rest.clone() {
                if matches!(&token, TokenTree::Ident(ident) if ident == "if") {
                    break;
                }
                pattern.extend([token]);
            }
            pattern
        });
        if pattern.is_ok_and(|pattern| super::expr::names_variant(&pattern)) {
            self.opaque_use(scrutinee);
        }
        let name = Ident::new("__ad_scrutinee", span);
        let path = &mac.path;
        let tokens = quote_spanned!(span=> #path!(#name, #rest));
        self.written_with(tokens, rest, vec![(name, scrutinee)], Ty::Bool, span)
    }

    /// `tokens` run as written (an [`Inst::Effect`] of type `ty`), with the
    /// locals the user's tokens `user` name bound, and each of `inline`
    /// written in place of its name (never bound, so never moved).
    pub(super) fn written_with(
        &mut self,
        tokens: TokenStream,
        user: TokenStream,
        inline: Vec<(Ident, Value)>,
        ty: Ty,
        span: Span,
    ) -> Lowered {
        let kind = BindingKind::Inline { receiver: false };
        let values = inline
            .into_iter()
            .map(|(name, value)| (Binding { name, kind }, value))
            .collect();
        self.effect_bound(tokens, user, values, ty, span)
    }

    /// A macro that does not compute the output, run for its effect. `None`
    /// if `mac` is no such macro. Its value is `dbg!`'s argument, a
    /// placeholder after a macro that diverges (never read), or `()`.
    pub(super) fn effect_macro(&mut self, mac: &Macro) -> Option<Lowered> {
        let last = mac.path.segments.last()?.ident.to_string();
        let diverges = diverges(&last).filter(|_| std_path(mac))?;
        Some(self.effect(mac, &last, diverges))
    }

    fn effect(&mut self, mac: &Macro, name: &str, diverges: bool) -> Lowered {
        let span = mac.path.span();
        // `dbg!(e)` is worth `e`.
        let value = if name == "dbg" {
            match mac.parse_body::<Expr>() {
                Ok(expr) => Some(self.expr(&expr)?),
                Err(_) => return self.unsupported(mac, msg::DBG_ARGUMENTS),
            }
        } else {
            None
        };
        let path = &mac.path;
        let body = &mac.tokens;
        // Every token keeps the user's span, so that a panic reports the
        // macro's own line and column (`Location::caller`), as `dbg!` does.
        let bang = mac.bang_token;
        let (delimiter, delim_span) = match &mac.delimiter {
            syn::MacroDelimiter::Paren(paren) => (Delimiter::Parenthesis, paren.span),
            syn::MacroDelimiter::Brace(brace) => (Delimiter::Brace, brace.span),
            syn::MacroDelimiter::Bracket(bracket) => (Delimiter::Bracket, bracket.span),
        };
        let mut group = Group::new(delimiter, body.clone());
        group.set_span(delim_span.join());
        let semi = Punct::new(';', Spacing::Alone);
        let mut semi = TokenTree::Punct(semi);
        semi.set_span(delim_span.close());
        let tokens = quote!(#path #bang #group #semi);
        self.as_written(tokens, body.clone(), Vec::new(), Ty::Unit, span)?;
        Ok(match value {
            Some(value) => value,
            // After a panic: never read.
            None if diverges => self.push(Inst::Const(Const::Zero), Ty::Unknown, span),
            None => self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span),
        })
    }
}

impl Lower<'_> {
    /// The locals `tokens` name, each bound as an effect binds it, and the
    /// values of the bindings.
    fn bindings(&mut self, tokens: TokenStream) -> Result<(Vec<Binding>, Vec<Value>), Poison> {
        let mut names = Vec::new();
        locals_named(tokens, &mut names);
        let mut bindings = Vec::new();
        let mut args = Vec::new();
        for ident in names {
            let name = ident.to_string();
            if let Some(special) = self.special(&name) {
                match special {
                    Special::View(view) => {
                        bindings.push(Binding {
                            name: ident,
                            kind: BindingKind::View,
                        });
                        args.extend([view.buf, view.start, view.len]);
                    }
                    Special::Closure(_) => {
                        self.cx.error_spanned_by(&ident, msg::CLOSURE_IN_MACRO);
                        return Err(Poison);
                    }
                    Special::Cursor(..) | Special::Chain(_) => {
                        self.cx.error_spanned_by(&ident, msg::CURSOR_IN_MACRO);
                        return Err(Poison);
                    }
                    // `best`, printed: the tuple of its elements.
                    Special::Tuple(n) => {
                        for k in 0..n {
                            match self.lookup(&super::tuple_element(&name, k)) {
                                Some(Ok(value)) => args.push(value),
                                _ => return Err(Poison),
                            }
                        }
                        bindings.push(Binding {
                            name: ident,
                            kind: BindingKind::Tuple(n),
                        });
                    }
                    Special::Option => {
                        self.cx.error_spanned_by(&ident, msg::OPTION_VALUE);
                        return Err(Poison);
                    }
                    // `kind: Activation`, lent: never moved (a format
                    // string names it, `"{kind:?}"`, so it is bound).
                    Special::Opaque(value) => {
                        bindings.push(Binding {
                            name: ident,
                            kind: BindingKind::Ref,
                        });
                        args.push(value);
                    }
                    // The row length is a constant: a literal or a const's path.
                    Special::Rows(rows) => {
                        bindings.push(Binding {
                            name: ident,
                            kind: BindingKind::Rows,
                        });
                        args.extend([rows.flat.buf, rows.flat.start, rows.flat.len, rows.width]);
                    }
                }
                continue;
            }
            // An element of `iter_mut()` is `&mut f64` to the user's code.
            let (local, place) = match self.element(&name) {
                Some((buf, index)) => (Ok(self.load(buf, index, ident.span())), true),
                None => match self.lookup(&name) {
                    Some(local) => (local, false),
                    None => continue,
                },
            };
            let local = local?;
            let kind = match self.ty(local) {
                Ty::Buf(_) => BindingKind::Slice,
                _ if place || self.is_ref(&name) => BindingKind::Ref,
                _ => BindingKind::Value,
            };
            bindings.push(Binding { name: ident, kind });
            args.push(local);
        }
        Ok((bindings, args))
    }

    /// `tokens` run as written where they stand (an [`Inst::Effect`] of
    /// type `ty`), with the locals the user's tokens `user` name bound, and
    /// `values` bound to the generated names given (which the user's tokens
    /// cannot see).
    pub(super) fn as_written(
        &mut self,
        tokens: TokenStream,
        user: TokenStream,
        values: Vec<(Ident, Value)>,
        ty: Ty,
        span: Span,
    ) -> Lowered {
        let values = values
            .into_iter()
            .map(|(name, value)| {
                // A buffer is lent as a slice, never moved.
                let kind = match self.ty(value) {
                    Ty::Buf(_) => BindingKind::Slice,
                    _ => BindingKind::Value,
                };
                (Binding { name, kind }, value)
            })
            .collect();
        self.effect_bound(tokens, user, values, ty, span)
    }

    /// `tokens` as an [`Inst::Effect`] of type `ty`: the locals `user`
    /// names bound as effects bind them, then `values` as given.
    fn effect_bound(
        &mut self,
        tokens: TokenStream,
        user: TokenStream,
        values: Vec<(Binding, Value)>,
        ty: Ty,
        span: Span,
    ) -> Lowered {
        let (mut bindings, mut args) = self.bindings(user)?;
        for (binding, value) in values {
            bindings.push(binding);
            args.push(value);
        }
        let mac = Rc::new(EffectMacro { tokens, bindings });
        Ok(self.push(Inst::Effect { mac, args }, ty, span))
    }

    /// A call of the macro's own making, `tokens`, each of `values` written
    /// in place of its name (`__ad_receiver` before a `.`): run as written
    /// where it stands, an [`Inst::Effect`] of type `ty`.
    pub(super) fn call_as_written(
        &mut self,
        tokens: TokenStream,
        values: Vec<(Ident, Value)>,
        ty: Ty,
        span: Span,
    ) -> Value {
        let (bindings, args) = values
            .into_iter()
            .map(|(name, value)| {
                let receiver = name == "__ad_receiver";
                let kind = BindingKind::Inline { receiver };
                (Binding { name, kind }, value)
            })
            .unzip();
        let mac = Rc::new(EffectMacro { tokens, bindings });
        self.push(Inst::Effect { mac, args }, ty, span)
    }

    /// A `bool` computed by the user's own code (`expr`, naming locals in
    /// `user`), run as written.
    pub(super) fn opaque_bool(
        &mut self,
        expr: TokenStream,
        user: TokenStream,
        values: Vec<(Ident, Value)>,
        span: Span,
    ) -> Lowered {
        self.as_written(expr, user, values, Ty::Bool, span)
    }

    /// A statement the expansion adds (a check), run as written with
    /// `values` bound to the generated names given.
    pub(super) fn effect_with(
        &mut self,
        tokens: TokenStream,
        values: Vec<(Ident, Value)>,
        span: Span,
    ) -> Result<(), Poison> {
        self.as_written(tokens, TokenStream::new(), values, Ty::Unit, span)
            .map(drop)
    }

    /// `panic!(message…)` where the function would panic (`unwrap()` of
    /// `None`).
    pub(super) fn panic_effect(&mut self, message: TokenStream, span: Span) -> Result<(), Poison> {
        let tokens = quote_spanned!(span=> ::core::panic!(#message););
        self.as_written(tokens, message, Vec::new(), Ty::Unit, span)
            .map(drop)
    }
}

/// The identifiers in a macro's tokens that may name locals: not a method or
/// a field (`.len`), not a segment of a longer path (`f64::EPSILON`), not a
/// macro (`format!`), not `self`; and the names its format strings capture.
fn locals_named(tokens: TokenStream, names: &mut Vec<Ident>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let is_punct = |at: Option<&TokenTree>, c: char| matches!(at, Some(TokenTree::Punct(punct)) if punct.as_char() == c);
    for (k, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => locals_named(group.stream(), names),
            TokenTree::Ident(ident) => {
                let before = k.checked_sub(1).and_then(|k| tokens.get(k));
                let after = tokens.get(k + 1);
                let member = is_punct(before, '.') || is_punct(before, ':');
                let leads_path = is_punct(after, ':') && is_punct(tokens.get(k + 2), ':');
                // `name!(…)`, not `x != y` (`!` then `=`, not a group).
                let is_macro =
                    is_punct(after, '!') && matches!(tokens.get(k + 2), Some(TokenTree::Group(_)));
                if !member && !leads_path && !is_macro && ident != "self" {
                    push_name(names, ident.clone());
                }
            }
            TokenTree::Literal(literal) => {
                let literal = TokenStream::from(TokenTree::Literal(literal.clone()));
                if let Ok(syn::Lit::Str(string)) = syn::parse2::<syn::Lit>(literal) {
                    for name in captures(&string.value()) {
                        push_name(names, Ident::new(&name, string.span()));
                    }
                }
            }
            TokenTree::Punct(_) => {}
        }
    }
}

fn push_name(names: &mut Vec<Ident>, ident: Ident) {
    if !names.contains(&ident) {
        names.push(ident);
    }
}

/// The names a format string captures: `{x}`, `{x:?}`, `{:w$}`, `{:.p$}`.
fn captures(format: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '{' {
            continue;
        }
        if chars.peek() == Some(&'{') {
            chars.next();
            continue;
        }
        let mut spec = String::new();
        for c in chars.by_ref() {
            if c == '}' {
                break;
            }
            spec.push(c);
        }
        let (argument, format_spec) = spec.split_once(':').unwrap_or((&spec, ""));
        let mut push = |name: &str| {
            let name = name.trim();
            let is_ident = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            if is_ident && !names.iter().any(|known| known == name) {
                names.push(name.to_owned());
            }
        };
        push(argument);
        // `w$` and `.p$`: a width or precision read from a variable.
        let parts: Vec<&str> = format_spec.split('$').collect();
        for part in &parts[..parts.len() - 1] {
            let name = part.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'));
            if let Some(name) = name.into_iter().next() {
                push(name);
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::captures;

    #[test]
    fn format_strings_capture_names() {
        assert_eq!(captures("x = {x}, {{y}} {0} {} {z:?}"), ["x", "z"]);
        assert_eq!(captures("{:>w$.p$} {v:.prec$}"), ["w", "p", "v", "prec"]);
        assert_eq!(captures("no braces"), Vec::<String>::new());
    }
}
