//! `#[custom_vjp(rule)]`: a function whose derivative the user gives.
//!
//! The macro does not look into the body. It generates the same API as
//! `#[differentiate]` — `f_vjp` and `f_forward` — from the user's rule, whose
//! signature is checked at compile time at the user's span: the rule takes the
//! arguments of `f_vjp` (buffers as the call left them, each float buffer
//! followed by its shadow), then the output and the seed, and returns the
//! adjoints of the float parameters taken by value.
//!
//! ```text
//! #[custom_vjp(softplus_rule)]
//! fn softplus(x: f64) -> f64 { x.exp().ln_1p() }
//! fn softplus_rule(x: f64, out: f64, d_out: f64) -> f64 { d_out / (1.0 + (-x).exp()) }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ItemFn;
use syn::spanned::Spanned;

use crate::args::Args;
use crate::diag::{Ctxt, msg};
use crate::emit;
use crate::ir::Role;
use crate::lower::{self, Signature};

/// `#[custom_jvp(rule)]`: `f_jvp` is the user's `rule`, which takes the
/// arguments of `f_jvp` (each float and float buffer parameter followed by
/// its tangent) and returns the output and its tangent. Checked by rustc at
/// the rule's path, like `custom_vjp`'s.
pub(crate) fn custom_jvp(args: TokenStream, input: TokenStream) -> TokenStream {
    let (item, cx, rule) = match parsed(
        args,
        input,
        msg::CUSTOM_JVP_NOT_A_FUNCTION,
        msg::CUSTOM_JVP_ARGS,
    ) {
        Ok(parsed) => parsed,
        Err(tokens) => return tokens,
    };
    let sig = lower::signature(&cx, &item, &Args::default());
    unsupported_params(&cx, &sig);
    match (cx.check(), rule) {
        (Ok(()), Some(rule)) => {
            let header = emit::jvp_header(&item, &sig, None);
            let all_header = emit::jvp_header_named(&item, &sig, true, None);
            let (names, types): (Vec<_>, Vec<_>) = emit::jvp_params(&sig).into_iter().unzip();
            let names = names.into_iter().map(|name| {
                // `&self` is passed on as `self`.
                if name == "self_" {
                    quote!(self)
                } else {
                    name.to_token_stream()
                }
            });
            let output = &sig.output;
            let returned = sig.seed_ty.as_ref().map(|_| quote!(-> (#output, #output)));
            let span = rule.span();
            let binding = quote_spanned! {span=>
                let rule: fn(#(#types),*) #returned = #rule;
            };
            let names: Vec<TokenStream> = names.collect();
            let lanes = lanes_twin(&item, &sig, &binding);
            // `_jvp_all`, which callers call, is the same (see `emit::Entry`).
            quote! {
                #item
                #header {
                    #binding
                    rule(#(#names),*)
                }
                #all_header {
                    #binding
                    rule(#(#names),*)
                }
                #lanes
            }
        }
        (Err(error), _) => {
            let error = error.to_compile_error();
            quote!(#item #error)
        }
        (Ok(()), None) => unreachable!("a missing rule is an error"),
    }
}

/// For a rule of a function of floats (and integers) returning one float,
/// the `_jvp_lanes_all` that callers differentiated with `jvp_lanes` call:
/// the rule once per lane, each with that lane's tangents (with zero
/// tangents once if there are no lanes, for the output).
fn lanes_twin(item: &ItemFn, sig: &Signature, binding: &TokenStream) -> Option<TokenStream> {
    let floats_only = sig.output_ty.is_float()
        && sig.params.iter().all(|param| {
            !param.is_receiver() && (param.ir_ty.is_float() || param.ir_ty == crate::ir::Ty::Int)
        });
    if !floats_only {
        return None;
    }
    let k = crate::expand::lanes_param(item);
    let header = emit::jvp_header_named(item, sig, true, Some(&k));
    let tangents = crate::jvp::tangent_names(sig);
    let lane_args = |at: TokenStream| -> Vec<TokenStream> {
        let mut args = Vec::new();
        for (param, tangent) in sig.params.iter().zip(&tangents) {
            args.push(emit::ident(&param.name, param.span).to_token_stream());
            if let Some(tangent) = tangent {
                let tangent = emit::ident(tangent, param.span);
                args.push(match &at {
                    at if at.is_empty() => quote!(::ad_runtime::Float::ZERO),
                    at => quote!(#tangent[#at]),
                });
            }
        }
        args
    };
    let per_lane = lane_args(quote!(lane));
    let no_lane = lane_args(TokenStream::new());
    Some(quote! {
        #header {
            #binding
            if #k == 0 {
                let (out, _) = rule(#(#no_lane),*);
                return (out, ::ad_runtime::Lanes::ZERO);
            }
            let mut t_out = ::ad_runtime::Lanes::ZERO;
            let mut out = ::ad_runtime::Float::ZERO;
            for lane in 0..#k {
                let (value, tangent) = rule(#(#per_lane),*);
                out = value;
                t_out[lane] = tangent;
            }
            (out, t_out)
        }
    })
}

pub(crate) fn custom_vjp(args: TokenStream, input: TokenStream) -> TokenStream {
    let (item, cx, rule) = match parsed(args, input, msg::CUSTOM_NOT_A_FUNCTION, msg::CUSTOM_ARGS) {
        Ok(parsed) => parsed,
        Err(tokens) => return tokens,
    };
    let sig = lower::signature(&cx, &item, &Args::default());
    unsupported_params(&cx, &sig);
    if sig.output_ty.elem().is_some() {
        cx.error_spanned_by(&item.sig.output, msg::CUSTOM_BUFFER_OUTPUT);
    }
    match (cx.check(), rule) {
        (Ok(()), Some(rule)) => {
            let vjp = vjp(&item, &sig, &rule);
            // What callers call (see `emit::Entry`) is the same function.
            let all = forward(&item, &sig, &rule, emit::Entry::All);
            let forward = forward(&item, &sig, &rule, emit::Entry::Forward);
            quote!(#item #vjp #forward #all)
        }
        (Err(error), _) => {
            let error = error.to_compile_error();
            quote!(#item #error)
        }
        (Ok(()), None) => unreachable!("a missing rule is an error"),
    }
}

/// A rule's buffers are flat: the callers of a function with a custom rule
/// pass what they hold, and they hold rows flat. Arrays by value, which
/// `f_vjp` would return the adjoints of, are not supported either.
fn unsupported_params(cx: &Ctxt, sig: &Signature) {
    for param in &sig.params {
        if param.rows.is_some() {
            cx.error_spanned_by(param.outer_ty(), msg::CUSTOM_ROWS);
        } else if param.by_value.is_some() {
            cx.error_spanned_by(param.outer_ty(), msg::CUSTOM_ARRAY_BY_VALUE);
        }
    }
}

/// The function and the rule's path, with a context holding the error if
/// there is no path; or, for something that is not a function, the error
/// and the input as it was.
fn parsed(
    args: TokenStream,
    input: TokenStream,
    not_a_function: &str,
    no_rule: &str,
) -> Result<(ItemFn, Ctxt, Option<syn::Path>), TokenStream> {
    let Ok(item) = syn::parse2::<ItemFn>(input.clone()) else {
        let mut tokens = syn::Error::new(Span::call_site(), not_a_function).to_compile_error();
        tokens.extend(input);
        return Err(tokens);
    };
    let cx = Ctxt::new();
    let rule = match syn::parse2::<syn::Path>(args.clone()) {
        Ok(rule) => Some(rule),
        Err(_) => {
            cx.error_spanned_by(&args, no_rule);
            if args.is_empty() {
                cx.push(syn::Error::new(Span::call_site(), no_rule));
            }
            None
        }
    };
    Ok((item, cx, rule))
}

/// `let rule: fn(…) -> … = user_rule;`: the pairing, checked by rustc at the
/// rule's path.
fn rule_binding(sig: &Signature, rule: &syn::Path) -> TokenStream {
    let mut params = Vec::new();
    for param in &sig.params {
        params.push(emit::shared(&param.ty));
        if let Some(shadow) = &param.shadow {
            params.push(shadow.ty.to_token_stream());
        }
    }
    if let Some(seed) = &sig.seed_ty {
        params.push(sig.output.to_token_stream());
        params.push(seed.to_token_stream());
    }
    let adjoints = emit::adjoint_types(sig);
    let span = rule.span();
    quote_spanned! {span=>
        let rule: fn(#(#params),*) #adjoints = #rule;
    }
}

/// The arguments of the call of the function itself.
fn primal_args(sig: &Signature) -> Vec<TokenStream> {
    sig.params
        .iter()
        .map(|param| emit::ident(&param.name, param.span).to_token_stream())
        .collect()
}

/// The arguments of the rule: each parameter (its shadow after it), the
/// output, the seed.
fn rule_args(sig: &Signature, out: &TokenStream) -> Vec<TokenStream> {
    let mut args = Vec::new();
    for param in &sig.params {
        // A `&mut` buffer is passed as `&`: the rule reads what the call left.
        args.push(emit::ident(&param.name, param.span).to_token_stream());
        if let Some(shadow) = &param.shadow {
            args.push(emit::ident(&shadow.name, param.span).to_token_stream());
        }
    }
    if sig.seed_ty.is_some() {
        args.push(out.clone());
        args.push(emit::ident(&sig.seed_name, sig.ident.span()).to_token_stream());
    }
    args
}

/// The names the adjoints are bound to: `d_x` for `x`.
fn adjoint_names(sig: &Signature) -> Vec<TokenStream> {
    sig.params
        .iter()
        .filter(|param| param.role == Role::Active && !param.ir_ty.is_by_reference())
        .map(|param| emit::ident(&format!("d_{}", param.name), param.span).to_token_stream())
        .collect()
}

fn vjp(item: &ItemFn, sig: &Signature, rule: &syn::Path) -> TokenStream {
    let header = emit::header(item, sig);
    let binding = rule_binding(sig, rule);
    let out = emit::ident(&fresh(sig, "out"), sig.ident.span()).to_token_stream();
    let rule_args = rule_args(sig, &out);
    let names = adjoint_names(sig);
    let mut returned = Vec::new();
    if sig.seed_ty.is_some() {
        returned.push(out.clone());
    }
    returned.extend(names.iter().cloned());
    let result = match returned.as_slice() {
        [] => TokenStream::new(),
        [single] => single.clone(),
        returned => quote!((#(#returned),*)),
    };
    let call = match names.as_slice() {
        [] => quote!(rule(#(#rule_args),*);),
        [single] => quote!(let #single = rule(#(#rule_args),*);),
        names => quote!(let (#(#names),*) = rule(#(#rule_args),*);),
    };
    let output = call_function(item, sig, &out);
    quote! {
        #header {
            #binding
            #output
            #call
            #result
        }
    }
}

/// The most arguments taken by value of a custom rule whose callers in
/// loops rebuild its pullback: `ad_runtime`'s `Build` has impls up to this
/// arity (`kept.rs`, `build_impls!`).
const MAX_BUILT_ARGS: usize = 12;

fn forward(item: &ItemFn, sig: &Signature, rule: &syn::Path, entry: emit::Entry) -> TokenStream {
    let pullback_ty = emit::pullback_trait(sig);
    let binding = rule_binding(sig, rule);
    let out = emit::ident(&fresh(sig, "out"), sig.ident.span()).to_token_stream();
    let params = emit::pullback_params(sig);
    let rule_args = rule_args(sig, &out);
    let adjoint_ty = emit::adjoint_types(sig);
    let returned = if sig.seed_ty.is_some() {
        out.clone()
    } else {
        quote!(())
    };
    let output = call_function(item, sig, &out);
    // The rule is bound in the closure, which then captures the call's
    // values only, not a pointer to the rule.
    let pullback = quote!(move |#(#params),*| #adjoint_ty { #binding rule(#(#rule_args),*) });
    let by_value: Vec<_> = sig
        .params
        .iter()
        .filter(|param| !param.ir_ty.is_by_reference())
        .collect();
    // The runtime's `Build` is implemented for builders of at most
    // `MAX_BUILT_ARGS` arguments; with more, callers get the plain closure
    // and make the call again, as for any callee.
    if entry == emit::Entry::Forward || by_value.len() > MAX_BUILT_ARGS {
        let header = emit::forward_header(item, sig, &pullback_ty, entry, None);
        return quote! {
            #header {
                #output
                (#returned, #pullback)
            }
        };
    }
    // What callers call: the pullback built by a closure from the arguments
    // taken by value and the output, which a caller in a loop keeps in place
    // of the pullback (`ad_runtime`'s `kept.rs`).
    let arg_tys = by_value.iter().map(|param| &param.ty);
    let args_ty = quote!((#(#arg_tys,)*));
    let names: Vec<_> = by_value
        .iter()
        .map(|param| emit::ident(&param.name, param.span))
        .collect();
    let (out_ty, out_param) = match sig.seed_ty {
        Some(_) => {
            let output = &sig.output;
            (quote!(#output), quote!(#out: #output))
        }
        None => (quote!(()), quote!(_: ())),
    };
    let header = emit::forward_header(item, sig, &pullback_ty, entry, Some((&args_ty, &out_ty)));
    let build = emit::ident(&fresh(sig, "build"), sig.ident.span());
    let arg_params = by_value.iter().zip(&names).map(|(param, name)| {
        let ty = &param.ty;
        quote!(#name: #ty)
    });
    quote! {
        #header {
            #output
            let #build = |#(#arg_params,)* #out_param| #pullback;
            (#returned, ::ad_runtime::__private::Rule::new(#build, (#(#names,)*), #returned))
        }
    }
}

/// `let out = f(args…);`, or `f(args…);` for a function returning nothing.
fn call_function(item: &ItemFn, sig: &Signature, out: &TokenStream) -> TokenStream {
    let function = &item.sig.ident;
    let args = primal_args(sig);
    if sig.seed_ty.is_some() {
        quote!(let #out = #function(#(#args),*);)
    } else {
        quote!(#function(#(#args),*);)
    }
}

/// `base` (`out`), or `out_` (…) if a parameter is called that.
fn fresh(sig: &Signature, base: &str) -> String {
    let mut name = base.to_owned();
    while sig
        .params
        .iter()
        .any(|param| param.name == name || param.shadow.as_ref().is_some_and(|s| s.name == name))
        || name == sig.seed_name
    {
        name.push('_');
    }
    name
}
