//! Examples live in `examples/`; the GradBench tool's evals live in [`gradbench`], the
//! benchmark workloads in [`workloads`], the allocator that measures memory in
//! [`counting`].

pub mod counting;
pub mod gradbench;
pub mod workloads;
