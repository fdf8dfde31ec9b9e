//! `#[cfg(…)]` in a differentiated body.
//!
//! rustc evaluates the conditions after the attribute has expanded, and the
//! macro cannot: it sees `#[cfg(feature = "x")]` and not whether the feature
//! is on. So the generated functions are made once per combination of the
//! body's conditions, each from the body with the statements of that
//! combination kept, and each emitted under `#[cfg(all(…))]` of it; rustc
//! keeps the one that holds. (A statement whose condition is false would
//! otherwise run in `_vjp`.) A body without `#[cfg]` is made once, as before.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Attribute, Block, Expr, Stmt};

/// At most this many distinct conditions in one body: each doubles the
/// functions the macro makes.
pub(crate) const MAX_CONDITIONS: usize = 3;

/// A distinct condition of the body's `#[cfg(…)]` attributes, with its
/// first attribute (for messages).
pub(crate) struct Condition {
    pub(crate) predicate: TokenStream,
    pub(crate) attr: Attribute,
}

/// The distinct conditions of `#[cfg(…)]` on the statements and `match` arms
/// of `block`, in the order they are written.
pub(crate) fn conditions(block: &Block) -> Vec<Condition> {
    struct Collect(Vec<Condition>);
    impl VisitMut for Collect {
        fn visit_attribute_mut(&mut self, attr: &mut Attribute) {
            if let Some((predicate, _)) = predicate(attr)
                && !self
                    .0
                    .iter()
                    .any(|known| known.predicate.to_string() == predicate.to_string())
            {
                self.0.push(Condition {
                    predicate,
                    attr: attr.clone(),
                });
            }
        }
    }
    let mut collect = Collect(Vec::new());
    collect.visit_block_mut(&mut block.clone());
    collect.0
}

/// `block` as it is when condition `k` holds exactly when bit `k` of `truth`
/// is set: statements and arms whose conditions fail removed, the `#[cfg]`
/// of the others removed. The first `#[cfg]` left elsewhere (on an
/// expression inside an expression, a field) is an error: its span.
pub(crate) fn select(
    block: &mut Block,
    conditions: &[Condition],
    truth: u32,
) -> Result<(), Box<Attribute>> {
    let mut select = Select {
        conditions,
        truth,
        misplaced: None,
    };
    select.visit_block_mut(block);
    select.misplaced.map_or(Ok(()), Err)
}

/// `all(c0, not(c1), …)`: the combination `truth` of `conditions` (one
/// term alone, as clippy's `non_minimal_cfg` wants it).
pub(crate) fn combination(conditions: &[Condition], truth: u32) -> TokenStream {
    let mut terms: Vec<TokenStream> = conditions
        .iter()
        .enumerate()
        .map(|(k, condition)| {
            let predicate = &condition.predicate;
            if truth & (1 << k) != 0 {
                predicate.clone()
            } else {
                quote!(not(#predicate))
            }
        })
        .collect();
    if terms.len() == 1 {
        return terms.remove(0);
    }
    quote!(all(#(#terms),*))
}

/// The condition of `#[cfg(condition)]`, and whether it is negated: the
/// condition of `#[cfg(not(c))]` is `c`'s, so that `c` and `not(c)` count
/// once.
fn predicate(attr: &Attribute) -> Option<(TokenStream, bool)> {
    if !attr.path().is_ident("cfg") {
        return None;
    }
    let tokens = attr.meta.require_list().ok()?.tokens.clone();
    let mut trees = tokens.clone().into_iter();
    if let (Some(TokenTree::Ident(not)), Some(TokenTree::Group(group)), None) =
        (trees.next(), trees.next(), trees.next())
        && not == "not"
        && group.delimiter() == Delimiter::Parenthesis
    {
        return Some((group.stream(), true));
    }
    Some((tokens, false))
}

struct Select<'a> {
    conditions: &'a [Condition],
    truth: u32,
    misplaced: Option<Box<Attribute>>,
}

impl Select<'_> {
    /// Whether every condition of `attrs` holds; their `#[cfg]`s removed.
    fn keep(&self, attrs: &mut Vec<Attribute>) -> bool {
        let mut keep = true;
        attrs.retain(|attr| match predicate(attr) {
            Some((predicate, negated)) => {
                let k = self
                    .conditions
                    .iter()
                    .position(|known| known.predicate.to_string() == predicate.to_string())
                    .expect("every condition collected");
                keep &= (self.truth & (1 << k) != 0) != negated;
                false
            }
            None => true,
        });
        keep
    }
}

impl VisitMut for Select<'_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let stmts = std::mem::take(&mut block.stmts);
        for mut stmt in stmts {
            if stmt_attrs(&mut stmt).is_none_or(|attrs| self.keep(attrs)) {
                block.stmts.push(stmt);
            }
        }
        syn::visit_mut::visit_block_mut(self, block);
    }

    fn visit_expr_match_mut(&mut self, expr: &mut syn::ExprMatch) {
        let arms = std::mem::take(&mut expr.arms);
        expr.arms = arms
            .into_iter()
            .filter_map(|mut arm| self.keep(&mut arm.attrs).then_some(arm))
            .collect();
        syn::visit_mut::visit_expr_match_mut(self, expr);
    }

    fn visit_attribute_mut(&mut self, attr: &mut Attribute) {
        if predicate(attr).is_some() && self.misplaced.is_none() {
            self.misplaced = Some(Box::new(attr.clone()));
        }
    }
}

/// The attributes of a statement, where `#[cfg]` can be.
fn stmt_attrs(stmt: &mut Stmt) -> Option<&mut Vec<Attribute>> {
    match stmt {
        Stmt::Local(local) => Some(&mut local.attrs),
        Stmt::Macro(mac) => Some(&mut mac.attrs),
        Stmt::Item(syn::Item::Const(item)) => Some(&mut item.attrs),
        Stmt::Item(syn::Item::Static(item)) => Some(&mut item.attrs),
        Stmt::Item(syn::Item::Use(item)) => Some(&mut item.attrs),
        Stmt::Item(syn::Item::Fn(item)) => Some(&mut item.attrs),
        Stmt::Item(_) => None,
        Stmt::Expr(expr, _) => expr_attrs(expr),
    }
}

/// The outer attributes of an expression statement.
fn expr_attrs(expr: &mut Expr) -> Option<&mut Vec<Attribute>> {
    Some(match expr {
        Expr::Array(e) => &mut e.attrs,
        Expr::Assign(e) => &mut e.attrs,
        Expr::Binary(e) => &mut e.attrs,
        Expr::Block(e) => &mut e.attrs,
        Expr::Break(e) => &mut e.attrs,
        Expr::Call(e) => &mut e.attrs,
        Expr::Cast(e) => &mut e.attrs,
        Expr::Closure(e) => &mut e.attrs,
        Expr::Continue(e) => &mut e.attrs,
        Expr::Field(e) => &mut e.attrs,
        Expr::ForLoop(e) => &mut e.attrs,
        Expr::If(e) => &mut e.attrs,
        Expr::Index(e) => &mut e.attrs,
        Expr::Lit(e) => &mut e.attrs,
        Expr::Loop(e) => &mut e.attrs,
        Expr::Macro(e) => &mut e.attrs,
        Expr::Match(e) => &mut e.attrs,
        Expr::MethodCall(e) => &mut e.attrs,
        Expr::Paren(e) => &mut e.attrs,
        Expr::Path(e) => &mut e.attrs,
        Expr::Range(e) => &mut e.attrs,
        Expr::Reference(e) => &mut e.attrs,
        Expr::Repeat(e) => &mut e.attrs,
        Expr::Return(e) => &mut e.attrs,
        Expr::Tuple(e) => &mut e.attrs,
        Expr::Unary(e) => &mut e.attrs,
        Expr::Unsafe(e) => &mut e.attrs,
        Expr::While(e) => &mut e.attrs,
        _ => return None,
    })
}
