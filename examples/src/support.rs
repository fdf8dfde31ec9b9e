//! Helpers the example programs share: deterministic numbers without a
//! dependency, and the small linear solve of Gauss–Newton.

/// A linear congruential generator: deterministic numbers, without a
/// dependency (also behind [`crate::workloads::inputs`]).
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number, uniform in `[0, 1)`: the top 53 bits of the state.
    pub fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// The next number, uniform in `[-1, 1)`.
    pub fn uniform(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
}

/// Solves the 3 × 3 system `a x = b` by Gaussian elimination with pivoting.
#[must_use]
// Row `row` is updated from row `col` of the same matrix: indices, not
// iterators, which would borrow `a` twice.
#[allow(clippy::needless_range_loop)]
pub fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> [f64; 3] {
    for col in 0..3 {
        let pivot = (col..3)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .expect("rows");
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..3 {
            let factor = a[row][col] / a[col][col];
            for k in col..3 {
                a[row][k] -= factor * a[col][k];
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let rest: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x
}
