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
    // The integer helper the programs call (see `Printer::int`), and the
    // local structs some of their floats are kept in (`programs::CELL`,
    // `programs::TUPLE_CELL`).
    let mut source = String::from(
        "/// `i % n`: a function of integers, which `#[differentiate]` runs as written.\n\
         fn wrap(i: usize, n: usize) -> usize {\n    i % n\n}\n\n",
    );
    writeln!(
        source,
        "/// A number kept in a local struct, read and written by its field.\n\
         #[derive(Clone, Copy)]\n\
         struct {}{{\n    v: f64,\n}}\n\n\
         /// The same in a tuple struct.\n\
         #[derive(Clone, Copy)]\n\
         struct {}(f64);\n",
        programs::CELL,
        programs::TUPLE_CELL
    )
    .unwrap();
    let mut table = String::new();
    let mut twins = String::new();
    let mut callers = String::new();
    let mut hvp_callers = String::new();
    for seed in 0..PROGRAMS {
        let program = programs::Program::generate(seed, &config);
        let name = format!("p{seed}");
        writeln!(
            source,
            "#[::ad_runtime::differentiate(vjp, jvp, jvp_lanes, hvp)]"
        )
        .unwrap();
        writeln!(source, "{}\n", program.to_rust(&name)).unwrap();
        writeln!(
            table,
            "    ({seed}, {name}, {name}_vjp, {name}_jvp, {name}_jvp_lanes, {name}_hvp),"
        )
        .unwrap();
        if seed.is_multiple_of(2) {
            writeln!(source, "{}", caller(seed)).unwrap();
            writeln!(callers, "    ({seed}, {name}_vjp, k{seed}, k{seed}_vjp),").unwrap();
            if seed.is_multiple_of(4) {
                writeln!(hvp_callers, "    ({seed}, k{seed}_vjp, k{seed}_hvp),").unwrap();
            }
        }
        if let Some(twin) = checkpointed(&program.to_rust(&format!("c{seed}"))) {
            writeln!(source, "#[::ad_runtime::differentiate]\n{twin}\n").unwrap();
            writeln!(twins, "    ({seed}, {name}_vjp, c{seed}_vjp),").unwrap();
        }
    }
    writeln!(
        source,
        "/// The programs with a loop at the top level of their body, and the\n\
         /// `_vjp` of their twin with `#[checkpoint(snapshots = 2)]` on each.\n\
         pub(crate) static CHECKPOINTED: &[(u64, Vjp, Vjp)] = &[\n{twins}];"
    )
    .unwrap();
    writeln!(
        source,
        "/// Every other program, called by a differentiated function (see\n\
         /// `caller` in `build.rs`): its seed and `_vjp`, the caller and its `_vjp`.\n\
         pub(crate) static CALLERS: &[(u64, Vjp, Primal, Vjp)] = &[\n{callers}];"
    )
    .unwrap();
    writeln!(
        source,
        "/// The callers with `_hvp` (every fourth program's): the seed, the\n\
         /// caller's `_vjp` and `_hvp`.\n\
         pub(crate) static HVP_CALLERS: &[(u64, Vjp, Hvp)] = &[\n{hvp_callers}];"
    )
    .unwrap();
    writeln!(
        source,
        "/// Every program of the corpus: its seed, the function, its `_vjp`, `_jvp`,\n\
         /// `_jvp_lanes` (three directions) and `_hvp`.\n\
         pub(crate) static CORPUS: &[(u64, Primal, Vjp, Jvp, JvpLanes, Hvp)] = &[\n{table}];"
    )
    .unwrap();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(out.join("corpus.rs"), source).expect("the corpus is written");
    std::fs::write(out.join("long.rs"), long_functions()).expect("the long functions are written");
}

/// A differentiated function calling program `seed` twice in a loop and
/// then branching, so that the program's `_forward_all` and its pullback
/// (the split API, which nothing else in the corpus compiles) run inside
/// loops and branches: `k = 2.5 p a1` if `a0 > 0`, else `2.5 p + a2`. Every
/// call sees the program's own inputs. Seeds `4k` pass `a0`, which the
/// adjoint reads again, so the call is made again there; the others pass
/// `a0 + s * 0.0`, the same value carried through the loop, so the call's
/// pullback is saved on a tape; and seeds `4k + 2` call it through `w{seed}`,
/// which returns `[p, a1 / 2]`, an array moved into a buffer made before
/// the loop (`UserCall::into`), with a `continue` that never runs
/// (`|a1| ≤ 1`).
fn caller(seed: u64) -> String {
    let a0 = if seed.is_multiple_of(4) {
        "a0"
    } else {
        "a0 + s * 0.0"
    };
    if seed % 4 == 2 {
        return format!(
            "#[::ad_runtime::differentiate]\n\
             fn w{seed}(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> [f64; 2] {{\n\
             \x20   [p{seed}(a0, a1, a2, xs, n), a1 * 0.5]\n\
             }}\n\
             #[::ad_runtime::differentiate]\n\
             fn k{seed}(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {{\n\
             \x20   let mut s = 0.0;\n\
             \x20   for k in 0..2 {{\n\
             \x20       let v = w{seed}({a0}, a1, a2, xs, n);\n\
             \x20       if v[1] > 10.0 {{ continue; }}\n\
             \x20       s = s * 0.5 + v[0] * (k as f64 + 1.0);\n\
             \x20   }}\n\
             \x20   if a0 > 0.0 {{ s * a1 }} else {{ s + a2 }}\n\
             }}\n"
        );
    }
    // The callers that pass the program's own arguments also get `_hvp`,
    // which calls the program's `_jvp_all` and `_hvp_all`.
    let modes = if seed.is_multiple_of(4) {
        "vjp, hvp"
    } else {
        "vjp"
    };
    format!(
        "#[::ad_runtime::differentiate({modes})]\n\
         fn k{seed}(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {{\n\
         \x20   let mut s = 0.0;\n\
         \x20   for k in 0..2 {{\n\
         \x20       s = s * 0.5 + p{seed}({a0}, a1, a2, xs, n) * (k as f64 + 1.0);\n\
         \x20   }}\n\
         \x20   if a0 > 0.0 {{ s * a1 }} else {{ s + a2 }}\n\
         }}\n"
    )
}

/// `function` with `#[checkpoint(snapshots = 2)]` on each loop (`for`,
/// `while`, `loop`) at the top level of its body (indented by one level), or `None` if it has
/// none: two saved states, so that long loops run many steps again.
fn checkpointed(function: &str) -> Option<String> {
    let mut twin = String::new();
    let mut any = false;
    for line in function.lines() {
        let statement = line.strip_prefix("    ").unwrap_or("");
        let is_loop = ["for ", "while ", "loop "].iter().any(|keyword| {
            statement.starts_with(keyword)
                || statement.starts_with('\'') && statement.contains(&format!(": {keyword}"))
        });
        let is_for = !statement.starts_with(' ') && is_loop;
        if is_for {
            any = true;
            twin.push_str("    #[checkpoint(snapshots = 2)]\n");
        }
        twin.push_str(line);
        twin.push('\n');
    }
    any.then_some(twin)
}

/// The long and deeply nested functions `tests/long_functions.rs` builds
/// (issue 21: a few thousand bindings crashed rustc in debug builds), each
/// with its test: `scalars!` or `buffer!` (defined there).
fn long_functions() -> String {
    let mut source = String::new();
    for (name, family) in LONG_FUNCTIONS {
        writeln!(
            source,
            "#[::ad_runtime::differentiate]\n{}",
            family.source(name)
        )
        .unwrap();
        let kind = if family.takes_a_buffer() {
            "buffer"
        } else {
            "scalars"
        };
        writeln!(
            source,
            "{kind}!(check_{name}, Family::{family:?}, {name}, {name}_vjp, {name}_forward);\n"
        )
        .unwrap();
    }
    source
}

/// Sizes of the long functions: 5,000 statements in a row, in a loop and
/// in branches; an expression 500 calls deep; loops nested 10 deep; and a
/// loop of 100 statements, which saves records (more than 64 taped values)
/// while the function is still short enough for one `let` per value.
const LONG_FUNCTIONS: [(&str, ad_testkit::long::Family); 6] = {
    use ad_testkit::long::Family;
    [
        ("straight_line", Family::StraightLine { n: 5_000 }),
        ("in_a_loop", Family::InALoop { n: 5_000 }),
        ("in_branches", Family::InBranches { n: 5_000 }),
        ("nested_expression", Family::NestedExpression { depth: 500 }),
        ("nested_loops", Family::NestedLoops { depth: 10 }),
        ("records_in_a_short_function", Family::InALoop { n: 100 }),
    ]
};
