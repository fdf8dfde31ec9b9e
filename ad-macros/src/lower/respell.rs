//! Rewrites of the body before it is lowered: other spellings of forms the
//! lowering takes, each replaced by the form it is the same program as, so
//! that the rest of the lowering meets one spelling.
//!
//! - `v.extend(chain);` is the loop `for item in chain { v.push(item); }`;
//! - `tmp.clear();` opening a loop's body is a `Vec` made afresh there;
//! - `Vec::from(s)` is `s.to_vec()`; `Vec::from_iter(chain)` is
//!   `chain.collect()`; `Vec::from([a, b])` and
//!   `[a, b].to_vec()` are `vec![a, b]`; `v.clone_from(&w)` is
//!   `v = w.clone()`;
//! - `[a, b].concat()` is `a.iter().chain(b.iter()).copied().collect()`;
//!   `x.split_first().map(|(h, t)| e).unwrap_or(d)` (`map_or(d, …)`,
//!   `split_last`) is `if let Some((h, t)) = x.split_first() { e } else { d }`;
//! - `while let Some(v) = s.pop() { … }`, whose body leaves `s` alone, is
//!   `for v in s.iter().copied().rev() { … }` followed by `s.clear();`
//!   unless nothing can read `s` after it;
//! - `let (a, b) = chain.unzip();` is two empty `Vec`s and the loop
//!   pushing onto both; `let (a, b) = chain.partition(p);` is two filters;
//! - `[a, b].iter().sum()` and `for v in [a, b] { … }` iterate over a
//!   local array made where the literal was;
//! - `let rows: Vec<&[f64]> = x.chunks(k).collect();` (`chunks_exact`,
//!   `windows`) is the views it holds, `rows[i]` the sub-slice of `x` it
//!   names, where every use is indexing, `len()`, `iter()` or a `for`;
//! - `let p = Body { x: a, v: b };` is a local per field, `let p_x = a;
//!   let p_v = b;`, where every use is a field (`p.x`, `p.v[0] += …`) or
//!   an assignment of a whole literal (`p = Body { x: c, ..p };`).
//!
//! Each returns the block borrowed when it has nothing to rewrite.

use std::borrow::Cow;

use quote::ToTokens;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;
use syn::{Block, Expr, Stmt};

use super::{bound_name, expr, iter, names_ident};

/// The body with every rewrite of this module made.
pub(super) fn respelled(block: &Block) -> Cow<'_, Block> {
    let block = extends_as_loops(block);
    let block = then(block, clears_as_fresh);
    let block = then(block, conversions);
    let block = then(block, statements_as_several);
    let block = then(block, arrays_iterated);
    let block = then(block, views_collected);
    then(block, structs_as_fields)
}

/// `block` visited by `rewrite` on a copy, which is returned if `changed`
/// says the visit changed it.
fn copied_if_changed<R: syn::visit_mut::VisitMut>(
    block: &Block,
    mut rewrite: R,
    changed: impl FnOnce(&R) -> bool,
) -> Cow<'_, Block> {
    let mut rewritten = block.clone();
    rewrite.visit_block_mut(&mut rewritten);
    match changed(&rewrite) {
        true => Cow::Owned(rewritten),
        false => Cow::Borrowed(block),
    }
}

/// `rewrite` applied to a block that may already be a rewritten copy.
fn then(block: Cow<'_, Block>, rewrite: fn(&Block) -> Cow<'_, Block>) -> Cow<'_, Block> {
    match block {
        Cow::Borrowed(block) => rewrite(block),
        Cow::Owned(block) => Cow::Owned(rewrite(&block).into_owned()),
    }
}

/// The body with every `v.extend(chain);` written as the loop it stands
/// for, `for item in chain { v.push(item); }`: a loop pushing onto `v`,
/// supported wherever such a loop is.
/// The body is copied only when it has one.
fn extends_as_loops(block: &Block) -> Cow<'_, Block> {
    struct Rewrite;
    impl syn::visit_mut::VisitMut for Rewrite {
        fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
            if let Some(pushes) = extended(stmt) {
                *stmt = pushes;
            }
            syn::visit_mut::visit_stmt_mut(self, stmt);
        }
    }
    if !any_stmt(block, |stmt| extended(stmt).is_some()) {
        return Cow::Borrowed(block);
    }
    let mut rewritten = block.clone();
    syn::visit_mut::VisitMut::visit_block_mut(&mut Rewrite, &mut rewritten);
    Cow::Owned(rewritten)
}

/// The body with a local `Vec` emptied at the start of each iteration of a
/// loop (`tmp.clear();`) made afresh there instead, `let mut tmp =
/// Vec::new();`: the same values, as a buffer the loop makes per
/// iteration (which is supported), where a buffer changing length the other
/// way is not. Only where that is the same program: `tmp` bound by a `let`
/// before the loop in the same block, the `clear()` a statement of the
/// loop's body that nothing before it in the body names `tmp`, and nothing
/// after the loop names it. The body is copied only when it has one.
fn clears_as_fresh(block: &Block) -> Cow<'_, Block> {
    struct Rewrite(bool);
    impl syn::visit_mut::VisitMut for Rewrite {
        fn visit_block_mut(&mut self, block: &mut Block) {
            for k in 0..block.stmts.len() {
                let (before, rest) = block.stmts.split_at_mut(k);
                let (stmt, after) = rest.split_first_mut().expect("k < len");
                let body = match stmt {
                    Stmt::Expr(Expr::ForLoop(l), _) => &mut l.body,
                    Stmt::Expr(Expr::While(l), _) => &mut l.body,
                    Stmt::Expr(Expr::Loop(l), _) => &mut l.body,
                    _ => continue,
                };
                for at in 0..body.stmts.len() {
                    let Some(name) = cleared(&body.stmts[at]) else {
                        continue;
                    };
                    let declared = before.iter().any(|stmt| {
                        matches!(stmt, Stmt::Local(local)
                            if bound_name(&local.pat).as_deref() == Some(name.as_str()))
                    });
                    if declared
                        && !names_ident(&body.stmts[..at], &name)
                        && !names_ident(after, &name)
                    {
                        let ident = syn::Ident::new(&name, body.stmts[at].span());
                        body.stmts[at] = syn::parse_quote_spanned!(ident.span()=>
                            let mut #ident = Vec::new();
                        );
                        self.0 = true;
                    }
                    break;
                }
            }
            syn::visit_mut::visit_block_mut(self, block);
        }
    }
    if !any_stmt(block, |stmt| cleared(stmt).is_some()) {
        return Cow::Borrowed(block);
    }
    copied_if_changed(block, Rewrite(false), |rewrite| rewrite.0)
}

/// Whether a statement of `block`, at any depth, is one `is` holds for.
fn any_stmt(block: &Block, is: impl Fn(&Stmt) -> bool) -> bool {
    struct Find<F>(F, bool);
    impl<F: Fn(&Stmt) -> bool> syn::visit::Visit<'_> for Find<F> {
        fn visit_stmt(&mut self, stmt: &Stmt) {
            self.1 |= (self.0)(stmt);
            syn::visit::visit_stmt(self, stmt);
        }
    }
    let mut find = Find(is, false);
    syn::visit::Visit::visit_block(&mut find, block);
    find.1
}

/// `name` of a statement `name.clear();`.
fn cleared(stmt: &Stmt) -> Option<String> {
    let Stmt::Expr(Expr::MethodCall(call), Some(_)) = stmt else {
        return None;
    };
    (call.method == "clear" && call.args.is_empty())
        .then(|| expr::local_name(&call.receiver))
        .flatten()
}

/// `v.extend(chain);` as `for __ad_item in chain { v.push(__ad_item); }`;
/// `None` for any other statement.
fn extended(stmt: &Stmt) -> Option<Stmt> {
    let Stmt::Expr(Expr::MethodCall(call), Some(_)) = stmt else {
        return None;
    };
    if call.method != "extend" || call.args.len() != 1 || !iter::is_iterator_expr(&call.args[0]) {
        return None;
    }
    let (receiver, items) = (&call.receiver, &call.args[0]);
    Some(syn::parse_quote_spanned!(call.span()=>
        for __ad_item in #items {
            #receiver.push(__ad_item);
        }
    ))
}

/// The body with every iteration over an array written in place (`[a,
/// b].iter().sum()`, `for v in [a, b, c] { … }`) made over a local array:
/// `({ let __ad_items = [a, b]; __ad_items.iter().sum() })`, and the loop
/// in a block after the `let`, over `__ad_items.iter().copied()`. The
/// elements are evaluated where they were, in the same order.
fn arrays_iterated(block: &Block) -> Cow<'_, Block> {
    struct Rewrite(bool);
    impl syn::visit_mut::VisitMut for Rewrite {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            if let Some(rewritten) = over_local_array(expr) {
                *expr = rewritten;
                self.0 = true;
            }
            syn::visit_mut::visit_expr_mut(self, expr);
        }
    }
    copied_if_changed(block, Rewrite(false), |rewrite| rewrite.0)
}

/// `expr` iterating over an array literal, written over a local array (see
/// [`arrays_iterated`]); `None` for any other expression.
fn over_local_array(expr: &Expr) -> Option<Expr> {
    let span = expr.span();
    let items = syn::Ident::new("__ad_items", span);
    match expr {
        Expr::ForLoop(for_loop) => {
            let (array, chain) = match is_array(&for_loop.expr) {
                true => (
                    (*for_loop.expr).clone(),
                    syn::parse_quote_spanned!(span=> #items.iter().copied()),
                ),
                false => rooted_in_array(&for_loop.expr, &items)?,
            };
            let mut rewritten = for_loop.clone();
            *rewritten.expr = chain;
            Some(syn::parse_quote_spanned!(span=> {
                let #items = #array;
                #rewritten
            }))
        }
        Expr::MethodCall(_) => {
            let (array, chain) = rooted_in_array(expr, &items)?;
            Some(syn::parse_quote_spanned!(span=> ({
                let #items = #array;
                #chain
            })))
        }
        _ => None,
    }
}

/// An array literal with elements (`[a, b]`, `[v; 3]`).
fn is_array(expr: &Expr) -> bool {
    match super::strip_parens(expr) {
        Expr::Array(array) => !array.elems.is_empty(),
        Expr::Repeat(_) => true,
        _ => false,
    }
}

/// A method chain whose root is `[…].iter()` or `[…].into_iter()`: the
/// array, and the chain over `items` instead (`items.iter()`, or
/// `items.iter().copied()` for `into_iter`, whose items are values).
fn rooted_in_array(expr: &Expr, items: &syn::Ident) -> Option<(Expr, Expr)> {
    let mut chain = expr.clone();
    let mut at = &mut chain;
    while let Expr::MethodCall(call) = at {
        if !is_array(&call.receiver) {
            at = &mut call.receiver;
            continue;
        }
        if !call.args.is_empty() || !(call.method == "iter" || call.method == "into_iter") {
            return None;
        }
        let span = call.span();
        let source = match call.method == "into_iter" {
            true => {
                call.method = syn::Ident::new("copied", call.method.span());
                syn::parse_quote_spanned!(span=> #items.iter())
            }
            false => syn::parse_quote_spanned!(span=> #items),
        };
        let array = std::mem::replace(&mut *call.receiver, source);
        return Some((array, chain));
    }
    None
}

/// The body with buffers made by conversions written as the forms they
/// are: `Vec::from(s)`, `Vec::from([a, b])`, `[a, b].to_vec()`, `[a,
/// b].concat()` (see the module's documentation).
fn conversions(block: &Block) -> Cow<'_, Block> {
    struct Rewrite(bool);
    impl syn::visit_mut::VisitMut for Rewrite {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            syn::visit_mut::visit_expr_mut(self, expr);
            if let Some(converted) = converted(expr) {
                *expr = converted;
                self.0 = true;
            }
        }
    }
    copied_if_changed(block, Rewrite(false), |rewrite| rewrite.0)
}

/// The form a conversion making a buffer stands for; `None` for any other
/// expression.
fn converted(expr: &Expr) -> Option<Expr> {
    let span = expr.span();
    match expr {
        Expr::Call(call) if call.args.len() == 1 => {
            let Expr::Path(path) = super::strip_parens(&call.func) else {
                return None;
            };
            let arg = &call.args[0];
            let segments = expr::segments(&path.path);
            // `Vec::from_iter(chain)`, the collect it is.
            if segments == ["Vec", "from_iter"] {
                let items = match super::strip_parens(arg) {
                    Expr::MethodCall(_) => parenthesized(arg),
                    _ => {
                        let arg = parenthesized(arg);
                        syn::parse_quote_spanned!(span=> #arg.into_iter())
                    }
                };
                return Some(syn::parse_quote_spanned!(span=>
                    #items.collect::<::std::vec::Vec<_>>()
                ));
            }
            if segments != ["Vec", "from"] {
                return None;
            }
            Some(literal_as_vec(arg).unwrap_or_else(|| {
                let arg = parenthesized(arg);
                syn::parse_quote_spanned!(span=> #arg.to_vec())
            }))
        }
        Expr::MethodCall(call) if call.args.is_empty() && call.method == "to_vec" => {
            literal_as_vec(&call.receiver)
        }
        // `v.clone_from(&w)`, which clippy asks for instead of `v = w.clone()`.
        Expr::MethodCall(call) if call.args.len() == 1 && call.method == "clone_from" => {
            let Expr::Reference(source) = super::strip_parens(&call.args[0]) else {
                return None;
            };
            let (target, source) = (&call.receiver, parenthesized(&source.expr));
            Some(syn::parse_quote_spanned!(span=> #target = #source.clone()))
        }
        // `x.split_first().map(|(h, t)| …).unwrap_or(d)` (or `map_or(d,
        // f)`, `split_last`): the `if let` it is, for a default that is a
        // literal or a name (made either way, which nothing can tell).
        Expr::MethodCall(call)
            if matches!(call.method.to_string().as_str(), "unwrap_or" | "map_or") =>
        {
            let (split, closure, default) = match call.method.to_string().as_str() {
                "unwrap_or" if call.args.len() == 1 => {
                    let Expr::MethodCall(map) = super::strip_parens(&call.receiver) else {
                        return None;
                    };
                    if map.method != "map" || map.args.len() != 1 {
                        return None;
                    }
                    (&*map.receiver, &map.args[0], &call.args[0])
                }
                "map_or" if call.args.len() == 2 => (&*call.receiver, &call.args[1], &call.args[0]),
                _ => return None,
            };
            let is_split = matches!(super::strip_parens(split), Expr::MethodCall(end)
                if end.args.is_empty()
                    && matches!(end.method.to_string().as_str(), "split_first" | "split_last"));
            let plain = matches!(super::strip_parens(default), Expr::Lit(_) | Expr::Path(_));
            let Expr::Closure(closure) = super::strip_parens(closure) else {
                return None;
            };
            if !is_split || !plain || closure.inputs.len() != 1 || closure.capture.is_some() {
                return None;
            }
            let pat = match &closure.inputs[0] {
                syn::Pat::Type(typed) => &*typed.pat,
                pat => pat,
            };
            let body = &closure.body;
            Some(syn::parse_quote_spanned!(span=>
                if let Some(#pat) = #split { #body } else { #default }
            ))
        }
        Expr::MethodCall(call) if call.args.is_empty() && call.method == "concat" => {
            let Expr::Array(parts) = super::strip_parens(&call.receiver) else {
                return None;
            };
            let mut parts = parts.elems.iter().map(parenthesized);
            let first = parts.next()?;
            let mut chain: Expr = syn::parse_quote_spanned!(span=> #first.iter());
            for part in parts {
                chain = syn::parse_quote_spanned!(span=> #chain.chain(#part.iter()));
            }
            Some(syn::parse_quote_spanned!(span=>
                #chain.copied().collect::<::std::vec::Vec<_>>()
            ))
        }
        _ => None,
    }
}

/// `vec![a, b]` for the array literal `[a, b]`, `vec![v; n]` for `[v; n]`.
fn literal_as_vec(expr: &Expr) -> Option<Expr> {
    let span = expr.span();
    match super::strip_parens(expr) {
        Expr::Array(array) => {
            let elems = &array.elems;
            Some(syn::parse_quote_spanned!(span=> vec![#elems]))
        }
        Expr::Repeat(repeat) => {
            let (fill, len) = (&repeat.expr, &repeat.len);
            Some(syn::parse_quote_spanned!(span=> vec![#fill; #len]))
        }
        _ => None,
    }
}

/// `e` as the receiver of a method: in parentheses unless it is a name,
/// an index, a field or a call, which bind tighter than a method call.
fn parenthesized(expr: &Expr) -> Expr {
    match expr {
        Expr::Path(_) | Expr::Index(_) | Expr::Field(_) | Expr::Call(_) | Expr::MethodCall(_) => {
            expr.clone()
        }
        _ => syn::parse_quote_spanned!(expr.span()=> (#expr)),
    }
}

/// The body with statements that stand for several written as those (see
/// [`popped`], [`unzipped`], [`partitioned`]).
fn statements_as_several(block: &Block) -> Cow<'_, Block> {
    struct Rewrite(bool);
    impl syn::visit_mut::VisitMut for Rewrite {
        fn visit_block_mut(&mut self, block: &mut Block) {
            let mut k = 0;
            while k < block.stmts.len() {
                let (before, stmt, after) =
                    (&block.stmts[..k], &block.stmts[k], &block.stmts[k + 1..]);
                if let Some(stmts) = popped(before, stmt, after)
                    .or_else(|| unzipped(stmt))
                    .or_else(|| partitioned(stmt))
                {
                    let n = stmts.len();
                    block.stmts.splice(k..=k, stmts);
                    self.0 = true;
                    k += n;
                } else {
                    k += 1;
                }
            }
            syn::visit_mut::visit_block_mut(self, block);
        }
    }
    copied_if_changed(block, Rewrite(false), |rewrite| rewrite.0)
}

/// `let (a, b) = chain.method(args);` (typed or not, `mut` or not): the
/// two names, the call, and its span.
fn pair_let<'a>(
    stmt: &'a Stmt,
    method: &str,
) -> Option<([syn::Ident; 2], &'a syn::ExprMethodCall)> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let pat = match &local.pat {
        syn::Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    let syn::Pat::Tuple(names) = pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    let Expr::MethodCall(call) = super::strip_parens(&init.expr) else {
        return None;
    };
    if call.method != method || init.diverge.is_some() {
        return None;
    }
    let names = names
        .elems
        .iter()
        .map(|pat| match pat {
            syn::Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
                Some(ident.ident.clone())
            }
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((names.try_into().ok()?, call))
}

/// `let (a, b) = chain.unzip();` as the loop filling two buffers it is:
/// `let mut a = Vec::new(); let mut b = Vec::new(); for (p, q) in chain {
/// a.push(p); b.push(q); }`.
fn unzipped(stmt: &Stmt) -> Option<Vec<Stmt>> {
    let ([a, b], call) = pair_let(stmt, "unzip")?;
    if !call.args.is_empty() {
        return None;
    }
    let (chain, span) = (&call.receiver, stmt.span());
    Some(vec![
        syn::parse_quote_spanned!(span=> let mut #a = Vec::new();),
        syn::parse_quote_spanned!(span=> let mut #b = Vec::new();),
        syn::parse_quote_spanned!(span=>
            for (__ad_unzipped_0, __ad_unzipped_1) in #chain {
                #a.push(__ad_unzipped_0);
                #b.push(__ad_unzipped_1);
            }
        ),
    ])
}

/// `let (a, b): (Vec<f64>, Vec<f64>) = chain.partition(p);` over numbers
/// as the two filters it is: the predicate bound to a name, then `let a:
/// Vec<_> = chain.filter(|t| p(t)).collect();` and the same with `!p(t)`
/// for `b` (with `copied()` for a chain of references).
fn partitioned(stmt: &Stmt) -> Option<Vec<Stmt>> {
    let ([a, b], call) = pair_let(stmt, "partition")?;
    if call.args.len() != 1 {
        return None;
    }
    let keep = &call.args[0];
    let chain = &call.receiver;
    let copied = match items_are_references(chain)? {
        true => quote::quote!(.copied()),
        false => quote::quote!(),
    };
    let span = stmt.span();
    Some(vec![
        syn::parse_quote_spanned!(span=> let __ad_keep = #keep;),
        syn::parse_quote_spanned!(span=>
            let mut #a: Vec<_> = #chain.filter(|__ad_item| __ad_keep(__ad_item))#copied.collect();
        ),
        syn::parse_quote_spanned!(span=>
            let mut #b: Vec<_> = #chain.filter(|__ad_item| !__ad_keep(__ad_item))#copied.collect();
        ),
    ])
}

/// Whether the items of a chain of numbers are references (`x.iter()`,
/// then adapters that keep the items) or numbers (`copied()`, `cloned()`,
/// `map(…)` last); `None` for other chains (of pairs, of ranges, …).
fn items_are_references(chain: &Expr) -> Option<bool> {
    let Expr::MethodCall(call) = super::strip_parens(chain) else {
        return None;
    };
    match call.method.to_string().as_str() {
        "filter" | "rev" | "skip" | "take" | "step_by" | "skip_while" | "take_while" | "chain" => {
            items_are_references(&call.receiver)
        }
        "copied" | "cloned" | "map" => Some(false),
        "iter" => Some(true),
        _ => None,
    }
}

/// The statements standing for `stmt` if it is a `while let Some(v) =
/// s.pop()` loop that can be written as a `for` (`before` and `after` are
/// the statements of its block around it). The stack is left empty
/// (`s.clear()`) unless it is made by a `let` before it in its block and
/// nothing after it there names it: a stack made elsewhere may be read
/// after the block, or by the next iteration of a loop around it.
fn popped(before: &[Stmt], stmt: &Stmt, after: &[Stmt]) -> Option<Vec<Stmt>> {
    let Stmt::Expr(Expr::While(looped), _) = stmt else {
        return None;
    };
    let Expr::Let(test) = &*looped.cond else {
        return None;
    };
    let syn::Pat::TupleStruct(some) = &*test.pat else {
        return None;
    };
    if !some.path.is_ident("Some") || some.elems.len() != 1 {
        return None;
    }
    let Expr::MethodCall(pop) = super::strip_parens(&test.expr) else {
        return None;
    };
    if pop.method != "pop" || !pop.args.is_empty() {
        return None;
    }
    let name = expr::local_name(&pop.receiver)?;
    if names_ident(&looped.body.stmts, &name) {
        return None;
    }
    let made_here = before.iter().any(|stmt| {
        matches!(stmt, Stmt::Local(local) if bound_name(&local.pat).as_deref() == Some(name.as_str()))
    });
    let emptied = !made_here || names_ident(after, &name);
    if emptied && super::mentions(looped.body.to_token_stream(), "break") {
        return None;
    }
    let (label, pat, body, stack) = (&looped.label, &some.elems[0], &looped.body, &pop.receiver);
    let span = stmt.span();
    let mut stmts = vec![syn::parse_quote_spanned!(span=>
        #label for #pat in #stack.iter().copied().rev() #body
    )];
    if emptied {
        stmts.push(syn::parse_quote_spanned!(span=> #stack.clear();));
    }
    Some(stmts)
}

/// The body with every `let rows: Vec<&[f64]> = x.chunks(k).collect();`
/// (`chunks_exact(k)`, `windows(k)`) whose uses are all `rows[i]`,
/// `rows.len()`, `rows.iter()` and `for row in &rows` (or `rows`) written as the views
/// of `x` they are: `&x[i * k..(i * k + k).min(x.len())]`, the count, and
/// `x.chunks(k)`. A `Vec` of views is no buffer of numbers the lowering can
/// hold; the views themselves are.
fn views_collected(block: &Block) -> Cow<'_, Block> {
    struct Rewrite(bool);
    impl syn::visit_mut::VisitMut for Rewrite {
        fn visit_block_mut(&mut self, block: &mut Block) {
            let mut k = 0;
            while k < block.stmts.len() {
                if let Some((name, views)) = collected_views(&block.stmts[k])
                    && !rebinds(&block.stmts[k + 1..], &name, &views)
                {
                    let mut rest = block.stmts[k + 1..].to_vec();
                    let mut substitute = Substitute {
                        name: &name,
                        views: &views,
                    };
                    for stmt in &mut rest {
                        substitute.visit_stmt_mut(stmt);
                    }
                    if !names_ident(&rest, &name) {
                        block.stmts.truncate(k);
                        block.stmts.extend(rest);
                        self.0 = true;
                        continue;
                    }
                }
                k += 1;
            }
            syn::visit_mut::visit_block_mut(self, block);
        }
    }
    copied_if_changed(block, Rewrite(false), |rewrite| rewrite.0)
}

/// Whether `stmts` bind the `Vec`'s name, or its source's or width's,
/// again (a `let`, a pattern, a closure's parameter), or assign the width:
/// then a view written in their place could name something else.
fn rebinds(stmts: &[Stmt], name: &str, views: &Views) -> bool {
    struct Find<'a>(Vec<String>, &'a str, bool);
    impl syn::visit::Visit<'_> for Find<'_> {
        fn visit_pat_ident(&mut self, pat: &syn::PatIdent) {
            self.2 |= self.0.contains(&pat.ident.unraw().to_string());
            syn::visit::visit_pat_ident(self, pat);
        }
        fn visit_expr(&mut self, expr: &Expr) {
            let target = match expr {
                Expr::Assign(assign) => Some(&*assign.left),
                Expr::Binary(binary) if super::expr::compound_op(&binary.op).is_some() => {
                    Some(&*binary.left)
                }
                _ => None,
            };
            if let Some(target) = target {
                self.2 |= expr::local_name(target).as_deref() == Some(self.1);
            }
            syn::visit::visit_expr(self, expr);
        }
    }
    let mut names = vec![name.to_owned()];
    names.extend(
        [&views.source, &views.width]
            .into_iter()
            .filter_map(expr::local_name),
    );
    let width = expr::local_name(&views.width).unwrap_or_default();
    let mut find = Find(names, &width, false);
    for stmt in stmts {
        syn::visit::Visit::visit_stmt(&mut find, stmt);
    }
    find.2
}

/// How a `Vec` of views was made: `x.chunks(k)`, `x.chunks_exact(k)` or
/// `x.windows(k)`.
struct Views {
    source: Expr,
    width: Expr,
    method: syn::Ident,
}

/// The name and the views of `let rows = x.chunks(k).collect();` (typed
/// or by turbofish), of a source and a width that are names or literals.
fn collected_views(stmt: &Stmt) -> Option<(String, Views)> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let name = bound_name(&local.pat)?;
    let init = local.init.as_ref()?;
    if init.diverge.is_some() {
        return None;
    }
    let Expr::MethodCall(collect) = super::strip_parens(&init.expr) else {
        return None;
    };
    if collect.method != "collect" || !collect.args.is_empty() {
        return None;
    }
    let Expr::MethodCall(views) = super::strip_parens(&collect.receiver) else {
        return None;
    };
    let plain = |expr: &Expr| matches!(super::strip_parens(expr), Expr::Path(_) | Expr::Lit(_));
    let known = matches!(
        views.method.to_string().as_str(),
        "chunks" | "chunks_exact" | "windows"
    );
    if !known || views.args.len() != 1 || !plain(&views.receiver) || !plain(&views.args[0]) {
        return None;
    }
    Some((
        name,
        Views {
            source: (*views.receiver).clone(),
            width: views.args[0].clone(),
            method: views.method.clone(),
        },
    ))
}

/// Replaces the uses of a `Vec` of views by the views (see
/// [`views_collected`]); other uses are left, and the rewrite is then not
/// made.
struct Substitute<'a> {
    name: &'a str,
    views: &'a Views,
}

impl Substitute<'_> {
    fn is_name(&self, expr: &Expr) -> bool {
        expr::local_name(expr).is_some_and(|name| name == self.name)
    }

    /// `x.chunks(k)`: the views as an iterator.
    fn iterator(&self, span: proc_macro2::Span) -> Expr {
        let Views {
            source,
            width,
            method,
        } = self.views;
        syn::parse_quote_spanned!(span=> #source.#method(#width))
    }
}

impl syn::visit_mut::VisitMut for Substitute<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        let span = expr.span();
        let Views {
            source,
            width,
            method,
        } = self.views;
        let replaced: Option<Expr> = match &*expr {
            Expr::Index(index) if self.is_name(&index.expr) => {
                // `rows[rows.len() - 1]`: the index's own uses first.
                let mut i = (*index.index).clone();
                self.visit_expr_mut(&mut i);
                // Literals folded: `rows[0]` is `&x[0..2]`, not `0 * 2`
                // (which clippy flags in the expansion).
                let start = match method.to_string().as_str() {
                    "windows" => i,
                    _ => arithmetic(&i, "*", width),
                };
                let end = arithmetic(&start, "+", width);
                Some(match method.to_string().as_str() {
                    "chunks" => syn::parse_quote_spanned!(span=>
                        (&#source[#start..(#end).min(#source.len())])
                    ),
                    _ => syn::parse_quote_spanned!(span=> (&#source[#start..#end])),
                })
            }
            Expr::MethodCall(call) if self.is_name(&call.receiver) && call.args.is_empty() => {
                match call.method.to_string().as_str() {
                    "iter" => Some(self.iterator(span)),
                    "len" => Some(match method.to_string().as_str() {
                        "chunks" => syn::parse_quote_spanned!(span=>
                            ((#source.len() + #width - 1) / #width)
                        ),
                        "chunks_exact" => {
                            syn::parse_quote_spanned!(span=> (#source.len() / #width))
                        }
                        _ => syn::parse_quote_spanned!(span=>
                            ((#source.len() + 1).saturating_sub(#width))
                        ),
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(replaced) = replaced {
            *expr = replaced;
            return;
        }
        // `for row in &rows`, `for row in rows`.
        if let Expr::ForLoop(looped) = expr {
            let iterated = match super::strip_parens(&looped.expr) {
                Expr::Reference(reference) => &*reference.expr,
                iterated => iterated,
            };
            if self.is_name(iterated) {
                *looped.expr = self.iterator(span);
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// `a * b` or `a + b` of index expressions, folded where both are
/// integer literals, or one is the identity (`0 +`, `1 *`) or `0 *`.
fn arithmetic(a: &Expr, op: &str, b: &Expr) -> Expr {
    let literal = |expr: &Expr| match super::strip_parens(expr) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int.base10_parse::<u64>().ok(),
        _ => None,
    };
    let span = a.span();
    let number = |n: u64| -> Expr {
        let n = proc_macro2::Literal::u64_unsuffixed(n);
        syn::parse_quote_spanned!(span=> #n)
    };
    match (op, literal(a), literal(b)) {
        ("*", Some(x), Some(y)) => number(x.saturating_mul(y)),
        ("+", Some(x), Some(y)) => number(x.saturating_add(y)),
        ("*", Some(0), _) | ("*", _, Some(0)) => number(0),
        ("*", Some(1), _) | ("+", Some(0), _) => b.clone(),
        ("*", _, Some(1)) | ("+", _, Some(0)) => a.clone(),
        ("*", _, _) => syn::parse_quote_spanned!(span=> (#a) * #b),
        _ => syn::parse_quote_spanned!(span=> #a + #b),
    }
}

/// The body with every `let p = Body { x: a, v: b };` of a local struct
/// whose uses are all its fields (`p.x`, `p.v[i] = …`, `&p.v`) or whole
/// literals assigned to it (`p = Body { x: c, v: d };`, `..p` for the
/// fields not written) written as a local per field: `let p_x = a; let
/// p_v = b;`, `(p_x, p_v) = (c, d);`. The fields are made in the order
/// written, as the literal makes them. A tuple struct made by a call,
/// `let p = Pt(a, b);` read as `p.0`, is the literal `Pt { 0: a, 1: b }`
/// (see [`struct_literal`]). The struct's type is the user's: the lowering
/// cannot see into it, but it sees its fields' locals.
fn structs_as_fields(block: &Block) -> Cow<'_, Block> {
    struct Rewrite<'a> {
        /// The whole body, whose names the new locals must not take.
        body: &'a Block,
        changed: bool,
    }
    impl syn::visit_mut::VisitMut for Rewrite<'_> {
        fn visit_block_mut(&mut self, block: &mut Block) {
            let mut k = 0;
            while k < block.stmts.len() {
                if let Some((name, mutability, literal)) = struct_let(&block.stmts[k])
                    && let Some(fields) = self.field_names(&name, &literal)
                    && !binds(&block.stmts[k + 1..], &name)
                {
                    let mut rest = block.stmts[k + 1..].to_vec();
                    let mut substitute = Fields {
                        name: &name,
                        fields: &fields,
                    };
                    for stmt in &mut rest {
                        substitute.visit_stmt_mut(stmt);
                    }
                    if !names_ident(&rest, &name) && !formats(&rest, &name) {
                        let span = literal.span();
                        let lets = literal.fields.iter().map(|field| -> Stmt {
                            let local = &fields[&member_name(&field.member)];
                            let value = &field.expr;
                            syn::parse_quote_spanned!(span=> let #mutability #local = #value;)
                        });
                        let lets: Vec<Stmt> = lets.collect();
                        block.stmts.truncate(k);
                        block.stmts.extend(lets);
                        block.stmts.extend(rest);
                        self.changed = true;
                        continue;
                    }
                }
                k += 1;
            }
            syn::visit_mut::visit_block_mut(self, block);
        }
    }
    impl Rewrite<'_> {
        /// The local of each field of `literal`, `p_x`, or `p_x_1` if the
        /// body names `p_x` already; `None` for fields that are not named.
        fn field_names(
            &self,
            name: &str,
            literal: &syn::ExprStruct,
        ) -> Option<std::collections::HashMap<String, syn::Ident>> {
            let mut locals = std::collections::HashMap::new();
            for field in &literal.fields {
                let member = member_name(&field.member);
                let taken = |candidate: &str| {
                    names_ident(&self.body.stmts, candidate)
                        || locals.values().any(|local: &syn::Ident| local == candidate)
                };
                let mut local = format!("{name}_{member}");
                let mut k = 1;
                while taken(&local) {
                    local = format!("{name}_{member}_{k}");
                    k += 1;
                }
                let local = syn::Ident::new(&local, field.member.span());
                locals.insert(member, local);
            }
            Some(locals)
        }
    }
    let rewrite = Rewrite {
        body: block,
        changed: false,
    };
    copied_if_changed(block, rewrite, |rewrite| rewrite.changed)
}

/// The name, the `mut` and the literal of `let [mut] p[: T] = Body { … };`
/// with every field written (no `..base`).
fn struct_let(stmt: &Stmt) -> Option<(String, Option<syn::Token![mut]>, syn::ExprStruct)> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let pat = match &local.pat {
        syn::Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    let syn::Pat::Ident(ident) = pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    let literal = struct_literal(&init.expr)?;
    if ident.by_ref.is_some()
        || ident.subpat.is_some()
        || init.diverge.is_some()
        || literal.rest.is_some()
        || literal.qself.is_some()
        || literal.fields.is_empty()
    {
        return None;
    }
    Some((ident.ident.unraw().to_string(), ident.mutability, literal))
}

/// `expr` as a struct literal: `Body { x: a, v: b }` itself, or a tuple
/// struct made by a call, `Pt(a, b)`, as `Pt { 0: a, 1: b }`. A name in
/// upper camel case is a tuple struct's or a variant's (Rust names
/// functions in snake case); `Some`, `Ok` and `Err` are the options' and
/// results', handled as such.
fn struct_literal(expr: &Expr) -> Option<syn::ExprStruct> {
    match super::strip_parens(expr) {
        Expr::Struct(literal) => Some(literal.clone()),
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else {
                return None;
            };
            let last = path.path.segments.last()?.ident.unraw().to_string();
            let camel = last.chars().next().is_some_and(char::is_uppercase)
                && last.chars().any(char::is_lowercase);
            if !camel
                || path.qself.is_some()
                || call.args.is_empty()
                || ["Some", "Ok", "Err"].contains(&last.as_str())
            {
                return None;
            }
            let span = call.span();
            let fields = call
                .args
                .iter()
                .enumerate()
                .map(|(k, arg)| -> syn::FieldValue {
                    let member = syn::Member::Unnamed(syn::Index {
                        index: u32::try_from(k).expect("few fields"),
                        span: arg.span(),
                    });
                    syn::parse_quote_spanned!(span=> #member: #arg)
                });
            let path = &path.path;
            Some(syn::parse_quote_spanned!(span=> #path { #(#fields),* }))
        }
        _ => None,
    }
}

/// The field's name (`x` of `p.x`); tuple fields by their index.
fn member_name(member: &syn::Member) -> String {
    match member {
        syn::Member::Named(ident) => ident.unraw().to_string(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    }
}

/// Whether `stmts` bind `name` again (a `let`, a pattern, a closure's
/// parameter): a field of that one is another variable's.
fn binds(stmts: &[Stmt], name: &str) -> bool {
    struct Find<'a>(&'a str, bool);
    impl syn::visit::Visit<'_> for Find<'_> {
        fn visit_pat_ident(&mut self, pat: &syn::PatIdent) {
            self.1 |= pat.ident.unraw() == self.0;
            syn::visit::visit_pat_ident(self, pat);
        }
    }
    let mut find = Find(name, false);
    for stmt in stmts {
        syn::visit::Visit::visit_stmt(&mut find, stmt);
    }
    find.1
}

/// Whether a string literal in `stmts` names `name` as a format argument
/// (`"{p:?}"`, `"{p}"`), which is no token of its own.
fn formats(stmts: &[Stmt], name: &str) -> bool {
    fn within(tokens: proc_macro2::TokenStream, name: &str) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Literal(literal) => {
                let text = literal.to_string();
                text.contains(&format!("{{{name}}}")) || text.contains(&format!("{{{name}:"))
            }
            proc_macro2::TokenTree::Group(group) => within(group.stream(), name),
            _ => false,
        })
    }
    stmts
        .iter()
        .any(|stmt| within(stmt.to_token_stream(), name))
}

/// Replaces the fields of a local struct by their locals (see
/// [`structs_as_fields`]); other uses are left, and the rewrite is then not
/// made.
struct Fields<'a> {
    name: &'a str,
    fields: &'a std::collections::HashMap<String, syn::Ident>,
}

impl Fields<'_> {
    fn is_name(&self, expr: &Expr) -> bool {
        expr::local_name(expr).is_some_and(|name| name == self.name)
    }

    /// `(p_x, p_v) = (c, d)` of `p = Body { x: c, v: d }` (or `..p` for
    /// the fields not written); `None` for another literal or base.
    fn assigned(&mut self, literal: &syn::ExprStruct, span: proc_macro2::Span) -> Option<Expr> {
        if literal.qself.is_some()
            || literal
                .rest
                .as_ref()
                .is_some_and(|rest| !self.is_name(rest))
        {
            return None;
        }
        let mut targets = Vec::new();
        let mut values = Vec::new();
        for field in &literal.fields {
            targets.push(self.fields.get(&member_name(&field.member))?.clone());
            let mut value = field.expr.clone();
            syn::visit_mut::VisitMut::visit_expr_mut(self, &mut value);
            values.push(value);
        }
        if literal.rest.is_none() && targets.len() != self.fields.len() {
            return None;
        }
        Some(match (targets.as_slice(), values.as_slice()) {
            ([target], [value]) => syn::parse_quote_spanned!(span=> #target = #value),
            _ => syn::parse_quote_spanned!(span=> (#(#targets),*) = (#(#values),*)),
        })
    }
}

impl syn::visit_mut::VisitMut for Fields<'_> {
    /// The fields in the arguments of a macro whose arguments are
    /// expressions (`vec![a, p.x]`, `vec![p.x; n]`, `assert!(p.x > 0.0)`,
    /// `println!("{}", p.x)`); the tokens of any other are left as they are.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        use syn::punctuated::Punctuated;
        let parser = Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        if let Ok(mut args) = mac.parse_body_with(parser) {
            for arg in &mut args {
                self.visit_expr_mut(arg);
            }
            mac.tokens = args.to_token_stream();
        } else if let Ok((mut fill, semi, mut len)) =
            mac.parse_body_with(|input: syn::parse::ParseStream| {
                Ok((
                    input.parse::<Expr>()?,
                    input.parse::<syn::Token![;]>()?,
                    input.parse::<Expr>()?,
                ))
            })
        {
            self.visit_expr_mut(&mut fill);
            self.visit_expr_mut(&mut len);
            mac.tokens = quote::quote!(#fill #semi #len);
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        let span = expr.span();
        let replaced = match &*expr {
            Expr::Field(field) if self.is_name(&field.base) => self
                .fields
                .get(&member_name(&field.member))
                .map(|local| syn::parse_quote_spanned!(span=> #local)),
            Expr::Assign(assign) if self.is_name(&assign.left) => {
                struct_literal(&assign.right).and_then(|literal| self.assigned(&literal, span))
            }
            _ => None,
        };
        match replaced {
            Some(replaced) => *expr = replaced,
            None => syn::visit_mut::visit_expr_mut(self, expr),
        }
    }
}
