//! The rule table: every primitive's pullback, and nothing else.
//!
//! [`pullback`] is the only place that knows how to differentiate an
//! instruction. Arithmetic (`+ - * /`, negation, `as` between floats) is
//! differentiated inline, because its adjoint is itself one arithmetic operation,
//! exactly what a hand-written gradient says. Every other primitive calls its
//! pullback in the runtime (`ad_runtime::rules`), whose signature is fixed: the
//! primitive's inputs in call order, its output, the seed; it returns the adjoint
//! of each float input (a tuple for several).

use crate::ir::{BinOp, Inst, Ty, UnOp, Value};
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

impl Prim {
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
            // y = a * b: da = dy * b, db = dy * a.
            if rx.is_active(a) {
                let da = rx.binary(BinOp::Mul, dy, b, y);
                rx.add(a, da);
            }
            if rx.is_active(b) {
                let db = rx.binary(BinOp::Mul, dy, a, y);
                rx.add(b, db);
            }
        }
        Inst::Binary(BinOp::Div, a, b) => {
            // y = a / b: da = dy / b, db = -dy * a / b² = -da * y.
            if rx.is_active(a) || rx.is_active(b) {
                let da = rx.binary(BinOp::Div, dy, b, y);
                rx.add(a, da);
                if rx.is_active(b) {
                    let minus_db = rx.binary(BinOp::Mul, da, y, y);
                    rx.sub(b, minus_db);
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
                let dx = match from.scalar() {
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
        Inst::TapeNew { .. } | Inst::Push(..) | Inst::Pop(_) => {
            unreachable!("adjoint-only instruction %{} in the primal", y.0)
        }
        Inst::Pullback(..) => unreachable!("adjoint-only instruction %{} in the primal", y.0),
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
    let mut operands = args.to_vec();
    operands.extend([y, dy]);
    let adjoints = rx.push(Inst::Pullback(prim, operands), ty, y);
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
