//! Adjoint loops whose iterations are independent run forwards.
//!
//! The reverse of a loop runs its iterations backwards, which the tapes it
//! pops need. An adjoint loop that pops nothing, carries nothing from one
//! iteration to the next, and whose only effects are `+=` into buffers it
//! does not read, or reads and writes of elements at its own index only
//! (`t = d_t[i]; d_t[i] = 0.0; d_y[i] += t`), can run its iterations in any
//! order: only the rounding of the additions into the buffers changes. Run
//! forwards it walks memory upwards, which the compiler vectorizes where it
//! does not for a reversed loop: the first layer of W2's network, whose
//! adjoint `d_w[j * n + i] += d_acc * x[i]` ran 2.8× faster forwards.
//!
//! ```text
//! for i in (0..n).rev() { d_w[j * n + i] += d_acc * x[i]; }
//!   ⇒ for i in 0..n { d_w[j * n + i] += d_acc * x[i]; }
//! ```

use std::collections::HashMap;

use super::fuse::{carried, no_effect, path};
use crate::ir::{BinOp, Const, Function, Inst, Value};

/// `func` (a `_vjp` whose first `primal_len` values are the primal's) with
/// each adjoint loop that can run forwards doing so.
pub(crate) fn run_forward(mut func: Function, primal_len: usize) -> Function {
    let mut loops = Vec::new();
    func.walk(&mut |_, value| {
        if value.index() >= primal_len
            && matches!(func.inst(value), Inst::For { range, .. } if range.reversed)
            && independent(&func, value)
        {
            loops.push(value);
        }
    });
    for value in loops {
        if let Inst::For { range, .. } = &mut func.insts[value.index()].inst {
            range.reversed = false;
        }
    }
    func
}

/// Whether the iterations of the loop `value` can run in any order.
fn independent(func: &Function, value: Value) -> bool {
    let view = func.inst(value).as_loop().expect("a loop");
    let inside = func.nested(value);
    // A carried sum would do too, but it is a floating-point reduction, which
    // the compiler does not vectorize: such a loop stays as it is (flipping
    // one in GradBench's `lstm` only moved its code generation, 1.3× slower).
    if (0..view.inits.len()).any(|k| carried(func, &view, &inside, k) != Some(false)) {
        return false;
    }
    let index = view.body.insts[0];
    // Each buffer the loop touches (a field through its struct), with how:
    // whether it is read, written other than by `+=`, and whether every
    // access is at the loop's own index.
    #[derive(Default)]
    struct Use {
        loaded: bool,
        added: bool,
        stored: bool,
        only_at_index: bool,
    }
    let mut uses: HashMap<Value, Use> = HashMap::new();
    let mut touch = |buf: Value, at: Value, what: fn(&mut Use)| {
        let entry = uses.entry(path(func, buf).0).or_insert(Use {
            only_at_index: true,
            ..Use::default()
        });
        what(entry);
        entry.only_at_index &= at == index;
    };
    for &inner in &inside {
        match func.inst(inner) {
            inst if no_effect(inst) => {}
            Inst::Load(buf, at) => touch(*buf, *at, |u| u.loaded = true),
            Inst::Update(BinOp::Add | BinOp::Sub, buf, at, _) => {
                touch(*buf, *at, |u| u.added = true);
            }
            Inst::Store(buf, at, _) => touch(*buf, *at, |u| u.stored = true),
            // Pops need the reverse order; anything else is not looked into.
            _ => return false,
        }
    }
    // A buffer only added into takes the additions in any order; one read or
    // overwritten too must be touched only at the iteration's own index, so
    // that no iteration sees another's writes (`d_t[i]` read, then zeroed).
    uses.values().all(|u| {
        let written = u.added || u.stored;
        !written || (!u.loaded && !u.stored) || u.only_at_index
    })
}

/// `func` with each sum an adjoint loop at the top level carries starting
/// from zero, its initial value added after the loop.
///
/// ```text
/// let mut d_m = d_out;                   let mut d_m = 0.0;
/// for i in (0..n).rev() {                for i in (0..n).rev() {
///     …                           ⇒          …
///     d_m -= t;                              d_m -= t;
/// }                                      }
///                                        let d_m_1 = d_out + d_m;
/// ```
///
/// Only the rounding of the sum changes. Started from `d_out`, which the
/// compiler had spilled around the primal's calls to `exp`, the sum stayed in
/// that stack slot through GradBench's `lse` reverse loop: a load and a store
/// per iteration on the loop's dependency chain.
pub(crate) fn sums_from_zero(mut func: Function, primal_len: usize) -> Function {
    let top: Vec<Value> = func.body.insts.clone();
    let mut body = Vec::with_capacity(top.len());
    let mut after: HashMap<Value, Vec<Value>> = HashMap::new();
    for &value in &top {
        if let Some(totals) = after.get(&value) {
            body.push(value);
            body.extend(totals);
            continue;
        }
        let is_adjoint_for =
            value.index() >= primal_len && matches!(func.inst(value), Inst::For { .. });
        if !is_adjoint_for {
            body.push(value);
            continue;
        }
        let view = func.inst(value).as_loop().expect("a loop");
        let inside = func.nested(value);
        let sums: Vec<(usize, Value)> = (0..view.inits.len())
            .filter(|&k| carried(&func, &view, &inside, k) == Some(true))
            .map(|k| (k, view.inits[k]))
            .filter(|&(_, init)| !matches!(func.inst(init), Inst::Const(Const::Zero)))
            .collect();
        for (k, init) in sums {
            let ty = func.ty(init).clone();
            let zero = func.push_detached(Inst::Const(Const::Zero), ty.clone(), func.span(value));
            body.push(zero);
            if let Inst::For { inits, .. } = &mut func.insts[value.index()].inst {
                inits[k] = zero;
            }
            let extracts: Vec<Value> = top
                .iter()
                .copied()
                .filter(|&e| matches!(func.inst(e), Inst::Extract(of, index) if *of == value && *index as usize == k))
                .collect();
            for extract in extracts {
                let total = func.push_detached(
                    Inst::Binary(BinOp::Add, init, extract),
                    ty.clone(),
                    func.span(extract),
                );
                func.adjoint_of[total.index()] = func.adjoint_of[extract.index()];
                func.replace_uses(&HashMap::from([(extract, total)]));
                func.insts[total.index()].inst = Inst::Binary(BinOp::Add, init, extract);
                after.entry(extract).or_default().push(total);
            }
        }
        body.push(value);
    }
    func.body.insts = body;
    func
}
