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
//! Besides loops, branches, buffers and float methods, programs use the
//! idioms of numeric Rust, in fewer than a tenth of their statements:
//!
//! - **Chains** (`Iter`, `Chain`): `b.iter()`, `(0..end)`,
//!   `b.windows(k)`, `b.chunks(k)`/`chunks_exact(k)`, with `copied`, `rev`,
//!   `skip`, `take`, `step_by`, `enumerate`, `zip` and `filter` (last, as
//!   the macro requires), consumed by `map(…)` then `sum`, `product`,
//!   `count`, `fold` (also `fold(f64::NEG_INFINITY, f64::max)`, and with a
//!   pair accumulator destructured by `let (a, b) = …`), or `collect` into a
//!   local `Vec` at the top level; `for` loops over chains, with
//!   destructuring patterns (`for (i, &e) in …`), or `for_each`; every
//!   other enumerated loop counts its items in a `map` closure instead
//!   (`.map(|e| { i1_seen += 1; (i1_seen - 1, e) })`, an `FnMut` whose count
//!   the loop carries).
//! - **Closures**: `let f = |t: f64| …;` (or returning a pair), capturing
//!   variables (`move` when one of them changes later), called later in
//!   loops and branches or passed to `map`.
//! - **Sub-slices** of `xs`: `&xs[1..]`, `&xs[..2]`, `&xs[1..xs.len() - 1]`,
//!   `&xs[n % 3..]`, `xs.split_at(k)`, indexed, iterated and `len()`-ed;
//!   windows and chunks are views as well.
//! - **Assertions** that always hold (`assert!(xs.len() >= 3)`,
//!   `assert_eq!(v.len(), xs.len())`, `debug_assert!(x.is_finite())`,
//!   `assert!(x.abs() < 1e6, "x = {x}")`), and `let (s, c) = e.sin_cos();`.
//! - **Local structs**: every fifth float `let` is printed `let x =
//!   Cell { v: e };` or, every other time, as a tuple struct made by a
//!   call, `let x = Wrap(e);`, and its variable read and assigned as `x.v`
//!   or `x.0` wherever it appears (in closures and macros too); see
//!   [`CELL`] and [`TUPLE_CELL`].
//!
//! The reference semantics folds chains as `std` does: `sum` from `-0.0`,
//! `product` from `1.0`, `fold` left to right in the iterator's order
//! (`rev` of a `zip` pairs as the forward `zip` does), `f64::max`/`min`
//! with the accumulator first.
//!
//! Generated programs are meant to compile warning-free under
//! `#![deny(warnings)]` and to stay finite:
//!
//! - **Finite values.** A static analysis bounds `|value|` of every
//!   expression over all inputs in `[-1, 1]` and all loop trips (at most 5
//!   per loop, two loops deep); programs whose bound exceeds `LIMIT` (10³) are not
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
//! - **Buffers** are never reassigned; every index is in bounds for every
//!   `xs.len()` in `3..=5` and `n` in `0..=4`; a buffer iterated by a loop
//!   is not written in its body. Most are made at the top level of the body;
//!   loop bodies and `if` blocks sometimes make their own temporary, which
//!   lives only in that block (`vec![e; xs.len()]`, `vec![a, b, c]`,
//!   `xs.to_vec()`, `v.clone()` or `v.to_vec()` of a local `Vec`, a
//!   `collect()`, or `Vec::with_capacity(…)` filled by the `for` right after
//!   it), is written and read later in the block, and whose values the block
//!   carries out (into a variable, preferably of the top level, or a buffer
//!   from outside it). A sorted copy is made at the top level only, as the
//!   macro requires.
//!
//! Three spellings avoid bugs of the macro's `_vjp` (reported), and can go
//! once they are fixed: `let x = 0.5_f64;` rather than `let x: f64 = 0.5;`
//! (the annotation is dropped), `x = 0.5_f64;` rather than `x = 0.5;` (the
//! new version is a `{float}`), and `y > i as f64` rather than
//! `(i as f64) < y` (the parentheses are dropped, and `f64 <` then parses
//! as generic arguments; both sides ending in a cast still print so).
//! Limitations of the macro, by design, are avoided too: `for_each` only
//! writes a buffer (a closure may not assign a variable it captures), and
//! no assertion calls a closure (a closure may not be named in a macro).
//!
//! It is used by the unit tests of `ad-macros` (through the IR interpreter)
//! and by the rustc corpus of `ad-tests` (re-exported as
//! `ad_tests::programs`), both as a dev-dependency. It depends on `std`
//! alone.

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
    /// become `0.5`; a dropped buffer's or slice's reads go to `xs`, its
    /// writes go; a dropped closure's calls become their arguments),
    /// replaces an `if` by one of its blocks or a loop by one trip of its
    /// body (indices and counters becoming `1`, elements a buffer element,
    /// views `xs`), makes a buffer plainly (one filled by pushes becomes a
    /// `collect()`, the others `vec![0.5; xs.len()]` or `xs.to_vec()`),
    /// keeps one side of `&&`/`||`, replaces an expression by
    /// one of its operands or by `0.5`, or drops an adapter of a chain
    /// (`rev`, `skip`, `filter`, …). Each is normalized as generated
    /// programs are, bounded, and strictly smaller by [`Program::size`].
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
        for (k, droppable) in census.iters.iter().enumerate() {
            if *droppable {
                let mut candidate = self.clone();
                candidate.walk(&mut Replace::adapter(k));
                offer(candidate);
            }
        }
        for (k, compound) in census.ints.iter().enumerate() {
            if *compound {
                let mut candidate = self.clone();
                candidate.walk(&mut Replace::zero(k));
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
        let Some(expected) = expected else {
            return Ok(false);
        };
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
    let Some(along) = directional(f, &x, &u, rhs / v) else {
        return Ok(false);
    };
    let lhs = v * along;
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
/// the smaller steps; the larger ones are more accurate on gentle ones. Where
/// those three disagree (by more than `1e-3` relative), the function is not
/// resolved at their scale (a loop iterating `x += (k x).sin()` 25 times has
/// derivatives near `10⁸`): steps down to `1e-10` are tried too.
///
/// `None` if even the estimates of the three smallest steps differ by more
/// than the `1e-6` the comparison asks for: a function so steep that
/// rounding in it, divided by the step, decides the leading digits (a loop
/// of `x += ((y - x)² - …).sin()` whose derivatives reach `10⁸` and change
/// sign when one rounding changes); finite differences cannot check it.
fn directional(f: impl Fn(&[f64]) -> f64, x: &[f64], u: &[f64], expected: f64) -> Option<f64> {
    let at = |t: f64| {
        let moved: Vec<f64> = x.iter().zip(u).map(|(xi, ui)| xi + t * ui).collect();
        f(&moved)
    };
    let central = |h: f64| (at(h) - at(-h)) / (2.0 * h);
    let richardson = |h: f64| (4.0 * central(h / 2.0) - central(h)) / 3.0;
    let mut estimates: Vec<f64> = [1e-4, 1e-5, 1e-6].into_iter().map(richardson).collect();
    let spread = |estimates: &[f64]| {
        estimates
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &e| {
                (lo.min(e), hi.max(e))
            })
    };
    let (lo, hi) = spread(&estimates);
    // (A NaN estimate counts as a disagreement.)
    let resolved = hi - lo <= 1e-3 * lo.abs().max(hi.abs()).max(1.0);
    if !resolved {
        let small: Vec<f64> = [1e-8, 1e-9, 1e-10].into_iter().map(richardson).collect();
        let (lo, hi) = spread(&small);
        if !close(lo, hi) {
            return None;
        }
        estimates.push(richardson(1e-7));
        estimates.extend(small);
    }
    estimates
        .into_iter()
        .min_by(|a, b| (a - expected).abs().total_cmp(&(b - expected).abs()))
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
    /// `eN`, the float element of a `for` loop over a buffer, or a float
    /// bound by any pattern (of a chain's item, a closure's parameter, a
    /// fold's accumulator); never assigned. By value (pattern `&eN`, type
    /// `f64`; plain `eN` for an `f64` item), or by reference (pattern `eN`,
    /// type `&f64`, read as `*eN`; `bare` ones are read as plain `eN` where
    /// `&f64` works as well: operands of `+ - *` and method receivers).
    Elem { by_ref: bool, bare: bool },
    /// `iN: usize`, the index of a `for` loop (a range, or `enumerate`),
    /// or bound by a chain's pattern.
    Index,
    /// `kN: usize`, the counter of a `while` loop: `let mut kN = 0;` before
    /// it, `kN += 1;` first in its body, so `1..=bound` in the body.
    Counter,
    /// `vN`, a local `Vec<f64>` (made at the top level, or in a block and
    /// visible only there): `short` ones have 3 elements (`vec![a, b, c]`),
    /// the others `xs.len()`.
    Buffer { short: bool },
    /// `sN: &[f64]`, a read-only view of `min..=max` elements, never more
    /// than `xs.len()`: a sub-slice of `xs` (`&xs[1..]`, a half of
    /// `split_at`) made at the top level, or a window or chunk bound by a
    /// pattern.
    Slice { min: usize, max: usize },
    /// `fN`, a closure `|eM: f64| …` (see [`Stmt::Closure`]).
    Closure,
    /// `gN`, a closure `|eM: f64| (…, …)` returning a pair, called only
    /// as `let (a, b) = gN(e);`.
    PairClosure,
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
    /// `0..3` (or over a 3-element buffer): indexes every buffer of at
    /// least 3 elements.
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
    /// `b.iter().sum::<f64>()` or `.product::<f64>()`; generated as a whole
    /// `let` initializer, or in the body of a `map` over windows or chunks.
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
    /// An iterator chain consumed into one float (`….map(|v| …).sum::<f64>()`);
    /// generated only as a whole `let` initializer.
    Chain(Box<Chain>),
    /// `f(a)`: a call of a closure in scope, `|a| <= ARG_LIMIT`.
    Call(Var, Box<Expr>),
}

/// The largest `|argument|` of a closure call (see [`Stmt::Closure`]).
const ARG_LIMIT: f64 = 4.0;

/// How often a nested block (a loop body, a branch) makes a temporary
/// buffer of its own, besides its other statements (see
/// [`Builder::local_buffer`]).
const LOCAL_BUFFERS: f64 = 0.09;

/// How often a temporary buffer is moved into a `Vec` made before its
/// block ([`Stmt::Move`]).
const MOVES: f64 = 0.8;

/// An iterator: a source and its adapters, outermost last.
#[derive(Clone, Debug, PartialEq)]
enum Iter {
    /// `b.iter()`: `&f64` items.
    Elems(Buf),
    /// `(0..end)`: `usize` items.
    Range(IntExpr),
    /// `b.windows(k)`: views of `k` elements.
    Windows(Buf, usize),
    /// `b.chunks(k)`, or `b.chunks_exact(k)` if `exact`: views of at most
    /// (exactly) `k` elements.
    Chunks(Buf, usize, bool),
    /// `.copied()`, of `&f64` items.
    Copied(Box<Iter>),
    /// `.rev()`, `.skip(k)`, `.take(k)`, `.step_by(k)`.
    Adapt(Box<Iter>, Adapt),
    /// `.enumerate()`: `(usize, item)` pairs.
    Enumerate(Box<Iter>),
    /// `a.zip(b)`: pairs, as many as the shorter has; `b` printed as a bare
    /// buffer (`xs`, `&v`) if the flag is set and it is one.
    Zip(Box<Iter>, Box<Iter>, bool),
    /// `.filter(|&PAT| cond)`: only outermost (or under `rev`), as the macro
    /// requires; `cond` reads the pattern's variables, literals and the
    /// scalar parameters (never a variable that may change).
    Filter(Box<Iter>, Pat, Cond),
    /// `a.chain(b)`: the items of `a`, then those of `b`, both `&f64`; `b`
    /// printed as a bare buffer (`xs`, `&v`) if the flag is set and it is
    /// one. No `step_by` follows it and no `zip` takes it, as the macro
    /// requires.
    Chain(Box<Iter>, Box<Iter>, bool),
}

/// The adapters that keep an iterator exact-size and double-ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Adapt {
    /// `.rev()`.
    Rev,
    /// `.skip(k)`.
    Skip(usize),
    /// `.take(k)`, `k >= 1`.
    Take(usize),
    /// `.step_by(k)`, `k >= 2`.
    StepBy(usize),
}

/// The type of an iterator's items.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ty {
    /// `&f64`.
    Ref,
    /// `f64`.
    Val,
    /// `usize`, below the range's end.
    Int(Range),
    /// `&[f64]` of `min..=max` elements.
    View(usize, usize),
    /// A pair, of `zip` or `enumerate`.
    Pair(Box<Ty>, Box<Ty>),
}

/// A pattern binding an item: a fresh variable of the matching kind
/// (`Kind::Elem` for floats: `&e` by value, `e` by reference;
/// `Kind::Index`; `Kind::Slice`), or a pair.
#[derive(Clone, Debug, PartialEq)]
enum Pat {
    /// One variable.
    Var(Var),
    /// `(a, b)`.
    Pair(Box<Pat>, Box<Pat>),
}

/// An iterator chain consumed into one float.
#[derive(Clone, Debug, PartialEq)]
struct Chain {
    /// The items.
    iter: Iter,
    /// `.map(…)` of the items, if any.
    map: Option<Map>,
    /// How the (mapped) items become one float.
    consume: Consume,
}

/// The function of `.map(…)`.
#[derive(Clone, Debug, PartialEq)]
enum Map {
    /// `.map(|PAT| body)`.
    Inline(Pat, Expr),
    /// `.map(f)`, a closure in scope, of `f64` items bounded by
    /// [`ARG_LIMIT`].
    Named(Var),
}

/// The consumers of a chain.
#[derive(Clone, Debug, PartialEq)]
enum Consume {
    /// `.sum::<f64>()` (folds from `-0.0`, as `std` does).
    Sum,
    /// `.product::<f64>()`.
    Product,
    /// `.count() as f64`.
    Count,
    /// `.fold(init, |acc, PAT| body)`, `acc` a `Kind::Elem` by value.
    Fold(Expr, Var, Pat, Expr),
    /// `.fold(f64::NEG_INFINITY, f64::max)` (`Binary::Max`, `None`) or
    /// `.fold(f64::INFINITY, f64::min)`, of a chain never empty; or from a
    /// literal, `.fold(0.5, f64::max)`. Of `f64` items.
    Extremum(Binary, Option<f64>),
    /// The first item, `.next()`, or the `last` one, `.last()`, taken out
    /// with `.unwrap_or(default)` (`.copied()` first for `&f64` items). The
    /// first after a `filter` and no `map` is printed `.find(…)`. Of `f64`
    /// items.
    First { last: bool, default: f64 },
}

/// The tuple a [`Stmt::Pair`] destructures.
#[derive(Clone, Debug, PartialEq)]
enum Pair {
    /// `e.sin_cos()`.
    SinCos(Expr),
    /// `ITER.fold((i, j), |(p, q), PAT| (f, g))`.
    Fold(Box<PairFold>),
    /// `g(e)`, a `Kind::PairClosure`.
    Call(Var, Expr),
}

/// A fold with a pair of accumulators.
#[derive(Clone, Debug, PartialEq)]
struct PairFold {
    /// The items (no `map`).
    iter: Iter,
    /// The initial values.
    init: [Expr; 2],
    /// The accumulators, `Kind::Elem`s by value.
    acc: [Var; 2],
    /// The pattern of an item.
    pat: Pat,
    /// The next values of the accumulators.
    body: [Expr; 2],
}

impl Pair {
    /// The expressions, in the order Rust evaluates them first (the fold's
    /// initial values, then its bodies).
    fn exprs(&self) -> Vec<&Expr> {
        match self {
            Pair::SinCos(e) | Pair::Call(_, e) => vec![e],
            Pair::Fold(f) => f.init.iter().chain(&f.body).collect(),
        }
    }
}

/// An assertion, always true, of [`Stmt::Assert`].
#[derive(Clone, Debug, PartialEq)]
enum Check {
    /// `assert!(b.len() >= k);`, or `assert!(!b.is_empty());` for `k == 1`.
    MinLen(Buf, usize),
    /// `assert_eq!(a, b);` (`debug_assert_eq!` if `debug`) of two lengths
    /// equal for every input.
    SameLen(IntExpr, IntExpr, bool),
    /// `debug_assert!(e.is_finite());` (`assert!` unless `debug`).
    Finite(Expr, bool),
    /// `assert!(e.abs() < 1e6);`: every value is bounded by [`LIMIT`]. With
    /// a message if the number is not 0: `"x = {x}"` (1, a variable
    /// captured by the format string), `"{}", e` (2).
    Bounded(Expr, usize),
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
    /// `a.midpoint(b)`.
    Midpoint,
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
    /// `let mut v = …;`: a local buffer, at the top level of the body or
    /// in a nested block (not [`Init::Sorted`] there).
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
    /// `let s = &xs[start..end];` (`..=` if the flag is set; `end` `None`
    /// for `&xs[start..]`), only at the top level; `Kind::Slice`.
    Slice(Var, IntExpr, Option<IntExpr>, bool),
    /// `let (s, t) = xs.split_at(k);`, only at the top level.
    Split(Var, Var, IntExpr),
    /// `let f = |t: f64| body;`: `body` reads `t`, parameters, `xs` and its
    /// slices, and variables in scope, never a local buffer (a closure that
    /// borrows a `Vec` would keep it from being written). It is printed
    /// `move` when it reads a variable that may change, so that it keeps the
    /// value of the definition (as it does when it borrows). Calls pass
    /// arguments bounded by [`ARG_LIMIT`]. With two bodies, a
    /// `Kind::PairClosure` returning `(a, b)`.
    Closure(Var, Var, Vec<Expr>),
    /// `let (a, b) = …;`: two `Kind::Float`s from `sin_cos` or a fold.
    Pair(Var, Var, Pair),
    /// An assertion that always holds.
    Assert(Check),
    /// `v = w.clone();`, `v.copy_from_slice(&w);` or
    /// `std::mem::swap(&mut v, &mut w);`: a temporary `Vec` `w` of a nested
    /// block moved into a `Vec` `v` of the same length made before it
    /// (double buffering, `cur = next;`).
    Move(Var, Var, Move),
}

/// How a [`Stmt::Move`] moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Move {
    /// `v = w.clone();`
    Clone,
    /// `v.copy_from_slice(&w);`
    CopyFrom,
    /// `std::mem::swap(&mut v, &mut w);`
    Swap,
}

/// How a local buffer is made.
#[derive(Clone, Debug, PartialEq)]
enum Init {
    /// `vec![e; xs.len()]`.
    Fill(Expr),
    /// `xs.to_vec()`.
    Copy,
    /// `{ let mut sorted = xs.to_vec(); sorted.sort_by(f64::total_cmp); sorted }`.
    Sorted,
    /// `vec![a, b, c]`.
    List(Vec<Expr>),
    /// `ITER.map(…).collect::<Vec<f64>>()`, of an iterator of exactly 3 or
    /// `xs.len()` items (by the buffer's kind), `f64` items if no map.
    Collect(Iter, Option<Map>),
    /// `v.to_vec()` or `v.clone()` of a local `Vec` of the same length (in
    /// a nested block: see [`Builder::local_buffer`]).
    Clone(Buf),
    /// `let mut v = Vec::with_capacity(len);` (or `Vec::new()`) then
    /// `for PAT in ITER { v.push(body); }`: the items of a
    /// [`Init::Collect`], always with an inline `map` (`Map::Inline`) whose
    /// pattern and body are the loop's.
    Push(Iter, Option<Map>),
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
    /// `for PAT in ITER`, or `ITER.for_each(|PAT| s);` if the flag is set
    /// and the body is one buffer write.
    Chain(Iter, Pat, bool),
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
// Lengths, iterators and their items
// ---------------------------------------------------------------------------

/// The shortest and longest length of `b` (over `xs.len()` in `3..=5`).
fn buf_len(b: Buf, kinds: &[Kind]) -> (usize, usize) {
    match b {
        Buf::Local(v) => match kinds.get(v) {
            Some(Kind::Buffer { short: true }) => (3, 3),
            Some(Kind::Slice { min, max }) => (*min, *max),
            _ => (3, 5),
        },
        Buf::Xs => (3, 5),
    }
}

/// Whether `b` has exactly `xs.len()` elements.
fn full(b: Buf, kinds: &[Kind]) -> bool {
    match b {
        Buf::Xs => true,
        Buf::Local(v) => kinds.get(v) == Some(&Kind::Buffer { short: false }),
    }
}

/// Whether `b` is a 3-element local `Vec`.
fn short_vec(b: Buf, kinds: &[Kind]) -> bool {
    matches!(b, Buf::Local(v) if kinds.get(v) == Some(&Kind::Buffer { short: true }))
}

/// The range of the indices below `b.len()`: never past `xs.len()` (no
/// buffer is longer), below 3 if `b` has at most 3 elements.
fn len_range(b: Buf, kinds: &[Kind]) -> Range {
    if buf_len(b, kinds).1 <= 3 {
        Range::Three
    } else {
        Range::Len
    }
}

/// The range of `0..end` as a loop's or a chain's, if it is one.
fn end_range(end: &IntExpr, kinds: &[Kind]) -> Option<Range> {
    match end {
        IntExpr::N => Some(Range::N),
        IntExpr::Lit(c) if *c <= 3 => Some(Range::Three),
        IntExpr::Len(b) => Some(len_range(*b, kinds)),
        _ => None,
    }
}

/// The value of `e` when `xs.len()` is `len` and `n` is `n`, if it depends
/// on nothing else and neither underflows nor divides by zero.
fn int_value(e: &IntExpr, len: usize, n: usize) -> Option<usize> {
    match e {
        IntExpr::Var(_) | IntExpr::Len(Buf::Local(_)) => None,
        IntExpr::N => Some(n),
        IntExpr::Len(Buf::Xs) => Some(len),
        IntExpr::Lit(c) => Some(*c),
        IntExpr::Add(a, b) => Some(int_value(a, len, n)? + int_value(b, len, n)?),
        IntExpr::Sub(a, b) => int_value(a, len, n)?.checked_sub(int_value(b, len, n)?),
        IntExpr::Rem(a, b) => int_value(a, len, n)?.checked_rem(int_value(b, len, n)?),
    }
}

/// The shortest and longest `&xs[start..end]` (`..=` if `inclusive`, to
/// the end if `end` is `None`), if it is in bounds for every input.
fn slice_len(start: &IntExpr, end: Option<&IntExpr>, inclusive: bool) -> Option<(usize, usize)> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for len in 3..=5 {
        for n in 0..=4 {
            let a = int_value(start, len, n)?;
            let b = match end {
                Some(e) => int_value(e, len, n)? + usize::from(inclusive),
                None => len,
            };
            if a > b || b > len {
                return None;
            }
            lo = lo.min(b - a);
            hi = hi.max(b - a);
        }
    }
    Some((lo, hi))
}

/// The type of the items of `it`.
fn item_ty(it: &Iter, kinds: &[Kind]) -> Ty {
    match it {
        Iter::Elems(_) => Ty::Ref,
        Iter::Range(end) => Ty::Int(end_range(end, kinds).unwrap_or(Range::N)),
        Iter::Windows(_, k) => Ty::View(*k, *k),
        Iter::Chunks(_, k, exact) => Ty::View(if *exact { *k } else { 1 }, *k),
        Iter::Copied(_) => Ty::Val,
        Iter::Adapt(inner, _) | Iter::Filter(inner, ..) => item_ty(inner, kinds),
        Iter::Enumerate(inner) => Ty::Pair(
            Box::new(Ty::Int(count_range(inner, kinds))),
            Box::new(item_ty(inner, kinds)),
        ),
        Iter::Zip(a, b, _) => Ty::Pair(Box::new(item_ty(a, kinds)), Box::new(item_ty(b, kinds))),
        Iter::Chain(a, ..) => item_ty(a, kinds),
    }
}

/// The fewest and the most items of `it`, over every input.
fn count(it: &Iter, kinds: &[Kind]) -> (usize, usize) {
    match it {
        Iter::Elems(b) => buf_len(*b, kinds),
        Iter::Range(end) => match end {
            IntExpr::Len(b) => buf_len(*b, kinds),
            IntExpr::Lit(c) => (*c, *c),
            _ => (0, int_max(end)),
        },
        Iter::Windows(b, k) => {
            let (lo, hi) = buf_len(*b, kinds);
            ((lo + 1).saturating_sub(*k), (hi + 1).saturating_sub(*k))
        }
        Iter::Chunks(b, k, exact) => {
            let (lo, hi) = buf_len(*b, kinds);
            if *exact {
                (lo / k, hi / k)
            } else {
                (lo.div_ceil(*k), hi.div_ceil(*k))
            }
        }
        Iter::Copied(inner) | Iter::Enumerate(inner) => count(inner, kinds),
        Iter::Adapt(inner, a) => {
            let (lo, hi) = count(inner, kinds);
            match a {
                Adapt::Rev => (lo, hi),
                Adapt::Skip(k) => (lo.saturating_sub(*k), hi.saturating_sub(*k)),
                Adapt::Take(k) => (lo.min(*k), hi.min(*k)),
                Adapt::StepBy(k) => (lo.div_ceil(*k), hi.div_ceil(*k)),
            }
        }
        Iter::Zip(a, b, _) => {
            let ((a0, a1), (b0, b1)) = (count(a, kinds), count(b, kinds));
            (a0.min(b0), a1.min(b1))
        }
        Iter::Chain(a, b, _) => {
            let ((a0, a1), (b0, b1)) = (count(a, kinds), count(b, kinds));
            (a0 + b0, a1 + b1)
        }
        Iter::Filter(inner, ..) => (0, count(inner, kinds).1),
    }
}

/// The range of the positions of `it`'s items (what `enumerate` counts).
fn count_range(it: &Iter, kinds: &[Kind]) -> Range {
    if count(it, kinds).1 <= 3 {
        Range::Three
    } else if within_len(it, kinds) {
        Range::Len
    } else {
        Range::N
    }
}

/// Whether `it` never has more than `xs.len()` items.
fn within_len(it: &Iter, kinds: &[Kind]) -> bool {
    match it {
        Iter::Elems(_) | Iter::Windows(..) | Iter::Chunks(..) => true,
        Iter::Range(end) => end_range(end, kinds).is_some_and(|r| r != Range::N),
        Iter::Copied(inner)
        | Iter::Adapt(inner, _)
        | Iter::Enumerate(inner)
        | Iter::Filter(inner, ..) => within_len(inner, kinds),
        Iter::Zip(a, b, _) => within_len(a, kinds) || within_len(b, kinds),
        Iter::Chain(..) => false,
    }
}

/// Whether `it` has exactly `xs.len()` items for every input.
fn full_iter(it: &Iter, kinds: &[Kind]) -> bool {
    match it {
        Iter::Elems(b) | Iter::Range(IntExpr::Len(b)) => full(*b, kinds),
        Iter::Copied(inner) | Iter::Enumerate(inner) | Iter::Adapt(inner, Adapt::Rev) => {
            full_iter(inner, kinds)
        }
        Iter::Zip(a, b, _) => full_iter(a, kinds) && full_iter(b, kinds),
        _ => false,
    }
}

/// Whether `it` is an `ExactSizeIterator` in Rust: not after a `chain` or
/// a `filter`.
fn exact_size(it: &Iter) -> bool {
    match it {
        Iter::Elems(_) | Iter::Range(_) | Iter::Windows(..) | Iter::Chunks(..) => true,
        Iter::Copied(inner) | Iter::Adapt(inner, _) | Iter::Enumerate(inner) => exact_size(inner),
        Iter::Zip(a, b, _) => exact_size(a) && exact_size(b),
        Iter::Filter(..) | Iter::Chain(..) => false,
    }
}

/// Whether `.rev()` may follow `it` in Rust (a `DoubleEndedIterator`):
/// `enumerate`, `zip`, `skip`, `take` and `step_by` are one only over
/// exact-size iterators, so `a.chain(b).enumerate().rev()` does not compile.
fn double_ended(it: &Iter) -> bool {
    match it {
        Iter::Elems(_) | Iter::Range(_) | Iter::Windows(..) | Iter::Chunks(..) => true,
        Iter::Copied(inner) | Iter::Filter(inner, ..) | Iter::Adapt(inner, Adapt::Rev) => {
            double_ended(inner)
        }
        Iter::Adapt(inner, _) | Iter::Enumerate(inner) => double_ended(inner) && exact_size(inner),
        Iter::Zip(a, b, _) => [a, b].iter().all(|it| double_ended(it) && exact_size(it)),
        Iter::Chain(a, b, _) => double_ended(a) && double_ended(b),
    }
}

/// Whether `it` has a `chain` (after which no `step_by` may follow).
fn chained(it: &Iter) -> bool {
    match it {
        Iter::Chain(..) => true,
        Iter::Copied(inner) | Iter::Adapt(inner, _) | Iter::Filter(inner, ..) => chained(inner),
        Iter::Enumerate(inner) => chained(inner),
        Iter::Zip(a, b, _) => chained(a) || chained(b),
        _ => false,
    }
}

/// Whether `it` has a `filter` (after which only `rev` may follow).
fn filtered(it: &Iter) -> bool {
    match it {
        Iter::Filter(..) => true,
        Iter::Adapt(inner, Adapt::Rev) | Iter::Copied(inner) => filtered(inner),
        _ => false,
    }
}

/// The local `Vec`s `it` reads, which a loop over it must not write.
fn iter_vecs(it: &Iter, kinds: &[Kind], out: &mut Vec<Var>) {
    match it {
        Iter::Elems(Buf::Local(v))
        | Iter::Windows(Buf::Local(v), _)
        | Iter::Chunks(Buf::Local(v), ..)
            if matches!(kinds.get(*v), Some(Kind::Buffer { .. })) =>
        {
            out.push(*v);
        }
        Iter::Copied(inner)
        | Iter::Adapt(inner, _)
        | Iter::Enumerate(inner)
        | Iter::Filter(inner, ..) => iter_vecs(inner, kinds, out),
        Iter::Zip(a, b, _) | Iter::Chain(a, b, _) => {
            iter_vecs(a, kinds, out);
            iter_vecs(b, kinds, out);
        }
        _ => {}
    }
}

/// The variables `pat` binds, in order.
fn pat_vars(pat: &Pat, out: &mut Vec<Var>) {
    match pat {
        Pat::Var(v) => out.push(*v),
        Pat::Pair(a, b) => {
            pat_vars(a, out);
            pat_vars(b, out);
        }
    }
}

/// Brings the variables of `pat` (of items of type `ty`) into `scope`, and
/// its indices into `ranges`.
fn enter_pat(pat: &Pat, ty: &Ty, scope: &mut Vec<Var>, ranges: &mut Vec<(Var, Range)>) {
    match (pat, ty) {
        (Pat::Var(v), Ty::Int(r)) => {
            scope.push(*v);
            ranges.push((*v, *r));
        }
        (Pat::Var(v), _) => scope.push(*v),
        (Pat::Pair(a, b), Ty::Pair(x, y)) => {
            enter_pat(a, x, scope, ranges);
            enter_pat(b, y, scope, ranges);
        }
        (Pat::Pair(a, b), _) => {
            enter_pat(a, &Ty::Val, scope, ranges);
            enter_pat(b, &Ty::Val, scope, ranges);
        }
    }
}

/// Whether `e` calls a closure.
fn calls(e: &Expr) -> bool {
    let mut found = false;
    let mut copy = e.clone();
    walk_expr(&mut FindCall(&mut found), &mut copy);
    found
}

/// Sets its flag on finding a closure call.
struct FindCall<'f>(&'f mut bool);

impl Visit for FindCall<'_> {
    fn expr(&mut self, e: &mut Expr) {
        if matches!(e, Expr::Call(..)) {
            *self.0 = true;
        }
    }
}

/// `it.copied()`.
fn copied(it: Iter) -> Iter {
    Iter::Copied(Box::new(it))
}

/// Whether `e` reads `v`.
fn expr_reads_var(e: &Expr, v: Var) -> bool {
    let mut read = Set::new();
    expr_reads(e, &mut read);
    read.contains(&v)
}

/// Whether `e` reads a variable of `pat`.
fn expr_reads_any(e: &Expr, pat: &Pat) -> bool {
    let mut read = Set::new();
    expr_reads(e, &mut read);
    let mut vars = Vec::new();
    pat_vars(pat, &mut vars);
    vars.iter().any(|v| read.contains(v))
}

/// The type of the items a chain's consumer sees: `f64` after a `map`.
fn mapped_ty(chain: &Chain, kinds: &[Kind]) -> Ty {
    if chain.map.is_some() {
        Ty::Val
    } else {
        item_ty(&chain.iter, kinds)
    }
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
    /// In a nested block, where the outermost one starts in `scope`: the
    /// variables before it are the top level's, which the final
    /// expression reads if they are assigned.
    body: usize,
    /// The `for` index variables in scope and their ranges.
    ranges: Vec<(Var, Range)>,
    /// Local buffers iterated by an enclosing loop, which its body must not
    /// write (the iterator borrows them).
    iterated: Vec<Var>,
    /// Enclosing loops.
    loops: usize,
    /// Enclosing blocks (loops and branches).
    nesting: usize,
    /// Enclosing closure bodies (which read no local `Vec`).
    closure: usize,
    /// Bounds of the values at the current point (first trip, in loops).
    bounds: Bounds,
    /// The local buffers that are `Vec`s (not arrays), which a
    /// [`Stmt::Move`] may replace.
    vecs: Vec<Var>,
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
            body: 0,
            ranges: Vec::new(),
            iterated: Vec::new(),
            loops: 0,
            nesting: 0,
            closure: 0,
            bounds: Bounds::default(),
            vecs: Vec::new(),
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

    /// Whether `b` is a local `Vec` of 3 elements (rather than `xs.len()`).
    fn short(&self, b: Buf) -> bool {
        short_vec(b, &self.vars)
    }

    /// `count` statements (each checked against the bounds), then, in a
    /// nested block, statements carrying out the block's locals that
    /// nothing read: its floats, and its temporary buffers (which writes
    /// into themselves do not count as read).
    fn block(&mut self, count: usize) -> Vec<Stmt> {
        let start = self.scope.len();
        let mut out = Vec::new();
        // Sometimes a temporary buffer, before one of the statements (an
        // extra one: the others are what they would be without it).
        let temporary = if self.nesting > 0
            && self.config.buffers
            && self.buffers().len() < 3
            && self.can_carry()
            && self.rng.chance(LOCAL_BUFFERS)
        {
            Some(self.rng.below(count.max(1)))
        } else {
            None
        };
        for k in 0..count {
            if temporary == Some(k) {
                out.extend(self.checked(&mut |b: &mut Builder<'c>| b.local_buffer()));
            }
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
            let buffers: Vec<Var> = self.scope[start..]
                .iter()
                .copied()
                .filter(|&v| matches!(self.vars[v], Kind::Buffer { .. }))
                .filter(|&v| {
                    let mut read = Set::new();
                    for s in &out {
                        match s {
                            Stmt::Store(w, i, _, e) if *w == v => {
                                int_reads(i, &mut read);
                                expr_reads(e, &mut read);
                                read.remove(&v);
                            }
                            s => stmt_reads(s, &mut read),
                        }
                    }
                    !read.contains(&v) || self.rng.chance(0.25)
                })
                .collect();
            for v in buffers {
                out.extend(self.checked(&mut |b: &mut Builder<'c>| b.carry_buffer(v)));
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
        if self.nesting == 0 {
            self.body = scope;
        }
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
        let slices = self.visible(|k| matches!(k, Kind::Slice { .. })).len();
        let closures = self
            .visible(|k| matches!(k, Kind::Closure | Kind::PairClosure))
            .len();
        // In order: `let`, `let` of an `if`, assignment, buffer write,
        // reduction, new buffer, `if`, `for`, `while`, `break`/`continue`;
        // then, fewer than a tenth of the statements, the idioms: `let` of a
        // chain, closure, sub-slice, `sin_cos`, assertion. (A reduction is
        // also a chain half of the time.)
        let weights = [
            12,
            3 * u32::from(config.branches),
            if !assignable {
                0
            } else if in_loop {
                24
            } else if top {
                9
            } else {
                18
            },
            if !writable {
                0
            } else if in_loop {
                21
            } else if top {
                6
            } else {
                9
            },
            3 * u32::from(config.buffers),
            if config.buffers && top && buffers < 2 {
                if buffers == 0 { 18 } else { 3 }
            } else {
                0
            },
            if config.branches && can_nest { 9 } else { 0 },
            if config.loops && self.loops < 2 && can_nest {
                if top { 15 } else { 6 }
            } else {
                0
            },
            if config.loops && self.loops < 2 && can_nest {
                3
            } else {
                0
            },
            if in_loop && config.branches { 6 } else { 0 },
            if !(config.buffers || config.loops) {
                0
            } else if top {
                2
            } else {
                1
            },
            if closures < 2 {
                if top { 2 } else { 1 }
            } else {
                0
            },
            if config.buffers && top && slices < 2 {
                3
            } else {
                0
            },
            1,
            1,
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
            4 if self.rng.chance(0.5) => {
                let chain = self.chain(false);
                vec![self.bind(Expr::Chain(Box::new(chain)))]
            }
            4 => {
                let b = self.pick_buf(false);
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
            9 => {
                let c = self.cond();
                let exit = if self.rng.chance(0.5) {
                    Exit::Break
                } else {
                    Exit::Continue
                };
                vec![Stmt::Exit(c, exit)]
            }
            10 => {
                let named =
                    !self.visible(|k| k == Kind::Closure).is_empty() && self.rng.chance(0.3);
                let chain = self.chain(named);
                vec![self.bind(Expr::Chain(Box::new(chain)))]
            }
            11 if self.rng.chance(0.25) => {
                // A closure returning a pair, used at once.
                let mut out = vec![self.closure(true)];
                let d = self.config.max_depth.saturating_sub(1);
                let g = *self.scope.last().unwrap_or(&0);
                let pair = Pair::Call(g, self.argument(d));
                let (a, b) = (self.fresh(Kind::Float), self.fresh(Kind::Float));
                self.scope.extend([a, b]);
                out.push(Stmt::Pair(a, b, pair));
                out
            }
            11 => {
                // Sometimes used at once, by `map`.
                let mut out = vec![self.closure(false)];
                if config.buffers && self.rng.chance(0.3) {
                    let chain = self.chain(true);
                    out.push(self.bind(Expr::Chain(Box::new(chain))));
                }
                out
            }
            12 => vec![self.slice()],
            13 => {
                let pairs = self.visible(|k| k == Kind::PairClosure);
                let pair = if !pairs.is_empty() && self.rng.chance(0.7) {
                    let d = self.config.max_depth.saturating_sub(1);
                    Pair::Call(self.rng.pick(&pairs), self.argument(d))
                } else if self.config.buffers && self.rng.chance(0.4) {
                    Pair::Fold(Box::new(self.pair_fold()))
                } else {
                    Pair::SinCos(self.typed(self.config.max_depth.saturating_sub(1)))
                };
                let (a, b) = (self.fresh(Kind::Float), self.fresh(Kind::Float));
                self.scope.extend([a, b]);
                vec![Stmt::Pair(a, b, pair)]
            }
            _ => vec![Stmt::Assert(self.check())],
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
        self.store_into(v)
    }

    /// A write into the local buffer `v`, as [`Builder::store`] makes them.
    fn store_into(&mut self, v: Var) -> Stmt {
        let index = self.index_for(Buf::Local(v));
        let d = self.config.max_depth.saturating_sub(1);
        match self.rng.weighted(&[3, 3, 1, 1]) {
            0 => Stmt::Store(v, index, Op::Set, self.expr(d + 1)),
            1 => Stmt::Store(v, index, Op::Add, self.small(d + 1)),
            2 => Stmt::Store(v, index, Op::Sub, self.small(d + 1)),
            _ => Stmt::Store(v, index, Op::Mul, self.factor(d)),
        }
    }

    /// A new local buffer: `vec![e; xs.len()]`, `xs.to_vec()`,
    /// `vec![a, b, c]` or collected from a chain.
    fn buffer(&mut self) -> Stmt {
        let d = self.config.max_depth.saturating_sub(1);
        let (init, short) = match self.rng.weighted(&[3, 3, 2, 2]) {
            0 => {
                let fill = if self.rng.chance(0.5) {
                    Expr::Const(0.0)
                } else {
                    self.expr(d)
                };
                (Init::Fill(fill), false)
            }
            // Every third copy is sorted: no draw of its own, so that the
            // other programs stay what they were.
            1 if self.vars.len() % 3 == 2 => (Init::Sorted, false),
            1 => (Init::Copy, false),
            2 => (Init::List((0..3).map(|_| self.expr(d)).collect()), true),
            _ => self.collect(),
        };
        let v = self.fresh(Kind::Buffer { short });
        self.scope.push(v);
        if !is_array(v, &init) {
            self.vecs.push(v);
        }
        Stmt::Buffer(v, init)
    }

    /// A temporary buffer of a nested block (a loop body or a branch), seen
    /// only there: `vec![e; xs.len()]` (its fill often reading the loop's
    /// index or element), `vec![a, b, c]`, `xs.to_vec()`, a copy of a local
    /// `Vec` in scope (`v.clone()`, `v.to_vec()`), a `collect()`, or
    /// `Vec::with_capacity` filled by the `for` right after it; then
    /// sometimes a write or two into it. The block reads it later: its own
    /// statements may, and [`Builder::block`] carries it out at the end if
    /// none does.
    fn local_buffer(&mut self) -> Vec<Stmt> {
        let d = self.config.max_depth.saturating_sub(1);
        let sources = self.copyable();
        // A view in scope (a window of a loop, say) is copied more often.
        let views = sources
            .iter()
            .any(|&b| matches!(b, Buf::Local(w) if matches!(self.vars[w], Kind::Slice { .. })));
        let (init, short) = match self.rng.weighted(&[
            4,
            3,
            1,
            match (sources.is_empty(), views) {
                (true, _) => 0,
                (false, false) => 2,
                (false, true) => 6,
            },
            2,
            if self.config.loops { 2 } else { 0 },
        ]) {
            0 => {
                let fill = if self.rng.chance(0.25) {
                    Expr::Const(0.0)
                } else {
                    self.expr(d)
                };
                (Init::Fill(fill), false)
            }
            1 => (Init::List((0..3).map(|_| self.expr(d)).collect()), true),
            2 => (Init::Copy, false),
            3 => {
                let b = self.rng.pick(&sources);
                (Init::Clone(b), !full(b, &self.vars))
            }
            4 => self.collect(),
            _ => {
                let (it, short) = self.collect_iter();
                let map = self.inline_map(&it, false);
                (Init::Push(it, Some(map)), short)
            }
        };
        let v = self.fresh(Kind::Buffer { short });
        self.scope.push(v);
        let array = is_array(v, &init);
        // A copy of a `Vec` or of a view is a `Vec`; of an array, an array.
        let vec = match &init {
            Init::Clone(Buf::Local(w)) => {
                self.vecs.contains(w) || matches!(self.vars[*w], Kind::Slice { .. })
            }
            _ => !array,
        };
        if vec {
            self.vecs.push(v);
        }
        let made = Stmt::Buffer(v, init);
        // The bounds of its elements, for the writes that follow (those of
        // the whole group are computed again by `checked`).
        let worst = self.bounds.worst;
        self.bounds.stmt(&made, &self.vars);
        self.bounds.worst = worst;
        let mut out = vec![made];
        // Half the arrays are copied whole (`let mut w = v;`), and one of
        // the two is written: Rust copies, so the other keeps its values.
        let mut written = v;
        if array && self.rng.chance(0.5) {
            let w = self.fresh(Kind::Buffer { short: true });
            self.scope.push(w);
            let copy = Stmt::Buffer(w, Init::Clone(Buf::Local(v)));
            let worst = self.bounds.worst;
            self.bounds.stmt(&copy, &self.vars);
            self.bounds.worst = worst;
            out.push(copy);
            if self.rng.chance(0.5) {
                written = w;
            }
        }
        for _ in 0..self.rng.weighted(&[4, 4, 2]) {
            let write = self.store_into(written);
            let worst = self.bounds.worst;
            self.bounds.stmt(&write, &self.vars);
            self.bounds.worst = worst;
            out.push(write);
        }
        // Sometimes moved into a `Vec` of the same length made before the
        // block, as double buffering does (`cur = next;`).
        if vec && self.rng.chance(MOVES) {
            let short = self.short(Buf::Local(v));
            let targets: Vec<Var> = self
                .writable()
                .into_iter()
                .filter(|&t| t != v && self.vecs.contains(&t) && self.short(Buf::Local(t)) == short)
                .filter(|t| self.scope.iter().position(|s| s == t).unwrap_or(0) < self.outer)
                .collect();
            if !targets.is_empty() {
                let target = self.rng.pick(&targets);
                let how = self
                    .rng
                    .pick(&[Move::Clone, Move::Clone, Move::CopyFrom, Move::Swap]);
                let moved = Stmt::Move(target, v, how);
                let worst = self.bounds.worst;
                self.bounds.stmt(&moved, &self.vars);
                self.bounds.worst = worst;
                out.push(moved);
            }
        }
        out
    }

    /// The buffers a temporary may copy: the local `Vec`s in scope (not a
    /// view: see the module documentation).
    fn copyable(&self) -> Vec<Buf> {
        let mut out: Vec<Buf> = self.buffers().into_iter().map(Buf::Local).collect();
        // Views of exactly 3 elements too: a sub-slice, a window or a chunk.
        let views = self.visible(|k| matches!(k, Kind::Slice { min: 3, max: 3 }));
        out.extend(views.into_iter().map(Buf::Local));
        out
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

    /// The body of a loop, with `bound` variables in scope (the indices
    /// among them with their `ranges`).
    fn loop_body(&mut self, bound: &[Var], ranges: &[(Var, Range)], iterated: &[Buf]) -> Vec<Stmt> {
        self.loop_body_of(bound, ranges, iterated, false)
    }

    /// The body of a loop, as [`Builder::loop_body`]; if `single`, one
    /// buffer write (the body of a `for_each`: the macro rejects closures
    /// that assign a variable they capture, by design, but not writes
    /// into a captured buffer).
    fn loop_body_of(
        &mut self,
        bound: &[Var],
        ranges: &[(Var, Range)],
        iterated: &[Buf],
        single: bool,
    ) -> Vec<Stmt> {
        self.nested(|b| {
            b.scope.extend_from_slice(bound);
            b.ranges.extend_from_slice(ranges);
            let before = b.iterated.len();
            b.iterated.extend(iterated.iter().filter_map(|x| match x {
                Buf::Local(v) => Some(*v),
                Buf::Xs => None,
            }));
            b.loops += 1;
            let body = if single {
                b.checked(&mut |b: &mut Builder<'c>| {
                    if b.writable().is_empty() {
                        Vec::new()
                    } else {
                        vec![b.store()]
                    }
                })
            } else {
                let count = 1 + b.rng.below(3);
                b.block(count)
            };
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
            12,
            if buffers_on { 9 } else { 0 },
            3,
            3 * u32::from(has_locals),
            if buffers_on { 6 } else { 0 },
            if buffers_on { 6 } else { 0 },
            if has_locals { 18 } else { 0 },
            if !buffers_on {
                1
            } else if self.writable().is_empty() {
                4
            } else {
                7
            },
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
                let body = self.loop_body(&[i], &[(i, range)], &[]);
                Stmt::For(Loop::Range(i, end), body)
            }
            4 | 5 => {
                let b = self.pick_buf(false);
                let e = self.elem();
                if kind == 4 {
                    let body = self.loop_body(&[e], &[], &[b]);
                    Stmt::For(Loop::Iter(b, e), body)
                } else {
                    let i = self.fresh(Kind::Index);
                    let range = len_range(b, &self.vars);
                    let body = self.loop_body(&[i, e], &[(i, range)], &[b]);
                    Stmt::For(Loop::Enumerate(b, i, e), body)
                }
            }
            7 => self.chain_loop(),
            _ => {
                let other = Buf::Local(self.rng.pick(&locals));
                let (b, c) = if self.rng.chance(0.5) {
                    (Buf::Xs, other)
                } else {
                    (other, Buf::Xs)
                };
                let (e, f) = (self.elem(), self.elem());
                let body = self.loop_body(&[e, f], &[], &[b, c]);
                Stmt::For(Loop::Zip(b, c, e, f), body)
            }
        };
        out.push(stmt);
        out
    }

    /// A source iterator, maybe with adapters of its own inside: a buffer's
    /// elements, two zipped, windows, an enumeration, chunks or a range.
    fn source(&mut self) -> Iter {
        let buffers = u32::from(self.config.buffers);
        let loops = u32::from(self.config.loops);
        match self.rng.weighted(&[
            5 * buffers,
            4 * buffers,
            2 * buffers,
            2 * buffers,
            buffers,
            2 * loops + u32::from(buffers == 0),
        ]) {
            0 => Iter::Elems(self.pick_buf(false)),
            1 => {
                let b = self.pick_buf(false);
                let first = self.adapted(Iter::Elems(b), 0.2);
                let (second, bare) = match self.rng.weighted(&[4, 5, 1, 1]) {
                    0 => {
                        let c = if self.rng.chance(0.5) {
                            b
                        } else {
                            self.pick_buf(false)
                        };
                        (Iter::Elems(c), self.rng.chance(0.5))
                    }
                    1 => {
                        let c = if self.rng.chance(0.7) {
                            b
                        } else {
                            self.pick_buf(false)
                        };
                        let k = 1 + usize::from(self.rng.chance(0.2));
                        (Iter::Adapt(Box::new(Iter::Elems(c)), Adapt::Skip(k)), false)
                    }
                    2 => (Iter::Windows(self.pick_buf(false), 2), false),
                    _ => (Iter::Range(self.range_end()), false),
                };
                Iter::Zip(Box::new(first), Box::new(second), bare)
            }
            2 => {
                let k = if self.rng.chance(0.75) { 2 } else { 3 };
                Iter::Windows(self.pick_buf(false), k)
            }
            3 => {
                let b = self.pick_buf(false);
                let inner = self.adapted(Iter::Elems(b), 0.2);
                Iter::Enumerate(Box::new(inner))
            }
            4 => {
                let k = if self.rng.chance(0.6) { 2 } else { 3 };
                Iter::Chunks(self.pick_buf(false), k, self.rng.chance(0.4))
            }
            _ => Iter::Range(self.range_end()),
        }
    }

    /// The end of a range: `n`, `3`, or a length.
    fn range_end(&mut self) -> IntExpr {
        match self
            .rng
            .weighted(&[3, 1, if self.config.buffers { 3 } else { 0 }])
        {
            0 => IntExpr::N,
            1 => IntExpr::Lit(3),
            _ => IntExpr::Len(self.pick_buf(false)),
        }
    }

    /// `it`, with probability `p` under one adapter (or two).
    fn adapted(&mut self, it: Iter, p: f64) -> Iter {
        let mut it = it;
        if !self.rng.chance(p) {
            return it;
        }
        let count = 1 + usize::from(self.rng.chance(0.3));
        for _ in 0..count {
            let a = match self.rng.weighted(&[3, 3, 2, 2]) {
                0 => Adapt::Rev,
                1 => Adapt::Skip(1 + usize::from(self.rng.chance(0.3))),
                2 => Adapt::Take(2 + usize::from(self.rng.chance(0.5))),
                _ => Adapt::StepBy(2 + usize::from(self.rng.chance(0.3))),
            };
            if a == Adapt::Rev && !double_ended(&it) {
                continue;
            }
            it = Iter::Adapt(Box::new(it), a);
        }
        it
    }

    /// `it`, with probability `p` filtered (and then maybe reversed): the
    /// test compares a float of the item with a literal or a parameter, or
    /// an index with a literal.
    fn filter(&mut self, it: Iter, p: f64) -> Iter {
        let ty = item_ty(&it, &self.vars);
        if !self.rng.chance(p) {
            return it;
        }
        let pat = self.pattern(&ty);
        let mut vars = Vec::new();
        pat_vars(&pat, &mut vars);
        let floats: Vec<Var> = vars
            .iter()
            .copied()
            .filter(|&v| matches!(self.vars[v], Kind::Elem { .. }))
            .collect();
        let ints: Vec<Var> = vars
            .iter()
            .copied()
            .filter(|&v| self.vars[v] == Kind::Index)
            .collect();
        let cond = if !floats.is_empty() && (ints.is_empty() || self.rng.chance(0.7)) {
            let x = Expr::Var(self.rng.pick(&floats));
            let y = if self.rng.chance(0.3) {
                Expr::Param(self.rng.below(3))
            } else {
                Expr::Const(self.rng.pick(&[0.0, 0.25, -0.25, 0.5, -0.5]))
            };
            if self.rng.chance(0.5) {
                Cond::Greater(x, y)
            } else {
                Cond::Less(x, y)
            }
        } else if !ints.is_empty() {
            let i = IntExpr::Var(self.rng.pick(&ints));
            match self.rng.below(3) {
                0 => Cond::Int(
                    IntCmp::Eq,
                    IntExpr::Rem(Box::new(i), Box::new(IntExpr::Lit(2))),
                    IntExpr::Lit(self.rng.below(2)),
                ),
                1 => Cond::Int(IntCmp::Gt, i, IntExpr::Lit(self.rng.below(2))),
                _ => Cond::Int(IntCmp::Lt, i, IntExpr::Lit(2 + self.rng.below(2))),
            }
        } else {
            return it;
        };
        let it = Iter::Filter(Box::new(it), pat, cond);
        if self.rng.chance(0.2) && double_ended(&it) {
            Iter::Adapt(Box::new(it), Adapt::Rev)
        } else {
            it
        }
    }

    /// A fresh pattern for items of type `ty` (not yet in scope).
    fn pattern(&mut self, ty: &Ty) -> Pat {
        match ty {
            Ty::Ref => Pat::Var(self.elem()),
            Ty::Val => Pat::Var(self.fresh(Kind::Elem {
                by_ref: false,
                bare: false,
            })),
            Ty::Int(_) => Pat::Var(self.fresh(Kind::Index)),
            Ty::View(min, max) => Pat::Var(self.fresh(Kind::Slice {
                min: *min,
                max: *max,
            })),
            Ty::Pair(a, b) => Pat::Pair(Box::new(self.pattern(a)), Box::new(self.pattern(b))),
        }
    }

    /// Brings the variables of `pat` into scope, with the ranges of its
    /// indices and the bounds of `items`.
    fn enter(&mut self, pat: &Pat, ty: &Ty, items: &Items) {
        enter_pat(pat, ty, &mut self.scope, &mut self.ranges);
        self.bounds.bind(pat, items);
    }

    /// The bounds of the items of `it`, after `map` if there is one.
    fn items(&mut self, it: &Iter, map: Option<&Map>) -> Items {
        let worst = self.bounds.worst;
        let items = self.bounds.mapped(it, map, &self.vars);
        self.bounds.worst = worst;
        items
    }

    /// Leaves reading the variables of `pat`: floats, indices as `f64`,
    /// elements and sums of views.
    fn pat_leaves(&mut self, pat: &Pat, out: &mut Vec<Expr>) {
        let mut vars = Vec::new();
        pat_vars(pat, &mut vars);
        for v in vars {
            match self.vars[v] {
                Kind::Elem { .. } => out.push(Expr::Var(v)),
                Kind::Index => out.push(Expr::Cast(IntExpr::Var(v))),
                Kind::Slice { min, .. } => {
                    for j in 0..min.min(3) {
                        out.push(Expr::Index(Buf::Local(v), IntExpr::Lit(j)));
                    }
                    if min < 3 || self.rng.chance(0.3) {
                        out.push(Expr::Reduce(Buf::Local(v), Reduction::Sum));
                    }
                }
                _ => {}
            }
        }
    }

    /// A float expression of an item bound by `pat` (already in scope)
    /// and of anything else in scope: the body of a `map`.
    fn item_expr(&mut self, pat: &Pat, depth: usize) -> Expr {
        let mut leaves = Vec::new();
        self.pat_leaves(pat, &mut leaves);
        let core = match leaves.len() {
            0 => self.typed(depth),
            1 => leaves[0].clone(),
            _ => {
                let a = self.rng.below(leaves.len());
                let mut b = self.rng.below(leaves.len() - 1);
                if b >= a {
                    b += 1;
                }
                let (x, y) = (leaves[a].clone(), leaves[b].clone());
                match self.rng.weighted(&[3, 3, 4]) {
                    0 => add(x, y),
                    1 => Expr::Bin(Bin::Sub, Box::new(x), Box::new(y)),
                    _ => mul(self.tame(x, 8.0), self.tame(y, 8.0)),
                }
            }
        };
        let e = match self.rng.weighted(&[2, 5, 2, 1]) {
            0 => core,
            1 => {
                let other = self.expr(depth.saturating_sub(1));
                match self.rng.weighted(&[3, 2, 3]) {
                    0 => add(core, other),
                    1 => Expr::Bin(Bin::Sub, Box::new(core), Box::new(other)),
                    _ => mul(self.tame(core, 8.0), self.tame(other, 8.0)),
                }
            }
            2 => {
                let f = self.rng.pick(&[
                    Unary::Sin,
                    Unary::Cos,
                    Unary::Tanh,
                    Unary::Square,
                    Unary::Abs,
                    Unary::ExpTanh,
                    Unary::SqrtSq,
                ]);
                let core = self.tame(core, 4.0);
                Expr::Unary(f, Box::new(core))
            }
            _ => {
                let other = self.expr(depth);
                if expr_reads_any(&other, pat) {
                    other
                } else {
                    add(core, other)
                }
            }
        };
        self.tame(e, 30.0)
    }

    /// The next value of an accumulator `x` given a value `e`, in forms that
    /// stay bounded over the trips (as [`Builder::assign`] makes them).
    fn update(&mut self, x: Expr, e: Expr) -> Expr {
        match self.rng.weighted(&[4, 2, 2, 2, 2, 1, 1]) {
            0 => add(x, self.small_of(e)),
            1 => Expr::Bin(Bin::Sub, Box::new(self.small_of(e)), Box::new(x)),
            2 => {
                let c = self.rng.pick(&[0.5, 0.75, -0.5]);
                add(mul(x, Expr::Const(c)), self.small_of(e))
            }
            3 => {
                let f = if self.rng.chance(0.5) {
                    Binary::Max
                } else {
                    Binary::Min
                };
                Expr::Binary(f, Box::new(x), Box::new(self.small_of(e)))
            }
            4 => Expr::Unary(Unary::Tanh, Box::new(mul(x, e))),
            5 => {
                let f = self.rng.pick(&[Unary::Cos, Unary::Tanh, Unary::Sin]);
                mul(x, Expr::Unary(f, Box::new(e)))
            }
            _ => Expr::Unary(Unary::Sin, Box::new(add(x, e))),
        }
    }

    /// A chain consumed into one float: a source, adapters, maybe a
    /// `filter`, maybe a `map`, and `sum`, `product`, `count`, `fold` or a
    /// running maximum or minimum.
    /// `named`: preferably over elements, mapped by a closure in scope.
    fn chain(&mut self, named: bool) -> Chain {
        let d = self.config.max_depth.saturating_sub(1).max(1);
        let named = named && self.config.buffers;
        let it = if named {
            Iter::Elems(self.pick_buf(false))
        } else {
            self.source()
        };
        let mut it = self.adapted(it, 0.35);
        // `a.chain(b)` of two chains of `&f64` items, before the filter.
        if !named && item_ty(&it, &self.vars) == Ty::Ref && self.rng.chance(0.5) {
            let other = Iter::Elems(self.pick_buf(false));
            let other = self.adapted(other, 0.3);
            let bare = matches!(other, Iter::Elems(_)) && self.rng.chance(0.5);
            it = Iter::Chain(Box::new(it), Box::new(other), bare);
            // Counted across the parts: `skip`, `take`, `enumerate`.
            if self.rng.chance(0.3) {
                let a = if self.rng.chance(0.5) {
                    Adapt::Skip(1 + self.rng.below(6))
                } else {
                    Adapt::Take(2 + self.rng.below(6))
                };
                it = Iter::Adapt(Box::new(it), a);
            }
            if self.rng.chance(0.2) {
                it = Iter::Enumerate(Box::new(it));
            }
        }
        let it = self.filter(it, 0.2);
        let ty = item_ty(&it, &self.vars);
        let float = matches!(ty, Ty::Ref | Ty::Val);
        let consume = if named {
            self.rng.pick(&[0, 0, 4])
        } else {
            self.rng.weighted(&[7, 1, 2, 3, 2, 4])
        };
        let mut chain = Chain {
            iter: it,
            map: None,
            consume: Consume::Sum,
        };
        match consume {
            0 | 1 => {
                if !float || named || self.rng.chance(0.75) {
                    chain.map = Some(self.map(&mut chain.iter, consume == 1, named));
                }
                if consume == 1 {
                    chain.consume = Consume::Product;
                }
            }
            2 => chain.consume = Consume::Count,
            3 => {
                if self.rng.chance(0.15) {
                    chain.map = Some(self.map(&mut chain.iter, false, false));
                }
                let ty = mapped_ty(&chain, &self.vars);
                let init = if self.rng.chance(0.6) {
                    Expr::Const(self.rng.pick(&[0.0, 0.0, 1.0, 0.5, -0.5]))
                } else {
                    self.small(1)
                };
                let acc = self.fresh(Kind::Elem {
                    by_ref: false,
                    bare: false,
                });
                let pat = self.pattern(&ty);
                let (scope, ranges) = (self.scope.len(), self.ranges.len());
                self.scope.push(acc);
                let items = self.items(&chain.iter, chain.map.as_ref());
                self.enter(&pat, &ty, &items);
                let b = self.bound(&init).max(4.0);
                self.bounds.set(acc, 5.0 * b);
                let e = self.item_expr(&pat, d);
                let body = self.update(Expr::Var(acc), e);
                self.scope.truncate(scope);
                self.ranges.truncate(ranges);
                chain.consume = Consume::Fold(init, acc, pat, body);
            }
            // The first (or last) item, `find` when a filter chose it.
            5 => {
                if float && !matches!(chain.iter, Iter::Filter(..)) {
                    chain.iter = self.filter(chain.iter, 0.6);
                }
                let found = float && matches!(chain.iter, Iter::Filter(..));
                if !float || (!found && self.rng.chance(0.3)) {
                    chain.map = Some(self.map(&mut chain.iter, false, false));
                }
                chain.consume = Consume::First {
                    last: self.rng.chance(0.35),
                    default: self.rng.pick(&[0.0, 0.5, -1.5]),
                };
            }
            _ => {
                if !float || named || self.rng.chance(0.5) {
                    chain.map = Some(self.map(&mut chain.iter, false, named));
                } else if ty == Ty::Ref {
                    chain.iter = copied(chain.iter);
                }
                let f = if self.rng.chance(0.6) {
                    Binary::Max
                } else {
                    Binary::Min
                };
                let init = if count(&chain.iter, &self.vars).0 > 0 && self.rng.chance(0.8) {
                    None
                } else {
                    Some(self.rng.pick(&[0.0, 0.5, -0.5, -1.5, 1.5]))
                };
                chain.consume = Consume::Extremum(f, init);
            }
        }
        chain
    }

    /// A fold with a pair of accumulators (a sum and a sum of squares, or
    /// any two updates).
    fn pair_fold(&mut self) -> PairFold {
        let d = self.config.max_depth.saturating_sub(1).max(1);
        let it = self.source();
        let it = self.adapted(it, 0.3);
        let it = self.filter(it, 0.15);
        let ty = item_ty(&it, &self.vars);
        let init = [0, 1].map(|_| {
            if self.rng.chance(0.7) {
                Expr::Const(self.rng.pick(&[0.0, 0.0, 1.0, 0.5]))
            } else {
                self.small(1)
            }
        });
        let elem = Kind::Elem {
            by_ref: false,
            bare: false,
        };
        let acc = [self.fresh(elem), self.fresh(elem)];
        let pat = self.pattern(&ty);
        let (scope, ranges) = (self.scope.len(), self.ranges.len());
        self.scope.extend(acc);
        let items = self.items(&it, None);
        self.enter(&pat, &ty, &items);
        for (v, e) in acc.iter().zip(&init) {
            let b = self.bound(e).max(4.0);
            self.bounds.set(*v, 5.0 * b);
        }
        let body = [0, 1].map(|k| {
            let e = self.item_expr(&pat, d);
            let e = if k == 1 && self.rng.chance(0.3) {
                Expr::Unary(Unary::Square, Box::new(self.tame(e, 4.0)))
            } else {
                e
            };
            self.update(Expr::Var(acc[k]), e)
        });
        self.scope.truncate(scope);
        self.ranges.truncate(ranges);
        PairFold {
            iter: it,
            init,
            acc,
            pat,
            body,
        }
    }

    /// The `map` of a chain over `it`: inline, or a closure in scope (then
    /// of `f64` items: `it` gets `.copied()` if need be; always if `named`
    /// and it can). For a `product` (`factor`), the values are at most 1 in
    /// magnitude.
    fn map(&mut self, it: &mut Iter, factor: bool, named: bool) -> Map {
        let ty = item_ty(it, &self.vars);
        let closures = self.visible(|k| k == Kind::Closure);
        let items = self.items(it, None);
        if matches!(ty, Ty::Ref | Ty::Val)
            && !closures.is_empty()
            && !factor
            && items.float() <= ARG_LIMIT
            && (named || self.rng.chance(0.3))
        {
            if ty == Ty::Ref {
                *it = copied(it.clone());
            }
            return Map::Named(self.rng.pick(&closures));
        }
        self.inline_map(it, factor)
    }

    /// `.map(|PAT| body)` of the items of `it`, as [`Builder::map`] makes
    /// it when it does not name a closure.
    fn inline_map(&mut self, it: &Iter, factor: bool) -> Map {
        let ty = item_ty(it, &self.vars);
        let items = self.items(it, None);
        let d = self.config.max_depth.saturating_sub(1).max(1);
        let pat = self.pattern(&ty);
        let (scope, ranges) = (self.scope.len(), self.ranges.len());
        self.enter(&pat, &ty, &items);
        let mut body = self.item_expr(&pat, d);
        if factor && self.bound(&body) > 1.0 {
            let f = self.rng.pick(&[Unary::Cos, Unary::Tanh, Unary::Sin]);
            body = Expr::Unary(f, Box::new(body));
        }
        self.scope.truncate(scope);
        self.ranges.truncate(ranges);
        Map::Inline(pat, body)
    }

    /// `for PAT in ITER { … }` over a chain (or `ITER.for_each(|PAT| …)`).
    fn chain_loop(&mut self) -> Stmt {
        let it = self.source();
        let trivial = matches!(it, Iter::Range(_) | Iter::Elems(_));
        let it = self.adapted(it, if trivial { 1.0 } else { 0.5 });
        let it = self.filter(it, 0.15);
        let ty = item_ty(&it, &self.vars);
        let pat = self.pattern(&ty);
        let (scope, ranges) = (self.scope.len(), self.ranges.len());
        let items = self.items(&it, None);
        self.enter(&pat, &ty, &items);
        let bound = self.scope[scope..].to_vec();
        let indices = self.ranges[ranges..].to_vec();
        self.scope.truncate(scope);
        self.ranges.truncate(ranges);
        let mut vecs = Vec::new();
        iter_vecs(&it, &self.vars, &mut vecs);
        let iterated: Vec<Buf> = vecs.into_iter().map(Buf::Local).collect();
        let vecs = self.writable();
        let single =
            vecs.iter().any(|v| !iterated.contains(&Buf::Local(*v))) && self.rng.chance(0.8);
        let body = self.loop_body_of(&bound, &indices, &iterated, single);
        let for_each =
            matches!(body.as_slice(), [Stmt::Store(..)]) && (single || self.rng.chance(0.3));
        Stmt::For(Loop::Chain(it, pat, for_each), body)
    }

    /// A local buffer collected from a chain of exactly 3 or `xs.len()`
    /// items; whether it has 3.
    fn collect(&mut self) -> (Init, bool) {
        let (mut it, short) = self.collect_iter();
        let map = if item_ty(&it, &self.vars) == Ty::Ref && self.rng.chance(0.2) {
            it = copied(it);
            None
        } else {
            Some(self.map(&mut it, false, false))
        };
        (Init::Collect(it, map), short)
    }

    /// The items of a collected buffer: exactly 3 or `xs.len()` of them;
    /// whether 3.
    fn collect_iter(&mut self) -> (Iter, bool) {
        let vecs = self.buffers();
        let b = if vecs.is_empty() || self.rng.chance(0.5) {
            Buf::Xs
        } else {
            Buf::Local(self.rng.pick(&vecs))
        };
        let mut it = match self
            .rng
            .weighted(&[5, 2, if self.config.loops { 2 } else { 0 }, 2, 1])
        {
            0 => Iter::Elems(b),
            1 => Iter::Enumerate(Box::new(Iter::Elems(b))),
            2 => Iter::Range(if self.rng.chance(0.7) {
                IntExpr::Len(Buf::Xs)
            } else {
                IntExpr::Lit(3)
            }),
            3 => {
                let c = if self.short(b) {
                    b
                } else {
                    self.rng.pick(&[Buf::Xs, b])
                };
                Iter::Zip(
                    Box::new(Iter::Elems(b)),
                    Box::new(Iter::Elems(c)),
                    self.rng.chance(0.5),
                )
            }
            _ => Iter::Adapt(Box::new(Iter::Elems(b)), Adapt::Take(3)),
        };
        if self.rng.chance(0.25) && double_ended(&it) {
            it = Iter::Adapt(Box::new(it), Adapt::Rev);
        }
        let short = count(&it, &self.vars) == (3, 3);
        (it, short)
    }

    /// `let f = |t: f64| body;` (or `… (body, body)` if `pair`), now in
    /// scope.
    fn closure(&mut self, pair: bool) -> Stmt {
        let t = self.fresh(Kind::Elem {
            by_ref: false,
            bare: false,
        });
        let scope = self.scope.len();
        self.scope.push(t);
        self.bounds.set(t, ARG_LIMIT);
        self.closure += 1;
        let bodies = (0..1 + usize::from(pair))
            .map(|_| self.closure_body(t))
            .collect();
        self.closure -= 1;
        self.scope.truncate(scope);
        let f = self.fresh(if pair {
            Kind::PairClosure
        } else {
            Kind::Closure
        });
        self.scope.push(f);
        Stmt::Closure(f, t, bodies)
    }

    /// The body of a closure of parameter `t` (in scope): it reads `t`,
    /// maybe a variable.
    fn closure_body(&mut self, t: Var) -> Expr {
        let d = self.config.max_depth.saturating_sub(1).max(1);
        let mut e = self.expr(d);
        let floats = self.visible(|k| k == Kind::Float);
        if !floats.is_empty() && self.rng.chance(0.4) {
            let x = Expr::Var(self.rng.pick(&floats[floats.len().saturating_sub(3)..]));
            e = if self.rng.chance(0.5) {
                add(e, x)
            } else {
                mul(self.tame(e, 8.0), self.tame(x, 8.0))
            };
        }
        if expr_reads_var(&e, t) {
            e
        } else {
            match self.rng.weighted(&[3, 2, 2]) {
                0 => add(Expr::Var(t), e),
                1 => mul(Expr::Var(t), self.tame(e, 8.0)),
                _ => Expr::Unary(
                    self.rng.pick(&[Unary::Sin, Unary::Tanh, Unary::Cos]),
                    Box::new(mul(Expr::Var(t), self.tame(e, 4.0))),
                ),
            }
        }
    }

    /// `let s = &xs[a..b];` or `let (s, t) = xs.split_at(k);`, now in scope.
    fn slice(&mut self) -> Stmt {
        let mod3 = || IntExpr::Rem(Box::new(IntExpr::N), Box::new(IntExpr::Lit(3)));
        let len_minus =
            |k| IntExpr::Sub(Box::new(IntExpr::Len(Buf::Xs)), Box::new(IntExpr::Lit(k)));
        if self.rng.chance(0.35) {
            let k = match self.rng.weighted(&[3, 3, 1, 1]) {
                0 => IntExpr::Lit(1),
                1 => IntExpr::Lit(2),
                2 => mod3(),
                _ => len_minus(1),
            };
            let (a, b) = (
                slice_len(&IntExpr::Lit(0), Some(&k), false),
                slice_len(&k, None, false),
            );
            let ((amin, amax), (bmin, bmax)) = (a.unwrap_or((0, 0)), b.unwrap_or((0, 0)));
            let s = self.fresh(Kind::Slice {
                min: amin,
                max: amax,
            });
            let t = self.fresh(Kind::Slice {
                min: bmin,
                max: bmax,
            });
            self.scope.extend([s, t]);
            return Stmt::Split(s, t, k);
        }
        let (start, end, inclusive) = match self.rng.weighted(&[4, 3, 2, 2, 1]) {
            0 => (IntExpr::Lit(1 + self.rng.below(2)), None, false),
            1 => (
                IntExpr::Lit(0),
                Some(IntExpr::Lit(2 + self.rng.below(2))),
                false,
            ),
            2 => {
                let inclusive = self.rng.chance(0.5);
                let end = if inclusive { 2 } else { 2 + self.rng.below(2) };
                (IntExpr::Lit(1), Some(IntExpr::Lit(end)), inclusive)
            }
            3 => (IntExpr::Lit(1), Some(len_minus(1)), false),
            _ => (mod3(), None, false),
        };
        let (min, max) = slice_len(&start, end.as_ref(), inclusive).unwrap_or((0, 0));
        let s = self.fresh(Kind::Slice { min, max });
        self.scope.push(s);
        Stmt::Slice(s, start, end, inclusive)
    }

    /// An assertion that always holds: of lengths, or that a value is
    /// finite or bounded.
    fn check(&mut self) -> Check {
        // No `*e` of an element by reference in an assertion: the macro's
        // expansion runs it where `e` is an `f64` (reported, E0614). Nor a
        // closure call: the macro rejects naming a closure in a macro (by
        // design).
        let floats = self.visible(|k| matches!(k, Kind::Float | Kind::Elem { by_ref: false, .. }));
        let buffers = self.config.buffers;
        let fulls = self.visible(|k| k == Kind::Buffer { short: false });
        match self.rng.weighted(&[
            if buffers { 2 } else { 0 },
            if buffers { 2 } else { 0 },
            2,
            if floats.is_empty() { 0 } else { 3 },
        ]) {
            0 => {
                let b = self.pick_buf(true);
                let (min, _) = buf_len(b, &self.vars);
                Check::MinLen(b, self.rng.below(min.max(1)) + 1)
            }
            1 => {
                // Two lengths equal for every input, never of one buffer.
                let b = self.pick_buf(false);
                let (min, max) = buf_len(b, &self.vars);
                let others: Vec<Buf> = [Buf::Xs]
                    .into_iter()
                    .chain(fulls.iter().map(|&v| Buf::Local(v)))
                    .filter(|&c| c != b)
                    .collect();
                let other = if full(b, &self.vars) && !others.is_empty() {
                    IntExpr::Len(self.rng.pick(&others))
                } else if min == max {
                    IntExpr::Lit(min)
                } else {
                    return Check::MinLen(Buf::Xs, 3);
                };
                let (x, y) = if self.rng.chance(0.5) {
                    (IntExpr::Len(b), other)
                } else {
                    (other, IntExpr::Len(b))
                };
                Check::SameLen(x, y, self.rng.chance(0.3))
            }
            2 => {
                let e = self.typed(1);
                let e = if calls(&e) {
                    Expr::Param(self.rng.below(3))
                } else {
                    e
                };
                Check::Finite(e, self.rng.chance(0.6))
            }
            _ => Check::Bounded(Expr::Var(self.rng.pick(&floats)), self.rng.below(3)),
        }
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
        let body = self.loop_body(&[k], &[], &[]);
        out.push(Stmt::While(k, bound, body));
        out
    }

    /// At the end of a nested block: `outer += v` (or a buffer write) for a
    /// local `v` nothing read, so that it matters.
    fn carry(&mut self, v: Var) -> Vec<Stmt> {
        let value = self.small_of(Expr::Var(v));
        self.carry_value(value)
    }

    /// At the end of a nested block: a read of its temporary buffer `v`
    /// (its sum, an element, or a chain over it) carried out of the block
    /// as [`Builder::carry`] carries a float.
    fn carry_buffer(&mut self, v: Var) -> Vec<Stmt> {
        let b = Buf::Local(v);
        let read = match self.rng.weighted(&[3, 3, 2]) {
            0 => Expr::Reduce(b, Reduction::Sum),
            1 => Expr::Index(b, self.index_for(b)),
            _ => Expr::Chain(Box::new(self.chain_over(b))),
        };
        let value = self.small_of(read);
        // Preferably into a variable of the top level, which the final
        // expression reads: one of an enclosing block may be dead after it.
        let top: Vec<Var> = self.scope[..self.body]
            .iter()
            .copied()
            .filter(|&x| self.vars[x] == Kind::Float)
            .collect();
        if !top.is_empty() && self.rng.chance(0.8) {
            let x = self.rng.pick(&top);
            let op = if self.rng.chance(0.7) {
                Op::Add
            } else {
                Op::Sub
            };
            return vec![Stmt::Assign(x, op, value)];
        }
        self.carry_value(value)
    }

    /// Whether a nested block has somewhere to carry its values: a float
    /// variable or a writable buffer from outside it.
    fn can_carry(&self) -> bool {
        self.scope[..self.outer].iter().any(|&v| {
            self.vars[v] == Kind::Float
                || (matches!(self.vars[v], Kind::Buffer { .. }) && !self.iterated.contains(&v))
        })
    }

    /// A chain over the buffer `b` (its elements, enumerated, or zipped
    /// with `xs` or with itself shifted), mapped and summed, or its
    /// running maximum or minimum.
    fn chain_over(&mut self, b: Buf) -> Chain {
        let it = match self.rng.weighted(&[3, 2, 2]) {
            0 => Iter::Elems(b),
            1 => Iter::Enumerate(Box::new(Iter::Elems(b))),
            _ => {
                let other = if self.rng.chance(0.5) {
                    Iter::Elems(Buf::Xs)
                } else {
                    Iter::Adapt(Box::new(Iter::Elems(b)), Adapt::Skip(1))
                };
                Iter::Zip(Box::new(Iter::Elems(b)), Box::new(other), false)
            }
        };
        let mut it = self.adapted(it, 0.2);
        if item_ty(&it, &self.vars) == Ty::Ref && self.rng.chance(0.3) {
            let f = if self.rng.chance(0.5) {
                Binary::Max
            } else {
                Binary::Min
            };
            let init = if count(&it, &self.vars).0 > 0 {
                None
            } else {
                Some(0.0)
            };
            return Chain {
                iter: copied(it),
                map: None,
                consume: Consume::Extremum(f, init),
            };
        }
        let map = Some(self.map(&mut it, false, false));
        Chain {
            iter: it,
            map,
            consume: Consume::Sum,
        }
    }

    /// `outer += value` (or `-=`, or a write into a buffer from outside the
    /// block): a value of a nested block carried out of it.
    fn carry_value(&mut self, value: Expr) -> Vec<Stmt> {
        let outer: Vec<Var> = self.scope[..self.outer]
            .iter()
            .copied()
            .filter(|&x| self.vars[x] == Kind::Float)
            .collect();
        if !outer.is_empty() && self.rng.chance(0.8) {
            let x = self.rng.pick(&outer);
            let op = if self.rng.chance(0.7) {
                Op::Add
            } else {
                Op::Sub
            };
            return vec![Stmt::Assign(x, op, value)];
        }
        let mut writable = self.writable();
        writable.retain(|v| self.scope[..self.outer].contains(v));
        if writable.is_empty() {
            return Vec::new();
        }
        let b = self.rng.pick(&writable);
        let index = self.index_for(Buf::Local(b));
        vec![Stmt::Store(b, index, Op::Add, value)]
    }

    /// A buffer to read: `xs`, or a local one (a `Vec`, but not in a
    /// closure; or a slice, one not empty if it is to be indexed).
    fn pick_buf(&mut self, index: bool) -> Buf {
        let closure = self.closure > 0;
        let locals = self.visible(|k| match k {
            Kind::Buffer { .. } => !closure,
            Kind::Slice { min, .. } => !index || min > 0,
            _ => false,
        });
        if locals.is_empty() || self.rng.chance(0.4) {
            Buf::Xs
        } else {
            let recent = &locals[locals.len().saturating_sub(2)..];
            if self.rng.chance(0.3) {
                Buf::Local(self.rng.pick(recent))
            } else {
                Buf::Local(self.rng.pick(&locals))
            }
        }
    }

    /// An index into `b` (not empty), in bounds for every input: a loop
    /// index whose range fits `b`, another index reduced `% len`, a literal
    /// below its length, or `xs.len() - 1` (`s.len() - 1` for a slice).
    fn index_for(&mut self, b: Buf) -> IntExpr {
        let short = self.short(b);
        let (min, _) = buf_len(b, &self.vars);
        let whole = full(b, &self.vars);
        let len = if short {
            IntExpr::Lit(3)
        } else if whole {
            IntExpr::Len(Buf::Xs)
        } else {
            IntExpr::Len(b)
        };
        let direct: Vec<Var> = self
            .ranges
            .iter()
            .filter(|(_, r)| (*r == Range::Three && min >= 3) || (*r == Range::Len && whole))
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
            2 => IntExpr::Lit(self.rng.below(min.clamp(1, 3))),
            _ => {
                let len = if whole { Buf::Xs } else { b };
                IntExpr::Sub(Box::new(IntExpr::Len(len)), Box::new(IntExpr::Lit(1)))
            }
        }
    }

    /// A float expression at most `depth` deep, its bound kept moderate
    /// (large subexpressions go through `tanh`).
    fn expr(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(0.2) {
            return self.leaf(true);
        }
        let d = depth - 1;
        let closures = self.visible(|k| k == Kind::Closure);
        let e =
            match self
                .rng
                .weighted(&[8, 4, 1, 8, 2, 3, 1, if closures.is_empty() { 0 } else { 5 }])
            {
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
                    let f = self.rng.pick(&[
                        Binary::Max,
                        Binary::Min,
                        Binary::Hypot,
                        Binary::Atan2,
                        Binary::Midpoint,
                    ]);
                    Expr::Binary(f, Box::new(a), Box::new(b))
                }
                6 => {
                    let a = self.typed(d);
                    let (b, c) = (self.expr(d), self.expr(d));
                    let (a, b) = (self.tame(a, 8.0), self.tame(b, 8.0));
                    Expr::MulAdd(Box::new(a), Box::new(b), Box::new(c))
                }
                _ => {
                    let f = self.rng.pick(&closures);
                    let a = self.argument(d);
                    Expr::Call(f, Box::new(a))
                }
            };
        self.tame(e, 30.0)
    }

    /// An argument of a closure call, bounded by [`ARG_LIMIT`].
    fn argument(&mut self, depth: usize) -> Expr {
        let a = self.expr(depth);
        if self.bound(&a) <= ARG_LIMIT {
            a
        } else if typed(&a) {
            Expr::Unary(Unary::Tanh, Box::new(a))
        } else {
            Expr::Const(self.rng.pick(&[0.5, -0.75, 1.5]))
        }
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
                let b = self.pick_buf(true);
                Expr::Index(b, self.index_for(b))
            }
            4 => Expr::Cast(IntExpr::Var(self.rng.pick(&ints))),
            _ => Expr::Cast(if self.config.buffers && self.rng.chance(0.3) {
                let b = self.pick_buf(false);
                if self.short(b) || self.rng.chance(0.5) {
                    IntExpr::Len(Buf::Xs)
                } else {
                    IntExpr::Len(b)
                }
            } else {
                IntExpr::N
            }),
        }
    }

    /// A condition: mostly a float comparison, else an integer one, or two
    /// joined by `&&` or `||`.
    fn cond(&mut self) -> Cond {
        match self.rng.weighted(&[5, 3, 2]) {
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
        Expr::Chain(chain) => chain.consume == Consume::Count,
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
        Expr::Param(_)
        | Expr::Var(_)
        | Expr::Index(..)
        | Expr::Cast(_)
        | Expr::Reduce(..)
        | Expr::Chain(_)
        | Expr::Call(..) => true,
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
                    Binary::Max | Binary::Min | Binary::Midpoint => x.max(y),
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
            Expr::Chain(chain) => self.chain(chain, kinds),
            Expr::Call(f, a) => {
                if self.expr(a, kinds) > ARG_LIMIT {
                    self.note(f64::INFINITY);
                }
                self.get(*f)
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
                    Init::Copy | Init::Sorted => 1.0,
                    Init::List(es) => es.iter().fold(0.0, |m: f64, e| m.max(self.expr(e, kinds))),
                    Init::Collect(it, map) | Init::Push(it, map) => {
                        self.mapped(it, map.as_ref(), kinds).float()
                    }
                    Init::Clone(b) => self.buf(*b),
                };
                self.set(*v, b);
            }
            Stmt::Slice(v, ..) => self.set(*v, 1.0),
            Stmt::Split(a, b, _) => {
                self.set(*a, 1.0);
                self.set(*b, 1.0);
            }
            Stmt::Move(v, w, how) => {
                let (old, new) = (self.get(*v), self.get(*w));
                self.set(*v, new);
                if *how == Move::Swap {
                    self.set(*w, old);
                }
            }
            Stmt::Closure(f, t, bodies) => {
                self.set(*t, ARG_LIMIT);
                let b = bodies
                    .iter()
                    .fold(0.0, |m: f64, e| m.max(self.expr(e, kinds)));
                self.set(*f, b);
            }
            Stmt::Pair(a, b, Pair::Call(g, arg)) => {
                if self.expr(arg, kinds) > ARG_LIMIT {
                    self.note(f64::INFINITY);
                }
                let bound = self.get(*g);
                self.set(*a, bound);
                self.set(*b, bound);
            }
            Stmt::Pair(a, b, Pair::SinCos(e)) => {
                self.expr(e, kinds);
                self.set(*a, 1.0);
                self.set(*b, 1.0);
            }
            Stmt::Pair(a, b, Pair::Fold(fold)) => {
                let most = count(&fold.iter, kinds).1;
                let mut acc = fold.init.clone().map(|e| self.expr(&e, kinds));
                let items = self.items(&fold.iter, kinds);
                self.bind(&fold.pat, &items);
                for _ in 0..most {
                    self.set(fold.acc[0], acc[0]);
                    self.set(fold.acc[1], acc[1]);
                    let next = [
                        self.expr(&fold.body[0], kinds),
                        self.expr(&fold.body[1], kinds),
                    ];
                    acc = [
                        self.note(acc[0].max(next[0])),
                        self.note(acc[1].max(next[1])),
                    ];
                }
                self.set(*a, acc[0]);
                self.set(*b, acc[1]);
            }
            Stmt::Assert(check) => match check {
                Check::Finite(e, _) | Check::Bounded(e, _) => {
                    self.expr(e, kinds);
                }
                Check::MinLen(..) | Check::SameLen(..) => {}
            },
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
                    Loop::Chain(it, ..) => count(it, kinds).1,
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
                Some(Loop::Chain(it, pat, _)) => {
                    let items = self.items(it, kinds);
                    self.bind(pat, &items);
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

/// Bounds of the items of an iterator, shaped as they are.
#[derive(Clone, Debug)]
enum Items {
    /// A float, by its bound.
    Float(f64),
    /// An index.
    Int,
    /// A view, by the bound of its elements.
    View(f64),
    /// A pair.
    Pair(Box<Items>, Box<Items>),
}

impl Items {
    /// The largest bound of a float or a view element in the item.
    fn float(&self) -> f64 {
        match self {
            Items::Float(b) | Items::View(b) => *b,
            Items::Int => 0.0,
            Items::Pair(a, b) => a.float().max(b.float()),
        }
    }
}

impl Bounds {
    /// The bounds of the items of `it` (noting those of `filter` tests).
    fn items(&mut self, it: &Iter, kinds: &[Kind]) -> Items {
        match it {
            Iter::Elems(b) => Items::Float(self.buf(*b)),
            Iter::Range(_) => Items::Int,
            Iter::Windows(b, _) | Iter::Chunks(b, ..) => Items::View(self.buf(*b)),
            Iter::Copied(inner) | Iter::Adapt(inner, _) => self.items(inner, kinds),
            Iter::Enumerate(inner) => {
                Items::Pair(Box::new(Items::Int), Box::new(self.items(inner, kinds)))
            }
            Iter::Zip(a, b, _) => Items::Pair(
                Box::new(self.items(a, kinds)),
                Box::new(self.items(b, kinds)),
            ),
            Iter::Chain(a, b, _) => {
                let (a, b) = (self.items(a, kinds), self.items(b, kinds));
                Items::Float(a.float().max(b.float()))
            }
            Iter::Filter(inner, pat, c) => {
                let items = self.items(inner, kinds);
                self.bind(pat, &items);
                self.cond(c, kinds);
                items
            }
        }
    }

    /// The bounds of the items of `it` after `map` (if there is one).
    fn mapped(&mut self, it: &Iter, map: Option<&Map>, kinds: &[Kind]) -> Items {
        let items = self.items(it, kinds);
        match map {
            None => items,
            Some(Map::Inline(pat, body)) => {
                self.bind(pat, &items);
                Items::Float(self.expr(body, kinds))
            }
            Some(Map::Named(f)) => {
                if items.float() > ARG_LIMIT {
                    self.note(f64::INFINITY);
                }
                Items::Float(self.get(*f))
            }
        }
    }

    /// Sets the bounds of the variables of `pat` from `items`.
    fn bind(&mut self, pat: &Pat, items: &Items) {
        match (pat, items) {
            (Pat::Var(v), Items::Float(b) | Items::View(b)) => self.set(*v, *b),
            (Pat::Pair(a, b), Items::Pair(x, y)) => {
                self.bind(a, x);
                self.bind(b, y);
            }
            (Pat::Pair(a, b), _) => {
                self.bind(a, items);
                self.bind(b, items);
            }
            (Pat::Var(_), _) => {}
        }
    }

    /// The bound of the value of a chain.
    fn chain(&mut self, chain: &Chain, kinds: &[Kind]) -> f64 {
        let most = count(&chain.iter, kinds).1;
        let items = self.mapped(&chain.iter, chain.map.as_ref(), kinds);
        let item = items.float();
        match &chain.consume {
            Consume::Sum => item * most as f64,
            Consume::Product => item.max(1.0).powi(most as i32),
            Consume::Count => most as f64,
            Consume::Fold(init, acc, pat, body) => {
                let mut b = self.expr(init, kinds);
                self.bind(pat, &items);
                for _ in 0..most {
                    self.set(*acc, b);
                    let next = self.expr(body, kinds);
                    b = self.note(b.max(next));
                }
                b
            }
            Consume::Extremum(_, init) => item.max(init.map_or(0.0, f64::abs)),
            Consume::First { default, .. } => item.max(default.abs()),
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
    buf_len(b, kinds).1
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
        Expr::Chain(chain) => {
            iter_reads(&chain.iter, out);
            map_reads(chain.map.as_ref(), out);
            if let Consume::Fold(init, _, _, body) = &chain.consume {
                expr_reads(init, out);
                expr_reads(body, out);
            }
        }
        Expr::Call(f, a) => {
            out.insert(*f);
            expr_reads(a, out);
        }
    }
}

/// Adds the variables an iterator reads to `out` (those of its `filter`
/// tests included).
fn iter_reads(it: &Iter, out: &mut Set) {
    match it {
        Iter::Elems(b) | Iter::Windows(b, _) | Iter::Chunks(b, ..) => buf_reads(*b, out),
        Iter::Range(end) => int_reads(end, out),
        Iter::Copied(inner) | Iter::Adapt(inner, _) | Iter::Enumerate(inner) => {
            iter_reads(inner, out);
        }
        Iter::Zip(a, b, _) | Iter::Chain(a, b, _) => {
            iter_reads(a, out);
            iter_reads(b, out);
        }
        Iter::Filter(inner, _, c) => {
            iter_reads(inner, out);
            cond_reads(c, out);
        }
    }
}

/// Adds the variables a `map` reads to `out`.
fn map_reads(map: Option<&Map>, out: &mut Set) {
    match map {
        Some(Map::Inline(_, body)) => expr_reads(body, out),
        Some(Map::Named(f)) => {
            out.insert(*f);
        }
        None => {}
    }
}

/// Adds the variables the value of a [`Stmt::Pair`] reads to `out`.
fn pair_reads(pair: &Pair, out: &mut Set) {
    match pair {
        Pair::Fold(fold) => iter_reads(&fold.iter, out),
        Pair::Call(g, _) => {
            out.insert(*g);
        }
        Pair::SinCos(_) => {}
    }
    pair.exprs().into_iter().for_each(|e| expr_reads(e, out));
}

/// Adds the variables an assertion reads to `out`.
fn check_reads(check: &Check, out: &mut Set) {
    match check {
        Check::MinLen(b, _) => buf_reads(*b, out),
        Check::SameLen(a, b, _) => {
            int_reads(a, out);
            int_reads(b, out);
        }
        Check::Finite(e, _) | Check::Bounded(e, _) => expr_reads(e, out),
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
        Loop::Chain(it, ..) => iter_reads(it, out),
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
        Stmt::Move(v, w, how) => {
            out.insert(*w);
            if *how == Move::Swap {
                out.insert(*v);
            }
        }
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
        Stmt::Slice(_, start, end, _) => {
            int_reads(start, out);
            if let Some(end) = end {
                int_reads(end, out);
            }
        }
        Stmt::Split(_, _, k) => int_reads(k, out),
        Stmt::Closure(_, _, bodies) => bodies.iter().for_each(|e| expr_reads(e, out)),
        Stmt::Pair(_, _, pair) => pair_reads(pair, out),
        Stmt::Assert(check) => check_reads(check, out),
    }
}

/// The variables a slice, a split or a closure definition binds.
fn defined(s: &Stmt) -> Vec<Var> {
    match s {
        Stmt::Slice(v, ..) | Stmt::Closure(v, ..) => vec![*v],
        Stmt::Split(a, b, _) => vec![*a, *b],
        _ => Vec::new(),
    }
}

/// Adds the variables a buffer initializer reads to `out`.
fn init_reads(init: &Init, out: &mut Set) {
    match init {
        Init::Fill(e) => expr_reads(e, out),
        Init::Copy | Init::Sorted => {}
        Init::List(es) => es.iter().for_each(|e| expr_reads(e, out)),
        Init::Collect(it, map) | Init::Push(it, map) => {
            iter_reads(it, out);
            map_reads(map.as_ref(), out);
        }
        Init::Clone(b) => buf_reads(*b, out),
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
                Stmt::Move(v, w, _) => {
                    live.insert(*v);
                    live.insert(*w);
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
                Stmt::Slice(..) | Stmt::Split(..) | Stmt::Closure(..) => {
                    let s = &block[i];
                    let mut used = false;
                    for v in defined(s) {
                        used |= live.remove(&v);
                    }
                    if let (false, true, Stmt::Closure(f, ..)) = (used, fin, s) {
                        self.dead_lets.insert(*f);
                    }
                    stmt_reads(s, &mut live);
                }
                Stmt::Pair(a, b, pair) => {
                    let (x, y) = (live.remove(a), live.remove(b));
                    if x || y {
                        pair_reads(pair, &mut live);
                    }
                    if fin {
                        for (v, used) in [(*a, x), (*b, y)] {
                            if !used {
                                self.dead_lets.insert(v);
                                self.dead.insert(v);
                            }
                        }
                    }
                }
                Stmt::Assert(check) => check_reads(check, &mut live),
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
                Stmt::Let(v, _)
                | Stmt::Buffer(v, _)
                | Stmt::Store(v, ..)
                | Stmt::Slice(v, ..)
                | Stmt::Closure(v, ..) => read.contains(v),
                Stmt::Split(a, b, _) | Stmt::Pair(a, b, _) => read.contains(a) || read.contains(b),
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
            closure: 0,
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
        Stmt::Assign(..) | Stmt::Store(..) | Stmt::Move(..) => true,
        Stmt::Exit(..) => exits,
        Stmt::If(_, a, b) => effects(a, exits) || effects(b, exits),
        Stmt::For(_, body) | Stmt::While(_, _, body) => effects(body, false),
        Stmt::Let(..)
        | Stmt::Buffer(..)
        | Stmt::Slice(..)
        | Stmt::Split(..)
        | Stmt::Closure(..)
        | Stmt::Pair(..)
        | Stmt::Assert(..) => false,
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
    /// Enclosing closure bodies (which read no local `Vec`).
    closure: usize,
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

    /// Checks the body of a closure (of a `map`, a `fold`, a `let`).
    fn closure_body(&mut self, e: &Expr) {
        self.expr(e);
    }

    /// Fails unless `v` is in scope.
    fn visible(&mut self, v: Var) {
        self.ok &= self.scope.contains(&v);
    }

    /// The kind of `v`.
    fn kind(&self, v: Var) -> Option<Kind> {
        self.kinds.get(v).copied()
    }

    /// Checks a buffer reference (no local `Vec` in a closure).
    fn buf(&mut self, b: Buf) {
        if let Buf::Local(v) = b {
            self.visible(v);
            self.ok &= match self.kind(v) {
                Some(Kind::Buffer { .. }) => self.closure == 0,
                Some(Kind::Slice { .. }) => true,
                _ => false,
            };
        }
    }

    /// Checks that `index` is in bounds of `b` for every input.
    fn index(&mut self, b: Buf, index: &IntExpr) {
        self.buf(b);
        self.int(index);
        let (min, _) = buf_len(b, self.kinds);
        let whole = full(b, self.kinds);
        let kinds = self.kinds;
        let same_len =
            |e: &IntExpr| matches!(e, IntExpr::Len(c) if *c == b || (whole && full(*c, kinds)));
        self.ok &= match index {
            IntExpr::Var(i) => self.ranges.iter().any(|(v, r)| {
                v == i && ((*r == Range::Three && min >= 3) || (*r == Range::Len && whole))
            }),
            IntExpr::Lit(c) => *c < min,
            IntExpr::Rem(_, m) => match &**m {
                IntExpr::Lit(c) => (1..=min).contains(c),
                m => min >= 1 && same_len(m),
            },
            IntExpr::Sub(a, one) => min >= 1 && same_len(a) && **one == IntExpr::Lit(1),
            _ => false,
        };
    }

    /// Checks an integer expression.
    fn int(&mut self, e: &IntExpr) {
        match e {
            IntExpr::Var(v) => {
                self.visible(*v);
                self.ok &= matches!(self.kind(*v), Some(Kind::Index | Kind::Counter));
            }
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
                self.ok &= matches!(self.kind(*v), Some(Kind::Float | Kind::Elem { .. }));
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
            Expr::Chain(chain) => self.chain(chain),
            Expr::Call(f, a) => {
                self.closure_var(*f);
                self.expr(a);
            }
        }
    }

    /// Checks that `f` is a closure in scope.
    fn closure_var(&mut self, f: Var) {
        self.visible(f);
        self.ok &= self.kind(f) == Some(Kind::Closure);
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

    /// Checks that `pat` binds items of type `ty`, with fresh variables of
    /// the matching kinds, and brings them into scope.
    fn pattern(&mut self, pat: &Pat, ty: &Ty) {
        match (pat, ty) {
            (Pat::Var(v), _) => {
                self.ok &= !self.scope.contains(v);
                self.ok &= match (self.kind(*v), ty) {
                    (Some(Kind::Elem { .. }), Ty::Ref) => true,
                    (Some(Kind::Elem { by_ref, .. }), Ty::Val) => !by_ref,
                    (Some(Kind::Index), Ty::Int(_)) => true,
                    (Some(Kind::Slice { min, max }), Ty::View(lo, hi)) => min <= *lo && max >= *hi,
                    _ => false,
                };
            }
            (Pat::Pair(a, b), Ty::Pair(x, y)) => {
                self.pattern(a, x);
                self.pattern(b, y);
            }
            _ => self.ok = false,
        }
        enter_pat(pat, ty, &mut self.scope, &mut self.ranges);
    }

    /// Checks an iterator: what it reads, its adapters' arguments, that a
    /// `filter` is only followed by `copied` and `rev`, and that a filter's
    /// test reads only its pattern and the scalar parameters.
    fn iter(&mut self, it: &Iter) {
        match it {
            Iter::Elems(b) => self.buf(*b),
            Iter::Windows(b, k) | Iter::Chunks(b, k, _) => {
                self.buf(*b);
                self.ok &= (1..=3).contains(k);
            }
            Iter::Range(end) => {
                self.int(end);
                self.ok &= end_range(end, self.kinds).is_some();
            }
            Iter::Copied(inner) => {
                self.iter(inner);
                self.ok &= item_ty(inner, self.kinds) == Ty::Ref;
            }
            Iter::Adapt(inner, a) => {
                self.iter(inner);
                self.ok &= match a {
                    Adapt::Rev => true,
                    Adapt::Skip(_) => !filtered(inner),
                    Adapt::Take(k) => *k >= 1 && !filtered(inner),
                    Adapt::StepBy(k) => *k >= 1 && !filtered(inner) && !chained(inner),
                };
            }
            Iter::Enumerate(inner) => {
                self.iter(inner);
                self.ok &= !filtered(inner);
            }
            Iter::Zip(a, b, _) => {
                self.iter(a);
                self.iter(b);
                self.ok &= !filtered(a) && !filtered(b) && !chained(a) && !chained(b);
            }
            Iter::Chain(a, b, _) => {
                self.iter(a);
                self.iter(b);
                self.ok &= item_ty(a, self.kinds) == Ty::Ref && item_ty(b, self.kinds) == Ty::Ref;
            }
            Iter::Filter(inner, pat, c) => {
                self.iter(inner);
                let (scope, ranges) = (self.scope.len(), self.ranges.len());
                self.pattern(pat, &item_ty(inner, self.kinds));
                self.cond(c);
                let mut read = Set::new();
                cond_reads(c, &mut read);
                let mut vars = Vec::new();
                pat_vars(pat, &mut vars);
                self.ok &= (0..self.kinds.len()).all(|v| !read.contains(&v) || vars.contains(&v));
                self.scope.truncate(scope);
                self.ranges.truncate(ranges);
            }
        }
    }

    /// Checks a `map` of items of type `ty`.
    fn map(&mut self, map: Option<&Map>, ty: &Ty) {
        match map {
            Some(Map::Inline(pat, body)) => {
                let (scope, ranges) = (self.scope.len(), self.ranges.len());
                self.pattern(pat, ty);
                self.closure_body(body);
                self.scope.truncate(scope);
                self.ranges.truncate(ranges);
            }
            Some(Map::Named(f)) => {
                self.closure_var(*f);
                self.ok &= *ty == Ty::Val;
            }
            None => {}
        }
    }

    /// Checks a chain and its consumer.
    fn chain(&mut self, chain: &Chain) {
        self.iter(&chain.iter);
        self.map(chain.map.as_ref(), &item_ty(&chain.iter, self.kinds));
        let ty = mapped_ty(chain, self.kinds);
        match &chain.consume {
            Consume::Sum | Consume::Product => self.ok &= matches!(ty, Ty::Ref | Ty::Val),
            Consume::Count => {}
            Consume::Fold(init, acc, pat, body) => {
                self.expr(init);
                let (scope, ranges) = (self.scope.len(), self.ranges.len());
                self.ok &= self.kind(*acc)
                    == Some(Kind::Elem {
                        by_ref: false,
                        bare: false,
                    })
                    && !self.scope.contains(acc);
                self.scope.push(*acc);
                self.pattern(pat, &ty);
                self.closure_body(body);
                self.scope.truncate(scope);
                self.ranges.truncate(ranges);
            }
            Consume::Extremum(f, init) => {
                self.ok &= ty == Ty::Val
                    && matches!(f, Binary::Max | Binary::Min)
                    && (init.is_some() || count(&chain.iter, self.kinds).0 > 0);
            }
            Consume::First { .. } => self.ok &= matches!(ty, Ty::Ref | Ty::Val),
        }
    }

    /// Checks an assertion: it must hold for every input.
    fn check(&mut self, check: &Check) {
        match check {
            Check::MinLen(b, k) => {
                self.buf(*b);
                self.ok &= *k >= 1 && *k <= buf_len(*b, self.kinds).0;
            }
            Check::SameLen(a, b, _) => {
                self.int(a);
                self.int(b);
                let kinds = self.kinds;
                let length = |e: &IntExpr| match e {
                    IntExpr::Len(c) if full(*c, kinds) => Some(None),
                    IntExpr::Len(c) => {
                        let (lo, hi) = buf_len(*c, kinds);
                        (lo == hi).then_some(Some(lo))
                    }
                    IntExpr::Lit(k) => Some(Some(*k)),
                    _ => None,
                };
                self.ok &= length(a).is_some() && length(a) == length(b);
            }
            Check::Finite(e, _) | Check::Bounded(e, _) => self.expr(e),
        }
    }

    /// Checks a statement (`top`: at the top level of the body).
    fn stmt(&mut self, s: &Stmt, top: bool) {
        match s {
            Stmt::Let(v, e) => {
                self.expr(e);
                self.ok &= self.kind(*v) == Some(Kind::Float);
                self.scope.push(*v);
            }
            Stmt::Assign(v, _, e) => {
                self.expr(e);
                self.visible(*v);
                self.ok &= self.kind(*v) == Some(Kind::Float);
            }
            Stmt::Store(v, i, _, e) => {
                self.expr(e);
                self.index(Buf::Local(*v), i);
                self.ok &= !self.iterated.contains(v)
                    && matches!(self.kind(*v), Some(Kind::Buffer { .. }));
            }
            Stmt::Move(v, w, _) => {
                self.visible(*v);
                self.visible(*w);
                self.ok &= v != w
                    && !self.iterated.contains(v)
                    && !self.iterated.contains(w)
                    && matches!(self.kind(*v), Some(Kind::Buffer { .. }))
                    && self.kind(*v) == self.kind(*w);
            }
            Stmt::Buffer(v, init) => {
                // A sorted copy only at the top level, as the macro requires.
                self.ok &= top || *init != Init::Sorted;
                let short = self.kind(*v) == Some(Kind::Buffer { short: true });
                match init {
                    Init::Fill(e) => {
                        self.expr(e);
                        self.ok &= !short;
                    }
                    Init::Copy | Init::Sorted => self.ok &= !short,
                    Init::List(es) => {
                        self.ok &= es.len() == 3 && short;
                        es.iter().for_each(|e| self.expr(e));
                    }
                    Init::Clone(b) => {
                        self.buf(*b);
                        let source = match b {
                            Buf::Local(w) => self.kind(*w),
                            Buf::Xs => None,
                        };
                        // A local `Vec`, or a view of 3 elements.
                        let view = matches!(source, Some(Kind::Slice { min: 3, max: 3 }));
                        self.ok &= (matches!(source, Some(Kind::Buffer { .. })) || view)
                            && if short {
                                buf_len(*b, self.kinds) == (3, 3)
                            } else {
                                full(*b, self.kinds)
                            };
                    }
                    Init::Collect(it, map) | Init::Push(it, map) => {
                        self.iter(it);
                        let ty = item_ty(it, self.kinds);
                        self.map(map.as_ref(), &ty);
                        // The loop of a push binds the pattern of the map.
                        self.ok &=
                            !matches!(init, Init::Push(..)) || matches!(map, Some(Map::Inline(..)));
                        self.ok &= (map.is_some() || ty == Ty::Val)
                            && !filtered(it)
                            && if short {
                                count(it, self.kinds) == (3, 3)
                            } else {
                                full_iter(it, self.kinds)
                            };
                    }
                }
                self.ok &= matches!(self.kind(*v), Some(Kind::Buffer { .. }));
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
                        let range = end_range(end, self.kinds).unwrap_or_else(|| {
                            self.ok = false;
                            Range::N
                        });
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
                        self.scope.extend([*i, *e]);
                        self.ranges.push((*i, len_range(*b, self.kinds)));
                        self.iterate(*b);
                    }
                    Loop::Zip(b, c, e, f) => {
                        self.buf(*b);
                        self.buf(*c);
                        self.scope.extend([*e, *f]);
                        self.iterate(*b);
                        self.iterate(*c);
                    }
                    Loop::Chain(it, pat, _) => {
                        self.iter(it);
                        self.pattern(pat, &item_ty(it, self.kinds));
                        let mut vecs = Vec::new();
                        iter_vecs(it, self.kinds, &mut vecs);
                        self.iterated.extend(vecs);
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
            Stmt::Slice(v, start, end, inclusive) => {
                self.ok &= top;
                self.int(start);
                if let Some(end) = end {
                    self.int(end);
                }
                self.ok &= match (slice_len(start, end.as_ref(), *inclusive), self.kind(*v)) {
                    (Some(lens), Some(Kind::Slice { min, max })) => lens == (min, max),
                    _ => false,
                };
                self.scope.push(*v);
            }
            Stmt::Split(a, b, k) => {
                self.ok &= top;
                self.int(k);
                let lens = (
                    slice_len(&IntExpr::Lit(0), Some(k), false),
                    slice_len(k, None, false),
                );
                self.ok &= match (lens, self.kind(*a), self.kind(*b)) {
                    (
                        (Some(x), Some(y)),
                        Some(Kind::Slice { min, max }),
                        Some(Kind::Slice { min: lo, max: hi }),
                    ) => x == (min, max) && y == (lo, hi),
                    _ => false,
                };
                self.scope.extend([*a, *b]);
            }
            Stmt::Closure(f, t, bodies) => {
                let kind = match bodies.len() {
                    1 => Some(Kind::Closure),
                    2 => Some(Kind::PairClosure),
                    _ => None,
                };
                self.ok &= kind.is_some()
                    && self.kind(*f) == kind
                    && self.kind(*t)
                        == Some(Kind::Elem {
                            by_ref: false,
                            bare: false,
                        });
                let (scope, ranges) = (self.scope.len(), self.ranges.len());
                self.scope.push(*t);
                self.closure += 1;
                bodies.iter().for_each(|e| self.closure_body(e));
                self.closure -= 1;
                self.scope.truncate(scope);
                self.ranges.truncate(ranges);
                self.scope.push(*f);
            }
            Stmt::Pair(a, b, pair) => {
                match pair {
                    Pair::SinCos(e) => self.expr(e),
                    Pair::Call(g, e) => {
                        self.visible(*g);
                        self.ok &= self.kind(*g) == Some(Kind::PairClosure);
                        self.expr(e);
                    }
                    Pair::Fold(fold) => {
                        self.iter(&fold.iter);
                        fold.init.iter().for_each(|e| self.expr(e));
                        let (scope, ranges) = (self.scope.len(), self.ranges.len());
                        let elem = Some(Kind::Elem {
                            by_ref: false,
                            bare: false,
                        });
                        for v in fold.acc {
                            self.ok &= self.kind(v) == elem && !self.scope.contains(&v);
                            self.scope.push(v);
                        }
                        self.pattern(&fold.pat, &item_ty(&fold.iter, self.kinds));
                        fold.body.iter().for_each(|e| self.closure_body(e));
                        self.scope.truncate(scope);
                        self.ranges.truncate(ranges);
                    }
                }
                self.ok &= self.kind(*a) == Some(Kind::Float) && self.kind(*b) == Some(Kind::Float);
                self.scope.extend([*a, *b]);
            }
            Stmt::Assert(check) => self.check(check),
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
        Stmt::Buffer(_, Init::Copy | Init::Sorted) => 0,
        Stmt::Buffer(_, Init::List(es)) => es.iter().map(expr_size).sum(),
        Stmt::Buffer(_, Init::Collect(it, map)) => iter_size(it) + map_size(map.as_ref()),
        Stmt::Buffer(_, Init::Clone(_)) => 2,
        Stmt::Move(..) => 1,
        // One more than the collected buffer it unwraps to.
        Stmt::Buffer(_, Init::Push(it, map)) => 1 + iter_size(it) + map_size(map.as_ref()),
        Stmt::If(c, a, b) => cond_size(c) + a.iter().chain(b).map(stmt_size).sum::<usize>(),
        Stmt::Exit(c, _) => cond_size(c),
        Stmt::For(header, body) => {
            let head = match header {
                Loop::Range(_, end) => int_size(end),
                Loop::Chain(it, ..) => iter_size(it),
                _ => 1,
            };
            head + body.iter().map(stmt_size).sum::<usize>()
        }
        Stmt::While(_, bound, body) => int_size(bound) + body.iter().map(stmt_size).sum::<usize>(),
        Stmt::Slice(_, start, end, _) => int_size(start) + end.as_ref().map_or(0, int_size),
        Stmt::Split(_, _, k) => int_size(k),
        Stmt::Closure(_, _, bodies) => bodies.iter().map(expr_size).sum(),
        Stmt::Pair(_, _, pair) => {
            let head = match pair {
                Pair::SinCos(_) | Pair::Call(..) => 0,
                Pair::Fold(fold) => iter_size(&fold.iter),
            };
            head + pair.exprs().into_iter().map(expr_size).sum::<usize>()
        }
        Stmt::Assert(check) => match check {
            Check::MinLen(..) => 1,
            Check::SameLen(a, b, _) => int_size(a) + int_size(b),
            Check::Finite(e, _) | Check::Bounded(e, _) => expr_size(e),
        },
    }
}

/// Nodes of an iterator.
fn iter_size(it: &Iter) -> usize {
    1 + match it {
        Iter::Elems(_) | Iter::Windows(..) | Iter::Chunks(..) => 0,
        Iter::Range(end) => int_size(end),
        Iter::Copied(inner) | Iter::Adapt(inner, _) | Iter::Enumerate(inner) => iter_size(inner),
        Iter::Zip(a, b, _) | Iter::Chain(a, b, _) => iter_size(a) + iter_size(b),
        Iter::Filter(inner, _, c) => iter_size(inner) + cond_size(c),
    }
}

/// Nodes of a `map`.
fn map_size(map: Option<&Map>) -> usize {
    match map {
        Some(Map::Inline(_, body)) => 1 + expr_size(body),
        Some(Map::Named(_)) => 1,
        None => 0,
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
        Expr::Chain(chain) => {
            iter_size(&chain.iter)
                + map_size(chain.map.as_ref())
                + match &chain.consume {
                    Consume::Fold(init, _, _, body) => expr_size(init) + expr_size(body),
                    _ => 0,
                }
        }
        Expr::Call(_, a) => expr_size(a),
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
    /// body; make a buffer plainly (`vec![0.5; xs.len()]`, `xs.to_vec()`;
    /// one filled by pushes, collected).
    Unwrap,
    /// Replace an `if` by its `else` block.
    UnwrapElse,
}

/// What is left to do after dropping a statement.
enum Forget {
    /// Nothing.
    Nothing,
    /// Float variables lost their `let`.
    Floats(Vec<Var>),
    /// Buffers (or slices) lost their creation.
    Buffers(Vec<Var>),
    /// A closure lost its definition: its calls become their arguments.
    Closure(Var),
    /// A buffer of 3 elements now has `xs.len()`.
    Long(Var),
}

/// Whether the buffer `v` made by `init` is printed as an array: every
/// other list (see [`Printer::arrays`]).
fn is_array(v: Var, init: &Init) -> bool {
    matches!(init, Init::List(_)) && v % 2 == 1
}

/// Whether the array `v` made by `init` is printed as a matrix of one row,
/// `[[a, b, c]]`, every use of it naming the row, `v[0]` (`v[0][i]`,
/// `v[0].iter()`, `&v[0][1..]`): half the arrays. Its copies by `let` are
/// copies of the matrix (`let w = v;`, a matrix too) or of the row (`let w
/// = v[0];`), by the copy's number (see [`Printer::new`]).
fn is_matrix(v: Var, init: &Init) -> bool {
    is_array(v, init) && v % 4 == 3
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
        match edit_at(&mut self.body, &mut k, edit, &self.vars) {
            None => false,
            Some(Forget::Nothing) => true,
            Some(Forget::Floats(vs)) => {
                for v in vs {
                    retain_deep(
                        &mut self.body,
                        &mut |s| !matches!(s, Stmt::Assign(x, ..) if *x == v),
                    );
                    self.walk(&mut Substitute::var(v, Expr::Const(0.5)));
                }
                true
            }
            Some(Forget::Buffers(vs)) => {
                for v in vs {
                    retain_deep(&mut self.body, &mut |s| match s {
                        Stmt::Store(x, ..) => *x != v,
                        Stmt::Move(a, b, _) => *a != v && *b != v,
                        _ => true,
                    });
                    let short = buf_len(Buf::Local(v), &self.vars).1 <= 3;
                    self.walk(&mut Substitute::buffer(v, short));
                }
                true
            }
            Some(Forget::Closure(f)) => {
                self.walk(&mut Uncall(f));
                uncall_pairs(&mut self.body, f);
                true
            }
            Some(Forget::Long(v)) => {
                self.vars[v] = Kind::Buffer { short: false };
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
fn edit_at(block: &mut Vec<Stmt>, k: &mut usize, edit: StmtEdit, kinds: &[Kind]) -> Option<Forget> {
    let mut i = 0;
    while i < block.len() {
        if *k == 0 {
            return apply_edit(block, i, edit, kinds);
        }
        *k -= 1;
        let found = match &mut block[i] {
            Stmt::If(_, a, b) => edit_at(a, k, edit, kinds).or_else(|| edit_at(b, k, edit, kinds)),
            Stmt::For(_, body) | Stmt::While(_, _, body) => edit_at(body, k, edit, kinds),
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
fn apply_edit(block: &mut Vec<Stmt>, i: usize, edit: StmtEdit, kinds: &[Kind]) -> Option<Forget> {
    let replacement = match (edit, &block[i]) {
        (StmtEdit::Remove, _) => {
            return Some(match block.remove(i) {
                Stmt::Let(v, _) => Forget::Floats(vec![v]),
                Stmt::Pair(a, b, _) => Forget::Floats(vec![a, b]),
                Stmt::Buffer(v, _) | Stmt::Slice(v, ..) => Forget::Buffers(vec![v]),
                Stmt::Split(a, b, _) => Forget::Buffers(vec![a, b]),
                Stmt::Closure(f, ..) => Forget::Closure(f),
                _ => Forget::Nothing,
            });
        }
        (StmtEdit::Unwrap, Stmt::If(_, a, _)) => a.clone(),
        (StmtEdit::Unwrap, Stmt::Buffer(v, Init::Push(it, map))) => {
            block[i] = Stmt::Buffer(*v, Init::Collect(it.clone(), map.clone()));
            return Some(Forget::Nothing);
        }
        (
            StmtEdit::Unwrap,
            Stmt::Buffer(v, Init::List(_) | Init::Collect(..) | Init::Sorted | Init::Clone(_)),
        ) => {
            let v = *v;
            let short = kinds[v] == Kind::Buffer { short: true };
            block[i] = Stmt::Buffer(
                v,
                if short {
                    Init::Fill(Expr::Const(0.5))
                } else {
                    Init::Copy
                },
            );
            return Some(if short {
                Forget::Long(v)
            } else {
                Forget::Nothing
            });
        }
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
                Loop::Chain(_, pat, _) => {
                    // One item: floats become `xs[0]`, indices 1, views `xs`.
                    let mut vars = Vec::new();
                    pat_vars(pat, &mut vars);
                    for v in vars {
                        let mut visit = match kinds[v] {
                            Kind::Index => Substitute::index(v, 1),
                            Kind::Slice { max, .. } => Substitute::buffer(v, max <= 3),
                            _ => Substitute::var(v, Expr::Index(Buf::Xs, IntExpr::Lit(0))),
                        };
                        walk_block(&mut visit, &mut body);
                    }
                    Substitute::index(usize::MAX, 0)
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
    /// An iterator.
    fn iter(&mut self, _: &mut Iter) {}
    /// The `map` of a chain or a collected buffer.
    fn map(&mut self, _: &mut Option<Map>) {}
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
            Stmt::Buffer(_, Init::Copy | Init::Sorted) => {}
            Stmt::Buffer(_, Init::List(es)) => es.iter_mut().for_each(|e| walk_expr(visit, e)),
            Stmt::Buffer(_, Init::Collect(it, map) | Init::Push(it, map)) => {
                walk_iter(visit, it);
                walk_map(visit, map);
            }
            Stmt::Buffer(_, Init::Clone(b)) => visit.buf(b),
            Stmt::If(c, a, b) => {
                walk_cond(visit, c);
                walk_block(visit, a);
                walk_block(visit, b);
            }
            Stmt::Slice(_, start, end, _) => {
                walk_int(visit, start);
                if let Some(end) = end {
                    walk_int(visit, end);
                }
            }
            Stmt::Split(_, _, k) => walk_int(visit, k),
            // Names, not buffer references: a forgotten buffer's moves are
            // dropped with its writes.
            Stmt::Move(..) => {}
            Stmt::Closure(_, _, bodies) => bodies.iter_mut().for_each(|e| walk_expr(visit, e)),
            Stmt::Pair(_, _, Pair::SinCos(e) | Pair::Call(_, e)) => walk_expr(visit, e),
            Stmt::Pair(_, _, Pair::Fold(fold)) => {
                walk_iter(visit, &mut fold.iter);
                fold.init.iter_mut().for_each(|e| walk_expr(visit, e));
                fold.body.iter_mut().for_each(|e| walk_expr(visit, e));
            }
            Stmt::Assert(check) => match check {
                Check::MinLen(b, _) => visit.buf(b),
                Check::SameLen(a, b, _) => {
                    walk_int(visit, a);
                    walk_int(visit, b);
                }
                Check::Finite(e, _) | Check::Bounded(e, _) => walk_expr(visit, e),
            },
            Stmt::Exit(c, _) => walk_cond(visit, c),
            Stmt::For(header, body) => {
                match header {
                    Loop::Range(_, end) => walk_int(visit, end),
                    Loop::Iter(b, _) | Loop::Enumerate(b, ..) => visit.buf(b),
                    Loop::Zip(b, c, ..) => {
                        visit.buf(b);
                        visit.buf(c);
                    }
                    Loop::Chain(it, ..) => walk_iter(visit, it),
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
        Expr::Chain(chain) => {
            walk_iter(visit, &mut chain.iter);
            walk_map(visit, &mut chain.map);
            if let Consume::Fold(init, _, _, body) = &mut chain.consume {
                walk_expr(visit, init);
                walk_expr(visit, body);
            }
        }
        Expr::Call(_, a) => walk_expr(visit, a),
    }
    visit.expr(e);
}

/// Walks an iterator, inner first.
fn walk_iter(visit: &mut dyn Visit, it: &mut Iter) {
    match it {
        Iter::Elems(b) | Iter::Windows(b, _) | Iter::Chunks(b, ..) => visit.buf(b),
        Iter::Range(end) => walk_int(visit, end),
        Iter::Copied(inner) | Iter::Adapt(inner, _) | Iter::Enumerate(inner) => {
            walk_iter(visit, inner);
        }
        Iter::Zip(a, b, _) | Iter::Chain(a, b, _) => {
            walk_iter(visit, a);
            walk_iter(visit, b);
        }
        Iter::Filter(inner, _, c) => {
            walk_iter(visit, inner);
            walk_cond(visit, c);
        }
    }
    visit.iter(it);
}

/// Walks a `map`, its body first.
fn walk_map(visit: &mut dyn Visit, map: &mut Option<Map>) {
    if let Some(Map::Inline(_, body)) = map {
        walk_expr(visit, body);
    }
    visit.map(map);
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

/// Replaces `let (a, b) = g(e);` of a forgotten closure `g` by
/// `let (a, b) = e.sin_cos();`.
fn uncall_pairs(block: &mut [Stmt], g: Var) {
    for s in block {
        match s {
            Stmt::Pair(_, _, pair) => {
                if let Pair::Call(f, e) = pair
                    && *f == g
                {
                    *pair = Pair::SinCos(e.clone());
                }
            }
            Stmt::If(_, a, b) => {
                uncall_pairs(a, g);
                uncall_pairs(b, g);
            }
            Stmt::For(_, body) | Stmt::While(_, _, body) => uncall_pairs(body, g),
            _ => {}
        }
    }
}

/// Replaces the calls of a forgotten closure by their arguments, and its
/// use in `map` by nothing (its items are `f64` already).
struct Uncall(Var);

impl Visit for Uncall {
    fn expr(&mut self, e: &mut Expr) {
        if let Expr::Call(f, a) = e
            && *f == self.0
        {
            *e = (**a).clone();
        }
    }

    fn map(&mut self, map: &mut Option<Map>) {
        if *map == Some(Map::Named(self.0)) {
            *map = None;
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
    /// Whether each iterator is an adapter that can go, in walk order.
    iters: Vec<bool>,
    /// Whether each integer expression is compound (it can become `0`).
    ints: Vec<bool>,
}

impl Visit for Census {
    fn expr(&mut self, e: &mut Expr) {
        let mut options: Vec<Expr> = match e {
            Expr::Neg(a) | Expr::Unary(_, a) | Expr::Call(_, a) => vec![(**a).clone()],
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

    fn iter(&mut self, it: &mut Iter) {
        self.iters.push(matches!(
            it,
            Iter::Copied(_) | Iter::Adapt(..) | Iter::Filter(..) | Iter::Chain(..)
        ));
    }

    fn int(&mut self, e: &mut IntExpr) {
        self.ints.push(matches!(
            e,
            IntExpr::Add(..) | IntExpr::Sub(..) | IntExpr::Rem(..)
        ));
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
    /// Drop an adapter, for an iterator edit.
    adapter: bool,
    /// Make it `0`, for an integer edit.
    zero: bool,
}

impl Replace {
    /// Replaces the `k`-th float expression by `by`.
    fn expr(k: usize, by: Expr) -> Replace {
        Replace {
            k,
            expr: Some(by),
            side: None,
            adapter: false,
            zero: false,
        }
    }

    /// Replaces the `k`-th condition by one of its sides.
    fn cond(k: usize, side: usize) -> Replace {
        Replace {
            k,
            expr: None,
            side: Some(side),
            adapter: false,
            zero: false,
        }
    }

    /// Drops the `k`-th iterator's adapter (`rev`, `filter`, …).
    fn adapter(k: usize) -> Replace {
        Replace {
            k,
            expr: None,
            side: None,
            adapter: true,
            zero: false,
        }
    }

    /// Replaces the `k`-th integer expression by `0`.
    fn zero(k: usize) -> Replace {
        Replace {
            k,
            expr: None,
            side: None,
            adapter: false,
            zero: true,
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

    fn int(&mut self, e: &mut IntExpr) {
        if self.zero {
            if self.k == 0 {
                *e = IntExpr::Lit(0);
            }
            self.k = self.k.wrapping_sub(1);
        }
    }

    fn iter(&mut self, it: &mut Iter) {
        if self.adapter {
            if self.k == 0
                && let Iter::Copied(inner)
                | Iter::Adapt(inner, _)
                | Iter::Filter(inner, ..)
                | Iter::Chain(inner, ..) = it
            {
                *it = (**inner).clone();
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
    /// Contents of local buffers and views, by index.
    bufs: Vec<Vec<f64>>,
    /// Each closure's parameter, bodies, and the float variables it reads.
    closures: Vec<Option<ClosureDef<'a>>>,
    /// The values of those variables when each closure was defined.
    captured: Vec<Vec<f64>>,
    /// The margin so far.
    margin: f64,
}

/// A closure as the interpreter calls it: its parameter, its bodies, and
/// the float variables they read.
type ClosureDef<'a> = (Var, &'a [Expr], Vec<Var>);

/// An item of an iterator, as the reference semantics computes it.
#[derive(Clone, Debug)]
enum Item {
    /// A float (an element, by value or by reference).
    Float(f64),
    /// An index.
    Int(usize),
    /// A view's elements.
    View(Vec<f64>),
    /// A pair.
    Pair(Box<Item>, Box<Item>),
}

impl Item {
    /// The float of a float item.
    fn float(&self) -> f64 {
        match self {
            Item::Float(x) => *x,
            _ => panic!("not a float item: {self:?}"),
        }
    }
}

/// The closures defined in `block`, at every depth.
fn closure_defs<'p>(block: &'p [Stmt], out: &mut Vec<(Var, Var, &'p [Expr])>) {
    for s in block {
        match s {
            Stmt::Closure(f, t, bodies) => out.push((*f, *t, bodies)),
            Stmt::If(_, a, b) => {
                closure_defs(a, out);
                closure_defs(b, out);
            }
            Stmt::For(_, body) | Stmt::While(_, _, body) => closure_defs(body, out),
            _ => {}
        }
    }
}

impl<'a> Machine<'a> {
    /// A machine for `program` at `input`.
    fn new(program: &'a Program, input: &'a Input) -> Machine<'a> {
        let count = program.vars.len();
        let mut closures = vec![None; count];
        let mut defs = Vec::new();
        closure_defs(&program.body, &mut defs);
        for (f, t, body) in defs {
            let mut read = Set::new();
            body.iter().for_each(|e| expr_reads(e, &mut read));
            let floats = (0..count)
                .filter(|v| read.contains(v) && program.vars[*v] == Kind::Float)
                .collect();
            closures[f] = Some((t, body, floats));
        }
        Machine {
            input,
            floats: vec![0.0; count],
            ints: vec![0; count],
            bufs: vec![Vec::new(); count],
            closures,
            captured: vec![Vec::new(); count],
            margin: f64::INFINITY,
        }
    }

    /// `f(x)`: the closure's body with its parameter `x`, and the
    /// variables it reads as they were at its definition.
    fn call(&mut self, f: Var, x: f64) -> f64 {
        self.call_all(f, x)[0]
    }

    /// `g(x)`, the values of all the closure's bodies, in order.
    fn call_all(&mut self, f: Var, x: f64) -> Vec<f64> {
        let (t, bodies, vars) = self.closures[f].clone().expect("a closure");
        let now: Vec<f64> = vars.iter().map(|&v| self.floats[v]).collect();
        for (&v, &then) in vars.iter().zip(&self.captured[f]) {
            self.floats[v] = then;
        }
        let before = self.floats[t];
        self.floats[t] = x;
        let value = bodies.iter().map(|e| self.expr(e)).collect();
        self.floats[t] = before;
        for (&v, &x) in vars.iter().zip(&now) {
            self.floats[v] = x;
        }
        value
    }

    /// The contents of `b`.
    fn contents(&self, b: Buf) -> Vec<f64> {
        match b {
            Buf::Xs => self.input.xs.clone(),
            Buf::Local(v) => self.bufs[v].clone(),
        }
    }

    /// The items of `it`, in order (the tests of `filter` evaluated on
    /// every item; they read nothing a loop body changes).
    fn items(&mut self, it: &Iter) -> Vec<Item> {
        match it {
            Iter::Elems(b) => self.contents(*b).into_iter().map(Item::Float).collect(),
            Iter::Range(end) => (0..self.int(end)).map(Item::Int).collect(),
            Iter::Windows(b, k) => self
                .contents(*b)
                .windows(*k)
                .map(|w| Item::View(w.to_vec()))
                .collect(),
            Iter::Chunks(b, k, exact) => {
                let all = self.contents(*b);
                if *exact {
                    all.chunks_exact(*k)
                        .map(|c| Item::View(c.to_vec()))
                        .collect()
                } else {
                    all.chunks(*k).map(|c| Item::View(c.to_vec())).collect()
                }
            }
            Iter::Copied(inner) => self.items(inner),
            Iter::Adapt(inner, a) => {
                let mut items = self.items(inner);
                match a {
                    Adapt::Rev => items.reverse(),
                    Adapt::Skip(k) => items = items.into_iter().skip(*k).collect(),
                    Adapt::Take(k) => items.truncate(*k),
                    Adapt::StepBy(k) => items = items.into_iter().step_by(*k).collect(),
                }
                items
            }
            Iter::Enumerate(inner) => self
                .items(inner)
                .into_iter()
                .enumerate()
                .map(|(j, x)| Item::Pair(Box::new(Item::Int(j)), Box::new(x)))
                .collect(),
            Iter::Zip(a, b, _) => {
                let (xs, ys) = (self.items(a), self.items(b));
                xs.into_iter()
                    .zip(ys)
                    .map(|(x, y)| Item::Pair(Box::new(x), Box::new(y)))
                    .collect()
            }
            Iter::Chain(a, b, _) => {
                let mut items = self.items(a);
                items.extend(self.items(b));
                items
            }
            Iter::Filter(inner, pat, c) => {
                let mut kept = Vec::new();
                for item in self.items(inner) {
                    self.bind(pat, &item);
                    if self.cond(c) {
                        kept.push(item);
                    }
                }
                kept
            }
        }
    }

    /// Binds the variables of `pat` to `item`.
    fn bind(&mut self, pat: &Pat, item: &Item) {
        match (pat, item) {
            (Pat::Var(v), Item::Float(x)) => self.floats[*v] = *x,
            (Pat::Var(v), Item::Int(j)) => self.ints[*v] = *j,
            (Pat::Var(v), Item::View(w)) => self.bufs[*v].clone_from(w),
            (Pat::Pair(a, b), Item::Pair(x, y)) => {
                self.bind(a, x);
                self.bind(b, y);
            }
            _ => panic!("pattern {pat:?} does not fit {item:?}"),
        }
    }

    /// The items of `it` after `map`.
    fn mapped(&mut self, it: &Iter, map: Option<&Map>) -> Vec<Item> {
        let items = self.items(it);
        match map {
            None => items,
            Some(Map::Inline(pat, body)) => items
                .iter()
                .map(|item| {
                    self.bind(pat, item);
                    Item::Float(self.expr(body))
                })
                .collect(),
            Some(Map::Named(f)) => items
                .iter()
                .map(|item| Item::Float(self.call(*f, item.float())))
                .collect(),
        }
    }

    /// The value of a chain, folded as `std` folds.
    fn chain(&mut self, chain: &Chain) -> f64 {
        let items = self.mapped(&chain.iter, chain.map.as_ref());
        match &chain.consume {
            Consume::Sum => items.iter().map(Item::float).sum::<f64>(),
            Consume::Product => items.iter().map(Item::float).product::<f64>(),
            Consume::Count => items.len() as f64,
            Consume::Fold(init, acc, pat, body) => {
                let mut a = self.expr(init);
                for item in &items {
                    self.floats[*acc] = a;
                    self.bind(pat, item);
                    a = self.expr(body);
                }
                a
            }
            Consume::Extremum(f, init) => {
                let max = *f == Binary::Max;
                let mut a = init.unwrap_or(if max {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                });
                for item in &items {
                    let x = item.float();
                    self.near((a - x).abs());
                    a = if max { f64::max(a, x) } else { f64::min(a, x) };
                }
                a
            }
            Consume::First { last, default } => {
                let item = if *last { items.last() } else { items.first() };
                item.map_or(*default, Item::float)
            }
        }
    }

    /// Whether an assertion holds.
    fn check(&mut self, check: &Check) -> bool {
        match check {
            Check::MinLen(b, k) => self.len(*b) >= *k,
            Check::SameLen(a, b, _) => self.int(a) == self.int(b),
            Check::Finite(e, _) => self.expr(e).is_finite(),
            Check::Bounded(e, _) => self.expr(e).abs() < 1e6,
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
            Stmt::Move(v, w, how) => match how {
                Move::Swap => self.bufs.swap(*v, *w),
                Move::Clone | Move::CopyFrom => self.bufs[*v] = self.bufs[*w].clone(),
            },
            Stmt::Buffer(v, init) => {
                self.bufs[*v] = match init {
                    Init::Fill(e) => vec![self.expr(e); self.input.xs.len()],
                    Init::Copy => self.input.xs.clone(),
                    Init::Sorted => {
                        let mut sorted = self.input.xs.clone();
                        sorted.sort_by(f64::total_cmp);
                        // Two elements swapping places is a kink.
                        for pair in sorted.windows(2) {
                            self.near(pair[1] - pair[0]);
                        }
                        sorted
                    }
                    Init::List(es) => {
                        let mut out = Vec::with_capacity(es.len());
                        for e in es {
                            out.push(self.expr(e));
                        }
                        out
                    }
                    Init::Collect(it, map) | Init::Push(it, map) => self
                        .mapped(it, map.as_ref())
                        .iter()
                        .map(Item::float)
                        .collect(),
                    Init::Clone(b) => self.contents(*b),
                };
            }
            Stmt::Slice(v, start, end, inclusive) => {
                let a = self.int(start);
                let b = match end {
                    Some(end) => self.int(end) + usize::from(*inclusive),
                    None => self.input.xs.len(),
                };
                self.bufs[*v] = self.input.xs[a..b].to_vec();
            }
            Stmt::Split(a, b, k) => {
                let (left, right) = self.input.xs.split_at(self.int(k));
                self.bufs[*a] = left.to_vec();
                self.bufs[*b] = right.to_vec();
            }
            Stmt::Closure(f, _, _) => {
                let vars = self.closures[*f]
                    .as_ref()
                    .map(|c| c.2.clone())
                    .unwrap_or_default();
                self.captured[*f] = vars.iter().map(|&v| self.floats[v]).collect();
            }
            Stmt::Pair(a, b, Pair::SinCos(e)) => {
                let (sin, cos) = self.expr(e).sin_cos();
                self.floats[*a] = sin;
                self.floats[*b] = cos;
            }
            Stmt::Pair(a, b, Pair::Call(g, e)) => {
                let x = self.expr(e);
                let values = self.call_all(*g, x);
                self.floats[*a] = values[0];
                self.floats[*b] = values[1];
            }
            Stmt::Pair(a, b, Pair::Fold(fold)) => {
                let mut acc = [self.expr(&fold.init[0]), self.expr(&fold.init[1])];
                for item in self.items(&fold.iter) {
                    self.floats[fold.acc[0]] = acc[0];
                    self.floats[fold.acc[1]] = acc[1];
                    self.bind(&fold.pat, &item);
                    acc = [self.expr(&fold.body[0]), self.expr(&fold.body[1])];
                }
                self.floats[*a] = acc[0];
                self.floats[*b] = acc[1];
            }
            Stmt::Assert(check) => {
                assert!(self.check(check), "the assertion {check:?} fails");
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
                Loop::Chain(it, pat, _) => {
                    for item in self.items(it) {
                        self.bind(pat, &item);
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
                    Binary::Midpoint => x.midpoint(y),
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
            Expr::Chain(chain) => self.chain(chain),
            Expr::Call(f, a) => {
                let x = self.expr(a);
                self.call(*f, x)
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

/// The local struct some float variables are printed in, `Cell { v: e }`:
/// a source that compiles the programs declares it beside them,
/// `#[derive(Clone, Copy)] struct Cell { v: f64 }`.
pub const CELL: &str = "Cell";

/// The local tuple struct the other half of those variables are printed
/// in, `Wrap(e)` read as `x.0`: a source that compiles the programs declares
/// it beside them, `#[derive(Clone, Copy)] struct Wrap(f64);`.
pub const TUPLE_CELL: &str = "Wrap";

/// Whether the cell variable `v` is printed as a tuple struct
/// ([`TUPLE_CELL`]) rather than with a named field ([`CELL`]).
fn is_tuple_cell(v: Var) -> bool {
    v % 10 == 7
}

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
    /// Lists printed as arrays (`[a, b, c]`, not `vec![a, b, c]`).
    arrays: Set,
    /// Arrays printed as matrices of one row (see [`is_matrix`]), and the
    /// copies of them that are matrices too; their `names` end in `[0]`.
    matrices: Set,
    /// Float variables printed as the field of a local struct, `let x =
    /// Cell { v: e };` read and assigned as `x.v` (see [`CELL`]), or of a
    /// tuple struct, `let x = Wrap(e);` read as `x.0` ([`TUPLE_CELL`]); their
    /// `names` end in `.v` or `.0`.
    cells: Set,
    /// The source so far.
    out: String,
    /// Print the next literal with an `_f64` suffix (an all-literal method
    /// receiver or buffer initializer).
    suffix: bool,
    /// How many `%` have been printed: a few are spelled as calls.
    rems: usize,
    /// How many elements have been read: a few are spelled as `get(i)`
    /// taken out of its `Option` (the index is always in bounds).
    reads: usize,
    /// How many `if`s testing `p && q` or `p || q` have been printed: every
    /// other one is spelled as a `match` on the pair (see
    /// [`Printer::pair_match`]).
    pairs: usize,
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
        let mut arrays = Set::new();
        let mut matrices = Set::new();
        let mut cells = Set::new();
        // In program order within each block, outer blocks first: a copy
        // comes after what it copies.
        retain_deep(&mut body, &mut |s| {
            match s {
                // Every fifth float `let` makes a struct.
                Stmt::Let(v, _) if program.vars[*v] == Kind::Float && *v % 5 == 2 => {
                    cells.insert(*v);
                }
                Stmt::Assign(v, ..) | Stmt::Store(v, ..) => {
                    mutable.insert(*v);
                }
                Stmt::Move(v, w, how) => {
                    mutable.insert(*v);
                    if *how == Move::Swap {
                        mutable.insert(*w);
                    }
                }
                // Every other list is an array, which `let` copies.
                Stmt::Buffer(v, init) if is_array(*v, init) => {
                    arrays.insert(*v);
                    if is_matrix(*v, init) {
                        matrices.insert(*v);
                    }
                }
                // Half the copies of a matrix by `let` copy it whole.
                Stmt::Buffer(v, Init::Clone(Buf::Local(w)))
                    if arrays.contains(w) && matrices.contains(w) && *v % 3 != 0 =>
                {
                    matrices.insert(*v);
                }
                _ => {}
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
                    Kind::Slice { .. } => "s",
                    Kind::Closure => "f",
                    Kind::PairClosure => "g",
                };
                let quiet = !read.contains(&v) || liveness.dead_lets.contains(&v);
                let row = if matrices.contains(&v) {
                    "[0]"
                } else if cells.contains(&v) {
                    if is_tuple_cell(v) { ".0" } else { ".v" }
                } else {
                    ""
                };
                format!("{}{prefix}{v}{row}", if quiet { "_" } else { "" })
            })
            .collect();
        Printer {
            program,
            names,
            mutable,
            arrays,
            matrices,
            cells,
            out: String::new(),
            suffix: false,
            rems: 0,
            reads: 0,
            pairs: 0,
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

    /// The name `v` is declared with: a matrix's without the row, a
    /// cell's without the field.
    fn base_name(&self, v: Var) -> &str {
        let name = &self.names[v];
        if self.matrices.contains(&v) {
            name.strip_suffix("[0]").unwrap_or(name)
        } else if self.cells.contains(&v) {
            name.strip_suffix(if is_tuple_cell(v) { ".0" } else { ".v" })
                .unwrap_or(name)
        } else {
            name
        }
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
            Stmt::Let(v, e) if self.cells.contains(v) => {
                let (open, close) = if is_tuple_cell(*v) {
                    (format!("{TUPLE_CELL}("), ");\n")
                } else {
                    (format!("{CELL} {{ v: "), " };\n")
                };
                let head = format!("let {}{} = {open}", self.mutability(*v), self.base_name(*v));
                self.out.push_str(&head);
                self.value(e);
                self.out.push_str(close);
            }
            Stmt::Let(v, e) => {
                let head = format!("let {}{} = ", self.mutability(*v), self.name(*v));
                self.out.push_str(&head);
                self.value(e);
                self.out.push_str(";\n");
            }
            Stmt::Assign(..) | Stmt::Store(..) => {
                self.simple(s);
                self.out.push_str(";\n");
            }
            Stmt::Move(v, w, how) => {
                let (v, w) = (self.base_name(*v), self.base_name(*w));
                let line = match how {
                    Move::Clone => format!("{v} = {w}.clone();\n"),
                    Move::CopyFrom => format!("{v}.copy_from_slice(&{w});\n"),
                    Move::Swap => format!("std::mem::swap(&mut {v}, &mut {w});\n"),
                };
                self.out.push_str(&line);
            }
            Stmt::Buffer(v, init) => {
                // A buffer filled by pushes is `mut` whether or not it is
                // written afterwards.
                let mutability = if matches!(init, Init::Push(..)) {
                    "mut "
                } else {
                    self.mutability(*v)
                };
                let head = format!("let {mutability}{} = ", self.base_name(*v));
                self.out.push_str(&head);
                match init {
                    Init::Fill(e) => {
                        self.out.push_str("vec![");
                        self.suffix = !typed(e);
                        self.expr(e, 0, false);
                        self.out.push_str("; xs.len()]");
                    }
                    Init::Copy => self.out.push_str("xs.to_vec()"),
                    Init::Sorted => self.out.push_str(
                        "{ let mut sorted = xs.to_vec(); sorted.sort_by(f64::total_cmp); sorted }",
                    ),
                    Init::List(es) => {
                        if !self.arrays.contains(v) {
                            self.out.push_str("vec!");
                        }
                        self.out.push('[');
                        let matrix = self.matrices.contains(v);
                        if matrix {
                            self.out.push('[');
                        }
                        self.suffix = !es.iter().any(typed);
                        for (j, e) in es.iter().enumerate() {
                            if j > 0 {
                                self.out.push_str(", ");
                            }
                            self.expr(e, 0, false);
                        }
                        self.out.push(']');
                        if matrix {
                            self.out.push(']');
                        }
                    }
                    Init::Collect(it, map) => {
                        // Both ways to name the type: on the binding, or
                        // by turbofish.
                        let annotated = *v % 2 == 0;
                        if annotated {
                            self.out.truncate(self.out.len() - 3);
                            self.out.push_str(": Vec<f64> = ");
                        }
                        self.iter(it, false);
                        self.map(map.as_ref(), &item_ty(it, &self.program.vars));
                        self.out.push_str(if annotated {
                            ".collect()"
                        } else {
                            ".collect::<Vec<f64>>()"
                        });
                    }
                    // A copy of an array by `let`, as a whole; of a matrix,
                    // whole (a matrix) or its row (an array).
                    Init::Clone(Buf::Local(w)) if self.arrays.contains(w) => {
                        let name = match self.matrices.contains(v) {
                            true => self.base_name(*w),
                            false => self.name(*w),
                        }
                        .to_owned();
                        self.out.push_str(&name);
                    }
                    Init::Clone(b) => {
                        // `.clone()` of every other local `Vec` (of a view,
                        // it would copy the reference).
                        let name = self.buf_name(*b);
                        let vec = matches!(b, Buf::Local(w) if matches!(self.program.vars[*w], Kind::Buffer { .. }));
                        let method = if vec && *v % 2 == 1 {
                            "clone"
                        } else {
                            "to_vec"
                        };
                        let _ = write!(self.out, "{name}.{method}()");
                    }
                    Init::Push(it, map) => {
                        // Both ways to make it: empty, or with its capacity.
                        let vars = &self.program.vars;
                        if *v % 3 == 0 {
                            self.out.push_str("Vec::new()");
                        } else if vars[*v] == (Kind::Buffer { short: true }) {
                            self.out.push_str("Vec::with_capacity(3)");
                        } else {
                            self.out.push_str("Vec::with_capacity(xs.len())");
                        }
                        self.out.push_str(";\n");
                        self.pad(depth);
                        let ty = item_ty(it, vars);
                        let (pat, body) = match map {
                            Some(Map::Inline(pat, body)) => (self.pat(pat, &ty), body),
                            _ => return,
                        };
                        let _ = write!(self.out, "for {pat} in ");
                        self.iter(it, true);
                        self.out.push_str(" {\n");
                        self.pad(depth + 1);
                        let name = self.name(*v).to_string();
                        let _ = write!(self.out, "{name}.push(");
                        self.value(body);
                        self.out.push_str(");\n");
                        self.pad(depth);
                        self.out.push_str("}\n");
                        return;
                    }
                }
                self.out.push_str(";\n");
            }
            Stmt::Slice(v, start, end, inclusive) => {
                let head = format!("let {} = &xs[", self.name(*v));
                self.out.push_str(&head);
                if *start != IntExpr::Lit(0) {
                    self.int(start, 0);
                }
                self.out.push_str(if *inclusive { "..=" } else { ".." });
                if let Some(end) = end {
                    self.int(end, 0);
                }
                self.out.push_str("];\n");
            }
            Stmt::Split(a, b, k) => {
                let head = format!("let ({}, {}) = xs.split_at(", self.name(*a), self.name(*b));
                self.out.push_str(&head);
                self.int(k, 0);
                self.out.push_str(");\n");
            }
            Stmt::Closure(f, t, bodies) => {
                // `move` when it reads a variable that changes later, so
                // that it keeps the value it saw (a borrow would stop the
                // change).
                let mut read = Set::new();
                bodies.iter().for_each(|e| expr_reads(e, &mut read));
                let program = self.program;
                let moves = (0..program.vars.len()).any(|v| {
                    read.contains(&v)
                        && (program.vars[v] == Kind::Counter
                            || (program.vars[v] == Kind::Float && self.mutable.contains(&v)))
                });
                let head = format!(
                    "let {} = {}|{}: f64| ",
                    self.name(*f),
                    if moves { "move " } else { "" },
                    self.name(*t)
                );
                self.out.push_str(&head);
                if let [body] = bodies.as_slice() {
                    self.value(body);
                } else {
                    self.out.push('(');
                    for (k, body) in bodies.iter().enumerate() {
                        if k > 0 {
                            self.out.push_str(", ");
                        }
                        self.value(body);
                    }
                    self.out.push(')');
                }
                self.out.push_str(";\n");
            }
            Stmt::Pair(a, b, pair) => {
                let head = format!(
                    "let ({}{}, {}{}) = ",
                    self.mutability(*a),
                    self.name(*a),
                    self.mutability(*b),
                    self.name(*b)
                );
                self.out.push_str(&head);
                match pair {
                    Pair::SinCos(e) => {
                        self.receiver(e);
                        self.out.push_str(".sin_cos()");
                    }
                    Pair::Call(g, e) => {
                        let name = self.name(*g).to_string();
                        let _ = write!(self.out, "{name}(");
                        self.value(e);
                        self.out.push(')');
                    }
                    Pair::Fold(fold) => {
                        self.iter(&fold.iter, false);
                        self.out.push_str(".fold((");
                        self.value(&fold.init[0]);
                        self.out.push_str(", ");
                        self.value(&fold.init[1]);
                        let pat = self.pat(&fold.pat, &item_ty(&fold.iter, &self.program.vars));
                        let head = format!(
                            "), |({}, {}), {pat}| (",
                            self.name(fold.acc[0]),
                            self.name(fold.acc[1])
                        );
                        self.out.push_str(&head);
                        self.value(&fold.body[0]);
                        self.out.push_str(", ");
                        self.value(&fold.body[1]);
                        self.out.push_str("))");
                    }
                }
                self.out.push_str(";\n");
            }
            Stmt::Assert(check) => {
                self.check(check);
                self.out.push_str(";\n");
            }
            Stmt::If(c, then, otherwise) => {
                if let Some(pattern) = self.pair_head(c) {
                    self.out.push('\n');
                    for (arm, block) in [(pattern.as_str(), then), ("_", otherwise)] {
                        self.pad(depth + 1);
                        let _ = writeln!(self.out, "{arm} => {{");
                        self.block(block, depth + 2);
                        self.pad(depth + 1);
                        self.out.push_str("}\n");
                    }
                    self.pad(depth);
                    self.out.push_str("}\n");
                    return;
                }
                self.out.push_str("if ");
                self.cond(c, 0);
                self.out.push_str(" {\n");
                self.block(then, depth + 1);
                self.pad(depth);
                self.out.push('}');
                match otherwise.as_slice() {
                    [] => self.out.push('\n'),
                    [nested @ Stmt::If(c, ..)] if !self.pair_next(c) => {
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
                    // Every other one (by its index variable) counts its
                    // items in a `map` closure, an `FnMut` whose count the
                    // loop must carry: `let mut i1_seen = 0; for (i1, &e2)
                    // in b.iter().map(|e| { i1_seen += 1; (i1_seen - 1, e)
                    // }) { … }` (the body cannot read the count: the
                    // closure borrows it).
                    Loop::Enumerate(b, i, e) if *i % 2 == 1 => {
                        self.out.truncate(self.out.len() - "for ".len());
                        let index = self.name(*i).to_string();
                        let seen = format!("{}_seen", index.trim_start_matches('_'));
                        let _ = writeln!(self.out, "let mut {seen} = 0;");
                        self.pad(depth);
                        let head = format!(
                            "for ({index}, {}) in {}.iter().map(|e| {{ {seen} += 1; ({seen} - 1, e) }})",
                            self.pattern(*e),
                            self.buf_name(*b)
                        );
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
                    Loop::Chain(it, pat, for_each) => {
                        let ty = item_ty(it, &self.program.vars);
                        let pat = self.pat(pat, &ty);
                        if let (true, [single @ Stmt::Store(..)]) = (*for_each, body.as_slice()) {
                            // `for` before `for_each`: nothing else is
                            // printed for the loop.
                            self.out.truncate(self.out.len() - "for ".len());
                            self.iter(it, false);
                            let _ = write!(self.out, ".for_each(|{pat}| ");
                            self.simple(single);
                            self.out.push_str(");\n");
                            return;
                        }
                        let _ = write!(self.out, "{pat} in ");
                        self.iter(it, true);
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

    /// An assignment or a buffer write, without `;`.
    fn simple(&mut self, s: &Stmt) {
        match s {
            // Every fourth variable is set through a tuple assignment,
            // `(x, _) = (e, 0.0)`, which is `x = e`.
            Stmt::Assign(v, Op::Set, e) if *v % 4 == 3 => {
                let head = format!("({}, _) = (", self.name(*v));
                self.out.push_str(&head);
                self.value(e);
                self.out.push_str(", 0.0)");
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
            }
            Stmt::Store(v, i, op, e) => {
                let name = self.name(*v).to_string();
                self.out.push_str(&name);
                self.out.push('[');
                self.int(i, 0);
                let _ = write!(self.out, "] {} ", op_str(*op));
                self.expr(e, 0, false);
            }
            _ => {}
        }
    }

    /// Prints an iterator; `whole`: not the receiver of a method (a range
    /// needs no parentheses).
    fn iter(&mut self, it: &Iter, whole: bool) {
        match it {
            Iter::Elems(b) => {
                let name = self.buf_name(*b);
                let _ = write!(self.out, "{name}.iter()");
            }
            Iter::Range(end) => {
                self.out.push_str(if whole { "0.." } else { "(0.." });
                self.int(end, P_ADD + 1);
                if !whole {
                    self.out.push(')');
                }
            }
            Iter::Windows(b, k) => {
                let name = self.buf_name(*b);
                let _ = write!(self.out, "{name}.windows({k})");
            }
            Iter::Chunks(b, k, exact) => {
                let name = self.buf_name(*b);
                let exact = if *exact { "_exact" } else { "" };
                let _ = write!(self.out, "{name}.chunks{exact}({k})");
            }
            Iter::Copied(inner) => {
                self.iter(inner, false);
                self.out.push_str(".copied()");
            }
            Iter::Adapt(inner, a) => {
                self.iter(inner, false);
                let _ = match a {
                    Adapt::Rev => write!(self.out, ".rev()"),
                    Adapt::Skip(k) => write!(self.out, ".skip({k})"),
                    Adapt::Take(k) => write!(self.out, ".take({k})"),
                    Adapt::StepBy(k) => write!(self.out, ".step_by({k})"),
                };
            }
            Iter::Enumerate(inner) => {
                self.iter(inner, false);
                self.out.push_str(".enumerate()");
            }
            Iter::Zip(a, b, bare) | Iter::Chain(a, b, bare) => {
                self.iter(a, false);
                self.out.push_str(if matches!(it, Iter::Zip(..)) {
                    ".zip("
                } else {
                    ".chain("
                });
                match (&**b, bare) {
                    (Iter::Elems(c), true) => {
                        let name = self.buf_name(*c);
                        let vec = matches!(c, Buf::Local(v) if matches!(self.program.vars[*v], Kind::Buffer { .. }));
                        let _ = write!(self.out, "{}{name}", if vec { "&" } else { "" });
                    }
                    _ => self.iter(b, true),
                }
                self.out.push(')');
            }
            Iter::Filter(inner, pat, c) => {
                self.iter(inner, false);
                let pat = self.pat(pat, &item_ty(inner, &self.program.vars));
                let _ = write!(self.out, ".filter(|&{pat}| ");
                self.cond(c, 0);
                self.out.push(')');
            }
        }
    }

    /// Prints `.map(…)` of items of type `ty`, if there is one.
    fn map(&mut self, map: Option<&Map>, ty: &Ty) {
        match map {
            Some(Map::Inline(pat, body)) => {
                let pat = self.pat(pat, ty);
                let _ = write!(self.out, ".map(|{pat}| ");
                self.value(body);
                self.out.push(')');
            }
            Some(Map::Named(f)) => {
                let head = format!(".map({})", self.name(*f));
                self.out.push_str(&head);
            }
            None => {}
        }
    }

    /// Prints a chain and its consumer.
    fn chain(&mut self, chain: &Chain) {
        let vars = &self.program.vars;
        // `….filter(p).next()` as `….find(p)`: the same closure.
        if let (
            Consume::First {
                last: false,
                default,
            },
            None,
            Iter::Filter(inner, pat, c),
        ) = (&chain.consume, &chain.map, &chain.iter)
        {
            self.iter(inner, false);
            let pat = self.pat(pat, &item_ty(inner, vars));
            let _ = write!(self.out, ".find(|&{pat}| ");
            self.cond(c, 0);
            self.out.push(')');
            self.first_out(&mapped_ty(chain, vars), *default);
            return;
        }
        self.iter(&chain.iter, false);
        self.map(chain.map.as_ref(), &item_ty(&chain.iter, vars));
        match &chain.consume {
            Consume::Sum => self.out.push_str(".sum::<f64>()"),
            Consume::Product => self.out.push_str(".product::<f64>()"),
            Consume::Count => self.out.push_str(".count() as f64"),
            Consume::Fold(init, acc, pat, body) => {
                self.out.push_str(".fold(");
                self.value(init);
                let pat = self.pat(pat, &mapped_ty(chain, vars));
                let head = format!(", |{}, {pat}| ", self.name(*acc));
                self.out.push_str(&head);
                self.value(body);
                self.out.push(')');
            }
            Consume::Extremum(f, init) => {
                let (start, name) = match f {
                    Binary::Max => ("f64::NEG_INFINITY", "f64::max"),
                    _ => ("f64::INFINITY", "f64::min"),
                };
                let _ = match init {
                    None => write!(self.out, ".fold({start}, {name})"),
                    Some(c) => write!(self.out, ".fold({c:?}, {name})"),
                };
            }
            Consume::First { last, default } => {
                self.out.push_str(if *last { ".last()" } else { ".next()" });
                self.first_out(&mapped_ty(chain, vars), *default);
            }
        }
    }

    /// Prints how [`Consume::First`]'s item is taken out of its `Option`.
    fn first_out(&mut self, ty: &Ty, default: f64) {
        if *ty == Ty::Ref {
            self.out.push_str(".copied()");
        }
        let _ = write!(self.out, ".unwrap_or({default:?})");
    }

    /// Prints an assertion, without `;`.
    fn check(&mut self, check: &Check) {
        match check {
            Check::MinLen(b, k) => {
                let name = self.buf_name(*b);
                let _ = if *k == 1 {
                    write!(self.out, "assert!(!{name}.is_empty())")
                } else {
                    write!(self.out, "assert!({name}.len() >= {k})")
                };
            }
            Check::SameLen(a, b, debug) => {
                let _ = write!(
                    self.out,
                    "{}assert_eq!(",
                    if *debug { "debug_" } else { "" }
                );
                self.int(a, 0);
                self.out.push_str(", ");
                self.int(b, 0);
                self.out.push(')');
            }
            Check::Finite(e, debug) => {
                let _ = write!(self.out, "{}assert!(", if *debug { "debug_" } else { "" });
                self.receiver(e);
                self.out.push_str(".is_finite())");
            }
            Check::Bounded(e, message) => {
                self.out.push_str("assert!(");
                self.receiver(e);
                self.out.push_str(".abs() < 1e6");
                match (message, e) {
                    (0, _) => {}
                    (1, Expr::Var(v)) => {
                        let name = self.name(*v).to_string();
                        let _ = write!(self.out, ", \"{name} = {{{name}}}\"");
                    }
                    _ => {
                        self.out.push_str(", \"too large: {}\", ");
                        self.expr(e, 0, false);
                    }
                }
                self.out.push(')');
            }
        }
    }

    /// The pattern of items of type `ty`.
    fn pat(&self, pat: &Pat, ty: &Ty) -> String {
        match (pat, ty) {
            (Pat::Var(v), Ty::Ref) => self.pattern(*v),
            (Pat::Var(v), _) => self.name(*v).to_string(),
            (Pat::Pair(a, b), Ty::Pair(x, y)) => {
                format!("({}, {})", self.pat(a, x), self.pat(b, y))
            }
            (Pat::Pair(a, b), _) => format!("({}, {})", self.pat(a, ty), self.pat(b, ty)),
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
            Expr::Chain(chain) if chain.consume == Consume::Count => P_CAST,
            Expr::Index(..)
            | Expr::Reduce(..)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::MulAdd(..)
            | Expr::Chain(..)
            | Expr::Call(..) => P_POST,
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
                self.reads += 1;
                match self.reads % 6 {
                    1 => {
                        self.out.push_str(".get(");
                        self.int(i, 0);
                        self.out.push_str(").copied().unwrap_or(0.0)");
                    }
                    4 => {
                        self.out.push_str(".get(");
                        self.int(i, 0);
                        self.out.push_str(").map_or(0.0, |&v| v)");
                    }
                    _ => {
                        self.out.push('[');
                        self.int(i, 0);
                        self.out.push(']');
                    }
                }
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
                    Binary::Midpoint => ".midpoint(",
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
                if self.pair_match(c, a, b) {
                    return;
                }
                self.out.push_str("if ");
                self.cond(c, 0);
                self.out.push_str(" { ");
                self.expr(a, 0, false);
                self.out.push_str(" } else { ");
                self.expr(b, 0, false);
                self.out.push_str(" }");
            }
            Expr::Chain(chain) => self.chain(chain),
            Expr::Call(f, a) => {
                let name = self.name(*f).to_string();
                let _ = write!(self.out, "{name}(");
                self.expr(a, 0, false);
                self.out.push(')');
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
                self.suffix = true;
                if self.pair_match(c, a, b) {
                    return;
                }
                self.suffix = false;
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

    /// Prints every other `if p && q { a } else { b }` as the `match` on
    /// the pair a user writes, `match (p, q) { (true, true) => a, _ => b }`
    /// (see [`Printer::pair_head`]). Whether it printed one.
    fn pair_match(&mut self, c: &Cond, a: &Expr, b: &Expr) -> bool {
        let suffix = std::mem::take(&mut self.suffix);
        let Some(pattern) = self.pair_head(c) else {
            self.suffix = suffix;
            return false;
        };
        let _ = write!(self.out, " {pattern} => ");
        self.suffix = suffix;
        self.expr(a, 0, false);
        self.out.push_str(", _ => ");
        self.expr(b, 0, false);
        self.out.push_str(" }");
        true
    }

    /// For every other test `p && q` (`p || q`), prints `match (p, q) {`
    /// and returns the pattern of the pair that passes: `(true, true)`
    /// (`(true, _) | (_, true)`); a side `i == k`, `i < k` or `i > k` of a
    /// literal `k` is matched as the integer, by `k`, `0..k` or `k + 1..`
    /// (`(i, …) { (2, …) => … }`). Both sides are evaluated
    /// where `&&` would skip one: the generator's conditions cannot panic
    /// and have no effects, so the value is the same.
    fn pair_head(&mut self, c: &Cond) -> Option<String> {
        let (Cond::And(p, q) | Cond::Or(p, q)) = c else {
            return None;
        };
        let pair = self.pair_next(c);
        self.pairs += 1;
        if !pair {
            return None;
        }
        let mut patterns = Vec::new();
        self.out.push_str("match (");
        for (k, side) in [p, q].into_iter().enumerate() {
            if k > 0 {
                self.out.push_str(", ");
            }
            match &**side {
                Cond::Int(op, i, IntExpr::Lit(lit)) => {
                    self.int(i, 0);
                    patterns.push(match op {
                        IntCmp::Eq => lit.to_string(),
                        IntCmp::Lt => format!("0..{lit}"),
                        IntCmp::Gt => format!("{}..", lit + 1),
                    });
                }
                side => {
                    self.cond(side, 0);
                    patterns.push("true".to_owned());
                }
            }
        }
        self.out.push_str(") {");
        Some(match c {
            Cond::And(..) => format!("({}, {})", patterns[0], patterns[1]),
            _ => format!("({}, _) | (_, {})", patterns[0], patterns[1]),
        })
    }

    /// Whether [`Printer::pair_head`] prints the test `c` as a `match`.
    fn pair_next(&self, c: &Cond) -> bool {
        matches!(c, Cond::And(..) | Cond::Or(..)) && self.pairs % 2 == 1
    }

    /// Prints an integer expression at precedence `ctx`.
    fn int(&mut self, e: &IntExpr, ctx: u8) {
        // Every fourth `%` is a call of `std`, and every fourth one of the
        // user's (`wrap`, see the corpus's `build.rs`): functions of
        // integers, which `#[differentiate]` runs as written.
        let call = matches!(e, IntExpr::Rem(..)) && self.rems % 2 == 1;
        let p = match e {
            _ if call => P_ATOM,
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
            IntExpr::Rem(a, b) if call => {
                let function = if self.rems % 4 == 1 {
                    "usize::rem_euclid"
                } else {
                    "wrap"
                };
                self.rems += 1;
                let _ = write!(self.out, "{function}(");
                self.int(a, 0);
                self.out.push_str(", ");
                self.int(b, 0);
                self.out.push(')');
            }
            IntExpr::Add(a, b) | IntExpr::Sub(a, b) | IntExpr::Rem(a, b) => {
                if let IntExpr::Rem(..) = e {
                    self.rems += 1;
                }
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
            if let Stmt::Buffer(_, Init::Copy | Init::Sorted | Init::Fill(_))
            | Stmt::Slice(..)
            | Stmt::Split(..) = s
            {
                uses.xs = true;
            }
            // `Vec::with_capacity(xs.len())`.
            if let Stmt::Buffer(v, Init::Push(..)) = s
                && program.vars[*v] == (Kind::Buffer { short: false })
                && *v % 3 != 0
            {
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

    /// Whether a program's source makes a buffer in a nested block (a line
    /// indented more than the body's that binds a new `Vec`).
    fn block_local_buffer(text: &str) -> bool {
        text.lines().any(|l| {
            l.starts_with("        ")
                && l.trim_start().starts_with("let ")
                && [
                    "vec![",
                    " = [",
                    ".to_vec()",
                    ".clone()",
                    ".collect",
                    "Vec::new()",
                    "Vec::with_capacity(",
                ]
                .iter()
                .any(|p| l.contains(p))
        })
    }

    /// The buffers made in nested blocks of `block`: whether the innermost
    /// block around each is a loop's body (not a branch's), and how it is
    /// made.
    fn temporaries(block: &[Stmt], in_loop: Option<bool>, out: &mut Vec<(bool, Init)>) {
        for s in block {
            match s {
                Stmt::Buffer(_, init) => {
                    if let Some(in_loop) = in_loop {
                        out.push((in_loop, init.clone()));
                    }
                }
                Stmt::If(_, a, b) => {
                    temporaries(a, Some(false), out);
                    temporaries(b, Some(false), out);
                }
                Stmt::For(_, body) | Stmt::While(_, _, body) => {
                    temporaries(body, Some(true), out);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn integer_functions_appear_in_both_spellings() {
        // Every other `%` is a call (of `std` or of the corpus's `wrap`),
        // which `#[differentiate]` runs as written: in loops too.
        let config = Config::default();
        let (mut std_calls, mut helper_calls, mut in_loops) = (0, 0, 0);
        for seed in 0..300 {
            let text = Program::generate(seed, &config).to_rust("f");
            std_calls += usize::from(text.contains("usize::rem_euclid("));
            helper_calls += usize::from(text.contains("wrap(") && !text.contains("fn wrap("));
            in_loops += usize::from(text.lines().any(|line| {
                line.starts_with("        ")
                    && (line.contains("wrap(") || line.contains("rem_euclid("))
            }));
        }
        assert!(
            std_calls >= 40 && helper_calls >= 20 && in_loops >= 40,
            "{std_calls} programs call `usize::rem_euclid`, {helper_calls} `wrap`, {in_loops} in a block"
        );
    }

    #[test]
    fn temporaries_are_moved_into_outer_buffers() {
        // Double buffering: a temporary `Vec` of a loop or a branch moved
        // into one made before it, in each of the three ways.
        let config = Config::default();
        let mut forms = [0_usize; 3];
        for seed in 0..1000 {
            let text = Program::generate(seed, &config).to_rust("f");
            let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("        ")).collect();
            let assigned = |line: &&str| {
                let line = line.trim();
                !line.starts_with("let ") && line.contains(" = ") && line.ends_with(".clone();")
            };
            forms[0] += usize::from(lines.iter().any(assigned));
            forms[1] += usize::from(lines.iter().any(|l| l.contains(".copy_from_slice(&")));
            forms[2] += usize::from(lines.iter().any(|l| l.contains("std::mem::swap(&mut ")));
        }
        assert!(
            forms.iter().all(|&k| k >= 5),
            "of 1000 programs, {} assign a clone, {} copy from a slice, {} swap",
            forms[0],
            forms[1],
            forms[2]
        );
    }

    #[test]
    fn element_reads_appear_as_get_too() {
        // Every sixth read is `get(i)` out of its `Option` (`unwrap_or`,
        // `map_or`): of parameters, local buffers, views, in loops too.
        let config = Config::default();
        let (mut unwrap_or, mut map_or, mut in_loops) = (0, 0, 0);
        for seed in 0..300 {
            let text = Program::generate(seed, &config).to_rust("f");
            unwrap_or += usize::from(text.contains(").copied().unwrap_or(0.0)"));
            map_or += usize::from(text.contains(").map_or(0.0, |&v| v)"));
            in_loops += usize::from(
                text.lines()
                    .any(|line| line.starts_with("        ") && line.contains(".get(")),
            );
        }
        assert!(
            unwrap_or >= 60 && map_or >= 30 && in_loops >= 40,
            "{unwrap_or} programs read `get(i).copied().unwrap_or`, {map_or} `get(i).map_or`, {in_loops} in a block"
        );
    }

    #[test]
    fn enumerated_loops_appear_counted_by_a_closure_too() {
        // Every other enumerated loop counts its items in a `map` closure
        // (an `FnMut`), whose count the body reads as its index.
        let config = Config::default();
        let (mut enumerated, mut counted) = (0, 0);
        for seed in 0..300 {
            let text = Program::generate(seed, &config).to_rust("f");
            enumerated += usize::from(text.contains(".iter().enumerate() {"));
            counted += usize::from(text.contains("_seen - 1, e) })"));
        }
        assert!(
            counted >= 15 && enumerated >= 15,
            "{counted} programs count items in a closure, {enumerated} enumerate"
        );
    }

    #[test]
    fn matrices_appear_copied_whole_and_by_row() {
        // Half the arrays are matrices of one row; their copies by `let`
        // copy the matrix (`let w = v;`) or its row (`let w = v[0];`).
        let config = Config::default();
        let (mut matrices, mut whole, mut rows) = (0, 0, 0);
        for seed in 0..1500 {
            let p = Program::generate(seed, &config);
            let text = p.to_rust("f");
            let printer = Printer::new(&p);
            matrices += usize::from(text.contains(" = [[") && text.contains("[0]["));
            let (mut copied_whole, mut copied_row) = (false, false);
            retain_deep(&mut p.body.clone(), &mut |s| {
                if let Stmt::Buffer(v, Init::Clone(Buf::Local(w))) = s
                    && printer.matrices.contains(w)
                    && printer.arrays.contains(w)
                {
                    let (copy, source) = (printer.base_name(*v), printer.base_name(*w));
                    copied_whole |= text.contains(&format!("{copy} = {source};"));
                    copied_row |= text.contains(&format!("{copy} = {source}[0];"));
                }
                true
            });
            whole += usize::from(copied_whole);
            rows += usize::from(copied_row);
        }
        assert!(
            matrices >= 30 && whole >= 6 && rows >= 1,
            "{matrices} programs make a matrix, {whole} copy one whole, {rows} copy its row"
        );
    }

    #[test]
    fn pairs_of_tests_appear_as_tuple_matches() {
        // Every other `if p && q` (`p || q`) is a `match` on the pair, some
        // with an integer side matched by a literal or a range.
        let config = Config::default();
        let (mut ands, mut ors, mut integers) = (0, 0, 0);
        for seed in 0..500 {
            let text = Program::generate(seed, &config).to_rust("f");
            for arm in text.split("match (").skip(1) {
                let head = arm.split(" => ").next().unwrap_or_default();
                let pattern = head.rsplit('{').next().unwrap_or_default();
                ands += usize::from(!pattern.contains('|'));
                ors += usize::from(pattern.contains(" | "));
                integers += usize::from(pattern.contains(char::is_numeric));
            }
        }
        assert!(
            ands >= 8 && ors >= 8 && integers >= 6,
            "{ands} `&&` pairs, {ors} `||` pairs, {integers} with an integer side"
        );
    }

    #[test]
    fn lists_appear_as_arrays_copied_by_let_too() {
        // Every other list is an array; every other copy of one is a `let`
        // of the array as a whole, which Rust copies.
        let config = Config::default();
        let (mut arrays, mut copies) = (0, 0);
        for seed in 0..500 {
            let p = Program::generate(seed, &config);
            let text = p.to_rust("f");
            let printer = Printer::new(&p);
            arrays += usize::from(
                text.lines()
                    .any(|line| line.trim_start().starts_with("let ") && line.contains(" = [")),
            );
            let mut copied = false;
            retain_deep(&mut p.body.clone(), &mut |s| {
                if let Stmt::Buffer(v, Init::Clone(Buf::Local(w))) = s {
                    let line = format!("{} = {};", printer.name(*v), printer.name(*w));
                    copied |= printer.arrays.contains(w) && text.contains(&line);
                }
                true
            });
            copies += usize::from(copied);
        }
        assert!(
            arrays >= 25 && copies >= 6,
            "{arrays} programs make an array, {copies} copy one by `let`"
        );
    }

    #[test]
    fn first_and_last_items_appear_in_every_spelling() {
        // `find`, `.next()` and `.last()` of chains, of `&f64` items
        // (copied) and of values.
        let config = Config::default();
        let mut seen = [0_usize; 4];
        for seed in 0..500 {
            let text = Program::generate(seed, &config).to_rust("f");
            for (count, form) in seen.iter_mut().zip([".find(|&", ".next()", ".last()"]) {
                *count += usize::from(text.contains(form));
            }
            seen[3] +=
                usize::from(text.contains(".next().copied()") || text.contains(".last().copied()"));
        }
        assert!(
            seen.iter().all(|&n| n >= 3),
            "find, next, last, copied: {seen:?}"
        );
    }

    #[test]
    fn chains_of_two_parts_appear_with_what_follows_them() {
        // `a.chain(b)`, `b` bare or an iterator, with `filter`, `copied`,
        // `skip`, `take`, `enumerate` and each kind of consumer after it;
        // every one valid.
        let config = Config::default();
        let mut seen = [0_usize; 6];
        for seed in 0..500 {
            let p = Program::generate(seed, &config);
            assert!(p.valid(), "seed {seed}");
            let text = p.to_rust("f");
            for line in text.lines().filter(|line| line.contains(".chain(")) {
                seen[0] += 1;
                seen[1] += usize::from(line.contains(".chain(xs)") || line.contains(".chain(&"));
                seen[2] += usize::from(line.contains(".filter("));
                seen[3] += usize::from(line.contains(".fold("));
                seen[4] += usize::from(line.contains(".next()") || line.contains(".last()"));
                seen[5] += usize::from(
                    line.contains(").skip(") || line.contains(").take(") || {
                        let after = &line[line.find(".chain(").expect("a chain")..];
                        after.contains(".enumerate()")
                    },
                );
            }
        }
        assert!(
            seen[0] >= 20 && seen[1..].iter().all(|&n| n >= 2),
            "chains, bare, filtered, folded, first or last, counted: {seen:?}"
        );
    }

    #[test]
    fn temporaries_appear_in_loops_and_branches_in_every_form() {
        // About a fifth of the programs make a buffer in a loop body or a
        // branch, in each of the forms; never a sorted copy (the macro sorts
        // at the top level only).
        let config = Config::default();
        let mut programs = 0;
        let (mut in_loops, mut in_branches) = (0, 0);
        let mut forms = [0_usize; 6];
        for seed in 0..500 {
            let p = Program::generate(seed, &config);
            let mut found = Vec::new();
            temporaries(&p.body, None, &mut found);
            let text = p.to_rust("f");
            assert_eq!(
                block_local_buffer(&text),
                !found.is_empty(),
                "seed {seed}:\n{text}"
            );
            programs += usize::from(!found.is_empty());
            for (in_loop, init) in found {
                if in_loop {
                    in_loops += 1;
                } else {
                    in_branches += 1;
                }
                let form = match init {
                    Init::Fill(_) => 0,
                    Init::List(_) => 1,
                    Init::Copy => 2,
                    Init::Clone(_) => 3,
                    Init::Collect(..) => 4,
                    Init::Push(..) => 5,
                    Init::Sorted => panic!("seed {seed}: a sorted copy in a block\n{text}"),
                };
                forms[form] += 1;
            }
        }
        println!(
            "{programs} of 500 programs; {in_loops} in loops, {in_branches} in branches; \
             fill, list, copy, clone, collect, push: {forms:?}"
        );
        assert!((50..=200).contains(&programs), "{programs} of 500");
        assert!(
            in_loops >= 20 && in_branches >= 20,
            "{in_loops}, {in_branches}"
        );
        assert!(forms.iter().all(|&k| k >= 3), "{forms:?}");
    }

    /// A hand-written program with a temporary buffer in a loop (filled,
    /// written, copied by pushes, summed) and two in a branch (a list, its
    /// clone, and a `collect` of the clone).
    fn with_temporaries() -> Program {
        let elem = |by_ref| Kind::Elem {
            by_ref,
            bare: false,
        };
        let vars = vec![
            Kind::Float,
            Kind::Index,
            Kind::Buffer { short: false },
            Kind::Buffer { short: false },
            elem(false),
            Kind::Buffer { short: true },
            elem(true),
            Kind::Buffer { short: true },
            Kind::Buffer { short: true },
        ];
        let body = vec![
            Stmt::Let(0, Expr::Const(0.0)),
            Stmt::For(
                Loop::Range(1, IntExpr::Len(Buf::Xs)),
                vec![
                    Stmt::Buffer(
                        2,
                        Init::Fill(mul(Expr::Param(0), Expr::Index(Buf::Xs, IntExpr::Var(1)))),
                    ),
                    Stmt::Store(2, IntExpr::Var(1), Op::Add, Expr::Param(1)),
                    Stmt::Buffer(
                        3,
                        Init::Push(
                            Iter::Elems(Buf::Local(2)),
                            Some(Map::Inline(Pat::Var(4), mul(Expr::Var(4), Expr::Param(2)))),
                        ),
                    ),
                    Stmt::Assign(
                        0,
                        Op::Add,
                        Expr::Unary(
                            Unary::Tanh,
                            Box::new(Expr::Reduce(Buf::Local(3), Reduction::Sum)),
                        ),
                    ),
                ],
            ),
            Stmt::If(
                Cond::Int(IntCmp::Gt, IntExpr::N, IntExpr::Lit(1)),
                vec![
                    Stmt::Buffer(
                        5,
                        Init::List(vec![Expr::Param(0), Expr::Param(1), Expr::Var(0)]),
                    ),
                    Stmt::Buffer(7, Init::Clone(Buf::Local(5))),
                    Stmt::Store(7, IntExpr::Lit(2), Op::Mul, Expr::Const(0.5)),
                    Stmt::Buffer(
                        8,
                        Init::Collect(
                            Iter::Elems(Buf::Local(7)),
                            Some(Map::Inline(Pat::Var(6), mul(Expr::Var(6), Expr::Param(1)))),
                        ),
                    ),
                    Stmt::Assign(
                        0,
                        Op::Sub,
                        mul(
                            Expr::Index(Buf::Local(8), IntExpr::Lit(2)),
                            Expr::Index(Buf::Local(5), IntExpr::Lit(0)),
                        ),
                    ),
                ],
                Vec::new(),
            ),
        ];
        Program {
            vars,
            body,
            tail: Expr::Var(0),
        }
    }

    /// `with_temporaries()` in Rust.
    fn with_temporaries_in_rust(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
        let mut x0 = 0.0_f64;
        for i1 in 0..xs.len() {
            let mut v2 = vec![a0 * xs[i1]; xs.len()];
            v2[i1] += a1;
            let mut v3 = Vec::new();
            for &e4 in v2.iter() {
                v3.push(e4 * a2);
            }
            x0 += v3.iter().sum::<f64>().tanh();
        }
        if n > 1 {
            let v5 = [a0, a1, x0];
            let mut v7 = v5;
            v7[2] *= 0.5;
            let v8: Vec<f64> = v7.iter().map(|e6| *e6 * a1).collect();
            x0 -= v8[2] * v5[0];
        }
        x0
    }

    #[test]
    fn temporaries_are_evaluated_printed_and_kept_as_written() {
        let p = with_temporaries();
        assert!(p.valid() && p.bounded(), "{}", p.to_rust("f"));
        for seed in 0..200 {
            let input = Input::generate(seed);
            let [a0, a1, a2] = input.scalars;
            let expected = with_temporaries_in_rust(a0, a1, a2, &input.xs, input.n);
            assert_eq!(
                p.eval(&input).value.to_bits(),
                expected.to_bits(),
                "{input:?}"
            );
        }
        let expected = "\
fn f(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
    let mut x0 = 0.0_f64;
    for i1 in 0..xs.len() {
        let mut v2 = vec![a0 * xs.get(i1).copied().unwrap_or(0.0); xs.len()];
        v2[i1] += a1;
        let mut v3 = Vec::new();
        for &e4 in v2.iter() {
            v3.push(e4 * a2);
        }
        x0 += v3.iter().sum::<f64>().tanh();
    }
    if n > 1 {
        let v5 = [a0, a1, x0];
        let mut v7 = v5;
        v7[2] *= 0.5;
        let v8: Vec<f64> = v7.iter().map(|e6| *e6 * a1).collect();
        x0 -= v8[2] * v5[0];
    }
    x0
}
";
        assert_eq!(p.to_rust("f"), expected);
        // Every temporary is read: normalization keeps them all.
        let mut normalized = p.clone();
        normalized.normalize();
        assert_eq!(normalized.to_rust("f"), expected);
        // A temporary is not seen after its block, and a sorted copy or a
        // copy of a view is made at the top level only.
        let mut late = p.clone();
        late.tail = add(Expr::Var(0), Expr::Index(Buf::Local(5), IntExpr::Lit(0)));
        assert!(!late.valid());
        let mut sorted = p.clone();
        if let Stmt::For(_, body) = &mut sorted.body[1] {
            body[0] = Stmt::Buffer(2, Init::Sorted);
        }
        assert!(!sorted.valid());
        assert!(
            Program {
                body: vec![Stmt::Buffer(2, Init::Sorted)],
                tail: Expr::Index(Buf::Local(2), IntExpr::Lit(0)),
                ..p.clone()
            }
            .valid()
        );
    }

    #[test]
    fn closures_read_chains_after_pushes_in_their_block() {
        // for i1 in 0..3 {
        //     let mut v3 = Vec::new(); for e2 in xs.iter().copied() { v3.push(e2); }
        //     let x5 = xs.windows(2).map(|s4| s4.iter().sum::<f64>()).sum::<f64>();
        //     x0 += x5 + v3[i1];
        // }
        // Valid in either order (the macro once rejected the closure after
        // the pushes: the chain's loop carried the position of the next push).
        let vars = vec![
            Kind::Float,
            Kind::Index,
            Kind::Elem {
                by_ref: false,
                bare: false,
            },
            Kind::Buffer { short: false },
            Kind::Slice { min: 2, max: 2 },
            Kind::Float,
        ];
        let push = Stmt::Buffer(
            3,
            Init::Push(
                copied(Iter::Elems(Buf::Xs)),
                Some(Map::Inline(Pat::Var(2), Expr::Var(2))),
            ),
        );
        let windows = Stmt::Let(
            5,
            Expr::Chain(Box::new(Chain {
                iter: Iter::Windows(Buf::Xs, 2),
                map: Some(Map::Inline(
                    Pat::Var(4),
                    Expr::Reduce(Buf::Local(4), Reduction::Sum),
                )),
                consume: Consume::Sum,
            })),
        );
        let carry = Stmt::Assign(
            0,
            Op::Add,
            add(Expr::Var(5), Expr::Index(Buf::Local(3), IntExpr::Var(1))),
        );
        let program = |body: Vec<Stmt>| Program {
            vars: vars.clone(),
            body: vec![
                Stmt::Let(0, Expr::Const(0.0)),
                Stmt::For(Loop::Range(1, IntExpr::Lit(3)), body),
            ],
            tail: Expr::Var(0),
        };
        let after = program(vec![push.clone(), windows.clone(), carry.clone()]);
        let before = program(vec![windows, push, carry]);
        assert!(after.valid(), "{}", after.to_rust("f"));
        assert!(before.valid(), "{}", before.to_rust("f"));
    }

    #[test]
    fn shrinking_keeps_temporaries_well_formed() {
        // Programs with a temporary: every candidate is well formed, and the
        // greedy reduction that keeps a temporary ends small: a loop or an
        // `if` around a buffer that is read (8 to 13 nodes; a chain that
        // cannot lose its `zip` keeps a few more).
        let config = Config::default();
        let inputs = inputs();
        let has = |p: &Program| {
            let mut found = Vec::new();
            temporaries(&p.body, None, &mut found);
            !found.is_empty()
        };
        let seeds: Vec<u64> = (0..200)
            .filter(|&seed| has(&Program::generate(seed, &config)))
            .take(15)
            .collect();
        assert_eq!(seeds.len(), 15);
        for seed in seeds {
            let mut p = Program::generate(seed, &config);
            for c in p.shrink() {
                assert!(c.valid() && c.bounded(), "seed {seed}:\n{}", c.to_rust("f"));
                for input in &inputs[..4] {
                    assert!(c.eval(input).value.is_finite(), "seed {seed}");
                }
            }
            while let Some(smaller) = p.shrink().into_iter().find(has) {
                p = smaller;
            }
            assert!(
                p.size() <= 18,
                "seed {seed} stuck at size {}:\n{}",
                p.size(),
                p.to_rust("f")
            );
        }
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
        ("enumerate", |s| {
            s.contains(".iter().enumerate() {") || s.contains("_seen - 1, e) })")
        }),
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
        ("hypot/atan2/midpoint", |s| {
            s.contains(".hypot(") || s.contains(".atan2(") || s.contains(".midpoint(")
        }),
        ("mul_add", |s| s.contains(".mul_add(")),
    ];

    /// The idioms (chains, closures, slices, assertions): each in at least
    /// 2% of programs.
    const IDIOMS: &[(&str, Shows)] = &[
        ("chain with map", |s| s.contains(".map(|")),
        ("map of a closure", |s| s.contains(".map(f")),
        ("zip with skip", |s| s.contains(".skip(1))")),
        ("windows", |s| s.contains(".windows(")),
        ("chunks", |s| s.contains(".chunks")),
        ("enumerate in a chain", |s| {
            s.contains(".enumerate().") || s.contains(".enumerate().map(")
        }),
        ("range chain", |s| s.contains("(0..")),
        ("rev", |s| s.contains(".rev()")),
        ("step_by", |s| s.contains(".step_by(")),
        ("skip/take", |s| {
            s.contains(".skip(") || s.contains(".take(")
        }),
        ("filter", |s| s.contains(".filter(")),
        ("count", |s| s.contains(".count() as f64")),
        ("fold", |s| s.contains(".fold(") && s.contains(", |")),
        ("fold max/min", |s| {
            s.contains(", f64::max)") || s.contains(", f64::min)")
        }),
        ("copied", |s| s.contains(".copied()")),
        ("for over a chain", |s| {
            s.lines().any(|l| {
                l.trim_start().starts_with("for ")
                    && [
                        ".rev()",
                        ".skip(",
                        ".take(",
                        ".step_by(",
                        ".windows(",
                        ".chunks",
                        ".filter(",
                        ".zip(0",
                        ").zip(",
                    ]
                    .iter()
                    .any(|a| l.contains(a))
            })
        }),
        ("for_each", |s| s.contains(".for_each(")),
        ("closure", |s| s.contains("f64| ")),
        ("move closure", |s| s.contains("= move |")),
        ("closure call", |s| {
            s.lines().any(|l| {
                !l.contains("f64| ") && l.contains(" f") && l.contains("f") && {
                    let mut found = false;
                    for (i, _) in l.match_indices('f') {
                        let rest = &l[i + 1..];
                        let digits = rest.chars().take_while(char::is_ascii_digit).count();
                        if digits > 0 && rest[digits..].starts_with('(') {
                            found = true;
                        }
                    }
                    found
                }
            })
        }),
        ("sub-slice", |s| s.contains(" = &xs[")),
        ("split_at", |s| s.contains(".split_at(")),
        ("collect", |s| s.contains(".collect")),
        ("sin_cos", |s| s.contains(".sin_cos()")),
        ("fold of a pair", |s| s.contains(".fold((")),
        ("closure returning a pair", |s| s.contains("let g")),
        ("assertion", |s| s.contains("assert")),
    ];

    /// The constructs of `list` that fewer than `least` of 500 programs
    /// show, and a table of how often each appears.
    fn rarer_than(list: &[(&'static str, Shows)], least: usize) -> (Vec<&'static str>, String) {
        let config = Config::default();
        let texts: Vec<String> = (0..500)
            .map(|seed| Program::generate(seed, &config).to_rust("f"))
            .collect();
        let mut report = String::new();
        let mut rare = Vec::new();
        for &(name, shows) in list {
            let count = texts.iter().filter(|t| shows(t)).count();
            let _ = writeln!(report, "{name:>22}: {:5.1}%", count as f64 / 5.0);
            if count < least {
                rare.push(name);
            }
        }
        println!("{report}");
        (rare, report)
    }

    #[test]
    fn every_idiom_appears_in_at_least_two_percent_of_programs() {
        let (rare, report) = rarer_than(IDIOMS, 10);
        assert!(rare.is_empty(), "rarer than 2%: {rare:?}\n{report}");
    }

    #[test]
    fn every_construct_appears_in_at_least_a_tenth_of_programs() {
        let (rare, report) = rarer_than(CONSTRUCTS, 50);
        assert!(rare.is_empty(), "rarer than 10%: {rare:?}\n{report}");
    }

    #[test]
    fn a_few_seeds_use_loops_branches_and_buffer_writes_together() {
        // About 2% of programs have all four: 500 seeds make a sample large
        // enough that generator changes seldom push it under 5.
        let config = Config::default();
        let rich: Vec<u64> = (0..500)
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
        // a loop: the way a failing program is reduced. Most end at 7 nodes;
        // a buffer written in the loop but read only before it (in an `if`
        // around the loop, say) keeps a few more.
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
                p.size() <= 14,
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
    ///
    /// The printer counts the loop's items in a closure, `i1` being odd
    /// (`let mut i1_seen = 0; for (i1, &e2) in xs.iter().map(|e| { i1_seen
    /// += 1; (i1_seen - 1, e) }) { … }`).
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
    let mut i1_seen = 0;
    for (i1, &e2) in xs.iter().map(|e| { i1_seen += 1; (i1_seen - 1, e) }) {
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

    /// A hand-written program of idioms: chains, a closure, a sub-slice, a
    /// collected buffer, `sin_cos` and an assertion.
    fn idioms() -> Program {
        let var = |v| Box::new(Expr::Var(v));
        let elem = |by_ref| Kind::Elem {
            by_ref,
            bare: false,
        };
        let vars = vec![
            Kind::Slice { min: 2, max: 4 },
            elem(false),
            Kind::Closure,
            elem(true),
            elem(false),
            Kind::Float,
            elem(false),
            Kind::Slice { min: 2, max: 2 },
            Kind::Float,
            Kind::Float,
            Kind::Index,
            elem(false),
            Kind::Buffer { short: false },
            Kind::Float,
            Kind::Index,
            elem(false),
            Kind::Index,
            Kind::Float,
            Kind::Float,
            Kind::Float,
        ];
        let pair = |a, b| Pat::Pair(Box::new(Pat::Var(a)), Box::new(Pat::Var(b)));
        let chain = |iter, map, consume| Expr::Chain(Box::new(Chain { iter, map, consume }));
        let elems = |b| Box::new(Iter::Elems(b));
        let body = vec![
            Stmt::Slice(0, IntExpr::Lit(1), None, false),
            Stmt::Closure(2, 1, vec![mul(Expr::Var(1), Expr::Param(0))]),
            Stmt::Let(
                5,
                chain(
                    Iter::Adapt(
                        Box::new(Iter::Zip(
                            elems(Buf::Xs),
                            Box::new(Iter::Adapt(elems(Buf::Xs), Adapt::Skip(1))),
                            false,
                        )),
                        Adapt::Rev,
                    ),
                    Some(Map::Inline(pair(3, 4), Expr::Bin(Bin::Sub, var(4), var(3)))),
                    Consume::Sum,
                ),
            ),
            Stmt::Let(
                8,
                chain(
                    Iter::Windows(Buf::Local(0), 2),
                    None,
                    Consume::Fold(
                        Expr::Param(1),
                        6,
                        Pat::Var(7),
                        Expr::Binary(
                            Binary::Max,
                            var(6),
                            Box::new(mul(
                                Expr::Index(Buf::Local(7), IntExpr::Lit(0)),
                                Expr::Index(Buf::Local(7), IntExpr::Lit(1)),
                            )),
                        ),
                    ),
                ),
            ),
            Stmt::Let(
                9,
                chain(
                    Iter::Copied(elems(Buf::Xs)),
                    None,
                    Consume::Extremum(Binary::Max, None),
                ),
            ),
            Stmt::Buffer(
                12,
                Init::Collect(
                    Iter::Enumerate(elems(Buf::Xs)),
                    Some(Map::Inline(
                        pair(10, 11),
                        mul(Expr::Cast(IntExpr::Var(10)), Expr::Var(11)),
                    )),
                ),
            ),
            Stmt::Let(13, Expr::Const(0.0)),
            Stmt::For(
                Loop::Chain(
                    Iter::Adapt(
                        Box::new(Iter::Enumerate(elems(Buf::Local(12)))),
                        Adapt::StepBy(2),
                    ),
                    pair(14, 15),
                    false,
                ),
                vec![Stmt::Assign(
                    13,
                    Op::Add,
                    add(
                        Expr::Call(2, Box::new(mul(Expr::Var(15), Expr::Const(0.5)))),
                        Expr::Cast(IntExpr::Var(14)),
                    ),
                )],
            ),
            Stmt::Let(
                17,
                chain(
                    Iter::Filter(
                        Box::new(Iter::Range(IntExpr::N)),
                        Pat::Var(16),
                        Cond::Int(
                            IntCmp::Eq,
                            IntExpr::Rem(Box::new(IntExpr::Var(16)), Box::new(IntExpr::Lit(2))),
                            IntExpr::Lit(0),
                        ),
                    ),
                    None,
                    Consume::Count,
                ),
            ),
            Stmt::Pair(18, 19, Pair::SinCos(Expr::Param(2))),
            Stmt::Assert(Check::MinLen(Buf::Xs, 3)),
        ];
        let tail = [8, 9, 13, 17]
            .into_iter()
            .fold(Expr::Var(5), |acc, v| add(acc, Expr::Var(v)));
        let tail = add(
            add(tail, mul(Expr::Var(18), Expr::Var(19))),
            Expr::Reduce(Buf::Local(0), Reduction::Sum),
        );
        Program { vars, body, tail }
    }

    /// `idioms()` in Rust.
    fn idioms_in_rust(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
        let s0 = &xs[1..];
        let f2 = |e1: f64| e1 * a0;
        let x5 = xs
            .iter()
            .zip(xs.iter().skip(1))
            .rev()
            .map(|(e3, &e4)| e4 - *e3)
            .sum::<f64>();
        let x8 = s0.windows(2).fold(a1, |e6, s7| e6.max(s7[0] * s7[1]));
        let x9 = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let v12: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i10, &e11)| i10 as f64 * e11)
            .collect();
        let mut x13 = 0.0_f64;
        for (i14, &e15) in v12.iter().enumerate().step_by(2) {
            x13 += f2(e15 * 0.5) + i14 as f64;
        }
        let x17 = (0..n).filter(|&i16| i16 % 2 == 0).count() as f64;
        let (x18, x19) = a2.sin_cos();
        assert!(xs.len() >= 3);
        x5 + x8 + x9 + x13 + x17 + x18 * x19 + s0.iter().sum::<f64>()
    }

    #[test]
    fn the_evaluator_computes_idioms_as_rust_does() {
        let p = idioms();
        assert!(p.valid() && p.bounded(), "{}", p.to_rust("f"));
        for seed in 0..200 {
            let input = Input::generate(seed);
            let [a0, a1, a2] = input.scalars;
            let expected = idioms_in_rust(a0, a1, a2, &input.xs, input.n);
            assert_eq!(
                p.eval(&input).value.to_bits(),
                expected.to_bits(),
                "{input:?}"
            );
        }
        // `sum` starts from `-0.0`, as `std`'s does: `-0.0 + -0.0` is `-0.0`.
        let zeros = Input {
            scalars: [0.0; 3],
            xs: vec![-0.0; 3],
            n: 0,
        };
        let sum = Program {
            vars: Vec::new(),
            body: Vec::new(),
            tail: Expr::Chain(Box::new(Chain {
                iter: Iter::Elems(Buf::Xs),
                map: None,
                consume: Consume::Sum,
            })),
        };
        assert_eq!(sum.eval(&zeros).value.to_bits(), (-0.0_f64).to_bits());
    }

    #[test]
    fn the_printer_writes_idioms_as_rust() {
        let expected = "\
fn f(a0: f64, a1: f64, a2: f64, xs: &[f64], n: usize) -> f64 {
    let s0 = &xs[1..];
    let f2 = |e1: f64| e1 * a0;
    let x5 = xs.iter().zip(xs.iter().skip(1)).rev().map(|(e3, &e4)| e4 - *e3).sum::<f64>();
    let x8 = s0.windows(2).fold(a1, |e6, s7| e6.max(s7.get(0).copied().unwrap_or(0.0) * s7[1]));
    let x9 = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let v12: Vec<f64> = xs.iter().enumerate().map(|(i10, &e11)| i10 as f64 * e11).collect();
    let mut x13 = 0.0_f64;
    for (i14, &e15) in v12.iter().enumerate().step_by(2) {
        x13 += f2(e15 * 0.5) + i14 as f64;
    }
    let x17 = Wrap((0..n).filter(|&i16| i16 % 2 == 0).count() as f64);
    let (x18, x19) = a2.sin_cos();
    assert!(xs.len() >= 3);
    x5 + x8 + x9 + x13 + x17.0 + x18 * x19 + s0.iter().sum::<f64>()
}
";
        assert_eq!(idioms().to_rust("f"), expected);
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
                    // A tuple assignment's right side is a tuple.
                    .filter(|_| line.ends_with(';') && !line.starts_with('('))
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
