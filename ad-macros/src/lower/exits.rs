//! Which control-flow exits a piece of syntax contains.
//!
//! `break`, `continue` and early `return` are lowered to flags and guards (see
//! `loops.rs`): statements after one that may exit run under `if !exited`. This
//! scan says where that is needed, and which outer flags a loop must carry.

use std::collections::HashSet;

use syn::visit::Visit;
use syn::{Block, Expr, Stmt};

/// The exits a statement or a loop body contains, relative to where it is.
#[derive(Default, Debug)]
pub(super) struct Exits {
    /// An unlabeled `break` of the enclosing loop.
    pub(super) breaks: bool,
    /// An unlabeled `continue` of the enclosing loop.
    pub(super) continues: bool,
    /// Labels broken out of or continued, of loops outside.
    pub(super) labels: HashSet<String>,
    /// A `return`.
    pub(super) returns: bool,
}

impl Exits {
    pub(super) fn of_stmt(stmt: &Stmt) -> Exits {
        let mut scan = Scan::default();
        scan.visit_stmt(stmt);
        scan.exits
    }

    pub(super) fn of_expr(expr: &Expr) -> Exits {
        let mut scan = Scan::default();
        scan.visit_expr(expr);
        scan.exits
    }

    pub(super) fn of_block(block: &Block) -> Exits {
        let mut scan = Scan::default();
        scan.visit_block(block);
        scan.exits
    }

    pub(super) fn any(&self) -> bool {
        self.breaks || self.continues || self.returns || !self.labels.is_empty()
    }
}

#[derive(Default)]
struct Scan {
    exits: Exits,
    /// Loops entered inside the scanned syntax.
    depth: usize,
    /// Their labels.
    inner_labels: Vec<String>,
}

impl Scan {
    fn exit(&mut self, label: Option<&syn::Lifetime>, is_break: bool) {
        match label {
            Some(label) => {
                let name = label.ident.to_string();
                if !self.inner_labels.contains(&name) {
                    self.exits.labels.insert(name);
                }
            }
            None if self.depth == 0 && is_break => self.exits.breaks = true,
            None if self.depth == 0 => self.exits.continues = true,
            None => {}
        }
    }

    fn enter(&mut self, label: Option<&syn::Label>, visit: impl FnOnce(&mut Self)) {
        self.depth += 1;
        if let Some(label) = label {
            self.inner_labels.push(label.name.ident.to_string());
        }
        visit(self);
        if label.is_some() {
            self.inner_labels.pop();
        }
        self.depth -= 1;
    }
}

impl Visit<'_> for Scan {
    /// A `fn` in the body exits only itself.
    fn visit_item(&mut self, _: &syn::Item) {}

    fn visit_expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Break(brk) => {
                self.exit(brk.label.as_ref(), true);
                syn::visit::visit_expr_break(self, brk);
            }
            Expr::Continue(cont) => self.exit(cont.label.as_ref(), false),
            Expr::Return(ret) => {
                self.exits.returns = true;
                syn::visit::visit_expr_return(self, ret);
            }
            Expr::ForLoop(inner) => self.enter(inner.label.as_ref(), |this| {
                syn::visit::visit_expr_for_loop(this, inner)
            }),
            Expr::While(inner) => self.enter(inner.label.as_ref(), |this| {
                syn::visit::visit_expr_while(this, inner)
            }),
            Expr::Loop(inner) => self.enter(inner.label.as_ref(), |this| {
                syn::visit::visit_expr_loop(this, inner)
            }),
            // A closure's `return` returns from the closure (closures are rejected anyway).
            Expr::Closure(_) => {}
            other => syn::visit::visit_expr(self, other),
        }
    }
}
