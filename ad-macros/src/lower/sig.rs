//! The signature: which parameters are active, and what the output is.

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type};

use crate::args::Args;
use crate::diag::{Ctxt, msg};
use crate::ir::{Role, Scalar, Ty};

/// The user's function signature, classified. Built even when it has errors, so
/// that the fallback expansion can still emit a `_vjp` stub of the right shape.
pub(crate) struct Signature {
    pub(crate) ident: Ident,
    pub(crate) params: Vec<SigParam>,
    /// The user's return type, as written (`()` if there is none).
    pub(crate) output: Type,
    pub(crate) output_ty: Ty,
    /// Name of the seed parameter: `d_out`, unless a parameter is called that.
    pub(crate) seed_name: String,
}

pub(crate) struct SigParam {
    /// The name without `r#`.
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) ty: Type,
    pub(crate) ir_ty: Ty,
    pub(crate) role: Role,
}

impl Signature {
    pub(crate) fn vjp_ident(&self) -> Ident {
        Ident::new(&format!("{}_vjp", self.ident.unraw()), self.ident.span())
    }

    pub(crate) fn active(&self) -> impl Iterator<Item = &SigParam> {
        self.params
            .iter()
            .filter(|param| param.role == Role::Active)
    }
}

pub(crate) fn signature(cx: &Ctxt, func: &ItemFn, args: &Args) -> Signature {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(&sig.generics, msg::GENERICS);
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(where_clause, msg::GENERICS);
    }
    if let Some(asyncness) = &sig.asyncness {
        cx.error_spanned_by(asyncness, msg::ASYNC);
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        cx.error_spanned_by(unsafety, msg::UNSAFE_FN);
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, msg::EXTERN_FN);
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, msg::VARIADIC);
    }

    let generic_types: Vec<&Ident> = sig
        .generics
        .type_params()
        .map(|param| &param.ident)
        .collect();
    let mut params = Vec::new();
    for (index, arg) in sig.inputs.iter().enumerate() {
        match arg {
            FnArg::Receiver(receiver) => cx.error_spanned_by(receiver, msg::RECEIVER),
            FnArg::Typed(typed) => {
                // One error per parameter: a rejected pattern hides its type.
                let (name, span, pattern_ok) = match &*typed.pat {
                    Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                        (pat.ident.unraw().to_string(), pat.ident.span(), true)
                    }
                    pat => {
                        cx.error_spanned_by(pat, msg::PARAM_PATTERN);
                        (format!("arg{index}"), Span::call_site(), false)
                    }
                };
                let ir_ty = match scalar_type(&typed.ty) {
                    Some(scalar) => scalar.ty(),
                    None => {
                        // A generic parameter's type is covered by the error on the generics.
                        let is_generic = matches!(&*typed.ty, Type::Path(path) if path.path.get_ident().is_some_and(|ident| generic_types.contains(&ident)));
                        if pattern_ok && !is_generic {
                            cx.error_spanned_by(
                                &typed.ty,
                                msg::param_type(&type_string(&typed.ty)),
                            );
                        }
                        Ty::Unknown
                    }
                };
                let role = if ir_ty.is_float() {
                    Role::Active
                } else {
                    Role::Constant
                };
                params.push(SigParam {
                    name,
                    span,
                    ty: (*typed.ty).clone(),
                    ir_ty,
                    role,
                });
            }
        }
    }
    if let Some(wrt) = &args.wrt {
        select_wrt(cx, &sig.ident, &mut params, wrt);
    }

    let (output, output_ty) = match &sig.output {
        ReturnType::Type(_, ty) => {
            let ir_ty = output_type(ty);
            match (&ir_ty, &**ty) {
                (Some(_), _) => {}
                // The error on the generics covers `-> T`.
                (None, Type::Path(path))
                    if path
                        .path
                        .get_ident()
                        .is_some_and(|ident| generic_types.contains(&ident)) => {}
                // Point at the element that is not a float.
                (None, Type::Tuple(tuple)) if !tuple.elems.is_empty() => {
                    for elem in &tuple.elems {
                        if !scalar_type(elem)
                            .map(Scalar::ty)
                            .is_some_and(|ty| ty.is_float())
                        {
                            cx.error_spanned_by(elem, msg::RETURN_TYPE);
                        }
                    }
                }
                (None, _) => cx.error_spanned_by(ty, msg::RETURN_TYPE),
            }
            ((**ty).clone(), ir_ty.unwrap_or(Ty::Unknown))
        }
        ReturnType::Default => {
            cx.error_spanned_by(&sig.ident, msg::RETURN_TYPE);
            (syn::parse_quote!(()), Ty::Unknown)
        }
    };

    let mut seed_name = "d_out".to_owned();
    while params.iter().any(|param| param.name == seed_name) {
        seed_name.push('_');
    }
    Signature {
        ident: sig.ident.clone(),
        params,
        output,
        output_ty,
        seed_name,
    }
}

fn select_wrt(cx: &Ctxt, func: &Ident, params: &mut [SigParam], wrt: &[Ident]) {
    for (position, ident) in wrt.iter().enumerate() {
        let name = ident.unraw().to_string();
        if wrt[..position]
            .iter()
            .any(|earlier| earlier.unraw() == name)
        {
            cx.error_spanned_by(ident, msg::wrt_duplicate(&name));
            continue;
        }
        match params.iter().find(|param| param.name == name) {
            None => cx.error_spanned_by(ident, msg::wrt_unknown(&name, &func.to_string())),
            Some(param) if !param.ir_ty.is_float() && param.ir_ty != Ty::Unknown => {
                cx.error_spanned_by(ident, msg::wrt_not_float(&name, &type_string(&param.ty)));
            }
            Some(_) => {}
        }
    }
    for param in params.iter_mut().filter(|param| param.role == Role::Active) {
        if !wrt.iter().any(|ident| ident.unraw() == param.name) {
            param.role = Role::Constant;
        }
    }
}

/// A type as users write it in messages: `&mut f64`, `(f64, f64)`, `&[f64]`.
pub(crate) fn type_string(ty: &Type) -> String {
    let spaced = ty.to_token_stream().to_string();
    let chars: Vec<char> = spaced.chars().collect();
    let mut shown = String::new();
    let mut in_lifetime = false;
    for (index, &c) in chars.iter().enumerate() {
        let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
        // Keep a space only between two words (`mut f64`, `dyn Fn`) and after
        // a lifetime (`&'a [f64]`).
        let after_word = word(chars.get(index.wrapping_sub(1)));
        if c == ' ' && !(after_word && (in_lifetime || word(chars.get(index + 1)))) {
            in_lifetime = false;
            continue;
        }
        if c == '\'' {
            in_lifetime = true;
        } else if !word(Some(&c)) {
            in_lifetime = false;
        }
        shown.push(c);
        if c == ',' {
            shown.push(' ');
        }
    }
    shown
}

/// `f32`, `f64`, an integer type or `bool`, written as a plain path.
pub(crate) fn scalar_type(ty: &Type) -> Option<Scalar> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let ident = path.path.get_ident()?;
            Scalar::from_name(&ident.to_string())
        }
        Type::Paren(paren) => scalar_type(&paren.elem),
        Type::Group(group) => scalar_type(&group.elem),
        _ => None,
    }
}

fn output_type(ty: &Type) -> Option<Ty> {
    match ty {
        Type::Tuple(tuple) if !tuple.elems.is_empty() => {
            let elems: Option<Vec<Ty>> = tuple
                .elems
                .iter()
                .map(|elem| scalar_type(elem).map(Scalar::ty).filter(Ty::is_float))
                .collect();
            elems.map(Ty::Tuple)
        }
        _ => scalar_type(ty).map(Scalar::ty).filter(Ty::is_float),
    }
}
