//! Activity analysis.
//!
//! A value is *varied* if it depends differentiably on an active parameter
//! (forward), and *useful* if the returned value depends on it (backward). It is
//! *active* — it gets an adjoint — only if it is both. `detach`, casts to
//! integers, comparisons and integer arithmetic end variedness.

use crate::ir::{Function, Inst, Role, UnOp, Value};

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
    let useful = useful(func);
    let active = varied.iter().zip(&useful).map(|(&v, &u)| v && u).collect();
    Activity { active }
}

fn varied(func: &Function) -> Vec<bool> {
    let mut varied = vec![false; func.insts.len()];
    for &value in &func.body.insts {
        let carries_gradient =
            func.ty(value).is_float() || matches!(func.inst(value), Inst::Tuple(_));
        varied[value.index()] = carries_gradient
            && match func.inst(value) {
                Inst::Param(index) => func.params[*index as usize].role == Role::Active,
                Inst::Const(_) | Inst::Detach(_) | Inst::Unary(UnOp::Not, _) => false,
                Inst::Binary(op, lhs, rhs) => {
                    !op.is_comparison()
                        && !op.is_logic()
                        && (varied[lhs.index()] || varied[rhs.index()])
                }
                inst => inst
                    .operands()
                    .iter()
                    .any(|operand| varied[operand.index()]),
            };
    }
    varied
}

fn useful(func: &Function) -> Vec<bool> {
    let mut useful = vec![false; func.insts.len()];
    useful[func.ret.index()] = true;
    for &value in func.body.insts.iter().rev() {
        if useful[value.index()] {
            for operand in func.inst(value).operands() {
                useful[operand.index()] = true;
            }
        }
    }
    useful
}
