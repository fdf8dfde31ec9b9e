//! The primitive vocabulary: the float methods the IR calls ([`Prim`]) and
//! the runtime's buffer functions ([`Callee`]), with what each takes and
//! what its pullback reads. How each is differentiated is in the rule table,
//! `reverse/rules.rs`; this module only names them.

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
    Midpoint "midpoint" 2,
    Recip "recip" 1,
    Rem "rem" 2,
    Floor "floor" 1,
    Ceil "ceil" 1,
    Round "round" 1,
    RoundTiesEven "round_ties_even" 1,
    Trunc "trunc" 1,
    Fract "fract" 1,
    DivEuclid "div_euclid" 2,
    RemEuclid "rem_euclid" 2,
    Copysign "copysign" 2,
    Clamp "clamp" 3,
    ToRadians "to_radians" 1,
    ToDegrees "to_degrees" 1,
    IsNan "is_nan" 1,
    IsFinite "is_finite" 1,
    IsInfinite "is_infinite" 1,
    IsSignNegative "is_sign_negative" 1,
    IsSignPositive "is_sign_positive" 1,
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
            Prim::Signum
            | Prim::Fract
            | Prim::ToRadians
            | Prim::ToDegrees
            | Prim::Floor
            | Prim::Ceil
            | Prim::Round
            | Prim::RoundTiesEven
            | Prim::Trunc
            | Prim::DivEuclid
            | Prim::Midpoint => &[],
            Prim::IsNan
            | Prim::IsFinite
            | Prim::IsInfinite
            | Prim::IsSignNegative
            | Prim::IsSignPositive => &[],
            Prim::Copysign => &[Arg(0), Arg(1)],
            Prim::Clamp => &[Arg(0), Arg(1), Arg(2)],
            Prim::Atan2 | Prim::Min | Prim::Max | Prim::MulAdd => &[Arg(0), Arg(1)],
            Prim::Powi | Prim::Log | Prim::Powf | Prim::Hypot | Prim::Rem | Prim::RemEuclid => {
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

    /// Whether the primitive is constant between jumps (`floor`, `round`,
    /// `div_euclid`, …): its derivative is zero wherever it has one, so its
    /// result is constant data for the adjoint, like a comparison's.
    pub(crate) fn is_piecewise_constant(self) -> bool {
        matches!(
            self,
            Prim::Floor
                | Prim::Ceil
                | Prim::Round
                | Prim::RoundTiesEven
                | Prim::Trunc
                | Prim::DivEuclid
        ) || self.is_predicate()
    }

    /// Whether the primitive is a test (`is_nan`, …) whose value is a `bool`.
    pub(crate) fn is_predicate(self) -> bool {
        matches!(
            self,
            Prim::IsNan
                | Prim::IsFinite
                | Prim::IsInfinite
                | Prim::IsSignNegative
                | Prim::IsSignPositive
        )
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
    /// An array passed by value to a function of the user's
    /// (`cross(a, b)`): the call gets a copy, and its pullback reads the
    /// buffer by `&` like [`Mode::Ref`].
    Copy,
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
    // The same loops written `m = x[i].max(m)`: the same pullbacks.
    MaxOverRev "max_over_rev" [Val Ref Val Val] float,
    MinOverRev "min_over_rev" [Val Ref Val Val] float,
    MaxOverDx "max_over_dx" [Val Ref Val Val Val Val Mut] float,
    MinOverDx "min_over_dx" [Val Ref Val Val Val Val Mut] float,
    MaxOverDm "max_over_dm" [Val Ref Val Val Val Val] float,
    MinOverDm "min_over_dm" [Val Ref Val Val Val Val] float,
    // Tangent rules of the coarse primitives (forward mode, `jvp/`).
    Norm2Jvp "norm2_jvp" [Ref Val Ref] float,
    LogsumexpJvp "logsumexp_jvp" [Ref Val Ref] float,
    MatvecAcc "matvec_acc" [Ref Ref Mut Val Val] unit,
    MatmulAcc "matmul_acc" [Ref Ref Mut Val Val Val] unit,
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
