//! Examples live in `examples/`; the GradBench tool's evals live in [`gradbench`], the
//! benchmark workloads in [`workloads`] and their equivalent spellings in
//! [`forms`], the allocator that measures memory in [`counting`], and what the
//! example programs share in [`support`].

pub mod counting;
// Generated and kept in step by `ad_testkit::forms`, formatted by prettyplease.
#[rustfmt::skip]
pub mod forms;
pub mod gradbench;
pub mod support;
pub mod workloads;
