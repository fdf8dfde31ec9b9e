//! Lowering: the user's function (`syn`) → primal IR.
//!
//! Variables become SSA values: a scope maps each name to the value it holds
//! now, and reassignment (`x = x * x`, `s += …`) binds the name to a new value,
//! so every version stays available to the adjoint. Unsupported constructs are
//! reported at their span and lowered to nothing ([`Poison`]); uses of what they
//! would have defined stay silent, so each mistake is reported once.
//!
//! Takes the parsed function and its classified signature (`sig.rs`); gives
//! the primal IR, or errors in the `Ctxt`. Statements and blocks are here,
//! expressions in `expr.rs`, loops in `loops.rs`, buffers in `buffers.rs`,
//! calls of differentiated functions in `calls.rs`, parameter structs in
//! `fields.rs`, early exits in `exits.rs`.

mod buffers;
mod calls;
pub(crate) mod cfg;
pub(crate) mod checkpoint;
mod closures;
mod exits;
mod expr;
mod fields;
mod iter;
mod loops;
mod macros;
mod options;
mod resized;
mod respell;
mod sig;

pub(crate) use sig::{RowsParam, SigParam, Signature, signature, type_string};

use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Block, Expr, ItemFn, Local, Pat, Stmt, Type};

use crate::diag::{Ctxt, msg};
use crate::ir::{BinOp, Builder, Const, Function, Inst, Scalar, Ty, UnOp, Value};

/// The hidden variables of an early `return`.
const RETURNED: &str = "#returned";
const RET: &str = "#ret";

/// The result of lowering something that failed: the error is already reported.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Poison;

type Lowered = Result<Value, Poison>;

/// The names one scope binds, in order, each with its current value, and an
/// index by name: a body of thousands of statements must not scan its names
/// on every use. A `let` of a name the scope already binds replaces the
/// binding in place: the shadowed one can never be named again.
#[derive(Clone, Default)]
struct Scope {
    entries: Vec<(String, Lowered)>,
    index: HashMap<String, usize>,
    /// Names bound to what is no IR value: closures and sub-slices. Such a
    /// binding hides a value binding of the same name in this scope.
    specials: HashMap<String, Special>,
    /// Names whose values Rust sees behind a reference (`for e in
    /// xs.iter()`): macros that name them get a reference.
    refs: std::collections::HashSet<String>,
    /// Names bound to rows they own (a matrix made or copied by their
    /// `let`), not to a view of someone else's: `cur = next;` may copy
    /// into them.
    owned_rows: std::collections::HashSet<String>,
}

/// What a name can be bound to besides a value.
#[derive(Clone)]
enum Special {
    /// `let f = |x| …;`: inlined where it is called.
    Closure(Rc<closures::Closure>),
    /// `let s = &x[a..b];`, a row of `chunks(k)`: a range of a buffer.
    View(iter::View),
    /// `let mut it = x.iter();`: a range of a buffer and the hidden local
    /// holding how many items `it.next()` has taken; what is left is read
    /// as a view (`for v in it`, `it.sum()`).
    Cursor(iter::View, String),
    /// `let pairs = x.iter().zip(y);`: an iterator chain, lowered where it
    /// is consumed (`for`, `sum`, more adapters), as if written there.
    Chain(Rc<iter::Chain>),
    /// `pts: &[[f64; 2]]`: a buffer of rows, stored flat.
    Rows(iter::Rows),
    /// `let mut best = (0, f64::MAX);`: a tuple of this many numbers, each
    /// a hidden variable (see [`tuple_element`]), read as `best.0` and
    /// assigned as a whole or by element.
    Tuple(usize),
    /// `kind: Activation`, a parameter of a type the macro cannot see into
    /// (`sig::opaque_type`): constant data, only matched on.
    Opaque(Value),
    /// `let mut best: Option<f64> = None;`: whether it holds a value and
    /// the value, two hidden variables (see [`options`]).
    Option,
}

impl Scope {
    fn bind(&mut self, name: &str, value: Lowered) {
        self.specials.remove(name);
        self.refs.remove(name);
        match self.index.get(name) {
            Some(&at) => self.entries[at].1 = value,
            None => {
                self.index.insert(name.to_owned(), self.entries.len());
                self.entries.push((name.to_owned(), value));
            }
        }
    }

    fn get(&self, name: &str) -> Option<Lowered> {
        self.index.get(name).map(|&at| self.entries[at].1)
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Lowered> {
        self.index.get(name).map(|&at| &mut self.entries[at].1)
    }

    fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name) || self.specials.contains_key(name)
    }

    /// The bindings, in the order they were made.
    fn iter(&self) -> std::slice::Iter<'_, (String, Lowered)> {
        self.entries.iter()
    }
}

impl FromIterator<(String, Lowered)> for Scope {
    fn from_iter<I: IntoIterator<Item = (String, Lowered)>>(bindings: I) -> Self {
        let mut scope = Scope::default();
        for (name, value) in bindings {
            scope.bind(&name, value);
        }
        scope
    }
}

/// `scopes[s][e]`: the `e`-th binding of a scope, whose value may change
/// (its name may not).
impl std::ops::Index<usize> for Scope {
    type Output = (String, Lowered);
    fn index(&self, at: usize) -> &Self::Output {
        &self.entries[at]
    }
}

impl std::ops::IndexMut<usize> for Scope {
    fn index_mut(&mut self, at: usize) -> &mut Self::Output {
        &mut self.entries[at]
    }
}

/// Lowers the body of `func` into primal IR.
pub(crate) fn body(cx: &Ctxt, func: &ItemFn, sig: &Signature) -> Option<Function> {
    let mut lower = Lower {
        cx,
        builder: Builder::new(sig.ident.unraw().to_string()),
        scopes: vec![Scope::default()],
        loops: Vec::new(),
        n_loops: 0,
        returning: false,
        decided: Vec::new(),
        elements: Vec::new(),
        loads: Vec::new(),
        fields: Vec::new(),
        fixed_len: Default::default(),
        grown: Default::default(),
        pending_mutations: Vec::new(),
        let_is_buffer: false,
        filled_by: None,
        pushed_prefix: Vec::new(),
        positional: HashMap::new(),
        consts: Default::default(),
        const_items: Default::default(),
        trusted_lengths: Vec::new(),
        by_value: HashMap::new(),
        slice_bounds: HashMap::new(),
        arrays: std::collections::HashSet::new(),
        vec_rows: Vec::new(),
        flat_rows: std::collections::HashSet::new(),
        buffer_callee: None,
        part_names: Vec::new(),
        struct_types: Vec::new(),
        returned_tuple: None,
        returns_vec: matches!(&func.sig.output,
            syn::ReturnType::Type(_, ty) if !matches!(**ty, syn::Type::Array(_))),
        returned: match (&sig.output_ty, func.block.stmts.last()) {
            (Ty::Buf(_), Some(Stmt::Expr(tail, None))) => expr::local_name(tail),
            _ => None,
        },
    };
    lower.builder.func_mut().float_param = sig.float_param.clone();
    // A receiver the signature rejected: its uses are not reported again.
    let has_receiver = func
        .sig
        .inputs
        .iter()
        .any(|arg| matches!(arg, syn::FnArg::Receiver(_)));
    if has_receiver && !sig.params.iter().any(|param| param.is_receiver()) {
        lower.bind("self", Err(Poison));
    }
    for param in &sig.params {
        let value = lower.builder.param(
            param.name.clone(),
            param.role,
            param.ir_ty.clone(),
            param.span,
        );
        if param.mutable {
            lower.builder.mark_mutable();
        }
        if let Some(mut ty) = param.by_value.as_ref() {
            while let syn::Type::Paren(paren) = ty {
                ty = &paren.elem;
            }
            if let syn::Type::Array(array) = ty {
                let len = &array.len;
                // `[[T; N]; M]` is held flat: `M * N` elements.
                let len = match &*array.elem {
                    syn::Type::Array(row) => {
                        let width = &row.len;
                        quote::quote!((#len * #width))
                    }
                    _ => quote::quote!(#len),
                };
                lower.by_value.insert(value, len);
            }
        }
        // `p: &Params`: its methods are called as `Params::m(p, …)` (a path
        // with no generic arguments, which an expression could not name).
        if param.ir_ty == Ty::Struct
            && let syn::Type::Reference(reference) = &param.ty
            && let syn::Type::Path(path) = &*reference.elem
            && path.qself.is_none()
            && path
                .path
                .segments
                .iter()
                .all(|segment| segment.arguments.is_none())
        {
            lower.struct_types.push((value, path.path.clone()));
        }
        // `kind: Activation`: only matched on.
        if param.opaque {
            lower.bind_special(&param.name, Special::Opaque(value));
            continue;
        }
        // `state: (f64, f64)`: a tuple variable, one value per element (see
        // `let_stmt`).
        if let Ty::Tuple(elems) = &param.ir_ty {
            let elements: Vec<Value> = (0..elems.len())
                .map(|k| {
                    let index = u32::try_from(k).expect("a small tuple");
                    let ty = elems[k].clone();
                    lower
                        .builder
                        .push(Inst::Extract(value, index), ty, param.span)
                })
                .collect();
            match &param.elements {
                // `(p, v): (f64, f64)`: each element is a variable.
                Some(names) => {
                    for (name, element) in names.iter().zip(elements) {
                        if let Some(name) = name {
                            lower.name(element, name);
                            lower.bind(name, Ok(element));
                        }
                    }
                }
                None => lower.bind_tuple(&param.name, elements),
            }
            continue;
        }
        // A parameter whose type was rejected: its uses are not reported again.
        let bound = if param.ir_ty == Ty::Unknown {
            Err(Poison)
        } else {
            Ok(value)
        };
        lower.bind(&param.name, bound);
        if let (Some(rows), Ok(buf)) = (&param.rows, bound) {
            if !rows.passed_flat() {
                lower.vec_rows.push(buf);
            }
            lower.bind_rows(&param.name, buf, &rows.width, param.span);
            // A matrix taken by value is the function's own.
            if param.by_value.is_some() {
                lower.own_rows(&param.name);
            }
        }
    }
    let respelled = respell::respelled(&func.block);
    let (body, lengths) = resized::resized_in_regions(&respelled);
    lower.trusted_lengths = lengths;
    let out = lower.fn_body(&body, &sig.output_ty).ok()?;
    lower.builder.refine_ty(out, &sig.output_ty);
    Some(lower.builder.finish(out))
}

/// `stmts` with the statements that stand for others written as those, or
/// `None` if there are none: `let a: [f64; 3] = s.try_into().unwrap();` is
/// a test and an array ([`expr::try_into_split`]); `let Some(v) =
/// x.first() else { return 0.0; };` an `if` that diverges and a `let` after
/// it ([`expr::let_else_split`]); `let Some(v) = chain.find(p) else { … };
/// rest`, `if let Some(v) = chain.find(p) { rest } else { … }`, the block's
/// value if `want_value`.
fn desugared(stmts: &[Stmt], want_value: bool) -> Option<Vec<Stmt>> {
    let mut changed = false;
    let mut desugared = Vec::with_capacity(stmts.len());
    for (at, stmt) in stmts.iter().enumerate() {
        if let Some(pair) = expr::try_into_split(stmt).or_else(|| expr::let_else_split(stmt)) {
            desugared.extend(pair);
            changed = true;
        } else if expr::let_else_of_search(stmt) {
            // The rest of the block is lowered in the `if let`'s branch,
            // desugared there.
            desugared.push(expr::let_else_nested(stmt, &stmts[at + 1..], want_value));
            return Some(desugared);
        } else {
            desugared.push(stmt.clone());
        }
    }
    changed.then_some(desugared)
}

/// The most buffers chosen by branches in one block that
/// [`chosen_as_branches`] writes as branches: `2^MAX_CHOICES` copies of the
/// block's last statements.
const MAX_CHOICES: usize = 3;

/// `let w = if c { &a } else { &b }; rest` (or a `match` whose arms are
/// references and bind no names; `is_buffer` tells a buffer named without
/// `&`, `xs` of `xs: &[f64]`; arrays and `vec![…]` written out too) as `if
/// c { let w = &a; rest } else { let w = &b; rest }`: no buffer is ever
/// chosen by a branch, and each branch reads its own (an `else if` is a
/// choice again, taken apart the same way when its block is lowered). With
/// `written`, only where some branch is a buffer written through the
/// choice (`&mut a`, a `&mut` parameter). `None` if `stmts` have no such
/// `let`, or more than [`MAX_CHOICES`] of them.
fn chosen_as_branches(
    stmts: &[Stmt],
    want_value: bool,
    is_buffer: &dyn Fn(&Expr) -> bool,
    written: Option<&dyn Fn(&Expr) -> bool>,
) -> Option<Vec<Stmt>> {
    // A buffer by reference or by name, or an array or `vec![…]` written
    // out (made in the branch).
    let is_reference = |expr: &Expr| match strip_parens(expr) {
        Expr::Reference(_) | Expr::Array(_) | Expr::Repeat(_) => true,
        Expr::Macro(mac) => mac.mac.path.is_ident("vec"),
        Expr::Path(_) => is_buffer(expr),
        _ => false,
    };
    let choice = |stmt: &Stmt| {
        let Stmt::Local(local) = stmt else {
            return false;
        };
        let Some(init) = local.init.as_ref().filter(|init| init.diverge.is_none()) else {
            return false;
        };
        let Some(tails) = choice_tails(&init.expr) else {
            return false;
        };
        bound_name(&local.pat).is_some()
            && tails.iter().all(|tail| is_reference(tail))
            && written.is_none_or(|written| {
                tails.iter().any(|tail| {
                    matches!(strip_parens(tail), Expr::Reference(reference) if reference.mutability.is_some())
                        || written(tail)
                })
            })
    };
    let at = stmts.iter().position(choice)?;
    // Each choice doubles the rest of the block: past a few in one block,
    // the expansion would grow too large (the error says what to write).
    if stmts[at..].iter().filter(|stmt| choice(stmt)).count() > MAX_CHOICES {
        return None;
    }
    let Stmt::Local(local) = &stmts[at] else {
        unreachable!("found above")
    };
    let rest = &stmts[at + 1..];
    let span = local.span();
    // The block of one branch: the `let` of what it chose, then the rest.
    let branch = |chosen: &Expr| -> syn::Block {
        let mut bound = local.clone();
        *bound.init.as_mut().expect("found above").expr = chosen.clone();
        let mut block: syn::Block = syn::parse_quote_spanned!(span=> {});
        block.stmts.push(Stmt::Local(bound));
        block.stmts.extend(rest.iter().cloned());
        block
    };
    let tail = |block: &syn::Block| match block.stmts.last() {
        Some(Stmt::Expr(tail, None)) => tail.clone(),
        _ => unreachable!("checked by `choice_tails`"),
    };
    let init = &local.init.as_ref().expect("found above").expr;
    let branched: Expr = match strip_parens(init) {
        Expr::If(if_expr) => {
            let mut branched = if_expr.clone();
            branched.then_branch = branch(&tail(&if_expr.then_branch));
            let (_, els) = if_expr
                .else_branch
                .as_ref()
                .expect("checked by `choice_tails`");
            let chosen = match strip_parens(els) {
                Expr::Block(els) => tail(&els.block),
                nested => nested.clone(),
            };
            let els = Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: branch(&chosen),
            });
            branched.else_branch = Some((Default::default(), Box::new(els)));
            Expr::If(branched)
        }
        Expr::Match(match_expr) => {
            let mut branched = match_expr.clone();
            for arm in &mut branched.arms {
                *arm.body = Expr::Block(syn::ExprBlock {
                    attrs: Vec::new(),
                    label: None,
                    block: branch(&arm.body),
                });
                arm.comma = Some(Default::default());
            }
            Expr::Match(branched)
        }
        _ => unreachable!("checked by `choice_tails`"),
    };
    let mut out = stmts[..at].to_vec();
    out.push(match want_value {
        true => Stmt::Expr(branched, None),
        false => Stmt::Expr(branched, Some(Default::default())),
    });
    Some(out)
}

/// The value each branch of a choice ends in: an `if` down its `else if`
/// chain whose every block is that value alone, or a `match` whose arms
/// bind no names (a name could stand for another in the statements the
/// arm gets). `None` for any other expression.
fn choice_tails(init: &Expr) -> Option<Vec<&Expr>> {
    fn alone(block: &syn::Block) -> Option<&Expr> {
        match &block.stmts[..] {
            [Stmt::Expr(tail, None)] => Some(tail),
            _ => None,
        }
    }
    match strip_parens(init) {
        Expr::If(if_expr) => {
            let mut tails = Vec::new();
            let mut if_expr = if_expr;
            loop {
                tails.push(alone(&if_expr.then_branch)?);
                match if_expr
                    .else_branch
                    .as_ref()
                    .map(|(_, els)| strip_parens(els))?
                {
                    Expr::Block(els) => {
                        tails.push(alone(&els.block)?);
                        return Some(tails);
                    }
                    Expr::If(nested) => if_expr = nested,
                    _ => return None,
                }
            }
        }
        Expr::Match(match_expr) => match_expr
            .arms
            .iter()
            .map(|arm| {
                expr::pattern_idents(&arm.pat)
                    .iter()
                    .all(|ident| ident.to_string().starts_with(char::is_uppercase))
                    .then_some(&*arm.body)
            })
            .collect(),
        _ => None,
    }
}

struct Lower<'a> {
    cx: &'a Ctxt,
    builder: Builder,
    /// Innermost scope last; each maps a name to its current value. Hidden
    /// variables (the flags of `break`, `continue` and `return`) have names
    /// starting with `#`, which no Rust identifier can.
    scopes: Vec<Scope>,
    /// The loops being lowered, innermost last.
    loops: Vec<loops::LoopFlags>,
    /// How many loops were lowered so far (to name their flags).
    n_loops: usize,
    /// Whether the function has an early `return`, lowered to the hidden
    /// variables `#returned` and `#ret`.
    returning: bool,
    /// The conditions the branches being lowered have decided, innermost
    /// last: in `if c { … } else { … }`, `c` is `true` in the first block
    /// and `false` in the second, so a test of `c` there needs no `if`
    /// (an `else if` of the same flag, which clippy denies as
    /// `ifs_same_cond`).
    decided: Vec<(Value, bool)>,
    /// The elements that loop variables of `iter_mut()` stand for, innermost
    /// last.
    elements: Vec<buffers::ElementPlace>,
    /// Element reads that a later read of the same element can reuse.
    loads: Vec<buffers::LoadSeen>,
    /// The fields of parameter structs read so far.
    fields: Vec<fields::FieldSeen>,
    /// Buffers whose length is assumed fixed: made in a loop (before it, see
    /// `buffers::hoisted_buf`), or whose length sizes such a buffer. A
    /// `push` onto one is rejected.
    fixed_len: std::collections::HashSet<Value>,
    /// Buffers something was pushed onto so far.
    grown: std::collections::HashSet<Value>,
    /// The variables that closures given to the chain being lowered assign.
    pending_mutations: Vec<String>,
    /// Whether the `let` being lowered binds a name that the statements after
    /// it use as a buffer (index, iterate, borrow) before a `let` shadows
    /// it: `let v = g(&x);` then calls a `g` that returns a buffer.
    let_is_buffer: bool,
    /// The variable the body returns, when it returns a buffer.
    returned: Option<String>,
    /// The parameters that are arrays taken by value (`a: [f64; 3]`), with
    /// their lengths as written.
    by_value: HashMap<Value, proc_macro2::TokenStream>,
    /// The length of a sub-slice taken in a loop or a branch (`v[..k]`),
    /// with the length of its buffer, which bounds it (Rust panics on a
    /// longer range): for buffers made from the sub-slice there, when that
    /// length is known before them.
    slice_bounds: HashMap<Value, Value>,
    /// Buffers known to be arrays though not made as one: copies of array
    /// fields (`let a = p.arr;`, valid Rust only for a `Copy` field) and
    /// copies of arrays made in loops (see [`Lower::may_be_array`]).
    arrays: std::collections::HashSet<Value>,
    /// Parameters of rows that are `Vec`s (`&[Vec<f64>]`), held as a flat
    /// copy: no callee takes them so.
    vec_rows: Vec<Value>,
    /// Buffers of rows passed flat to a callee (see [`UserCall::passes_rows`]).
    ///
    /// [`UserCall::passes_rows`]: crate::ir::UserCall::passes_rows
    flat_rows: std::collections::HashSet<Value>,
    /// The function a call being lowered calls, when its result is a
    /// buffer (`qmul` of `let r = qmul(qmul(a, b), c);`, `r` used as one):
    /// a call of the same function among its arguments returns a buffer
    /// too.
    buffer_callee: Option<String>,
    /// The names a `let (a, b) = …;` gives the parts of a tuple chosen by an
    /// `if` or a `match` (see [`Lower::tuple_parts`]), for their hidden
    /// locals.
    part_names: Vec<String>,
    /// The parameter structs and the paths of their types.
    struct_types: Vec<(Value, syn::Path)>,
    /// In a function returning a tuple and returning early, the types of
    /// its elements (see [`Lower::returning_tuple`]).
    returned_tuple: Option<Vec<Ty>>,
    /// Set by [`Lower::stmt_among`] for `let mut v = Vec::new();` in a loop
    /// or a branch followed by a `for` that pushes onto `v` once per
    /// iteration: that loop.
    filled_by: Option<(syn::ExprForLoop, bool)>,
    /// The buffers `filled_by` pushes onto in a branch: the name, the buffer
    /// and the key of its next position, rebound to the positions written
    /// once the filling loop is lowered.
    pushed_prefix: Vec<(String, Value, String)>,
    /// Buffers made for such a `let` (see [`Lower::counted_buffer`]), each
    /// with the hidden local holding the position of its next `push`.
    positional: HashMap<Value, String>,
    /// Whether the function returns a `Vec` (not an array, whose length
    /// its type fixes): then the returned buffer may be chosen by a branch.
    returns_vec: bool,
    /// The names of the block constants of the body (`const K: f64 = …;`):
    /// in a pattern, such a name is the constant, not a new binding.
    consts: std::collections::HashSet<String>,
    /// The names of the block constants declared again in the generated
    /// functions (see [`Lower::consts_first`]).
    const_items: std::collections::HashSet<String>,
    /// The lengths `resized::resized_in_regions` made: `v_store[..v_len]` is
    /// within its buffer by construction, so its bounds are not checked.
    trusted_lengths: Vec<String>,
}

impl Lower<'_> {
    /// [`chosen_as_branches`] of `stmts`, the buffers told by the names
    /// bound here; at the top level only choices written through.
    fn choices_as_branches(
        &self,
        stmts: &[Stmt],
        want_value: bool,
        top: bool,
    ) -> Option<Vec<Stmt>> {
        let buffer = |e: &Expr| self.names_buffer(e);
        let written = |e: &Expr| self.names_written_param(e);
        chosen_as_branches(
            stmts,
            want_value,
            &buffer,
            top.then_some(&written as &dyn Fn(&Expr) -> bool),
        )
    }

    fn fn_body(&mut self, block: &Block, output_ty: &Ty) -> Lowered {
        if let Some(stmts) = desugared(&block.stmts, *output_ty != Ty::Unit) {
            let mut block = block.clone();
            block.stmts = stmts;
            return self.fn_body(&block, output_ty);
        }
        // A buffer written through a choice (see `Lower::stmts`).
        if let Some(stmts) = self.choices_as_branches(&block.stmts, *output_ty != Ty::Unit, true) {
            let mut block = block.clone();
            block.stmts = stmts;
            return self.fn_body(&block, output_ty);
        }
        // `if x.is_empty() { return vec![]; }` before the rest: the `if`
        // it stands for, whose branches end with buffers.
        if matches!(output_ty, Ty::Buf(_))
            && self.returns_vec
            && block
                .stmts
                .iter()
                .any(|stmt| exits::Exits::of_stmt(stmt).returns)
            && let Some(stmts) = guards_as_branches(&block.stmts)
        {
            let mut block = block.clone();
            block.stmts = stmts;
            return self.fn_body(&block, output_ty);
        }
        // A function that returns nothing updates `&mut` buffers.
        self.consts_first(&block.stmts, true);
        self.fns_first(&block.stmts);
        if *output_ty == Ty::Unit {
            // `return;` anywhere: a returned tuple of no elements.
            if block
                .stmts
                .iter()
                .any(|stmt| exits::Exits::of_stmt(stmt).returns)
            {
                let span = block.brace_token.span.join();
                self.returning = true;
                self.returned_tuple = Some(Vec::new());
                let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
                self.bind(RETURNED, Ok(no));
                self.builder.name(no, "returned");
            }
            self.stmts(&block.stmts, false)?;
            let span = block.brace_token.span.close();
            return Ok(self.push(Inst::Tuple(Vec::new()), Ty::Tuple(Vec::new()), span));
        }
        // A `return` before the last statement, or inside it (a tail `loop`
        // or `if` that returns from within), but not the last statement
        // being a `return` itself.
        let early_return = block.stmts.split_last().is_some_and(|(last, init)| {
            init.iter().any(|stmt| exits::Exits::of_stmt(stmt).returns)
                || (!matches!(last, Stmt::Expr(Expr::Return(_), _))
                    && exits::Exits::of_stmt(last).returns)
        });
        if early_return {
            return self.returning_body(block, output_ty);
        }
        let (last, init) = match block.stmts.split_last() {
            Some((last, init)) => (Some(last), init),
            None => (None, &[][..]),
        };
        let uses = BufferUses::of(&block.stmts);
        for index in 0..init.len() {
            self.stmt_among(&block.stmts, index, &uses);
        }
        let tail = match last {
            Some(Stmt::Expr(expr, None)) => expr,
            Some(Stmt::Expr(Expr::Return(ret), Some(_))) if ret.expr.is_some() => {
                ret.expr.as_deref().expect("checked")
            }
            last => {
                if let Some(stmt) = last {
                    self.stmt(stmt);
                }
                // Without a float return type, the missing value is part of the
                // error already reported on the signature.
                if *output_ty != Ty::Unknown {
                    self.cx
                        .error_at(block.brace_token.span.close(), msg::NO_VALUE);
                }
                return Err(Poison);
            }
        };
        // A name returned under a return type already reported (a matrix,
        // say) is not reported again as a value of its kind.
        if *output_ty == Ty::Unknown && expr::local_name(tail).is_some() {
            return Err(Poison);
        }
        let out = self.output(tail, output_ty)?;
        self.by_value_copy(out, tail)
    }

    /// The returned expression: a tuple output is lowered element by element.
    fn output(&mut self, expr: &Expr, output_ty: &Ty) -> Lowered {
        match (expr, output_ty) {
            (Expr::Tuple(tuple), Ty::Tuple(tys)) if tuple.elems.len() == tys.len() => {
                let mut elems = Vec::new();
                let mut poisoned = false;
                for (elem, ty) in tuple.elems.iter().zip(tys) {
                    match self.expr(elem) {
                        Ok(value) => {
                            self.builder.refine_ty(value, ty);
                            elems.push(value);
                        }
                        Err(Poison) => poisoned = true,
                    }
                }
                if poisoned {
                    return Err(Poison);
                }
                let tys = elems
                    .iter()
                    .map(|&value| self.builder.func().ty(value).clone())
                    .collect();
                Ok(self
                    .builder
                    .push(Inst::Tuple(elems), Ty::Tuple(tys), expr.span()))
            }
            // The return type was rejected: lower the elements for their own
            // errors, without a follow-on one for the tuple.
            (Expr::Tuple(tuple), Ty::Unknown) => {
                for elem in &tuple.elems {
                    let _ = self.expr(elem);
                }
                Err(Poison)
            }
            (Expr::Paren(paren), _) => self.output(&paren.expr, output_ty),
            // `if c { a } else { b }` of buffers, as the output.
            (Expr::If(if_expr), Ty::Buf(_)) if self.builder.depth() == 0 && self.returns_vec => {
                self.output_chosen(if_expr)
            }
            // `if c { (a, b) } else { (b, a) }` (or a `match` whose arms
            // end in tuples), or `state`, a tuple variable, as a tuple output.
            (_, Ty::Tuple(tys))
                if match expr {
                    Expr::If(if_expr) => closures::if_yields_tuple(if_expr).is_some(),
                    Expr::Match(match_expr) => closures::match_yields_tuple(match_expr).is_some(),
                    _ => expr::local_name(expr).is_some_and(|name| {
                        matches!(self.special(&name), Some(Special::Tuple(n)) if n == tys.len())
                    }),
                } =>
            {
                let span = expr.span();
                let item = self.item_expr(expr)?;
                let mut elems = Vec::new();
                self.flatten(item, span, &mut elems)?;
                if elems.len() != tys.len() {
                    self.cx.error_at(span, msg::TUPLE_BRANCHES);
                    return Err(Poison);
                }
                for (&value, ty) in elems.iter().zip(tys) {
                    self.builder.refine_ty(value, ty);
                }
                let tys = elems
                    .iter()
                    .map(|&value| self.builder.func().ty(value).clone())
                    .collect();
                Ok(self.builder.push(Inst::Tuple(elems), Ty::Tuple(tys), span))
            }
            _ => self.expr(expr),
        }
    }

    /// A body with an early `return`: `return e` sets `#ret = e` and
    /// `#returned = true`, the statements after it are guarded, and the value
    /// is `if #returned { #ret } else { tail }`.
    fn returning_body(&mut self, block: &Block, output_ty: &Ty) -> Lowered {
        let span = block.brace_token.span.join();
        self.returning = true;
        let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
        self.bind(RETURNED, Ok(no));
        self.builder.name(no, "returned");
        if let Ty::Tuple(tys) = output_ty {
            return self.returning_tuple(block, tys, span);
        }
        let placeholder = self.push(Inst::Const(Const::Zero), output_ty.clone(), span);
        self.bind(RET, Ok(placeholder));
        let tail = self.stmts(&block.stmts, true)?;
        let returned = self.lookup(RETURNED).expect("bound")?;
        let ret = self.lookup(RET).expect("bound")?;
        let value = match tail {
            Some(tail) => {
                let value = self.branch(
                    Ok(returned),
                    true,
                    span,
                    |_| Ok(Some(ret)),
                    |_| Ok(Some(tail)),
                )?;
                value.expect("both branches have a value")
            }
            None => ret,
        };
        self.builder.refine_ty(value, output_ty);
        Ok(value)
    }

    /// Lowers a block in a new scope; its value is its tail expression, when
    /// `want_value` (otherwise the tail is lowered as a statement).
    fn block(&mut self, block: &Block, want_value: bool) -> Result<Option<Value>, Poison> {
        self.in_block(&block.stmts, |this| this.stmts(&block.stmts, want_value))
    }

    /// `lower` run in a new scope for the block of `stmts`, with the
    /// block's constants bound first.
    fn in_block<T>(&mut self, stmts: &[Stmt], lower: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(Scope::default());
        // The positions of buffers filled by pushes (`counted_buffer`) are
        // carried by the loops of this block only.
        let n_pending = self.pending_mutations.len();
        self.consts_first(stmts, false);
        self.fns_first(stmts);
        let lowered = lower(self);
        self.pending_mutations.truncate(n_pending);
        self.scopes.pop();
        lowered
    }

    /// Lowers statements in the current scope. After a statement that may
    /// `break`, `continue` or `return`, the rest runs under `if !exited { … }`.
    fn stmts(&mut self, stmts: &[Stmt], want_value: bool) -> Result<Option<Value>, Poison> {
        if let Some(desugared) = desugared(stmts, want_value) {
            return self.stmts(&desugared, want_value);
        }
        // Inside a loop or a branch, a buffer chosen by a branch is the
        // rest of the block in each branch; at the top level only one
        // written through the choice is (another is a copy: see
        // `Lower::chosen_buffer`).
        let top = self.builder.depth() == 0;
        if let Some(branched) = self.choices_as_branches(stmts, want_value, top) {
            return self.stmts(&branched, want_value);
        }
        let uses = BufferUses::of(stmts);
        for (index, stmt) in stmts.iter().enumerate() {
            let is_last = index + 1 == stmts.len();
            match stmt {
                Stmt::Expr(expr, None) if is_last && want_value => {
                    return self.expr(expr).map(Some);
                }
                // A rejected `return` leaves the block without a known value;
                // no follow-on "no value" error.
                Stmt::Expr(Expr::Return(_), _) if is_last && want_value && !self.returning => {
                    self.stmt(stmt);
                    return Err(Poison);
                }
                _ => self.stmt_among(stmts, index, &uses),
            }
            // `{ …; panic!("…"); }`: the block never ends, so its value is
            // never read.
            let panics = match stmt {
                Stmt::Macro(mac) => macros::diverges_macro(&mac.mac),
                Stmt::Expr(expr, Some(_)) => macros::diverges_expr(expr),
                _ => false,
            };
            if is_last && want_value && panics {
                return Ok(Some(self.push(
                    Inst::Const(Const::Zero),
                    Ty::Unknown,
                    stmt.span(),
                )));
            }
            let exits = exits::Exits::of_stmt(stmt);
            if !exits.any() {
                continue;
            }
            let span = stmt.span();
            if is_last {
                // The block was left: its value is never read.
                return Ok(
                    want_value.then(|| self.push(Inst::Const(Const::Zero), Ty::Unknown, span))
                );
            }
            if let Some(exited) = self.exited(true, span) {
                let go_on = self.not(exited, span);
                let rest = &stmts[index + 1..];
                return self.branch(
                    Ok(go_on),
                    want_value,
                    span,
                    |this| this.stmts(rest, want_value),
                    |this| {
                        Ok(want_value
                            .then(|| this.push(Inst::Const(Const::Zero), Ty::Unknown, span)))
                    },
                );
            }
        }
        Ok(None)
    }

    /// Whether control has left the current statement sequence: any flag set
    /// so far (of the loops being lowered, and of `return`), or `None` if none
    /// can be. With `own_continue` false, the innermost loop's `continue` does
    /// not count (it ends the iteration, not the loop).
    fn exited(&mut self, own_continue: bool, span: Span) -> Option<Value> {
        let mut keys: Vec<String> = Vec::new();
        for (depth, flags) in self.loops.iter().enumerate() {
            keys.push(flags.broke.clone());
            if own_continue || depth + 1 < self.loops.len() {
                keys.push(flags.continued.clone());
            }
        }
        if self.returning {
            keys.push(RETURNED.to_owned());
        }
        let mut exited = None;
        for key in keys {
            let Some(Ok(flag)) = self.lookup(&key) else {
                continue;
            };
            // A flag still at its initial `false` cannot have been set.
            if matches!(
                self.builder.func().inst(flag),
                Inst::Const(Const::Bool(false))
            ) {
                continue;
            }
            exited = Some(match exited {
                Some(acc) => self.push(Inst::Binary(BinOp::Or, acc, flag), Ty::Bool, span),
                None => flag,
            });
        }
        exited
    }

    /// A body with an early `return` of a tuple, `return (a, b);`: one
    /// hidden variable per element (`#ret0`, `#ret1`, …), which every exit
    /// sets, the value at the end of the body too (it is lowered as the
    /// `return` it stands for). The value is the tuple of them.
    fn returning_tuple(&mut self, block: &Block, tys: &[Ty], span: Span) -> Lowered {
        self.returned_tuple = Some(tys.to_vec());
        for (key, ty) in self.returned_keys().iter().zip(tys) {
            let placeholder = self.push(Inst::Const(Const::Zero), ty.clone(), span);
            self.bind(key, Ok(placeholder));
        }
        let mut stmts = block.stmts.clone();
        if let Some(Stmt::Expr(tail, semi @ None)) = stmts.last_mut() {
            let tail_span = tail.span();
            *tail = syn::parse_quote_spanned!(tail_span=> return #tail);
            *semi = Some(syn::Token![;](tail_span));
        }
        self.stmts(&stmts, false)?;
        let mut elems = Vec::new();
        for key in self.returned_keys() {
            elems.push(self.lookup(&key).expect("bound")?);
        }
        Ok(self
            .builder
            .push(Inst::Tuple(elems), Ty::Tuple(tys.to_vec()), span))
    }

    /// The hidden variables holding the returned value: `#ret`, or one per
    /// element of a returned tuple.
    fn returned_keys(&self) -> Vec<String> {
        match &self.returned_tuple {
            Some(tys) => (0..tys.len()).map(|k| format!("{RET}{k}")).collect(),
            None => vec![RET.to_owned()],
        }
    }

    /// The elements of the tuple `return` gives in a function returning
    /// one: written out (or chosen by an `if`), or returned by a call.
    fn returned_elements(&mut self, expr: &Expr, tys: &[Ty]) -> Result<Vec<Value>, Poison> {
        if let Some((func, call)) = self.user_call_of(expr) {
            let values = self.user_call_tuple(func, call, tys.len());
            self.mark_checkpoint(expr);
            return values;
        }
        let tuple = self.output(expr, &Ty::Tuple(tys.to_vec()))?;
        match self.builder.func().inst(tuple) {
            Inst::Tuple(elems) => Ok(elems.clone()),
            _ => {
                self.cx.error_spanned_by(expr, msg::RETURN_TUPLE);
                Err(Poison)
            }
        }
    }

    /// `return e` in a body with an early return.
    fn return_(&mut self, ret: &syn::ExprReturn) {
        if let Some(tys) = self.returned_tuple.clone() {
            let elems = match &ret.expr {
                Some(expr) => self.returned_elements(expr, &tys),
                // `return;` in a function that returns nothing.
                None if tys.is_empty() => Ok(Vec::new()),
                None => {
                    self.cx
                        .error_spanned_by(ret.return_token, msg::RETURN_WITHOUT_VALUE);
                    Err(Poison)
                }
            };
            for (k, key) in self.returned_keys().iter().enumerate() {
                let elem = elems.as_ref().map(|elems| elems[k]).map_err(|_| Poison);
                self.set_hidden(key, elem);
            }
            let yes = self.push(Inst::Const(Const::Bool(true)), Ty::Bool, ret.span());
            self.set_hidden(RETURNED, Ok(yes));
            return;
        }
        let value = match &ret.expr {
            Some(expr) => self.expr(expr),
            None => {
                self.cx
                    .error_spanned_by(ret.return_token, msg::RETURN_WITHOUT_VALUE);
                Err(Poison)
            }
        };
        self.set_hidden(RET, value);
        let yes = self.push(Inst::Const(Const::Bool(true)), Ty::Bool, ret.span());
        self.set_hidden(RETURNED, Ok(yes));
    }

    /// Records the name of the variable a value is bound to; a hidden variable
    /// (`#broke3`) is shown as what it is (`broke`).
    fn name(&mut self, value: Value, name: &str) {
        match name.strip_prefix('#') {
            // An element of a tuple variable, `#best.0`: `best_0`.
            Some(element) if element.contains('.') => {
                self.builder.name(value, &element.replace('.', "_"));
            }
            // A part of an option local, `#best?some` and `#best?`:
            // `best_some` and `best`.
            Some(part) if part.contains('?') => {
                self.builder
                    .name(value, part.replace('?', "_").trim_end_matches('_'));
            }
            Some(hidden) => self
                .builder
                .name(value, hidden.trim_end_matches(|c: char| c.is_ascii_digit())),
            None => self.builder.name(value, name),
        }
    }

    /// `!value`, folded when `value` is a constant or a negation (flags are
    /// often known: `break` sets `true`).
    fn not(&mut self, value: Value, span: Span) -> Value {
        match self.builder.func().inst(value) {
            Inst::Const(Const::Bool(b)) => {
                let negated = !*b;
                self.push(Inst::Const(Const::Bool(negated)), Ty::Bool, span)
            }
            Inst::Unary(UnOp::Not, inner) => *inner,
            // `!(a == b)` is `a != b` for every type (not so `<`, of floats).
            &Inst::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) => {
                let flipped = if op == BinOp::Eq {
                    BinOp::Ne
                } else {
                    BinOp::Eq
                };
                self.push(Inst::Binary(flipped, a, b), Ty::Bool, span)
            }
            _ => self.push(Inst::Unary(UnOp::Not, value), Ty::Bool, span),
        }
    }

    /// `value`, integer arithmetic on unsuffixed literals only (`12345`,
    /// `-3`, `1 << 20`), again with each literal of the integer type
    /// `scalar` (`12345u64`); `None` for anything else, whose type Rust
    /// infers from what it reads.
    fn int_literal_as(
        &mut self,
        value: Value,
        scalar: Scalar,
        span: proc_macro2::Span,
    ) -> Option<Value> {
        if scalar.ty() != Ty::Int {
            return None;
        }
        match self.builder.func().inst(value).clone() {
            Inst::Const(Const::Lit(lit)) => {
                let syn::Lit::Int(int) = syn::Lit::new(lit) else {
                    return None;
                };
                if !int.suffix().is_empty() {
                    return None;
                }
                let typed: proc_macro2::Literal =
                    format!("{}{}", int.base10_digits(), scalar.name())
                        .parse()
                        .ok()?;
                Some(self.push(Inst::Const(Const::Lit(typed)), Ty::Int, span))
            }
            Inst::Unary(op, a) => {
                let a = self.int_literal_as(a, scalar, span)?;
                Some(self.push(Inst::Unary(op, a), Ty::Int, span))
            }
            Inst::Binary(op, a, b) if !op.is_comparison() && !op.is_logic() => {
                let a = self.int_literal_as(a, scalar, span)?;
                let b = self.int_literal_as(b, scalar, span)?;
                Some(self.push(Inst::Binary(op, a, b), Ty::Int, span))
            }
            _ => None,
        }
    }

    /// `name`, a tuple variable: one hidden variable per element
    /// (`#best.0`, printed `best_0`), bound to `values`.
    fn bind_tuple(&mut self, name: &str, values: Vec<Value>) {
        let n = values.len();
        for (k, value) in values.into_iter().enumerate() {
            let key = tuple_element(name, k);
            self.name(value, &key);
            self.bind(&key, Ok(value));
        }
        self.bind_special(name, Special::Tuple(n));
    }

    /// Sets a hidden variable (a flag, a returned or broken-out value).
    pub(super) fn set_hidden(&mut self, key: &str, value: Lowered) {
        if let Some(slot) = self.lookup_mut(key) {
            *slot = value;
        }
    }

    /// `stmts[index]`, knowing what the statements after it do with the
    /// name it binds (see [`Lower::let_is_buffer`]).
    fn stmt_among(&mut self, stmts: &[Stmt], index: usize, uses: &BufferUses) {
        let stmt = &stmts[index];
        self.let_is_buffer = match stmt {
            Stmt::Local(local) => bound_name(&local.pat).is_some_and(|name| {
                uses.used_as_buffer_after(&name, index) || self.returned.as_ref() == Some(&name)
            }),
            _ => false,
        };
        self.filled_by = match stmt {
            Stmt::Local(local) if self.builder.depth() > 0 => {
                filled_by_next(local, &stmts[index + 1..])
            }
            _ => None,
        };
        // Set by the `let`s before: this is the loop that fills their
        // buffers.
        let prefixes = match stmt {
            Stmt::Expr(Expr::ForLoop(_), _) => std::mem::take(&mut self.pushed_prefix),
            _ => Vec::new(),
        };
        self.stmt(stmt);
        self.filled_by = None;
        for (name, buf, key) in prefixes {
            let span = stmt.span();
            if let Some(Ok(kept)) = self.lookup(&key) {
                let slice = self.prefix(buf, kept, span);
                self.name(slice, &name);
                self.bind(&name, Ok(slice));
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let attrs = match stmt {
            Stmt::Local(local) => &local.attrs[..],
            Stmt::Expr(Expr::Block(expr), _) => &expr.attrs[..],
            Stmt::Expr(Expr::If(expr), _) => &expr.attrs[..],
            Stmt::Expr(Expr::Match(expr), _) => &expr.attrs[..],
            Stmt::Macro(mac) => &mac.attrs[..],
            _ => &[],
        };
        if let Some(attr) = checkpoint::misplaced(attrs) {
            self.cx.error_spanned_by(attr, msg::CHECKPOINT_PLACE);
        }
        match stmt {
            Stmt::Local(local) => self.local(local),
            Stmt::Item(item) => self.item(item),
            Stmt::Macro(mac) => match self.effect_macro(&mac.mac) {
                Some(_) => {}
                None => self
                    .cx
                    .error_spanned_by(&mac.mac, msg::macro_(&mac.mac.path)),
            },
            Stmt::Expr(expr, _) => self.expr_stmt(expr),
        }
    }

    /// An item in the body. `use` is declared again in each generated
    /// function; a `const` or `static` was bound before the block's
    /// statements (see [`Lower::consts_first`]).
    fn item(&mut self, item: &syn::Item) {
        match item {
            syn::Item::Use(item_use) => {
                self.builder
                    .func_mut()
                    .items
                    .push(item_use.to_token_stream());
            }
            // Bound as closures where the block starts (`fns_first`).
            syn::Item::Fn(_) => {}
            item if const_item(item).is_some() => {}
            item => self.cx.error_spanned_by(item, msg::ITEM),
        }
    }

    /// The `const` and `static` items of a block, each a local bound to its
    /// value (constant data: an initialiser cannot read locals), before the
    /// block's statements: an item is visible in its whole block, also
    /// above where it is written.
    ///
    /// A scalar constant of the body's own block (`top`) is also declared
    /// again in each generated function, as written, and read by its name:
    /// it may be an array's length (`[x; N]`), and it hides a constant of
    /// the same name outside, which a `let K = …;` could not (E0005). Any
    /// other constant (an array, one of an inner block) is a local named in
    /// lower case, for the same reason.
    fn consts_first(&mut self, stmts: &[Stmt], top: bool) {
        for stmt in stmts {
            let Stmt::Item(item) = stmt else { continue };
            let Some((ident, ty, expr)) = const_item(item) else {
                continue;
            };
            let name = ident.unraw().to_string();
            let scalar = sig::scalar_type(ty, self.builder.func().float_param.as_ref());
            let tokens = item.to_token_stream();
            // Two blocks may declare one name with two values: the second is
            // a local.
            let declared = self
                .builder
                .func()
                .items
                .iter()
                .any(|other| other.to_string() == tokens.to_string());
            let clashes = !declared && self.const_items.contains(&name);
            // A constant of an inner block is a local: declared at the top
            // of the generated function, it would hide an outer one of the
            // same name everywhere.
            if let (Some(scalar), false, true) = (scalar, clashes, top) {
                if !declared {
                    self.builder.func_mut().items.push(tokens);
                    self.const_items.insert(name.clone());
                }
                let path = Const::Path(ident.to_token_stream());
                let value = self.push(Inst::Const(path), scalar.ty(), ident.span());
                self.bind(&name, Ok(value));
                self.consts.insert(name);
                continue;
            }
            let local_ident = syn::Ident::new(&name.to_lowercase(), ident.span());
            let local: Stmt = syn::parse_quote!(let #local_ident: #ty = #expr;);
            self.scopes.push(Scope::default());
            self.stmt(&local);
            let value = self.lookup(&local_ident.to_string());
            // A table of rows is a local matrix: its rows, not one value.
            let special = self.special(&local_ident.to_string());
            self.scopes.pop();
            if let Some(special) = special {
                self.bind_special(&name, special);
            } else if let Some(value) = value {
                self.bind(&name, value);
            }
            self.consts.insert(name);
        }
    }

    /// The function items of a block, each bound to the closure it is to
    /// the lowering (see [`closures::nested_fn_closure`]) before the
    /// block's statements, after its constants, which they may name. One
    /// that calls another is bound after it; one that calls itself, or a
    /// cycle of them, is an error (its calls would be inlined forever).
    fn fns_first(&mut self, stmts: &[Stmt]) {
        let mut pending: Vec<(String, syn::ExprClosure)> = Vec::new();
        for stmt in stmts {
            let Stmt::Item(syn::Item::Fn(item)) = stmt else {
                continue;
            };
            match closures::nested_fn_closure(item) {
                Ok(closure) => pending.push((item.sig.ident.unraw().to_string(), closure)),
                Err(at) => self.cx.error_at(at, msg::NESTED_FN),
            }
        }
        while !pending.is_empty() {
            let names: Vec<String> = pending.iter().map(|(name, _)| name.clone()).collect();
            let ready = pending.iter().position(|(_, closure)| {
                closures::path_names(&closure.body)
                    .iter()
                    .all(|name| !names.contains(name))
            });
            let Some(ready) = ready else {
                for (_, closure) in &pending {
                    self.cx.error_at(closure.span(), msg::NESTED_FN_RECURSIVE);
                    // Poisoned: a call of it reports nothing more.
                }
                for (name, _) in pending {
                    self.bind(&name, Err(Poison));
                }
                return;
            };
            let (name, closure) = pending.remove(ready);
            match self.closure(&closure) {
                Ok(closure) => self.bind_special(&name, Special::Closure(closure)),
                Err(Poison) => self.bind(&name, Err(Poison)),
            }
        }
    }

    /// An expression whose value is not used: assignments, and branches and
    /// blocks for what they assign.
    fn expr_stmt(&mut self, expr: &Expr) {
        match expr {
            // `(a, b) = (b, a + b);`: the right side first, then each target.
            Expr::Assign(assign) if matches!(strip_parens(&assign.left), Expr::Tuple(_)) => {
                let item = match (strip_parens(&assign.left), self.user_call_of(&assign.right)) {
                    (Expr::Tuple(targets), Some((func, call))) => self
                        .user_call_tuple(func, call, targets.elems.len())
                        .map(|values| {
                            closures::Item::Tuple(
                                values.into_iter().map(closures::Item::Value).collect(),
                            )
                        }),
                    _ => self.item_expr(&assign.right),
                };
                self.mark_checkpoint(&assign.right);
                if let Ok(item) = item {
                    self.assign_pattern(&assign.left, item, assign.span());
                }
            }
            // `best = Some(v);` of an option local: both parts assigned.
            Expr::Assign(assign) if self.option_assign(assign) => {}
            // `best = (i, d);` of a tuple variable: each element assigned.
            Expr::Assign(assign)
                if let Some(name) = expr::local_name(&assign.left)
                    && let Some(Special::Tuple(n)) = self.special(&name) =>
            {
                let item = match self.user_call_of(&assign.right) {
                    Some((func, call)) => self.user_call_tuple(func, call, n).map(|values| {
                        closures::Item::Tuple(
                            values.into_iter().map(closures::Item::Value).collect(),
                        )
                    }),
                    None => self.item_expr(&assign.right),
                };
                match item.as_ref().map(closures::Item::tuple_values) {
                    Ok(Some(values)) if values.len() == n => {
                        for (k, value) in values.into_iter().enumerate() {
                            let key = tuple_element(&name, k);
                            if let Some(Ok(old)) = self.lookup(&key) {
                                let ty = self.builder.func().ty(old).clone();
                                self.builder.refine_ty(value, &ty);
                            }
                            self.set_hidden(&key, Ok(value));
                            self.name(value, &key);
                        }
                    }
                    Ok(_) => self.cx.error_spanned_by(&assign.right, msg::TUPLE_VALUE),
                    Err(Poison) => {}
                }
            }
            // `cur = next;` of matrices, `m[i] = [a, b];` of a row: the
            // elements copied.
            Expr::Assign(assign) if self.rows_assignment(assign) => {}
            Expr::Assign(assign) => {
                // `cur = step(&cur);` of a buffer: the callee returns one.
                let buffer_call = self
                    .user_call_of(&assign.right)
                    .filter(|_| self.names_buffer(&assign.left));
                let value = match buffer_call {
                    Some((func, call)) => {
                        let value = self.user_call_buffer(func, call);
                        self.mark_checkpoint(&assign.right);
                        value
                    }
                    None => self.expr(&assign.right),
                };
                match self.element_target(&assign.left) {
                    Some(element) => {
                        if let (Ok(element), Ok(value)) = (element, value) {
                            self.write_element(element, None, value, assign.span());
                        }
                    }
                    None => {
                        let moved = !matches!(strip_parens(&assign.right), Expr::Path(_));
                        self.assign_moved(&assign.left, value, moved);
                    }
                }
            }
            Expr::Binary(binary) if expr::compound_op(&binary.op).is_some() => {
                let op = expr::compound_op(&binary.op).expect("checked");
                if let Some(element) = self.element_target(&binary.left) {
                    let value = self.expr(&binary.right);
                    if let (Ok(element), Ok(value)) = (element, value) {
                        self.write_element(element, Some(op), value, binary.span());
                    }
                    return;
                }
                let value = match (self.expr(&binary.left), self.expr(&binary.right)) {
                    (Ok(lhs), Ok(rhs)) => Ok(self.binary(op, lhs, rhs, binary.span())),
                    _ => Err(Poison),
                };
                self.assign(&binary.left, value);
            }
            Expr::Block(block) if block.label.is_none() => {
                let _ = self.block(&block.block, false);
            }
            Expr::If(if_expr) => {
                let _ = self.if_(if_expr, false);
            }
            Expr::Match(match_expr) => {
                let _ = self.match_(match_expr, false);
            }
            Expr::ForLoop(for_loop) => {
                let _ = self.for_loop(for_loop);
            }
            Expr::While(while_loop) => {
                let _ = self.while_loop(while_loop);
            }
            Expr::Loop(loop_expr) => {
                let _ = self.loop_expr(loop_expr, false);
            }
            Expr::Break(brk) => self.break_(brk),
            Expr::Continue(cont) => self.continue_(cont),
            Expr::Return(ret) if self.returning => self.return_(ret),
            // `()`, as in a `match` arm `_ => ()`: nothing to do.
            Expr::Tuple(tuple) if tuple.elems.is_empty() => {}
            Expr::Return(ret) => self
                .cx
                .error_spanned_by(ret.return_token, msg::EARLY_RETURN),
            expr => {
                let _ = self.expr(expr);
            }
        }
    }

    /// Binds every name of `pat` to [`Poison`]: its value was reported.
    fn poison_pattern(&mut self, pat: &Pat) {
        for ident in expr::pattern_idents(pat) {
            self.bind(&ident.unraw().to_string(), Err(Poison));
        }
    }

    fn local(&mut self, local: &Local) {
        let (pat, annotation) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
        let name = match pat {
            Pat::Ident(ident) if ident.by_ref.is_some() => {
                self.cx.error_spanned_by(ident, msg::REF_BINDING);
                None
            }
            Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.unraw().to_string()),
            _ => None,
        };
        let is_buffer_use = std::mem::take(&mut self.let_is_buffer);
        let Some(init) = &local.init else {
            self.cx.error_spanned_by(local, msg::LET_WITHOUT_INIT);
            if let Some(name) = &name {
                self.bind(name, Err(Poison));
            }
            return;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.cx.error_spanned_by(else_token, msg::LET_ELSE);
            // Reported: the names it binds are not reported again.
            self.poison_pattern(&local.pat);
            return;
        }
        // `let mut best: Option<f64> = None;`, `let p = Some(v);`.
        if let Some(name) = &name
            && self.option_let(name, annotation, &init.expr)
        {
            return;
        }
        // `let f = |x| …;`: inlined where it is called.
        if let (Some(name), Expr::Closure(closure)) = (&name, strip_parens(&init.expr)) {
            match self.closure(closure) {
                Ok(closure) => self.bind_special(name, Special::Closure(closure)),
                Err(Poison) => self.bind(name, Err(Poison)),
            }
            return;
        }
        // `let b = a.map(|v| …);` of an array: the loop it stands for.
        if let (Some(name), Expr::MethodCall(call)) = (&name, strip_parens(&init.expr))
            && let Some(stmts) = self.array_map_loop(name, call)
        {
            for stmt in &stmts {
                self.stmt(stmt);
            }
            return;
        }
        // `let v: [f64; 3] = std::array::from_fn(|i| …);`: the loop it
        // stands for, writing a local array.
        if let Some(name) = &name
            && let Some(stmts) = from_fn_loop(
                name,
                annotation,
                &init.expr,
                self.builder.func().float_param.clone(),
            )
        {
            match stmts {
                Ok(stmts) => {
                    for stmt in &stmts {
                        self.stmt(stmt);
                    }
                }
                Err(span) => {
                    self.cx.error_at(span, msg::FROM_FN_LENGTH);
                    self.bind(name, Err(Poison));
                }
            }
            return;
        }
        // `let mut it = x.iter();`: a cursor over `x`.
        if let Some(name) = &name
            && let Some(view) = self.cursor_over(&init.expr)
        {
            match view {
                Ok(view) => {
                    let key = self.block_counter(&format!("{name}_taken"), local.span());
                    self.bind_special(name, Special::Cursor(view, key));
                }
                Err(Poison) => self.bind(name, Err(Poison)),
            }
            return;
        }
        // `let mut f = vec![[0.0; 2]; n];`, `[[0.0; 3]; 3]`: a buffer of
        // rows made here, flat, as `vec![0.0; n * 2]`.
        if let Some(name) = &name
            && let Some((flat, width, vecs)) = rows_literal(&init.expr)
        {
            let buf = self.expr(&flat);
            if let Ok(buf) = buf {
                self.name(buf, name);
                // `[[0.0; 3]; 2]`, held in a `Vec`, is an array all the
                // same: `let w = m;` copies it.
                if matches!(strip_parens(&init.expr), Expr::Array(_) | Expr::Repeat(_)) {
                    self.arrays.insert(buf);
                }
            }
            self.bind(name, buf);
            match (buf, vecs) {
                // `vec![vec![0.0; n]; m]`: the row length as computed here.
                (Ok(buf), true) => {
                    if let Ok(width) = self.expr(&width) {
                        self.vec_rows.push(buf);
                        self.bind_rows_with(name, buf, width);
                        self.own_rows(name);
                    }
                }
                (Ok(buf), false) => {
                    self.bind_rows(name, buf, &width, local.span());
                    self.own_rows(name);
                }
                (Err(Poison), _) => {}
            }
            return;
        }
        // `let mut w = m;` of a matrix (`[[f64; 2]; 2]`, made here or taken
        // by value): a copy, as Rust makes; rows of a `Vec` are moved, and
        // rows behind a reference shared. `m.clone()` is a copy of any rows.
        let (source, cloned) = match strip_parens(&init.expr) {
            Expr::MethodCall(call) if call.method == "clone" && call.args.is_empty() => {
                (&*call.receiver, true)
            }
            source => (source, false),
        };
        if let Some(name) = &name
            && let Some(source_name) = expr::local_name(source)
            && let Some(Ok(rows)) = self.rows_of(source)
            && (cloned || self.owns_rows(&source_name) && self.may_be_array(rows.flat.buf))
        {
            let copy = self.copy_of(rows.flat.buf, true, source, init.expr.span());
            if let Ok(copy) = copy {
                self.name(copy, name);
                self.arrays.insert(copy);
                self.bind(name, Ok(copy));
                self.bind_rows_with(name, copy, rows.width);
                self.own_rows(name);
            } else {
                self.bind(name, copy);
            }
            return;
        }
        // `let mut row = m[i];` of rows (arrays or tuples, both `Copy`): a
        // copy of the row, as Rust makes (`&m[i]` is the row itself). A
        // `let p = pts[i];` of rows nothing can write (a `&` parameter's)
        // reads the row where it is.
        if let Some(name) = &name
            && let Expr::Index(index) = strip_parens(&init.expr)
            && !matches!(strip_parens(&index.index), Expr::Range(_))
            && let Some(Ok(rows)) = self.rows_of(&index.expr)
            && (is_mut_binding(&local.pat) || !self.is_shared_param(rows.flat.buf))
            && let Some(row) = self.view_of(&init.expr)
        {
            let copy = row.and_then(|row| self.view_to_vec(row, &init.expr, init.expr.span()));
            if let Ok(copy) = copy {
                self.name(copy, name);
                self.arrays.insert(copy);
            }
            self.bind(name, copy);
            return;
        }
        // `let rest = &pts[1..];`: rows of a buffer of rows.
        if let Some(name) = &name
            && let Some(rows) = self.rows_of(&init.expr)
        {
            match rows {
                Ok(rows) => self.bind_special(name, Special::Rows(rows)),
                Err(Poison) => self.bind(name, Err(Poison)),
            }
            return;
        }
        // `let pairs = x.iter().zip(y);`: the chain, consumed later (not
        // a method of an option a chain makes, `chain.find(p).is_some()`).
        if let Some(name) = &name
            && iter::is_iterator_expr(&init.expr)
            && !matches!(strip_parens(&init.expr), Expr::MethodCall(call) if self.is_option_source(&call.receiver))
            // `x.chunks_exact(k).remainder()`: a sub-slice, no chain.
            && !matches!(strip_parens(&init.expr), Expr::MethodCall(call) if call.method == "remainder")
            && let Some(chain) = self.chain_of(&init.expr)
        {
            match chain {
                Ok(chain) => self.bind_special(name, Special::Chain(Rc::new(chain))),
                Err(Poison) => self.bind(name, Err(Poison)),
            }
            return;
        }
        // `let w = if c { &a } else { &b };`: a copy of the chosen buffer.
        if let Some(name) = &name
            && let Some(value) = self.chosen_buffer(strip_parens(&init.expr))
        {
            if let Ok(value) = value {
                self.name(value, name);
            }
            self.bind(name, value);
            return;
        }
        // `let mut v = Vec::new();` in a loop, filled by the `for` after it.
        if let (Some(name), Some((filler, conditional))) = (&name, self.filled_by.take()) {
            let value = self.counted_buffer(&init.expr, &filler);
            if let Ok(value) = value {
                self.name(value, name);
                if conditional {
                    let key = self.positional[&value].clone();
                    self.pushed_prefix.push((name.clone(), value, key));
                }
            }
            self.bind(name, value);
            return;
        }
        // `let v = g(&x);` where `v` is used as a buffer (or annotated as
        // one): `g` returns a `Vec` or an array.
        if let (Some(name), Some((func, call))) = (&name, self.user_call_of(&init.expr))
            && (is_buffer_use || annotation.is_some_and(is_buffer_type))
        {
            let value = self.user_call_buffer(func, call);
            self.mark_checkpoint(&init.expr);
            if let Ok(value) = value {
                self.name(value, name);
            }
            self.bind(name, value);
            return;
        }
        // `let [u, v, w] = p.a;` of an array field: its elements.
        if let (Pat::Slice(_), Expr::Field(field)) = (pat, strip_parens(&init.expr))
            && let Some(buf) = self.field(field, true)
        {
            if let Ok(buf) = buf {
                let _ = self.bind_pattern(pat, closures::Item::Value(buf));
            }
            return;
        }
        // `let [x, y, z] = cross(&a, &b);`: the callee's buffer, taken apart.
        if let (Pat::Slice(_), Some((func, call))) = (pat, self.user_call_of(&init.expr)) {
            let value = self.user_call_buffer(func, call);
            self.mark_checkpoint(&init.expr);
            if let Ok(value) = value {
                let _ = self.bind_pattern(pat, closures::Item::Value(value));
            }
            return;
        }
        // `let (r, c) = split(i, n);` of integers: a function of the user's
        // run as written (see `constant_call`), its elements read from it.
        if let (Pat::Tuple(tuple), Some((func, call))) = (pat, self.user_call_of(&init.expr))
            && tuple.elems.iter().all(|elem| !matches!(elem, Pat::Rest(_)))
            && call.args.iter().all(|arg| self.is_constant_data(arg))
        {
            let span = call.span();
            let whole = self.constant_call(func, call, &expr::segments(&func.path));
            if let Ok(whole) = whole {
                let n = tuple.elems.len();
                self.builder.func_mut().insts[whole.index()].ty = Ty::Tuple(vec![Ty::Unknown; n]);
                let items = (0..n)
                    .map(|k| {
                        let k = u32::try_from(k).expect("a small tuple");
                        closures::Item::Value(self.push(Inst::Extract(whole, k), Ty::Unknown, span))
                    })
                    .collect();
                let _ = self.bind_pattern(pat, closures::Item::Tuple(items));
            }
            return;
        }
        // `let (r, theta) = polar(x, y);`: the pattern says how many floats
        // the callee returns.
        if let (Pat::Tuple(tuple), Some((func, call))) = (pat, self.user_call_of(&init.expr))
            && tuple.elems.iter().all(|elem| !matches!(elem, Pat::Rest(_)))
        {
            let n = tuple.elems.len();
            let values = self.user_call_tuple(func, call, n);
            self.mark_checkpoint(&init.expr);
            match values {
                Ok(values) => {
                    let item = closures::Item::Tuple(
                        values.into_iter().map(closures::Item::Value).collect(),
                    );
                    let _ = self.bind_pattern(pat, item);
                }
                Err(Poison) => self.poison_pattern(pat),
            }
            return;
        }
        // `let mut q = p.pos;` of an array field, used as a buffer: a copy,
        // as Rust makes (the struct is borrowed).
        if let (Some(name), Expr::Field(field)) = (&name, strip_parens(&init.expr))
            && (is_buffer_use || annotation.is_some_and(is_buffer_type))
            && let Some(buf) = self.field(field, true)
        {
            let value = buf.and_then(|buf| self.copy_of(buf, true, &init.expr, local.span()));
            if let Ok(value) = value {
                self.name(value, name);
                self.arrays.insert(value);
            }
            self.bind(name, value);
            return;
        }
        // `let w = GW;`, `let mut w: [f64; 3] = GW;` of a table outside the
        // function: the table, or a copy of it to write into.
        if let (Some(name), Expr::Path(path)) = (&name, strip_parens(&init.expr))
            && (is_buffer_use || annotation.is_some_and(is_buffer_type))
            && buffers::is_constant_path(path)
            && let Some(table) = self.buffer_of(&init.expr)
        {
            let mutable = matches!(pat, Pat::Ident(ident) if ident.mutability.is_some());
            let value = table.and_then(|table| match mutable {
                true => self.copy_of(table, true, &init.expr, local.span()),
                false => Ok(table),
            });
            if let (Ok(value), true) = (value, mutable) {
                self.name(value, name);
            }
            self.bind(name, value);
            return;
        }
        self.part_names = match pat {
            Pat::Tuple(tuple) => tuple
                .elems
                .iter()
                .map(|elem| match elem {
                    Pat::Ident(ident) => ident.ident.unraw().to_string(),
                    _ => "part".to_owned(),
                })
                .collect(),
            _ => Vec::new(),
        };
        let item = self.item_expr(&init.expr);
        self.part_names.clear();
        let value = match item {
            Ok(closures::Item::Value(value)) => Ok(value),
            // `let mut best = (0, f64::MAX);`: one hidden variable per
            // element.
            Ok(item)
                if let Some(name) = &name
                    && let Some(values) = item.tuple_values() =>
            {
                self.bind_tuple(name, values);
                return;
            }
            Ok(item) => {
                // A tuple, a sub-slice: destructured or bound as it is.
                if self.bind_pattern(pat, item).is_err()
                    && let Some(name) = &name
                {
                    self.bind(name, Err(Poison));
                }
                return;
            }
            // Reported: the names a destructuring pattern binds are not
            // reported again where they are used.
            Err(Poison) if name.is_none() => {
                self.poison_pattern(pat);
                return;
            }
            Err(Poison) => Err(Poison),
        };
        // `let [x, y, z] = *p;`, `let (i, j) = EDGES[k];`
        if let (Pat::Slice(_) | Pat::Tuple(_), Ok(value)) = (pat, value) {
            let _ = self.bind_pattern(pat, closures::Item::Value(value));
            return;
        }
        if name.is_none() && !matches!(pat, Pat::Wild(_)) {
            if !matches!(pat, Pat::Ident(ident) if ident.by_ref.is_some()) {
                self.cx.error_spanned_by(pat, msg::LET_PATTERN);
            }
            return;
        }
        let is_buffer = value.is_ok_and(|value| matches!(self.ty(value), Ty::Buf(_)));
        // A buffer's annotation (`Vec<f64>`, `[f64; 3]`) is checked by rustc.
        let mut value = value;
        if let (Ok(lowered), Some(annotation), false) = (value, annotation, is_buffer) {
            match sig::scalar_type(annotation, self.builder.func().float_param.as_ref()) {
                Some(scalar) => {
                    self.builder.refine_ty(lowered, &scalar.ty());
                    // `let mut state: u64 = 12345;`: the literal keeps the
                    // type (`12345u64`), which the generated code's integers
                    // have no other way to know (`state.wrapping_mul(…)`).
                    if let Some(typed) = self.int_literal_as(lowered, scalar, local.span()) {
                        value = Ok(typed);
                    }
                }
                None => self.cx.error_spanned_by(
                    annotation,
                    msg::param_type(&quote::quote!(#annotation).to_string()),
                ),
            }
        }
        if let Some(name) = name {
            // `let mut b = a;` of an array: a copy, as in Rust (one copy: a
            // parameter's is made here too).
            let value = value.and_then(|value| {
                if expr::local_name(&init.expr).is_some() && self.may_be_array(value) {
                    self.copy_of(value, true, &init.expr, init.expr.span())
                } else {
                    self.by_value_copy(value, &init.expr)
                }
            });
            if let Ok(value) = value {
                self.name(value, &name);
            }
            self.bind(&name, value);
        }
    }

    /// Whether `buf` may be an array, which `let b = a;` copies (a `Vec` is
    /// moved, so sharing it is right, and a buffer parameter is shared): one
    /// made as an array or taken by value, a copy of one, or a call's output,
    /// whose type the macro does not see.
    fn may_be_array(&self, buf: Value) -> bool {
        matches!(self.ty(buf), Ty::Buf(_))
            && (self.array_len(buf).is_some()
                || self.arrays.contains(&buf)
                || match self.builder.func().inst(buf) {
                    Inst::NewBuf(crate::ir::NewBuf::Output) | Inst::Extract(..) => true,
                    Inst::CloneBuf {
                        src, clone: true, ..
                    } => self.may_be_array(*src),
                    _ => false,
                })
    }

    /// `cur = next;` between two buffers of rows, `cur` owning its rows
    /// (a view of rows is rebound in Rust, which is not supported), or
    /// `m[i] = [a, b];` (or `= r;` of a buffer) into a row: the elements
    /// copied, in `cur`'s buffer (whose length must agree, as for
    /// buffers). False if `assign` is neither.
    fn rows_assignment(&mut self, assign: &syn::ExprAssign) -> bool {
        let span = assign.span();
        if let Some(target) = expr::local_name(&assign.left)
            && expr::local_name(&assign.right).is_some()
            && let Some(to) = self.rows_of(&assign.left)
            && let Some(from) = self.rows_of(&assign.right)
        {
            if !self.owns_rows(&target) {
                self.cx.error_spanned_by(assign, msg::REBIND_ROWS);
                return true;
            }
            if let (Ok(to), Ok(from)) = (to, from) {
                let _ = self.copy_buffer(from.flat.buf, to.flat.buf, &assign.left);
            }
            return true;
        }
        let Expr::Index(index) = strip_parens(&assign.left) else {
            return false;
        };
        if matches!(strip_parens(&index.index), Expr::Range(_))
            || self.rows_of(&index.expr).is_none_or(|rows| rows.is_err())
        {
            return false;
        }
        let Some(row) = self.view_of(&assign.left) else {
            return false;
        };
        let Ok(row) = row else { return true };
        if let Expr::Array(array) = strip_parens(&assign.right) {
            for (k, elem) in array.elems.iter().enumerate() {
                if let Ok(value) = self.expr(elem) {
                    let offset = self.usize_lit(k, span);
                    let at = self.int_add(row.start, offset, span);
                    self.write_element((row.buf, at), None, value, span);
                }
            }
            return true;
        }
        let Some(source) = self.view_or_buffer(&assign.right) else {
            return false;
        };
        if let Ok(source) = source {
            let start = self.usize_lit(0, span);
            let _ = self.index_loop(start, source.len, span, |this, k| {
                let from = this.int_add(source.start, k, span);
                let x = this.load(source.buf, from, span);
                let to = this.int_add(row.start, k, span);
                this.write_element((row.buf, to), None, x, span);
            });
        }
        true
    }

    /// Whether `buf` is a parameter taken by `&` (no write can reach it).
    fn is_shared_param(&self, buf: Value) -> bool {
        self.builder
            .func()
            .params
            .iter()
            .any(|param| param.value == buf && !param.mutable)
    }

    /// Whether `target` is the name of a local bound to a buffer.
    pub(super) fn names_buffer(&self, target: &Expr) -> bool {
        expr::local_name(target)
            .and_then(|name| self.lookup(&name))
            .is_some_and(|value| {
                value.is_ok_and(|value| matches!(self.builder.func().ty(value), Ty::Buf(_)))
            })
    }

    /// `g(…)`, a call of a function of the user's: not of a closure or a
    /// local the name is bound to.
    /// `ad_runtime::checkpoint(g(x))` is `g(x)` here; the caller marks the
    /// call it makes (see [`Lower::mark_checkpoint`]).
    fn user_call_of<'e>(&self, expr: &'e Expr) -> Option<(&'e syn::ExprPath, &'e syn::ExprCall)> {
        let expr = checkpoint_wrapper(expr).map_or(expr, |(_, inner)| inner);
        let Expr::Call(call) = strip_parens(expr) else {
            return None;
        };
        let Expr::Path(func) = strip_parens(&call.func) else {
            return None;
        };
        let bound = expr::local_name(&call.func)
            .is_some_and(|name| self.special(&name).is_some() || self.lookup(&name).is_some());
        (calls::is_user_function(func) && !bound).then_some((func, call))
    }

    /// After the call [`Lower::user_call_of`] found in `expr` is lowered: if
    /// `expr` is `ad_runtime::checkpoint(g(…))`, that call (the last one
    /// made) is checkpointed, as a float-valued one is in `expr.rs`.
    fn mark_checkpoint(&mut self, expr: &Expr) {
        if let Some((path, _)) = checkpoint_wrapper(expr) {
            self.runtime_path(path, "checkpoint");
            if let Some(call) = self.builder.func_mut().user_calls.last_mut() {
                call.checkpoint = true;
            }
        }
    }

    /// Assigns the parts of a tuple to the parts of a tuple of targets:
    /// locals, elements (`x[i]`), `_`, or tuples of them.
    fn assign_pattern(&mut self, target: &Expr, item: closures::Item, span: proc_macro2::Span) {
        match (strip_parens(target), item) {
            (Expr::Tuple(targets), closures::Item::Tuple(items))
                if targets.elems.len() == items.len() =>
            {
                for (target, item) in targets.elems.iter().zip(items) {
                    self.assign_pattern(target, item, span);
                }
            }
            (Expr::Infer(_), _) => {}
            (target, closures::Item::Value(value) | closures::Item::Ref(value)) => {
                match self.element_target(target) {
                    Some(Ok(element)) => self.write_element(element, None, value, span),
                    Some(Err(Poison)) => {}
                    None => self.assign(target, Ok(value)),
                }
            }
            (target, _) => self.cx.error_spanned_by(target, msg::ASSIGN_TARGET),
        }
    }

    fn assign(&mut self, target: &Expr, value: Lowered) {
        self.assign_moved(target, value, false);
    }

    /// [`Lower::assign`]; `moved`: the value is a new buffer no variable
    /// holds (`v = v.iter().copied().filter(p).collect();`), which a buffer
    /// variable assigned outside any loop or branch simply becomes.
    pub(super) fn assign_moved(&mut self, target: &Expr, value: Lowered, moved: bool) {
        // `best.1 = d;` of a tuple variable: its element's variable.
        let name = match strip_parens(target) {
            Expr::Field(field) => match self.tuple_element_of(field) {
                Some(Ok(key)) => Some(key),
                Some(Err(Poison)) => return,
                None => None,
            },
            _ => expr::local_name(target),
        };
        let Some(name) = name else {
            self.cx.error_spanned_by(target, msg::ASSIGN_TARGET);
            return;
        };
        // A tuple variable is assigned element by element (`best = (i, d);`
        // in `expr_stmt`), never as one value (`best += …`).
        if let Some(Special::Tuple(_)) = self.special(&name) {
            self.cx.error_spanned_by(target, msg::TUPLE_VALUE);
            return;
        }
        let Some(old) = self.lookup(&name) else {
            self.cx.error_spanned_by(target, msg::ASSIGN_TARGET);
            return;
        };
        if let Ok(old) = old
            && matches!(self.builder.func().ty(old), Ty::Buf(_))
        {
            // `cur = next;`: `next` is moved, so copying its elements into
            // `cur` is the same, when the lengths agree. Outside any loop
            // or branch a new buffer is `cur` from here on, of any length.
            match value {
                Ok(value)
                    if moved
                        && self.builder.depth() == 0
                        && matches!(self.builder.func().ty(value), Ty::Buf(_))
                        && !self.builder.func().is_param(old) =>
                {
                    let slot = self.lookup_mut(&name).expect("bound");
                    *slot = Ok(value);
                    self.name(value, &name);
                }
                Ok(value)
                    if matches!(self.builder.func().ty(value), Ty::Buf(_))
                        && !self.builder.func().is_param(old) =>
                {
                    let _ = self.copy_buffer(value, old, target);
                }
                Ok(_) => self.cx.error_spanned_by(target, msg::BUFFER_REASSIGN),
                Err(Poison) => {}
            }
            return;
        }
        // A variable has one type: `x = 0.5` gives the literal the type of `x`.
        if let (Ok(old), Ok(value)) = (old, value) {
            let ty = self.builder.func().ty(old).clone();
            self.builder.refine_ty(value, &ty);
        }
        let slot = self.lookup_mut(&name).expect("bound");
        *slot = value;
        if let Ok(value) = value {
            self.name(value, &name);
        }
    }

    fn bind(&mut self, name: &str, value: Lowered) {
        self.scopes.last_mut().expect("a scope").bind(name, value);
    }

    /// `a.map(f)` of an array anywhere else (`a.map(f64::sin)` returned,
    /// passed on): the loop of [`Lower::array_map_loop`], writing a local
    /// named `mapped`. `None` if `call` is no such `map`.
    pub(super) fn array_map(&mut self, call: &syn::ExprMethodCall) -> Option<Lowered> {
        let name = self.unused_name("mapped".to_owned());
        let stmts = self.array_map_loop(&name, call)?;
        for stmt in &stmts {
            self.stmt(stmt);
        }
        self.lookup(&name)
    }

    /// `let b = a.map(f);` of an array `a` (a buffer: `Vec` and slices have
    /// no `map`) as the statements it stands for: `let __ad_map = f;`,
    /// `let mut b = a;` (a copy), `for i in 0..b.len() { b[i] = __ad_map(a[i]); }`.
    /// A function path `f` is called as the closure `|v| f(v)`.
    fn array_map_loop(&self, name: &str, call: &syn::ExprMethodCall) -> Option<Vec<Stmt>> {
        if call.method != "map" || call.args.len() != 1 || call.turbofish.is_some() {
            return None;
        }
        let Some(Ok(source)) = self.lookup(&expr::local_name(&call.receiver)?) else {
            return None;
        };
        if !matches!(self.ty(source), Ty::Buf(_)) {
            return None;
        }
        let span = call.span();
        let f = &call.args[0];
        // The copy holds numbers of `a`'s type: a map to a `bool` or an
        // integer stays the error it was.
        if !maps_to_float(f) {
            return None;
        }
        let f: Expr = match strip_parens(f) {
            Expr::Closure(_) => f.clone(),
            _ => syn::parse_quote_spanned!(span=> |__ad_v| #f(__ad_v)),
        };
        let index = proc_macro2::Ident::new(&self.unused_name("i".to_owned()), span);
        let name = proc_macro2::Ident::new(name, span);
        let source = &call.receiver;
        let block: syn::Block = syn::parse_quote_spanned! {span=> {
            let __ad_map = #f;
            let mut #name = #source;
            for #index in 0..#name.len() {
                #name[#index] = __ad_map(#source[#index]);
            }
        }};
        Some(block.stmts)
    }

    /// The value a name is bound to; `None` if it is bound to no value (or to
    /// a closure or a sub-slice, see [`Lower::special`]).
    fn lookup(&self, name: &str) -> Option<Lowered> {
        for scope in self.scopes.iter().rev() {
            if scope.specials.contains_key(name) {
                return None;
            }
            if let Some(value) = scope.get(name) {
                return Some(value);
            }
        }
        None
    }

    /// The closure or sub-slice a name is bound to, unless a value binding
    /// shadows it.
    fn special(&self, name: &str) -> Option<Special> {
        for scope in self.scopes.iter().rev() {
            if let Some(special) = scope.specials.get(name) {
                return Some(special.clone());
            }
            if scope.index.contains_key(name) {
                return None;
            }
        }
        None
    }

    /// Whether the innermost binding of `name` is a value Rust sees behind a
    /// reference.
    fn is_ref(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .rev()
            .find(|scope| scope.contains(name))
            .is_some_and(|scope| scope.refs.contains(name))
    }

    fn bind_special(&mut self, name: &str, special: Special) {
        let scope = self.scopes.last_mut().expect("a scope");
        scope.owned_rows.remove(name);
        scope.specials.insert(name.to_owned(), special);
    }

    /// Marks the rows `name` was just bound to as its own (see
    /// [`Scope::owned_rows`]).
    fn own_rows(&mut self, name: &str) {
        let scope = self.scopes.last_mut().expect("a scope");
        scope.owned_rows.insert(name.to_owned());
    }

    /// Whether `name` is bound to rows it owns.
    fn owns_rows(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .rev()
            .find(|scope| scope.specials.contains_key(name) || scope.index.contains_key(name))
            .is_some_and(|scope| scope.owned_rows.contains(name))
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Lowered> {
        for scope in self.scopes.iter_mut().rev() {
            if scope.specials.contains_key(name) {
                return None;
            }
            if scope.index.contains_key(name) {
                return scope.get_mut(name);
            }
        }
        None
    }

    fn push(&mut self, inst: Inst, ty: Ty, span: Span) -> Value {
        // The length of a sub-slice is the length it was made with.
        if let Inst::Len(buf) = inst
            && let Inst::Slice { len, .. } = *self.builder.func().inst(buf)
        {
            return len;
        }
        for buf in self.builder.func().bases(inst.written()) {
            self.forget_loads(buf);
        }
        self.builder.push(inst, ty, span)
    }
}

/// `vec![[fill; n]; m]`, `[[fill; n]; m]` or `vec![vec![fill; n]; m]`, or
/// rows written out (`vec![vec![a, b], vec![c, d]]`, `[[a, b], [c, d]]`):
/// the flat buffer `vec![fill; m * n]` it is made as, the length of a row `n`,
/// and whether the rows are `Vec`s (their length an expression evaluated
/// where the buffer is made, not a constant).
fn rows_literal(expr: &Expr) -> Option<(Expr, Expr, bool)> {
    // `[[1.0, 0.5], [-0.25, 2.0]]`, `vec![[1.0, 0.5], [-0.25, 2.0]]`: rows
    // written out, of one length, made flat.
    let rows: Option<Vec<Expr>> = match strip_parens(expr) {
        Expr::Array(outer) => Some(outer.elems.iter().cloned().collect()),
        Expr::Macro(mac) if mac.mac.path.is_ident("vec") => mac
            .mac
            .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
            .ok()
            .map(|elems| elems.into_iter().collect()),
        _ => None,
    };
    if let Some(rows) = rows {
        // Rows that are arrays, or `vec![a, b, c]` written out (`Vec` rows).
        let mut vecs = false;
        let rows: Vec<Vec<Expr>> = rows
            .iter()
            .map(|row| match strip_parens(row) {
                Expr::Array(row) => Some(row.elems.iter().cloned().collect()),
                Expr::Macro(mac) if mac.mac.path.is_ident("vec") => {
                    vecs = true;
                    mac.mac
                        .parse_body_with(
                            syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                        )
                        .ok()
                        .map(|elems| elems.into_iter().collect())
                }
                _ => None,
            })
            .collect::<Option<_>>()?;
        let width = rows.first()?.len();
        let elems: Vec<&Expr> = rows.iter().flatten().collect();
        if width == 0
            || rows.iter().any(|row| row.len() != width)
            || elems.iter().any(|elem| is_nested_literal(elem))
        {
            return None;
        }
        let flat: Expr = match strip_parens(expr) {
            Expr::Array(_) => syn::parse_quote_spanned!(expr.span()=> [#(#elems),*]),
            _ => syn::parse_quote_spanned!(expr.span()=> vec![#(#elems),*]),
        };
        let width = proc_macro2::Literal::usize_unsuffixed(width);
        return Some((flat, syn::parse_quote!(#width), vecs));
    }
    let (row, count) = match strip_parens(expr) {
        Expr::Repeat(outer) => ((*outer.expr).clone(), (*outer.len).clone()),
        Expr::Macro(mac) => vec_repeat(mac)?,
        _ => return None,
    };
    let (fill, width, vecs) = match strip_parens(&row) {
        Expr::Repeat(row) => ((*row.expr).clone(), (*row.len).clone(), false),
        // `vec![fill; n]` as a row.
        Expr::Macro(mac) => {
            let (fill, width) = vec_repeat(mac)?;
            (fill, width, true)
        }
        _ => return None,
    };
    if is_nested_literal(&fill) {
        return None;
    }
    let flat: Expr = syn::parse_quote_spanned!(expr.span()=> vec![#fill; (#count) * (#width)]);
    Some((flat, width, vecs))
}

/// Whether the function `a.map(f)` applies may give a float, as far as its
/// words show: not a comparison, a logical operator, an `is_…` test, an
/// integer or `bool` literal, or a cast to another type.
fn maps_to_float(f: &Expr) -> bool {
    let value = match strip_parens(f) {
        Expr::Closure(closure) => match strip_parens(&closure.body) {
            Expr::Block(block) => match block.block.stmts.last() {
                Some(Stmt::Expr(tail, None)) => tail,
                _ => return false,
            },
            body => body,
        },
        Expr::Path(path) => {
            return path
                .path
                .segments
                .last()
                .is_some_and(|last| !last.ident.to_string().starts_with("is_"));
        }
        _ => return true,
    };
    match strip_parens(value) {
        Expr::Binary(binary) => !matches!(
            binary.op,
            syn::BinOp::Eq(_)
                | syn::BinOp::Ne(_)
                | syn::BinOp::Lt(_)
                | syn::BinOp::Le(_)
                | syn::BinOp::Gt(_)
                | syn::BinOp::Ge(_)
                | syn::BinOp::And(_)
                | syn::BinOp::Or(_)
        ),
        Expr::Unary(unary) => !matches!(unary.op, syn::UnOp::Not(_)),
        Expr::MethodCall(call) => !call.method.to_string().starts_with("is_"),
        Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Float(_)),
        Expr::Cast(cast) => matches!(&*cast.ty, Type::Path(path)
            if path.path.get_ident().is_some_and(|ty| ty != "usize" && ty != "isize" && !ty.to_string().starts_with(['u', 'i']) && ty != "bool")),
        _ => true,
    }
}

/// Whether `stmts` name the identifier `name` anywhere (also inside
/// macros, whose tokens are searched).
pub(super) fn names_ident(stmts: &[Stmt], name: &str) -> bool {
    stmts
        .iter()
        .any(|stmt| mentions(stmt.to_token_stream(), name))
}

/// Whether `tokens` hold the identifier `name`, in any group.
pub(super) fn mentions(tokens: proc_macro2::TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident.unraw() == name,
        proc_macro2::TokenTree::Group(group) => mentions(group.stream(), name),
        _ => false,
    })
}

/// Whether an element of a literal of rows is itself an array or a `Vec`
/// (`[[[0.0; 2]; 3]; 4]`): rows of rows, which are not flattened.
fn is_nested_literal(elem: &Expr) -> bool {
    matches!(
        strip_parens(elem),
        Expr::Repeat(_) | Expr::Array(_) | Expr::Macro(_)
    )
}

/// `vec![fill; len]`: `fill` and `len`.
fn vec_repeat(mac: &syn::ExprMacro) -> Option<(Expr, Expr)> {
    if !mac.mac.path.is_ident("vec") {
        return None;
    }
    mac.mac
        .parse_body_with(|input: syn::parse::ParseStream| {
            let fill: Expr = input.parse()?;
            input.parse::<syn::Token![;]>()?;
            let len: Expr = input.parse()?;
            Ok((fill, len))
        })
        .ok()
}

/// `ad_runtime::checkpoint(inner)` (or `checkpoint(inner)`): the path and
/// `inner`.
fn checkpoint_wrapper(expr: &Expr) -> Option<(&syn::ExprPath, &Expr)> {
    let Expr::Call(call) = strip_parens(expr) else {
        return None;
    };
    let Expr::Path(path) = strip_parens(&call.func) else {
        return None;
    };
    let named = expr::names_marker(&expr::segments(&path.path), "checkpoint");
    (named && call.args.len() == 1).then(|| (path, &call.args[0]))
}

/// `(e)` as `e`.
pub(super) fn strip_parens(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(paren) => strip_parens(&paren.expr),
        Expr::Group(group) => strip_parens(&group.expr),
        expr => expr,
    }
}

/// Whether a type annotation is a buffer: `Vec<f64>`, `[f64; 3]`.
fn is_buffer_type(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Array(_) => true,
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|last| last.ident == "Vec"),
        _ => false,
    }
}

/// The name a `let` pattern binds, if it is one name (`v`, `mut v`, `v: T`).
fn bound_name(pat: &Pat) -> Option<String> {
    match pat {
        Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.unraw().to_string()),
        Pat::Type(typed) => bound_name(&typed.pat),
        _ => None,
    }
}

/// Where the statements of a block use each name as a buffer (see
/// [`buffer_names`]) and where a `let` binds it, found once per block: a
/// `let` asks what the statements after it do with its name, and asking
/// each of them again for every `let` took time quadratic in the block's
/// length (a 3,000-statement function spent most of its expansion there).
struct BufferUses {
    /// The statements using each name as a buffer, in order.
    uses: HashMap<String, Vec<usize>>,
    /// The `let`s binding each name, in order.
    binds: HashMap<String, Vec<usize>>,
}

impl BufferUses {
    fn of(stmts: &[Stmt]) -> BufferUses {
        let mut uses: HashMap<String, Vec<usize>> = HashMap::new();
        let mut binds: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, stmt) in stmts.iter().enumerate() {
            for name in buffer_names(stmt) {
                uses.entry(name).or_default().push(index);
            }
            if let Stmt::Local(local) = stmt
                && let Some(name) = bound_name(&local.pat)
            {
                binds.entry(name).or_default().push(index);
            }
        }
        BufferUses { uses, binds }
    }

    /// Whether the statements after `index` use `name` as a buffer (indexed,
    /// iterated, measured or borrowed) before a `let` of theirs binds it
    /// again (a `let` using it in its initializer uses it).
    fn used_as_buffer_after(&self, name: &str, index: usize) -> bool {
        let first_after = |at: Option<&Vec<usize>>| {
            at.and_then(|indices| {
                let k = indices.partition_point(|&i| i <= index);
                indices.get(k).copied()
            })
        };
        match (
            first_after(self.uses.get(name)),
            first_after(self.binds.get(name)),
        ) {
            (Some(used), Some(bound)) => used <= bound,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// The names a statement uses as buffers: indexed (`v[i]`), iterated or
/// measured (`v.iter()`, `v.len()`, …), or borrowed (`&v`).
fn buffer_names(stmt: &Stmt) -> std::collections::HashSet<String> {
    use syn::visit::Visit;
    #[derive(Default)]
    struct Uses(std::collections::HashSet<String>);
    impl Visit<'_> for Uses {
        fn visit_expr(&mut self, expr: &Expr) {
            let used = match expr {
                Expr::Index(index) => Some(&*index.expr),
                Expr::Reference(reference) => Some(&*reference.expr),
                Expr::MethodCall(call)
                    if matches!(
                        call.method.to_string().as_str(),
                        "iter"
                            | "iter_mut"
                            | "into_iter"
                            | "len"
                            | "is_empty"
                            | "windows"
                            | "chunks"
                            | "chunks_exact"
                            | "chunks_mut"
                            | "chunks_exact_mut"
                            | "to_vec"
                            | "split_at"
                            | "split_at_mut"
                    ) =>
                {
                    Some(&*call.receiver)
                }
                _ => None,
            };
            if let Some(name) = used.and_then(expr::local_name) {
                self.0.insert(name);
            }
            syn::visit::visit_expr(self, expr);
        }
    }
    let mut uses = Uses::default();
    uses.visit_stmt(stmt);
    // `let [x, y, z] = p;` takes a buffer apart.
    if let Stmt::Local(local) = stmt
        && matches!(&local.pat, Pat::Slice(_))
        && let Some(init) = &local.init
        && let Some(name) = expr::local_name(&init.expr)
    {
        uses.0.insert(name);
    }
    uses.0
}

/// The pushes onto `name` that are statements of `stmts` or of the
/// branches of `if`s among them (not of loops or closures), and whether
/// any is in a branch.
fn pushes_in(stmts: &[Stmt], name: &str) -> (usize, bool) {
    let mut found = (0, false);
    for stmt in stmts {
        match stmt {
            Stmt::Expr(Expr::MethodCall(call), _)
                if call.method == "push"
                    && expr::local_name(&call.receiver).as_deref() == Some(name) =>
            {
                found.0 += 1;
            }
            Stmt::Expr(Expr::If(if_expr), _) => {
                let mut branch = Some(if_expr);
                while let Some(if_expr) = branch {
                    let (n, _) = pushes_in(&if_expr.then_branch.stmts, name);
                    found = (found.0 + n, found.1 || n > 0);
                    branch = match if_expr.else_branch.as_ref().map(|(_, els)| &**els) {
                        Some(Expr::If(next)) => Some(next),
                        Some(Expr::Block(block)) => {
                            let (n, _) = pushes_in(&block.block.stmts, name);
                            found = (found.0 + n, found.1 || n > 0);
                            None
                        }
                        _ => None,
                    };
                }
            }
            _ => {}
        }
    }
    found
}

/// The `for` that fills the buffer a `let` makes empty (`Vec::new()`,
/// `Vec::with_capacity(n)`, `vec![]`), if the statement after it is one that
/// pushes onto it at most once per iteration, and whether the push is in a
/// branch (then the buffer's length is the count of pushes, not the trip
/// count): `v.push(e);` is a statement of its body (or of a branch of an
/// `if` there), `v` is named nowhere else in it, nothing leaves the loop
/// early, and nothing after the loop pushes onto `v`.
///
/// Other buffers made empty may stand between (`let mut xs = Vec::new();
/// let mut ys = Vec::new(); for … { xs.push(…); ys.push(…); }`), if the
/// loop's iterator does not name them.
fn filled_by_next(local: &Local, after: &[Stmt]) -> Option<(syn::ExprForLoop, bool)> {
    let between = after
        .iter()
        .take_while(|stmt| matches!(stmt, Stmt::Local(local) if makes_empty(local)))
        .count();
    let (next, rest) = after[between..].split_first()?;
    let name = bound_name(&local.pat)?;
    let Stmt::Expr(Expr::ForLoop(for_loop), _) = next else {
        return None;
    };
    if !makes_empty(local) || for_loop.label.is_some() || exits::Exits::of_stmt(next).any() {
        return None;
    }
    let iterated = for_loop.expr.to_token_stream();
    if after[..between].iter().any(|stmt| {
        let Stmt::Local(local) = stmt else {
            return true;
        };
        bound_name(&local.pat).is_none_or(|other| mentions(iterated.clone(), &other))
    }) {
        return None;
    }
    let (pushes, conditional) = pushes_in(&for_loop.body.stmts, &name);
    let mentions = quote::ToTokens::to_token_stream(&for_loop.body)
        .into_iter()
        .flat_map(flatten_tokens)
        .filter(|ident| *ident == name)
        .count();
    let pushed_later = rest.iter().any(|stmt| {
        let tokens: Vec<String> = quote::ToTokens::to_token_stream(stmt)
            .into_iter()
            .flat_map(flatten_tokens_and_dots)
            .collect();
        tokens
            .windows(3)
            .any(|w| w[0] == name && w[1] == "." && w[2] == "push")
    });
    (pushes == 1 && mentions == 1 && !pushed_later).then(|| (for_loop.clone(), conditional))
}

/// Whether a `let` makes an empty `Vec`: `Vec::new()`,
/// `Vec::with_capacity(n)`, `vec![]`.
fn makes_empty(local: &Local) -> bool {
    let Some(init) = &local.init else {
        return false;
    };
    match strip_parens(&init.expr) {
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else {
                return false;
            };
            let segments = expr::segments(&path.path);
            matches!(
                (segments.as_slice(), call.args.len()),
                ([vec, new], 0) if vec == "Vec" && new == "new"
            ) || matches!(
                (segments.as_slice(), call.args.len()),
                ([vec, with], 1) if vec == "Vec" && with == "with_capacity"
            )
        }
        Expr::Macro(mac) => mac.mac.path.is_ident("vec") && mac.mac.tokens.is_empty(),
        _ => false,
    }
}

/// The identifiers and `.`s of a token tree, at any depth, in order.
fn flatten_tokens_and_dots(tree: proc_macro2::TokenTree) -> Vec<String> {
    match tree {
        proc_macro2::TokenTree::Punct(punct) if punct.as_char() == '.' => vec![".".to_owned()],
        proc_macro2::TokenTree::Group(group) => group
            .stream()
            .into_iter()
            .flat_map(flatten_tokens_and_dots)
            .collect(),
        tree => flatten_tokens(tree),
    }
}

/// The identifiers in a token tree, at any depth.
fn flatten_tokens(tree: proc_macro2::TokenTree) -> Vec<String> {
    match tree {
        proc_macro2::TokenTree::Ident(ident) => vec![ident.to_string()],
        proc_macro2::TokenTree::Group(group) => group
            .stream()
            .into_iter()
            .flat_map(flatten_tokens)
            .collect(),
        _ => Vec::new(),
    }
}

/// `…; if c { …; return e; } rest…` at the top level of a body, as the
/// `if` it stands for, `…; if c { …; e } else { rest… }` (for each such
/// guard; a last `return e;` is `e`). In a body returning nothing, `if c {
/// …; return; } rest…` is `if c { … } else { rest… };`. `None` if a
/// `return` stands anywhere else, or nothing follows a guard with a value.
pub(super) fn guards_as_branches(stmts: &[Stmt]) -> Option<Vec<Stmt>> {
    let mut out = Vec::new();
    for (index, stmt) in stmts.iter().enumerate() {
        if let Stmt::Expr(Expr::If(guard), _) = stmt
            && guard.else_branch.is_none()
            && let Some((Stmt::Expr(Expr::Return(ret), _), init)) =
                guard.then_branch.stmts.split_last()
            && !exits::Exits::of_expr(&guard.cond).returns
            && init.iter().all(|stmt| !exits::Exits::of_stmt(stmt).returns)
        {
            let rest = guards_as_branches(&stmts[index + 1..])?;
            // `return;` of a closure returning nothing (`for_each(|v| { if
            // c { return; } … })`): the rest may be empty.
            if rest.is_empty() && ret.expr.is_some() {
                return None;
            }
            let mut then = guard.then_branch.clone();
            then.stmts = init.to_vec();
            if let Some(value) = &ret.expr {
                then.stmts.push(Stmt::Expr((**value).clone(), None));
            }
            let mut els = then.clone();
            els.stmts = rest;
            let mut branches = guard.clone();
            branches.then_branch = then;
            branches.else_branch = Some((
                syn::Token![else](ret.return_token.span),
                Box::new(Expr::Block(syn::ExprBlock {
                    attrs: Vec::new(),
                    label: None,
                    block: els,
                })),
            ));
            // A guard without a value is a statement.
            let semi = ret
                .expr
                .is_none()
                .then(|| syn::Token![;](ret.return_token.span));
            out.push(Stmt::Expr(Expr::If(branches), semi));
            return Some(out);
        }
        if index + 1 == stmts.len()
            && let Stmt::Expr(Expr::Return(ret), _) = stmt
        {
            if let Some(value) = &ret.expr {
                out.push(Stmt::Expr((**value).clone(), None));
            }
            return Some(out);
        }
        if exits::Exits::of_stmt(stmt).returns {
            return None;
        }
        out.push(stmt.clone());
    }
    Some(out)
}

/// The hidden variable holding element `k` of the tuple variable `name`.
pub(super) fn tuple_element(name: &str, k: usize) -> String {
    format!("#{name}.{k}")
}

/// The name, type and value of a `const` or non-`mut` `static` item.
fn const_item(item: &syn::Item) -> Option<(&syn::Ident, &syn::Type, &Expr)> {
    match item {
        syn::Item::Const(item) => Some((&item.ident, &item.ty, &item.expr)),
        syn::Item::Static(item) if matches!(item.mutability, syn::StaticMutability::None) => {
            Some((&item.ident, &item.ty, &item.expr))
        }
        _ => None,
    }
}

/// `let v: [T; N] = std::array::from_fn(f);` (or `from_fn::<T, N, _>(f)`)
/// as the statements it stands for: `let __ad_from_fn = f;`, `let mut v =
/// [0.0; N];`, `for __ad_i in 0..N { v[__ad_i] = __ad_from_fn(__ad_i); }`.
/// `None` if `init` is no such call; `Err` (its span) if the call does not
/// say `N`.
fn from_fn_loop(
    name: &str,
    annotation: Option<&Type>,
    init: &Expr,
    float_param: Option<syn::Ident>,
) -> Option<Result<Vec<Stmt>, Span>> {
    let Expr::Call(call) = strip_parens(init) else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    let is_array_from_fn = match segments.as_slice() {
        [.., array, from_fn] => array == "array" && from_fn == "from_fn",
        // `use std::array::from_fn;`: an array is what the annotation says.
        [from_fn] => from_fn == "from_fn" && matches!(annotation, Some(Type::Array(_))),
        [] => false,
    };
    if !is_array_from_fn || call.args.len() != 1 {
        return None;
    }
    let span = init.span();
    // The element type and the length: from the annotation, else from the
    // turbofish.
    let (elem, len): (Type, Expr) = match annotation {
        Some(Type::Array(array)) => ((*array.elem).clone(), array.len.clone()),
        _ => {
            let last = path.path.segments.last().expect("a segment");
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return Some(Err(span));
            };
            let args: Vec<_> = args.args.iter().collect();
            match args.as_slice() {
                [syn::GenericArgument::Type(elem), len, ..] => {
                    let len: Expr = match len {
                        syn::GenericArgument::Const(len) => len.clone(),
                        // `3` and `N` parse as a type here.
                        syn::GenericArgument::Type(Type::Path(path)) => {
                            syn::parse_quote!(#path)
                        }
                        _ => return Some(Err(span)),
                    };
                    (elem.clone(), len)
                }
                _ => return Some(Err(span)),
            }
        }
    };
    let zero: Expr = match (sig::scalar_type(&elem, float_param.as_ref()), &elem) {
        (Some(Scalar::F32 | Scalar::F64), _) => syn::parse_quote_spanned!(span=> 0.0),
        (Some(Scalar::Float), generic) => syn::parse_quote_spanned!(span=> #generic::ZERO),
        (Some(Scalar::Bool), _) => syn::parse_quote_spanned!(span=> false),
        (Some(_), _) => syn::parse_quote_spanned!(span=> 0),
        // `[_; 3]`: the closure says; a float is what numeric code makes.
        (None, Type::Infer(_)) => syn::parse_quote_spanned!(span=> 0.0),
        (None, _) => return None,
    };
    let name = proc_macro2::Ident::new(name, span);
    let f = &call.args[0];
    // The loop's index is named as the closure's parameter, if it is a name.
    let index = match f {
        Expr::Closure(closure) if closure.inputs.len() == 1 => match &closure.inputs[0] {
            Pat::Ident(ident) => Some(ident.ident.clone()),
            Pat::Type(typed) => match &*typed.pat {
                Pat::Ident(ident) => Some(ident.ident.clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
    .unwrap_or_else(|| proc_macro2::Ident::new("__ad_i", span));
    let stmts: syn::Block = syn::parse_quote_spanned! {span=> {
        let __ad_from_fn = #f;
        let mut #name = [#zero; #len];
        for #index in 0..#len {
            #name[#index] = __ad_from_fn(#index);
        }
    }};
    Some(Ok(stmts.stmts))
}

/// Whether a `let` binds its name `mut`.
fn is_mut_binding(pat: &syn::Pat) -> bool {
    match pat {
        syn::Pat::Ident(ident) => ident.mutability.is_some(),
        syn::Pat::Type(typed) => is_mut_binding(&typed.pat),
        _ => false,
    }
}
