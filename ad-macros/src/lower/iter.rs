//! Iterator chains and sub-slices, lowered to the loops they stand for.
//!
//! A chain is a set of *leaves* advancing together (one per source: a range,
//! a buffer's elements, its windows or chunks), each walking an index
//! sequence `(start..end).step_by(step)`, maybe reversed; a *shape* that
//! builds the item from the leaves (`zip` and `enumerate` pair them, `map`
//! applies a closure); and the `filter`s the item must pass. Adapters change
//! the sequences (`rev`, `skip`, `take`, `step_by`), the shape, or the
//! filters; a consumer (`for`, `sum`, `fold`, `collect`, …) becomes one loop.
//! When every leaf walks the same sequence, the loop runs over it directly;
//! otherwise it counts positions and each leaf computes its index.
//!
//! ```text
//! x.iter().zip(y)                     %n = min (len %x), (len %y)
//!     .map(|(a, b)| a * b)     ⇒      for %0..%n carry [0] {
//!     .sum::<f64>()                       %a = load %x[arg 0]
//!                                         %b = load %y[arg 0]
//!                                         yield add (arg 1), (mul %a, %b)
//!                                     }
//! ```
//!
//! A sub-slice (`&x[a..b]`, a window, a chunk, a half of `split_at`) is a
//! [`View`]: its buffer, where it starts and how long it is. Indexing it reads
//! the buffer at `start + i`; iterating it walks `start..start + len`.

use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::{Literal, Span};
use syn::spanned::Spanned;
use syn::{Expr, ExprMethodCall, RangeLimits};

use super::closures::{Callable, Item};
use super::{Lower, Poison, Special};
use crate::diag::msg;
use crate::ir::{BinOp, Const, Inst, LoopRange, NewBuf, Prim, Ty, UnOp, Value};

/// A range of a buffer's elements.
#[derive(Clone, Copy)]
pub(crate) struct View {
    pub(super) buf: Value,
    pub(super) start: Value,
    pub(super) len: Value,
}

/// A buffer of rows of `width` elements each (`pts: &[[f64; 2]]`), stored
/// flat: the rows are the chunks of `flat` (see [`SigParam::rows`]).
///
/// [`SigParam::rows`]: crate::lower::SigParam::rows
#[derive(Clone, Copy)]
pub(crate) struct Rows {
    pub(super) flat: View,
    pub(super) width: Value,
}

/// The indices a leaf walks: `(start..end).step_by(step)`, reversed if
/// `reversed` (the same as a loop's [`LoopRange`]).
#[derive(Clone, Copy, PartialEq)]
struct Seq {
    start: Value,
    end: Value,
    inclusive: bool,
    step: Option<Value>,
    reversed: bool,
}

/// What a leaf yields at an index.
#[derive(Clone, Copy)]
enum Leaf {
    /// The index itself (a range, or the count of `enumerate`).
    Index,
    /// `buf[index]`, or the element itself for `iter_mut()`.
    Elem { buf: Value, mutable: bool },
    /// `&buf[index..index + size]`; rows of `rows` elements each when
    /// `rows` is set (a window of a buffer of rows).
    Window {
        buf: Value,
        size: Value,
        rows: Option<Value>,
    },
    /// `&buf[index..min(index + size, end)]`; `end` is `None` for
    /// `chunks_exact`, whose chunks all have `size` elements; rows as for
    /// `Window`.
    Chunk {
        buf: Value,
        size: Value,
        end: Option<Value>,
        rows: Option<Value>,
    },
}

/// How the item is built from the leaves.
#[derive(Clone)]
enum Shape {
    Leaf(usize),
    Tuple(Vec<Shape>),
    /// `map(f)`, numbered so that it is applied once per item.
    Map(usize, Rc<Callable>, Box<Shape>),
}

impl Seq {
    /// `start..end`, or `(start..end).step_by(step)`, walked forwards.
    fn forward(start: Value, end: Value, step: Option<Value>) -> Self {
        Seq {
            start,
            end,
            inclusive: false,
            step,
            reversed: false,
        }
    }
}

impl Shape {
    fn shift(&mut self, leaves: usize, maps: usize) {
        match self {
            Shape::Leaf(k) => *k += leaves,
            Shape::Tuple(shapes) => shapes.iter_mut().for_each(|s| s.shift(leaves, maps)),
            Shape::Map(id, _, inner) => {
                *id += maps;
                inner.shift(leaves, maps);
            }
        }
    }
}

/// An iterator chain being lowered.
#[derive(Clone)]
pub(super) struct Chain {
    leaves: Vec<(Leaf, Seq)>,
    /// After `copied()` or `cloned()`: the elements are values, not
    /// references.
    by_value: bool,
    shape: Shape,
    /// The predicates of `filter`, each with the item it sees.
    filters: Vec<(Rc<Callable>, Shape)>,
    maps: usize,
    /// The chains that follow this one (`a.chain(b)`), each a loop of its
    /// own run after this one's, carrying what it carries; none follows
    /// them (`a.chain(b).chain(c)` is `a` then `[b, c]`).
    then: Vec<Chain>,
}

impl Chain {
    /// The variables its closures assign when applied.
    pub(super) fn mutations(&self) -> Vec<String> {
        fn of(shape: &Shape, out: &mut Vec<String>) {
            match shape {
                Shape::Leaf(_) => {}
                Shape::Tuple(shapes) => shapes.iter().for_each(|shape| of(shape, out)),
                Shape::Map(_, f, inner) => {
                    out.extend(f.mutates().iter().cloned());
                    of(inner, out);
                }
            }
        }
        let mut names = Vec::new();
        of(&self.shape, &mut names);
        for (f, shape) in &self.filters {
            names.extend(f.mutates().iter().cloned());
            of(shape, &mut names);
        }
        for part in &self.then {
            names.extend(part.mutations());
        }
        names
    }

    /// Whether its items are buffers a closure makes (`.map(|i| (0..n)
    /// .map(…).collect())`): the rows of a `Vec<Vec<f64>>`.
    pub(super) fn makes_buffers(&self) -> bool {
        matches!(&self.shape, Shape::Map(_, f, _) if f.makes_buffer()) && self.then.is_empty()
    }

    /// Whether some of its items may be left out: a `filter` in any part.
    fn filtered(&self) -> bool {
        !self.filters.is_empty() || self.then.iter().any(Chain::filtered)
    }

    /// The chains it runs one after the other: itself, then those of
    /// `chain(…)`, each a chain of one part.
    pub(super) fn parts(&self) -> Vec<Chain> {
        let mut head = self.clone();
        let rest = std::mem::take(&mut head.then);
        std::iter::once(head).chain(rest).collect()
    }

    fn new(leaf: Leaf, seq: Seq) -> Self {
        Chain {
            leaves: vec![(leaf, seq)],
            by_value: false,
            shape: Shape::Leaf(0),
            filters: Vec::new(),
            maps: 0,
            then: Vec::new(),
        }
    }
}

/// The consumers [`Lower::consume`] knows.
pub(super) const CONSUMERS: [&str; 8] = [
    "sum", "product", "count", "fold", "for_each", "collect", "any", "all",
];

impl Lower<'_> {
    /// The chain an expression iterates: a range, a buffer or a sub-slice
    /// (`&xs`, `xs.iter()`, `&x[1..]`) and the adapters applied to it. `None`
    /// if the expression is no iterator.
    pub(super) fn chain_of(&mut self, expr: &Expr) -> Option<Result<Chain, Poison>> {
        // The rows of `pts: &[[f64; 2]]` are its flat buffer's chunks.
        if let Some(rows) = self.rows_of(expr) {
            let span = expr.span();
            return Some(rows.map(|rows| self.pieces("chunks_exact", rows.flat, rows.width, span)));
        }
        match expr {
            Expr::Paren(paren) => self.chain_of(&paren.expr),
            Expr::Group(group) => self.chain_of(&group.expr),
            Expr::Range(range) => Some((|| {
                let (Some(start), Some(end)) = (&range.start, &range.end) else {
                    self.cx.error_spanned_by(range, msg::LOOP_RANGE);
                    return Err(Poison);
                };
                let start = self.expr(start).inspect(|&start| self.int_use(start));
                let end = self.expr(end).inspect(|&end| self.int_use(end));
                let seq = Seq {
                    start: start?,
                    end: end?,
                    inclusive: matches!(range.limits, RangeLimits::Closed(_)),
                    step: None,
                    reversed: false,
                };
                Ok(Chain::new(Leaf::Index, seq))
            })()),
            Expr::MethodCall(call) => self.adapter(call),
            // `std::iter::zip(a, b)` is `a.into_iter().zip(b)`.
            Expr::Call(call) if iter_fn(call) == Some("zip") => {
                let (a, b) = (&call.args[0], &call.args[1]);
                let zipped: ExprMethodCall = syn::parse_quote_spanned!(call.span()=> (#a).zip(#b));
                self.adapter(&zipped)
            }
            // `std::iter::once(v)` (`once(&v)`): the elements of `[v]`, by
            // value (by reference); `repeat_n(v, n)`, of `vec![v; n]`.
            Expr::Call(call) if matches!(iter_fn(call), Some("once" | "repeat_n")) => {
                let by_ref = matches!(&call.args[0], Expr::Reference(r) if r.mutability.is_none());
                let item = unreferenced(&call.args[0]);
                let span = call.span();
                let buffer: Expr = match &call.args.get(1) {
                    Some(n) => syn::parse_quote_spanned!(span=> vec![#item; #n]),
                    None => syn::parse_quote_spanned!(span=> [#item]),
                };
                Some(self.expr(&buffer).map(|buf| {
                    let whole = self.whole(buf, span);
                    let mut chain = self.elements_of(whole, false, span);
                    chain.by_value = !by_ref;
                    chain
                }))
            }
            Expr::Reference(reference) => {
                let mutable = reference.mutability.is_some();
                if mutable && self.names_cursor(&reference.expr) {
                    self.cx.error_spanned_by(reference, msg::CURSOR_BORROWED);
                    return Some(Err(Poison));
                }
                let view = self.view_or_buffer(&reference.expr)?;
                Some(view.map(|view| self.elements_of(view, mutable, expr.span())))
            }
            // `let pairs = x.iter().zip(y);` then `pairs.map(…)`.
            Expr::Path(_)
                if let Some(name) = super::expr::local_name(expr)
                    && let Some(Special::Chain(chain)) = self.special(&name) =>
            {
                Some(Ok((*chain).clone()))
            }
            Expr::Path(_) | Expr::Index(_) | Expr::Field(_) => {
                let view = self.view_or_buffer(expr)?;
                Some(view.map(|view| self.elements_of(view, false, expr.span())))
            }
            _ => None,
        }
    }

    /// The elements of a view, as a chain.
    fn elements_of(&mut self, view: View, mutable: bool, span: Span) -> Chain {
        let end = self.int_add(view.start, view.len, span);
        let seq = Seq::forward(view.start, end, None);
        Chain::new(
            Leaf::Elem {
                buf: view.buf,
                mutable,
            },
            seq,
        )
    }

    /// `chain.collect::<Vec<_>>()`, `s.to_vec()` (`to_owned()`, `clone()`)
    /// iterated where it is made (`….iter()`, `….windows(2)`): the whole
    /// of the buffer made there. `None` if `expr` makes none.
    fn made_view(&mut self, expr: &Expr, span: Span) -> Option<Result<View, Poison>> {
        let Expr::MethodCall(made) = strip(expr) else {
            return None;
        };
        if !matches!(
            made.method.to_string().as_str(),
            "collect" | "to_vec" | "to_owned" | "clone"
        ) {
            return None;
        }
        Some(self.expr(expr).and_then(|buf| {
            if !matches!(self.ty(buf), Ty::Buf(_)) {
                self.cx.error_spanned_by(expr, msg::BUFFER_ARGUMENT);
                return Err(Poison);
            }
            Ok(self.whole(buf, span))
        }))
    }

    fn adapter(&mut self, call: &ExprMethodCall) -> Option<Result<Chain, Poison>> {
        let name = call.method.to_string();
        let span = call.span();
        let args = call.args.len();
        match (name.as_str(), args) {
            ("windows" | "chunks" | "chunks_exact" | "chunks_mut" | "chunks_exact_mut", 1) => {
                if let Some(rows) = self.rows_of(&call.receiver) {
                    let name = name.trim_end_matches("_mut");
                    return Some((|| {
                        let rows = rows?;
                        let k = self.expr(&call.args[0])?;
                        Ok(self.row_pieces(name, rows, k, span))
                    })());
                }
                let view = match self.view_or_buffer(&call.receiver) {
                    Some(view) => view,
                    None => self.made_view(&call.receiver, span)?,
                };
                // A chunk of `chunks_mut` is a view its loop body may write.
                let name = name.trim_end_matches("_mut");
                return Some((|| {
                    let view = view?;
                    let size = self.expr(&call.args[0])?;
                    Ok(self.pieces(name, view, size, span))
                })());
            }
            ("iter" | "into_iter" | "iter_mut", 0)
                if let Some(rows) = self.rows_of(&call.receiver) =>
            {
                return Some(
                    rows.map(|rows| self.pieces("chunks_exact", rows.flat, rows.width, span)),
                );
            }
            ("iter" | "into_iter" | "iter_mut", 0) => {
                let mutable = name == "iter_mut";
                if let Some(view) = self.view_or_buffer(&call.receiver) {
                    return Some(view.map(|view| self.elements_of(view, mutable, span)));
                }
                if let Some(view) = self.made_view(&call.receiver, span) {
                    return Some(view.map(|view| self.elements_of(view, mutable, span)));
                }
            }
            _ => {}
        }
        // `pts.iter().flatten()` of a buffer of rows: its flat elements.
        if name == "flatten"
            && args == 0
            && let Expr::MethodCall(rows_iter) = &*call.receiver
            && matches!(
                rows_iter.method.to_string().as_str(),
                "iter" | "into_iter" | "iter_mut"
            )
            && rows_iter.args.is_empty()
            && let Some(rows) = self.rows_of(&rows_iter.receiver)
        {
            let mutable = rows_iter.method == "iter_mut";
            return Some(rows.map(|rows| self.elements_of(rows.flat, mutable, span)));
        }
        // `std::iter::repeat(v).take(n)`: `repeat_n(v, n)`.
        if name == "take"
            && args == 1
            && let Expr::Call(repeat) = strip(&call.receiver)
            && iter_fn(repeat) == Some("repeat")
        {
            let (item, n) = (&repeat.args[0], &call.args[0]);
            let repeated: Expr =
                syn::parse_quote_spanned!(call.span()=> std::iter::repeat_n(#item, #n));
            return self.chain_of(&repeated);
        }
        if name == "scan" && args == 2 {
            let chain = self.chain_of(&call.receiver)?;
            return Some(chain.and_then(|chain| {
                self.one_part(call, &chain)?;
                self.scan(call, chain)
            }));
        }
        if matches!(name.as_str(), "take_while" | "skip_while") && args == 1 {
            let chain = self.chain_of(&call.receiver)?;
            return Some(chain.and_then(|chain| {
                self.one_part(call, &chain)?;
                self.take_while(call, chain)
            }));
        }
        let known = matches!(
            (name.as_str(), args),
            ("iter" | "into_iter" | "copied" | "cloned" | "by_ref", 0)
                | ("enumerate" | "rev", 0)
                | (
                    "zip" | "skip" | "take" | "step_by" | "map" | "filter" | "chain",
                    1
                )
        );
        if !known {
            // An unknown method of an iterator: name what works instead.
            if is_iterator_expr(&call.receiver)
                && !CONSUMERS.contains(&name.as_str())
                && !matches!(
                    name.as_str(),
                    "len" | "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default" | "map_or"
                )
            {
                let chain = self.chain_of(&call.receiver)?;
                if chain.is_ok() {
                    let message = match name.as_str() {
                        "reduce" | "max_by" | "min_by" => msg::REDUCE_RESULT.to_owned(),
                        _ => msg::iterator_adapter(&name),
                    };
                    self.cx.error_spanned_by(&call.method, message);
                }
                return Some(Err(Poison));
            }
            return None;
        }
        if name == "by_ref" && self.names_cursor(&call.receiver) {
            self.cx.error_spanned_by(&call.method, msg::CURSOR_BORROWED);
            return Some(Err(Poison));
        }
        let chain = self.chain_of(&call.receiver)?;
        Some(chain.and_then(|chain| {
            if chain.then.is_empty() {
                self.one_adapter(call, chain)
            } else {
                self.chained_adapter(call, chain)
            }
        }))
    }

    /// An adapter after `a.chain(b)`: applied to each part, `rev` also
    /// reversing their order; `enumerate`, `skip` and `take` count across
    /// the parts ([`Lower::counted_parts`]); more `chain`s add parts. Any
    /// other (`zip`, `step_by`) is the `after_chain` error.
    fn chained_adapter(&mut self, call: &ExprMethodCall, chain: Chain) -> Result<Chain, Poison> {
        let name = call.method.to_string();
        let mut parts = chain.parts();
        match name.as_str() {
            "chain" => {
                let mut chain = chain;
                let more = self.chained_parts(call)?;
                chain.then.extend(more);
                return Ok(chain);
            }
            "map" | "filter" | "copied" | "cloned" | "iter" | "into_iter" | "by_ref" => {}
            "rev" => parts.reverse(),
            "enumerate" | "skip" | "take" if !chain.filtered() => {
                return self.counted_parts(call, parts);
            }
            "enumerate" | "skip" | "take" => {
                self.cx.error_spanned_by(&call.method, msg::AFTER_FILTER);
                return Err(Poison);
            }
            _ => {
                self.cx
                    .error_spanned_by(&call.method, msg::after_chain(&name));
                return Err(Poison);
            }
        }
        let mut parts = parts
            .into_iter()
            .map(|part| self.one_adapter(call, part))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter();
        let mut head = parts.next().expect("two parts or more");
        head.then = parts.collect();
        Ok(head)
    }

    /// `enumerate`, `skip(n)` or `take(n)` after `chain`, on each part in
    /// turn with what the parts before it counted: part `k` is numbered
    /// from the items before it; skips (takes) `min(n, len)` of its `len`
    /// items, `n` then going down by `len` (to zero).
    fn counted_parts(&mut self, call: &ExprMethodCall, parts: Vec<Chain>) -> Result<Chain, Poison> {
        let span = call.span();
        let name = call.method.to_string();
        let mut left = match call.args.first() {
            Some(n) => self.expr(n)?,
            None => self.int_lit(0, span),
        };
        let mut counted = Vec::new();
        for mut part in parts {
            self.equalize(&mut part, span);
            let count = self.chain_count(&part, span);
            if name == "enumerate" {
                let end = self.int_add(left, count, span);
                part.leaves
                    .push((Leaf::Index, Seq::forward(left, end, None)));
                let index = Shape::Leaf(part.leaves.len() - 1);
                part.shape = Shape::Tuple(vec![index, part.shape]);
                left = end;
            } else {
                let here = self.int_min(left, count, span);
                for k in 0..part.leaves.len() {
                    let seq = part.leaves[k].1;
                    part.leaves[k].1 = if name == "skip" {
                        self.seq_skip(seq, here, span)
                    } else {
                        self.seq_take(seq, here, span)
                    };
                }
                left = self.sat_sub(left, count, span);
            }
            counted.push(part);
        }
        let mut parts = counted.into_iter();
        let mut head = parts.next().expect("two parts or more");
        head.then = parts.collect();
        Ok(head)
    }

    /// The parts of `b` in `a.chain(b)`.
    fn chained_parts(&mut self, call: &ExprMethodCall) -> Result<Vec<Chain>, Poison> {
        match self.chain_of(&call.args[0]) {
            Some(other) => Ok(other?.parts()),
            None => {
                self.cx.error_spanned_by(&call.args[0], msg::ZIP_ARGUMENT);
                Err(Poison)
            }
        }
    }

    /// An error at `call`'s method if `chain` has parts after it: the
    /// method needs one loop.
    fn one_part(&mut self, call: &ExprMethodCall, chain: &Chain) -> Result<(), Poison> {
        if chain.then.is_empty() {
            return Ok(());
        }
        let name = call.method.to_string();
        self.cx
            .error_spanned_by(&call.method, msg::after_chain(&name));
        Err(Poison)
    }

    /// An adapter applied to a chain of one part.
    fn one_adapter(&mut self, call: &ExprMethodCall, mut chain: Chain) -> Result<Chain, Poison> {
        let name = call.method.to_string();
        let span = call.span();
        {
            let positional = !matches!(name.as_str(), "map" | "filter" | "rev")
                && !matches!(
                    name.as_str(),
                    "iter" | "into_iter" | "copied" | "cloned" | "by_ref"
                );
            if positional && name != "chain" && !chain.filters.is_empty() {
                self.cx.error_spanned_by(&call.method, msg::AFTER_FILTER);
                return Err(Poison);
            }
            match name.as_str() {
                "enumerate" => {
                    self.equalize(&mut chain, span);
                    let count = self.chain_count(&chain, span);
                    let zero = self.int_lit(0, span);
                    chain
                        .leaves
                        .push((Leaf::Index, Seq::forward(zero, count, None)));
                    let index = Shape::Leaf(chain.leaves.len() - 1);
                    chain.shape = Shape::Tuple(vec![index, chain.shape]);
                }
                "zip" => {
                    let other = match self.chain_of(&call.args[0]) {
                        Some(other) => other?,
                        None => {
                            self.cx.error_spanned_by(&call.args[0], msg::ZIP_ARGUMENT);
                            return Err(Poison);
                        }
                    };
                    if !other.then.is_empty() {
                        self.cx
                            .error_spanned_by(&call.args[0], msg::after_chain("zip"));
                        return Err(Poison);
                    }
                    if !other.filters.is_empty() {
                        self.cx.error_spanned_by(&call.args[0], msg::AFTER_FILTER);
                        return Err(Poison);
                    }
                    let mut shape = other.shape;
                    shape.shift(chain.leaves.len(), chain.maps);
                    chain.leaves.extend(other.leaves);
                    chain.maps += other.maps;
                    chain.shape = Shape::Tuple(vec![chain.shape, shape]);
                }
                "rev" | "skip" | "take" | "step_by" => {
                    let arg = match call.args.first() {
                        Some(arg) => Some(self.expr(arg)?),
                        None => None,
                    };
                    self.equalize(&mut chain, span);
                    for k in 0..chain.leaves.len() {
                        let seq = chain.leaves[k].1;
                        chain.leaves[k].1 = match (name.as_str(), arg) {
                            ("skip", Some(n)) => self.seq_skip(seq, n, span),
                            ("take", Some(n)) => self.seq_take(seq, n, span),
                            ("step_by", Some(k)) => self.seq_step(seq, k, span),
                            _ => Seq {
                                reversed: !seq.reversed,
                                ..seq
                            },
                        };
                    }
                }
                "copied" | "cloned" => chain.by_value = true,
                "map" => {
                    let f = self.callable(&call.args[0])?;
                    let id = chain.maps;
                    chain.maps += 1;
                    chain.shape = Shape::Map(id, f, Box::new(chain.shape));
                }
                "filter" => {
                    let f = self.callable(&call.args[0])?;
                    chain.filters.push((f, chain.shape.clone()));
                }
                // `a.chain(b)`: the parts of `b` after those of `a`.
                "chain" => chain.then = self.chained_parts(call)?,
                _ => {}
            }
            Ok(chain)
        }
    }

    /// `chain.scan(init, |s, v| { *s += v; Some(*s) })`: a `map` whose
    /// closure updates a local holding the state (`scan_s`, a name nothing
    /// in scope has), which the consuming
    /// loop carries: `*s` is that local, and the closure's value is what its
    /// `Some(…)` holds. A closure that can end the iteration (`None`, an
    /// early `return`) or uses `s` other than as `*s` is an error.
    fn scan(&mut self, call: &ExprMethodCall, mut chain: Chain) -> Result<Chain, Poison> {
        let span = call.span();
        let Expr::Closure(closure) = strip(&call.args[1]) else {
            self.cx.error_spanned_by(&call.args[1], msg::SCAN_CLOSURE);
            return Err(Poison);
        };
        let (Some(syn::Pat::Ident(state)), Some(item), 2) = (
            closure.inputs.first(),
            closure.inputs.get(1),
            closure.inputs.len(),
        ) else {
            self.cx.error_spanned_by(&closure.inputs, msg::SCAN_CLOSURE);
            return Err(Poison);
        };
        let init = self.expr(&call.args[0])?;
        // Named after the state, `scan_s`, unless that names something.
        let hidden = self.unused_name(format!("scan_{}", state.ident));
        self.bind(&hidden, Ok(init));
        let mut rewrite = ScanState {
            state: state.ident.to_string(),
            hidden: syn::Ident::new(&hidden, span),
            stray: None,
        };
        let mut body = (*closure.body).clone();
        syn::visit_mut::VisitMut::visit_expr_mut(&mut rewrite, &mut body);
        if let Some(stray) = rewrite.stray {
            self.cx.error_at(stray, msg::SCAN_CLOSURE);
            return Err(Poison);
        }
        let Some(body) = scan_value(body) else {
            // Point at what the closure ends with.
            match strip(&closure.body) {
                Expr::Block(block) if let Some(tail) = block.block.stmts.last() => {
                    self.cx.error_spanned_by(tail, msg::SCAN_CLOSURE);
                }
                body => self.cx.error_spanned_by(body, msg::SCAN_CLOSURE),
            }
            return Err(Poison);
        };
        let mapped: Expr = syn::parse_quote_spanned!(span=> |#item| #body);
        let f = self.callable(&mapped)?;
        let id = chain.maps;
        chain.maps += 1;
        chain.shape = Shape::Map(id, f, Box::new(chain.shape));
        Ok(chain)
    }

    /// `name`, or `name_`, `name__`, …: the first that names nothing in
    /// scope, for a local the lowering adds and shows in the expansion.
    pub(super) fn unused_name(&self, mut name: String) -> String {
        while self.lookup(&name).is_some() || self.special(&name).is_some() {
            name.push('_');
        }
        name
    }

    /// `chain.take_while(p)`: a `filter` by a flag the consuming loop
    /// carries (`taking`, a name nothing in scope has), true until the
    /// first item `p` rejects: `|v| { taking = taking && p(v); taking }`.
    /// The loop goes on over the items after it, which pass no more (`std`
    /// stops there: only a predicate that panics on a later item could
    /// tell). `skip_while(p)` is the same flag (`skipping`), negated: the
    /// items from the first that `p` rejects on pass.
    fn take_while(&mut self, call: &ExprMethodCall, mut chain: Chain) -> Result<Chain, Poison> {
        let span = call.span();
        let skip = call.method == "skip_while";
        let hidden = self.unused_name(if skip { "skipping" } else { "taking" }.to_owned());
        let yes = self.push(Inst::Const(Const::Bool(true)), Ty::Bool, span);
        self.bind(&hidden, Ok(yes));
        let flag = syn::Ident::new(&hidden, span);
        let predicate = &call.args[0];
        let passes = if skip {
            quote::quote_spanned!(span=> !#flag)
        } else {
            quote::quote_spanned!(span=> #flag)
        };
        let filter: Expr = syn::parse_quote_spanned!(span=>
            |__ad_item| {
                #flag = #flag && (#predicate)(__ad_item);
                #passes
            }
        );
        let f = self.callable(&filter)?;
        chain.filters.push((f, chain.shape.clone()));
        Ok(chain)
    }

    /// `pts.windows(k)`, `pts.chunks(k)`, `pts.chunks_exact(k)` of a buffer
    /// of rows: pieces of `k` rows, each a buffer of rows, walking the flat
    /// buffer a row at a time (windows) or `k` rows at a time (chunks).
    /// A check the expansion adds, its integers written in place:
    /// `check_range(x.len(), 1..)`.
    fn check_written(
        &mut self,
        tokens: proc_macro2::TokenStream,
        values: Vec<(proc_macro2::Ident, Value)>,
        span: Span,
    ) -> Result<(), Poison> {
        let empty = proc_macro2::TokenStream::new();
        self.written_with(tokens, empty, values, Ty::Unit, span)
            .map(drop)
    }

    /// `x.windows(0)`, `x.chunks(0)` panic, as they do in the function
    /// (not checked for a positive constant size).
    fn check_size(&mut self, name: &str, size: Value, span: Span) {
        if matches!(self.int_const(size), Some(k) if k > 0) {
            return;
        }
        let size_name = proc_macro2::Ident::new("__ad_size", span);
        let method = if name == "windows" {
            "windows"
        } else {
            "chunks"
        };
        let tokens = quote::quote_spanned!(span=>
            ::ad_runtime::__private::check_size(#method, #size_name);
        );
        // Its value was lowered: nothing here can fail to lower.
        let _ = self.check_written(tokens, vec![(size_name, size)], span);
    }

    fn row_pieces(&mut self, name: &str, rows: Rows, k: Value, span: Span) -> Chain {
        self.check_size(name, k, span);
        let flat = rows.flat;
        let width = rows.width;
        let size = self.int_op(BinOp::Mul, k, width, span);
        let n = self.int_op(BinOp::Div, flat.len, width, span);
        let end = self.int_add(flat.start, flat.len, span);
        let (leaf, seq) = match name {
            "windows" => {
                // `n + 1 - k` windows, if there are any.
                let one = self.int_lit(1, span);
                let longer = self.int_add(n, one, span);
                let count = self.sat_sub(longer, k, span);
                let covered = self.int_op(BinOp::Mul, count, width, span);
                let last = self.int_add(flat.start, covered, span);
                let leaf = Leaf::Window {
                    buf: flat.buf,
                    size,
                    rows: Some(width),
                };
                (leaf, Seq::forward(flat.start, last, Some(width)))
            }
            "chunks" => {
                let leaf = Leaf::Chunk {
                    buf: flat.buf,
                    size,
                    end: Some(end),
                    rows: Some(width),
                };
                (leaf, Seq::forward(flat.start, end, Some(size)))
            }
            _ => {
                let count = self.int_op(BinOp::Div, n, k, span);
                let covered = self.int_op(BinOp::Mul, count, size, span);
                let last = self.int_add(flat.start, covered, span);
                let leaf = Leaf::Chunk {
                    buf: flat.buf,
                    size,
                    end: None,
                    rows: Some(width),
                };
                (leaf, Seq::forward(flat.start, last, Some(size)))
            }
        };
        Chain::new(leaf, seq)
    }

    /// `view.windows(k)`, `view.chunks(k)`, `view.chunks_exact(k)`.
    fn pieces(&mut self, name: &str, view: View, size: Value, span: Span) -> Chain {
        self.check_size(name, size, span);
        let end = self.int_add(view.start, view.len, span);
        let (leaf, seq) = match name {
            "windows" => {
                // `len + 1 - size` windows, if there are any.
                let count = match self.int_const(size) {
                    Some(k) if k > 0 => {
                        let less = self.int_lit(k - 1, span);
                        self.sat_sub(view.len, less, span)
                    }
                    _ => {
                        let one = self.int_lit(1, span);
                        let longer = self.int_add(view.len, one, span);
                        self.sat_sub(longer, size, span)
                    }
                };
                let last = self.int_add(view.start, count, span);
                let seq = Seq::forward(view.start, last, None);
                (
                    Leaf::Window {
                        buf: view.buf,
                        size,
                        rows: None,
                    },
                    seq,
                )
            }
            "chunks" => (
                Leaf::Chunk {
                    buf: view.buf,
                    size,
                    end: Some(end),
                    rows: None,
                },
                Seq::forward(view.start, end, Some(size)),
            ),
            _ => {
                let count = self.int_op(BinOp::Div, view.len, size, span);
                let covered = self.int_op(BinOp::Mul, count, size, span);
                let end = self.int_add(view.start, covered, span);
                (
                    Leaf::Chunk {
                        buf: view.buf,
                        size,
                        end: None,
                        rows: None,
                    },
                    Seq::forward(view.start, end, Some(size)),
                )
            }
        };
        Chain::new(leaf, seq)
    }

    /// The sub-slice an expression names: `&x[a..b]`, `x[a..]`, a name bound
    /// to a sub-slice. `None` if it names none.
    pub(super) fn view_of(&mut self, expr: &Expr) -> Option<Result<View, Poison>> {
        match expr {
            Expr::Paren(paren) => self.view_of(&paren.expr),
            Expr::Group(group) => self.view_of(&group.expr),
            Expr::Reference(reference) => self.view_of(&reference.expr),
            Expr::Path(_) => {
                let name = super::expr::local_name(expr)?;
                match self.special(&name)? {
                    Special::View(view) => Some(Ok(view)),
                    Special::Cursor(view, key) => Some(self.cursor_rest(view, &key, expr.span())),
                    Special::Closure(_)
                    | Special::Chain(_)
                    | Special::Tuple(_)
                    | Special::Option
                    | Special::Opaque(_) => None,
                    Special::Rows(_) => {
                        self.cx.error_spanned_by(expr, msg::ROWS_AS_BUFFER);
                        Some(Err(Poison))
                    }
                }
            }
            // `pts.as_flattened()` of a buffer of rows: its flat elements.
            Expr::MethodCall(call)
                if matches!(
                    call.method.to_string().as_str(),
                    "as_flattened" | "as_flattened_mut"
                ) && call.args.is_empty() =>
            {
                let rows = self.rows_of(&call.receiver)?;
                Some(rows.map(|rows| rows.flat))
            }
            // `x.chunks_exact(k).remainder()`: the last `len % k` elements.
            Expr::MethodCall(call) if call.method == "remainder" && call.args.is_empty() => {
                let Expr::MethodCall(chunks) = &*call.receiver else {
                    return None;
                };
                if chunks.method != "chunks_exact" || chunks.args.len() != 1 {
                    return None;
                }
                let whole = self.view_or_buffer(&chunks.receiver)?;
                let span = expr.span();
                Some((|| {
                    let whole = whole?;
                    let k = self.expr(&chunks.args[0])?;
                    let len = self.int_op(BinOp::Rem, whole.len, k, span);
                    let skipped = self.int_op(BinOp::Sub, whole.len, len, span);
                    Ok(View {
                        buf: whole.buf,
                        start: self.int_add(whole.start, skipped, span),
                        len,
                    })
                })())
            }
            // `pts[i]`: a row.
            Expr::Index(index) if !matches!(&*index.index, Expr::Range(_)) => {
                let rows = self.rows_of(&index.expr)?;
                let span = expr.span();
                Some((|| {
                    let rows = rows?;
                    let i = self.expr(&index.index)?;
                    let offset = self.int_op(BinOp::Mul, i, rows.width, span);
                    Ok(View {
                        buf: rows.flat.buf,
                        start: self.int_add(rows.flat.start, offset, span),
                        len: rows.width,
                    })
                })())
            }
            Expr::Index(index) => {
                let Expr::Range(range) = &*index.index else {
                    return None;
                };
                if self.rows_of(&index.expr).is_some() {
                    // `&pts[a..b]` is rows (see `rows_of`), never a view.
                    return None;
                }
                let whole = self.view_or_buffer(&index.expr)?;
                let span = expr.span();
                Some((|| {
                    let whole = whole?;
                    let (start, len) = self.sub_range(range, whole.len, span)?;
                    let start = self.int_add(whole.start, start, span);
                    if self.builder.depth() > 0 {
                        self.slice_bounds.entry(len).or_insert(whole.len);
                    }
                    Ok(View {
                        buf: whole.buf,
                        start,
                        len,
                    })
                })())
            }
            _ => None,
        }
    }

    /// A sub-slice, or a whole buffer as one.
    pub(super) fn view_or_buffer(&mut self, expr: &Expr) -> Option<Result<View, Poison>> {
        if let Some(view) = self.view_of(expr) {
            return Some(view);
        }
        let buf = self.buffer_of(expr)?;
        Some(buf.map(|buf| self.whole(buf, expr.span())))
    }

    /// All of a buffer's elements, as a view.
    pub(super) fn whole(&mut self, buf: Value, span: Span) -> View {
        let start = self.int_lit(0, span);
        let len = self.push(Inst::Len(buf), Ty::Int, span);
        View { buf, start, len }
    }

    /// Where `range` starts in a sequence of `len` items, and how many
    /// items it holds (`a..b`, `a..`, `..=b`, `..`).
    fn sub_range(
        &mut self,
        range: &syn::ExprRange,
        len: Value,
        span: Span,
    ) -> Result<(Value, Value), Poison> {
        let start = range.start.as_ref().map(|start| self.expr(start));
        let end = range.end.as_ref().map(|end| self.expr(end));
        let start = start.transpose()?;
        let written_end = end.transpose()?;
        let mut end = written_end.unwrap_or(len);
        if let Some(start) = start {
            self.int_use(start);
        }
        self.int_use(end);
        // Its bounds checked as `&s[range]` checks them, panicking where
        // the function would (reads of the range are by start and length).
        // `v_store[..v_len]` of a buffer kept in its first storage: within
        // it by construction (see `resized.rs`).
        let trusted = range.start.is_none()
            && range
                .end
                .as_deref()
                .and_then(super::expr::local_name)
                .is_some_and(|name| self.trusted_lengths.contains(&name));
        if (start.is_some() || written_end.is_some()) && !trusted {
            let names = ["__ad_len", "__ad_start", "__ad_end"]
                .map(|name| proc_macro2::Ident::new(name, span));
            let [len_name, start_name, end_name] = &names;
            let from = start.map(|_| quote::quote!(#start_name));
            let to = written_end.map(|_| quote::quote!(#end_name));
            let limits = &range.limits;
            let tokens = quote::quote_spanned!(span=>
                ::ad_runtime::__private::check_range(#len_name, #from #limits #to);
            );
            let values = [Some(len), start, written_end]
                .into_iter()
                .zip(names.clone())
                .filter_map(|(value, name)| Some((name, value?)))
                .collect();
            self.check_written(tokens, values, span)?;
        }
        if matches!(range.limits, RangeLimits::Closed(_)) {
            let one = self.int_lit(1, span);
            end = self.int_add(end, one, span);
        }
        Ok(match start {
            Some(start) => (start, self.int_op(BinOp::Sub, end, start, span)),
            None => (self.int_lit(0, span), end),
        })
    }

    /// The buffer of rows an expression names: a parameter `pts: &[[f64;
    /// 2]]`, a name bound to one, `&pts[a..b]`. `None` if it names none.
    pub(super) fn rows_of(&mut self, expr: &Expr) -> Option<Result<Rows, Poison>> {
        match expr {
            Expr::Paren(paren) => self.rows_of(&paren.expr),
            Expr::Group(group) => self.rows_of(&group.expr),
            Expr::Reference(reference) => self.rows_of(&reference.expr),
            Expr::Path(_) => {
                let name = super::expr::local_name(expr)?;
                match self.special(&name)? {
                    Special::Rows(rows) => Some(Ok(rows)),
                    _ => None,
                }
            }
            Expr::Index(index) => {
                let Expr::Range(range) = &*index.index else {
                    return None;
                };
                let whole = self.rows_of(&index.expr)?;
                let span = expr.span();
                Some((|| {
                    let whole = whole?;
                    let count = self.int_op(BinOp::Div, whole.flat.len, whole.width, span);
                    let (start, rows) = self.sub_range(range, count, span)?;
                    let first = self.int_op(BinOp::Mul, start, whole.width, span);
                    let len = self.int_op(BinOp::Mul, rows, whole.width, span);
                    Ok(Rows {
                        flat: View {
                            buf: whole.flat.buf,
                            start: self.int_add(whole.flat.start, first, span),
                            len,
                        },
                        width: whole.width,
                    })
                })())
            }
            _ => None,
        }
    }

    /// Binds `name` to the rows of the flat buffer `buf`, each `width` long
    /// (an integer literal, a constant's path, or a constant expression).
    pub(super) fn bind_rows(&mut self, name: &str, buf: Value, width: &Expr, span: Span) {
        let width = match width {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => match int.base10_parse::<u64>() {
                Ok(n) => self.int_lit(n, span),
                Err(_) => return,
            },
            // A constant's path as it is; any other constant expression
            // (`2 * D`) in parentheses, since it is emitted as one operand.
            Expr::Path(path) => {
                let tokens = quote::ToTokens::to_token_stream(path);
                self.push(Inst::Const(Const::Path(tokens)), Ty::Int, span)
            }
            width => {
                let tokens = quote::quote!((#width));
                self.push(Inst::Const(Const::Path(tokens)), Ty::Int, span)
            }
        };
        self.bind_rows_with(name, buf, width);
    }

    /// Binds `name` to the rows of the flat buffer `buf`, each `width` (a
    /// value) long.
    pub(super) fn bind_rows_with(&mut self, name: &str, buf: Value, width: Value) {
        let span = self.builder.func().span(buf);
        let flat = self.whole(buf, span);
        self.bind_special(name, Special::Rows(Rows { flat, width }));
    }

    /// The halves of `split_at(mid)`.
    pub(super) fn split_view(&mut self, whole: View, mid: Value, span: Span) -> Item {
        // `mid > len` panics, as `split_at` does.
        if !matches!((self.int_const(mid), self.int_const(whole.len)), (Some(m), Some(n)) if m <= n)
        {
            let names = ["__ad_mid", "__ad_len"].map(|name| proc_macro2::Ident::new(name, span));
            let [mid_name, len_name] = &names;
            let tokens = quote::quote_spanned!(span=>
                ::ad_runtime::__private::check_split(#mid_name, #len_name);
            );
            let values = names.into_iter().zip([mid, whole.len]).collect();
            // Its values were lowered: nothing here can fail to lower.
            let _ = self.check_written(tokens, values, span);
        }
        let start = self.int_add(whole.start, mid, span);
        let len = self.int_op(BinOp::Sub, whole.len, mid, span);
        let left = View { len: mid, ..whole };
        let right = View {
            buf: whole.buf,
            start,
            len,
        };
        Item::Tuple(vec![Item::View(left), Item::View(right)])
    }

    /// A chain's consumer: `sum`, `product`, `count`, `fold`, `for_each`,
    /// `collect`. `None` if `call` is none of them on a chain.
    pub(super) fn consume(&mut self, call: &ExprMethodCall) -> Option<Result<Item, Poison>> {
        let name = call.method.to_string();
        // `opt.is_none_or(p)`, `opt.is_some_and(p)` (clippy's spellings):
        // `opt.map_or(true, p)`, `opt.map_or(false, p)`.
        if matches!(name.as_str(), "is_none_or" | "is_some_and")
            && call.args.len() == 1
            && matches!(&*call.receiver, Expr::MethodCall(_))
        {
            let (receiver, p) = (&call.receiver, &call.args[0]);
            let otherwise = name == "is_none_or";
            let map_or: ExprMethodCall =
                syn::parse_quote_spanned!(call.span()=> #receiver.map_or(#otherwise, #p));
            return self.consume(&map_or);
        }
        // `x.get(i).map_or(0.0, |v| v * 2.0)` (`first()`, `last()`): the
        // function of the element if there is one, else the default.
        if name == "map_or"
            && call.args.len() == 2
            && let Expr::MethodCall(inner) = &*call.receiver
        {
            // `opt.map_or(d, f)` is `f` of what `opt.unwrap_or(d)` takes out.
            let fallback = &call.args[0];
            let unwrap_or: ExprMethodCall =
                syn::parse_quote_spanned!(call.span()=> #inner.unwrap_or(#fallback));
            // `chain.position(p).map_or(d, |i| x[i])`.
            if is_position(inner) {
                let chain = self.chain_of(&inner.receiver)?;
                return Some(chain.and_then(|chain| {
                    let map = self.callable(&call.args[1])?;
                    self.position(&unwrap_or, inner, chain, Some(&map))
                }));
            }
            let (end, copied) = through_copied(inner);
            // `chain.find(p).map_or(d, |v| …)`.
            if is_find(end) {
                let chain = self.chain_of(&end.receiver)?;
                let span = call.span();
                return Some(chain.and_then(|chain| {
                    let map = self.callable(&call.args[1])?;
                    let found = self.find(end, chain)?;
                    let none = self.push(Inst::Unary(UnOp::Not, found.found), Ty::Bool, span);
                    let item = element_item(found.value, copied || found.by_value);
                    let value = self.unwrapped(&unwrap_or, none, span, |this| {
                        let mapped = this.apply(&map, vec![item], span)?;
                        this.scalar_item(mapped, span)
                    })?;
                    Ok(Item::Value(value))
                }));
            }
            let end_args = end.args.len();
            let which = end.method.to_string();
            if matches!(
                (which.as_str(), end_args),
                ("first" | "last", 0) | ("get", 1)
            ) && !is_iterator_expr(&end.receiver)
            {
                let view = self.view_or_buffer(&end.receiver)?;
                return Some(view.and_then(|view| {
                    let end_of = match which.as_str() {
                        "first" => End::First,
                        "last" => End::Last,
                        _ => End::At(self.scalar_expr(&end.args[0])?),
                    };
                    let map = self.callable(&call.args[1])?;
                    self.end_element(&unwrap_or, view, end_of, copied, Some(&map))
                }));
            }
        }
        // An `Option` taken out at once: `unwrap`, `expect`, `unwrap_or`.
        if let ("unwrap" | "expect" | "unwrap_or" | "unwrap_or_default", Expr::MethodCall(inner)) =
            (name.as_str(), &*call.receiver)
        {
            // `opt.map(f).unwrap()` (or `expect`): `f` of `opt.unwrap()`, as
            // in the argmin `….min_by(cmp).map(|(i, _)| i).unwrap()`.
            // `consume` gives `None` if `opt` is no `Option` it takes out.
            if inner.method == "map"
                && inner.args.len() == 1
                && matches!(name.as_str(), "unwrap" | "expect")
                && let Expr::MethodCall(option) = &*inner.receiver
            {
                let mut unwrapped = call.clone();
                *unwrapped.receiver = Expr::MethodCall(option.clone());
                let item = self.consume(&unwrapped)?;
                let span = call.span();
                return Some(item.and_then(|item| {
                    let callable = self.callable(&inner.args[0])?;
                    self.apply(&callable, vec![item], span)
                }));
            }
            // `max_by(cmp).copied()` (or `cloned()`) before it: the same.
            let inner = match &*inner.receiver {
                Expr::MethodCall(folding)
                    if matches!(inner.method.to_string().as_str(), "copied" | "cloned")
                        && inner.args.is_empty()
                        && matches!(
                            folding.method.to_string().as_str(),
                            "reduce" | "max_by" | "min_by"
                        ) =>
                {
                    folding
                }
                _ => inner,
            };
            // `chain.reduce(f)`, `max_by(cmp)`, `min_by(cmp)`, `position(p)`.
            let folded = matches!(
                inner.method.to_string().as_str(),
                "reduce" | "max_by" | "min_by" | "position" | "rposition"
            );
            if folded && inner.args.len() == 1 && is_iterator_expr(&inner.receiver) {
                let chain = self.chain_of(&inner.receiver)?;
                return Some(chain.and_then(|chain| {
                    if is_position(inner) {
                        self.position(call, inner, chain, None)
                    } else {
                        self.reduce(call, inner, chain)
                    }
                }));
            }
            let (end, copied) = through_copied(inner);
            // `chain.find(p).unwrap()`, `….find(p).copied().unwrap_or(0.0)`.
            if is_find(end) {
                let chain = self.chain_of(&end.receiver)?;
                let span = call.span();
                return Some(chain.and_then(|chain| {
                    let found = self.find(end, chain)?;
                    self.take_found(call, found, copied, span)
                }));
            }
            // `x.get(i).copied().unwrap_or(0.0)` of a buffer or a view.
            if end.method == "get" && end.args.len() == 1 && !is_iterator_expr(&end.receiver) {
                let view = self.view_or_buffer(&end.receiver)?;
                return Some(view.and_then(|view| {
                    let index = self.scalar_expr(&end.args[0])?;
                    self.end_element(call, view, End::At(index), copied, None)
                }));
            }
            // `chain.nth(k)` is `chain.skip(k).next()`.
            if end.method == "nth" && end.args.len() == 1 && is_iterator_expr(&end.receiver) {
                let (receiver, k) = (&end.receiver, &end.args[0]);
                let mut next: Expr =
                    syn::parse_quote_spanned!(end.span()=> #receiver.skip(#k).next());
                if copied {
                    next = syn::parse_quote_spanned!(end.span()=> #next.copied());
                }
                let mut rewritten = call.clone();
                *rewritten.receiver = next;
                return self.consume(&rewritten);
            }
            if !end.args.is_empty() {
                return None;
            }
            // `it.next()` of a cursor (`let mut it = x.iter();`).
            if end.method == "next"
                && let Some(cursor) = super::expr::local_name(&end.receiver)
                && let Some(Special::Cursor(view, key)) = self.special(&cursor)
            {
                return Some(self.cursor_next(call, view, &key, copied));
            }
            // `chain.last().unwrap()`: the item a `reduce` keeping the later
            // one ends with (`chain.next()`, the earlier one).
            // `next_back()`, what clippy suggests for `last()`, is the same.
            let last = end.method == "last" || end.method == "next_back";
            if (last || end.method == "next") && is_iterator_expr(&end.receiver) {
                let chain = self.chain_of(&end.receiver)?;
                // After a `filter`, the first item is known only when the
                // loop runs: the first (last) that passes, as `find` finds.
                // After `chain`, the items of several loops.
                if chain
                    .as_ref()
                    .is_ok_and(|chain| chain.filtered() || !chain.then.is_empty())
                {
                    let span = call.span();
                    return Some(chain.and_then(|chain| {
                        let found = self.first_passing(&end.method, chain, None, last)?;
                        self.take_found(call, found, copied, span)
                    }));
                }
                let receiver = &end.receiver;
                let pick: ExprMethodCall = if last {
                    syn::parse_quote_spanned!(end.span()=> #receiver.reduce(|_, item| item))
                } else {
                    syn::parse_quote_spanned!(end.span()=> #receiver.reduce(|item, _| item))
                };
                return Some(chain.and_then(|chain| self.reduce(call, &pick, chain)));
            }
            // `chain.max().unwrap()` of integers (floats have no `max()`):
            // the `reduce` it stands for.
            if (end.method == "max" || end.method == "min") && is_iterator_expr(&end.receiver) {
                let chain = self.chain_of(&end.receiver)?;
                let receiver = &end.receiver;
                let method = &end.method;
                let pick: ExprMethodCall = syn::parse_quote_spanned! {end.span()=>
                    #receiver.reduce(|a, b| a.#method(b))
                };
                return Some(chain.and_then(|chain| self.reduce(call, &pick, chain)));
            }
            // `x.first().unwrap()`, `x.last().copied().unwrap_or(0.0)`.
            let end_of = match end.method.to_string().as_str() {
                "first" => End::First,
                "last" => End::Last,
                _ => return None,
            };
            let view = self.view_or_buffer(&end.receiver)?;
            return Some(view.and_then(|view| self.end_element(call, view, end_of, copied, None)));
        }
        let arity = match name.as_str() {
            "sum" | "product" | "count" | "collect" => 0,
            "for_each" | "any" | "all" => 1,
            "fold" => 2,
            _ => return None,
        };
        // `it.sum()` of a cursor (`let mut it = x.iter();`) too.
        let cursor = self.names_cursor(&call.receiver)
            || super::expr::local_name(&call.receiver)
                .is_some_and(|name| matches!(self.special(&name), Some(Special::Chain(_))));
        if call.args.len() != arity || !(is_iterator_expr(&call.receiver) || cursor) {
            return None;
        }
        let chain = self.chain_of(&call.receiver)?;
        let span = call.span();
        Some((|| {
            let chain = chain?;
            let declared = call
                .turbofish
                .as_ref()
                .and_then(|turbofish| turbofish.args.first())
                .and_then(|arg| match arg {
                    syn::GenericArgument::Type(ty) => {
                        super::sig::scalar_type(ty, self.builder.func().float_param.as_ref())
                    }
                    _ => None,
                })
                .map(|scalar| scalar.ty());
            // `count()` of items nothing leaves out or computes (no
            // `filter`, no `map` whose closure could panic or assign): the
            // length the chain's ranges give.
            if name == "count" && !chain.filtered() && chain.parts().iter().all(|p| p.maps == 0) {
                return Ok(Item::Value(self.chain_count(&chain, span)));
            }
            match name.as_str() {
                "sum" | "product" | "count" => {
                    let ty = match name.as_str() {
                        "count" => Ty::Int,
                        _ => declared.unwrap_or(Ty::Unknown),
                    };
                    // The start is set once the items' type is known.
                    let zero = self.push(Inst::Const(Const::Zero), ty.clone(), span);
                    let init = self.push(Inst::Const(Const::Zero), ty, span);
                    let key = self.hidden_name(&name);
                    self.bind(&key, Ok(init));
                    let op = if name == "product" {
                        BinOp::Mul
                    } else {
                        BinOp::Add
                    };
                    self.chain_loop(&chain, vec![key.clone()], span, &mut |this, item| {
                        let acc = this.lookup(&key).expect("bound")?;
                        let x = match name.as_str() {
                            "count" => this.int_lit(1, span),
                            _ => this.scalar_item(item, span)?,
                        };
                        let next = this.binary(op, acc, x, span);
                        this.set_hidden(&key, Ok(next));
                        Ok(())
                    })?;
                    // As `std` does: a float sum starts at `-0.0` (the sum of
                    // nothing, or of `-0.0`s, is `-0.0`), a product at one.
                    let result = self.lookup(&key).expect("bound")?;
                    let ty = self.ty(result);
                    for value in [zero, init] {
                        self.builder.func_mut().insts[value.index()].ty = ty.clone();
                    }
                    let float = ty.is_float() || ty == Ty::Unknown;
                    let start = match (name.as_str(), float) {
                        ("sum", true) => Inst::Unary(UnOp::Neg, zero),
                        ("product", true) => {
                            Inst::Const(Const::one(&ty, self.builder.func().float_param.as_ref()))
                        }
                        ("product", false) => Inst::Const(Const::Lit(Literal::u64_unsuffixed(1))),
                        _ => Inst::Const(Const::Zero),
                    };
                    self.builder.func_mut().insts[init.index()].inst = start;
                    Ok(Item::Value(result))
                }
                "fold" => {
                    let init = self.item_expr(&call.args[0])?;
                    if !same_shape(&init, &init) {
                        self.cx.error_spanned_by(&call.args[0], msg::FOLD_SHAPE);
                        return Err(Poison);
                    }
                    let f = self.callable(&call.args[1])?;
                    let n_pending = self.pending_mutations.len();
                    self.pending_mutations.extend(f.mutates().iter().cloned());
                    let keys = self.hidden_keys(&init, "acc");
                    let template = init;
                    let looped = self.chain_loop(&chain, keys.clone(), span, &mut |this, item| {
                        let mut accs = Vec::new();
                        for key in &keys {
                            accs.push(Item::Value(this.lookup(key).expect("bound")?));
                        }
                        let acc = rebuild(&template, &mut accs.into_iter());
                        let next = this.apply(&f, vec![acc, item], span)?;
                        let mut nexts = Vec::new();
                        if !same_shape(&template, &next) {
                            this.cx.error_spanned_by(&call.args[1], msg::FOLD_SHAPE);
                            return Err(Poison);
                        }
                        flatten(&next, &mut nexts);
                        for (key, next) in keys.iter().zip(nexts) {
                            this.set_hidden(key, Ok(next));
                        }
                        Ok(())
                    });
                    self.pending_mutations.truncate(n_pending);
                    looped?;
                    let mut results = Vec::new();
                    for key in &keys {
                        results.push(Item::Value(self.lookup(key).expect("bound")?));
                    }
                    Ok(rebuild(&template, &mut results.into_iter()))
                }
                // `any(p)`, `all(p)`: a flag carried through the loop over
                // every item (`found || p(x)`). `std` stops at the first item
                // that decides, with the same value; only a test that panics
                // on a later item could tell (docs/supported.md).
                "any" | "all" => {
                    let f = self.callable(&call.args[0])?;
                    let any = name == "any";
                    let init = self.push(Inst::Const(Const::Bool(!any)), Ty::Bool, span);
                    let key = self.hidden_name(&name);
                    self.bind(&key, Ok(init));
                    self.chain_loop(&chain, vec![key.clone()], span, &mut |this, item| {
                        let flag = this.lookup(&key).expect("bound")?;
                        let test = this.test(&f, item, &call.args[0], span)?;
                        let op = if any { BinOp::Or } else { BinOp::And };
                        let next = this.push(Inst::Binary(op, flag, test), Ty::Bool, span);
                        this.set_hidden(&key, Ok(next));
                        Ok(())
                    })?;
                    Ok(Item::Value(self.lookup(&key).expect("bound")?))
                }
                "for_each" => {
                    let f = self.callable(&call.args[0])?;
                    let n_pending = self.pending_mutations.len();
                    self.pending_mutations.extend(f.mutates().iter().cloned());
                    let looped = self.chain_loop(&chain, Vec::new(), span, &mut |this, item| {
                        this.apply(&f, vec![item], span).map(drop)
                    });
                    self.pending_mutations.truncate(n_pending);
                    looped?;
                    Ok(Item::Tuple(Vec::new()))
                }
                _ => {
                    // `collect()` into a `Vec`.
                    if self.builder.depth() > 0 {
                        // In a loop: a buffer of the chain's length made
                        // before it, its elements written here in order.
                        // After a `filter`, the chain's length is a bound,
                        // and the items kept are the first ones written.
                        let filtered = chain.filtered();
                        let count = self.chain_count(&chain, span);
                        let (buf, collected) = self.hoisted_prefix(call, Ty::Float, count, span)?;
                        let zero = self.int_lit(0, span);
                        let key = self.hidden_name("position");
                        self.bind(&key, Ok(zero));
                        self.chain_loop(&chain, vec![key.clone()], span, &mut |this, item| {
                            let x = this.collected_item(item, call, true)?;
                            let at = this.lookup(&key).expect("bound")?;
                            this.write_element((buf, at), None, x, span);
                            let one = this.int_lit(1, span);
                            let next = this.int_op(BinOp::Add, at, one, span);
                            this.set_hidden(&key, Ok(next));
                            Ok(())
                        })?;
                        if filtered {
                            let kept = self.lookup(&key).expect("bound")?;
                            return Ok(Item::Value(self.prefix(buf, kept, span)));
                        }
                        return Ok(Item::Value(collected));
                    }
                    let capacity = (!chain.filtered()).then(|| self.chain_count(&chain, span));
                    let buf = self.push(
                        Inst::NewBuf(NewBuf::Empty { capacity }),
                        Ty::Buf(Box::new(Ty::Float)),
                        span,
                    );
                    // `Vec<(f64, f64)>` of tuples of numbers, `Vec<[f64; 3]>`
                    // of arrays: rows stored flat, as a parameter `&[(f64,
                    // f64)]` (`&[[f64; 3]]`) is.
                    let mut width = None;
                    // `Vec<Vec<f64>>` of the rows a closure makes: stored
                    // flat too, counted, each row checked to be as long as
                    // the first (a matrix).
                    let row_key = chain.makes_buffers().then(|| {
                        let key = self.hidden_name("row");
                        let zero = self.int_lit(0, span);
                        self.bind(&key, Ok(zero));
                        key
                    });
                    let carried: Vec<String> = row_key.iter().cloned().collect();
                    self.chain_loop(&chain, carried, span, &mut |this, item| {
                        if let Some(key) = &row_key
                            && let Some(row) = this.row_of_item(&item, span)
                        {
                            return this.push_row(buf, row, key, span);
                        }
                        if let Some(elems) = tuple_row(&item)
                            && elems.iter().all(|&x| this.ty(x).is_float())
                        {
                            width = Some(elems.len());
                            for x in elems {
                                this.push_elem(buf, x, span);
                            }
                            return Ok(());
                        }
                        // `Vec<[f64; 3]>` of arrays: rows stored flat too.
                        if let Item::Value(array) = item
                            && matches!(this.ty(array), Ty::Buf(elem) if elem.is_float())
                            && let Some(len) = this
                                .array_len(array)
                                .and_then(|len| len.to_string().parse::<usize>().ok())
                        {
                            width = Some(len);
                            for k in 0..len {
                                let at = this.int_lit(k as u64, span);
                                let x = this.load(array, at, span);
                                this.push_elem(buf, x, span);
                            }
                            return Ok(());
                        }
                        let x = this.collected_item(item, call, false)?;
                        this.push_elem(buf, x, span);
                        Ok(())
                    })?;
                    if let Some(width) = width {
                        let width = self.int_lit(width as u64, span);
                        let flat = self.whole(buf, span);
                        return Ok(Item::Rows(Rows { flat, width }));
                    }
                    if let Some(key) = row_key {
                        // Checked non-empty and equal: the elements ÷ the
                        // rows (at least one, for a matrix with none).
                        let rows = self.lookup(&key).expect("bound")?;
                        let one = self.int_lit(1, span);
                        let rows = self.push(Inst::Prim(Prim::Max, vec![rows, one]), Ty::Int, span);
                        let flat = self.whole(buf, span);
                        let width = self.int_op(BinOp::Div, flat.len, rows, span);
                        return Ok(Item::Rows(Rows { flat, width }));
                    }
                    Ok(Item::Value(buf))
                }
            }
        })())
    }

    /// The row an item of a `Vec<Vec<f64>>` being collected is: a buffer
    /// of floats the closure made (or a range of one).
    fn row_of_item(&mut self, item: &Item, span: Span) -> Option<View> {
        match *item {
            Item::View(view) => Some(view),
            Item::Value(buf) if matches!(self.ty(buf), Ty::Buf(elem) if elem.is_float()) => {
                Some(self.whole(buf, span))
            }
            _ => None,
        }
    }

    /// Pushes the elements of `row` onto `buf`, the flat storage of a
    /// `Vec<Vec<f64>>` being collected, and counts it in the hidden `key`;
    /// asserts that every row has the first one's length and is not empty
    /// (rows stored flat have one width).
    fn push_row(&mut self, buf: Value, row: View, key: &str, span: Span) -> Result<(), Poison> {
        self.push_view(buf, row, span)?;
        let counted = self.lookup(key).expect("bound")?;
        let one = self.int_lit(1, span);
        let rows = self.int_op(BinOp::Add, counted, one, span);
        let expected = self.int_op(BinOp::Mul, rows, row.len, span);
        let stored = self.push(Inst::Len(buf), Ty::Int, span);
        let (stored_name, expected_name, len_name) = (
            proc_macro2::Ident::new("__ad_stored", span),
            proc_macro2::Ident::new("__ad_expected", span),
            proc_macro2::Ident::new("__ad_row_len", span),
        );
        let check = quote::quote_spanned!(span=>
            ::core::assert!(
                #len_name > 0 && #stored_name == #expected_name,
                "`#[differentiate]` stores a collected `Vec<Vec<_>>` as a matrix: its rows must have one length, not zero (`chunks_exact(k)` rather than `chunks(k)`; or iterate the rows where they are, `for row in x.chunks(k)`)",
            );
        );
        let values = vec![
            (stored_name, stored),
            (expected_name, expected),
            (len_name, row.len),
        ];
        self.effect_with(check, values, span)?;
        self.set_hidden(key, Ok(rows));
        Ok(())
    }

    /// An item `collect()` stores: a number, not a buffer (`Vec<Vec<f64>>`).
    /// `in_region`: the `collect()` is in a loop or a branch.
    fn collected_item(
        &mut self,
        item: Item,
        call: &ExprMethodCall,
        in_region: bool,
    ) -> super::Lowered {
        let span = call.span();
        // Rows (arrays, tuples, buffers) are collected only outside loops
        // and branches (where the buffer's length need not be known first).
        let row = tuple_row(&item).is_some()
            || matches!(item, Item::Value(buf) if matches!(self.ty(buf), Ty::Buf(_)))
            || matches!(item, Item::View(_));
        if row && in_region {
            self.cx
                .error_spanned_by(&call.method, msg::ROWS_COLLECTED_IN_REGION);
            return Err(Poison);
        }
        let x = match item {
            Item::View(_) | Item::Rows(_) => None,
            item => Some(self.scalar_item(item, span)?),
        };
        match x {
            Some(x) if !matches!(self.ty(x), Ty::Buf(_)) => Ok(x),
            _ => {
                self.cx.error_spanned_by(&call.method, msg::COLLECT_BUFFERS);
                Err(Poison)
            }
        }
    }

    /// `let mut v = Vec::new();` in a loop or a branch, filled by the `for`
    /// after it with one `push` per iteration (`filler`): a buffer of that
    /// loop's trip count made before the outermost region, as `vec![…; n]`
    /// in a loop is, its elements written in order where the pushes are.
    /// The position of the next push is a hidden local the loops of the
    /// block carry.
    pub(super) fn counted_buffer(
        &mut self,
        init: &Expr,
        filler: &syn::ExprForLoop,
    ) -> super::Lowered {
        let span = init.span();
        let chain = match self.chain_of(&filler.expr) {
            Some(chain) => chain?,
            None => return self.unsupported(init, msg::BUFFER_IN_REGION),
        };
        if chain.filtered() {
            return self.unsupported(init, msg::BUFFER_IN_REGION);
        }
        let count = self.chain_count(&chain, span);
        // Of a count known only in the loop (`x.iter().take(k)`), a buffer
        // as long as a bound of it, and its first `count` elements.
        let (_, buf) = self.hoisted_prefix(init, Ty::Float, count, span)?;
        let key = self.block_counter("position", span);
        self.positional.insert(buf, key);
        Ok(buf)
    }

    /// `chain.reduce(f)`, `max_by(cmp)`, `min_by(cmp)`, then `.unwrap()`,
    /// `.expect(msg)` or `.unwrap_or(v)`: the first item, folded with the
    /// rest. When the chain is empty, `unwrap` and `expect` panic as they
    /// do on `None`, and `unwrap_or` gives `v`.
    fn reduce(
        &mut self,
        call: &ExprMethodCall,
        inner: &ExprMethodCall,
        mut chain: Chain,
    ) -> Result<Item, Poison> {
        let span = inner.span();
        if !chain.then.is_empty() {
            return self.reduce_parts(call, inner, &chain);
        }
        // After a `filter` the first item is the first that passes: the
        // loop carries whether one did, as over parts.
        if !chain.filters.is_empty() {
            if matches!(chain.shape, Shape::Tuple(_)) {
                self.cx
                    .error_spanned_by(&inner.method, msg::REDUCE_AFTER_FILTER);
                return Err(Poison);
            }
            return self.reduce_parts(call, inner, &chain);
        }
        let method = inner.method.to_string();
        // Tuples of items (`enumerate()`, `zip`), compared as written: an
        // argmax with its index.
        if matches!(chain.shape, Shape::Tuple(_)) && method != "reduce" {
            return self.reduce_tuples(call, inner, chain);
        }
        let f = match method.as_str() {
            "reduce" => Some(self.callable(&inner.args[0])?),
            _ => None,
        };
        self.equalize(&mut chain, span);
        // Whether the items are references (`iter()`) or values (after
        // `copied()`, or what a `map` makes), as `cmp` takes them.
        let by_ref = std::cell::Cell::new(!chain.by_value);
        let count = self.chain_count(&chain, span);
        let zero = self.int_lit(0, span);
        let empty = self.binary(BinOp::Eq, count, zero, span);
        let fold = |this: &mut Self| -> super::Lowered {
            // The first item starts the accumulator; the rest are folded in.
            let indices = this.leaf_indices(&chain, false, zero, span);
            let mut first = None;
            this.with_item(&chain, &indices, span, &mut |this, item| {
                by_ref.set(matches!(item, Item::Ref(_)));
                first = Some(this.scalar_item(item, span)?);
                Ok(())
            })?;
            let first = first.expect("no filters");
            let mut rest = chain.clone();
            let one = this.int_lit(1, span);
            for (_, seq) in &mut rest.leaves {
                *seq = this.seq_skip(*seq, one, span);
            }
            let key = this.hidden_name(match method.as_str() {
                "reduce" => "acc",
                "max_by" => "max",
                _ => "min",
            });
            this.bind(&key, Ok(first));
            this.chain_loop(&rest, vec![key.clone()], span, &mut |this, item| {
                let acc = this.lookup(&key).expect("bound")?;
                let next = match &f {
                    Some(f) => {
                        let next = this.apply(f, vec![Item::Value(acc), item], span)?;
                        this.scalar_item(next, span)?
                    }
                    None => {
                        let x = this.scalar_item(item, span)?;
                        this.pick(&method, &inner.args[0], acc, x, by_ref.get(), span)?
                    }
                };
                this.set_hidden(&key, Ok(next));
                Ok(())
            })?;
            this.lookup(&key).expect("bound")
        };
        let value = self.unwrapped(call, empty, span, fold)?;
        // `x.iter().max_by(…).unwrap()` is an `&f64`, as in the function.
        Ok(element_item(value, !by_ref.get()))
    }

    /// `reduce(f)`, `max_by(cmp)` or `min_by(cmp)` of a chain of parts
    /// (`a.chain(b)`) or of a filtered chain, whose first item may be in
    /// any of them (be any item): a loop over each part carrying whether an
    /// item was seen and the accumulator,
    /// which the first item sets and each later one is folded into (`f`
    /// runs only then). Items that are numbers only.
    fn reduce_parts(
        &mut self,
        call: &ExprMethodCall,
        inner: &ExprMethodCall,
        chain: &Chain,
    ) -> Result<Item, Poison> {
        let span = inner.span();
        let method = inner.method.to_string();
        if chain
            .parts()
            .iter()
            .any(|part| matches!(part.shape, Shape::Tuple(_)))
        {
            self.cx
                .error_spanned_by(&inner.method, msg::after_chain(&method));
            return Err(Poison);
        }
        let f = match method.as_str() {
            "reduce" => Some(self.callable(&inner.args[0])?),
            _ => None,
        };
        let by_ref = std::cell::Cell::new(!chain.by_value);
        let seen = self.hidden_name("found");
        let key = self.hidden_name(match method.as_str() {
            "reduce" => "acc",
            "max_by" => "max",
            _ => "min",
        });
        let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
        let zero = self.push(Inst::Const(Const::Zero), Ty::Float, span);
        self.bind(&seen, Ok(no));
        self.bind(&key, Ok(zero));
        let keys = vec![seen.clone(), key.clone()];
        self.chain_loop(chain, keys, span, &mut |this, item| {
            let found = this.lookup(&seen).expect("bound")?;
            let acc = this.lookup(&key).expect("bound")?;
            by_ref.set(matches!(item, Item::Ref(_)));
            let x = this.scalar_item(item.clone(), span)?;
            let combined = |this: &mut Self| -> Result<Option<Value>, Poison> {
                let next = match &f {
                    Some(f) => {
                        let next = this.apply(f, vec![Item::Value(acc), item.clone()], span)?;
                        this.scalar_item(next, span)?
                    }
                    None => this.pick(&method, &inner.args[0], acc, x, by_ref.get(), span)?,
                };
                Ok(Some(next))
            };
            let next = this.branch(Ok(found), true, span, combined, |_| Ok(Some(x)))?;
            let yes = this.push(Inst::Const(Const::Bool(true)), Ty::Bool, span);
            this.set_hidden(&seen, Ok(yes));
            this.set_hidden(&key, Ok(next.expect("a value")));
            Ok(())
        })?;
        let found = self.lookup(&seen).expect("bound")?;
        let none = self.push(Inst::Unary(UnOp::Not, found), Ty::Bool, span);
        let acc = self.lookup(&key).expect("bound")?;
        let value = self.unwrapped(call, none, span, |_| Ok(acc))?;
        Ok(element_item(value, !by_ref.get()))
    }

    /// The first, last or `i`-th element of a view, out of its `Option`
    /// by `unwrap`, `expect` or `unwrap_or`, as [`Lower::reduce`] does;
    /// with `map`, the function of the element (`map_or`).
    fn end_element(
        &mut self,
        call: &ExprMethodCall,
        view: View,
        end: End,
        copied: bool,
        map: Option<&Rc<Callable>>,
    ) -> Result<Item, Poison> {
        let span = call.span();
        // Whether there is no such element: `len == 0`, or `i >= len`.
        let empty = match end {
            End::At(index) => self.binary(BinOp::Ge, index, view.len, span),
            End::First | End::Last => {
                let zero = self.int_lit(0, span);
                self.binary(BinOp::Eq, view.len, zero, span)
            }
        };
        let element = |this: &mut Self| {
            let index = match end {
                End::At(index) => this.int_add(view.start, index, span),
                End::First | End::Last => this.end_index(view, end == End::Last, span),
            };
            let element = this.load(view.buf, index, span);
            match map {
                Some(map) => {
                    let item = element_item(element, copied);
                    let mapped = this.apply(map, vec![item], span)?;
                    this.scalar_item(mapped, span)
                }
                None => Ok(element),
            }
        };
        if map.is_some() {
            return self.unwrapped(call, empty, span, element).map(Item::Value);
        }
        // `x.last().copied().unwrap_or_default()`: zero of the element type.
        if call.method == "unwrap_or_default" && call.args.is_empty() && copied {
            let elem = self.elem_ty(view.buf);
            let value = self
                .branch(
                    Ok(empty),
                    true,
                    span,
                    |this| Ok(Some(this.push(Inst::Const(Const::Zero), elem, span))),
                    |this| element(this).map(Some),
                )?
                .expect("both branches have a value");
            return Ok(element_item(value, copied));
        }
        let value = self.unwrapped(call, empty, span, element)?;
        Ok(element_item(value, copied))
    }

    /// The index of a view's first element, or of its last
    /// (`start + len - 1`).
    pub(super) fn end_index(&mut self, view: View, last: bool, span: Span) -> Value {
        if !last {
            return view.start;
        }
        let one = self.int_lit(1, span);
        let before = self.int_op(BinOp::Sub, view.len, one, span);
        self.int_add(view.start, before, span)
    }

    /// `chain.position(p)` taken out of its `Option`: a loop carrying
    /// whether an item passed `p` and the position of the first that did.
    /// Each item's test runs while none has passed (`found || p(x)`); `std`
    /// stops there, with the same value. `rposition(p)`: the position (from
    /// the front) of the last that did, every item tested (`std` tests from
    /// the back and stops at the first that passes: the same value). With
    /// `map`, the function of the position where there is one (`map_or`).
    fn position(
        &mut self,
        call: &ExprMethodCall,
        inner: &ExprMethodCall,
        chain: Chain,
        map: Option<&Rc<Callable>>,
    ) -> Result<Item, Poison> {
        let span = inner.span();
        let (seen, position) = self.positioned(inner, chain)?;
        let none = self.push(Inst::Unary(UnOp::Not, seen), Ty::Bool, span);
        let value = self.unwrapped(call, none, span, |this| match map {
            Some(map) => {
                let mapped = this.apply(map, vec![Item::Value(position)], span)?;
                this.scalar_item(mapped, span)
            }
            None => Ok(position),
        })?;
        Ok(Item::Value(value))
    }

    /// The loop of `chain.position(p)` (`rposition(p)`): whether an item
    /// passed, and the position of the first (last) that did, zero if none
    /// did. See [`Lower::position`].
    pub(super) fn positioned(
        &mut self,
        inner: &ExprMethodCall,
        chain: Chain,
    ) -> Result<(Value, Value), Poison> {
        let span = inner.span();
        let p = self.callable(&inner.args[0])?;
        let last = inner.method == "rposition";
        let found = self.hidden_name("found");
        let at = self.hidden_name("position");
        let counter = self.hidden_name("index");
        let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
        let zero = self.int_lit(0, span);
        self.bind(&found, Ok(no));
        self.bind(&at, Ok(zero));
        self.bind(&counter, Ok(zero));
        let keys = vec![found.clone(), at.clone(), counter.clone()];
        self.chain_loop(&chain, keys, span, &mut |this, item| {
            let seen = this.lookup(&found).expect("bound")?;
            let here = this.lookup(&counter).expect("bound")?;
            let test = this.test(&p, item, &inner.args[0], span)?;
            let hit = if last {
                test
            } else {
                let not_seen = this.push(Inst::Unary(UnOp::Not, seen), Ty::Bool, span);
                this.push(Inst::Binary(BinOp::And, not_seen, test), Ty::Bool, span)
            };
            let before = this.lookup(&at).expect("bound")?;
            let next_at = this.pick_if(hit, here, before, span)?;
            let next_seen = this.push(Inst::Binary(BinOp::Or, seen, test), Ty::Bool, span);
            let one = this.int_lit(1, span);
            let next_counter = this.int_op(BinOp::Add, here, one, span);
            this.set_hidden(&found, Ok(next_seen));
            this.set_hidden(&at, Ok(next_at));
            this.set_hidden(&counter, Ok(next_counter));
            Ok(())
        })?;
        let seen = self.lookup(&found).expect("bound")?;
        let position = self.lookup(&at).expect("bound")?;
        Ok((seen, position))
    }

    /// `if cond { a } else { b }` of two values already made.
    fn pick_if(&mut self, cond: Value, a: Value, b: Value, span: Span) -> super::Lowered {
        let picked = self.branch(Ok(cond), true, span, |_| Ok(Some(a)), |_| Ok(Some(b)))?;
        Ok(picked.expect("a value"))
    }

    /// `chain.find(p)`: the first item that passes `p`; `rfind`, the last
    /// (see [`Lower::first_passing`]).
    pub(super) fn find(&mut self, find: &ExprMethodCall, chain: Chain) -> Result<Found, Poison> {
        let p = self.callable(&find.args[0])?;
        let last = find.method == "rfind";
        self.first_passing(&find.method, chain, Some((&p, &find.args[0])), last)
    }

    /// One loop over the chain, carrying whether an item passed `test`
    /// (every item does without one: the chain's own filters chose them)
    /// and the first that did, or the `last`. Every item is visited; after
    /// the first, the others change nothing. Items that are numbers only:
    /// a tuple item (`enumerate().find(…)`) is an error at `method` saying
    /// to use `position`.
    pub(super) fn first_passing(
        &mut self,
        method: &syn::Ident,
        chain: Chain,
        test: Option<(&Rc<Callable>, &Expr)>,
        last: bool,
    ) -> Result<Found, Poison> {
        let span = method.span();
        if matches!(chain.shape, Shape::Tuple(_)) {
            self.cx.error_spanned_by(method, msg::FIND_TUPLE);
            return Err(Poison);
        }
        let found = self.hidden_name("found");
        let first = self.hidden_name(if last { "last" } else { "first" });
        let no = self.push(Inst::Const(Const::Bool(false)), Ty::Bool, span);
        let zero = self.push(Inst::Const(Const::Zero), Ty::Float, span);
        self.bind(&found, Ok(no));
        self.bind(&first, Ok(zero));
        let keys = vec![found.clone(), first.clone()];
        self.chain_loop(&chain, keys, span, &mut |this, item| {
            let seen = this.lookup(&found).expect("bound")?;
            let value = this.scalar_item(item.clone(), span)?;
            let passes = match test {
                Some((p, written)) => Some(this.test(p, item, written, span)?),
                None => None,
            };
            // Whether this item is taken (`None`: every item is, the last
            // of a chain without a test).
            let hit = match (passes, last) {
                (passes, true) => passes,
                (passes, false) => {
                    let not_seen = this.push(Inst::Unary(UnOp::Not, seen), Ty::Bool, span);
                    Some(match passes {
                        Some(passes) => {
                            this.push(Inst::Binary(BinOp::And, not_seen, passes), Ty::Bool, span)
                        }
                        None => not_seen,
                    })
                }
            };
            let next = match hit {
                Some(hit) => {
                    let before = this.lookup(&first).expect("bound")?;
                    this.pick_if(hit, value, before, span)?
                }
                None => value,
            };
            let next_seen = match passes {
                Some(passes) => this.push(Inst::Binary(BinOp::Or, seen, passes), Ty::Bool, span),
                None => this.push(Inst::Const(Const::Bool(true)), Ty::Bool, span),
            };
            this.set_hidden(&found, Ok(next_seen));
            this.set_hidden(&first, Ok(next));
            Ok(())
        })?;
        Ok(Found {
            found: self.lookup(&found).expect("bound")?,
            value: self.lookup(&first).expect("bound")?,
            by_value: chain.by_value,
        })
    }

    /// The item [`Lower::first_passing`] found, taken out of its `Option`
    /// by `unwrap`, `expect` or `unwrap_or` (`call`).
    fn take_found(
        &mut self,
        call: &ExprMethodCall,
        found: Found,
        copied: bool,
        span: Span,
    ) -> Result<Item, Poison> {
        let none = self.push(Inst::Unary(UnOp::Not, found.found), Ty::Bool, span);
        let value = self.unwrapped(call, none, span, |_| Ok(found.value))?;
        Ok(element_item(value, copied || found.by_value))
    }

    /// `max_by(cmp)` or `min_by(cmp)` of a chain of tuples
    /// (`x.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap()`),
    /// then `unwrap` or `expect`: the first tuple, then each later one taken
    /// when the user's `cmp` says so, component by component.
    fn reduce_tuples(
        &mut self,
        call: &ExprMethodCall,
        inner: &ExprMethodCall,
        mut chain: Chain,
    ) -> Result<Item, Poison> {
        let span = inner.span();
        if call.method == "unwrap_or" {
            self.cx.error_spanned_by(&call.method, msg::REDUCE_RESULT);
            return Err(Poison);
        }
        self.equalize(&mut chain, span);
        let count = self.chain_count(&chain, span);
        let zero = self.int_lit(0, span);
        let empty = self.binary(BinOp::Eq, count, zero, span);
        // The panic `unwrap` or `expect` makes on `None`, then the value.
        self.unwrapped(call, empty, span, |_| Ok(zero))?;
        let indices = self.leaf_indices(&chain, false, zero, span);
        let mut first = None;
        self.with_item(&chain, &indices, span, &mut |_, item| {
            first = Some(item);
            Ok(())
        })?;
        let template = first.expect("no filters");
        if !same_shape(&template, &template) {
            self.cx.error_spanned_by(&inner.method, msg::TUPLE_VALUE);
            return Err(Poison);
        }
        let keys = self.hidden_keys(&template, "best");
        let mut rest = chain.clone();
        let one = self.int_lit(1, span);
        for (_, seq) in &mut rest.leaves {
            *seq = self.seq_skip(*seq, one, span);
        }
        let method = inner.method.to_string();
        self.chain_loop(&rest, keys.clone(), span, &mut |this, item| {
            let mut accs = Vec::new();
            for key in &keys {
                accs.push(this.lookup(key).expect("bound")?);
            }
            let mut xs = Vec::new();
            flatten(&item, &mut xs);
            if xs.len() != accs.len() {
                this.cx.error_spanned_by(&inner.method, msg::TUPLE_VALUE);
                return Err(Poison);
            }
            // `cmp(&acc, &x)` on the tuples as the function has them.
            let acc_names: Vec<proc_macro2::Ident> = (0..accs.len())
                .map(|k| proc_macro2::Ident::new(&format!("__ad_acc{k}"), span))
                .collect();
            let x_names: Vec<proc_macro2::Ident> = (0..xs.len())
                .map(|k| proc_macro2::Ident::new(&format!("__ad_item{k}"), span))
                .collect();
            let acc_expr = shaped(&template, &mut acc_names.iter());
            let x_expr = shaped(&item, &mut x_names.iter());
            let cmp = &inner.args[0];
            let order = quote::quote_spanned!(span=>
                ::ad_runtime::__private::compare(&#acc_expr, &#x_expr, #cmp).is_gt());
            let test = if method == "max_by" {
                quote::quote_spanned!(span=> !#order)
            } else {
                order
            };
            let user = quote::ToTokens::to_token_stream(cmp);
            let bindings = acc_names
                .into_iter()
                .zip(accs.iter().copied())
                .chain(x_names.into_iter().zip(xs.iter().copied()))
                .collect();
            let take_x = this.opaque_bool(test, user, bindings, span)?;
            for ((key, &acc), &x) in keys.iter().zip(&accs).zip(&xs) {
                let picked = this
                    .branch(Ok(take_x), true, span, |_| Ok(Some(x)), |_| Ok(Some(acc)))?
                    .expect("both branches have a value");
                this.set_hidden(key, Ok(picked));
            }
            Ok(())
        })?;
        let mut results = Vec::new();
        for key in &keys {
            results.push(self.lookup(key).expect("bound")?);
        }
        Ok(relabel(&template, &mut results.into_iter()))
    }

    /// The `bool` the test `f` (written as `written`) gives an item, for
    /// `any`, `all` and `position`.
    fn test(
        &mut self,
        f: &Callable,
        item: Item,
        written: &Expr,
        span: Span,
    ) -> Result<Value, Poison> {
        match self.apply(f, vec![item], span)? {
            Item::Value(test) => Ok(test),
            _ => {
                self.cx.error_spanned_by(written, msg::PREDICATE_VALUE);
                Err(Poison)
            }
        }
    }

    /// The view a cursor stands for, if `init` makes one: `x.iter()` or
    /// `x.into_iter()` of a buffer or a sub-slice.
    pub(super) fn cursor_over(&mut self, init: &Expr) -> Option<Result<View, Poison>> {
        let Expr::MethodCall(call) = init else {
            return None;
        };
        if !matches!(call.method.to_string().as_str(), "iter" | "into_iter")
            || !call.args.is_empty()
        {
            return None;
        }
        self.view_or_buffer(&call.receiver)
    }

    /// A hidden counter from 0 that the loops of the current block carry:
    /// the items a cursor has given (a loop may call `it.next()`), the next
    /// position of a buffer filled by pushes.
    pub(super) fn block_counter(&mut self, shown: &str, span: Span) -> String {
        let key = self.hidden_name(shown);
        let zero = self.int_lit(0, span);
        self.bind(&key, Ok(zero));
        self.pending_mutations.push(key.clone());
        key
    }

    /// Whether `expr` names a cursor (`let mut it = x.iter();`).
    fn names_cursor(&self, expr: &Expr) -> bool {
        super::expr::local_name(expr)
            .is_some_and(|name| matches!(self.special(&name), Some(Special::Cursor(..))))
    }

    /// What is left of a cursor: its view after the items taken. Read only
    /// where the cursor is moved (`for v in it`, `it.sum()`), so that no
    /// later `it.next()` needs to know how far that went.
    fn cursor_rest(&mut self, view: View, key: &str, span: Span) -> Result<View, Poison> {
        let taken = self.lookup(key).expect("bound")?;
        // `min`: `it.next()` past the end panicked already (`unwrap`).
        let taken = self.int_min(taken, view.len, span);
        Ok(View {
            buf: view.buf,
            start: self.int_add(view.start, taken, span),
            len: self.int_op(BinOp::Sub, view.len, taken, span),
        })
    }

    /// `it.next().unwrap()` (or `expect`, `unwrap_or`): the next item, after
    /// the test `unwrap` makes, and one more item taken.
    fn cursor_next(
        &mut self,
        call: &ExprMethodCall,
        view: View,
        key: &str,
        copied: bool,
    ) -> Result<Item, Poison> {
        let span = call.span();
        let taken = self.lookup(key).expect("bound")?;
        let empty = self.binary(BinOp::Ge, taken, view.len, span);
        let value = self.unwrapped(call, empty, span, |this| {
            let at = this.int_add(view.start, taken, span);
            Ok(this.load(view.buf, at, span))
        })?;
        let one = self.int_lit(1, span);
        let next = self.int_op(BinOp::Add, taken, one, span);
        self.set_hidden(key, Ok(next));
        Ok(element_item(value, copied))
    }

    /// `option.unwrap()`, `.expect(msg)` or `.unwrap_or(fallback)` of an
    /// `Option` that is `None` when `empty`, `Some(value(…))` otherwise: the
    /// panic `Option` makes (same message), or the fallback, and the value.
    pub(super) fn unwrapped(
        &mut self,
        call: &ExprMethodCall,
        empty: Value,
        span: Span,
        value: impl FnOnce(&mut Self) -> super::Lowered,
    ) -> super::Lowered {
        match (call.method.to_string().as_str(), call.args.first()) {
            ("unwrap", None) => {
                let message = quote::quote_spanned!(call.method.span()=>
                    "called `Option::unwrap()` on a `None` value");
                self.panic_if(empty, message, span)?;
                value(self)
            }
            ("expect", Some(message)) => {
                let message = quote::quote_spanned!(call.method.span()=> "{}", #message);
                self.panic_if(empty, message, span)?;
                value(self)
            }
            // `unwrap_or(&0.0)` before `copied()`, `unwrap_or(0.0)` after:
            // the fallback's value either way.
            ("unwrap_or", Some(fallback)) => Ok(self
                .branch(
                    Ok(empty),
                    true,
                    span,
                    |this| this.expr(unreferenced(fallback)).map(Some),
                    |this| value(this).map(Some),
                )?
                .expect("both branches have a value")),
            // `unwrap_or_default()`: a zero of the value's type (an
            // integer's of `idx.first()`) without a value.
            ("unwrap_or_default", None) => {
                let ty = std::cell::RefCell::new(Ty::Float);
                let present = self.not(empty, span);
                Ok(self
                    .branch(
                        Ok(present),
                        true,
                        span,
                        |this| {
                            let value = value(this)?;
                            *ty.borrow_mut() = this.ty(value);
                            Ok(Some(value))
                        },
                        |this| {
                            let zero = Inst::Const(Const::Zero);
                            Ok(Some(this.push(zero, ty.borrow().clone(), span)))
                        },
                    )?
                    .expect("both branches have a value"))
            }
            _ => {
                self.cx.error_spanned_by(&call.method, msg::REDUCE_RESULT);
                Err(Poison)
            }
        }
    }

    /// `if cond { panic!(message) }`.
    fn panic_if(
        &mut self,
        cond: Value,
        message: proc_macro2::TokenStream,
        span: Span,
    ) -> Result<(), Poison> {
        self.branch(
            Ok(cond),
            false,
            span,
            |this| this.panic_effect(message, span).map(|()| None),
            |_| Ok(None),
        )
        .map(drop)
    }

    /// One step of `max_by(cmp)` or `min_by(cmp)`, as `std` takes it: the
    /// user's `cmp(&acc, &x)` decides, run as written; `max_by` keeps the
    /// last of equal items, `min_by` the first.
    fn pick(
        &mut self,
        method: &str,
        cmp: &Expr,
        acc: Value,
        x: Value,
        by_ref: bool,
        span: Span,
    ) -> super::Lowered {
        let acc_name = proc_macro2::Ident::new("__ad_acc", span);
        let x_name = proc_macro2::Ident::new("__ad_item", span);
        // The items of `iter()` are references, and `cmp` takes references
        // to them (`|a: &&f64, b: &&f64|`), as in the function.
        let order = if by_ref {
            quote::quote_spanned!(span=>
                ::ad_runtime::__private::compare(&&#acc_name, &&#x_name, #cmp).is_gt())
        } else {
            quote::quote_spanned!(span=>
                ::ad_runtime::__private::compare(&#acc_name, &#x_name, #cmp).is_gt())
        };
        let test = if method == "max_by" {
            quote::quote_spanned!(span=> !#order)
        } else {
            order
        };
        let user = quote::ToTokens::to_token_stream(cmp);
        let take_x = self.opaque_bool(test, user, vec![(acc_name, acc), (x_name, x)], span)?;
        let picked = self.branch(Ok(take_x), true, span, |_| Ok(Some(x)), |_| Ok(Some(acc)))?;
        Ok(picked.expect("both branches have a value"))
    }

    /// One fresh hidden variable per value of `item` (a tuple's, flattened),
    /// bound to it.
    fn hidden_keys(&mut self, item: &Item, shown: &str) -> Vec<String> {
        let mut values = Vec::new();
        flatten(item, &mut values);
        values
            .into_iter()
            .map(|value| {
                let key = self.hidden_name(shown);
                self.bind(&key, Ok(value));
                key
            })
            .collect()
    }

    /// A fresh hidden variable (see [`Lower::name`] for how it is shown).
    pub(super) fn hidden_name(&mut self, shown: &str) -> String {
        let n = self.n_loops;
        self.n_loops += 1;
        format!("#{shown}{n}")
    }

    /// Whether `name` is one [`Lower::hidden_name`] made (no identifier
    /// starts with `#`).
    pub(super) fn is_hidden(name: &str) -> bool {
        name.starts_with('#')
    }

    /// One loop over a chain; `body` sees each item that passes the filters.
    /// `hidden` are the hidden variables the body assigns.
    fn chain_loop(
        &mut self,
        chain: &Chain,
        hidden: Vec<String>,
        span: Span,
        body: &mut dyn FnMut(&mut Self, Item) -> Result<(), Poison>,
    ) -> Result<(), Poison> {
        if !chain.then.is_empty() {
            // `a.chain(b)`: a loop over each part, each carrying `hidden`.
            for part in chain.parts() {
                self.chain_loop(&part, hidden.clone(), span, body)?;
            }
            return Ok(());
        }
        let (range, shared) = self.driver(chain, span);
        let n_pending = self.pending_mutations.len();
        let mutations = chain.mutations();
        self.pending_mutations.extend(mutations);
        let carried = self.carried_body(hidden.into_iter().collect(), span, |this, arg| {
            let indices = this.leaf_indices(chain, shared, arg, span);
            this.with_item(chain, &indices, span, body)?;
            Ok(None)
        });
        self.pending_mutations.truncate(n_pending);
        self.finish_for(range, carried, span)
    }

    /// The loop a chain runs: over the leaves' common sequence if they share
    /// one (`true`), else over positions `0..count`.
    pub(super) fn driver(&mut self, chain: &Chain, span: Span) -> (LoopRange, bool) {
        let first = chain.leaves[0].1;
        if chain.leaves.iter().all(|(_, seq)| *seq == first) {
            let range = LoopRange {
                start: first.start,
                end: first.end,
                inclusive: first.inclusive,
                step: first.step,
                reversed: first.reversed,
                checkpoint: None,
            };
            return (range, true);
        }
        let count = self.chain_count(chain, span);
        let start = self.int_lit(0, span);
        let range = LoopRange {
            start,
            end: count,
            inclusive: false,
            step: None,
            reversed: false,
            checkpoint: None,
        };
        (range, false)
    }

    /// Each leaf's index at the loop's index `arg`.
    pub(super) fn leaf_indices(
        &mut self,
        chain: &Chain,
        shared: bool,
        arg: Value,
        span: Span,
    ) -> Vec<Value> {
        if shared {
            return vec![arg; chain.leaves.len()];
        }
        let mut indices = Vec::new();
        for &(_, seq) in &chain.leaves {
            let step = |this: &mut Self, value: Value| match seq.step {
                Some(step) => this.int_op(BinOp::Mul, value, step, span),
                None => value,
            };
            let offset = step(self, arg);
            let index = if seq.reversed {
                // The chain is not empty here: its last index exists.
                let count = self.seq_count(seq, span);
                let one = self.int_lit(1, span);
                let before_last = self.int_op(BinOp::Sub, count, one, span);
                let from_start = step(self, before_last);
                let last = self.int_add(seq.start, from_start, span);
                self.int_op(BinOp::Sub, last, offset, span)
            } else {
                self.int_add(seq.start, offset, span)
            };
            indices.push(index);
        }
        indices
    }

    /// Runs `body` on the item at the leaves' indices, inside one branch per
    /// filter: a filter, and what comes after it, sees only the items that
    /// passed the filters before it.
    pub(super) fn with_item(
        &mut self,
        chain: &Chain,
        indices: &[Value],
        span: Span,
        body: &mut dyn FnMut(&mut Self, Item) -> Result<(), Poison>,
    ) -> Result<(), Poison> {
        let leaves: Vec<Item> = chain
            .leaves
            .iter()
            .zip(indices)
            .map(|(&(leaf, _), &index)| self.leaf_item(leaf, index, chain.by_value, span))
            .collect();
        self.filtered(chain, &chain.filters, &leaves, HashMap::new(), span, body)
    }

    fn filtered(
        &mut self,
        chain: &Chain,
        filters: &[(Rc<Callable>, Shape)],
        leaves: &[Item],
        mut mapped: HashMap<usize, Item>,
        span: Span,
        body: &mut dyn FnMut(&mut Self, Item) -> Result<(), Poison>,
    ) -> Result<(), Poison> {
        let Some(((predicate, shape), rest)) = filters.split_first() else {
            let item = self.shape_item(&chain.shape, leaves, &mut mapped, span)?;
            return body(self, item);
        };
        let item = self.shape_item(shape, leaves, &mut mapped, span)?;
        let keep = self.apply(predicate, vec![item], span)?;
        let keep = self.scalar_item(keep, span)?;
        self.builder.refine_ty(keep, &Ty::Bool);
        self.branch(
            Ok(keep),
            false,
            span,
            |this| {
                this.filtered(chain, rest, leaves, mapped, span, body)
                    .map(|()| None)
            },
            |_| Ok(None),
        )
        .map(drop)
    }

    /// The item a leaf gives at `index`; `by_value` after `copied()`.
    fn leaf_item(&mut self, leaf: Leaf, index: Value, by_value: bool, span: Span) -> Item {
        match leaf {
            Leaf::Index => Item::Value(index),
            Leaf::Elem {
                buf,
                mutable: false,
            } => {
                let value = self.load(buf, index, span);
                if by_value {
                    Item::Value(value)
                } else {
                    Item::Ref(value)
                }
            }
            Leaf::Elem { buf, mutable: true } => Item::Place { buf, index },
            Leaf::Window { buf, size, rows } => piece(
                View {
                    buf,
                    start: index,
                    len: size,
                },
                rows,
            ),
            Leaf::Chunk {
                buf,
                size,
                end,
                rows,
            } => {
                let len = match end {
                    Some(end) => {
                        let left = self.int_op(BinOp::Sub, end, index, span);
                        self.int_min(size, left, span)
                    }
                    None => size,
                };
                let view = View {
                    buf,
                    start: index,
                    len,
                };
                piece(view, rows)
            }
        }
    }

    fn shape_item(
        &mut self,
        shape: &Shape,
        leaves: &[Item],
        mapped: &mut HashMap<usize, Item>,
        span: Span,
    ) -> Result<Item, Poison> {
        match shape {
            Shape::Leaf(k) => Ok(leaves[*k].clone()),
            Shape::Tuple(shapes) => {
                let mut items = Vec::new();
                for shape in shapes {
                    items.push(self.shape_item(shape, leaves, mapped, span)?);
                }
                Ok(Item::Tuple(items))
            }
            Shape::Map(id, f, inner) => {
                if let Some(item) = mapped.get(id) {
                    return Ok(item.clone());
                }
                let input = self.shape_item(inner, leaves, mapped, span)?;
                let item = self.apply(f, vec![input], span)?;
                mapped.insert(*id, item.clone());
                Ok(item)
            }
        }
    }

    /// How many items a chain yields (before its filters).
    fn chain_count(&mut self, chain: &Chain, span: Span) -> Value {
        if !chain.then.is_empty() {
            let counts: Vec<Value> = chain
                .parts()
                .iter()
                .map(|part| self.chain_count(part, span))
                .collect();
            let mut total = counts[0];
            for &count in &counts[1..] {
                total = self.int_add(total, count, span);
            }
            return total;
        }
        let mut count: Option<Value> = None;
        let mut seen: Vec<Seq> = Vec::new();
        for &(_, seq) in &chain.leaves {
            if seen.contains(&seq) {
                continue;
            }
            seen.push(seq);
            let n = self.seq_count(seq, span);
            count = Some(match count {
                Some(count) if count == n => count,
                Some(count) => self.int_min(count, n, span),
                None => n,
            });
        }
        count.expect("a chain has a leaf")
    }

    /// Cuts every leaf to the chain's length, as `zip` does: then adapters
    /// that change sequences change them alike.
    fn equalize(&mut self, chain: &mut Chain, span: Span) {
        let first = chain.leaves[0].1;
        if chain.leaves.iter().all(|(_, seq)| *seq == first) {
            return;
        }
        let count = self.chain_count(chain, span);
        for k in 0..chain.leaves.len() {
            let seq = chain.leaves[k].1;
            if self.seq_count(seq, span) != count {
                chain.leaves[k].1 = self.seq_take(seq, count, span);
            }
        }
    }

    /// How many steps of `k` from `first` stay below `end`.
    pub(super) fn counted_trips(&mut self, first: Value, end: Value, k: u64, span: Span) -> Value {
        let k = (k > 1).then(|| self.int_lit(k, span));
        self.seq_count(Seq::forward(first, end, k), span)
    }

    fn exclusive(&mut self, mut seq: Seq, span: Span) -> Seq {
        if seq.inclusive {
            let one = self.int_lit(1, span);
            seq.end = self.int_add(seq.end, one, span);
            seq.inclusive = false;
        }
        seq
    }

    fn seq_count(&mut self, seq: Seq, span: Span) -> Value {
        let seq = self.exclusive(seq, span);
        let n = self.sat_sub(seq.end, seq.start, span);
        match seq.step {
            None => n,
            Some(step) => {
                let one = self.int_lit(1, span);
                let less = self.int_op(BinOp::Sub, step, one, span);
                let up = self.int_add(n, less, span);
                self.int_op(BinOp::Div, up, step, span)
            }
        }
    }

    fn times_step(&mut self, seq: Seq, n: Value, span: Span) -> Value {
        match seq.step {
            Some(step) => self.int_op(BinOp::Mul, n, step, span),
            None => n,
        }
    }

    fn seq_take(&mut self, seq: Seq, n: Value, span: Span) -> Seq {
        let seq = self.exclusive(seq, span);
        if seq.reversed {
            // The last `n` of the sequence, still walked backwards.
            let count = self.seq_count(seq, span);
            let dropped = self.sat_sub(count, n, span);
            let offset = self.times_step(seq, dropped, span);
            let start = self.int_add(seq.start, offset, span);
            Seq { start, ..seq }
        } else {
            let offset = self.times_step(seq, n, span);
            let bound = self.int_add(seq.start, offset, span);
            let end = self.int_min(seq.end, bound, span);
            Seq { end, ..seq }
        }
    }

    fn seq_skip(&mut self, seq: Seq, n: Value, span: Span) -> Seq {
        if seq.reversed {
            let seq = self.exclusive(seq, span);
            let count = self.seq_count(seq, span);
            let kept = self.sat_sub(count, n, span);
            let offset = self.times_step(seq, kept, span);
            let end = self.int_add(seq.start, offset, span);
            let end = self.int_min(seq.end, end, span);
            Seq { end, ..seq }
        } else {
            let offset = self.times_step(seq, n, span);
            let start = self.int_add(seq.start, offset, span);
            Seq { start, ..seq }
        }
    }

    fn seq_step(&mut self, seq: Seq, k: Value, span: Span) -> Seq {
        let step = self.times_step(seq, k, span);
        if seq.reversed {
            // Backwards from the last index: the sequence forwards starts
            // where the last index is reached in steps of `step`.
            let seq = self.exclusive(seq, span);
            let count = self.seq_count(seq, span);
            let one = self.int_lit(1, span);
            let before_last = self.sat_sub(count, one, span);
            let skipped = self.int_op(BinOp::Rem, before_last, k, span);
            let offset = self.times_step(seq, skipped, span);
            let start = self.int_add(seq.start, offset, span);
            Seq {
                start,
                step: Some(step),
                ..seq
            }
        } else {
            Seq {
                step: Some(step),
                ..seq
            }
        }
    }

    pub(super) fn int_lit(&mut self, n: u64, span: Span) -> Value {
        let constant = if n == 0 {
            Const::Zero
        } else {
            Const::Lit(Literal::u64_unsuffixed(n))
        };
        self.push(Inst::Const(constant), Ty::Int, span)
    }

    /// The value of an integer constant, if `value` is one.
    pub(super) fn int_const(&self, value: Value) -> Option<u64> {
        match self.builder.func().inst(value) {
            Inst::Const(Const::Zero) if matches!(self.ty(value), Ty::Int) => Some(0),
            _ => self
                .builder
                .func()
                .int_literal(value)
                .and_then(|n| u64::try_from(n).ok()),
        }
    }

    /// `a op b` on integers, folded when an operand makes it trivial.
    pub(super) fn int_op(&mut self, op: BinOp, a: Value, b: Value, span: Span) -> Value {
        self.int_use(a);
        self.int_use(b);
        let (ca, cb) = (self.int_const(a), self.int_const(b));
        match (op, ca, cb) {
            (BinOp::Add, Some(0), _) | (BinOp::Mul, Some(1), _) => return b,
            (BinOp::Add | BinOp::Sub, _, Some(0)) | (BinOp::Mul | BinOp::Div, _, Some(1)) => {
                return a;
            }
            (BinOp::Mul, Some(0), _) | (BinOp::Mul, _, Some(0)) => return self.int_lit(0, span),
            (BinOp::Rem, _, Some(1)) => return self.int_lit(0, span),
            (_, Some(x), Some(y)) => {
                let folded = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => x.checked_div(y),
                    BinOp::Rem => x.checked_rem(y),
                    _ => None,
                };
                if let Some(folded) = folded {
                    return self.int_lit(folded, span);
                }
            }
            _ => {}
        }
        if op == BinOp::Sub && a == b {
            return self.int_lit(0, span);
        }
        self.binary(op, a, b, span)
    }

    pub(super) fn int_add(&mut self, a: Value, b: Value, span: Span) -> Value {
        self.int_op(BinOp::Add, a, b, span)
    }

    fn int_min(&mut self, a: Value, b: Value, span: Span) -> Value {
        if a == b {
            return a;
        }
        self.push(Inst::Prim(Prim::Min, vec![a, b]), Ty::Int, span)
    }

    /// `a.saturating_sub(b)`, as `max(a, b) - b`.
    pub(super) fn sat_sub(&mut self, a: Value, b: Value, span: Span) -> Value {
        if self.int_const(b) == Some(0) {
            return a;
        }
        // Of two literals, the literal (`(1..4)` has 3 items, not
        // `4.max(1) - 1`, which clippy flags in the expansion).
        if let (Some(a), Some(b)) = (self.int_const(a), self.int_const(b)) {
            return self.int_lit(a.saturating_sub(b), span);
        }
        if a == b {
            return self.int_lit(0, span);
        }
        let larger = self.push(Inst::Prim(Prim::Max, vec![a, b]), Ty::Int, span);
        self.int_op(BinOp::Sub, larger, b, span)
    }
}

/// A window or a chunk: a sub-slice, or rows of `width` elements.
fn piece(view: View, rows: Option<Value>) -> Item {
    match rows {
        Some(width) => Item::Rows(Rows { flat: view, width }),
        None => Item::View(view),
    }
}

/// `e` without parentheses.
fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(paren) => strip(&paren.expr),
        Expr::Group(group) => strip(&group.expr),
        other => other,
    }
}

/// Replaces `*s`, the state of a `scan` closure, with the hidden local
/// holding it; notes any other use of `s`.
struct ScanState {
    state: String,
    hidden: syn::Ident,
    stray: Option<Span>,
}

impl syn::visit_mut::VisitMut for ScanState {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Unary(unary) = expr
            && matches!(unary.op, syn::UnOp::Deref(_))
            && super::expr::local_name(&unary.expr).as_deref() == Some(self.state.as_str())
        {
            let hidden = &self.hidden;
            *expr = syn::parse_quote_spanned!(unary.span()=> #hidden);
            return;
        }
        if super::expr::local_name(expr).as_deref() == Some(self.state.as_str()) {
            self.stray.get_or_insert(expr.span());
            return;
        }
        // A `return` or `None` could end the iteration early.
        if matches!(expr, Expr::Return(_) | Expr::Closure(_)) {
            self.stray.get_or_insert(expr.span());
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// The value a `scan` closure's body yields, `e` of its final `Some(e)`;
/// `None` if it does not end so.
fn scan_value(body: Expr) -> Option<Expr> {
    match body {
        Expr::Call(call)
            if call.args.len() == 1
                && matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some")) =>
        {
            call.args.into_iter().next()
        }
        Expr::Block(mut block) if block.label.is_none() => {
            let Some(syn::Stmt::Expr(tail, None)) = block.block.stmts.pop() else {
                return None;
            };
            let value = scan_value(tail)?;
            block.block.stmts.push(syn::Stmt::Expr(value, None));
            Some(Expr::Block(block))
        }
        Expr::Paren(paren) => scan_value(*paren.expr),
        _ => None,
    }
}

/// Whether an expression can be an iterator chain: a method call on a
/// range, or on something whose chain starts with `iter()` and friends.
pub(super) fn is_iterator_expr(expr: &Expr) -> bool {
    is_iterator(expr) || matches!(expr, Expr::MethodCall(call) if is_iterator_expr(&call.receiver))
}

/// Where the chain of adapters `expr` starts: the receiver of its first
/// adapter (or the source method, `x.iter()`, itself).
pub(super) fn chain_source(expr: &Expr) -> &Expr {
    match strip(expr) {
        Expr::MethodCall(call)
            if is_iterator(expr) && !SOURCES.contains(&call.method.to_string().as_str()) =>
        {
            chain_source(&call.receiver)
        }
        _ => expr,
    }
}

/// The methods of buffers that start a chain.
const SOURCES: [&str; 8] = [
    "iter",
    "iter_mut",
    "into_iter",
    "windows",
    "chunks",
    "chunks_exact",
    "chunks_mut",
    "chunks_exact_mut",
];

/// The adapters of chains.
const ADAPTERS: [&str; 13] = [
    "copied",
    "cloned",
    "by_ref",
    "map",
    "filter",
    "zip",
    "enumerate",
    "rev",
    "skip",
    "take",
    "step_by",
    "flatten",
    "chain",
];

/// Whether `expr` is an iterator itself, not yet consumed: a range, or a
/// source or adapter (`x.iter()`, `….map(f)`), where [`is_iterator_expr`]
/// also takes what a method of one gives (`x.iter().sum()`).
pub(super) fn is_iterator(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_iterator(&paren.expr),
        Expr::Range(_) => true,
        // `std::iter::once(v)`, `zip(a, b)`, `repeat_n(v, n)` (`repeat(v)`
        // is one only with the `take(n)` after it).
        Expr::Call(call) => iter_fn(call).is_some_and(|name| name != "repeat"),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            SOURCES.contains(&method.as_str()) || ADAPTERS.contains(&method.as_str())
        }
        _ => false,
    }
}

fn flatten(item: &Item, out: &mut Vec<Value>) {
    match item {
        Item::Value(value) | Item::Ref(value) => out.push(*value),
        Item::Tuple(items) => items.iter().for_each(|item| flatten(item, out)),
        // Only values and tuples of them are accumulated.
        Item::Place { .. } | Item::View(_) | Item::Rows(_) => {}
    }
}

fn rebuild(template: &Item, values: &mut impl Iterator<Item = Item>) -> Item {
    match template {
        Item::Tuple(items) => Item::Tuple(items.iter().map(|item| rebuild(item, values)).collect()),
        _ => values.next().expect("as many values as flattened"),
    }
}

fn same_shape(a: &Item, b: &Item) -> bool {
    match (a, b) {
        (Item::Tuple(a), Item::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_shape(a, b))
        }
        (Item::Value(_) | Item::Ref(_), Item::Value(_) | Item::Ref(_)) => true,
        _ => false,
    }
}

/// The tokens of an item of the shape of `template`, each value named by
/// the next of `names`: `(i, &v)` for an `enumerate()` item of `iter()`.
fn shaped(
    template: &Item,
    names: &mut std::slice::Iter<'_, proc_macro2::Ident>,
) -> proc_macro2::TokenStream {
    match template {
        Item::Tuple(items) => {
            let parts = items.iter().map(|item| shaped(item, names));
            quote::quote!((#(#parts),*))
        }
        Item::Ref(_) => {
            let name = names.next().expect("as many names as values");
            quote::quote!(&#name)
        }
        _ => {
            let name = names.next().expect("as many names as values");
            quote::quote!(#name)
        }
    }
}

/// `values` in the shape of `template`, references where it has them.
fn relabel(template: &Item, values: &mut impl Iterator<Item = Value>) -> Item {
    match template {
        Item::Tuple(items) => Item::Tuple(items.iter().map(|item| relabel(item, values)).collect()),
        Item::Ref(_) => Item::Ref(values.next().expect("as many values as flattened")),
        _ => Item::Value(values.next().expect("as many values as flattened")),
    }
}

/// `x.first().copied()` as `x.first()` and whether it is copied (also
/// `cloned()`).
pub(super) fn through_copied(call: &ExprMethodCall) -> (&ExprMethodCall, bool) {
    match (call.method.to_string().as_str(), &*call.receiver) {
        ("copied" | "cloned", Expr::MethodCall(end)) if call.args.is_empty() => (end, true),
        _ => (call, false),
    }
}

/// The values of a tuple item of 2 to 6 of them (what `collect` stores as
/// a row if they are floats), `None` for any other item.
fn tuple_row(item: &Item) -> Option<Vec<Value>> {
    let Item::Tuple(items) = item else {
        return None;
    };
    let values: Option<Vec<Value>> = items
        .iter()
        .map(|item| match item {
            Item::Value(value) | Item::Ref(value) => Some(*value),
            _ => None,
        })
        .collect();
    values.filter(|values| (2..=6).contains(&values.len()))
}

/// `chain.position(p)` or `chain.rposition(p)`, lowered by
/// [`Lower::position`].
pub(super) fn is_position(call: &ExprMethodCall) -> bool {
    matches!(call.method.to_string().as_str(), "position" | "rposition")
        && call.args.len() == 1
        && is_iterator_expr(&call.receiver)
}

/// `chain.find(p)` or `chain.rfind(p)`, lowered by [`Lower::find`].
pub(super) fn is_find(call: &ExprMethodCall) -> bool {
    matches!(call.method.to_string().as_str(), "find" | "rfind")
        && call.args.len() == 1
        && is_iterator_expr(&call.receiver)
}

/// What [`Lower::find`] gives: whether an item passed, and the first that
/// did (a zero if none did); `by_value` if the chain's items are values
/// (`copied()`), not references.
pub(super) struct Found {
    pub(super) found: Value,
    pub(super) value: Value,
    pub(super) by_value: bool,
}

/// An element as an item: a value once copied, otherwise the reference
/// Rust sees (`*x.first().unwrap()`).
pub(super) fn element_item(value: Value, copied: bool) -> Item {
    if copied {
        Item::Value(value)
    } else {
        Item::Ref(value)
    }
}

/// `zip(a, b)`, `iter::zip(a, b)`, `std::iter::zip(a, b)` (or `core::`).
/// The function of `std::iter` a call makes an iterator with: `zip(a,
/// b)`, `once(v)`, `repeat(v)` (taken by `take(n)`), `repeat_n(v, n)`,
/// written with their path or imported. `None` for any other call.
pub(super) fn iter_fn(call: &syn::ExprCall) -> Option<&'static str> {
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let names = super::expr::segments(&path.path);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let name = match names.as_slice() {
        [name] | ["iter", name] | ["std" | "core", "iter", name] => *name,
        _ => return None,
    };
    match (name, call.args.len()) {
        ("zip", 2) => Some("zip"),
        ("once", 1) => Some("once"),
        ("repeat", 1) => Some("repeat"),
        ("repeat_n", 2) => Some("repeat_n"),
        _ => None,
    }
}

/// Whether `call` is `zip(a, b)`, `once(v)`, … by a bare name, which may
/// be a function of the user's as well as the imported one of `std::iter`.
pub(super) fn bare_iter_fn(call: &syn::ExprCall) -> bool {
    matches!(&*call.func, Expr::Path(path) if path.path.get_ident().is_some())
        && iter_fn(call).is_some()
}

/// Whether `method` with `args` arguments can be a method of an iterator:
/// one of `Iterator`'s, `DoubleEndedIterator`'s or `ExactSizeIterator`'s
/// (`max` and `min` without arguments; with one they are `f64`'s).
pub(super) fn iterator_method(method: &str, args: usize) -> bool {
    const ITERATOR_METHODS: [&str; 76] = [
        "next",
        "size_hint",
        "count",
        "last",
        "advance_by",
        "nth",
        "step_by",
        "chain",
        "zip",
        "intersperse",
        "map",
        "for_each",
        "filter",
        "filter_map",
        "enumerate",
        "peekable",
        "skip_while",
        "take_while",
        "map_while",
        "skip",
        "take",
        "scan",
        "flat_map",
        "flatten",
        "map_windows",
        "fuse",
        "inspect",
        "by_ref",
        "collect",
        "collect_into",
        "partition",
        "try_fold",
        "try_for_each",
        "fold",
        "reduce",
        "try_reduce",
        "all",
        "any",
        "find",
        "find_map",
        "try_find",
        "position",
        "rposition",
        "max_by_key",
        "max_by",
        "min_by_key",
        "min_by",
        "rev",
        "unzip",
        "copied",
        "cloned",
        "cycle",
        "array_chunks",
        "sum",
        "product",
        "cmp",
        "cmp_by",
        "partial_cmp",
        "partial_cmp_by",
        "eq",
        "eq_by",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "is_sorted",
        "is_sorted_by",
        "is_sorted_by_key",
        "is_partitioned",
        "next_back",
        "rfind",
        "rfold",
        "nth_back",
        "len",
        "into_iter",
    ];
    ITERATOR_METHODS.contains(&method) || matches!((method, args), ("max" | "min", 0))
}

/// `e` of `&e` (not `&mut e`): a reference to a value where the value does.
pub(super) fn unreferenced(expr: &Expr) -> &Expr {
    match expr {
        Expr::Reference(reference) if reference.mutability.is_none() => &reference.expr,
        Expr::Paren(paren) => unreferenced(&paren.expr),
        _ => expr,
    }
}

/// Which element of a buffer `Option` methods take out: `first()`,
/// `last()`, `get(i)`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    First,
    Last,
    At(Value),
}
