//! The verifier: checks the invariants listed in the [`ir`](super) module doc.
//!
//! It checks that every value is defined once and before its uses, in its own
//! region or an enclosing one, that regions yield visible values, that each
//! parameter instruction matches the parameter list, operand counts, that
//! `extract` reads a tuple within bounds, that the side tables cover every value,
//! and that the returned value exists. It runs after every pass; a failure is a
//! bug in the macro, never in the user's code.

use super::{Function, Inst, Region, Ty, Value};

/// Returns a description of the first broken invariant.
pub(crate) fn verify(func: &Function) -> Result<(), String> {
    let n_values = func.insts.len();
    if func.names.len() != n_values
        || func.spans.len() != n_values
        || func.adjoint_of.len() != n_values
    {
        return Err("side tables do not have one entry per value".to_owned());
    }
    let mut scope = Scope {
        defined: vec![false; n_values],
        visible: vec![false; n_values],
    };
    scope.region(func, &func.body, false)?;
    if let Some(missing) = scope.defined.iter().position(|&d| !d) {
        return Err(format!("%{missing} is not in the body"));
    }
    for (index, param) in func.params.iter().enumerate() {
        match func.inst(param.value) {
            Inst::Param(i) if *i as usize == index => {}
            _ => return Err(format!("parameter {index} is not %{}", param.value.0)),
        }
    }
    if func.ret.index() >= n_values || !scope.visible[func.ret.index()] {
        return Err("the returned value does not exist in the body".to_owned());
    }
    Ok(())
}

struct Scope {
    /// Defined somewhere so far.
    defined: Vec<bool>,
    /// Defined in the current region or an enclosing one.
    visible: Vec<bool>,
}

impl Scope {
    /// Checks a region; its values go out of scope at its end if `closes`.
    fn region(&mut self, func: &Function, region: &Region, closes: bool) -> Result<(), String> {
        for &id in &region.insts {
            let index = id.index();
            if index >= func.insts.len() {
                return Err(format!("%{} is not an instruction", id.0));
            }
            if self.defined[index] {
                return Err(format!("%{} is defined twice", id.0));
            }
            let inst = func.inst(id);
            for operand in inst.operands() {
                if !self.visible.get(operand.index()).copied().unwrap_or(false) {
                    return Err(format!(
                        "%{} uses %{} before its definition or outside its region",
                        id.0, operand.0
                    ));
                }
            }
            check_inst(func, id, inst)?;
            // A copy in a region is a snapshot the adjoint reads from a tape;
            // a slice is a range of a buffer defined outside; a scratch
            // shadow is the second shadow of a buffer a call in a loop is
            // passed twice (`g(&x[a..b], &x[c..d])`), added into the first
            // after the call's pullback.
            if closes
                && matches!(func.ty(id), Ty::Buf(_))
                && !matches!(
                    inst,
                    Inst::CloneBuf { .. } | Inst::Pop(_) | Inst::Slice { .. } | Inst::Shadow { .. }
                )
            {
                return Err(format!("%{} is a buffer defined inside a region", id.0));
            }
            for inner in func.regions(id) {
                self.region(func, inner, true)?;
            }
            self.defined[index] = true;
            self.visible[index] = true;
        }
        for yielded in &region.yields {
            if !self.visible.get(yielded.index()).copied().unwrap_or(false) {
                return Err(format!(
                    "a region yields %{}, which is not visible there",
                    yielded.0
                ));
            }
        }
        if closes {
            for &id in &region.insts {
                self.visible[id.index()] = false;
            }
        }
        Ok(())
    }
}

fn check_inst(func: &Function, id: Value, inst: &Inst) -> Result<(), String> {
    match inst {
        Inst::Param(index) if *index as usize >= func.params.len() => {
            return Err(format!(
                "%{} is parameter {index}, which does not exist",
                id.0
            ));
        }
        Inst::Prim(prim, args) if args.len() != prim.arity() => {
            return Err(format!(
                "%{}: {} takes {} operands",
                id.0,
                prim.name(),
                prim.arity()
            ));
        }
        Inst::Pullback(prim, args) if args.len() != prim.reads().len() + 1 => {
            return Err(format!(
                "%{}: pullback of {} takes {} operands",
                id.0,
                prim.name(),
                prim.reads().len() + 1
            ));
        }
        Inst::If { then, els, .. } => {
            let n_yields = then.yields.len();
            if els.yields.len() != n_yields {
                return Err(format!(
                    "%{}: the branches yield different numbers of values",
                    id.0
                ));
            }
            if !matches!(func.ty(id), Ty::Tuple(elems) if elems.len() == n_yields) {
                return Err(format!(
                    "%{}: the type of an `if` is not the tuple of its yields",
                    id.0
                ));
            }
        }
        inst @ (Inst::For { .. } | Inst::While { .. }) => {
            let view = inst.as_loop().expect("a loop");
            // A `while` yields whether to go on first, and counts its trips last.
            let is_while = usize::from(view.range.is_none());
            let n_carried = view.inits.len();
            if view.body.yields.len() != n_carried + is_while {
                return Err(format!(
                    "%{}: the body yields {} values for {n_carried} carried",
                    id.0,
                    view.body.yields.len()
                ));
            }
            if !matches!(func.ty(id), Ty::Tuple(elems) if elems.len() == n_carried + is_while) {
                return Err(format!(
                    "%{}: the type of a loop is not the tuple of its results",
                    id.0
                ));
            }
            for index in 0..=n_carried {
                let is_arg = view.body.insts.get(index).is_some_and(
                    |&arg| matches!(func.inst(arg), Inst::Arg(i) if *i as usize == index),
                );
                if !is_arg {
                    return Err(format!(
                        "%{}: the body does not start with `arg {index}`",
                        id.0
                    ));
                }
            }
        }
        Inst::Arg(_) => {
            // Checked where it is allowed: at the start of a loop body (above).
        }
        Inst::Call(callee, args) if args.len() != callee.modes().len() => {
            return Err(format!(
                "%{}: {} takes {} operands",
                id.0,
                callee.name(),
                callee.modes().len()
            ));
        }
        Inst::Extract(tuple, index) => match func.ty(*tuple) {
            Ty::Tuple(elems) if (*index as usize) < elems.len() => {}
            _ => {
                return Err(format!(
                    "%{} extracts field {index} of a value that has none",
                    id.0
                ));
            }
        },
        _ => {}
    }
    Ok(())
}
