//! Compaction: a copy of a function with only the values a pass keeps,
//! renumbered in body order, for the passes that remove instructions (dead
//! code, running extrema, fusion).

use super::{Function, Inst, InstData, Region, Value};

/// A copy of `func` with only the live values, renumbered in body order.
pub(crate) fn compact(func: &Function, live: &[bool]) -> Function {
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
        items: func.items.clone(),
        user_calls: func.user_calls.clone(),
        float_param: func.float_param.clone(),
        lanes: func.lanes.clone(),
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

/// `func` without the values of `gone`, which nothing uses any more; the
/// others are renumbered in the order of their numbers, so a value numbered
/// below every removed one keeps its number (the split API finds where the
/// adjoint starts from the primal's count of values).
pub(crate) fn without(mut func: Function, gone: &std::collections::HashSet<Value>) -> Function {
    let mut map = Vec::with_capacity(func.insts.len());
    let mut next = 0u32;
    for index in 0..func.insts.len() {
        let value = Value(u32::try_from(index).expect("fewer than 2³² values"));
        if gone.contains(&value) {
            map.push(None);
        } else {
            map.push(Some(Value(next)));
            next += 1;
        }
    }
    let mapped = |value: Value| map[value.index()].expect("a removed value is not used");
    let keep = |index: &usize| map[*index].is_some();
    let keep_values = |values: &mut Vec<Value>| {
        values.retain(|value| map[value.index()].is_some());
        for value in values.iter_mut() {
            *value = mapped(*value);
        }
    };
    let mut insts = Vec::with_capacity(next as usize);
    let mut names = Vec::with_capacity(next as usize);
    let mut spans = Vec::with_capacity(next as usize);
    let mut adjoint_of = Vec::with_capacity(next as usize);
    let old = std::mem::take(&mut func.insts).into_iter().enumerate();
    for (index, mut data) in old.filter(|(index, _)| keep(index)) {
        data.inst.map_operands(mapped);
        for region in data.inst.regions_mut() {
            keep_values(&mut region.insts);
            for value in &mut region.yields {
                *value = mapped(*value);
            }
        }
        insts.push(data);
        names.push(func.names[index].take());
        spans.push(func.spans[index]);
        adjoint_of.push(func.adjoint_of[index].and_then(|primal| map[primal.index()]));
    }
    keep_values(&mut func.body.insts);
    for param in &mut func.params {
        param.value = mapped(param.value);
    }
    func.ret = mapped(func.ret);
    func.insts = insts;
    func.names = names;
    func.spans = spans;
    func.adjoint_of = adjoint_of;
    func
}
