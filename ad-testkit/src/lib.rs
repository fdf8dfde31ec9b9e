//! Test machinery shared by the workspace's tests, never by users' code:
//!
//! - [`programs`]: the random program generator. The macro's in-process
//!   differential tests run its programs on the IR interpreter; the
//!   `ad-tests` crate compiles a corpus of them with the real attribute.
//! - [`forms`]: equivalent spellings of the benchmark workloads, for the
//!   forms benchmark of `ad-examples`.
//! - [`long`]: long and deeply nested functions with a reference gradient,
//!   which the `ad-tests` crate builds with rustc (debug info on) and checks.

pub mod forms;
pub mod long;
pub mod programs;
