//! Forward mode: primal IR → `_jvp` IR.
//!
//! Takes the primal IR with its activity; gives one function that runs the
//! primal and, beside each active value, its tangent (the directional
//! derivative along the tangents the caller passes). It is one walk in
//! program order over the primal, copying every instruction and following
//! it with the instructions of its tangent, so nothing is saved and nothing
//! runs backwards: no tape, no adjoint, no heap allocation for
//! straight-line code.
//!
//! ```text
//! s = x * y; out = s.sin()    ⇒   t_s = t_x * y + x * t_y
//!                                  t_out = __ad::sin(s, t_s)   (the pullback, seeded with t_s)
//! ```
//!
//! Control flow keeps its shape: an `if` yields the tangents of its active
//! results after its own, a loop carries the tangents of its active carried
//! values after its own, a buffer has a tangent buffer that every write
//! mirrors. `rules.rs` is the table of tangent rules, instruction by
//! instruction. A value without a tangent has a zero one, and no code is
//! built for it.

mod rules;

use std::collections::HashMap;

use proc_macro2::Span;

use crate::analysis::Activity;
use crate::diag::Ctxt;
use crate::ir::{Builder, Const, Function, Inst, Region, Role, Ty, UserCall, Value};
use crate::lower::Signature;

/// The tangent of each component of a tuple-typed primal value.
#[derive(Clone)]
enum Parts {
    /// Of an `Inst::Tuple`: the tangent of each element.
    Values(Vec<Option<Value>>),
    /// Of an `if`, a loop or a call: the position of each component's tangent
    /// in the new instruction's tuple, read with an `extract`.
    Indices(Vec<Option<u32>>),
}

pub(crate) struct Forward<'a> {
    /// The function differentiated: the primal IR, or `_vjp`'s for `_hvp`.
    primal: &'a Function,
    /// Which values get a tangent; `None`: every float and float buffer
    /// (for `_hvp`, whose adjoint values are all needed).
    activity: Option<&'a Activity>,
    mode: Derivative,
    builder: Builder,
    cx: &'a Ctxt,
    /// The copy of each primal value in the function being built.
    map: Vec<Option<Value>>,
    /// The tangent of each primal value; `None` is zero.
    tangents: Vec<Option<Value>>,
    parts: HashMap<Value, Parts>,
    /// `_hvp`'s seed, the literal 1.
    one: Option<Value>,
    /// Forward mode over `_vjp` (`_hvp`, `nested`): what stands for the
    /// pullback of a call, the tuple of its arguments and their tangents
    /// (see `rules::call_over_reverse`), by its value in the function built
    /// and by the tape it is pushed on, with the call it belongs to.
    records: HashMap<Value, Record>,
}

/// The record of a call's arguments that stands for its pullback in forward
/// mode over `_vjp`: the callee, the type of the tuple, and where each
/// argument is.
#[derive(Clone)]
struct Record {
    callee: u32,
    ty: Ty,
    args: Vec<RecordArg>,
}

/// Where an argument of a recorded call is.
#[derive(Clone, Copy)]
enum RecordArg {
    /// A float at `at` of the record, its tangent at `tangent`.
    Float { at: usize, tangent: usize },
    /// An integer at `at`.
    Int { at: usize },
    /// A buffer read by the call: the application of the pullback is given
    /// it and its shadow, in the order of the call's buffers.
    Buffer,
}

/// Which function is built: `_jvp` from the primal IR, or `_hvp` from the
/// `_vjp` IR (forward mode over reverse mode).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derivative {
    Jvp,
    /// Vector forward mode: `_jvp_lanes`, each tangent a `Lanes<T, K>`.
    JvpLanes,
    Hvp,
    /// Forward mode over `_vjp` or `_jvp` (`nested`): what a caller
    /// differentiated in forward mode calls when it calls them.
    Nested,
}

/// Names for the parameters a mode adds, `prefix` and the parameter's name,
/// unless a parameter is called that already (then with `_` after it).
fn added_names(sig: &Signature, prefix: &str) -> Vec<Option<String>> {
    let taken: Vec<&str> = sig.params.iter().map(|param| param.name.as_str()).collect();
    sig.params
        .iter()
        .map(|param| {
            (param.role == Role::Active && param.ir_ty.can_be_active()).then(|| {
                let mut name = format!("{prefix}{}", param.name);
                while taken.contains(&name.as_str()) {
                    name.push('_');
                }
                name
            })
        })
        .collect()
}

/// The name of each parameter's tangent in `_jvp`, `None` for the parameters
/// that have none: `t_` and the parameter's name.
pub(crate) fn tangent_names(sig: &Signature) -> Vec<Option<String>> {
    added_names(sig, "t_")
}

/// The names `_hvp` adds for each active parameter: its direction (`v_x`)
/// and, for a buffer, the buffer the Hessian-vector product is added into
/// (`hv_xs`).
pub(crate) fn hvp_names(sig: &Signature) -> Vec<Option<(String, String)>> {
    added_names(sig, "v_")
        .into_iter()
        .zip(added_names(sig, "hv_"))
        .map(|(direction, product)| direction.zip(product))
        .collect()
}

impl<'a> Forward<'a> {
    fn new(
        cx: &'a Ctxt,
        primal: &'a Function,
        activity: Option<&'a Activity>,
        mode: Derivative,
    ) -> Self {
        let suffix = match mode {
            Derivative::Jvp => "_jvp_all",
            Derivative::JvpLanes => "_jvp_lanes_all",
            Derivative::Hvp => "_hvp",
            Derivative::Nested => "_jvp_all",
        };
        let mut builder = Builder::new(format!("{}{suffix}", primal.name));
        let func = builder.func_mut();
        func.float_param = primal.float_param.clone();
        func.runtime_paths = primal.runtime_paths.clone();
        func.items = primal.items.clone();
        // Calls go to the callee's `_jvp_all`. Over `_vjp`, call `i`'s
        // pullback is applied through entry `n + i`, its `_hvp_all`.
        let over_reverse = matches!(mode, Derivative::Hvp | Derivative::Nested);
        let entries: &[&'static str] = match over_reverse {
            true => &["_jvp_all", "_hvp_all"],
            false => &[suffix],
        };
        func.user_calls = entries
            .iter()
            .flat_map(|&suffix| {
                primal.user_calls.iter().map(move |call| UserCall {
                    path: call.path.clone(),
                    suffix,
                    checkpoint: false,
                    into: call.into,
                    passes_rows: call.passes_rows,
                    plain: call.plain && suffix == entries[0],
                })
            })
            .collect();
        Forward {
            primal,
            activity,
            mode,
            builder,
            cx,
            map: vec![None; primal.insts.len()],
            tangents: vec![None; primal.insts.len()],
            parts: HashMap::new(),
            one: None,
            records: HashMap::new(),
        }
    }

    /// Copies a parameter, and adds its tangent parameter after it if
    /// `tangent` names one.
    fn param(&mut self, param: &crate::ir::Param, tangent: Option<String>, span: Span) {
        let ty = self.primal.ty(param.value).clone();
        let value = self.builder.param(
            param.name.clone(),
            param.role,
            ty.clone(),
            self.primal.span(param.value),
        );
        if param.mutable {
            self.builder.mark_mutable();
        }
        self.map[param.value.index()] = Some(value);
        if let Some(name) = tangent {
            let ty = self.tangent_ty(&ty);
            let tangent = self.builder.param(name, Role::Shadow, ty, span);
            if param.mutable || param.role == Role::Shadow {
                self.builder.mark_mutable();
            }
            self.tangents[param.value.index()] = Some(tangent);
        }
    }
}

/// `_jvp` from the primal IR; with `lanes`, the name of `K`, `_jvp_lanes`
/// (vector forward mode: the same walk, each tangent a `Lanes<T, K>`).
pub(crate) fn jvp(
    cx: &Ctxt,
    primal: &Function,
    activity: &Activity,
    sig: &Signature,
    lanes: Option<syn::Ident>,
) -> Function {
    let mode = match lanes {
        Some(_) => Derivative::JvpLanes,
        None => Derivative::Jvp,
    };
    let mut fx = Forward::new(cx, primal, Some(activity), mode);
    fx.builder.func_mut().lanes = lanes;
    // Each active parameter is followed by its tangent.
    for ((param, sig_param), tangent) in primal
        .params
        .iter()
        .zip(&sig.params)
        .zip(tangent_names(sig))
    {
        fx.param(param, tangent, sig_param.span);
    }
    fx.region_insts(&primal.body.insts);
    let out = primal.ret;
    let value = fx.copy(out);
    let ret = if sig.seed_ty.is_none() {
        // A function returning `()`: its tangents are its `&mut` buffers'.
        value
    } else {
        fx.builder.name(value, "out");
        let tangent = fx.tangent_whole(out);
        let ty = primal.ty(out).clone();
        let tangent_ty = fx.tangent_ty(&ty);
        fx.builder.push(
            Inst::Tuple(vec![value, tangent]),
            Ty::Tuple(vec![ty, tangent_ty]),
            primal.span(out),
        )
    };
    fx.builder.finish(ret)
}

/// `_hvp`: forward mode over `vjp`, the `_vjp` IR of a function with one
/// float output, seeded with 1. Each active parameter is followed by its
/// direction `v`; each shadow `d_xs` by the buffer `hv_xs` its tangent is
/// added into. The result is the output, the adjoints of the active floats
/// (the gradient), then their tangents (the Hessian-vector product).
pub(crate) fn hvp(cx: &Ctxt, vjp: &Function, sig: &Signature) -> Function {
    let mut fx = Forward::new(cx, vjp, None, Derivative::Hvp);
    let names = hvp_names(sig);
    let mut primal_params = sig.params.iter().zip(&names);
    for param in &vjp.params {
        match param.role {
            Role::Seed => {
                // The seed is 1: no parameter, no tangent.
                let span = vjp.span(param.value);
                let ty = vjp.ty(param.value).clone();
                let one = Const::one(&ty, vjp.float_param.as_ref());
                let one = fx.builder.push(Inst::Const(one), ty, span);
                fx.map[param.value.index()] = Some(one);
                fx.one = Some(one);
            }
            Role::Shadow => {
                // The shadow of the last active buffer parameter.
                let product = names
                    .iter()
                    .zip(&sig.params)
                    .find(|(_, sig_param)| {
                        sig_param
                            .shadow
                            .as_ref()
                            .is_some_and(|shadow| shadow.name == param.name)
                    })
                    .and_then(|(names, _)| names.as_ref().map(|(_, product)| product.clone()));
                fx.param(param, product, vjp.span(param.value));
            }
            _ => {
                let (sig_param, names) = primal_params.next().expect("one per parameter");
                let direction = names.as_ref().map(|(direction, _)| direction.clone());
                fx.param(param, direction, sig_param.span);
            }
        }
    }
    fx.region_insts(&vjp.body.insts);
    let ret = vjp.ret;
    let value = match vjp.inst(ret) {
        Inst::Tuple(elems) if elems.len() > 1 => {
            let elems = elems.clone();
            let mut outputs: Vec<Value> = elems.iter().map(|&elem| fx.copy(elem)).collect();
            for &adjoint in &elems[1..] {
                outputs.push(fx.tangent_whole(adjoint));
            }
            let tys = outputs
                .iter()
                .map(|&value| fx.builder.func().ty(value).clone())
                .collect();
            fx.builder
                .push(Inst::Tuple(outputs), Ty::Tuple(tys), vjp.span(ret))
        }
        _ => fx.copy(ret),
    };
    fx.builder.finish(value)
}

/// Forward mode over a derivative function, `_vjp`'s IR (seeded by a
/// parameter, not by 1 as in `_hvp`) or `_jvp`'s: the `_jvp_all` of that
/// function, which a caller differentiated in forward mode calls. Every
/// parameter holding floats is followed by its tangent, named in `names`;
/// the result is the function's result followed by its tangent.
pub(crate) fn nested(cx: &Ctxt, func: &Function, names: &[Option<String>]) -> Function {
    let mut fx = Forward::new(cx, func, None, Derivative::Nested);
    for (param, tangent) in func.params.iter().zip(names) {
        fx.param(param, tangent.clone(), func.span(param.value));
    }
    fx.region_insts(&func.body.insts);
    let ret = func.ret;
    let value = fx.copy(ret);
    let tangent = fx.tangent_whole(ret);
    let tys = vec![
        fx.builder.func().ty(value).clone(),
        fx.builder.func().ty(tangent).clone(),
    ];
    let pair = fx.builder.push(
        Inst::Tuple(vec![value, tangent]),
        Ty::Tuple(tys),
        func.span(ret),
    );
    fx.builder.finish(pair)
}

/// The names of the tangents [`nested`] gives the parameters of a
/// derivative function, `t_` and the parameter's name (then `_` until free),
/// `None` for the parameters without floats.
pub(crate) fn nested_names(func: &Function) -> Vec<Option<String>> {
    let names: Vec<String> = func
        .params
        .iter()
        .map(|param| func.name(param.value).unwrap_or("arg").to_owned())
        .collect();
    func.params
        .iter()
        .zip(&names)
        .map(|(param, name)| {
            let ty = func.ty(param.value);
            (ty.is_float() || ty.is_float_buf()).then(|| {
                let mut tangent = format!("t_{name}");
                while names.contains(&tangent) {
                    tangent.push('_');
                }
                tangent
            })
        })
        .collect()
}

impl Forward<'_> {
    /// The error for a construct this mode does not differentiate yet.
    fn unsupported(&self, span: Span, what: &str) {
        let message = match self.mode {
            Derivative::Nested => crate::diag::msg::nested_unsupported(what),
            _ => crate::diag::msg::hvp_unsupported(what),
        };
        self.cx.error_at(span, message);
    }

    /// The copy of a primal value.
    fn copy(&self, value: Value) -> Value {
        self.map[value.index()].unwrap_or_else(|| {
            panic!(
                "ad-macros bug: %{} is used before the forward walk reached it",
                value.0
            )
        })
    }

    /// A loop range with its bounds and step mapped.
    fn copy_range(&self, range: &crate::ir::LoopRange) -> crate::ir::LoopRange {
        let mut range = range.clone();
        range.start = self.copy(range.start);
        range.end = self.copy(range.end);
        range.step = range.step.map(|step| self.copy(step));
        range
    }

    /// The tangent of a primal value, if it is not zero.
    fn tangent(&self, value: Value) -> Option<Value> {
        self.tangents[value.index()]
    }

    /// The tangent of a primal value as a value: a zero of its type when it
    /// has none (zeros of the same shape for a buffer, a tuple of zeros for
    /// a tuple).
    fn tangent_whole(&mut self, value: Value) -> Value {
        if let Some(tangent) = self.tangent(value) {
            return tangent;
        }
        let ty = self.primal.ty(value).clone();
        let span = self.primal.span(value);
        let tangent_ty = self.tangent_ty(&ty);
        match &ty {
            Ty::Buf(_) | Ty::Struct => {
                let of = self.copy(value);
                self.builder.push(Inst::Shadow { of }, tangent_ty, span)
            }
            Ty::Tuple(elems) => {
                let parts: Vec<Value> = (0..elems.len())
                    .map(|index| self.component_whole(value, index))
                    .collect();
                self.builder.push(Inst::Tuple(parts), tangent_ty, span)
            }
            _ => self.zero(&tangent_ty, span),
        }
    }

    /// The tangent of component `index` of a tuple-typed primal value, as a
    /// value.
    fn component_whole(&mut self, tuple: Value, index: usize) -> Value {
        if let Some(tangent) = self.component(tuple, index) {
            return tangent;
        }
        let Ty::Tuple(elems) = self.primal.ty(tuple) else {
            unreachable!("a tuple")
        };
        let ty = self.tangent_ty(&elems[index]);
        self.zero(&ty, self.primal.span(tuple))
    }

    /// The tangent of component `index` of a tuple-typed primal value, if it
    /// is not zero.
    fn component(&mut self, tuple: Value, index: usize) -> Option<Value> {
        let span = self.primal.span(tuple);
        let elem_ty = match self.primal.ty(tuple) {
            Ty::Tuple(elems) => elems
                .get(index)
                .map_or(Ty::Unknown, |ty| self.tangent_ty(ty)),
            _ => Ty::Unknown,
        };
        match self.parts.get(&tuple).cloned() {
            Some(Parts::Values(values)) => values.get(index).copied().flatten(),
            Some(Parts::Indices(indices)) => {
                let position = indices.get(index).copied().flatten()?;
                let new = self.copy(tuple);
                Some(
                    self.builder
                        .push(Inst::Extract(new, position), elem_ty, span),
                )
            }
            None => {
                let whole = self.tangent(tuple)?;
                let index = u32::try_from(index).expect("small");
                Some(
                    self.builder
                        .push(Inst::Extract(whole, index), elem_ty, span),
                )
            }
        }
    }

    /// Whether this is vector forward mode, each tangent a `Lanes<T, K>`.
    fn lanes(&self) -> bool {
        self.mode == Derivative::JvpLanes
    }

    /// The type of the tangent of a value of type `ty`: `ty` itself, or in
    /// vector mode its floats as lanes (`f64` → `lanes<f64>`, `[f64]` →
    /// `[lanes<f64>]`).
    fn tangent_ty(&self, ty: &Ty) -> Ty {
        if !self.lanes() {
            return ty.clone();
        }
        match ty {
            Ty::F32 | Ty::F64 | Ty::Float => Ty::Lanes(Box::new(ty.clone())),
            Ty::Buf(elem) => Ty::Buf(Box::new(self.tangent_ty(elem))),
            Ty::Tuple(elems) => Ty::Tuple(elems.iter().map(|elem| self.tangent_ty(elem)).collect()),
            _ => ty.clone(),
        }
    }

    /// `factor · t` for a tangent `t`: in vector mode written `t * factor`,
    /// since `Lanes` is scaled from the right (the same bits: a product
    /// commutes exactly).
    fn scaled(&mut self, factor: Value, t: Value, ty: &Ty, span: Span) -> Value {
        let inst = match self.lanes() {
            true => Inst::Binary(crate::ir::BinOp::Mul, t, factor),
            false => Inst::Binary(crate::ir::BinOp::Mul, factor, t),
        };
        self.builder.push(inst, ty.clone(), span)
    }

    /// Whether a value of the function being built is `_hvp`'s seed, the
    /// literal 1.
    fn is_one(&self, value: Value) -> bool {
        self.one == Some(value)
    }

    fn zero(&mut self, ty: &Ty, span: Span) -> Value {
        self.builder
            .push(Inst::Const(Const::Zero), ty.clone(), span)
    }

    fn is_active(&self, value: Value) -> bool {
        match self.activity {
            Some(activity) => activity.is_active(value),
            None => match self.primal.ty(value) {
                Ty::Tape(elem) => elem.is_float(),
                ty => ty.is_float() || ty.is_float_buf() || matches!(ty, Ty::Tuple(_)),
            },
        }
    }

    /// Copies the instructions of a region (its arguments excepted) with
    /// their tangents, into the region open in the builder.
    fn region_insts(&mut self, insts: &[Value]) {
        for &value in insts {
            if matches!(self.primal.inst(value), Inst::Param(_)) {
                continue;
            }
            rules::instruction(self, value);
        }
    }

    /// Pushes a copy of `value`'s instruction, operands mapped; names and
    /// spans follow.
    fn push_copy(&mut self, value: Value) -> Value {
        let new = self.push_another(value);
        self.set_copy(value, new);
        new
    }

    /// Pushes a copy of `value`'s instruction, operands mapped, without
    /// recording it as `value`'s copy (for a tape, the tape of its tangents).
    fn push_another(&mut self, value: Value) -> Value {
        let mut inst = self.primal.inst(value).clone();
        inst.map_operands(|operand| self.copy(operand));
        // A pullback popped from a tape is the record pushed on it.
        let record = match &inst {
            Inst::Pop(tape) => self.records.get(tape).cloned(),
            _ => None,
        };
        let ty = match &record {
            Some(record) => record.ty.clone(),
            None => self.primal.ty(value).clone(),
        };
        let new = self.builder.push(inst, ty, self.primal.span(value));
        if let Some(record) = record {
            self.records.insert(new, record);
        }
        new
    }

    /// Records `new` as the copy of `value`, with its name.
    fn set_copy(&mut self, value: Value, new: Value) {
        if let Some(name) = self.primal.name(value) {
            self.builder.name(new, name);
        }
        self.map[value.index()] = Some(new);
    }

    /// Records `tangent` as the tangent of `value`, named after it.
    fn set_tangent(&mut self, value: Value, tangent: Value) {
        if let Some(name) = self.primal.name(value) {
            self.builder.name(tangent, &format!("t_{name}"));
        }
        self.tangents[value.index()] = Some(tangent);
    }

    /// Builds a region: its instructions from `skip` on (the loop arguments
    /// before it are the caller's), then what it yields, then the tangents
    /// of the yielded values at `tangent_yields`.
    fn region(&mut self, region: &Region, skip: usize, tangent_yields: &[usize]) -> Region {
        self.region_insts(&region.insts[skip..]);
        let mut yields: Vec<Value> = region
            .yields
            .iter()
            .map(|&value| self.copy(value))
            .collect();
        for &index in tangent_yields {
            yields.push(self.tangent_whole(region.yields[index]));
        }
        self.builder.end_region(yields)
    }
}
