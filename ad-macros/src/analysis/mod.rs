//! Analyses and transformations of the primal IR, before any
//! differentiation: what every transformation reads.
//!
//! Dead primal work is removed first ([`dead_code`]): the generated code
//! computes only what the output and the effects need. An element read
//! again before anything writes its buffer is read once ([`merge_loads`]). [`running_extrema`]
//! turns a loop that only takes a running maximum or minimum into one runtime
//! call, whose pullback needs no tape. Activity ([`activity`]): a value gets
//! derivative code only if it depends on an active input *and* reaches the
//! output. [`buffers`] says which buffer reads the adjoint may repeat (where
//! each value the adjoint reads comes from — re-read, recomputed, saved on a
//! tape — is a question inside loops).
//!
//! Takes the lowered IR; gives the IR without dead work, and the facts above.

mod activity;
mod buffers;
mod dead;
mod extrema;
mod loads;

pub(crate) use activity::{Activity, activity, plain_calls};
pub(crate) use buffers::{Writes, check, writes};
pub(crate) use dead::dead_code;
pub(crate) use extrema::running_extrema;
pub(crate) use loads::merge_loads;
