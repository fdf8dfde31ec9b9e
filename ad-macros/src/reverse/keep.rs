//! `logsumexp`'s exponentials are kept for its pullback, in `_vjp`.
//!
//! The pullback of `s = ad_runtime::logsumexp(x)` is `d_x += d_s · exp(x − s)`:
//! as many exponentials again as the primal computed, which made the
//! primitive's `_vjp` twice its primal (W4). In `_vjp` the pullback runs once,
//! so when the call and its pullback both sit in the function's body (not in
//! a loop or a branch), the primal call keeps `exp(xᵢ − max x)` in a buffer
//! from the tape pool and the pullback reads them:
//!
//! ```text
//! let t1 = ::ad_runtime::logsumexp(x);         let mut exps = Vec::new();
//! …                                      ⇒     let t1 = __ad::logsumexp_keep(x, &mut exps);
//! __ad::logsumexp_dx(x, t1, d_t1, d_x);        …
//!                                              __ad::logsumexp_dx_kept(&mut exps, d_t1, d_x);
//! ```
//!
//! The split API's pullback may run any number of times, so `f_forward`
//! keeps recomputing.

use crate::ir::Callee;
use crate::ir::{Function, Inst, NewBuf, Ty, Value};

/// `func` with each top-level `logsumexp` whose pullback is also top-level
/// keeping its exponentials for that pullback.
pub(crate) fn keep_exponentials(mut func: Function) -> Function {
    let body = func.body.insts.clone();
    for (position, &call) in body.iter().enumerate() {
        let Inst::Call(Callee::Logsumexp, args) = func.inst(call) else {
            continue;
        };
        let x = args[0];
        // Its pullback: the one `logsumexp_dx(x, s, d_s, d_x)` of this output,
        // later in the body.
        let pullbacks: Vec<(Value, Value, Value)> = body[position + 1..]
            .iter()
            .filter_map(|&value| match func.inst(value) {
                Inst::Call(Callee::LogsumexpDx, args) if args[1] == call => {
                    Some((value, args[2], args[3]))
                }
                _ => None,
            })
            .collect();
        let [(pullback, d_s, d_x)] = pullbacks[..] else {
            continue;
        };
        let elem = func.ty(call).clone();
        let span = func.span(call);
        let kept = func.push_detached(
            Inst::NewBuf(NewBuf::Empty { capacity: None }),
            Ty::Buf(Box::new(elem)),
            span,
        );
        let at = func
            .body
            .insts
            .iter()
            .position(|&value| value == call)
            .expect("the call in the body");
        func.names[kept.index()] = Some("exps".to_owned());
        func.body.insts.insert(at, kept);
        func.insts[call.index()].inst = Inst::Call(Callee::LogsumexpKeep, vec![x, kept]);
        func.insts[pullback.index()].inst =
            Inst::Call(Callee::LogsumexpDxKept, vec![kept, d_s, d_x]);
    }
    func
}
