//! `#[derive(Tangent)]`: the zero and the arithmetic of a parameter struct,
//! field by field (see `ad_runtime::Tangent`).
//!
//! Each field is a float, a float buffer or a `Tangent` struct, or is marked
//! `#[tangent(skip)]`: then the zero clones it and everything else leaves it
//! out. Types that are certainly not floats (integers, `bool`, `String`,
//! references, …) are reported by the derive itself, naming the field and
//! `#[tangent(skip)]`. Every other field of a concrete type gets a bound on
//! the implementation, spanned at the field, so that a type that is not
//! `Tangent` is one error there rather than one per method. Fields of a
//! generic type get none: `T: Float` implies `T: Tangent<Scalar = T>`, so a
//! `struct Lin<T: Float>` needs no more bounds.
//!
//! ```text
//! #[derive(Tangent)]                impl<T: Float> Tangent for Lin<T>
//! struct Lin<T: Float> {        ⇒   where String: Clone, f64: Tangent
//!     w: Vec<T>,                    {
//!     #[tangent(skip)]                  type Scalar = <Vec<T> as Tangent>::Scalar;
//!     name: String,                     fn map_floats(&mut self, mut f: impl FnMut(…) -> …) {
//!     rate: f64,                            Tangent::map_floats(&mut self.w, &mut f);
//! }                                         Tangent::map_floats(&mut self.rate, &mut f);
//!                                       }
//!                                       …
//!                                   }
//! ```
//!
//! (There, `rate: f64` makes the struct `Tangent` only for `T = f64`: all
//! fields share one float type.)

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    Attribute, GenericArgument, Ident, Index, Item, ItemStruct, Member, PathArguments, Type,
    TypeParam, TypeParamBound, WherePredicate,
};

use crate::diag::{Ctxt, msg};

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let item: Item = match syn::parse2(input) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    let Item::Struct(input) = item else {
        return syn::Error::new_spanned(item, msg::TANGENT_NOT_A_STRUCT).to_compile_error();
    };
    let cx = Ctxt::new();
    let fields = fields(&cx, &input);
    let impls = implementation(&cx, &input, &fields);
    match cx.check() {
        Ok(()) => impls,
        // The implementation still comes with the errors, the fields in
        // error left out, so that uses of the struct see only the root cause.
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#error #impls)
        }
    }
}

/// One field of the struct, as the derive sees it.
struct Field<'a> {
    member: Member,
    ty: &'a Type,
    /// `#[tangent(skip)]`, or in error: cloned into the zero, left out of the rest.
    skip: bool,
    /// Whether an error was reported at the field.
    in_error: bool,
}

fn fields<'a>(cx: &Ctxt, input: &'a ItemStruct) -> Vec<Field<'a>> {
    for attr in input.attrs.iter().filter(|attr| is_tangent(attr)) {
        cx.error_spanned_by(attr, msg::TANGENT_ATTRIBUTE_ON_STRUCT);
    }
    input
        .fields
        .iter()
        .enumerate()
        .map(|(index, field)| {
            let member = match &field.ident {
                Some(ident) => Member::Named(ident.clone()),
                None => Member::Unnamed(Index {
                    index: index as u32,
                    span: field.ty.span(),
                }),
            };
            let name = member.to_token_stream().to_string();
            let mut skip = false;
            let mut attr_error = false;
            for attr in field.attrs.iter().filter(|attr| is_tangent(attr)) {
                let message = || msg::TANGENT_ATTRIBUTE.replace("{field}", &name);
                match attr.parse_args::<Ident>() {
                    Ok(word) if word == "skip" => skip = true,
                    Ok(word) => {
                        cx.error_spanned_by(word, message());
                        attr_error = true;
                    }
                    Err(_) => {
                        cx.error_spanned_by(attr, message());
                        attr_error = true;
                    }
                }
            }
            let not_float = !skip && !attr_error && certainly_not_float(&field.ty);
            if not_float {
                cx.error_spanned_by(field, msg::TANGENT_NOT_A_FLOAT.replace("{field}", &name));
            }
            let in_error = attr_error || not_float;
            Field {
                member,
                ty: &field.ty,
                skip: skip || in_error,
                in_error,
            }
        })
        .collect()
}

fn is_tangent(attr: &Attribute) -> bool {
    attr.path().is_ident("tangent")
}

/// Whether `ty` is one no `Tangent` implementation can exist for: integers,
/// `bool`, `char`, strings, `Option`, references, pointers, tuples and
/// functions, or a `Vec` or an array of them. Other types are left to the
/// trait bounds, whose error also lands on the field.
fn certainly_not_float(ty: &Type) -> bool {
    const NOT_FLOATS: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "bool", "char", "str", "String", "Option",
    ];
    match ty {
        Type::Reference(_)
        | Type::Ptr(_)
        | Type::Tuple(_)
        | Type::FnPtr(_)
        | Type::Never(_)
        | Type::TraitObject(_)
        | Type::ImplTrait(_) => true,
        Type::Paren(paren) => certainly_not_float(&paren.elem),
        Type::Group(group) => certainly_not_float(&group.elem),
        Type::Array(array) => certainly_not_float(&array.elem),
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            if NOT_FLOATS.iter().any(|name| last.ident == name) {
                return true;
            }
            match &last.arguments {
                PathArguments::AngleBracketed(args) if last.ident == "Vec" => {
                    args.args.iter().any(|arg| match arg {
                        GenericArgument::Type(elem) => certainly_not_float(elem),
                        _ => false,
                    })
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The struct's float type, `Scalar`, written with public types only where the
/// fields allow: rustc rejects a private type in the `Scalar` of a public
/// struct's implementation, so `<Layer as Tangent>::Scalar` is the last resort.
///
/// In order: the float of the first field that names one (`f64`, `Vec<f32>`,
/// `[T; N]` for a type parameter `T`), the type parameter bounded by `Float`,
/// the first field's `Scalar`.
fn scalar(input: &ItemStruct, fields: &[Field<'_>], first: usize) -> TokenStream {
    let is_float_bounded = |param: &TypeParam| {
        let in_where = input
            .generics
            .where_clause
            .iter()
            .flat_map(|clause| &clause.predicates)
            .filter_map(|predicate| match predicate {
                WherePredicate::Type(predicate) => Some(predicate),
                _ => None,
            })
            .filter(|predicate| is_param(&predicate.bounded_ty, &param.ident))
            .flat_map(|predicate| &predicate.bounds);
        param
            .bounds
            .iter()
            .chain(in_where)
            .any(|bound| match bound {
                TypeParamBound::Trait(bound) => bound
                    .path
                    .segments
                    .last()
                    .is_some_and(|segment| segment.ident == "Float"),
                _ => false,
            })
    };
    let params: Vec<(&Ident, bool)> = input
        .generics
        .type_params()
        .map(|param| (&param.ident, is_float_bounded(param)))
        .collect();
    let float_params: Vec<&Ident> = params
        .iter()
        .filter(|(_, bounded)| *bounded)
        .map(|(ident, _)| *ident)
        .collect();
    let named = fields
        .iter()
        .filter(|field| !field.skip)
        .find_map(|field| named_float(field.ty, &params, true));
    match named {
        Some(float) => float,
        None if float_params.len() == 1 => float_params[0].to_token_stream(),
        None => {
            let first_ty = fields[first].ty;
            quote!(<#first_ty as ::ad_runtime::Tangent>::Scalar)
        }
    }
}

/// The float type `ty` names, if it is `f32`, `f64`, a type parameter bounded by
/// `Float`, or a `Vec` or an array of one of them or of any type parameter
/// (`bare` is false inside a buffer). `params` are the struct's type
/// parameters, each with whether it is bounded by `Float`.
fn named_float(ty: &Type, params: &[(&Ident, bool)], bare: bool) -> Option<TokenStream> {
    match ty {
        Type::Paren(paren) => named_float(&paren.elem, params, bare),
        Type::Group(group) => named_float(&group.elem, params, bare),
        Type::Array(array) => named_float(&array.elem, params, false),
        Type::Path(path) if path.qself.is_none() => {
            if let Some(ident) = path.path.get_ident() {
                let is_float = ident == "f32" || ident == "f64";
                // A bare type parameter is the float only if bounded by `Float`;
                // in a buffer, it must be a float for the buffer to be `Tangent`.
                let is_param = params
                    .iter()
                    .any(|(param, bounded)| *param == ident && (*bounded || !bare));
                return (is_float || is_param).then(|| ident.to_token_stream());
            }
            let last = path.path.segments.last()?;
            let PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            match (last.ident == "Vec", args.args.first()) {
                (true, Some(GenericArgument::Type(elem))) if args.args.len() == 1 => {
                    named_float(elem, params, false)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn is_param(ty: &Type, param: &Ident) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident(param))
}

fn implementation(cx: &Ctxt, input: &ItemStruct, fields: &[Field<'_>]) -> TokenStream {
    let name = &input.ident;
    // Without a float field there is no `Scalar`, so no implementation.
    let Some(first) = fields.iter().position(|field| !field.skip) else {
        if fields.is_empty() {
            cx.error_spanned_by(&input.ident, msg::TANGENT_NO_FIELDS);
        } else if !fields.iter().any(|field| field.in_error) {
            cx.error_spanned_by(&input.ident, msg::TANGENT_ALL_SKIPPED);
        }
        return TokenStream::new();
    };
    let scalar = scalar(input, fields, first);

    // A skipped field is cloned: its type is bounded by `Clone`, which a
    // generic field needs. The others are used through
    // `TangentField<Scalar>` (see its documentation in `ad-runtime`), each
    // use spanned at the field, so that a field of another type is an error
    // there (one: rustc merges the identical errors of its uses).
    let mut generics = input.generics.clone();
    let where_clause = generics.make_where_clause();
    for field in fields.iter().filter(|field| field.skip) {
        let ty = field.ty;
        where_clause
            .predicates
            .push(syn::parse_quote_spanned!(ty.span()=> #ty: ::core::clone::Clone));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    // `<Ty as TangentField<Scalar>>::method`, at the field's span.
    let method = |field: &Field<'_>, method: &str| {
        let ty = field.ty;
        let method = Ident::new(method, Span::call_site());
        quote_spanned!(ty.span()=> <#ty as ::ad_runtime::__private::TangentField<#scalar>>::#method)
    };
    let active: Vec<&Field<'_>> = fields.iter().filter(|field| !field.skip).collect();
    let zeros = fields.iter().map(|field| {
        let member = &field.member;
        if field.skip {
            quote_spanned!(field.ty.span()=> #member: ::core::clone::Clone::clone(&self.#member))
        } else {
            let zero = method(field, "zero");
            quote!(#member: #zero(&self.#member))
        }
    });
    let call = |name: &str, args: &dyn Fn(&Member) -> TokenStream| -> Vec<TokenStream> {
        active
            .iter()
            .map(|field| {
                let method = method(field, name);
                let args = args(&field.member);
                quote!(#method(#args))
            })
            .collect()
    };
    let adds = call("add_scaled", &|m| quote!(&mut self.#m, alpha, &other.#m));
    let dots = call("dot", &|m| quote!(&self.#m, &other.#m));
    let lens = call("n_floats", &|m| quote!(&self.#m));
    let visits = call("for_each_float", &|m| quote!(&self.#m, &mut f));
    let maps = call("map_floats", &|m| quote!(&mut self.#m, &mut f));
    let zips = call(
        "zip_map_floats",
        &|m| quote!(&mut self.#m, &other.#m, &mut f),
    );
    quote! {
        #[automatically_derived]
        impl #impl_generics ::ad_runtime::linalg::ZerosLike for #name #ty_generics #where_clause {
            type Zeros = Self;
            #[inline]
            fn zeros_like(&self) -> Self {
                #name { #(#zeros),* }
            }
        }

        #[automatically_derived]
        impl #impl_generics ::ad_runtime::Tangent for #name #ty_generics #where_clause {
            type Scalar = #scalar;
            #[inline]
            fn add_scaled(&mut self, alpha: Self::Scalar, other: &Self) {
                #(#adds;)*
            }
            #[inline]
            fn dot(&self, other: &Self) -> Self::Scalar {
                <Self::Scalar as ::ad_runtime::Float>::ZERO #(+ #dots)*
            }
            #[inline]
            fn len(&self) -> usize {
                0 #(+ #lens)*
            }
            #[inline]
            fn for_each_float(&self, mut f: impl ::core::ops::FnMut(Self::Scalar)) {
                #(#visits;)*
            }
            #[inline]
            fn map_floats(
                &mut self,
                mut f: impl ::core::ops::FnMut(Self::Scalar) -> Self::Scalar,
            ) {
                #(#maps;)*
            }
            #[inline]
            fn zip_map_floats(
                &mut self,
                other: &Self,
                mut f: impl ::core::ops::FnMut(Self::Scalar, Self::Scalar) -> Self::Scalar,
            ) {
                #(#zips;)*
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::{ToTokens, quote};
    use syn::ItemStruct;

    use super::{certainly_not_float, scalar};
    use crate::diag::Ctxt;

    /// The `Scalar` the derive writes for `input`.
    fn scalar_of(input: proc_macro2::TokenStream) -> String {
        let input: ItemStruct = syn::parse2(input).expect("a struct");
        let cx = Ctxt::new();
        let fields = super::fields(&cx, &input);
        cx.check().expect("no error");
        let first = fields
            .iter()
            .position(|field| !field.skip)
            .expect("a field");
        scalar(&input, &fields, first).to_string()
    }

    #[test]
    fn the_scalar_is_named_with_public_types_where_a_field_allows() {
        let cases = [
            (
                quote!(
                    struct S {
                        w: Vec<f64>,
                        b: f64,
                    }
                ),
                "f64",
            ),
            (
                quote!(
                    struct S {
                        hidden: Layer,
                        t: [f32; 3],
                    }
                ),
                "f32",
            ),
            (
                quote!(
                    struct S<T: Float> {
                        w: Vec<T>,
                        b: T,
                    }
                ),
                "T",
            ),
            (
                quote!(
                    struct S<T>
                    where
                        T: ad_runtime::Float,
                    {
                        layer: Layer<T>,
                    }
                ),
                "T",
            ),
            (
                quote!(
                    struct S<L> {
                        layers: Vec<L>,
                    }
                ),
                "L",
            ),
            (
                quote!(
                    struct S<T: Float> {
                        b: T,
                        w: Vec<f64>,
                    }
                ),
                "T",
            ),
            // A bare parameter without `Float` may be a nested struct.
            (
                quote!(
                    struct S<L> {
                        inner: L,
                    }
                ),
                "< L as :: ad_runtime :: Tangent > :: Scalar",
            ),
            (
                quote!(
                    struct S {
                        hidden: Layer,
                        #[tangent(skip)]
                        n: f64,
                    }
                ),
                "< Layer as :: ad_runtime :: Tangent > :: Scalar",
            ),
        ];
        for (input, expected) in cases {
            let shown = input.to_token_stream().to_string();
            assert_eq!(scalar_of(input), expected, "{shown}");
        }
    }

    #[test]
    fn integers_strings_and_references_are_certainly_not_floats() {
        let not_floats = [
            quote!(usize),
            quote!(i32),
            quote!(bool),
            quote!(String),
            quote!(std::string::String),
            quote!(&'static str),
            quote!(Option<f64>),
            quote!(Vec<u8>),
            quote!([usize; 3]),
            quote!((f64, f64)),
        ];
        for ty in not_floats {
            let ty: syn::Type = syn::parse2(ty).expect("a type");
            assert!(certainly_not_float(&ty), "{}", ty.to_token_stream());
        }
        let maybe_floats = [
            quote!(f64),
            quote!(Vec<f32>),
            quote!([f64; 4]),
            quote!(T),
            quote!(Layer),
            quote!(Vec<Layer>),
        ];
        for ty in maybe_floats {
            let ty: syn::Type = syn::parse2(ty).expect("a type");
            assert!(!certainly_not_float(&ty), "{}", ty.to_token_stream());
        }
    }
}
