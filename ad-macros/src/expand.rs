//! The driver: one line per pipeline stage, errors checked between stages.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;
use syn::ext::IdentExt;

use crate::diag::{Ctxt, msg};
use crate::ir::{self, Function};
use crate::lower::Signature;
use crate::{analysis, args, emit, jvp, lower, reverse};

pub(crate) fn differentiate(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(error) => return not_a_function(input, error),
    };
    let conditions = lower::cfg::conditions(&item.block);
    if conditions.is_empty() {
        return differentiate_fn(args, item);
    }
    if let Some(extra) = conditions.get(lower::cfg::MAX_CONDITIONS) {
        let error = syn::Error::new_spanned(&extra.attr, msg::CFG_TOO_MANY).to_compile_error();
        let item = untouched(&item);
        return quote!(#item #error);
    }
    // One expansion per combination of the conditions, each under its own
    // `#[cfg]`; the user's function once, as written.
    let mut variants = TokenStream::new();
    for truth in 0..1u32 << conditions.len() {
        let mut variant = item.clone();
        if let Err(attr) = lower::cfg::select(&mut variant.block, &conditions, truth) {
            let error = syn::Error::new_spanned(attr, msg::CFG_PLACE).to_compile_error();
            let item = untouched(&item);
            return quote!(#item #error);
        }
        let combination = lower::cfg::combination(&conditions, truth);
        let expanded = differentiate_fn(args.clone(), variant);
        let parser = |input: syn::parse::ParseStream| {
            let mut items = Vec::new();
            while !input.is_empty() {
                items.push(input.parse::<syn::Item>()?);
            }
            Ok(items)
        };
        // The expansion is items; were it not, rustc is to say so, not a
        // panic of the macro.
        let items = match syn::parse::Parser::parse2(parser, expanded) {
            Ok(items) => items,
            Err(problem) => {
                let error = syn::Error::new(
                    item.sig.ident.span(),
                    format!(
                        "ad-macros bug: the expansion under `#[cfg({combination})]` is not a sequence of items ({problem}); please report this with the function that caused it"
                    ),
                );
                variants.extend(error.to_compile_error());
                continue;
            }
        };
        for generated in items {
            let is_original =
                matches!(&generated, syn::Item::Fn(func) if func.sig.ident == item.sig.ident);
            if !is_original {
                variants.extend(quote!(#[cfg(#combination)] #generated));
            }
        }
    }
    let mut original = untouched(&item);
    // A second `#[differentiate]` is reported by each variant.
    original.attrs.retain(|attr| {
        attr.path()
            .segments
            .last()
            .is_none_or(|segment| segment.ident != "differentiate")
    });
    original.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    quote!(#original #variants)
}

/// The expansion of one function whose body has no `#[cfg]` left to decide.
fn differentiate_fn(args: TokenStream, mut item: ItemFn) -> TokenStream {
    unused_named(&mut item);
    // A second `#[differentiate]` would expand again and define `_vjp` twice.
    let mut applied_twice = None;
    item.attrs.retain(|attr| {
        let is_ours = attr
            .path()
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "differentiate");
        if is_ours && applied_twice.is_none() {
            applied_twice = Some(syn::Error::new_spanned(attr, msg::APPLIED_TWICE));
        }
        !is_ours
    });
    let modes = args::parse(args.clone()).unwrap_or_default();
    let mut generated = TokenStream::new();
    // `_vjp`'s stages, which the reverse twins of `nested` declare again.
    let mut reverse_stages = None;
    if modes.wants_vjp() {
        match stages(args.clone(), &item, applied_twice.take()) {
            Ok(stages) => {
                generated.extend(reverse_mode(&item, &stages));
                reverse_stages = Some(stages);
            }
            Err(failed) => {
                // Forward mode would report the same errors: only stubs.
                let mut jvp = TokenStream::new();
                if modes.wants_jvp() {
                    jvp.extend(stub(emit::jvp_header(&item, &failed.0, None)));
                }
                if modes.wants_jvp_lanes() {
                    let lanes = lanes_param(&item);
                    jvp.extend(stub(emit::jvp_header(&item, &failed.0, Some(&lanes))));
                }
                return fallback(&item, &failed.0, &failed.1, Some(jvp));
            }
        }
    }
    // `_jvp`, then `_jvp_lanes` (vector forward mode, the same walk).
    let forward_modes = [(modes.wants_jvp(), false), (modes.wants_jvp_lanes(), true)];
    for (_, lanes) in forward_modes.into_iter().filter(|&(wanted, _)| wanted) {
        match forward_mode(args.clone(), &item, applied_twice.take(), lanes) {
            Ok((sig, jvp)) => {
                generated.extend(emit::jvp(&item, &sig, &jvp, false));
                // What the `_jvp` of callers call: every float active. With
                // `wrt`, another differentiation; without, the same
                // function written twice (see `emit::Entry`).
                let all = if modes.wrt.is_some() {
                    forward_mode(TokenStream::new(), &item, None, lanes).ok()
                } else {
                    Some((sig, jvp))
                };
                if let Some((sig, jvp)) = all {
                    generated.extend(emit::jvp(&item, &sig, &jvp, true));
                }
            }
            Err(failed) => {
                let lanes = lanes.then(|| lanes_param(&item));
                let header = emit::jvp_header(&item, &failed.0, lanes.as_ref());
                let errors = failed.1.to_compile_error();
                let stub = stub(header);
                let item = untouched(&item);
                return quote!(#item #errors #generated #stub);
            }
        }
    }
    if modes.wants_hvp() {
        match second_order(args.clone(), &item, None) {
            Ok((sig, hvp, vjp)) => {
                generated.extend(emit::hvp(&item, &sig, &hvp));
                // What the `_hvp` of callers call; without `wrt`, from the
                // same `_vjp` IR.
                let all_active = modes.wrt.is_none().then_some((&sig, &vjp));
                generated.extend(hvp_twins(&item, !modes.wants_jvp(), all_active));
            }
            Err(failed) => {
                let header = emit::hvp_header(&item, &failed.0);
                let errors = failed.1.to_compile_error();
                let stub = stub(header);
                let item = untouched(&item);
                return quote!(#item #errors #generated #stub);
            }
        }
    }
    if modes.nested {
        match nested_twins(&args, &item, &modes, reverse_stages.as_ref()) {
            Ok(twins) => generated.extend(twins),
            Err(failed) => {
                let errors = failed.1.to_compile_error();
                let item = untouched(&item);
                return quote!(#item #errors #generated);
            }
        }
    }
    // A function called only through `_vjp`, `_forward` or `_jvp` is used:
    // they run its body, not call it, so without this rustc would call it
    // dead (and `#![deny(warnings)]` crates would not build). They cannot
    // name it instead: an associated function without `self` is `Self::f`
    // and a free one `f`, and the attribute cannot tell which. (Under
    // `#![forbid(dead_code)]` this `allow` is an error; see
    // docs/supported.md.)
    let mut original = untouched(&item);
    original.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    let shown = modes.print.then(|| print(&item, &generated));
    quote!(#original #generated #shown)
}

/// `#[differentiate(print)]`: the generated functions, formatted, shown at
/// compile time as the note of a deprecation warning (the one message a
/// macro can make rustc print on stable Rust without failing the build).
fn print(item: &ItemFn, generated: &TokenStream) -> TokenStream {
    let text = match syn::parse2::<syn::File>(generated.clone()) {
        Ok(mut file) => {
            // The lints generated functions allow are noise to a reader.
            for item in &mut file.items {
                if let syn::Item::Fn(function) = item {
                    function.attrs.retain(|attr| !attr.path().is_ident("allow"));
                }
            }
            prettyplease::unparse(&file)
        }
        Err(_) => generated.to_string(),
    };
    let note = format!(
        "`#[differentiate(print)]` on `{}` generated:\n\n{text}\n(remove `print` to silence this)",
        item.sig.ident
    );
    let span = item.sig.ident.span();
    // A function, not `const _`, which an `impl` block does not allow: the
    // note is printed when its body uses the deprecated struct.
    let holder = syn::Ident::new(&format!("__ad_print_{}", item.sig.ident.unraw()), span);
    quote::quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(dead_code, non_snake_case)]
        fn #holder() {
            #[deprecated(note = #note)]
            struct Expansion;
            let _ = Expansion;
        }
    }
}

/// `_vjp` and the split API.
fn reverse_mode(item: &ItemFn, stages: &Stages) -> TokenStream {
    let vjp = emit::vjp(item, &stages.sig, &stages.vjp);
    // `f_forward` honours `wrt` as `_vjp` does; callers call
    // `f_forward_all`, with every float parameter active. A method's are
    // associated functions taking `self_: &Self` (`self.g(x)` in another
    // method calls `Self::g_forward_all(self, x)`).
    let forward = {
        let primal_len = stages.primal.insts.len();
        match &stages.all_active {
            Some((sig, vjp, all_len)) => {
                let forward = emit::forward(
                    item,
                    &stages.sig,
                    &stages.unfused,
                    primal_len,
                    emit::Entry::Forward,
                );
                let all = emit::forward(item, sig, vjp, *all_len, emit::Entry::All);
                quote!(#forward #all)
            }
            // Without `wrt` the two are the same function: one body, written
            // under both names, since one cannot call the other by a path
            // that works both for a free function (`f_forward`) and an
            // associated one (`Self::f_forward`).
            None => emit::forward_and_all(item, &stages.sig, &stages.unfused, primal_len),
        }
    };
    quote!(#vjp #forward)
}

/// Lowers, checks and differentiates `item` in forward mode: the signature
/// and `_jvp`'s IR, or with `lanes` `_jvp_lanes`'s.
pub(crate) fn forward_mode(
    args: TokenStream,
    item: &ItemFn,
    applied_twice: Option<syn::Error>,
    lanes: bool,
) -> Result<(Signature, Function), Box<(Signature, syn::Error)>> {
    let (sig, primal, activity) = checked_primal(args, item, applied_twice, None)?;
    if lanes
        && let Some(param) = sig.params.iter().find(|param| {
            param.role == crate::ir::Role::Active
                && (param.ir_ty == crate::ir::Ty::Struct
                    || param.rows.as_ref().is_some_and(|rows| rows.vecs))
        })
    {
        let what = match param.ir_ty {
            crate::ir::Ty::Struct => "parameter structs and `&self`",
            _ => "matrices as a `Vec` of rows (take `&[[T; N]]` or a flat `&[T]`)",
        };
        let error = syn::Error::new(param.span, msg::lanes_unsupported(what));
        return Err(Box::new((sig, error)));
    }
    let cx = Ctxt::new();
    let lanes = lanes.then(|| lanes_param(item));
    let tangent = jvp::jvp(&cx, &primal, &activity, &sig, lanes);
    if let Err(error) = cx.check() {
        return Err(Box::new((sig, error)));
    }
    Ok((sig, verified(tangent, "jvp")))
}

/// The name of `_jvp_lanes`' parameter `const K: usize`: `K`, unless the
/// function names anything `K` (a generic, a parameter, a local, a
/// constant: in scope of a const parameter, `let K = …` would be a pattern
/// matching it), then `K_`, `K__`, ….
pub(crate) fn lanes_param(item: &ItemFn) -> syn::Ident {
    fn idents(tokens: TokenStream, found: &mut std::collections::HashSet<String>) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Ident(ident) => {
                    found.insert(ident.unraw().to_string());
                }
                proc_macro2::TokenTree::Group(group) => idents(group.stream(), found),
                _ => {}
            }
        }
    }
    let mut taken = std::collections::HashSet::new();
    idents(quote!(#item), &mut taken);
    let mut name = "K".to_owned();
    while taken.contains(&name) {
        name.push('_');
    }
    syn::Ident::new(&name, proc_macro2::Span::call_site())
}

/// Lowers and checks `item` for the modes that do not rewrite running
/// extrema: the signature, the primal IR without dead code, its activity.
/// With `scalar_output` (second order), an output other than one float is
/// an error.
fn checked_primal(
    args: TokenStream,
    item: &ItemFn,
    applied_twice: Option<syn::Error>,
    scalar_output: Option<&str>,
) -> Result<(Signature, Function, analysis::Activity), Box<(Signature, syn::Error)>> {
    let (cx, args) = context(args, applied_twice);
    let sig = lower::signature(&cx, item, &args);
    if let Some(message) = scalar_output
        && !sig.output_ty.is_float()
    {
        cx.error_spanned_by(&item.sig.output, message);
    }
    let primal = lower::body(&cx, item, &sig);
    if let Err(error) = cx.check() {
        return Err(Box::new((sig, error)));
    }
    let primal = verified(primal.expect("lowering without errors yields IR"), "lower");
    let primal = verified(analysis::dead_code(primal), "dead code");
    let primal = verified(analysis::merge_loads(primal), "repeated reads");
    let activity = analysis::activity(&primal);
    let primal = analysis::plain_calls(primal, &activity);
    let cx = Ctxt::new();
    analysis::check(&cx, &primal, &activity);
    if let Err(error) = cx.check() {
        return Err(Box::new((sig, error)));
    }
    Ok((sig, primal, activity))
}

/// Which function forward mode over reverse mode builds: `_hvp`, or the
/// `nested` twin of `_vjp`; they differ in their seed and their messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OverReverse {
    Hvp,
    Nested,
}

impl OverReverse {
    fn unsupported(self, what: &str) -> String {
        match self {
            OverReverse::Hvp => msg::hvp_unsupported(what),
            OverReverse::Nested => msg::nested_unsupported(what),
        }
    }
}

/// Lowers, checks and differentiates `item` in reverse mode for forward mode
/// to go over: the signature and the unfused `_vjp` IR in forward order,
/// sums from zero (what `_hvp` and the `nested` twin of `_vjp` start from).
fn reverse_for_forward(
    args: TokenStream,
    item: &ItemFn,
    applied_twice: Option<syn::Error>,
    over: OverReverse,
) -> Result<(Signature, Function), Box<(Signature, syn::Error)>> {
    let output = match over {
        OverReverse::Hvp => msg::HVP_OUTPUT,
        OverReverse::Nested => msg::NESTED_OUTPUT,
    };
    let (sig, primal, activity) = checked_primal(args, item, applied_twice, Some(output))?;
    if let Some(param) = sig.params.iter().find(|param| {
        (param.by_value.is_some() && param.role == crate::ir::Role::Active)
            || param.rows.is_some()
            || (over == OverReverse::Nested && param.ir_ty == crate::ir::Ty::Struct)
    }) {
        let what = if param.by_value.is_some() {
            format!(
                "arrays taken by value (take `&{}`)",
                lower::type_string(param.outer_ty()).replace(';', "; ")
            )
        } else if param.rows.is_some() {
            "buffers of rows (take a flat `&[T]` and index it `x[i * n + j]`)".to_owned()
        } else {
            "parameter structs and `&self`".to_owned()
        };
        let error = syn::Error::new(param.span, over.unsupported(&what));
        return Err(Box::new((sig, error)));
    }
    let writes = analysis::writes(&primal);
    let n = primal.insts.len();
    let vjp = verified(
        reverse::vjp(&primal, &activity, &writes, &sig, false),
        "reverse",
    );
    let vjp = verified(reverse::make_tapes_early(vjp), "tapes");
    let vjp = verified(reverse::run_forward(vjp, n), "forward order");
    let vjp = verified(reverse::sums_from_zero(vjp, n), "sums from zero");
    Ok((sig, vjp))
}

/// Lowers, checks and differentiates `item` twice, forward mode over reverse
/// mode: the signature, `_hvp`'s IR, and the `_vjp` IR it went over.
pub(crate) fn second_order(
    args: TokenStream,
    item: &ItemFn,
    applied_twice: Option<syn::Error>,
) -> Result<(Signature, Function, Function), Box<(Signature, syn::Error)>> {
    let (sig, vjp) = reverse_for_forward(args, item, applied_twice, OverReverse::Hvp)?;
    let cx = Ctxt::new();
    let hvp = jvp::hvp(&cx, &vjp, &sig);
    if let Err(error) = cx.check() {
        return Err(Box::new((sig, error)));
    }
    let hvp = verified(hvp, "hvp");
    // The tangent of the output, for one, is built and never read.
    Ok((sig, verified(analysis::dead_code(hvp), "dead code"), vjp))
}

/// What the `_hvp` of a caller calls for a call of this function: its
/// `_jvp_all` (with `jvp_all`, as `jvp` would make it) for the call, and its
/// `_hvp_all`, forward mode over its `_vjp` with every float parameter
/// active and the seed a parameter, to apply the call's pullback. Nothing if
/// either cannot be built (a caller then gets rustc's "cannot find").
/// `all_active` is that `_vjp` IR when `_hvp`'s own is it (no `wrt`).
fn hvp_twins(
    item: &ItemFn,
    jvp_all: bool,
    all_active: Option<(&Signature, &Function)>,
) -> TokenStream {
    let mut twins = TokenStream::new();
    if jvp_all && let Ok((sig, tangent)) = forward_mode(TokenStream::new(), item, None, false) {
        twins.extend(emit::jvp(item, &sig, &tangent, true));
    }
    let built;
    let (sig, vjp) = match all_active {
        Some(given) => given,
        None => match reverse_for_forward(TokenStream::new(), item, None, OverReverse::Hvp) {
            Ok(ok) => {
                built = ok;
                (&built.0, &built.1)
            }
            Err(_) => return twins,
        },
    };
    if let Ok(tokens) = forward_over(item, sig, vjp, emit::NestedOf::HvpAll) {
        twins.extend(tokens);
    }
    twins
}

/// Forward mode over a derivative function's IR (`_vjp`'s or `_jvp`'s),
/// emitted as the twin `of` says: each parameter holding floats followed by
/// its tangent.
fn forward_over(
    item: &ItemFn,
    sig: &Signature,
    func: &Function,
    of: emit::NestedOf,
) -> Result<TokenStream, syn::Error> {
    let cx = Ctxt::new();
    let names = jvp::nested_names(func);
    let twin = jvp::nested(&cx, func, &names);
    cx.check()?;
    let twin = verified(analysis::dead_code(verified(twin, "nested")), "dead code");
    let names: Vec<(String, Option<String>)> = func
        .params
        .iter()
        .map(|param| func.name(param.value).unwrap_or_default().to_owned())
        .zip(names)
        .collect();
    Ok(emit::nested(item, sig, &twin, of, &names))
}

/// The `nested` twins: forward mode over `_vjp` (with `vjp`, `f_vjp_jvp_all`)
/// and over `_jvp` (with `jvp`, `f_jvp_jvp_all`), what the `_jvp` of a caller
/// calls when the caller calls `f_vjp` or `f_jvp`.
pub(crate) fn nested_twins(
    args: &TokenStream,
    item: &ItemFn,
    modes: &args::Args,
    reverse_stages: Option<&Stages>,
) -> Result<TokenStream, Box<(Signature, syn::Error)>> {
    let mut twins = TokenStream::new();
    let forward_over = |func: &Function, sig: Signature, of: emit::NestedOf| match forward_over(
        item, &sig, func, of,
    ) {
        Ok(tokens) => Ok((sig, tokens)),
        Err(error) => Err(Box::new((sig, error))),
    };
    // The twins of `_vjp` and `_jvp`, and what the reverse twins declare
    // inside them.
    let mut of_vjp = None;
    let mut of_jvp = None;
    if modes.wants_vjp() {
        let (sig, vjp) = reverse_for_forward(args.clone(), item, None, OverReverse::Nested)?;
        let (sig, tokens) = forward_over(&vjp, sig, emit::NestedOf::Vjp)?;
        twins.extend(tokens.clone());
        of_vjp = Some((sig, tokens));
    }
    if modes.wants_jvp() {
        let (sig, tangent) = forward_mode(args.clone(), item, None, false)?;
        if let Some(param) = sig.params.iter().find(|param| {
            param.by_value.is_some() || param.rows.is_some() || param.ir_ty == crate::ir::Ty::Struct
        }) {
            let what = "arrays by value, rows and parameter structs (take `&[T]`)";
            let error = syn::Error::new(param.span, msg::nested_unsupported(what));
            return Err(Box::new((sig, error)));
        }
        let (sig, tokens) = forward_over(&tangent, sig, emit::NestedOf::Jvp)?;
        twins.extend(tokens);
        of_jvp = Some((sig, tangent));
    }
    // Reverse mode over `_vjp` and `_jvp`, for functions of floats with every
    // parameter active (the pullback of `_vjp` needs the whole Hessian's
    // rows, which a `wrt` twin does not compute).
    if let Some((sig, nested_item)) = &of_vjp
        && modes.wrt.is_none()
        && sig.params.iter().all(|param| {
            param.ir_ty.is_float() && param.role == crate::ir::Role::Active && !param.is_receiver()
        })
    {
        let mut inner = item.clone();
        inner.vis = syn::Visibility::Inherited;
        let stages = reverse_stages.expect("`nested` with `vjp` has `_vjp`'s stages");
        let vjp_item = emit::vjp(&inner, &stages.sig, &stages.vjp);
        let nested_item = quote!(#nested_item);
        let jvp_item = of_jvp
            .as_ref()
            .map(|(sig, tangent)| emit::jvp(&inner, sig, tangent, false));
        twins.extend(emit::reverse_twins(
            item,
            sig,
            &vjp_item,
            &nested_item,
            jvp_item.as_ref(),
        ));
    }
    Ok(twins)
}

/// A context holding the errors found before lowering, and the arguments.
fn context(args: TokenStream, applied_twice: Option<syn::Error>) -> (Ctxt, args::Args) {
    let cx = Ctxt::new();
    if let Some(error) = applied_twice {
        cx.push(error);
    }
    let args = args::parse(args).unwrap_or_else(|error| {
        cx.push(error);
        args::Args::default()
    });
    (cx, args)
}

/// The user's function as it is emitted: unchanged, but for the
/// `#[checkpoint]` attributes on its loops, which only the macro reads
/// (rustc would not know them).
fn untouched(item: &ItemFn) -> ItemFn {
    /// The parameters' names as the signature spells them: a name in the
    /// attribute may come from elsewhere (a `macro_rules!` invocation),
    /// with other hygiene.
    struct Strip(Vec<syn::Ident>);
    impl Strip {
        fn respell(&self, expr: &mut syn::Expr) {
            struct Respell<'a>(&'a [syn::Ident]);
            impl syn::visit_mut::VisitMut for Respell<'_> {
                fn visit_expr_path_mut(&mut self, path: &mut syn::ExprPath) {
                    if let Some(ident) = path.path.get_ident()
                        && let Some(param) = self.0.iter().find(|param| *param == ident)
                    {
                        path.path.segments[0].ident = param.clone();
                    }
                }
            }
            syn::visit_mut::VisitMut::visit_expr_mut(&mut Respell(&self.0), expr);
        }
    }
    impl syn::visit_mut::VisitMut for Strip {
        fn visit_attributes_mut(&mut self, attrs: &mut Vec<syn::Attribute>) {
            attrs.retain(|attr| !lower::checkpoint::is_checkpoint(attr));
        }

        // `#[checkpoint(snapshots = k)]` may be the only use of `k`: the
        // loop keeps it named, in a closure that is never called.
        fn visit_block_mut(&mut self, block: &mut syn::Block) {
            let mut stmts = Vec::with_capacity(block.stmts.len());
            for stmt in std::mem::take(&mut block.stmts) {
                let attrs = match &stmt {
                    syn::Stmt::Expr(syn::Expr::ForLoop(expr), _) => &expr.attrs[..],
                    syn::Stmt::Expr(syn::Expr::While(expr), _) => &expr.attrs[..],
                    syn::Stmt::Expr(syn::Expr::Loop(expr), _) => &expr.attrs[..],
                    _ => &[],
                };
                for attr in attrs {
                    if lower::checkpoint::is_checkpoint(attr)
                        && let Some(mut expr) = lower::checkpoint::snapshots_expr(attr)
                    {
                        self.respell(&mut expr);
                        let span = syn::spanned::Spanned::span(&expr);
                        stmts.push(syn::parse_quote_spanned!(span=> let _ = || #expr;));
                    }
                }
                stmts.push(stmt);
            }
            block.stmts = stmts;
            syn::visit_mut::visit_block_mut(self, block);
        }
    }
    let params = item
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => match &*typed.pat {
                syn::Pat::Ident(pat) => Some(pat.ident.clone()),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let mut item = item.clone();
    syn::visit_mut::VisitMut::visit_block_mut(&mut Strip(params), &mut item.block);
    // `_: usize` as the user wrote it (see `unused_named`).
    for input in &mut item.sig.inputs {
        if let syn::FnArg::Typed(typed) = input
            && let syn::Pat::Ident(pat) = &*typed.pat
            && pat.ident.to_string().starts_with(UNUSED)
        {
            *typed.pat = syn::Pat::Wild(syn::PatWild {
                attrs: Vec::new(),
                underscore_token: syn::Token![_](pat.ident.span()),
            });
        }
    }
    item
}

/// The prefix of the names `_` parameters get in the generated functions.
const UNUSED: &str = "__ad_unused";

/// `item` with each parameter written `_` (`fn f(x: &[f64], _: usize)`)
/// named `__ad_unused1`, …: the generated functions take it too, by name
/// (a name starting with `_`, which rustc does not report unused).
/// [`untouched`] writes `_` again in the user's function.
fn unused_named(item: &mut ItemFn) {
    for (index, input) in item.sig.inputs.iter_mut().enumerate() {
        if let syn::FnArg::Typed(typed) = input
            && let syn::Pat::Wild(wild) = &*typed.pat
        {
            let name = quote::format_ident!("{UNUSED}{index}", span = wild.underscore_token.span);
            *typed.pat = syn::parse_quote!(#name);
        }
    }
}

/// A body for a stub whose function could not be differentiated.
fn stub(header: TokenStream) -> TokenStream {
    quote! {
        #header {
            ::core::unreachable!()
        }
    }
}

/// The attribute is on something that is not a function with a body: say so,
/// rather than syn's "expected `fn`".
fn not_a_function(input: TokenStream, error: syn::Error) -> TokenStream {
    let error = if let Ok(method) = syn::parse2::<syn::TraitItemFn>(input.clone()) {
        syn::Error::new_spanned(&method.sig, msg::NO_BODY)
    } else if let Ok(item) = syn::parse2::<syn::Item>(input.clone()) {
        syn::Error::new_spanned(item, msg::NOT_A_FUNCTION)
    } else {
        error
    };
    let mut tokens = error.to_compile_error();
    tokens.extend(input);
    tokens
}

/// What each stage produced, for the driver and for snapshot tests.
pub(crate) struct Stages {
    pub(crate) sig: Signature,
    pub(crate) primal: Function,
    /// `_vjp`, with adjoint loops fused into primal loops where they can be.
    pub(crate) vjp: Function,
    /// `_vjp` before fusion: the split API's pullback runs after the primal
    /// (see [`reverse::fuse_loops`]).
    pub(crate) unfused: Function,
    /// With `wrt(…)`: the signature and `_vjp` IR with every float parameter
    /// active, and the length of that primal IR, from which the split API is
    /// emitted. Without, the split API comes from `sig` and `vjp` above.
    pub(crate) all_active: Option<(Signature, Function, usize)>,
}

pub(crate) fn stages(
    args: TokenStream,
    item: &ItemFn,
    applied_twice: Option<syn::Error>,
) -> Result<Stages, Box<(Signature, syn::Error)>> {
    let (cx, args) = context(args, applied_twice);
    let (sig, primal, vjp) = differentiated(cx, item, &args)?;
    // The split API differentiates with respect to every float parameter:
    // its callers may pass active values anywhere.
    let all_active = match args.wrt {
        Some(_) => {
            let (sig, primal, vjp) = differentiated(Ctxt::new(), item, &args::Args::default())?;
            Some((sig, vjp.unfused, primal.insts.len()))
        }
        None => None,
    };
    Ok(Stages {
        sig,
        primal,
        vjp: vjp.fused,
        unfused: vjp.unfused,
        all_active,
    })
}

/// `_vjp`'s IR before and after loop fusion.
struct Vjp {
    fused: Function,
    unfused: Function,
}

/// Lowers, checks and differentiates `item`.
fn differentiated(
    cx: Ctxt,
    item: &ItemFn,
    args: &args::Args,
) -> Result<(Signature, Function, Vjp), Box<(Signature, syn::Error)>> {
    let sig = lower::signature(&cx, item, args);
    let primal = lower::body(&cx, item, &sig);
    if let Err(error) = cx.check() {
        return Err(Box::new((sig, error)));
    }
    let primal = verified(primal.expect("lowering without errors yields IR"), "lower");
    let primal = verified(analysis::dead_code(primal), "dead code");
    let primal = verified(analysis::merge_loads(primal), "repeated reads");
    let primal = verified(analysis::running_extrema(primal), "running extrema");
    let activity = analysis::activity(&primal);
    let primal = analysis::plain_calls(primal, &activity);
    let writes = analysis::writes(&primal);
    let cx = Ctxt::new();
    analysis::check(&cx, &primal, &activity);
    if let Err(error) = cx.check() {
        return Err(Box::new((sig, error)));
    }
    let unfused = verified(
        reverse::vjp(&primal, &activity, &writes, &sig, true),
        "reverse",
    );
    let unfused = verified(reverse::make_tapes_early(unfused), "tapes");
    let unfused = verified(
        reverse::run_forward(unfused, primal.insts.len()),
        "forward order",
    );
    let unfused = verified(
        reverse::sums_from_zero(unfused, primal.insts.len()),
        "sums from zero",
    );
    let fused = verified(
        reverse::fuse_loops(unfused.clone(), primal.insts.len()),
        "fuse",
    );
    let fused = verified(reverse::keep_exponentials(fused), "keep");
    let fused = verified(reverse::record_tapes(fused), "records");
    let unfused = verified(reverse::record_tapes(unfused), "records");
    let fused = verified(reverse::order_updates(fused), "updates");
    let unfused = verified(reverse::order_updates(unfused), "updates");
    // Compacts the IR: not for the split API's, whose primal values must
    // keep their numbers.
    let fused = verified(reverse::carry_updates(fused), "carried updates");
    Ok((sig, primal, Vjp { fused, unfused }))
}

/// A broken invariant is a bug of ours: panic, printing the IR.
fn verified(func: Function, stage: &str) -> Function {
    if let Err(problem) = ir::verify(&func) {
        panic!(
            "ad-macros bug: the IR after `{stage}` is invalid: {problem}\n{}\nplease report this with the function that caused it",
            func.to_text()
        );
    }
    func
}

/// On error: the user's function untouched, the errors, and a `_vjp` stub with
/// the right signature, so that callers see only the root cause.
fn fallback(
    item: &ItemFn,
    sig: &Signature,
    error: &syn::Error,
    jvp: Option<TokenStream>,
) -> TokenStream {
    let errors = error.to_compile_error();
    let vjp = stub(emit::header(item, sig));
    let item = untouched(item);
    quote! {
        #item
        #errors
        #vjp
        #jvp
    }
}
