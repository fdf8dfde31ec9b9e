//! Examples live in `examples/`; the GradBench tool's evals live in [`gradbench`], the
//! benchmark workloads in [`workloads`].

pub mod gradbench;
pub mod workloads;
