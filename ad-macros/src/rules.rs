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

use crate::ir::{BinOp, Const, Inst, NewBuf, Scalar, Ty, UnOp, Value};
use crate::reverse::Reverse;

macro_rules! prims {
    ($($variant:ident $name:literal $arity:literal $(int $int_arg:literal)?,)*) => {
        /// A math primitive, named after its float method.
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub(crate) enum Prim {
            $($variant,)*
        }

        impl Prim {
            const ALL: &[Prim] = &[$(Prim::$variant,)*];

            /// The method name, which is also the name of the runtime pullback.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Prim::$variant => $name,)*
                }
            }

            /// Operands, the receiver included.
            pub(crate) fn arity(self) -> usize {
                match self {
                    $(Prim::$variant => $arity,)*
                }
            }

            /// The operand that is an integer (`powi`'s exponent), if any.
            pub(crate) fn int_arg(self) -> Option<usize> {
                match self {
                    $(Prim::$variant => None $(.or(Some($int_arg)))?,)*
                }
            }
        }
    };
}

prims! {
    Sqrt "sqrt" 1,
    Cbrt "cbrt" 1,
    Exp "exp" 1,
    Exp2 "exp2" 1,
    ExpM1 "exp_m1" 1,
    Ln "ln" 1,
    Ln1p "ln_1p" 1,
    Log2 "log2" 1,
    Log10 "log10" 1,
    Log "log" 2,
    Powi "powi" 2 int 1,
    Powf "powf" 2,
    Sin "sin" 1,
    Cos "cos" 1,
    Tan "tan" 1,
    Asin "asin" 1,
    Acos "acos" 1,
    Atan "atan" 1,
    Atan2 "atan2" 2,
    Sinh "sinh" 1,
    Cosh "cosh" 1,
    Tanh "tanh" 1,
    Asinh "asinh" 1,
    Acosh "acosh" 1,
    Atanh "atanh" 1,
    Abs "abs" 1,
    Signum "signum" 1,
    Min "min" 2,
    Max "max" 2,
    Hypot "hypot" 2,
    MulAdd "mul_add" 3,
    Recip "recip" 1,
    Rem "rem" 2,
}

/// An operand of a primitive's pullback call (see [`Prim::reads`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Read {
    /// The primitive's operand at this index.
    Arg(usize),
    /// The primitive's output.
    Output,
}

impl Prim {
    /// What the pullback reads, besides the seed: the generated code calls
    /// `__ad::name(reads…, seed)`, so that nothing else is kept for the
    /// adjoint (`sin` reads its input, `exp` its output, `max` its inputs).
    /// The runtime's `rules` take every operand; `__private` adapts.
    pub(crate) fn reads(self) -> &'static [Read] {
        use Read::{Arg, Output};
        match self {
            Prim::Sqrt
            | Prim::Cbrt
            | Prim::Exp
            | Prim::Exp2
            | Prim::ExpM1
            | Prim::Tan
            | Prim::Tanh
            | Prim::Recip => &[Output],
            Prim::Ln
            | Prim::Ln1p
            | Prim::Log2
            | Prim::Log10
            | Prim::Sin
            | Prim::Cos
            | Prim::Asin
            | Prim::Acos
            | Prim::Atan
            | Prim::Sinh
            | Prim::Cosh
            | Prim::Asinh
            | Prim::Acosh
            | Prim::Atanh
            | Prim::Abs => &[Arg(0)],
            Prim::Signum => &[],
            Prim::Atan2 | Prim::Min | Prim::Max | Prim::MulAdd => &[Arg(0), Arg(1)],
            Prim::Powi | Prim::Log | Prim::Powf | Prim::Hypot | Prim::Rem => {
                &[Arg(0), Arg(1), Output]
            }
        }
    }

    /// The primitive called `x.name(…)` in user code. `rem` is not a float
    /// method: it is the pullback of the `%` operator only.
    pub(crate) fn from_method(name: &str) -> Option<Prim> {
        Prim::ALL
            .iter()
            .copied()
            .find(|prim| prim.name() == name && *prim != Prim::Rem)
    }

    /// The supported methods, for error messages.
    pub(crate) fn method_list() -> String {
        let names: Vec<String> = Prim::ALL
            .iter()
            .filter(|prim| **prim != Prim::Rem)
            .map(|prim| format!("`{}`", prim.name()))
            .collect();
        names.join(", ")
    }

    /// Indices of the operands that are floats (and so have adjoints).
    pub(crate) fn float_args(self) -> impl Iterator<Item = usize> {
        (0..self.arity()).filter(move |&index| Some(index) != self.int_arg())
    }
}

/// How a runtime function takes an argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// By value: a float or an integer.
    Val,
    /// A buffer, by `&`.
    Ref,
    /// A buffer, by `&mut`.
    Mut,
}

macro_rules! callees {
    ($($variant:ident $name:literal [$($mode:ident)*] $returns:ident,)*) => {
        /// A function of the runtime that works on whole buffers: the coarse
        /// primitives users call (`ad_runtime::matmul`), and the pullbacks and
        /// helpers the adjoint calls (`__ad::matmul_da`).
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub(crate) enum Callee {
            $($variant,)*
        }

        impl Callee {
            /// The function's name in `ad_runtime` (and in its `__private`).
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Callee::$variant => $name,)*
                }
            }

            /// How it takes each argument.
            pub(crate) fn modes(self) -> &'static [Mode] {
                match self {
                    $(Callee::$variant => &[$(Mode::$mode),*],)*
                }
            }

            /// Whether it returns a float (otherwise it returns `()`).
            pub(crate) fn returns_float(self) -> bool {
                match self {
                    $(Callee::$variant => stringify!($returns) == "float",)*
                }
            }
        }
    };
}

callees! {
    // The coarse primitives of `ad_runtime`, callable from differentiated code.
    Dot "dot" [Ref Ref] float,
    Sum "sum" [Ref] float,
    Norm2 "norm2" [Ref] float,
    Axpy "axpy" [Val Ref Mut] unit,
    Matvec "matvec" [Ref Ref Mut Val Val] unit,
    Matmul "matmul" [Ref Ref Mut Val Val Val] unit,
    Softmax "softmax" [Ref Mut] unit,
    Logsumexp "logsumexp" [Ref] float,
    // Their pullbacks, one per argument, adding into the shadow they are given.
    DotDx "dot_dx" [Ref Val Mut] unit,
    SumDx "sum_dx" [Val Mut] unit,
    Norm2Dx "norm2_dx" [Ref Val Val Mut] unit,
    AxpyDa "axpy_da" [Ref Ref] float,
    AxpyDx "axpy_dx" [Val Ref Mut] unit,
    MatvecDa "matvec_da" [Ref Ref Mut Val Val] unit,
    MatvecDx "matvec_dx" [Ref Ref Mut Val Val] unit,
    MatmulDa "matmul_da" [Ref Ref Mut Val Val Val] unit,
    MatmulDb "matmul_db" [Ref Ref Mut Val Val Val] unit,
    SoftmaxDx "softmax_dx" [Ref Ref Mut] unit,
    LogsumexpDx "logsumexp_dx" [Ref Val Val Mut] unit,
    // `logsumexp` keeping its exponentials for the pullback, in `_vjp`
    // (`analysis/keep.rs`), and that pullback.
    LogsumexpKeep "logsumexp_keep" [Ref Mut] float,
    LogsumexpDxKept "logsumexp_dx_kept" [Mut Val Mut] unit,
    // A loop `for i in start..end { m = m.max(x[i]); }`, as one call
    // (`analysis/extrema.rs`), and its pullbacks: with `x`'s shadow, and
    // without (the adjoint of `m`'s initial value alone).
    MaxOver "max_over" [Val Ref Val Val] float,
    MinOver "min_over" [Val Ref Val Val] float,
    MaxOverDx "max_over_dx" [Val Ref Val Val Val Val Mut] float,
    MinOverDx "min_over_dx" [Val Ref Val Val Val Val Mut] float,
    MaxOverDm "max_over_dm" [Val Ref Val Val Val Val] float,
    MinOverDm "min_over_dm" [Val Ref Val Val Val Val] float,
    // Helpers: the shadow of an overwritten output, and of a copy.
    Zero "zero" [Mut] unit,
    AddAssign "add_assign" [Mut Ref] unit,
    // `d * factor`, but 0 for `d == 0` even if `factor` is infinite.
    Scale "scale" [Val Val] float,
}

impl Callee {
    /// The primitives users may call, by name.
    pub(crate) const PRIMITIVES: [Callee; 8] = [
        Callee::Dot,
        Callee::Sum,
        Callee::Norm2,
        Callee::Axpy,
        Callee::Matvec,
        Callee::Matmul,
        Callee::Softmax,
        Callee::Logsumexp,
    ];

    pub(crate) fn primitive(name: &str) -> Option<Callee> {
        Callee::PRIMITIVES
            .into_iter()
            .find(|callee| callee.name() == name)
    }

    /// Whether users call it (generated code calls it as `::ad_runtime::name`),
    /// rather than the adjoint (`__ad::name`).
    pub(crate) fn is_primitive(self) -> bool {
        Callee::PRIMITIVES.contains(&self)
    }
}

/// Adds the contributions of `y`'s adjoint `dy` to the adjoints of `y`'s
/// operands. Only active operands receive anything, so no dead adjoint code is
/// built.
pub(crate) fn pullback(rx: &mut Reverse<'_>, y: Value, dy: Value) {
    let inst = rx.primal().inst(y).clone();
    match inst {
        Inst::Param(_) | Inst::Const(_) | Inst::Detach(_) => {}
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
        Inst::Pullback(..) | Inst::Shadow { .. } | Inst::PopShadow(_) | Inst::Apply { .. } => {
            unreachable!("adjoint-only instruction %{} in the primal", y.0)
        }
        // `dy` is the shadow of these buffers: their elements got their
        // adjoints where they were read.
        Inst::NewBuf(NewBuf::Empty { .. }) => {}
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
                (Callee::MaxOver | Callee::MinOver, &[m0, x, start, end]) => {
                    let (with_dx, alone) = if callee == Callee::MaxOver {
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
    if matches!(prim, Prim::Min | Prim::Max | Prim::Abs | Prim::Signum) {
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
