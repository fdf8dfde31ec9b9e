//! Test machinery of the compiler, compiled only for its unit tests.
//!
//! - `interp`: an interpreter of the IR, so that the primal and `_vjp` IR of
//!   generated programs can be run in-process;
//! - `differential`: thousands of generated programs (`ad_testkit::programs`)
//!   through the whole pipeline, their gradients checked on the interpreter;
//! - `fuzz`: random and mutated token streams, which must never panic the
//!   macro;
//! - `cost`: how expansion time and output size grow with the function;
//! - `expansion`: insta snapshots of the IR and of the formatted expansion, one
//!   fixture per feature, and unit tests of the driver.

mod cost;
mod differential;
mod expansion;
mod fuzz;
pub(crate) mod interp;
