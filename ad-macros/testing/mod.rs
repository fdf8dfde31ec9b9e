//! Test machinery of the compiler, compiled only for its unit tests.
//!
//! - `interp`: an interpreter of the IR, so that the primal and `_vjp` IR of
//!   generated programs can be run in-process;
//! - `differential`: thousands of generated programs (`ad_testkit::programs`)
//!   through the whole pipeline, their gradients checked on the interpreter;
//! - `fuzz`: random and mutated token streams, which must never panic the
//!   macro;
//! - `layout`: the folders of `src/` depend on each other without cycles;
//! - `cost`: how expansion time and output size grow with the function;
//! - `passes`: each pass's effect, through the pipeline;
//! - `expansion`: insta snapshots of the IR and of the formatted expansion, one
//!   fixture per feature, and unit tests of the driver;
//! - `errors_doc`: docs/errors.md has an entry for every message of the
//!   catalogue (`diag::msg`), quoting it as it is.

mod cost;
mod differential;
mod errors_doc;
mod expansion;
mod fuzz;
pub(crate) mod interp;
mod layout;
mod passes;

use proc_macro2::TokenStream;

use crate::expand::{self, Stages};

/// The stages of `#[differentiate] src`, for the passes' tests.
pub(crate) fn stages_of(src: &str) -> Stages {
    let item: syn::ItemFn = syn::parse_str(src).expect("a fn item");
    let Ok(stages) = expand::stages(TokenStream::new(), &item, None) else {
        panic!("the fixture differentiates")
    };
    stages
}
