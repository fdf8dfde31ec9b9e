//! The tangent rules: for each primal instruction, its copy and the
//! instructions of its tangent.
//!
//! Arithmetic is differentiated inline (`t_a * b + a * t_b`). A float
//! primitive reuses its runtime pullback: a pullback is linear in its seed,
//! so seeding it with an operand's tangent gives that operand's contribution
//! to the output's tangent (`__ad::sin(x, t_x)` is `cos(x) · t_x`); a
//! primitive of several active operands sums one such call per operand.
//! Coarse primitives (`dot`, `matvec`, …) are differentiated by the same
//! runtime functions applied to the tangents, or by a tangent rule of the
//! runtime's (`norm2_jvp`, `matvec_acc`, …).

use super::{Derivative, Forward, Parts};
use crate::diag::msg;
use crate::ir::{BinOp, Callee, Inst, Mode, NewBuf, Prim, Read, Region, Scalar, Ty, UnOp, Value};

/// Copies `value`'s instruction and builds its tangent.
pub(super) fn instruction(fx: &mut Forward<'_>, value: Value) {
    let primal = fx.primal;
    let inst = primal.inst(value).clone();
    match inst {
        Inst::If { cond, then, els } => return branch(fx, value, cond, &then, &els),
        Inst::For { .. } | Inst::While { .. } => return looped(fx, value),
        // A call of constants (see `UserCall::plain`): no tangent.
        Inst::Forward { callee, .. } if primal.user_calls[callee as usize].plain => {
            fx.push_copy(value);
            return;
        }
        Inst::Forward { callee, args, .. }
            if matches!(fx.mode, Derivative::Hvp | Derivative::Nested) =>
        {
            return call_over_reverse(fx, value, callee, &args);
        }
        Inst::Apply { pullback, args } => return apply_over_reverse(fx, value, pullback, &args),
        Inst::Push(tape, x) if fx.records.contains_key(&fx.copy(x)) => {
            // A call's record, on the tape its pullback had.
            let (tape, x) = (fx.copy(tape), fx.copy(x));
            let record = fx.records[&x].clone();
            fx.records.insert(tape, record);
            fx.builder
                .push(Inst::Push(tape, x), Ty::Unit, primal.span(value));
            return;
        }
        Inst::Forward { callee, args, .. } => return call(fx, value, callee, &args),
        Inst::Extract(tuple, index) => {
            let position = match primal.inst(tuple) {
                // A `while`'s trip count comes after the carried tangents.
                Inst::While { inits, .. } if index as usize == inits.len() => {
                    let new = fx.copy(tuple);
                    let Ty::Tuple(elems) = fx.builder.func().ty(new) else {
                        unreachable!("a loop's tuple")
                    };
                    u32::try_from(elems.len() - 1).expect("small")
                }
                _ => index,
            };
            // A call's pullback is its record (see `call_over_reverse`).
            let record = match primal.ty(value) {
                Ty::Pullback => fx.records.get(&fx.copy(tuple)).cloned(),
                _ => None,
            };
            let ty = record
                .as_ref()
                .map_or_else(|| primal.ty(value).clone(), |record| record.ty.clone());
            let new = fx.builder.push(
                Inst::Extract(fx.copy(tuple), position),
                ty,
                primal.span(value),
            );
            if let Some(record) = record {
                fx.records.insert(new, record);
            }
            fx.set_copy(value, new);
            if fx.is_active(value)
                && let Some(tangent) = fx.component(tuple, index as usize)
            {
                fx.set_tangent(value, tangent);
            }
            return;
        }
        _ => {}
    }
    // `_hvp`'s seed is the literal 1: `1.0 * x` is `x`, to the bit.
    if let Inst::Binary(BinOp::Mul, a, b) = inst
        && fx.mode == Derivative::Hvp
    {
        let (a, b) = (fx.copy(a), fx.copy(b));
        let one = |v: Value| fx.is_one(v);
        let other = if one(a) {
            Some(b)
        } else if one(b) {
            Some(a)
        } else {
            None
        };
        if let Some(other) = other {
            fx.set_copy(value, other);
            let (t_a, t_b) = match primal.inst(value) {
                Inst::Binary(_, a, b) => (fx.tangent(*a), fx.tangent(*b)),
                _ => unreachable!("a product"),
            };
            if let Some(tangent) = t_a.or(t_b) {
                fx.set_tangent(value, tangent);
            }
            return;
        }
    }
    let new = fx.push_copy(value);
    // A write mirrors into the tangent buffer even when what it writes is
    // constant (it overwrites a tangent), a tape push into the tangent tape;
    // a slice or a field of a buffer with a tangent has one, which its reads
    // need.
    let views = matches!(inst, Inst::Slice { .. } | Inst::Field { .. });
    if !fx.is_active(value) && !writes(&inst) && !inst.is_effect() && !views {
        return;
    }
    let span = primal.span(value);
    // The type of the tangent built.
    let ty = fx.tangent_ty(primal.ty(value));
    let tangent = match inst {
        Inst::Unary(UnOp::Neg, x) => fx
            .tangent(x)
            .map(|t_x| fx.builder.push(Inst::Unary(UnOp::Neg, t_x), ty, span)),
        Inst::Binary(op, a, b) => binary(fx, op, a, b, new, &ty, span),
        Inst::Cast(x, scalar) => match fx.tangent(x) {
            Some(t_x) if primal.ty(x).is_float() && primal.ty(value).is_float() => {
                let scalar = match scalar {
                    Scalar::F32 | Scalar::F64 => scalar,
                    _ => Scalar::Float,
                };
                Some(fx.builder.push(Inst::Cast(t_x, scalar), ty, span))
            }
            _ => None,
        },
        Inst::Prim(prim, args) => primitive(fx, prim, &args, new, &ty, span),
        Inst::Tuple(elems) => {
            let parts = elems.iter().map(|&elem| fx.tangent(elem)).collect();
            fx.parts.insert(value, Parts::Values(parts));
            None
        }
        Inst::Load(buf, index) => fx
            .tangent(buf)
            .map(|t_buf| fx.builder.push(Inst::Load(t_buf, fx.copy(index)), ty, span)),
        Inst::Store(buf, index, x) => {
            if let Some(t_buf) = fx.tangent(buf) {
                let t_x = fx.tangent_whole(x);
                let store = Inst::Store(t_buf, fx.copy(index), t_x);
                fx.builder.push(store, Ty::Unit, span);
            }
            None
        }
        Inst::Update(op, buf, index, x) => {
            if let (Some(t_buf), Some(t_x)) = (fx.tangent(buf), fx.tangent(x)) {
                let update = Inst::Update(op, t_buf, fx.copy(index), t_x);
                fx.builder.push(update, Ty::Unit, span);
            }
            None
        }
        Inst::PushElem(buf, x) => {
            if let Some(t_buf) = fx.tangent(buf) {
                let t_x = fx.tangent_whole(x);
                fx.builder.push(Inst::PushElem(t_buf, t_x), Ty::Unit, span);
            }
            None
        }
        Inst::NewBuf(how) => {
            let how = match how {
                NewBuf::Vec { fill, len } => fx.tangent(fill).map(|t_fill| NewBuf::Vec {
                    fill: t_fill,
                    len: fx.copy(len),
                }),
                NewBuf::Array { fill, len } => fx
                    .tangent(fill)
                    .map(|t_fill| NewBuf::Array { fill: t_fill, len }),
                NewBuf::Empty { capacity } => Some(NewBuf::Empty {
                    capacity: capacity.map(|capacity| fx.copy(capacity)),
                }),
                NewBuf::Output => Some(NewBuf::Output),
            };
            // A buffer filled with a constant: zeros of its shape.
            let inst = how.map_or(Inst::Shadow { of: new }, Inst::NewBuf);
            Some(fx.builder.push(inst, ty, span))
        }
        Inst::CloneBuf { src, clone, saved } => {
            // The tangent has the type of the copy: `to_vec` makes a `Vec`
            // (the tangent of a `&Vec` parameter is a slice), and `clone`,
            // of a local or of an array taken by value, the source's type.
            let inst = fx
                .tangent(src)
                .map_or(Inst::Shadow { of: new }, |t_src| Inst::CloneBuf {
                    src: t_src,
                    clone,
                    saved,
                });
            Some(fx.builder.push(inst, ty, span))
        }
        Inst::Slice { buf, start, len } => fx.tangent(buf).map(|t_buf| {
            let slice = Inst::Slice {
                buf: t_buf,
                start: fx.copy(start),
                len: fx.copy(len),
            };
            fx.builder.push(slice, ty, span)
        }),
        Inst::Field { base, path } => fx.tangent(base).map(|t_base| {
            fx.builder
                .push(Inst::Field { base: t_base, path }, ty, span)
        }),
        Inst::Call(callee, args) => runtime(fx, callee, &args, new, &ty, span),
        // Constant data, or no value: no tangent.
        Inst::Param(_)
        | Inst::Const(_)
        | Inst::Unary(UnOp::Not, _)
        | Inst::Detach(_)
        | Inst::Len(_)
        | Inst::Arg(_)
        | Inst::Effect { .. } => None,
        Inst::If { .. }
        | Inst::For { .. }
        | Inst::While { .. }
        | Inst::Forward { .. }
        | Inst::Extract(..) => {
            unreachable!("handled above")
        }
        // The adjoint's own instructions, met by `_hvp` only.
        Inst::Pullback(prim, operands) => pullback(fx, prim, &operands, &ty, span),
        // A tape of floats has a tape of their tangents beside it.
        Inst::TapeNew { .. } => fx.is_active(value).then(|| fx.push_another(value)),
        Inst::TapeReserve { tape, range } => {
            if let Some(t_tape) = fx.tangent(tape) {
                let reserve = Inst::TapeReserve {
                    tape: t_tape,
                    range: fx.copy_range(&range),
                };
                fx.builder.push(reserve, Ty::Unit, span);
            }
            None
        }
        Inst::Push(tape, x) => {
            if let Some(t_tape) = fx.tangent(tape) {
                let t_x = fx.tangent_whole(x);
                fx.builder.push(Inst::Push(t_tape, t_x), Ty::Unit, span);
            }
            None
        }
        Inst::Pop(tape) => fx
            .tangent(tape)
            .map(|t_tape| fx.builder.push(Inst::Pop(t_tape), ty, span)),
        // The seed of a returned buffer is constant: its shadow's tangent
        // starts at zero like every other.
        Inst::Shadow { of } => {
            let shadow = Inst::Shadow { of: fx.copy(of) };
            Some(fx.builder.push(shadow, ty, span))
        }
        Inst::SeedCopy { .. } => {
            let shadow = Inst::Shadow { of: new };
            Some(fx.builder.push(shadow, ty, span))
        }
        // Pops the adjoint of the last element pushed: the tangent shadow's
        // last element is its tangent.
        Inst::PopShadow(shadow) => fx
            .tangent(shadow)
            .map(|t_shadow| fx.builder.push(Inst::PopShadow(t_shadow), ty, span)),
        Inst::Keep(..) => unreachable!("only `_vjp` keeps pullbacks, not the IR under `_hvp`"),
        Inst::FieldUpdate { .. } | Inst::Some(_) | Inst::Apply { .. } | Inst::Curvature(..) => {
            let what = match inst {
                Inst::FieldUpdate { .. } => "parameter structs",
                Inst::Apply { .. } => unreachable!("handled above"),
                _ => "calls inside branches",
            };
            fx.unsupported(span, what);
            None
        }
    };
    if let Some(tangent) = tangent {
        fx.set_tangent(value, tangent);
    }
}

/// Whether the instruction writes into a buffer: its tangent mirrors the
/// write even when the value written is constant (it overwrites a tangent).
fn writes(inst: &Inst) -> bool {
    !inst.written().is_empty()
}

fn binary(
    fx: &mut Forward<'_>,
    op: BinOp,
    a: Value,
    b: Value,
    y: Value,
    ty: &Ty,
    span: proc_macro2::Span,
) -> Option<Value> {
    let (t_a, t_b) = (fx.tangent(a), fx.tangent(b));
    let push = |fx: &mut Forward<'_>, inst: Inst| fx.builder.push(inst, ty.clone(), span);
    match op {
        BinOp::Add => match (t_a, t_b) {
            (Some(t_a), Some(t_b)) => Some(push(fx, Inst::Binary(BinOp::Add, t_a, t_b))),
            (t_a, t_b) => t_a.or(t_b),
        },
        BinOp::Sub => match (t_a, t_b) {
            (Some(t_a), Some(t_b)) => Some(push(fx, Inst::Binary(BinOp::Sub, t_a, t_b))),
            (Some(t_a), None) => Some(t_a),
            (None, Some(t_b)) => Some(push(fx, Inst::Unary(UnOp::Neg, t_b))),
            (None, None) => None,
        },
        // y = a²: t_y = (a + a) · t_a, one product instead of two (the same
        // bits: doubling is exact).
        BinOp::Mul if a == b => {
            let primal_ty = fx.primal.ty(a).clone();
            let a = fx.copy(a);
            t_a.map(|t_a| {
                let twice = fx
                    .builder
                    .push(Inst::Binary(BinOp::Add, a, a), primal_ty, span);
                fx.scaled(twice, t_a, ty, span)
            })
        }
        BinOp::Mul => {
            let (a, b) = (fx.copy(a), fx.copy(b));
            let left = t_a.map(|t_a| push(fx, Inst::Binary(BinOp::Mul, t_a, b)));
            let right = t_b.map(|t_b| fx.scaled(a, t_b, ty, span));
            match (left, right) {
                (Some(left), Some(right)) => Some(push(fx, Inst::Binary(BinOp::Add, left, right))),
                (left, right) => left.or(right),
            }
        }
        BinOp::Div => {
            // y = a / b: t_y = (t_a - y * t_b) / b.
            let b = fx.copy(b);
            let minus = t_b.map(|t_b| fx.scaled(y, t_b, ty, span));
            let numerator = match (t_a, minus) {
                (Some(t_a), Some(minus)) => push(fx, Inst::Binary(BinOp::Sub, t_a, minus)),
                (Some(t_a), None) => t_a,
                (None, Some(minus)) => push(fx, Inst::Unary(UnOp::Neg, minus)),
                (None, None) => return None,
            };
            Some(push(fx, Inst::Binary(BinOp::Div, numerator, b)))
        }
        BinOp::Rem => primitive(fx, Prim::Rem, &[a, b], y, ty, span),
        // Comparisons, logic and bit operations: booleans and integers.
        _ => None,
    }
}

/// A float primitive: the sum over its active operands of the pullback
/// seeded with the operand's tangent.
fn primitive(
    fx: &mut Forward<'_>,
    prim: Prim,
    args: &[Value],
    y: Value,
    ty: &Ty,
    span: proc_macro2::Span,
) -> Option<Value> {
    if prim.is_piecewise_constant() {
        return None;
    }
    let float_args: Vec<usize> = prim.float_args().collect();
    let pullback_ty = if float_args.len() == 1 {
        fx.tangent_ty(fx.primal.ty(args[float_args[0]]))
    } else {
        Ty::Tuple(
            float_args
                .iter()
                .map(|&index| fx.tangent_ty(fx.primal.ty(args[index])))
                .collect(),
        )
    };
    let mut total: Option<Value> = None;
    for (position, &index) in float_args.iter().enumerate() {
        let Some(t_arg) = fx.tangent(args[index]) else {
            continue;
        };
        let mut operands: Vec<Value> = prim
            .reads()
            .iter()
            .map(|read| match *read {
                Read::Arg(index) => fx.copy(args[index]),
                Read::Output => y,
            })
            .collect();
        operands.push(t_arg);
        let pullback = fx
            .builder
            .push(Inst::Pullback(prim, operands), pullback_ty.clone(), span);
        let part = if float_args.len() == 1 {
            pullback
        } else {
            let position = u32::try_from(position).expect("small");
            fx.builder
                .push(Inst::Extract(pullback, position), ty.clone(), span)
        };
        total = Some(match total {
            Some(total) => fx
                .builder
                .push(Inst::Binary(BinOp::Add, total, part), ty.clone(), span),
            None => part,
        });
    }
    total
}

/// A coarse primitive of the runtime.
fn runtime(
    fx: &mut Forward<'_>,
    callee: Callee,
    args: &[Value],
    y: Value,
    ty: &Ty,
    span: proc_macro2::Span,
) -> Option<Value> {
    let tangents: Vec<Option<Value>> = args.iter().map(|&arg| fx.tangent(arg)).collect();
    let copies: Vec<Value> = args.iter().map(|&arg| fx.copy(arg)).collect();
    let call = |fx: &mut Forward<'_>, callee: Callee, operands: Vec<Value>| {
        let ty = if callee.returns_float() {
            ty.clone()
        } else {
            Ty::Unit
        };
        fx.builder.push(Inst::Call(callee, operands), ty, span)
    };
    let add = |fx: &mut Forward<'_>, parts: Vec<Value>| {
        parts.into_iter().reduce(|total, part| {
            fx.builder
                .push(Inst::Binary(BinOp::Add, total, part), ty.clone(), span)
        })
    };
    if fx.lanes()
        && !matches!(
            callee,
            Callee::Dot | Callee::Sum | Callee::Norm2 | Callee::Logsumexp
        )
        && tangents.iter().any(Option::is_some)
    {
        let what = format!("`ad_runtime::{}`", callee.name());
        fx.cx.error_at(span, msg::lanes_unsupported(&what));
        return None;
    }
    match callee {
        Callee::Dot => {
            let mut parts = Vec::new();
            if let Some(t_a) = tangents[0] {
                parts.push(call(fx, Callee::Dot, vec![t_a, copies[1]]));
            }
            if let Some(t_b) = tangents[1] {
                // In vector mode the lanes come first (`__ad::lanes::dot`).
                let operands = match fx.lanes() {
                    true => vec![t_b, copies[0]],
                    false => vec![copies[0], t_b],
                };
                parts.push(call(fx, Callee::Dot, operands));
            }
            add(fx, parts)
        }
        Callee::Sum => tangents[0].map(|t_x| call(fx, Callee::Sum, vec![t_x])),
        Callee::Norm2 => tangents[0].map(|t_x| call(fx, Callee::Norm2Jvp, vec![copies[0], y, t_x])),
        Callee::Logsumexp => {
            tangents[0].map(|t_x| call(fx, Callee::LogsumexpJvp, vec![copies[0], y, t_x]))
        }
        // y += a · x: t_y += t_a · x + a · t_x.
        Callee::Axpy => {
            if let Some(t_y) = tangents[2] {
                if let Some(t_a) = tangents[0] {
                    call(fx, Callee::Axpy, vec![t_a, copies[1], t_y]);
                }
                if let Some(t_x) = tangents[1] {
                    call(fx, Callee::Axpy, vec![copies[0], t_x, t_y]);
                }
            }
            None
        }
        // y = A · x: t_y = t_A · x + A · t_x (and C = A · B likewise).
        Callee::Matvec | Callee::Matmul => {
            let acc = if callee == Callee::Matvec {
                Callee::MatvecAcc
            } else {
                Callee::MatmulAcc
            };
            if let Some(t_y) = tangents[2] {
                call(fx, Callee::Zero, vec![t_y]);
                let dims = &copies[3..];
                if let Some(t_a) = tangents[0] {
                    let operands = [t_a, copies[1], t_y]
                        .into_iter()
                        .chain(dims.iter().copied());
                    call(fx, acc, operands.collect());
                }
                if let Some(t_x) = tangents[1] {
                    let operands = [copies[0], t_x, t_y]
                        .into_iter()
                        .chain(dims.iter().copied());
                    call(fx, acc, operands.collect());
                }
            }
            None
        }
        // y = softmax(x): t_y = y ⊙ (t_x − <t_x, y>), which is the pullback
        // seeded with t_x, added into zeros.
        Callee::Softmax => {
            if let Some(t_y) = tangents[1] {
                call(fx, Callee::Zero, vec![t_y]);
                if let Some(t_x) = tangents[0] {
                    call(fx, Callee::SoftmaxDx, vec![copies[1], t_x, t_y]);
                }
            }
            None
        }
        // The pullbacks of the coarse primitives, met by `_hvp` only. Those
        // bilinear in their two read operands (the primal operand and the
        // seed) add, into the tangent of the shadow they write, the same
        // call once with each operand's tangent.
        Callee::DotDx
        | Callee::SumDx
        | Callee::AxpyDa
        | Callee::AxpyDx
        | Callee::MatvecDa
        | Callee::MatvecDx
        | Callee::MatmulDa
        | Callee::MatmulDb => {
            // The operands the result is linear in: all but the shadow
            // written and the dimensions.
            let linear: Vec<usize> = callee
                .modes()
                .iter()
                .enumerate()
                .filter(|&(index, &mode)| {
                    mode != Mode::Mut
                        && !(mode == Mode::Val && fx.primal.ty(args[index]) == &Ty::Int)
                })
                .map(|(index, _)| index)
                .collect();
            let written = callee.modes().iter().position(|&mode| mode == Mode::Mut);
            let target = written.map(|index| tangents[index]);
            let mut parts = Vec::new();
            for &index in &linear {
                let Some(t_operand) = tangents[index] else {
                    continue;
                };
                let mut operands = copies.clone();
                operands[index] = t_operand;
                match (written, target) {
                    (Some(at), Some(Some(t_target))) => {
                        operands[at] = t_target;
                        call(fx, callee, operands);
                    }
                    (Some(_), _) => {}
                    (None, _) => parts.push(call(fx, callee, operands)),
                }
            }
            add(fx, parts)
        }
        // The adjoint's helpers, met by `_hvp` only.
        Callee::Zero => {
            if let Some(t_d) = tangents[0] {
                call(fx, Callee::Zero, vec![t_d]);
            }
            None
        }
        Callee::AddAssign => {
            if let (Some(t_dst), Some(t_src)) = (tangents[0], tangents[1]) {
                call(fx, Callee::AddAssign, vec![t_dst, t_src]);
            }
            None
        }
        // `d · factor`, 0 where `d` is: its tangent is guarded alike.
        Callee::Scale => {
            let mut parts = Vec::new();
            if let Some(t_d) = tangents[0] {
                parts.push(call(fx, Callee::Scale, vec![t_d, copies[1]]));
            }
            if let Some(t_factor) = tangents[1] {
                parts.push(call(fx, Callee::Scale, vec![copies[0], t_factor]));
            }
            add(fx, parts)
        }
        _ => {
            let what = format!("`ad_runtime::{}`", callee.name());
            match fx.mode {
                Derivative::Jvp | Derivative::JvpLanes => {
                    fx.cx.error_at(span, msg::jvp_unsupported(callee.name()));
                }
                Derivative::Hvp | Derivative::Nested => fx.unsupported(span, &what),
            }
            None
        }
    }
}

/// The tangent of a primitive's pullback `pb(reads, seed)`: linear in the
/// seed, so `pb(reads, t_seed)`, plus how it moves with its reads, the
/// runtime's second-order rule (`curvature`). A tuple's components are
/// recorded as parts.
fn pullback(
    fx: &mut Forward<'_>,
    prim: Prim,
    operands: &[Value],
    ty: &Ty,
    span: proc_macro2::Span,
) -> Option<Value> {
    let (&seed, reads) = operands.split_last().expect("a pullback has a seed");
    let copies: Vec<Value> = reads.iter().map(|&read| fx.copy(read)).collect();
    let mut parts: Vec<Value> = Vec::new();
    if let Some(t_seed) = fx.tangent(seed) {
        let mut args = copies.clone();
        args.push(t_seed);
        parts.push(
            fx.builder
                .push(Inst::Pullback(prim, args), ty.clone(), span),
        );
    }
    // The float reads (not `powi`'s exponent) and their tangents.
    let float_reads: Vec<Value> = prim
        .reads()
        .iter()
        .zip(reads)
        .filter(|(read, _)| !matches!(read, Read::Arg(index) if Some(*index) == prim.int_arg()))
        .map(|(_, &read)| read)
        .collect();
    if has_curvature(prim) && float_reads.iter().any(|&read| fx.tangent(read).is_some()) {
        let mut args = copies;
        args.push(fx.copy(seed));
        for read in float_reads {
            args.push(fx.tangent_whole(read));
        }
        parts.push(
            fx.builder
                .push(Inst::Curvature(prim, args), ty.clone(), span),
        );
    }
    match (parts.as_slice(), ty) {
        ([], _) => None,
        ([single], _) => Some(*single),
        (&[a, b], Ty::Tuple(elems)) => {
            // Component by component.
            let sums = (0..elems.len())
                .map(|index| {
                    let index32 = u32::try_from(index).expect("small");
                    let elem = elems[index].clone();
                    let x = fx
                        .builder
                        .push(Inst::Extract(a, index32), elem.clone(), span);
                    let y = fx
                        .builder
                        .push(Inst::Extract(b, index32), elem.clone(), span);
                    fx.builder.push(Inst::Binary(BinOp::Add, x, y), elem, span)
                })
                .collect();
            Some(fx.builder.push(Inst::Tuple(sums), ty.clone(), span))
        }
        (&[a, b], _) => Some(
            fx.builder
                .push(Inst::Binary(BinOp::Add, a, b), ty.clone(), span),
        ),
        _ => unreachable!("at most two parts"),
    }
}

/// Whether a primitive's pullback moves with its inputs: not for those
/// piecewise linear (`abs`, `min`, `max`, …), whose second derivative is zero
/// wherever it exists.
fn has_curvature(prim: Prim) -> bool {
    !matches!(
        prim,
        Prim::Abs
            | Prim::Signum
            | Prim::Min
            | Prim::Max
            | Prim::Clamp
            | Prim::Copysign
            | Prim::Rem
            | Prim::RemEuclid
            | Prim::Fract
            | Prim::ToRadians
            | Prim::ToDegrees
            | Prim::Midpoint
    ) && !prim.is_piecewise_constant()
}

/// An `if`: its regions yield, after their values, the tangents of the
/// results that are active.
fn branch(fx: &mut Forward<'_>, value: Value, cond: Value, then: &Region, els: &Region) {
    let primal = fx.primal;
    let active: Vec<usize> = (0..then.yields.len())
        .filter(|&index| fx.is_active(then.yields[index]) || fx.is_active(els.yields[index]))
        .collect();
    fx.builder.begin_region();
    let new_then = fx.region(then, 0, &active);
    fx.builder.begin_region();
    let new_els = fx.region(els, 0, &active);
    let Ty::Tuple(mut tys) = primal.ty(value).clone() else {
        unreachable!("an `if` is a tuple")
    };
    let n = tys.len();
    tys.extend(
        active
            .iter()
            .map(|&index| fx.tangent_ty(primal.ty(then.yields[index]))),
    );
    let new = fx.builder.push(
        Inst::If {
            cond: fx.copy(cond),
            then: new_then,
            els: new_els,
        },
        Ty::Tuple(tys),
        primal.span(value),
    );
    fx.set_copy(value, new);
    fx.parts
        .insert(value, Parts::Indices(positions(n, &active)));
}

/// The positions of the tangents of the `active` components of a tuple of
/// `n`, placed after them: `None` for the others.
fn positions(n: usize, active: &[usize]) -> Vec<Option<u32>> {
    (0..n)
        .map(|index| {
            active
                .iter()
                .position(|&active| active == index)
                .map(|position| u32::try_from(n + position).expect("small"))
        })
        .collect()
}

/// A `for` or a `while`: it carries the tangents of its active carried
/// values after its own.
fn looped(fx: &mut Forward<'_>, value: Value) {
    let primal = fx.primal;
    let inst = primal.inst(value);
    let the_loop = inst.as_loop().expect("a loop");
    let (inits, body) = (the_loop.inits, the_loop.body);
    let k = inits.len();
    let (args, next) = (the_loop.args(), the_loop.next());
    let active: Vec<usize> = (0..k)
        .filter(|&j| fx.is_active(args[j]) || fx.is_active(next[j]) || fx.is_active(inits[j]))
        .collect();
    let mut new_inits: Vec<Value> = inits.iter().map(|&init| fx.copy(init)).collect();
    for &j in &active {
        new_inits.push(fx.tangent_whole(inits[j]));
    }
    fx.builder.begin_region();
    let span = primal.span(value);
    let index = fx
        .builder
        .push(Inst::Arg(0), primal.ty(body.insts[0]).clone(), span);
    fx.set_copy(body.insts[0], index);
    for (j, &arg) in args.iter().enumerate() {
        let new = fx.builder.push(
            Inst::Arg(u32::try_from(j + 1).expect("small")),
            primal.ty(arg).clone(),
            primal.span(arg),
        );
        fx.set_copy(arg, new);
    }
    for (position, &j) in active.iter().enumerate() {
        let tangent = fx.builder.push(
            Inst::Arg(u32::try_from(k + 1 + position).expect("small")),
            fx.tangent_ty(primal.ty(args[j])),
            primal.span(args[j]),
        );
        fx.set_tangent(args[j], tangent);
    }
    // The carried values' tangents come after every value the body yields.
    let offset = body.yields.len() - k;
    let tangent_yields: Vec<usize> = active.iter().map(|&j| offset + j).collect();
    let new_body = fx.region(body, k + 1, &tangent_yields);
    let Ty::Tuple(tys) = primal.ty(value).clone() else {
        unreachable!("a loop is a tuple")
    };
    let mut new_tys: Vec<Ty> = tys[..k].to_vec();
    new_tys.extend(active.iter().map(|&j| fx.tangent_ty(primal.ty(args[j]))));
    new_tys.extend(tys[k..].iter().cloned());
    let new_inst = match inst {
        Inst::For { range, .. } => Inst::For {
            range: fx.copy_range(range),
            inits: new_inits,
            body: new_body,
        },
        _ => Inst::While {
            inits: new_inits,
            body: new_body,
            checkpoint: None,
        },
    };
    let new = fx.builder.push(new_inst, Ty::Tuple(new_tys), span);
    fx.set_copy(value, new);
    fx.parts
        .insert(value, Parts::Indices(positions(k, &active)));
}

/// A call in `_vjp`'s IR, under forward mode over it (`_hvp`, `nested`):
/// the callee's `_jvp_all` gives the output and its tangent, and the call's
/// pullback becomes its record, the tuple of its arguments and their
/// tangents, which the application of the pullback hands to the callee's
/// `_hvp_all` (see [`apply_over_reverse`]). Callees taking floats and
/// integers and returning one float only, and not in `_jvp`'s IR.
fn call_over_reverse(fx: &mut Forward<'_>, value: Value, callee: u32, args: &[(Value, Mode)]) {
    let primal = fx.primal;
    let span = primal.span(value);
    let Ty::Tuple(tys) = primal.ty(value).clone() else {
        unreachable!("a call's pair")
    };
    let call = &primal.user_calls[callee as usize];
    // In `_jvp`'s IR (the `nested` twin of `_jvp`) a call's pair is the
    // output and its tangent, not a pullback: not supported yet.
    if tys.get(1) != Some(&Ty::Pullback) {
        fx.unsupported(
            span,
            "calls of differentiated functions in the twin of `_jvp`",
        );
        fx.push_copy(value);
        return;
    }
    let supported = !call.into
        && tys[0].is_float()
        && args.iter().all(|&(arg, mode)| {
            let ty = primal.ty(arg);
            ty.is_float()
                || *ty == Ty::Int
                || (*ty == Ty::Unknown && mode == Mode::Val)
                || (ty.is_float_buf() && mode == Mode::Ref)
        });
    if !supported {
        fx.unsupported(
            span,
            "calls of differentiated functions that take a tuple, write a buffer, or return a buffer, a tuple or a struct",
        );
        fx.push_copy(value);
        return;
    }
    // Floats and integers at their positions in the record, the floats'
    // tangents after them; buffers are given to the application.
    let mut new_args = Vec::new();
    let mut values = Vec::new();
    let mut tangents = Vec::new();
    let mut slots = Vec::new();
    for &(arg, mode) in args {
        let copy = fx.copy(arg);
        new_args.push((copy, mode));
        let ty = primal.ty(arg);
        if ty.is_float_buf() {
            new_args.push((fx.tangent_whole(arg), mode));
            slots.push(super::RecordArg::Buffer);
        } else if ty.is_float() {
            let tangent = fx.tangent_whole(arg);
            new_args.push((tangent, mode));
            slots.push(super::RecordArg::Float {
                at: values.len(),
                tangent: tangents.len(),
            });
            values.push(copy);
            tangents.push(tangent);
        } else {
            slots.push(super::RecordArg::Int { at: values.len() });
            values.push(copy);
        }
    }
    let n = values.len();
    let record_args: Vec<super::RecordArg> = slots
        .into_iter()
        .map(|slot| match slot {
            super::RecordArg::Float { at, tangent } => super::RecordArg::Float {
                at,
                tangent: n + tangent,
            },
            slot => slot,
        })
        .collect();
    let output = tys[0].clone();
    let pair = fx.builder.push(
        Inst::Forward {
            callee,
            args: new_args,
            kept: None,
        },
        Ty::Tuple(vec![output.clone(), output.clone()]),
        span,
    );
    let out = fx
        .builder
        .push(Inst::Extract(pair, 0), output.clone(), span);
    let t_out = fx
        .builder
        .push(Inst::Extract(pair, 1), output.clone(), span);
    values.extend(tangents);
    let record_ty = Ty::Tuple(
        values
            .iter()
            .map(|&v| fx.builder.func().ty(v).clone())
            .collect(),
    );
    let record_value = fx
        .builder
        .push(Inst::Tuple(values), record_ty.clone(), span);
    let copy = fx.builder.push(
        Inst::Tuple(vec![out, record_value]),
        Ty::Tuple(vec![output, record_ty.clone()]),
        span,
    );
    let info = super::Record {
        callee,
        ty: record_ty,
        args: record_args,
    };
    fx.records.insert(copy, info);
    fx.set_copy(value, copy);
    fx.parts
        .insert(value, Parts::Values(vec![Some(t_out), None]));
}

/// The application of a call's pullback, under forward mode over `_vjp`:
/// the callee's `_hvp_all` at the floats and integers the record holds,
/// along their tangents, with each buffer the application is given, its
/// tangent, its shadow and the shadow's tangent, seeded with the seed and
/// its tangent, gives the adjoints of the call's floats and their tangents
/// (and adds the buffers' into their shadows and the shadows' tangents).
fn apply_over_reverse(fx: &mut Forward<'_>, value: Value, pullback: Value, args: &[(Value, Mode)]) {
    let primal = fx.primal;
    let span = primal.span(value);
    let record_value = fx.copy(pullback);
    let Some(record) = fx.records.get(&record_value).cloned() else {
        // The call was reported already (or its pullback left a branch,
        // which `Inst::Some` reports); anything else is a bug of ours.
        if !fx.cx.has_errors() {
            fx.unsupported(span, "this call of a differentiated function");
        }
        fx.push_copy(value);
        return;
    };
    let Ty::Tuple(field_tys) = record.ty.clone() else {
        unreachable!("a record is a tuple")
    };
    let field = |fx: &mut Forward<'_>, index: usize| {
        let index32 = u32::try_from(index).expect("small");
        fx.builder.push(
            Inst::Extract(record_value, index32),
            field_tys[index].clone(),
            span,
        )
    };
    let (seed_arg, buffers) = args.split_last().expect("a pullback takes its seed");
    let mut buffers = buffers.chunks_exact(2);
    let mut new_args = Vec::new();
    let mut floats = 0;
    for arg in &record.args {
        match *arg {
            super::RecordArg::Float { at, tangent } => {
                let value = field(fx, at);
                let tangent = field(fx, tangent);
                new_args.extend([(value, Mode::Val), (tangent, Mode::Val)]);
                floats += 1;
            }
            super::RecordArg::Int { at } => {
                let value = field(fx, at);
                new_args.push((value, Mode::Val));
            }
            super::RecordArg::Buffer => {
                let &[(buf, _), (shadow, _)] = buffers.next().expect("a buffer and its shadow")
                else {
                    unreachable!("pairs")
                };
                new_args.push((fx.copy(buf), Mode::Ref));
                new_args.push((fx.tangent_whole(buf), Mode::Ref));
                new_args.push((fx.copy(shadow), Mode::Mut));
                new_args.push((fx.tangent_whole(shadow), Mode::Mut));
            }
        }
    }
    let seed = seed_arg.0;
    new_args.push((fx.copy(seed), Mode::Val));
    new_args.push((fx.tangent_whole(seed), Mode::Val));
    let float_ty = fx.primal.ty(seed).clone();
    // `_hvp_all` returns what `_vjp` returns (the output, then the floats'
    // adjoints; the output alone without floats), and its tangent.
    let half = match floats {
        0 => float_ty.clone(),
        k => Ty::Tuple(vec![float_ty.clone(); k + 1]),
    };
    let entry = u32::try_from(fx.primal.user_calls.len()).expect("small") + record.callee;
    let both = fx.builder.push(
        Inst::Forward {
            callee: entry,
            args: new_args,
            kept: None,
        },
        Ty::Tuple(vec![half.clone(), half.clone()]),
        span,
    );
    let value_half = fx.builder.push(Inst::Extract(both, 0), half.clone(), span);
    let tangent_half = fx.builder.push(Inst::Extract(both, 1), half, span);
    let pick = |fx: &mut Forward<'_>, of: Value, i: usize| {
        let index = u32::try_from(i + 1).expect("small");
        fx.builder
            .push(Inst::Extract(of, index), float_ty.clone(), span)
    };
    let adjoints: Vec<Value> = (0..floats).map(|i| pick(fx, value_half, i)).collect();
    let tangents: Vec<Value> = (0..floats).map(|i| pick(fx, tangent_half, i)).collect();
    match floats {
        1 => {
            fx.set_copy(value, adjoints[0]);
            fx.set_tangent(value, tangents[0]);
        }
        _ => {
            let ty = primal.ty(value).clone();
            let copy = fx.builder.push(Inst::Tuple(adjoints), ty, span);
            fx.set_copy(value, copy);
            fx.parts.insert(
                value,
                Parts::Values(tangents.into_iter().map(Some).collect()),
            );
        }
    }
}

/// A call of a function with a derivative of its own: its `_jvp`, passed a
/// tangent after each float and float buffer argument (zeros for constant
/// ones), returns the output and its tangent.
fn call(fx: &mut Forward<'_>, value: Value, callee: u32, args: &[(Value, Mode)]) {
    let primal = fx.primal;
    let mut new_args = Vec::new();
    for &(arg, mode) in args {
        new_args.push((fx.copy(arg), mode));
        let ty = primal.ty(arg);
        if ty.can_be_active() {
            let tangent = fx.tangent_whole(arg);
            new_args.push((tangent, mode));
        }
    }
    let Ty::Tuple(tys) = primal.ty(value) else {
        unreachable!("a call's pair")
    };
    let output = tys[0].clone();
    let tangent_ty = fx.tangent_ty(&output);
    let new = fx.builder.push(
        Inst::Forward {
            callee,
            args: new_args,
            kept: None,
        },
        Ty::Tuple(vec![output, tangent_ty]),
        primal.span(value),
    );
    fx.set_copy(value, new);
    fx.parts.insert(value, Parts::Indices(vec![Some(1), None]));
}
