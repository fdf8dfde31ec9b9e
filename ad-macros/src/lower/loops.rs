//! Lowering loops.
//!
//! A loop's body is a region whose arguments are the index and the *carried*
//! values: every outer variable the body assigns. The body yields their new
//! values; after the loop the variables name the loop's results.
//!
//! ```text
//! let mut s = x;                      %3 = for %0..%1 carry [%x] {
//! for i in 0..n {          ⇒              %4 = arg 0      ; i
//!     s = s * x;                          %5 = arg 1      ; s
//! }                                       %6 = mul %5, %x ; s
//!                                         yield %6
//!                                     }
//!                                     %7 = extract %3.0   ; s
//! ```

use std::collections::HashSet;

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{ExprBreak, ExprContinue, ExprForLoop, ExprLoop, ExprWhile};

use super::exits::Exits;
use super::{Lower, Poison};
use crate::diag::msg;
use crate::ir::{BinOp, Const, Inst, LoopRange, Region, Ty, Value};

impl Lower<'_> {
    pub(super) fn for_loop(&mut self, expr: &ExprForLoop) -> Result<(), Poison> {
        // A loop over a range, over the elements of buffers, or over an
        // iterator chain: a loop over indices.
        let span = expr.span();
        let chain = match self.chain_of(&expr.expr) {
            Some(chain) => chain,
            None => {
                self.cx.error_spanned_by(&expr.expr, msg::LOOP_RANGE);
                Err(Poison)
            }
        };
        let flags = self.new_flags(expr.label.as_ref(), false);
        // A `for` runs all its iterations: after a `break`, they do nothing.
        let exits = Exits::of_block(&expr.body);
        let mut extra = self.outer_flags(&exits);
        if exits.any() {
            self.bind_flag(&flags.broke, span);
            extra.push(flags.broke.clone());
        }
        let checkpoint = self.checkpoint_of(&expr.attrs);
        let chain = chain?;
        let checkpoint = checkpoint?;
        // `for v in a.chain(b)`: a loop over each part, the same body in
        // each; after a `break` in one, the later ones do nothing.
        for part in chain.parts() {
            self.for_part(expr, &part, flags.clone(), &exits, &extra, checkpoint)?;
        }
        Ok(())
    }

    /// The loop of `expr` over a chain of one part.
    fn for_part(
        &mut self,
        expr: &ExprForLoop,
        chain: &super::iter::Chain,
        flags: LoopFlags,
        exits: &Exits,
        extra: &[String],
        checkpoint: Option<crate::ir::Checkpoint>,
    ) -> Result<(), Poison> {
        let span = expr.span();
        let (mut range, shared) = self.driver(chain, span);
        range.checkpoint = checkpoint;
        let mut names = assigned_in(&expr.body);
        names.extend(extra.iter().cloned());
        // What the chain's closures assign (`|v| { seen += 1; … }`,
        // `take_while`'s flag), where they are called: in the body.
        names.extend(chain.mutations());
        let mut flags = Some(flags);
        let carried = self.carried_body(names, span, |this, index| {
            let n_elements = this.elements.len();
            let indices = this.leaf_indices(chain, shared, index, span);
            let mut body = |this: &mut Self, item| {
                this.bind_pattern(&expr.pat, item)?;
                let flags = flags.take().expect("one body");
                if exits.any() {
                    this.bind_flag(&flags.continued, span);
                }
                this.loops.push(flags);
                let body = match this.exited(true, span) {
                    Some(exited) => {
                        let go_on = this.not(exited, span);
                        this.branch(
                            Ok(go_on),
                            false,
                            span,
                            |this| this.block(&expr.body, false),
                            |_| Ok(None),
                        )
                    }
                    None => this.block(&expr.body, false),
                };
                this.loops.pop();
                body.map(drop)
            };
            let body = this.with_item(chain, &indices, span, &mut body);
            this.elements.truncate(n_elements);
            body?;
            Ok(None)
        });
        self.finish_for(range, carried, span)
    }

    /// Pushes a `for` built by [`Lower::carried_body`] and binds its results.
    pub(super) fn finish_for(
        &mut self,
        range: LoopRange,
        carried: Result<CarriedBody, Poison>,
        span: proc_macro2::Span,
    ) -> Result<(), Poison> {
        let (inits, body, positions, tys) = carried?;
        let for_value = self.push(
            Inst::For { range, inits, body },
            Ty::Tuple(tys.clone()),
            span,
        );
        self.bind_results(for_value, &positions, tys, span);
        Ok(())
    }

    /// `while let Some(p) = it.next() { body }` of a cursor
    /// (`let mut it = x.iter();`) whose body does not leave early: the `for`
    /// over what is left, `for p in it { body }`, after which every item is
    /// taken. `None` if the loop is not of this form.
    fn while_let_next(&mut self, expr: &ExprWhile) -> Option<Result<(), Poison>> {
        let syn::Expr::Let(binding) = &*expr.cond else {
            return None;
        };
        let syn::Pat::TupleStruct(some) = &*binding.pat else {
            return None;
        };
        let syn::Expr::MethodCall(next) = &*binding.expr else {
            return None;
        };
        if !some.path.is_ident("Some")
            || some.elems.len() != 1
            || next.method != "next"
            || !next.args.is_empty()
            || expr.label.is_some()
            || Exits::of_block(&expr.body).any()
        {
            return None;
        }
        let name = super::expr::local_name(&next.receiver)?;
        let Some(super::Special::Cursor(view, key)) = self.special(&name) else {
            return None;
        };
        let pattern = &some.elems[0];
        let cursor = &next.receiver;
        let body = &expr.body;
        let for_loop: syn::ExprForLoop = syn::parse_quote!(for #pattern in #cursor #body);
        Some(self.for_loop(&for_loop).map(|_| {
            self.set_hidden(&key, Ok(view.len));
        }))
    }

    /// `while c { body }`: a loop whose body is `if c { body }`, going on while
    /// `c` holds and nothing broke out; its last iteration runs the empty `else`.
    pub(super) fn while_loop(&mut self, expr: &ExprWhile) -> Result<(), Poison> {
        let span = expr.span();
        if let Some(counted) = self.counted_while(expr) {
            return counted;
        }
        if let Some(drained) = self.while_let_next(expr) {
            return drained;
        }
        if Exits::of_expr(&expr.cond).any() {
            self.cx.error_spanned_by(&expr.cond, msg::EXIT_IN_CONDITION);
            return Err(Poison);
        }
        let checkpoint = self.checkpoint_of(&expr.attrs)?;
        let flags = self.new_flags(expr.label.as_ref(), false);
        let exits = Exits::of_block(&expr.body);
        let extra = self.outer_flags(&exits);
        let mut names = assigned_in(&expr.body);
        names.extend(extra);
        let carried = self.carried_body(names, span, |this, _| {
            if exits.any() {
                this.bind_flag(&flags.broke, span);
                this.bind_flag(&flags.continued, span);
            }
            this.loops.push(flags);
            let cond = this.expr(&expr.cond);
            let body = this.branch(
                cond,
                false,
                span,
                |this| this.block(&expr.body, false),
                |_| Ok(None),
            );
            let exited = this.exited(false, span);
            this.loops.pop();
            body?;
            let cond = cond?;
            Ok(Some(match exited {
                Some(exited) => {
                    let stay = this.not(exited, span);
                    this.push(Inst::Binary(BinOp::And, cond, stay), Ty::Bool, span)
                }
                None => cond,
            }))
        });
        self.finish_while(carried, checkpoint, span)?;
        Ok(())
    }

    /// A `while` that counts: `while i < n { …; i += k; }` (also `<=`,
    /// `n > i`, `i + c < n`, `i = i + k`), whose counter the body assigns only in that last
    /// statement, with a bound the body does not change and no `break` or
    /// `continue`. It is the counted loop it stands for, lowered as
    /// `for i in (i..n).step_by(k) { … }` (for `i + c < n` of a `usize`,
    /// over `i..n.saturating_sub(c)`, so that `x[i]` and `x[i + 1]` are read
    /// at offsets of the loop's own index; otherwise over `j` from `i + c`
    /// with `i = j - c`), so it is reversed like a `for`: no trip
    /// count, no tapes of what can be read again. After it, `i` holds the
    /// value the `while` leaves. `None` if the loop is not of this form.
    fn counted_while(&mut self, expr: &ExprWhile) -> Option<Result<(), Poison>> {
        let syn::Expr::Binary(cond) = &*expr.cond else {
            return None;
        };
        // `i < n`, or `n > i`, and the same with `<=`.
        let (inclusive, counted, bound) = match cond.op {
            syn::BinOp::Lt(_) => (false, &*cond.left, &*cond.right),
            syn::BinOp::Le(_) => (true, &*cond.left, &*cond.right),
            syn::BinOp::Gt(_) => (false, &*cond.right, &*cond.left),
            syn::BinOp::Ge(_) => (true, &*cond.right, &*cond.left),
            _ => return None,
        };
        // `i`, `i + c` or `c + i`.
        let (counter, offset) = match counted {
            syn::Expr::Binary(sum) if matches!(sum.op, syn::BinOp::Add(_)) => {
                match super::expr::local_name(&sum.left) {
                    Some(counter) => (counter, Some(int_literal(&sum.right)?)),
                    None => (
                        super::expr::local_name(&sum.right)?,
                        Some(int_literal(&sum.left)?),
                    ),
                }
            }
            counted => (super::expr::local_name(counted)?, None),
        };
        let (last, init) = expr.body.stmts.split_last()?;
        let step = counter_step(last, &counter)?;
        let exits = Exits::of_block(&expr.body);
        if exits.breaks || exits.continues || !exits.labels.is_empty() || expr.label.is_some() {
            return None;
        }
        // The counter is assigned only by the last statement; the bound
        // reads nothing the body assigns or grows.
        let mut rest = syn::Block {
            brace_token: expr.body.brace_token,
            stmts: init.to_vec(),
        };
        let assigned = assigned_in(&rest);
        let mut in_bound = Reads::default();
        in_bound.visit_expr(bound);
        let mut body = Reads::default();
        body.visit_block(&rest);
        if assigned.contains(&counter)
            || body.pushes
            || in_bound.names.iter().any(|name| assigned.contains(name))
            || in_bound.calls
            || !matches!(self.lookup(&counter), Some(Ok(value)) if self.ty(value) == Ty::Int)
        {
            return None;
        }
        let span = expr.span();
        let start = self.lookup(&counter).expect("checked");
        let counter_ident = syn::Ident::new(&counter, span);
        let step_lit = syn::LitInt::new(&step.to_string(), span);
        // A counter that indexes a buffer (and is not rebound in the body),
        // or counts to a length, is a `usize`: `i + c < n` is
        // `i < n.saturating_sub(c)` for it.
        let unsigned = (body.indices.contains(&counter) && !body.bound.contains(&counter))
            || matches!(bound, syn::Expr::MethodCall(call) if call.method == "len");
        let range: syn::Expr = match (inclusive, &offset) {
            (false, None) => syn::parse_quote_spanned!(span=> (#counter_ident..#bound)),
            (true, None) => syn::parse_quote_spanned!(span=> (#counter_ident..=#bound)),
            // `i + c < n` is `i < n - c`, never true when `n < c`: the loop
            // runs to `n.max(c) - c`, bound to a name no user code can write
            // before the loop.
            (false, Some(c)) if unsigned => {
                let end = self.expr(bound).map(|end| {
                    let c = self.int_lit(c.base10_parse().unwrap_or(0), span);
                    self.sat_sub(end, c, span)
                });
                let name = format!("__ad_while_end{}", self.n_loops);
                self.bind(&name, end);
                let end = syn::Ident::new(&name, span);
                syn::parse_quote_spanned!(span=> (#counter_ident..#end))
            }
            (false, Some(c)) => syn::parse_quote_spanned!(span=> ((#counter_ident + #c)..#bound)),
            (true, Some(c)) => syn::parse_quote_spanned!(span=> ((#counter_ident + #c)..=#bound)),
        };
        let range: syn::Expr = if step == 1 {
            range
        } else {
            syn::parse_quote_spanned!(span=> #range.step_by(#step_lit))
        };
        let pat: syn::Pat = match (&offset, unsigned && !inclusive) {
            (None, _) | (Some(_), true) => syn::parse_quote_spanned!(span=> #counter_ident),
            (Some(c), false) => {
                // The index runs from `i + c`; `i` is `j - c` in the body.
                let shifted =
                    syn::Ident::new(&format!("{counter}_plus_{}", c.base10_digits()), span);
                rest.stmts.insert(
                    0,
                    syn::parse_quote_spanned!(span=> let #counter_ident = #shifted - #c;),
                );
                syn::parse_quote_spanned!(span=> #shifted)
            }
        };
        let for_loop = syn::ExprForLoop {
            // `#[checkpoint]` on the `while` is on the `for` it stands for.
            attrs: expr
                .attrs
                .iter()
                .filter(|attr| super::checkpoint::is_checkpoint(attr))
                .cloned()
                .collect(),
            label: None,
            for_token: Default::default(),
            pat: Box::new(pat),
            in_token: Default::default(),
            expr: Box::new(range),
            body: rest,
        };
        // The counter after the loop: `start` moved by every step taken,
        // `ceil((end - first) / k)` of them (none if `first >= end`).
        let first = match &offset {
            Some(c) => {
                let c = self.int_lit(c.base10_parse().unwrap_or(0), span);
                start.map(|start| self.int_op(BinOp::Add, start, c, span))
            }
            None => start,
        };
        let end = self.expr(bound);
        let lowered = self.for_loop(&for_loop);
        let result = (|| {
            lowered?;
            let (first, start, mut end) = (first?, start?, end?);
            if inclusive {
                let one = self.int_lit(1, span);
                end = self.int_op(BinOp::Add, end, one, span);
            }
            let seq_count = self.counted_trips(first, end, step, span);
            let k = self.int_lit(step, span);
            let moved = self.int_op(BinOp::Mul, seq_count, k, span);
            let after = self.int_op(BinOp::Add, start, moved, span);
            if let Some(slot) = self.lookup_mut(&counter) {
                *slot = Ok(after);
            }
            self.name(after, &counter);
            Ok(())
        })();
        Some(result)
    }

    /// `loop { body }`, going on until a `break`; its value is that of
    /// `break value` when `want_value`.
    pub(super) fn loop_expr(
        &mut self,
        expr: &ExprLoop,
        want_value: bool,
    ) -> Result<Option<Value>, Poison> {
        let span = expr.span();
        let checkpoint = self.checkpoint_of(&expr.attrs)?;
        let flags = self.new_flags(expr.label.as_ref(), want_value);
        let mut extra = self.outer_flags(&Exits::of_block(&expr.body));
        if let Some(value) = &flags.value {
            // Read only after a `break value` set it.
            let placeholder = self.push(Inst::Const(Const::Zero), Ty::Unknown, span);
            self.bind(value, Ok(placeholder));
            extra.push(value.clone());
        }
        let value_key = flags.value.clone();
        let mut names = assigned_in(&expr.body);
        names.extend(extra);
        let carried = self.carried_body(names, span, |this, _| {
            this.bind_flag(&flags.broke, span);
            this.bind_flag(&flags.continued, span);
            this.loops.push(flags);
            let body = this.block(&expr.body, false);
            let exited = this.exited(false, span);
            this.loops.pop();
            body?;
            Ok(Some(match exited {
                Some(exited) => this.not(exited, span),
                None => this.push(Inst::Const(Const::Bool(true)), Ty::Bool, span),
            }))
        });
        self.finish_while(carried, checkpoint, span)?;
        match value_key {
            Some(key) => self.lookup(&key).expect("bound").map(Some),
            None => Ok(None),
        }
    }

    /// `break`, `break 'label`, `break value`: sets the target loop's flag.
    pub(super) fn break_(&mut self, brk: &ExprBreak) {
        let Some(target) = self.loop_target(brk.label.as_ref(), brk.break_token.span) else {
            return;
        };
        if let Some(value) = &brk.expr {
            let value = self.expr(value);
            match self.loops[target].value.clone() {
                Some(key) => self.set_hidden(&key, value),
                None => self.cx.error_spanned_by(brk, msg::BREAK_VALUE),
            }
        }
        let key = self.loops[target].broke.clone();
        let yes = self.push(Inst::Const(Const::Bool(true)), Ty::Bool, brk.span());
        self.set_hidden(&key, Ok(yes));
    }

    /// `continue`, `continue 'label`: sets the target loop's flag.
    pub(super) fn continue_(&mut self, cont: &ExprContinue) {
        let Some(target) = self.loop_target(cont.label.as_ref(), cont.continue_token.span) else {
            return;
        };
        let key = self.loops[target].continued.clone();
        let yes = self.push(Inst::Const(Const::Bool(true)), Ty::Bool, cont.span());
        self.set_hidden(&key, Ok(yes));
    }

    /// The loop a `break` or `continue` leaves.
    fn loop_target(&self, label: Option<&syn::Lifetime>, span: proc_macro2::Span) -> Option<usize> {
        let target = match label {
            Some(label) => {
                let name = label.ident.to_string();
                self.loops
                    .iter()
                    .rposition(|flags| flags.label.as_deref() == Some(name.as_str()))
            }
            None => self.loops.len().checked_sub(1),
        };
        if target.is_none() {
            self.cx.error_at(span, msg::BREAK_OUTSIDE_LOOP);
        }
        target
    }

    fn new_flags(&mut self, label: Option<&syn::Label>, with_value: bool) -> LoopFlags {
        let n = self.n_loops;
        self.n_loops += 1;
        LoopFlags {
            label: label.map(|label| label.name.ident.to_string()),
            broke: format!("#broke{n}"),
            continued: format!("#continued{n}"),
            value: with_value.then(|| format!("#value{n}")),
        }
    }

    /// Binds a flag to `false` in the current scope.
    fn bind_flag(&mut self, key: &str, span: proc_macro2::Span) {
        let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
        self.bind(key, Ok(no));
    }

    /// The hidden variables of outer loops and of `return` that a body with
    /// these exits may set: the loop must carry them.
    fn outer_flags(&self, exits: &Exits) -> Vec<String> {
        let mut keys = Vec::new();
        for flags in &self.loops {
            if flags
                .label
                .as_ref()
                .is_some_and(|label| exits.labels.contains(label))
            {
                keys.push(flags.broke.clone());
                keys.push(flags.continued.clone());
                keys.extend(flags.value.clone());
            }
        }
        if exits.returns && self.returning {
            keys.push(super::RETURNED.to_owned());
            keys.extend(self.returned_keys());
        }
        keys
    }

    /// Pushes a `while` built by [`Lower::carried_body`] and binds its results.
    fn finish_while(
        &mut self,
        carried: Result<CarriedBody, Poison>,
        checkpoint: Option<crate::ir::Checkpoint>,
        span: proc_macro2::Span,
    ) -> Result<(), Poison> {
        let (inits, body, positions, mut tys) = carried?;
        tys.push(Ty::Int);
        let while_value = self.push(
            Inst::While {
                inits,
                body,
                checkpoint,
            },
            Ty::Tuple(tys.clone()),
            span,
        );
        let trips = u32::try_from(tys.len() - 1).expect("small");
        let trips = self.push(Inst::Extract(while_value, trips), Ty::Int, span);
        self.builder.name(trips, "trips");
        tys.pop();
        self.bind_results(while_value, &positions, tys, span);
        Ok(())
    }

    /// Lowers a loop body as a region whose arguments are the index and one
    /// carried value per outer variable in `names` (the variables the body
    /// assigns, and hidden ones). `lower` lowers the body and returns the
    /// condition to go on, if any, which the region yields before the
    /// carried values.
    pub(super) fn carried_body(
        &mut self,
        names: HashSet<String>,
        span: proc_macro2::Span,
        lower: impl FnOnce(&mut Self, Value) -> Result<Option<Value>, Poison>,
    ) -> Result<CarriedBody, Poison> {
        // A closure called in the body may assign what it captures.
        let mut names = names;
        names.extend(self.closure_mutations());
        // A tuple variable is carried element by element, an option local
        // as whether it holds a value and the value.
        let parts: Vec<String> = names
            .iter()
            .flat_map(|name| match self.special(name) {
                Some(super::Special::Tuple(n)) => {
                    (0..n).map(|k| super::tuple_element(name, k)).collect()
                }
                Some(super::Special::Option) => (0..2)
                    .map(|k| super::options::option_part(name, k))
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        names.extend(parts);
        // A buffer is one handle for its whole life (`cur = next` copies the
        // elements): the loop writes it, it does not carry it.
        let carried: Vec<(usize, usize)> = self
            .outer_positions(&names)
            .into_iter()
            .filter(|&(scope, entry)| {
                !matches!(self.scopes[scope][entry].1,
                    Ok(value) if matches!(self.builder.func().ty(value), Ty::Buf(_)))
            })
            .collect();
        let inits: Vec<Result<Value, Poison>> = carried
            .iter()
            .map(|&(scope, entry)| self.scopes[scope][entry].1)
            .collect();

        self.builder.begin_region();
        let index = self.push(Inst::Arg(0), Ty::Int, span);
        for (k, (&(scope, entry), init)) in carried.iter().zip(&inits).enumerate() {
            let ty = init.map_or(Ty::Unknown, |init| self.builder.func().ty(init).clone());
            let arg = self.push(Inst::Arg(u32::try_from(k + 1).expect("small")), ty, span);
            let name = self.scopes[scope][entry].0.clone();
            self.name(arg, &name);
            self.scopes[scope][entry].1 = Ok(arg);
        }
        self.scopes.push(super::Scope::default());
        let keep = lower(self, index);
        self.scopes.pop();
        let yields: Vec<Result<Value, Poison>> = carried
            .iter()
            .map(|&(scope, entry)| self.scopes[scope][entry].1)
            .collect();
        let mut body = self.builder.end_region(Vec::new());

        // A buffer is one handle for its whole life: never carried by a loop.
        let is_buffer = |this: &Self, value: &Result<Value, Poison>| {
            value.is_ok_and(|value| matches!(this.builder.func().ty(value), Ty::Buf(_)))
        };
        if inits
            .iter()
            .chain(&yields)
            .any(|value| is_buffer(self, value))
        {
            self.cx.error_at(span, msg::BUFFER_IN_BRANCH);
            for &(scope, entry) in &carried {
                self.scopes[scope][entry].1 = Err(Poison);
            }
            return Err(Poison);
        }
        if keep.is_err() || inits.iter().chain(&yields).any(Result::is_err) {
            for &(scope, entry) in &carried {
                self.scopes[scope][entry].1 = Err(Poison);
            }
            return Err(Poison);
        }
        body.yields.extend(keep.expect("checked"));
        let inits: Vec<Value> = inits
            .into_iter()
            .map(|init| init.expect("checked"))
            .collect();
        let mut tys = Vec::new();
        for (k, (&init, yielded)) in inits.iter().zip(yields).enumerate() {
            let yielded = yielded.expect("checked");
            let ty = self.ty(init).join(&self.ty(yielded));
            for value in [init, yielded, body.insts[k + 1]] {
                self.builder.refine_ty(value, &ty);
            }
            body.yields.push(yielded);
            tys.push(ty);
        }
        Ok((inits, body, carried, tys))
    }

    /// After a loop, the carried variables name its results.
    fn bind_results(
        &mut self,
        loop_value: Value,
        positions: &[(usize, usize)],
        tys: Vec<Ty>,
        span: proc_macro2::Span,
    ) {
        for (k, (ty, &(scope, entry))) in tys.into_iter().zip(positions).enumerate() {
            let result = self.push(
                Inst::Extract(loop_value, u32::try_from(k).expect("small")),
                ty,
                span,
            );
            let name = self.scopes[scope][entry].0.clone();
            self.name(result, &name);
            self.scopes[scope][entry].1 = Ok(result);
        }
    }

    /// Where the innermost bindings of `names` are, in order of the scopes.
    fn outer_positions(&self, names: &HashSet<String>) -> Vec<(usize, usize)> {
        let mut positions = Vec::new();
        let mut seen = HashSet::new();
        for (scope_index, scope) in self.scopes.iter().enumerate().rev() {
            for (entry_index, (name, _)) in scope.iter().enumerate().rev() {
                if names.contains(name) && seen.insert(name.clone()) {
                    positions.push((scope_index, entry_index));
                }
            }
        }
        positions.sort_unstable();
        positions
    }
}

/// The hidden variables of a loop being lowered (see [`super::Lower::stmts`]).
#[derive(Clone)]
pub(super) struct LoopFlags {
    pub(super) label: Option<String>,
    /// `#broke<n>`: a `break` left the loop.
    pub(super) broke: String,
    /// `#continued<n>`: a `continue` ended this iteration.
    pub(super) continued: String,
    /// `#value<n>`: the value of a `loop` expression, set by `break value`.
    pub(super) value: Option<String>,
}

/// A loop body lowered by [`Lower::carried_body`]: the initial values, the
/// body, where the carried variables are bound, and their types.
pub(super) type CarriedBody = (Vec<Value>, Region, Vec<(usize, usize)>, Vec<Ty>);

/// The integer literal an expression is (`1`, `2usize`).
fn int_literal(expr: &syn::Expr) -> Option<syn::LitInt> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => Some(int.clone()),
        syn::Expr::Paren(paren) => int_literal(&paren.expr),
        _ => None,
    }
}

/// `k` if `stmt` is `i += k;`, `i = i + k;` or `i = k + i;` for a literal
/// `k >= 1`.
fn counter_step(stmt: &syn::Stmt, counter: &str) -> Option<u64> {
    let syn::Stmt::Expr(expr, Some(_)) = stmt else {
        return None;
    };
    let k = match expr {
        syn::Expr::Binary(binary) if matches!(binary.op, syn::BinOp::AddAssign(_)) => {
            (super::expr::local_name(&binary.left)? == counter).then_some(&*binary.right)?
        }
        syn::Expr::Assign(assign) => {
            let syn::Expr::Binary(sum) = &*assign.right else {
                return None;
            };
            // `i = i + k` or `i = k + i`.
            let target = super::expr::local_name(&assign.left)?;
            let step = if super::expr::local_name(&sum.left).as_deref() == Some(counter) {
                &*sum.right
            } else if super::expr::local_name(&sum.right).as_deref() == Some(counter) {
                &*sum.left
            } else {
                return None;
            };
            (matches!(sum.op, syn::BinOp::Add(_)) && target == counter).then_some(step)?
        }
        _ => return None,
    };
    int_literal(k)?
        .base10_parse::<u64>()
        .ok()
        .filter(|&k| k >= 1)
}

/// What an expression (a `while` bound) or a block (its body) does: the
/// local names it reads, whether it calls anything but `len()` (whose value
/// a loop body could change) or indexes, and whether it pushes (changing a
/// length the bound may read).
#[derive(Default)]
struct Reads {
    names: HashSet<String>,
    calls: bool,
    pushes: bool,
    /// The names read in an index outside any cast (`x[i + 1]`): `usize`s.
    indices: HashSet<String>,
    /// The names patterns bind (`let i = …`, `|i| …`): an index may read
    /// one of those rather than the variable of the same name outside.
    bound: HashSet<String>,
}

/// The names an index reads outside casts.
struct IndexNames<'a>(&'a mut HashSet<String>);

impl Visit<'_> for IndexNames<'_> {
    fn visit_expr_path(&mut self, path: &syn::ExprPath) {
        if let Some(ident) = path.path.get_ident() {
            self.0.insert(ident.to_string());
        }
    }

    fn visit_expr_cast(&mut self, _: &syn::ExprCast) {}

    fn visit_expr_method_call(&mut self, _: &syn::ExprMethodCall) {}

    fn visit_expr_call(&mut self, _: &syn::ExprCall) {}
}

impl Visit<'_> for Reads {
    fn visit_expr_path(&mut self, path: &syn::ExprPath) {
        if let Some(ident) = path.path.get_ident() {
            self.names.insert(ident.to_string());
        }
    }

    fn visit_expr_method_call(&mut self, call: &syn::ExprMethodCall) {
        if call.method != "len" || !call.args.is_empty() {
            self.calls = true;
        }
        self.pushes |= call.method == "push";
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_call(&mut self, call: &syn::ExprCall) {
        self.calls = true;
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_pat_ident(&mut self, pat: &syn::PatIdent) {
        self.bound.insert(pat.ident.to_string());
        syn::visit::visit_pat_ident(self, pat);
    }

    fn visit_expr_index(&mut self, index: &syn::ExprIndex) {
        self.calls = true;
        IndexNames(&mut self.indices).visit_expr(&index.index);
        syn::visit::visit_expr_index(self, index);
    }
}

/// The variables a block assigns, by name (`x = …`, `x += …`), at any depth.
fn assigned_in(block: &syn::Block) -> HashSet<String> {
    let mut assigned = Assigned::default();
    assigned.visit_block(block);
    assigned.names
}

/// The variables an expression assigns (a closure's body).
pub(super) fn assigned_in_expr(expr: &syn::Expr) -> HashSet<String> {
    let mut assigned = Assigned::default();
    assigned.visit_expr(expr);
    assigned.names
}

#[derive(Default)]
struct Assigned {
    names: HashSet<String>,
}

impl Visit<'_> for Assigned {
    /// A `fn` in the body assigns only its own locals.
    fn visit_item(&mut self, _: &syn::Item) {}

    fn visit_expr_assign(&mut self, assign: &syn::ExprAssign) {
        // `x = …`, and each local of `(a, (b, _)) = …`.
        let mut targets = vec![&*assign.left];
        while let Some(target) = targets.pop() {
            match target {
                syn::Expr::Tuple(tuple) => targets.extend(&tuple.elems),
                syn::Expr::Paren(paren) => targets.push(&paren.expr),
                target => {
                    if let Some(name) = assigned_name(target) {
                        self.names.insert(name);
                    }
                }
            }
        }
        syn::visit::visit_expr_assign(self, assign);
    }

    /// `std::mem::swap(&mut a, &mut b)` assigns both;
    /// `std::mem::replace(&mut a, e)` and `take(&mut a)` assign `a`.
    fn visit_expr_call(&mut self, call: &syn::ExprCall) {
        if let syn::Expr::Path(path) = &*call.func
            && path.path.segments.last().is_some_and(|last| {
                matches!(last.ident.to_string().as_str(), "swap" | "replace" | "take")
            })
        {
            for arg in &call.args {
                if let syn::Expr::Reference(reference) = arg
                    && reference.mutability.is_some()
                    && let Some(name) = super::expr::local_name(&reference.expr)
                {
                    self.names.insert(name);
                }
            }
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_binary(&mut self, binary: &syn::ExprBinary) {
        if super::expr::compound_op(&binary.op).is_some()
            && let Some(name) = assigned_name(&binary.left)
        {
            self.names.insert(name);
        }
        syn::visit::visit_expr_binary(self, binary);
    }
}

/// The local an assignment to `target` changes: `x`, or the tuple `best`
/// of `best.1 = …`.
fn assigned_name(target: &syn::Expr) -> Option<String> {
    match target {
        syn::Expr::Field(field) if matches!(field.member, syn::Member::Unnamed(_)) => {
            super::expr::local_name(&field.base)
        }
        target => super::expr::local_name(target),
    }
}
