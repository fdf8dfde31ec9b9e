//! Dead primal work: what neither the output nor an effect needs is removed
//! before the reverse pass, so `_vjp` does not compute it.
//!
//! A value is live if the output, a parameter, or a *root* uses it: an effect
//! (a write into a buffer, a call of another differentiated function), or
//! something that can panic (an element read, integer division), which the
//! primal would do and so must `_vjp`. A `while` is a root (it may not end),
//! and so are its trip count and a call's pullback, which the adjoint reads. A
//! value inside a branch or a loop keeps that `if` or loop live, and a live
//! `if` or loop keeps what its regions yield. Everything else is removed, and
//! the function is rebuilt with the values it keeps.
//!
//! ```text
//! let unused = x.exp() * 2.0;      (removed)
//! for i in 0..n { acc += … }       (removed, if `acc` is not used)
//! ```

use crate::ir::{BinOp, Function, Inst, InstData, Place, Region, Ty, Value};

/// `func` without its dead values.
pub(crate) fn dead_code(func: Function) -> Function {
    let live = live(&func);
    if live.iter().all(|&live| live) {
        return func;
    }
    compact(&func, &live)
}

fn is_root(func: &Function, value: Value) -> bool {
    let inst = func.inst(value);
    match inst {
        Inst::Param(_) | Inst::While { .. } | Inst::Load(..) | Inst::Call(..) => true,
        Inst::Forward { .. } | Inst::Apply { .. } => true,
        Inst::Binary(BinOp::Div | BinOp::Rem, ..) => *func.ty(value) == Ty::Int,
        _ => inst.is_effect(),
    }
}

fn live(func: &Function) -> Vec<bool> {
    let places = func.places();
    let extracts = func.extracts();
    let mut live = vec![false; func.insts.len()];
    let mut stack = vec![func.ret];
    func.walk(&mut |_, value| {
        if is_root(func, value) {
            stack.push(value);
        }
    });
    while let Some(value) = stack.pop() {
        if std::mem::replace(&mut live[value.index()], true) {
            continue;
        }
        stack.extend(func.inst(value).operands());
        if let Place::In(owner, _) = places[value.index()] {
            stack.push(owner);
        }
        // The reverse pass reads a call's pullback and a `while`'s trip
        // count, which the primal does not use.
        if let Inst::Forward { .. } | Inst::While { .. } = func.inst(value) {
            stack.extend(extracts[value.index()].iter().map(|&(_, extract)| extract));
        }
        for region in func.regions(value) {
            stack.extend(region.yields.iter().copied());
            // A loop's arguments come with it.
            if let Some(view) = func.inst(value).as_loop() {
                stack.extend(view.body.insts[..=view.inits.len()].iter().copied());
            }
        }
    }
    live
}

/// A copy of `func` with only the live values, renumbered in body order.
pub(super) fn compact(func: &Function, live: &[bool]) -> Function {
    let mut out = Function {
        name: func.name.clone(),
        insts: Vec::new(),
        body: Region::default(),
        params: Vec::new(),
        ret: func.ret,
        names: Vec::new(),
        spans: Vec::new(),
        adjoint_of: Vec::new(),
        runtime_paths: func.runtime_paths.clone(),
        user_calls: func.user_calls.clone(),
        float_param: func.float_param.clone(),
    };
    let mut map = vec![None; func.insts.len()];
    out.body = copy_region(func, &func.body, live, &mut map, &mut out);
    let mapped = |value: Value| map[value.index()].expect("a live value is copied");
    out.params = func
        .params
        .iter()
        .map(|param| {
            let mut param = param.clone();
            param.value = mapped(param.value);
            param
        })
        .collect();
    out.ret = mapped(func.ret);
    // An adjoint names the primal value it belongs to (`d_x`), if kept.
    for (old, new) in map.iter().enumerate() {
        if let Some(new) = new {
            out.adjoint_of[new.index()] =
                func.adjoint_of[old].and_then(|primal| map[primal.index()]);
        }
    }
    out
}

fn copy_region(
    func: &Function,
    region: &Region,
    live: &[bool],
    map: &mut Vec<Option<Value>>,
    out: &mut Function,
) -> Region {
    let mut insts = Vec::new();
    for &value in &region.insts {
        if !live[value.index()] {
            continue;
        }
        let mut inst = func.inst(value).clone();
        match &mut inst {
            Inst::If { then, els, .. } => {
                *then = copy_region(func, then, live, map, out);
                *els = copy_region(func, els, live, map, out);
            }
            Inst::For { body, .. } | Inst::While { body, .. } => {
                *body = copy_region(func, body, live, map, out);
            }
            _ => {}
        }
        inst.map_operands(|operand| {
            map[operand.index()].expect("operands are live and defined first")
        });
        let copy = Value(u32::try_from(out.insts.len()).expect("fewer than 2³² values"));
        out.insts.push(InstData {
            inst,
            ty: func.ty(value).clone(),
        });
        out.names.push(func.names[value.index()].clone());
        out.spans.push(func.spans[value.index()]);
        out.adjoint_of.push(None);
        map[value.index()] = Some(copy);
        insts.push(copy);
    }
    let yields = region
        .yields
        .iter()
        .map(|value| map[value.index()].expect("yields are live"))
        .collect();
    Region { insts, yields }
}
