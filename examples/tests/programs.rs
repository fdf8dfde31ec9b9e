//! The example programs written as users write them (a logistic regression
//! trained by Adam over a parameter struct, a projectile fitted by
//! Gauss–Newton through the split API, a SiLU network with `matmul` and a
//! custom rule, one generic model in `f32` and `f64`), each run whole: each
//! checks its gradient against finite differences and asserts that its
//! training lowered the loss, so a failure of either fails here.

#[path = "../examples/logistic.rs"]
#[allow(unreachable_pub)]
mod logistic;

#[path = "../examples/projectile.rs"]
#[allow(unreachable_pub)]
mod projectile;

#[path = "../examples/silu_mlp.rs"]
#[allow(unreachable_pub)]
mod silu_mlp;

#[path = "../examples/generic.rs"]
#[allow(unreachable_pub)]
mod generic;

#[test]
fn logistic_regression_with_adam_over_a_parameter_struct() {
    logistic::main();
}

#[test]
fn projectile_fitted_by_gauss_newton_through_the_split_api() {
    projectile::main();
}

#[test]
fn silu_network_with_matmul_and_a_custom_rule() {
    silu_mlp::main();
}

#[test]
fn one_generic_model_in_f32_and_f64() {
    generic::main();
}
