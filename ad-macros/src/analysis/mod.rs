//! Analyses of the primal IR that decide what the adjoint needs.
//!
//! Activity is the one that matters for straight-line code: a value gets adjoint
//! code only if it depends on an active input *and* reaches the output. Where
//! each value the adjoint reads comes from (re-read, recomputed, saved on a tape)
//! only becomes a question once loops exist; in straight-line code every primal
//! value stays in its local.

mod activity;

pub(crate) use activity::{Activity, activity};
