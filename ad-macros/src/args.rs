//! The attribute's arguments: `#[differentiate]`, `#[differentiate(wrt(a, b))]`,
//! and which derivatives to generate: `vjp` (the default), `jvp`,
//! `jvp_lanes`, `hvp`, or several.

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, Token, parenthesized};

use crate::diag::msg;

#[derive(Default)]
pub(crate) struct Args {
    /// The parameters listed in `wrt(…)`; `None` means every float parameter.
    pub(crate) wrt: Option<Vec<Ident>>,
    /// `vjp` was named.
    vjp: bool,
    /// `jvp` was named.
    jvp: bool,
    /// `hvp` was named.
    hvp: bool,
    /// `jvp_lanes` was named.
    jvp_lanes: bool,
    /// `print`: show the generated functions at compile time.
    pub(crate) print: bool,
    /// `nested`: also generate what a function differentiated in forward
    /// mode needs to call `_vjp` or `_jvp` (`f_vjp_jvp_all`, `f_jvp_jvp_all`).
    pub(crate) nested: bool,
}

impl Args {
    /// Whether to generate `_vjp` (and the split API): when `vjp` is named,
    /// or when no mode is, so that nobody pays for a mode they did not ask for.
    pub(crate) fn wants_vjp(&self) -> bool {
        self.vjp || !(self.jvp || self.hvp || self.jvp_lanes)
    }

    /// Whether to generate `_jvp`.
    pub(crate) fn wants_jvp(&self) -> bool {
        self.jvp
    }

    /// Whether to generate `_jvp_lanes` (vector forward mode).
    pub(crate) fn wants_jvp_lanes(&self) -> bool {
        self.jvp_lanes
    }

    /// Whether to generate `_hvp`.
    pub(crate) fn wants_hvp(&self) -> bool {
        self.hvp
    }
}

pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Args> {
    Parser::parse2(parse_args, tokens)
}

fn parse_args(input: ParseStream<'_>) -> syn::Result<Args> {
    let mut args = Args::default();
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        if key == "print" || key == "nested" {
            let flag = if key == "print" {
                &mut args.print
            } else {
                &mut args.nested
            };
            if *flag {
                return Err(syn::Error::new(key.span(), msg::MODE_TWICE));
            }
            *flag = true;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            continue;
        }
        if key == "vjp" || key == "jvp" || key == "hvp" || key == "jvp_lanes" {
            let flag = if key == "vjp" {
                &mut args.vjp
            } else if key == "jvp" {
                &mut args.jvp
            } else if key == "jvp_lanes" {
                &mut args.jvp_lanes
            } else {
                &mut args.hvp
            };
            if *flag {
                return Err(syn::Error::new(key.span(), msg::MODE_TWICE));
            }
            *flag = true;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            continue;
        }
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
