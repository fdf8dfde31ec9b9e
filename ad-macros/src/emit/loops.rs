//! Loops: `for` and `while` with their carried variables, ranges, and the
//! slices [`hoist`](super::hoist) makes before them.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;

use super::stmts::{Binding, Pattern, Stmts};
use super::{Emitter, Expr, Form, Prec, ident};
use crate::ir::{BinOp, Const, Inst, LoopRange, Value};

impl Emitter<'_> {
    /// `let mut c = init; for i in range { body; c = next; }`, into `stmts`.
    pub(super) fn for_loop(&self, for_value: Value, stmts: &mut Stmts) {
        if self.checkpoints.primal.contains_key(&for_value) {
            return self.checkpointed_primal(for_value, stmts);
        }
        if let Some(&primal) = self.checkpoints.adjoint.get(&for_value) {
            return self.checkpointed_adjoint(for_value, primal, stmts);
        }
        let func = self.func;
        let span = func.span(for_value);
        let view = func.inst(for_value).as_loop().expect("a loop");
        let (range, body) = (view.range, view.body);
        let assigned = self.carried(for_value, stmts);
        let body_stmts = self.stmts(body);
        let update = self.update(&assigned, span);
        let Some(range) = range else {
            // `loop { body; trips += 1; carried = next; if !go_on { break; } }`
            let (count, stop) = self.while_counter(for_value, stmts);
            stmts.push(quote_spanned!(span=> loop { #body_stmts #count #update #stop }));
            return;
        };
        let index = self.loop_index(body.insts[0], span);
        let iter = self.range(range, span);
        let for_loop = quote_spanned!(span=> for #index in #iter { #body_stmts #update });
        let Some(slices) = self.hoist.loops.get(&for_value) else {
            stmts.push(for_loop);
            return;
        };
        // `if end > start { let x_s = &x[base..][..end]; for … }`
        let start = self.expr(range.start).at(Prec::BitOr);
        let end = self.expr(range.end).at(Prec::BitOr);
        let known =
            func.int_literal(range.start).is_some() && func.int_literal(range.end).is_some();
        // Runs if its bounds are literals: `hoist` leaves a loop that never runs alone.
        let mut guarded = Stmts::new(self.declare_first);
        let block = if known { &mut *stmts } else { &mut guarded };
        let body = crate::ir::Place::In(for_value, 0);
        for (position, slice) in slices.iter().enumerate() {
            let binding = Binding {
                name: ident(&self.slices[&(for_value, position)], span),
                mutable: false,
                ty: quote!(_),
                annotation: None,
            };
            let buf = self.expr(slice.buf).at(Prec::Postfix);
            let base = self.invariant_expr(slice.base, body).at(Prec::Or);
            let borrow = if slice.mutable {
                quote!(&mut)
            } else {
                quote!(&)
            };
            let slice = quote_spanned!(span=> #borrow #buf[#base..][..#end]);
            block.bind(Pattern::Single(binding), slice, span);
        }
        block.push(for_loop);
        if !known {
            stmts.push(quote_spanned!(span=> if #end > #start { #guarded }));
        }
    }

    /// A `while`'s iteration counter, `let mut trips = 0_usize;` into
    /// `stmts` if the body reads it, and the statements that end each
    /// iteration: `trips += 1;` and `if !go_on { break; }`.
    pub(super) fn while_counter(
        &self,
        while_value: Value,
        stmts: &mut Stmts,
    ) -> (TokenStream, TokenStream) {
        let func = self.func;
        let span = func.span(while_value);
        let view = func.inst(while_value).as_loop().expect("a loop");
        let go_on = self.expr(view.go_on().expect("a `while`")).at(Prec::Prefix);
        let count = match &self.forms[view.body.insts[0].index()] {
            Form::Carried(name) if name != "_" => {
                let trips = ident(name, span);
                let binding = Binding {
                    name: trips.clone(),
                    mutable: true,
                    ty: quote!(usize),
                    annotation: None,
                };
                stmts.bind(
                    Pattern::Single(binding),
                    quote_spanned!(span=> 0_usize),
                    span,
                );
                quote_spanned!(span=> #trips += 1;)
            }
            _ => TokenStream::new(),
        };
        // A decision known at compile time: run once, or until a `return`.
        let stop = match func.inst(view.go_on().expect("a `while`")) {
            Inst::Const(Const::Bool(true)) => TokenStream::new(),
            Inst::Const(Const::Bool(false)) => quote_spanned!(span=> break;),
            _ => quote_spanned!(span=> if !#go_on { break; }),
        };
        (count, stop)
    }

    /// `let mut c = init;` for each value `for_value` carries, into
    /// `stmts`; gives those assigned after each iteration, with their
    /// argument and next value.
    pub(super) fn carried(
        &self,
        for_value: Value,
        stmts: &mut Stmts,
    ) -> Vec<(Ident, Value, Value)> {
        let func = self.func;
        let span = func.span(for_value);
        let view = func.inst(for_value).as_loop().expect("a loop");
        for (k, (&init, &yielded)) in view.inits.iter().zip(view.next()).enumerate() {
            let arg = view.body.insts[k + 1];
            let Form::Carried(name) = &self.forms[arg.index()] else {
                unreachable!("carried")
            };
            // Carried through unchanged, or assigned after each iteration.
            let mut binding = self.binding(name, arg, yielded != arg);
            if self.forms[init.index()] == Form::Inline
                && let Some(annotation) = self.annotation(init)
            {
                binding.ty = annotation.clone();
                binding.annotation = Some(annotation);
            }
            let init = self.expr(init).at(Prec::Or);
            stmts.bind(Pattern::Single(binding), init, span);
        }
        self.assignments(for_value)
    }

    /// The values a loop carries and assigns after each iteration: each
    /// local, its argument and its next value.
    pub(super) fn assignments(&self, for_value: Value) -> Vec<(Ident, Value, Value)> {
        let view = self.func.inst(for_value).as_loop().expect("a loop");
        view.args()
            .iter()
            .zip(view.next())
            .filter(|&(&arg, &next)| arg != next)
            .map(|(&arg, &next)| {
                let Form::Carried(name) = &self.forms[arg.index()] else {
                    unreachable!("carried")
                };
                (ident(name, self.func.span(arg)), arg, next)
            })
            .collect()
    }

    /// `c = next;` after an iteration, for the carried values `assigned`.
    pub(super) fn update(&self, assigned: &[(Ident, Value, Value)], span: Span) -> TokenStream {
        match assigned {
            [] => TokenStream::new(),
            [(var, arg, yielded)] => self.assignment(var, *arg, *yielded, span),
            // In parallel: a swap must read the old values.
            _ => {
                let vars = assigned.iter().map(|(var, _, _)| var);
                let next = assigned
                    .iter()
                    .map(|(_, _, yielded)| self.expr(*yielded).at(Prec::Or));
                quote_spanned!(span=> (#(#vars),*) = (#(#next),*);)
            }
        }
    }

    /// `value`, which does not change in the loop whose body is `body`,
    /// written so that it can be computed before that loop: what the body
    /// computes is written out again.
    pub(super) fn invariant_expr(&self, value: Value, body: crate::ir::Place) -> Expr {
        if self.places[value.index()] != body {
            return self.expr(value);
        }
        match self.func.inst(value) {
            Inst::Binary(op, lhs, rhs) => {
                let lhs = self.invariant_expr(*lhs, body);
                let rhs = self.invariant_expr(*rhs, body);
                self.binary_of(*op, lhs, rhs, self.func.span(value))
            }
            _ => self.inst_expr(value),
        }
    }

    /// The buffer and index an access is written with: a slice made
    /// before its loop and the loop's index, if hoisted (see [`hoist`]).
    pub(super) fn access(
        &self,
        access: Value,
        buf: Value,
        index: Value,
    ) -> (TokenStream, TokenStream) {
        match self.hoist.accesses.get(&access) {
            Some(&(for_value, position)) => {
                let span = self.func.span(access);
                let name = ident(&self.slices[&(for_value, position)], span);
                let view = self.func.inst(for_value).as_loop().expect("a loop");
                let j = self.expr(view.body.insts[0]).at(Prec::Or);
                (name.into_token_stream(), j)
            }
            None => (
                self.expr(buf).at(Prec::Postfix),
                self.expr(index).at(Prec::Or),
            ),
        }
    }

    /// `v = next;`, or `v += rhs;` when `next` is `v + rhs` written inline.
    pub(super) fn assignment(
        &self,
        var: &Ident,
        arg: Value,
        next: Value,
        span: Span,
    ) -> TokenStream {
        if self.forms[next.index()] == Form::Inline
            && let Inst::Binary(op, lhs, rhs) = self.func.inst(next)
            && *lhs == arg
        {
            let rhs = self.expr(*rhs).at(Prec::Or);
            match op {
                BinOp::Add => return quote_spanned!(span=> #var += #rhs;),
                BinOp::Sub => return quote_spanned!(span=> #var -= #rhs;),
                BinOp::Mul => return quote_spanned!(span=> #var *= #rhs;),
                BinOp::Div => return quote_spanned!(span=> #var /= #rhs;),
                _ => {}
            }
        }
        let next = self.expr(next).at(Prec::Or);
        quote_spanned!(span=> #var = #next;)
    }

    /// `a..b`, `(a..=b).rev()`, `(a..b).step_by(k)`.
    pub(super) fn range(&self, range: &LoopRange, span: Span) -> TokenStream {
        let start = self.expr(range.start).at(Prec::Or);
        // A stepped `a..=b` cannot be reversed (its `StepBy` is not
        // double-ended): walked backwards, it is `a..b + 1`.
        let exclusive_end = range.inclusive && range.step.is_some() && range.reversed;
        let end = if exclusive_end {
            self.expr(range.end).at(Prec::Sum)
        } else {
            self.expr(range.end).at(Prec::Or)
        };
        let mut iter = if exclusive_end {
            quote_spanned!(span=> #start..#end + 1)
        } else if range.inclusive {
            quote_spanned!(span=> #start..=#end)
        } else {
            quote_spanned!(span=> #start..#end)
        };
        if let Some(step) = range.step {
            let step = self.expr(step).at(Prec::Or);
            iter = quote_spanned!(span=> (#iter).step_by(#step));
        }
        if range.reversed {
            iter = quote_spanned!(span=> (#iter).rev());
        }
        iter
    }
}
