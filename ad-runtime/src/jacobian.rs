//! Dense Jacobians and Hessians from the generated functions.
//!
//! The generated functions have signatures of their own, so each helper takes
//! a closure over flat slices that calls one: a vector-Jacobian product
//! (`_vjp` with a seed), a Jacobian-vector product (`_jvp` with a tangent),
//! or a Hessian-vector product (`_hvp` with a direction). Results are plain
//! `Vec<T>` in row-major order: the Jacobian of `f: Rⁿ → Rᵐ` is `m × n`,
//! entry `(i, j)` at `i * n + j` being `∂fᵢ/∂xⱼ`; the Hessian is `n × n`.
//!
//! ```
//! use ad_runtime::{differentiate, jacobian};
//!
//! // f(a, b) = (a·b, a + sin b): a map from R² to R².
//! #[differentiate(vjp, jvp)]
//! fn f(a: f64, b: f64) -> (f64, f64) {
//!     (a * b, a + b.sin())
//! }
//!
//! let (a, b) = (0.5, 2.0);
//! // By columns: one `_jvp` per input.
//! let by_columns = jacobian::forward(2, 2, |u, column| {
//!     let (_, (t0, t1)) = f_jvp(a, u[0], b, u[1]);
//!     column.copy_from_slice(&[t0, t1]);
//! });
//! // By rows: one `_vjp` per output.
//! let by_rows = jacobian::reverse(2, 2, |seed, row| {
//!     let (_, d_a, d_b) = f_vjp(a, b, (seed[0], seed[1]));
//!     row.copy_from_slice(&[d_a, d_b]);
//! });
//! assert_eq!(by_columns, vec![b, a, 1.0, b.cos()]);
//! assert_eq!(by_rows, by_columns);
//! ```

use crate::{Float, Lanes};

/// The `m × n` Jacobian by forward mode: `jvp(u, column)` writes `J·u` (the
/// `m` output tangents) for the `n` input tangents `u`; called once per input
/// with `u` a basis vector, and `column` zeroed before each call. The
/// cheaper side when `n ≤ m`.
///
/// # Panics
///
/// If `m * n` overflows `usize`.
pub fn forward<T: Float>(m: usize, n: usize, mut jvp: impl FnMut(&[T], &mut [T])) -> Vec<T> {
    let mut jacobian = vec![T::ZERO; m.checked_mul(n).expect("m × n fits in usize")];
    let mut u = vec![T::ZERO; n];
    let mut column = vec![T::ZERO; m];
    for j in 0..n {
        u[j] = T::ONE;
        column.fill(T::ZERO);
        jvp(&u, &mut column);
        u[j] = T::ZERO;
        for (i, &entry) in column.iter().enumerate() {
            jacobian[i * n + j] = entry;
        }
    }
    jacobian
}

/// The `m × n` Jacobian by vector forward mode, `K` columns per call:
/// `jvp(u, columns)` writes the `m` output tangents for the `n` input
/// tangents `u`, each a [`Lanes`] of `K` directions (a `_jvp_lanes` does
/// that); called `⌈n / K⌉` times, lane `l` of `u` the basis vector of input
/// `j₀ + l` for a block of inputs starting at `j₀` (the lanes past the
/// last input are zero), and `columns` zeroed before each call. The primal
/// runs once per call instead of once per input.
///
/// ```
/// use ad_runtime::{Lanes, differentiate, jacobian};
///
/// #[differentiate(jvp_lanes)]
/// fn f(x: &[f64]) -> Vec<f64> {
///     vec![x[0] * x[1], x[1] + x[2].sin(), x[2] * x[0]]
/// }
///
/// let x = [0.5, 2.0, 1.0];
/// // Three inputs, two lanes: two calls.
/// let j = jacobian::forward_lanes::<f64, 2>(3, 3, |u, columns| {
///     let (_, t) = f_jvp_lanes(&x, u);
///     columns.copy_from_slice(&t);
/// });
/// assert_eq!(j, vec![2.0, 0.5, 0.0, 0.0, 1.0, 1.0_f64.cos(), 1.0, 0.0, 0.5]);
/// ```
///
/// # Panics
///
/// If `m * n` overflows `usize`, or `K` is 0.
pub fn forward_lanes<T: Float, const K: usize>(
    m: usize,
    n: usize,
    mut jvp: impl FnMut(&[Lanes<T, K>], &mut [Lanes<T, K>]),
) -> Vec<T> {
    assert!(K > 0, "jacobian::forward_lanes needs at least one lane");
    let mut jacobian = vec![T::ZERO; m.checked_mul(n).expect("m × n fits in usize")];
    let mut u = vec![Lanes::ZERO; n];
    let mut columns = vec![Lanes::ZERO; m];
    for start in (0..n).step_by(K) {
        let block = start..n.min(start + K);
        for (lane, j) in block.clone().enumerate() {
            u[j] = Lanes::basis(lane);
        }
        columns.fill(Lanes::ZERO);
        jvp(&u, &mut columns);
        for j in block.clone() {
            u[j] = Lanes::ZERO;
        }
        for (i, column) in columns.iter().enumerate() {
            for (lane, j) in block.clone().enumerate() {
                jacobian[i * n + j] = column[lane];
            }
        }
    }
    jacobian
}

/// The `m × n` Jacobian by reverse mode: `vjp(seed, row)` writes `Jᵀ·seed`
/// (the `n` input adjoints) for the `m` output seeds; called once per output
/// with `seed` a basis vector. `row` is zeroed before each call, so a `_vjp`
/// that adds into shadows can be given it directly. The cheaper side when
/// `m < n`.
///
/// # Panics
///
/// If `m * n` overflows `usize`.
pub fn reverse<T: Float>(m: usize, n: usize, mut vjp: impl FnMut(&[T], &mut [T])) -> Vec<T> {
    let mut jacobian = vec![T::ZERO; m.checked_mul(n).expect("m × n fits in usize")];
    let mut seed = vec![T::ZERO; m];
    for (i, row) in jacobian.chunks_exact_mut(n.max(1)).take(m).enumerate() {
        seed[i] = T::ONE;
        vjp(&seed, &mut row[..n]);
        seed[i] = T::ZERO;
    }
    jacobian
}

/// The Jacobian by whichever mode needs fewer calls for its shape: forward
/// (one call per input) when `n ≤ m`, reverse (one call per output)
/// otherwise. Both closures are as for [`forward`] and [`reverse`].
pub fn jacobian<T: Float>(
    m: usize,
    n: usize,
    jvp: impl FnMut(&[T], &mut [T]),
    vjp: impl FnMut(&[T], &mut [T]),
) -> Vec<T> {
    if n <= m {
        forward(m, n, jvp)
    } else {
        reverse(m, n, vjp)
    }
}

/// The dense `n × n` Hessian of a scalar function from its Hessian-vector
/// products: `hvp(v, hv)` writes `H·v`; called once per input with `v` a
/// basis vector (column `j` of `H` is `H·eⱼ`). `hv` is zeroed before each
/// call, so an `_hvp` that adds into its `hv_…` buffers can be given it.
///
/// ```
/// use ad_runtime::{differentiate, jacobian};
///
/// #[differentiate(hvp)]
/// fn f(x: &[f64]) -> f64 {
///     x[0] * x[0] * x[1] + x[1].sin()
/// }
///
/// let x = [0.5, 2.0];
/// let hessian = jacobian::hessian(2, |v, hv| {
///     let mut d = [0.0; 2];
///     f_hvp(&x, v, &mut d, hv);
/// });
/// assert_eq!(hessian, vec![2.0 * x[1], 2.0 * x[0], 2.0 * x[0], -x[1].sin()]);
/// ```
///
/// # Panics
///
/// If `n * n` overflows `usize`.
pub fn hessian<T: Float>(n: usize, hvp: impl FnMut(&[T], &mut [T])) -> Vec<T> {
    // The Hessian is the Jacobian of the gradient, by columns.
    forward(n, n, hvp)
}

/// The diagonal of the Hessian, `Hⱼⱼ` for each input, from Hessian-vector
/// products as for [`hessian`] (`n` calls; entry `j` of `H·eⱼ`).
pub fn hessian_diagonal<T: Float>(n: usize, mut hvp: impl FnMut(&[T], &mut [T])) -> Vec<T> {
    let mut v = vec![T::ZERO; n];
    let mut column = vec![T::ZERO; n];
    (0..n)
        .map(|j| {
            v[j] = T::ONE;
            column.fill(T::ZERO);
            hvp(&v, &mut column);
            v[j] = T::ZERO;
            column[j]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// A linear map with a known matrix, through both modes.
    #[test]
    fn both_modes_give_the_matrix_of_a_linear_map() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 3 × 2
        let jvp = |u: &[f64], out: &mut [f64]| {
            for i in 0..3 {
                out[i] = a[i * 2] * u[0] + a[i * 2 + 1] * u[1];
            }
        };
        let vjp = |s: &[f64], out: &mut [f64]| {
            for j in 0..2 {
                out[j] = (0..3).map(|i| a[i * 2 + j] * s[i]).sum();
            }
        };
        assert_eq!(super::forward(3, 2, jvp), a.to_vec());
        assert_eq!(super::reverse(3, 2, vjp), a.to_vec());
        assert_eq!(super::jacobian(3, 2, jvp, vjp), a.to_vec());
        // Empty shapes.
        assert!(super::forward::<f64>(0, 2, |_, _| {}).is_empty());
        assert!(super::reverse::<f64>(3, 0, |_, _| {}).is_empty());
    }

    #[test]
    fn the_hessian_of_a_quadratic_is_its_matrix() {
        // f(x) = ½ xᵀ Q x with Q symmetric: H v = Q v.
        let q = [2.0, -1.0, 0.5, -1.0, 3.0, 0.0, 0.5, 0.0, 1.0];
        let hvp = |v: &[f64], hv: &mut [f64]| {
            for i in 0..3 {
                hv[i] += (0..3).map(|j| q[i * 3 + j] * v[j]).sum::<f64>();
            }
        };
        assert_eq!(super::hessian(3, hvp), q.to_vec());
        assert_eq!(super::hessian_diagonal(3, hvp), vec![2.0, 3.0, 1.0]);
    }
}
