//! An interpreter for the IR, to test the passes without rustc.
//!
//! [`run`] executes a [`Function`] — the primal IR or the `_vjp` IR — the way
//! the code `emit.rs` generates for it would run, and reports the returned
//! value and the final contents of the buffer parameters. It never panics on
//! malformed IR or arguments: every problem is an `Err` naming the
//! instruction.
//!
//! Semantics, and where they differ from compiled code:
//!
//! - Every float is an `f64`, whatever the IR type (`f32` values, literals and
//!   casts are computed in `f64`; `f32::EPSILON` and the other `f32` constants
//!   are the `f32` values, widened).
//! - Every integer is an `i128`, whatever its Rust type: `+ - *` that overflow
//!   `i128`, a division by zero, or a shift by a negative amount or `≥ 128` are
//!   errors; `/` and `%` truncate like Rust's. `as` casts to an integer type
//!   wrap (from an integer) or saturate (from a float) to that type like Rust's
//!   `as`, so `x as u8` is exact; the arithmetic between casts is not narrowed
//!   (`0usize - 1` is `-1`, not an overflow).
//! - `&&` and `||` are [`BinOp::And`]/[`BinOp::Or`] of operands the IR has
//!   already evaluated: nothing short-circuits.
//! - Buffers are handles to shared storage: a parameter, its element writes
//!   and the runtime calls that take it `&mut` all change one buffer, whose
//!   final contents [`Outcome::params`] reports. A buffer is a `Vec` (it can
//!   grow and shrink) when made by `vec![…]`, `Vec::new`, `to_vec` or from a
//!   `&mut` parameter (which may be a `&mut Vec<T>`); an array, a `&[T]`
//!   parameter and a shadow parameter (`&mut [T]`) are not, and `push` or
//!   `pop_shadow` on them is an error.
//! - Runtime functions (`ad_runtime::rules`, `ad_runtime::linalg`) are called
//!   for real; a panic in one (a length mismatch) becomes an error.
//! - A `while` runs like the emitted
//!   `loop { body; trips += 1; carried = next; if !go_on { break; } }`: its
//!   index (`arg 0`) is the number of iterations before this one, and its
//!   result is the final carried values, then `trips`.
//! - Each instruction executed, and each loop iteration, is one step: a run
//!   that takes more than `max_steps` is an error, so a runaway `while` ends.

use std::panic::{self, AssertUnwindSafe};

use crate::ir::{
    BinOp, Callee, Const, Function, Inst, LoopRange, Mode, NewBuf, Prim, Read, Region, Scalar, Ty,
    UnOp, Value,
};
use ad_runtime::{__private, linalg, rules};
use proc_macro2::TokenStream;

/// The longest buffer the interpreter makes (`vec![x; n]`, `[x; N]`): longer is
/// an error rather than an allocation failure.
const MAX_LEN: usize = 1 << 24;

/// An argument of a function run by the interpreter, in the order of
/// [`Function::params`] (for a `_vjp` function: the user's parameters, then
/// the shadows of the active buffers, then the seed, if any).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arg {
    /// For an `f32` or `f64` parameter (or seed).
    Float(f64),
    /// For a parameter of any integer type.
    Int(i128),
    Bool(bool),
    /// For a float buffer parameter: `&[f64]`, `&Vec<f64>`, `&mut [f64]`,
    /// `&[f64; N]`, a shadow, or the seed of a `Vec` or array output.
    Buf(Vec<f64>),
    /// For an integer buffer parameter (`&[usize]`).
    IntBuf(Vec<i128>),
    /// For the seed of a tuple output.
    Tuple(Vec<Arg>),
}

/// A value computed by the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Float(f64),
    Int(i128),
    Bool(bool),
    /// The results of an `if` or a loop, a pullback of several inputs, a tuple.
    Tuple(Vec<Val>),
    /// The value of an effect (a store, a push, a call returning nothing), and
    /// the placeholder `const zero` of a type the IR does not know (never
    /// read by correct IR).
    Unit,
    /// A handle to a buffer of the machine; never in an [`Outcome`].
    Buf(usize),
    /// A sub-slice `&buf[start..][..len]` of a buffer of the machine (its
    /// own elements, written through); never in an [`Outcome`].
    View {
        buf: usize,
        start: usize,
        len: usize,
    },
    /// A handle to a tape of the machine; never in an [`Outcome`].
    Tape(usize),
    /// The contents of a float buffer, in an [`Outcome`]'s returned value.
    Floats(Vec<f64>),
    /// The contents of an integer buffer, in an [`Outcome`]'s returned value.
    Ints(Vec<i128>),
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Outcome {
    /// The returned value, with each buffer in it replaced by its contents
    /// ([`Val::Floats`] or [`Val::Ints`]). A function returning `()` returns
    /// `Val::Tuple(vec![])`.
    pub(crate) ret: Val,
    /// The final contents of each float buffer parameter, in parameter order;
    /// `None` for the other parameters (integer buffers included).
    pub(crate) params: Vec<Option<Vec<f64>>>,
}

/// Runs `func` on `args`, in at most `max_steps` steps (see the module
/// documentation).
///
/// # Errors
///
/// On anything malformed: a wrong number or kind of arguments, a value read
/// before it is defined or of the wrong kind, an index out of bounds, a tape
/// or shadow popped empty, an unknown constant, an integer overflow, a panic in
/// a runtime function, more than `max_steps` steps.
pub(crate) fn run(func: &Function, args: &[Arg], max_steps: u64) -> Result<Outcome, String> {
    if args.len() != func.params.len() {
        return Err(format!(
            "`{}` takes {} arguments, got {}",
            func.name,
            func.params.len(),
            args.len()
        ));
    }
    let mut machine = Machine {
        func,
        vals: vec![None; func.insts.len()],
        params: Vec::new(),
        frames: Vec::new(),
        bufs: Vec::new(),
        tapes: Vec::new(),
        steps: 0,
        max_steps,
    };
    for (param, arg) in func.params.iter().zip(args) {
        let val = machine
            .bind(func.ty(param.value), arg, param.mutable)
            .map_err(|problem| format!("parameter `{}`: {problem}", param.name))?;
        machine.params.push(val);
    }
    machine.exec(&func.body).map_err(Fault::into_message)?;
    let ret = machine.get(func.ret).and_then(|ret| machine.resolve(ret));
    let ret = ret.map_err(|problem| format!("returned value %{}: {problem}", func.ret.0))?;
    let params = machine
        .params
        .iter()
        .map(|param| match param {
            Val::Buf(id) => match &machine.bufs[*id].data {
                Data::Floats(xs) => Some(xs.clone()),
                Data::Ints(_) => None,
            },
            _ => None,
        })
        .collect();
    Ok(Outcome { ret, params })
}

/// The elements of a buffer.
#[derive(Clone, Debug)]
enum Data {
    Floats(Vec<f64>),
    Ints(Vec<i128>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Floats(xs) => xs.len(),
            Data::Ints(xs) => xs.len(),
        }
    }
}

struct Buffer {
    data: Data,
    /// Whether it is a `Vec`, which `push` and `pop_shadow` may resize.
    growable: bool,
}

/// Why a run failed: a problem of one instruction, not yet located, or a
/// message already naming the instruction (from a nested region).
enum Fault {
    Here(String),
    Located(String),
}

impl From<String> for Fault {
    fn from(problem: String) -> Self {
        Fault::Here(problem)
    }
}

impl Fault {
    fn into_message(self) -> String {
        match self {
            Fault::Here(message) | Fault::Located(message) => message,
        }
    }
}

/// The state of a run.
struct Machine<'f> {
    func: &'f Function,
    /// The value of each instruction, by [`Value::index`]; `None` before it
    /// runs, and again once the region defining it is left.
    vals: Vec<Option<Val>>,
    /// The arguments, by parameter index.
    params: Vec<Val>,
    /// The arguments of the loop bodies running, innermost last.
    frames: Vec<Vec<Val>>,
    bufs: Vec<Buffer>,
    tapes: Vec<Vec<Val>>,
    steps: u64,
    max_steps: u64,
}

impl Machine<'_> {
    /// Runs a region's instructions, then returns what it yields.
    fn exec(&mut self, region: &Region) -> Result<Vec<Val>, Fault> {
        for &value in &region.insts {
            let val = match self.eval_inst(value) {
                Ok(val) => val,
                Err(Fault::Here(problem)) => {
                    let inst = self.func.insts.get(value.index()).map(|data| &data.inst);
                    return Err(Fault::Located(format!(
                        "%{} ({}): {problem}",
                        value.0,
                        inst.map_or("no instruction", inst_name)
                    )));
                }
                Err(located) => return Err(located),
            };
            self.vals[value.index()] = Some(val);
        }
        let yields = region
            .yields
            .iter()
            .map(|&value| self.get(value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|problem| format!("yield: {problem}"))?;
        Ok(yields)
    }

    /// Runs a nested region (of an `if` or a loop), whose values are invisible
    /// once it is left.
    fn exec_nested(&mut self, region: &Region) -> Result<Vec<Val>, Fault> {
        let yields = self.exec(region)?;
        for &value in &region.insts {
            self.vals[value.index()] = None;
        }
        Ok(yields)
    }

    /// Runs one iteration of a loop body with these arguments.
    fn iterate(
        &mut self,
        body: &Region,
        index: i128,
        carried: Vec<Val>,
    ) -> Result<Vec<Val>, Fault> {
        self.tick()?;
        let mut frame = vec![Val::Int(index)];
        frame.extend(carried);
        self.frames.push(frame);
        let yields = self.exec_nested(body);
        self.frames.pop();
        yields
    }

    fn tick(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return Err(format!("more than {} steps", self.max_steps));
        }
        Ok(())
    }

    fn eval_inst(&mut self, value: Value) -> Result<Val, Fault> {
        self.tick()?;
        let func = self.func;
        let data = func
            .insts
            .get(value.index())
            .ok_or_else(|| format!("no instruction %{}", value.0))?;
        let val = match &data.inst {
            Inst::Param(index) => self
                .params
                .get(*index as usize)
                .cloned()
                .ok_or_else(|| format!("no parameter {index}"))?,
            Inst::Const(constant) => self::constant(constant, &data.ty)?,
            Inst::Unary(op, arg) => unary(*op, self.get(*arg)?)?,
            Inst::Binary(op, lhs, rhs) => binary(*op, self.get(*lhs)?, self.get(*rhs)?)?,
            Inst::Cast(arg, to) => cast(self.get(*arg)?, *to)?,
            Inst::Prim(prim, args) => self::prim(*prim, &self.gets(args)?)?,
            Inst::Pullback(prim, args) => pullback(*prim, &self.gets(args)?)?,
            // `_hvp` is checked through rustc (tests/second_order.rs), not here.
            Inst::Curvature(..) => {
                return Err(Fault::Here(
                    "`_hvp`'s curvature is not interpreted".to_owned(),
                ));
            }
            // `None` is the placeholder `Val::Unit`, never read.
            Inst::Detach(arg) | Inst::Some(arg) => self.get(*arg)?,
            // A sort's order (`__ad::sort_order`, a `Vec<usize>`): generated
            // programs sort by `f64::total_cmp` only, so that is the
            // comparison here. The sorted buffer is the last binding.
            Inst::Effect { args, .. } if data.ty == Ty::Buf(Box::new(Ty::Int)) => {
                let sorted = *args.last().ok_or_else(|| "a sort of nothing".to_owned())?;
                let floats = self.contents(sorted)?;
                let mut order: Vec<usize> = (0..floats.len()).collect();
                order.sort_by(|&i, &j| floats[i].total_cmp(&floats[j]));
                let order = order.into_iter().map(|i| i as i128).collect();
                self.alloc(Data::Ints(order), true)
            }
            // A function of integers run as written (`usize::rem_euclid(a,
            // b)`, the corpus's `wrap(a, b)`): the generated programs' few.
            Inst::Effect { mac, args } if data.ty == Ty::Int => {
                let ints = self
                    .gets(args)?
                    .iter()
                    .map(Val::int)
                    .collect::<Result<Vec<_>, _>>()?;
                let tokens = mac.tokens.to_string();
                let name = tokens
                    .split('(')
                    .next()
                    .and_then(|path| path.rsplit("::").next())
                    .map(str::trim)
                    .unwrap_or_default();
                match (name, ints.as_slice()) {
                    ("rem_euclid" | "wrap", [a, b]) if *b != 0 => Val::Int(a.rem_euclid(*b)),
                    ("min", [a, b]) => Val::Int(*a.min(b)),
                    ("max", [a, b]) => Val::Int(*a.max(b)),
                    _ => {
                        return Err(Fault::Here(format!(
                            "the integer function `{tokens}` is not interpreted"
                        )));
                    }
                }
            }
            // Printing and assertions: their arguments exist, nothing else.
            Inst::Effect { args, .. } => {
                self.gets(args)?;
                Val::Unit
            }
            Inst::Tuple(elems) => Val::Tuple(self.gets(elems)?),
            Inst::Extract(tuple, index) => match self.get(*tuple)? {
                Val::Tuple(mut elems) if (*index as usize) < elems.len() => {
                    elems.swap_remove(*index as usize)
                }
                other => Err(format!("no field {index} in {other:?}"))?,
            },
            Inst::If { cond, then, els } => {
                let region = if self.get(*cond)?.bool()? { then } else { els };
                Val::Tuple(self.exec_nested(region)?)
            }
            Inst::For { range, inits, body } => {
                let mut carried = self.gets(inits)?;
                for index in self.indices(range)? {
                    carried = self.iterate(body, index, carried)?;
                    if carried.len() != inits.len() {
                        Err(format!("the body yields {} values", carried.len()))?;
                    }
                }
                Val::Tuple(carried)
            }
            Inst::While { inits, body, .. } => {
                let mut carried = self.gets(inits)?;
                let mut trips = 0;
                loop {
                    let mut yields = self.iterate(body, trips, carried)?;
                    if yields.len() != inits.len() + 1 {
                        Err(format!("the body yields {} values", yields.len()))?;
                    }
                    let go_on = yields.remove(0).bool()?;
                    trips += 1;
                    carried = yields;
                    if !go_on {
                        break;
                    }
                }
                carried.push(Val::Int(trips));
                Val::Tuple(carried)
            }
            Inst::Arg(index) => self
                .frames
                .last()
                .and_then(|frame| frame.get(*index as usize))
                .cloned()
                .ok_or_else(|| format!("no loop argument {index} here"))?,
            Inst::TapeNew { capacity } => {
                // The emitted code evaluates the range for its length.
                if let Some(range) = capacity {
                    drop(self.indices(range)?);
                }
                self.tapes.push(Vec::new());
                Val::Tape(self.tapes.len() - 1)
            }
            Inst::TapeReserve { range, .. } => {
                // The emitted code evaluates the range for its length.
                drop(self.indices(range)?);
                Val::Unit
            }
            Inst::Push(tape, pushed) => {
                let pushed = self.get(*pushed)?;
                let tape = self.get(*tape)?.tape()?;
                self.tapes[tape].push(pushed);
                Val::Unit
            }
            Inst::Pop(tape) => {
                let tape = self.get(*tape)?.tape()?;
                self.tapes[tape]
                    .pop()
                    .ok_or_else(|| "tape popped empty".to_owned())?
            }
            Inst::Load(buf, index) => {
                let (buf, index) = self.element(*buf, *index)?;
                let data = &self.bufs[buf].data;
                let elem = match data {
                    Data::Floats(xs) => xs.get(index).copied().map(Val::Float),
                    Data::Ints(xs) => xs.get(index).copied().map(Val::Int),
                };
                elem.ok_or_else(|| out_of_bounds(index, data))?
            }
            Inst::Store(buf, index, stored) => {
                let stored = self.get(*stored)?;
                let (buf, index) = self.element(*buf, *index)?;
                let data = &mut self.bufs[buf].data;
                let len = data.len();
                match (data, stored) {
                    (Data::Floats(xs), Val::Float(x)) if index < len => xs[index] = x,
                    (Data::Ints(xs), Val::Int(x)) if index < len => xs[index] = x,
                    (data, _) if index >= len => Err(out_of_bounds(index, data))?,
                    (_, stored) => Err(format!("stores {stored:?} into a buffer of another type"))?,
                }
                Val::Unit
            }
            Inst::Update(op, buf, index, operand) => {
                let operand = self.get(*operand)?;
                let (buf, index) = self.element(*buf, *index)?;
                let data = &mut self.bufs[buf].data;
                let old = match &*data {
                    Data::Floats(xs) => xs.get(index).copied().map(Val::Float),
                    Data::Ints(xs) => xs.get(index).copied().map(Val::Int),
                };
                let old = old.ok_or_else(|| out_of_bounds(index, data))?;
                if !matches!(op, BinOp::Add | BinOp::Sub) {
                    Err(format!("an update by `{}`", op.name()))?;
                }
                match (data, binary(*op, old, operand)?) {
                    (Data::Floats(xs), Val::Float(x)) => xs[index] = x,
                    (Data::Ints(xs), Val::Int(x)) => xs[index] = x,
                    (_, new) => Err(format!("writes {new:?} into a buffer of another type"))?,
                }
                Val::Unit
            }
            Inst::Slice { buf, start, len } => {
                let (buf, at, whole) = self.place(*buf)?;
                let (start, len) = (self.index(*start)?, self.index(*len)?);
                if start.checked_add(len).is_none_or(|end| end > whole) {
                    Err(format!(
                        "the sub-slice {start}..{start} + {len} of {whole} elements"
                    ))?;
                }
                Val::View {
                    buf,
                    start: at + start,
                    len,
                }
            }
            Inst::Len(buf) => {
                let (_, _, len) = self.place(*buf)?;
                Val::Int(i128::try_from(len).map_err(|_| "a huge buffer".to_owned())?)
            }
            Inst::NewBuf(new) => {
                let data = match new {
                    NewBuf::Vec { fill, len } => filled(self.get(*fill)?, self.get(*len)?.size()?)?,
                    NewBuf::Array { fill, len } => filled(self.get(*fill)?, array_len(len)?)?,
                    NewBuf::Output => Err("calls are not interpreted".to_owned())?,
                    NewBuf::Empty { capacity } => {
                        if let Some(capacity) = capacity {
                            self.get(*capacity)?.size()?;
                        }
                        match data.ty.elem() {
                            Some(Ty::Int) => Data::Ints(Vec::new()),
                            Some(elem) if elem.is_float() || *elem == Ty::Unknown => {
                                Data::Floats(Vec::new())
                            }
                            _ => Err(format!("a new buffer of type {:?}", data.ty))?,
                        }
                    }
                };
                let growable = !matches!(new, NewBuf::Array { .. });
                self.alloc(data, growable)
            }
            Inst::PushElem(buf, pushed) => {
                let pushed = self.get(*pushed)?;
                let buf = self.growable(*buf, "push into")?;
                match (&mut self.bufs[buf].data, pushed) {
                    (Data::Floats(xs), Val::Float(x)) => xs.push(x),
                    (Data::Ints(xs), Val::Int(x)) => xs.push(x),
                    (_, pushed) => Err(format!("pushes {pushed:?} into a buffer of another type"))?,
                }
                Val::Unit
            }
            Inst::CloneBuf { src, clone, .. } => {
                let (buf, start, len) = self.place(*src)?;
                let data = match &self.bufs[buf].data {
                    Data::Floats(xs) => Data::Floats(xs[start..start + len].to_vec()),
                    Data::Ints(xs) => Data::Ints(xs[start..start + len].to_vec()),
                };
                // `to_vec()` makes a `Vec`; `clone()` keeps the kind.
                let whole = matches!(self.get(*src)?, Val::Buf(_));
                let growable = !*clone || (whole && self.bufs[buf].growable);
                self.alloc(data, growable)
            }
            Inst::Call(callee, args) => self.call(*callee, args)?,
            Inst::Shadow { of } => {
                let growable = match self.get(*of)? {
                    Val::Buf(of) => self.bufs[of].growable,
                    _ => false,
                };
                let shadow = linalg::zeros_like(&self.contents(*of)?);
                self.alloc(Data::Floats(shadow), growable)
            }
            Inst::SeedCopy { len, seed } => {
                // `to_owned` of a slice: a `Vec` (of an array seed, an
                // array, which nothing pushes to or pops from).
                let growable = true;
                let copy = self.contents(*seed)?;
                if copy.len() != self.get(*len)?.size()? {
                    Err("a seed of another length than the output".to_owned())?;
                }
                self.alloc(Data::Floats(copy), growable)
            }
            Inst::PopShadow(shadow) => {
                let shadow = self.growable(*shadow, "pop_shadow from")?;
                match &mut self.bufs[shadow].data {
                    Data::Floats(xs) if !xs.is_empty() => Val::Float(linalg::pop_shadow(xs)),
                    Data::Floats(_) => Err("pop_shadow from an empty shadow".to_owned())?,
                    Data::Ints(_) => Err("pop_shadow from an integer buffer".to_owned())?,
                }
            }
            // The callee's IR is in another expansion: generated programs
            // call no functions of their own.
            Inst::Forward { .. } | Inst::Apply { .. } | Inst::Keep(..) => {
                Err("calls of user functions are not interpreted".to_owned())?
            }
            Inst::Field { .. } | Inst::FieldUpdate { .. } => {
                Err("parameter structs are not interpreted".to_owned())?
            }
        };
        Ok(val)
    }

    /// The value of an operand.
    fn get(&self, value: Value) -> Result<Val, String> {
        self.vals
            .get(value.index())
            .cloned()
            .flatten()
            .ok_or_else(|| format!("%{} is read where it is not defined", value.0))
    }

    fn gets(&self, values: &[Value]) -> Result<Vec<Val>, String> {
        values.iter().map(|&value| self.get(value)).collect()
    }

    /// The buffer an operand is a handle to.
    fn buf(&self, value: Value) -> Result<usize, String> {
        match self.get(value)? {
            Val::Buf(id) => Ok(id),
            other => Err(format!("%{} is {other:?}, not a buffer", value.0)),
        }
    }

    /// The buffer an operand is a handle to or a view of, where the view
    /// starts in it, and its length.
    fn place(&self, value: Value) -> Result<(usize, usize, usize), String> {
        match self.get(value)? {
            Val::Buf(id) => Ok((id, 0, self.bufs[id].data.len())),
            Val::View { buf, start, len } => Ok((buf, start, len)),
            other => Err(format!("%{} is {other:?}, not a buffer", value.0)),
        }
    }

    /// The buffer and the position in it of element `index` of `buf` (a
    /// buffer or a view), checked against the view's length.
    fn element(&self, buf: Value, index: Value) -> Result<(usize, usize), String> {
        let (buf, start, len) = self.place(buf)?;
        let index = self.index(index)?;
        if index >= len {
            return Err(format!(
                "index {index} out of bounds of a view of {len} elements"
            ));
        }
        Ok((buf, start + index))
    }

    /// The floats of a buffer or a view, copied.
    fn contents(&self, value: Value) -> Result<Vec<f64>, String> {
        let (buf, start, len) = self.place(value)?;
        Ok(self.floats(buf)?[start..start + len].to_vec())
    }

    /// The buffer an operand is a handle to, which must be a `Vec`.
    fn growable(&self, value: Value, action: &str) -> Result<usize, String> {
        let buf = self.buf(value)?;
        if !self.bufs[buf].growable {
            return Err(format!("{action} %{}, which is not a `Vec`", value.0));
        }
        Ok(buf)
    }

    /// The elements of a float buffer.
    fn floats(&self, buf: usize) -> Result<&Vec<f64>, String> {
        match &self.bufs[buf].data {
            Data::Floats(xs) => Ok(xs),
            Data::Ints(_) => Err("an integer buffer where floats are expected".to_owned()),
        }
    }

    /// An operand used as an index.
    fn index(&self, value: Value) -> Result<usize, String> {
        self.get(value)?.size()
    }

    fn alloc(&mut self, data: Data, growable: bool) -> Val {
        self.bufs.push(Buffer { data, growable });
        Val::Buf(self.bufs.len() - 1)
    }

    /// The value of a parameter for an argument, if the argument fits its type.
    fn bind(&mut self, ty: &Ty, arg: &Arg, mutable: bool) -> Result<Val, String> {
        Ok(match (ty, arg) {
            (ty, Arg::Float(x)) if ty.is_float() => Val::Float(*x),
            (Ty::Int, Arg::Int(n)) => Val::Int(*n),
            (Ty::Bool, Arg::Bool(b)) => Val::Bool(*b),
            (Ty::Buf(elem), Arg::Buf(xs)) if elem.is_float() => {
                self.alloc(Data::Floats(xs.clone()), mutable)
            }
            (Ty::Buf(elem), Arg::IntBuf(xs)) if **elem == Ty::Int => {
                self.alloc(Data::Ints(xs.clone()), mutable)
            }
            (Ty::Tuple(tys), Arg::Tuple(args)) if tys.len() == args.len() => Val::Tuple(
                tys.iter()
                    .zip(args)
                    .map(|(ty, arg)| self.bind(ty, arg, false))
                    .collect::<Result<_, _>>()?,
            ),
            (ty, arg) => return Err(format!("of type {ty:?} cannot take {arg:?}")),
        })
    }

    /// A returned value, with buffers replaced by their contents.
    fn resolve(&self, val: Val) -> Result<Val, String> {
        Ok(match val {
            Val::Buf(id) => match &self.bufs[id].data {
                Data::Floats(xs) => Val::Floats(xs.clone()),
                Data::Ints(xs) => Val::Ints(xs.clone()),
            },
            Val::View { buf, start, len } => match &self.bufs[buf].data {
                Data::Floats(xs) => Val::Floats(xs[start..start + len].to_vec()),
                Data::Ints(xs) => Val::Ints(xs[start..start + len].to_vec()),
            },
            Val::Tuple(elems) => Val::Tuple(
                elems
                    .into_iter()
                    .map(|elem| self.resolve(elem))
                    .collect::<Result<_, _>>()?,
            ),
            Val::Tape(_) => return Err("a tape is returned".to_owned()),
            other => other,
        })
    }

    /// The indices a `for` visits, in order: exactly those of
    /// `(start..end).step_by(step).rev()` (or `..=`, without `step_by` or
    /// `rev`).
    fn indices(&self, range: &LoopRange) -> Result<impl Iterator<Item = i128> + use<>, String> {
        let start = self.get(range.start)?.int()?;
        let mut end = self.get(range.end)?.int()?;
        if range.inclusive {
            end = end.checked_add(1).ok_or("an inclusive range overflows")?;
        }
        let step = match range.step {
            Some(step) => self.get(step)?.int()?,
            None => 1,
        };
        if step <= 0 {
            return Err(format!("`step_by({step})`"));
        }
        let count = if end > start {
            (end - start - 1) / step + 1
        } else {
            0
        };
        let reversed = range.reversed;
        // `start + k * step` for `k < count` lies in `start..end`: no overflow.
        Ok((0..count).map(move |k| {
            let k = if reversed { count - 1 - k } else { k };
            start + k * step
        }))
    }

    /// `::ad_runtime::name(args)` or `__ad::name(args)`: buffers passed by
    /// `&` are copied, those passed by `&mut` are lent to the call and put
    /// back.
    fn call(&mut self, callee: Callee, args: &[Value]) -> Result<Val, String> {
        let modes = callee.modes();
        if args.len() != modes.len() {
            return Err(format!("{} takes {} arguments", callee.name(), modes.len()));
        }
        let mut vals = Vec::new();
        let mut refs = Vec::new();
        let mut lent = Vec::new();
        let mut seen = Vec::new();
        for (&arg, &mode) in args.iter().zip(modes) {
            if mode == Mode::Val {
                vals.push(self.get(arg)?);
                continue;
            }
            let (buf, start, len) = self.place(arg)?;
            self.floats(buf)?;
            if mode == Mode::Ref {
                refs.push(self.contents(arg)?);
            } else {
                lent.push((buf, start, len));
            }
            seen.push(buf);
        }
        // A buffer passed `&mut` and also otherwise does not borrow-check.
        for (buf, ..) in &lent {
            if seen.iter().filter(|&seen| seen == buf).count() > 1 {
                return Err(format!("{} gets a buffer `&mut` and again", callee.name()));
            }
        }
        let mut muts: Vec<Vec<f64>> = lent
            .iter()
            .map(|&(buf, start, len)| match &self.bufs[buf].data {
                Data::Floats(xs) => xs[start..start + len].to_vec(),
                Data::Ints(_) => unreachable!("checked to be floats"),
            })
            .collect();
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            call_runtime(callee, &vals, &refs, &mut muts)
        }));
        for (&(buf, start, len), xs) in lent.iter().zip(muts) {
            // A `Vec` lent whole may have changed length (`pop_shadow`).
            match &mut self.bufs[buf].data {
                Data::Floats(whole) if start == 0 && len == whole.len() => *whole = xs,
                Data::Floats(whole) => whole[start..start + len].copy_from_slice(&xs),
                Data::Ints(_) => unreachable!("checked to be floats"),
            }
        }
        match result {
            Ok(result) => result,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                Err(format!("{} panicked: {message}", callee.name()))
            }
        }
    }
}

impl Val {
    fn float(&self) -> Result<f64, String> {
        match self {
            Val::Float(x) => Ok(*x),
            other => Err(format!("{other:?} where a float is expected")),
        }
    }

    fn int(&self) -> Result<i128, String> {
        match self {
            Val::Int(n) => Ok(*n),
            other => Err(format!("{other:?} where an integer is expected")),
        }
    }

    fn bool(&self) -> Result<bool, String> {
        match self {
            Val::Bool(b) => Ok(*b),
            other => Err(format!("{other:?} where a bool is expected")),
        }
    }

    /// An integer used as a `usize` (an index, a length, a dimension).
    fn size(&self) -> Result<usize, String> {
        let n = self.int()?;
        usize::try_from(n).map_err(|_| format!("{n} is not a `usize`"))
    }

    fn tape(&self) -> Result<usize, String> {
        match self {
            Val::Tape(id) => Ok(*id),
            other => Err(format!("{other:?} where a tape is expected")),
        }
    }
}

/// The instruction's name, for error messages.
fn inst_name(inst: &Inst) -> &'static str {
    match inst {
        Inst::Param(_) => "param",
        Inst::Const(_) => "const",
        Inst::Unary(..) => "unary",
        Inst::Binary(op, ..) => op.name(),
        Inst::Cast(..) => "cast",
        Inst::Prim(prim, _) => prim.name(),
        Inst::Pullback(..) => "pullback",
        Inst::Curvature(..) => "curvature",
        Inst::Detach(_) => "detach",
        Inst::Some(_) => "some",
        Inst::Field { .. } => "field",
        Inst::FieldUpdate { .. } => "field.update",
        Inst::Tuple(_) => "tuple",
        Inst::Extract(..) => "extract",
        Inst::If { .. } => "if",
        Inst::For { .. } => "for",
        Inst::While { .. } => "while",
        Inst::Arg(_) => "arg",
        Inst::TapeNew { .. } => "tape.new",
        Inst::TapeReserve { .. } => "tape.reserve",
        Inst::Push(..) => "push",
        Inst::Pop(_) => "pop",
        Inst::Load(..) => "load",
        Inst::Store(..) => "store",
        Inst::Update(..) => "update",
        Inst::Len(_) => "len",
        Inst::NewBuf(_) => "buf.new",
        Inst::PushElem(..) => "push.elem",
        Inst::Effect { .. } => "effect",
        Inst::Slice { .. } => "slice",
        Inst::CloneBuf { .. } => "buf.copy",
        Inst::Call(callee, _) => callee.name(),
        Inst::Shadow { .. } => "shadow",
        Inst::SeedCopy { .. } => "seed.copy",
        Inst::PopShadow(_) => "pop.shadow",
        Inst::Forward { .. } => "forward",
        Inst::Apply { .. } => "apply",
        Inst::Keep(..) => "keep",
    }
}

fn out_of_bounds(index: usize, data: &Data) -> String {
    format!("index {index} out of bounds of a buffer of {}", data.len())
}

/// `vec![fill; len]` and `[fill; len]`.
fn filled(fill: Val, len: usize) -> Result<Data, String> {
    if len > MAX_LEN {
        return Err(format!("a buffer of {len} elements"));
    }
    match fill {
        Val::Float(x) => Ok(Data::Floats(vec![x; len])),
        Val::Int(n) => Ok(Data::Ints(vec![n; len])),
        other => Err(format!("a buffer of {other:?}")),
    }
}

/// The length of `[fill; N]`, an integer literal.
fn array_len(len: &TokenStream) -> Result<usize, String> {
    let text = len.to_string();
    let n = parse_int(&text.replace('_', ""))
        .map_err(|_| format!("the array length `{text}` is not a literal"))?;
    usize::try_from(n).map_err(|_| format!("the array length {n}"))
}

/// The value of a constant of type `ty`.
fn constant(constant: &Const, ty: &Ty) -> Result<Val, String> {
    match constant {
        Const::Lit(lit) => literal(&lit.to_string(), ty),
        Const::Bool(b) => Ok(Val::Bool(*b)),
        Const::Path(path) => path_constant(path),
        Const::Zero => Ok(match ty {
            Ty::Int => Val::Int(0),
            Ty::Bool => Val::Bool(false),
            ty if ty.is_float() => Val::Float(0.0),
            // A placeholder that is never read.
            _ => Val::Unit,
        }),
    }
}

const INT_SUFFIXES: [&str; 12] = [
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
];

/// A literal as the user wrote it: `2.0`, `1e-3_f32`, `3usize`, `0xff`, `true`.
fn literal(text: &str, ty: &Ty) -> Result<Val, String> {
    let digits = text.replace('_', "");
    let parsed = match ty {
        Ty::Bool => match digits.as_str() {
            "true" => Ok(Val::Bool(true)),
            "false" => Ok(Val::Bool(false)),
            _ => Err(()),
        },
        Ty::Int => parse_int(&digits).map(Val::Int),
        ty if ty.is_float() => parse_float(&digits).map(Val::Float),
        Ty::Unknown => parse_int(&digits)
            .map(Val::Int)
            .or_else(|()| parse_float(&digits).map(Val::Float)),
        _ => Err(()),
    };
    parsed.map_err(|()| format!("the literal `{text}` of type {ty:?}"))
}

fn parse_int(digits: &str) -> Result<i128, ()> {
    let digits = INT_SUFFIXES
        .iter()
        .find_map(|suffix| digits.strip_suffix(suffix))
        .unwrap_or(digits);
    let (radix, digits) = match digits.get(..2) {
        Some("0x") => (16, &digits[2..]),
        Some("0o") => (8, &digits[2..]),
        Some("0b") => (2, &digits[2..]),
        _ => (10, digits),
    };
    i128::from_str_radix(digits, radix).map_err(drop)
}

fn parse_float(digits: &str) -> Result<f64, ()> {
    let digits = ["f32", "f64"]
        .iter()
        .find_map(|suffix| digits.strip_suffix(suffix))
        .unwrap_or(digits);
    digits.parse().map_err(drop)
}

/// `PI`, `std::f64::consts::PI`, `f64::EPSILON`, `usize::MAX`, …
fn path_constant(path: &TokenStream) -> Result<Val, String> {
    let text: String = path
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let short = text.trim_start_matches("::");
    let short = short
        .strip_prefix("std::")
        .or_else(|| short.strip_prefix("core::"))
        .unwrap_or(short);
    let (owner, name) = short.rsplit_once("::").unwrap_or(("", short));
    let val = match owner {
        // A bare name is a constant imported from `std::f64::consts`.
        "" | "consts" | "f64::consts" => f64_const(name).map(Val::Float),
        "f32::consts" => f32_const(name).map(|x| Val::Float(f64::from(x))),
        "f64" => f64_assoc(name).map(Val::Float),
        "f32" => f32_assoc(name).map(|x| Val::Float(f64::from(x))),
        owner => Scalar::from_name(owner)
            .and_then(|scalar| int_bound(scalar, name))
            .map(Val::Int),
    };
    val.ok_or_else(|| format!("unknown constant `{text}`"))
}

/// The constant `name` of `std::f64::consts` or `std::f32::consts` (each
/// type's own rounding of it).
macro_rules! float_consts {
    ($name:ident, $ty:ident) => {
        fn $name(name: &str) -> Option<$ty> {
            use std::$ty::consts::*;
            Some(match name {
                "PI" => PI,
                "TAU" => TAU,
                "E" => E,
                "SQRT_2" => SQRT_2,
                "FRAC_1_SQRT_2" => FRAC_1_SQRT_2,
                "LN_2" => LN_2,
                "LN_10" => LN_10,
                "LOG2_E" => LOG2_E,
                "LOG10_E" => LOG10_E,
                "LOG2_10" => LOG2_10,
                "LOG10_2" => LOG10_2,
                "FRAC_PI_2" => FRAC_PI_2,
                "FRAC_PI_3" => FRAC_PI_3,
                "FRAC_PI_4" => FRAC_PI_4,
                "FRAC_PI_6" => FRAC_PI_6,
                "FRAC_PI_8" => FRAC_PI_8,
                "FRAC_1_PI" => FRAC_1_PI,
                "FRAC_2_PI" => FRAC_2_PI,
                "FRAC_2_SQRT_PI" => FRAC_2_SQRT_PI,
                _ => return None,
            })
        }
    };
}

float_consts!(f64_const, f64);
float_consts!(f32_const, f32);

fn f64_assoc(name: &str) -> Option<f64> {
    Some(match name {
        "EPSILON" => f64::EPSILON,
        "MAX" => f64::MAX,
        "MIN" => f64::MIN,
        "MIN_POSITIVE" => f64::MIN_POSITIVE,
        "INFINITY" => f64::INFINITY,
        "NEG_INFINITY" => f64::NEG_INFINITY,
        "NAN" => f64::NAN,
        _ => return None,
    })
}

fn f32_assoc(name: &str) -> Option<f32> {
    Some(match name {
        "EPSILON" => f32::EPSILON,
        "MAX" => f32::MAX,
        "MIN" => f32::MIN,
        "MIN_POSITIVE" => f32::MIN_POSITIVE,
        "INFINITY" => f32::INFINITY,
        "NEG_INFINITY" => f32::NEG_INFINITY,
        "NAN" => f32::NAN,
        _ => return None,
    })
}

/// `MIN` or `MAX` of an integer type, if it fits an `i128`.
fn int_bound(scalar: Scalar, name: &str) -> Option<i128> {
    let (min, max): (i128, u128) = match scalar {
        Scalar::I8 => (i8::MIN.into(), i8::MAX as u128),
        Scalar::I16 => (i16::MIN.into(), i16::MAX as u128),
        Scalar::I32 => (i32::MIN.into(), i32::MAX as u128),
        Scalar::I64 => (i64::MIN.into(), i64::MAX as u128),
        Scalar::I128 => (i128::MIN, i128::MAX as u128),
        Scalar::Isize => (isize::MIN as i128, isize::MAX as u128),
        Scalar::U8 => (0, u8::MAX.into()),
        Scalar::U16 => (0, u16::MAX.into()),
        Scalar::U32 => (0, u32::MAX.into()),
        Scalar::U64 => (0, u64::MAX.into()),
        Scalar::U128 => (0, u128::MAX),
        Scalar::Usize => (0, usize::MAX as u128),
        Scalar::F32 | Scalar::F64 | Scalar::Float | Scalar::Bool => return None,
    };
    match name {
        "MIN" => Some(min),
        "MAX" => i128::try_from(max).ok(),
        _ => None,
    }
}

fn unary(op: UnOp, arg: Val) -> Result<Val, String> {
    Ok(match (op, arg) {
        (UnOp::Neg, Val::Float(x)) => Val::Float(-x),
        (UnOp::Neg, Val::Int(n)) => Val::Int(n.checked_neg().ok_or("overflow")?),
        (UnOp::Not, Val::Bool(b)) => Val::Bool(!b),
        (UnOp::Not, Val::Int(n)) => Val::Int(!n),
        (op, arg) => return Err(format!("{op:?} of {arg:?}")),
    })
}

fn binary(op: BinOp, lhs: Val, rhs: Val) -> Result<Val, String> {
    let result = match (&lhs, &rhs) {
        (Val::Float(a), Val::Float(b)) => float_binary(op, *a, *b),
        (Val::Int(a), Val::Int(b)) => int_binary(op, *a, *b)?,
        (Val::Bool(a), Val::Bool(b)) => bool_binary(op, *a, *b),
        _ => None,
    };
    result.ok_or_else(|| format!("{} of {lhs:?} and {rhs:?}", op.name()))
}

fn compare<T: PartialOrd>(op: BinOp, a: T, b: T) -> Option<Val> {
    Some(Val::Bool(match op {
        BinOp::Eq => a == b,
        BinOp::Ne => a != b,
        BinOp::Lt => a < b,
        BinOp::Le => a <= b,
        BinOp::Gt => a > b,
        BinOp::Ge => a >= b,
        _ => return None,
    }))
}

fn float_binary(op: BinOp, a: f64, b: f64) -> Option<Val> {
    Some(Val::Float(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Rem => a % b,
        _ => return compare(op, a, b),
    }))
}

/// `Ok(None)` for an operation integers do not have; `Err` on overflow.
fn int_binary(op: BinOp, a: i128, b: i128) -> Result<Option<Val>, String> {
    let shift = || u32::try_from(b).map_err(|_| format!("a shift by {b}"));
    let result = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::Div => a.checked_div(b),
        BinOp::Rem => a.checked_rem(b),
        BinOp::BitAnd => Some(a & b),
        BinOp::BitOr => Some(a | b),
        BinOp::BitXor => Some(a ^ b),
        BinOp::Shl => a.checked_shl(shift()?),
        BinOp::Shr => a.checked_shr(shift()?),
        _ => return Ok(compare(op, a, b)),
    };
    result
        .map(|n| Some(Val::Int(n)))
        .ok_or_else(|| format!("{} of {a} and {b} overflows or divides by zero", op.name()))
}

fn bool_binary(op: BinOp, a: bool, b: bool) -> Option<Val> {
    Some(Val::Bool(match op {
        BinOp::And | BinOp::BitAnd => a & b,
        BinOp::Or | BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        _ => return compare(op, a, b),
    }))
}

/// `arg as to`.
fn cast(arg: Val, to: Scalar) -> Result<Val, String> {
    Ok(match (arg, to) {
        (Val::Float(x), Scalar::F32 | Scalar::F64 | Scalar::Float) => Val::Float(x),
        (Val::Int(n), Scalar::F32 | Scalar::F64 | Scalar::Float) => Val::Float(n as f64),
        (Val::Bool(b), Scalar::F32 | Scalar::F64 | Scalar::Float) => Val::Float(f64::from(b)),
        (Val::Bool(b), Scalar::Bool) => Val::Bool(b),
        (Val::Bool(b), to) if to != Scalar::Bool => Val::Int(i128::from(b)),
        (Val::Float(x), to) if to != Scalar::Bool => float_to_int(x, to)?,
        (Val::Int(n), to) if to != Scalar::Bool => int_to_int(n, to)?,
        (arg, to) => return Err(format!("{arg:?} as {}", to.name())),
    })
}

/// `x as to` for an integer type: saturating, NaN to 0.
fn float_to_int(x: f64, to: Scalar) -> Result<Val, String> {
    let n = match to {
        Scalar::I8 => (x as i8).into(),
        Scalar::I16 => (x as i16).into(),
        Scalar::I32 => (x as i32).into(),
        Scalar::I64 => (x as i64).into(),
        Scalar::I128 => x as i128,
        Scalar::Isize => x as isize as i128,
        Scalar::U8 => (x as u8).into(),
        Scalar::U16 => (x as u16).into(),
        Scalar::U32 => (x as u32).into(),
        Scalar::U64 => (x as u64).into(),
        Scalar::U128 => i128::try_from(x as u128).map_err(|_| format!("{x} as u128"))?,
        Scalar::Usize => x as usize as i128,
        Scalar::F32 | Scalar::F64 | Scalar::Float | Scalar::Bool => unreachable!("an integer type"),
    };
    Ok(Val::Int(n))
}

/// `n as to` for an integer type: wrapping.
fn int_to_int(n: i128, to: Scalar) -> Result<Val, String> {
    let n = match to {
        Scalar::I8 => (n as i8).into(),
        Scalar::I16 => (n as i16).into(),
        Scalar::I32 => (n as i32).into(),
        Scalar::I64 => (n as i64).into(),
        Scalar::I128 => n,
        Scalar::Isize => n as isize as i128,
        Scalar::U8 => (n as u8).into(),
        Scalar::U16 => (n as u16).into(),
        Scalar::U32 => (n as u32).into(),
        Scalar::U64 => (n as u64).into(),
        Scalar::U128 => i128::try_from(n as u128).map_err(|_| format!("{n} as u128"))?,
        Scalar::Usize => n as usize as i128,
        Scalar::F32 | Scalar::F64 | Scalar::Float | Scalar::Bool => unreachable!("an integer type"),
    };
    Ok(Val::Int(n))
}

/// `powi`'s exponent, an `i32`.
fn exponent(n: &Val) -> Result<i32, String> {
    let n = n.int()?;
    i32::try_from(n).map_err(|_| format!("the exponent {n} is not an `i32`"))
}

fn floats(args: &[Val]) -> Result<Vec<f64>, String> {
    args.iter().map(Val::float).collect()
}

/// `args[0].prim(args[1..])`.
fn prim(prim: Prim, args: &[Val]) -> Result<Val, String> {
    if args.len() != prim.arity() {
        return Err(format!("{} takes {} operands", prim.name(), prim.arity()));
    }
    // Integer forms: the bound of a `zip`, or the user's integer code.
    match (prim, args) {
        (Prim::Min, [Val::Int(a), Val::Int(b)]) => return Ok(Val::Int(*a.min(b))),
        (Prim::Max, [Val::Int(a), Val::Int(b)]) => return Ok(Val::Int(*a.max(b))),
        (Prim::Abs, [Val::Int(a)]) => {
            return a.checked_abs().map(Val::Int).ok_or("overflow".to_owned());
        }
        (Prim::Signum, [Val::Int(a)]) => return Ok(Val::Int(a.signum())),
        (Prim::RemEuclid, [Val::Int(a), Val::Int(b)]) => {
            return a
                .checked_rem_euclid(*b)
                .map(Val::Int)
                .ok_or("division by zero".to_owned());
        }
        (Prim::DivEuclid, [Val::Int(a), Val::Int(b)]) => {
            return a
                .checked_div_euclid(*b)
                .map(Val::Int)
                .ok_or("division by zero".to_owned());
        }
        (Prim::Powi, [x, n]) => return Ok(Val::Float(x.float()?.powi(exponent(n)?))),
        _ => {}
    }
    let x = floats(args)?;
    if prim.is_predicate() {
        return Ok(Val::Bool(match prim {
            Prim::IsNan => x[0].is_nan(),
            Prim::IsFinite => x[0].is_finite(),
            Prim::IsInfinite => x[0].is_infinite(),
            Prim::IsSignNegative => x[0].is_sign_negative(),
            _ => x[0].is_sign_positive(),
        }));
    }
    let unary: fn(f64) -> f64 = match prim {
        Prim::Sqrt => f64::sqrt,
        Prim::Cbrt => f64::cbrt,
        Prim::Exp => f64::exp,
        Prim::Exp2 => f64::exp2,
        Prim::ExpM1 => f64::exp_m1,
        Prim::Ln => f64::ln,
        Prim::Ln1p => f64::ln_1p,
        Prim::Log2 => f64::log2,
        Prim::Log10 => f64::log10,
        Prim::Sin => f64::sin,
        Prim::Cos => f64::cos,
        Prim::Tan => f64::tan,
        Prim::Asin => f64::asin,
        Prim::Acos => f64::acos,
        Prim::Atan => f64::atan,
        Prim::Sinh => f64::sinh,
        Prim::Cosh => f64::cosh,
        Prim::Tanh => f64::tanh,
        Prim::Asinh => f64::asinh,
        Prim::Acosh => f64::acosh,
        Prim::Atanh => f64::atanh,
        Prim::Abs => f64::abs,
        Prim::Signum => f64::signum,
        Prim::Recip => f64::recip,
        Prim::Floor => f64::floor,
        Prim::Ceil => f64::ceil,
        Prim::Round => f64::round,
        Prim::RoundTiesEven => f64::round_ties_even,
        Prim::Trunc => f64::trunc,
        Prim::Fract => f64::fract,
        Prim::ToRadians => f64::to_radians,
        Prim::ToDegrees => f64::to_degrees,
        Prim::MulAdd => return Ok(Val::Float(x[0].mul_add(x[1], x[2]))),
        Prim::Clamp => {
            // `f64::clamp` panics on `min > max` or a NaN bound, as the
            // generated code would.
            if x[1]
                .partial_cmp(&x[2])
                .is_none_or(std::cmp::Ordering::is_gt)
            {
                return Err(format!("clamp with min {} and max {}", x[1], x[2]));
            }
            return Ok(Val::Float(x[0].clamp(x[1], x[2])));
        }
        Prim::Log
        | Prim::Powf
        | Prim::Atan2
        | Prim::Min
        | Prim::Max
        | Prim::Hypot
        | Prim::Midpoint
        | Prim::Rem
        | Prim::DivEuclid
        | Prim::RemEuclid
        | Prim::Copysign => {
            let binary: fn(f64, f64) -> f64 = match prim {
                Prim::Log => f64::log,
                Prim::Powf => f64::powf,
                Prim::Atan2 => f64::atan2,
                Prim::Min => f64::min,
                Prim::Max => f64::max,
                Prim::Hypot => f64::hypot,
                Prim::Midpoint => f64::midpoint,
                Prim::DivEuclid => f64::div_euclid,
                Prim::RemEuclid => f64::rem_euclid,
                Prim::Copysign => f64::copysign,
                _ => |a, b| a % b,
            };
            return Ok(Val::Float(binary(x[0], x[1])));
        }
        Prim::Powi
        | Prim::IsNan
        | Prim::IsFinite
        | Prim::IsInfinite
        | Prim::IsSignNegative
        | Prim::IsSignPositive => unreachable!("handled above"),
    };
    Ok(Val::Float(unary(x[0])))
}

/// `ad_runtime::rules::prim(inputs…, output, seed)`: the adjoint of the float
/// input, or a tuple of those of several. The instruction has only what the
/// rule reads ([`Prim::reads`]); the operands it does not read are NaN here,
/// so that a rule reading one after all would show.
fn pullback(prim: Prim, reads: &[Val]) -> Result<Val, String> {
    if reads.len() != prim.reads().len() + 1 {
        return Err(format!(
            "the pullback of {} takes {} operands",
            prim.name(),
            prim.reads().len() + 1
        ));
    }
    let mut args = vec![Val::Float(f64::NAN); prim.arity() + 2];
    for (read, val) in prim.reads().iter().zip(reads) {
        match *read {
            Read::Arg(index) => args[index] = val.clone(),
            Read::Output => args[prim.arity()] = val.clone(),
        }
    }
    args[prim.arity() + 1] = reads[reads.len() - 1].clone();
    let args = &args[..];
    if prim == Prim::Powi {
        let [x, y, dy] = [&args[0], &args[2], &args[3]].map(Val::float);
        return Ok(Val::Float(rules::powi(x?, exponent(&args[1])?, y?, dy?)));
    }
    let x = floats(args)?;
    let pair = |(a, b): (f64, f64)| Val::Tuple(vec![Val::Float(a), Val::Float(b)]);
    let triple =
        |(a, b, c): (f64, f64, f64)| Val::Tuple(vec![Val::Float(a), Val::Float(b), Val::Float(c)]);
    let unary: fn(f64, f64, f64) -> f64 = match prim {
        Prim::Sqrt => rules::sqrt,
        Prim::Cbrt => rules::cbrt,
        Prim::Exp => rules::exp,
        Prim::Exp2 => rules::exp2,
        Prim::ExpM1 => rules::exp_m1,
        Prim::Ln => rules::ln,
        Prim::Ln1p => rules::ln_1p,
        Prim::Log2 => rules::log2,
        Prim::Log10 => rules::log10,
        Prim::Sin => rules::sin,
        Prim::Cos => rules::cos,
        Prim::Tan => rules::tan,
        Prim::Asin => rules::asin,
        Prim::Acos => rules::acos,
        Prim::Atan => rules::atan,
        Prim::Sinh => rules::sinh,
        Prim::Cosh => rules::cosh,
        Prim::Tanh => rules::tanh,
        Prim::Asinh => rules::asinh,
        Prim::Acosh => rules::acosh,
        Prim::Atanh => rules::atanh,
        Prim::Abs => rules::abs,
        Prim::Signum => rules::signum,
        Prim::Recip => rules::recip,
        Prim::Fract => rules::fract,
        Prim::ToRadians => rules::to_radians,
        Prim::ToDegrees => rules::to_degrees,
        Prim::Floor
        | Prim::Ceil
        | Prim::Round
        | Prim::RoundTiesEven
        | Prim::Trunc
        | Prim::DivEuclid
        | Prim::IsNan
        | Prim::IsFinite
        | Prim::IsInfinite
        | Prim::IsSignNegative
        | Prim::IsSignPositive => {
            return Err(format!(
                "{} is constant data: it has no pullback",
                prim.name()
            ));
        }
        Prim::RemEuclid => return Ok(pair(rules::rem_euclid(x[0], x[1], x[2], x[3]))),
        Prim::Copysign => return Ok(pair(rules::copysign(x[0], x[1], x[2], x[3]))),
        Prim::Clamp => return Ok(triple(rules::clamp(x[0], x[1], x[2], x[3], x[4]))),
        Prim::Log => return Ok(pair(rules::log(x[0], x[1], x[2], x[3]))),
        Prim::Powf => return Ok(pair(rules::powf(x[0], x[1], x[2], x[3]))),
        Prim::Atan2 => return Ok(pair(rules::atan2(x[0], x[1], x[2], x[3]))),
        Prim::Min => return Ok(pair(rules::min(x[0], x[1], x[2], x[3]))),
        Prim::Max => return Ok(pair(rules::max(x[0], x[1], x[2], x[3]))),
        Prim::Hypot => return Ok(pair(rules::hypot(x[0], x[1], x[2], x[3]))),
        Prim::Rem => return Ok(pair(rules::rem(x[0], x[1], x[2], x[3]))),
        Prim::Midpoint => return Ok(pair(rules::midpoint(x[0], x[1], x[2], x[3]))),
        Prim::MulAdd => return Ok(triple(rules::mul_add(x[0], x[1], x[2], x[3], x[4]))),
        Prim::Powi => unreachable!("handled above"),
    };
    Ok(Val::Float(unary(x[0], x[1], x[2])))
}

/// Calls a runtime function on its arguments, by mode: `vals` by value, `refs`
/// by `&`, `muts` by `&mut`, each in the order the callee takes them.
fn call_runtime(
    callee: Callee,
    vals: &[Val],
    refs: &[Vec<f64>],
    muts: &mut [Vec<f64>],
) -> Result<Val, String> {
    let float = |k: usize| vals[k].float();
    let size = |k: usize| vals[k].size();
    match callee {
        Callee::Dot => return Ok(Val::Float(linalg::dot(&refs[0], &refs[1]))),
        Callee::Sum => return Ok(Val::Float(linalg::sum(&refs[0]))),
        Callee::Norm2 => return Ok(Val::Float(linalg::norm2(&refs[0]))),
        Callee::Logsumexp => return Ok(Val::Float(linalg::logsumexp(&refs[0]))),
        Callee::AxpyDa => return Ok(Val::Float(linalg::axpy_da(&refs[0], &refs[1]))),
        Callee::Axpy => linalg::axpy(float(0)?, &refs[0], &mut muts[0]),
        Callee::Matvec => {
            linalg::matvec(&refs[0], &refs[1], &mut muts[0], size(0)?, size(1)?);
        }
        Callee::Matmul => {
            let (m, k, n) = (size(0)?, size(1)?, size(2)?);
            linalg::matmul(&refs[0], &refs[1], &mut muts[0], m, k, n);
        }
        Callee::Softmax => linalg::softmax(&refs[0], &mut muts[0]),
        Callee::DotDx => linalg::dot_dx(&refs[0], float(0)?, &mut muts[0]),
        Callee::SumDx => linalg::sum_dx(float(0)?, &mut muts[0]),
        Callee::Norm2Dx => linalg::norm2_dx(&refs[0], float(0)?, float(1)?, &mut muts[0]),
        Callee::AxpyDx => linalg::axpy_dx(float(0)?, &refs[0], &mut muts[0]),
        Callee::MatvecDa => {
            linalg::matvec_da(&refs[0], &refs[1], &mut muts[0], size(0)?, size(1)?);
        }
        Callee::MatvecDx => {
            linalg::matvec_dx(&refs[0], &refs[1], &mut muts[0], size(0)?, size(1)?);
        }
        Callee::MatmulDa => {
            let (m, k, n) = (size(0)?, size(1)?, size(2)?);
            linalg::matmul_da(&refs[0], &refs[1], &mut muts[0], m, k, n);
        }
        Callee::MatmulDb => {
            let (m, k, n) = (size(0)?, size(1)?, size(2)?);
            linalg::matmul_db(&refs[0], &refs[1], &mut muts[0], m, k, n);
        }
        Callee::SoftmaxDx => linalg::softmax_dx(&refs[0], &refs[1], &mut muts[0]),
        Callee::LogsumexpDx => {
            linalg::logsumexp_dx(&refs[0], float(0)?, float(1)?, &mut muts[0]);
        }
        Callee::LogsumexpKeep => {
            return Ok(Val::Float(linalg::logsumexp_keep(&refs[0], &mut muts[0])));
        }
        Callee::LogsumexpDxKept => {
            let (kept, dx) = muts.split_at_mut(1);
            linalg::logsumexp_dx_kept(&mut kept[0], float(0)?, &mut dx[0]);
        }
        Callee::MaxOver | Callee::MinOver | Callee::MaxOverRev | Callee::MinOverRev => {
            let over = match callee {
                Callee::MaxOver => __private::max_over,
                Callee::MinOver => __private::min_over,
                Callee::MaxOverRev => __private::max_over_rev,
                _ => __private::min_over_rev,
            };
            return Ok(Val::Float(over(float(0)?, &refs[0], size(1)?, size(2)?)));
        }
        Callee::MaxOverDx | Callee::MinOverDx | Callee::MaxOverDm | Callee::MinOverDm => {
            let pullback = if matches!(callee, Callee::MaxOverDx | Callee::MaxOverDm) {
                __private::max_over_dx
            } else {
                __private::min_over_dx
            };
            // Without `x`'s shadow, the runtime's `_dm` is `_dx` into nothing.
            let mut nowhere = vec![0.0; refs[0].len()];
            let dx = match callee {
                Callee::MaxOverDx | Callee::MinOverDx => &mut muts[0],
                _ => &mut nowhere,
            };
            let (m0, start, end, y, dy) = (float(0)?, size(1)?, size(2)?, float(3)?, float(4)?);
            return Ok(Val::Float(pullback(m0, &refs[0], start, end, y, dy, dx)));
        }
        Callee::Scale => {
            return Ok(Val::Float(ad_runtime::rules::scale(float(0)?, float(1)?)));
        }
        Callee::Norm2Jvp => {
            return Ok(Val::Float(linalg::norm2_jvp(&refs[0], float(0)?, &refs[1])));
        }
        Callee::LogsumexpJvp => {
            return Ok(Val::Float(linalg::logsumexp_jvp(
                &refs[0],
                float(0)?,
                &refs[1],
            )));
        }
        Callee::MatvecAcc => {
            linalg::matvec_acc(&refs[0], &refs[1], &mut muts[0], size(0)?, size(1)?);
        }
        Callee::MatmulAcc => {
            let (m, k, n) = (size(0)?, size(1)?, size(2)?);
            linalg::matmul_acc(&refs[0], &refs[1], &mut muts[0], m, k, n);
        }
        Callee::Zero => linalg::zero(&mut muts[0]),
        Callee::AddAssign => linalg::add_assign(&mut muts[0], &refs[0]),
    }
    Ok(Val::Unit)
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;

    use super::{Arg, Outcome, Val, run};
    use crate::expand::{self, Stages};
    use crate::ir::{Function, Inst, Role, Ty, Value};

    const MAX_STEPS: u64 = 1_000_000;

    fn stages(src: &str) -> Stages {
        let item: syn::ItemFn = syn::parse_str(src).expect("a fn item");
        let Ok(stages) = expand::stages(TokenStream::new(), &item, None) else {
            panic!("`{src}` does not differentiate")
        };
        stages
    }

    fn run_ok(func: &Function, args: &[Arg]) -> Outcome {
        run(func, args, MAX_STEPS).unwrap_or_else(|problem| panic!("{problem}\n{}", func.to_text()))
    }

    /// What `_vjp` returns, taken apart.
    #[derive(Debug)]
    struct Gradient {
        /// The primal function's result.
        primal: Outcome,
        /// The adjoints of the float parameters, in order.
        scalars: Vec<f64>,
        /// The final contents of each shadow, in order.
        shadows: Vec<Vec<f64>>,
        /// The final contents of the user's float buffer parameters in `_vjp`.
        buffers: Vec<Option<Vec<f64>>>,
    }

    /// Runs the primal IR of `src` on `args`, and its `_vjp` IR on `args`,
    /// zero shadows and `seed`.
    fn vjp_gradient(src: &str, args: &[Arg], seed: Option<Arg>) -> Gradient {
        vjp_with_shadows(src, args, None, seed)
    }

    /// As [`vjp_gradient`], with the shadows' initial contents (for `&mut`
    /// outputs, the seed of their final contents).
    fn vjp_with_shadows(
        src: &str,
        args: &[Arg],
        shadows: Option<Vec<Vec<f64>>>,
        seed: Option<Arg>,
    ) -> Gradient {
        let stages = stages(src);
        let primal = run_ok(&stages.primal, args);
        let vjp = &stages.vjp;
        let mut vjp_args = args.to_vec();
        let mut initial = shadows.map(Vec::into_iter);
        for param in vjp.params.iter().filter(|param| param.role == Role::Shadow) {
            let shadow = match &mut initial {
                Some(initial) => initial.next().expect("one initial shadow per buffer"),
                None => {
                    // Zeros as long as the buffer whose shadow it is.
                    let of = vjp.adjoint_of[param.value.index()].expect("a shadow's buffer");
                    let Inst::Param(index) = vjp.inst(of) else {
                        panic!("a shadow of a parameter")
                    };
                    let Arg::Buf(xs) = &args[*index as usize] else {
                        panic!("a float buffer")
                    };
                    vec![0.0; xs.len()]
                }
            };
            vjp_args.push(Arg::Buf(shadow));
        }
        let has_seed = vjp.params.iter().any(|param| param.role == Role::Seed);
        assert_eq!(
            has_seed,
            seed.is_some(),
            "a seed iff the function returns something"
        );
        vjp_args.extend(seed);
        let outcome = run_ok(vjp, &vjp_args);
        let n_scalars = vjp
            .params
            .iter()
            .filter(|param| param.role == Role::Active && vjp.ty(param.value).is_float())
            .count();
        let mut results = match (usize::from(has_seed) + n_scalars, outcome.ret) {
            (1, single) => vec![single],
            (_, Val::Tuple(results)) => results,
            (_, other) => panic!("`_vjp` returns {other:?}"),
        };
        if has_seed {
            let out = results.remove(0);
            assert_eq!(out, primal.ret, "`_vjp` computes the primal output");
        }
        let scalars = results
            .into_iter()
            .map(|adjoint| match adjoint {
                Val::Float(x) => x,
                other => panic!("an adjoint {other:?}"),
            })
            .collect();
        let (user, added) = outcome.params.split_at(args.len());
        let shadows = vjp
            .params
            .iter()
            .zip(&outcome.params)
            .filter(|(param, _)| param.role == Role::Shadow)
            .map(|(_, shadow)| shadow.clone().expect("a float buffer"))
            .collect();
        assert_eq!(added.len(), vjp.params.len() - args.len());
        Gradient {
            primal,
            scalars,
            shadows,
            buffers: user.to_vec(),
        }
    }

    fn float(val: &Val) -> f64 {
        match val {
            Val::Float(x) => *x,
            other => panic!("{other:?} is not a float"),
        }
    }

    fn floats(val: &Val) -> &[f64] {
        match val {
            Val::Floats(xs) => xs,
            other => panic!("{other:?} is not a float buffer"),
        }
    }

    #[track_caller]
    fn close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() <= 1e-9 * (1.0 + expected.abs()),
            "{actual} is not {expected}"
        );
    }

    #[track_caller]
    fn all_close(actual: &[f64], expected: &[f64]) {
        assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
        for (&actual, &expected) in actual.iter().zip(expected) {
            close(actual, expected);
        }
    }

    /// Central differences of `f` at `x`.
    fn finite_differences(f: impl Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
        let h = 1e-6;
        (0..x.len())
            .map(|i| {
                let (mut up, mut down) = (x.to_vec(), x.to_vec());
                up[i] += h;
                down[i] -= h;
                (f(&up) - f(&down)) / (2.0 * h)
            })
            .collect()
    }

    #[track_caller]
    fn near(actual: &[f64], expected: &[f64], tolerance: f64) {
        assert_eq!(actual.len(), expected.len());
        for (&actual, &expected) in actual.iter().zip(expected) {
            assert!(
                (actual - expected).abs() <= tolerance * (1.0 + expected.abs()),
                "{actual:?} is not near {expected:?}"
            );
        }
    }

    #[test]
    fn straight_line_code() {
        let src = "fn f(x: f64, y: f64) -> f64 { x * y + x.sin() }";
        let (x, y) = (0.5, -1.5);
        let g = vjp_gradient(src, &[Arg::Float(x), Arg::Float(y)], Some(Arg::Float(2.0)));
        assert_eq!(g.primal.ret, Val::Float(x * y + x.sin()));
        assert_eq!(g.primal.params, [None, None]);
        all_close(&g.scalars, &[2.0 * (y + x.cos()), 2.0 * x]);
    }

    #[test]
    fn loop_with_a_tape() {
        let src = "fn f(x: f64, n: usize) -> f64 { let mut p = 1.0; for _ in 0..n { p *= x; } p }";
        for n in [0, 1, 5] {
            let x = 1.3_f64;
            let g = vjp_gradient(src, &[Arg::Float(x), Arg::Int(n)], Some(Arg::Float(1.0)));
            let n = i32::try_from(n).unwrap();
            close(float(&g.primal.ret), x.powi(n));
            let expected = if n == 0 {
                0.0
            } else {
                f64::from(n) * x.powi(n - 1)
            };
            all_close(&g.scalars, &[expected]);
        }
    }

    #[test]
    fn while_to_tolerance() {
        let src = "fn f(a: f64) -> f64 { let mut y = a; while (y * y - a).abs() > 1e-12 * a { y = 0.5 * (y + a / y); } y }";
        let g = vjp_gradient(src, &[Arg::Float(2.0)], Some(Arg::Float(1.0)));
        close(float(&g.primal.ret), 2.0_f64.sqrt());
        near(&g.scalars, &[0.5 / 2.0_f64.sqrt()], 1e-8);
        // The loop runs once when the initial value is the root already.
        let g = vjp_gradient(src, &[Arg::Float(1.0)], Some(Arg::Float(1.0)));
        assert_eq!(g.primal.ret, Val::Float(1.0));
        all_close(&g.scalars, &[1.0]);
    }

    #[test]
    fn while_counts_trips_like_the_emitted_loop() {
        // `k` is carried; the index of the `while` is its iteration number.
        let src = "fn f(x: f64, n: usize) -> f64 { let mut k = 0; let mut s = x; while k < n { k += 1; s = s * x; } s }";
        let stages = stages(src);
        let out = run_ok(&stages.primal, &[Arg::Float(2.0), Arg::Int(3)]);
        assert_eq!(out.ret, Val::Float(16.0));
        let g = vjp_gradient(src, &[Arg::Float(2.0), Arg::Int(0)], Some(Arg::Float(1.0)));
        assert_eq!(g.primal.ret, Val::Float(2.0));
        all_close(&g.scalars, &[1.0]);
        let g = vjp_gradient(src, &[Arg::Float(2.0), Arg::Int(3)], Some(Arg::Float(1.0)));
        all_close(&g.scalars, &[4.0 * 8.0]);
    }

    #[test]
    fn if_else_both_sides() {
        let src = "fn f(x: f64, y: f64) -> f64 { if x > y { x * y } else { x.sin() } }";
        let g = vjp_gradient(
            src,
            &[Arg::Float(2.0), Arg::Float(1.0)],
            Some(Arg::Float(1.0)),
        );
        assert_eq!(g.primal.ret, Val::Float(2.0));
        all_close(&g.scalars, &[1.0, 2.0]);
        let g = vjp_gradient(
            src,
            &[Arg::Float(0.5), Arg::Float(1.0)],
            Some(Arg::Float(1.0)),
        );
        assert_eq!(g.primal.ret, Val::Float(0.5_f64.sin()));
        all_close(&g.scalars, &[0.5_f64.cos(), 0.0]);
    }

    #[test]
    fn match_and_integer_arithmetic() {
        let src = "fn f(x: f64, n: i32) -> f64 { match n { 0 => x, 1 | 2 => x * x, 3..=5 => x.sin(), k if k < 0 => -x, _ => x.exp() } }";
        let cases: [(i128, f64, f64); 5] = [
            (0, 0.7, 1.0),
            (2, 0.49, 1.4),
            (4, 0.7_f64.sin(), 0.7_f64.cos()),
            (-3, -0.7, -1.0),
            (9, 0.7_f64.exp(), 0.7_f64.exp()),
        ];
        for (n, value, derivative) in cases {
            let g = vjp_gradient(src, &[Arg::Float(0.7), Arg::Int(n)], Some(Arg::Float(1.0)));
            close(float(&g.primal.ret), value);
            all_close(&g.scalars, &[derivative]);
        }
        // Truncating `/` and `%`, `as` casts truncating and wrapping.
        let src = "fn f(x: f64, n: i32) -> f64 { let k = (x * 10.0) as i32 / 3 % 2; let b = (n - 1) as u8; x * (k + n) as f64 + b as f64 }";
        let out = run_ok(&stages(src).primal, &[Arg::Float(-1.75), Arg::Int(0)]);
        // (-17 / 3) % 2 = -5 % 2 = -1; (0 - 1) as u8 = 255.
        assert_eq!(out.ret, Val::Float(-1.75 * -1.0 + 255.0));
    }

    #[test]
    fn loop_ranges_visit_indices_in_rust_order() {
        // The digits record the order: 7, 4, 1.
        let src = "fn f(x: f64) -> f64 { let mut s = 0.0; for i in (1..=7).step_by(3).rev() { s = s * 10.0 + i as f64 * x; } s }";
        let g = vjp_gradient(src, &[Arg::Float(2.0)], Some(Arg::Float(1.0)));
        assert_eq!(g.primal.ret, Val::Float(741.0 * 2.0));
        all_close(&g.scalars, &[741.0]);
        let src = "fn f(x: f64, n: usize) -> f64 { let mut s = 0.0; for i in (0..n).step_by(4) { s = s * 10.0 + i as f64 * x; } for i in (2..n).rev() { s = s * 10.0 + i as f64; } s }";
        let out = run_ok(&stages(src).primal, &[Arg::Float(1.0), Arg::Int(9)]);
        // 0, 4, 8 then 8, 7, …, 2.
        assert_eq!(out.ret, Val::Float(488_765_432.0));
    }

    #[test]
    fn bool_and_integer_buffer_parameters() {
        let src =
            "fn f(x: f32, b: bool, k: i32) -> f64 { f64::from(x) * f64::from(b) + f64::from(k) }";
        for (b, d_x) in [(true, 1.0), (false, 0.0)] {
            let args = [Arg::Float(0.5), Arg::Bool(b), Arg::Int(-3)];
            let g = vjp_gradient(src, &args, Some(Arg::Float(1.0)));
            assert_eq!(g.primal.ret, Val::Float(0.5 * d_x - 3.0));
            assert_eq!(g.scalars, [d_x]);
        }
        let src = "fn f(xs: &[f64], idx: &[usize]) -> f64 { let mut s = 0.0; for j in 0..idx.len() { s += xs[idx[j]] * xs[idx[j]]; } s }";
        let args = [Arg::Buf(vec![1.0, 2.0, 3.0]), Arg::IntBuf(vec![2, 0, 2])];
        let g = vjp_gradient(src, &args, Some(Arg::Float(1.0)));
        assert_eq!(g.primal.ret, Val::Float(19.0));
        assert_eq!(g.primal.params, [Some(vec![1.0, 2.0, 3.0]), None]);
        assert_eq!(g.shadows, [vec![2.0, 0.0, 12.0]]);
    }

    #[test]
    fn literals_and_constants() {
        let src = "fn f(x: f64, n: usize) -> f64 { x * 1_000.5_f64 + (n + 0x10 + 2usize) as f64 + std::f64::consts::PI + f64::EPSILON - core::f64::consts::E }";
        let out = run_ok(&stages(src).primal, &[Arg::Float(2.0), Arg::Int(1)]);
        let expected =
            2.0 * 1000.5 + 19.0 + std::f64::consts::PI + f64::EPSILON - std::f64::consts::E;
        assert_eq!(out.ret, Val::Float(expected));
        let src = "fn f(x: f32) -> f32 { x * 1e-3_f32 + f32::MAX.min(2.0) }";
        let out = run_ok(&stages(src).primal, &[Arg::Float(2.0)]);
        assert_eq!(out.ret, Val::Float(2.0 * 1e-3 + 2.0));
    }

    #[test]
    fn slice_sum_of_squares() {
        let src = "fn f(xs: &[f64]) -> f64 { let mut s = 0.0; for i in 0..xs.len() { s += xs[i] * xs[i]; } s }";
        let xs = vec![1.0, -2.0, 0.5];
        let g = vjp_gradient(src, &[Arg::Buf(xs.clone())], Some(Arg::Float(1.0)));
        assert_eq!(g.primal.ret, Val::Float(5.25));
        assert_eq!(g.primal.params, [Some(xs.clone())]);
        assert!(g.scalars.is_empty());
        assert_eq!(g.shadows, [vec![2.0, -4.0, 1.0]]);
        // `_vjp` leaves the input alone.
        assert_eq!(g.buffers, [Some(xs)]);
    }

    #[test]
    fn running_maximum_and_minimum() {
        // Both loops are runtime calls (`analysis::running_extrema`).
        let src = "fn f(a: f64, x: &[f64]) -> f64 { let mut m = a; for i in 1..x.len() { m = m.max(x[i]); } \
                   let mut l = f64::INFINITY; for &v in x { l = l.min(v); } m * l }";
        let x = vec![-1.0, 4.0, 2.0, 4.0];
        let args = [Arg::Float(0.5), Arg::Buf(x.clone())];
        let g = vjp_gradient(src, &args, Some(Arg::Float(2.0)));
        assert_eq!(g.primal.ret, Val::Float(-4.0));
        // The tie at 4 splits `d_m = 2 · l = -2`; the minimum `-1` gets `2 · m`.
        assert_eq!(g.scalars, [0.0]);
        assert_eq!(g.shadows, [vec![8.0, -1.0, 0.0, -1.0]]);
        let args = [Arg::Float(5.0), Arg::Buf(x)];
        let g = vjp_gradient(src, &args, Some(Arg::Float(2.0)));
        assert_eq!(g.scalars, [-2.0]);
        assert_eq!(g.shadows, [vec![10.0, 0.0, 0.0, 0.0]]);
    }

    #[test]
    fn vec_output() {
        let src = "fn f(x: &Vec<f64>) -> Vec<f64> { let mut y = vec![0.0; x.len()]; for i in 0..x.len() { y[i] = x[i] * x[i]; } y }";
        let seed = Arg::Buf(vec![10.0, 1.0, 0.1]);
        let g = vjp_gradient(src, &[Arg::Buf(vec![1.0, 2.0, 3.0])], Some(seed));
        assert_eq!(floats(&g.primal.ret), [1.0, 4.0, 9.0]);
        all_close(&g.shadows[0], &[20.0, 4.0, 0.6]);
    }

    #[test]
    fn array_output_and_tuple_output() {
        let src = "fn f(x: &[f64; 3]) -> [f64; 3] { let mut y = [0.0; 3]; y[0] = x[0] * x[1]; y[1] = x[1] * x[2]; y[2] = x[2] * x[0]; y }";
        let seed = Arg::Buf(vec![1.0, 10.0, 100.0]);
        let g = vjp_gradient(src, &[Arg::Buf(vec![1.0, 2.0, 3.0])], Some(seed));
        assert_eq!(floats(&g.primal.ret), [2.0, 6.0, 3.0]);
        // d_x0 = x1 + 100 x2, d_x1 = x0 + 10 x2, d_x2 = 10 x1 + 100 x0.
        assert_eq!(g.shadows, [vec![302.0, 31.0, 120.0]]);
        let src = "fn f(x: f64, y: f64) -> (f64, f64) { (x * y, x + y) }";
        let seed = Arg::Tuple(vec![Arg::Float(1.0), Arg::Float(10.0)]);
        let g = vjp_gradient(src, &[Arg::Float(2.0), Arg::Float(3.0)], Some(seed));
        assert_eq!(
            g.primal.ret,
            Val::Tuple(vec![Val::Float(6.0), Val::Float(5.0)])
        );
        assert_eq!(g.scalars, [13.0, 12.0]);
    }

    #[test]
    fn in_place_update() {
        let src = "fn step(u: &mut [f64], dt: f64) { for i in 0..u.len() { u[i] = u[i] - dt * u[i] * u[i]; } }";
        let (u, dt) = (vec![1.0, 2.0, -0.5], 0.1);
        let updated: Vec<f64> = u.iter().map(|u| u - dt * u * u).collect();
        let seed = vec![1.0, 2.0, 3.0];
        let args = [Arg::Buf(u.clone()), Arg::Float(dt)];
        let g = vjp_with_shadows(src, &args, Some(vec![seed.clone()]), None);
        assert_eq!(g.primal.ret, Val::Tuple(Vec::new()));
        assert_eq!(g.primal.params, [Some(updated.clone()), None]);
        assert_eq!(g.buffers[0], Some(updated));
        let d_u: Vec<f64> = u
            .iter()
            .zip(&seed)
            .map(|(u, s)| s * (1.0 - 2.0 * dt * u))
            .collect();
        all_close(&g.shadows[0], &d_u);
        let d_dt: f64 = u.iter().zip(&seed).map(|(u, s)| -s * u * u).sum();
        all_close(&g.scalars, &[d_dt]);
    }

    #[test]
    fn push_into_a_local_vec() {
        let src = "fn f(x: &[f64]) -> Vec<f64> { let mut v = Vec::with_capacity(x.len()); for i in 0..x.len() { v.push(x[i].sin()); } v }";
        let x = [0.3, -1.0, 2.0];
        let seed = [1.0, -2.0, 0.5];
        let g = vjp_gradient(src, &[Arg::Buf(x.to_vec())], Some(Arg::Buf(seed.to_vec())));
        assert_eq!(floats(&g.primal.ret), x.map(f64::sin));
        let expected: Vec<f64> = x.iter().zip(seed).map(|(x, s)| s * x.cos()).collect();
        assert_eq!(g.shadows, [expected]);
    }

    #[test]
    fn iter_mut_and_reductions() {
        let src = "fn f(xs: &[f64]) -> f64 { let mut v = xs.to_vec(); for e in v.iter_mut() { *e = *e * *e; } let s: f64 = v.iter().sum(); s * xs.iter().product::<f64>() }";
        let x = [0.5, -1.5, 2.0];
        let g = vjp_gradient(src, &[Arg::Buf(x.to_vec())], Some(Arg::Float(1.0)));
        let (s, p): (f64, f64) = (x.iter().map(|x| x * x).sum(), x.iter().product());
        close(float(&g.primal.ret), s * p);
        let expected: Vec<f64> = x.iter().map(|x| 2.0 * x * p + s * p / x).collect();
        all_close(&g.shadows[0], &expected);
    }

    #[test]
    fn local_buffer_forms() {
        let src = "fn f(a: f64, b: f64, n: usize) -> f64 { let v = vec![a; n]; let w = vec![a, b]; let mut c = w.clone(); c[0] *= b; let arr = [a, b, 1.0]; v[0] + c[0] + c[1] + arr[0] * arr[1] }";
        let (a, b) = (1.5, -2.0);
        let g = vjp_gradient(
            src,
            &[Arg::Float(a), Arg::Float(b), Arg::Int(4)],
            Some(Arg::Float(1.0)),
        );
        close(float(&g.primal.ret), a + a * b + b + a * b);
        // v[0] reads one of n copies of a: its adjoint sums all n.
        all_close(&g.scalars, &[1.0 + b + b, a + 1.0 + a]);
    }

    #[test]
    fn runtime_primitives_match_the_runtime_and_finite_differences() {
        let src = "fn f(w: &[f64], x: &[f64], m: usize, n: usize) -> f64 { let mut h = vec![0.0; m]; ad_runtime::matvec(w, x, &mut h, m, n); ad_runtime::dot(&h, &h) + ad_runtime::logsumexp(&h) }";
        let (m, n) = (2, 3);
        let w = vec![0.5, -1.0, 0.25, 2.0, 0.1, -0.3];
        let x = vec![0.2, -0.4, 1.1];
        let direct = |w: &[f64], x: &[f64]| {
            let mut h = vec![0.0; m];
            ad_runtime::matvec(w, x, &mut h, m, n);
            ad_runtime::dot(&h, &h) + ad_runtime::logsumexp(&h)
        };
        let args = |w: &[f64], x: &[f64]| {
            let sizes = [m, n].map(|size| Arg::Int(i128::try_from(size).unwrap()));
            vec![
                Arg::Buf(w.to_vec()),
                Arg::Buf(x.to_vec()),
                sizes[0].clone(),
                sizes[1].clone(),
            ]
        };
        let g = vjp_gradient(src, &args(&w, &x), Some(Arg::Float(1.0)));
        assert_eq!(g.primal.ret, Val::Float(direct(&w, &x)));
        let primal = stages(src).primal;
        let interpreted =
            |point: &[f64]| float(&run_ok(&primal, &args(&point[..6], &point[6..])).ret);
        let point: Vec<f64> = w.iter().chain(&x).copied().collect();
        let expected = finite_differences(interpreted, &point);
        let gradient: Vec<f64> = g.shadows.concat();
        near(&gradient, &expected, 1e-6);
    }

    #[test]
    fn malformed_input_is_an_error() {
        let stages = stages("fn f(xs: &[f64], c: f64) -> f64 { xs[2] * c }");
        let primal = &stages.primal;
        let expect_err = |args: &[Arg], expected: &str| {
            let problem = run(primal, args, MAX_STEPS).expect_err("an error");
            assert!(
                problem.contains(expected),
                "{problem:?} does not mention {expected:?}"
            );
        };
        expect_err(&[Arg::Buf(vec![1.0, 2.0, 3.0])], "takes 2 arguments, got 1");
        expect_err(&[Arg::Float(1.0), Arg::Float(1.0)], "parameter `xs`");
        expect_err(
            &[Arg::Buf(vec![1.0, 2.0]), Arg::Float(1.0)],
            "index 2 out of bounds",
        );
        let vjp = &stages.vjp;
        assert!(run(vjp, &[Arg::Buf(vec![1.0; 3]), Arg::Float(1.0)], MAX_STEPS).is_err());
        // A shadow shorter than its buffer.
        let args = [
            Arg::Buf(vec![1.0; 3]),
            Arg::Float(2.0),
            Arg::Buf(vec![0.0]),
            Arg::Float(1.0),
        ];
        let problem = run(vjp, &args, MAX_STEPS).expect_err("out of bounds");
        assert!(problem.contains("out of bounds"), "{problem}");
    }

    #[test]
    fn runaway_loops_and_unknown_constants_are_errors() {
        let src = "fn f(x: f64) -> f64 { let mut y = x; while y > 0.0 { y = y + 1.0; } y }";
        let problem = run(&stages(src).primal, &[Arg::Float(1.0)], 10_000).expect_err("runaway");
        assert!(problem.contains("more than 10000 steps"), "{problem}");
        let src = "fn f(x: f64) -> f64 { x * MY_CONSTANT }";
        let problem = run(&stages(src).primal, &[Arg::Float(1.0)], MAX_STEPS).expect_err("unknown");
        assert!(
            problem.contains("unknown constant `MY_CONSTANT`"),
            "{problem}"
        );
        let src = "fn f(x: f64, n: usize) -> f64 { x * (n - 3) as f64 / (n - 2) as f64 }";
        let out = run(
            &stages(src).primal,
            &[Arg::Float(1.0), Arg::Int(i128::MIN)],
            MAX_STEPS,
        );
        assert!(out.expect_err("overflow").contains("overflows"));
    }

    #[test]
    fn a_tape_popped_empty_is_an_error() {
        let src = "fn f(x: f64, n: usize) -> f64 { let mut p = 1.0; for _ in 0..n { p *= x; } p }";
        let mut vjp = stages(src).vjp;
        let push = (0..vjp.insts.len())
            .find(|&index| matches!(vjp.insts[index].inst, Inst::Push(..)))
            .expect("a push");
        vjp.insts[push].inst = Inst::Tuple(Vec::new());
        vjp.insts[push].ty = Ty::Tuple(Vec::new());
        let args = [Arg::Float(2.0), Arg::Int(3), Arg::Float(1.0)];
        let problem = run(&vjp, &args, MAX_STEPS).expect_err("an empty tape");
        assert!(problem.contains("tape popped empty"), "{problem}");
        // A value read out of its region.
        let mut vjp = stages(src).vjp;
        let Inst::For { body, .. } = vjp
            .insts
            .iter()
            .find_map(|data| match &data.inst {
                inst @ Inst::For { .. } => Some(inst.clone()),
                _ => None,
            })
            .expect("a loop")
        else {
            unreachable!()
        };
        let inner = *body.insts.last().expect("a body");
        vjp.ret = Value(inner.0);
        let problem = run(&vjp, &args, MAX_STEPS).expect_err("out of scope");
        assert!(problem.contains("not defined"), "{problem}");
    }
}
