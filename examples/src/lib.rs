//! Examples live in `examples/`; the GradBench tool's evals live in [`gradbench`].

pub mod gradbench;
