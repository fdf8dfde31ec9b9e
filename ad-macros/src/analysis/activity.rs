//! Activity analysis.
//!
//! A value is *varied* if it depends differentiably on an active parameter
//! (forward), and *useful* if the returned value depends on it (backward). It is
//! *active* — it gets an adjoint — only if it is both. `detach`, casts to
//! integers, comparisons and integer arithmetic end variedness. A result of an
//! `if` is varied if either branch yields a varied value for it, and a value a
//! branch yields is useful if that result is.

use crate::ir::{Function, Inst, Region, Role, UnOp, Value};

/// Which values of a function are active.
pub(crate) struct Activity {
    active: Vec<bool>,
}

impl Activity {
    pub(crate) fn is_active(&self, value: Value) -> bool {
        self.active.get(value.index()).copied().unwrap_or(false)
    }
}

pub(crate) fn activity(func: &Function) -> Activity {
    let varied = varied(func);
    let mut useful = vec![false; func.insts.len()];
    useful[func.ret.index()] = true;
    mark_useful(func, &func.body, &mut useful);
    let active = varied.iter().zip(&useful).map(|(&v, &u)| v && u).collect();
    Activity { active }
}

fn varied(func: &Function) -> Vec<bool> {
    let mut varied = vec![false; func.insts.len()];
    func.walk(&mut |_, value| {
        let inst = func.inst(value);
        let carries_gradient = func.ty(value).is_float() || matches!(inst, Inst::Tuple(_));
        varied[value.index()] = carries_gradient
            && match inst {
                Inst::Param(index) => func.params[*index as usize].role == Role::Active,
                Inst::Const(_) | Inst::Detach(_) | Inst::Unary(UnOp::Not, _) | Inst::If { .. } => {
                    false
                }
                Inst::Binary(op, lhs, rhs) => {
                    !op.is_comparison()
                        && !op.is_logic()
                        && (varied[lhs.index()] || varied[rhs.index()])
                }
                // The branches were walked before the instructions after the `if`.
                Inst::Extract(tuple, index) if matches!(func.inst(*tuple), Inst::If { .. }) => func
                    .regions(*tuple)
                    .iter()
                    .any(|region| varied[region.yields[*index as usize].index()]),
                inst => inst
                    .operands()
                    .iter()
                    .any(|operand| varied[operand.index()]),
            };
    });
    varied
}

/// Marks, from the end of `region` backwards, the operands of useful values.
fn mark_useful(func: &Function, region: &Region, useful: &mut [bool]) {
    for &value in region.insts.iter().rev() {
        if !useful[value.index()] {
            continue;
        }
        for operand in func.inst(value).operands() {
            useful[operand.index()] = true;
        }
        if let Inst::If { then, els, .. } = func.inst(value) {
            // The extracts after the `if` were visited first: a yield is useful
            // if the result it becomes is.
            for extract in extracts(func, region, value) {
                if let (Inst::Extract(_, index), true) =
                    (func.inst(extract), useful[extract.index()])
                {
                    for branch in [then, els] {
                        useful[branch.yields[*index as usize].index()] = true;
                    }
                }
            }
            mark_useful(func, then, useful);
            mark_useful(func, els, useful);
        }
    }
}

/// The `extract` instructions reading the results of `tuple` in `region`.
fn extracts(func: &Function, region: &Region, tuple: Value) -> Vec<Value> {
    region
        .insts
        .iter()
        .copied()
        .filter(|&value| matches!(func.inst(value), Inst::Extract(t, _) if *t == tuple))
        .collect()
}
