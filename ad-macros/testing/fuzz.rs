//! Robustness: the macro never panics, and expands deterministically.
//!
//! The contract of `#[differentiate]`: on any input, the expansion is either
//! valid code (the item and its `<name>_vjp`) or carries `compile_error!`; it
//! never panics, takes bounded time, and the same input always expands to the
//! same tokens. Every expansion goes through [`check_contract`]:
//!
//! - `arbitrary_tokens_never_panic`: random token soup ([`Tok`]: idents,
//!   keywords, literals, punctuation, groups nested three deep) as the
//!   attribute's arguments and as the item, and functions of odd expressions
//!   ([`function_code`]);
//! - `mutated_functions_keep_the_contract`: the [`CORPUS`] of functions the
//!   macro accepts, each edited one to four times, at the token level
//!   ([`TokenEdit`]), through `syn` ([`SynEdit`]) or with an odd expression;
//! - `expansion_is_deterministic`: twice in a row, and in two threads;
//! - `large_function_expands_quickly`, and `deep_functions_expand_on_rustc_stack`
//!   (in child processes, since a stack overflow aborts).
//!
//! A panic is caught and reported with the input; an expansion that never ends
//! cannot be, so a watchdog ends the test process, printing the input, after
//! [`HANG_LIMIT`].
//!
//! The random runs use fixed seeds, so that the counts are reproducible: set
//! `PROPTEST_RNG_SEED` to explore other cases, `PROPTEST_CASES` to run more of
//! them, and `FUZZ_SURVEY` to list every kind of failure rather than stop at
//! the first. Run with `-- --nocapture` to see the counts and timings.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::{Mutex, Once, PoisonError};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use proc_macro2::{Delimiter, Group, Literal, Punct, Spacing, TokenStream, TokenTree};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::strategy::Union;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, Parser};

use crate::expand;

// ---------------------------------------------------------------------------
// The contract.
// ---------------------------------------------------------------------------

/// How long one expansion of a small input may take, in a debug build.
const TIME_LIMIT: Duration = Duration::from_secs(1);

/// What the input was, as far as `syn` can tell.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Input {
    /// Not an item: the expansion need not parse.
    NotAnItem,
    /// An item, but not a function with a body.
    OtherItem,
    Function,
}

/// What the expansion was.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    /// The item and its `_vjp`, without errors.
    Derivative,
    /// Tokens carrying `compile_error!`.
    Error,
}

/// One expansion that kept the contract.
struct Expansion {
    text: String,
    input: Input,
    outcome: Outcome,
    elapsed: Duration,
}

/// Expands `#[differentiate(args)] item` and checks the contract, with a time
/// limit of [`TIME_LIMIT`]: a description of the violation if it is broken.
fn check_contract(args: &TokenStream, item: &TokenStream) -> Result<Expansion, String> {
    check_contract_within(args, item, TIME_LIMIT)
}

/// [`check_contract`] with another time limit.
fn check_contract_within(
    args: &TokenStream,
    item: &TokenStream,
    limit: Duration,
) -> Result<Expansion, String> {
    let case = || format!("#[differentiate({args})]\n{item}");
    let (result, elapsed) = expand_catching_panics(args, item);
    let output = result.map_err(|panic| format!("the macro panicked: {panic}\non {}", case()))?;
    if elapsed >= limit {
        return Err(format!(
            "the expansion took {elapsed:?}, more than {limit:?}, on {}",
            case()
        ));
    }
    let text = output.to_string();
    let function = syn::parse2::<syn::ItemFn>(item.clone()).ok();
    let input = if function.is_some() {
        Input::Function
    } else if syn::parse2::<syn::Item>(item.clone()).is_ok() {
        Input::OtherItem
    } else {
        Input::NotAnItem
    };
    let outcome = if text.contains("compile_error") {
        Outcome::Error
    } else if function.is_some_and(|function| defines_vjp(&output, &function.sig.ident)) {
        Outcome::Derivative
    } else {
        return Err(format!(
            "the expansion has neither `compile_error!` nor a `_vjp`:\n{text}\non {}",
            case()
        ));
    };
    // Without an error it must be valid code; with one, it may only fail to
    // parse if the input did not.
    if (input != Input::NotAnItem || outcome == Outcome::Derivative)
        && let Err(error) = syn::parse2::<syn::File>(output)
    {
        return Err(format!(
            "the expansion does not parse as a file ({error}):\n{text}\non {}",
            case()
        ));
    }
    Ok(Expansion {
        text,
        input,
        outcome,
        elapsed,
    })
}

/// Whether `output` defines `fn <name>_vjp` at its top level.
fn defines_vjp(output: &TokenStream, name: &syn::Ident) -> bool {
    let wanted = format!("{}_vjp", name.unraw());
    let tokens: Vec<TokenTree> = output.clone().into_iter().collect();
    tokens.windows(2).any(|pair| {
        matches!(pair, [TokenTree::Ident(keyword), TokenTree::Ident(ident)]
            if keyword == "fn" && ident.unraw() == wanted)
    })
}

thread_local! {
    /// Set while this thread runs the macro under `catch_unwind`.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The last panic caught on this thread: its location and message.
    static CAUGHT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs the macro, catching a panic: the expansion or the panic's location and
/// message, and the time taken.
fn expand_catching_panics(
    args: &TokenStream,
    item: &TokenStream,
) -> (Result<TokenStream, String>, Duration) {
    // Caught panics are recorded rather than printed; others (other tests')
    // go to the hook that was there before.
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.get() {
                CAUGHT.replace(info.to_string());
            } else {
                previous(info);
            }
        }));
    });
    let watched = Watched::start(format!("#[differentiate({args})]\n{item}"));
    let (args, item) = (args.clone(), item.clone());
    CATCHING.set(true);
    let start = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(move || expand::differentiate(args, item)));
    let elapsed = start.elapsed();
    CATCHING.set(false);
    drop(watched);
    (result.map_err(|_| CAUGHT.take()), elapsed)
}

/// How long an expansion may run before the watchdog ends the test process: a
/// hang can be neither caught nor timed, only reported.
const HANG_LIMIT: Duration = Duration::from_secs(10);

/// The expansions under way: their thread, start, and input.
static RUNNING: Mutex<Vec<(ThreadId, Instant, String)>> = Mutex::new(Vec::new());

/// An expansion the watchdog watches, until dropped.
struct Watched;

impl Watched {
    fn start(case: String) -> Self {
        static WATCHDOG: Once = Once::new();
        WATCHDOG.call_once(|| {
            thread::spawn(|| {
                loop {
                    thread::sleep(Duration::from_millis(200));
                    let running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
                    for (_, start, case) in running.iter() {
                        if start.elapsed() > HANG_LIMIT {
                            eprintln!(
                                "the contract is broken: the macro has been expanding for more \
                                 than {HANG_LIMIT:?}, and probably never ends, on\n{case}"
                            );
                            std::process::exit(101);
                        }
                    }
                }
            });
        });
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.push((thread::current().id(), Instant::now(), case));
        Watched
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let id = thread::current().id();
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|(thread, ..)| *thread != id);
    }
}

/// Counts of the inputs a test tried, printed at its end.
#[derive(Default)]
struct Tally {
    tried: Cell<usize>,
    functions: Cell<usize>,
    other_items: Cell<usize>,
    derivatives: Cell<usize>,
    errors: Cell<usize>,
    slowest: Cell<Duration>,
}

impl Tally {
    /// [`check_contract`], counted.
    fn check(&self, args: &TokenStream, item: &TokenStream) -> Result<Expansion, String> {
        self.tried.set(self.tried.get() + 1);
        let expansion = check_contract(args, item)?;
        self.record(&expansion);
        Ok(expansion)
    }

    fn record(&self, expansion: &Expansion) {
        let bump = |count: &Cell<usize>| count.set(count.get() + 1);
        match expansion.input {
            Input::Function => bump(&self.functions),
            Input::OtherItem => bump(&self.other_items),
            Input::NotAnItem => {}
        }
        match expansion.outcome {
            Outcome::Derivative => bump(&self.derivatives),
            Outcome::Error => bump(&self.errors),
        }
        self.slowest.set(self.slowest.get().max(expansion.elapsed));
    }

    fn report(&self, test: &str, start: Instant) {
        let tried = self.tried.get();
        let kept = self.derivatives.get() + self.errors.get();
        // One line for `.ci/reliability-report`.
        eprintln!(
            "report: {test} | {tried} inputs | {} parse as fns, {} as other items; {} expanded \
             to a _vjp, {} to compile_error!, {} broke the contract; slowest expansion {:?}, all in {:?}",
            self.functions.get(),
            self.other_items.get(),
            self.derivatives.get(),
            self.errors.get(),
            tried - kept,
            self.slowest.get(),
            start.elapsed(),
        );
    }
}

/// A runner of at least `cases` cases (more if `PROPTEST_CASES` says so), with
/// the test's own fixed seed (mixed with `PROPTEST_RNG_SEED` if set), and no
/// regression files.
fn runner(seed: u64, cases: u32) -> TestRunner {
    let defaults = Config::default();
    let rng_seed = match defaults.rng_seed {
        RngSeed::Random => RngSeed::Fixed(seed),
        RngSeed::Fixed(chosen) => RngSeed::Fixed(chosen ^ seed),
    };
    TestRunner::new(Config {
        cases: cases.max(defaults.cases),
        rng_seed,
        failure_persistence: None,
        ..defaults
    })
}

/// Runs `test` on `cases` values of `strategy`; on a failure, panics with the
/// shrunk input and its violation.
///
/// With `FUZZ_SURVEY` set, runs every case instead, and prints each kind of
/// failure (its first line, up to the input) once, with its shortest example.
fn run<S: Strategy>(
    seed: u64,
    cases: u32,
    strategy: &S,
    test: impl Fn(S::Value) -> Result<(), String>,
) {
    let mut runner = runner(seed, cases);
    if std::env::var_os("FUZZ_SURVEY").is_none() {
        if let Err(error) = runner.run(strategy, |value| test(value).map_err(TestCaseError::fail)) {
            panic!("{error}");
        }
        return;
    }
    let failures = RefCell::new(BTreeMap::<String, (usize, String)>::new());
    let surveyed = runner.run(strategy, |value| {
        if let Err(error) = test(value) {
            let kind = error.split("\non ").next().unwrap_or_default();
            let kind = kind.lines().take(2).collect::<Vec<_>>().join(" ");
            let mut failures = failures.borrow_mut();
            let (count, example) = failures.entry(kind).or_insert((0, error.clone()));
            *count += 1;
            if error.len() < example.len() {
                *example = error;
            }
        }
        Ok(())
    });
    surveyed.expect("the survey records failures");
    for (kind, (count, example)) in failures.into_inner() {
        eprintln!("{count} failures of the kind: {kind}\nshortest:\n{example}\n");
    }
}

// ---------------------------------------------------------------------------
// Random tokens.
// ---------------------------------------------------------------------------

/// Identifiers and keywords, as source text (`'a` is a lifetime).
#[rustfmt::skip]
const IDENTS: &[&str] = &[
    "x", "y", "z", "f", "n", "i", "s", "xs", "d_x", "__ad", "t1", "r#type", "_", "f64", "f32",
    "usize", "i32", "u8", "bool", "Vec", "vec", "Box", "Self", "self", "fn", "let", "for", "in",
    "if", "else", "match", "while", "loop", "return", "break", "continue", "mut", "ref", "impl",
    "where", "async", "await", "unsafe", "const", "static", "pub", "crate", "super", "struct",
    "move", "as", "dyn", "true", "false", "ad_runtime", "differentiate", "wrt", "detach",
    "matvec", "sin", "powi", "len", "iter", "zip", "sum", "push", "to_vec", "'a", "'outer",
];

/// Literals, as source text.
#[rustfmt::skip]
const LITERALS: &[&str] = &[
    "0", "1", "2", "3", "0usize", "255u8", "256u8", "2147483648i32", "99999999999999999999999",
    "18446744073709551616", "0.0", "0.5", "1.0", "2.5", "1e-12", "1e308", "1e309", "0.1e-400",
    "1.0_f64", "0.5f32", "1f64", "0x10", "0b101", "1_000", "\"s\"", "r\"raw\"", "b\"ab\"",
    "c\"c\"", "'c'", "b'a'",
];

/// Literal tokens with a minus sign: a macro can produce them, lexing cannot.
const NEGATIVE_LITERALS: &[&str] = &["-0.0", "-1", "-1e308", "-99999999999999999999999"];

/// Punctuation, joint where it has several characters.
const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "=", "==", "!=", "<", ">", "<=", ">=", "!", "&", "&&", "|", "||", "^",
    ".", "..", "..=", ",", ";", ":", "::", "->", "=>", "+=", "-=", "*=", "/=", "%=", "#", "?", "@",
    "$", "~", "<<", ">>", "<<=",
];

/// Punctuation characters, for single tokens of either spacing.
const PUNCT_CHARS: &[char] = &[
    '+', '-', '*', '/', '%', '=', '<', '>', '!', '&', '|', '^', '.', ',', ';', ':', '#', '?', '@',
    '$', '~', '\'',
];

const DELIMITERS: &[Delimiter] = &[
    Delimiter::Parenthesis,
    Delimiter::Bracket,
    Delimiter::Brace,
    Delimiter::None,
];

/// A token tree to generate: plain data, so that proptest can shrink it.
#[derive(Clone, Debug)]
enum Tok {
    /// Source text of a token or two: an ident, a literal, joint punctuation.
    Text(&'static str),
    /// Generated source text, such as a whole function.
    Code(String),
    /// One literal token, which may have a minus sign.
    Literal(&'static str),
    Punct(char, Spacing),
    Group(Delimiter, Vec<Tok>),
}

fn lex(text: &str) -> TokenStream {
    text.parse()
        .unwrap_or_else(|error| panic!("`{text}` does not lex: {error}"))
}

fn stream(toks: &[Tok]) -> TokenStream {
    toks.iter()
        .flat_map(|tok| -> TokenStream {
            match tok {
                Tok::Text(text) => lex(text),
                Tok::Code(code) => lex(code),
                Tok::Literal(text) => {
                    let literal = Literal::from_str(text).expect("a literal");
                    TokenTree::Literal(literal).into()
                }
                Tok::Punct(char, spacing) => TokenTree::Punct(Punct::new(*char, *spacing)).into(),
                Tok::Group(delimiter, toks) => {
                    TokenTree::Group(Group::new(*delimiter, stream(toks))).into()
                }
            }
        })
        .collect()
}

/// A token tree, with groups nested at most three deep.
fn tok() -> impl Strategy<Value = Tok> {
    let leaf = prop_oneof![
        4 => select(IDENTS).prop_map(Tok::Text),
        2 => select(LITERALS).prop_map(Tok::Text),
        1 => select(NEGATIVE_LITERALS).prop_map(Tok::Literal),
        3 => select(PUNCTS).prop_map(Tok::Text),
        1 => (select(PUNCT_CHARS), any::<bool>()).prop_map(|(char, joint)| {
            Tok::Punct(char, if joint { Spacing::Joint } else { Spacing::Alone })
        }),
    ];
    leaf.prop_recursive(3, 48, 6, |inner| {
        (select(DELIMITERS), vec(inner, 0..6))
            .prop_map(|(delimiter, toks)| Tok::Group(delimiter, toks))
    })
}

fn soup(max_len: usize) -> impl Strategy<Value = Vec<Tok>> {
    vec(tok(), 0..max_len)
}

/// Attribute arguments: soup, nothing, or `wrt(soup)`.
fn args_toks() -> impl Strategy<Value = Vec<Tok>> {
    prop_oneof![
        2 => soup(6),
        1 => Just(Vec::new()),
        1 => soup(4).prop_map(|inner| vec![
            Tok::Text("wrt"),
            Tok::Group(Delimiter::Parenthesis, inner),
        ]),
    ]
}

/// Items: soup, soup in the shape of a function, so that some inputs get past
/// `syn` to the signature checks and to lowering, and functions from a small
/// grammar, to get through lowering with odd expressions.
fn item_toks() -> impl Strategy<Value = Vec<Tok>> {
    let brace = |toks| Tok::Group(Delimiter::Brace, toks);
    prop_oneof![
        3 => function_code().prop_map(|code| vec![Tok::Code(code)]),
        1 => select(OTHER_ITEMS).prop_map(|item| vec![Tok::Text(item)]),
        2 => soup(24),
        1 => (soup(6), soup(4), soup(12)).prop_map(move |(params, between, body)| {
            let mut toks = vec![
                Tok::Text("fn"),
                Tok::Text("f"),
                Tok::Group(Delimiter::Parenthesis, params),
            ];
            toks.extend(between);
            toks.push(brace(body));
            toks
        }),
        1 => soup(12).prop_map(move |body| vec![
            Tok::Text("fn f(x: f64, xs: &[f64], n: usize) -> f64"),
            brace(body),
        ]),
        1 => soup(8).prop_map(move |expr| {
            let mut body = vec![Tok::Text("let y = ")];
            body.extend(expr);
            body.push(Tok::Text("; x * y"));
            vec![Tok::Text("fn f(x: f64, xs: &[f64], n: usize) -> f64"), brace(body)]
        }),
    ]
}

/// Items that are not functions with a body, or functions of unusual kinds.
#[rustfmt::skip]
const OTHER_ITEMS: &[&str] = &[
    "struct S { x: f64 }", "enum E { A }", "type T = f64;", "use std::f64;", "mod m {}",
    "const C: f64 = 1.0;", "static S: f64 = 0.0;", "macro_rules! m { () => {} }",
    "impl S { fn f(x: f64) -> f64 { x } }", "trait T { fn f(x: f64) -> f64; }",
    "fn f(x: f64) -> f64;", "extern \"C\" { fn f(x: f64) -> f64; }",
    "mod m { fn f(x: f64) -> f64 { x } }", "unsafe fn f(x: f64) -> f64 { x }",
    "async fn f(x: f64) -> f64 { x }", "const fn f(x: f64) -> f64 { x }",
    "extern \"C\" fn f(x: f64) -> f64 { x }", "fn f<T>(x: T) -> T { x }",
    "fn f(self) -> f64 { 1.0 }", "fn f(&self, x: f64) -> f64 { x }",
    "fn f(x: f64, ...) -> f64 { x }", "fn f(x: f64) -> f64 where f64: Copy { x }",
    "fn f((a, b): (f64, f64)) -> f64 { a * b }", "fn f(x: f64) -> impl Copy { x }",
];

/// Small expressions, many of them odd in a function to differentiate.
#[rustfmt::skip]
const EXPRESSION_LEAVES: &[&str] = &[
    "x", "y", "n", "xs", "unknown", "self", "()", "{}", "0", "2", "1.0", "-0.0", "1e308",
    "1e309", "99999999999999999999999", "true", "'c'", "\"s\"", "f64::EPSILON", "f64::NAN",
    "i32::MAX", "std::f64::consts::PI", "xs[0]", "xs[n]", "xs.len()", "xs.to_vec()",
    "xs.iter()", "&xs[..]", "0..n", "n as f64", "x as f32", "x.sin()", "x.powi(2)",
    "unknown(x)", "ad_runtime::detach(x)", "[x; 3]", "vec![x; n]", "return", "break",
    "continue", "loop {}",
];

/// Larger expressions, which parse: `$a` and `$b` are replaced by smaller ones.
#[rustfmt::skip]
const EXPRESSION_FORMS: &[&str] = &[
    "$a + $b", "$a * $b", "$a - $b", "$a / $b", "$a % $b", "-$a", "!$a", "($a)", "$a < $b",
    "$a == $b", "$a && $b", "$a.sin()", "$a.powf($b)", "$a.powi($b)", "$a.max($b)",
    "$a.mul_add($b, $a)", "f64::atan2($a, $b)", "$a as f64", "$a as usize", "$a as i32",
    "f64::from($a)", "if $a > $b { $a } else { $b }", "if $a { $b }", "{ let t = $a; t * $b }",
    "{ $a; $b }", "loop { break $a; }", "'l: loop { if $a > $b { break 'l $a; } }",
    "match n { 0 => $a, 1..=3 => $b, _ => $a }", "match $a { _ => $b }", "[$a, $b][0]",
    "$a[$b]", "&$a", "*$a", "&mut $a", "($a, $b).0", "($a, $b)", "return $a", "break $a",
    "$a = $b", "$a += $b", "$a..$b", "|| $a", "ad_runtime::detach($a)",
    "ad_runtime::dot(&$a, &$b)", "ad_runtime::sum(&[$a, $b])", "vec![$a; $b]",
    "{ for i in 0..n { $a; } $b }", "{ while $a < $b {} $a }", "unsafe { $a }", "$a?",
    "$a.len()", "$a.iter().sum::<f64>()", "$a.to_vec()",
];

/// Statements: `$e` is replaced by an expression.
#[rustfmt::skip]
const STATEMENT_FORMS: &[&str] = &[
    "let y = $e;", "let mut y = $e;", "let y: f64 = $e;", "let (a, b) = ($e, $e);", "y = $e;",
    "y += $e;", "x = $e;", "xs[0] = $e;", "$e;", "if $e > 0.0 { return $e; }",
    "for i in 0..n { y *= $e; }", "while y < $e { y += 1.0; }", "let v = vec![$e; n];",
    "return $e;",
];

const HEADERS: &[&str] = &[
    "fn f(x: f64, xs: &[f64], n: usize) -> f64",
    "fn f(x: f64, xs: &mut [f64], n: usize)",
    "fn f(x: f64, xs: &[f64], n: i32) -> (f64, f64)",
    "fn f(x: f32, xs: &Vec<f32>, n: usize) -> f32",
    "fn f(mut x: f64, xs: &[f64; 3], n: usize) -> Vec<f64>",
];

/// An expression of [`EXPRESSION_FORMS`], nested up to three deep.
fn expression() -> impl Strategy<Value = String> {
    let leaf = select(EXPRESSION_LEAVES).prop_map(str::to_owned);
    leaf.prop_recursive(3, 12, 2, |inner| {
        (select(EXPRESSION_FORMS), inner.clone(), inner)
            .prop_map(|(form, a, b)| form.replace("$a", &a).replace("$b", &b))
    })
}

/// A function of a header, statements and maybe a tail expression.
fn function_code() -> impl Strategy<Value = String> {
    let statement = (select(STATEMENT_FORMS), expression())
        .prop_map(|(form, expression)| form.replace("$e", &expression));
    let tail = prop_oneof![Just(String::new()), Just("y".to_owned()), expression()];
    (select(HEADERS), vec(statement, 0..4), tail).prop_map(|(header, statements, tail)| {
        format!(
            "{header} {{ let mut y = x; {} {tail} }}",
            statements.join(" ")
        )
    })
}

#[test]
fn arbitrary_tokens_never_panic() {
    let start = Instant::now();
    let tally = Tally::default();
    run(
        0xad_0001,
        4000,
        &(args_toks(), item_toks()),
        |(args, item)| {
            tally.check(&stream(&args), &stream(&item))?;
            Ok(())
        },
    );
    tally.report("arbitrary tokens", start);
    assert!(tally.tried.get() >= 4000);
}

// ---------------------------------------------------------------------------
// The corpus and its mutations.
// ---------------------------------------------------------------------------

/// Functions the macro accepts, as `(args, item)`: the fixtures of `tests.rs`,
/// then more buffers, loops, exits and runtime primitives.
#[rustfmt::skip]
const CORPUS: &[(&str, &str)] = &[
    ("", "fn f(x: f64, y: f64) -> f64 { let s = x * y; s.sin() + s * x }"),
    ("", "fn f(x: f64, y: f64) -> f64 { let s = x + y; s * s }"),
    ("", "fn f(x: f64, y: f64) -> f64 { x * y + x + y }"),
    ("", "fn f(x: f64) -> f64 { let mut x = x; x = x * x; x = x + 1.0; x }"),
    ("", "fn f(x: f64, y: f64) -> f64 { let mut s = x; s += y; s *= x; s -= 2.0; s /= y; s }"),
    ("", "fn f(x: f64, y: f64) -> f64 { -(x - y) - -x }"),
    ("", "fn f(x: f64, y: f64) -> f64 { x / y }"),
    ("", "fn f(x: f64) -> f64 { x / 4.0 }"),
    ("", "fn f(x: f64) -> f64 { let y = { let x = x * 2.0; x + 1.0 }; let y = y * y; y }"),
    ("", "fn f(x: f64) -> f64 { x.sin() * f64::cos(x) }"),
    ("", "fn f(x: f64) -> f64 { x.exp() + x.sqrt() + x.tanh() }"),
    ("", "fn f(y: f64, x: f64) -> f64 { y.atan2(x) }"),
    ("", "fn f(x: f64) -> f64 { x.powf(2.5) + 2.0_f64.powf(x) }"),
    ("", "fn f(x: f64, n: i32) -> f64 { x.powi(n) + x.powi(3) }"),
    ("", "fn f(a: f64, b: f64, c: f64) -> f64 { a.mul_add(b, c) }"),
    ("", "fn f(x: f64) -> f64 { x * 2.0_f64.sqrt() + f64::sin(1.0) * x }"),
    ("", "fn f(x: f64) -> f64 { std::f64::consts::PI * x + f64::EPSILON }"),
    ("", "fn f(x: f64, n: usize) -> f64 { x * (n as f64) + (n * 2) as f64 }"),
    ("", "fn f(x: f32, y: f64) -> f64 { (x as f64) * y + (y as f32 * x) as f64 }"),
    ("", "fn f(x: f32, b: bool, k: i32) -> f64 { f64::from(x) * f64::from(b) + f64::from(k) }"),
    ("", "fn f(x: f32) -> f32 { x.ln() * 3.0 }"),
    ("", "fn f(x: f64, y: f64) -> (f64, f64) { (x * y, x + y) }"),
    ("wrt(y)", "fn f(x: f64, y: f64) -> f64 { x * y }"),
    ("", "fn f(x: f64) -> f64 { let c = ad_runtime::detach(x * x); c * x }"),
    ("", "fn f(n: i32) -> f64 { let y = n as f64; y }"),
    ("", "fn f(x: f64, y: f64) -> f64 { x * 2.0 }"),
    ("", "fn f(r#type: f64, d_type: f64, d_out: f64) -> f64 { let t1 = r#type * d_type; t1 * d_out }"),
    ("", "#[cfg(all())] pub fn f(x: f64) -> f64 { x * x }"),
    ("", "fn f(x: f64, y: f64) -> f64 { if x > y { x * y } else { x.sin() } }"),
    ("", "fn f(x: f64) -> f64 { let mut s = x; let mut k = 1; if x < 0.0 { s = -x * s; k = 2; } s * k as f64 }"),
    ("", "fn f(x: f64, n: i32) -> f64 { if n == 0 { x } else if n == 1 { x * x } else { x.exp() } }"),
    ("", "fn f(x: f64, y: f64) -> f64 { let z = if x > 0.0 { let t = x.sqrt(); if y > 0.0 { t * y.ln() } else { t } } else { y }; z * 2.0 }"),
    ("", "fn f(x: f64, n: i32) -> f64 { match n { 0 => x, 1 | 2 => x * x, 3..=5 => x.sin(), k if k < 0 => -x, _ => x.exp() } }"),
    ("", "fn f(x: f64, n: usize) -> f64 { let mut p = 1.0; for _ in 0..n { p *= x; } p }"),
    ("", "fn f(x: f64, c: f64, n: usize) -> f64 { let mut s = 0.0; for i in 0..n { s += c * x * i as f64; } s }"),
    ("", "fn f(a: f64) -> f64 { let mut y = a; while (y * y - a).abs() > 1e-12 * a { y = 0.5 * (y + a / y); } y }"),
    ("", "fn f(x: f64) -> f64 { loop { break x * x; } }"),
    ("", "fn f(x: f64, n: usize) -> f64 { let mut s = 0.0; for i in 0..n { if i % 2 == 1 { continue; } s += x; if s > 3.0 { break; } } s }"),
    ("", "fn f(x: f64, n: usize) -> f64 { let mut s = x; 'outer: for _ in 0..n { let mut j = 0; while j < n { j += 1; s *= x; if s > 9.0 { break 'outer; } } } s }"),
    ("", "fn f(x: f64) -> f64 { if x < 0.0 { return -x; } let y = x.sqrt(); y * x }"),
    ("", "fn f(xs: &[f64], c: f64) -> f64 { let mut s = 0.0; for i in 0..xs.len() { s += c * xs[i] * xs[i]; } s }"),
    ("", "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() - 1 { let a = 1.0 - x[i]; let b = x[i + 1] - x[i] * x[i]; s += a * a + 100.0 * b * b; } s }"),
    ("", "fn f(x: &Vec<f64>) -> Vec<f64> { let mut y = vec![0.0; x.len()]; for i in 0..x.len() { y[i] = x[i] * x[i]; } y }"),
    ("", "fn f(x: &[f64; 3]) -> [f64; 3] { let mut y = [0.0; 3]; y[0] = x[0] * x[1]; y[1] = x[1] * x[2]; y[2] = x[2] * x[0]; y }"),
    ("", "fn step(u: &mut [f64], dt: f64) { for i in 0..u.len() { u[i] = u[i] - dt * u[i] * u[i]; } }"),
    ("", "fn f(x: &[f64], y: &mut [f64]) { for i in 0..x.len() { y[i] += 2.0 * x[i]; y[i] *= x[i]; y[i] -= x[i]; } }"),
    ("", "fn f(x: &[f64], steps: usize) -> f64 { let mut v = x.to_vec(); for _ in 0..steps { for i in 0..v.len() { v[i] = v[i] * v[i] * 0.5 + x[i]; } } v[0] + v[v.len() - 1] }"),
    ("", "fn f(x: &[f64], n: usize) -> f64 { let mut h = vec![0.0; n]; for j in 0..n { h[j] = (x[j] * 2.0).tanh(); } let mut s = 0.0; for j in 0..n { s += h[j] * h[j]; } s }"),
    ("", "fn f(xs: &[f64], ys: &[f64]) -> f64 { let mut s = 0.0; for &x in xs.iter() { s += x * x; } for (i, y) in ys.iter().enumerate() { s += y * (i as f64); } for (x, &y) in xs.iter().zip(ys) { s += *x * y; } s }"),
    ("", "fn f(xs: &[f64]) -> f64 { let mut v = xs.to_vec(); for e in v.iter_mut() { *e = *e * *e; } let s: f64 = v.iter().sum(); s * xs.iter().product::<f64>() }"),
    ("", "fn f(x: &[f64]) -> Vec<f64> { let mut v = Vec::with_capacity(x.len()); for i in 0..x.len() { v.push(x[i].sin()); } v }"),
    ("", "fn f(w: &[f64], x: &[f64], m: usize, n: usize) -> f64 { let mut h = vec![0.0; m]; ad_runtime::matvec(w, x, &mut h, m, n); ad_runtime::dot(&h, &h) + ad_runtime::logsumexp(&h) }"),
    ("", "fn f(b: &[f64]) -> f64 { let mut z = vec![0.0; b.len()]; for o in 0..b.len() { let mut acc = b[o]; for _ in 0..2 { acc += acc * 0.5; } z[o] = acc; } z[0] }"),
    ("", "fn f(a: f64, b: f64, n: usize) -> f64 { let v = vec![a; n]; let w = vec![a, b]; let mut c = w.clone(); c[0] *= b; let arr = [a, b, 1.0]; v[0] + c[0] + c[1] + arr[0] * arr[1] }"),
    ("", "fn f(w: &[f64], x: &[f64]) -> f64 { let mut v = x.to_vec(); let mut y = vec![0.0; 2]; ad_runtime::matvec(w, &v, &mut y, 2, 2); v[0] = 0.0; y[0] + y[1] + v[1] }"),
    ("", "fn f(z: &[f64], rows: usize) -> f64 { let mut row = vec![0.0; 3]; let mut total = 0.0; for r in 0..rows { for j in 0..3 { row[j] = z[r * 3 + j]; } total += ad_runtime::logsumexp(&row); } total }"),
    ("", "fn f(x: &[f64], y: &mut [f64]) { for i in 0..x.len() { if x[i] > 0.0 { y[i] = x[i] * x[i]; } else { y[i] = -3.0 * x[i]; } } }"),
    // Not from the fixtures.
    ("", "fn f(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> f64 { let mut c = vec![0.0; m * n]; ad_runtime::matmul(a, b, &mut c, m, k, n); let mut s = 0.0; for i in 0..c.len() { s += c[i] * c[i]; } s }"),
    ("", "fn f(x: &[f64]) -> Vec<f64> { let mut y = vec![0.0; x.len()]; ad_runtime::softmax(x, &mut y); y }"),
    ("", "fn f(a: f64, x: &[f64], y: &mut [f64]) { ad_runtime::axpy(a, x, y); }"),
    ("", "fn f(w: &[f64], x: &[f64], y: &mut [f64], m: usize, n: usize) { ad_runtime::matvec(w, x, y, m, n); }"),
    ("", "fn f(x: &[f64], y: &[f64]) -> f64 { ad_runtime::dot(x, y) + ad_runtime::norm2(x) * ad_runtime::sum(y) }"),
    ("", "fn f(v: &mut Vec<f64>, s: f64) { for i in 0..v.len() { v[i] = v[i] * s + v[i].sin(); } }"),
    ("", "fn f(x: &mut [f64; 3], a: f64) { x[0] *= a; x[1] += x[0]; x[2] = x[1].exp(); }"),
    ("", "fn f(x: f64) -> f64 { let mut y = x; let mut i = 0; while i < 100 { y = 0.5 * y + x; if y > 10.0 { break; } i += 1; } y }"),
    ("", "fn f(x: f64) -> f64 { let mut y = x; 'l: loop { y = y * 0.9; if y < 1.0 { break 'l; } } y }"),
    ("", "fn f(x: f64, n: usize) -> f64 { let mut s = x; for i in 0..n { match i % 3 { 0 => s *= x, 1 => { s += x.sin(); } _ => s -= 1.0, } } s }"),
    ("", "fn f(x: f64, flag: bool) -> f64 { let mut acc = x; match flag { true => acc *= x, false => { acc += x.cosh(); } } acc }"),
    ("", "fn f(x: f64, n: usize) -> f64 { let mut s = x; for i in 0..n { s = s * x; if s > 100.0 { return s - i as f64; } } s }"),
    ("", "fn f(x: &[f64]) -> (f64, f64) { let mut a = 0.0; let mut b = 1.0; for i in 0..x.len() { a += x[i]; b *= x[i]; } (a, b) }"),
    ("", "fn f(x: f64, n: usize) -> Vec<f64> { let mut v = Vec::new(); let mut i = 0; while i < n { v.push(x * i as f64); i += 1; } v }"),
    ("wrt(w)", "fn f(w: &[f32], x: &[f32]) -> f32 { let mut s = 0.0; for i in 0..w.len() { s += w[i] * x[i]; } s }"),
    ("", "fn f(x: f64, n: i32) -> f64 { let mut a = x; for i in (1..=n).rev() { a = a * f64::from(i) + x; } let mut b = 0.0; for k in (0..10).step_by(3) { b += x.powi(k); } a + b }"),
];

/// Attribute arguments that replace a corpus function's, valid or not.
#[rustfmt::skip]
const ARGS: &[&str] = &[
    "", "wrt(x)", "wrt(y)", "wrt(x, y)", "wrt(x,)", "wrt()", "wrt(nope)", "wrt(x, x)", "wrt(n)",
    "wrt", "wrt(x) wrt(y)", "wrt(x),", "wrt(1)", "wrt = x", "wrt[x]", "wrt(x,,)", "foo",
    "wrt(self)",
];

/// Parameter and return types.
#[rustfmt::skip]
const TYPES: &[&str] = &[
    "f64", "f32", "&f64", "&mut f64", "&[f64]", "&mut [f64]", "&[f32]", "&&[f64]",
    "&mut &mut [f64]", "[f64; 0]", "[f64; 3]", "&[f64; 0]", "&mut [f64; 3]",
    "&[f64; 99999999999999999999999]", "[f64; N]", "&[[f64; 2]; 2]", "Vec<f64>", "&Vec<f64>",
    "&mut Vec<f64>", "&mut Vec<f32>", "Vec<Vec<f64>>", "Box<f64>", "Option<f64>", "(f64, f64)",
    "(f64,)", "(f64, Vec<f64>)", "()", "!", "i32", "usize", "u8", "bool", "&str", "impl Fn()",
    "impl Fn(f64) -> f64", "&dyn Fn()", "fn(f64) -> f64", "Self", "T", "_", "&'a [f64]",
    "*const f64", "std::vec::Vec<f64>", "::core::primitive::f64", "f64x4",
];

/// Parameter patterns.
#[rustfmt::skip]
const PATTERNS: &[&str] = &[
    "x", "y", "n", "mut x", "_", "(a, b)", "&x", "ref x", "ref mut x", "x @ _", "[a, b]",
    "mut r#type", "S { a }", "(..)", "X", "d_x", "d_out", "__ad", "f_vjp",
];

/// Attributes, among them a second `#[differentiate]`.
#[rustfmt::skip]
const ATTRS: &[&str] = &[
    "#[differentiate]", "#[differentiate(wrt(x))]", "#[ad_runtime::differentiate]", "#[inline]",
    "#[cfg(test)]", "#[doc = \"x\"]", "#[allow(unused)]", "#[must_use]", "#[track_caller]",
];

/// Inserted before `fn`.
#[rustfmt::skip]
const QUALIFIERS: &[&str] = &[
    "pub", "pub(crate)", "async", "unsafe", "const", "extern \"C\"",
    "const async unsafe extern \"C\"", "default",
];

/// Inserted after the function's name.
#[rustfmt::skip]
const GENERICS: &[&str] = &[
    "<T>", "<'a>", "<T: Copy>", "<const N: usize>", "<T, U>", "<>",
];

/// A token tree whose groups can be edited in place.
#[derive(Clone)]
enum Node {
    Leaf(TokenTree),
    Group(Delimiter, Vec<Node>),
}

fn nodes(tokens: TokenStream) -> Vec<Node> {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => Node::Group(group.delimiter(), nodes(group.stream())),
            leaf => Node::Leaf(leaf),
        })
        .collect()
}

fn tokens(nodes: &[Node]) -> TokenStream {
    nodes
        .iter()
        .map(|node| match node {
            Node::Leaf(tree) => tree.clone(),
            Node::Group(delimiter, inner) => {
                TokenTree::Group(Group::new(*delimiter, tokens(inner)))
            }
        })
        .collect()
}

/// The path (indices into nested groups) of every node that `keep` accepts, in
/// pre-order.
fn find(list: &[Node], keep: fn(&Node) -> bool) -> Vec<Vec<usize>> {
    fn walk(
        list: &[Node],
        keep: fn(&Node) -> bool,
        path: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        for (index, node) in list.iter().enumerate() {
            path.push(index);
            if keep(node) {
                out.push(path.clone());
            }
            if let Node::Group(_, inner) = node {
                walk(inner, keep, path, out);
            }
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(list, keep, &mut Vec::new(), &mut out);
    out
}

/// The list that holds the node at `path`, and the node's index in it.
fn siblings<'a>(mut list: &'a mut Vec<Node>, path: &[usize]) -> (&'a mut Vec<Node>, usize) {
    let (&index, parents) = path.split_last().expect("a non-empty path");
    for &parent in parents {
        let current = list;
        list = match &mut current[parent] {
            Node::Group(_, inner) => inner,
            Node::Leaf(_) => unreachable!("paths go through groups"),
        };
    }
    (list, index)
}

#[derive(Clone, Copy, Debug)]
enum TokenEditKind {
    Delete,
    Duplicate,
    SwapWithNext,
    ReplaceIdent,
    ReplaceLiteral,
    ReplacePunct,
    Insert,
    /// Wraps the node and up to `len - 1` next siblings in a group.
    Wrap,
    /// Replaces a group by its contents.
    Flatten,
}

/// The token edits, weighted: replacements keep the syntax more often.
const TOKEN_EDITS: &[(u32, TokenEditKind)] = &[
    (1, TokenEditKind::Delete),
    (1, TokenEditKind::Duplicate),
    (1, TokenEditKind::SwapWithNext),
    (3, TokenEditKind::ReplaceIdent),
    (3, TokenEditKind::ReplaceLiteral),
    (1, TokenEditKind::ReplacePunct),
    (1, TokenEditKind::Insert),
    (1, TokenEditKind::Wrap),
    (1, TokenEditKind::Flatten),
];

/// An edit of one token (or group), anywhere in the tree.
#[derive(Clone, Debug)]
struct TokenEdit {
    kind: TokenEditKind,
    /// Which of the nodes the edit applies to.
    at: Index,
    /// Which replacement or inserted token.
    pick: Index,
    len: usize,
    delimiter: Delimiter,
}

impl TokenEdit {
    fn apply(&self, tree: &mut Vec<Node>) {
        use TokenEditKind::*;
        let keep: fn(&Node) -> bool = match self.kind {
            ReplaceIdent => |node| matches!(node, Node::Leaf(TokenTree::Ident(_))),
            ReplaceLiteral => |node| matches!(node, Node::Leaf(TokenTree::Literal(_))),
            ReplacePunct => |node| matches!(node, Node::Leaf(TokenTree::Punct(_))),
            Flatten => |node| matches!(node, Node::Group(..)),
            Delete | Duplicate | SwapWithNext | Insert | Wrap => |_| true,
        };
        let paths = find(tree, keep);
        if paths.is_empty() {
            if let Insert = self.kind {
                tree.extend(self.inserted());
            }
            return;
        }
        let path: &Vec<usize> = self.at.get(&paths);
        let (list, index) = siblings(tree, path);
        match self.kind {
            Delete => drop(list.remove(index)),
            Duplicate => list.insert(index, list[index].clone()),
            SwapWithNext if index + 1 < list.len() => list.swap(index, index + 1),
            SwapWithNext if index > 0 => list.swap(index - 1, index),
            SwapWithNext => {}
            ReplaceIdent => drop(list.splice(index..=index, nodes(lex(choose(self.pick, IDENTS))))),
            ReplaceLiteral => {
                let all = LITERALS.len() + NEGATIVE_LITERALS.len();
                let literal = match self.pick.index(all) {
                    pick if pick < LITERALS.len() => lex(LITERALS[pick]),
                    pick => stream(&[Tok::Literal(NEGATIVE_LITERALS[pick - LITERALS.len()])]),
                };
                drop(list.splice(index..=index, nodes(literal)));
            }
            ReplacePunct => {
                if let Node::Leaf(TokenTree::Punct(punct)) = &list[index] {
                    let punct = Punct::new(choose(self.pick, PUNCT_CHARS), punct.spacing());
                    list[index] = Node::Leaf(TokenTree::Punct(punct));
                }
            }
            Insert => drop(list.splice(index..index, self.inserted())),
            Wrap => {
                let end = (index + self.len).min(list.len());
                let wrapped = list.drain(index..end).collect();
                list.insert(index, Node::Group(self.delimiter, wrapped));
            }
            Flatten => {
                if let Node::Group(_, inner) = list.remove(index) {
                    drop(list.splice(index..index, inner));
                }
            }
        }
    }

    /// What `Insert` inserts: any ident, literal or punctuation.
    fn inserted(&self) -> Vec<Node> {
        let pick = self
            .pick
            .index(IDENTS.len() + LITERALS.len() + PUNCTS.len());
        let text = IDENTS.iter().chain(LITERALS).chain(PUNCTS).nth(pick);
        nodes(lex(text.expect("an index in range")))
    }
}

#[derive(Clone, Copy, Debug)]
enum SynEditKind {
    ParamType,
    ParamPattern,
    AddParam,
    ReturnType,
    /// Inserts a statement of another corpus function.
    InsertStatement,
    RemoveStatement,
    AddAttribute,
    /// Inserts a qualifier before `fn`.
    Qualify,
    /// Inserts generics after the name.
    AddGenerics,
}

const SYN_EDITS: &[SynEditKind] = &[
    SynEditKind::ParamType,
    SynEditKind::ParamPattern,
    SynEditKind::AddParam,
    SynEditKind::ReturnType,
    SynEditKind::InsertStatement,
    SynEditKind::RemoveStatement,
    SynEditKind::AddAttribute,
    SynEditKind::Qualify,
    SynEditKind::AddGenerics,
];

/// An edit of the function's syntax tree; nothing if the item is no longer a
/// function.
#[derive(Clone, Debug)]
struct SynEdit {
    kind: SynEditKind,
    /// Which parameter, statement or attribute position.
    at: Index,
    /// Which type, pattern, statement or attribute.
    pick: Index,
    /// Which corpus function gives a statement, or which name a new parameter.
    donor: Index,
}

impl SynEdit {
    fn apply(&self, tree: &mut Vec<Node>) {
        use SynEditKind::*;
        let Ok(mut func) = syn::parse2::<syn::ItemFn>(tokens(tree)) else {
            return;
        };
        let inputs = &mut func.sig.inputs;
        let stmts = &mut func.block.stmts;
        match self.kind {
            ParamType | ParamPattern if inputs.is_empty() => self.add_param(&mut func.sig),
            ParamType | ParamPattern => {
                let at = self.at.index(inputs.len());
                if let Some(syn::FnArg::Typed(param)) = inputs.iter_mut().nth(at) {
                    if let ParamType = self.kind {
                        *param.ty = parse(syn::Type::parse, choose(self.pick, TYPES));
                    } else {
                        *param.pat = parse(syn::Pat::parse_single, choose(self.pick, PATTERNS));
                    }
                }
            }
            AddParam => self.add_param(&mut func.sig),
            ReturnType => {
                let ty = self.pick.index(TYPES.len() + 1);
                func.sig.output = match TYPES.get(ty) {
                    Some(ty) => parse(syn::ReturnType::parse, &format!("-> {ty}")),
                    None => syn::ReturnType::Default,
                };
            }
            InsertStatement => {
                let donor = parse(syn::ItemFn::parse, self.donor.get(CORPUS).1);
                if donor.block.stmts.is_empty() {
                    return;
                }
                let mut stmt = self.pick.get(&donor.block.stmts).clone();
                let at = self.at.index(stmts.len() + 1);
                // Only the last statement may go without a semicolon.
                if let syn::Stmt::Expr(_, semi @ None) = &mut stmt
                    && at < stmts.len()
                {
                    *semi = Some(Default::default());
                }
                if let Some(syn::Stmt::Expr(_, semi @ None)) =
                    at.checked_sub(1).map(|before| &mut stmts[before])
                {
                    *semi = Some(Default::default());
                }
                stmts.insert(at, stmt);
            }
            RemoveStatement if stmts.is_empty() => {}
            RemoveStatement => drop(stmts.remove(self.at.index(stmts.len()))),
            AddAttribute => {
                let attrs = parse(syn::Attribute::parse_outer, choose(self.pick, ATTRS));
                let at = self.at.index(func.attrs.len() + 1);
                drop(func.attrs.splice(at..at, attrs));
            }
            Qualify | AddGenerics => {
                // Token surgery: before `fn`, or after the name.
                let is_fn = |node: &Node| matches!(node, Node::Leaf(TokenTree::Ident(ident)) if ident == "fn");
                // `fn` may be in an invisible group.
                let Some(fn_at) = tree.iter().position(is_fn) else {
                    return;
                };
                let (at, text) = match self.kind {
                    Qualify => (fn_at, choose(self.pick, QUALIFIERS)),
                    _ => (fn_at + 2, choose(self.pick, GENERICS)),
                };
                drop(tree.splice(at..at, nodes(lex(text))));
                return;
            }
        }
        *tree = nodes(func.into_token_stream());
    }

    fn add_param(&self, sig: &mut syn::Signature) {
        const NAMES: &[&str] = &["x", "z", "xs", "n", "d_x", "self"];
        let param = format!(
            "{}: {}",
            choose(self.donor, NAMES),
            choose(self.pick, TYPES)
        );
        let at = self.at.index(sig.inputs.len() + 1);
        let mut params = Vec::from_iter(std::mem::take(&mut sig.inputs));
        params.insert(at, parse(syn::FnArg::parse, &param));
        sig.inputs = params.into_iter().collect();
    }
}

/// The entry of `list` that `index` picks.
fn choose<T: Copy>(index: Index, list: &[T]) -> T {
    list[index.index(list.len())]
}

/// Parses text of ours, which is valid.
fn parse<T>(parser: fn(syn::parse::ParseStream<'_>) -> syn::Result<T>, text: &str) -> T {
    parser
        .parse_str(text)
        .unwrap_or_else(|error| panic!("`{text}`: {error}"))
}

/// Replaces an ident or literal of the function's body (its last top-level
/// `{…}`) by `(expression)`.
fn replace_in_body(tree: &mut [Node], at: Index, expression: &str) {
    let body = tree.iter_mut().rev().find_map(|node| match node {
        Node::Group(Delimiter::Brace, body) => Some(body),
        _ => None,
    });
    let Some(body) = body else {
        return;
    };
    let leaf = |node: &Node| {
        matches!(
            node,
            Node::Leaf(TokenTree::Ident(_) | TokenTree::Literal(_))
        )
    };
    let paths = find(body, leaf);
    if !paths.is_empty() {
        let path: &Vec<usize> = at.get(&paths);
        let (list, index) = siblings(body, path);
        list[index] = Node::Group(Delimiter::Parenthesis, nodes(lex(expression)));
    }
}

#[derive(Clone, Debug)]
enum Edit {
    Token(TokenEdit),
    Syn(SynEdit),
    /// Replaces an ident or literal by a parenthesized [`expression`].
    Expression(Index, String),
}

/// A corpus function, maybe other arguments, and one to four edits.
#[derive(Clone, Debug)]
struct Mutant {
    function: Index,
    args: Option<Index>,
    edits: Vec<Edit>,
}

impl Mutant {
    /// The attribute's arguments and the item.
    fn build(&self) -> (TokenStream, TokenStream) {
        let (args, item) = self.function.get(CORPUS);
        let args = self.args.map_or(*args, |pick| choose(pick, ARGS));
        let mut tree = nodes(lex(item));
        for edit in &self.edits {
            match edit {
                Edit::Token(edit) => edit.apply(&mut tree),
                Edit::Syn(edit) => edit.apply(&mut tree),
                Edit::Expression(at, expression) => replace_in_body(&mut tree, *at, expression),
            }
        }
        (lex(args), tokens(&tree))
    }
}

fn mutant() -> impl Strategy<Value = Mutant> {
    let kinds = TOKEN_EDITS
        .iter()
        .map(|&(weight, kind)| (weight, Just(kind)));
    let token_edit = (
        Union::new_weighted(kinds.collect()),
        any::<Index>(),
        any::<Index>(),
        1..4_usize,
        select(DELIMITERS),
    )
        .prop_map(|(kind, at, pick, len, delimiter)| {
            Edit::Token(TokenEdit {
                kind,
                at,
                pick,
                len,
                delimiter,
            })
        });
    let syn_edit = (
        select(SYN_EDITS),
        any::<Index>(),
        any::<Index>(),
        any::<Index>(),
    )
        .prop_map(|(kind, at, pick, donor)| {
            Edit::Syn(SynEdit {
                kind,
                at,
                pick,
                donor,
            })
        });
    let expression_edit = (any::<Index>(), expression())
        .prop_map(|(at, expression)| Edit::Expression(at, expression));
    let edit = prop_oneof![3 => token_edit, 3 => syn_edit, 1 => expression_edit];
    (
        any::<Index>(),
        proptest::option::weighted(0.2, any::<Index>()),
        vec(edit, 1..=4),
    )
        .prop_map(|(function, args, edits)| Mutant {
            function,
            args,
            edits,
        })
}

#[test]
fn corpus_functions_are_differentiable() {
    for (args, item) in CORPUS {
        let expansion =
            check_contract(&lex(args), &lex(item)).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            expansion.outcome,
            Outcome::Derivative,
            "the corpus should hold functions the macro accepts: {item}\n{}",
            expansion.text
        );
    }
}

#[test]
fn mutated_functions_keep_the_contract() {
    let start = Instant::now();
    let tally = Tally::default();
    run(0xad_0002, 3000, &mutant(), |mutant| {
        let (args, item) = mutant.build();
        tally.check(&args, &item)?;
        Ok(())
    });
    tally.report("mutated functions", start);
    assert!(tally.tried.get() >= 3000);
}

// ---------------------------------------------------------------------------
// Determinism and time.
// ---------------------------------------------------------------------------

/// Expands each `(args, item)` source, in order.
fn expand_all(cases: &[(String, String)]) -> Vec<Result<String, String>> {
    cases
        .iter()
        .map(|(args, item)| check_contract(&lex(args), &lex(item)).map(|expansion| expansion.text))
        .collect()
}

/// Where two expansions first differ, with some context.
fn difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let context = |text: &str| {
        let chars = text.char_indices();
        let near = chars.filter(|&(index, _)| index + 80 >= at && index < at + 80);
        near.map(|(_, char)| char).collect::<String>()
    };
    format!("at byte {at}:\n  {}\nvs\n  {}", context(a), context(b))
}

/// Expands each case in this thread and in two others: all the same.
fn check_same_in_threads(cases: &[(String, String)]) {
    let here = expand_all(cases);
    let (one, two) = thread::scope(|scope| {
        let one = scope.spawn(|| expand_all(cases));
        let two = scope.spawn(|| expand_all(cases));
        (one.join().expect("no panic"), two.join().expect("no panic"))
    });
    for (index, case) in cases.iter().enumerate() {
        let here = here[index]
            .as_ref()
            .unwrap_or_else(|error| panic!("{error}"));
        for there in [&one[index], &two[index]] {
            let there = there.as_ref().unwrap_or_else(|error| panic!("{error}"));
            assert!(
                here == there,
                "another thread expands `#[differentiate({})] {}` differently, {}",
                case.0,
                case.1,
                difference(here, there)
            );
        }
    }
}

#[test]
fn expansion_is_deterministic() {
    let start = Instant::now();
    let corpus: Vec<(String, String)> = CORPUS
        .iter()
        .map(|&(args, item)| (args.to_owned(), item.to_owned()))
        .collect();
    for (args, item) in &corpus {
        let first =
            check_contract(&lex(args), &lex(item)).unwrap_or_else(|error| panic!("{error}"));
        let second =
            check_contract(&lex(args), &lex(item)).unwrap_or_else(|error| panic!("{error}"));
        assert!(
            first.text == second.text,
            "`{item}` expands differently the second time, {}",
            difference(&first.text, &second.text)
        );
    }
    check_same_in_threads(&corpus);

    // Mutants: twice here, then (as source text, since tokens cannot cross
    // threads) in two threads.
    let mutants = RefCell::new(Vec::new());
    run(0xad_0003, 300, &mutant(), |mutant| {
        let (args, item) = mutant.build();
        let first = check_contract(&args, &item)?;
        let second = check_contract(&args, &item)?;
        if first.text != second.text {
            return Err(format!(
                "`{item}` expands differently the second time, {}",
                difference(&first.text, &second.text)
            ));
        }
        let (args, item) = (args.to_string(), item.to_string());
        // Some tokens do not survive printing (a lone `'`): skip those.
        if args.parse::<TokenStream>().is_ok() && item.parse::<TokenStream>().is_ok() {
            mutants.borrow_mut().push((args, item));
        }
        Ok(())
    });
    let mutants = mutants.into_inner();
    check_same_in_threads(&mutants);
    eprintln!(
        "report: determinism | {} inputs | {} corpus functions and {} mutants, each expanded \
         twice here and once in each of two threads, byte-identical, in {:?}",
        corpus.len() + mutants.len(),
        corpus.len(),
        mutants.len(),
        start.elapsed()
    );
    assert!(mutants.len() >= 250);
}

/// A function of `lets` straight-line statements, then a loop of `body`
/// statements.
fn large_function(lets: usize, body: usize) -> String {
    let mut text = String::from(
        "fn big(x: f64, y: f64, xs: &[f64], n: usize) -> f64 {\n let v0 = x * y;\n let v1 = v0 + x;\n let v2 = v1.sin() * y;\n",
    );
    for i in 3..lets {
        let (a, b, c) = (i - 1, i - 2, i - 3);
        let statement = match i % 4 {
            0 => format!(" let v{i} = v{a} * 0.5 + v{b}.sin() * x;\n"),
            1 => format!(" let v{i} = v{a} - y / (1.0 + v{c} * v{c});\n"),
            2 => format!(" let v{i} = (v{a} * v{b}).tanh() + v{c};\n"),
            _ => format!(" let v{i} = v{a}.exp().ln_1p() * 2.0 - v{b};\n"),
        };
        text.push_str(&statement);
    }
    text.push_str(&format!(
        " let mut acc = v{};\n for i in 0..n {{\n  let a0 = acc * x + xs[i % xs.len()];\n",
        lets - 1
    ));
    for j in 1..body - 1 {
        let statement = match j % 3 {
            0 => format!("  let a{j} = a{} * 0.5 + x;\n", j - 1),
            1 => format!("  let a{j} = a{}.sin() * acc;\n", j - 1),
            _ => format!("  let a{j} = a{} + xs[i % xs.len()] * y;\n", j - 1),
        };
        text.push_str(&statement);
    }
    text.push_str(&format!("  acc = a{} * 0.1;\n }}\n acc\n}}", body - 2));
    text
}

#[test]
fn large_function_expands_quickly() {
    let item = large_function(300, 100);
    let limit = Duration::from_secs(2);
    let expansion = check_contract_within(&TokenStream::new(), &lex(&item), limit)
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(expansion.outcome, Outcome::Derivative, "{}", expansion.text);
    eprintln!(
        "report: large function | 1 input | 300 lets and a loop of 100 statements ({} bytes in, \
         {} out), expanded in {:?}",
        item.len(),
        expansion.text.len(),
        expansion.elapsed
    );
}

/// The stack of the thread on which rustc runs proc macros.
const RUSTC_STACK: usize = 8 << 20;

/// Which of [`deep_functions`] the child process expands.
const DEEP_FUNCTION: &str = "FUZZ_DEEP_FUNCTION";

/// Functions that are deep rather than long: `(what, item)`.
fn deep_functions() -> Vec<(&'static str, String)> {
    let lets: String = (1..1000)
        .map(|i| format!("let v{i} = v{} * x; ", i - 1))
        .collect();
    let arms: String = (0..200).map(|i| format!("{i} => x * {i}.0, ")).collect();
    let branches: Vec<String> = (0..200)
        .map(|i| format!("if n == {i} {{ x * {i}.0 }}"))
        .collect();
    vec![
        (
            "a chain of 1000 single-use lets",
            format!("fn f(x: f64) -> f64 {{ let v0 = x; {lets} v999 }}"),
        ),
        (
            "a sum of 1000 terms",
            format!("fn f(x: f64) -> f64 {{ {} }}", vec!["x"; 1000].join(" + ")),
        ),
        (
            "500 chained method calls",
            format!("fn f(x: f64) -> f64 {{ x{} }}", ".sin()".repeat(500)),
        ),
        (
            "200 nested parentheses",
            format!(
                "fn f(x: f64) -> f64 {{ {}x{} }}",
                "(".repeat(200),
                ")".repeat(200)
            ),
        ),
        (
            "64 nested ifs",
            format!(
                "fn f(x: f64) -> f64 {{ let mut y = x; {} y = y * x; {} y }}",
                "if x > 0.0 { ".repeat(64),
                "} ".repeat(64)
            ),
        ),
        (
            "32 nested loops",
            format!(
                "fn f(x: f64, n: usize) -> f64 {{ let mut y = x; {} y = y * x; {} y }}",
                "for _ in 0..n { ".repeat(32),
                "} ".repeat(32)
            ),
        ),
        (
            "a match of 200 arms",
            format!("fn f(x: f64, n: i32) -> f64 {{ match n {{ {arms} _ => x }} }}"),
        ),
        (
            "an else-if chain of 200 branches",
            format!(
                "fn f(x: f64, n: i32) -> f64 {{ {} else {{ x }} }}",
                branches.join(" else ")
            ),
        ),
    ]
}

/// Each of [`deep_functions`] expands, on a thread with rustc's stack, in less
/// than 5 s. A stack overflow aborts the process, so each is expanded in a
/// child process (the test binary running [`expand_deep_function`]).
#[test]
fn deep_functions_expand_on_rustc_stack() {
    let exe = std::env::current_exe().expect("the test binary");
    let mut failures = Vec::new();
    for (index, (what, _)) in deep_functions().iter().enumerate() {
        let child = std::process::Command::new(&exe)
            .args([
                "testing::fuzz::expand_deep_function",
                "--exact",
                "--nocapture",
            ])
            .env(DEEP_FUNCTION, index.to_string())
            .output()
            .expect("the test binary runs");
        let stderr = String::from_utf8_lossy(&child.stderr);
        match stderr.lines().find(|line| line.starts_with("expanded ")) {
            Some(line) if child.status.success() => eprintln!("{what}: {line}"),
            _ => {
                let last: Vec<&str> = stderr.lines().rev().take(12).collect();
                let last: Vec<&str> = last.into_iter().rev().collect();
                failures.push(format!("{what} ({}):\n{}", child.status, last.join("\n")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The child process of [`deep_functions_expand_on_rustc_stack`]; does nothing
/// unless [`DEEP_FUNCTION`] is set.
#[test]
fn expand_deep_function() {
    let Ok(index) = std::env::var(DEEP_FUNCTION) else {
        return;
    };
    let index: usize = index.parse().expect("an index");
    let expand = move || {
        let (what, item) = &deep_functions()[index];
        // A guard against blow-ups, not a benchmark: each takes under 0.6 s
        // alone (both `_vjp` and the split API), and the suite runs them
        // beside other tests on two cores.
        let limit = Duration::from_secs(5);
        let expansion = check_contract_within(&TokenStream::new(), &lex(item), limit)
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            expansion.outcome,
            Outcome::Derivative,
            "{what}: {}",
            expansion.text
        );
        eprintln!("expanded in {:?}", expansion.elapsed);
    };
    let thread = thread::Builder::new().stack_size(RUSTC_STACK).spawn(expand);
    thread
        .expect("a thread")
        .join()
        .expect("the expansion keeps the contract");
}
