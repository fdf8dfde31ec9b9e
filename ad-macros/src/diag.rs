//! Error collection and the catalogue of messages users see.
//!
//! Parsing stops at its first error. Later stages report into a [`Ctxt`] and keep
//! going, so one expansion shows every independent mistake; the driver checks the
//! context between stages. A `Ctxt` dropped without being checked panics, which
//! turns "forgot to report" into a failing test.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects the errors of one expansion.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Reports an error covering the tokens of `node` (the smallest construct at
    /// fault).
    pub(crate) fn error_spanned_by(&self, node: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(node, message));
    }

    pub(crate) fn error_at(&self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn push(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(error);
    }

    /// Consumes the context: all reported errors combined into one, if any.
    /// Whether an error was reported already.
    pub(crate) fn has_errors(&self) -> bool {
        self.errors
            .borrow()
            .as_ref()
            .is_some_and(|errors| !errors.is_empty())
    }

    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("ad-macros: a Ctxt was dropped without being checked");
        }
    }
}

/// The messages, one function per mistake. Lowercase, Rust syntax in backticks:
/// what is not supported, then what to write instead.
pub(crate) mod msg {
    pub(crate) const ATTR_ARGS: &str = "unknown argument to `#[differentiate]`; it takes the modes `vjp`, `jvp`, `jvp_lanes` and `hvp`, `wrt(a, b, …)`, `nested` (to call `_vjp` and `_jvp` from functions differentiated in forward mode), and `print` (to see the generated code), e.g. `#[differentiate(vjp, jvp, wrt(a))]`";
    pub(crate) const MODE_TWICE: &str = "this argument is given twice; name each of `vjp`, `jvp`, `jvp_lanes`, `hvp`, `nested` and `print` once";
    pub(crate) const WRT_TWICE: &str =
        "`wrt` is given twice; list all the parameters in one `wrt(a, b, …)`";
    pub(crate) const WRT_SYNTAX: &str =
        "write the parameters to differentiate in parentheses: `wrt(a, b)`";
    pub(crate) const NOT_A_FUNCTION: &str =
        "`#[differentiate]` applies to functions with a body; put it on a `fn`";
    pub(crate) const NO_BODY: &str = "a `#[differentiate]` function needs a body to differentiate; for a trait method, put the attribute on the method in the `impl` block";
    pub(crate) const APPLIED_TWICE: &str = "`#[differentiate]` is applied twice; remove one (use `wrt(…)` on the other to choose parameters)";
    pub(crate) const WRT_EMPTY: &str =
        "`wrt()` names no parameter; list the parameters to differentiate, or remove `wrt`";
    pub(crate) const CHECKPOINT_ARGS: &str = "`#[checkpoint]` takes how many loop states to keep, `#[checkpoint(snapshots = 16)]` (an integer expression, computed before the loop), or how much memory they may take, `#[checkpoint(memory = \"64 MiB\")]`";
    pub(crate) const CHECKPOINT_MEMORY: &str = "write the memory as a number and a unit: `\"64 MiB\"`, `\"1.5 GB\"`, `\"512 KiB\"` (B, KB, MB, GB, KiB, MiB, GiB), or a number of bytes";
    pub(crate) const CHECKPOINT_TWICE: &str = "`#[checkpoint]` is given twice; keep one";
    pub(crate) const CHECKPOINT_NESTED: &str = "`#[checkpoint]` is supported on a loop at the top level of the function body, not yet inside another loop or a branch: checkpoint the outer loop, or move the loop into a `#[differentiate]` function of its own and call it";
    pub(crate) const CHECKPOINT_PLACE: &str = "`#[checkpoint]` goes on a loop, `for`, `while` or `loop` (`#[checkpoint(snapshots = 16)] for i in 0..n { … }`), not on a `let`, a block, an `if`, a `match` or a macro";
    pub(crate) const GENERICS: &str = "`#[differentiate]` supports one generic parameter, the float type: write `fn f<T: ad_runtime::Float>(…)`, or write the function for `f64` or `f32`";
    pub(crate) const RECEIVER: &str = "`#[differentiate]` methods take `&self`; a method taking `&mut self` or `self` is not supported: take what it changes as a `&mut` buffer parameter";
    pub(crate) const ASYNC: &str = "`async fn` cannot be differentiated; write a plain `fn`";
    pub(crate) const UNSAFE_FN: &str = "`unsafe fn` cannot be differentiated; write a safe `fn`";
    pub(crate) const EXTERN_FN: &str =
        "`extern` functions cannot be differentiated; write a plain Rust `fn`";
    pub(crate) const VARIADIC: &str = "variadic functions cannot be differentiated";
    pub(crate) const PARAM_PATTERN: &str = "parameter patterns other than a name, `_` and a tuple of names (`(p, v): (f64, f64)`) are not supported; name the parameter, e.g. `x: f64`, and take it apart in the body";
    pub(crate) const BUFFER_OF_BUFFERS: &str = "a `Vec` (or an array) of buffers is supported as a matrix with rows of one length written out where it is bound (`let a = vec![vec![1.0, 2.0], vec![3.0, 4.0]];`, `[[1.0, 2.0], [3.0, 4.0]]`) or `vec![vec![0.0; n]; m]`; make the rows one length, or keep them as separate buffers";
    pub(crate) const RESIZE_IN_REGION: &str = "`.retain()`, `.truncate()`, `.resize()` and `.insert()` change a buffer's length, which `#[differentiate]` supports on a `Vec` made by a `let` of the function body's own block (not inside a loop or a branch), used only as a buffer of numbers; here, make the new buffer with a chain, `let kept: Vec<f64> = v.iter().copied().filter(|&a| a > 0.0).collect();` (`.take(k)` for `truncate`), and use it";
    pub(crate) const TUPLE_PARAM_MIXED: &str = "a tuple parameter is supported when its elements are floats of one type (`(f64, f64)`, active) or integers (constant); take the floats and the other numbers as separate parameters";
    pub(crate) const FN_PARAM: &str = "a function or closure parameter (`impl Fn(f64) -> f64`, `&dyn Fn(f64) -> f64`, `fn(f64) -> f64`) cannot be differentiated through: its derivative is not known where this function is expanded; call the function by name in the body instead (a `#[differentiate]` function, or a closure defined in the body), e.g. one `integrate_sin` per integrand";
    pub(crate) const RETURN_MATRIX: &str = "a matrix cannot be returned by a `#[differentiate]` function yet: write it into a `&mut [[f64; N]; M]` parameter (`fn f(…, out: &mut [[f64; 3]; 3])`, returning nothing), or return it flat as `[f64; N]` of all its elements";
    pub(crate) const RETURN_TYPE: &str = "a `#[differentiate]` function must return `f64`, `f32`, a tuple of them such as `(f64, f64)`, `Vec<f64>` or `[f64; N]` (or nothing, if it updates a `&mut [f64]` parameter)";
    pub(crate) const NO_VALUE: &str = "`#[differentiate]` needs the function's value as its final expression; end the body with the returned expression";
    pub(crate) const LET_WITHOUT_INIT: &str = "`let` without a value is not supported; give the variable its value where it is declared: `let x = …;`";
    pub(crate) const LET_ELSE: &str = "`let … else` is supported for `let Some(v) = … else { … };` of what `if let Some(v) = …` takes apart (`x.first()`, `x.last()`, `x.get(i)`, `x.split_first()`, a chain's `find(p)`, `position(p)`, `next()`, `reduce(f)`, …); otherwise bind the value with a plain `let` and test a condition with `if`";
    pub(crate) const LET_PATTERN: &str =
        "destructuring patterns are not supported; bind each value with its own `let x = …;`";
    pub(crate) const REF_BINDING: &str =
        "`ref` bindings are not supported; bind the value: `let x = …;`";
    pub(crate) const ITEM: &str = "of the items inside a `#[differentiate]` function, `use`, `const`, `static` and `fn` are supported; move this item out of the function";
    pub(crate) const REBIND_ROWS: &str = "`cur = next;` of rows `cur` only views (a parameter, `&m[..]`, another view) would make `cur` view other rows, which `#[differentiate]` does not follow; copy the rows into a matrix of your own (`let mut cur = m;` of an array, `m.clone()`) and assign to that, or index the rows you mean where you use them";
    pub(crate) const NESTED_FN: &str = "a `fn` inside a `#[differentiate]` function is differentiated as if inlined where it is called, which needs a plain function of typed parameters: no generics, `self`, `async`, `unsafe` or `extern`; move it out of the function (with `#[differentiate]` if it computes with active values)";
    pub(crate) const NESTED_FN_RECURSIVE: &str = "a `fn` inside a `#[differentiate]` function is inlined where it is called, so it cannot call itself (or another that calls it back); move it out of the function and put `#[differentiate]` on it";
    pub(crate) const DBG_ARGUMENTS: &str =
        "`dbg!` is supported with one argument; write one `dbg!` per value";
    pub(crate) const CURSOR_IN_MACRO: &str = "an iterator kept in a variable (`let mut it = x.iter();`, `let pairs = x.iter().zip(y);`) cannot be named inside a macro in a `#[differentiate]` function; take the item first, `let v = it.next().unwrap();`, and name `v`";
    pub(crate) const CURSOR_BORROWED: &str = "an iterator kept in a variable (`let mut it = x.iter();`) can give items with `it.next()` and then be consumed (`for v in it`, `it.sum()`), but not be borrowed to go on later (`it.by_ref()`, `&mut it`); take the items with an index loop over `x` instead";
    pub(crate) const CLOSURE_IN_MACRO: &str = "a closure cannot be named inside a macro in a `#[differentiate]` function (closures are inlined where they are called); compute the value first, `let y = f(x);`, and name `y`";
    pub(crate) const EARLY_RETURN: &str = "early `return` is not supported yet; make the returned value the function's final expression";
    pub(crate) const ASSIGN_TARGET: &str = "only local variables can be assigned in a `#[differentiate]` function; introduce a local with `let mut`";
    pub(crate) const ASSIGN_IN_EXPR: &str =
        "an assignment used as a value is not supported; write the assignment as its own statement";
    pub(crate) const UNIT_BLOCK: &str =
        "this block has no value; end it with the expression it should produce";
    pub(crate) const LITERAL: &str = "only float, integer and `bool` literals are supported; compute strings and other data outside the function and pass what it needs as parameters";
    pub(crate) const DEREF: &str =
        "dereferencing is not supported; take the parameter by value, e.g. `x: f64`";
    pub(crate) const TURBOFISH: &str =
        "type arguments on a method call are not supported; remove the turbofish";
    pub(crate) const CAST_TARGET: &str = "`as` casts are supported to `f32`, `f64`, integer types and `bool`, written by name (`#[differentiate]` cannot see through type aliases); write e.g. `x as f64`";
    pub(crate) const PREDICATE_VALUE: &str =
        "the test given to `any` or `all` must return a `bool`, as `|&x| x > 0.0` does";
    pub(crate) const TUPLE_BRANCHES: &str = "the branches of this `if` give tuples of different shapes; write each branch's tuple out, `(a, b)`, with the same number of elements";
    pub(crate) const OPTION_VALUE: &str = "an `Option` of a number kept in a local (`let mut best: Option<f64> = None;`) is supported as `None`, `Some(e)`, another such local, an `if` or `match` ending in those, `x.first()`, `x.last()`, `x.get(i)` or a chain's `reduce`, `max_by`, `min_by`, `next()`, `last()`, `position`, `find` where it is bound or assigned, and read by `if let Some(b) = best`, `match best { Some(b) => …, None => … }`, `let Some(b) = best else { … };`, `unwrap()`, `expect(…)`, `unwrap_or(d)`, `unwrap_or_default()`, `map_or(d, f)`, `is_some()`, `is_none()`, `is_some_and(f)`, `is_none_or(f)`, `==` and `!=`; not passed on, printed or built another way: keep a flag and a value (`let mut found = false; let mut best = 0.0;`)";
    pub(crate) const OPTION_TYPE: &str = "an `Option` kept in a local holds one number (`Option<f64>`, `Option<T>`, `Option<usize>`), not a tuple or a struct; give an option that starts as `None` the type of what it will hold (`let mut best: Option<usize> = None;`), and for a pair keep one option per number (`best_at: Option<usize>`, `best: Option<f64>`) or a flag and the values";
    pub(crate) const OPTION_MATCH: &str = "a `match` of an `Option` kept in a local takes the arms `Some(p)` (`p` a name, `_`, a literal; a guard allowed), `None`, `_` and a name for the whole option (`other => other`); write other patterns as a test inside the arm: `Some(b) if b > 0.0 => …`";
    pub(crate) const TUPLE_VALUE: &str = "a tuple of numbers is supported where it is taken apart (`let (a, b) = …`, a branch's value so destructured, the value at the end of a function returning a tuple) or kept in a variable and used by element (`let mut best = (0, f64::MAX);`, `best.1`, `best = (i, d);`), passed to a function of yours that takes a tuple (`step(state, dt)`), compared with `==` or `!=`, or printed, not used as one value otherwise: bind each element with its own `let`";
    pub(crate) const ROWS_COLLECTED_IN_REGION: &str = "`collect()` of rows (arrays, tuples or `Vec`s: a `Vec<[f64; 2]>`, a `Vec<Vec<f64>>`) is supported outside loops and branches only; here, make the rows before the loop (`let mut pts = vec![[0.0; 2]; n];`, `vec![vec![0.0; m]; n]`) and write each in it (`pts[i] = [a, b];`)";
    pub(crate) const COLLECT_BUFFERS: &str = "`collect()` of buffers (a `Vec<Vec<f64>>`) is supported when the closure makes each row where it is collected (`.map(|i| (0..n).map(…).collect())`, `.map(|c| c.to_vec())`); write the row so, keep the rows where they are (`for row in x.chunks(n)`; a `Vec<&[f64]>` of `x.chunks(n)` used only as `rows[i]`, `rows.len()`, `rows.iter()` or in a `for`), or make the matrix with `vec![vec![0.0; n]; m]` and fill it in a loop";
    pub(crate) const FROM_FN_LENGTH: &str = "`std::array::from_fn` needs the array's length where the macro can read it: annotate the binding, `let v: [f64; 3] = std::array::from_fn(|i| …);`, or write `from_fn::<f64, 3, _>(…)`";
    pub(crate) const OPAQUE_USE: &str = "a parameter of this type is constant data that `#[differentiate]` cannot see into: its fields can be read as constant numbers (`cfg.dt`, `cfg.steps`), and it can be matched on (`match kind { Kind::A => …, Kind::B(k) => …, _ => … }`, `matches!(kind, Kind::A)`, `if let Kind::A = kind`, `kind == Kind::A`; the data a pattern binds is constant too), printed and passed on to a differentiated function, nothing else; to differentiate with respect to the floats of a struct, derive `Tangent` and take it by reference (`p: &Params`); pass anything else the body reads as a parameter of its own; `#[differentiate]` cannot see through a type alias: write a float type itself (`x: f64`)";
    pub(crate) const CONSTANT_METHOD_FLOAT: &str = "this is a float passed to a method of constant data (an ordering, or a value of a type the macro cannot see), which runs as written and would give it no derivative; pass constant data only (`o.then(c.total_cmp(&a))`), and compute with the float outside the call";
    pub(crate) const IF_WITHOUT_VALUE: &str =
        "this `if` has no value: add an `else` branch, and end both branches with the value";
    pub(crate) const MATCH_WITHOUT_VALUE: &str =
        "this `match` has no value; end every arm with the value";
    pub(crate) const MATCH_TUPLE_OR: &str = "an or-pattern of a tuple `match` cannot bind names here: write an arm for each case (`(x, 0) => …, (0, x) => …`)";
    pub(crate) const LOOP_RANGE: &str = "`for` loops are supported over integer ranges (`a..b`, `a..=b`), over buffers and sub-slices (`xs.iter()`, `&xs`, `xs.iter_mut()`, `&x[1..]`, `xs.windows(2)`, `xs.chunks(k)`) and over chains of the adapters `map`, `filter`, `take_while`, `skip_while`, `zip`, `chain`, `enumerate`, `rev`, `skip`, `take`, `step_by` (also of `std::iter::once(v)` and `repeat(v).take(n)`); for other iterators write an index loop over a range: `for i in 0..xs.len()`";
    pub(crate) const RETURN_WITHOUT_VALUE: &str =
        "`return` without a value: return the function's value, `return value;`";
    pub(crate) const OUTPUT_BRANCH: &str = "each branch of the `if` that gives the returned buffer must end with a buffer: a local `Vec` or array, `x.to_vec()`, a call returning one, or an empty `vec![]`, and the `if` needs an `else`; a branch that panics is not one: check the condition with `assert!` before the `if`";
    pub(crate) const CFG_TOO_MANY: &str = "`#[differentiate]` makes its functions once per combination of the body's `#[cfg(…)]` conditions, and this is a fourth distinct condition: use at most three in one function, e.g. by moving the code under this one into a helper function marked `#[differentiate]`";
    pub(crate) const CFG_PLACE: &str = "`#[cfg(…)]` is supported on statements and `match` arms of a differentiated function, not here: put it on the whole statement (or choose with `if cfg!(…) { … } else { … }`)";
    pub(crate) const FIELD_OF_ROWS: &str = "a field of a parameter struct is indexed once, as a buffer of numbers: `#[differentiate]` does not see the struct's field types, so a field of rows (`pos: Vec<[f64; 2]>`) cannot be indexed twice; store it flat (`pos: Vec<f64>`, read `p.pos[2 * i + k]`), or pass the rows as a parameter of their own (`pos: &[[f64; 2]]`)";
    pub(crate) const INDEX_NOT_BUFFER: &str = "only buffers can be indexed: `&[f64]`, `&Vec<f64>` and `&[f64; N]` parameters (or their `&mut` forms), local `Vec`s and arrays, and constants named in upper case (`GW[i]`; a table of rows defined outside the function by its elements, `TABLE[i][j]`, or declared inside it to take its rows); pass this one as a parameter, e.g. `w: &[f64]`";
    pub(crate) const BUFFER_IN_REGION: &str = "a buffer made inside a loop or a branch needs a length, or a bound on it, known before it (a constant, a parameter's `len()`, or arithmetic on them): `Vec::new()` and `Vec::with_capacity` work there when the `for` right after them pushes onto them at most once per iteration (a `push` statement of its body, or of a branch of an `if` there) and nothing after it pushes more; create the buffer before the loop and overwrite its elements inside";
    pub(crate) const OUTPUT_COPY_IN_REGION: &str = "the output of a call made in a loop or a branch has no length before the call, so a copy of it (`to_vec()`, `clone()`, a `collect()` as long as it) cannot be made there: read the call's output itself (`k[i]`, `k.iter()`, `&k`), which is a new buffer in each iteration already, or collect over a buffer whose length is known before the loop (`y.iter().zip(&k)`)";
    pub(crate) const PUSH_ON_FIXED: &str = "this buffer is made inside a loop, or its length sizes one, so its length must not change: `#[differentiate]` makes it once before the loop; push onto a `Vec` made at the top level of the body";
    pub(crate) const BUFFER_REASSIGN: &str = "only a buffer the function made can be assigned another (its elements are copied); a parameter cannot be rebound to another buffer: index the one you mean, or copy it into a local `Vec` first";
    pub(crate) const BUFFER_IN_BRANCH: &str = "a branch or a loop cannot choose between buffers or carry one, except `let w = if c { &a } else { &b };` (also a `match`, and arrays or `vec![…]` written out, each branch being the buffer alone: anywhere, at most three in one block), and a returned `Vec` (`if c { return vec![]; }`, `if c { v } else { w }` at the end) and branches holding statements before their buffer at the top level of the body; create one buffer and write the chosen elements into it";
    pub(crate) const BUFFER_AS_SCALAR: &str = "a buffer is not a number: arithmetic, casts and float methods work on its elements; index it, `xs[i]`, or loop over its elements";
    pub(crate) const EXIT_IN_CONDITION: &str = "`return`, `break` and `continue` inside a loop's condition are not supported; compute the condition before the loop body, or exit from the body";
    pub(crate) const PUSH_ON_PARAM: &str = "`push` is supported on local `Vec`s only; create the vector in the function (`let mut v = Vec::with_capacity(n);`) and return it";
    pub(crate) const CLONE_PARAM: &str =
        "`.clone()` of a parameter is not supported; copy it with `.to_vec()`";
    pub(crate) const BREAK_VALUE: &str = "`break` with a value works only in `loop`";
    pub(crate) const BREAK_OUTSIDE_LOOP: &str =
        "`break` and `continue` need an enclosing loop (with this label)";
    pub(crate) const LOOP_AS_VALUE: &str =
        "`for` and `while` loops have no value; end the block with the value after the loop";
    pub(crate) const LOOP_WITHOUT_VALUE: &str =
        "this `loop` has no value; leave it with `break value`";
    pub(crate) const EMPTY_MATCH: &str = "an empty `match` has no value to differentiate";
    pub(crate) const SLICE_PATTERN: &str = "in a slice pattern, each element is a name, `_` or `&name`, with at most one `..` or `rest @ ..`; test the elements' values with a guard or an `if` inside the arm";
    pub(crate) const MATCH_PATTERN: &str = "only integer and `bool` literals, ranges of them, constants, `_`, bindings, `|` and guards are supported as `match` patterns; write the test as an `if`";
    pub(crate) const ASYNC_CLOSURE: &str =
        "async closures are not supported; write a plain closure `|x| …`";
    pub(crate) const RETURN_IN_CLOSURE: &str = "`return` inside a closure (or a `fn` in the body) is supported as a guard, `if c { …; return e; }` before the rest of its body, and at its end, not in a loop, a `match` or a nested block; end the body with its value (use `if … else …` for an early value)";
    pub(crate) const NOT_CALLABLE: &str = "this cannot be called or passed as a function here: pass a closure (`|x| x * x`), a name bound to a closure, a float function such as `f64::max`, or a function with a derivative";
    pub(crate) const CLOSURE_ASSIGNS: &str = "this `move` closure assigns to its own copy of a variable it captures, which it keeps between calls; `#[differentiate]` inlines closures, so drop `move` (the closure then assigns the variable itself), or return the new value and assign it outside: `s = f(s, x);`";
    pub(crate) const CLOSURE_AS_VALUE: &str = "a closure can be called (`f(x)`) or passed to an iterator adapter (`.map(f)`), not used as a value";
    pub(crate) const CUSTOM_ARRAY_BY_VALUE: &str = "a function with a custom rule takes arrays by reference: take `&[T; N]`, and the rule gets its shadow `&mut [T; N]` after it";
    pub(crate) const CUSTOM_ROWS: &str = "a function with a custom rule takes its buffers flat: take `&[f64]` and index a row's elements as `x[i * n + j]`";
    pub(crate) const CHECKPOINT_CALL: &str = "`ad_runtime::checkpoint` takes one call of a differentiated function returning a float, `checkpoint(g(x, w))`; bind anything else first and checkpoint the call alone";
    pub(crate) const SCAN_CLOSURE: &str = "`scan` is supported with a closure `|s, v| { …; Some(value) }` that reads and writes its state only as `*s` and always yields `Some`; write the loop instead: `let mut s = init; for v in … { s += v; … }`";
    pub(crate) const VEC_ROWS_CALL: &str = "rows given as `Vec`s (`&[Vec<f64>]`) cannot be passed to another differentiated function: `#[differentiate]` copies them into one flat buffer on entry; pass a row (`&a[i]`), or take the matrix as `&[[f64; N]]` or a flat `&[f64]` with its row length in both functions";
    pub(crate) const ROWS_AS_BUFFER: &str = "a buffer of rows (`&[[f64; N]]`) is read by rows here: index a row (`pts[i]`, `pts[i][j]`), iterate its rows (`for p in pts`, `pts.iter()`), or read its `len()`";
    pub(crate) const VIEW_AS_VALUE: &str = "a sub-slice is not a number: index it (`s[i]`), iterate it (`s.iter()`), or read its `len()`";
    pub(crate) const TUPLE_BINDING: &str =
        "bind a tuple by destructuring it: `let (a, b) = …;` or `for (a, b) in …`";
    pub(crate) const PATTERN_MISMATCH: &str = "this pattern does not match the value: bind numbers and sub-slices to names (`x`, `&x`, `_`) and tuples with a tuple pattern: `(i, &x)`";
    pub(crate) const AFTER_FILTER: &str = "after `filter`, only `map`, `filter`, `rev` and a consumer (`sum`, `fold`, `count`, `for` …) are supported: the positions of the items that pass are not known in advance; move `enumerate`, `zip`, `skip`, `take` and `step_by` before the `filter`";
    pub(crate) const BUFFER_ARGUMENT: &str =
        "this method takes a buffer or a sub-slice of one here: `&xs`, `xs`, `&xs[a..b]`";
    pub(crate) const ITERATOR_SOURCE: &str = "this iterator is not one `#[differentiate]` can lower yet: a chain starts from a range (`0..n`), a buffer or a sub-slice (`x.iter()`, `&x[a..b]`, `x.windows(k)`, `x.chunks(k)`), `std::iter::once(v)`, `std::iter::repeat(v).take(n)` or `repeat_n(v, n)` (a constant table defined outside the function is none of these: index it, `TABLE[i][j]`, or declare it inside the function); collect the items into a buffer first, or write an index loop";
    pub(crate) const ZIP_ARGUMENT: &str = "`zip` and `chain` take a buffer (`&ys`), a sub-slice, a range or an iterator chain over them";
    pub(crate) const FIND_TUPLE: &str = "taking one item out of a chain of pairs (`enumerate`, `zip`) by `find`, or by `next()` or `last()` after `filter`, is not supported; find the position first: `let i = x.iter().position(|&v| v > 0.0).unwrap();`, then read `x[i]`";
    pub(crate) const REDUCE_AFTER_FILTER: &str = "`reduce`, `max_by` and `min_by` of pairs (after `enumerate()` or `zip`) are not supported after `filter`; write the loop, `for (i, &v) in x.iter().enumerate() { if keep(v) && v > best { best = v; at = i; } }`";
    pub(crate) const REDUCE_RESULT: &str = "take the value out of `reduce`, `max_by` or `min_by` where it is made: `.unwrap()`, `.expect(\"…\")` or `.unwrap_or(value)`";
    pub(crate) const SWAP: &str = "`std::mem::swap` is supported between two local variables of the function, both floats or both buffers: `std::mem::swap(&mut a, &mut b)`; swap two elements of one buffer with `v.swap(i, j)`, of two with a temporary (`let t = a[i]; a[i] = b[j]; b[j] = t;`)";
    pub(crate) const REPLACE: &str = "`std::mem::replace` and `std::mem::take` are supported on a local variable holding a number: `let old = std::mem::replace(&mut a, e);`; for anything else write `let old = a; a = e;`";
    pub(crate) const FOLD_SHAPE: &str = "`fold`'s accumulator is a number or a tuple of numbers, and the closure returns the same shape as the initial value";
    pub(crate) const LABELED_BLOCK: &str = "labeled blocks are not supported; remove the label";

    pub(crate) fn macro_(path: &syn::Path) -> String {
        let name = quote::quote!(#path).to_string().replace(' ', "");
        format!(
            "`{name}!` cannot be differentiated, because `#[differentiate]` cannot see what it expands to; the macros it knows are `vec!`, the assertions (`assert!`, `assert_eq!`, `assert_ne!`, `debug_assert!`…), printing (`println!`, `eprintln!`, `print!`, `eprint!`, `dbg!`), `matches!`, `cfg!` and `panic!`, `unreachable!`, `todo!`, `unimplemented!`; write the expression without the macro"
        )
    }

    pub(crate) fn closure_arity(params: usize, given: usize) -> String {
        let plural = if params == 1 { "" } else { "s" };
        format!("this closure takes {params} parameter{plural}, and is given {given}")
    }

    pub(crate) fn iterator_adapter(method: &str) -> String {
        format!(
            "`.{method}()` on an iterator is not supported by `#[differentiate]` yet; the supported adapters are `iter`, `iter_mut`, `into_iter`, `copied`, `cloned`, `map`, `filter`, `take_while`, `skip_while`, `scan`, `zip`, `chain`, `enumerate`, `rev`, `skip`, `take`, `step_by`, `windows`, `chunks`, `chunks_exact` (and their `_mut` forms), and the consumers `sum`, `product`, `count`, `fold`, `reduce`, `max_by`, `min_by`, `position`, `rposition`, `find`, `rfind`, `any`, `all`, `next`, `nth`, `last`, `for_each`, `collect` (and `for` loops); or write an index loop: `for i in 0..xs.len() {{ … xs[i] … }}`"
        )
    }

    pub(crate) fn after_chain(method: &str) -> String {
        format!(
            "`.{method}()` after `.chain()` is not supported by `#[differentiate]` yet: each part of a chain is a loop of its own, and after `chain` come `map`, `filter`, `copied`, `cloned`, `rev`, `enumerate`, `skip`, `take`, more `chain`s and the consumers `sum`, `product`, `count`, `fold`, `reduce`, `max_by` and `min_by` (of numbers, not pairs), `any`, `all`, `position`, `find`, `next`, `last`, `for_each`, `collect` (and `for` loops); write a loop over each part"
        )
    }

    pub(crate) fn view_method(method: &str) -> String {
        format!(
            "`.{method}()` is not supported on a sub-slice; index it (`s[i]`), iterate it (`s.iter()`), or use `len()` and `to_vec()`"
        )
    }

    pub(crate) fn unsupported_expr(what: &str, instead: &str) -> String {
        format!("{what} not supported by `#[differentiate]` yet; {instead}")
    }

    pub(crate) fn param_type(ty: &str) -> String {
        let alias = if ty.chars().all(|c| c.is_alphanumeric() || c == '_') {
            " (a parameter struct with `#[derive(Tangent)]` is taken by reference, `p: &Params`; `#[differentiate]` cannot see through a type alias: write the type itself)"
        } else {
            ""
        };
        format!(
            "parameter type `{ty}` is not supported by `#[differentiate]` yet; take `f64` or `f32` by value or a float buffer such as `&[f64]` or `&mut [f64]` (active), or an integer, `bool` or integer buffer (constant){alias}"
        )
    }

    pub(crate) fn vec_param(elem: &str) -> String {
        format!(
            "a `Vec` is taken by reference by `#[differentiate]` functions: write `&[{elem}]` (or `&Vec<{elem}>`); `_vjp` then takes its shadow `&mut [{elem}]` after it"
        )
    }

    pub(crate) fn struct_buffer(ty: &str, elem: &str) -> String {
        format!(
            "a buffer of structs (`{ty}`) is not supported by `#[differentiate]` yet; take each field of `{elem}` as a buffer of its own, a struct of arrays (`pos: &[[f64; 2]], mass: &[f64]` for fields `pos: [f64; 2]` and `mass: f64`), or a parameter struct with `#[derive(Tangent)]` whose fields are flat buffers (`pos: Vec<f64>`, `mass: Vec<f64>`); `#[differentiate]` cannot see through a type alias: if `{elem}` names a float type, write that type (`&[f64]`)"
        )
    }

    pub(crate) fn wrt_unknown(name: &str, func: &str) -> String {
        format!("`wrt` names `{name}`, which is not a parameter of `{func}`")
    }

    pub(crate) fn wrt_not_float(name: &str, ty: &str) -> String {
        format!(
            "`{name}` has type `{ty}`, which has no derivative; `wrt` can list floats, float buffers and arrays, parameter structs and `self`"
        )
    }

    pub(crate) fn wrt_duplicate(name: &str) -> String {
        format!("`wrt` lists `{name}` twice")
    }

    pub(crate) fn unknown_method(method: &str, supported: &str) -> String {
        format!(
            "`.{method}()` has no derivative rule; the supported float methods are {supported}; anything else must be written with these and `+ - * /`"
        )
    }

    pub(crate) fn unknown_function(path: &str, supported: &str) -> String {
        format!(
            "`{path}` has no derivative rule; the supported float functions are {supported} (as methods or as `f64::name(x)`), and `f64::from`"
        )
    }

    pub(crate) fn method_arity(method: &str, n_args: usize, given: usize) -> String {
        let plural = if n_args == 1 { "" } else { "s" };
        format!("`{method}` takes {n_args} argument{plural}, not {given}")
    }

    pub(crate) fn generic_constructor(ty: &str, name: &str) -> String {
        format!(
            "`{ty}::{name}` is not how `ad_runtime::Float` makes a number (it is not `num_traits::Float`): write {instead}",
            instead = match name {
                "zero" => format!("`{ty}::ZERO`"),
                "one" => format!("`{ty}::ONE`"),
                _ => format!("`{ty}::from_f64(x)` (or `{ty}::from_i32(n)`)"),
            }
        )
    }

    pub(crate) fn integer_method(method: &str) -> String {
        format!(
            "the integer method `.{method}()` is not supported; the integer methods returning a number or a `bool` are (`saturating_sub`, `pow`, `abs_diff`, `is_power_of_two`, …), not those returning an `Option`: write the integer arithmetic with operators, or compute the value outside the function and pass it as a parameter"
        )
    }

    pub(crate) fn buffer_method(method: &str) -> String {
        format!(
            "`.{method}()` is not supported on buffers by `#[differentiate]` yet; the supported buffer operations are indexing `xs[i]`, `.len()`, `.push(x)`, `.extend_from_slice(&ys)`, `.swap(i, j)`, `.reverse()`, `.rotate_left(k)`, `.rotate_right(k)`, `.fill(x)`, `.copy_from_slice(&ys)`, `.retain(p)`, `.truncate(k)`, `.resize(k, x)`, `.insert(i, x)` and `.clear()` outside loops and branches, `.partition_point(p)`, `.contains(&v)`, `.to_vec()`, `.to_owned()`, `.clone()`, slicing `&xs[a..b]`, `.first()`/`.last()`/`.get(i)` taken out with `.unwrap()`, `.expect(…)`, `.unwrap_or(…)` or `.map_or(…)` or kept in a local (`let m = xs.first();`), and iterators (`.iter()`, `.windows(k)`, `.chunks(k)` with adapters and consumers such as `.map(…).sum()`)"
        )
    }

    pub(crate) fn not_a_buffer(func: &str) -> String {
        format!(
            "`ad_runtime::{func}` takes a buffer here: pass a buffer variable as `&xs` (or `&mut ys` for the one it writes)"
        )
    }

    pub(crate) fn runtime_path(func: &str) -> String {
        format!(
            "`{func}(…)` may be the runtime's primitive or a function of yours, and `#[differentiate]` cannot tell which: write `ad_runtime::{func}(…)` for the runtime's, `self::{func}(…)` (or any path to it) for your own"
        )
    }

    pub(crate) fn store_into_constant(param: &str) -> String {
        format!(
            "an active value is written into `{param}`, which is not differentiated; add `{param}` to `wrt(…)`, or `ad_runtime::detach` the value"
        )
    }

    /// A runtime function forward mode has no tangent rule for.
    pub(crate) fn jvp_unsupported(function: &str) -> String {
        format!(
            "forward mode (`jvp`) has no tangent rule for `{function}`; differentiate this function with `vjp` only, or write the computation with loops"
        )
    }

    /// A construct vector forward mode does not differentiate yet.
    pub(crate) fn lanes_unsupported(what: &str) -> String {
        format!(
            "vector forward mode (`jvp_lanes`) does not support {what} yet; differentiate this function with `jvp` and call `_jvp` once per direction"
        )
    }

    /// A construct the forward-mode twins of `_vjp` and `_jvp` (`nested`) do
    /// not differentiate yet.
    pub(crate) fn nested_unsupported(what: &str) -> String {
        format!(
            "`nested` (forward mode through `_vjp` or `_jvp`) does not support {what} yet; remove `nested`, or compute this function's derivative outside the differentiated caller"
        )
    }

    pub(crate) const NESTED_OUTPUT: &str = "`nested` needs a function returning one float (its `_vjp` takes a float seed); differentiate a scalar function, or remove `nested`";

    /// A construct `_hvp` does not differentiate yet.
    pub(crate) fn hvp_unsupported(what: &str) -> String {
        format!(
            "`_hvp` (second order) does not support {what} yet; differentiate this function with `vjp` or `jvp` only"
        )
    }

    pub(crate) const HVP_OUTPUT: &str = "`_hvp` needs a function returning one float (its Hessian is that of a scalar); differentiate a scalar loss, or use `jvp` for the Jacobian of a vector-valued function";
    pub(crate) const CUSTOM_JVP_NOT_A_FUNCTION: &str =
        "`#[custom_jvp(rule)]` applies to functions with a body; put it on a `fn`";
    pub(crate) const CUSTOM_JVP_ARGS: &str = "name the rule: `#[custom_jvp(my_rule)]`, where `my_rule` takes the arguments of `_jvp` (each float parameter followed by its tangent) and returns the output and its tangent";
    pub(crate) const CUSTOM_NOT_A_FUNCTION: &str =
        "`#[custom_vjp(rule)]` applies to functions with a body; put it on a `fn`";
    pub(crate) const CUSTOM_ARGS: &str = "name the rule: `#[custom_vjp(my_rule)]`, where `my_rule` takes the arguments of `_vjp`, the output and the seed, and returns the adjoints";
    pub(crate) const CUSTOM_BUFFER_OUTPUT: &str = "a function with a custom rule returns floats or nothing; return a buffer through a `&mut` parameter instead";
    pub(crate) const TANGENT_NOT_A_STRUCT: &str =
        "`#[derive(Tangent)]` applies to structs of floats, float buffers and such structs";
    pub(crate) const TANGENT_NO_FIELDS: &str =
        "`#[derive(Tangent)]` needs at least one field: a float, a float buffer or such a struct";
    pub(crate) const TANGENT_ALL_SKIPPED: &str = "`#[derive(Tangent)]` needs at least one field that is not `#[tangent(skip)]`: a float, a float buffer or a `Tangent` struct";
    /// `{field}` is replaced by the field's name (or position, for a tuple struct).
    pub(crate) const TANGENT_NOT_A_FLOAT: &str = "the field `{field}` is not a float, a float buffer or a `Tangent` struct: add `#[tangent(skip)]` above it to leave it out of the gradient (the shadow then holds a clone of it)";
    /// `{field}` is replaced by the field's name (or position, for a tuple struct).
    pub(crate) const TANGENT_ATTRIBUTE: &str = "unknown `tangent` attribute on the field `{field}`: write `#[tangent(skip)]` to leave the field out of the gradient";
    pub(crate) const TANGENT_ATTRIBUTE_ON_STRUCT: &str = "`#[tangent(skip)]` applies to fields, not to the struct: put it above each field that is not a parameter (a size, a label)";
    pub(crate) const SORT_IN_REGION: &str = "a buffer is sorted at the top level of a `#[differentiate]` function's body, not in a loop or a branch: sort a copy before the loop, or sort in a `#[differentiate]` function of its own that returns the sorted `Vec` (`let v = sorted(&x);` in the loop)";
    pub(crate) const RETURN_TUPLE: &str = "a function returning a tuple returns it written out, `return (a, b);` (or chosen by an `if`, or from a call): bind the elements first";
    pub(crate) const TUPLE_CALL_ELEMENT: &str = "an element of the tuple a call returns cannot be read with `.0`: the macro needs the tuple's size; destructure it, `let (r, _) = polar(x, y);`, and use `r`";
    pub(crate) const FIELD_OF_A_NON_STRUCT: &str = "only fields of parameter structs (`p: &Params` or `&self`) can be read; pass the value as its own `f64` parameter";
    pub(crate) const MUT_ARRAY_PARAM: &str = "an array taken by value cannot be `mut` in a `#[differentiate]` function; take it without `mut` and change a copy: `let mut a = a;`";
    pub(crate) const MUT_STRUCT: &str = "a parameter struct is taken by `&`: a differentiated function cannot change it; take what it changes as a `&mut` buffer parameter";
    pub(crate) const CALL_REFERENCE: &str = "only buffers can be passed by reference to a function called from differentiated code: pass floats and integers by value";
    pub(crate) const CALL_BUFFER_BY_VALUE: &str = "pass the `Vec` by reference (`&v` or `&mut v`): functions called from differentiated code cannot take a `Vec` by value (arrays they can)";

    pub(crate) fn field_both(path: &str) -> String {
        format!(
            "the field `{path}` is used both as a float and as a buffer; a field is one or the other: index a buffer field where you use it (`p.{path}[i]`), and give a copy of it its type (`let {path}: [f64; 3] = p.{path};`)"
        )
    }

    pub(crate) fn call(func: &str) -> String {
        format!(
            "calls to `{func}` cannot be differentiated yet: a function of yours is called when it has `#[differentiate]` (a snake_case name, as Rust names functions), a float function such as `f64::sin(x)` or `ad_runtime::detach(x)` has its rule, and a tuple struct made by a call (`Pt(a, b)`) is seen into only when bound by `let` and read by its fields (`p.0`, `p.1`): read its fields rather than use it whole, or keep separate variables"
        )
    }
}
