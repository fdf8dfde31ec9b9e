//! Analyses of the primal IR that decide what the adjoint needs.
//!
//! Dead primal work is removed first ([`dead_code`]): `_vjp` computes only what
//! the output and the effects need. Activity is the one that matters for straight-line code: a value gets adjoint
//! code only if it depends on an active input *and* reaches the output. Where
//! each value the adjoint reads comes from (re-read, recomputed, saved on a tape)
//! is a question inside loops: [`buffers`] says which buffer reads can be
//! repeated by the adjoint, the reverse pass recomputes integers, and saves the
//! rest. After the reverse pass, [`fuse_loops`] moves adjoint loops whose
//! seed is known early into their primal loops, in `_vjp` only, and
//! [`make_tapes_early`] moves tapes up to where their size is known, and
//! [`run_forward`] runs adjoint loops with independent iterations forwards,
//! and [`sums_from_zero`] starts the sums adjoint loops carry from zero.
//! [`running_extrema`] turns a loop that only takes a running maximum or
//! minimum into one runtime call, whose pullback needs no tape.
//! [`keep_exponentials`] keeps `logsumexp`'s exponentials for its pullback.

mod activity;
mod buffers;
mod dead;
mod extrema;
mod fuse;
mod keep;
mod order;
mod tapes;

pub(crate) use activity::{Activity, activity};
pub(crate) use buffers::{Writes, check, writes};
pub(crate) use dead::dead_code;
pub(crate) use extrema::running_extrema;
pub(crate) use fuse::fuse_loops;
pub(crate) use keep::keep_exponentials;
pub(crate) use order::{run_forward, sums_from_zero};
pub(crate) use tapes::make_tapes_early;
