//! Writes the corpus of generated programs that `tests/corpus.rs` compiles with
//! the real `#[differentiate]` attribute: the same generator as the in-process
//! differential tests (`ad_testkit::programs`), so the emitted Rust is checked too.

use ad_testkit::programs;

use std::fmt::Write as _;
use std::path::PathBuf;

/// How many programs the corpus holds.
const PROGRAMS: u64 = 300;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let config = programs::Config::default();
    let mut source = String::new();
    let mut table = String::new();
    for seed in 0..PROGRAMS {
        let program = programs::Program::generate(seed, &config);
        let name = format!("p{seed}");
        writeln!(source, "#[::ad_runtime::differentiate]").unwrap();
        writeln!(source, "{}\n", program.to_rust(&name)).unwrap();
        writeln!(table, "    ({seed}, {name}, {name}_vjp),").unwrap();
    }
    writeln!(
        source,
        "/// Every program of the corpus: its seed, the function and its `_vjp`.\n\
         pub(crate) static CORPUS: &[(u64, Primal, Vjp)] = &[\n{table}];"
    )
    .unwrap();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(out.join("corpus.rs"), source).expect("the corpus is written");
}
