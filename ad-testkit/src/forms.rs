//! Equivalent spellings of the benchmark workloads, for the forms benchmark
//! (`examples/benches/forms.rs`) and its correctness test
//! (`examples/tests/forms.rs`).
//!
//! Each workload is a template with choice points, each a set of spellings
//! of the same computation that a person might write: statement order,
//! `x * x` or `x.powi(2)`, the operand order of a commutative operation,
//! a `while` loop or a `for`, an index loop or an iterator chain, the
//! spellings of a running maximum, a helper function split out. A seed picks
//! one spelling at every choice point. Every spelling computes the same
//! function as the workload (up to the rounding of a reordered product), so
//! its gradient must agree with the hand-written one, and its speed should
//! not depend on the choices: the benchmark reports the worst.
//!
//! The output is Rust source, written to `examples/src/forms.rs` by
//! `cargo run -p ad-testkit --bin forms` and kept in step by a test.

use std::fmt::Write as _;

/// How many spellings of each workload the committed file holds.
pub const PER_WORKLOAD: usize = 12;

/// The seed of the committed file.
pub const SEED: u64 = 0x5EED_F0A5;

/// A small deterministic generator (xorshift64*), so that the output does not
/// depend on a crate's version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// One of `n` choices.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }
}

/// One spelling: the items it needs (helpers first, then the function) and
/// the rewrites that made it.
struct Spelling {
    items: String,
    rewrites: Vec<String>,
}

/// Records a rewrite.
fn note(rewrites: &mut Vec<String>, what: &str) {
    rewrites.push(what.to_owned());
}

/// A workload the generator spells.
struct Workload {
    /// The functions' name prefix: `rosenbrock_3`.
    name: &'static str,
    /// What the table calls it.
    title: &'static str,
    /// The type of the `_vjp` the table of spellings lists.
    vjp_type: &'static str,
    /// The type of the primal.
    fn_type: &'static str,
    spell: fn(&mut Rng, &str) -> Spelling,
}

const WORKLOADS: [Workload; 4] = [
    Workload {
        name: "rosenbrock",
        title: "W1, extended Rosenbrock",
        fn_type: "fn(&[f64]) -> f64",
        vjp_type: "fn(&[f64], &mut [f64], f64) -> f64",
        spell: rosenbrock,
    },
    Workload {
        name: "w3",
        title: "W3, a scalar expression",
        fn_type: "fn(f64, f64) -> f64",
        vjp_type: "fn(f64, f64, f64) -> (f64, f64, f64)",
        spell: w3,
    },
    Workload {
        name: "lse",
        title: "W4 and lse, logsumexp",
        fn_type: "fn(&[f64]) -> f64",
        vjp_type: "fn(&[f64], &mut [f64], f64) -> f64",
        spell: logsumexp,
    },
    Workload {
        name: "llsq",
        title: "llsq, linear least squares",
        fn_type: "fn(&[f64], usize) -> f64",
        vjp_type: "fn(&[f64], &mut [f64], usize, f64) -> f64",
        spell: llsq,
    },
];

/// The generated module: `per_workload` distinct spellings of each workload
/// from `seed`, and a table of them per workload.
#[must_use]
pub fn generate(seed: u64, per_workload: usize) -> String {
    let mut rng = Rng(seed | 1);
    let mut out = String::new();
    out.push_str(
        "//! Equivalent spellings of the workloads, made by random rewrites\n\
         //! (`ad_testkit::forms`): the same functions as in `workloads.rs`, written\n\
         //! the other ways people write them. Each `SPELLINGS` table lists a\n\
         //! workload's spellings with the rewrites that made them.\n\
         #![allow(clippy::all, clippy::pedantic, missing_docs)]\n\n\
         use ad_runtime::differentiate;\n",
    );
    for workload in &WORKLOADS {
        let mut seen: Vec<String> = Vec::new();
        let mut table = Vec::new();
        let mut attempts = 0;
        while seen.len() < per_workload && attempts < per_workload * 50 {
            attempts += 1;
            let name = format!("{}_{}", workload.name, seen.len());
            let spelling = (workload.spell)(&mut rng, &name);
            // Distinct bodies only: compare with the name taken out.
            let key = spelling.items.replace(&name, "NAME");
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let rewrites = if spelling.rewrites.is_empty() {
                "as in workloads.rs".to_owned()
            } else {
                spelling.rewrites.join(", ")
            };
            let _ = write!(
                out,
                "\n/// {}: {rewrites}.\n{}",
                workload.title, spelling.items
            );
            table.push((name, rewrites));
        }
        let upper = workload.name.to_uppercase();
        let _ = write!(
            out,
            "\n/// The spellings of {}: name, rewrites, function, `_vjp`.\n\
             pub const {upper}: &[(&str, &str, {}, {})] = &[\n",
            workload.title, workload.fn_type, workload.vjp_type
        );
        for (name, rewrites) in table {
            let _ = writeln!(out, "    (\"{name}\", \"{rewrites}\", {name}, {name}_vjp),");
        }
        out.push_str("];\n");
    }
    let file = syn::parse_file(&out).expect("the generated spellings parse");
    format!(
        "// @generated by `cargo run -p ad-testkit --bin forms` (ad-testkit/src/forms.rs);\n\
         // do not edit. `cargo test -p ad-testkit` checks that it is up to date.\n{}",
        prettyplease::unparse(&file)
    )
}

/// `x * x` or `x.powi(2)` of an expression that binds at least as tightly as
/// a method call's receiver needs (a name, an index, a parenthesized one).
fn square(rng: &mut Rng, rewrites: &mut Vec<String>, x: &str) -> String {
    if rng.coin() {
        format!("{x} * {x}")
    } else {
        let shown = if x.len() <= 8 { x } else { "(…)" };
        rewrites.push(format!("`{shown}.powi(2)`"));
        format!("{x}.powi(2)")
    }
}

/// `acc += t;`, `acc = acc + t;` or `acc = t + acc;` (`t` parenthesized
/// where it must be, so that every form adds the same two numbers).
fn accumulate(rng: &mut Rng, rewrites: &mut Vec<String>, acc: &str, t: &str) -> String {
    match rng.below(3) {
        0 => format!("{acc} += {t};"),
        1 => {
            note(rewrites, "`s = s + t`");
            if t.contains(" + ") || t.contains(" - ") {
                format!("{acc} = {acc} + ({t});")
            } else {
                format!("{acc} = {acc} + {t};")
            }
        }
        _ => {
            note(rewrites, "`s = t + s`");
            format!("{acc} = {t} + {acc};")
        }
    }
}

/// W1: `Σ (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)²`.
fn rosenbrock(rng: &mut Rng, name: &str) -> Spelling {
    let mut rw = Vec::new();
    // The term of one pair `(p, q)`, as statements then an expression.
    let term = |rng: &mut Rng, rw: &mut Vec<String>, p: &str, q: &str| -> (String, String) {
        let one_minus = if rng.below(4) == 0 {
            note(rw, "`-p + 1.0`");
            format!("-{p} + 1.0")
        } else {
            format!("1.0 - {p}")
        };
        let p2 = square(rng, rw, p);
        let lets = rng.below(3);
        let (mut stmts, a, b) = match lets {
            0 => {
                note(rw, "no `let`s");
                (
                    String::new(),
                    format!("({one_minus})"),
                    format!("({q} - {p2})"),
                )
            }
            _ => {
                let la = format!("let a = {one_minus}; ");
                let lb = format!("let b = {q} - {p2}; ");
                let stmts = if lets == 1 {
                    la + &lb
                } else {
                    note(rw, "`let`s swapped");
                    lb + &la
                };
                (stmts, "a".to_owned(), "b".to_owned())
            }
        };
        let a2 = square(rng, rw, &a);
        let b2 = match rng.below(4) {
            0 => format!("100.0 * {b} * {b}"),
            1 => {
                note(rw, "`100.0 * (b * b)`");
                format!("100.0 * ({})", square(rng, rw, &b))
            }
            2 => {
                note(rw, "`b * b * 100.0`");
                format!("{b} * {b} * 100.0")
            }
            _ => {
                note(rw, "`100.0 * b.powi(2)`");
                format!("100.0 * {b}.powi(2)")
            }
        };
        let sum = if rng.coin() {
            format!("{a2} + {b2}")
        } else {
            note(rw, "terms swapped");
            format!("{b2} + {a2}")
        };
        if !stmts.is_empty() {
            stmts.push('\n');
        }
        (stmts, sum)
    };
    let mut items = String::new();
    // A helper holding the term, called with each pair.
    let helper = rng.below(4) == 0;
    let call_term = |rng: &mut Rng, rw: &mut Vec<String>, p: &str, q: &str| -> (String, String) {
        if helper {
            (String::new(), format!("{name}_term({p}, {q})"))
        } else {
            term(rng, rw, p, q)
        }
    };
    if helper {
        note(&mut rw, "a helper for the term");
        let (stmts, sum) = term(rng, &mut rw, "p", "q");
        let _ = write!(
            items,
            "#[differentiate]\npub fn {name}_term(p: f64, q: f64) -> f64 {{\n{stmts}{sum}\n}}\n\n"
        );
    }
    let body = match rng.below(7) {
        0 => {
            let (stmts, sum) = call_term(rng, &mut rw, "x[i]", "x[i + 1]");
            let acc = accumulate(rng, &mut rw, "s", &sum);
            format!("let mut s = 0.0;\nfor i in 0..x.len() - 1 {{\n{stmts}{acc}\n}}\ns")
        }
        1 => {
            note(&mut rw, "`for i in 1..n` with `x[i - 1]`");
            let (stmts, sum) = call_term(rng, &mut rw, "x[i - 1]", "x[i]");
            let acc = accumulate(rng, &mut rw, "s", &sum);
            format!("let mut s = 0.0;\nfor i in 1..x.len() {{\n{stmts}{acc}\n}}\ns")
        }
        2 => {
            note(&mut rw, "`while i + 1 < x.len()`");
            let (stmts, sum) = call_term(rng, &mut rw, "x[i]", "x[i + 1]");
            let acc = accumulate(rng, &mut rw, "s", &sum);
            format!(
                "let mut s = 0.0;\nlet mut i = 0;\nwhile i + 1 < x.len() {{\n{stmts}{acc}\ni += 1;\n}}\ns"
            )
        }
        3 => {
            note(&mut rw, "`for w in x.windows(2)`");
            let (stmts, sum) = call_term(rng, &mut rw, "w[0]", "w[1]");
            let acc = accumulate(rng, &mut rw, "s", &sum);
            format!("let mut s = 0.0;\nfor w in x.windows(2) {{\n{stmts}{acc}\n}}\ns")
        }
        4 => {
            note(&mut rw, "`x.windows(2).map(…).sum()`");
            let (stmts, sum) = call_term(rng, &mut rw, "w[0]", "w[1]");
            format!("x.windows(2).map(|w| {{\n{stmts}{sum}\n}}).sum()")
        }
        5 => {
            note(&mut rw, "`x.iter().zip(&x[1..])`");
            let (stmts, sum) = call_term(rng, &mut rw, "p", "q");
            let acc = accumulate(rng, &mut rw, "s", &sum);
            format!(
                "let mut s = 0.0;\nfor (&p, &q) in x.iter().zip(&x[1..]) {{\n{stmts}{acc}\n}}\ns"
            )
        }
        _ => {
            note(&mut rw, "`let n = x.len(); while i < n - 1`");
            let bound = rng.coin();
            let (p, q) = if bound {
                ("p", "q")
            } else {
                ("x[i]", "x[i + 1]")
            };
            let (stmts, sum) = call_term(rng, &mut rw, p, q);
            let binds = if bound {
                note(&mut rw, "elements bound first");
                "let p = x[i];\nlet q = x[i + 1];\n"
            } else {
                ""
            };
            let acc = accumulate(rng, &mut rw, "s", &sum);
            format!(
                "let n = x.len();\nlet mut s = 0.0;\nlet mut i = 0;\nwhile i < n - 1 {{\n{binds}{stmts}{acc}\ni += 1;\n}}\ns"
            )
        }
    };
    let _ = write!(
        items,
        "#[differentiate]\npub fn {name}(x: &[f64]) -> f64 {{\n{body}\n}}\n"
    );
    Spelling {
        items,
        rewrites: rw,
    }
}

/// W3: `(sin x · eʸ + ln(1 + x²)) / (1 + y²)`.
fn w3(rng: &mut Rng, name: &str) -> Spelling {
    let mut rw = Vec::new();
    let x2 = square(rng, &mut rw, "x");
    let y2 = square(rng, &mut rw, "y");
    let one_plus = |rng: &mut Rng, rw: &mut Vec<String>, v: &str| {
        if rng.below(3) == 0 {
            note(rw, "`v + 1.0`");
            format!("{v} + 1.0")
        } else {
            format!("1.0 + {v}")
        }
    };
    let lp = format!("({}).ln()", one_plus(rng, &mut rw, &x2));
    let se = if rng.coin() {
        "x.sin() * y.exp()".to_owned()
    } else {
        note(&mut rw, "`y.exp() * x.sin()`");
        "y.exp() * x.sin()".to_owned()
    };
    let num = if rng.coin() {
        format!("{se} + {lp}")
    } else {
        note(&mut rw, "terms swapped");
        format!("{lp} + {se}")
    };
    let den = one_plus(rng, &mut rw, &y2);
    let body = match rng.below(3) {
        0 => format!("({num}) / ({den})"),
        1 => {
            note(&mut rw, "`let`s for the numerator and the denominator");
            format!("let num = {num};\nlet den = {den};\nnum / den")
        }
        _ => {
            note(&mut rw, "`let`s, denominator first");
            format!("let den = {den};\nlet num = {num};\nnum / den")
        }
    };
    Spelling {
        items: format!("#[differentiate]\npub fn {name}(x: f64, y: f64) -> f64 {{\n{body}\n}}\n"),
        rewrites: rw,
    }
}

/// W4 and GradBench's lse: `m + ln Σ exp(xᵢ − m)` with `m = max xᵢ`.
fn logsumexp(rng: &mut Rng, name: &str) -> Spelling {
    let mut rw = Vec::new();
    let max_of = |rng: &mut Rng, rw: &mut Vec<String>, m: &str, v: &str| -> String {
        match rng.below(3) {
            0 => format!("{m} = {m}.max({v});"),
            1 => {
                note(rw, "`v.max(m)`");
                format!("{m} = {v}.max({m});")
            }
            _ => {
                note(rw, "`f64::max(m, v)`");
                format!("{m} = f64::max({m}, {v});")
            }
        }
    };
    let max = match rng.below(6) {
        0 => {
            let step = max_of(rng, &mut rw, "m", "x[i]");
            format!("let mut m = x[0];\nfor i in 1..x.len() {{\n{step}\n}}\n")
        }
        1 => {
            note(&mut rw, "maximum over `for &v in x.iter()` from `-∞`");
            let step = max_of(rng, &mut rw, "m", "v");
            format!("let mut m = f64::NEG_INFINITY;\nfor &v in x.iter() {{\n{step}\n}}\n")
        }
        2 => {
            note(&mut rw, "`fold(f64::NEG_INFINITY, f64::max)`");
            "let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);\n".to_owned()
        }
        3 => {
            note(&mut rw, "`fold(x[0], |a, &b| a.max(b))`");
            "let m = x.iter().fold(x[0], |a, &b| a.max(b));\n".to_owned()
        }
        4 => {
            note(&mut rw, "`if v > m { m = v; }` over `&x[1..]`");
            "let mut m = x[0];\nfor &v in &x[1..] {\nif v > m {\nm = v;\n}\n}\n".to_owned()
        }
        _ => {
            note(&mut rw, "maximum in a `while` loop");
            let step = max_of(rng, &mut rw, "m", "x[i]");
            format!(
                "let mut m = x[0];\nlet mut i = 1;\nwhile i < x.len() {{\n{step}\ni += 1;\n}}\n"
            )
        }
    };
    let shifted = |rng: &mut Rng, rw: &mut Vec<String>, v: &str| {
        if rng.below(4) == 0 {
            note(rw, "`(-m + v).exp()`");
            format!("(-m + {v}).exp()")
        } else {
            format!("({v} - m).exp()")
        }
    };
    let sum = match rng.below(4) {
        0 => {
            let e = shifted(rng, &mut rw, "x[i]");
            let acc = accumulate(rng, &mut rw, "s", &e);
            format!("let mut s = 0.0;\nfor i in 0..x.len() {{\n{acc}\n}}\n")
        }
        1 => {
            note(&mut rw, "sum over `for &v in x`");
            let e = shifted(rng, &mut rw, "v");
            let acc = accumulate(rng, &mut rw, "s", &e);
            format!("let mut s = 0.0;\nfor &v in x {{\n{acc}\n}}\n")
        }
        2 => {
            note(&mut rw, "`x.iter().map(…).sum()`");
            let e = shifted(rng, &mut rw, "v");
            format!("let s: f64 = x.iter().map(|&v| {e}).sum();\n")
        }
        _ => {
            note(&mut rw, "sum by `fold`");
            let e = shifted(rng, &mut rw, "v");
            format!("let s = x.iter().fold(0.0, |acc, &v| acc + {e});\n")
        }
    };
    let result = if rng.coin() {
        "m + s.ln()"
    } else {
        note(&mut rw, "`s.ln() + m`");
        "s.ln() + m"
    };
    Spelling {
        items: format!(
            "#[differentiate]\npub fn {name}(x: &[f64]) -> f64 {{\n{max}{sum}{result}\n}}\n"
        ),
        rewrites: rw,
    }
}

/// GradBench's llsq: `½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²`.
fn llsq(rng: &mut Rng, name: &str) -> Spelling {
    let mut rw = Vec::new();
    let t = if rng.coin() {
        "let t = -1.0 + (i as f64) * 2.0 / ((n - 1) as f64);\n"
    } else {
        note(&mut rw, "`t = … - 1.0`");
        "let t = (i as f64) * 2.0 / ((n - 1) as f64) - 1.0;\n"
    };
    let sign = match rng.below(3) {
        0 => "let s = if t > 0.0 {\n1.0\n} else if t < 0.0 {\n-1.0\n} else {\n0.0\n};\n",
        1 => {
            note(&mut rw, "the sign tested for zero first");
            "let s = if t == 0.0 {\n0.0\n} else if t > 0.0 {\n1.0\n} else {\n-1.0\n};\n"
        }
        _ => {
            note(&mut rw, "the sign tested for `< 0` first");
            "let s = if t < 0.0 {\n-1.0\n} else if t > 0.0 {\n1.0\n} else {\n0.0\n};\n"
        }
    };
    let sub = |rng: &mut Rng, rw: &mut Vec<String>, xj: &str| {
        if rng.below(3) == 0 {
            note(rw, "`r = r - power * xj`");
            format!("r = r - power * {xj};")
        } else {
            format!("r -= {xj} * power;")
        }
    };
    let inner = match rng.below(4) {
        0 => {
            let s = sub(rng, &mut rw, "x[j]");
            format!("for j in 0..x.len() {{\n{s}\npower *= t;\n}}\n")
        }
        1 => {
            note(&mut rw, "inner `for &xj in x.iter()`");
            let s = sub(rng, &mut rw, "xj");
            format!("for &xj in x.iter() {{\n{s}\npower *= t;\n}}\n")
        }
        2 => {
            note(&mut rw, "inner `while`");
            let s = sub(rng, &mut rw, "x[j]");
            format!("let mut j = 0;\nwhile j < x.len() {{\n{s}\npower *= t;\nj += 1;\n}}\n")
        }
        _ => {
            note(&mut rw, "inner `for xj in x`");
            let s = sub(rng, &mut rw, "*xj");
            format!("for xj in x {{\n{s}\npower = power * t;\n}}\n")
        }
    };
    let r2 = square(rng, &mut rw, "r");
    let acc = accumulate(rng, &mut rw, "sum", &r2);
    let inner_body = format!("{t}{sign}let mut r = s;\nlet mut power = 1.0;\n{inner}{acc}\n");
    let outer = if rng.below(3) == 0 {
        note(&mut rw, "outer `while`");
        format!("let mut i = 0;\nwhile i < n {{\n{inner_body}i += 1;\n}}\n")
    } else {
        format!("for i in 0..n {{\n{inner_body}}}\n")
    };
    let half = if rng.coin() {
        "sum / 2.0"
    } else {
        note(&mut rw, "`0.5 * sum`");
        "0.5 * sum"
    };
    Spelling {
        items: format!(
            "#[differentiate]\npub fn {name}(x: &[f64], n: usize) -> f64 {{\nlet mut sum = 0.0;\n{outer}{half}\n}}\n"
        ),
        rewrites: rw,
    }
}

#[cfg(test)]
mod tests {
    /// The committed spellings are what the generator makes: regenerate
    /// them with `cargo run -p ad-testkit --bin forms` after changing it.
    #[test]
    fn the_committed_spellings_are_up_to_date() {
        let committed = include_str!("../../examples/src/forms.rs");
        let generated = super::generate(super::SEED, super::PER_WORKLOAD);
        assert!(
            committed == generated,
            "examples/src/forms.rs is stale: run `cargo run -p ad-testkit --bin forms`"
        );
    }

    /// Other seeds give other spellings, all of which parse (the generator
    /// formats them) and are distinct within a workload.
    #[test]
    fn every_seed_spells_each_workload_distinctly() {
        for seed in 1..20 {
            let text = super::generate(seed, 8);
            // One table row per spelling: `("lse_3", "…", lse_3, lse_3_vjp),`.
            let rows = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("///") && line.contains("_vjp"))
                .count();
            assert_eq!(rows, super::WORKLOADS.len() * 8, "seed {seed}");
        }
    }
}
