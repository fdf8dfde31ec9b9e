//! Closures, inlined where they are called, and the values that patterns,
//! closures and iterators pass around ([`Item`]).
//!
//! `let f = |a, b| body;` binds `f` to the closure's code and to the scopes
//! at its definition: a name in the body means what it meant there, as in
//! Rust (a closure that borrows a variable keeps it from changing; one that
//! moves it keeps the value it had). A call `f(x, y)`, or an iterator adapter
//! given `f`, lowers `body` again with the parameters bound to the arguments,
//! so the closure is differentiated as if it were written inline.
//!
//! ```text
//! let sq = |v: f64| v * v;                 %2 = mul %x, %x   ; v * v
//! let s = sq(x) + sq(y);       ⇒           %3 = mul %y, %y
//!                                          %4 = add %2, %3   ; s
//! ```

use std::rc::Rc;

use proc_macro2::{Ident, Span};
use quote::quote_spanned;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprClosure, ExprPath, Pat};

use super::buffers::ElementPlace;
use super::exits::Exits;
use super::iter::View;
use super::{Lower, Lowered, Poison, Scope, Special, sig};
use crate::diag::msg;
use crate::ir::{Const, Inst, Mode, Prim, Ty, Value};
use syn::visit::Visit;

/// A closure defined in the body.
pub(crate) struct Closure {
    inputs: Vec<Pat>,
    body: Expr,
    /// The captured variables the body assigns (an `FnMut` closure): each
    /// call reads them where it is made and assigns them there.
    mutates: Vec<String>,
    /// The scopes at the definition: what the body's names mean.
    env: Vec<Scope>,
    elements: Vec<ElementPlace>,
    span: Span,
}

/// What an iterator adapter or a call can apply: a closure, or a function
/// named by its path (`f64::max`, `square`).
pub(super) enum Callable {
    Closure(Rc<Closure>),
    Path(ExprPath),
}

/// A value as patterns, closures and iterators see it.
#[derive(Clone)]
pub(super) enum Item {
    Value(Value),
    /// A value that Rust sees behind a reference: an element of `iter()`
    /// (`&f64`), bound by a pattern without `&`. A macro naming it gets a
    /// reference, as in the function (`assert!(*e < 1.0)`).
    Ref(Value),
    /// An element of `iter_mut()`: reading the name reads it, `*v = …`
    /// writes it.
    Place {
        buf: Value,
        index: Value,
    },
    /// A range of a buffer: `&x[a..b]`, a window, a chunk.
    View(View),
    /// Rows of a buffer of rows: a window or a chunk of `pts.windows(k)`.
    Rows(super::iter::Rows),
    /// A pair of `zip` or `enumerate`, or a tuple a closure returns.
    Tuple(Vec<Item>),
}

impl Item {
    /// The elements of a tuple whose elements are all plain values (what a
    /// tuple variable holds, one hidden variable each).
    pub(super) fn tuple_values(&self) -> Option<Vec<Value>> {
        let Item::Tuple(items) = self else {
            return None;
        };
        items
            .iter()
            .map(|item| match item {
                Item::Value(value) => Some(*value),
                _ => None,
            })
            .collect()
    }
}

impl Lower<'_> {
    /// `|a, b| body`: its parameters, its body and the scopes it sees.
    pub(super) fn closure(&mut self, closure: &ExprClosure) -> Result<Rc<Closure>, Poison> {
        if let Some(token) = closure.asyncness {
            self.cx.error_spanned_by(token, msg::ASYNC_CLOSURE);
            return Err(Poison);
        }
        let body = if Exits::of_expr(&closure.body).returns {
            let Some(body) = returns_as_branches(&closure.body) else {
                let at = first_return(&closure.body).expect("a closure body that returns");
                self.cx.error_spanned_by(at, msg::RETURN_IN_CLOSURE);
                return Err(Poison);
            };
            body
        } else {
            (*closure.body).clone()
        };
        let visible = |name: &String| self.scopes.iter().any(|scope| scope.contains(name));
        let mut mutates: Vec<String> = super::loops::assigned_in_expr(&body)
            .into_iter()
            .filter(visible)
            .collect();
        mutates.sort();
        if !mutates.is_empty() && closure.capture.is_some() {
            // A `move` closure assigns its own copies, kept between calls.
            self.cx.error_at(closure.span(), msg::CLOSURE_ASSIGNS);
            return Err(Poison);
        }
        let mut env = self.scopes.clone();
        if closure.capture.is_some() {
            // A `move` closure holds copies of the arrays it names: a write
            // after its definition is not seen by it (a `Vec` is moved in).
            let mut copies = Scope::default();
            for name in path_names(&closure.body) {
                if let Some(Ok(buf)) = self.lookup(&name)
                    && self.may_be_array(buf)
                {
                    let copy = self.copy_of(buf, true, closure, closure.span())?;
                    copies.bind(&name, Ok(copy));
                }
            }
            env.push(copies);
        }
        Ok(Rc::new(Closure {
            inputs: closure.inputs.iter().cloned().collect(),
            body,
            mutates,
            env,
            elements: self.elements.clone(),
            span: closure.span(),
        }))
    }

    /// What `expr` names when it is applied: a closure written there, a name
    /// bound to one, or a function path.
    pub(super) fn callable(&mut self, expr: &Expr) -> Result<Rc<Callable>, Poison> {
        match expr {
            Expr::Closure(closure) => Ok(Rc::new(Callable::Closure(self.closure(closure)?))),
            Expr::Paren(paren) => self.callable(&paren.expr),
            Expr::Group(group) => self.callable(&group.expr),
            Expr::Reference(reference) => self.callable(&reference.expr),
            Expr::Path(path) => {
                if let Some(name) = super::expr::local_name(expr) {
                    match self.special(&name) {
                        Some(Special::Closure(closure)) => {
                            return Ok(Rc::new(Callable::Closure(closure)));
                        }
                        Some(
                            Special::View(_)
                            | Special::Cursor(..)
                            | Special::Chain(_)
                            | Special::Rows(_)
                            | Special::Tuple(_)
                            | Special::Option
                            | Special::Opaque(_),
                        ) => {
                            self.cx.error_spanned_by(expr, msg::NOT_CALLABLE);
                            return Err(Poison);
                        }
                        None => {}
                    }
                    if let Some(local) = self.lookup(&name) {
                        local?;
                        self.cx.error_spanned_by(expr, msg::NOT_CALLABLE);
                        return Err(Poison);
                    }
                }
                Ok(Rc::new(Callable::Path(path.clone())))
            }
            other => {
                self.cx.error_spanned_by(other, msg::NOT_CALLABLE);
                Err(Poison)
            }
        }
    }

    /// Applies `callable` to `args`: a closure's body is lowered with its
    /// parameters bound to them; a path is called.
    pub(super) fn apply(
        &mut self,
        callable: &Callable,
        args: Vec<Item>,
        span: Span,
    ) -> Result<Item, Poison> {
        match callable {
            Callable::Closure(closure) => self.inline(closure, args, span),
            Callable::Path(path) => self.apply_path(path, args, span),
        }
    }

    fn inline(&mut self, closure: &Closure, args: Vec<Item>, span: Span) -> Result<Item, Poison> {
        if closure.inputs.len() != args.len() {
            self.cx
                .error_at(span, msg::closure_arity(closure.inputs.len(), args.len()));
            return Err(Poison);
        }
        let mut scopes = closure.env.clone();
        // What the closure assigns, it reads as it is now.
        for name in &closure.mutates {
            let Some(now) = self.lookup(name) else {
                continue;
            };
            if let Some(slot) = scopes
                .iter_mut()
                .rev()
                .find_map(|scope| scope.get_mut(name))
            {
                *slot = now;
            }
        }
        let before = scopes.clone();
        scopes.push(Scope::default());
        let scopes = std::mem::replace(&mut self.scopes, scopes);
        let elements = std::mem::replace(&mut self.elements, closure.elements.clone());
        let loops = std::mem::take(&mut self.loops);
        let returning = std::mem::replace(&mut self.returning, false);

        let mut bound = Ok(());
        for (pat, arg) in closure.inputs.iter().zip(args) {
            bound = bound.and(self.bind_pattern(pat, arg));
        }
        let value = bound.and_then(|()| {
            if has_value(&closure.body) {
                self.item_expr(&closure.body)
            } else {
                // `|v| *v *= k`, `|x| { … }` without a value.
                self.expr_stmt(&closure.body);
                Ok(Item::Tuple(Vec::new()))
            }
        });

        self.scopes.pop();
        let env = std::mem::replace(&mut self.scopes, scopes);
        self.elements = elements;
        self.loops = loops;
        self.returning = returning;
        // What it assigned is assigned here, where it is called.
        for (after, before) in env.iter().zip(&before) {
            for (after, before) in after.iter().zip(before.iter()) {
                if after.1 == before.1 {
                    continue;
                }
                let name = &after.0;
                // A hidden local (`#position3`, the place of the next push
                // onto a buffer filled in this block) is carried by the loops
                // of the closure's chains too: its new value holds here.
                let hidden = Self::is_hidden(name);
                match self.lookup_mut(name) {
                    Some(slot) if closure.mutates.contains(name) || hidden => *slot = after.1,
                    _ => {
                        self.cx.error_at(closure.span, msg::CLOSURE_ASSIGNS);
                        return Err(Poison);
                    }
                }
                if let Ok(value) = after.1 {
                    self.name(value, name);
                }
            }
        }
        value
    }

    /// `f64::max` applied to two items, `square` to one.
    fn apply_path(&mut self, path: &ExprPath, args: Vec<Item>, span: Span) -> Result<Item, Poison> {
        let segments = super::expr::segments(&path.path);
        let float_ty = match segments.as_slice() {
            [ty, _] => self.float_type(ty),
            _ => None,
        };
        if let Some(float_ty) = float_ty {
            let prim = self.float_function(path, &segments, args.len())?;
            let operands = args
                .into_iter()
                .map(|arg| self.scalar_item(arg, span))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Item::Value(self.prim(prim, operands, Some(float_ty), span)));
        }
        if super::calls::is_user_function(path) {
            let args = args
                .into_iter()
                .map(|arg| match arg {
                    Item::Value(value) | Item::Ref(value) => {
                        let mode = match self.ty(value) {
                            Ty::Buf(_) => Mode::Ref,
                            _ => Mode::Val,
                        };
                        Ok((value, mode))
                    }
                    other => self
                        .scalar_item(other, span)
                        .map(|value| (value, Mode::Val)),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return self
                .user_call_with(path, args, span, super::calls::Returns::Float)
                .map(Item::Value);
        }
        self.cx.error_spanned_by(path, msg::NOT_CALLABLE);
        Err(Poison)
    }

    /// The number an item is: a value, or the element a place stands for.
    pub(super) fn scalar_item(&mut self, item: Item, span: Span) -> Lowered {
        match item {
            Item::Value(value) | Item::Ref(value) => Ok(value),
            Item::Place { buf, index } => Ok(self.load(buf, index, span)),
            Item::View(_) => {
                self.cx.error_at(span, msg::VIEW_AS_VALUE);
                Err(Poison)
            }
            Item::Rows(_) => {
                self.cx.error_at(span, msg::ROWS_AS_BUFFER);
                Err(Poison)
            }
            Item::Tuple(_) => {
                self.cx.error_at(span, msg::TUPLE_VALUE);
                Err(Poison)
            }
        }
    }

    /// Binds a pattern (of a `let`, a loop, a closure parameter) to an item:
    /// names, `&x`, `(a, b)`, `_`, `x: T`.
    pub(super) fn bind_pattern(&mut self, pat: &Pat, item: Item) -> Result<(), Poison> {
        match (pat, item) {
            (Pat::Wild(_), _) => Ok(()),
            (Pat::Paren(paren), item) => self.bind_pattern(&paren.pat, item),
            (Pat::Reference(reference), Item::Ref(value)) => {
                self.bind_pattern(&reference.pat, Item::Value(value))
            }
            (Pat::Reference(reference), item) => self.bind_pattern(&reference.pat, item),
            (Pat::Type(typed), item) => {
                if let Item::Value(value) | Item::Ref(value) = item
                    && let Some(scalar) =
                        sig::scalar_type(&typed.ty, self.builder.func().float_param.as_ref())
                {
                    self.builder.refine_ty(value, &scalar.ty());
                }
                self.bind_pattern(&typed.pat, item)
            }
            (Pat::Ident(ident), item) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                let name = ident.ident.unraw().to_string();
                match item {
                    Item::Value(value) => {
                        // `|mut v: [f64; 2]| …` given an array: its own copy.
                        let value = if ident.mutability.is_some() && self.may_be_array(value) {
                            self.copy_of(value, true, ident, ident.span())?
                        } else {
                            value
                        };
                        self.name(value, &name);
                        self.bind(&name, Ok(value));
                    }
                    Item::Ref(value) => {
                        self.name(value, &name);
                        self.bind(&name, Ok(value));
                        self.scopes.last_mut().expect("a scope").refs.insert(name);
                    }
                    Item::Place { buf, index } => self.elements.push(ElementPlace {
                        name,
                        buf,
                        index,
                        depth: self.scopes.len(),
                    }),
                    Item::View(view) => self.bind_special(&name, Special::View(view)),
                    Item::Rows(rows) => {
                        // Rows collected here (`let pts: Vec<(f64, f64)> = …`)
                        // are a buffer of their own, named after them.
                        self.name(rows.flat.buf, &name);
                        self.bind_special(&name, Special::Rows(rows));
                    }
                    Item::Tuple(_) => {
                        self.cx.error_spanned_by(pat, msg::TUPLE_BINDING);
                        return Err(Poison);
                    }
                }
                Ok(())
            }
            (Pat::Tuple(tuple), Item::Tuple(items))
                if tuple.elems.len() == items.len()
                    && !tuple.elems.iter().any(|elem| matches!(elem, Pat::Rest(_))) =>
            {
                let mut bound = Ok(());
                for (pat, item) in tuple.elems.iter().zip(items) {
                    bound = bound.and(self.bind_pattern(pat, item));
                }
                bound
            }
            // `for &[x, y] in pts`, `let [x, y] = pts[i];`: the elements of a
            // row, in order; `for &(x, y) in pts` of rows that are tuples.
            (Pat::Slice(_) | Pat::Tuple(_), Item::View(view)) if !row_pattern(pat).is_empty() => {
                let span = pat.span();
                let mut bound = Ok(());
                for (k, pat) in row_pattern(pat).into_iter().enumerate() {
                    let offset = self.int_lit(k as u64, span);
                    let index = self.int_add(view.start, offset, span);
                    let elem = self.load(view.buf, index, span);
                    bound = bound.and(self.bind_pattern(pat, Item::Value(elem)));
                }
                bound
            }
            // `for &(i, j) in EDGES.iter()`, `let (i, j) = EDGES[k];`: an
            // element of a table, which is a tuple, read as written; its
            // parts are constant data of types only rustc sees.
            (Pat::Tuple(tuple), Item::Value(elem) | Item::Ref(elem))
                if let Inst::Load(buf, index) = *self.builder.func().inst(elem)
                    && matches!(self.builder.func().inst(buf), Inst::Const(_))
                    && !tuple.elems.iter().any(|elem| matches!(elem, Pat::Rest(_))) =>
            {
                let span = tuple.span();
                let n = tuple.elems.len();
                let table = Ident::new("__ad_receiver", span);
                let at = Ident::new("__ad_arg0", span);
                let tokens = quote_spanned!(span=> #table[#at]);
                let values = vec![(table, buf), (at, index)];
                let whole =
                    self.call_as_written(tokens, values, Ty::Tuple(vec![Ty::Unknown; n]), span);
                let mut bound = Ok(());
                for (k, pat) in tuple.elems.iter().enumerate() {
                    let k = u32::try_from(k).expect("a small tuple");
                    let part = self.push(Inst::Extract(whole, k), Ty::Unknown, span);
                    bound = bound.and(self.bind_pattern(pat, Item::Value(part)));
                }
                bound
            }
            // `let [x, y, z] = *p;`: the elements of an array, in order.
            (Pat::Slice(slice), Item::Value(buf) | Item::Ref(buf))
                if matches!(self.ty(buf), Ty::Buf(_))
                    && !slice.elems.iter().any(|elem| matches!(elem, Pat::Rest(_))) =>
            {
                let span = slice.span();
                let mut bound = Ok(());
                for (k, pat) in slice.elems.iter().enumerate() {
                    let index = self.int_lit(k as u64, span);
                    let elem = self.load(buf, index, span);
                    bound = bound.and(self.bind_pattern(pat, Item::Value(elem)));
                }
                bound
            }
            (pat, _) => {
                self.cx.error_spanned_by(pat, msg::PATTERN_MISMATCH);
                Err(Poison)
            }
        }
    }

    /// An expression whose value may be more than a number: a tuple, a
    /// sub-slice, the result of a closure.
    pub(super) fn item_expr(&mut self, expr: &Expr) -> Result<Item, Poison> {
        match expr {
            Expr::Paren(paren) => self.item_expr(&paren.expr),
            Expr::Group(group) => self.item_expr(&group.expr),
            // `let (i, d) = best;` of a tuple variable: its elements.
            Expr::Path(_)
                if let Some(name) = super::expr::local_name(expr)
                    && let Some(Special::Tuple(n)) = self.special(&name) =>
            {
                let mut items = Vec::new();
                for k in 0..n {
                    let value = self
                        .lookup(&super::tuple_element(&name, k))
                        .expect("bound")?;
                    items.push(Item::Value(value));
                }
                Ok(Item::Tuple(items))
            }
            Expr::Tuple(tuple) if !tuple.elems.is_empty() => {
                let mut items = Vec::new();
                let mut poisoned = false;
                for elem in &tuple.elems {
                    match self.item_expr(elem) {
                        Ok(item) => items.push(item),
                        Err(Poison) => poisoned = true,
                    }
                }
                if poisoned {
                    return Err(Poison);
                }
                Ok(Item::Tuple(items))
            }
            Expr::Block(block) if block.label.is_none() && yields_item(expr) => {
                let Some((syn::Stmt::Expr(tail, None), init)) = block.block.stmts.split_last()
                else {
                    unreachable!("checked by `yields_item`")
                };
                self.scopes.push(Scope::default());
                let item = self.stmts(init, false).and_then(|_| self.item_expr(tail));
                self.scopes.pop();
                item
            }
            // `if c { (a, b) } else { (b, a) }`: each branch assigns hidden
            // locals, one per number of the tuple.
            Expr::If(if_expr) if if_yields_tuple(if_expr).is_some() => self.tuple_if(if_expr),
            // `match k { 0 => (x, 1.0), _ => (y, 2.0) }`: likewise.
            Expr::Match(match_expr) if match_yields_tuple(match_expr).is_some() => {
                self.tuple_match(match_expr)
            }
            Expr::Call(call) => match self.closure_callee(&call.func) {
                Some(callable) => {
                    let callable = callable?;
                    let args = call
                        .args
                        .iter()
                        .map(|arg| self.item_expr(arg))
                        .collect::<Vec<_>>();
                    let args = args.into_iter().collect::<Result<Vec<_>, _>>()?;
                    self.apply(&callable, args, call.span())
                }
                None => self.expr(expr).map(Item::Value),
            },
            // `pts.as_flattened()`, `x.chunks_exact(k).remainder()`: views.
            Expr::MethodCall(call)
                if matches!(
                    call.method.to_string().as_str(),
                    "as_flattened" | "as_flattened_mut" | "remainder"
                ) && let Some(view) = self.view_of(expr) =>
            {
                view.map(Item::View)
            }
            Expr::MethodCall(call) => match self.tuple_method(call) {
                Some(item) => item,
                None => match self.consume(call) {
                    Some(item) => item,
                    None => self.expr(expr).map(Item::Value),
                },
            },
            // `let w = &a;` of a buffer: a view of all of it.
            Expr::Reference(reference)
                if matches!(super::strip_parens(&reference.expr), Expr::Path(_))
                    && let Some(view) = self.view_or_buffer(expr) =>
            {
                view.map(Item::View)
            }
            // `let [i, j, k] = *t;` of a row `t`: the row.
            Expr::Unary(unary)
                if matches!(unary.op, syn::UnOp::Deref(_))
                    && let Some(view) = self.view_of(&unary.expr) =>
            {
                view.map(Item::View)
            }
            expr => match self.view_of(expr) {
                Some(view) => view.map(Item::View),
                None => self.expr(expr).map(Item::Value),
            },
        }
    }

    /// The closure a call calls: `f(x)` for a closure `f`, `(|v| v * v)(x)`.
    pub(super) fn closure_callee(&mut self, func: &Expr) -> Option<Result<Rc<Callable>, Poison>> {
        match func {
            Expr::Paren(paren) => self.closure_callee(&paren.expr),
            Expr::Closure(_) => Some(self.callable(func)),
            Expr::Path(_) => {
                let name = super::expr::local_name(func)?;
                match self.special(&name)? {
                    Special::Closure(closure) => Some(Ok(Rc::new(Callable::Closure(closure)))),
                    Special::View(_)
                    | Special::Cursor(..)
                    | Special::Chain(_)
                    | Special::Rows(_)
                    | Special::Tuple(_)
                    | Special::Option
                    | Special::Opaque(_) => None,
                }
            }
            _ => None,
        }
    }

    /// Methods whose value is a pair: `x.sin_cos()`, `xs.split_at(k)`.
    fn tuple_method(&mut self, call: &syn::ExprMethodCall) -> Option<Result<Item, Poison>> {
        let span = call.span();
        match call.method.to_string().as_str() {
            "sin_cos" if call.args.is_empty() => Some((|| {
                let x = self.expr(&call.receiver)?;
                let sin = self.prim(Prim::Sin, vec![x], None, span);
                let cos = self.prim(Prim::Cos, vec![x], None, span);
                Ok(Item::Tuple(vec![Item::Value(sin), Item::Value(cos)]))
            })()),
            // `x.split_first().unwrap()` (`expect`, `split_last`): the
            // element and the rest; an empty `x` panics at the element.
            "unwrap" | "expect"
                if let Expr::MethodCall(split) = &*call.receiver
                    && (split.method == "split_first" || split.method == "split_last")
                    && split.args.is_empty() =>
            {
                let whole = self.view_or_buffer(&split.receiver)?;
                let first = split.method == "split_first";
                Some((|| {
                    let whole = whole?;
                    let one = self.usize_lit(1, span);
                    let rest_len = self.int_op(crate::ir::BinOp::Sub, whole.len, one, span);
                    let (at, rest_start) = if first {
                        (whole.start, self.int_add(whole.start, one, span))
                    } else {
                        (self.int_add(whole.start, rest_len, span), whole.start)
                    };
                    let element = self.load(whole.buf, at, span);
                    let rest = super::iter::View {
                        buf: whole.buf,
                        start: rest_start,
                        len: rest_len,
                    };
                    Ok(Item::Tuple(vec![Item::Ref(element), Item::View(rest)]))
                })())
            }
            "split_at" | "split_at_mut" if call.args.len() == 1 => {
                let whole = self.view_or_buffer(&call.receiver)?;
                Some((|| {
                    let whole = whole?;
                    let mid = self.expr(&call.args[0])?;
                    Ok(self.split_view(whole, mid, span))
                })())
            }
            _ => None,
        }
    }
}

impl Lower<'_> {
    /// The variables the closures in scope assign when called: a loop whose
    /// body calls one carries them.
    pub(super) fn closure_mutations(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for scope in &self.scopes {
            for special in scope.specials.values() {
                if let Special::Closure(closure) = special {
                    names.extend(closure.mutates.iter().cloned());
                }
            }
        }
        names.extend(self.pending_mutations.iter().cloned());
        names
    }
}

impl Callable {
    /// The variables applying it assigns.
    pub(super) fn mutates(&self) -> &[String] {
        match self {
            Callable::Closure(closure) => &closure.mutates,
            Callable::Path(_) => &[],
        }
    }

    /// Whether it is a closure whose value is a buffer it makes: its body
    /// ends in `….collect()`, `.to_vec()`, `.clone()`, `.to_owned()` or
    /// `vec![…]` (a row of a `Vec<Vec<f64>>` being collected).
    pub(super) fn makes_buffer(&self) -> bool {
        fn ends_in_buffer(expr: &Expr) -> bool {
            match expr {
                Expr::MethodCall(call) => matches!(
                    call.method.to_string().as_str(),
                    "collect" | "to_vec" | "clone" | "to_owned"
                ),
                Expr::Macro(mac) => mac.mac.path.is_ident("vec"),
                Expr::Paren(paren) => ends_in_buffer(&paren.expr),
                Expr::Block(block) => match block.block.stmts.last() {
                    Some(syn::Stmt::Expr(tail, None)) => ends_in_buffer(tail),
                    _ => false,
                },
                _ => false,
            }
        }
        matches!(self, Callable::Closure(closure) if ends_in_buffer(&closure.body))
    }
}

/// Whether a closure body has a value: not an assignment, a loop, or a
/// block ending in a statement.
fn has_value(expr: &Expr) -> bool {
    match expr {
        Expr::Assign(_) | Expr::ForLoop(_) | Expr::While(_) => false,
        Expr::Binary(binary) => super::expr::compound_op(&binary.op).is_none(),
        Expr::Block(block) => matches!(
            block.block.stmts.last(),
            Some(syn::Stmt::Expr(tail, None)) if has_value(tail)
        ),
        // `{ if i % 2 == 0 { s += v; } }`: an `if` without `else` is a statement.
        Expr::If(expr) => expr.else_branch.is_some(),
        Expr::Paren(paren) => has_value(&paren.expr),
        _ => true,
    }
}

impl Lower<'_> {
    /// An `if` whose branches end in tuples, as an item: hidden locals, one
    /// per number of the tuple (as its first branch writes it), assigned by
    /// each branch and read after it.
    fn tuple_if(&mut self, expr: &syn::ExprIf) -> Result<Item, Poison> {
        let span = expr.span();
        let shape = if_yields_tuple(expr).expect("checked by the caller");
        let Some((_, els)) = &expr.else_branch else {
            self.cx.error_at(span, msg::TUPLE_VALUE);
            return Err(Poison);
        };
        let then = &expr.then_branch;
        self.tuple_parts(&shape, span, |this, names| {
            let cond = this.expr(&expr.cond);
            this.branch(
                cond,
                false,
                span,
                |this| {
                    this.scopes.push(Scope::default());
                    let item = match then.stmts.split_last() {
                        Some((syn::Stmt::Expr(tail, None), init)) => {
                            this.stmts(init, false).and_then(|_| this.item_expr(tail))
                        }
                        _ => unreachable!("checked by `if_yields_tuple`"),
                    };
                    this.scopes.pop();
                    this.assign_hidden(names, item?, span).map(|()| None)
                },
                |this| {
                    let item = this.item_expr(els)?;
                    this.assign_hidden(names, item, els.span()).map(|()| None)
                },
            )
            .map(drop)
        })
    }

    /// A `match` whose arms end in tuples, as an item: as [`Lower::tuple_if`].
    fn tuple_match(&mut self, expr: &syn::ExprMatch) -> Result<Item, Poison> {
        let shape = match_yields_tuple(expr).expect("checked by the caller");
        self.tuple_parts(&shape, expr.span(), |this, names| {
            this.match_into(expr, names)
        })
    }

    /// A tuple of `shape` held by hidden locals, one per number, which
    /// `assign` assigns (in each of its branches); then the item of them.
    fn tuple_parts(
        &mut self,
        shape: &TupleShape,
        span: Span,
        assign: impl FnOnce(&mut Self, &[String]) -> Result<(), Poison>,
    ) -> Result<Item, Poison> {
        // Named as the `let` that takes the tuple apart names its parts.
        let mut shown = std::mem::take(&mut self.part_names);
        if shown.len() != shape.count() {
            shown = vec!["part".to_owned(); shape.count()];
        }
        let names: Vec<String> = shown.iter().map(|name| self.hidden_name(name)).collect();
        let placeholder = self.push(Inst::Const(Const::Zero), Ty::Float, span);
        for name in &names {
            self.bind(name, Ok(placeholder));
        }
        assign(self, &names)?;
        let mut values = names.iter().map(|name| {
            let value = self.lookup(name).expect("bound above");
            value.map(Item::Value)
        });
        shape.build(&mut values)
    }

    /// Assigns the numbers of `item`, in order, to the hidden locals `names`.
    pub(super) fn assign_hidden(
        &mut self,
        names: &[String],
        item: Item,
        span: Span,
    ) -> Result<(), Poison> {
        let mut values = Vec::new();
        self.flatten(item, span, &mut values)?;
        if values.len() != names.len() {
            self.cx.error_at(span, msg::TUPLE_BRANCHES);
            return Err(Poison);
        }
        for (name, value) in names.iter().zip(values) {
            self.set_hidden(name, Ok(value));
        }
        Ok(())
    }

    /// The numbers of an item, in order.
    pub(super) fn flatten(
        &mut self,
        item: Item,
        span: Span,
        out: &mut Vec<Value>,
    ) -> Result<(), Poison> {
        match item {
            Item::Tuple(items) => {
                for item in items {
                    self.flatten(item, span, out)?;
                }
                Ok(())
            }
            item => {
                out.push(self.scalar_item(item, span)?);
                Ok(())
            }
        }
    }
}

/// The shape of the tuple an `if … else …` yields, from its first branch's
/// tail: `None` if that tail is not a tuple written out.
pub(super) fn if_yields_tuple(expr: &syn::ExprIf) -> Option<TupleShape> {
    let Some(syn::Stmt::Expr(tail, None)) = expr.then_branch.stmts.last() else {
        return None;
    };
    expr.else_branch.as_ref()?;
    match TupleShape::of(tail) {
        shape @ TupleShape::Tuple(_) => Some(shape),
        TupleShape::One => None,
    }
}

/// The shape of the tuple a `match` yields, from the first arm that does
/// not panic: `None` if that arm's value is not a tuple written out.
pub(super) fn match_yields_tuple(expr: &syn::ExprMatch) -> Option<TupleShape> {
    let arm = expr
        .arms
        .iter()
        .find(|arm| !super::macros::diverges_expr(&arm.body))?;
    match TupleShape::of(&arm.body) {
        shape @ TupleShape::Tuple(_) => Some(shape),
        TupleShape::One => None,
    }
}

/// Where the numbers of a tuple go: `(a, (b, c))` is a tuple of one and a
/// tuple of two.
pub(super) enum TupleShape {
    One,
    Tuple(Vec<TupleShape>),
}

impl TupleShape {
    fn of(expr: &Expr) -> TupleShape {
        match expr {
            Expr::Paren(paren) => TupleShape::of(&paren.expr),
            Expr::Tuple(tuple) if !tuple.elems.is_empty() => {
                TupleShape::Tuple(tuple.elems.iter().map(TupleShape::of).collect())
            }
            Expr::Block(block) if block.label.is_none() => match block.block.stmts.last() {
                Some(syn::Stmt::Expr(tail, None)) => TupleShape::of(tail),
                _ => TupleShape::One,
            },
            _ => TupleShape::One,
        }
    }

    fn count(&self) -> usize {
        match self {
            TupleShape::One => 1,
            TupleShape::Tuple(parts) => parts.iter().map(TupleShape::count).sum(),
        }
    }

    /// The item of this shape holding `values`, in order.
    fn build(
        &self,
        values: &mut impl Iterator<Item = Result<Item, Poison>>,
    ) -> Result<Item, Poison> {
        match self {
            TupleShape::One => values.next().expect("one value per number"),
            TupleShape::Tuple(parts) => parts
                .iter()
                .map(|part| part.build(values))
                .collect::<Result<Vec<_>, _>>()
                .map(Item::Tuple),
        }
    }
}

/// Whether a block ends in an expression that [`Lower::item_expr`] must
/// lower itself (a tuple): other blocks are lowered as values.
fn yields_item(expr: &Expr) -> bool {
    match expr {
        Expr::Tuple(tuple) => !tuple.elems.is_empty(),
        Expr::Paren(paren) => yields_item(&paren.expr),
        Expr::Block(block) if block.label.is_none() => matches!(
            block.block.stmts.last(),
            Some(syn::Stmt::Expr(tail, None)) if yields_item(tail)
        ),
        _ => false,
    }
}

/// A function item in the body, `fn sq(v: f64) -> f64 { v * v }`, as the
/// closure it is to the lowering (it captures nothing, and names only its
/// parameters, items and globals): `|v: f64| -> f64 { v * v }`, bound where
/// the block starts. `Err` (what to report) if it is generic, a method,
/// `async`, `unsafe`, `extern` or variadic.
pub(super) fn nested_fn_closure(item: &syn::ItemFn) -> Result<ExprClosure, Span> {
    let sig = &item.sig;
    if let Some(param) = sig.generics.params.first() {
        return Err(param.span());
    }
    if let Some(at) = sig
        .asyncness
        .map(|token| token.span)
        .or(match &sig.safety {
            syn::Safety::Unsafe(token) => Some(token.span),
            _ => None,
        })
        .or(sig.abi.as_ref().map(Spanned::span))
        .or(sig.variadic.as_ref().map(Spanned::span))
        .or(sig.generics.where_clause.as_ref().map(Spanned::span))
    {
        return Err(at);
    }
    let mut inputs = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(typed) => inputs.push(Pat::Type(typed.clone())),
            syn::FnArg::Receiver(receiver) => return Err(receiver.span()),
        }
    }
    let output = &sig.output;
    let block = &item.block;
    Ok(syn::parse_quote_spanned!(sig.ident.span()=> |#(#inputs),*| #output #block))
}

/// A closure's body whose `return`s are guards, `if c { …; return e; }`
/// before the rest, or a last `return e;`, as the branches they stand for
/// (see [`super::guards_as_branches`]): `None` if a `return` stands
/// anywhere else.
fn returns_as_branches(body: &Expr) -> Option<Expr> {
    match body {
        Expr::Return(ret) => ret.expr.as_deref().cloned(),
        Expr::Block(block) if block.label.is_none() => {
            let mut block = block.clone();
            block.block.stmts = super::guards_as_branches(&block.block.stmts)?;
            Some(Expr::Block(block))
        }
        _ => None,
    }
}

/// The first `return` keyword in a closure body (not in a closure inside it).
fn first_return(body: &Expr) -> Option<syn::token::Return> {
    struct Find(Option<syn::token::Return>);
    impl Visit<'_> for Find {
        fn visit_expr_return(&mut self, ret: &syn::ExprReturn) {
            self.0.get_or_insert(ret.return_token);
        }
        fn visit_expr_closure(&mut self, _: &ExprClosure) {}
    }
    let mut find = Find(None);
    find.visit_expr(body);
    find.0
}

/// The names `expr` reads as plain paths (`a` in `a[0] * t`), each once,
/// in the order they first appear.
pub(super) fn path_names(expr: &Expr) -> Vec<String> {
    struct Names(Vec<String>);
    impl syn::visit::Visit<'_> for Names {
        fn visit_expr_path(&mut self, path: &ExprPath) {
            if let Some(ident) = path.path.get_ident() {
                let name = ident.unraw().to_string();
                if !self.0.contains(&name) {
                    self.0.push(name);
                }
            }
        }
    }
    let mut names = Names(Vec::new());
    syn::visit::Visit::visit_expr(&mut names, expr);
    names.0
}

/// The patterns of a row's elements (`[x, y]`, `(x, y)`), in order; none if
/// one is a rest pattern (`..`).
fn row_pattern(pat: &Pat) -> Vec<&Pat> {
    let elems: Vec<&Pat> = match pat {
        Pat::Slice(slice) => slice.elems.iter().collect(),
        Pat::Tuple(tuple) => tuple.elems.iter().collect(),
        _ => Vec::new(),
    };
    if elems.iter().any(|elem| matches!(elem, Pat::Rest(_))) {
        return Vec::new();
    }
    elems
}
