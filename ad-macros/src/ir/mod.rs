//! The intermediate representation: a structured SSA IR.
//!
//! A [`Function`] is an arena of instructions ([`InstData`]) addressed by
//! [`Value`] ids, a [`Region`] giving their order, the parameter list, and the
//! returned value. Everything that is not needed to *execute* the IR (user names,
//! spans, which primal value an adjoint belongs to) lives in side tables
//! ([`Function::names`], [`Function::spans`], [`Function::adjoint_of`]) keyed by
//! value id, never inside instructions.
//!
//! Every transformation takes and gives this IR. Beside the types here:
//! `prim.rs`, the primitive vocabulary (what a primitive is called and
//! takes, not how it is differentiated); `builder.rs`, building a function
//! region by region; `compact.rs`, keeping only some values; `print.rs`,
//! the text form; `verify.rs`, the invariants below.
//!
//! Invariants (checked by [`verify`]):
//!
//! 1. Every instruction defines exactly one value, and a value's id is the index of
//!    its instruction in [`Function::insts`].
//! 2. Every value appears exactly once in [`Function::body`] or in exactly one
//!    nested [`Region`]; an operand is defined earlier than its use, in the same
//!    region or an enclosing one (def before use, and regions scope like Rust
//!    blocks: a value defined inside a region is invisible outside it).
//! 3. Each [`Inst::Param`] `i` appears once and matches `params[i].value`.
//! 4. Operand counts match the operation: unary ops one, binary ops two, a
//!    primitive its arity ([`Prim::arity`]), a pullback its arity plus the primal
//!    output and the seed.
//! 5. An [`Inst::Extract`] reads a tuple-typed value and an index inside it.
//! 6. The side tables have one entry per instruction.
//! 7. [`Function::ret`] is a value of the body.
//! 8. An [`Inst::If`]'s two regions yield the same number of values, and its type
//!    is the tuple of their types; its results are read with [`Inst::Extract`].
//! 9. A [`Inst::For`]'s body starts with its arguments, `arg 0` (the index) and
//!    `arg 1..=k` (the carried values, one per initial value), and yields the k
//!    carried values of the next iteration; the loop's type is the tuple of the
//!    final carried values. `arg` appears nowhere else.
//! 10. A [`Inst::While`]'s body starts with its arguments like a `for`'s, and
//!     yields a `bool` (whether to run again) and then the k carried values; its
//!     type is the tuple of the k carried types and `int` (the trip count).
//! 11. A buffer ([`Ty::Buf`]) is a handle, not a value that changes: it is
//!     defined in the body (a parameter, a new local buffer, a copy, a shadow),
//!     never inside a region — but for a copy the reverse pass makes there for
//!     the adjoint, which a tape carries out — and is never carried by a loop
//!     or yielded by the user's `if`. What it holds changes only through the effects that name it
//!     ([`Inst::Store`], [`Inst::Update`], [`Inst::PushElem`],
//!     [`Inst::PopShadow`], and a [`Inst::Call`] passing it as `&mut`), in
//!     program order.

mod builder;
mod compact;
mod prim;
mod print;
mod verify;

pub(crate) use builder::Builder;
pub(crate) use compact::{compact, without};
pub(crate) use verify::verify;

use proc_macro2::{Span, TokenStream};

pub(crate) use prim::{Callee, Mode, Prim, Read};

/// A value id: the index of the instruction that defines it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(crate) struct Value(pub(crate) u32);

impl Value {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A scalar Rust type the IR knows by name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Scalar {
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    Bool,
    /// The float type parameter `T` of a function generic over `T: Float`.
    Float,
}

impl Scalar {
    pub(crate) const ALL: [Scalar; 15] = [
        Scalar::F32,
        Scalar::F64,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::I128,
        Scalar::Isize,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::U128,
        Scalar::Usize,
        Scalar::Bool,
    ];

    /// The Rust spelling of the type.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::I128 => "i128",
            Scalar::Isize => "isize",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::U128 => "u128",
            Scalar::Usize => "usize",
            Scalar::Bool => "bool",
            Scalar::Float => "T",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|scalar| scalar.name() == name)
    }

    pub(crate) fn ty(self) -> Ty {
        match self {
            Scalar::F32 => Ty::F32,
            Scalar::F64 => Ty::F64,
            Scalar::Bool => Ty::Bool,
            Scalar::Float => Ty::Float,
            _ => Ty::Int,
        }
    }
}

/// The type of a value, as far as differentiation cares.
///
/// Only floats can be active. The width of a float matters where the adjoint must
/// convert back (`as` casts), so it is tracked; literals and constant paths whose
/// width is only known to rustc are `Float` or `Unknown`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Ty {
    F32,
    F64,
    /// A float whose width is decided by inference (an unsuffixed literal).
    Float,
    /// Any integer type: constant data for the adjoint.
    Int,
    Bool,
    /// A constant of a type the macro cannot see (a path such as `PI`).
    Unknown,
    Tuple(Vec<Ty>),
    /// A tape (`ad_runtime::__private::Tape`) of values of this type.
    Tape(Box<Ty>),
    /// No value: the type of effects such as a tape push.
    Unit,
    /// A buffer of elements of this type: `&[T]`, `&mut [T]`, `Vec<T>`,
    /// `[T; N]` (see invariant 11).
    Buf(Box<Ty>),
    /// The pullback a call's forward part returns: a closure whose type only
    /// rustc knows.
    Pullback,
    /// A parameter struct (`p: &Params`, `&self`): constant data but for its
    /// fields, each read as an [`Inst::Field`].
    Struct,
    /// `Option<T>`: a pullback or a copy of a buffer carried out of a
    /// branch, `None` when the branch did not run (neither has a placeholder
    /// value).
    Option(Box<Ty>),
    /// The `K` tangents of a float in vector forward mode
    /// (`ad_runtime::Lanes<T, K>`, `K` the function's [`Function::lanes`]).
    Lanes(Box<Ty>),
}

impl Ty {
    /// Whether a value of this type can carry a gradient.
    pub(crate) fn is_float(&self) -> bool {
        matches!(self, Ty::F32 | Ty::F64 | Ty::Float)
    }

    /// Whether this is a number or a `bool`: what the runtime's tape pool
    /// keeps (`ad_runtime::tape::Recycle`).
    pub(crate) fn is_scalar(&self) -> bool {
        matches!(self, Ty::F32 | Ty::F64 | Ty::Float | Ty::Int | Ty::Bool)
    }

    /// The element type of a buffer.
    pub(crate) fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::Buf(elem) => Some(elem),
            _ => None,
        }
    }

    /// Whether this is a buffer of floats, which can carry a gradient.
    pub(crate) fn is_float_buf(&self) -> bool {
        self.elem().is_some_and(Ty::is_float)
    }

    /// Whether a parameter of this type is passed by reference and has a
    /// shadow rather than a returned adjoint: a buffer or a struct.
    pub(crate) fn is_by_reference(&self) -> bool {
        matches!(self, Ty::Buf(_) | Ty::Struct)
    }

    /// Whether a parameter of this type can be active: floats, float
    /// buffers, structs.
    pub(crate) fn can_be_active(&self) -> bool {
        self.is_float() || self.is_float_buf() || *self == Ty::Struct || self.is_float_tuple()
    }

    /// Whether this is a tuple of floats (`(f64, f64)`), which a parameter
    /// can be.
    pub(crate) fn is_float_tuple(&self) -> bool {
        matches!(self, Ty::Tuple(elems) if !elems.is_empty() && elems.iter().all(Ty::is_float))
    }

    pub(crate) fn scalar(&self) -> Option<Scalar> {
        match self {
            Ty::F32 => Some(Scalar::F32),
            Ty::F64 => Some(Scalar::F64),
            Ty::Bool => Some(Scalar::Bool),
            _ => None,
        }
    }

    /// The type of `a op b` for arithmetic: the more precise side wins.
    pub(crate) fn join(&self, other: &Ty) -> Ty {
        match (self, other) {
            (Ty::F32 | Ty::F64, _) => self.clone(),
            (_, Ty::F32 | Ty::F64) => other.clone(),
            (Ty::Float, _) | (_, Ty::Float) => Ty::Float,
            (Ty::Int, _) | (_, Ty::Int) => Ty::Int,
            _ => self.clone(),
        }
    }
}

/// A literal or constant expression: opaque data for differentiation.
#[derive(Clone, Debug)]
pub(crate) enum Const {
    /// A literal exactly as the user wrote it (`2.0`, `3`, `1e-3_f32`, `true`).
    Lit(proc_macro2::Literal),
    Bool(bool),
    /// A path to a constant (`PI`, `std::f64::consts::E`, `f64::EPSILON`).
    Path(TokenStream),
    /// A zero of the value's type (`0.0`, `0`, `false`), created by the reverse
    /// pass.
    Zero,
}

impl Const {
    /// One of type `ty`: `1.0`, or `T::ONE` for the float type `T` of a
    /// function generic over `T: Float` (`float_param`), where a literal is
    /// no `T`.
    pub(crate) fn one(ty: &Ty, float_param: Option<&syn::Ident>) -> Const {
        match float_param {
            Some(param) if *ty == Ty::Float => {
                Const::Path(quote::quote!(<#param as ::ad_runtime::Float>::ONE))
            }
            _ => Const::Lit(proc_macro2::Literal::f64_unsuffixed(1.0)),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub(crate) fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    pub(crate) fn is_logic(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }

    /// Name in the IR text form.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            BinOp::BitAnd => "bitand",
            BinOp::BitOr => "bitor",
            BinOp::BitXor => "bitxor",
            BinOp::Shl => "shl",
            BinOp::Shr => "shr",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::Lt => "lt",
            BinOp::Le => "le",
            BinOp::Gt => "gt",
            BinOp::Ge => "ge",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
}

/// One instruction; it defines the value whose id is its index.
#[derive(Clone, Debug)]
pub(crate) enum Inst {
    /// The `i`-th parameter of the function (see [`Function::params`]).
    Param(u32),
    Const(Const),
    Unary(UnOp, Value),
    Binary(BinOp, Value, Value),
    /// A conversion with `as`.
    Cast(Value, Scalar),
    /// A math primitive: `args[0].prim(args[1..])`.
    Prim(Prim, Vec<Value>),
    /// The runtime pullback of a primitive (`::ad_runtime::__private::prim`), with
    /// operands: the primitive's inputs, its output, the seed. Its type is the
    /// adjoint of the float inputs: a float for one, a tuple for several.
    Pullback(Prim, Vec<Value>),
    /// `_hvp` only: how a primitive's pullback moves along the tangents of
    /// its inputs (`::ad_runtime::__private::curvature`), with operands:
    /// the pullback's reads, its seed, the tangent of each float read. Its
    /// type is the pullback's.
    Curvature(Prim, Vec<Value>),
    /// `ad_runtime::detach(x)`: the value of `x`, never active.
    Detach(Value),
    Tuple(Vec<Value>),
    /// Field `.1` of a tuple value.
    Extract(Value, u32),
    /// `if cond { then } else { els }`: runs one region; its value is the tuple
    /// of what that region yields.
    If {
        cond: Value,
        then: Region,
        els: Region,
    },
    /// `for i in range { body }`, carrying `inits.len()` values from one
    /// iteration to the next (see invariant 9).
    For {
        range: LoopRange,
        inits: Vec<Value>,
        body: Region,
    },
    /// `while` and `loop`: runs `body` again and again, carrying `inits.len()`
    /// values, until the body yields `false` as its first value; it yields the
    /// carried values next (see invariant 10). Its results are the carried values
    /// the last iteration yields, then the number of iterations (`trips`, an
    /// integer, counting that last one), which the adjoint loop runs again.
    While {
        inits: Vec<Value>,
        body: Region,
        /// `#[checkpoint(…)]` on the loop (see [`LoopRange::checkpoint`]).
        checkpoint: Option<Checkpoint>,
    },
    /// An argument of the loop body that contains it: 0 is the index (the
    /// iteration number of a `while`), `k` the `k`-th carried value at the start
    /// of the iteration.
    Arg(u32),
    /// A new, empty tape, with room for one value per iteration of `capacity`.
    TapeNew {
        capacity: Option<LoopRange>,
    },
    /// Saves a value on a tape (an effect: it is never removed or moved).
    Push(Value, Value),
    /// Makes room on a tape for one value per iteration of `range`, before a
    /// loop nested in another statement runs (an effect): the pushes in the
    /// loop then never grow the tape.
    TapeReserve {
        tape: Value,
        range: LoopRange,
    },
    /// Takes the last value saved on a tape (an effect).
    Pop(Value),
    /// `buf[index]`: reads an element.
    Load(Value, Value),
    /// `buf[index] = value` (an effect).
    Store(Value, Value, Value),
    /// `buf[index] += value` for [`BinOp::Add`], `-=` for [`BinOp::Sub`] (an
    /// effect).
    Update(BinOp, Value, Value, Value),
    /// `buf.len()`.
    Len(Value),
    /// A new local buffer.
    NewBuf(NewBuf),
    /// `&buf[start..][..len]`: a sub-slice passed to a call, a handle like
    /// the buffer's; what a call writes through it, it writes into `buf`
    /// (see [`Function::bases`]).
    Slice {
        buf: Value,
        start: Value,
        len: Value,
    },
    /// `buf.push(value)` (an effect).
    PushElem(Value, Value),
    /// A copy of a buffer: `buf.to_vec()`, or `buf.clone()` when `clone`;
    /// when `saved`, a snapshot the adjoint reads
    /// (`__ad::snapshot(&buf)`: an array is copied on the stack).
    CloneBuf {
        src: Value,
        clone: bool,
        saved: bool,
    },
    /// A call of a function of the runtime: `::ad_runtime::name(args)` for a
    /// primitive of the user's, `__ad::name(args)` for a pullback. Buffers are
    /// passed as the callee's [`Callee::modes`] say; it is an effect if one is
    /// passed `&mut`.
    Call(Callee, Vec<Value>),
    /// The shadow of a local buffer, made by the reverse pass: zeros of the
    /// same shape (`__ad::zeros_like(&of)`).
    Shadow {
        of: Value,
    },
    /// The shadow of the returned buffer: a copy of the seed, whose length
    /// is checked against `len`, the output's (computed by the primal, so
    /// that a pullback holds a number, not the output).
    SeedCopy {
        len: Value,
        seed: Value,
    },
    /// `__ad::pop_shadow(&mut shadow)`: the adjoint of a `push` (an effect).
    PopShadow(Value),
    /// `base.path`: a field of a parameter struct, read once at the start of
    /// the body; a float, or a buffer (a handle, like a parameter).
    Field {
        base: Value,
        path: Vec<syn::Member>,
    },
    /// `base.path += value` (an effect): the adjoint of a float field, added
    /// into the field of the struct's shadow.
    FieldUpdate {
        base: Value,
        path: Vec<syn::Member>,
        value: Value,
    },
    /// `Some(value)`: a pullback or a buffer yielded out of a branch (see
    /// [`Ty::Option`]).
    Some(Value),
    /// A call of a function that has a derivative (`#[differentiate]` or a
    /// custom rule), `callee` indexing [`Function::user_calls`]: its forward
    /// part `f_forward(args…)`, whose value is the pair `(output, pullback)`.
    /// Buffers are passed as the call's modes say; it is an effect if one is
    /// passed `&mut`.
    ///
    /// `kept`, in the adjoint only: what the primal kept of the pullback of
    /// the same call (see [`Kept`]), for the call made again for its
    /// pullback; its output is `()` then.
    Forward {
        callee: u32,
        args: Vec<(Value, Mode)>,
        kept: Option<Kept>,
    },
    /// `_vjp` only: what a loop keeps of a call's pullback for the adjoint,
    /// `__ad::keep!(pullback)`, or `__ad::keep!(pullback, out)` with the
    /// call's output when the adjoint does not have it: how to build a
    /// custom rule's pullback (zero-sized), a zero-sized marker for any
    /// other. See [`Kept`].
    Keep(Value, Option<Value>),
    /// Adjoint only: calls the pullback a [`Inst::Forward`] returned, with
    /// each operand passed as its mode says (the buffers as the call left
    /// them, their shadows, the seed). Its value is the adjoint of the call's
    /// float arguments taken by value: one float, a tuple, or `()`.
    Apply {
        pullback: Value,
        args: Vec<(Value, Mode)>,
    },
    /// A macro that does not compute the output (`assert!`, `println!`,
    /// `panic!`, …), run where it stands in the primal pass and never in the
    /// adjoint (an effect). `args` are the values of its bindings.
    Effect {
        mac: std::rc::Rc<EffectMacro>,
        args: Vec<Value>,
    },
}

/// The macro of an [`Inst::Effect`]: the user's invocation, run where each
/// local it names is bound to its value there.
#[derive(Debug)]
pub(crate) struct EffectMacro {
    /// `assert!(x > 0.0, "x = {x}")`, as written.
    pub(crate) tokens: TokenStream,
    /// The locals the invocation names, in the order of the effect's
    /// arguments.
    pub(crate) bindings: Vec<Binding>,
}

/// A local an [`EffectMacro`] names, and how it is bound.
#[derive(Debug)]
pub(crate) struct Binding {
    pub(crate) name: proc_macro2::Ident,
    pub(crate) kind: BindingKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindingKind {
    /// No `let`: the value written in place of the name, which only the
    /// macro's own tokens use (one argument). `receiver`: before a `.`.
    Inline { receiver: bool },
    /// `let x = value;` (one argument).
    Value,
    /// `let e = &value;` (one argument): an element of `iter()`.
    Ref,
    /// `let v = &buf[..];` (one argument, a buffer).
    Slice,
    /// `let s = &buf[start..][..len];` (three arguments).
    View,
    /// `let pts = buf[start..][..len].as_chunks::<{ width }>().0;` (four
    /// arguments, the last a constant): a buffer of rows.
    Rows,
    /// `let s = (a, b);` (one argument per element): a tuple variable.
    Tuple(usize),
}

/// A function called from differentiated code that has a derivative of its
/// own: its split API `f_forward` is called in its place (in `_jvp`, its
/// `f_jvp`).
#[derive(Clone, Debug)]
pub(crate) struct UserCall {
    /// The path as the user wrote it (`f`, `module::f`).
    pub(crate) path: syn::Path,
    /// What the generated call appends to the path's last name: `_forward`
    /// or `_jvp`.
    pub(crate) suffix: &'static str,
    /// `ad_runtime::checkpoint(g(x))`: in a loop, the adjoint makes the call
    /// again for its pullback, from its arguments saved on a tape, rather
    /// than saving the pullback (see `reverse/needs.rs`).
    pub(crate) checkpoint: bool,
    /// A call returning a buffer, in a loop or a branch: its output is moved
    /// into the first argument, a buffer made in the body
    /// ([`NewBuf::Output`], passed `&mut`; in `_jvp` the tangent follows
    /// it), and the call's value is `((), pullback)`. One buffer per call
    /// for the whole function, as for the buffers a loop makes.
    pub(crate) into: bool,
    /// Some argument is a buffer of rows passed flat, as the twins take it
    /// (not as the function itself does): the call cannot be [`plain`].
    ///
    /// [`plain`]: UserCall::plain
    pub(crate) passes_rows: bool,
    /// The call depends on no active input (see `analysis::plain_calls`):
    /// it calls the function itself, as written, and its pullback is `()`.
    /// The callee needs no derivative of its own (`scale_of(1.5)`).
    pub(crate) plain: bool,
}

/// How a new local buffer is made.
#[derive(Clone, Debug)]
pub(crate) enum NewBuf {
    /// `vec![fill; len]`.
    Vec { fill: Value, len: Value },
    /// `[fill; len]`, with the length as the user wrote it (a constant).
    Array { fill: Value, len: TokenStream },
    /// `Vec::with_capacity(capacity)`, or `Vec::new()`.
    Empty { capacity: Option<Value> },
    /// A buffer of the type a call returns, holding the output of that call
    /// in a loop or a branch (see [`UserCall::into`]); empty until then.
    Output,
}

impl NewBuf {
    fn operands(&self) -> Vec<Value> {
        match self {
            NewBuf::Vec { fill, len } => vec![*fill, *len],
            NewBuf::Array { fill, .. } => vec![*fill],
            NewBuf::Empty { capacity } => capacity.iter().copied().collect(),
            NewBuf::Output => Vec::new(),
        }
    }

    fn map(&mut self, map: &mut impl FnMut(Value) -> Value) {
        match self {
            NewBuf::Vec { fill, len } => {
                *fill = map(*fill);
                *len = map(*len);
            }
            NewBuf::Array { fill, .. } => *fill = map(*fill),
            NewBuf::Empty { capacity } => {
                if let Some(capacity) = capacity {
                    *capacity = map(*capacity);
                }
            }
            NewBuf::Output => {}
        }
    }
}

/// A `for` or a `while`, seen alike: what the passes need of any loop.
pub(crate) struct Loop<'a> {
    /// The indices a `for` visits; `None` for a `while`.
    pub(crate) range: Option<&'a LoopRange>,
    pub(crate) inits: &'a [Value],
    pub(crate) body: &'a Region,
}

impl<'a> Loop<'a> {
    /// The body's arguments for the carried values (`arg 1..=k`).
    pub(crate) fn args(&self) -> &'a [Value] {
        &self.body.insts[1..=self.inits.len()]
    }

    /// The carried values the body yields for the next iteration.
    pub(crate) fn next(&self) -> &'a [Value] {
        &self.body.yields[self.body.yields.len() - self.inits.len()..]
    }

    /// Whether a `while` goes on: the value its body yields first.
    pub(crate) fn go_on(&self) -> Option<Value> {
        self.range.is_none().then(|| self.body.yields[0])
    }
}

/// The integers a `for` loop visits: `start..end` or `start..=end`, every
/// `step`-th one, in reverse if `reversed`.
#[derive(Clone, Debug)]
pub(crate) struct LoopRange {
    pub(crate) start: Value,
    pub(crate) end: Value,
    pub(crate) inclusive: bool,
    pub(crate) step: Option<Value>,
    pub(crate) reversed: bool,
    /// `#[checkpoint(…)]` on the loop: its adjoint keeps a few of its states
    /// and runs its steps again, rather than taping every iteration.
    pub(crate) checkpoint: Option<Checkpoint>,
}

/// How a checkpointed loop is reversed (see `emit/checkpoint.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checkpoint {
    /// How many loop states may be kept, or how many bytes they may take:
    /// an integer computed before the loop.
    pub(crate) budget: Budget,
    /// On an adjoint loop: the primal loop it reverses. Not an operand (the
    /// loop does not read its value), but renumbered with the values.
    pub(crate) reverses: Option<Value>,
}

/// What `#[checkpoint(…)]` limits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Budget {
    /// `snapshots = k`: at most `k` saved states.
    Snapshots(Value),
    /// `memory = "64 MiB"`: saved states of at most that many bytes in all.
    Bytes(Value),
}

impl Checkpoint {
    fn map(&mut self, map: &mut impl FnMut(Value) -> Value) {
        match &mut self.budget {
            Budget::Snapshots(value) | Budget::Bytes(value) => *value = map(*value),
        }
        if let Some(primal) = &mut self.reverses {
            *primal = map(*primal);
        }
    }
}

impl Budget {
    pub(crate) fn value(self) -> Value {
        match self {
            Budget::Snapshots(value) | Budget::Bytes(value) => value,
        }
    }
}

impl LoopRange {
    fn operands(&self) -> Vec<Value> {
        let mut operands = vec![self.start, self.end];
        operands.extend(self.step);
        operands.extend(self.checkpoint.map(|checkpoint| checkpoint.budget.value()));
        operands
    }

    fn map(&mut self, map: &mut impl FnMut(Value) -> Value) {
        self.start = map(self.start);
        self.end = map(self.end);
        if let Some(step) = &mut self.step {
            *step = map(*step);
        }
        if let Some(checkpoint) = &mut self.checkpoint {
            checkpoint.map(map);
        }
    }

    /// The same range, for a tape's capacity: without the checkpoint.
    pub(crate) fn visits(&self) -> LoopRange {
        LoopRange {
            checkpoint: None,
            ..self.clone()
        }
    }
}

impl Inst {
    /// Replaces each operand by `map(operand)` (for an `if`, its condition).
    pub(crate) fn map_operands(&mut self, mut map: impl FnMut(Value) -> Value) {
        match self {
            Inst::Param(_) | Inst::Const(_) | Inst::Arg(_) | Inst::TapeNew { capacity: None } => {}
            Inst::TapeNew {
                capacity: Some(range),
            } => range.map(&mut map),
            Inst::For { range, inits, .. } => {
                range.map(&mut map);
                for init in inits {
                    *init = map(*init);
                }
            }
            Inst::While {
                inits, checkpoint, ..
            } => {
                for init in inits {
                    *init = map(*init);
                }
                if let Some(checkpoint) = checkpoint {
                    checkpoint.map(&mut map);
                }
            }
            Inst::Push(tape, value) => {
                *tape = map(*tape);
                *value = map(*value);
            }
            Inst::TapeReserve { tape, range } => {
                *tape = map(*tape);
                range.map(&mut map);
            }
            Inst::Pop(tape) => *tape = map(*tape),
            Inst::Unary(_, arg)
            | Inst::Cast(arg, _)
            | Inst::Detach(arg)
            | Inst::Some(arg)
            | Inst::Keep(arg, None)
            | Inst::Field { base: arg, .. }
            | Inst::Extract(arg, _)
            | Inst::If { cond: arg, .. } => *arg = map(*arg),
            Inst::Keep(pullback, Some(out)) => {
                *pullback = map(*pullback);
                *out = map(*out);
            }
            Inst::FieldUpdate { base, value, .. } => {
                *base = map(*base);
                *value = map(*value);
            }
            Inst::Binary(_, lhs, rhs) => {
                *lhs = map(*lhs);
                *rhs = map(*rhs);
            }
            Inst::Prim(_, args)
            | Inst::Pullback(_, args)
            | Inst::Curvature(_, args)
            | Inst::Tuple(args)
            | Inst::Call(_, args)
            | Inst::Effect { args, .. } => {
                for arg in args {
                    *arg = map(*arg);
                }
            }
            Inst::Load(buf, index) => {
                *buf = map(*buf);
                *index = map(*index);
            }
            Inst::Store(buf, index, value) | Inst::Update(_, buf, index, value) => {
                *buf = map(*buf);
                *index = map(*index);
                *value = map(*value);
            }
            Inst::PushElem(buf, value) => {
                *buf = map(*buf);
                *value = map(*value);
            }
            Inst::Len(buf) | Inst::CloneBuf { src: buf, .. } | Inst::PopShadow(buf) => {
                *buf = map(*buf);
            }
            Inst::Slice { buf, start, len } => {
                *buf = map(*buf);
                *start = map(*start);
                *len = map(*len);
            }
            Inst::NewBuf(new) => new.map(&mut map),
            Inst::Shadow { of } => *of = map(*of),
            Inst::SeedCopy { len, seed } => {
                *len = map(*len);
                *seed = map(*seed);
            }
            Inst::Forward { args, kept, .. } => {
                for (arg, _) in args {
                    *arg = map(*arg);
                }
                if let Some(kept) = kept {
                    kept.value = map(kept.value);
                    if let Some(out) = &mut kept.out {
                        *out = map(*out);
                    }
                }
            }
            Inst::Apply { pullback, args } => {
                *pullback = map(*pullback);
                for (arg, _) in args {
                    *arg = map(*arg);
                }
            }
        }
    }

    /// The regions nested directly in the instruction, to change them: an
    /// `if`'s two branches, a loop's body.
    pub(crate) fn regions_mut(&mut self) -> Vec<&mut Region> {
        match self {
            Inst::If { then, els, .. } => vec![then, els],
            Inst::For { body, .. } | Inst::While { body, .. } => vec![body],
            _ => Vec::new(),
        }
    }

    /// The instruction as a loop, if it is one.
    pub(crate) fn as_loop(&self) -> Option<Loop<'_>> {
        match self {
            Inst::For { range, inits, body } => Some(Loop {
                range: Some(range),
                inits,
                body,
            }),
            Inst::While { inits, body, .. } => Some(Loop {
                range: None,
                inits,
                body,
            }),
            _ => None,
        }
    }

    /// Whether the instruction has an effect (on a tape), so that it must stay
    /// where it is even when its value is unused.
    pub(crate) fn is_effect(&self) -> bool {
        match self {
            Inst::TapeNew { .. }
            | Inst::TapeReserve { .. }
            | Inst::Push(..)
            | Inst::Pop(_)
            | Inst::Store(..)
            | Inst::Update(..)
            | Inst::PushElem(..)
            | Inst::PopShadow(_)
            | Inst::FieldUpdate { .. }
            | Inst::Effect { .. } => true,
            Inst::Call(callee, _) => callee.modes().contains(&Mode::Mut),
            Inst::Forward { .. } | Inst::Apply { .. } => !self.written().is_empty(),
            _ => false,
        }
    }

    /// The buffers whose contents the instruction changes.
    pub(crate) fn written(&self) -> Vec<Value> {
        match self {
            Inst::Store(buf, ..)
            | Inst::Update(_, buf, ..)
            | Inst::PushElem(buf, _)
            | Inst::PopShadow(buf) => vec![*buf],
            Inst::Call(callee, args) => callee
                .modes()
                .iter()
                .zip(args)
                .filter(|(mode, _)| **mode == Mode::Mut)
                .map(|(_, &arg)| arg)
                .collect(),
            Inst::Forward { args, .. } | Inst::Apply { args, .. } => args
                .iter()
                .filter(|(_, mode)| *mode == Mode::Mut)
                .map(|&(arg, _)| arg)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The operands, in order. The values used inside an `if`'s regions are not
    /// operands of the `if`: see [`Function::uses`].
    pub(crate) fn operands(&self) -> Vec<Value> {
        match self {
            Inst::If { cond, .. } => vec![*cond],
            Inst::Param(_) | Inst::Const(_) | Inst::Arg(_) => Vec::new(),
            Inst::TapeNew { capacity } => capacity
                .as_ref()
                .map(LoopRange::operands)
                .unwrap_or_default(),
            Inst::For { range, inits, .. } => {
                let mut operands = range.operands();
                operands.extend(inits);
                operands
            }
            Inst::While {
                inits, checkpoint, ..
            } => {
                let mut operands = inits.clone();
                operands.extend(checkpoint.map(|checkpoint| checkpoint.budget.value()));
                operands
            }
            Inst::Push(tape, value) => vec![*tape, *value],
            Inst::TapeReserve { tape, range } => {
                let mut operands = vec![*tape];
                operands.extend(range.operands());
                operands
            }
            Inst::Pop(tape) => vec![*tape],
            Inst::Unary(_, arg)
            | Inst::Cast(arg, _)
            | Inst::Detach(arg)
            | Inst::Some(arg)
            | Inst::Field { base: arg, .. }
            | Inst::Extract(arg, _) => vec![*arg],
            Inst::Keep(pullback, out) => {
                let mut operands = vec![*pullback];
                operands.extend(*out);
                operands
            }
            Inst::FieldUpdate { base, value, .. } => vec![*base, *value],
            Inst::Binary(_, lhs, rhs) => vec![*lhs, *rhs],
            Inst::Prim(_, args)
            | Inst::Pullback(_, args)
            | Inst::Curvature(_, args)
            | Inst::Tuple(args)
            | Inst::Call(_, args)
            | Inst::Effect { args, .. } => args.clone(),
            Inst::Load(buf, index) => vec![*buf, *index],
            Inst::Store(buf, index, value) | Inst::Update(_, buf, index, value) => {
                vec![*buf, *index, *value]
            }
            Inst::PushElem(buf, value) => vec![*buf, *value],
            Inst::Len(buf) | Inst::CloneBuf { src: buf, .. } | Inst::PopShadow(buf) => vec![*buf],
            Inst::Slice { buf, start, len } => vec![*buf, *start, *len],
            Inst::NewBuf(new) => new.operands(),
            Inst::Shadow { of } => vec![*of],
            Inst::SeedCopy { len, seed } => vec![*len, *seed],
            Inst::Forward { args, kept, .. } => {
                let mut operands: Vec<Value> = args.iter().map(|&(arg, _)| arg).collect();
                if let Some(kept) = kept {
                    operands.push(kept.value);
                    operands.extend(kept.out);
                }
                operands
            }
            Inst::Apply { pullback, args } => {
                let mut operands = vec![*pullback];
                operands.extend(args.iter().map(|&(arg, _)| arg));
                operands
            }
        }
    }
}

/// What the adjoint's call, made again for its pullback, has of the
/// primal's: `__ad::rebuilt(value, (args…), out, || f_forward_all(args…))`
/// builds a custom rule's pullback from `value` (an [`Inst::Keep`] popped
/// from its tape), the arguments taken by value and the output (`out`, or
/// `()` if the `keep` holds it), and makes the call again for any other.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kept {
    pub(crate) value: Value,
    pub(crate) out: Option<Value>,
}

#[derive(Clone, Debug)]
pub(crate) struct InstData {
    pub(crate) inst: Inst,
    pub(crate) ty: Ty,
}

/// How a parameter of the generated function takes part in differentiation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Role {
    /// A float whose adjoint is returned.
    Active,
    /// Passed through; no adjoint.
    Constant,
    /// The cotangent of the output, last parameter of `_vjp`.
    Seed,
    /// The shadow of an active buffer parameter, right after it in `_vjp`.
    Shadow,
}

#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub(crate) value: Value,
    pub(crate) name: String,
    pub(crate) role: Role,
    /// A buffer taken by `&mut`: its final contents are an output.
    pub(crate) mutable: bool,
}

/// An ordered list of instructions, and the values it yields to the
/// instruction that owns it (none for the function body).
#[derive(Clone, Debug, Default)]
pub(crate) struct Region {
    pub(crate) insts: Vec<Value>,
    pub(crate) yields: Vec<Value>,
}

/// Where a value is defined: the function body, or a branch of an `if`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Place {
    Body,
    /// Region `index` of `owner`: for an `if`, 0 is `then` and 1 is `else`; a
    /// loop has one region, its body.
    In(Value, u8),
}

#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub(crate) name: String,
    pub(crate) insts: Vec<InstData>,
    pub(crate) body: Region,
    pub(crate) params: Vec<Param>,
    pub(crate) ret: Value,
    /// Side table: the user's name for a value, if it has one.
    pub(crate) names: Vec<Option<String>>,
    /// `T` of a function generic over `T: Float`: the type of its `Float`
    /// values (see [`Scalar::Float`]).
    pub(crate) float_param: Option<syn::Ident>,
    /// In vector forward mode (`_jvp_lanes`), the name of its parameter
    /// `const K: usize`, the number of tangents each [`Ty::Lanes`] holds.
    pub(crate) lanes: Option<syn::Ident>,
    /// Side table: where a value comes from in the user's code.
    pub(crate) spans: Vec<Span>,
    /// Side table: for an adjoint value, the primal value whose gradient it is.
    pub(crate) adjoint_of: Vec<Option<Value>>,
    /// Paths the user wrote to functions of the runtime (`detach`,
    /// `ad_runtime::dot`), with the runtime function each must name: the
    /// generated code checks at compile time that it does, since a user's own
    /// `detach` or module `ad_runtime` would otherwise get our pullback.
    pub(crate) runtime_paths: Vec<(TokenStream, &'static str)>,
    /// The functions with a derivative of their own that the body calls
    /// (see [`Inst::Forward`]).
    pub(crate) user_calls: Vec<UserCall>,
    /// Items the body declares that generated functions declare too, as
    /// written: `use std::f64::consts::PI;`.
    pub(crate) items: Vec<TokenStream>,
}

impl Function {
    pub(crate) fn inst(&self, value: Value) -> &Inst {
        &self.insts[value.index()].inst
    }

    pub(crate) fn ty(&self, value: Value) -> &Ty {
        &self.insts[value.index()].ty
    }

    pub(crate) fn name(&self, value: Value) -> Option<&str> {
        self.names[value.index()].as_deref()
    }

    pub(crate) fn span(&self, value: Value) -> Span {
        self.spans[value.index()]
    }

    /// The IR text form, for snapshots and for panics on internal errors.
    pub(crate) fn to_text(&self) -> String {
        print::function(self)
    }

    /// The regions nested directly in `value`'s instruction.
    pub(crate) fn regions(&self, value: Value) -> Vec<&Region> {
        match self.inst(value) {
            Inst::If { then, els, .. } => vec![then, els],
            Inst::For { body, .. } | Inst::While { body, .. } => vec![body],
            _ => Vec::new(),
        }
    }

    /// Calls `visit(place, value)` for every instruction, in program order,
    /// nested regions right after the instruction that owns them.
    pub(crate) fn walk(&self, visit: &mut impl FnMut(Place, Value)) {
        self.walk_region(&self.body, Place::Body, visit);
    }

    fn walk_region(&self, region: &Region, place: Place, visit: &mut impl FnMut(Place, Value)) {
        for &value in &region.insts {
            visit(place, value);
            for (index, inner) in self.regions(value).into_iter().enumerate() {
                let branch = u8::try_from(index).expect("at most two regions");
                self.walk_region(inner, Place::In(value, branch), visit);
            }
        }
    }

    /// Whether `value`'s instruction, or one nested in its regions, is an
    /// effect.
    pub(crate) fn has_effects(&self, value: Value) -> bool {
        self.inst(value).is_effect()
            || self
                .regions(value)
                .into_iter()
                .any(|region| region.insts.iter().any(|&inner| self.has_effects(inner)))
    }

    /// Adds an instruction to the arena, with no name, without placing it in
    /// any region; the caller places it.
    pub(crate) fn push_detached(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        let value = Value(u32::try_from(self.insts.len()).expect("fewer than 2^32 values"));
        self.insts.push(InstData { inst, ty });
        self.names.push(None);
        self.spans.push(span);
        self.adjoint_of.push(None);
        value
    }

    /// Every value defined inside `value`'s regions, however deep, in program
    /// order.
    pub(crate) fn nested(&self, value: Value) -> Vec<Value> {
        let mut out = Vec::new();
        for region in self.regions(value) {
            self.walk_region(region, Place::Body, &mut |_, inner| out.push(inner));
        }
        out
    }

    /// Replaces every use of a key of `replace` (as an operand, a region's
    /// yield, or the returned value) by its value.
    pub(crate) fn replace_uses(&mut self, replace: &std::collections::HashMap<Value, Value>) {
        let map = |value: Value| replace.get(&value).copied().unwrap_or(value);
        for data in &mut self.insts {
            data.inst.map_operands(map);
            for region in data.inst.regions_mut() {
                for yielded in &mut region.yields {
                    *yielded = map(*yielded);
                }
            }
        }
        self.ret = map(self.ret);
    }

    /// The value of an integer literal (`3`, `2usize`, `1_000`), if `value`
    /// is one.
    pub(crate) fn int_literal(&self, value: Value) -> Option<u128> {
        let Inst::Const(Const::Lit(lit)) = self.inst(value) else {
            return None;
        };
        let text = lit.to_string().replace('_', "");
        let digits = text.split(|c: char| !c.is_ascii_digit()).next()?;
        let rest = &text[digits.len()..];
        let suffix = rest.is_empty() || rest.starts_with(['u', 'i']);
        (suffix && !digits.is_empty())
            .then(|| digits.parse().ok())
            .flatten()
    }

    /// The buffers behind `bufs`: a sub-slice stands for the buffer it is
    /// a range of. What an instruction writes is `func.bases(inst.written())`.
    pub(crate) fn bases(&self, mut bufs: Vec<Value>) -> Vec<Value> {
        for buf in &mut bufs {
            while let Inst::Slice { buf: base, .. } = self.inst(*buf) {
                *buf = *base;
            }
        }
        bufs
    }

    /// Whether a buffer is a parameter, so a reference (`xs`, not `&xs`).
    pub(crate) fn is_param(&self, value: Value) -> bool {
        matches!(self.inst(value), Inst::Param(_))
    }

    /// The region of a place, to change it.
    pub(crate) fn region_mut(&mut self, place: Place) -> &mut Region {
        match place {
            Place::Body => &mut self.body,
            Place::In(owner, index) => match &mut self.insts[owner.index()].inst {
                Inst::If { then, .. } if index == 0 => then,
                Inst::If { els, .. } => els,
                Inst::For { body, .. } | Inst::While { body, .. } => body,
                _ => unreachable!("only `if`s and loops have regions"),
            },
        }
    }

    /// For each value, the `extract`s that read its components, with the
    /// component: the results of an `if` or a loop, or of a pullback.
    pub(crate) fn extracts(&self) -> Vec<Vec<(usize, Value)>> {
        let mut extracts = vec![Vec::new(); self.insts.len()];
        self.walk(&mut |_, value| {
            if let Inst::Extract(tuple, index) = self.inst(value) {
                extracts[tuple.index()].push((*index as usize, value));
            }
        });
        extracts
    }

    /// Where each value is defined.
    pub(crate) fn places(&self) -> Vec<Place> {
        let mut places = vec![Place::Body; self.insts.len()];
        self.walk(&mut |place, value| places[value.index()] = place);
        places
    }

    /// Every use of a value: as an operand, as a region's yield, or returned,
    /// with the place of the use.
    pub(crate) fn uses(&self) -> Vec<Vec<Place>> {
        let mut uses = vec![Vec::new(); self.insts.len()];
        self.walk(&mut |place, value| {
            for operand in self.inst(value).operands() {
                uses[operand.index()].push(place);
            }
            for (index, region) in self.regions(value).into_iter().enumerate() {
                let branch = Place::In(value, u8::try_from(index).expect("at most two regions"));
                for yielded in &region.yields {
                    uses[yielded.index()].push(branch);
                }
            }
        });
        uses[self.ret.index()].push(Place::Body);
        uses
    }
}
