//! A GradBench tool: answers GradBench's protocol on standard input and output.
//!
//! Serves the evals `hello`, `llsq`, `lse`, `gmm`, `ode`, `lstm`, `kmeans`, `det` and `ba`; see
//! `docs/gradbench.md`. Run with `cargo run --release -p ad-examples --bin gradbench`.

use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    match ad_examples::gradbench::serve(io::stdin().lock(), io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("gradbench: {error}");
            ExitCode::FAILURE
        }
    }
}
