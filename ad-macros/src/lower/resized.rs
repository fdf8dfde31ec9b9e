//! Buffers that change length in a loop: `let mut pts = x.to_vec();` and,
//! in a loop, `pts = pts.windows(2).map(…).collect();` (De Casteljau's
//! algorithm, a pyramid, a filter applied until it converges).
//!
//! A buffer variable keeps one buffer for its whole life in the lowering (an
//! assignment copies the elements, see `Lower::assign_moved`), so a new
//! length in a loop has no buffer to go to. This rewrite, made on the body
//! before it is lowered, keeps the variable as its first buffer and a length
//! of its own, and reads it as the range of that buffer:
//!
//! ```text
//! let mut pts = x.to_vec();              let mut pts_store = x.to_vec();
//!                                        let mut pts_len = pts_store.len();
//! while pts.len() > 1 {             ⇒    while pts_store[..pts_len].len() > 1 {
//!     pts = pts.windows(2)…collect();        let new = pts_store[..pts_len].windows(2)…collect();
//! }                                          assert!(new.len() <= pts_store.len(), …);
//! pts[0]                                     pts_len = new.len();
//!                                            pts_store[..pts_len].copy_from_slice(&new);
//!                                        }
//!                                        pts_store[..pts_len][0]
//! ```
//!
//! which is the same program as long as the buffer never grows beyond its
//! first length (the assertion says so where it would). Only where that is
//! all there is to it: the variable declared by a `let mut` of the body's
//! own block (a `Vec` by its initializer or its type), assigned inside a
//! loop or a branch,
//! never bound again, never named by a macro, never lent `&mut` as a whole,
//! holding numbers rather than rows (no `vec![[0.0; 2]; n]`, no `m[i][j]`),
//! and given only the methods a range has (not `push`, not `sort_by`);
//! `v.retain(p)`, `v.truncate(k)`, `v.resize(k, x)` and `v.insert(i, x)` are assignments of
//! the buffer they leave (see `buffers::resized`), in a loop too.

use std::borrow::Cow;

use quote::{ToTokens, format_ident};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Pat, Stmt};

/// The body with each buffer variable assigned a new buffer in a loop kept
/// in its first buffer and a length (see the module's documentation); the
/// body itself if there is none. Also the names of the lengths it made:
/// `v_store[..v_len]` is within its buffer by construction, and the
/// lowering does not check its bounds as it checks the user's ranges.
pub(super) fn resized_in_regions(block: &Block) -> (Cow<'_, Block>, Vec<String>) {
    let names: Vec<String> = block
        .stmts
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::Local(local)
                if local.init.as_ref().is_some_and(|init| {
                    (makes_vec(&init.expr) || is_vec_type(&local.pat))
                        && !makes_rows(&init.expr)
                        && !is_rows_type(&local.pat)
                }) =>
            {
                mut_name(&local.pat)
            }
            _ => None,
        })
        .filter(|name| can_rewrite(block, name))
        .collect();
    if names.is_empty() {
        return (Cow::Borrowed(block), Vec::new());
    }
    let mut block = block.clone();
    let lengths = names.iter().map(|name| rewrite(&mut block, name)).collect();
    (Cow::Owned(block), lengths)
}

/// Whether `expr` visibly makes a new `Vec`: `….collect()`, `.to_vec()`,
/// `.to_owned()`, `vec![…]` (not `.clone()`, which numbers have too).
fn makes_vec(expr: &Expr) -> bool {
    match expr {
        Expr::MethodCall(call) => matches!(
            call.method.to_string().as_str(),
            "collect" | "to_vec" | "to_owned"
        ),
        Expr::Macro(mac) => mac.mac.path.is_ident("vec"),
        Expr::Paren(paren) => makes_vec(&paren.expr),
        _ => false,
    }
}

/// `vec![[0.0; 2]; n]`, `vec![vec![0.0; n]; m]`, `vec![[a, b], [c, d]]`:
/// a buffer of rows (a matrix), which an assignment copies as it is (the
/// rewrite's range would count elements, not rows).
fn makes_rows(expr: &Expr) -> bool {
    let Expr::Macro(mac) = expr else {
        return false;
    };
    let is_row = |row: &Expr| {
        matches!(
            row,
            Expr::Array(_) | Expr::Repeat(_) | Expr::Tuple(_) | Expr::Macro(_)
        )
    };
    if let Some((fill, _)) = super::vec_repeat(mac) {
        return is_row(&fill);
    }
    mac.mac
        .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
        .is_ok_and(|elems| elems.first().is_some_and(is_row))
}

/// `v: Vec<[f64; 2]>`, `Vec<Vec<f64>>`, `Vec<(f64, f64)>`: rows.
fn is_rows_type(pat: &Pat) -> bool {
    let Pat::Type(typed) = pat else {
        return false;
    };
    let syn::Type::Path(path) = &*typed.ty else {
        return false;
    };
    let Some(segment) = path.path.segments.last() else {
        return false;
    };
    matches!(&segment.arguments, syn::PathArguments::AngleBracketed(args)
        if args.args.iter().any(|arg| !matches!(arg,
            syn::GenericArgument::Type(syn::Type::Path(elem)) if elem.path.segments.len() == 1
                && matches!(elem.path.segments[0].arguments, syn::PathArguments::None))))
}

/// `v: Vec<…>`.
fn is_vec_type(pat: &Pat) -> bool {
    matches!(pat, Pat::Type(typed) if matches!(&*typed.ty, syn::Type::Path(path)
        if path.path.segments.last().is_some_and(|segment| segment.ident == "Vec")))
}

/// `v` of `let mut v` or `let mut v: T`.
fn mut_name(pat: &Pat) -> Option<String> {
    super::is_mut_binding(pat)
        .then(|| super::bound_name(pat))
        .flatten()
}

/// Whether `name` is assigned a new buffer in a loop and is used only in
/// ways that read the same as its range.
fn can_rewrite(block: &Block, name: &str) -> bool {
    let mut scan = Scan {
        name,
        regions: 0,
        assigned_in_region: false,
        bindings: 0,
        blocked: false,
    };
    scan.visit_block(block);
    scan.assigned_in_region && scan.bindings == 1 && !scan.blocked
}

struct Scan<'a> {
    name: &'a str,
    regions: usize,
    assigned_in_region: bool,
    /// How many patterns bind the name (its `let` is one).
    bindings: usize,
    /// A use the range would not stand for.
    blocked: bool,
}

impl Scan<'_> {
    fn is_name(&self, expr: &Expr) -> bool {
        names_local(expr, self.name)
    }

    /// `v[i]` (not a range `v[a..b]`).
    fn is_element(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Index(index) if self.is_name(&index.expr)
            && !matches!(&*index.index, Expr::Range(_)))
    }
}

impl<'ast> Visit<'ast> for Scan<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        match expr {
            // In a branch the same holds: one buffer either way.
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::If(_) | Expr::Match(_) => {
                self.regions += 1;
                syn::visit::visit_expr(self, expr);
                self.regions -= 1;
                return;
            }
            // A closure's body runs where it is called: in a loop or not.
            Expr::Closure(_) => {
                self.regions += 1;
                syn::visit::visit_expr(self, expr);
                self.regions -= 1;
                return;
            }
            Expr::Assign(assign) if self.is_name(&assign.left) => {
                // A `Vec` (its `let` made one): a new buffer, another
                // variable's (`pts = next;`, moved), a call's.
                self.assigned_in_region |= self.regions > 0;
                self.visit_expr(&assign.right);
                return;
            }
            // `v.retain(p)`, `v.truncate(k)`, `v.resize(k, x)`, `v.insert(i, x)`: a new
            // buffer assigned (see `Rename`).
            Expr::MethodCall(call)
                if self.is_name(&call.receiver) && super::buffers::resized(call).is_some() =>
            {
                self.assigned_in_region |= self.regions > 0;
            }
            // Only the methods a range has in the lowering (not growing it,
            // not sorting it, …).
            Expr::MethodCall(call)
                if self.is_name(&call.receiver)
                    && !matches!(
                        call.method.to_string().as_str(),
                        "len"
                            | "is_empty"
                            | "iter"
                            | "iter_mut"
                            | "windows"
                            | "chunks"
                            | "chunks_exact"
                            | "to_vec"
                            | "clone"
                            | "first"
                            | "last"
                            | "get"
                            | "fill"
                            | "copy_from_slice"
                            | "swap"
                            | "reverse"
                            | "rotate_left"
                            | "rotate_right"
                    ) =>
            {
                self.blocked = true;
            }
            Expr::Reference(reference)
                if reference.mutability.is_some() && self.is_name(&reference.expr) =>
            {
                self.blocked = true;
            }
            // `m[i][j]`, `m[i].len()`, `p[i].0`: rows, not numbers.
            Expr::Index(index) if self.is_element(&index.expr) => self.blocked = true,
            Expr::MethodCall(call) if self.is_element(&call.receiver) => self.blocked = true,
            Expr::Field(field) if self.is_element(&field.base) => self.blocked = true,
            _ => {}
        }
        syn::visit::visit_expr(self, expr);
    }

    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        if pat.ident.unraw() == self.name {
            self.bindings += 1;
        }
        syn::visit::visit_pat_ident(self, pat);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if super::mentions(mac.tokens.clone(), self.name) {
            self.blocked = true;
        }
    }
}

/// A name for the rewrite's own variable that the body does not use.
fn fresh(block: &Block, base: String) -> syn::Ident {
    let mut name = base;
    while super::mentions(block.to_token_stream(), &name) {
        name.push('_');
    }
    format_ident!("{}", name)
}

/// Rewrites the variable `name`; returns the name of its length.
fn rewrite(block: &mut Block, name: &str) -> String {
    let store = fresh(block, format!("{name}_store"));
    let len = fresh(block, format!("{name}_len"));
    let mut rename = Rename {
        name,
        store: &store,
        len: &len,
    };
    let mut stmts = Vec::with_capacity(block.stmts.len() + 1);
    // Before its `let` (and in its initializer) the name is another
    // variable's: a parameter it shadows, `let mut v = v.to_vec();`.
    let mut declared = false;
    for mut stmt in std::mem::take(&mut block.stmts) {
        if !declared
            && let Stmt::Local(local) = &mut stmt
            && mut_name(&local.pat).as_deref() == Some(name)
        {
            declared = true;
            rename_pat(&mut local.pat, &store);
            stmts.push(stmt);
            stmts.push(syn::parse_quote_spanned!(store.span()=>
                let mut #len = #store.len();
            ));
            continue;
        }
        if !declared {
            stmts.push(stmt);
            continue;
        }
        // Returned, it is a `Vec` of the range's elements (see `Rename` for
        // `return v;`).
        if let Stmt::Expr(tail, None) = &mut stmt
            && rename.is_name(tail)
        {
            let span = tail.span();
            *tail = syn::parse_quote_spanned!(span=> #store[..#len].to_vec());
            stmts.push(stmt);
            continue;
        }
        rename.visit_stmt_mut(&mut stmt);
        stmts.push(stmt);
    }
    block.stmts = stmts;
    len.to_string()
}

/// `let mut v` becomes `let mut v_store`.
fn rename_pat(pat: &mut Pat, store: &syn::Ident) {
    match pat {
        Pat::Ident(ident) => ident.ident = store.clone(),
        Pat::Type(typed) => rename_pat(&mut typed.pat, store),
        _ => {}
    }
}

/// Reads of the variable become its range, assignments a copy into it.
struct Rename<'a> {
    name: &'a str,
    store: &'a syn::Ident,
    len: &'a syn::Ident,
}

impl Rename<'_> {
    fn is_name(&self, expr: &Expr) -> bool {
        names_local(expr, self.name)
    }
}

/// Whether `expr` is the local `name`.
fn names_local(expr: &Expr, name: &str) -> bool {
    super::expr::local_name(expr).as_deref() == Some(name)
}

impl VisitMut for Rename<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        let (store, len) = (self.store, self.len);
        if self.is_name(expr) {
            let span = expr.span();
            *expr = syn::parse_quote_spanned!(span=> (#store[..#len]));
            return;
        }
        if let Expr::Return(ret) = expr
            && ret
                .expr
                .as_deref()
                .is_some_and(|returned| self.is_name(returned))
        {
            let span = ret.return_token.span;
            *expr = syn::parse_quote_spanned!(span=> return #store[..#len].to_vec());
            return;
        }
        // `v.retain(p)`: `v = v.iter().copied().filter(p).collect();`.
        if let Expr::MethodCall(call) = expr
            && self.is_name(&call.receiver)
            && let Some(resized) = super::buffers::resized(call)
        {
            let receiver = &call.receiver;
            *expr = syn::parse_quote_spanned!(call.method.span()=> #receiver = #resized);
        }
        if let Expr::Assign(assign) = expr
            && self.is_name(&assign.left)
        {
            self.visit_expr_mut(&mut assign.right);
            let right = &assign.right;
            let span = assign.eq_token.span;
            let new = format_ident!("{}_new", self.name, span = span);
            let message = format!(
                "`#[differentiate]` keeps `{}` in the buffer it was made with: it can get shorter and longer again, but not longer than at first",
                self.name
            );
            *expr = syn::parse_quote_spanned!(span=> {
                let #new = #right;
                ::core::assert!(#new.len() <= #store.len(), #message);
                #len = #new.len();
                #store[..#len].copy_from_slice(&#new);
            });
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_macro_mut(&mut self, _: &mut syn::Macro) {}
}
