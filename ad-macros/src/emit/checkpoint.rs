//! Checkpointed loops (`#[checkpoint(snapshots = k)]`): the primal loop keeps
//! no tape, and the adjoint loop becomes the binomial schedule of
//! `ad_runtime::checkpoint`, which runs the loop's steps again from a few
//! saved states.
//!
//! The reverse pass builds a checkpointed loop like any other: a primal loop
//! pushing what the adjoint needs on tapes, and an adjoint loop popping it
//! (its range says which loop it reverses). Only the emitter differs, so
//! every construct a loop body may hold is checkpointed alike:
//!
//! ```text
//! let mut s = s0;                              // the primal loop: no pushes
//! let mut checkpoints = __ad::Checkpoints::new(__ad::trips(&(0..n)), 16);
//! checkpoints.store((s, v.to_vec()));          // the loop state: carried
//! for i in 0..n {                              // values, changed buffers
//!     if checkpoints.step() { checkpoints.store((s, v.to_vec())); }
//!     …body…
//! }
//! …
//! let mut d_s = d_s0;                          // the adjoint loop
//! {
//!     let mut s = checkpoints.top().0;
//!     while let Some(step) = checkpoints.next_step() {
//!         match step {
//!             Step::Restore => { s = checkpoints.top().0; v.restore_from(…); }
//!             Step::Store => checkpoints.store((s, v.to_vec())),
//!             Step::Advance(k) => { let i = nth(0..n, k); …body… }
//!             Step::Reverse(k) => {
//!                 let i = nth(0..n, k);
//!                 { …body, with its pushes… }
//!                 { …adjoint body, with its pops… }
//!             }
//!         }
//!     }
//! }
//! ```
//!
//! The tapes then hold one iteration at a time. A step run again does not
//! run the macros of the body (`println!`, `assert!`): they ran in the
//! primal loop. A buffer in the loop state is given back its final contents
//! after the adjoint loop, which overwrote it (a parameter's caller sees
//! them, a local buffer may be the output).
//!
//! A loop whose adjoint keeps nothing (no tape), runs forwards, or was
//! fused into its primal loop needs no checkpoints: it is emitted as usual.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use proc_macro2::TokenStream;
use quote::{ToTokens, quote_spanned};

use super::stmts::Stmts;
use super::{Emitter, Prec, ident, names::Form};
use crate::ir::{Budget, Inst, Ty, Value};

/// The checkpointed loops of a function, found when emitting `_vjp`.
#[derive(Default)]
pub(super) struct Checkpoints {
    /// By primal loop: how it is checkpointed.
    pub(super) primal: HashMap<Value, Plan>,
    /// By adjoint loop: the primal loop it reverses.
    pub(super) adjoint: HashMap<Value, Value>,
    /// Set while a primal body is emitted without its tape pushes.
    pub(super) untaped: Cell<bool>,
    /// Set while a primal body is emitted to run a step again: without
    /// the user's macros.
    pub(super) rerun: Cell<bool>,
}

pub(super) struct Plan {
    /// The buffers the loop state holds: those the loop writes, and those
    /// it reads that are written anywhere.
    buffers: Vec<Value>,
    /// The names of the schedule, the step, the saved state, the step's
    /// number, and of each buffer parameter's final contents.
    schedule: String,
    step: String,
    state: String,
    number: String,
    index: String,
    finals: Vec<(Value, String)>,
}

impl Emitter<'_> {
    /// Finds the checkpointed loops of `_vjp` and names what their code binds.
    pub(super) fn plan_checkpoints(&mut self) {
        let func = self.func;
        let mut pairs = Vec::new();
        for &adjoint in &func.body.insts {
            let Inst::For { range, .. } = func.inst(adjoint) else {
                continue;
            };
            let Some(primal) = range.checkpoint.and_then(|checkpoint| checkpoint.reverses) else {
                continue;
            };
            // A `for` reversed by a loop in the other direction, or a
            // `while` by the loop over its trips backwards.
            let reversed = match func.inst(primal) {
                Inst::For { range: visits, .. } => visits.reversed != range.reversed,
                Inst::While {
                    checkpoint: Some(_),
                    ..
                } => range.reversed,
                _ => continue,
            };
            let nested = func.nested(primal);
            let taped = nested
                .iter()
                .any(|&value| matches!(func.inst(value), Inst::Push(..)));
            let view = func.inst(primal).as_loop().expect("a loop");
            let scalars = view.args().iter().all(|&arg| {
                matches!(
                    func.ty(arg),
                    Ty::F32 | Ty::F64 | Ty::Float | Ty::Int | Ty::Bool
                ) && matches!(self.forms[arg.index()], Form::Carried(_))
            });
            if reversed && taped && scalars && func.body.insts.contains(&primal) {
                pairs.push((primal, adjoint, nested));
            }
        }
        for (primal, adjoint, nested) in pairs {
            let inside: HashSet<Value> = nested.iter().copied().collect();
            let mut buffers = Vec::new();
            let add = |buf: Value, buffers: &mut Vec<Value>| {
                if !inside.contains(&buf) && buf != primal && !buffers.contains(&buf) {
                    buffers.push(buf);
                }
            };
            for &value in &nested {
                let inst = func.inst(value);
                for buf in func.bases(inst.written()) {
                    add(buf, &mut buffers);
                }
                let mut read = inst.operands();
                for region in func.regions(value) {
                    read.extend(&region.yields);
                }
                let read = read
                    .into_iter()
                    .filter(|&operand| matches!(func.ty(operand), Ty::Buf(_)))
                    .collect();
                for buf in func.bases(read) {
                    if self.written.contains(&buf) {
                        add(buf, &mut buffers);
                    }
                }
            }
            // Every saved buffer gets its final contents back: a parameter's
            // caller sees them, and a local one may be the output.
            let finals = buffers
                .iter()
                .map(|&buf| {
                    let name = match &self.forms[buf.index()] {
                        Form::Bound(name) => format!("{name}_end"),
                        _ => "end".to_owned(),
                    };
                    (buf, self.fresh(&name))
                })
                .collect();
            let plan = Plan {
                buffers,
                schedule: self.fresh("checkpoints"),
                step: self.fresh("step"),
                state: self.fresh("state"),
                number: self.fresh("k"),
                index: self.fresh("index"),
                finals,
            };
            self.checkpoints.primal.insert(primal, plan);
            self.checkpoints.adjoint.insert(adjoint, primal);
        }
    }

    /// The loop state's scalars: the names of the values `primal` carries.
    fn state_scalars(&self, primal: Value) -> Vec<syn::Ident> {
        let func = self.func;
        let span = func.span(primal);
        let view = func.inst(primal).as_loop().expect("a loop");
        view.args()
            .iter()
            .filter_map(|&arg| match &self.forms[arg.index()] {
                Form::Carried(name) if name != "_" => Some(ident(name, span)),
                _ => None,
            })
            .collect()
    }

    /// `(s, t, v.to_vec())`: the loop state as saved.
    fn state_tuple(&self, primal: Value, plan: &Plan) -> TokenStream {
        let span = self.func.span(primal);
        let scalars = self.state_scalars(primal);
        let buffers = plan.buffers.iter().map(|&buf| {
            let buf = self.expr(buf).at(Prec::Postfix);
            quote_spanned!(span=> #buf.to_vec())
        });
        let scalars = scalars.iter().map(ToTokens::to_token_stream);
        let items: Vec<TokenStream> = scalars.chain(buffers).collect();
        quote_spanned!(span=> (#(#items,)*))
    }

    /// The primal loop: the schedule made, the state saved before the loop
    /// and where the schedule says, and no tape pushes.
    pub(super) fn checkpointed_primal(&self, primal: Value, stmts: &mut Stmts) {
        let func = self.func;
        let plan = &self.checkpoints.primal[&primal];
        let span = func.span(primal);
        let view = func.inst(primal).as_loop().expect("a loop");
        let assigned = self.carried(primal, stmts);
        let schedule = ident(&plan.schedule, span);
        // A `for` knows its trip count: the offline schedule; a `while`
        // the online one.
        let (checkpoint, trips, counter) = match func.inst(primal) {
            Inst::For { range, .. } => {
                let iter = self.range(range, span);
                let trips = quote_spanned!(span=> __ad::trips(&(#iter)), );
                (range.checkpoint, trips, None)
            }
            Inst::While { checkpoint, .. } => (
                *checkpoint,
                TokenStream::new(),
                Some(self.while_counter(primal, stmts)),
            ),
            _ => unreachable!("a loop"),
        };
        let checkpoint = checkpoint.expect("checkpointed");
        let budget = self.expr(checkpoint.budget.value()).at(Prec::Or);
        let online = counter.is_some();
        let make = match (checkpoint.budget, online) {
            (Budget::Snapshots(_), false) => {
                quote_spanned!(span=> __ad::Checkpoints::new(#trips #budget))
            }
            (Budget::Snapshots(_), true) => {
                quote_spanned!(span=> __ad::Checkpoints::online(#budget))
            }
            (Budget::Bytes(_), _) => {
                let scalars = self.state_scalars(primal);
                let sizes = plan.buffers.iter().map(|&buf| {
                    let buf = self.expr(buf).at(Prec::Postfix);
                    quote_spanned!(span=> ::core::mem::size_of_val(&#buf[..]))
                });
                let make = if online {
                    quote_spanned!(span=> online_with_memory)
                } else {
                    quote_spanned!(span=> with_memory)
                };
                quote_spanned!(span=>
                    __ad::Checkpoints::#make(
                        #trips
                        #budget,
                        __ad::state_bytes(&(#(#scalars,)*), &[#(#sizes),*]),
                    )
                )
            }
        };
        let state = self.state_tuple(primal, plan);
        stmts.push(quote_spanned!(span=> let mut #schedule = #make;));
        stmts.push(quote_spanned!(span=> #schedule.store(#state);));
        self.checkpoints.untaped.set(true);
        let body = self.stmts(view.body);
        self.checkpoints.untaped.set(false);
        let update = self.update(&assigned, span);
        let save = quote_spanned!(span=>
            if #schedule.step() {
                #schedule.store(#state);
            }
        );
        stmts.push(match (view.range, counter) {
            (Some(range), _) => {
                let index = self.loop_index(view.body.insts[0], span);
                let iter = self.range(range, span);
                quote_spanned!(span=> for #index in #iter { #save #body #update })
            }
            (None, Some((count, stop))) => {
                quote_spanned!(span=> loop { #save #body #count #update #stop })
            }
            (None, None) => unreachable!("a `while` has a counter"),
        });
    }

    /// The adjoint loop: the schedule's steps, each restoring, saving,
    /// running or reversing a step of `primal`.
    pub(super) fn checkpointed_adjoint(&self, adjoint: Value, primal: Value, stmts: &mut Stmts) {
        let func = self.func;
        let plan = &self.checkpoints.primal[&primal];
        let span = func.span(adjoint);
        let primal_view = func.inst(primal).as_loop().expect("a loop");
        let adjoint_view = func.inst(adjoint).as_loop().expect("a loop");
        let assigned = self.carried(adjoint, stmts);
        let [schedule, step, state, number, index] = [
            &plan.schedule,
            &plan.step,
            &plan.state,
            &plan.number,
            &plan.index,
        ]
        .map(|name| ident(name, span));

        // Restoring: each scalar from its field, each buffer copied back.
        let scalars = self.state_scalars(primal);
        let positions = (0..scalars.len() + plan.buffers.len()).map(syn::Index::from);
        let (scalar_positions, buffer_positions): (Vec<_>, Vec<_>) =
            positions.enumerate().partition(|(k, _)| *k < scalars.len());
        let scalar_fields: Vec<_> = scalar_positions.into_iter().map(|(_, k)| k).collect();
        let buffer_fields = buffer_positions.into_iter().map(|(_, k)| k);
        let buffers: Vec<TokenStream> = plan
            .buffers
            .iter()
            .map(|&buf| self.expr(buf).at(Prec::Postfix))
            .collect();
        let restore_buffers = buffers
            .iter()
            .zip(buffer_fields)
            .map(|(buf, field)| quote_spanned!(span=> #buf.restore_from(&#state.#field);));
        let finals: Vec<(TokenStream, syn::Ident)> = plan
            .finals
            .iter()
            .map(|(buf, name)| (self.expr(*buf).at(Prec::Postfix), ident(name, span)))
            .collect();
        let keep_finals = finals
            .iter()
            .map(|(buf, name)| quote_spanned!(span=> let #name = #buf.to_vec();));
        let give_back = finals
            .iter()
            .map(|(buf, name)| quote_spanned!(span=> #buf.restore_from(&#name);));
        let uses =
            (!plan.buffers.is_empty()).then(|| quote_spanned!(span=> use __ad::RestoreFrom as _;));

        // One step of the primal loop, with or without its pushes: the
        // index of step `k` of a `for`, or `k` itself, a `while`'s count.
        let index_of = |number: &syn::Ident| match primal_view.range {
            Some(range) => {
                let iter = self.range(range, span);
                quote_spanned!(span=> __ad::nth(#iter, #number))
            }
            None => number.to_token_stream(),
        };
        let primal_index = self.loop_index(primal_view.body.insts[0], span);
        let adjoint_index = self.loop_index(adjoint_view.body.insts[0], span);
        let primal_assigned = self.assignments(primal);
        let primal_update = self.update(&primal_assigned, span);
        let run = |taped: bool| {
            self.checkpoints.untaped.set(!taped);
            self.checkpoints.rerun.set(true);
            let body = self.stmts(primal_view.body);
            self.checkpoints.rerun.set(false);
            self.checkpoints.untaped.set(false);
            quote_spanned!(span=> { #body #primal_update })
        };
        let advance = run(false);
        // A loop that does not read its index does not compute it.
        let nth = index_of(&number);
        let advance_index = (primal_index.to_string() != "_")
            .then(|| quote_spanned!(span=> let #primal_index = #nth;));
        let forward = run(true);
        let adjoint_body = self.stmts(adjoint_view.body);
        let adjoint_update = self.update(&assigned, span);
        let saved = self.state_tuple(primal, plan);
        stmts.push(quote_spanned!(span=> {
            #uses
            #(#keep_finals)*
            let (#(mut #scalars,)*) = (#(#schedule.top().#scalar_fields,)*);
            while let ::core::option::Option::Some(#step) = #schedule.next_step() {
                match #step {
                    __ad::Step::Restore => {
                        let #state = #schedule.top();
                        #(#scalars = #state.#scalar_fields;)*
                        #(#restore_buffers)*
                    }
                    __ad::Step::Store => #schedule.store(#saved),
                    __ad::Step::Advance(#number) => {
                        #advance_index
                        #advance
                    }
                    __ad::Step::Reverse(#number) => {
                        let #index = #nth;
                        let #primal_index = #index;
                        #forward
                        let #adjoint_index = #index;
                        { #adjoint_body #adjoint_update }
                    }
                }
            }
            #(#give_back)*
        }));
    }

    /// The pattern binding a loop's index (a `while`'s count): its name,
    /// or `_`.
    pub(super) fn loop_index(&self, index: Value, span: proc_macro2::Span) -> TokenStream {
        match &self.forms[index.index()] {
            Form::Bound(name) | Form::Carried(name) if name != "_" => {
                ident(name, span).into_token_stream()
            }
            _ => quote_spanned!(span=> _),
        }
    }
}
