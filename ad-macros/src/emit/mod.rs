//! Emission: IR → Rust tokens, built with `quote!` only.
//!
//! Takes a function's IR (any transformation's: `_vjp`, the split API) and
//! gives the tokens of its body; the signatures are the callers'. `names`
//! decides which values are bound and to what name, `expr` writes one value
//! as an expression, `stmts` lays out a block's statements, `loops` writes
//! loops, `hoist` slices buffers before loops, `header` writes `_vjp`'s
//! signature and `split` the split API.
//!
//! The output should read like a hand-written gradient:
//! - every value the user named keeps its name (`s`, then `s_1`, `s_2` for later
//!   SSA versions), the primal output is `out`, and the adjoint of `s` is `d_s`;
//! - an unnamed intermediate used once is written inline, with parentheses only
//!   where precedence needs them; one used more than once is bound to `t1`, `t2`, …;
//! - a runtime pullback with several results is destructured:
//!   `let (d_a, d_b) = __ad::atan2(a, b, out, d_out);`.
//!
//! Every identifier the expansion invents has a `Span::mixed_site()` span, so it
//! can never capture or shadow an identifier of the user's, and is located at the
//! user's code it comes from, so rustc's messages point there.

mod checkpoint;
mod expr;
mod header;
mod hoist;
mod loops;
mod names;
mod split;
mod stmts;

pub(crate) use header::{header, hvp_header, jvp_header, jvp_header_named, jvp_params};
#[cfg(test)]
pub(crate) use hoist::Plan;
pub(crate) use split::{
    Entry, adjoint_types, forward, forward_and_all, forward_header, pullback_params,
    pullback_trait, shared,
};

use std::collections::{HashMap, HashSet};

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::{Ident, ItemFn};

use crate::ir::{Function, Inst, Region, Ty, Value};
use crate::lower::Signature;
use expr::{Expr, Prec};
use header::allows;
use names::Form;
use stmts::{Binding, Pattern, Stmts};

/// The generated `_vjp` function.
pub(crate) fn vjp(item: &ItemFn, sig: &Signature, func: &Function) -> TokenStream {
    let mut emitter = Emitter::new(func);
    emitter.plan_checkpoints();
    emitter.recycles = true;
    let header = header(item, sig);
    let shadows: Vec<Option<String>> = sig
        .params
        .iter()
        .map(|param| param.shadow.as_ref().map(|shadow| shadow.name.clone()))
        .collect();
    let body = emitter.body_after(header::shadow_checks(sig, &shadows));
    let prologue = header::by_value_prologue(sig, true, &[], false);
    let epilogue = header::rows_epilogue(sig, true, true, &[], false);
    if sig.params.iter().all(|param| param.by_value.is_none()) {
        let body = around(prologue, body, epilogue);
        return quote! {
            #header {
                #body
            }
        };
    }
    // Arrays taken by value: the body reads them as buffers, adds into
    // local shadows, and their adjoints join the returned ones in the
    // parameters' order.
    let has_out = sig.seed_ty.is_some();
    let scalars = sig
        .params
        .iter()
        .filter(|param| param.adjoint_returned() && param.by_value.is_none())
        .count();
    let results: Vec<Ident> = (0..usize::from(has_out) + scalars)
        .map(|k| Ident::new(&format!("__ad_result{k}"), Span::mixed_site()))
        .collect();
    let mut taken = results.iter();
    let mut returned: Vec<TokenStream> = Vec::new();
    if has_out {
        returned.extend(taken.next().map(ToTokens::to_token_stream));
    }
    for param in sig.params.iter().filter(|param| param.adjoint_returned()) {
        match (&param.by_value, &param.shadow) {
            (Some(_), Some(_)) if param.rows.is_some() => {
                returned.push(header::by_value_adjoint(param).to_token_stream());
            }
            (Some(_), Some(shadow)) => {
                let shadow = ident(&shadow.name, param.span);
                returned.push(quote!(*#shadow));
            }
            _ => returned.extend(taken.next().map(ToTokens::to_token_stream)),
        }
    }
    let bind = match results.as_slice() {
        [] => quote!({ #body };),
        [single] => quote!(let #single = { #body };),
        results => quote!(let (#(#results),*) = { #body };),
    };
    let returned = match returned.as_slice() {
        [single] => single.clone(),
        returned => quote!((#(#returned),*)),
    };
    let body = around(prologue, quote!(#bind #returned), epilogue);
    quote! {
        #header {
            #body
        }
    }
}

/// `prologue; rest` as a function's body, with `epilogue` run after `rest`
/// and before its value is returned (rows copied back, see
/// [`header::rows_epilogue`]).
fn around(prologue: TokenStream, rest: TokenStream, epilogue: TokenStream) -> TokenStream {
    if epilogue.is_empty() {
        return quote!(#prologue #rest);
    }
    let value = Ident::new("__ad_value", Span::mixed_site());
    quote!(#prologue let #value = { #rest }; #epilogue #value)
}

/// The generated `_jvp` function (with `all`, its all-active twin
/// `_jvp_all`).
pub(crate) fn jvp(item: &ItemFn, sig: &Signature, func: &Function, all: bool) -> TokenStream {
    let header = jvp_header_named(item, sig, all, func.lanes.as_ref());
    // Arrays taken by value, and their tangents, are read as buffers.
    let tangents = crate::jvp::tangent_names(sig);
    let prologue = header::by_value_prologue(sig, false, &tangents, all);
    let epilogue = header::rows_epilogue(sig, true, false, &tangents, all);
    let body = Emitter::new(func).body_after(header::shadow_checks(sig, &tangents));
    let body = around(prologue, body, epilogue);
    quote! {
        #header {
            #body
        }
    }
}

/// The derivative function a `nested` twin is forward mode over.
#[derive(Clone, Copy)]
pub(crate) enum NestedOf {
    Vjp,
    Jvp,
    /// `f_hvp_all`: forward mode over `_vjp` with every float parameter
    /// active, what `_hvp` (and a `nested` twin) calls to apply the pullback
    /// of a call of `f`.
    HvpAll,
}

/// A `nested` twin, `f_vjp_jvp_all` or `f_jvp_jvp_all`: the `_jvp_all` of
/// `f_vjp` (or `f_jvp`), hidden, which the `_jvp` of a caller calls. It
/// takes the derivative's parameters in its signature's order, each holding
/// floats followed by the tangent `names` pairs with its name, and returns
/// the derivative's result followed by its tangent.
pub(crate) fn nested(
    item: &ItemFn,
    sig: &Signature,
    func: &Function,
    of: NestedOf,
    names: &[(String, Option<String>)],
) -> TokenStream {
    let (params, returns, suffix) = match of {
        NestedOf::Vjp => (header::vjp_params(sig), header::vjp_returns(sig), "_vjp"),
        NestedOf::HvpAll => (header::vjp_params(sig), header::vjp_returns(sig), "_hvp"),
        NestedOf::Jvp => {
            let output = &sig.output;
            let returns = sig.seed_ty.as_ref().map(|_| quote!((#output, #output)));
            (header::jvp_params(sig), returns, "_jvp")
        }
    };
    // The tangent of each parameter by its name: the IR lists shadows after
    // every parameter, `_vjp`'s signature each after its buffer.
    let tangent_of: HashMap<&str, &String> = names
        .iter()
        .filter_map(|(name, tangent)| Some((name.as_str(), tangent.as_ref()?)))
        .collect();
    let params = params.iter().map(|(name, ty)| {
        let unraw = syn::ext::IdentExt::unraw(name).to_string();
        let tangent = tangent_of.get(unraw.as_str()).map(|tangent| {
            let tangent = ident(tangent, name.span());
            let ty = header::as_slice(ty);
            quote!(#tangent: #ty,)
        });
        quote!(#name: #ty, #tangent)
    });
    let returns = returns.unwrap_or_else(|| quote!(()));
    let name = match of {
        NestedOf::HvpAll => format!("{}_hvp_all", syn::ext::IdentExt::unraw(&sig.ident)),
        _ => format!("{}{suffix}_jvp_all", syn::ext::IdentExt::unraw(&sig.ident)),
    };
    let name = Ident::new(&name, sig.ident.span());
    let generics = &item.sig.generics;
    let where_clause = &generics.where_clause;
    let vis = &item.vis;
    let kept = header::kept_attrs(item);
    let doc = match of {
        NestedOf::HvpAll => format!(
            " Forward mode over the pullback of [`{}`], generated by `#[differentiate(hvp)]`: what the `_hvp` of a caller calls to apply the pullback of a call of `{}`.",
            sig.ident, sig.ident
        ),
        _ => format!(
            " Forward mode over [`{}{suffix}`], generated by `#[differentiate(nested)]`: what a function differentiated in forward mode calls when it calls `{}{suffix}`.",
            sig.ident, sig.ident
        ),
    };
    let allows = header::allows();
    let header = quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #(#kept)*
        #allows
        #vis fn #name #generics (#(#params)*) -> (#returns, #returns) #where_clause
    };
    function(header, func)
}

/// The reverse-mode twins `nested` adds for a function of floats only,
/// with every parameter active: `f_vjp_forward_all` and, with `jvp_item`,
/// `f_jvp_forward_all`, the split API of `f_vjp` and `f_jvp` that the `_vjp`
/// of a caller calls. Their pullbacks are forward mode over `_vjp` (the
/// `nested_item`, `f_vjp_jvp_all`), which for a scalar function is reverse
/// mode over it: `F(x, s) = (f(x), s ∇f(x))` has the pullback
/// `(ō, ḡ) ↦ (ō ∇f + s H ḡ, ∇f · ḡ)`, which is the tangent of `F` along
/// `(ḡ, ō)`, its components swapped; `G(x, t) = (f(x), ∇f · t)` has
/// `(ō, τ̄) ↦ (ō ∇f + τ̄ H t, τ̄ ∇f)`, the tangent of `F` at `(x, τ̄)` along
/// `(t, ō)` and `F`'s own gradient. The forward parts call `f_vjp` and
/// `f_jvp` themselves (declared inside, as a path to them would differ
/// between a free function and an associated one), so a caller's outputs
/// have their bits.
pub(crate) fn reverse_twins(
    item: &ItemFn,
    sig: &Signature,
    vjp_item: &TokenStream,
    nested_item: &TokenStream,
    jvp_item: Option<&TokenStream>,
) -> TokenStream {
    // Each float's own type (a function may mix `f32` and `f64`); the seed
    // and the tangent of the output have the output's.
    let types: Vec<&syn::Type> = sig.params.iter().map(|param| &param.ty).collect();
    let output = &sig.output;
    let names: Vec<Ident> = sig
        .params
        .iter()
        .map(|param| ident(&param.name, param.span))
        .collect();
    let seed = ident(&sig.seed_name, sig.ident.span());
    let bar = |prefix: &str| -> Vec<Ident> {
        names
            .iter()
            .map(|name| Ident::new(&format!("__ad_{prefix}_{name}"), name.span()))
            .collect()
    };
    let (adjoints, grads, tangents) = (bar("bar"), bar("g"), bar("t"));
    let generics = &item.sig.generics;
    let kept: Vec<_> = header::kept_attrs(item).collect();
    let where_clause = &generics.where_clause;
    let float_param = &sig.float_param;
    let vis = &item.vis;
    let allows = header::allows();
    let unraw = syn::ext::IdentExt::unraw(&sig.ident);
    let vjp_name = Ident::new(&format!("{unraw}_vjp"), sig.ident.span());
    let nested_name = Ident::new(&format!("{unraw}_vjp_jvp_all"), sig.ident.span());
    let twin_name = Ident::new(&format!("{unraw}_vjp_forward_all"), sig.ident.span());
    // `f_vjp`'s result: the output, then each parameter's adjoint.
    let outputs = quote!((#output, #(#types),*));
    let doc = format!(
        " Reverse mode over [`{unraw}_vjp`], generated by `#[differentiate(nested)]`: what the `_vjp` of a function calling `{unraw}_vjp` calls."
    );
    let mut twins = quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #(#kept)*
        #allows
        #vis fn #twin_name #generics (#(#names: #types,)* #seed: #output)
            -> (#outputs, impl Fn(#outputs) -> (#(#types,)* #output) + use<#float_param>)
            #where_clause
        {
            #vjp_item
            #nested_item
            let out = #vjp_name(#(#names,)* #seed);
            (out, move |(__ad_o, #(#grads),*)| {
                let (_, (__ad_t_out, #(#adjoints),*)) =
                    #nested_name(#(#names, #grads,)* #seed, __ad_o);
                (#(#adjoints,)* __ad_t_out)
            })
        }
    };
    if let Some(jvp_item) = jvp_item {
        let jvp_name = Ident::new(&format!("{unraw}_jvp"), sig.ident.span());
        let twin_name = Ident::new(&format!("{unraw}_jvp_forward_all"), sig.ident.span());
        let params = types.iter().map(|ty| quote!(#ty, #ty));
        let doc = format!(
            " Reverse mode over [`{unraw}_jvp`], generated by `#[differentiate(nested)]`: what the `_vjp` of a function calling `{unraw}_jvp` calls."
        );
        let interleaved = adjoints
            .iter()
            .zip(&grads)
            .map(|(x_bar, t_bar)| quote!(#x_bar, #t_bar));
        twins.extend(quote! {
            #[doc = #doc]
            #[doc(hidden)]
            #(#kept)*
            #allows
            #vis fn #twin_name #generics (#(#names: #types, #tangents: #types),*)
                -> ((#output, #output), impl Fn((#output, #output)) -> (#(#params),*) + use<#float_param>)
                #where_clause
            {
                #jvp_item
                #nested_item
                let out = #jvp_name(#(#names, #tangents),*);
                (out, move |(__ad_o, __ad_tau)| {
                    let ((_, #(#grads),*), (_, #(#adjoints),*)) =
                        #nested_name(#(#names, #tangents,)* __ad_tau, __ad_o);
                    (#(#interleaved),*)
                })
            }
        });
    }
    twins
}

/// The generated `_hvp` function.
pub(crate) fn hvp(item: &ItemFn, sig: &Signature, func: &Function) -> TokenStream {
    function(hvp_header(item, sig), func)
}

/// A generated function: its header, and its IR as the body.
fn function(header: TokenStream, func: &Function) -> TokenStream {
    let body = Emitter::new(func).body();
    quote! {
        #header {
            #body
        }
    }
}

/// An identifier the expansion invents: hygienic, located at the user's code.
pub(crate) fn ident(name: &str, span: Span) -> Ident {
    let span = Span::mixed_site().located_at(span);
    match name {
        // Keywords that cannot be raw identifiers; rustc rejects the user's
        // `let self = …` already, so the name only has to be valid.
        "self" | "Self" | "super" | "crate" => Ident::new(&format!("{name}_"), span),
        name if KEYWORDS.contains(&name) => Ident::new_raw(name, span),
        name => Ident::new(name, span),
    }
}

/// The words an identifier must be written raw to use (`r#type`): syn's list
/// of keywords (what `syn::parse_str::<Ident>` rejects, which cost an eighth
/// of the expansion time of a long function), and `gen`, reserved in edition
/// 2024.
pub(crate) const KEYWORDS: [&str; 52] = [
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

struct Emitter<'a> {
    func: &'a Function,
    forms: Vec<Form>,
    /// How many times each value is used.
    uses: Vec<usize>,
    /// The `extract`s reading each value's components.
    extracts: Vec<Vec<(usize, Value)>>,
    used: HashSet<String>,
    /// The buffers some instruction writes into: `let mut`, and their
    /// elements are read where the IR reads them, never later.
    written: HashSet<Value>,
    /// Set when emitting the split API rather than `_vjp`.
    split: Option<split::Mode>,
    /// The next suffix to try for each base name (see [`Emitter::fresh`]).
    suffixes: HashMap<String, usize>,
    /// The next `t{index}` to try.
    next_temp: usize,
    /// Where each value is defined.
    places: Vec<crate::ir::Place>,
    /// Buffers sliced before loops (see [`hoist`]).
    hoist: hoist::Plan,
    /// Whether blocks declare their locals up front (see [`stmts`]).
    declare_first: bool,
    /// The name of each of those slices, by loop and position.
    slices: HashMap<(Value, usize), String>,
    /// The checkpointed loops, in `_vjp` only.
    checkpoints: checkpoint::Checkpoints,
    /// Whether the body ends by giving its local shadows' storage back to
    /// the thread's pool (`_vjp` only; see [`Emitter::recycled_shadows`]).
    recycles: bool,
}
impl<'a> Emitter<'a> {
    fn new(func: &'a Function) -> Self {
        let places = func.places();
        let hoist = hoist::Plan::new(func, &places);
        // Each value's uses as emitted (see `hoist::Plan::uses`).
        let uses = hoist.uses(func, &places);
        let mut emitter = Emitter {
            func,
            forms: vec![Form::Inline; func.insts.len()],
            uses: uses.iter().map(Vec::len).collect(),
            extracts: func.extracts(),
            used: HashSet::new(),
            written: func
                .insts
                .iter()
                .flat_map(|data| func.bases(data.inst.written()))
                .collect(),
            split: None,
            suffixes: HashMap::new(),
            next_temp: 1,
            places,
            hoist,
            slices: HashMap::new(),
            declare_first: false,
            checkpoints: checkpoint::Checkpoints::default(),
            recycles: false,
        };
        emitter.assign_forms(&uses);
        emitter.declare_first = emitter.used.len() > stmts::LONG;
        emitter
    }

    fn body(&self) -> TokenStream {
        self.body_after(TokenStream::new())
    }

    /// The body, with `first` (checks of the arguments, written with
    /// `__ad::`) right after the prologue.
    fn body_after(&self, first: TokenStream) -> TokenStream {
        let func = self.func;
        let mut stmts = self.prologue_using(!first.is_empty());
        stmts.extend(first);
        stmts.extend(self.stmts(&func.body).into_token_stream());
        if self.recycles {
            stmts.extend(self.recycled_shadows());
        }
        // A function returning `()` ends with its last statement.
        if !matches!(func.inst(func.ret), Inst::Tuple(elems) if elems.is_empty()) {
            stmts.extend(self.expr(func.ret).tokens);
        }
        stmts
    }

    /// `__ad::recycle!(d_v);` for each shadow the body makes at its top
    /// level and binds: its storage goes back to the thread's tape pool, where
    /// the next call's `__ad::zeros_like` takes it, rather than to the
    /// allocator, which would give it back to the kernel (docs/performance.md,
    /// "Local buffers"). The returned value is never a shadow.
    fn recycled_shadows(&self) -> TokenStream {
        let mut recycles = TokenStream::new();
        for &value in &self.func.body.insts {
            if let (Inst::Shadow { .. }, Form::Bound(name)) =
                (self.func.inst(value), &self.forms[value.index()])
            {
                let name = ident(name, self.func.span(value));
                recycles.extend(quote!(__ad::recycle!(#name);));
            }
        }
        recycles
    }

    /// `use … as __ad;` if the body needs the runtime's rules, and the checks
    /// that the runtime functions the user named are the runtime's.
    fn prologue(&self) -> TokenStream {
        self.prologue_using(false)
    }

    /// The prologue, with `use … as __ad;` whatever the body needs if
    /// `runtime` is set.
    fn prologue_using(&self, runtime: bool) -> TokenStream {
        let func = self.func;
        let mut stmts = TokenStream::new();
        for item in &func.items {
            stmts.extend(item.clone());
        }
        if runtime
            || func.insts.iter().any(|data| match &data.inst {
                Inst::Pullback(..)
                | Inst::Curvature(..)
                | Inst::TapeNew { .. }
                | Inst::Shadow { .. }
                | Inst::SeedCopy { .. }
                | Inst::PopShadow(_)
                | Inst::CloneBuf { saved: true, .. }
                | Inst::Forward { .. } => true,
                Inst::Call(callee, _) => !callee.is_primitive(),
                _ => false,
            })
        {
            stmts.extend(quote!(
                use ::ad_runtime::__private as __ad;
            ));
        }
        // `cfg.dt` of `cfg: Config` by value: constant data, unless its type
        // is `Tangent` (a compile error then: see the runtime's `Param`).
        let mut read_by_value = Vec::new();
        for data in &func.insts {
            if let Inst::Field { base, .. } = &data.inst
                && matches!(func.inst(*base), Inst::Param(_))
                && *func.ty(*base) == Ty::Unknown
                && !read_by_value.contains(base)
            {
                read_by_value.push(*base);
            }
        }
        for param in read_by_value {
            let name = self.expr(param).at(Prec::Postfix);
            let span = func.span(param);
            stmts.extend(quote_spanned! {span=>
                ::ad_runtime::__private::by_value!(#name);
            });
        }
        // `detach`, `ad_runtime::dot`, … as the user wrote them must name the
        // runtime's functions, whose pullbacks the adjoint uses.
        let mut checked = HashSet::new();
        for (path, function) in &func.runtime_paths {
            if checked.insert(path.to_string()) {
                let function = Ident::new(function, Span::call_site());
                let span = path
                    .clone()
                    .into_iter()
                    .next()
                    .map_or_else(Span::call_site, |token| token.span());
                stmts.extend(quote_spanned! {span=>
                    ::ad_runtime::__private::same_fn(::ad_runtime::#function::<f64>, #path);
                });
            }
        }
        stmts
    }

    /// The statements of a region.
    fn stmts(&self, region: &Region) -> Stmts {
        let func = self.func;
        let mut stmts = Stmts::new(self.declare_first);
        for &value in &region.insts {
            let span = func.span(value);
            // A checkpointed loop's step run without its pushes, or again
            // (without the user's macros, which ran in the primal loop; a
            // computation run as written, which has a value, runs again).
            let skipped = match func.inst(value) {
                Inst::Push(..) | Inst::TapeReserve { .. } => self.checkpoints.untaped.get(),
                Inst::Effect { .. } if *func.ty(value) == Ty::Unit => self.checkpoints.rerun.get(),
                _ => false,
            };
            if skipped {
                continue;
            }
            match &self.forms[value.index()] {
                _ if matches!(func.inst(value), Inst::Param(_)) => {}
                Form::Inline if is_destructured(func, value) => {
                    if stmts.declares_first()
                        && matches!(func.inst(value), Inst::If { .. })
                        && let Some(pattern) = self.components(value)
                    {
                        self.if_assigning(value, pattern, &mut stmts);
                        continue;
                    }
                    let expr = self.inst_expr(value).tokens;
                    match self.components(value) {
                        Some(pattern) => stmts.bind(pattern, expr, span),
                        // An `if` kept for what it writes: a statement of type `()`,
                        // or, if its branches still yield values, those dropped.
                        None if func.has_effects(value) => {
                            if matches!(func.ty(value), Ty::Tuple(elems) if elems.is_empty()) {
                                stmts.push(expr);
                            } else {
                                stmts.push(quote_spanned!(span=> let _ = #expr;));
                            }
                        }
                        None => {}
                    }
                }
                _ if matches!(func.inst(value), Inst::For { .. } | Inst::While { .. }) => {
                    self.for_loop(value, &mut stmts)
                }
                // A macro is emitted as the statement it was.
                _ if matches!(func.inst(value), Inst::Effect { .. })
                    && *func.ty(value) == Ty::Unit =>
                {
                    stmts.push(self.inst_expr(value).tokens);
                }
                _ if is_statement(func, value, self.uses[value.index()]) => {
                    let expr = self.inst_expr(value).tokens;
                    // A method's value kept for its operands' panics
                    // (`(i + 2).min(n)`): `min` is `#[must_use]`.
                    let method = matches!(func.inst(value), Inst::Prim(..) | Inst::Effect { .. });
                    if method && *func.ty(value) != Ty::Unit {
                        stmts.push(quote_spanned!(span=> let _ = #expr;));
                    } else {
                        stmts.push(quote_spanned!(span=> #expr;));
                    }
                }
                Form::Inline | Form::Component(_) | Form::Carried(_) => {}
                _ if matches!(func.inst(value), Inst::Arg(_)) => {}
                Form::Bound(name) => {
                    let mutable = matches!(func.inst(value), Inst::TapeNew { .. })
                        || self.written.contains(&value);
                    let binding = self.binding(name, value, mutable);
                    let expr = self.inst_expr(value).tokens;
                    stmts.bind(Pattern::Single(binding), expr, span);
                }
            }
        }
        stmts
    }

    /// A type as far as the IR knows it, `_` for the rest: `f64`,
    /// `__ad::Tape<f64>`, `_`.
    fn ty_tokens(&self, ty: &Ty) -> TokenStream {
        match ty {
            Ty::F64 => quote!(f64),
            Ty::F32 => quote!(f32),
            Ty::Bool => quote!(bool),
            Ty::Tape(elem) => {
                let elem = self.ty_tokens(elem);
                quote!(__ad::Tape<#elem>)
            }
            _ => quote!(_),
        }
    }

    /// The local `name` holding `value`.
    fn binding(&self, name: &str, value: Value, mutable: bool) -> Binding {
        let annotation = self.annotation(value);
        let ty = match &annotation {
            Some(annotation) => annotation.clone(),
            None => self.ty_tokens(self.func.ty(value)),
        };
        Binding {
            name: ident(name, self.func.span(value)),
            mutable,
            ty,
            annotation,
        }
    }

    /// A region as a block: its statements, then what it yields.
    fn block(&self, region: &Region, span: Span) -> TokenStream {
        if let Some(position) = self.tail_if(region) {
            // `{ let (a, b) = if … ; (a, b) }` is `{ if … }`; in an `else`,
            // prettyplease then prints `else if`.
            let init = Region {
                insts: region.insts[..position].to_vec(),
                yields: Vec::new(),
            };
            let stmts = self.stmts(&init);
            let tail = self.inst_expr(region.insts[position]).tokens;
            return quote_spanned!(span=> { #stmts #tail });
        }
        let stmts = self.stmts(region);
        let yields: Vec<TokenStream> = region
            .yields
            .iter()
            .map(|&value| self.expr(value).at(Prec::Or))
            .collect();
        let tail = match yields.as_slice() {
            // A region kept for what it writes yields nothing.
            [] => TokenStream::new(),
            [single] => single.clone(),
            _ => stmts::tuple_tree(yields),
        };
        quote_spanned!(span=> { #stmts #tail })
    }

    /// `if c { …; a = y; } else { …; a = z; }` for the `if` whose results
    /// `pattern` binds, with those locals declared before it: in a long
    /// function, where a pattern binding many locals from a value would
    /// cost rustc time quadratic in their number (see [`stmts`]).
    fn if_assigning(&self, value: Value, pattern: Pattern, stmts: &mut Stmts) {
        let func = self.func;
        let span = func.span(value);
        let Inst::If { cond, then, els } = func.inst(value) else {
            unreachable!("an `if`")
        };
        let parts = match pattern {
            Pattern::Single(binding) => vec![Some(binding)],
            Pattern::Tuple(parts) => parts,
        };
        let targets: Vec<Option<Ident>> = parts
            .iter()
            .map(|part| part.as_ref().map(|binding| binding.name.clone()))
            .collect();
        for binding in parts.into_iter().flatten() {
            stmts.declare(binding);
        }
        let block = |region: &Region| {
            let body = self.stmts(region);
            let assignments = region
                .yields
                .iter()
                .zip(&targets)
                .map(|(&yielded, target)| {
                    let expr = self.expr(yielded).at(Prec::Or);
                    match target {
                        Some(name) => quote_spanned!(span=> #name = #expr;),
                        // Evaluated as the user's code evaluates it.
                        None if self.forms[yielded.index()] == Form::Inline => {
                            quote_spanned!(span=> _ = #expr;)
                        }
                        None => TokenStream::new(),
                    }
                });
            quote_spanned!(span=> { #body #(#assignments)* })
        };
        let cond = self.expr(*cond).at(Prec::Or);
        let (then, els) = (block(then), block(els));
        stmts.push(quote_spanned!(span=> if #cond #then else #els));
    }

    /// The position of the `if` that ends `region` (followed only by its own
    /// `extract`s), if the region yields exactly its results, each used only
    /// there.
    fn tail_if(&self, region: &Region) -> Option<usize> {
        let func = self.func;
        if self.declare_first {
            // Its results are assigned, not yielded (see `if_assigning`).
            return None;
        }
        let position = region
            .insts
            .iter()
            .rposition(|&value| !matches!(func.inst(value), Inst::Extract(..)))?;
        let last = region.insts[position];
        let Ty::Tuple(elems) = func.ty(last) else {
            return None;
        };
        let is_tail = matches!(func.inst(last), Inst::If { .. })
            && !region.yields.is_empty()
            && elems.len() == region.yields.len()
            && region.insts[position + 1..]
                .iter()
                .all(|&value| matches!(func.inst(value), Inst::Extract(t, _) if *t == last))
            && region.yields.iter().enumerate().all(|(index, &yielded)| {
                matches!(func.inst(yielded), Inst::Extract(t, i) if *t == last && *i as usize == index)
                    && self.uses[yielded.index()] == 1
            });
        is_tail.then_some(position)
    }

    /// Whether `value` is a call of constants ([`UserCall::plain`]) whose
    /// pullback nothing binds: written as the call alone, `g(c)`, rather
    /// than the pair `(g(c), ())`.
    ///
    /// [`UserCall::plain`]: crate::ir::UserCall::plain
    pub(super) fn bare_call(&self, value: Value) -> bool {
        matches!(self.func.inst(value), Inst::Forward { callee, .. } if self.func.user_calls[*callee as usize].plain)
            && !self.extracts[value.index()]
                .iter()
                .any(|&(index, extract)| {
                    index == 1 && matches!(self.forms[extract.index()], Form::Component(Some(_)))
                })
    }

    /// The pattern binding the components of a destructured result — `(d_a, _)`,
    /// or `a` for a single one — or `None` if no component is used.
    fn components(&self, tuple: Value) -> Option<Pattern> {
        let func = self.func;
        let Ty::Tuple(elems) = func.ty(tuple) else {
            unreachable!("destructured values are tuples")
        };
        let span = func.span(tuple);
        let mut parts: Vec<Option<Binding>> = (0..elems.len()).map(|_| None).collect();
        for &(index, extract) in &self.extracts[tuple.index()] {
            if let Form::Component(Some(name)) = &self.forms[extract.index()] {
                // A buffer a call returned, then written (`let mut v = g(x);`).
                let mut binding = self.binding(name, extract, self.written.contains(&extract));
                binding.name = ident(name, span);
                parts[index] = Some(binding);
            }
        }
        if parts.iter().all(Option::is_none) {
            return None;
        }
        // A call of constants with its pullback, `()`, unused: `let y = g(c);`.
        if self.bare_call(tuple) {
            return parts.swap_remove(0).map(Pattern::Single);
        }
        Some(if parts.len() == 1 {
            Pattern::Single(parts.pop().flatten().expect("used"))
        } else {
            Pattern::Tuple(parts)
        })
    }
}

/// Whether an instruction is written as a statement of its own: an effect
/// whose value is not read (a write, a tape push, a call writing a buffer).
fn is_statement(func: &Function, value: Value, n_uses: usize) -> bool {
    let inst = func.inst(value);
    n_uses == 0
        && inst.is_effect()
        && func.regions(value).is_empty()
        && !matches!(inst, Inst::TapeNew { .. })
}

/// Whether the components of `value` are bound by a pattern: the results of an
/// `if` or of a call, or of a pullback with several.
fn is_destructured(func: &Function, value: Value) -> bool {
    match func.inst(value) {
        Inst::If { .. } | Inst::Forward { .. } => true,
        // A record of saved values (`reverse/records.rs`).
        Inst::Pop(_) => matches!(func.ty(value), Ty::Tuple(_)),
        Inst::Pullback(..) | Inst::Curvature(..) | Inst::Apply { .. } => {
            matches!(func.ty(value), Ty::Tuple(elems) if !elems.is_empty())
        }
        _ => false,
    }
}
