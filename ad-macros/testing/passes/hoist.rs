//! Tests of a pass, through the pipeline: buffers sliced before loops (`emit/hoist.rs`).

use crate::emit::Plan;
use crate::testing::stages_of;

/// The slices `_vjp` of `src` makes, as `(buffer, mutable)` in loop
/// order: the primal loop's, then the adjoint loop's.
fn slices(src: &str) -> Vec<(String, bool)> {
    let stages = stages_of(src);
    let func = &stages.vjp;
    let plan = Plan::new(func, &func.places());
    let mut out = Vec::new();
    func.walk(&mut |_, value| {
        for slice in plan.loops.get(&value).into_iter().flatten() {
            let name = func.name(slice.buf).unwrap_or("?").to_owned();
            out.push((name, slice.mutable));
        }
    });
    out
}

fn named(slices: &[(&str, bool)]) -> Vec<(String, bool)> {
    slices
        .iter()
        .map(|&(name, mutable)| (name.to_owned(), mutable))
        .collect()
}

fn f(body: &str) -> String {
    format!("fn f(x: &[f64], y: &mut [f64], o: usize, n: usize) {{ {body} }}")
}

#[test]
fn offset_reads_and_writes_are_sliced() {
    assert_eq!(
        slices(&f("for i in 0..n { y[o + i] += 2.0 * x[i + o]; }")),
        named(&[("x", false), ("y", true), ("d_y", false), ("d_x", true)])
    );
}

#[test]
fn a_written_buffer_needs_every_use_through_its_slice() {
    // `y[i]` has no offset: `y` and `d_y` keep their checks, `x` and
    // `d_x` are still sliced.
    assert_eq!(
        slices(&f("for i in 0..n { y[o + i] += x[o + i] * y[i]; }")),
        named(&[("x", false), ("x", false), ("d_x", true)])
    );
    // Two offsets for one written buffer: `y` is not sliced; its shadow,
    // only read in the adjoint loop, is, at the first offset.
    assert_eq!(
        slices(&f("for i in 0..n { y[o + i] += x[i]; y[1 + i] += x[i]; }")),
        named(&[("d_y", false)])
    );
    // A read-only buffer at two offsets: the first offset's reads.
    assert_eq!(
        slices(&f("for i in 0..n { y[i] += x[o + i] * x[1 + i]; }")),
        [("x".to_owned(), false)]
    );
}

#[test]
fn only_plain_ranges_that_run_are_sliced() {
    for body in [
        "for i in (0..n).step_by(2) { y[i] += x[o + i]; }",
        "for i in 0..=n { y[i] += x[o + i]; }",
        "for i in 3..3 { y[i] += x[o + i]; }",
        // In a branch: not every iteration reads it.
        "for i in 0..n { if i > 2 { y[i] += x[o + i]; } }",
        // The offset changes in the loop.
        "let mut k = 0; for i in 0..n { y[i] += x[k + i]; k += 1; }",
    ] {
        assert_eq!(slices(&f(body)), [], "{body}");
    }
    assert_eq!(
        slices(&f("for i in (1..n).rev() { y[i] += x[o + i]; }")),
        named(&[("x", false), ("d_x", true)])
    );
}
