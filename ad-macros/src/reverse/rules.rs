//! The rule table: every primitive's pullback, and nothing else.
//!
//! [`pullback`] is the only place that knows how to differentiate an
//! instruction. Arithmetic (`+ - * /`, negation, `as` between floats) is
//! differentiated inline, because its adjoint is itself one arithmetic operation,
//! exactly what a hand-written gradient says. Every other primitive calls its
//! pullback in the runtime (`ad_runtime::rules`), whose signature is fixed: the
//! primitive's inputs in call order, its output, the seed; it returns the adjoint
//! of each float input (a tuple for several). Generated code calls it through
//! `ad_runtime::__private`, passing only what the rule reads ([`Prim::reads`]),
//! so that the adjoint keeps nothing else (in a loop, nothing else is taped).

use super::Reverse;
use crate::ir::{BinOp, Callee, Const, Inst, NewBuf, Prim, Read, Scalar, Ty, UnOp, Value};

/// Adds the contributions of `y`'s adjoint `dy` to the adjoints of `y`'s
/// operands. Only active operands receive anything, so no dead adjoint code is
/// built.
pub(crate) fn pullback(rx: &mut Reverse<'_>, y: Value, dy: Value) {
    let inst = rx.primal().inst(y).clone();
    match inst {
        // A slice's adjoint is the same slice of the buffer's shadow.
        Inst::Param(_)
        | Inst::Const(_)
        | Inst::Detach(_)
        | Inst::Effect { .. }
        | Inst::Slice { .. } => {}
        Inst::Unary(UnOp::Neg, x) => rx.sub(x, dy),
        Inst::Unary(UnOp::Not, _) => {}
        Inst::Binary(BinOp::Add, a, b) => {
            rx.add(a, dy);
            rx.add(b, dy);
        }
        Inst::Binary(BinOp::Sub, a, b) => {
            rx.add(a, dy);
            rx.sub(b, dy);
        }
        Inst::Binary(BinOp::Mul, a, b) => {
            // y = a * b: da = dy * b, db = dy * a. A seed `-g` is multiplied
            // as `g` and the sign goes into the sum (`d_a - g * b`): negation
            // is exact, so only the chain gets shorter.
            let (g, negative) = rx.sign_and_magnitude(dy);
            if a == b {
                // y = a²: da = dy * (a + a), one product instead of two
                // (`dy * a + dy * a`); they differ only when `dy * a` is
                // subnormal or overflows.
                if rx.is_active(a) {
                    let twice = rx.binary(BinOp::Add, a, a, y);
                    let da = rx.scale(g, twice, y);
                    rx.accumulate(a, da, negative);
                }
                return;
            }
            if rx.is_active(a) {
                let da = rx.scale(g, b, y);
                rx.accumulate(a, da, negative);
            }
            if rx.is_active(b) {
                let db = rx.scale(g, a, y);
                rx.accumulate(b, db, negative);
            }
        }
        Inst::Binary(BinOp::Div, a, b) => {
            // y = a / b: da = dy / b, db = -dy * a / b² = -da * y; a seed `-g`
            // as in the product.
            if rx.is_active(a) || rx.is_active(b) {
                let (g, negative) = rx.sign_and_magnitude(dy);
                let da = rx.binary(BinOp::Div, g, b, y);
                if rx.is_maybe_zero(g) {
                    rx.mark_maybe_zero(da);
                }
                rx.accumulate(a, da, negative);
                if rx.is_active(b) {
                    let minus_db = rx.scale(da, y, y);
                    rx.accumulate(b, minus_db, !negative);
                }
            }
        }
        Inst::Binary(BinOp::Rem, a, b) => runtime(rx, Prim::Rem, &[a, b], y, dy),
        // Comparisons, logic and bit operations produce booleans and integers:
        // never active.
        Inst::Binary(..) => {}
        Inst::Cast(x, _) => {
            if rx.is_active(x) {
                let from = rx.primal().ty(x).clone();
                // In a function generic over `T: Float`, `Float` values are `T`.
                let scalar = match from {
                    Ty::Float if rx.primal().float_param.is_some() => Some(Scalar::Float),
                    _ => from.scalar(),
                };
                let dx = match scalar {
                    Some(scalar) if &from != rx.primal().ty(y) => rx.cast(dy, scalar, y),
                    _ => dy,
                };
                rx.add(x, dx);
            }
        }
        Inst::Prim(prim, args) => runtime(rx, prim, &args, y, dy),
        Inst::Tuple(elems) => {
            for (index, elem) in elems.into_iter().enumerate() {
                if rx.is_active(elem) {
                    let d_elem = rx.extract(dy, index, y);
                    rx.add(elem, d_elem);
                }
            }
        }
        // The `if` reads the adjoints of its results itself.
        Inst::Extract(..) => {}
        // Control flow is reversed by the reverse pass itself; a loop's
        // arguments receive their adjoints there.
        Inst::If { .. } | Inst::For { .. } | Inst::While { .. } => {
            unreachable!("control flow is reversed by the reverse pass")
        }
        Inst::Arg(_) => {}
        Inst::TapeNew { .. } | Inst::TapeReserve { .. } | Inst::Push(..) | Inst::Pop(_) => {
            unreachable!("adjoint-only instruction %{} in the primal", y.0)
        }
        Inst::Forward { .. } => unreachable!("calls are reversed by the reverse pass"),
        Inst::Some(_) => unreachable!("made by the reverse pass"),
        Inst::Curvature(..) => unreachable!("made by `_hvp` from adjoint IR"),
        // A float field's adjoint goes into the same field of the shadow; a
        // buffer field's shadow is the shadow's field (see `reverse::vjp`).
        Inst::Field { base, path } => {
            if let Some(d_base) = rx.shadow(base)
                && rx.primal().ty(y).is_float()
            {
                rx.push(
                    Inst::FieldUpdate {
                        base: d_base,
                        path,
                        value: dy,
                    },
                    Ty::Unit,
                    y,
                );
            }
        }
        Inst::FieldUpdate { .. } => unreachable!("adjoint-only instruction %{}", y.0),
        Inst::Pullback(..)
        | Inst::Shadow { .. }
        | Inst::SeedCopy { .. }
        | Inst::PopShadow(_)
        | Inst::Apply { .. } => {
            unreachable!("adjoint-only instruction %{} in the primal", y.0)
        }
        // `dy` is the shadow of these buffers: their elements got their
        // adjoints where they were read.
        Inst::NewBuf(NewBuf::Empty { .. } | NewBuf::Output) => {}
        Inst::NewBuf(NewBuf::Vec { fill, .. } | NewBuf::Array { fill, .. }) => {
            // Every element starts as `fill`.
            if rx.is_active(fill) {
                let ty = elem_ty(rx, y);
                let d_fill = rx.push(Inst::Call(Callee::Sum, vec![dy]), ty, y);
                rx.add(fill, d_fill);
            }
        }
        Inst::CloneBuf { src, .. } => {
            if let Some(d_src) = rx.shadow(src) {
                rx.push(Inst::Call(Callee::AddAssign, vec![d_src, dy]), Ty::Unit, y);
            }
        }
        Inst::Load(buf, index) => {
            let d_buf = rx
                .shadow(buf)
                .expect("an active element of an active buffer");
            let index = rx.available(index);
            rx.defer_update(d_buf, index, dy, y);
        }
        Inst::Len(_) => {}
        Inst::Call(callee, args) => {
            let d = |rx: &mut Reverse<'_>, callee: Callee, operands: Vec<Value>| {
                rx.push(Inst::Call(callee, operands), Ty::Unit, y);
            };
            match (callee, args.as_slice()) {
                (Callee::Dot, &[a, b]) => {
                    if let Some(d_a) = rx.shadow(a) {
                        let b = rx.read_back(b, y);
                        d(rx, Callee::DotDx, vec![b, dy, d_a]);
                    }
                    if let Some(d_b) = rx.shadow(b) {
                        let a = rx.read_back(a, y);
                        d(rx, Callee::DotDx, vec![a, dy, d_b]);
                    }
                }
                (Callee::Sum, &[x]) => {
                    if let Some(d_x) = rx.shadow(x) {
                        d(rx, Callee::SumDx, vec![dy, d_x]);
                    }
                }
                (Callee::Norm2 | Callee::Logsumexp, &[x]) => {
                    if let Some(d_x) = rx.shadow(x) {
                        let rule = if callee == Callee::Norm2 {
                            Callee::Norm2Dx
                        } else {
                            Callee::LogsumexpDx
                        };
                        let x = rx.read_back(x, y);
                        d(rx, rule, vec![x, y, dy, d_x]);
                    }
                }
                (
                    Callee::MaxOver | Callee::MinOver | Callee::MaxOverRev | Callee::MinOverRev,
                    &[m0, x, start, end],
                ) => {
                    let (with_dx, alone) = if matches!(callee, Callee::MaxOver | Callee::MaxOverRev)
                    {
                        (Callee::MaxOverDx, Callee::MaxOverDm)
                    } else {
                        (Callee::MinOverDx, Callee::MinOverDm)
                    };
                    let d_x = rx.shadow(x);
                    if d_x.is_none() && !rx.is_active(m0) {
                        return;
                    }
                    let ty = rx.primal().ty(y).clone();
                    let mut operands = vec![m0, rx.read_back(x, y), start, end, y, dy];
                    // Without `x`'s shadow, the adjoint of `m0` alone.
                    let rule = match d_x {
                        Some(d_x) => {
                            operands.push(d_x);
                            with_dx
                        }
                        None => alone,
                    };
                    let d_m0 = rx.push(Inst::Call(rule, operands), ty, y);
                    // Zero when an element of `x` took the whole seed.
                    rx.mark_maybe_zero(d_m0);
                    if rx.is_active(m0) {
                        rx.add(m0, d_m0);
                    }
                }
                _ => unreachable!("{callee:?} returns no float"),
            }
        }
        Inst::Store(..) | Inst::Update(..) | Inst::PushElem(..) => {
            unreachable!("effects are reversed by `write_pullback`")
        }
        Inst::Keep(..) => unreachable!("the reverse pass makes `keep`s"),
    }
}

/// The element type of the buffer `buf`.
fn elem_ty(rx: &Reverse<'_>, buf: Value) -> Ty {
    rx.primal()
        .ty(buf)
        .elem()
        .cloned()
        .expect("a buffer has elements")
}

/// Reverses an instruction that writes into a buffer, if that buffer is
/// active: the shadow's elements that were overwritten pass their adjoint to
/// what was written, and restart from zero.
///
/// ```text
/// v[i] = e;          ⇒   d_e = d_v[i]; d_v[i] = 0.0;
/// v[i] += e;         ⇒   d_e = d_v[i];
/// v.push(e);         ⇒   d_e = __ad::pop_shadow(&mut d_v);
/// matmul(&a, &b, &mut c, …) ⇒ __ad::matmul_da(&b, &d_c, &mut d_a, …); …; __ad::zero(&mut d_c);
/// ```
pub(crate) fn write_pullback(rx: &mut Reverse<'_>, y: Value) {
    let inst = rx.primal().inst(y).clone();
    let Some(&target) = inst.written().first() else {
        unreachable!("write_pullback on %{}, which writes nothing", y.0)
    };
    let Some(d_target) = rx.shadow(target) else {
        return;
    };
    let ty = elem_ty(rx, target);
    match inst {
        Inst::Store(_, index, value) => {
            let index = rx.available(index);
            if rx.is_active(value) {
                let d_value = rx.push(Inst::Load(d_target, index), ty.clone(), y);
                rx.add(value, d_value);
            }
            let zero = rx.push(Inst::Const(Const::Zero), ty, y);
            rx.push(Inst::Store(d_target, index, zero), Ty::Unit, y);
        }
        Inst::Update(op, _, index, value) => {
            if rx.is_active(value) {
                let d_value = rx.push(Inst::Load(d_target, index), ty, y);
                match op {
                    BinOp::Sub => rx.sub(value, d_value),
                    _ => rx.add(value, d_value),
                }
            }
        }
        Inst::PushElem(_, value) => {
            let d_value = rx.push(Inst::PopShadow(d_target), ty, y);
            rx.add(value, d_value);
        }
        Inst::Call(callee, args) => {
            let d = |rx: &mut Reverse<'_>, callee: Callee, operands: Vec<Value>| {
                rx.push(Inst::Call(callee, operands), Ty::Unit, y);
            };
            match (callee, args.as_slice()) {
                (Callee::Axpy, &[a, x, _]) => {
                    if rx.is_active(a) {
                        let x = rx.read_back(x, y);
                        let d_a = rx.push(Inst::Call(Callee::AxpyDa, vec![x, d_target]), ty, y);
                        rx.add(a, d_a);
                    }
                    if let Some(d_x) = rx.shadow(x) {
                        d(rx, Callee::AxpyDx, vec![a, d_target, d_x]);
                    }
                }
                (Callee::Matvec, &[a, x, _, m, n]) => {
                    if let Some(d_a) = rx.shadow(a) {
                        let x = rx.read_back(x, y);
                        d(rx, Callee::MatvecDa, vec![x, d_target, d_a, m, n]);
                    }
                    if let Some(d_x) = rx.shadow(x) {
                        let a = rx.read_back(a, y);
                        d(rx, Callee::MatvecDx, vec![a, d_target, d_x, m, n]);
                    }
                    d(rx, Callee::Zero, vec![d_target]);
                }
                (Callee::Matmul, &[a, b, _, m, k, n]) => {
                    if let Some(d_a) = rx.shadow(a) {
                        let b = rx.read_back(b, y);
                        d(rx, Callee::MatmulDa, vec![b, d_target, d_a, m, k, n]);
                    }
                    if let Some(d_b) = rx.shadow(b) {
                        let a = rx.read_back(a, y);
                        d(rx, Callee::MatmulDb, vec![a, d_target, d_b, m, k, n]);
                    }
                    d(rx, Callee::Zero, vec![d_target]);
                }
                (Callee::Softmax, &[x, out]) => {
                    if let Some(d_x) = rx.shadow(x) {
                        let out = rx.read_back(out, y);
                        d(rx, Callee::SoftmaxDx, vec![out, d_target, d_x]);
                    }
                    d(rx, Callee::Zero, vec![d_target]);
                }
                _ => unreachable!("{callee:?} writes no buffer"),
            }
        }
        _ => unreachable!("%{} writes no buffer", y.0),
    }
}

/// `dx… = ad_runtime::rules::prim(args…, y, dy)`, then each active float input
/// receives its component.
fn runtime(rx: &mut Reverse<'_>, prim: Prim, args: &[Value], y: Value, dy: Value) {
    let float_args: Vec<usize> = prim.float_args().collect();
    if !float_args.iter().any(|&index| rx.is_active(args[index])) {
        return;
    }
    let ty = if float_args.len() == 1 {
        rx.primal().ty(args[float_args[0]]).clone()
    } else {
        Ty::Tuple(
            float_args
                .iter()
                .map(|&index| rx.primal().ty(args[index]).clone())
                .collect(),
        )
    };
    let mut operands: Vec<Value> = prim
        .reads()
        .iter()
        .map(|read| match *read {
            Read::Arg(index) => args[index],
            Read::Output => y,
        })
        .collect();
    operands.push(dy);
    let adjoints = rx.push(Inst::Pullback(prim, operands), ty, y);
    // Selections and conventions give some inputs exactly 0.
    if matches!(
        prim,
        Prim::Min | Prim::Max | Prim::Abs | Prim::Signum | Prim::Clamp | Prim::Copysign
    ) {
        rx.mark_maybe_zero(adjoints);
    }
    if float_args.len() == 1 {
        rx.add(args[float_args[0]], adjoints);
        return;
    }
    for (position, &index) in float_args.iter().enumerate() {
        if rx.is_active(args[index]) {
            let adjoint = rx.extract(adjoints, position, y);
            rx.add(args[index], adjoint);
        }
    }
}
