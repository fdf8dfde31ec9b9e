//! Branches: `if c { A } else { B }` reverses into `if c { A' } else { B' }`,
//! and values defined in a branch leave it for the adjoint as extra yields.

use super::Reverse;
use crate::ir::{Const, Inst, Place, Ty, Value};

impl Reverse<'_> {
    /// Reverses `if c { A } else { B }` into `if c { A' } else { B' }`.
    ///
    /// Each branch is reversed from the adjoints of the `if`'s results, on its own
    /// copy of the gradient map; the adjoint `if` yields the new adjoint of every
    /// value outside the `if` that either branch changed.
    ///
    /// ```text
    /// let (y,) = if c { (x * x,) } else { (x,) };
    /// ⇒ let (d_x,) = if c { (d_y * x + d_y * x,) } else { (d_y,) };
    /// ```
    pub(super) fn reverse_if(&mut self, if_value: Value) {
        let primal = self.primal;
        let Inst::If { cond, then, els } = primal.inst(if_value) else {
            unreachable!("reverse_if on a non-`if`")
        };
        let mut seeds = vec![None; then.yields.len()];
        for &(index, extract) in &self.extracts[if_value.index()] {
            seeds[index] = self.grads[extract.index()];
        }
        let writes = self.writes_active(if_value);
        if seeds.iter().all(Option::is_none) && !writes {
            return;
        }
        let before = self.grads.clone();
        let mut branches = Vec::new();
        for region in [then, els] {
            self.grads = before.clone();
            self.builder.begin_region();
            for (&yielded, seed) in region.yields.iter().zip(&seeds) {
                if let Some(seed) = seed {
                    self.add(yielded, *seed);
                }
            }
            self.reverse_region(region);
            let insts = self.end_region(Vec::new());
            branches.push((insts, std::mem::replace(&mut self.grads, before.clone())));
        }
        // A branch changes only the adjoints of the outer values it uses.
        let mut changed: Vec<Value> = self
            .outer_values(if_value)
            .into_iter()
            .filter(|&value| {
                branches
                    .iter()
                    .any(|(_, grads)| grads[value.index()] != before[value.index()])
            })
            .collect();
        // An adjoint both branches leave as the same value passes through the
        // `if` (`if c { s += a } else { s += b }` gives `s` the seed in both):
        // that value comes from outside, and is not yielded. The adjoint loop
        // around then sees the seed carried unchanged, and can be fused.
        changed.retain(|&value| {
            let (then_grads, els_grads) = (&branches[0].1, &branches[1].1);
            match (then_grads[value.index()], els_grads[value.index()]) {
                (Some(then), Some(els)) if then == els => {
                    self.grads[value.index()] = Some(then);
                    false
                }
                _ => true,
            }
        });
        // The adjoint of a branch can write shadows even when no primal
        // value leaves the `if` (`if c { xs[0] } …` adds into `d_xs[0]`).
        let writes = writes
            || branches.iter().any(|(region, _)| {
                region
                    .insts
                    .iter()
                    .any(|&value| self.builder.func().has_effects(value))
            });
        // What the branches computed must be placed even when no adjoint
        // leaves them (an adjoint that passes through after all).
        let computed = branches.iter().any(|(region, _)| !region.insts.is_empty());
        if changed.is_empty() && !writes && !computed {
            return;
        }
        let mut regions = Vec::new();
        let mut zero_yields = vec![false; changed.len()];
        for (mut region, grads) in branches {
            region.yields = changed
                .iter()
                .map(|&value| match grads[value.index()] {
                    Some(adjoint) => adjoint,
                    None => self.push(Inst::Const(Const::Zero), primal.ty(value).clone(), value),
                })
                .collect();
            for (zero, &yielded) in zero_yields.iter_mut().zip(&region.yields) {
                *zero |= self.is_maybe_zero(yielded);
            }
            regions.push(region);
        }
        let els = regions.pop().expect("two branches");
        let then = regions.pop().expect("two branches");
        let tys = changed
            .iter()
            .map(|&value| primal.ty(value).clone())
            .collect();
        let adjoint_if = self.push(
            Inst::If {
                cond: *cond,
                then,
                els,
            },
            Ty::Tuple(tys),
            if_value,
        );
        for (index, &value) in changed.iter().enumerate() {
            let adjoint = self.extract(adjoint_if, index, value);
            if zero_yields[index] {
                self.mark_maybe_zero(adjoint);
            }
            self.grads[value.index()] = Some(adjoint);
        }
    }

    /// Whether `value` is defined inside one of the branches of `if_value`.
    pub(super) fn is_inside(&self, value: Value, if_value: Value) -> bool {
        let mut place = self.place(value);
        while let Place::In(owner, _) = place {
            if owner == if_value {
                return true;
            }
            place = self.place(owner);
        }
        false
    }

    /// Adds `value` (defined in branch `branch` of `owner`) to the values `owner`
    /// yields, and returns the `extract` that reads it after `owner`.
    pub(super) fn export(&mut self, value: Value, owner: Value, branch: u8) -> Value {
        let mut ty = self.builder.func().ty(value).clone();
        let span = self.builder.func().span(value);
        // A pullback or a copy of a buffer has no placeholder: it leaves as
        // `Some(…)`, and the other branch yields `None`.
        let value = if ty == Ty::Pullback || ty.elem().is_some() {
            ty = Ty::Option(Box::new(ty));
            let wrapped = self
                .builder
                .push_detached(Inst::Some(value), ty.clone(), span);
            if let Some(name) = self.builder.func().name(value) {
                let name = name.to_owned();
                self.builder.name(wrapped, &name);
            }
            self.set_place(wrapped, Place::In(owner, branch));
            let func = self.builder.func_mut();
            let Inst::If { then, els, .. } = &mut func.insts[owner.index()].inst else {
                unreachable!("values are exported from `if`s")
            };
            let inside = if branch == 0 { then } else { els };
            inside.insts.push(wrapped);
            wrapped
        } else {
            value
        };
        let placeholder = self
            .builder
            .push_detached(Inst::Const(Const::Zero), ty.clone(), span);
        self.set_place(placeholder, Place::In(owner, 1 - branch));
        let func = self.builder.func_mut();
        let Inst::If { then, els, .. } = &mut func.insts[owner.index()].inst else {
            unreachable!("values are exported from `if`s")
        };
        let (inside, other) = if branch == 0 {
            (then, els)
        } else {
            (els, then)
        };
        inside.yields.push(value);
        other.insts.push(placeholder);
        other.yields.push(placeholder);
        let Ty::Tuple(tys) = &mut func.insts[owner.index()].ty else {
            unreachable!("an `if` has a tuple type")
        };
        tys.push(ty.clone());
        let index = u32::try_from(tys.len() - 1).expect("small");
        let extract = self
            .builder
            .push_detached(Inst::Extract(owner, index), ty, span);
        if let Some(name) = self.builder.func().name(value) {
            let name = name.to_owned();
            self.builder.name(extract, &name);
        }
        self.insert_beside(extract, owner, true);
        extract
    }
}
