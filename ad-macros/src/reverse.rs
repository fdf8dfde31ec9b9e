//! The reverse pass: primal IR → `_vjp` IR.
//!
//! The result is one function: the primal instructions unchanged, a seed
//! parameter, then the adjoint instructions built by a single backward walk over
//! the primal body, and finally a tuple of the primal output and the adjoints of
//! the active parameters.
//!
//! Gradients are summed lazily: the map has no entry for a value whose adjoint is
//! zero so far, the first contribution becomes its adjoint as it is (often an
//! alias of another adjoint, with no instruction at all), and only later
//! contributions emit an addition. So no `+ 0.0` and no zero initialisation is
//! ever built.
//!
//! ```text
//! s = x + y; out = s * s       ⇒   d_s = d_out * s + d_out * s
//!                                   d_x = d_s; d_y = d_s   (aliases)
//! ```

use crate::analysis::Activity;
use crate::ir::{BinOp, Builder, Const, Function, Inst, Role, Scalar, Ty, UnOp, Value};
use crate::rules;

/// The state of the backward walk, handed to the rules.
pub(crate) struct Reverse<'a> {
    primal: &'a Function,
    activity: &'a Activity,
    builder: Builder,
    /// The adjoint of each primal value so far; `None` is zero.
    grads: Vec<Option<Value>>,
}

pub(crate) fn vjp(primal: &Function, activity: &Activity, seed_name: &str) -> Function {
    let mut rx = Reverse {
        primal,
        activity,
        builder: Builder::extend(primal.clone()),
        grads: vec![None; primal.insts.len()],
    };
    let out = primal.ret;
    rx.builder.name(out, "out");
    let seed = rx.builder.param(
        seed_name.to_owned(),
        Role::Seed,
        primal.ty(out).clone(),
        primal.span(out),
    );
    if activity.is_active(out) {
        rx.grads[out.index()] = Some(seed);
    }
    for &value in primal.body.insts.iter().rev() {
        if let Some(adjoint) = rx.grads[value.index()] {
            rx.builder.set_adjoint_of(adjoint, value);
            rules::pullback(&mut rx, value, adjoint);
        }
    }

    let mut outputs = vec![out];
    for param in primal
        .params
        .iter()
        .filter(|param| param.role == Role::Active)
    {
        let adjoint = rx.grads[param.value.index()].unwrap_or_else(|| {
            let ty = primal.ty(param.value).clone();
            rx.builder
                .push(Inst::Const(Const::Zero), ty, primal.span(param.value))
        });
        outputs.push(adjoint);
    }
    let ret = if outputs.len() == 1 {
        out
    } else {
        let tys = outputs
            .iter()
            .map(|&value| rx.builder.func().ty(value).clone())
            .collect();
        rx.builder
            .push(Inst::Tuple(outputs), Ty::Tuple(tys), primal.span(out))
    };
    rx.builder.finish(ret)
}

impl Reverse<'_> {
    pub(crate) fn primal(&self) -> &Function {
        self.primal
    }

    pub(crate) fn is_active(&self, value: Value) -> bool {
        self.activity.is_active(value)
    }

    /// Appends an adjoint instruction; `origin` is the primal value whose
    /// pullback it belongs to (for its span).
    pub(crate) fn push(&mut self, inst: Inst, ty: Ty, origin: Value) -> Value {
        self.builder.push(inst, ty, self.primal.span(origin))
    }

    pub(crate) fn binary(&mut self, op: BinOp, lhs: Value, rhs: Value, origin: Value) -> Value {
        let ty = self.ty(lhs).join(self.ty(rhs));
        self.push(Inst::Binary(op, lhs, rhs), ty, origin)
    }

    pub(crate) fn cast(&mut self, value: Value, to: Scalar, origin: Value) -> Value {
        self.push(Inst::Cast(value, to), to.ty(), origin)
    }

    pub(crate) fn extract(&mut self, tuple: Value, index: usize, origin: Value) -> Value {
        let ty = match self.ty(tuple) {
            Ty::Tuple(elems) => elems[index].clone(),
            other => unreachable!("extract from a value of type {other:?}"),
        };
        let index = u32::try_from(index).expect("small tuple");
        self.push(Inst::Extract(tuple, index), ty, origin)
    }

    /// `adjoint(target) += contribution`.
    pub(crate) fn add(&mut self, target: Value, contribution: Value) {
        self.accumulate(target, contribution, false);
    }

    /// `adjoint(target) -= contribution`.
    pub(crate) fn sub(&mut self, target: Value, contribution: Value) {
        self.accumulate(target, contribution, true);
    }

    fn accumulate(&mut self, target: Value, contribution: Value, negate: bool) {
        if !self.is_active(target) {
            return;
        }
        // A negation built by this pass is folded into the sign, so that
        // `-(-c)` becomes `c` and `a + -c` becomes `a - c`.
        let (contribution, negate) = match self.negated(contribution) {
            Some(inner) => (inner, !negate),
            None => (contribution, negate),
        };
        let sum = match (self.grads[target.index()], negate) {
            (None, false) => contribution,
            (None, true) => {
                let ty = self.ty(contribution).clone();
                self.push(Inst::Unary(UnOp::Neg, contribution), ty, target)
            }
            // `-a + c` is `c - a`.
            (Some(current), false) => match self.negated(current) {
                Some(inner) => self.binary(BinOp::Sub, contribution, inner, target),
                None => self.binary(BinOp::Add, current, contribution, target),
            },
            (Some(current), true) => self.binary(BinOp::Sub, current, contribution, target),
        };
        self.grads[target.index()] = Some(sum);
    }

    /// `Some(a)` if `value` is a negation `-a` built by this pass.
    fn negated(&self, value: Value) -> Option<Value> {
        if value.index() < self.primal.insts.len() {
            return None;
        }
        match self.builder.func().inst(value) {
            Inst::Unary(UnOp::Neg, inner) => Some(*inner),
            _ => None,
        }
    }

    fn ty(&self, value: Value) -> &Ty {
        self.builder.func().ty(value)
    }
}
