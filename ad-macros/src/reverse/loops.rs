//! Loops: a loop reverses into a loop over the same range backwards, and
//! what an iteration's adjoint needs and cannot re-read or recompute is
//! pushed on a tape by the primal loop and popped by the adjoint one.

use std::collections::{HashMap, HashSet};

use super::Reverse;
use crate::ir::{Const, Inst, LoopRange, Place, Ty, Value};

/// An adjoint loop under construction.
pub(super) struct AdjointLoop {
    /// The primal loop it reverses.
    pub(super) primal: Value,
    /// Its body's open region in the builder.
    pub(super) region: usize,
    /// How many arguments its body starts with (pops go after them).
    pub(super) n_args: usize,
    /// Its index: the primal loop's index, visited in reverse.
    pub(super) index: Value,
}

impl Reverse<'_> {
    /// Reverses `for i in range { body }` into `for i in range.rev() { body' }`.
    ///
    /// The adjoint loop carries the adjoints of the active carried values
    /// (flowing from one iteration to the one before) and of every active value
    /// from outside the loop that the body reads (accumulating over all
    /// iterations). What the body's adjoint needs from an iteration is read
    /// again (values from outside), recomputed (the index, integers derived from
    /// it), or popped from a tape the primal loop pushes it on.
    ///
    /// ```text
    /// for i in 0..n { s = s * x; }
    /// ⇒ for i in (0..n).rev() { let s = tape_s.pop(); (d_s, d_x) = (d_s * x, d_x + d_s * s); }
    /// ```
    pub(super) fn reverse_for(&mut self, for_value: Value) {
        let primal = self.primal;
        let view = primal
            .inst(for_value)
            .as_loop()
            .expect("reverse_for on a loop");
        let (range, inits, body) = (view.range, view.inits, view.body);
        let (args, next) = (view.args(), view.next());
        let mut seeds = vec![None; inits.len()];
        let mut trips = None;
        for &(index, extract) in &self.extracts[for_value.index()] {
            match seeds.get_mut(index) {
                Some(seed) => *seed = self.grads[extract.index()],
                None => trips = Some(extract),
            }
        }
        if seeds.iter().all(Option::is_none) && !self.writes_active(for_value) {
            return;
        }
        // A slot needs an adjoint if its argument or its next value is active
        // (`loop { break x * x; }` never reads its argument).
        // A slot needs an adjoint if its argument, its next value or its result
        // is active: a loop that overwrites `x` with a constant still passes the
        // seed of `x` to its initial value when it runs no trip.
        let carried: Vec<usize> = (0..inits.len())
            .filter(|&k| self.is_active(args[k]) || self.is_active(next[k]) || seeds[k].is_some())
            .collect();
        let outer = self.outer_values(for_value);
        let span = primal.span(for_value);

        // What the adjoint loop starts from: the seeds, and the outer adjoints so far.
        let mut adjoint_inits = Vec::new();
        let mut tys = Vec::new();
        for &k in &carried {
            let ty = primal.ty(args[k]).clone();
            adjoint_inits.push(
                seeds[k]
                    .unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty.clone(), for_value)),
            );
            tys.push(ty);
        }
        for &value in &outer {
            let ty = primal.ty(value).clone();
            adjoint_inits.push(
                self.grads[value.index()]
                    .unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty.clone(), value)),
            );
            tys.push(ty);
        }

        let before = self.grads.clone();
        self.builder.begin_region();
        let index = self.builder.push(Inst::Arg(0), Ty::Int, span);
        if let Some(name) = primal.name(body.insts[0]) {
            self.builder.name(index, name);
        }
        let mut adjoint_args = Vec::new();
        for (position, ty) in tys.iter().enumerate() {
            let arg_index = u32::try_from(position + 1).expect("small");
            adjoint_args.push(self.builder.push(Inst::Arg(arg_index), ty.clone(), span));
        }
        // A loop may run no trip, and an overwritten carried value passes no
        // adjoint to the iteration before: either can be a structural zero.
        for (position, &arg) in adjoint_args.iter().enumerate() {
            let overwritten = carried
                .get(position)
                .is_some_and(|&k| !self.is_active(args[k]));
            if overwritten || self.is_maybe_zero(adjoint_inits[position]) {
                self.mark_maybe_zero(arg);
            }
        }
        for (position, &k) in carried.iter().enumerate() {
            self.builder.set_adjoint_of(adjoint_args[position], args[k]);
        }
        for (position, &value) in outer.iter().enumerate() {
            let adjoint_arg = adjoint_args[carried.len() + position];
            self.builder.set_adjoint_of(adjoint_arg, value);
            self.grads[value.index()] = Some(adjoint_arg);
        }
        self.loops.push(AdjointLoop {
            primal: for_value,
            region: self.builder.depth() - 1,
            n_args: 1 + adjoint_args.len(),
            index,
        });
        for (position, &k) in carried.iter().enumerate() {
            self.add(next[k], adjoint_args[position]);
        }
        self.reverse_region(body);
        let mut yields = Vec::new();
        for (position, &k) in carried.iter().enumerate() {
            let ty = tys[position].clone();
            yields.push(
                self.grads[args[k].index()]
                    .unwrap_or_else(|| self.push(Inst::Const(Const::Zero), ty, for_value)),
            );
        }
        for &value in &outer {
            yields.push(self.grads[value.index()].expect("an outer adjoint is carried"));
        }
        self.loops.pop();
        // With no trip a result is its initial value; otherwise what the last
        // iteration yields.
        let may_be_zero: Vec<bool> = adjoint_args
            .iter()
            .zip(&yields)
            .map(|(&arg, &yielded)| self.is_maybe_zero(arg) || self.is_maybe_zero(yielded))
            .collect();
        let adjoint_body = self.end_region(yields);

        self.grads = before;
        let reversed = match range {
            // A checkpointed loop's adjoint says which loop it reverses.
            Some(range) => LoopRange {
                reversed: !range.reversed,
                checkpoint: range.checkpoint.map(|checkpoint| crate::ir::Checkpoint {
                    reverses: Some(for_value),
                    ..checkpoint
                }),
                ..range.clone()
            },
            // A `while` is reversed by running its trips again, backwards.
            None => {
                let zero = self.push(Inst::Const(Const::Zero), Ty::Int, for_value);
                let trips = trips.expect("a `while` has a trip count");
                LoopRange {
                    start: zero,
                    end: trips,
                    inclusive: false,
                    step: None,
                    reversed: true,
                    checkpoint: match primal.inst(for_value) {
                        Inst::While {
                            checkpoint: Some(checkpoint),
                            ..
                        } => Some(crate::ir::Checkpoint {
                            reverses: Some(for_value),
                            ..*checkpoint
                        }),
                        _ => None,
                    },
                }
            }
        };
        let adjoint_loop = self.push(
            Inst::For {
                range: reversed,
                inits: adjoint_inits,
                body: adjoint_body,
            },
            Ty::Tuple(tys),
            for_value,
        );
        for (position, &value) in outer.iter().enumerate() {
            let adjoint = self.extract(adjoint_loop, carried.len() + position, value);
            if may_be_zero[carried.len() + position] {
                self.mark_maybe_zero(adjoint);
            }
            self.grads[value.index()] = Some(adjoint);
        }
        for (position, &k) in carried.iter().enumerate() {
            let adjoint = self.extract(adjoint_loop, position, args[k]);
            if may_be_zero[position] {
                self.mark_maybe_zero(adjoint);
            }
            self.add(inits[k], adjoint);
        }
    }

    /// Saves `value`, defined in the body of `for_value`, on a tape: pushed by
    /// the primal loop after its definition, popped at the start of each
    /// iteration of the adjoint loop. Returns the popped copy.
    pub(super) fn tape(&mut self, value: Value, for_value: Value) -> Value {
        let ty = self.builder.func().ty(value).clone();
        let span = self.builder.func().span(value);
        let name = self.builder.func().name(value).map(str::to_owned);

        // The tape lives in the body, before the statement holding the loop;
        // it has room for every iteration if that statement is the loop.
        let mut top = for_value;
        while let Place::In(owner, _) = self.place(top) {
            top = owner;
        }
        // A checkpointed loop's tapes hold one iteration at a time.
        let capacity = match self.primal.inst(for_value) {
            Inst::For { range, .. } if top == for_value && range.checkpoint.is_none() => {
                Some(range.visits())
            }
            _ => None,
        };
        let tape = self.builder.push_detached(
            Inst::TapeNew { capacity },
            Ty::Tape(Box::new(ty.clone())),
            span,
        );
        self.builder
            .name(tape, &format!("tape_{}", name.as_deref().unwrap_or("t")));
        self.insert_beside(tape, top, false);

        let push = self
            .builder
            .push_detached(Inst::Push(tape, value), Ty::Unit, span);
        self.set_place(push, Place::In(for_value, 0));
        self.pushes.push((for_value, value, push));

        // A `for` inside another statement reserves room for its trips
        // before it runs, so that its pushes never grow the tape (a push that
        // may grow makes the compiler keep the loop's values in memory).
        if let Inst::For { range, .. } = self.primal.inst(for_value)
            && top != for_value
        {
            let reserve = self.builder.push_detached(
                Inst::TapeReserve {
                    tape,
                    range: range.visits(),
                },
                Ty::Unit,
                span,
            );
            self.insert_beside(reserve, for_value, false);
        }

        let adjoint = self
            .loops
            .iter()
            .rev()
            .find(|adjoint| adjoint.primal == for_value)
            .expect("inside the adjoint loop");
        let (region, n_args) = (adjoint.region, adjoint.n_args);
        let pop = self.builder.push_detached(Inst::Pop(tape), ty, span);
        if let Some(name) = &name {
            self.builder.name(pop, name);
        }
        self.builder.insert_in_open(region, n_args, pop);
        pop
    }

    /// Places the tape pushes, each right after the value it saves (right
    /// after the body's arguments for an argument): one pass per loop body,
    /// where inserting each push as it was made scanned the body every time,
    /// quadratic in long loop bodies. Pushes of one value go in reverse order
    /// of making, as inserting each right after the value put them.
    pub(super) fn place_pushes(&mut self) {
        let mut by_loop: HashMap<Value, HashMap<Value, Vec<Value>>> = HashMap::new();
        let mut loops = Vec::new();
        for &(for_value, value, push) in self.pushes.iter().rev() {
            let of_loop = by_loop.entry(for_value).or_insert_with(|| {
                loops.push(for_value);
                HashMap::new()
            });
            of_loop.entry(value).or_default().push(push);
        }
        self.pushes.clear();
        let func = self.builder.func_mut();
        for for_value in loops {
            let after = &by_loop[&for_value];
            let (Inst::For { inits, body, .. } | Inst::While { inits, body, .. }) =
                &mut func.insts[for_value.index()].inst
            else {
                unreachable!("taped values come from loops")
            };
            // The body's arguments: the index, then the carried values.
            let n_args = inits.len() + 1;
            let n_args = n_args.min(body.insts.len());
            let args: HashSet<Value> = body.insts[..n_args].iter().copied().collect();
            let in_body: HashSet<Value> = body.insts.iter().copied().collect();
            let mut placed = Vec::with_capacity(body.insts.len() + after.len());
            // What is saved of the arguments, or of values from outside the
            // body, goes right after the arguments.
            let mut at_start: Vec<Value> = after
                .iter()
                .filter(|(value, _)| args.contains(value) || !in_body.contains(value))
                .flat_map(|(_, pushes)| pushes.iter().copied())
                .collect();
            at_start.sort_by_key(|push| std::cmp::Reverse(push.index()));
            for (position, &inst) in body.insts.iter().enumerate() {
                if position == n_args {
                    placed.append(&mut at_start);
                }
                placed.push(inst);
                if position >= n_args
                    && let Some(pushes) = after.get(&inst)
                {
                    placed.extend(pushes);
                }
            }
            placed.append(&mut at_start);
            body.insts = placed;
        }
    }
}
