//! Procedural macros of `ad-runtime`. Depend on `ad-runtime`, which re-exports
//! them; generated code refers to `::ad_runtime`.
//!
//! This file is the entry point only: everything below works on `proc_macro2`
//! so that the pipeline (see `expand.rs`) is testable as a plain library.

#![forbid(unsafe_code)]

mod analysis;
mod args;
mod diag;
#[cfg(test)]
mod differential;
mod emit;
mod expand;
#[cfg(test)]
mod fuzz;
mod ir;
mod lower;
/// The random program generator, shared with the `ad-tests` crate (its items
/// are `pub` there).
#[cfg(test)]
#[allow(unreachable_pub, dead_code)]
#[path = "../../tests/src/programs.rs"]
mod programs;
mod reverse;
mod rules;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Generates `<name>_vjp`, the reverse-mode derivative of a function over `f64`
/// or `f32`, beside the function itself.
///
/// See the `ad-runtime` crate documentation for the calling convention and the
/// supported subset of Rust.
#[proc_macro_attribute]
pub fn differentiate(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::differentiate(args.into(), item.into()).into()
}
