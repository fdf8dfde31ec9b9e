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
    /// `T` of `fn f<T: Float>`: the float type the function is generic over.
    pub(crate) float_param: Option<Ident>,
    pub(crate) params: Vec<SigParam>,
    /// The user's return type, as written (`()` if there is none).
    pub(crate) output: Type,
    pub(crate) output_ty: Ty,
    /// Name of the seed parameter: `d_out`, unless a parameter is called that.
    pub(crate) seed_name: String,
    /// Type of the seed: the output type, `&[T]` for `Vec<T>`, `&[T; N]` for
    /// `[T; N]`; `None` when the function returns nothing.
    pub(crate) seed_ty: Option<Type>,
}

pub(crate) struct SigParam {
    /// The name without `r#`.
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) ty: Type,
    pub(crate) ir_ty: Ty,
    pub(crate) role: Role,
    /// A buffer taken by `&mut`.
    pub(crate) mutable: bool,
    /// For an active buffer, the shadow `_vjp` takes right after it.
    pub(crate) shadow: Option<ShadowParam>,
    /// An array taken by value (`a: [f64; 3]`), as the user wrote it. Inside
    /// the generated functions it is a buffer like `a: &[f64; 3]` (`ty`),
    /// bound by `emit::header::by_value_prologue` from the parameter of this type.
    pub(crate) by_value: Option<Type>,
    /// A buffer of rows (`pts: &[[f64; 2]]`, `&mut [[T; N]; M]`): inside the
    /// generated functions it is the flat buffer `ty` (`&[f64]`), bound by
    /// `emit::header::by_value_prologue` with `as_flattened`.
    pub(crate) rows: Option<RowsParam>,
    /// A parameter of another type taken by value (`kind: Activation`):
    /// constant data that the body can only match on (see `opaque_type`).
    pub(crate) opaque: bool,
    /// A tuple taken apart where it is taken, `(p, v): (f64, f64)`: the
    /// name each element is bound to (`None` for `_`). The generated
    /// functions name the parameter after them (`p_v`).
    pub(crate) elements: Option<Vec<Option<String>>>,
}

/// How a buffer of rows is written: the parameter's type and the length of
/// a row.
pub(crate) struct RowsParam {
    pub(crate) outer: Type,
    pub(crate) width: syn::Expr,
    /// `&[Vec<T>]` or `&Vec<Vec<T>>`, or a slice or `Vec` of tuples
    /// `(T, T)` (and their `&mut` forms): the rows are copied into one flat
    /// buffer on entry (and copied back on exit if they are `&mut`); for
    /// `Vec` rows `width` names the row length the copy found.
    pub(crate) vecs: bool,
}

/// The shadow of an active buffer parameter: `d_xs: &mut [f64]`.
pub(crate) struct ShadowParam {
    pub(crate) name: String,
    pub(crate) ty: Type,
}

impl RowsParam {
    /// Whether the hidden twins callers call take the rows flat, as callers
    /// hold them: rows of a width known from the type (arrays, tuples), not
    /// `Vec` rows, whose width the copy finds.
    pub(crate) fn passed_flat(&self) -> bool {
        !self.vecs || matches!(self.width, syn::Expr::Lit(_))
    }
}

impl SigParam {
    /// Whether this is the `&self` of a method.
    pub(crate) fn is_receiver(&self) -> bool {
        self.name == "self" && self.ir_ty == Ty::Struct
    }

    /// The type generated signatures give the parameter: the user's.
    pub(crate) fn outer_ty(&self) -> &Type {
        match (&self.by_value, &self.rows) {
            (Some(array), _) => array,
            (None, Some(rows)) => &rows.outer,
            (None, None) => &self.ty,
        }
    }

    /// Whether `_vjp` returns this parameter's adjoint (a float, or an
    /// active array taken by value) rather than adding it into a shadow.
    pub(crate) fn adjoint_returned(&self) -> bool {
        self.role == Role::Active && (self.shadow.is_none() || self.by_value.is_some())
    }
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
    let float_param = float_param(&sig.generics);
    if float_param.is_none() && !sig.generics.params.is_empty() {
        cx.error_spanned_by(&sig.generics, msg::GENERICS);
    } else if let Some(where_clause) = &sig.generics.where_clause
        && !where_clause.predicates.is_empty()
        && float_param.is_none()
    {
        cx.error_spanned_by(where_clause, msg::GENERICS);
    }
    let generic = float_param.as_ref();
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
            // `&self`: a parameter struct, like `p: &Params`.
            FnArg::Receiver(receiver)
                if matches!(receiver.kind, syn::ReceiverKind::Reference(_, _, None)) =>
            {
                params.push(SigParam {
                    elements: None,
                    by_value: None,
                    rows: None,
                    opaque: false,
                    name: "self".to_owned(),
                    span: receiver.self_token.span,
                    ty: syn::parse_quote!(&Self),
                    ir_ty: Ty::Struct,
                    role: Role::Active,
                    mutable: false,
                    shadow: Some(ShadowParam {
                        name: String::new(),
                        ty: syn::parse_quote!(&mut Self),
                    }),
                });
            }
            FnArg::Receiver(receiver) => cx.error_spanned_by(receiver, msg::RECEIVER),
            FnArg::Typed(typed) => {
                // One error per parameter: a rejected pattern hides its type.
                let mut elements = None;
                let (name, span, pattern_ok) = match &*typed.pat {
                    Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                        if let Some(mutability) = pat.mutability
                            && array_by_value(&typed.ty, generic).is_some()
                        {
                            cx.error_spanned_by(mutability, msg::MUT_ARRAY_PARAM);
                        }
                        (pat.ident.unraw().to_string(), pat.ident.span(), true)
                    }
                    Pat::Tuple(tuple)
                        if number_tuple(&typed.ty, generic).is_some()
                            && let Some(names) = element_names(tuple) =>
                    {
                        elements = Some(names);
                        let name = elements
                            .iter()
                            .flatten()
                            .map(|name| name.as_deref().unwrap_or("_"))
                            .collect::<Vec<_>>()
                            .join("_");
                        (name, tuple.paren_token.span.join(), true)
                    }
                    pat => {
                        cx.error_spanned_by(pat, msg::PARAM_PATTERN);
                        (format!("arg{index}"), Span::call_site(), false)
                    }
                };
                // `a: [f64; 3]` is the buffer `a: &[f64; 3]` inside.
                let by_value = array_by_value(&typed.ty, generic);
                let ty = match &by_value {
                    Some(array) => syn::parse_quote!(&#array),
                    None => (*typed.ty).clone(),
                };
                // `pts: &[[f64; 2]]` is the flat buffer `pts: &[f64]` inside.
                let rows = rows_param(&ty, generic);
                let ty = match &rows {
                    Some((rows, ..)) => rows.clone(),
                    None => ty,
                };
                let rows = rows.map(|(_, width, vecs)| {
                    // The width of `Vec` rows, bound by the prologue with
                    // these very tokens.
                    let width = width.unwrap_or_else(|| {
                        let width = Ident::new(&format!("__ad_width_{name}"), span);
                        syn::parse_quote!(#width)
                    });
                    RowsParam {
                        outer: (*typed.ty).clone(),
                        width,
                        vecs,
                    }
                });
                let buffer = buffer_param(&ty, generic).or_else(|| struct_param(&ty));
                let mut opaque = false;
                let ir_ty = match (scalar_type(&typed.ty, generic), &buffer) {
                    (Some(scalar), _) => scalar.ty(),
                    // `state: (f64, f64)`: a tuple of floats, by value.
                    (None, None) if let Some(elems) = number_tuple(&typed.ty, generic) => {
                        match elems {
                            Ok(elems) => Ty::Tuple(elems.into_iter().map(Scalar::ty).collect()),
                            Err(()) => {
                                cx.error_spanned_by(&typed.ty, msg::TUPLE_PARAM_MIXED);
                                Ty::Unknown
                            }
                        }
                    }
                    (None, Some(buffer)) if buffer.is_struct => Ty::Struct,
                    (None, Some(buffer)) => Ty::Buf(Box::new(buffer.elem.ty())),
                    (None, None) => {
                        // A generic parameter's type is covered by the error on the generics.
                        let is_generic = matches!(&*typed.ty, Type::Path(path) if path.path.get_ident().is_some_and(|ident| generic_types.contains(&ident)));
                        if pattern_ok && !is_generic && opaque_type(&typed.ty) {
                            opaque = true;
                        } else if pattern_ok && is_fn_type(&typed.ty) {
                            cx.error_spanned_by(&typed.ty, msg::FN_PARAM);
                        } else if pattern_ok && is_mut_struct(&typed.ty) {
                            cx.error_spanned_by(&typed.ty, msg::MUT_STRUCT);
                        } else if pattern_ok && let Some(elem) = vec_elem(&typed.ty) {
                            cx.error_spanned_by(&typed.ty, msg::vec_param(&type_string(elem)));
                        } else if pattern_ok && let Some(elem) = struct_elem(&typed.ty) {
                            cx.error_spanned_by(
                                &typed.ty,
                                msg::struct_buffer(&type_string(&typed.ty), &type_string(elem)),
                            );
                        } else if pattern_ok && !is_generic {
                            cx.error_spanned_by(
                                &typed.ty,
                                msg::param_type(&type_string(&typed.ty)),
                            );
                        }
                        Ty::Unknown
                    }
                };
                let role = if ir_ty.can_be_active() {
                    Role::Active
                } else {
                    Role::Constant
                };
                let shadow_ty = |buffer: BufferParam| match &rows {
                    // The shadow of a buffer of rows is rows too.
                    // `m: [[f64; 3]; 3]` by value: `&mut [[f64; 3]; 3]`.
                    Some(rows) if by_value.is_some() => {
                        let outer = &rows.outer;
                        syn::parse_quote!(&mut #outer)
                    }
                    Some(rows) => {
                        let syn::Type::Reference(outer) = &rows.outer else {
                            unreachable!("rows are taken by reference")
                        };
                        match vec_elem(&outer.elem) {
                            // `&Vec<[T; N]>`: a slice, as for `&Vec<T>`.
                            Some(row) => syn::parse_quote!(&mut [#row]),
                            None => {
                                let elem = &outer.elem;
                                syn::parse_quote!(&mut #elem)
                            }
                        }
                    }
                    None => buffer.shadow_ty,
                };
                let mutable = buffer.as_ref().is_some_and(|buffer| buffer.mutable);
                let shadow = buffer.map(|buffer| ShadowParam {
                    name: String::new(),
                    ty: shadow_ty(buffer),
                });
                params.push(SigParam {
                    elements,
                    by_value: by_value.cloned(),
                    rows,
                    opaque,
                    name,
                    span,
                    ty,
                    ir_ty,
                    role,
                    mutable,
                    shadow,
                });
            }
        }
    }
    if let Some(wrt) = &args.wrt {
        select_wrt(cx, &sig.ident, &mut params, wrt);
    }

    let takes_mut_buffer = params
        .iter()
        .any(|param| param.mutable && param.ir_ty.is_float_buf());
    let (output, output_ty, seed_ty) = match &sig.output {
        ReturnType::Type(_, ty) if is_unit(ty) && takes_mut_buffer => {
            ((**ty).clone(), Ty::Unit, None)
        }
        ReturnType::Type(_, ty) => {
            let ir_ty = output_type(ty, generic);
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
                        if !scalar_type(elem, generic)
                            .map(Scalar::ty)
                            .is_some_and(|ty| ty.is_float())
                        {
                            cx.error_spanned_by(elem, msg::RETURN_TYPE);
                        }
                    }
                }
                (None, _) if is_matrix_type(ty) => cx.error_spanned_by(ty, msg::RETURN_MATRIX),
                (None, _) => cx.error_spanned_by(ty, msg::RETURN_TYPE),
            }
            let seed_ty = seed_type(ty);
            ((**ty).clone(), ir_ty.unwrap_or(Ty::Unknown), Some(seed_ty))
        }
        ReturnType::Default if takes_mut_buffer => (syn::parse_quote!(()), Ty::Unit, None),
        ReturnType::Default => {
            cx.error_spanned_by(&sig.ident, msg::RETURN_TYPE);
            (
                syn::parse_quote!(()),
                Ty::Unknown,
                Some(syn::parse_quote!(())),
            )
        }
    };

    // A tuple taken apart is named after its elements (`p_v`): never as
    // another parameter is.
    for at in 0..params.len() {
        if params[at].elements.is_some() {
            let others: Vec<String> = params
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != at)
                .map(|(_, param)| param.name.clone())
                .collect();
            params[at].name = fresh_name(&params[at].name, &others);
        }
    }
    // Generated parameter names never repeat a parameter's.
    let mut taken: Vec<String> = params.iter().map(|param| param.name.clone()).collect();
    for param in &mut params {
        if param.role != Role::Active {
            param.shadow = None;
        }
        if let Some(shadow) = &mut param.shadow {
            shadow.name = fresh_name(&format!("d_{}", param.name), &taken);
            taken.push(shadow.name.clone());
        }
    }
    let seed_name = fresh_name("d_out", &taken);
    Signature {
        ident: sig.ident.clone(),
        float_param,
        params,
        output,
        output_ty,
        seed_name,
        seed_ty,
    }
}

/// `base`, or `base_`, `base__`, … if that is taken.
fn fresh_name(base: &str, taken: &[String]) -> String {
    let mut name = base.to_owned();
    while taken.contains(&name) {
        name.push('_');
    }
    name
}

fn is_unit(ty: &Type) -> bool {
    matches!(ty, Type::Tuple(tuple) if tuple.elems.is_empty())
}

/// A buffer parameter: its element type, whether it is `&mut`, and the type
/// of its shadow.
struct BufferParam {
    elem: Scalar,
    mutable: bool,
    shadow_ty: Type,
    /// A parameter struct rather than a buffer (`elem` is meaningless).
    is_struct: bool,
}

/// `&mut Params`: a struct the function would change.
fn is_mut_struct(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) if reference.mutability.is_some() => {
            let mut shared = reference.clone();
            shared.mutability = None;
            struct_param(&Type::Reference(shared)).is_some()
        }
        _ => false,
    }
}

/// `&Params`: a reference to a struct (a path that names no float, integer
/// or `Vec`), whose shadow is `&mut Params`.
fn struct_param(ty: &Type) -> Option<BufferParam> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    let Type::Path(path) = &*reference.elem else {
        return None;
    };
    let last = path.path.segments.last()?;
    let name = last.ident.to_string();
    if reference.mutability.is_some()
        || path.qself.is_some()
        || Scalar::from_name(&name).is_some()
        || name == "Vec"
        || name == "str"
        || name == "String"
    {
        return None;
    }
    let elem = &reference.elem;
    Some(BufferParam {
        elem: Scalar::Float,
        mutable: false,
        shadow_ty: syn::parse_quote!(&mut #elem),
        is_struct: true,
    })
}

/// `&[T]`, `&Vec<T>`, `&[T; N]`, or their `&mut` forms. The shadow is
/// `&mut [T]`, or `&mut [T; N]` for an array.
fn buffer_param(ty: &Type, generic: Option<&Ident>) -> Option<BufferParam> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    let (elem, shadow_ty) = match &*reference.elem {
        Type::Slice(slice) => {
            let elem_ty = &slice.elem;
            (
                scalar_type(elem_ty, generic)?,
                syn::parse_quote!(&mut [#elem_ty]),
            )
        }
        Type::Array(array) => {
            let (elem_ty, len) = (&array.elem, &array.len);
            (
                scalar_type(elem_ty, generic)?,
                syn::parse_quote!(&mut [#elem_ty; #len]),
            )
        }
        other => {
            let elem_ty = vec_elem(other)?;
            (
                scalar_type(elem_ty, generic)?,
                syn::parse_quote!(&mut [#elem_ty]),
            )
        }
    };
    Some(BufferParam {
        elem,
        mutable: reference.mutability.is_some(),
        shadow_ty,
        is_struct: false,
    })
}

/// `&[[T; N]]`, `&[[T; N]; M]`, `&Vec<[T; N]>`, `&[Vec<T>]`,
/// `&Vec<Vec<T>>`, `&[(T, T)]` or their `&mut` forms, of numbers: the flat
/// buffer it is inside (`&[T]`, `&mut [T]`), `N` (`None` for rows that are
/// `Vec`s, whose length is known at run time only), and whether the rows
/// are copied flat on entry (`Vec`s and tuples) rather than viewed so.
fn rows_param(ty: &Type, generic: Option<&Ident>) -> Option<(Type, Option<syn::Expr>, bool)> {
    let (reference, row) = referenced_elem(ty)?;
    let (elem, width) = match row {
        Type::Array(row) => (&*row.elem, Some(row.len.clone())),
        // `Vec` rows, or tuples of one number type (`&[(f64, f64)]`), of a
        // slice or a `Vec`, not of an array: copied flat on entry.
        row if !matches!(&*reference.elem, Type::Array(_)) => match row {
            Type::Tuple(tuple)
                if (2..=6).contains(&tuple.elems.len())
                    && tuple.elems.iter().all(|elem| elem == &tuple.elems[0]) =>
            {
                let width = tuple.elems.len();
                (&tuple.elems[0], Some(syn::parse_quote!(#width)))
            }
            row => (vec_elem(row)?, None),
        },
        _ => return None,
    };
    let copied = !matches!(row, Type::Array(_));
    scalar_type(elem, generic)?;
    let flat = match reference.mutability {
        Some(_) => syn::parse_quote!(&mut [#elem]),
        None => syn::parse_quote!(&[#elem]),
    };
    Some((flat, width, copied))
}

/// `[T; N]` of numbers, or `[[T; N]; M]` (rows), taken by value.
fn array_by_value<'a>(ty: &'a Type, generic: Option<&Ident>) -> Option<&'a Type> {
    match ty {
        Type::Array(array) if scalar_type(&array.elem, generic).is_some() => Some(ty),
        Type::Array(array) if matches!(&*array.elem, Type::Array(row) if scalar_type(&row.elem, generic).is_some()) => {
            Some(ty)
        }
        Type::Paren(paren) => array_by_value(&paren.elem, generic),
        _ => None,
    }
}

/// A type taken by value that is neither a float, an integer, a `bool`, an
/// array nor a `Vec` (`kind: Activation`, `mode: solver::Mode`,
/// `k: Option<usize>`): constant data whose floats, if it holds any, get no
/// adjoint. The body can only match on it (`match kind { Act::Relu => … }`,
/// `matches!`, `if let Act::Relu = kind`, `kind == Act::Relu`), print it and
/// pass it on, so no value read from it reaches the output; any other use is
/// an error.
fn opaque_type(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.qself.is_none() && vec_elem(ty).is_none(),
        Type::Paren(paren) => opaque_type(&paren.elem),
        _ => false,
    }
}

/// `Particle` of `&[Particle]`, `&mut Vec<Particle>` or `&[Particle; N]`: a
/// buffer whose elements are a type of the user's (a path naming no number,
/// `Vec` or other type the macro knows).
fn struct_elem(ty: &Type) -> Option<&Type> {
    let (_, elem) = referenced_elem(ty)?;
    let Type::Path(path) = elem else {
        return None;
    };
    let name = path.path.segments.last()?.ident.to_string();
    let known = Scalar::from_name(&name).is_some()
        || ["Vec", "Option", "Box", "String", "str"].contains(&name.as_str());
    (!known && path.qself.is_none()).then_some(elem)
}

/// The reference and the element type of `&[T]`, `&[T; N]`, `&Vec<T>` or
/// their `&mut` forms.
fn referenced_elem(ty: &Type) -> Option<(&syn::TypeReference, &Type)> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    let elem = match &*reference.elem {
        Type::Slice(slice) => &*slice.elem,
        Type::Array(array) => &*array.elem,
        other => vec_elem(other)?,
    };
    Some((reference, elem))
}

/// `T` in `Vec<T>`.
fn vec_elem(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Vec" || path.qself.is_some() {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(elem) => Some(elem),
            _ => None,
        },
        _ => None,
    }
}

/// The type of the seed: `&[T]` for `Vec<T>`, `&[T; N]` for `[T; N]`, the
/// output type itself otherwise.
fn seed_type(output: &Type) -> Type {
    match output {
        Type::Array(array) => syn::parse_quote!(&#array),
        other => match vec_elem(other) {
            Some(elem) => syn::parse_quote!(&[#elem]),
            None => other.clone(),
        },
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
            Some(param) if !param.ir_ty.can_be_active() && param.ir_ty != Ty::Unknown => {
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

/// `f32`, `f64`, an integer type or `bool`, written as a plain path; or the
/// function's float type parameter `generic`.
pub(crate) fn scalar_type(ty: &Type, generic: Option<&Ident>) -> Option<Scalar> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let ident = path.path.get_ident()?;
            if generic == Some(ident) {
                return Some(Scalar::Float);
            }
            Scalar::from_name(&ident.to_string())
        }
        Type::Paren(paren) => scalar_type(&paren.elem, generic),
        Type::Group(group) => scalar_type(&group.elem, generic),
        _ => None,
    }
}

/// The names `(p, v)` or `(x, _, z)` binds, `None` for a pattern that
/// is not one name or `_` per element.
fn element_names(tuple: &syn::PatTuple) -> Option<Vec<Option<String>>> {
    tuple
        .elems
        .iter()
        .map(|elem| match elem {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                Some(Some(pat.ident.unraw().to_string()))
            }
            Pat::Wild(_) => Some(None),
            _ => None,
        })
        .collect()
}

/// `(f64, f64)`, `(T, T, T)`, `(usize, usize)`: a tuple of two or more
/// numbers taken by value, floats of one type (whose adjoint and tangent are
/// tuples too) or integers (constant). `Err` for a tuple that mixes floats
/// with other numbers or float types.
fn number_tuple(ty: &Type, generic: Option<&Ident>) -> Option<Result<Vec<Scalar>, ()>> {
    let Type::Tuple(tuple) = ty else {
        return match ty {
            Type::Paren(paren) => number_tuple(&paren.elem, generic),
            _ => None,
        };
    };
    let elems: Vec<Scalar> = tuple
        .elems
        .iter()
        .map(|elem| scalar_type(elem, generic))
        .collect::<Option<_>>()?;
    if elems.len() < 2 {
        return None;
    }
    let floats = elems.iter().filter(|scalar| scalar.ty().is_float()).count();
    let one_float = elems.windows(2).all(|pair| pair[0] == pair[1]);
    Some(if floats == 0 || (floats == elems.len() && one_float) {
        Ok(elems)
    } else {
        Err(())
    })
}

/// `T` of `<T: Float>` or `<T> … where T: Float` (the runtime's trait, or
/// any trait called `Float`): one type parameter with that bound, and a
/// `where` clause, if any, that bounds only it.
fn float_param(generics: &syn::Generics) -> Option<Ident> {
    let [syn::GenericParam::Type(param)] = generics.params.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let is_float_bound = |bound: &syn::TypeParamBound| {
        matches!(bound, syn::TypeParamBound::Trait(bound)
            if bound.path.segments.last().is_some_and(|segment| segment.ident == "Float"))
    };
    let mut is_float = param.bounds.iter().any(is_float_bound);
    if let Some(where_clause) = &generics.where_clause {
        for predicate in &where_clause.predicates {
            let syn::WherePredicate::Type(predicate) = predicate else {
                return None;
            };
            let bounds_param = matches!(&predicate.bounded_ty, Type::Path(path)
                if path.qself.is_none() && path.path.is_ident(&param.ident));
            if !bounds_param || predicate.lifetimes.is_some() {
                return None;
            }
            is_float |= predicate.bounds.iter().any(is_float_bound);
        }
    }
    (is_float && param.default.is_none()).then(|| param.ident.clone())
}

fn output_type(ty: &Type, generic: Option<&Ident>) -> Option<Ty> {
    let float_buf = |elem: &Type| {
        scalar_type(elem, generic)
            .map(Scalar::ty)
            .filter(Ty::is_float)
            .map(|elem| Ty::Buf(Box::new(elem)))
    };
    match ty {
        Type::Array(array) => float_buf(&array.elem),
        ty if vec_elem(ty).is_some() => float_buf(vec_elem(ty)?),
        Type::Tuple(tuple) if !tuple.elems.is_empty() => {
            let elems: Option<Vec<Ty>> = tuple
                .elems
                .iter()
                .map(|elem| {
                    scalar_type(elem, generic)
                        .map(Scalar::ty)
                        .filter(Ty::is_float)
                })
                .collect();
            elems.map(Ty::Tuple)
        }
        _ => scalar_type(ty, generic)
            .map(Scalar::ty)
            .filter(Ty::is_float),
    }
}

/// Whether a type is a matrix of numbers: `[[f64; 3]; 3]`, `Vec<[f64; 2]>`,
/// `Vec<Vec<f64>>`.
fn is_matrix_type(ty: &Type) -> bool {
    let row = match ty {
        Type::Array(array) => &*array.elem,
        other => match vec_elem(other) {
            Some(row) => row,
            None => return false,
        },
    };
    matches!(row, Type::Array(_)) || vec_elem(row).is_some()
}

/// Whether a type is a function's: `impl Fn(f64) -> f64`, `&dyn Fn(…)`,
/// `fn(f64) -> f64`, `Box<dyn FnMut(…)>`.
fn is_fn_type(ty: &Type) -> bool {
    let is_fn_bound = |bounds: &syn::punctuated::Punctuated<
        syn::TypeParamBound,
        syn::Token![+],
    >| {
        bounds.iter().any(|bound| {
            matches!(bound, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| matches!(s.ident.to_string().as_str(), "Fn" | "FnMut" | "FnOnce")))
        })
    };
    match ty {
        Type::ImplTrait(imp) => is_fn_bound(&imp.bounds),
        Type::TraitObject(object) => is_fn_bound(&object.bounds),
        Type::FnPtr(_) => true,
        Type::Reference(reference) => is_fn_type(&reference.elem),
        Type::Paren(paren) => is_fn_type(&paren.elem),
        Type::Path(path) => path.path.segments.last().is_some_and(|last| {
            last.ident == "Box"
                && matches!(&last.arguments, syn::PathArguments::AngleBracketed(args)
                    if matches!(args.args.first(), Some(syn::GenericArgument::Type(inner)) if is_fn_type(inner)))
        }),
        _ => false,
    }
}
