//! The `det` eval: the determinant by expansion in minors, and its gradient.
//!
//! The input is `{A: double[], ell: int}` plus `Runs`, `A` an `ell × ell`
//! matrix row after row; `primal` returns `det A`, `gradient` its gradient
//! with respect to `A`, `ell · ell` numbers in the same order (the cofactor
//! matrix). The determinant is expanded along the first row, recursively,
//! as the eval's reference does (cmpad's `det_of_minor`): `ell!` products,
//! which is the point of the benchmark.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::{Evaluation, parse, timed, unknown_function};

/// The determinant of the minor of the `n × n` matrix `a` (row-major) made
/// of rows `row..n` and of the columns in the bit set `cols`, expanded along
/// its first row: `Σⱼ ± a[row][j] · det(minor without row and column j)`,
/// the signs alternating over the columns left.
#[differentiate(wrt(a))]
pub fn det_of_minor(a: &[f64], n: usize, row: usize, cols: u64) -> f64 {
    if row + 1 == n {
        let last = cols.trailing_zeros() as usize;
        return a[row * n + last];
    }
    let mut det = 0.0;
    let mut positive = true;
    for j in 0..n {
        if cols & (1 << j) != 0 {
            let term = a[row * n + j] * det_of_minor(a, n, row + 1, cols & !(1 << j));
            det = if positive { det + term } else { det - term };
            positive = !positive;
        }
    }
    det
}

/// `det A` for an `ell × ell` matrix, `1 ≤ ell ≤ 63`.
#[must_use]
pub fn primal(a: &[f64], ell: usize) -> f64 {
    det_of_minor(a, ell, 0, all_columns(ell))
}

/// The gradient of [`primal`], from the `_vjp` of [`det_of_minor`].
#[must_use]
pub fn gradient(a: &[f64], ell: usize) -> Vec<f64> {
    let mut d_a = vec![0.0; a.len()];
    det_of_minor_vjp(a, &mut d_a, ell, 0, all_columns(ell), 1.0);
    d_a
}

/// The bit set of the columns `0..ell`.
fn all_columns(ell: usize) -> u64 {
    (1 << ell) - 1
}

/// The input of both functions.
#[derive(Deserialize)]
struct Input {
    #[serde(rename = "A")]
    a: Vec<f64>,
    ell: usize,
}

/// Answers an `evaluate` message of module `det`.
///
/// # Errors
///
/// If the input does not have the eval's format (`A` not `ell · ell`
/// numbers, `ell` not in `1..=63`), or the function is not `primal` or
/// `gradient`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { a, ell } = parse(input)?;
    if !(1..=63).contains(&ell) {
        return Err(format!("`ell` must be between 1 and 63, not {ell}"));
    }
    if a.len() != ell * ell {
        return Err(format!(
            "`A` has {} numbers, expected ell² = {}",
            a.len(),
            ell * ell
        ));
    }
    match function {
        "primal" => timed(input, || primal(&a, ell)),
        "gradient" => timed(input, || gradient(&a, ell)),
        _ => Err(unknown_function("det", function)),
    }
}
