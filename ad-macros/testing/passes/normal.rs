//! Normal forms made while lowering (docs/architecture.md, "Normal forms"):
//! equivalent spellings lower to the same IR, so every later pass sees one.

use crate::testing::stages_of;

/// The primal IR of a function of `x: f64, y: f64, z: f64` returning `body`.
fn primal(body: &str) -> String {
    let src = format!("fn f(x: f64, y: f64, z: f64) -> f64 {{ {body} }}");
    stages_of(&src).primal.to_text()
}

#[test]
fn a_negated_term_is_a_subtraction() {
    let normal = primal("x - y * z");
    for spelling in ["-(y * z) + x", "x + -(y * z)", "x + (-(y * z))"] {
        assert_eq!(primal(spelling), normal, "{spelling}");
    }
    let normal = primal("x + y * z");
    assert_eq!(primal("x - -(y * z)"), normal);
    // Two negations go: `-p - -x` is `x - p`.
    assert_eq!(primal("-(y * z) - -x"), primal("x - y * z"));
}

#[test]
fn a_square_is_a_product() {
    assert_eq!(
        primal("let s = x + y; s.powi(2)"),
        primal("let s = x + y; s * s")
    );
    // Not `powf(2.0)`: libm's `pow` may differ from `x * x` in the last bit.
    assert_ne!(
        primal("let s = x + y; s.powf(2.0)"),
        primal("let s = x + y; s * s")
    );
}
