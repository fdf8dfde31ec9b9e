//! What users see: every unsupported construct is a compile error at its own
//! span (`compile-fail/`), and supported code compiles, passes `deny(warnings)`
//! and computes the right gradient (`pass/`, whose `main` asserts).
//!
//! After changing a message: `TRYBUILD=overwrite cargo test -p ad-ui-tests`,
//! then review every changed `.stderr` (span and wording), never hand-edit one.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/compile-fail/*/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
