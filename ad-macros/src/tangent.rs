//! `#[derive(Tangent)]`: the zero and the arithmetic of a parameter struct,
//! field by field (see `ad_runtime::Tangent`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Fields, Index, Item, Member};

use crate::diag::msg;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let item: Item = match syn::parse2(input) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    let Item::Struct(input) = item else {
        return syn::Error::new_spanned(item, msg::TANGENT_NOT_A_STRUCT).to_compile_error();
    };
    let data = &input;
    let members: Vec<Member> = match &data.fields {
        Fields::Named(fields) => fields
            .named
            .iter()
            .map(|field| Member::Named(field.ident.clone().expect("a named field")))
            .collect(),
        Fields::Unnamed(fields) => (0..fields.unnamed.len())
            .map(|index| Member::Unnamed(Index::from(index)))
            .collect(),
        Fields::Unit => Vec::new(),
    };
    let Some(first) = data.fields.iter().next() else {
        return syn::Error::new(input.ident.span(), msg::TANGENT_NO_FIELDS).to_compile_error();
    };
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let first_ty = &first.ty;
    let zeros = data.fields.iter().zip(&members).map(|(field, member)| {
        quote_spanned!(field.ty.span()=> #member: ::ad_runtime::linalg::ZerosLike::zeros_like(&self.#member))
    });
    let adds = members.iter().map(|member| {
        quote!(::ad_runtime::Tangent::add_scaled(&mut self.#member, alpha, &other.#member);)
    });
    let dots = members
        .iter()
        .map(|member| quote!(+ ::ad_runtime::Tangent::dot(&self.#member, &other.#member)));
    let lens = members
        .iter()
        .map(|member| quote!(+ ::ad_runtime::Tangent::len(&self.#member)));
    let scalar = format_ident!("Scalar");
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
            type #scalar = <#first_ty as ::ad_runtime::Tangent>::Scalar;
            #[inline]
            fn add_scaled(&mut self, alpha: Self::Scalar, other: &Self) {
                #(#adds)*
            }
            #[inline]
            fn dot(&self, other: &Self) -> Self::Scalar {
                <Self::Scalar as ::ad_runtime::Float>::ZERO #(#dots)*
            }
            #[inline]
            fn len(&self) -> usize {
                0 #(#lens)*
            }
        }
    }
}
