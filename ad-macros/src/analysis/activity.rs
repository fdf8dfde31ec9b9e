//! Activity analysis.
//!
//! A value is *varied* if it depends differentiably on an active parameter
//! (forward), and *useful* if the returned value depends on it (backward). It is
//! *active* — it gets an adjoint — only if it is both. `detach`, casts to
//! integers, comparisons and integer arithmetic end variedness.
//!
//! Through control flow: a result of an `if` is varied if either branch yields
//! a varied value for it, and a value a branch yields is useful if that result
//! is. A loop's carried value is varied if its initial value or the value the
//! body yields for it is, and useful if the loop's result or the next
//! iteration needs it; both are fixpoints over the body.
//!
//! A buffer is one value for the analysis, whatever its elements: varied if it
//! is an active parameter or a varied value is written into it, useful if it is
//! returned, is an active `&mut` parameter (its final contents are an output),
//! or a useful value is read from it; a write is useful if its buffer is. This
//! ignores the order of reads and writes, so both are fixpoints over the whole
//! function.

use crate::ir::{Function, Inst, Region, Role, Ty, UnOp, Value};

/// Which values of a function are active.
pub(crate) struct Activity {
    varied: Vec<bool>,
    active: Vec<bool>,
}

impl Activity {
    pub(crate) fn is_active(&self, value: Value) -> bool {
        self.active.get(value.index()).copied().unwrap_or(false)
    }

    /// Whether a value depends on an active input (whether or not it reaches
    /// the output).
    pub(crate) fn is_varied(&self, value: Value) -> bool {
        self.varied.get(value.index()).copied().unwrap_or(false)
    }
}

pub(crate) fn activity(func: &Function) -> Activity {
    let mut varied = vec![false; func.insts.len()];
    loop {
        let before = varied.clone();
        mark_varied(func, &func.body, &mut varied);
        if varied == before {
            break;
        }
    }
    let mut useful = vec![false; func.insts.len()];
    useful[func.ret.index()] = true;
    for param in &func.params {
        if param.mutable && param.role == Role::Active {
            useful[param.value.index()] = true;
        }
    }
    let extracts = func.extracts();
    loop {
        let before = useful.clone();
        mark_useful(func, &func.body, &extracts, &mut useful);
        if useful == before {
            break;
        }
    }
    let active = varied.iter().zip(&useful).map(|(&v, &u)| v && u).collect();
    Activity { varied, active }
}

/// Marks the calls that depend on no active input [`plain`]: they call the
/// function itself, as written, whose derivative nobody needs (a helper
/// of constants, `scale_of(1.5)`, needs no `#[differentiate]`). Not a call
/// moved into a buffer, checkpointed, or given rows flat (the twins' forms).
///
/// [`plain`]: crate::ir::UserCall::plain
pub(crate) fn plain_calls(mut func: Function, activity: &Activity) -> Function {
    let mut plain = Vec::new();
    func.walk(&mut |_, value| {
        if let Inst::Forward { callee, .. } = func.inst(value)
            && !activity.is_varied(value)
        {
            plain.push(*callee as usize);
        }
    });
    for callee in plain {
        let call = &mut func.user_calls[callee];
        call.plain = !call.into && !call.checkpoint && !call.passes_rows;
    }
    func
}

fn mark_varied(func: &Function, region: &Region, varied: &mut [bool]) {
    for &value in &region.insts {
        let inst = func.inst(value);
        let written = func.bases(inst.written());
        if !written.is_empty() {
            // What is written is every operand but the buffers written into.
            let writes_varied = inst
                .operands()
                .iter()
                .any(|operand| !written.contains(operand) && varied[operand.index()]);
            for &buf in &written {
                let constant_param = matches!(func.inst(buf), Inst::Param(index) if func.params[*index as usize].role != Role::Active);
                if writes_varied && !constant_param && func.ty(buf).is_float_buf() {
                    varied[buf.index()] = true;
                }
            }
            // A call's output depends on all its arguments, including the
            // contents of the buffers it changes.
            if matches!(inst, Inst::Forward { .. }) {
                varied[value.index()] |=
                    writes_varied || written.iter().any(|buf| varied[buf.index()]);
            }
            continue;
        }
        // A tuple a call returns carries the gradients of its floats.
        let returned_tuple = matches!(inst, Inst::Extract(pair, 0)
            if matches!(func.inst(*pair), Inst::Forward { .. })
                && matches!(func.ty(value), Ty::Tuple(_)));
        let carries_gradient = func.ty(value).can_be_active()
            || returned_tuple
            || matches!(inst, Inst::Tuple(_) | Inst::Forward { .. });
        let is_varied = match inst {
            Inst::If { then, els, .. } => {
                mark_varied(func, then, varied);
                mark_varied(func, els, varied);
                false
            }
            inst @ (Inst::For { .. } | Inst::While { .. }) => {
                let view = inst.as_loop().expect("a loop");
                let (inits, body, next) = (view.inits, view.body, view.next());
                loop {
                    for (k, init) in inits.iter().enumerate() {
                        let arg = body.insts[k + 1];
                        let carries = func.ty(arg).is_float();
                        varied[arg.index()] |=
                            carries && (varied[init.index()] || varied[next[k].index()]);
                    }
                    mark_varied(func, body, varied);
                    // Settled when no argument that can carry a gradient would change.
                    let settled = (0..inits.len()).all(|k| {
                        let arg = body.insts[k + 1];
                        !func.ty(arg).is_float() || !varied[next[k].index()] || varied[arg.index()]
                    });
                    if settled {
                        break;
                    }
                }
                false
            }
            // Set by the loop.
            Inst::Arg(_) => continue,
            Inst::Param(index) => func.params[*index as usize].role == Role::Active,
            Inst::Const(_) | Inst::Detach(_) | Inst::Unary(UnOp::Not, _) => false,
            // `floor`, `round`, …: zero derivative between their jumps.
            Inst::Prim(prim, _) if prim.is_piecewise_constant() => false,
            Inst::Binary(op, lhs, rhs) => {
                !op.is_comparison()
                    && !op.is_logic()
                    && (varied[lhs.index()] || varied[rhs.index()])
            }
            Inst::Extract(tuple, index) => match func.inst(*tuple) {
                Inst::If { then, els, .. } => [then, els]
                    .iter()
                    .any(|region| varied[region.yields[*index as usize].index()]),
                Inst::For { body, .. } | Inst::While { body, .. } => body
                    .insts
                    .get(*index as usize + 1)
                    .is_some_and(|arg| varied[arg.index()]),
                _ => varied[tuple.index()],
            },
            inst => inst
                .operands()
                .iter()
                .any(|operand| varied[operand.index()]),
        };
        varied[value.index()] |= carries_gradient && is_varied;
    }
}

/// Marks, from the end of `region` backwards, the operands of useful values.
fn mark_useful(
    func: &Function,
    region: &Region,
    extracts: &[Vec<(usize, Value)>],
    useful: &mut [bool],
) {
    for &value in region.insts.iter().rev() {
        if func
            .bases(func.inst(value).written())
            .iter()
            .any(|buf| useful[buf.index()])
        {
            useful[value.index()] = true;
        }
        // Control flow that writes into buffers is visited for its writes
        // even when no result of it is useful.
        let is_useful = useful[value.index()];
        if !is_useful && (func.regions(value).is_empty() || !func.has_effects(value)) {
            continue;
        }
        if is_useful {
            for operand in func.inst(value).operands() {
                useful[operand.index()] = true;
            }
        }
        match func.inst(value) {
            Inst::If { then, els, .. } => {
                // The extracts after the `if` were visited first: a yield is
                // useful if the result it becomes is.
                for &(index, extract) in &extracts[value.index()] {
                    if useful[extract.index()] {
                        for branch in [then, els] {
                            useful[branch.yields[index].index()] = true;
                        }
                    }
                }
                mark_useful(func, then, extracts, useful);
                mark_useful(func, els, extracts, useful);
            }
            inst @ (Inst::For { .. } | Inst::While { .. }) => {
                let view = inst.as_loop().expect("a loop");
                let (inits, body, next) = (view.inits, view.body, view.next());
                // Whether a `while` goes on decides its results.
                if let Some(go_on) = view.go_on() {
                    useful[go_on.index()] = true;
                }
                for &(index, extract) in &extracts[value.index()] {
                    if useful[extract.index()] && index < inits.len() {
                        useful[next[index].index()] = true;
                        useful[inits[index].index()] = true;
                    }
                }
                loop {
                    mark_useful(func, body, extracts, useful);
                    let mut settled = true;
                    for (k, init) in inits.iter().enumerate() {
                        if useful[body.insts[k + 1].index()] {
                            useful[init.index()] = true;
                            let next = next[k].index();
                            settled &= useful[next];
                            useful[next] = true;
                        }
                    }
                    if settled {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
}
