//! The attribute's arguments: `#[differentiate]` or `#[differentiate(wrt(a, b))]`.

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, Token, parenthesized};

use crate::diag::msg;

#[derive(Default)]
pub(crate) struct Args {
    /// The parameters listed in `wrt(…)`; `None` means every float parameter.
    pub(crate) wrt: Option<Vec<Ident>>,
}

pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Args> {
    Parser::parse2(parse_args, tokens)
}

fn parse_args(input: ParseStream<'_>) -> syn::Result<Args> {
    let mut args = Args::default();
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        if key != "wrt" {
            return Err(syn::Error::new(key.span(), msg::ATTR_ARGS));
        }
        if args.wrt.is_some() {
            return Err(syn::Error::new(key.span(), msg::WRT_TWICE));
        }
        if !input.peek(syn::token::Paren) {
            return Err(syn::Error::new(key.span(), msg::WRT_SYNTAX));
        }
        let content;
        let parens = parenthesized!(content in input);
        let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
        if names.is_empty() {
            return Err(syn::Error::new(parens.span.join(), msg::WRT_EMPTY));
        }
        args.wrt = Some(names.into_iter().collect());
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(args)
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        parse_args(input)
    }
}
