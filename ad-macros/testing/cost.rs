//! Compile cost: how the time to expand `#[differentiate]` and the size of the
//! generated code grow with the size of the function.
//!
//! Two families of generated functions, 50 to 800 statements each: straight-line
//! code over scalars, and the same statements in the body of a loop over a slice
//! (whose adjoint needs tapes). Run with
//! `cargo test -p ad-macros cost -- --nocapture` to print the table
//! (`docs/performance.md` has it).
//!
//! The generated code grows linearly (about 110 tokens per statement straight-line,
//! 295 in a loop), and the test fails if the tokens per statement at 800 statements
//! are more than 2× those at 100. The expansion time is printed, not asserted:
//! timings belong in reports, and the suite runs beside other work.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use proc_macro2::{TokenStream, TokenTree};

use crate::expand;

/// Statement `i` of a body: each reads the two before it, with a mix of the
/// operations and calls the macro differentiates.
fn statement(i: usize) -> String {
    let (a, b) = (i - 1, i - 2);
    match i % 4 {
        0 => format!("let a{i} = a{a} * a{b} + c;"),
        1 => format!("let a{i} = (a{a} - a{b}).sin() * c;"),
        2 => format!("let a{i} = a{a} / (1.0 + a{b} * a{b});"),
        _ => format!("let a{i} = (a{a} * 0.5).exp() - a{b}.tanh();"),
    }
}

/// `n` statements of straight-line code over two scalars.
fn straight_line(n: usize) -> String {
    let mut body = String::from("let a0 = x * y; let a1 = x + y; let c = y;");
    for i in 2..n {
        body.push_str(&statement(i));
    }
    format!("fn f(x: f64, y: f64) -> f64 {{ {body} a{} }}", n - 1)
}

/// The same `n` statements in a loop over a slice, accumulated into `s`.
fn in_a_loop(n: usize) -> String {
    let mut body = String::from("let a0 = xs[i] * s; let a1 = xs[i] + c;");
    for i in 2..n {
        body.push_str(&statement(i));
    }
    format!(
        "fn g(xs: &[f64], c: f64) -> f64 {{ let mut s = 0.5; \
         for i in 0..xs.len() {{ {body} s += a{}; }} s }}",
        n - 1
    )
}

/// Token trees in a stream, counting into groups (a group counts as one, plus its
/// contents).
fn count_tokens(tokens: TokenStream) -> usize {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => 1 + count_tokens(group.stream()),
            _ => 1,
        })
        .sum()
}

/// Expands `source` and returns the fastest of three expansions and the number of
/// tokens generated.
fn expand(source: &str) -> (Duration, usize) {
    let item: TokenStream = source.parse().expect("generated source tokenizes");
    let mut fastest = Duration::MAX;
    let mut tokens = 0;
    for _ in 0..3 {
        let input = item.clone();
        let start = Instant::now();
        let output = expand::differentiate(TokenStream::new(), input);
        fastest = fastest.min(start.elapsed());
        let text = output.to_string();
        assert!(
            !text.contains("compile_error"),
            "the generated function does not expand: {text:.500}"
        );
        tokens = count_tokens(output);
    }
    (fastest, tokens)
}

const SIZES: [usize; 5] = [50, 100, 200, 400, 800];

#[test]
fn expansion_time_and_size_grow_linearly() {
    let mut table = String::from(
        "| function | statements | expansion time | µs / statement | tokens out | tokens / statement |\n\
         |---|---|---|---|---|---|\n",
    );
    let families = [
        ("straight-line", straight_line as fn(usize) -> String),
        ("loop body", in_a_loop),
    ];
    let mut failures = Vec::new();
    for (family, generate) in families {
        let mut per_statement = Vec::new();
        for n in SIZES {
            let (time, tokens) = expand(&generate(n));
            let micros = time.as_secs_f64() * 1e6 / n as f64;
            let size = tokens as f64 / n as f64;
            writeln!(
                table,
                "| {family} | {n} | {:.2} ms | {micros:.1} | {tokens} | {size:.1} |",
                time.as_secs_f64() * 1e3
            )
            .unwrap();
            per_statement.push((n, micros, size));
        }
        let at = |n: usize| *per_statement.iter().find(|p| p.0 == n).unwrap();
        let (base, large) = (at(100), at(800));
        let _ = (base.1, large.1);
        if large.2 > 2.0 * base.2 {
            failures.push(format!(
                "{family}: {:.1} tokens per statement at 800, {:.1} at 100",
                large.2, base.2
            ));
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "not linear: {failures:?}\n{table}");
}
