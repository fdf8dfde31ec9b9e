//! Repeated element reads: `x[i]` read twice with no write to `x` in between
//! is read once, and the second read's users take the first.
//!
//! Users write `(s[2] * s[2] + s[3] * s[3]).sqrt()`, and the lowering reads
//! an element each time the source does. The primal pays a load; the adjoint
//! pays more: each read is a value it may save on a tape, or a split API's
//! pullback may capture (an RK4 stage's pullback held `s[2]` three times).
//! One read per element and write-free stretch makes `_vjp` independent of
//! how often the user wrote the element (issue 16's normal forms).
//!
//! Within one region, reads of the same buffer at the same index (the same
//! value, equal literals, or the same integer arithmetic on them) are merged until an instruction writes the
//! buffer (or a slice of it) or a nested region (a branch or a loop, which
//! may write anything) comes between. Reads in different regions are left
//! alone: a loop body's read happens once per iteration.
//!
//! ```text
//! %3 = load %0[%2]; %5 = load %0[%4]     (%2, %4 both `2`)
//! ⇒ %3 = load %0[%2]; … uses of %5 read %3
//! ```

use crate::ir::{BinOp, Const, Function, Inst, Region, Ty, Value, compact};

/// An index as the merging compares it: a value, a literal's text, or
/// integer arithmetic on such indices (`x[i + 1]` written twice computes
/// `i + 1` twice, as two values).
#[derive(PartialEq, Eq)]
enum Index {
    Value(Value),
    Lit(String),
    Binary(BinOp, Box<Index>, Box<Index>),
}

/// How deep [`index_key`] looks into integer arithmetic.
const INDEX_DEPTH: usize = 4;

/// `func` with repeated element reads merged.
pub(crate) fn merge_loads(mut func: Function) -> Function {
    let mut first: Vec<Option<Value>> = vec![None; func.insts.len()];
    merge_region(&func, &func.body, &mut first);
    if first.iter().all(Option::is_none) {
        return func;
    }
    let subst = |value: Value| first[value.index()].unwrap_or(value);
    for data in &mut func.insts {
        data.inst.map_operands(subst);
        for region in data.inst.regions_mut() {
            for value in &mut region.yields {
                *value = subst(*value);
            }
        }
    }
    func.body
        .yields
        .iter_mut()
        .for_each(|value| *value = subst(*value));
    func.ret = subst(func.ret);
    let live: Vec<bool> = first.iter().map(Option::is_none).collect();
    compact(&func, &live)
}

/// Records in `first` the read each repeated read of `region` (and of the
/// regions in it) is the same as.
fn merge_region(func: &Function, region: &Region, first: &mut [Option<Value>]) {
    let mut reads: Vec<(Value, Index, Value)> = Vec::new();
    for &value in &region.insts {
        let inst = func.inst(value);
        if let &Inst::Load(buf, index) = inst {
            let index = index_key(func, first, index, INDEX_DEPTH);
            match reads.iter().find(|(b, i, _)| *b == buf && *i == index) {
                Some(&(_, _, read)) => first[value.index()] = Some(read),
                None => reads.push((buf, index, value)),
            }
            continue;
        }
        let regions = func.regions(value);
        if !regions.is_empty() {
            for inner in regions {
                merge_region(func, inner, first);
            }
            reads.clear();
            continue;
        }
        let written = func.bases(inst.written());
        if !written.is_empty() {
            reads.retain(|&(buf, _, _)| !written.contains(&func.bases(vec![buf])[0]));
        }
    }
}

/// The key of `index` (a read merged into another counts as that one).
fn index_key(func: &Function, first: &[Option<Value>], index: Value, depth: usize) -> Index {
    let index = first[index.index()].unwrap_or(index);
    match func.inst(index) {
        Inst::Const(Const::Lit(lit)) => Index::Lit(lit.to_string()),
        &Inst::Binary(op, a, b) if depth > 0 && *func.ty(index) == Ty::Int => Index::Binary(
            op,
            Box::new(index_key(func, first, a, depth - 1)),
            Box::new(index_key(func, first, b, depth - 1)),
        ),
        _ => Index::Value(index),
    }
}
