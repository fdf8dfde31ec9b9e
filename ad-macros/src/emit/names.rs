//! Naming: which values are written inline and which are bound, and to
//! what name (the user's, an SSA version `x_1`, `d_x` for an adjoint, `t1`
//! for a temporary used more than once).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::Ident;

use super::{Emitter, is_destructured, is_statement};
use crate::ir::{Const, Inst, UnOp, Value};

/// How deep an expression is written inline before a part is bound to a local.
const MAX_INLINE_DEPTH: usize = 32;

/// How a value appears in the emitted code.
#[derive(Clone, PartialEq, Eq)]
pub(super) enum Form {
    /// Written out where it is used.
    Inline,
    /// Bound by `let` (or a parameter) to this name.
    Bound(String),
    /// A component of a destructured result (of a pullback or an `if`); `None`
    /// when it is unused (`_`).
    Component(Option<String>),
    /// A mutable variable carried by a loop: the loop's argument inside its
    /// body, and its result after it.
    Carried(String),
}

impl Emitter<'_> {
    pub(super) fn assign_forms(&mut self, uses: &[Vec<crate::ir::Place>]) {
        let func = self.func;
        let places = func.places();
        for param in &func.params {
            let name = self.fresh(&param.name);
            self.forms[param.value.index()] = Form::Bound(name);
        }
        let mut values = Vec::new();
        func.walk(&mut |_, value| values.push(value));
        for &value in &values {
            let inst = func.inst(value);
            let named = func.name(value).is_some();
            let n_uses = uses[value.index()].len();
            if matches!(self.forms[value.index()], Form::Carried(_)) || matches!(inst, Inst::Arg(_))
            {
                // Named with its loop.
                continue;
            }
            if let Inst::For { inits, .. } | Inst::While { inits, .. } = inst {
                self.name_loop(value, inits.len(), uses);
                self.name_slices(value);
                continue;
            }
            // An unused value the user did not name is dead: never written.
            if n_uses == 0
                && !named
                && !matches!(inst, Inst::Extract(..))
                && !func.has_effects(value)
            {
                continue;
            }
            // Used exactly once, in its own region: it can be written there.
            let single_use = n_uses == 1 && uses[value.index()][0] == places[value.index()];
            let form = match inst {
                Inst::Param(_) => continue,
                // A place (`p.w`, `d_p.w`): written where it is used, so
                // that no borrow of the struct outlives the statement.
                Inst::Field { .. } => Form::Inline,
                // `x[a..][..n]`, a place: written where it is passed.
                Inst::Slice { .. } => Form::Inline,
                Inst::Extract(tuple, _) if is_destructured(func, *tuple) => {
                    if uses[value.index()].is_empty() {
                        Form::Component(None)
                    } else {
                        let name = self.name_for(value, false);
                        Form::Component(Some(name.unwrap_or_else(|| self.fresh_temp())))
                    }
                }
                _ if is_destructured(func, value) => Form::Inline,
                _ if is_statement(func, value, n_uses) => Form::Inline,
                Inst::TapeNew { .. }
                | Inst::Pop(_)
                | Inst::NewBuf(_)
                | Inst::CloneBuf { .. }
                | Inst::Shadow { .. }
                | Inst::SeedCopy { .. }
                | Inst::PopShadow(_) => {
                    let name = self.name_for(value, true).expect("bound");
                    Form::Bound(name)
                }
                // Read where the IR reads it: the buffer changes later.
                _ if self.reads_state(value) => {
                    let name = self.name_for(value, true).expect("bound");
                    Form::Bound(name)
                }
                Inst::Const(_) | Inst::Detach(_) | Inst::Tuple(_) if !named && single_use => {
                    Form::Inline
                }
                Inst::Const(_) if !named => Form::Inline,
                _ => match self.name_for(value, !single_use) {
                    Some(name) => Form::Bound(name),
                    None => Form::Inline,
                },
            };
            self.forms[value.index()] = form;
        }
        self.limit_inline_depth(&values);
    }

    /// Names the slices made before the loop `for_value`: `x_s` for `x`.
    pub(super) fn name_slices(&mut self, for_value: Value) {
        let count = self.hoist.loops.get(&for_value).map_or(0, Vec::len);
        for position in 0..count {
            let buf = self.hoist.loops[&for_value][position].buf;
            let base = match &self.forms[buf.index()] {
                Form::Bound(name) => name.clone(),
                _ => self.func.name(buf).unwrap_or("buf").to_owned(),
            };
            let name = self.fresh(&format!("{base}_s"));
            self.slices.insert((for_value, position), name);
        }
    }

    /// Binds an inline expression nested deeper than [`MAX_INLINE_DEPTH`]:
    /// `x + x + … + x` with a thousand terms would otherwise be one expression
    /// a thousand levels deep, overflowing the stack of every recursive printer
    /// (ours, prettyplease's, rustc's).
    pub(super) fn limit_inline_depth(&mut self, values: &[Value]) {
        let func = self.func;
        let mut depth = vec![0_usize; func.insts.len()];
        for &value in values {
            if self.forms[value.index()] != Form::Inline
                || matches!(func.inst(value), Inst::Const(_))
                || is_destructured(func, value)
                || func.inst(value).is_effect()
                || !func.regions(value).is_empty()
            {
                continue;
            }
            let nested = func
                .inst(value)
                .operands()
                .iter()
                .map(|operand| depth[operand.index()])
                .max()
                .unwrap_or(0);
            if nested >= MAX_INLINE_DEPTH {
                let name = self.fresh_temp();
                self.forms[value.index()] = Form::Bound(name);
            } else {
                depth[value.index()] = nested + 1;
            }
        }
    }

    /// Names a loop's index, and its carried values: each is one mutable
    /// variable, the loop's argument inside and its result after it.
    pub(super) fn name_loop(
        &mut self,
        for_value: Value,
        n_carried: usize,
        uses: &[Vec<crate::ir::Place>],
    ) {
        let func = self.func;
        let view = func.inst(for_value).as_loop().expect("a loop");
        let (body, inits) = (view.body, view.inits);
        let index = body.insts[0];
        let is_while = view.range.is_none();
        // A `while` counts its iterations in `trips`, which is also its index.
        let mut results = vec![None; n_carried + usize::from(is_while)];
        for &(k, extract) in &self.extracts[for_value.index()] {
            results[k] = Some(extract);
        }
        if is_while {
            let trips = results.pop().flatten();
            let counted = trips.is_some_and(|trips| !uses[trips.index()].is_empty())
                || !uses[index.index()].is_empty();
            let name = if counted {
                self.fresh("trips")
            } else {
                "_".to_owned()
            };
            self.forms[index.index()] = Form::Carried(name.clone());
            if let Some(trips) = trips {
                self.forms[trips.index()] = Form::Carried(name);
            }
        } else {
            self.forms[index.index()] = if uses[index.index()].is_empty() {
                Form::Bound("_".to_owned())
            } else {
                let name = func.name(index).unwrap_or("i").to_owned();
                Form::Bound(self.fresh(&name))
            };
        }
        for (k, result) in results.into_iter().enumerate() {
            let arg = body.insts[k + 1];
            let init = inits[k];
            // `let p = 1.0; let mut p_1 = p;` is `let mut p = 1.0;` when the loop
            // is the initial value's only use.
            let name = match &self.forms[init.index()] {
                Form::Bound(name)
                    if uses[init.index()].len() == 1
                        && !self.reads_state(init)
                        && !matches!(func.inst(init), Inst::Param(_)) =>
                {
                    let name = name.clone();
                    self.forms[init.index()] = Form::Inline;
                    name
                }
                _ => self.name_for(arg, true).expect("bound"),
            };
            self.forms[arg.index()] = Form::Carried(name.clone());
            if let Some(result) = result {
                self.forms[result.index()] = Form::Carried(name);
            }
        }
    }

    /// `f64` for a variable bound to a float literal without a suffix: rustc
    /// could not call a method on it otherwise (`let x = 0.5; x.abs()`), and the
    /// user's own annotation is not in the IR.
    pub(super) fn annotation(&self, value: Value) -> Option<TokenStream> {
        let ty = self.func.ty(value);
        let scalar = ty.scalar().filter(|_| ty.is_float())?;
        let ty = Ident::new(scalar.name(), Span::call_site());
        self.is_untyped_literal(value)
            .then(|| ty.into_token_stream())
    }

    /// A float literal without a suffix, or its negation, as written.
    pub(super) fn is_untyped_literal(&self, value: Value) -> bool {
        match self.func.inst(value) {
            Inst::Const(Const::Zero) => true,
            Inst::Const(Const::Lit(lit)) => {
                let text = lit.to_string();
                !text.ends_with("f64") && !text.ends_with("f32")
            }
            Inst::Unary(UnOp::Neg, arg) => {
                self.forms[arg.index()] == Form::Inline && self.is_untyped_literal(*arg)
            }
            // `2.0 * 1.5`: arithmetic of untyped literals is untyped too.
            Inst::Binary(op, lhs, rhs) if !op.is_comparison() && !op.is_logic() => {
                [lhs, rhs].iter().all(|&&arg| {
                    self.forms[arg.index()] == Form::Inline && self.is_untyped_literal(arg)
                })
            }
            _ => false,
        }
    }

    /// Whether a value reads state that changes (a tape, a written buffer),
    /// so that it must be computed where the IR has it, never moved later.
    pub(super) fn reads_state(&self, value: Value) -> bool {
        match self.func.inst(value) {
            // Of a sub-slice too: what is written is its base.
            Inst::Load(buf, _) | Inst::Len(buf) => self.is_written(*buf),
            Inst::Call(_, args) => args.iter().any(|&arg| self.is_written(arg)),
            // A pullback lent a shadow that later code resets (the seed of
            // a call whose output went into a buffer, `UserCall::into`).
            Inst::Apply { args, .. } | Inst::Forward { args, .. } => {
                args.iter().any(|&(arg, _)| self.is_written(arg))
                    || self.func.inst(value).is_effect()
            }
            inst => inst.is_effect(),
        }
    }

    /// Whether a buffer, or the buffer a sub-slice views, is written.
    fn is_written(&self, buf: Value) -> bool {
        self.func
            .bases(vec![buf])
            .iter()
            .any(|base| self.written.contains(base))
    }

    /// The name of a value that should be bound, or `None` to inline it.
    pub(super) fn name_for(&mut self, value: Value, needs_binding: bool) -> Option<String> {
        if let Some(name) = self.func.name(value) {
            return Some(self.fresh(name));
        }
        if let Some(primal) = self.func.adjoint_of[value.index()]
            && let Form::Bound(primal_name)
            | Form::Component(Some(primal_name))
            | Form::Carried(primal_name) = &self.forms[primal.index()]
        {
            let name = format!("d_{primal_name}");
            return Some(self.fresh(&name));
        }
        needs_binding.then(|| self.fresh_temp())
    }

    /// `base`, or `base_1`, `base_2`, … if taken. The search for each base
    /// starts after the last suffix it handed out, so that naming stays
    /// linear in the number of values.
    pub(super) fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_owned();
        let mut suffix = self.suffixes.get(base).copied().unwrap_or(0);
        if suffix > 0 {
            name = format!("{base}_{suffix}");
        }
        while self.used.contains(&name) {
            suffix += 1;
            name = format!("{base}_{suffix}");
        }
        self.suffixes.insert(base.to_owned(), suffix);
        self.used.insert(name.clone());
        name
    }

    pub(super) fn fresh_temp(&mut self) -> String {
        while self.used.contains(&format!("t{}", self.next_temp)) {
            self.next_temp += 1;
        }
        self.fresh(&format!("t{}", self.next_temp))
    }
}
