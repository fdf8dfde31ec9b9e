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

#[cfg(test)]
mod tests {
    use crate::expand;
    use crate::ir::{Const, Function, Inst, Value};

    /// The unfused `_vjp` IR of `src`.
    fn vjp(src: &str) -> Function {
        expand::stages_of(src).unfused
    }

    /// Every `for` of `func` with whether it runs backwards, in body order.
    fn directions(func: &Function) -> Vec<bool> {
        let mut out = Vec::new();
        func.walk(&mut |_, value| {
            if let Inst::For { range, .. } = func.inst(value) {
                out.push(range.reversed);
            }
        });
        out
    }

    #[test]
    fn an_adjoint_loop_that_only_adds_into_shadows_runs_forwards() {
        // Primal outer, primal inner, adjoint outer (pops `tanh`), adjoint inner.
        let func = vjp(
            "fn f(w: &[f64], x: &[f64], n: usize) -> f64 { let m = x.len(); let mut s = 0.0; for j in 0..n { let mut acc = 0.0; for i in 0..m { acc += w[j * m + i] * x[i]; } s += acc.tanh(); } s.ln() }",
        );
        assert_eq!(directions(&func), [false, false, true, false]);
    }

    #[test]
    fn an_adjoint_loop_that_carries_a_sum_or_pops_keeps_its_order() {
        // `d_c` is a sum.
        let func = vjp(
            "fn f(x: &[f64], c: f64) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += c * x[i]; } s.ln() }",
        );
        assert_eq!(directions(&func), [false, true]);
        // The product pops the running value.
        let func = vjp(
            "fn f(x: &[f64]) -> f64 { let mut p = 1.0; for i in 0..x.len() { p = p * x[i]; } p }",
        );
        assert_eq!(directions(&func), [false, true]);
    }

    #[test]
    fn an_adjoint_loop_touching_its_own_element_only_runs_forwards() {
        // The adjoint reads `d_y[i]`, zeroes it and adds into `d_x[i]`.
        let func = vjp(
            "fn f(x: &[f64]) -> Vec<f64> { let mut y = vec![0.0; x.len()]; for i in 0..x.len() { y[i] = x[i].sin(); } y }",
        );
        assert_eq!(directions(&func), [false, false]);
        // Adding into the shadow one element over (no tape: a sum) makes the
        // order matter.
        let func = vjp(
            "fn f(x: &[f64]) -> Vec<f64> { let mut y = x.to_vec(); for i in 1..x.len() { y[i] = y[i - 1] + x[i]; } y }",
        );
        assert_eq!(directions(&func), [false, true]);
    }

    #[test]
    fn a_carried_sum_starts_from_zero() {
        // The adjoint loop carries `d_m`; it used to start from `d_out`.
        let func = vjp(
            "fn f(x: &[f64], m: f64) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += (x[i] - m).exp(); } m + s.ln() }",
        );
        let mut inits: Vec<Value> = Vec::new();
        func.walk(&mut |_, value| {
            if let Inst::For {
                range,
                inits: carried,
                ..
            } = func.inst(value)
                && range.reversed
            {
                inits.extend(carried);
            }
        });
        // It also carries `d_s`, unchanged: that one keeps its initial value.
        let zeros = inits
            .iter()
            .filter(|&&init| matches!(func.inst(init), Inst::Const(Const::Zero)))
            .count();
        assert_eq!((inits.len(), zeros), (2, 1), "`d_s` and `d_m` from zero");
    }
}
