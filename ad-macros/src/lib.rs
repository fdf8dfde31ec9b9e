//! Procedural macros of `ad-runtime`. Depend on `ad-runtime`, which re-exports
//! them; generated code refers to `::ad_runtime`.
//!
//! This file is the entry point only: everything below works on `proc_macro2`
//! so that the pipeline (see `expand.rs`) is testable as a plain library.

#![forbid(unsafe_code)]

mod analysis;
mod args;
mod custom;
mod diag;
mod emit;
mod expand;
mod ir;
mod jvp;
mod lower;
mod reverse;
mod tangent;
/// The test machinery, which never runs at expansion time: the IR
/// interpreter, the differential tests, the fuzzers, the compile-cost
/// harness and the expansion snapshots. It sits beside `src/`, which holds
/// only the compiler.
#[cfg(test)]
#[path = "../testing/mod.rs"]
mod testing;

use proc_macro::TokenStream;

/// Differentiates a function over `f64` or `f32`: generates its derivatives,
/// as plain Rust, beside it.
///
/// On `fn f`, `#[differentiate]` leaves `f` as it is and generates `f_vjp`,
/// its reverse-mode derivative (a vector-Jacobian product), and `f_forward`,
/// the same derivative split into a forward pass and a pullback. With
/// arguments it generates `f_jvp` (forward mode) and `f_hvp`
/// (Hessian-vector products) instead, or as well. The generated functions
/// have `f`'s visibility and `#[cfg]` attributes, and a doc comment saying
/// what they take and return. They call into `::ad_runtime`: depend on
/// `ad-runtime`, which re-exports this macro.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate]
/// fn f(x: f64, y: f64) -> f64 {
///     x * y + x.sin()
/// }
///
/// // Generated: fn f_vjp(x: f64, y: f64, d_out: f64) -> (f64, f64, f64)
/// # let _: fn(f64, f64, f64) -> (f64, f64, f64) = f_vjp;
/// let (out, d_x, d_y) = f_vjp(0.0, 2.0, 1.0); // the seed d_out = 1 gives the gradient
/// assert_eq!(out, f(0.0, 2.0));
/// assert_eq!((d_x, d_y), (3.0, 0.0)); // ∂f/∂x = y + cos x, ∂f/∂y = x
/// ```
///
/// This page is the reference. The guides, with expanded examples, are in
/// the `docs/` folder of the repository: `calling-convention.md`,
/// `supported.md`, `buffers.md`, `composition.md`, `forward-mode.md`,
/// `checkpointing.md` and `errors.md`.
///
/// # Arguments
///
/// | attribute | generates |
/// |---|---|
/// | `#[differentiate]` | `f_vjp` and `f_forward` |
/// | `#[differentiate(jvp)]` | `f_jvp` only |
/// | `#[differentiate(hvp)]` | `f_hvp` only |
/// | `#[differentiate(vjp, jvp)]` | `f_vjp`, `f_forward` and `f_jvp` |
/// | `#[differentiate(jvp_lanes)]` | `f_jvp_lanes::<K>` only (vector forward mode) |
///
/// The modes `vjp` (`f_vjp` and `f_forward`), `jvp`, `jvp_lanes` and `hvp` combine
/// freely; with no mode named, the attribute means `vjp`. Three more
/// arguments go with any mode:
///
/// - `wrt(a, b, …)`: only the parameters listed are active; the others are
///   constants, with no adjoint, shadow, tangent or direction. Each name is a
///   parameter that can be active (a float, a float buffer, an array, a
///   parameter struct, `self`), listed once.
/// - `nested`: also generates the twins through which a function
///   differentiated in either mode can call `f_vjp` and `f_jvp` and be
///   differentiated (nested differentiation; `forward-mode.md`).
/// - `print`: prints the generated functions when the crate is compiled (see
///   [Seeing the generated code](#seeing-the-generated-code)).
///
/// Arguments are separated by commas, in any order, each given at most
/// once: `#[differentiate(vjp, jvp, wrt(x), print)]`. Anything else is a
/// compile error.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate(wrt(x))]
/// fn g(x: f64, y: f64) -> f64 {
///     x * y
/// }
///
/// // Generated: fn g_vjp(x: f64, y: f64, d_out: f64) -> (f64, f64)
/// # let _: fn(f64, f64, f64) -> (f64, f64) = g_vjp;
/// let (out, d_x) = g_vjp(2.0, 3.0, 1.0); // `y` is a constant: no adjoint
/// assert_eq!((out, d_x), (6.0, 3.0));
/// ```
///
/// # Calling convention of `f_vjp`
///
/// `f_vjp` takes `f`'s parameters, in order and with their names, each
/// active buffer followed by its shadow, then the seed. It returns `f`'s
/// output followed by the adjoints of the active parameters taken by value.
///
/// | parameter of `f` | role | in `f_vjp` |
/// |---|---|---|
/// | `x: f64`, `x: f32` | active | as is; its adjoint is returned after the output |
/// | integers (`i8` to `i128`, `isize`, `u8` to `u128`, `usize`) and `bool` | constant | as is |
/// | `xs: &[T]`, `&Vec<T>`, `&[T; N]`, with `T` a float | active | followed by the shadow `d_xs: &mut [T]` (`&mut [T; N]`), into which its adjoint is added |
/// | `u: &mut [T]`, `&mut Vec<T>`, `&mut [T; N]` | active | followed by `d_u: &mut [T]` (`&mut [T; N]`), which carries the seed of `u`'s final contents in and the adjoint of its initial contents out; `u` is updated as `f` updates it |
/// | `a: [T; N]`, an array by value | active | as is; its adjoint, a `[T; N]`, is returned like a float's |
/// | `pts: &[[T; N]]`, `&mut [[T; N]]`, `&[[T; N]; M]`, `&Vec<[T; N]>`, a buffer of rows | active | followed by a shadow of rows, `d_pts: &mut [[T; N]]` (`&mut [[T; N]; M]`) |
/// | `p: &Params`, a struct with `#[derive(Tangent)]`, and `&self` | active | followed by `d_p: &mut Params` (`d_self: &mut Self`), into whose fields the adjoint is added |
/// | `x: T` in `fn f<T: Float>` | active | as for a float: one `f_vjp` serves `f32` and `f64` |
/// | integer buffers (`&[usize]`, …), and any parameter left out of `wrt(…)` | constant | as is, with no shadow |
///
/// The seed, the last parameter, is the cotangent of the output, `d_out`
/// (`d_out_` if a parameter has that name). Its type follows the return
/// type: a float for a float (`1.0` gives the gradient), the tuple for a
/// tuple of floats, `&[T]` for `Vec<T>`, `&[T; N]` for `[T; N]`. A function
/// that returns nothing (it updates `&mut` buffers) has no seed: the shadows
/// of its `&mut` buffers carry the seeds.
///
/// The result is the output, then the adjoint of each active float or array
/// taken by value, in parameter order: `(out, d_a, d_b)`. With no such
/// parameter it is the output alone; for a function returning nothing, the
/// adjoints alone (one as it is, none as `()`).
///
/// Shadows belong to the caller. `f_vjp` never zeroes or allocates one: zero
/// them before the first call; a second call adds to them. A shadow has its
/// buffer's length; `f_vjp` checks this first and panics naming both.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate]
/// fn weighted(xs: &[f64], w: f64, n: usize) -> f64 {
///     let mut s = 0.0;
///     for i in 0..n {
///         s += w * xs[i] * xs[i];
///     }
///     s
/// }
///
/// // Generated:
/// // fn weighted_vjp(xs: &[f64], d_xs: &mut [f64], w: f64, n: usize, d_out: f64) -> (f64, f64)
/// # let _: fn(&[f64], &mut [f64], f64, usize, f64) -> (f64, f64) = weighted_vjp;
/// let xs = [1.0, 2.0, 3.0];
/// let mut d_xs = [0.0; 3];
/// let (out, d_w) = weighted_vjp(&xs, &mut d_xs, 0.5, 2, 1.0);
/// assert_eq!((out, d_w), (2.5, 5.0));
/// assert_eq!(d_xs, [1.0, 2.0, 0.0]); // 2·w·xs[i] for i < n
///
/// // The shadow is not zeroed: a second call adds to it.
/// weighted_vjp(&xs, &mut d_xs, 0.5, 2, 1.0);
/// assert_eq!(d_xs, [2.0, 4.0, 0.0]);
/// ```
///
/// A `&mut` buffer is an input and an output at once:
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate]
/// fn scale(u: &mut [f64], k: f64) {
///     for i in 0..u.len() {
///         u[i] *= k;
///     }
/// }
///
/// // Generated: fn scale_vjp(u: &mut [f64], d_u: &mut [f64], k: f64) -> f64
/// # let _: fn(&mut [f64], &mut [f64], f64) -> f64 = scale_vjp;
/// let mut u = [1.0, 2.0];
/// let mut d_u = [1.0, 0.0]; // the seed: the cotangent of u's final contents
/// let d_k = scale_vjp(&mut u, &mut d_u, 3.0);
/// assert_eq!(u, [3.0, 6.0]); // updated as `scale` updates it
/// assert_eq!(d_u, [3.0, 0.0]); // the adjoint of u's initial contents
/// assert_eq!(d_k, 1.0); // ∂(final u[0])/∂k = initial u[0]
/// ```
///
/// The adjoints are `Jᵀ · d_out`: seeding a basis vector gives one row of
/// the Jacobian.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate]
/// fn both(x: f64, y: f64) -> (f64, f64) {
///     (x * y, x + y)
/// }
///
/// #[differentiate]
/// fn squares(xs: &[f64]) -> Vec<f64> {
///     xs.iter().map(|x| x * x).collect()
/// }
///
/// // Generated: fn both_vjp(x: f64, y: f64, d_out: (f64, f64)) -> ((f64, f64), f64, f64)
/// # let _: fn(f64, f64, (f64, f64)) -> ((f64, f64), f64, f64) = both_vjp;
/// let (out, d_x, d_y) = both_vjp(2.0, 3.0, (1.0, 0.0)); // the row of x·y
/// assert_eq!((out, d_x, d_y), ((6.0, 5.0), 3.0, 2.0));
///
/// // Generated: fn squares_vjp(xs: &[f64], d_xs: &mut [f64], d_out: &[f64]) -> Vec<f64>
/// # let _: fn(&[f64], &mut [f64], &[f64]) -> Vec<f64> = squares_vjp;
/// let mut d_xs = [0.0; 2];
/// let out = squares_vjp(&[1.0, 3.0], &mut d_xs, &[1.0, 1.0]);
/// assert_eq!((out, d_xs), (vec![1.0, 9.0], [2.0, 6.0]));
/// ```
///
/// Arrays by value and buffers of rows, as points are often held:
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate]
/// fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
///     let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
///     dx * dx + dy * dy
/// }
///
/// #[differentiate]
/// fn area(points: &[[f64; 2]]) -> f64 {
///     let mut s = 0.0;
///     for p in points {
///         s += p[0] * p[1];
///     }
///     s
/// }
///
/// // Generated: fn dist2_vjp(a: [f64; 2], b: [f64; 2], d_out: f64) -> (f64, [f64; 2], [f64; 2])
/// # let _: fn([f64; 2], [f64; 2], f64) -> (f64, [f64; 2], [f64; 2]) = dist2_vjp;
/// let (out, d_a, d_b) = dist2_vjp([3.0, 4.0], [0.0, 0.0], 1.0);
/// assert_eq!((out, d_a, d_b), (25.0, [6.0, 8.0], [-6.0, -8.0]));
///
/// // Generated: fn area_vjp(points: &[[f64; 2]], d_points: &mut [[f64; 2]], d_out: f64) -> f64
/// # let _: fn(&[[f64; 2]], &mut [[f64; 2]], f64) -> f64 = area_vjp;
/// let mut d_points = [[0.0; 2]; 2];
/// let out = area_vjp(&[[1.0, 2.0], [3.0, 4.0]], &mut d_points, 1.0);
/// assert_eq!((out, d_points), (14.0, [[2.0, 1.0], [4.0, 3.0]]));
/// ```
///
/// # The split API: `f_forward`
///
/// `f_forward` takes `f`'s parameters, runs `f`, and returns its output and
/// its pullback: a closure that runs the adjoint, and can be called any
/// number of times, once per seed. The pullback borrows nothing. It takes
/// each buffer or struct parameter again, as `&` and as the call left it,
/// followed by its shadow if it is active, then the seed (`()` for a
/// function that returns nothing). It adds the adjoints of buffers into
/// their shadows and returns those of the active floats taken by value, as
/// `f_vjp` does; an array taken by value comes back as a slice followed by
/// a shadow slice (`&[T]`, `&mut [T]`), and so does a buffer of rows,
/// flat. `f_forward` honours `wrt(…)` as `f_vjp` does. For a method, it is
/// an associated function taking the receiver first,
/// `Type::f_forward(&value, …)`, whose pullback takes the receiver and its
/// shadow.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate]
/// fn h(x: f64, xs: &[f64]) -> f64 {
///     x * xs[0] + xs[1]
/// }
///
/// // Generated:
/// // fn h_forward(x: f64, xs: &[f64]) -> (f64, impl Fn(&[f64], &mut [f64], f64) -> f64)
/// let xs = [2.0, 5.0];
/// let (out, pullback) = h_forward(3.0, &xs);
/// assert_eq!(out, 11.0);
/// let mut d_xs = [0.0; 2];
/// let d_x = pullback(&xs, &mut d_xs, 1.0);
/// assert_eq!((d_x, d_xs), (2.0, [3.0, 1.0]));
///
/// // Another seed, without running `h` again.
/// let mut d_xs = [0.0; 2];
/// let d_x = pullback(&xs, &mut d_xs, 2.0);
/// assert_eq!((d_x, d_xs), (4.0, [6.0, 2.0]));
/// ```
///
/// # Forward mode: `f_jvp`
///
/// `#[differentiate(jvp)]` generates `f_jvp`, the Jacobian-vector product:
/// the derivative of the output along one direction of the inputs. It takes
/// `f`'s parameters, each active one followed by its tangent `t_x`, the
/// direction, and returns the output followed by its tangent. The tangent of
/// a float is a float; of `&[T]` or `&Vec<T>`, a `&[T]`; of `&[T; N]`, a
/// `&[T; N]`; of a `&mut` buffer, a `&mut [T]` (`&mut [T; N]`) updated in
/// place beside it; of an array by value, an array by value; of a buffer of
/// rows, rows; of a parameter struct, `&Params`. Integers and `bool` have no
/// tangent. The result is `(out, t_out)`, both of `f`'s return type; a
/// function that returns nothing returns nothing (its tangents are those of
/// its `&mut` buffers).
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate(vjp, jvp)]
/// fn e(xs: &[f64], c: f64) -> f64 {
///     c * (xs[0] * xs[1])
/// }
///
/// // Generated: fn e_jvp(xs: &[f64], t_xs: &[f64], c: f64, t_c: f64) -> (f64, f64)
/// # let _: fn(&[f64], &[f64], f64, f64) -> (f64, f64) = e_jvp;
/// let (out, t_out) = e_jvp(&[2.0, 3.0], &[1.0, 0.0], 10.0, 0.0); // along xs[0]
/// assert_eq!((out, t_out), (60.0, 30.0));
///
/// // The same derivative from f_vjp: the first entry of the gradient.
/// let mut d_xs = [0.0; 2];
/// let (_, d_c) = e_vjp(&[2.0, 3.0], &mut d_xs, 10.0, 1.0);
/// assert_eq!((d_xs, d_c), ([30.0, 20.0], 6.0));
/// ```
///
/// # Vector forward mode: `f_jvp_lanes`
///
/// `#[differentiate(jvp_lanes)]` generates `f_jvp_lanes::<K>`: `f_jvp` with
/// `K` directions at once. Each tangent is an
/// [`ad_runtime::Lanes<T, K>`](https://docs.rs/ad-runtime/latest/ad_runtime/lanes/struct.Lanes.html)
/// where `f_jvp`'s is a `T` (a buffer's tangent a buffer of them), and lane
/// `l` of the result is what `f_jvp` gives along lane `l` of the tangents,
/// bit for bit; the primal runs once. `K` is a const generic, inferred from
/// the tangents.
///
/// ```
/// use ad_runtime::{Lanes, differentiate};
///
/// #[differentiate(jvp, jvp_lanes)]
/// fn e(xs: &[f64], c: f64) -> f64 {
///     c * (xs[0] * xs[1])
/// }
///
/// // Generated: fn e_jvp_lanes<const K: usize>(xs: &[f64], t_xs: &[Lanes<f64, K>],
/// //     c: f64, t_c: Lanes<f64, K>) -> (f64, Lanes<f64, K>)
/// let t_xs = [Lanes([1.0, 0.0, 0.0]), Lanes([0.0, 1.0, 0.0])];
/// let (out, t_out) = e_jvp_lanes(&[2.0, 3.0], &t_xs, 10.0, Lanes([0.0, 0.0, 1.0]));
/// assert_eq!((out, t_out.0), (60.0, [30.0, 20.0, 6.0])); // the whole gradient
/// assert_eq!(e_jvp(&[2.0, 3.0], &[0.0, 1.0], 10.0, 0.0).1, t_out[1]);
/// ```
///
/// # Second order: `f_hvp`
///
/// `#[differentiate(hvp)]` on a function returning one float generates
/// `f_hvp`, the Hessian-vector product `H·v`, forward mode over reverse
/// mode. Each active float `x` is followed by its direction `v_x`; each
/// active buffer `xs` by its direction `v_xs: &[T]`, then its gradient
/// shadow `d_xs: &mut [T]`, then `hv_xs: &mut [T]`; both shadows are added
/// into. It returns the output, the gradient of the active floats, then
/// their entries of `H·v`: `(out, d_x, d_y, hv_x, hv_y)`; the output alone
/// if there are none. Not supported yet in `f_hvp`, each a compile error
/// that says so: calls of other differentiated functions, `norm2`,
/// `softmax`, `logsumexp`, parameter structs, arrays by value and buffers of
/// rows.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate(hvp)]
/// fn q(x: f64, y: f64) -> f64 {
///     x * x * y
/// }
///
/// // Generated: fn q_hvp(x: f64, v_x: f64, y: f64, v_y: f64) -> (f64, f64, f64, f64, f64)
/// # let _: fn(f64, f64, f64, f64) -> (f64, f64, f64, f64, f64) = q_hvp;
/// // H = [[2y, 2x], [2x, 0]]; v = (1, 0) gives its first column.
/// let (out, d_x, d_y, hv_x, hv_y) = q_hvp(1.0, 1.0, 2.0, 0.0);
/// assert_eq!((out, d_x, d_y), (2.0, 4.0, 1.0));
/// assert_eq!((hv_x, hv_y), (4.0, 2.0));
///
/// #[differentiate(hvp)]
/// fn cubes(xs: &[f64]) -> f64 {
///     xs.iter().map(|x| x * x * x).sum()
/// }
///
/// // Generated: fn cubes_hvp(xs: &[f64], v_xs: &[f64], d_xs: &mut [f64], hv_xs: &mut [f64]) -> f64
/// # let _: fn(&[f64], &[f64], &mut [f64], &mut [f64]) -> f64 = cubes_hvp;
/// let (mut d_xs, mut hv_xs) = ([0.0; 2], [0.0; 2]);
/// let out = cubes_hvp(&[1.0, 2.0], &[1.0, 1.0], &mut d_xs, &mut hv_xs);
/// assert_eq!((out, d_xs, hv_xs), (9.0, [3.0, 12.0], [6.0, 12.0])); // 3x², 6x·v
/// ```
///
/// # Calls, generic floats, parameter structs
///
/// A differentiated function can call functions that have a derivative:
/// other `#[differentiate]` functions, and functions with a rule of your own
/// ([`custom_vjp`](macro@custom_vjp), [`custom_jvp`](macro@custom_jvp)).
/// The generated code calls the callee's hidden twin, `g_forward_all`
/// (`g_jvp_all` in `f_jvp`), in which every float parameter is active. A
/// callee imported by name must be imported with its twin,
/// `use m::{g, g_forward_all};`, and a caller with `jvp` needs a callee with
/// `jvp` or `#[custom_jvp]`. A function with no derivative is rustc's error
/// "cannot find function `g_forward_all`" at the call.
///
/// In a loop, a call's pullback is saved each iteration, unless the adjoint
/// can read the call's arguments again (elements of buffers nothing changes
/// afterwards, the index): then the adjoint makes the call again. Marking a
/// call `ad_runtime::checkpoint(g(x, k))` does the same for arguments the
/// loop carries, saving the arguments instead of the pullback (see the
/// function's documentation and `docs/checkpointing.md`).
///
/// A function with one type parameter bounded by `ad_runtime::Float`
/// (`fn f<T: Float>`, or `where T: Float`) gives one generic `f_vjp` for
/// `f32` and `f64`. A parameter `p: &Params` of a struct with
/// [`#[derive(Tangent)]`](derive@Tangent) is active, and so is `&self` in a
/// method of such a struct: `f_vjp` takes its shadow, a value of the same
/// type, after it.
///
/// ```
/// use ad_runtime::{Float, Tangent, differentiate};
///
/// #[differentiate]
/// fn cube<T: Float>(x: T) -> T {
///     x * x * x
/// }
///
/// #[differentiate]
/// fn sum_cubes(x: f64, y: f64) -> f64 {
///     cube(x) + cube(y)
/// }
///
/// assert_eq!(cube_vjp(2.0_f32, 1.0), (8.0, 12.0));
/// assert_eq!(sum_cubes_vjp(1.0, 2.0, 1.0), (9.0, 3.0, 12.0));
///
/// #[derive(Debug, PartialEq, Tangent)]
/// struct Line {
///     slope: f64,
///     offset: f64,
/// }
///
/// impl Line {
///     #[differentiate]
///     fn at(&self, x: f64) -> f64 {
///         self.slope * x + self.offset
///     }
/// }
///
/// // Generated: fn at_vjp(&self, d_self: &mut Self, x: f64, d_out: f64) -> (f64, f64)
/// # let _: fn(&Line, &mut Line, f64, f64) -> (f64, f64) = Line::at_vjp;
/// let line = Line { slope: 2.0, offset: 1.0 };
/// let mut d_line = line.zero(); // a shadow: zeros of the same shape
/// let (y, d_x) = line.at_vjp(&mut d_line, 3.0, 1.0);
/// assert_eq!((y, d_x), (7.0, 2.0));
/// assert_eq!(d_line, Line { slope: 3.0, offset: 1.0 });
/// ```
///
/// # What can be differentiated
///
/// In short: arithmetic and the float methods (`sin`, `exp`, `powi`, `max`,
/// `hypot`, …); `let`, reassignment and compound assignment; `if` and
/// `match` on integers and `bool`; `for`, `while` and `loop`, with `break`,
/// `continue` and early `return`; indexing, sub-slices, local `Vec`s and
/// arrays; iterator chains (`iter`, `zip`, `map`, `filter`, `enumerate`,
/// `windows`, `chunks`, `sum`, `fold`, `max_by`, `collect`, …); closures;
/// tuples, destructured; `assert!`, `println!` and the like; the runtime's buffer
/// primitives (`dot`, `matvec`, `matmul`, `softmax`, …); and calls as above.
/// Branch conditions are constants: the branch taken is differentiated.
/// `ad_runtime::detach(x)` stops the gradient through `x`.
/// `#[checkpoint(snapshots = k)]` or `#[checkpoint(memory = "64 MiB")]` on a
/// loop at the top level of the body keeps `k` loop states and runs steps
/// again, instead of keeping every iteration (`docs/checkpointing.md`).
///
/// Anything else (`&mut self`, `async fn`, a reference to a scalar,
/// `unsafe`, a tuple held as a value, …) is a compile error at its span that
/// says what to write instead, never a silent wrong gradient. `f_vjp` (and
/// `f_jvp`) are then stubs with the right signature, so that callers see
/// only that error. The full list, with the loop each idiom becomes, is in
/// `docs/supported.md`; every error, with its rewrite, in `docs/errors.md`.
///
/// # Seeing the generated code
///
/// `cargo expand` (from the `cargo-expand` crate) shows every generated
/// function. Without it, add `print` to the attribute:
/// `#[differentiate(print)]`, or `#[differentiate(vjp, jvp, print)]`, makes
/// the compiler print the functions the attribute generated, formatted, as
/// the note of a warning at the function's name ("use of deprecated unit
/// struct … `#[differentiate(print)]` on `f` generated: …"). It changes
/// nothing else (beside the function it adds a hidden, unused
/// `__ad_print_f` that holds the note); remove `print` when you have read
/// the code.
///
/// ```
/// use ad_runtime::differentiate;
///
/// #[differentiate(print)] // `cargo build` shows `sq_vjp`, `sq_forward`, …
/// fn sq(x: f64) -> f64 {
///     x * x
/// }
///
/// assert_eq!(sq_vjp(3.0, 1.0), (9.0, 6.0));
/// ```
#[proc_macro_attribute]
pub fn differentiate(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::differentiate(args.into(), item.into()).into()
}

/// Gives a function a reverse-mode derivative of your own.
///
/// `#[custom_vjp(rule)]` on `fn f` generates `f_vjp` and `f_forward`, with
/// the signatures [`differentiate`](macro@differentiate) gives them (and the
/// hidden `f_forward_all` that callers call), from `rule`, without looking
/// into `f`'s body. Every differentiated function that calls `f` uses the
/// rule. Use it for a closed-form or more stable derivative, a solver, or
/// code the macro cannot read. `f` itself is left as it is.
///
/// # The rule's signature
///
/// For `fn f(p1: P1, …, pn: Pn) -> R`, the rule takes:
///
/// 1. each parameter of `f`, in order: a float, integer or `bool` as it is;
///    a buffer (`&[T]`, `&Vec<T>`, `&[T; N]`) as it is, and a `&mut`
///    buffer as `&`, with the contents the call of `f` left; each float
///    buffer followed by its shadow, `&mut [T]` (`&mut [T; N]`), into which
///    the rule adds the buffer's adjoint; a parameter struct `&Params`
///    followed by its shadow `&mut Params`;
/// 2. then the output, `out: R`, and the seed, `d_out: R`, unless `f`
///    returns nothing.
///
/// It returns the adjoints of the float parameters taken by value, in
/// order: the float for one, a tuple for several, nothing for none. For a
/// `&mut` buffer, the shadow comes in holding the seed of the final
/// contents, and the rule leaves in it the adjoint of the initial contents,
/// as in `f_vjp`. Every float parameter is active: there is no `wrt`.
///
/// ```text
/// fn f(x: f64, xs: &[f64], n: usize, u: &mut [f64]) -> f64
/// fn rule(x: f64, xs: &[f64], d_xs: &mut [f64], n: usize, u: &[f64], d_u: &mut [f64], out: f64, d_out: f64) -> f64
/// ```
///
/// A rule whose signature does not match is a compile error at the rule's
/// path, rustc's "mismatched types", which shows the expected `fn` pointer
/// type. The rule cannot be called `f_vjp` or `f_forward`: the macro
/// defines those names. `f` returns a float, a tuple of floats, or nothing;
/// not a buffer. Parameters that are buffers of rows are a compile error,
/// and arrays taken by value are not supported either.
///
/// ```
/// use ad_runtime::{custom_vjp, differentiate};
///
/// #[custom_vjp(scaled_norm_rule)]
/// fn scaled_norm(xs: &[f64], k: f64) -> f64 {
///     k * xs.iter().map(|x| x * x).sum::<f64>().sqrt()
/// }
///
/// /// The arguments of `scaled_norm_vjp`: `xs` and its shadow, `k`, then the
/// /// output and the seed; returns the adjoint of `k`.
/// fn scaled_norm_rule(xs: &[f64], d_xs: &mut [f64], k: f64, _out: f64, d_out: f64) -> f64 {
///     let norm = xs.iter().map(|x| x * x).sum::<f64>().sqrt();
///     for (d_x, x) in d_xs.iter_mut().zip(xs) {
///         *d_x += d_out * k * x / norm;
///     }
///     d_out * norm
/// }
///
/// #[differentiate]
/// fn loss(xs: &[f64], k: f64) -> f64 {
///     scaled_norm(xs, k) + k
/// }
///
/// let mut d_xs = [0.0; 2];
/// let (out, d_k) = loss_vjp(&[3.0, 4.0], &mut d_xs, 5.0, 1.0);
/// assert_eq!((out, d_k), (30.0, 6.0)); // ∂/∂k = ‖xs‖ + 1
/// assert_eq!(d_xs, [3.0, 4.0]); // k · xs / ‖xs‖
///
/// // The rule also makes `scaled_norm_vjp` and `scaled_norm_forward`.
/// let mut d_xs = [0.0; 2];
/// assert_eq!(scaled_norm_vjp(&[3.0, 4.0], &mut d_xs, 5.0, 1.0), (25.0, 5.0));
/// assert_eq!(d_xs, [3.0, 4.0]);
/// ```
#[proc_macro_attribute]
pub fn custom_vjp(args: TokenStream, item: TokenStream) -> TokenStream {
    custom::custom_vjp(args.into(), item.into()).into()
}

/// Gives a function a forward-mode derivative of your own.
///
/// `#[custom_jvp(rule)]` on `fn f` makes `f_jvp` (and the hidden
/// `f_jvp_all` that callers call) the user's `rule`, without looking into
/// `f`'s body. Every function differentiated with `jvp` that calls `f` uses
/// it. For reverse mode, put [`custom_vjp`](macro@custom_vjp) beside it.
///
/// # The rule's signature
///
/// The rule has the signature of `f_jvp` (see
/// [`differentiate`](macro@differentiate)): `f`'s parameters in order, each
/// float, float buffer, array or parameter struct followed by its tangent,
/// and it returns the output followed by its tangent, `(R, R)` for
/// `-> R`. The tangent of a float is a float; of `&[T]` or `&Vec<T>`, a
/// `&[T]`; of `&[T; N]`, a `&[T; N]`; of a `&mut` buffer, a `&mut [T]`
/// (`&mut [T; N]`), which the rule updates in place beside the buffer; of an
/// array by value, an array by value; of a parameter struct, `&Params`.
/// Integers and `bool` have none. For a function that returns nothing, the
/// rule returns nothing. Every float parameter is active: there is no `wrt`.
///
/// ```text
/// fn f(x: f64, xs: &[f64], n: usize) -> f64
/// fn rule(x: f64, t_x: f64, xs: &[f64], t_xs: &[f64], n: usize) -> (f64, f64)
/// ```
///
/// A rule whose signature does not match is a compile error at the rule's
/// path. The rule cannot be called `f_jvp`: the macro defines that name.
/// Parameters that are buffers of rows are a compile error.
///
/// ```
/// use ad_runtime::{custom_jvp, custom_vjp, differentiate};
///
/// #[custom_vjp(softplus_rule)]
/// #[custom_jvp(softplus_tangent)]
/// fn softplus(x: f64) -> f64 {
///     x.exp().ln_1p()
/// }
///
/// fn softplus_rule(x: f64, _out: f64, d_out: f64) -> f64 {
///     d_out / (1.0 + (-x).exp())
/// }
///
/// /// Has the signature of `softplus_jvp`: `x` and its tangent; returns the
/// /// output and its tangent.
/// fn softplus_tangent(x: f64, t_x: f64) -> (f64, f64) {
///     (softplus(x), t_x / (1.0 + (-x).exp()))
/// }
///
/// #[differentiate(vjp, jvp)]
/// fn loss(x: f64, y: f64) -> f64 {
///     softplus(x) * y
/// }
///
/// let (out, t_out) = loss_jvp(0.0, 1.0, 3.0, 0.0); // along x
/// assert_eq!(out, softplus(0.0) * 3.0);
/// assert_eq!(t_out, 1.5); // y / (1 + e⁻ˣ)
/// let (_, d_x, _) = loss_vjp(0.0, 3.0, 1.0);
/// assert_eq!(d_x, 1.5);
/// ```
#[proc_macro_attribute]
pub fn custom_jvp(args: TokenStream, item: TokenStream) -> TokenStream {
    custom::custom_jvp(args.into(), item.into()).into()
}

/// Makes a struct a parameter of differentiated functions: implements
/// `ad_runtime::Tangent` (and `ZerosLike`) field by field.
///
/// A function taking `p: &Params`, or a method taking `&self`, then gets a
/// shadow after it in `f_vjp`, `d_p: &mut Params`, into whose fields the
/// adjoint is added, and a tangent `t_p: &Params` in `f_jvp`. `Tangent`
/// gives what a training loop and a check need: `zero()` (zeros of the same
/// shape: a new shadow), `set_zero()`, `scale`, `add_scaled`, `dot`, and a
/// flat view (`to_flat`, `set_from_flat`), used by `ad_runtime::optim` and
/// `ad_runtime::check`.
///
/// # What the struct needs
///
/// A struct with named or unnamed fields (not an enum), with at least one
/// field that is not skipped. Each field is one of:
///
/// - a float, `f32` or `f64`, or the struct's type parameter `T: Float`;
/// - a `Vec` or an array of such floats;
/// - a struct that is itself `Tangent` (a nested `#[derive(Tangent)]`);
/// - anything else, marked `#[tangent(skip)]`: a size, a label, a name. It
///   is left out of the arithmetic and the flat view, and the zero (so the
///   shadow) holds a clone of it: its type must be `Clone`.
///
/// All the fields that are not skipped have one float type. An integer,
/// `bool`, string, `Option`, tuple or reference field without
/// `#[tangent(skip)]` is a compile error at the field that says to add it;
/// so is a field of a type that is not `Tangent` (a nested struct without
/// the derive, a `Vec` of structs) or of the other float type. The struct
/// needs no other derive.
///
/// The struct can be generic over its float type, `struct Lin<T: Float>`
/// (or `where T: Float`), which is the one bound it needs.
///
/// `#[differentiate]` cannot see the struct's definition: it types each
/// field a function reads by its use. A field that is indexed, iterated,
/// measured with `.len()` or passed by reference is a buffer; any other is a
/// float. So a skipped integer field can be a loop bound (`for i in
/// 0..p.n`), but used elsewhere it is taken for a float: pass such data as a
/// parameter of its own.
///
/// ```
/// use ad_runtime::{Tangent, differentiate};
///
/// #[derive(Debug, PartialEq, Tangent)]
/// struct Layer {
///     w: Vec<f64>,
///     b: f64,
/// }
///
/// #[derive(Debug, PartialEq, Tangent)]
/// struct Model {
///     layer: Layer,
///     scale: f64,
///     #[tangent(skip)]
///     n: usize,
/// }
///
/// #[differentiate(wrt(m))]
/// fn predict(m: &Model, x: &[f64]) -> f64 {
///     let mut s = m.layer.b;
///     for i in 0..m.n {
///         s += m.layer.w[i] * x[i];
///     }
///     m.scale * s
/// }
///
/// let m = Model { layer: Layer { w: vec![1.0, 2.0], b: 0.5 }, scale: 2.0, n: 2 };
/// let mut d_m = m.zero(); // zeros of the same shape; `n` is cloned
///
/// // Generated: fn predict_vjp(m: &Model, d_m: &mut Model, x: &[f64], d_out: f64) -> f64
/// # let _: fn(&Model, &mut Model, &[f64], f64) -> f64 = predict_vjp;
/// let out = predict_vjp(&m, &mut d_m, &[3.0, 4.0], 1.0);
/// assert_eq!(out, 23.0);
/// let expected = Layer { w: vec![6.0, 8.0], b: 2.0 };
/// assert_eq!(d_m, Model { layer: expected, scale: 11.5, n: 2 });
///
/// // The flat view: fields in declaration order, depth first.
/// assert_eq!(d_m.to_flat(), [6.0, 8.0, 2.0, 11.5]);
/// ```
#[proc_macro_derive(Tangent, attributes(tangent))]
pub fn derive_tangent(item: TokenStream) -> TokenStream {
    tangent::derive(item.into()).into()
}
