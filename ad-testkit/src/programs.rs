//! A generator of random programs in the subset `#[differentiate]` supports,
//! for differential testing.
//!
//! Every program is one function with the same signature,
//! `fn NAME(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64`, built
//! from a seed ([`Program::generate`]). It is printed as Rust source
//! ([`Program::to_rust`]) for rustc and the macro, and evaluated by a
//! tree-walking interpreter independent of both ([`Program::eval`]): the
//! reference semantics, which computes in `f64` exactly as the compiled
//! function does, operation for operation, so that the two agree bit for bit.
//! A failing program is reduced with [`Program::shrink`].
//!
//! Generated programs are meant to compile warning-free under
//! `#![deny(warnings)]` and to stay finite:
//!
//! - **Finite values.** A static analysis bounds `|value|` of every
//!   expression over all inputs in `[-1, 1]` and all loop trips (at most 5
//!   per loop, two loops deep); programs whose bound exceeds [`LIMIT`] are not
//!   generated. `sqrt` and `ln` only see `1 + e²`, divisions only divide by
//!   `1 + e²`, and `exp` only sees `tanh(e)`, so nothing is NaN either.
//! - **No warnings.** Every binding is unique (no shadowing); a
//!   liveness analysis as strict as rustc's removes assignments whose value
//!   is never read and bindings that are never read, and names `_x` the
//!   variables rustc would still complain about; `mut` is printed exactly
//!   for the variables that are assigned; parentheses only where precedence
//!   needs them; the first literal of an all-literal method receiver,
//!   initializer or assigned value gets an `_f64` suffix (rustc cannot call
//!   a method on a `{float}`); unused parameters are discarded with
//!   `let _ = a0;`.
//! - **Buffers** are made at the top level of the body and never reassigned;
//!   every index is in bounds for every `xs.len()` in `3..=5` and `n` in
//!   `0..=4`; a buffer iterated by a loop is not written in its body.
//!
//! Three spellings avoid bugs of the macro's `_vjp` (reported), and can go
//! once they are fixed: `let x = 0.5_f64;` rather than `let x: f64 = 0.5;`
//! (the annotation is dropped), `x = 0.5_f64;` rather than `x = 0.5;` (the
//! new version is a `{float}`), and `y > i as f64` rather than
//! `(i as f64) < y` (the parentheses are dropped, and `f64 <` then parses
//! as generic arguments; both sides ending in a cast still print so).
//!
//! This file is compiled twice: as `ad_tests::programs`, and into the unit
//! tests of `ad-macros` (by `#[path]`). It depends on `std` alone.

use std::f64::consts::{E, PI};
use std::fmt::Write as _;

// ---------------------------------------------------------------------------
// The public interface
// ---------------------------------------------------------------------------

/// Shapes of generated programs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Most statements at the top level of the body; the blocks of loops and
    /// branches hold one to three more each.
    pub max_stmts: usize,
    /// Deepest nesting of an expression (a leaf has depth 0).
    pub max_depth: usize,
    /// Generate `for` and `while` loops, with `break` and `continue`.
    pub loops: bool,
    /// Generate `if` statements and `if` expressions.
    pub branches: bool,
    /// Read `xs`, and make, write and read local buffers.
    pub buffers: bool,
}

impl Default for Config {
    /// Moderate programs: up to 6 top-level statements, expressions 3 deep,
    /// every feature on.
    fn default() -> Config {
        Config {
            max_stmts: 6,
            max_depth: 3,
            loops: true,
            branches: true,
            buffers: true,
        }
    }
}

/// One generated function. All programs have the same signature:
/// `fn NAME(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64`.
#[derive(Clone, Debug)]
pub struct Program {
    /// The kind of every variable, indexed by [`Var`].
    vars: Vec<Kind>,
    /// The statements of the body, in order.
    body: Vec<Stmt>,
    /// The value of the function: the body's final expression.
    tail: Expr,
}

/// A point to evaluate at: scalars and `xs` elements in `[-1, 1]`,
/// `xs.len()` in `3..=5`, `n` in `0..=4`.
#[derive(Clone, Debug)]
pub struct Input {
    /// `a0`, `a1`, `a2`.
    pub scalars: [f64; 3],
    /// The buffer `xs`.
    pub xs: Vec<f64>,
    /// The integer parameter `n`.
    pub n: usize,
}

/// The reference value of a program at an input, and how far the input is
/// from a point where the program is not smooth: the smallest `|lhs - rhs|`
/// over every float comparison evaluated (branch conditions, `max`/`min`
/// operands) and `|x|` over every `abs(x)` evaluated (`f64::INFINITY` if
/// none). Also counted: `a.hypot(b)` (not smooth at the origin: its value),
/// and `a.atan2(b)` (its value jumps by 2π across `a == 0` for `b < 0`:
/// `|a|` there, `hypot(a, b)` elsewhere).
#[derive(Clone, Copy, Debug)]
pub struct Evaluation {
    /// What the function returns.
    pub value: f64,
    /// The distance to the nearest non-smooth point, as above.
    pub margin: f64,
}

impl Program {
    /// The program of `seed`: the same seed and configuration always give
    /// the same program.
    pub fn generate(seed: u64, config: &Config) -> Program {
        for attempt in 0..32_u64 {
            let mut builder =
                Builder::new(seed ^ attempt.wrapping_mul(0xA076_1D64_78BD_642F), config);
            let program = builder.program();
            if program.bounded() && program.valid() {
                return program;
            }
        }
        // Not reached in practice: every statement is checked as it is made.
        Program {
            vars: Vec::new(),
            body: Vec::new(),
            tail: Expr::Bin(Bin::Add, Box::new(Expr::Param(0)), Box::new(Expr::Param(1))),
        }
    }

    /// The whole function item `fn name(…) -> f64 { … }`, without attribute,
    /// one statement per line with 4-space indentation, ending in a newline.
    pub fn to_rust(&self, name: &str) -> String {
        Printer::new(self).function(name)
    }

    /// The value at `input`, computed as the Rust source computes it (same
    /// operations in the same order, `mul_add` fused, `f64::max`/`min`,
    /// `powi`, integer `%`), and the margin to the nearest non-smooth point.
    pub fn eval(&self, input: &Input) -> Evaluation {
        let mut machine = Machine::new(self, input);
        machine.block(&self.body);
        let value = machine.expr(&self.tail);
        Evaluation {
            value,
            margin: machine.margin,
        }
    }

    /// Smaller well-formed programs, the larger cuts first: each drops a
    /// statement (a dropped `let` takes its assignments along and its reads
    /// become `0.5`; a dropped buffer's reads go to `xs`, its writes go),
    /// replaces an `if` by one of its blocks or a loop by one trip of its
    /// body (indices and counters becoming `1`, elements a buffer element),
    /// keeps one side of `&&`/`||`, or replaces an expression by one of its
    /// operands or by `0.5`. Each is normalized as generated programs are,
    /// bounded, and strictly smaller by [`Program::size`].
    pub fn shrink(&self) -> Vec<Program> {
        let size = self.size();
        let mut out: Vec<Program> = Vec::new();
        let mut offer = |mut candidate: Program| {
            candidate.normalize();
            if candidate.size() < size && candidate.valid() && candidate.bounded() {
                out.push(candidate);
            }
        };
        let statements = count_stmts(&self.body);
        for edit in [StmtEdit::Remove, StmtEdit::Unwrap, StmtEdit::UnwrapElse] {
            for k in 0..statements {
                let mut candidate = self.clone();
                if candidate.edit_stmt(k, edit) {
                    offer(candidate);
                }
            }
        }
        let mut probe = self.clone();
        let mut census = Census::default();
        probe.walk(&mut census);
        for (k, count) in census.conds.iter().enumerate() {
            for side in 0..*count {
                let mut candidate = self.clone();
                candidate.walk(&mut Replace::cond(k, side));
                offer(candidate);
            }
        }
        for (k, options) in census.exprs.iter().enumerate() {
            for option in options {
                let mut candidate = self.clone();
                candidate.walk(&mut Replace::expr(k, option.clone()));
                offer(candidate);
            }
        }
        out
    }

    /// The number of AST nodes: statements, expressions, conditions and
    /// integer expressions. Every [`Program::shrink`] candidate is smaller.
    pub fn size(&self) -> usize {
        self.body.iter().map(stmt_size).sum::<usize>() + expr_size(&self.tail)
    }
}

/// Checks a gradient of `program` at `input` the same way in every harness:
/// `gradient(seed)` must return `seed` times the gradient, as
/// `(d_a0, d_a1, d_a2, d_xs…)`. Each component is compared with finite
/// differences, and the dot-product test runs with a seed other than one.
/// Returns `Ok(false)` without comparing when the input is too close to a kink
/// or a branch switch (`margin < 1e-2`) for finite differences to mean anything.
pub fn check_gradient(
    program: &Program,
    input: &Input,
    gradient: impl Fn(f64) -> Result<Vec<f64>, String>,
) -> Result<bool, String> {
    if program.eval(input).margin < 1e-2 {
        return Ok(false);
    }
    let grad = gradient(1.0)?;
    let f = |p: &[f64]| program.eval(&input.moved(p)).value;
    let x = input.point();
    if grad.len() != x.len() {
        return Err(format!(
            "the gradient has {} components, not {}",
            grad.len(),
            x.len()
        ));
    }
    let mut e = vec![0.0; x.len()];
    for index in 0..x.len() {
        e[index] = 1.0;
        let expected = directional(f, &x, &e, grad[index]);
        e[index] = 0.0;
        if !close(grad[index], expected) {
            return Err(format!(
                "component {index} of the gradient is {}, finite differences give {expected}",
                grad[index]
            ));
        }
    }
    // The dot-product test: <J u, v> = <u, Jᵀ v>.
    let v = -0.75;
    let u: Vec<f64> = (0..x.len())
        .map(|index| ((index * 7 % 5) as f64 - 2.0) / 2.0 + 0.1)
        .collect();
    let jt_v = gradient(v)?;
    let rhs: f64 = u.iter().zip(&jt_v).map(|(a, b)| a * b).sum();
    let lhs = v * directional(f, &x, &u, rhs / v);
    if !close(lhs, rhs) {
        return Err(format!(
            "dot-product test: <J u, v> = {lhs}, <u, Jᵀ v> = {rhs}"
        ));
    }
    Ok(true)
}

/// The derivative of `f` at `x` along `u`, by central differences with one
/// Richardson extrapolation, at steps `1e-4`, `1e-5` and `1e-6`: the one
/// closest to `expected`. Steep programs (derivatives in the thousands) need
/// the smaller steps; the larger ones are more accurate on gentle ones.
fn directional(f: impl Fn(&[f64]) -> f64, x: &[f64], u: &[f64], expected: f64) -> f64 {
    let at = |t: f64| {
        let moved: Vec<f64> = x.iter().zip(u).map(|(xi, ui)| xi + t * ui).collect();
        f(&moved)
    };
    let central = |h: f64| (at(h) - at(-h)) / (2.0 * h);
    [1e-4, 1e-5, 1e-6]
        .into_iter()
        .map(|h| (4.0 * central(h / 2.0) - central(h)) / 3.0)
        .min_by(|a, b| (a - expected).abs().total_cmp(&(b - expected).abs()))
        .expect("three steps")
}

/// Mixed relative agreement, `|a - b| <= 1e-6 max(1, |a|, |b|)`.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

impl Input {
    /// The float inputs as one point: `a0, a1, a2`, then `xs`.
    pub fn point(&self) -> Vec<f64> {
        let mut point = self.scalars.to_vec();
        point.extend(&self.xs);
        point
    }

    /// This input with its float inputs replaced by `point`.
    pub fn moved(&self, point: &[f64]) -> Input {
        Input {
            scalars: [point[0], point[1], point[2]],
            xs: point[3..].to_vec(),
            n: self.n,
        }
    }

    /// The input of `seed`, deterministic.
    pub fn generate(seed: u64) -> Input {
        let mut rng = Rng(seed ^ 0x1D8E_4E27_C47D_124F);
        let scalars = [rng.signed(), rng.signed(), rng.signed()];
        let len = 3 + rng.below(3);
        let xs = (0..len).map(|_| rng.signed()).collect();
        let n = rng.below(5);
        Input { scalars, xs, n }
    }
}

// ---------------------------------------------------------------------------
// The AST
// ---------------------------------------------------------------------------

/// The largest `|value|` the static analysis ([`Bounds`]) allows anywhere in
/// a program, for every input: far from overflow, and small enough for
/// finite differences to be meaningful.
const LIMIT: f64 = 1e3;

/// The literals of generated programs (`{:?}` prints each so that it
/// parses back to the same `f64`).
const CONSTANTS: [f64; 12] = [
    0.5, 0.25, 0.75, 1.5, 2.0, 0.1, 0.3, 1.25, -0.5, -0.75, -1.5, 0.125,
];

/// A variable: an index into `Program::vars`. Every binding (of `let`, of a
/// loop pattern, of a buffer) has its own index, so nothing is ever
/// shadowed; the printed name is a prefix by [`Kind`] and the index.
type Var = usize;

/// A set of variables (liveness, reads): a bitset, by index.
#[derive(Clone, Debug, Default)]
struct Set(Vec<u64>);

impl Set {
    /// The empty set.
    fn new() -> Set {
        Set(Vec::new())
    }

    /// Adds `v`.
    fn insert(&mut self, v: Var) {
        let word = v / 64;
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (v % 64);
    }

    /// Removes `v`; whether it was there.
    fn remove(&mut self, v: &Var) -> bool {
        let had = self.contains(v);
        if had {
            self.0[v / 64] &= !(1 << (v % 64));
        }
        had
    }

    /// Whether `v` is in the set.
    fn contains(&self, v: &Var) -> bool {
        self.0.get(v / 64).is_some_and(|w| w & (1 << (v % 64)) != 0)
    }

    /// Adds every member of `other`.
    fn union_with(&mut self, other: &Set) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
}

impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        let len = self.0.len().max(other.0.len());
        (0..len).all(|i| self.0.get(i).unwrap_or(&0) == other.0.get(i).unwrap_or(&0))
    }
}

/// What a variable is: its type, its printed name, and where it may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `xN: f64`, bound by `let` (printed `let mut` iff it is assigned).
    Float,
    /// `eN`, the float element of a `for` loop over a buffer. By value
    /// (pattern `&eN`, type `f64`), or by reference (pattern `eN`, type
    /// `&f64`, read as `*eN`; `bare` ones are read as plain `eN` where
    /// `&f64` works as well: operands of `+ - *` and method receivers).
    Elem { by_ref: bool, bare: bool },
    /// `iN: usize`, the index of a `for` loop (a range, or `enumerate`).
    Index,
    /// `kN: usize`, the counter of a `while` loop: `let mut kN = 0;` before
    /// it, `kN += 1;` first in its body, so `1..=bound` in the body.
    Counter,
    /// `vN`, a local `Vec<f64>` made at the top level: `short` ones have 3
    /// elements (`vec![a, b, c]`), the others `xs.len()`.
    Buffer { short: bool },
}

/// A buffer: the parameter `xs` (3 to 5 elements, read only), or a local
/// vector (`Kind::Buffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buf {
    /// The parameter `xs`.
    Xs,
    /// A local `Vec<f64>`.
    Local(Var),
}

/// Which indices a `for` index variable takes, which decides the buffers it
/// may index directly (the others are indexed `% len`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Range {
    /// `0..n`: up to 4, possibly past `xs.len()`: never indexes directly.
    N,
    /// `0..xs.len()` (or over a buffer that long): indexes `xs` and the
    /// buffers of length `xs.len()`.
    Len,
    /// `0..3` (or over a 3-element buffer): indexes every buffer.
    Three,
}

/// A `usize` expression: loop bounds, indices, integer conditions, casts.
#[derive(Clone, Debug, PartialEq)]
enum IntExpr {
    /// A `for` index or a `while` counter.
    Var(Var),
    /// The parameter `n`.
    N,
    /// `b.len()`.
    Len(Buf),
    /// A literal.
    Lit(usize),
    /// `a + b`.
    Add(Box<IntExpr>, Box<IntExpr>),
    /// `a - b`; only `xs.len() - 1`, which cannot underflow.
    Sub(Box<IntExpr>, Box<IntExpr>),
    /// `a % b`, with `b` a length or a positive literal.
    Rem(Box<IntExpr>, Box<IntExpr>),
}

/// A float expression. Each variant is one node for [`Program::size`].
#[derive(Clone, Debug, PartialEq)]
enum Expr {
    /// A literal, printed with `{:?}` (`0.5`, `-0.75`, `2.0`).
    Const(f64),
    /// A scalar parameter `a0`, `a1` or `a2`.
    Param(usize),
    /// A `Kind::Float` or `Kind::Elem` variable.
    Var(Var),
    /// `b[i]`, in bounds by construction (see [`Program::valid`]).
    Index(Buf, IntExpr),
    /// `i as f64`.
    Cast(IntExpr),
    /// `b.iter().sum::<f64>()` or `.product::<f64>()`; generated only as a
    /// whole `let` initializer.
    Reduce(Buf, Reduction),
    /// `-a`.
    Neg(Box<Expr>),
    /// A binary operator, left operand first.
    Bin(Bin, Box<Expr>, Box<Expr>),
    /// A method of one float (`a.sin()`), or a guarded composite form.
    Unary(Unary, Box<Expr>),
    /// A method of two floats: `a.max(b)`, …
    Binary(Binary, Box<Expr>, Box<Expr>),
    /// `a.mul_add(b, c)`: `a * b + c` rounded once.
    MulAdd(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `if c { a } else { b }`; generated only as a whole initializer or
    /// right-hand side, never as an operand.
    If(Box<Cond>, Box<Expr>, Box<Expr>),
}

/// The reductions of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reduction {
    /// `b.iter().sum::<f64>()` (folds from `-0.0`, as `std` does).
    Sum,
    /// `b.iter().product::<f64>()`.
    Product,
}

/// Binary float operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bin {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / (1.0 + b * b)`: division by a denominator at least 1 (`b` is
    /// printed twice and evaluated once: it is pure).
    Div,
}

/// Methods of one float, and guarded forms that keep the domain safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unary {
    /// `a.sin()`.
    Sin,
    /// `a.cos()`.
    Cos,
    /// `a.tanh()`.
    Tanh,
    /// `a.abs()` (non-smooth at 0: counts in the margin).
    Abs,
    /// `a.powi(2)`.
    Square,
    /// `a.powi(3)`.
    Cube,
    /// `a.tanh().exp()`: `exp` of a bounded argument.
    ExpTanh,
    /// `(1.0 + a * a).sqrt()`.
    SqrtSq,
    /// `(1.0 + a * a).ln()`.
    LnSq,
}

/// Methods of two floats, receiver first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binary {
    /// `a.max(b)` (non-smooth where `a == b`: counts in the margin).
    Max,
    /// `a.min(b)` (likewise).
    Min,
    /// `a.hypot(b)`.
    Hypot,
    /// `a.atan2(b)`.
    Atan2,
}

/// A condition of `if`, of an `if` expression, or of `break`/`continue`.
#[derive(Clone, Debug, PartialEq)]
enum Cond {
    /// `a < b` on floats (counts in the margin).
    Less(Expr, Expr),
    /// `a > b` on floats (counts in the margin).
    Greater(Expr, Expr),
    /// An integer comparison `a == b`, `a < b`, `a > b`.
    Int(IntCmp, IntExpr, IntExpr),
    /// `a && b`, short-circuiting.
    And(Box<Cond>, Box<Cond>),
    /// `a || b`, short-circuiting.
    Or(Box<Cond>, Box<Cond>),
}

/// Integer comparisons. Never `< 0` or `>= 0` (rustc's
/// `unused_comparisons` on `usize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IntCmp {
    /// `==`.
    Eq,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
}

/// Assignment operators, of variables and of buffer elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `=`.
    Set,
    /// `+=`.
    Add,
    /// `-=`.
    Sub,
    /// `*=`.
    Mul,
}

/// A statement of the body or of a nested block.
#[derive(Clone, Debug, PartialEq)]
enum Stmt {
    /// `let x = e;` (`let mut` iff `x` is assigned later; `let x: f64 = e;`
    /// when `e` is all literals).
    Let(Var, Expr),
    /// `x = e;`, `x += e;`, `x -= e;`, `x *= e;` on a `Kind::Float`.
    Assign(Var, Op, Expr),
    /// `v[i] = e;` (or `+=`, `-=`, `*=`) into a local buffer.
    Store(Var, IntExpr, Op, Expr),
    /// `let mut v = …;`: a local buffer, only at the top level of the body.
    Buffer(Var, Init),
    /// `if c { … } else { … }`: no `else` when the second block is empty,
    /// `else if` when it is a single `if`.
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// `if c { break; }` or `if c { continue; }`, for the innermost loop.
    Exit(Cond, Exit),
    /// `for PATTERN in ITERATOR { … }`.
    For(Loop, Vec<Stmt>),
    /// `let mut k = 0; while k < bound { k += 1; … }`, with `bound` `n` or
    /// `xs.len()`.
    While(Var, IntExpr, Vec<Stmt>),
}

/// How a local buffer is made.
#[derive(Clone, Debug, PartialEq)]
enum Init {
    /// `vec![e; xs.len()]`.
    Fill(Expr),
    /// `xs.to_vec()`.
    Copy,
    /// `vec![a, b, c]`.
    List(Vec<Expr>),
}

/// The header of a `for` loop.
#[derive(Clone, Debug, PartialEq)]
enum Loop {
    /// `for i in 0..end`, `end` being `n`, a `len()` or `3`.
    Range(Var, IntExpr),
    /// `for &e in b.iter()` (or `for e in b.iter()` by reference).
    Iter(Buf, Var),
    /// `for (i, &e) in b.iter().enumerate()`.
    Enumerate(Buf, Var, Var),
    /// `for (&e, &f) in b.iter().zip(c.iter())`.
    Zip(Buf, Buf, Var, Var),
}

/// What an [`Stmt::Exit`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    /// `break;`.
    Break,
    /// `continue;`.
    Continue,
}

// ---------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------

/// splitmix64: one word of state, well mixed, deterministic everywhere.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    /// The next 64 random bits.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`, for `n > 0`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// Uniform in `[-1, 1)`.
    fn signed(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items`, which is not empty.
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// An index of `weights`, with probability proportional to its weight;
    /// at least one weight is positive.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut r = self.below(total as usize) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }
}

// ---------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------

/// The state of generating one program: the variables made so far, those
/// in scope, and the bounds of their values at the current point.
struct Builder<'c> {
    /// The random stream of this program.
    rng: Rng,
    /// The shape asked for.
    config: &'c Config,
    /// Every variable made so far, by index.
    vars: Vec<Kind>,
    /// The variables in scope, outermost first.
    scope: Vec<Var>,
    /// Where the innermost block (of a loop or a branch) starts in `scope`:
    /// the variables before it are assigned to carry values out of it.
    outer: usize,
    /// The `for` index variables in scope and their ranges.
    ranges: Vec<(Var, Range)>,
    /// Local buffers iterated by an enclosing loop, which its body must not
    /// write (the iterator borrows them).
    iterated: Vec<Var>,
    /// Enclosing loops.
    loops: usize,
    /// Enclosing blocks (loops and branches).
    nesting: usize,
    /// Bounds of the values at the current point (first trip, in loops).
    bounds: Bounds,
}

impl<'c> Builder<'c> {
    /// A builder for the program of `seed`.
    fn new(seed: u64, config: &'c Config) -> Builder<'c> {
        Builder {
            rng: Rng(seed),
            config,
            vars: Vec::new(),
            scope: Vec::new(),
            outer: 0,
            ranges: Vec::new(),
            iterated: Vec::new(),
            loops: 0,
            nesting: 0,
            bounds: Bounds::default(),
        }
    }

    /// The whole program: a body, then a tail reading what the body
    /// computed, normalized.
    fn program(&mut self) -> Program {
        let most = self.config.max_stmts;
        let count = if most == 0 {
            0
        } else {
            most.div_ceil(2) + self.rng.below(most / 2 + 1)
        };
        let body = self.block(count);
        let tail = self.tail(&body);
        let mut program = Program {
            vars: self.vars.clone(),
            body,
            tail,
        };
        program.normalize();
        program
    }

    /// A new variable of `kind` (not yet in scope).
    fn fresh(&mut self, kind: Kind) -> Var {
        self.vars.push(kind);
        self.vars.len() - 1
    }

    /// The variables in scope whose kind satisfies `pred`.
    fn visible(&self, pred: impl Fn(Kind) -> bool) -> Vec<Var> {
        self.scope
            .iter()
            .copied()
            .filter(|&v| pred(self.vars[v]))
            .collect()
    }

    /// Float variables and elements in scope: what expressions read.
    fn floats(&self) -> Vec<Var> {
        self.visible(|k| matches!(k, Kind::Float | Kind::Elem { .. }))
    }

    /// Integer variables in scope: `for` indices and `while` counters.
    fn ints(&self) -> Vec<Var> {
        self.visible(|k| matches!(k, Kind::Index | Kind::Counter))
    }

    /// Local buffers in scope.
    fn buffers(&self) -> Vec<Var> {
        self.visible(|k| matches!(k, Kind::Buffer { .. }))
    }

    /// Local buffers that may be written here (not iterated around here).
    fn writable(&self) -> Vec<Var> {
        let mut out = self.buffers();
        out.retain(|v| !self.iterated.contains(v));
        out
    }

    /// Whether `b` has 3 elements (rather than `xs.len()`).
    fn short(&self, b: Buf) -> bool {
        matches!(b, Buf::Local(v) if self.vars[v] == Kind::Buffer { short: true })
    }

    /// `count` statements (each checked against the bounds), then, in a
    /// nested block, statements carrying out the block's locals that
    /// nothing read.
    fn block(&mut self, count: usize) -> Vec<Stmt> {
        let start = self.scope.len();
        let mut out = Vec::new();
        for _ in 0..count {
            out.extend(self.checked(&mut |b: &mut Builder<'c>| b.stmt()));
        }
        if self.nesting > 0 {
            let mut read = Set::new();
            out.iter().for_each(|s| stmt_reads(s, &mut read));
            let locals: Vec<Var> = self.scope[start..]
                .iter()
                .copied()
                .filter(|&v| self.vars[v] == Kind::Float && !read.contains(&v))
                .collect();
            for v in locals {
                out.extend(self.checked(&mut |b: &mut Builder<'c>| b.carry(v)));
            }
        }
        out
    }

    /// Statements from `make`, kept only if the bounds of the program stay
    /// under [`LIMIT`] through them (retried a few times, else nothing).
    fn checked(&mut self, make: &mut dyn FnMut(&mut Builder<'c>) -> Vec<Stmt>) -> Vec<Stmt> {
        for _ in 0..6 {
            let before = self.bounds.clone();
            let scope = self.scope.len();
            let stmts = make(self);
            let mut after = before.clone();
            after.worst = 0.0;
            after.block(&stmts, &self.vars);
            if after.worst <= LIMIT {
                after.worst = before.worst;
                self.bounds = after;
                return stmts;
            }
            self.bounds = before;
            self.scope.truncate(scope);
        }
        Vec::new()
    }

    /// Runs `make` for a nested block: its bindings go out of scope after,
    /// and the variables in scope before it become "outer".
    fn nested<T>(&mut self, make: impl FnOnce(&mut Builder<'c>) -> T) -> T {
        let (scope, outer, ranges) = (self.scope.len(), self.outer, self.ranges.len());
        self.outer = scope;
        self.nesting += 1;
        let made = make(self);
        self.nesting -= 1;
        self.outer = outer;
        self.scope.truncate(scope);
        self.ranges.truncate(ranges);
        made
    }

    /// One statement (two for a loop that declares its accumulator first).
    fn stmt(&mut self) -> Vec<Stmt> {
        let config = self.config;
        let top = self.nesting == 0;
        let in_loop = self.loops > 0;
        let can_nest = self.nesting < 3;
        let assignable = !self.visible(|k| k == Kind::Float).is_empty();
        let writable = !self.writable().is_empty();
        let buffers = self.buffers().len();
        // In order: `let`, `let` of an `if`, assignment, buffer write,
        // reduction, new buffer, `if`, `for`, `while`, `break`/`continue`.
        let weights = [
            4,
            u32::from(config.branches),
            if !assignable {
                0
            } else if in_loop {
                8
            } else if top {
                3
            } else {
                6
            },
            if !writable {
                0
            } else if in_loop {
                7
            } else if top {
                2
            } else {
                3
            },
            u32::from(config.buffers),
            if config.buffers && top && buffers < 2 {
                if buffers == 0 { 6 } else { 1 }
            } else {
                0
            },
            if config.branches && can_nest { 3 } else { 0 },
            if config.loops && self.loops < 2 && can_nest {
                if top { 5 } else { 2 }
            } else {
                0
            },
            if config.loops && self.loops < 2 && can_nest {
                1
            } else {
                0
            },
            if in_loop && config.branches { 2 } else { 0 },
        ];
        match self.rng.weighted(&weights) {
            0 => {
                let e = self.expr(self.config.max_depth);
                vec![self.bind(e)]
            }
            1 => {
                let c = self.cond();
                let d = self.config.max_depth.saturating_sub(1);
                let (a, b) = (self.expr(d), self.expr(d));
                vec![self.bind(Expr::If(Box::new(c), Box::new(a), Box::new(b)))]
            }
            2 => vec![self.assign()],
            3 => vec![self.store()],
            4 => {
                let b = self.pick_buf();
                let r = if self.rng.chance(0.3) {
                    Reduction::Product
                } else {
                    Reduction::Sum
                };
                vec![self.bind(Expr::Reduce(b, r))]
            }
            5 => vec![self.buffer()],
            6 => vec![self.branch()],
            7 => self.for_loop(),
            8 => self.while_loop(),
            _ => {
                let c = self.cond();
                let exit = if self.rng.chance(0.5) {
                    Exit::Break
                } else {
                    Exit::Continue
                };
                vec![Stmt::Exit(c, exit)]
            }
        }
    }

    /// `let x = e;` with a fresh `x`, now in scope.
    fn bind(&mut self, e: Expr) -> Stmt {
        let v = self.fresh(Kind::Float);
        self.scope.push(v);
        Stmt::Let(v, e)
    }

    /// An assignment to a float variable in scope, preferably one from
    /// outside the current block; in loops, in forms that stay bounded over
    /// the trips (`+=` of a small value, `*=` of a factor at most 1,
    /// contractions such as `x = (x * e).tanh()`).
    fn assign(&mut self) -> Stmt {
        let all = self.visible(|k| k == Kind::Float);
        let outer: Vec<Var> = all
            .iter()
            .copied()
            .filter(|v| self.scope.iter().position(|s| s == v).unwrap_or(0) < self.outer)
            .collect();
        let x = if !outer.is_empty() && self.rng.chance(0.8) {
            self.rng.pick(&outer)
        } else {
            self.rng.pick(&all)
        };
        let d = self.config.max_depth.saturating_sub(1);
        match self.rng.weighted(&[2, 3, 2, 1, 3]) {
            0 => Stmt::Assign(x, Op::Set, self.expr(self.config.max_depth)),
            1 => Stmt::Assign(x, Op::Add, self.small(d + 1)),
            2 => Stmt::Assign(x, Op::Sub, self.small(d + 1)),
            3 => Stmt::Assign(x, Op::Mul, self.factor(d)),
            _ => {
                let target = x;
                let x = Expr::Var(target);
                let e = self.expr(d);
                let forms = if self.config.branches { 6 } else { 5 };
                let value = match self.rng.below(forms) {
                    0 => Expr::Unary(Unary::Tanh, Box::new(mul(x.clone(), e))),
                    1 => {
                        let c = self.rng.pick(&[0.5, 0.75, -0.5]);
                        add(mul(x.clone(), Expr::Const(c)), self.small_of(e))
                    }
                    2 => Expr::Bin(Bin::Sub, Box::new(self.small_of(e)), Box::new(x.clone())),
                    3 => {
                        let f = if self.rng.chance(0.5) {
                            Binary::Max
                        } else {
                            Binary::Min
                        };
                        Expr::Binary(f, Box::new(x.clone()), Box::new(self.small_of(e)))
                    }
                    4 => Expr::Unary(Unary::Sin, Box::new(add(x.clone(), e))),
                    _ => {
                        let c = self.cond();
                        Expr::If(Box::new(c), Box::new(x.clone()), Box::new(self.small_of(e)))
                    }
                };
                Stmt::Assign(target, Op::Set, value)
            }
        }
    }

    /// A write into a local buffer: `v[i] = e;`, `+=`, `-=`, or `*=` of a
    /// factor at most 1.
    fn store(&mut self) -> Stmt {
        let v = self.rng.pick(&self.writable());
        let index = self.index_for(Buf::Local(v));
        let d = self.config.max_depth.saturating_sub(1);
        match self.rng.weighted(&[3, 3, 1, 1]) {
            0 => Stmt::Store(v, index, Op::Set, self.expr(d + 1)),
            1 => Stmt::Store(v, index, Op::Add, self.small(d + 1)),
            2 => Stmt::Store(v, index, Op::Sub, self.small(d + 1)),
            _ => Stmt::Store(v, index, Op::Mul, self.factor(d)),
        }
    }

    /// A new local buffer: `vec![e; xs.len()]`, `xs.to_vec()` or
    /// `vec![a, b, c]`.
    fn buffer(&mut self) -> Stmt {
        let d = self.config.max_depth.saturating_sub(1);
        let (init, short) = match self.rng.weighted(&[3, 3, 2]) {
            0 => {
                let fill = if self.rng.chance(0.5) {
                    Expr::Const(0.0)
                } else {
                    self.expr(d)
                };
                (Init::Fill(fill), false)
            }
            1 => (Init::Copy, false),
            _ => (Init::List((0..3).map(|_| self.expr(d)).collect()), true),
        };
        let v = self.fresh(Kind::Buffer { short });
        self.scope.push(v);
        Stmt::Buffer(v, init)
    }

    /// An `if` statement, possibly with `else` or `else if`.
    fn branch(&mut self) -> Stmt {
        let c = self.cond();
        let entry = self.bounds.clone();
        let then = self.nested(|b| {
            let count = 1 + b.rng.below(3);
            b.block(count)
        });
        self.bounds = entry.clone();
        let otherwise = match self.rng.weighted(&[4, 5, 2]) {
            0 => Vec::new(),
            1 => self.nested(|b| {
                let count = 1 + b.rng.below(2);
                b.block(count)
            }),
            _ => vec![self.branch()],
        };
        self.bounds = entry;
        Stmt::If(c, then, otherwise)
    }

    /// The body of a loop, with `bound` variables in scope.
    fn loop_body(
        &mut self,
        bound: &[Var],
        range: Option<(Var, Range)>,
        iterated: &[Buf],
    ) -> Vec<Stmt> {
        self.nested(|b| {
            b.scope.extend_from_slice(bound);
            b.ranges.extend(range);
            let before = b.iterated.len();
            b.iterated.extend(iterated.iter().filter_map(|x| match x {
                Buf::Local(v) => Some(*v),
                Buf::Xs => None,
            }));
            b.loops += 1;
            let count = 1 + b.rng.below(3);
            let body = b.block(count);
            b.loops -= 1;
            b.iterated.truncate(before);
            body
        })
    }

    /// Before a loop at the top level, sometimes (always if there is none)
    /// a fresh accumulator for the loop to assign.
    fn accumulator(&mut self) -> Vec<Stmt> {
        if self.nesting > 0
            || (!self.visible(|k| k == Kind::Float).is_empty() && self.rng.chance(0.5))
        {
            return Vec::new();
        }
        let init = match self.rng.below(5) {
            0 | 1 => Expr::Const(0.0),
            2 => Expr::Const(1.0),
            _ => self.expr(1),
        };
        vec![self.bind(init)]
    }

    /// A `for` loop over a range, over a buffer's elements, enumerated, or
    /// zipped.
    fn for_loop(&mut self) -> Vec<Stmt> {
        let mut out = self.accumulator();
        let locals = self.buffers();
        let has_locals = !locals.is_empty();
        let buffers_on = self.config.buffers;
        let kind = self.rng.weighted(&[
            4,
            if buffers_on { 3 } else { 0 },
            1,
            u32::from(has_locals),
            if buffers_on { 2 } else { 0 },
            if buffers_on { 2 } else { 0 },
            if has_locals { 6 } else { 0 },
        ]);
        let stmt = match kind {
            0..=3 => {
                let i = self.fresh(Kind::Index);
                let (end, range) = match kind {
                    0 => (IntExpr::N, Range::N),
                    1 => (IntExpr::Len(Buf::Xs), Range::Len),
                    2 => (IntExpr::Lit(3), Range::Three),
                    _ => {
                        let v = self.rng.pick(&locals);
                        let range = if self.short(Buf::Local(v)) {
                            Range::Three
                        } else {
                            Range::Len
                        };
                        (IntExpr::Len(Buf::Local(v)), range)
                    }
                };
                let body = self.loop_body(&[i], Some((i, range)), &[]);
                Stmt::For(Loop::Range(i, end), body)
            }
            4 | 5 => {
                let b = self.pick_buf();
                let e = self.elem();
                if kind == 4 {
                    let body = self.loop_body(&[e], None, &[b]);
                    Stmt::For(Loop::Iter(b, e), body)
                } else {
                    let i = self.fresh(Kind::Index);
                    let range = if self.short(b) {
                        Range::Three
                    } else {
                        Range::Len
                    };
                    let body = self.loop_body(&[i, e], Some((i, range)), &[b]);
                    Stmt::For(Loop::Enumerate(b, i, e), body)
                }
            }
            _ => {
                let other = Buf::Local(self.rng.pick(&locals));
                let (b, c) = if self.rng.chance(0.5) {
                    (Buf::Xs, other)
                } else {
                    (other, Buf::Xs)
                };
                let (e, f) = (self.elem(), self.elem());
                let body = self.loop_body(&[e, f], None, &[b, c]);
                Stmt::For(Loop::Zip(b, c, e, f), body)
            }
        };
        out.push(stmt);
        out
    }

    /// A fresh loop element, by value or by reference.
    fn elem(&mut self) -> Var {
        let by_ref = self.rng.chance(0.6);
        let bare = by_ref && self.rng.chance(0.4);
        self.fresh(Kind::Elem { by_ref, bare })
    }

    /// A `while` loop counting to `n` or `xs.len()`.
    fn while_loop(&mut self) -> Vec<Stmt> {
        let mut out = self.accumulator();
        let k = self.fresh(Kind::Counter);
        let bound = if self.config.buffers && self.rng.chance(0.3) {
            IntExpr::Len(Buf::Xs)
        } else {
            IntExpr::N
        };
        let body = self.loop_body(&[k], None, &[]);
        out.push(Stmt::While(k, bound, body));
        out
    }

    /// At the end of a nested block: `outer += v` (or a buffer write) for a
    /// local `v` nothing read, so that it matters.
    fn carry(&mut self, v: Var) -> Vec<Stmt> {
        let outer: Vec<Var> = self.scope[..self.outer]
            .iter()
            .copied()
            .filter(|&x| self.vars[x] == Kind::Float)
            .collect();
        let value = self.small_of(Expr::Var(v));
        if !outer.is_empty() && self.rng.chance(0.8) {
            let x = self.rng.pick(&outer);
            let op = if self.rng.chance(0.7) {
                Op::Add
            } else {
                Op::Sub
            };
            return vec![Stmt::Assign(x, op, value)];
        }
        let writable = self.writable();
        if writable.is_empty() {
            return Vec::new();
        }
        let b = self.rng.pick(&writable);
        let index = self.index_for(Buf::Local(b));
        vec![Stmt::Store(b, index, Op::Add, value)]
    }

    /// A buffer to read: `xs`, or a local one.
    fn pick_buf(&mut self) -> Buf {
        let locals = self.buffers();
        if locals.is_empty() || self.rng.chance(0.4) {
            Buf::Xs
        } else {
            Buf::Local(self.rng.pick(&locals))
        }
    }

    /// An index into `b`, in bounds for every input: a loop index whose
    /// range fits `b`, another index reduced `% len`, a literal below 3, or
    /// `xs.len() - 1`.
    fn index_for(&mut self, b: Buf) -> IntExpr {
        let short = self.short(b);
        let len = if short {
            IntExpr::Lit(3)
        } else {
            IntExpr::Len(Buf::Xs)
        };
        let direct: Vec<Var> = self
            .ranges
            .iter()
            .filter(|(_, r)| *r == Range::Three || (*r == Range::Len && !short))
            .map(|(v, _)| *v)
            .collect();
        let ints = self.ints();
        let choice = self.rng.weighted(&[
            if direct.is_empty() { 0 } else { 6 },
            if ints.is_empty() { 0 } else { 3 },
            1,
            u32::from(!short),
        ]);
        match choice {
            0 => IntExpr::Var(*direct.last().unwrap_or(&0)),
            1 => {
                let j = IntExpr::Var(self.rng.pick(&ints));
                let shifted = if self.rng.chance(0.6) {
                    IntExpr::Add(Box::new(j), Box::new(IntExpr::Lit(1 + self.rng.below(2))))
                } else {
                    j
                };
                IntExpr::Rem(Box::new(shifted), Box::new(len))
            }
            2 => IntExpr::Lit(self.rng.below(3)),
            _ => IntExpr::Sub(Box::new(IntExpr::Len(Buf::Xs)), Box::new(IntExpr::Lit(1))),
        }
    }

    /// A float expression at most `depth` deep, its bound kept moderate
    /// (large subexpressions go through `tanh`).
    fn expr(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(0.2) {
            return self.leaf(true);
        }
        let d = depth - 1;
        let e = match self.rng.weighted(&[8, 4, 1, 8, 2, 3, 1]) {
            0 => {
                let (a, b) = self.pair(d);
                let op = if self.rng.chance(0.6) {
                    Bin::Add
                } else {
                    Bin::Sub
                };
                Expr::Bin(op, Box::new(a), Box::new(b))
            }
            1 => {
                let (a, b) = self.pair(d);
                mul(self.tame(a, 8.0), self.tame(b, 8.0))
            }
            2 => neg(self.expr(d)),
            3 => {
                let a = self.typed(d);
                let f = [
                    Unary::Sin,
                    Unary::Cos,
                    Unary::Tanh,
                    Unary::Abs,
                    Unary::Square,
                    Unary::Cube,
                    Unary::ExpTanh,
                    Unary::SqrtSq,
                    Unary::LnSq,
                ][self.rng.weighted(&[3, 3, 3, 2, 2, 1, 1, 1, 1])];
                let bound = self.bound(&a);
                let f = match f {
                    Unary::Cube if bound > 4.0 => Unary::Square,
                    Unary::Square if bound > 20.0 => Unary::Tanh,
                    f => f,
                };
                Expr::Unary(f, Box::new(a))
            }
            4 => {
                let (a, b) = (self.expr(d), self.expr(d));
                Expr::Bin(Bin::Div, Box::new(a), Box::new(b))
            }
            5 => {
                let a = self.typed(d);
                let b = self.other(&a, d);
                let f = self
                    .rng
                    .pick(&[Binary::Max, Binary::Min, Binary::Hypot, Binary::Atan2]);
                Expr::Binary(f, Box::new(a), Box::new(b))
            }
            _ => {
                let a = self.typed(d);
                let (b, c) = (self.expr(d), self.expr(d));
                let (a, b) = (self.tame(a, 8.0), self.tame(b, 8.0));
                Expr::MulAdd(Box::new(a), Box::new(b), Box::new(c))
            }
        };
        self.tame(e, 30.0)
    }

    /// Two different expressions (`x - x`, `x.max(x)` are degenerate).
    fn pair(&mut self, depth: usize) -> (Expr, Expr) {
        let a = self.expr(depth);
        let b = self.other(&a, depth);
        (a, b)
    }

    /// An expression other than `a`.
    fn other(&mut self, a: &Expr, depth: usize) -> Expr {
        for _ in 0..4 {
            let b = self.expr(depth);
            if b != *a {
                return b;
            }
        }
        Expr::Const(if *a == Expr::Const(0.5) { 0.25 } else { 0.5 })
    }

    /// `e`, or `e.tanh()` if its bound exceeds `most`.
    fn tame(&mut self, e: Expr, most: f64) -> Expr {
        if self.bound(&e) > most && typed(&e) {
            Expr::Unary(Unary::Tanh, Box::new(e))
        } else {
            e
        }
    }

    /// An expression bounded by about 4: increments of loop-carried values.
    fn small(&mut self, depth: usize) -> Expr {
        let e = self.expr(depth);
        self.small_of(e)
    }

    /// `e`, through `tanh` or `sin` if it may exceed 4.
    fn small_of(&mut self, e: Expr) -> Expr {
        if self.bound(&e) > 4.0 && typed(&e) {
            let f = if self.rng.chance(0.5) {
                Unary::Tanh
            } else {
                Unary::Sin
            };
            Expr::Unary(f, Box::new(e))
        } else {
            e
        }
    }

    /// A factor at most 1 in magnitude, for `*=`.
    fn factor(&mut self, depth: usize) -> Expr {
        if self.rng.chance(0.3) {
            return Expr::Const(self.rng.pick(&[0.5, -0.75, 0.9, 0.25]));
        }
        let f = self.rng.pick(&[Unary::Cos, Unary::Tanh, Unary::Sin]);
        Expr::Unary(f, Box::new(self.typed(depth)))
    }

    /// An expression with at least one typed leaf (not all literals), for
    /// method receivers.
    fn typed(&mut self, depth: usize) -> Expr {
        let e = self.expr(depth);
        if typed(&e) { e } else { self.leaf(false) }
    }

    /// The bound of `e` at the current point.
    fn bound(&mut self, e: &Expr) -> f64 {
        let worst = self.bounds.worst;
        let b = self.bounds.expr(e, &self.vars);
        self.bounds.worst = worst;
        b
    }

    /// A leaf: a literal (if `literal`), a parameter, a variable, a buffer
    /// element, or an integer cast.
    fn leaf(&mut self, literal: bool) -> Expr {
        let floats = self.floats();
        let ints = self.ints();
        let choice = self.rng.weighted(&[
            if literal { 3 } else { 0 },
            4,
            if floats.is_empty() { 0 } else { 7 },
            if self.config.buffers { 3 } else { 0 },
            if ints.is_empty() { 0 } else { 2 },
            1,
        ]);
        match choice {
            0 => Expr::Const(self.rng.pick(&CONSTANTS)),
            1 => Expr::Param(self.rng.below(3)),
            2 => {
                let recent = &floats[floats.len().saturating_sub(3)..];
                if self.rng.chance(0.5) {
                    Expr::Var(self.rng.pick(recent))
                } else {
                    Expr::Var(self.rng.pick(&floats))
                }
            }
            3 => {
                let b = self.pick_buf();
                Expr::Index(b, self.index_for(b))
            }
            4 => Expr::Cast(IntExpr::Var(self.rng.pick(&ints))),
            _ => Expr::Cast(if self.config.buffers && self.rng.chance(0.3) {
                IntExpr::Len(Buf::Xs)
            } else {
                IntExpr::N
            }),
        }
    }

    /// A condition: mostly a float comparison, else an integer one, or two
    /// joined by `&&` or `||`.
    fn cond(&mut self) -> Cond {
        match self.rng.weighted(&[6, 3, 1]) {
            0 => self.float_cond(),
            1 => self.int_cond(),
            _ => {
                let (a, b) = (self.simple_cond(), self.simple_cond());
                if self.rng.chance(0.5) {
                    Cond::And(Box::new(a), Box::new(b))
                } else {
                    Cond::Or(Box::new(a), Box::new(b))
                }
            }
        }
    }

    /// A float or integer comparison.
    fn simple_cond(&mut self) -> Cond {
        if self.rng.chance(0.6) {
            self.float_cond()
        } else {
            self.int_cond()
        }
    }

    /// `a < b` or `a > b` on floats.
    fn float_cond(&mut self) -> Cond {
        let d = self.config.max_depth.min(2);
        let a = self.typed(d);
        let mut b = self.expr(d.min(1));
        if b == a || (ends_with_cast(&a) && ends_with_cast(&b)) {
            b = Expr::Param(self.rng.below(3));
        }
        if self.rng.chance(0.5) {
            Cond::Less(a, b)
        } else {
            Cond::Greater(a, b)
        }
    }

    /// An integer comparison: parity or size of an index or counter, or
    /// the size of `n`.
    fn int_cond(&mut self) -> Cond {
        let ints = self.ints();
        if ints.is_empty() || self.rng.chance(0.15) {
            return if self.rng.chance(0.5) {
                Cond::Int(IntCmp::Gt, IntExpr::N, IntExpr::Lit(1 + self.rng.below(2)))
            } else {
                Cond::Int(IntCmp::Lt, IntExpr::N, IntExpr::Lit(2 + self.rng.below(2)))
            };
        }
        let j = IntExpr::Var(self.rng.pick(&ints));
        match self.rng.below(5) {
            0 | 1 => Cond::Int(
                IntCmp::Eq,
                IntExpr::Rem(Box::new(j), Box::new(IntExpr::Lit(2))),
                IntExpr::Lit(self.rng.below(2)),
            ),
            2 => Cond::Int(IntCmp::Lt, j, IntExpr::Lit(2 + self.rng.below(2))),
            3 => Cond::Int(IntCmp::Gt, j, IntExpr::Lit(1 + self.rng.below(2))),
            _ => Cond::Int(IntCmp::Eq, j, IntExpr::Lit(1 + self.rng.below(2))),
        }
    }

    /// The final expression: every top-level variable whose value would be
    /// lost otherwise, every buffer nothing read, and a few others, each
    /// maybe scaled or through a method, joined by `+`, `-` and `*`.
    fn tail(&mut self, body: &[Stmt]) -> Expr {
        let mut probe = body.to_vec();
        let mut liveness = Liveness::new(false);
        liveness.block(&mut probe, Set::new(), None, true);
        let mut read = Set::new();
        probe.iter().for_each(|s| stmt_reads(s, &mut read));
        let mut assigned = Set::new();
        retain_deep(&mut probe, &mut |s| {
            if let Stmt::Assign(v, ..) = s {
                assigned.insert(*v);
            }
            true
        });
        let mut terms = Vec::new();
        for v in self.scope.clone() {
            match self.vars[v] {
                Kind::Float
                    if liveness.dead.contains(&v)
                        || assigned.contains(&v)
                        || self.rng.chance(0.2) =>
                {
                    let t = self.term(Expr::Var(v));
                    terms.push(t);
                }
                Kind::Buffer { .. } if !read.contains(&v) || self.rng.chance(0.2) => {
                    let index = if self.short(Buf::Local(v)) || self.rng.chance(0.5) {
                        IntExpr::Lit(self.rng.below(3))
                    } else {
                        IntExpr::Sub(Box::new(IntExpr::Len(Buf::Xs)), Box::new(IntExpr::Lit(1)))
                    };
                    let t = self.term(Expr::Index(Buf::Local(v), index));
                    terms.push(t);
                }
                _ => {}
            }
        }
        while terms.len() < 2 {
            let e = self.typed(1);
            let t = self.term(e);
            terms.push(t);
        }
        let mut acc = terms.remove(0);
        for t in terms {
            let product = self.bound(&acc) * self.bound(&t);
            acc = match self
                .rng
                .weighted(&[6, 3, if product <= 50.0 { 1 } else { 0 }])
            {
                0 => add(acc, t),
                1 => Expr::Bin(Bin::Sub, Box::new(acc), Box::new(t)),
                _ => mul(acc, t),
            };
        }
        acc
    }

    /// `e`, maybe scaled or through `sin`/`tanh`/`cos`.
    fn term(&mut self, e: Expr) -> Expr {
        match self.rng.weighted(&[6, 2, 2]) {
            0 => e,
            1 => mul(e, Expr::Const(self.rng.pick(&CONSTANTS))),
            _ => {
                let f = self.rng.pick(&[Unary::Sin, Unary::Tanh, Unary::Cos]);
                Expr::Unary(f, Box::new(e))
            }
        }
    }
}

/// Whether `e` prints ending in `as f64` (a cast not in parentheses), which
/// cannot be followed by `<`.
fn ends_with_cast(e: &Expr) -> bool {
    match e {
        Expr::Cast(_) => true,
        Expr::Bin(Bin::Add | Bin::Sub, _, b) => {
            matches!(**b, Expr::Cast(_) | Expr::Bin(Bin::Mul, ..)) && ends_with_cast(b)
        }
        Expr::Bin(Bin::Mul, _, b) => matches!(**b, Expr::Cast(_)),
        _ => false,
    }
}

/// `a + b`.
fn add(a: Expr, b: Expr) -> Expr {
    Expr::Bin(Bin::Add, Box::new(a), Box::new(b))
}

/// `a * b`.
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::Bin(Bin::Mul, Box::new(a), Box::new(b))
}

/// `-a`, folded into literals and double negations.
fn neg(a: Expr) -> Expr {
    match a {
        Expr::Const(c) => Expr::Const(-c),
        Expr::Neg(inner) => *inner,
        a => Expr::Neg(Box::new(a)),
    }
}

/// Whether `e` has a leaf of known type `f64` (anything but a literal):
/// rustc cannot call a method on an all-literal `{float}` expression.
fn typed(e: &Expr) -> bool {
    match e {
        Expr::Const(_) => false,
        Expr::Param(_) | Expr::Var(_) | Expr::Index(..) | Expr::Cast(_) | Expr::Reduce(..) => true,
        Expr::Neg(a) | Expr::Unary(_, a) => typed(a),
        Expr::Bin(_, a, b) | Expr::Binary(_, a, b) | Expr::If(_, a, b) => typed(a) || typed(b),
        Expr::MulAdd(a, b, c) => typed(a) || typed(b) || typed(c),
    }
}

// ---------------------------------------------------------------------------
// Bounds: a static analysis of |value| over all inputs
// ---------------------------------------------------------------------------

/// Upper bounds of `|value|` of float variables and of the elements of
/// buffers, at one program point, for every input (scalars and `xs` in
/// `[-1, 1]`, at most 5 trips per loop). Loops are run abstractly for their
/// largest trip count, joining (elementwise max) the states after every
/// trip, after every `break`/`continue`, and before the loop.
#[derive(Clone, Debug, Default)]
struct Bounds {
    /// The bound of each variable, by index (0 when not yet set).
    of: Vec<f64>,
    /// The largest bound of any value computed so far.
    worst: f64,
    /// For each enclosing loop, the join of the states at its exits.
    exits: Vec<Vec<f64>>,
}

impl Bounds {
    /// The bound of `v`.
    fn get(&self, v: Var) -> f64 {
        self.of.get(v).copied().unwrap_or(0.0)
    }

    /// Sets the bound of `v`.
    fn set(&mut self, v: Var, b: f64) {
        if self.of.len() <= v {
            self.of.resize(v + 1, 0.0);
        }
        self.of[v] = b;
    }

    /// The bound of the elements of `b`.
    fn buf(&self, b: Buf) -> f64 {
        match b {
            Buf::Xs => 1.0,
            Buf::Local(v) => self.get(v),
        }
    }

    /// Records a computed bound in `worst` (NaN counts as infinite).
    fn note(&mut self, b: f64) -> f64 {
        self.worst = if b.is_nan() {
            f64::INFINITY
        } else {
            self.worst.max(b)
        };
        b
    }

    /// Joins `other` into `self`: the larger bound of each variable.
    fn join(&mut self, other: &Bounds) {
        join_into(&mut self.of, &other.of);
        self.worst = self.worst.max(other.worst);
        for (mine, theirs) in self.exits.iter_mut().zip(&other.exits) {
            join_into(mine, theirs);
        }
    }

    /// The bound of `e`.
    fn expr(&mut self, e: &Expr, kinds: &[Kind]) -> f64 {
        let b = match e {
            Expr::Const(c) => c.abs(),
            Expr::Param(_) => 1.0,
            Expr::Var(v) => self.get(*v),
            Expr::Index(b, _) => self.buf(*b),
            Expr::Cast(i) => int_max(i) as f64,
            Expr::Reduce(b, Reduction::Sum) => self.buf(*b) * buf_len_max(*b, kinds) as f64,
            Expr::Reduce(b, Reduction::Product) => {
                self.buf(*b).max(1.0).powi(buf_len_max(*b, kinds) as i32)
            }
            Expr::Neg(a) => self.expr(a, kinds),
            Expr::Bin(op, a, b) => {
                let (x, y) = (self.expr(a, kinds), self.expr(b, kinds));
                match op {
                    Bin::Add | Bin::Sub => x + y,
                    Bin::Mul => x * y,
                    Bin::Div => {
                        self.note(1.0 + y * y);
                        x
                    }
                }
            }
            Expr::Unary(f, a) => {
                let x = self.expr(a, kinds);
                match f {
                    Unary::Sin | Unary::Cos | Unary::Tanh => 1.0,
                    Unary::Abs => x,
                    Unary::Square => x * x,
                    Unary::Cube => x * x * x,
                    Unary::ExpTanh => E,
                    Unary::SqrtSq => {
                        self.note(1.0 + x * x);
                        1.0 + x
                    }
                    Unary::LnSq => self.note(1.0 + x * x).ln(),
                }
            }
            Expr::Binary(f, a, b) => {
                let (x, y) = (self.expr(a, kinds), self.expr(b, kinds));
                match f {
                    Binary::Max | Binary::Min => x.max(y),
                    Binary::Hypot => x + y,
                    Binary::Atan2 => PI,
                }
            }
            Expr::MulAdd(a, b, c) => {
                let (x, y, z) = (
                    self.expr(a, kinds),
                    self.expr(b, kinds),
                    self.expr(c, kinds),
                );
                self.note(x * y);
                x * y + z
            }
            Expr::If(c, a, b) => {
                self.cond(c, kinds);
                self.expr(a, kinds).max(self.expr(b, kinds))
            }
        };
        self.note(b)
    }

    /// Notes the bounds of the operands of `c`.
    fn cond(&mut self, c: &Cond, kinds: &[Kind]) {
        match c {
            Cond::Less(a, b) | Cond::Greater(a, b) => {
                self.expr(a, kinds);
                self.expr(b, kinds);
            }
            Cond::Int(..) => {}
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.cond(a, kinds);
                self.cond(b, kinds);
            }
        }
    }

    /// Runs `stmts` abstractly.
    fn block(&mut self, stmts: &[Stmt], kinds: &[Kind]) {
        for s in stmts {
            self.stmt(s, kinds);
        }
    }

    /// Runs `s` abstractly.
    fn stmt(&mut self, s: &Stmt, kinds: &[Kind]) {
        match s {
            Stmt::Let(v, e) => {
                let b = self.expr(e, kinds);
                self.set(*v, b);
            }
            Stmt::Assign(v, op, e) => {
                let (x, y) = (self.get(*v), self.expr(e, kinds));
                let r = match op {
                    Op::Set => y,
                    Op::Add | Op::Sub => x + y,
                    Op::Mul => x * y,
                };
                let r = self.note(r);
                self.set(*v, r);
            }
            Stmt::Store(v, _, op, e) => {
                let (x, y) = (self.get(*v), self.expr(e, kinds));
                let r = match op {
                    Op::Set => x.max(y),
                    Op::Add | Op::Sub => x + y,
                    Op::Mul => x * y.max(1.0),
                };
                let r = self.note(r);
                self.set(*v, r);
            }
            Stmt::Buffer(v, init) => {
                let b = match init {
                    Init::Fill(e) => self.expr(e, kinds),
                    Init::Copy => 1.0,
                    Init::List(es) => es.iter().fold(0.0, |m: f64, e| m.max(self.expr(e, kinds))),
                };
                self.set(*v, b);
            }
            Stmt::If(c, then, otherwise) => {
                self.cond(c, kinds);
                let mut other = self.clone();
                self.block(then, kinds);
                other.block(otherwise, kinds);
                self.join(&other);
            }
            Stmt::Exit(c, _) => {
                self.cond(c, kinds);
                let now = self.of.clone();
                if let Some(top) = self.exits.last_mut() {
                    join_into(top, &now);
                }
            }
            Stmt::For(header, body) => {
                let trips = match header {
                    Loop::Range(_, end) => int_max(end),
                    Loop::Iter(b, _) | Loop::Enumerate(b, ..) => buf_len_max(*b, kinds),
                    Loop::Zip(b, c, ..) => buf_len_max(*b, kinds).min(buf_len_max(*c, kinds)),
                };
                self.looped(trips, Some(header), body, kinds);
            }
            Stmt::While(_, bound, body) => self.looped(int_max(bound), None, body, kinds),
        }
    }

    /// Runs a loop abstractly for `trips` trips, binding its elements.
    fn looped(&mut self, trips: usize, header: Option<&Loop>, body: &[Stmt], kinds: &[Kind]) {
        for _ in 0..trips {
            let entry = self.of.clone();
            match header {
                Some(Loop::Iter(b, e) | Loop::Enumerate(b, _, e)) => self.set(*e, self.buf(*b)),
                Some(Loop::Zip(b, c, e, f)) => {
                    self.set(*e, self.buf(*b));
                    self.set(*f, self.buf(*c));
                }
                Some(Loop::Range(..)) | None => {}
            }
            self.exits.push(Vec::new());
            self.block(body, kinds);
            let exits = self.exits.pop().unwrap_or_default();
            join_into(&mut self.of, &exits);
            join_into(&mut self.of, &entry);
        }
    }
}

/// `mine[i] = max(mine[i], theirs[i])`, growing `mine` as needed.
fn join_into(mine: &mut Vec<f64>, theirs: &[f64]) {
    if mine.len() < theirs.len() {
        mine.resize(theirs.len(), 0.0);
    }
    for (a, b) in mine.iter_mut().zip(theirs) {
        *a = a.max(*b);
    }
}

/// The largest value `e` takes (over `n <= 4`, `xs.len() <= 5`).
fn int_max(e: &IntExpr) -> usize {
    match e {
        IntExpr::Var(_) | IntExpr::Len(_) => 5,
        IntExpr::N => 4,
        IntExpr::Lit(c) => *c,
        IntExpr::Add(a, b) => int_max(a) + int_max(b),
        IntExpr::Sub(a, _) => int_max(a),
        IntExpr::Rem(a, b) => int_max(a).min(int_max(b)),
    }
}

/// The largest length of `b`.
fn buf_len_max(b: Buf, kinds: &[Kind]) -> usize {
    match b {
        Buf::Local(v) if kinds[v] == (Kind::Buffer { short: true }) => 3,
        _ => 5,
    }
}

// ---------------------------------------------------------------------------
// Reads and liveness
// ---------------------------------------------------------------------------

/// Adds the variables `e` reads to `out` (floats, elements, buffers,
/// integer variables).
fn expr_reads(e: &Expr, out: &mut Set) {
    match e {
        Expr::Const(_) | Expr::Param(_) => {}
        Expr::Var(v) => {
            out.insert(*v);
        }
        Expr::Index(b, i) => {
            buf_reads(*b, out);
            int_reads(i, out);
        }
        Expr::Cast(i) => int_reads(i, out),
        Expr::Reduce(b, _) => buf_reads(*b, out),
        Expr::Neg(a) | Expr::Unary(_, a) => expr_reads(a, out),
        Expr::Bin(_, a, b) | Expr::Binary(_, a, b) => {
            expr_reads(a, out);
            expr_reads(b, out);
        }
        Expr::MulAdd(a, b, c) => {
            expr_reads(a, out);
            expr_reads(b, out);
            expr_reads(c, out);
        }
        Expr::If(c, a, b) => {
            cond_reads(c, out);
            expr_reads(a, out);
            expr_reads(b, out);
        }
    }
}

/// Adds a local buffer to `out`.
fn buf_reads(b: Buf, out: &mut Set) {
    if let Buf::Local(v) = b {
        out.insert(v);
    }
}

/// Adds the variables `e` reads to `out`.
fn int_reads(e: &IntExpr, out: &mut Set) {
    match e {
        IntExpr::Var(v) => {
            out.insert(*v);
        }
        IntExpr::Len(b) => buf_reads(*b, out),
        IntExpr::N | IntExpr::Lit(_) => {}
        IntExpr::Add(a, b) | IntExpr::Sub(a, b) | IntExpr::Rem(a, b) => {
            int_reads(a, out);
            int_reads(b, out);
        }
    }
}

/// Adds the variables `c` reads to `out`.
fn cond_reads(c: &Cond, out: &mut Set) {
    match c {
        Cond::Less(a, b) | Cond::Greater(a, b) => {
            expr_reads(a, out);
            expr_reads(b, out);
        }
        Cond::Int(_, a, b) => {
            int_reads(a, out);
            int_reads(b, out);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond_reads(a, out);
            cond_reads(b, out);
        }
    }
}

/// Adds the variables a loop header reads to `out`.
fn loop_reads(header: &Loop, out: &mut Set) {
    match header {
        Loop::Range(_, end) => int_reads(end, out),
        Loop::Iter(b, _) | Loop::Enumerate(b, ..) => buf_reads(*b, out),
        Loop::Zip(b, c, ..) => {
            buf_reads(*b, out);
            buf_reads(*c, out);
        }
    }
}

/// Adds every variable `s` reads to `out`. Like rustc, the target of a
/// compound assignment (`x += e`) is not a read, and neither is a buffer
/// written.
fn stmt_reads(s: &Stmt, out: &mut Set) {
    match s {
        Stmt::Let(_, e) | Stmt::Assign(_, _, e) => expr_reads(e, out),
        Stmt::Store(_, i, _, e) => {
            int_reads(i, out);
            expr_reads(e, out);
        }
        Stmt::Buffer(_, init) => init_reads(init, out),
        Stmt::If(c, a, b) => {
            cond_reads(c, out);
            a.iter().chain(b).for_each(|s| stmt_reads(s, out));
        }
        Stmt::Exit(c, _) => cond_reads(c, out),
        Stmt::For(header, body) => {
            loop_reads(header, out);
            body.iter().for_each(|s| stmt_reads(s, out));
        }
        Stmt::While(k, bound, body) => {
            out.insert(*k);
            int_reads(bound, out);
            body.iter().for_each(|s| stmt_reads(s, out));
        }
    }
}

/// Adds the variables a buffer initializer reads to `out`.
fn init_reads(init: &Init, out: &mut Set) {
    match init {
        Init::Fill(e) => expr_reads(e, out),
        Init::Copy => {}
        Init::List(es) => es.iter().for_each(|e| expr_reads(e, out)),
    }
}

/// Where `break` and `continue` of the innermost loop go: the variables
/// live after the loop, and at its head.
struct Jumps {
    /// Live after the loop.
    brk: Set,
    /// Live at the loop's head.
    cont: Set,
}

/// Backward liveness of float variables, at least as strict as rustc's
/// `unused_variables`/`unused_assignments`: an assignment (or `let`) whose
/// variable is not live after it is dead, and a dead one reads nothing
/// ("strong" liveness: `x += 1.0` in a loop does not keep `x` alive, as
/// rustc does not count it as a use either). Loops iterate to a fixed
/// point; `break` and `continue` go to their [`Jumps`].
struct Liveness {
    /// Remove dead assignments (in the final pass over each block).
    prune: bool,
    /// Variables whose `let` initializer is dead.
    dead_lets: Set,
    /// Variables with any dead `let` or assignment.
    dead: Set,
    /// How many assignments were removed.
    removed: usize,
}

impl Liveness {
    /// An analysis that removes dead assignments if `prune`.
    fn new(prune: bool) -> Liveness {
        Liveness {
            prune,
            dead_lets: Set::new(),
            dead: Set::new(),
            removed: 0,
        }
    }

    /// The variables live before `block`, given those live after it. In
    /// the final pass (`fin`), records (and maybe removes) dead stores.
    fn block(
        &mut self,
        block: &mut Vec<Stmt>,
        mut live: Set,
        jumps: Option<&Jumps>,
        fin: bool,
    ) -> Set {
        let mut i = block.len();
        while i > 0 {
            i -= 1;
            let mut remove = false;
            match &mut block[i] {
                Stmt::Let(v, e) => {
                    if live.remove(v) {
                        expr_reads(e, &mut live);
                    } else if fin {
                        self.dead_lets.insert(*v);
                        self.dead.insert(*v);
                    }
                }
                Stmt::Assign(v, op, e) => {
                    if live.contains(v) {
                        if *op == Op::Set {
                            live.remove(v);
                        }
                        expr_reads(e, &mut live);
                    } else if fin {
                        self.dead.insert(*v);
                        remove = self.prune;
                    }
                }
                Stmt::Store(v, index, _, e) => {
                    live.insert(*v);
                    int_reads(index, &mut live);
                    expr_reads(e, &mut live);
                }
                Stmt::Buffer(v, init) => {
                    live.remove(v);
                    init_reads(init, &mut live);
                }
                Stmt::If(c, then, otherwise) => {
                    let mut before = self.block(then, live.clone(), jumps, fin);
                    before.union_with(&self.block(otherwise, live, jumps, fin));
                    cond_reads(c, &mut before);
                    live = before;
                }
                Stmt::Exit(c, exit) => {
                    if let Some(j) = jumps {
                        live.union_with(match exit {
                            Exit::Break => &j.brk,
                            Exit::Continue => &j.cont,
                        });
                    }
                    cond_reads(c, &mut live);
                }
                Stmt::For(header, body) => {
                    let mut head = Set::new();
                    loop_reads(header, &mut head);
                    live = self.looped(body, live, head, fin);
                }
                Stmt::While(k, bound, body) => {
                    let mut head = Set::new();
                    head.insert(*k);
                    int_reads(bound, &mut head);
                    live = self.looped(body, live, head, fin);
                }
            }
            if remove {
                block.remove(i);
                self.removed += 1;
            }
        }
        live
    }

    /// The variables live at the head of a loop whose body is `body`, with
    /// `exit` live after it and `header` read at each test.
    fn looped(&mut self, body: &mut Vec<Stmt>, exit: Set, header: Set, fin: bool) -> Set {
        let mut head = exit.clone();
        head.union_with(&header);
        loop {
            let jumps = Jumps {
                brk: exit.clone(),
                cont: head.clone(),
            };
            let mut next = self.block(body, head.clone(), Some(&jumps), false);
            next.union_with(&head);
            if next == head {
                break;
            }
            head = next;
        }
        if fin {
            let jumps = Jumps {
                brk: exit,
                cont: head.clone(),
            };
            self.block(body, head.clone(), Some(&jumps), true);
        }
        head
    }
}

// ---------------------------------------------------------------------------
// Normalization and well-formedness
// ---------------------------------------------------------------------------

impl Program {
    /// Removes what rustc would warn about or what cannot matter, until
    /// nothing changes: dead assignments, `x = x;` (and `v[i] = v[i];`),
    /// `let`s and buffers never read (with their writes), and `if`s and
    /// loops left with nothing to do (see [`effects`]).
    fn normalize(&mut self) {
        loop {
            let mut live = Set::new();
            expr_reads(&self.tail, &mut live);
            let mut liveness = Liveness::new(true);
            liveness.block(&mut self.body, live, None, true);
            let read = self.reads();
            let before = count_stmts(&self.body);
            retain_deep(&mut self.body, &mut |s| match s {
                Stmt::Store(v, i, Op::Set, Expr::Index(b, j)) if Buf::Local(*v) == *b && i == j => {
                    false
                }
                Stmt::Let(v, _) | Stmt::Buffer(v, _) | Stmt::Store(v, ..) => read.contains(v),
                // `x = x;` is rustc's "useless assignment".
                Stmt::Assign(v, Op::Set, Expr::Var(x)) => v != x,
                _ => true,
            });
            prune_empty(&mut self.body);
            if liveness.removed == 0 && count_stmts(&self.body) == before {
                break;
            }
        }
    }

    /// Every variable read anywhere (see [`stmt_reads`]).
    fn reads(&self) -> Set {
        let mut read = Set::new();
        self.body.iter().for_each(|s| stmt_reads(s, &mut read));
        expr_reads(&self.tail, &mut read);
        read
    }

    /// Whether every value stays under [`LIMIT`] for every input.
    fn bounded(&self) -> bool {
        let mut bounds = Bounds::default();
        bounds.block(&self.body, &self.vars);
        bounds.expr(&self.tail, &self.vars);
        bounds.worst <= LIMIT
    }

    /// Whether every index is in bounds for every input, every variable is
    /// read in scope, buffers are made at the top level, `break` and
    /// `continue` are in loops, and no loop writes the buffer it iterates.
    fn valid(&self) -> bool {
        let mut check = Validity {
            kinds: &self.vars,
            scope: Vec::new(),
            ranges: Vec::new(),
            iterated: Vec::new(),
            loops: 0,
            ok: true,
        };
        for s in &self.body {
            check.stmt(s, true);
        }
        check.expr(&self.tail);
        check.ok
    }
}

/// Keeps the statements (at every depth) for which `keep` holds.
fn retain_deep(block: &mut Vec<Stmt>, keep: &mut dyn FnMut(&Stmt) -> bool) {
    block.retain(&mut *keep);
    for s in block {
        match s {
            Stmt::If(_, a, b) => {
                retain_deep(a, keep);
                retain_deep(b, keep);
            }
            Stmt::For(_, body) | Stmt::While(_, _, body) => retain_deep(body, keep),
            _ => {}
        }
    }
}

/// Removes `if`s and loops without effect (see [`effects`]), innermost
/// first.
fn prune_empty(block: &mut Vec<Stmt>) {
    for s in block.iter_mut() {
        match s {
            Stmt::If(_, a, b) => {
                prune_empty(a);
                prune_empty(b);
            }
            Stmt::For(_, body) | Stmt::While(_, _, body) => prune_empty(body),
            _ => {}
        }
    }
    block.retain(|s| match s {
        Stmt::If(_, a, b) => effects(a, true) || effects(b, true),
        Stmt::For(_, body) | Stmt::While(_, _, body) => effects(body, false),
        _ => true,
    });
}

/// Whether `block` assigns a variable or writes a buffer (or, if `exits`,
/// may leave its loop): if not, it only computes values nobody reads.
fn effects(block: &[Stmt], exits: bool) -> bool {
    block.iter().any(|s| match s {
        Stmt::Assign(..) | Stmt::Store(..) => true,
        Stmt::Exit(..) => exits,
        Stmt::If(_, a, b) => effects(a, exits) || effects(b, exits),
        Stmt::For(_, body) | Stmt::While(_, _, body) => effects(body, false),
        Stmt::Let(..) | Stmt::Buffer(..) => false,
    })
}

/// The checker of [`Program::valid`].
struct Validity<'a> {
    /// The program's variables.
    kinds: &'a [Kind],
    /// Variables in scope.
    scope: Vec<Var>,
    /// `for` indices in scope, and their ranges.
    ranges: Vec<(Var, Range)>,
    /// Local buffers iterated around here.
    iterated: Vec<Var>,
    /// Enclosing loops (`break` and `continue` need one).
    loops: usize,
    /// No violation found yet.
    ok: bool,
}

impl Validity<'_> {
    /// Checks a block (bindings go out of scope after it).
    fn block(&mut self, block: &[Stmt], top: bool) {
        let (scope, ranges) = (self.scope.len(), self.ranges.len());
        for s in block {
            self.stmt(s, top);
        }
        self.scope.truncate(scope);
        self.ranges.truncate(ranges);
    }

    /// Fails unless `v` is in scope.
    fn visible(&mut self, v: Var) {
        self.ok &= self.scope.contains(&v);
    }

    /// Whether `b` is a 3-element local buffer.
    fn short(&self, b: Buf) -> bool {
        matches!(b, Buf::Local(v) if self.kinds.get(v) == Some(&Kind::Buffer { short: true }))
    }

    /// Checks a buffer reference.
    fn buf(&mut self, b: Buf) {
        if let Buf::Local(v) = b {
            self.visible(v);
            self.ok &= matches!(self.kinds.get(v), Some(Kind::Buffer { .. }));
        }
    }

    /// Checks that `index` is in bounds of `b` for every input.
    fn index(&mut self, b: Buf, index: &IntExpr) {
        self.buf(b);
        self.int(index);
        let short = self.short(b);
        let long_len = |e: &IntExpr, this: &Self| matches!(e, IntExpr::Len(c) if !this.short(*c));
        self.ok &= match index {
            IntExpr::Var(i) => self
                .ranges
                .iter()
                .any(|(v, r)| v == i && (*r == Range::Three || (*r == Range::Len && !short))),
            IntExpr::Lit(c) => *c < 3,
            IntExpr::Rem(_, m) => match &**m {
                IntExpr::Lit(c) => (1..=3).contains(c),
                m => !short && long_len(m, self),
            },
            IntExpr::Sub(a, one) => !short && long_len(a, self) && **one == IntExpr::Lit(1),
            _ => false,
        };
    }

    /// Checks an integer expression.
    fn int(&mut self, e: &IntExpr) {
        match e {
            IntExpr::Var(v) => self.visible(*v),
            IntExpr::Len(b) => self.buf(*b),
            IntExpr::N | IntExpr::Lit(_) => {}
            IntExpr::Add(a, b) | IntExpr::Sub(a, b) | IntExpr::Rem(a, b) => {
                self.int(a);
                self.int(b);
            }
        }
    }

    /// Checks a float expression.
    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Const(c) => self.ok &= c.is_finite(),
            Expr::Param(i) => self.ok &= *i < 3,
            Expr::Var(v) => {
                self.visible(*v);
                self.ok &= matches!(self.kinds.get(*v), Some(Kind::Float | Kind::Elem { .. }));
            }
            Expr::Index(b, i) => self.index(*b, i),
            Expr::Cast(i) => self.int(i),
            Expr::Reduce(b, _) => self.buf(*b),
            Expr::Neg(a) | Expr::Unary(_, a) => self.expr(a),
            Expr::Bin(_, a, b) | Expr::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::MulAdd(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            Expr::If(c, a, b) => {
                self.cond(c);
                self.expr(a);
                self.expr(b);
            }
        }
    }

    /// Checks a condition.
    fn cond(&mut self, c: &Cond) {
        match c {
            Cond::Less(a, b) | Cond::Greater(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Cond::Int(_, a, b) => {
                self.int(a);
                self.int(b);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.cond(a);
                self.cond(b);
            }
        }
    }

    /// Checks a statement (`top`: at the top level of the body).
    fn stmt(&mut self, s: &Stmt, top: bool) {
        match s {
            Stmt::Let(v, e) => {
                self.expr(e);
                self.scope.push(*v);
            }
            Stmt::Assign(v, _, e) => {
                self.expr(e);
                self.visible(*v);
                self.ok &= self.kinds.get(*v) == Some(&Kind::Float);
            }
            Stmt::Store(v, i, _, e) => {
                self.expr(e);
                self.index(Buf::Local(*v), i);
                self.ok &= !self.iterated.contains(v);
            }
            Stmt::Buffer(v, init) => {
                self.ok &= top;
                match init {
                    Init::Fill(e) => self.expr(e),
                    Init::Copy => {}
                    Init::List(es) => {
                        self.ok &= es.len() == 3;
                        es.iter().for_each(|e| self.expr(e));
                    }
                }
                self.scope.push(*v);
            }
            Stmt::If(c, a, b) => {
                self.cond(c);
                self.block(a, false);
                self.block(b, false);
            }
            Stmt::Exit(c, _) => {
                self.cond(c);
                self.ok &= self.loops > 0;
            }
            Stmt::For(header, body) => {
                let (scope, ranges, iterated) =
                    (self.scope.len(), self.ranges.len(), self.iterated.len());
                match header {
                    Loop::Range(i, end) => {
                        self.int(end);
                        let range = match end {
                            IntExpr::N => Range::N,
                            IntExpr::Lit(3) => Range::Three,
                            IntExpr::Len(b) if self.short(*b) => Range::Three,
                            IntExpr::Len(_) => Range::Len,
                            _ => {
                                self.ok = false;
                                Range::N
                            }
                        };
                        self.scope.push(*i);
                        self.ranges.push((*i, range));
                    }
                    Loop::Iter(b, e) => {
                        self.buf(*b);
                        self.scope.push(*e);
                        self.iterate(*b);
                    }
                    Loop::Enumerate(b, i, e) => {
                        self.buf(*b);
                        let range = if self.short(*b) {
                            Range::Three
                        } else {
                            Range::Len
                        };
                        self.scope.extend([*i, *e]);
                        self.ranges.push((*i, range));
                        self.iterate(*b);
                    }
                    Loop::Zip(b, c, e, f) => {
                        self.buf(*b);
                        self.buf(*c);
                        self.scope.extend([*e, *f]);
                        self.iterate(*b);
                        self.iterate(*c);
                    }
                }
                self.loops += 1;
                self.block(body, false);
                self.loops -= 1;
                self.scope.truncate(scope);
                self.ranges.truncate(ranges);
                self.iterated.truncate(iterated);
            }
            Stmt::While(k, bound, body) => {
                self.int(bound);
                self.ok &= matches!(bound, IntExpr::N | IntExpr::Len(_));
                self.scope.push(*k);
                self.loops += 1;
                self.block(body, false);
                self.loops -= 1;
                self.scope.pop();
            }
        }
    }

    /// Marks a buffer as iterated by the loop being checked.
    fn iterate(&mut self, b: Buf) {
        if let Buf::Local(v) = b {
            self.iterated.push(v);
        }
    }
}

// ---------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------

/// Nodes of a statement, with everything inside it.
fn stmt_size(s: &Stmt) -> usize {
    1 + match s {
        Stmt::Let(_, e) | Stmt::Assign(_, _, e) => expr_size(e),
        Stmt::Store(_, i, _, e) => int_size(i) + expr_size(e),
        Stmt::Buffer(_, Init::Fill(e)) => expr_size(e),
        Stmt::Buffer(_, Init::Copy) => 0,
        Stmt::Buffer(_, Init::List(es)) => es.iter().map(expr_size).sum(),
        Stmt::If(c, a, b) => cond_size(c) + a.iter().chain(b).map(stmt_size).sum::<usize>(),
        Stmt::Exit(c, _) => cond_size(c),
        Stmt::For(header, body) => {
            let head = match header {
                Loop::Range(_, end) => int_size(end),
                _ => 1,
            };
            head + body.iter().map(stmt_size).sum::<usize>()
        }
        Stmt::While(_, bound, body) => int_size(bound) + body.iter().map(stmt_size).sum::<usize>(),
    }
}

/// Nodes of a float expression.
fn expr_size(e: &Expr) -> usize {
    1 + match e {
        Expr::Const(_) | Expr::Param(_) | Expr::Var(_) | Expr::Reduce(..) => 0,
        Expr::Index(_, i) | Expr::Cast(i) => int_size(i),
        Expr::Neg(a) | Expr::Unary(_, a) => expr_size(a),
        Expr::Bin(_, a, b) | Expr::Binary(_, a, b) => expr_size(a) + expr_size(b),
        Expr::MulAdd(a, b, c) => expr_size(a) + expr_size(b) + expr_size(c),
        Expr::If(c, a, b) => cond_size(c) + expr_size(a) + expr_size(b),
    }
}

/// Nodes of an integer expression.
fn int_size(e: &IntExpr) -> usize {
    1 + match e {
        IntExpr::Var(_) | IntExpr::N | IntExpr::Len(_) | IntExpr::Lit(_) => 0,
        IntExpr::Add(a, b) | IntExpr::Sub(a, b) | IntExpr::Rem(a, b) => int_size(a) + int_size(b),
    }
}

/// Nodes of a condition.
fn cond_size(c: &Cond) -> usize {
    1 + match c {
        Cond::Less(a, b) | Cond::Greater(a, b) => expr_size(a) + expr_size(b),
        Cond::Int(_, a, b) => int_size(a) + int_size(b),
        Cond::And(a, b) | Cond::Or(a, b) => cond_size(a) + cond_size(b),
    }
}

// ---------------------------------------------------------------------------
// Shrinking
// ---------------------------------------------------------------------------

/// A statement-level edit of [`Program::shrink`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StmtEdit {
    /// Drop the statement; a dropped `let` reads `0.5` where it was read
    /// (its assignments go too), a dropped buffer becomes `xs` (its writes
    /// go).
    Remove,
    /// Replace an `if` by its first block, or a loop by one trip of its
    /// body.
    Unwrap,
    /// Replace an `if` by its `else` block.
    UnwrapElse,
}

/// What is left to do after dropping a statement.
enum Forget {
    /// Nothing.
    Nothing,
    /// A float variable lost its `let`.
    Float(Var),
    /// A buffer lost its creation.
    Buffer(Var),
}

/// The statements of `block`, at every depth.
fn count_stmts(block: &[Stmt]) -> usize {
    block
        .iter()
        .map(|s| {
            1 + match s {
                Stmt::If(_, a, b) => count_stmts(a) + count_stmts(b),
                Stmt::For(_, body) | Stmt::While(_, _, body) => count_stmts(body),
                _ => 0,
            }
        })
        .sum()
}

impl Program {
    /// Applies `edit` to the `k`-th statement in pre-order; false if it
    /// does not apply there.
    fn edit_stmt(&mut self, k: usize, edit: StmtEdit) -> bool {
        let mut k = k;
        match edit_at(&mut self.body, &mut k, edit) {
            None => false,
            Some(Forget::Nothing) => true,
            Some(Forget::Float(v)) => {
                retain_deep(
                    &mut self.body,
                    &mut |s| !matches!(s, Stmt::Assign(x, ..) if *x == v),
                );
                self.walk(&mut Substitute::var(v, Expr::Const(0.5)));
                true
            }
            Some(Forget::Buffer(v)) => {
                retain_deep(
                    &mut self.body,
                    &mut |s| !matches!(s, Stmt::Store(x, ..) if *x == v),
                );
                let short = self.vars[v] == Kind::Buffer { short: true };
                self.walk(&mut Substitute::buffer(v, short));
                true
            }
        }
    }

    /// Visits every expression, condition, integer expression and buffer
    /// reference of the program, children before parents.
    fn walk(&mut self, visit: &mut dyn Visit) {
        walk_block(visit, &mut self.body);
        walk_expr(visit, &mut self.tail);
    }
}

/// Finds the `k`-th statement of `block` in pre-order and edits it.
fn edit_at(block: &mut Vec<Stmt>, k: &mut usize, edit: StmtEdit) -> Option<Forget> {
    let mut i = 0;
    while i < block.len() {
        if *k == 0 {
            return apply_edit(block, i, edit);
        }
        *k -= 1;
        let found = match &mut block[i] {
            Stmt::If(_, a, b) => edit_at(a, k, edit).or_else(|| edit_at(b, k, edit)),
            Stmt::For(_, body) | Stmt::While(_, _, body) => edit_at(body, k, edit),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
        i += 1;
    }
    None
}

/// Edits `block[i]`.
fn apply_edit(block: &mut Vec<Stmt>, i: usize, edit: StmtEdit) -> Option<Forget> {
    let replacement = match (edit, &block[i]) {
        (StmtEdit::Remove, _) => {
            return Some(match block.remove(i) {
                Stmt::Let(v, _) => Forget::Float(v),
                Stmt::Buffer(v, _) => Forget::Buffer(v),
                _ => Forget::Nothing,
            });
        }
        (StmtEdit::Unwrap, Stmt::If(_, a, _)) => a.clone(),
        (StmtEdit::UnwrapElse, Stmt::If(_, _, b)) if !b.is_empty() => b.clone(),
        (StmtEdit::Unwrap, Stmt::For(header, body)) => {
            let mut body = body.clone();
            let mut visit = match header {
                Loop::Range(i, _) => Substitute::index(*i, 1),
                Loop::Iter(b, e) => Substitute::var(*e, Expr::Index(*b, IntExpr::Lit(0))),
                Loop::Enumerate(b, i, e) => {
                    walk_block(&mut Substitute::index(*i, 1), &mut body);
                    Substitute::var(*e, Expr::Index(*b, IntExpr::Lit(1)))
                }
                Loop::Zip(b, c, e, f) => {
                    walk_block(
                        &mut Substitute::var(*e, Expr::Index(*b, IntExpr::Lit(0))),
                        &mut body,
                    );
                    Substitute::var(*f, Expr::Index(*c, IntExpr::Lit(0)))
                }
            };
            walk_block(&mut visit, &mut body);
            strip_exits(&mut body);
            body
        }
        (StmtEdit::Unwrap, Stmt::While(k, _, body)) => {
            let mut body = body.clone();
            walk_block(&mut Substitute::index(*k, 1), &mut body);
            strip_exits(&mut body);
            body
        }
        _ => return None,
    };
    block.splice(i..=i, replacement);
    Some(Forget::Nothing)
}

/// Removes the `break`/`continue` of a loop being unwrapped (not those of
/// loops inside it).
fn strip_exits(block: &mut Vec<Stmt>) {
    block.retain(|s| !matches!(s, Stmt::Exit(..)));
    for s in block {
        if let Stmt::If(_, a, b) = s {
            strip_exits(a);
            strip_exits(b);
        }
    }
}

/// A visitor of [`walk_block`], called on every node after its children.
trait Visit {
    /// A float expression.
    fn expr(&mut self, _: &mut Expr) {}
    /// A condition.
    fn cond(&mut self, _: &mut Cond) {}
    /// An integer expression.
    fn int(&mut self, _: &mut IntExpr) {}
    /// A buffer reference (reads, lengths, loop headers; not writes).
    fn buf(&mut self, _: &mut Buf) {}
}

/// Walks every statement of `block`.
fn walk_block(visit: &mut dyn Visit, block: &mut [Stmt]) {
    for s in block {
        match s {
            Stmt::Let(_, e) | Stmt::Assign(_, _, e) => walk_expr(visit, e),
            Stmt::Store(_, i, _, e) => {
                walk_int(visit, i);
                walk_expr(visit, e);
            }
            Stmt::Buffer(_, Init::Fill(e)) => walk_expr(visit, e),
            Stmt::Buffer(_, Init::Copy) => {}
            Stmt::Buffer(_, Init::List(es)) => es.iter_mut().for_each(|e| walk_expr(visit, e)),
            Stmt::If(c, a, b) => {
                walk_cond(visit, c);
                walk_block(visit, a);
                walk_block(visit, b);
            }
            Stmt::Exit(c, _) => walk_cond(visit, c),
            Stmt::For(header, body) => {
                match header {
                    Loop::Range(_, end) => walk_int(visit, end),
                    Loop::Iter(b, _) | Loop::Enumerate(b, ..) => visit.buf(b),
                    Loop::Zip(b, c, ..) => {
                        visit.buf(b);
                        visit.buf(c);
                    }
                }
                walk_block(visit, body);
            }
            Stmt::While(_, bound, body) => {
                walk_int(visit, bound);
                walk_block(visit, body);
            }
        }
    }
}

/// Walks a float expression, children first.
fn walk_expr(visit: &mut dyn Visit, e: &mut Expr) {
    match e {
        Expr::Const(_) | Expr::Param(_) | Expr::Var(_) => {}
        Expr::Index(b, i) => {
            visit.buf(b);
            walk_int(visit, i);
        }
        Expr::Cast(i) => walk_int(visit, i),
        Expr::Reduce(b, _) => visit.buf(b),
        Expr::Neg(a) | Expr::Unary(_, a) => walk_expr(visit, a),
        Expr::Bin(_, a, b) | Expr::Binary(_, a, b) => {
            walk_expr(visit, a);
            walk_expr(visit, b);
        }
        Expr::MulAdd(a, b, c) => {
            walk_expr(visit, a);
            walk_expr(visit, b);
            walk_expr(visit, c);
        }
        Expr::If(c, a, b) => {
            walk_cond(visit, c);
            walk_expr(visit, a);
            walk_expr(visit, b);
        }
    }
    visit.expr(e);
}

/// Walks a condition, children first.
fn walk_cond(visit: &mut dyn Visit, c: &mut Cond) {
    match c {
        Cond::Less(a, b) | Cond::Greater(a, b) => {
            walk_expr(visit, a);
            walk_expr(visit, b);
        }
        Cond::Int(_, a, b) => {
            walk_int(visit, a);
            walk_int(visit, b);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            walk_cond(visit, a);
            walk_cond(visit, b);
        }
    }
    visit.cond(c);
}

/// Walks an integer expression, children first.
fn walk_int(visit: &mut dyn Visit, e: &mut IntExpr) {
    match e {
        IntExpr::Var(_) | IntExpr::N | IntExpr::Lit(_) => {}
        IntExpr::Len(b) => visit.buf(b),
        IntExpr::Add(a, b) | IntExpr::Sub(a, b) | IntExpr::Rem(a, b) => {
            walk_int(visit, a);
            walk_int(visit, b);
        }
    }
    visit.int(e);
}

/// Replaces reads of a variable (by an expression, or an index by a
/// literal), or moves a forgotten buffer's reads to `xs`.
struct Substitute {
    /// The variable (or buffer) replaced.
    var: Var,
    /// What a float read becomes.
    by: Option<Expr>,
    /// What an integer read becomes.
    lit: Option<usize>,
    /// Replacing a buffer; whether it had 3 elements.
    buffer: Option<bool>,
}

impl Substitute {
    /// Reads of the float `v` become `by`.
    fn var(v: Var, by: Expr) -> Substitute {
        Substitute {
            var: v,
            by: Some(by),
            lit: None,
            buffer: None,
        }
    }

    /// Reads of the integer `v` become the literal `lit`.
    fn index(v: Var, lit: usize) -> Substitute {
        Substitute {
            var: v,
            by: None,
            lit: Some(lit),
            buffer: None,
        }
    }

    /// Reads of the buffer `v` read `xs` instead (its length staying 3 for
    /// a short one, so that the indices it bounded stay in bounds).
    fn buffer(v: Var, short: bool) -> Substitute {
        Substitute {
            var: v,
            by: None,
            lit: None,
            buffer: Some(short),
        }
    }
}

impl Visit for Substitute {
    fn expr(&mut self, e: &mut Expr) {
        if let (Expr::Var(v), Some(by)) = (&*e, &self.by)
            && *v == self.var
        {
            *e = by.clone();
        }
    }

    fn int(&mut self, e: &mut IntExpr) {
        match (&*e, self.lit, self.buffer) {
            (IntExpr::Var(v), Some(lit), _) if *v == self.var => *e = IntExpr::Lit(lit),
            (IntExpr::Len(Buf::Local(v)), _, Some(true)) if *v == self.var => *e = IntExpr::Lit(3),
            _ => {}
        }
    }

    fn buf(&mut self, b: &mut Buf) {
        if self.buffer.is_some() && *b == Buf::Local(self.var) {
            *b = Buf::Xs;
        }
    }
}

/// Lists, in walk order, the shrink options of every node: for each float
/// expression its operands (and `0.5` if it is not a leaf), for each
/// condition how many sides `&&`/`||` has.
#[derive(Default)]
struct Census {
    /// Options of each float expression, in walk order.
    exprs: Vec<Vec<Expr>>,
    /// Sides of each condition (0 unless `&&`/`||`), in walk order.
    conds: Vec<usize>,
}

impl Visit for Census {
    fn expr(&mut self, e: &mut Expr) {
        let mut options: Vec<Expr> = match e {
            Expr::Neg(a) | Expr::Unary(_, a) => vec![(**a).clone()],
            Expr::Bin(_, a, b) | Expr::Binary(_, a, b) | Expr::If(_, a, b) => {
                vec![(**a).clone(), (**b).clone()]
            }
            Expr::MulAdd(a, b, c) => vec![(**a).clone(), (**b).clone(), (**c).clone()],
            Expr::Index(b, i) if *i != IntExpr::Lit(0) => vec![Expr::Index(*b, IntExpr::Lit(0))],
            _ => Vec::new(),
        };
        if expr_size(e) > 1 {
            options.push(Expr::Const(0.5));
        }
        self.exprs.push(options);
    }

    fn cond(&mut self, c: &mut Cond) {
        self.conds.push(match c {
            Cond::And(..) | Cond::Or(..) => 2,
            _ => 0,
        });
    }
}

/// Replaces the `k`-th float expression (or condition) in walk order.
struct Replace {
    /// Which node, counting down as nodes are visited.
    k: usize,
    /// The new float expression, for an expression edit.
    expr: Option<Expr>,
    /// Which side of `&&`/`||` to keep, for a condition edit.
    side: Option<usize>,
}

impl Replace {
    /// Replaces the `k`-th float expression by `by`.
    fn expr(k: usize, by: Expr) -> Replace {
        Replace {
            k,
            expr: Some(by),
            side: None,
        }
    }

    /// Replaces the `k`-th condition by one of its sides.
    fn cond(k: usize, side: usize) -> Replace {
        Replace {
            k,
            expr: None,
            side: Some(side),
        }
    }
}

impl Visit for Replace {
    fn expr(&mut self, e: &mut Expr) {
        if let Some(by) = &self.expr {
            if self.k == 0 {
                *e = by.clone();
            }
            self.k = self.k.wrapping_sub(1);
        }
    }

    fn cond(&mut self, c: &mut Cond) {
        if let Some(side) = self.side {
            if self.k == 0
                && let Cond::And(a, b) | Cond::Or(a, b) = c
            {
                *c = if side == 0 {
                    (**a).clone()
                } else {
                    (**b).clone()
                };
            }
            self.k = self.k.wrapping_sub(1);
        }
    }
}

// ---------------------------------------------------------------------------
// Evaluation: the reference semantics
// ---------------------------------------------------------------------------

/// How a block finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// Ran to its end.
    Next,
    /// Hit `break`.
    Break,
    /// Hit `continue`.
    Continue,
}

/// The tree-walking interpreter: the state of one evaluation.
struct Machine<'a> {
    /// The input.
    input: &'a Input,
    /// Values of float variables and elements, by index.
    floats: Vec<f64>,
    /// Values of integer variables, by index.
    ints: Vec<usize>,
    /// Contents of local buffers, by index.
    bufs: Vec<Vec<f64>>,
    /// The margin so far.
    margin: f64,
}

impl<'a> Machine<'a> {
    /// A machine for `program` at `input`.
    fn new(program: &Program, input: &'a Input) -> Machine<'a> {
        let count = program.vars.len();
        Machine {
            input,
            floats: vec![0.0; count],
            ints: vec![0; count],
            bufs: vec![Vec::new(); count],
            margin: f64::INFINITY,
        }
    }

    /// Lowers the margin to `d` if smaller.
    fn near(&mut self, d: f64) {
        self.margin = self.margin.min(d);
    }

    /// Element `i` of `b` (panics out of bounds, as Rust would).
    fn read(&self, b: Buf, i: usize) -> f64 {
        match b {
            Buf::Xs => self.input.xs[i],
            Buf::Local(v) => self.bufs[v][i],
        }
    }

    /// The length of `b`.
    fn len(&self, b: Buf) -> usize {
        match b {
            Buf::Xs => self.input.xs.len(),
            Buf::Local(v) => self.bufs[v].len(),
        }
    }

    /// Runs a block.
    fn block(&mut self, block: &[Stmt]) -> Flow {
        for s in block {
            let flow = self.stmt(s);
            if flow != Flow::Next {
                return flow;
            }
        }
        Flow::Next
    }

    /// Runs a statement.
    fn stmt(&mut self, s: &Stmt) -> Flow {
        match s {
            Stmt::Let(v, e) => self.floats[*v] = self.expr(e),
            Stmt::Assign(v, op, e) => {
                let value = self.expr(e);
                self.floats[*v] = assign(*op, self.floats[*v], value);
            }
            Stmt::Store(v, i, op, e) => {
                let value = self.expr(e);
                let i = self.int(i);
                let slot = &mut self.bufs[*v][i];
                *slot = assign(*op, *slot, value);
            }
            Stmt::Buffer(v, init) => {
                self.bufs[*v] = match init {
                    Init::Fill(e) => vec![self.expr(e); self.input.xs.len()],
                    Init::Copy => self.input.xs.clone(),
                    Init::List(es) => {
                        let mut out = Vec::with_capacity(es.len());
                        for e in es {
                            out.push(self.expr(e));
                        }
                        out
                    }
                };
            }
            Stmt::If(c, a, b) => {
                return if self.cond(c) {
                    self.block(a)
                } else {
                    self.block(b)
                };
            }
            Stmt::Exit(c, exit) => {
                if self.cond(c) {
                    return match exit {
                        Exit::Break => Flow::Break,
                        Exit::Continue => Flow::Continue,
                    };
                }
            }
            Stmt::For(header, body) => match header {
                Loop::Range(i, end) => {
                    for j in 0..self.int(end) {
                        self.ints[*i] = j;
                        if self.block(body) == Flow::Break {
                            break;
                        }
                    }
                }
                Loop::Iter(b, e) => {
                    for j in 0..self.len(*b) {
                        self.floats[*e] = self.read(*b, j);
                        if self.block(body) == Flow::Break {
                            break;
                        }
                    }
                }
                Loop::Enumerate(b, i, e) => {
                    for j in 0..self.len(*b) {
                        self.ints[*i] = j;
                        self.floats[*e] = self.read(*b, j);
                        if self.block(body) == Flow::Break {
                            break;
                        }
                    }
                }
                Loop::Zip(b, c, e, f) => {
                    for j in 0..self.len(*b).min(self.len(*c)) {
                        self.floats[*e] = self.read(*b, j);
                        self.floats[*f] = self.read(*c, j);
                        if self.block(body) == Flow::Break {
                            break;
                        }
                    }
                }
            },
            Stmt::While(k, bound, body) => {
                self.ints[*k] = 0;
                while self.ints[*k] < self.int(bound) {
                    self.ints[*k] += 1;
                    if self.block(body) == Flow::Break {
                        break;
                    }
                }
            }
        }
        Flow::Next
    }

    /// The value of an integer expression.
    fn int(&self, e: &IntExpr) -> usize {
        match e {
            IntExpr::Var(v) => self.ints[*v],
            IntExpr::N => self.input.n,
            IntExpr::Len(b) => self.len(*b),
            IntExpr::Lit(c) => *c,
            IntExpr::Add(a, b) => self.int(a) + self.int(b),
            IntExpr::Sub(a, b) => self.int(a) - self.int(b),
            IntExpr::Rem(a, b) => self.int(a) % self.int(b),
        }
    }

    /// The value of a condition, short-circuiting as Rust does.
    fn cond(&mut self, c: &Cond) -> bool {
        match c {
            Cond::Less(a, b) | Cond::Greater(a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                self.near((x - y).abs());
                if matches!(c, Cond::Less(..)) {
                    x < y
                } else {
                    x > y
                }
            }
            Cond::Int(op, a, b) => {
                let (x, y) = (self.int(a), self.int(b));
                match op {
                    IntCmp::Eq => x == y,
                    IntCmp::Lt => x < y,
                    IntCmp::Gt => x > y,
                }
            }
            Cond::And(a, b) => self.cond(a) && self.cond(b),
            Cond::Or(a, b) => self.cond(a) || self.cond(b),
        }
    }

    /// The value of a float expression, operand by operand, left first.
    fn expr(&mut self, e: &Expr) -> f64 {
        match e {
            Expr::Const(c) => *c,
            Expr::Param(i) => self.input.scalars[*i],
            Expr::Var(v) => self.floats[*v],
            Expr::Index(b, i) => self.read(*b, self.int(i)),
            Expr::Cast(i) => self.int(i) as f64,
            Expr::Reduce(b, r) => {
                let items: Vec<f64> = (0..self.len(*b)).map(|j| self.read(*b, j)).collect();
                match r {
                    Reduction::Sum => items.iter().sum::<f64>(),
                    Reduction::Product => items.iter().product::<f64>(),
                }
            }
            Expr::Neg(a) => -self.expr(a),
            Expr::Bin(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                match op {
                    Bin::Add => x + y,
                    Bin::Sub => x - y,
                    Bin::Mul => x * y,
                    Bin::Div => x / (1.0 + y * y),
                }
            }
            Expr::Unary(f, a) => {
                let x = self.expr(a);
                match f {
                    Unary::Sin => x.sin(),
                    Unary::Cos => x.cos(),
                    Unary::Tanh => x.tanh(),
                    Unary::Abs => {
                        self.near(x.abs());
                        x.abs()
                    }
                    Unary::Square => x.powi(2),
                    Unary::Cube => x.powi(3),
                    Unary::ExpTanh => x.tanh().exp(),
                    Unary::SqrtSq => (1.0 + x * x).sqrt(),
                    Unary::LnSq => (1.0 + x * x).ln(),
                }
            }
            Expr::Binary(f, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                match f {
                    Binary::Max => {
                        self.near((x - y).abs());
                        x.max(y)
                    }
                    Binary::Min => {
                        self.near((x - y).abs());
                        x.min(y)
                    }
                    Binary::Hypot => {
                        let r = x.hypot(y);
                        self.near(r);
                        r
                    }
                    Binary::Atan2 => {
                        // Not smooth at the origin, and it jumps by 2π
                        // across its cut, `x == 0` with `y < 0`.
                        self.near(if y < 0.0 { x.abs() } else { x.hypot(y) });
                        x.atan2(y)
                    }
                }
            }
            Expr::MulAdd(a, b, c) => {
                let (x, y, z) = (self.expr(a), self.expr(b), self.expr(c));
                x.mul_add(y, z)
            }
            Expr::If(c, a, b) => {
                if self.cond(c) {
                    self.expr(a)
                } else {
                    self.expr(b)
                }
            }
        }
    }
}

/// `x op= value`, as Rust computes it on `f64`.
fn assign(op: Op, x: f64, value: f64) -> f64 {
    match op {
        Op::Set => value,
        Op::Add => x + value,
        Op::Sub => x - value,
        Op::Mul => x * value,
    }
}

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

/// Precedence of `if` expressions: parenthesized anywhere but at the top.
const P_IF: u8 = 0;
/// Precedence of comparisons (operands print at `P_ADD` and above).
const P_CMP: u8 = 3;
/// Precedence of `+` and `-`.
const P_ADD: u8 = 4;
/// Precedence of `*`, `/` and `%`.
const P_MUL: u8 = 5;
/// Precedence of `as`.
const P_CAST: u8 = 6;
/// Precedence of unary `-` and `*`.
const P_NEG: u8 = 7;
/// Precedence of method calls and indexing.
const P_POST: u8 = 8;
/// Precedence of leaves.
const P_ATOM: u8 = 9;

/// Prints a program as Rust source.
struct Printer<'p> {
    /// The program.
    program: &'p Program,
    /// The printed name of each variable (`_`-prefixed when rustc would
    /// warn about it).
    names: Vec<String>,
    /// Variables printed `let mut` (float variables assigned, buffers
    /// written).
    mutable: Set,
    /// The source so far.
    out: String,
    /// Print the next literal with an `_f64` suffix (an all-literal method
    /// receiver or buffer initializer).
    suffix: bool,
}

impl<'p> Printer<'p> {
    /// A printer for `program`, with its names worked out.
    fn new(program: &'p Program) -> Printer<'p> {
        let read = program.reads();
        let mut body = program.body.clone();
        let mut live = Set::new();
        expr_reads(&program.tail, &mut live);
        let mut liveness = Liveness::new(false);
        liveness.block(&mut body, live, None, true);
        let mut mutable = Set::new();
        retain_deep(&mut body, &mut |s| {
            if let Stmt::Assign(v, ..) | Stmt::Store(v, ..) = s {
                mutable.insert(*v);
            }
            true
        });
        let names = program
            .vars
            .iter()
            .enumerate()
            .map(|(v, kind)| {
                let prefix = match kind {
                    Kind::Float => "x",
                    Kind::Elem { .. } => "e",
                    Kind::Index => "i",
                    Kind::Counter => "k",
                    Kind::Buffer { .. } => "v",
                };
                let quiet = !read.contains(&v) || liveness.dead_lets.contains(&v);
                format!("{}{prefix}{v}", if quiet { "_" } else { "" })
            })
            .collect();
        Printer {
            program,
            names,
            mutable,
            out: String::new(),
            suffix: false,
        }
    }

    /// The whole function.
    fn function(mut self, name: &str) -> String {
        let program = self.program;
        let _ = writeln!(
            self.out,
            "fn {name}(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {{"
        );
        let used = Uses::of(program);
        for (i, used) in used.params.iter().enumerate() {
            if !used {
                let _ = writeln!(self.out, "    let _ = a{i};");
            }
        }
        if !used.xs {
            self.out.push_str("    let _ = xs.len();\n");
        }
        if !used.n {
            self.out.push_str("    let _ = n;\n");
        }
        self.block(&program.body, 1);
        self.out.push_str("    ");
        self.expr(&program.tail, 0, false);
        self.out.push_str("\n}\n");
        self.out
    }

    /// Indentation for `depth`.
    fn pad(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    /// Prints a block's statements at `depth`.
    fn block(&mut self, block: &[Stmt], depth: usize) {
        for s in block {
            self.pad(depth);
            self.stmt(s, depth);
        }
    }

    /// The name of `v`.
    fn name(&self, v: Var) -> &str {
        &self.names[v]
    }

    /// `mut ` if `v` is assigned.
    fn mutability(&self, v: Var) -> &'static str {
        if self.mutable.contains(&v) {
            "mut "
        } else {
            ""
        }
    }

    /// Prints a statement (after its indentation), with its newline.
    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::Let(v, e) => {
                let head = format!("let {}{} = ", self.mutability(*v), self.name(*v));
                self.out.push_str(&head);
                self.value(e);
                self.out.push_str(";\n");
            }
            Stmt::Assign(v, op, e) => {
                let head = format!("{} {} ", self.name(*v), op_str(*op));
                self.out.push_str(&head);
                if *op == Op::Set {
                    // The macro's `_vjp` makes `x = 0.5;` a new binding of
                    // type `{float}` (reported): suffixed, it is `f64`.
                    self.value(e);
                } else {
                    self.expr(e, 0, false);
                }
                self.out.push_str(";\n");
            }
            Stmt::Store(v, i, op, e) => {
                let name = self.name(*v).to_string();
                self.out.push_str(&name);
                self.out.push('[');
                self.int(i, 0);
                let _ = write!(self.out, "] {} ", op_str(*op));
                self.expr(e, 0, false);
                self.out.push_str(";\n");
            }
            Stmt::Buffer(v, init) => {
                let head = format!("let {}{} = ", self.mutability(*v), self.name(*v));
                self.out.push_str(&head);
                match init {
                    Init::Fill(e) => {
                        self.out.push_str("vec![");
                        self.suffix = !typed(e);
                        self.expr(e, 0, false);
                        self.out.push_str("; xs.len()]");
                    }
                    Init::Copy => self.out.push_str("xs.to_vec()"),
                    Init::List(es) => {
                        self.out.push_str("vec![");
                        self.suffix = !es.iter().any(typed);
                        for (j, e) in es.iter().enumerate() {
                            if j > 0 {
                                self.out.push_str(", ");
                            }
                            self.expr(e, 0, false);
                        }
                        self.out.push(']');
                    }
                }
                self.out.push_str(";\n");
            }
            Stmt::If(c, then, otherwise) => {
                self.out.push_str("if ");
                self.cond(c, 0);
                self.out.push_str(" {\n");
                self.block(then, depth + 1);
                self.pad(depth);
                self.out.push('}');
                match otherwise.as_slice() {
                    [] => self.out.push('\n'),
                    [nested @ Stmt::If(..)] => {
                        self.out.push_str(" else ");
                        self.stmt(nested, depth);
                    }
                    _ => {
                        self.out.push_str(" else {\n");
                        self.block(otherwise, depth + 1);
                        self.pad(depth);
                        self.out.push_str("}\n");
                    }
                }
            }
            Stmt::Exit(c, exit) => {
                self.out.push_str("if ");
                self.cond(c, 0);
                self.out.push_str(" {\n");
                self.pad(depth + 1);
                self.out.push_str(match exit {
                    Exit::Break => "break;\n",
                    Exit::Continue => "continue;\n",
                });
                self.pad(depth);
                self.out.push_str("}\n");
            }
            Stmt::For(header, body) => {
                self.out.push_str("for ");
                match header {
                    Loop::Range(i, end) => {
                        let head = format!("{} in 0..", self.name(*i));
                        self.out.push_str(&head);
                        self.int(end, P_ADD + 1);
                    }
                    Loop::Iter(b, e) => {
                        let head = format!("{} in {}.iter()", self.pattern(*e), self.buf_name(*b));
                        self.out.push_str(&head);
                    }
                    Loop::Enumerate(b, i, e) => {
                        let head = format!(
                            "({}, {}) in {}.iter().enumerate()",
                            self.name(*i),
                            self.pattern(*e),
                            self.buf_name(*b)
                        );
                        self.out.push_str(&head);
                    }
                    Loop::Zip(b, c, e, f) => {
                        let head = format!(
                            "({}, {}) in {}.iter().zip({}.iter())",
                            self.pattern(*e),
                            self.pattern(*f),
                            self.buf_name(*b),
                            self.buf_name(*c)
                        );
                        self.out.push_str(&head);
                    }
                }
                self.out.push_str(" {\n");
                self.block(body, depth + 1);
                self.pad(depth);
                self.out.push_str("}\n");
            }
            Stmt::While(k, bound, body) => {
                let k = self.name(*k).to_string();
                let _ = writeln!(self.out, "let mut {k} = 0;");
                self.pad(depth);
                let _ = write!(self.out, "while {k} < ");
                self.int(bound, P_CMP + 1);
                self.out.push_str(" {\n");
                self.pad(depth + 1);
                let _ = writeln!(self.out, "{k} += 1;");
                self.block(body, depth + 1);
                self.pad(depth);
                self.out.push_str("}\n");
            }
        }
    }

    /// The pattern binding a loop element: `&e` by value, `e` by reference.
    fn pattern(&self, e: Var) -> String {
        match self.program.vars[e] {
            Kind::Elem { by_ref: true, .. } => self.name(e).to_string(),
            _ => format!("&{}", self.name(e)),
        }
    }

    /// `xs` or a local buffer's name.
    fn buf_name(&self, b: Buf) -> String {
        match b {
            Buf::Xs => "xs".to_string(),
            Buf::Local(v) => self.name(v).to_string(),
        }
    }

    /// The precedence `e` prints at (`bare`: a bare reference is allowed).
    fn prec(&self, e: &Expr, bare: bool) -> u8 {
        match e {
            Expr::Const(c) if c.is_sign_negative() => P_NEG,
            Expr::Var(v) => match self.program.vars[*v] {
                Kind::Elem {
                    by_ref: true,
                    bare: b,
                } if !(b && bare) => P_NEG,
                _ => P_ATOM,
            },
            Expr::Const(_) | Expr::Param(_) => P_ATOM,
            Expr::Index(..)
            | Expr::Reduce(..)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::MulAdd(..) => P_POST,
            Expr::Cast(_) => P_CAST,
            Expr::Neg(_) => P_NEG,
            Expr::Bin(Bin::Add | Bin::Sub, ..) => P_ADD,
            Expr::Bin(Bin::Mul | Bin::Div, ..) => P_MUL,
            Expr::If(..) => P_IF,
        }
    }

    /// Prints `e` where precedence `ctx` is needed, parenthesized if it
    /// binds less tightly; `bare`: where `&f64` works as well as `f64`.
    fn expr(&mut self, e: &Expr, ctx: u8, bare: bool) {
        if self.prec(e, bare) < ctx {
            self.out.push('(');
            self.expr(e, 0, bare);
            self.out.push(')');
            return;
        }
        match e {
            Expr::Const(c) => self.literal(*c),
            Expr::Param(i) => {
                let _ = write!(self.out, "a{i}");
            }
            Expr::Var(v) => {
                if let Kind::Elem {
                    by_ref: true,
                    bare: b,
                } = self.program.vars[*v]
                    && !(b && bare)
                {
                    self.out.push('*');
                }
                let name = self.name(*v).to_string();
                self.out.push_str(&name);
            }
            Expr::Index(b, i) => {
                let name = self.buf_name(*b);
                self.out.push_str(&name);
                self.out.push('[');
                self.int(i, 0);
                self.out.push(']');
            }
            Expr::Cast(i) => {
                self.int(i, P_POST);
                self.out.push_str(" as f64");
            }
            Expr::Reduce(b, r) => {
                let name = self.buf_name(*b);
                let _ = write!(
                    self.out,
                    "{name}.iter().{}::<f64>()",
                    match r {
                        Reduction::Sum => "sum",
                        Reduction::Product => "product",
                    }
                );
            }
            Expr::Neg(a) => {
                self.out.push('-');
                let minus = matches!(&**a, Expr::Neg(_))
                    || matches!(&**a, Expr::Const(c) if c.is_sign_negative());
                if minus {
                    self.out.push('(');
                    self.expr(a, 0, true);
                    self.out.push(')');
                } else {
                    self.expr(a, P_NEG, true);
                }
            }
            Expr::Bin(Bin::Div, a, b) => {
                self.expr(a, P_MUL, true);
                self.out.push_str(" / (");
                self.literal(1.0);
                self.out.push_str(" + ");
                self.expr(b, P_MUL + 1, true);
                self.out.push_str(" * ");
                self.expr(b, P_MUL + 1, true);
                self.out.push(')');
            }
            Expr::Bin(op, a, b) => {
                let p = self.prec(e, true);
                self.expr(a, p, true);
                self.out.push_str(match op {
                    Bin::Add => " + ",
                    Bin::Sub => " - ",
                    _ => " * ",
                });
                self.expr(b, p + 1, true);
            }
            Expr::Unary(f, a) => match f {
                Unary::SqrtSq | Unary::LnSq => {
                    self.suffix = !typed(a);
                    self.out.push('(');
                    self.literal(1.0);
                    self.out.push_str(" + ");
                    self.expr(a, P_MUL + 1, true);
                    self.out.push_str(" * ");
                    self.expr(a, P_MUL + 1, true);
                    self.out.push_str(if *f == Unary::SqrtSq {
                        ").sqrt()"
                    } else {
                        ").ln()"
                    });
                }
                _ => {
                    self.receiver(a);
                    self.out.push_str(match f {
                        Unary::Sin => ".sin()",
                        Unary::Cos => ".cos()",
                        Unary::Tanh => ".tanh()",
                        Unary::Abs => ".abs()",
                        Unary::Square => ".powi(2)",
                        Unary::Cube => ".powi(3)",
                        _ => ".tanh().exp()",
                    });
                }
            },
            Expr::Binary(f, a, b) => {
                self.receiver(a);
                self.out.push_str(match f {
                    Binary::Max => ".max(",
                    Binary::Min => ".min(",
                    Binary::Hypot => ".hypot(",
                    Binary::Atan2 => ".atan2(",
                });
                self.expr(b, 0, false);
                self.out.push(')');
            }
            Expr::MulAdd(a, b, c) => {
                self.receiver(a);
                self.out.push_str(".mul_add(");
                self.expr(b, 0, false);
                self.out.push_str(", ");
                self.expr(c, 0, false);
                self.out.push(')');
            }
            Expr::If(c, a, b) => {
                self.out.push_str("if ");
                self.cond(c, 0);
                self.out.push_str(" { ");
                self.expr(a, 0, false);
                self.out.push_str(" } else { ");
                self.expr(b, 0, false);
                self.out.push_str(" }");
            }
        }
    }

    /// Prints a `let` initializer or an assigned value, its type made known:
    /// an all-literal one
    /// gets an `_f64` suffix on its first literal (on the first branch's,
    /// for an `if`). A `let x: f64 = …` annotation would do for rustc, but
    /// the macro's `_vjp` drops it (reported).
    fn value(&mut self, e: &Expr) {
        match e {
            _ if typed(e) => self.expr(e, 0, false),
            Expr::If(c, a, b) => {
                self.out.push_str("if ");
                self.cond(c, 0);
                self.out.push_str(" { ");
                self.suffix = true;
                self.expr(a, 0, false);
                self.out.push_str(" } else { ");
                self.expr(b, 0, false);
                self.out.push_str(" }");
            }
            _ => {
                self.suffix = true;
                self.expr(e, 0, false);
            }
        }
    }

    /// Prints a method receiver, its first literal suffixed `_f64` if it is
    /// all literals.
    fn receiver(&mut self, a: &Expr) {
        self.suffix = !typed(a);
        self.expr(a, P_POST, true);
    }

    /// Prints a literal (with `_f64` if one is pending).
    fn literal(&mut self, c: f64) {
        let _ = write!(self.out, "{c:?}");
        if self.suffix {
            self.out.push_str("_f64");
            self.suffix = false;
        }
    }

    /// Prints a condition at precedence `ctx` (`||` 1, `&&` 2, comparisons 3).
    fn cond(&mut self, c: &Cond, ctx: u8) {
        let p = match c {
            Cond::Or(..) => 1,
            Cond::And(..) => 2,
            _ => 3,
        };
        if p < ctx {
            self.out.push('(');
            self.cond(c, 0);
            self.out.push(')');
            return;
        }
        match c {
            Cond::Less(a, b) | Cond::Greater(a, b) => {
                // `x as f64 < y` would parse `f64<` as generic arguments:
                // such a left operand goes to the right (`y > x as f64`,
                // the same test), or if both end so, in parentheses (which
                // the macro's `_vjp` drops: reported).
                let less = matches!(c, Cond::Less(..));
                let (a, b, less) = if ends_with_cast(a) && !ends_with_cast(b) {
                    (b, a, !less)
                } else {
                    (a, b, less)
                };
                if ends_with_cast(a) {
                    self.out.push('(');
                    self.expr(a, 0, false);
                    self.out.push(')');
                } else {
                    self.expr(a, P_CMP + 1, false);
                }
                self.out.push_str(if less { " < " } else { " > " });
                self.expr(b, P_CMP + 1, false);
            }
            Cond::Int(op, a, b) => {
                self.int(a, P_CMP + 1);
                self.out.push_str(match op {
                    IntCmp::Eq => " == ",
                    IntCmp::Lt => " < ",
                    IntCmp::Gt => " > ",
                });
                self.int(b, P_CMP + 1);
            }
            Cond::And(a, b) => {
                self.cond(a, 2);
                self.out.push_str(" && ");
                self.cond(b, 3);
            }
            Cond::Or(a, b) => {
                self.cond(a, 1);
                self.out.push_str(" || ");
                self.cond(b, 2);
            }
        }
    }

    /// Prints an integer expression at precedence `ctx`.
    fn int(&mut self, e: &IntExpr, ctx: u8) {
        let p = match e {
            IntExpr::Add(..) | IntExpr::Sub(..) => P_ADD,
            IntExpr::Rem(..) => P_MUL,
            IntExpr::Len(_) => P_POST,
            _ => P_ATOM,
        };
        if p < ctx {
            self.out.push('(');
            self.int(e, 0);
            self.out.push(')');
            return;
        }
        match e {
            IntExpr::Var(v) => {
                let name = self.name(*v).to_string();
                self.out.push_str(&name);
            }
            IntExpr::N => self.out.push('n'),
            IntExpr::Len(b) => {
                let name = self.buf_name(*b);
                let _ = write!(self.out, "{name}.len()");
            }
            IntExpr::Lit(c) => {
                let _ = write!(self.out, "{c}");
            }
            IntExpr::Add(a, b) | IntExpr::Sub(a, b) | IntExpr::Rem(a, b) => {
                self.int(a, p);
                self.out.push_str(match e {
                    IntExpr::Add(..) => " + ",
                    IntExpr::Sub(..) => " - ",
                    _ => " % ",
                });
                self.int(b, p + 1);
            }
        }
    }
}

/// The assignment operator of `op`.
fn op_str(op: Op) -> &'static str {
    match op {
        Op::Set => "=",
        Op::Add => "+=",
        Op::Sub => "-=",
        Op::Mul => "*=",
    }
}

/// Which parameters a program uses (the others get `let _ = …;`).
struct Uses {
    /// `a0`, `a1`, `a2`.
    params: [bool; 3],
    /// `xs`.
    xs: bool,
    /// `n`.
    n: bool,
}

impl Uses {
    /// The parameters `program` uses.
    fn of(program: &Program) -> Uses {
        let mut uses = Uses {
            params: [false; 3],
            xs: false,
            n: false,
        };
        let mut copy = program.clone();
        copy.walk(&mut uses);
        retain_deep(&mut copy.body, &mut |s| {
            if let Stmt::Buffer(_, Init::Copy | Init::Fill(_)) = s {
                uses.xs = true;
            }
            true
        });
        uses
    }
}

impl Visit for Uses {
    fn expr(&mut self, e: &mut Expr) {
        if let Expr::Param(i) = e {
            self.params[*i] = true;
        }
    }

    fn int(&mut self, e: &mut IntExpr) {
        if *e == IntExpr::N {
            self.n = true;
        }
    }

    fn buf(&mut self, b: &mut Buf) {
        if *b == Buf::Xs {
            self.xs = true;
        }
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// The inputs every test evaluates at.
    fn inputs() -> Vec<Input> {
        (0..20).map(Input::generate).collect()
    }

    #[test]
    fn generation_is_deterministic() {
        let config = Config::default();
        let inputs = inputs();
        let mut texts = Vec::new();
        for seed in 0..50 {
            let (a, b) = (
                Program::generate(seed, &config),
                Program::generate(seed, &config),
            );
            let text = a.to_rust("f");
            assert_eq!(text, b.to_rust("f"), "seed {seed}");
            for input in &inputs {
                let (x, y) = (a.eval(input), b.eval(input));
                assert_eq!(x.value.to_bits(), y.value.to_bits(), "seed {seed}");
                assert_eq!(x.margin.to_bits(), y.margin.to_bits(), "seed {seed}");
            }
            texts.push(text);
        }
        texts.sort();
        texts.dedup();
        assert!(
            texts.len() >= 45,
            "only {} distinct programs of 50",
            texts.len()
        );
        assert_eq!(
            format!("{:?}", Input::generate(7)),
            format!("{:?}", Input::generate(7))
        );
    }

    #[test]
    fn inputs_cover_their_ranges() {
        let mut lens = [false; 6];
        let mut ns = [false; 5];
        for seed in 0..200 {
            let input = Input::generate(seed);
            let all = input.scalars.iter().chain(&input.xs);
            assert!(all.clone().all(|x| (-1.0..=1.0).contains(x)), "{input:?}");
            assert!(
                (3..=5).contains(&input.xs.len()) && input.n <= 4,
                "{input:?}"
            );
            lens[input.xs.len()] = true;
            ns[input.n] = true;
        }
        assert_eq!(lens, [false, false, false, true, true, true]);
        assert_eq!(ns, [true; 5]);
    }

    #[test]
    fn a_thousand_programs_generate_quickly() {
        let config = Config::default();
        let start = Instant::now();
        let size: usize = (0..1000)
            .map(|seed| Program::generate(seed, &config).size())
            .sum();
        let elapsed = start.elapsed();
        assert!(size > 1000 * 20, "programs are too small: {size}");
        assert!(
            elapsed.as_secs_f64() < 1.0,
            "1000 programs took {elapsed:?}"
        );
    }

    #[test]
    fn programs_are_well_formed_and_finite_everywhere() {
        let config = Config::default();
        let inputs = inputs();
        for seed in 0..300 {
            let p = Program::generate(seed, &config);
            assert!(p.valid() && p.bounded(), "seed {seed}:\n{}", p.to_rust("f"));
            for input in &inputs {
                let e = p.eval(input);
                assert!(
                    e.value.is_finite() && e.value.abs() <= LIMIT,
                    "seed {seed}, {input:?}: {e:?}"
                );
                assert!(e.margin >= 0.0, "seed {seed}: {e:?}");
            }
        }
    }

    #[test]
    fn other_shapes_generate_too() {
        let inputs = inputs();
        let shapes = [
            Config {
                max_stmts: 0,
                max_depth: 0,
                ..Config::default()
            },
            Config {
                max_stmts: 1,
                max_depth: 1,
                ..Config::default()
            },
            Config {
                max_stmts: 12,
                max_depth: 4,
                ..Config::default()
            },
            Config {
                loops: false,
                branches: false,
                buffers: false,
                ..Config::default()
            },
        ];
        for config in &shapes {
            for seed in 0..100 {
                let p = Program::generate(seed, config);
                assert!(p.valid() && p.bounded(), "{config:?} seed {seed}");
                assert!(p.eval(&inputs[0]).value.is_finite());
            }
        }
    }

    #[test]
    fn features_can_be_switched_off() {
        let no_loops = Config {
            loops: false,
            ..Config::default()
        };
        let no_branches = Config {
            branches: false,
            ..Config::default()
        };
        let no_buffers = Config {
            buffers: false,
            ..Config::default()
        };
        for seed in 0..200 {
            let text = Program::generate(seed, &no_loops).to_rust("f");
            assert!(
                !text.contains("for ") && !text.contains("while ") && !text.contains("break"),
                "{text}"
            );
            let text = Program::generate(seed, &no_branches).to_rust("f");
            assert!(!text.contains("if "), "{text}");
            let text = Program::generate(seed, &no_buffers).to_rust("f");
            let (_, body) = text.split_once('\n').unwrap_or_default();
            let body = body.replace("let _ = xs.len();", "");
            assert!(
                !body.contains('[') && !body.contains("xs") && !body.contains("vec!"),
                "{text}"
            );
        }
    }

    /// Whether a program's source shows a construct.
    type Shows = fn(&str) -> bool;

    /// Each construct, and whether a program's source shows it.
    const CONSTRUCTS: &[(&str, Shows)] = &[
        ("for i in 0..n", |s| s.contains(" in 0..n {")),
        ("for i in 0..len", |s| s.contains(" in 0..xs.len() {")),
        ("for over elements", |s| s.contains(".iter() {")),
        ("enumerate", |s| s.contains(".iter().enumerate() {")),
        ("zip", |s| s.contains(".zip(")),
        ("while", |s| s.contains("while ")),
        ("nested loops", |s| {
            s.lines().any(|l| {
                ["        for ", "        while "]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
        }),
        ("break", |s| s.contains("break;")),
        ("continue", |s| s.contains("continue;")),
        ("if statement", |s| {
            s.lines().any(|l| {
                l.trim_start().starts_with("if ") && !l.contains("break") && !l.contains("continue")
            })
        }),
        ("else", |s| {
            s.contains("} else {\n") || s.contains("} else if ")
        }),
        ("if expression", |s| s.contains("= if ")),
        ("&& or ||", |s| s.contains(" && ") || s.contains(" || ")),
        ("integer condition", |s| {
            s.contains(" % 2 == ") || s.contains("n > ") || s.contains("n < ")
        }),
        ("vec![e; len]", |s| s.contains("; xs.len()];")),
        ("to_vec", |s| s.contains("xs.to_vec();")),
        ("vec![a, b, c]", |s| {
            s.lines()
                .any(|l| l.contains("vec![") && !l.contains("; xs.len()]"))
        }),
        ("buffer write", |s| {
            ["] = ", "] += ", "] -= ", "] *= "]
                .iter()
                .any(|p| s.contains(p))
        }),
        ("sum or product", |s| {
            s.contains(".iter().sum::<f64>()") || s.contains(".iter().product::<f64>()")
        }),
        ("reassignment", |s| {
            s.lines()
                .any(|l| l.trim_start().starts_with('x') && l.contains(" = "))
        }),
        ("+=", |s| s.contains(" += ")),
        ("-=", |s| s.contains(" -= ")),
        ("*=", |s| s.contains(" *= ")),
        ("as f64", |s| s.contains(" as f64")),
        ("element by reference", |s| s.contains("*e")),
        ("sin/cos/tanh", |s| {
            s.contains(".sin()") || s.contains(".cos()") || s.contains(".tanh()")
        }),
        ("exp of tanh", |s| s.contains(".tanh().exp()")),
        ("sqrt/ln of 1 + e * e", |s| {
            s.contains(").sqrt()") || s.contains(").ln()")
        }),
        ("safe division", |s| s.contains(" / (1.0 + ")),
        ("powi", |s| s.contains(".powi(")),
        ("abs", |s| s.contains(".abs()")),
        ("max/min", |s| s.contains(".max(") || s.contains(".min(")),
        ("hypot/atan2", |s| {
            s.contains(".hypot(") || s.contains(".atan2(")
        }),
        ("mul_add", |s| s.contains(".mul_add(")),
    ];

    #[test]
    fn every_construct_appears_in_at_least_a_tenth_of_programs() {
        let config = Config::default();
        let texts: Vec<String> = (0..500)
            .map(|seed| Program::generate(seed, &config).to_rust("f"))
            .collect();
        let mut report = String::new();
        let mut rare = Vec::new();
        for (name, shows) in CONSTRUCTS {
            let count = texts.iter().filter(|t| shows(t)).count();
            let _ = writeln!(report, "{name:>22}: {:5.1}%", count as f64 / 5.0);
            if count < 50 {
                rare.push(*name);
            }
        }
        println!("{report}");
        assert!(rare.is_empty(), "rarer than 10%: {rare:?}\n{report}");
    }

    #[test]
    fn a_few_seeds_use_loops_branches_and_buffer_writes_together() {
        let config = Config::default();
        let rich: Vec<u64> = (0..200)
            .filter(|&seed| {
                let text = Program::generate(seed, &config).to_rust("f");
                let has = |name: &str| {
                    CONSTRUCTS
                        .iter()
                        .any(|(n, shows)| *n == name && shows(&text))
                };
                has("for i in 0..len") && has("if statement") && has("buffer write") && has("while")
            })
            .collect();
        assert!(rich.len() >= 5, "{rich:?}");
        // Pinned: the generator is deterministic, so these stay rich until it changes.
        for seed in [rich[0], rich[1]] {
            let text = Program::generate(seed, &config).to_rust("f");
            assert!(
                text.contains("for ") && text.contains("if ") && text.contains("] "),
                "{text}"
            );
        }
    }

    #[test]
    fn shrink_candidates_are_smaller_well_formed_and_finite() {
        let config = Config::default();
        let inputs = inputs();
        for seed in 0..40 {
            let p = Program::generate(seed, &config);
            let candidates = p.shrink();
            if p.size() > 3 {
                assert!(
                    !candidates.is_empty(),
                    "seed {seed}: no candidate for\n{}",
                    p.to_rust("f")
                );
            }
            for c in &candidates {
                assert!(c.size() < p.size(), "seed {seed}");
                assert!(c.valid() && c.bounded(), "seed {seed}:\n{}", c.to_rust("f"));
                for input in &inputs[..4] {
                    assert!(
                        c.eval(input).value.is_finite(),
                        "seed {seed}:\n{}",
                        c.to_rust("f")
                    );
                }
            }
        }
    }

    #[test]
    fn greedy_shrinking_keeps_a_property_and_ends_small() {
        // Shrink every program with a loop to a smallest one still having
        // a loop: the way a failing program is reduced.
        let config = Config::default();
        let mut shrunk = 0;
        for seed in 0..30 {
            let mut p = Program::generate(seed, &config);
            let has_loop = |p: &Program| p.to_rust("f").contains("for ");
            if !has_loop(&p) {
                continue;
            }
            while let Some(smaller) = p.shrink().into_iter().find(has_loop) {
                assert!(smaller.size() < p.size());
                p = smaller;
            }
            assert!(
                p.size() <= 12,
                "seed {seed} stuck at size {}:\n{}",
                p.size(),
                p.to_rust("f")
            );
            shrunk += 1;
        }
        assert!(shrunk >= 10);
    }

    /// The hand-written program of the evaluator and printer tests:
    ///
    /// ```text
    /// fn f(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
    ///     let mut v3 = vec![0.0_f64; xs.len()];
    ///     let mut x0 = 0.0_f64;
    ///     for (i1, &e2) in xs.iter().enumerate() { … }
    ///     …
    /// }
    /// ```
    fn handwritten() -> Program {
        let var = |v| Box::new(Expr::Var(v));
        let vars = vec![
            Kind::Float,
            Kind::Index,
            Kind::Elem {
                by_ref: false,
                bare: false,
            },
            Kind::Buffer { short: false },
            Kind::Counter,
            Kind::Float,
            Kind::Float,
            Kind::Elem {
                by_ref: true,
                bare: false,
            },
        ];
        let body = vec![
            Stmt::Buffer(3, Init::Fill(Expr::Const(0.0))),
            Stmt::Let(0, Expr::Const(0.0)),
            Stmt::For(
                Loop::Enumerate(Buf::Xs, 1, 2),
                vec![
                    Stmt::Exit(
                        Cond::Int(
                            IntCmp::Eq,
                            IntExpr::Rem(Box::new(IntExpr::Var(1)), Box::new(IntExpr::Lit(2))),
                            IntExpr::Lit(1),
                        ),
                        Exit::Continue,
                    ),
                    Stmt::Assign(
                        0,
                        Op::Add,
                        Expr::Bin(Bin::Mul, var(2), Box::new(Expr::Param(0))),
                    ),
                    Stmt::Store(3, IntExpr::Var(1), Op::Set, Expr::Unary(Unary::Abs, var(2))),
                ],
            ),
            Stmt::While(
                4,
                IntExpr::N,
                vec![
                    Stmt::Assign(
                        0,
                        Op::Set,
                        Expr::Unary(
                            Unary::Tanh,
                            Box::new(Expr::Bin(Bin::Mul, var(0), Box::new(Expr::Param(1)))),
                        ),
                    ),
                    Stmt::Exit(Cond::Greater(Expr::Var(0), Expr::Const(0.5)), Exit::Break),
                ],
            ),
            Stmt::For(
                Loop::Iter(Buf::Local(3), 7),
                vec![Stmt::Assign(
                    0,
                    Op::Sub,
                    Expr::Bin(Bin::Div, var(7), Box::new(Expr::Cast(IntExpr::N))),
                )],
            ),
            Stmt::Let(5, Expr::Reduce(Buf::Local(3), Reduction::Sum)),
            Stmt::Let(
                6,
                Expr::If(
                    Box::new(Cond::Less(Expr::Param(2), Expr::Var(5))),
                    Box::new(Expr::MulAdd(Box::new(Expr::Param(2)), var(5), var(0))),
                    Box::new(Expr::Binary(Binary::Max, var(0), Box::new(Expr::Param(1)))),
                ),
            ),
        ];
        let tail = Expr::Bin(
            Bin::Add,
            var(6),
            Box::new(Expr::Bin(Bin::Mul, var(5), Box::new(Expr::Const(-0.75)))),
        );
        Program { vars, body, tail }
    }

    /// `handwritten()` in Rust: the semantics `eval` must reproduce.
    fn handwritten_in_rust(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
        let mut v3 = vec![0.0_f64; xs.len()];
        let mut x0 = 0.0_f64;
        for (i1, &e2) in xs.iter().enumerate() {
            if i1 % 2 == 1 {
                continue;
            }
            x0 += e2 * a0;
            v3[i1] = e2.abs();
        }
        let mut k4 = 0;
        while k4 < n {
            k4 += 1;
            x0 = (x0 * a1).tanh();
            if x0 > 0.5 {
                break;
            }
        }
        for e7 in v3.iter() {
            x0 -= *e7 / (1.0 + n as f64 * n as f64);
        }
        let x5 = v3.iter().sum::<f64>();
        let x6 = if a2 < x5 {
            a2.mul_add(x5, x0)
        } else {
            x0.max(a1)
        };
        x6 + x5 * -0.75
    }

    #[test]
    fn the_evaluator_computes_what_rust_computes() {
        let p = handwritten();
        assert!(p.valid() && p.bounded());
        for seed in 0..200 {
            let input = Input::generate(seed);
            let [a0, a1, a2] = input.scalars;
            let expected = handwritten_in_rust(a0, a1, a2, &input.xs, input.n);
            let e = p.eval(&input);
            assert_eq!(e.value.to_bits(), expected.to_bits(), "{input:?}");
            // Margins: |e2| for each even index, |x0 - 0.5| per trip, |a2 - x5|,
            // and |x0 - a1| when `max` is evaluated.
            assert!(e.margin <= (a2 - v3_sum(&input)).abs(), "{input:?}");
        }
    }

    /// `x5` of `handwritten()`: the sum of `|xs[i]|` over even `i`.
    fn v3_sum(input: &Input) -> f64 {
        let mut v3 = vec![0.0_f64; input.xs.len()];
        for (i, x) in input.xs.iter().enumerate().step_by(2) {
            v3[i] = x.abs();
        }
        v3.iter().sum::<f64>()
    }

    #[test]
    fn the_printer_writes_plain_rust() {
        let expected = "\
fn f(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
    let mut v3 = vec![0.0_f64; xs.len()];
    let mut x0 = 0.0_f64;
    for (i1, &e2) in xs.iter().enumerate() {
        if i1 % 2 == 1 {
            continue;
        }
        x0 += e2 * a0;
        v3[i1] = e2.abs();
    }
    let mut k4 = 0;
    while k4 < n {
        k4 += 1;
        x0 = (x0 * a1).tanh();
        if x0 > 0.5 {
            break;
        }
    }
    for e7 in v3.iter() {
        x0 -= *e7 / (1.0 + n as f64 * n as f64);
    }
    let x5 = v3.iter().sum::<f64>();
    let x6 = if a2 < x5 { a2.mul_add(x5, x0) } else { x0.max(a1) };
    x6 + x5 * -0.75
}
";
        assert_eq!(handwritten().to_rust("f"), expected);
    }

    #[test]
    fn margins_count_comparisons_max_min_and_abs() {
        // (a0 - 0.5).abs() + a1.min(a2), then `if a0 > a1`.
        let p = Program {
            vars: vec![Kind::Float],
            body: vec![
                Stmt::Let(
                    0,
                    Expr::Bin(
                        Bin::Add,
                        Box::new(Expr::Unary(
                            Unary::Abs,
                            Box::new(Expr::Bin(
                                Bin::Sub,
                                Box::new(Expr::Param(0)),
                                Box::new(Expr::Const(0.5)),
                            )),
                        )),
                        Box::new(Expr::Binary(
                            Binary::Min,
                            Box::new(Expr::Param(1)),
                            Box::new(Expr::Param(2)),
                        )),
                    ),
                ),
                Stmt::If(
                    Cond::Greater(Expr::Param(0), Expr::Param(1)),
                    vec![Stmt::Assign(0, Op::Mul, Expr::Const(2.0))],
                    Vec::new(),
                ),
            ],
            tail: Expr::Var(0),
        };
        let input = Input {
            scalars: [0.25, -0.5, 0.125],
            xs: vec![0.0; 3],
            n: 0,
        };
        let e = p.eval(&input);
        assert_eq!(e.value, (0.25_f64 + -0.5) * 2.0);
        assert_eq!(e.margin, 0.25); // |0.25 - 0.5|, |-0.5 - 0.125|, |0.25 - -0.5|
        let input = Input {
            scalars: [0.4, 0.3, 0.35],
            ..input
        };
        assert_eq!(
            p.eval(&input).margin,
            (0.4_f64 - 0.3)
                .abs()
                .min((0.4_f64 - 0.5).abs())
                .min((0.3_f64 - 0.35).abs())
        );
        let straight = Program {
            vars: Vec::new(),
            body: Vec::new(),
            tail: Expr::Param(0),
        };
        assert_eq!(straight.eval(&input).margin, f64::INFINITY);
    }

    #[test]
    fn normalization_follows_rustc_liveness() {
        // let mut x0 = a0; if a1 < a2 { x0 = a1; } else { x0 = a2; }
        // let x1 = a0 * 2.0;          <- never read: removed
        // let mut x2 = a1; for _ in 0..n { x2 += a0; }   <- x2 never read: all removed
        // x0 = x0;                     <- useless: removed
        // x0
        let vars = vec![Kind::Float, Kind::Float, Kind::Float, Kind::Index];
        let body = vec![
            Stmt::Let(0, Expr::Param(0)),
            Stmt::If(
                Cond::Less(Expr::Param(1), Expr::Param(2)),
                vec![Stmt::Assign(0, Op::Set, Expr::Param(1))],
                vec![Stmt::Assign(0, Op::Set, Expr::Param(2))],
            ),
            Stmt::Let(
                1,
                Expr::Bin(
                    Bin::Mul,
                    Box::new(Expr::Param(0)),
                    Box::new(Expr::Const(2.0)),
                ),
            ),
            Stmt::Let(2, Expr::Param(1)),
            Stmt::For(
                Loop::Range(3, IntExpr::N),
                vec![Stmt::Assign(2, Op::Add, Expr::Param(0))],
            ),
            Stmt::Assign(0, Op::Set, Expr::Var(0)),
        ];
        let mut p = Program {
            vars,
            body,
            tail: Expr::Var(0),
        };
        p.normalize();
        // The initializer of x0 is dead but x0 is read: rustc would warn
        // unless the name starts with `_`.
        let expected = "\
fn f(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
    let _ = xs.len();
    let _ = n;
    let mut _x0 = a0;
    if a1 < a2 {
        _x0 = a1;
    } else {
        _x0 = a2;
    }
    _x0
}
";
        assert_eq!(p.to_rust("f"), expected);
    }

    #[test]
    fn printing_never_wraps_a_whole_value_in_parentheses() {
        // rustc's `unused_parens` fires on `let x = (e);`, `x = (e);`,
        // `if (c) {`, `f((e))` and a parenthesized tail.
        let config = Config::default();
        for seed in 0..300 {
            let text = Program::generate(seed, &config).to_rust("f");
            for line in text.lines().map(str::trim) {
                let value = line
                    .split_once(" = ")
                    .map(|(_, v)| v.trim_end_matches(';'))
                    .filter(|_| line.ends_with(';'))
                    .or_else(|| line.strip_prefix("if ").and_then(|c| c.strip_suffix(" {")))
                    .unwrap_or(line);
                assert!(!wrapped(value), "seed {seed}: `{line}` in\n{text}");
                assert!(
                    !line.contains(" as f64 <") && !line.contains("--"),
                    "{line}"
                );
            }
        }
    }

    /// Whether `s` is entirely inside one pair of parentheses.
    fn wrapped(s: &str) -> bool {
        if !s.starts_with('(') {
            return false;
        }
        let mut depth = 0;
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i == s.len() - 1;
                    }
                }
                _ => {}
            }
        }
        false
    }
}
