//! Expansion tests: IR text before and after reversal, and the formatted
//! expansion, snapshot-tested with insta. One small fixture per feature.

use proc_macro2::TokenStream;

use crate::expand;

/// The formatted expansion of `#[differentiate(args)] item`.
fn expanded(args: &str, item: &str) -> String {
    let args: TokenStream = args.parse().expect("args tokens");
    let item: TokenStream = item.parse().expect("item tokens");
    let tokens = expand::differentiate(args, item);
    let file: syn::File = syn::parse2(tokens.clone())
        .unwrap_or_else(|err| panic!("expansion does not parse: {err}\n{tokens}"));
    prettyplease::unparse(&file)
}

/// The primal IR and the `_vjp` IR.
fn ir(args: &str, item: &str) -> String {
    let args: TokenStream = args.parse().expect("args tokens");
    let item: syn::ItemFn = syn::parse_str(item).expect("a fn item");
    let Ok(stages) = expand::stages(args, &item, None) else {
        panic!("fixture has errors")
    };
    format!("{}\n{}", stages.primal.to_text(), stages.vjp.to_text())
}

/// Snapshots both forms of one fixture.
macro_rules! check {
    ($name:ident, $args:literal, $item:literal) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(concat!(stringify!($name), "_ir"), ir($args, $item), $item);
            insta::assert_snapshot!(
                concat!(stringify!($name), "_expanded"),
                expanded($args, $item),
                $item
            );
        }
    };
}

// The example on the first screen of the README.
check!(
    readme_example,
    "",
    "fn f(x: f64, y: f64) -> f64 { let s = x * y; s.sin() + s * x }"
);
check!(
    square_of_sum,
    "",
    "fn f(x: f64, y: f64) -> f64 { let s = x + y; s * s }"
);
check!(fan_out, "", "fn f(x: f64, y: f64) -> f64 { x * y + x + y }");
check!(
    reassignment,
    "",
    "fn f(x: f64) -> f64 { let mut x = x; x = x * x; x = x + 1.0; x }"
);
check!(
    compound_assignment,
    "",
    "fn f(x: f64, y: f64) -> f64 { let mut s = x; s += y; s *= x; s -= 2.0; s /= y; s }"
);
check!(
    subtraction_and_negation,
    "",
    "fn f(x: f64, y: f64) -> f64 { -(x - y) - -x }"
);
check!(division, "", "fn f(x: f64, y: f64) -> f64 { x / y }");
check!(division_by_constant, "", "fn f(x: f64) -> f64 { x / 4.0 }");
check!(
    nested_block_and_shadowing,
    "",
    "fn f(x: f64) -> f64 { let y = { let x = x * 2.0; x + 1.0 }; let y = y * y; y }"
);
check!(
    method_and_path_forms,
    "",
    "fn f(x: f64) -> f64 { x.sin() * f64::cos(x) }"
);
check!(
    unary_rules_use_output,
    "",
    "fn f(x: f64) -> f64 { x.exp() + x.sqrt() + x.tanh() }"
);
check!(
    binary_rule_destructures,
    "",
    "fn f(y: f64, x: f64) -> f64 { y.atan2(x) }"
);
check!(
    binary_rule_one_side_active,
    "",
    "fn f(x: f64) -> f64 { x.powf(2.5) + 2.0_f64.powf(x) }"
);
check!(
    powi_integer_exponent,
    "",
    "fn f(x: f64, n: i32) -> f64 { x.powi(n) + x.powi(3) }"
);
check!(
    mul_add_three_inputs,
    "",
    "fn f(a: f64, b: f64, c: f64) -> f64 { a.mul_add(b, c) }"
);
check!(
    literal_receiver,
    "",
    "fn f(x: f64) -> f64 { x * 2.0_f64.sqrt() + f64::sin(1.0) * x }"
);
check!(
    constants,
    "",
    "fn f(x: f64) -> f64 { std::f64::consts::PI * x + f64::EPSILON }"
);
check!(
    integer_parameter_and_cast,
    "",
    "fn f(x: f64, n: usize) -> f64 { x * (n as f64) + (n * 2) as f64 }"
);
check!(
    float_casts,
    "",
    "fn f(x: f32, y: f64) -> f64 { (x as f64) * y + (y as f32 * x) as f64 }"
);
check!(
    from_conversions,
    "",
    "fn f(x: f32, b: bool, k: i32) -> f64 { f64::from(x) * f64::from(b) + f64::from(k) }"
);
check!(f32_function, "", "fn f(x: f32) -> f32 { x.ln() * 3.0 }");
check!(
    tuple_output,
    "",
    "fn f(x: f64, y: f64) -> (f64, f64) { (x * y, x + y) }"
);
check!(
    wrt_selects_parameters,
    "wrt(y)",
    "fn f(x: f64, y: f64) -> f64 { x * y }"
);
check!(
    detach_stops_gradient,
    "",
    "fn f(x: f64) -> f64 { let c = ad_runtime::detach(x * x); c * x }"
);
check!(
    no_active_parameter,
    "",
    "fn f(n: i32) -> f64 { let y = n as f64; y }"
);
check!(
    unused_parameter_gets_zero,
    "",
    "fn f(x: f64, y: f64) -> f64 { x * 2.0 }"
);
check!(
    raw_and_reserved_names,
    "",
    "fn f(r#type: f64, d_type: f64, d_out: f64) -> f64 { let t1 = r#type * d_type; t1 * d_out }"
);
check!(
    public_and_cfg,
    "",
    "#[cfg(all())] pub fn f(x: f64) -> f64 { x * x }"
);

check!(
    if_expression,
    "",
    "fn f(x: f64, y: f64) -> f64 { if x > y { x * y } else { x.sin() } }"
);
check!(
    if_statement_assigns,
    "",
    "fn f(x: f64) -> f64 { let mut s = x; let mut k = 1; if x < 0.0 { s = -x * s; k = 2; } s * k as f64 }"
);
check!(
    else_if_chain,
    "",
    "fn f(x: f64, n: i32) -> f64 { if n == 0 { x } else if n == 1 { x * x } else { x.exp() } }"
);
check!(
    nested_if_exports,
    "",
    "fn f(x: f64, y: f64) -> f64 { let z = if x > 0.0 { let t = x.sqrt(); if y > 0.0 { t * y.ln() } else { t } } else { y }; z * 2.0 }"
);

check!(
    match_on_integers,
    "",
    "fn f(x: f64, n: i32) -> f64 { match n { 0 => x, 1 | 2 => x * x, 3..=5 => x.sin(), k if k < 0 => -x, _ => x.exp() } }"
);

check!(
    loop_carried_product,
    "",
    "fn f(x: f64, n: usize) -> f64 { let mut p = 1.0; for _ in 0..n { p *= x; } p }"
);
check!(
    loop_needs_nothing_saved,
    "",
    "fn f(x: f64, c: f64, n: usize) -> f64 { let mut s = 0.0; for i in 0..n { s += c * x * i as f64; } s }"
);

check!(
    while_to_tolerance,
    "",
    "fn f(a: f64) -> f64 { let mut y = a; while (y * y - a).abs() > 1e-12 * a { y = 0.5 * (y + a / y); } y }"
);

/// Expansions with errors: the original function, the errors, a stub `_vjp`.
#[test]
fn fallback_keeps_function_and_stub() {
    insta::assert_snapshot!(expanded(
        "",
        "pub fn f(x: f64, n: i32) -> f64 { let v = &x; println!(); *v }"
    ));
}

/// The `_vjp` function of an expansion, from `start` to the split API.
fn vjp_of<'a>(expansion: &'a str, start: &str) -> &'a str {
    let start = expansion.find(start).expect("a _vjp function");
    let end = expansion
        .find("/// The forward part of")
        .expect("the split API follows");
    &expansion[start..end]
}

/// The README shows the expansion of its example: it must be the real one.
#[test]
fn readme_shows_the_real_expansion() {
    let readme = include_str!("../../README.md");
    let item = "fn f(x: f64, y: f64) -> f64 { let s = x * y; s.sin() + s * x }";
    let expansion = expanded("", item);
    let generated = vjp_of(&expansion, "fn f_vjp");
    let shown = readme
        .split("```rust\n")
        .nth(2)
        .and_then(|block| block.split("```").next())
        .expect("the README's second rust block is the generated code");
    assert_eq!(shown, generated, "update the README's generated code");
}

#[test]
fn docs_show_the_real_expansions() {
    let doc = include_str!("../../docs/buffers.md");
    let fixtures = [
        "fn f(x: &Vec<f64>) -> Vec<f64> { let mut y = vec![0.0; x.len()]; for i in 0..x.len() { y[i] = x[i] * x[i]; } y }",
        "fn step(u: &mut [f64], dt: f64) { for i in 0..u.len() { u[i] = u[i] - dt * u[i] * u[i]; } }",
        "fn f(w: &[f64], x: &[f64], m: usize, n: usize) -> f64 { let mut h = vec![0.0; m]; ad_runtime::matvec(w, x, &mut h, m, n); ad_runtime::dot(&h, &h) + ad_runtime::logsumexp(&h) }",
    ];
    for item in fixtures {
        let expansion = expanded("", item);
        let start = if expansion.contains("fn f_vjp") {
            "fn f_vjp"
        } else {
            "fn step_vjp"
        };
        let generated = vjp_of(&expansion, start);
        assert!(
            doc.contains(generated),
            "update docs/buffers.md with the expansion of `{item}`:\n{generated}"
        );
    }
}

#[test]
fn control_flow_doc_shows_a_fused_loop() {
    let doc = include_str!("../../docs/control-flow.md");
    let item = "fn fit(x: &[f64], y: &[f64], a: f64) -> f64 { let mut s = 0.0; for i in 0..x.len() { let r = a * x[i] - y[i]; s += r * r; } s }";
    let expansion = expanded("", item);
    let generated = vjp_of(&expansion, "fn fit_vjp");
    assert!(
        doc.contains(generated),
        "update docs/control-flow.md with the expansion of `{item}`:\n{generated}"
    );
}

mod verifier {
    use proc_macro2::Span;

    use crate::ir::{BinOp, Builder, Const, Function, Inst, Prim, Role, Ty, Value, verify};

    /// `fn f(x) { x * 2.0 }`, valid.
    fn valid() -> Function {
        let mut builder = Builder::new("f".to_owned());
        let x = builder.param("x".to_owned(), Role::Active, Ty::F64, Span::call_site());
        let two = builder.push(Inst::Const(Const::Zero), Ty::F64, Span::call_site());
        let out = builder.push(Inst::Binary(BinOp::Mul, x, two), Ty::F64, Span::call_site());
        builder.finish(out)
    }

    fn check(broken: impl FnOnce(&mut Function), expected: &str) {
        let mut func = valid();
        assert_eq!(verify(&func), Ok(()));
        broken(&mut func);
        let problem = verify(&func).expect_err("the verifier accepted broken IR");
        assert!(
            problem.contains(expected),
            "{problem:?} does not mention {expected:?}"
        );
    }

    #[test]
    fn use_before_definition() {
        check(|func| func.body.insts.swap(1, 2), "before its definition");
    }

    #[test]
    fn value_defined_twice_or_missing() {
        check(|func| func.body.insts[1] = Value(0), "defined twice");
        check(
            |func| {
                func.body.insts.pop();
            },
            "is not in the body",
        );
    }

    #[test]
    fn parameter_mismatch() {
        check(|func| func.insts[0].inst = Inst::Param(3), "parameter 3");
    }

    #[test]
    fn operand_counts() {
        check(
            |func| func.insts[2].inst = Inst::Prim(Prim::Atan2, vec![Value(0)]),
            "atan2 takes 2 operands",
        );
        check(
            |func| func.insts[2].inst = Inst::Pullback(Prim::Sin, vec![Value(0)]),
            "pullback of sin takes 2 operands",
        );
    }

    #[test]
    fn extract_needs_a_tuple() {
        check(
            |func| func.insts[2].inst = Inst::Extract(Value(0), 0),
            "extracts field 0",
        );
    }

    #[test]
    fn side_tables_and_return() {
        check(|func| drop(func.names.pop()), "side tables");
        check(|func| func.ret = Value(9), "returned value");
    }
}

#[test]
fn unchecked_ctxt_panics_when_dropped() {
    let dropped = std::panic::catch_unwind(|| {
        let cx = crate::diag::Ctxt::new();
        cx.error_at(proc_macro2::Span::call_site(), "an error nobody reports");
    });
    assert!(dropped.is_err(), "dropping an unchecked Ctxt must panic");
    let checked = crate::diag::Ctxt::new();
    assert!(checked.check().is_ok());
}
check!(
    loop_break_value,
    "",
    "fn f(x: f64) -> f64 { loop { break x * x; } }"
);
check!(
    break_and_continue,
    "",
    "fn f(x: f64, n: usize) -> f64 { let mut s = 0.0; for i in 0..n { if i % 2 == 1 { continue; } s += x; if s > 3.0 { break; } } s }"
);
check!(
    labeled_loops,
    "",
    "fn f(x: f64, n: usize) -> f64 { let mut s = x; 'outer: for _ in 0..n { let mut j = 0; while j < n { j += 1; s *= x; if s > 9.0 { break 'outer; } } } s }"
);
check!(
    early_return,
    "",
    "fn f(x: f64) -> f64 { if x < 0.0 { return -x; } let y = x.sqrt(); y * x }"
);

// Buffers: one fixture per form.
check!(
    slice_parameter,
    "",
    "fn f(xs: &[f64], c: f64) -> f64 { let mut s = 0.0; for i in 0..xs.len() { s += c * xs[i] * xs[i]; } s }"
);
check!(
    rosenbrock_indexing,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() - 1 { let a = 1.0 - x[i]; let b = x[i + 1] - x[i] * x[i]; s += a * a + 100.0 * b * b; } s }"
);
check!(
    vec_output,
    "",
    "fn f(x: &Vec<f64>) -> Vec<f64> { let mut y = vec![0.0; x.len()]; for i in 0..x.len() { y[i] = x[i] * x[i]; } y }"
);
check!(
    array_parameter_and_output,
    "",
    "fn f(x: &[f64; 3]) -> [f64; 3] { let mut y = [0.0; 3]; y[0] = x[0] * x[1]; y[1] = x[1] * x[2]; y[2] = x[2] * x[0]; y }"
);
check!(
    in_place_update,
    "",
    "fn step(u: &mut [f64], dt: f64) { for i in 0..u.len() { u[i] = u[i] - dt * u[i] * u[i]; } }"
);
check!(
    compound_element_writes,
    "",
    "fn f(x: &[f64], y: &mut [f64]) { for i in 0..x.len() { y[i] += 2.0 * x[i]; y[i] *= x[i]; y[i] -= x[i]; } }"
);
check!(
    overwritten_in_loop,
    "",
    "fn f(x: &[f64], steps: usize) -> f64 { let mut v = x.to_vec(); for _ in 0..steps { for i in 0..v.len() { v[i] = v[i] * v[i] * 0.5 + x[i]; } } v[0] + v[v.len() - 1] }"
);
check!(
    written_once_then_reread,
    "",
    "fn f(x: &[f64], n: usize) -> f64 { let mut h = vec![0.0; n]; for j in 0..n { h[j] = (x[j] * 2.0).tanh(); } let mut s = 0.0; for j in 0..n { s += h[j] * h[j]; } s }"
);
check!(
    element_iteration,
    "",
    "fn f(xs: &[f64], ys: &[f64]) -> f64 { let mut s = 0.0; for &x in xs.iter() { s += x * x; } for (i, y) in ys.iter().enumerate() { s += y * (i as f64); } for (x, &y) in xs.iter().zip(ys) { s += *x * y; } s }"
);
check!(
    iter_mut_and_reductions,
    "",
    "fn f(xs: &[f64]) -> f64 { let mut v = xs.to_vec(); for e in v.iter_mut() { *e = *e * *e; } let s: f64 = v.iter().sum(); s * xs.iter().product::<f64>() }"
);
check!(
    push_into_local_vec,
    "",
    "fn f(x: &[f64]) -> Vec<f64> { let mut v = Vec::with_capacity(x.len()); for i in 0..x.len() { v.push(x[i].sin()); } v }"
);
check!(
    runtime_primitives,
    "",
    "fn f(w: &[f64], x: &[f64], m: usize, n: usize) -> f64 { let mut h = vec![0.0; m]; ad_runtime::matvec(w, x, &mut h, m, n); ad_runtime::dot(&h, &h) + ad_runtime::logsumexp(&h) }"
);
// A shadow element read as a loop's initial adjoint is read before it is zeroed.
check!(
    loop_init_read_before_overwrite,
    "",
    "fn f(b: &[f64]) -> f64 { let mut z = vec![0.0; b.len()]; for o in 0..b.len() { let mut acc = b[o]; for _ in 0..2 { acc += acc * 0.5; } z[o] = acc; } z[0] }"
);
check!(
    local_buffer_forms,
    "",
    "fn f(a: f64, b: f64, n: usize) -> f64 { let v = vec![a; n]; let w = vec![a, b]; let mut c = w.clone(); c[0] *= b; let arr = [a, b, 1.0]; v[0] + c[0] + c[1] + arr[0] * arr[1] }"
);
check!(
    primitive_input_overwritten_later,
    "",
    "fn f(w: &[f64], x: &[f64]) -> f64 { let mut v = x.to_vec(); let mut y = vec![0.0; 2]; ad_runtime::matvec(w, &v, &mut y, 2, 2); v[0] = 0.0; y[0] + y[1] + v[1] }"
);
check!(
    primitive_in_a_loop_on_a_reused_buffer,
    "",
    "fn f(z: &[f64], rows: usize) -> f64 { let mut row = vec![0.0; 3]; let mut total = 0.0; for r in 0..rows { for j in 0..3 { row[j] = z[r * 3 + j]; } total += ad_runtime::logsumexp(&row); } total }"
);
check!(
    writes_inside_branches,
    "",
    "fn f(x: &[f64], y: &mut [f64]) { for i in 0..x.len() { if x[i] > 0.0 { y[i] = x[i] * x[i]; } else { y[i] = -3.0 * x[i]; } } }"
);
// A branch's adjoint writes a shadow though no primal value leaves the `if`.
check!(
    element_chosen_by_a_branch,
    "",
    "fn h(xs: &[f64], c: f64) -> f64 { if c > 0.0 { xs[0] * c } else { xs[1] } }"
);
// `&&` evaluates its right side only when its left side holds.
check!(
    short_circuit_guards_an_index,
    "",
    "fn f(xs: &[f64], n: usize) -> f64 { let mut s = 0.0; let mut i = 0; while i < n && xs[i] * xs[i] > 0.5 { s += xs[i]; i += 1; } s }"
);

/// Inputs the fuzz tests found to panic the macro: each is now an error.
#[test]
fn fuzz_regressions_are_errors() {
    let errors = [
        // `return` without a value, inside an expression.
        "fn f(x: f64, n: i32) -> f64 { let y = n as f64 + return; y }",
        // Arithmetic on a buffer, carried by a `loop`.
        "fn f(x: &[f64]) -> f64 { loop { break x * x; } }",
        // An exit inside a `while` condition.
        "fn f(x: f64) -> f64 { let mut y = x; while y < return x.sin() { y += 1.0; } y }",
        // A negated array.
        "fn f(b: &[f64]) -> f64 { let mut z = -[0.0; 1]; z[0] = b[0]; z[0] }",
    ];
    for item in errors {
        let expansion = expanded("", item);
        assert!(expansion.contains("compile_error"), "{item}:\n{expansion}");
    }
    // Ill-typed for rustc, but the macro must still terminate with code: an
    // integer accumulator times a float (the activity fixpoint never settled),
    // a `let self`.
    let code = [
        "fn f(x: f64, n: usize) -> f64 { let mut p = 0; for _ in 0..n { p *= x; } p }",
        "fn f(x: f64, n: usize) -> (f64, f64) { for _ in 0..n { return x; } x }",
        "fn f(x: f64) -> f64 { let self = x * 2.0; x }",
    ];
    for item in code {
        let expansion = expanded("", item);
        assert!(expansion.contains("fn f_vjp"), "{item}:\n{expansion}");
    }
}

/// Programs the generator found broken, each now compiling to the right code;
/// their gradients are checked in `tests/tests/regressions.rs`.
#[test]
fn generator_regressions_expand() {
    let cases = [
        "fn f(a: f64, n: usize) -> f64 { let mut x = a * a; for i in 0..n { x = i as f64; } x }",
        "fn f(a: f64, xs: &[f64]) -> f64 { let mut v = xs.to_vec(); let mut x = a; if a > 0.5 { x -= 0.5; v[0] += x; } a }",
        "fn f(a0: f64, n: usize) -> f64 { if (n as f64) < a0 { a0 } else { 2.0 * a0 } }",
        "fn f(a0: f64) -> f64 { let x: f64 = 0.5; x.abs() * a0 }",
        "fn f(a0: f64) -> f64 { let mut x = a0; x = 0.5; x.abs() * a0 }",
    ];
    for item in cases {
        let expansion = expanded("", item);
        assert!(!expansion.contains("compile_error"), "{item}:\n{expansion}");
    }
}

// Calls of functions with a derivative of their own go through their split
// API: `g_forward` in the primal, its pullback in the adjoint.
check!(
    call_of_a_differentiated_function,
    "",
    "fn f(x: f64, y: f64) -> f64 { let s = square(x) + y.sin(); s * geometry::norm(x, y) }"
);
check!(
    call_in_a_loop,
    "",
    "fn f(x: f64, n: usize) -> f64 { let mut s = x; for _ in 0..n { s = step(s, x); } s }"
);
check!(
    call_with_buffers,
    "",
    "fn f(xs: &[f64], u: &mut [f64], c: f64) -> f64 { advance(&mut u, xs, c); dot3(xs, &u) }"
);
check!(
    arrays_by_value,
    "",
    "fn f(a: [f64; 3], b: [f64; 3], s: f64) -> f64 { let n: [f64; 3] = cross(a, b); let mut m = n; m[0] *= s; norm(m) + a[1] * s }"
);
// `let c = a;` of a local array is a copy; `a.map(f)` is the loop writing one.
check!(
    array_copies_and_maps,
    "",
    "fn f(x: &[f64]) -> f64 { let a = [x[0], x[1], x[2]]; let b = a.map(|v| v * 2.0); let mut c = a; c[0] = b[1]; c[0] * a[0] }"
);
// Data points as tuples: copied flat on entry, read as tuples.
check!(
    tuple_rows,
    "wrt(a, b)",
    "fn f(points: &[(f64, f64)], a: f64, b: f64) -> f64 { points.iter().map(|&(x, y)| (a * x + b - y).powi(2)).sum::<f64>() + points[0].1 * a }"
);
// A matrix as a `Vec` of rows: copied flat on entry, and back if `&mut`.
check!(
    vec_rows,
    "",
    "fn f(a: &mut [Vec<f64>], w: &Vec<Vec<f64>>) -> f64 { let mut s = 0.0; for i in 0..a.len() { for j in 0..a[i].len() { a[i][j] *= w[i][j]; s += a[i][j]; } } s }"
);
// An element read again is read once, until a write or a branch comes between.
check!(
    reads_merged_until_a_write,
    "",
    "fn f(x: &[f64], c: f64) -> f64 { let mut v = x.to_vec(); let a = v[0] * v[0]; v[0] = a * c; let b = v[0] + v[0]; if c > 0.0 { v[1] = b; } a + b + v[1] * v[1] }"
);
// An index written the same way twice (`x[i + 1]`) is one index.
check!(
    reads_merged_by_arithmetic_index,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() - 1 { s += x[i + 1] * x[i + 1] - x[i]; } s }"
);
// A buffer returned in a loop is moved into one buffer made before it.
check!(
    buffer_returned_in_a_loop,
    "",
    "fn f(s0: f64, a: f64, n: usize) -> f64 { let mut s = [s0, s0]; for _ in 0..n { let k = rhs(s, a); for j in 0..2 { s[j] += 0.1 * k[j]; } } s[0] * s[1] }"
);
check!(
    call_recomputed_in_a_loop,
    "",
    "fn f(x: &[f64], c: f64) -> f64 { let mut s = 0.0; for i in 1..x.len() { s += term(x[i - 1], x[i]) * c + window(&x[i - 1..i + 1]); } s }"
);
check!(
    running_sum_by_scan,
    "",
    "fn f(x: &[f64]) -> f64 { x.iter().scan(0.0, |s, &v| { *s += v; Some(*s) }).map(|c| c.sin()).sum() }"
);
check!(
    checkpointed_call,
    "",
    "fn f(x0: f64, k: f64, n: usize) -> f64 { let mut x = x0; for _ in 0..n { x = ad_runtime::checkpoint(step(x, k)); } x }"
);
check!(
    rows_of_points,
    "",
    "fn f(pts: &[[f64; 2]], w: &[f64]) -> f64 { let mut s = 0.0; for p in pts { let r = w[0] * p[0] + w[1] - p[1]; s += r * r; } s + dist(pts[0], pts[1]) }"
);
check!(
    early_tuple_return,
    "",
    "fn f(x: f64, y: f64) -> (f64, f64) { if x < 0.0 { return (y, x * y); } let s = x.sqrt(); (s * y, s + y) }"
);
check!(
    sorted_copy,
    "",
    "fn f(x: &[f64]) -> f64 { let mut v = x.to_vec(); v.sort_by(|a, b| a.partial_cmp(b).unwrap()); v[v.len() / 2] }"
);
check!(
    collect_of_a_chunk_row,
    "",
    "fn f(x: &[f64], n: usize) -> f64 { let mut t = 0.0; for row in x.chunks(n) { let e: Vec<f64> = row.iter().map(|v| v.exp()).collect(); t += e[0] / e.iter().sum::<f64>(); } t }"
);
check!(
    recursive_call,
    "",
    "fn f(x: f64, n: usize) -> f64 { if n == 0 { x } else { f(x, n - 1).sin() * x } }"
);
check!(
    generic_float,
    "",
    "fn f<T: Float>(xs: &[T], w: T) -> T { let mut s = T::ZERO; for i in 0..xs.len() { s += (w * xs[i]).exp() / T::from_i32(i as i32 + 1); } s * T::HALF + T::from_f64(w.to_f64().sin()) * w }"
);
check!(
    parameter_struct,
    "",
    "fn f(p: &Params, x: f64) -> f64 { let mut s = p.scale * x; for i in 0..p.layer.w.len() { s += p.layer.w[i] * x; } s + inner(&p.layer, x) }"
);
check!(
    method_with_self,
    "",
    "fn f(&self, x: f64) -> f64 { self.a * x.sin() + self.v[0] }"
);

/// docs/composition.md shows these expansions: they must be the real ones.
#[test]
fn composition_doc_shows_the_real_expansions() {
    let doc = include_str!("../../docs/composition.md");
    let rule: TokenStream = "softplus_rule".parse().expect("tokens");
    let softplus: TokenStream = "fn softplus(x: f64) -> f64 { x.exp().ln_1p() }"
        .parse()
        .expect("tokens");
    let file: syn::File =
        syn::parse2(crate::custom::custom_vjp(rule, softplus)).expect("the expansion parses");
    let expansions = [
        (
            expanded(
                "",
                "fn f(x: f64, y: f64) -> f64 { let s = square(x) + y.sin(); s * square(y) }",
            ),
            ["fn f_vjp", "fn f_forward"],
        ),
        (
            expanded(
                "",
                "fn iterate(r: f64, x0: f64, n: usize) -> f64 { let mut x = x0; for _ in 0..n { x = logistic(r, x); } x }",
            ),
            ["fn iterate_vjp", "fn iterate_forward"],
        ),
        (
            prettyplease::unparse(&file),
            ["fn softplus_vjp", "fn softplus_forward"],
        ),
    ];
    for (expansion, functions) in &expansions {
        for function in functions {
            let start = expansion.find(function).expect("generated");
            let text = &expansion[start..];
            let text = &text[..text.find("\n}\n").expect("the end") + 2];
            assert!(
                doc.contains(text),
                "update docs/composition.md with `{function}`:\n{text}"
            );
        }
    }
}
// Dead primal work is removed before the reverse pass: `unused` and the loop
// computing `acc` are not in `_vjp`; the element read stays (it can panic).
check!(
    dead_primal_work,
    "",
    "fn f(x: f64, xs: &[f64], n: usize) -> f64 { let unused = x.exp() * 2.0; let also = xs[0] + x; let mut acc = 0.0; for i in 0..n { acc += (x * i as f64).sin(); } let y = x.sin(); y * y }"
);

// Loop fusion (`reverse::fuse_loops`): an adjoint loop whose seed is known
// before its primal loop runs is moved into it. The tape of `exp`'s output
// goes (the pushed value is used directly), `d_out * 0.5` moves before the
// loop, and the adjoint reuses the primal's `x[i] * x[i]`.
check!(
    fused_loop_uses_its_tape_values_directly,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() { let y = (x[i] * x[i]).sin().exp(); s += y * y; } s * 0.5 }"
);
// Sums of scalar adjoints (`d_a`, `d_b`) become values the fused loop carries.
check!(
    fused_loop_carries_scalar_sums,
    "",
    "fn f(x: &[f64], y: &[f64], a: f64, b: f64) -> f64 { let mut s = 0.0; for i in 0..x.len() { let r = a * x[i] + b - y[i]; s += r * r; } s / x.len() as f64 }"
);
// Tapes are made together before the loops (`reverse::make_tapes_early`):
// no call between the two loops to keep `m` out of a register.
check!(
    tapes_made_before_the_loops,
    "",
    "fn f(x: &[f64]) -> f64 { let mut m = x[0]; for i in 1..x.len() { m = m.max(2.0 * x[i]); } let mut s = 0.0; for i in 0..x.len() { s += (x[i] - m).exp(); } m + s.ln() }"
);
// A loop that only takes a running maximum (or minimum) is one runtime call
// (`analysis::running_extrema`), whose pullback needs no tape.
check!(
    running_maximum_is_one_call,
    "",
    "fn f(x: &[f64]) -> f64 { let mut m = x[0]; for i in 1..x.len() { m = m.max(x[i]); } let mut s = 0.0; for i in 0..x.len() { s += (x[i] - m).exp(); } m + s.ln() }"
);
// Buffers read or written at `base + j` are sliced once before the loop
// (`emit::hoist`); the row offset, computed in the body, is written again
// before the loop, behind the guard that the loop runs (`r - 1` would
// underflow at `r = 0`).
check!(
    offset_accesses_are_sliced_before_the_loop,
    "",
    "fn f(l: &[f64], x: &[f64]) -> f64 { let mut s = 0.0; for r in 0..x.len() { let mut z = x[r]; for j in 0..r { z += l[r * (r - 1) / 2 + j] * x[j]; } s += z * z; } s }"
);
// The inner adjoint loop pops nothing and only adds into shadows: it runs
// forwards (`reverse::run_forward`), the outer one, which pops `tanh`'s
// outputs, backwards.
check!(
    independent_adjoint_loop_runs_forwards,
    "",
    "fn f(w: &[f64], x: &[f64], n: usize) -> f64 { let m = x.len(); let mut s = 0.0; for j in 0..n { let mut acc = 0.0; for i in 0..m { acc += w[j * m + i] * x[i]; } s += acc.tanh(); } s.ln() }"
);
// `s +=` in both branches of an `if` passes the seed of `s` through the
// branch unchanged: the adjoint `if` does not yield it, so the adjoint loop
// carries nothing and is fused, as when the `if` is hoisted into a `let`.
check!(
    accumulation_in_both_branches_is_fused,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for &v in x { if v > 0.0 { s += v * v; } else { s += v.sin(); } } s }"
);
// Not fused: the seed of `s` is `d_out / s`, known only after the loop.
check!(
    unfused_when_the_seed_needs_the_loop,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() { s += x[i].exp(); } s.ln() }"
);

/// A function of `n` statements in the shape that crashed rustc's debug
/// info writer (issue 21): reassignments, a `let` every fourth statement,
/// half of them in a branch and the rest in a loop.
fn long_function(n: usize) -> String {
    let statements = |n: usize| {
        (0..n)
            .map(|i| match i % 4 {
                0 => "a = a * 0.999 + (b * 3.0).sin() * 0.001;",
                1 => "b = b + a.tanh() * 0.01;",
                2 => "let t = a * b + 1.0;",
                _ => "a = a + t.ln() * 0.001;",
            })
            .collect::<String>()
    };
    format!(
        "fn f(x: &[f64], a0: f64, b0: f64) -> f64 {{ let mut a = a0; let mut b = b0; \
         if a > b {{ {} }} else {{ b = b * a; }} \
         for i in 0..x.len() {{ a = a + x[i]; {} }} a + b }}",
        statements(n / 2),
        statements(n / 2)
    )
}

/// The most `let`s binding a name in one block of the generated functions
/// in `tokens`: each opens a scope nested in the one before, which rustc's
/// debug info writer walks recursively.
fn most_lets_in_a_block(tokens: TokenStream) -> usize {
    struct Lets(usize);
    impl<'ast> syn::visit::Visit<'ast> for Lets {
        fn visit_block(&mut self, block: &'ast syn::Block) {
            let binding = |pat: &syn::Pat| {
                struct Idents(bool);
                impl<'ast> syn::visit::Visit<'ast> for Idents {
                    fn visit_pat_ident(&mut self, _: &'ast syn::PatIdent) {
                        self.0 = true;
                    }
                }
                let mut idents = Idents(false);
                syn::visit::visit_pat(&mut idents, pat);
                idents.0
            };
            let lets = block
                .stmts
                .iter()
                .filter(|stmt| matches!(stmt, syn::Stmt::Local(local) if binding(&local.pat)))
                .count();
            self.0 = self.0.max(lets);
            syn::visit::visit_block(self, block);
        }
    }
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses");
    let mut lets = Lets(0);
    for item in &file.items {
        if let syn::Item::Fn(func) = item
            && func.sig.ident != "f"
        {
            syn::visit::visit_item_fn(&mut lets, func);
        }
    }
    lets.0
}

#[test]
fn long_functions_declare_their_locals_once_per_block() {
    let expand = |n| {
        let item: TokenStream = long_function(n).parse().expect("tokens");
        expand::differentiate(TokenStream::new(), item)
    };
    // Written as a person writes it: one `let` a value.
    assert!(most_lets_in_a_block(expand(40)) > 10);
    // Declared up front: one `let` a block, and one for the tapes' readers
    // in the split API's pullback.
    assert!(most_lets_in_a_block(expand(2_000)) <= 2);
}

#[test]
fn names_are_raw_exactly_when_syn_would_not_take_them_as_identifiers() {
    // `emit::ident` decides from a list instead of asking syn, which was an
    // eighth of the expansion time of a long function.
    for keyword in crate::emit::KEYWORDS {
        assert!(
            syn::parse_str::<syn::Ident>(keyword).is_err() || keyword == "gen",
            "`{keyword}` is an identifier to syn"
        );
        let ident = crate::emit::ident(keyword, proc_macro2::Span::call_site());
        let expected = match keyword {
            "self" | "Self" | "super" | "crate" => format!("{keyword}_"),
            _ => format!("r#{keyword}"),
        };
        assert_eq!(ident.to_string(), expected);
    }
    for name in [
        "x", "d_x", "t12", "tape_a_1", "r#type", "_unused", "union", "raw", "default",
    ] {
        let plain = name.trim_start_matches("r#");
        let raw_by_syn = syn::parse_str::<syn::Ident>(plain).is_err();
        let ident = crate::emit::ident(plain, proc_macro2::Span::call_site());
        assert_eq!(ident.to_string().starts_with("r#"), raw_by_syn, "{name}");
    }
}

// Iterator chains read like the loops they stand for.
check!(
    chain_zip_map_sum,
    "",
    "fn f(x: &[f64], y: &[f64]) -> f64 { x.iter().zip(y).map(|(a, b)| a * b).sum() }"
);
check!(
    chain_windows,
    "",
    "fn f(x: &[f64]) -> f64 { x.windows(2).map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2)).sum() }"
);
check!(
    chain_fold_max,
    "",
    "fn f(x: &[f64]) -> f64 { x.iter().copied().fold(f64::NEG_INFINITY, f64::max) }"
);
check!(
    chain_shifted_zip_filter,
    "",
    "fn f(x: &[f64]) -> f64 { x.iter().zip(x.iter().skip(1)).filter(|(a, _)| **a > 0.0).map(|(a, b)| a * b).sum() }"
);
check!(
    closure_inlined,
    "",
    "fn f(x: f64, y: f64) -> f64 { let sq = |v: f64| v * v; sq(x) + sq(y) }"
);
check!(
    macros_run_in_the_primal_pass,
    "",
    "fn f(x: &[f64], k: f64) -> f64 { assert!(!x.is_empty(), \"empty\"); let s: f64 = x.iter().sum(); let tail = &x[1..]; if s < 0.0 { panic!(\"negative sum {s} of {tail:?}\"); } println!(\"k = {}\", k); s * k }"
);
check!(
    integer_reductions,
    "",
    "fn f(x: f64, n: usize) -> f64 { let k: usize = (1..=n).product(); let m: usize = (0..n).sum(); x * k as f64 + m as f64 }"
);
check!(
    chain_max_by,
    "",
    "fn f(x: &[f64]) -> f64 { x.iter().copied().max_by(|a, b| a.total_cmp(b)).unwrap() }"
);
check!(
    fresh_vec_in_a_loop,
    "",
    "fn f(u: &[f64], k: f64, steps: usize) -> f64 { let n = u.len(); let mut s = 0.0; for _ in 0..steps { let mut next = vec![0.0; n]; for i in 1..n { next[i] = k * u[i] * u[i - 1]; } s += next.iter().sum::<f64>(); } s }"
);
check!(
    slices_passed_to_calls,
    "",
    "fn f(a: &[f64], x: &[f64]) -> f64 { let n = x.len(); let mut s = 0.0; for i in 0..a.len() / n { s += ad_runtime::dot(&a[i * n..(i + 1) * n], x).tanh(); } s }"
);
// A `while` that counts is the `for` it stands for.
check!(
    counted_while,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; let mut i = 0; while i + 1 < x.len() { s += (1.0 - x[i]).powi(2) + 100.0 * (x[i + 1] - x[i].powi(2)).powi(2); i += 1; } s }"
);
// Independent `let`s in either order give the same adjoint loop.
check!(
    lets_swapped,
    "",
    "fn f(x: &[f64]) -> f64 { let mut s = 0.0; for i in 0..x.len() - 1 { let b = x[i + 1] - x[i] * x[i]; let a = 1.0 - x[i]; s += a * a + 100.0 * b * b; } s }"
);
// A running maximum written `m = x[i].max(m)` is one call too.
check!(
    running_max_operands_swapped,
    "",
    "fn f(x: &[f64]) -> f64 { let mut m = f64::NEG_INFINITY; for &v in x.iter() { m = v.max(m); } m }"
);
// A callee that returns a `Vec`: its pullback lends the shadow as the seed.
check!(
    call_returning_a_vec,
    "",
    "fn f(y: &[f64], k: f64) -> f64 { let v = rhs(y, k); v[0] * v[1] }"
);
check!(
    inclusive_stepped_range,
    "",
    "fn f(x: &[f64], n: usize) -> f64 { let mut s = 0.0; for i in (1..=n).step_by(2) { s = s * x[i - 1].sin() + x[i]; } s }"
);

/// The primal IR and the `_jvp` IR.
fn jvp_ir(args: &str, item: &str) -> String {
    let args: TokenStream = args.parse().expect("args tokens");
    let item: syn::ItemFn = syn::parse_str(item).expect("a fn item");
    let lanes = args.to_string().contains("jvp_lanes");
    let Ok((_, jvp)) = expand::forward_mode(args, &item, None, lanes) else {
        panic!("fixture has errors")
    };
    jvp.to_text()
}

/// Snapshots the `_jvp` IR and the expansion of one forward-mode fixture.
macro_rules! check_jvp {
    ($name:ident, $args:literal, $item:literal) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(
                concat!(stringify!($name), "_ir"),
                jvp_ir($args, $item),
                $item
            );
            insta::assert_snapshot!(
                concat!(stringify!($name), "_expanded"),
                expanded($args, $item),
                $item
            );
        }
    };
}

/// `nested`: the twins of `_vjp` and `_jvp` that callers differentiated in
/// forward mode (`f_vjp_jvp_all`, `f_jvp_jvp_all`) and in reverse mode
/// (`f_vjp_forward_all`, `f_jvp_forward_all`) call.
#[test]
fn nested_twins() {
    let item = "fn f(x: f64, y: f64) -> f64 { x * x * y + (x * y).sin() }";
    insta::assert_snapshot!(
        "nested_twins_expanded",
        expanded("vjp, jvp, nested", item),
        item
    );
}

check_jvp!(
    jvp_lanes_scalars,
    "jvp_lanes",
    "fn f(x: f64, y: f32) -> f64 { let r = x.atan2(y as f64) / x; r.powi(3) + x.max(2.0) * (x * x).sin() - (y.exp() as f64) }"
);
check_jvp!(
    jvp_lanes_buffers_loops_calls,
    "jvp_lanes",
    "fn f<T: Float>(xs: &[T], ys: &mut [T], w: T) -> Vec<T> { let mut v = vec![T::ZERO; xs.len()]; let mut acc = T::ZERO; for i in 0..xs.len() { if xs[i] > w { acc += xs[i] * w; } else { acc = g(acc); } v[i] = acc.exp(); ys[i] = ad_runtime::dot(xs, ys) / w; } let [a, b] = pair(w); v[0] = a * b; v }"
);
check_jvp!(
    jvp_readme_example,
    "jvp",
    "fn f(x: f64, y: f64) -> f64 { let s = x * y; s.sin() + s * x }"
);
check_jvp!(
    jvp_binary_primitive_and_division,
    "jvp, wrt(x)",
    "fn f(x: f64, y: f64) -> f64 { let r = x.atan2(y) / x; r.powi(3) + x.max(y) }"
);
check_jvp!(
    jvp_loop_and_branch,
    "jvp",
    "fn f(xs: &[f64], c: f64) -> f64 { let mut s = 0.0; for i in 0..xs.len() { if xs[i] > c { s += xs[i] * c; } else { s -= c; } } s }"
);
check_jvp!(
    jvp_while_loop,
    "jvp",
    "fn f(x: f64) -> f64 { let mut y = x; let mut n = 0; while y < 10.0 { y = y * 1.5 + x; n += 1; } y * n as f64 }"
);
check_jvp!(
    jvp_buffers,
    "jvp",
    "fn f(xs: &[f64], ys: &mut [f64], w: f64) -> Vec<f64> { let mut v = vec![0.0; xs.len()]; for i in 0..xs.len() { v[i] = xs[i] * w; ys[i] = v[i].exp(); } v }"
);
check_jvp!(
    jvp_runtime_primitives,
    "vjp, jvp",
    "fn f(a: &[f64], x: &[f64], m: usize, n: usize) -> f64 { let mut y = vec![0.0; m]; ad_runtime::matvec(a, x, &mut y, m, n); let mut p = vec![0.0; m]; ad_runtime::softmax(&y, &mut p); ad_runtime::dot(&p, &y) + ad_runtime::norm2(x) + ad_runtime::logsumexp(&y) }"
);
check_jvp!(
    jvp_calls_and_tuples,
    "jvp",
    "fn f(x: f64, xs: &[f64]) -> (f64, f64) { let (r, t) = polar(x, 2.0); let s = g(xs, r); (s * t, x) }"
);

/// The `_hvp` IR.
fn hvp_ir(args: &str, item: &str) -> String {
    let args: TokenStream = args.parse().expect("args tokens");
    let item: syn::ItemFn = syn::parse_str(item).expect("a fn item");
    let Ok((_, hvp, _)) = expand::second_order(args, &item, None) else {
        panic!("fixture has errors")
    };
    hvp.to_text()
}

/// Snapshots the `_hvp` IR and the expansion of one second-order fixture.
macro_rules! check_hvp {
    ($name:ident, $args:literal, $item:literal) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(
                concat!(stringify!($name), "_ir"),
                hvp_ir($args, $item),
                $item
            );
            insta::assert_snapshot!(
                concat!(stringify!($name), "_expanded"),
                expanded($args, $item),
                $item
            );
        }
    };
}

check_hvp!(
    hvp_readme_example,
    "hvp",
    "fn f(x: f64, y: f64) -> f64 { let s = x * y; s.sin() + s * x }"
);
check_hvp!(
    hvp_calls_in_a_loop,
    "hvp",
    "fn f(x: f64, y: f64, n: usize) -> f64 { let mut s = x; for _ in 0..n { s = g(s, y) * 0.5 + y; } g(s, x) + s * y }"
);
check_hvp!(
    hvp_loop_with_a_tape,
    "hvp",
    "fn f(xs: &[f64], c: f64) -> f64 { let mut p = c; for i in 0..xs.len() { p = (p * xs[i]).tanh(); } p }"
);

// A checkpointed loop: no pushes in the primal loop, the schedule's steps
// in the adjoint, and the buffer parameter given back its final contents.
check!(
    checkpointed_loop,
    "",
    "fn f(u: &mut [f64], c: f64, n: usize) -> f64 { let mut s = c; #[checkpoint(snapshots = 8)] for t in 0..n { u[t % 4] = (u[t % 4] * s).sin(); s = s * u[t % 4]; } s }"
);

// A checkpointed `while`: the online schedule, the count as the index.
check!(
    checkpointed_while,
    "",
    "fn f(x: f64, tol: f64) -> f64 { let mut y = x; #[checkpoint(snapshots = 4)] while y.abs() > tol { y = y.sin() * 0.9; } y }"
);

/// `print` shows the generated functions, formatted, as a deprecation note
/// rustc prints, and changes nothing else.
#[test]
fn print_shows_the_generated_functions() {
    let item = "fn f(x: f64, y: f64) -> f64 { let s = x * y; s.sin() + s * x }";
    let printed = expanded("vjp, jvp, print", item);
    let plain = expanded("vjp, jvp", item);
    let note_start = printed.find("#[deprecated(").expect("a deprecation note");
    let note = &printed[note_start..];
    let holder = printed
        .find("#[doc(hidden)]\n#[allow(dead_code, non_snake_case)]\nfn __ad_print_f()")
        .expect("the note's holder");
    for shown in [
        "fn f_vjp(x: f64, y: f64, d_out: f64)",
        "fn f_jvp(",
        "let d_s =",
    ] {
        assert!(note.contains(shown), "the note shows `{shown}`:\n{note}");
    }
    assert!(!note.contains("unused_variables"), "the lints are left out");
    // Everything before the note is the expansion without `print`.
    assert_eq!(printed[..holder].trim_end(), plain.trim_end());
}

// Constants as Rust scopes them: a block `const` declared again in the
// generated function, a table outside it read in place, a named constant as
// a `match` pattern, and functions of integers run as written.
check!(
    constants_tables_and_integer_calls,
    "",
    "fn f(x: &[f64], k: usize) -> f64 {
        const K: f64 = 3.0;
        let mut s = 0.0;
        for i in 0..GW.len() {
            s += GW[i] * x[flat(i, k)] * K;
        }
        match k {
            LIMIT => s,
            _ => s * x[std::cmp::min(k, x.len() - 1)],
        }
    }"
);

/// `#[cfg]` in the body: the generated functions once per combination of
/// the conditions, each under its `#[cfg(all(…))]`; the function once.
#[test]
fn cfg_in_the_body() {
    insta::assert_snapshot!(expanded(
        "",
        "fn f(x: f64) -> f64 {
            let mut y = x;
            #[cfg(feature = \"square\")]
            {
                y = y * y;
            }
            y.sin()
        }"
    ));
}

// A returned buffer chosen by a `return` guard: a `Vec` filled in the
// branch taken.
check!(
    returned_buffer_chosen_by_a_guard,
    "",
    "fn f(x: &[f64]) -> Vec<f64> {
        if x.is_empty() {
            return vec![];
        }
        x.iter().map(|v| v * v).collect()
    }"
);

// A parameter of the user's own type by value: constant data, each arm
// tested as written with `matches!`, the comparison with `==` as written.
check!(
    match_on_an_enum_parameter,
    "",
    "fn f(x: f64, kind: Act, loss: Loss) -> f64 {
        let h = match kind {
            Act::Relu => x.max(0.0),
            Act::Leaky(_) | Act::Elu => x.max(0.01 * x),
            _ => x.tanh(),
        };
        if loss == Loss::L2 { h * h } else { h.abs() }
    }"
);

// `x.get(i)` out of its `Option`, and `let (a, b) = match …`: the element
// behind the test `get` makes, and one hidden local per number that each
// arm assigns.
check!(
    get_and_a_match_of_tuples,
    "",
    "fn f(x: &[f64], i: usize, k: u8) -> f64 {
        let next = x.get(i + 1).map_or(0.0, |v| v * v);
        let (a, b) = match k {
            0 => (next, 1.0),
            _ => (x[i], 2.0),
        };
        a * b
    }"
);

// `std::array::from_fn`: a local array written by the loop it stands for.
check!(
    array_from_fn,
    "",
    "fn f(a: [f64; 3], b: &[f64]) -> f64 {
        let d: [f64; 3] = std::array::from_fn(|i| a[i] - b[i]);
        d[0] * d[1] + d[2]
    }"
);

// Constant tables outside the function: a tuple element taken apart and a
// row's element read as written, integer data passed to a plain function,
// and an ordering kept in a variable.
check!(
    tables_and_orderings,
    "",
    "fn f(x: &[f64], idx: &[usize]) -> f64 {
        let mut e = 0.0;
        for &(i, j) in EDGES.iter() {
            let d = x[i] - x[j];
            e += STENCIL[i][j] * d * d;
        }
        let o = x[0].total_cmp(&x[count_above(idx)]);
        if o.is_lt() { e * x[1] } else { e }
    }"
);

// A call returning an array nested in a call of the same function: the
// inner output is passed on by value.
check!(
    nested_array_calls,
    "",
    "fn f(q: [f64; 2], v: [f64; 2]) -> f64 {
        let r = cmul(cmul(q, v), q);
        r[0] * r[1]
    }"
);
check!(
    find_first_passing,
    "",
    "fn f(x: &[f64], t: f64) -> f64 {
        if let Some(&v) = x.iter().find(|&&v| v > t) { v * v } else { x[0] }
    }"
);
check!(
    table_of_variants,
    "",
    "fn f(x: &[f64]) -> f64 {
        let kinds = [Act::Relu, Act::Tanh];
        let mut s = 0.0;
        for (i, &v) in x.iter().enumerate() {
            s += match kinds[i % 2] { Act::Relu => v.max(0.0), Act::Tanh => v.tanh() };
        }
        s
    }"
);
check!(
    call_of_constants,
    "",
    "fn f(x: f64) -> f64 { x * scale_of(1.5) + square(x) }"
);
check!(
    collected_tuples,
    "",
    "fn f(x: &[f64]) -> f64 {
        let pts: Vec<(f64, f64)> = x.chunks(2).map(|c| (c[0], c[1])).collect();
        pts.iter().map(|&(a, b)| a * b).sum()
    }"
);
check!(
    chained_buffers,
    "",
    "fn f(x: &[f64], y: &[f64]) -> f64 {
        x.iter().chain(&y[1..]).map(|v| v * v).sum()
    }"
);
check!(
    let_else_first,
    "",
    "fn f(x: &[f64]) -> f64 {
        let Some(&first) = x.first() else { return 0.0; };
        first * x[1]
    }"
);
check!(
    slice_pattern_match,
    "",
    "fn f(x: &[f64]) -> f64 {
        match x {
            [] => 0.0,
            [a] => a * a,
            [a, rest @ .., z] => a * z + rest.len() as f64,
        }
    }"
);
check!(
    nested_fn_inlined,
    "",
    "fn f(x: &[f64]) -> f64 {
        fn leaky(v: f64) -> f64 {
            if v < 0.0 {
                return 0.01 * v;
            }
            v
        }
        x.iter().map(|&v| leaky(v) * v).sum()
    }"
);
check!(
    last_element_written,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut v = x.to_vec();
        *v.last_mut().unwrap() *= 2.0;
        v.iter().sum()
    }"
);
check!(
    option_local,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut prev = None;
        let mut s = 0.0;
        for &v in x {
            if let Some(p) = prev {
                s += (v - p) * (v - p);
            }
            prev = Some(v);
        }
        s
    }"
);
check!(
    option_match_arms,
    "",
    "fn f(x: &[f64]) -> f64 {
        let top = x.iter().copied().reduce(f64::max);
        match top {
            Some(m) if m > 1.0 => m.ln(),
            Some(m) => m,
            None => 0.0,
        }
    }"
);
check!(
    tuple_match,
    "",
    "fn f(x: &[f64], k: usize) -> f64 {
        match (k % 3, x[0] > 0.0) {
            (0, true) => x[0] * x[1],
            (1, _) | (_, false) => x[1].sin(),
            (n, _) => x[2] * n as f64,
        }
    }"
);
check!(
    option_mapped,
    "",
    "fn f(x: &[f64]) -> f64 {
        let hit = x.iter().position(|&v| v > 1.0).map(|i| x[i] * 2.0);
        hit.unwrap_or(0.0)
    }"
);
check!(
    helper_call_fused,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 1..x.len() {
            s += term(x[i - 1], x[i]);
        }
        s
    }"
);
check!(
    matrix_by_value,
    "",
    "fn f(m: [[f64; 2]; 2], v: &[f64]) -> f64 {
        let mut w = m;
        w[0][0] += v[0];
        w[0][0] * m[1][1] + w[0][1] * v[1]
    }"
);
check!(
    array_of_a_slice,
    "",
    "fn f(x: &[f64]) -> f64 {
        let [a, b, c]: [f64; 3] = x[..3].try_into().unwrap();
        a * b - c
    }"
);
check!(
    tuple_parameter,
    "vjp, jvp",
    "fn step((p, v): (f64, f64), dt: f64) -> (f64, f64) {
        (p + dt * v, v - dt * p.sin())
    }"
);
check!(
    tuple_passed,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut s = (x[0], x[1]);
        for _ in 0..10 {
            s = step(s, 0.1);
        }
        s.0 * s.1
    }"
);
check!(
    matrix_collected,
    "",
    "fn f(x: &[f64]) -> f64 {
        let n = x.len();
        let k: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| (x[i] - x[j]).powi(2)).collect()).collect();
        k.iter().map(|row| row.iter().sum::<f64>()).sum()
    }"
);
check!(
    buffer_shrunk_in_a_loop,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut pts = x.to_vec();
        while pts.len() > 1 {
            pts = pts.windows(2).map(|w| 0.7 * w[0] + 0.3 * w[1]).collect();
        }
        pts[0]
    }"
);
check!(
    stack_popped,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut stack = x.to_vec();
        let mut s = 0.0;
        while let Some(top) = stack.pop() {
            s = 0.5 * s + top;
        }
        s
    }"
);
check!(
    slices_concatenated,
    "",
    "fn f(x: &[f64]) -> f64 {
        let v = [&x[..2], &x[3..]].concat();
        v.iter().map(|a| a * a).sum()
    }"
);
check!(
    stencil_carried,
    "",
    "fn f(u: &[f64]) -> f64 {
        let n = u.len();
        let mut next = u.to_vec();
        for i in 1..n - 1 {
            next[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        }
        next.iter().map(|v| v * v).sum()
    }"
);
check!(
    window_written_shifted,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut cur = x.to_vec();
        for _ in 0..2 {
            let mut next = cur.clone();
            for (i, w) in cur.windows(3).enumerate() {
                next[i + 1] = w[1] + 0.25 * (w[0] - 2.0 * w[1] + w[2]);
            }
            cur = next;
        }
        cur.iter().map(|v| v * v).sum()
    }"
);
check!(
    views_collected,
    "",
    "fn f(x: &[f64]) -> f64 {
        let rows: Vec<&[f64]> = x.chunks(2).collect();
        let mut s = 0.0;
        for i in 0..rows.len() {
            s += rows[i].iter().sum::<f64>() * rows[0][0];
        }
        s
    }"
);
check!(
    settings_by_value,
    "",
    "fn f(x: &[f64], cfg: Settings) -> f64 {
        let mut s = 0.0;
        for i in 0..cfg.terms {
            s += cfg.scale * x[i] * x[i];
        }
        if cfg.flip { -s } else { s }
    }"
);
check!(
    variant_data_bound,
    "",
    "fn f(x: f64, act: Act) -> f64 {
        match act {
            Act::Leaky(slope) => if x > 0.0 { x } else { slope * x },
            Act::Pow { k, .. } => x.powi(k),
            _ => x,
        }
    }"
);
check!(
    struct_fields,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut s = State { x: x[0], v: x[1] };
        for _ in 0..3 {
            s = State { x: s.x + 0.1 * s.v, v: s.v - 0.1 * s.x };
        }
        s.x * s.v
    }"
);
check!(
    tuple_struct_fields,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut c = Pt(0.0, 0.0);
        for i in 0..x.len() / 2 {
            c.0 += x[2 * i];
            c.1 += x[2 * i + 1];
        }
        c = Pt(c.0 * c.1, c.1);
        c.0 - c.1
    }"
);
check!(
    rows_swapped,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut m = [[x[0], x[1]], [x[2], x[3]]];
        if m[1][0].abs() > m[0][0].abs() {
            m.swap(0, 1);
        }
        m[0][0] * m[1][1]
    }"
);
check!(
    chosen_in_loop,
    "",
    "fn f(x: &[f64]) -> f64 {
        let a = x.to_vec();
        let mut s = 0.0;
        for k in 0..4 {
            let w = if k % 2 == 0 { &a } else { &x[1..] };
            s += w[0] * w[1];
        }
        s
    }"
);
check!(
    rotated,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut y = x.to_vec();
        y.rotate_left(2);
        y.iter().enumerate().map(|(i, v)| v * i as f64).sum()
    }"
);
check!(
    array_literal_iterated,
    "",
    "fn f(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for v in [x[0], 2.0 * x[1]] {
            s += v * v;
        }
        s + [x[0] - x[1], x[1]].iter().map(|d| d * d).sum::<f64>().sqrt()
    }"
);
