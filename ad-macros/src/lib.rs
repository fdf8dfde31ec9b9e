//! Procedural macros of `ad-runtime`. Depend on `ad-runtime`, which re-exports
//! them; generated code refers to `::ad_runtime`.
//!
//! This file is the entry point only: everything below works on `proc_macro2`
//! so that the pipeline (see `expand.rs`) is testable as a plain library.

#![forbid(unsafe_code)]

mod analysis;
mod args;
mod custom;
mod diag;
mod emit;
mod expand;
mod ir;
mod jvp;
mod lower;
mod reverse;
mod tangent;
/// The test machinery, which never runs at expansion time: the IR
/// interpreter, the differential tests, the fuzzers, the compile-cost
/// harness and the expansion snapshots. It sits beside `src/`, which holds
/// only the compiler.
#[cfg(test)]
#[path = "../testing/mod.rs"]
mod testing;

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

/// Gives a function a derivative of your own: `#[custom_vjp(rule)]` on `f`
/// generates `f_vjp` and `f_forward` from `rule`, without looking into `f`'s
/// body, and every differentiated function that calls `f` uses it.
///
/// The rule takes the arguments of `f_vjp` (each buffer as the call left it,
/// a float buffer followed by its shadow, into which the rule adds), then the
/// output and the seed, and returns the adjoints of the float parameters taken
/// by value. A rule whose signature does not match is a compile error at its
/// path.
#[proc_macro_attribute]
pub fn custom_vjp(args: TokenStream, item: TokenStream) -> TokenStream {
    custom::custom_vjp(args.into(), item.into()).into()
}

/// Gives a function a forward-mode derivative of your own: `#[custom_jvp(rule)]`
/// on `f` generates `f_jvp` from `rule`, without looking into `f`'s body, and
/// every function differentiated with `jvp` that calls `f` uses it.
///
/// The rule has the signature of `f_jvp`: the arguments of `f`, each float
/// and float buffer parameter followed by its tangent, returning the output
/// followed by its tangent. A rule whose signature does not match is a
/// compile error at its path. Put it beside `#[custom_vjp]` for both modes.
#[proc_macro_attribute]
pub fn custom_jvp(args: TokenStream, item: TokenStream) -> TokenStream {
    custom::custom_jvp(args.into(), item.into()).into()
}

/// Implements `ad_runtime::Tangent` (and `ZerosLike`) for a struct of floats,
/// float buffers and nested such structs, field by field, so that it can be
/// a parameter of differentiated functions, with a shadow of its own type.
#[proc_macro_derive(Tangent, attributes(tangent))]
pub fn derive_tangent(item: TokenStream) -> TokenStream {
    tangent::derive(item.into()).into()
}
