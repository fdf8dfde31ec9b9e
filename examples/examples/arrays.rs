//! ndarray and nalgebra at the boundary of differentiated functions: their
//! storage goes in as slices without a copy, and the gradients come back in
//! the caller's own types.
//!
//! A differentiated function takes `&[f64]`; both crates lend their contiguous
//! storage as one (`as_slice`, `as_slice_memory_order`), and a shadow is any
//! zeroed array of the same shape and layout, lent with `as_slice_mut` /
//! `as_mut_slice`: after the call it *is* the gradient, an `Array1` or a
//! `DVector`. Matrices differ in layout (ndarray is row-major by default,
//! nalgebra column-major), so the function here takes its matrix with its
//! strides, which both crates report, and gives bit-identical results for
//! either; another uses the runtime's row-major `matmul` on nalgebra's
//! column-major storage directly. A `Vec<f64>` output becomes an array by
//! moving its buffer (`Array1::from_vec`, `DVector::from_vec`), and so does a
//! Jacobian. Parameters that `ad_runtime::optim` steps stay a `Vec<f64>`,
//! which both crates view without a copy.
//!
//! Every result is asserted against a closed form computed with the crate's
//! own arithmetic. docs/ecosystem.md describes the patterns.
//!
//! Run with `cargo run --example arrays`.

use ad_runtime::optim::Sgd;
use ad_runtime::{Tangent, differentiate, jacobian};
use nalgebra::{DMatrix, DVector, DVectorView, Vector3};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ShapeBuilder, array};

/// `½ Σ wᵢ xᵢ² + ln Σ exp(xᵢ)`: its gradient in `x` is `w ∘ x + softmax(x)`.
#[differentiate(wrt(x))]
fn energy(x: &[f64], w: &[f64]) -> f64 {
    let mut quadratic = 0.0;
    for i in 0..x.len() {
        quadratic += w[i] * x[i] * x[i];
    }
    0.5 * quadratic + ad_runtime::logsumexp(x)
}

/// `½ ‖A x − b‖²` for an `m × n` matrix `A` stored in `a` with entry `(i, j)`
/// at `i * row_stride + j * col_stride`: row-major, column-major or any other
/// layout the caller has. The gradients are `Aᵀ r` for `x` and `r xᵀ` for `A`
/// (in `d_a`, in the same layout), where `r = A x − b`.
#[differentiate(wrt(a, x))]
fn least_squares(a: &[f64], row_stride: usize, col_stride: usize, x: &[f64], b: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..b.len() {
        let mut ax = 0.0;
        for j in 0..x.len() {
            ax += a[i * row_stride + j * col_stride] * x[j];
        }
        let r = ax - b[i];
        total += r * r;
    }
    0.5 * total
}

/// `‖A x‖²` for an `m × n` matrix `A` stored column-major (nalgebra's layout),
/// through the runtime's row-major `matmul`: column-major storage of `A` is
/// row-major storage of `Aᵀ` (`n × m`), so the `1 × m` product `xᵀ Aᵀ` is
/// `(A x)ᵀ`, with no copy or transposition. The gradients are `2 Aᵀ A x` for
/// `x` and `2 (A x) xᵀ` for `A`.
#[differentiate(wrt(a, x))]
fn column_major_square(a: &[f64], x: &[f64], m: usize) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; m];
    ad_runtime::matmul(x, a, &mut y, 1, n, m);
    ad_runtime::dot(&y, &y)
}

/// `x / ‖x‖`, a map from `Rⁿ` to `Rⁿ` whose Jacobian is `(I − y yᵀ) / ‖x‖`.
#[differentiate(vjp, jvp)]
fn normalize(x: &[f64]) -> Vec<f64> {
    let r = ad_runtime::norm2(x);
    x.iter().map(|v| v / r).collect()
}

/// Asserts that two sequences of floats agree to `1e-12`.
fn assert_close<'a, 'b>(
    what: &str,
    got: impl IntoIterator<Item = &'a f64>,
    want: impl IntoIterator<Item = &'b f64>,
) {
    let (got, want): (Vec<f64>, Vec<f64>) = (
        got.into_iter().copied().collect(),
        want.into_iter().copied().collect(),
    );
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12, "{what}: {got:?} != {want:?}");
    }
    println!("{what}: {got:.6?}");
}

/// `softmax(x)`, with each crate's own arithmetic, for the closed forms.
fn softmax(x: &[f64]) -> Vec<f64> {
    let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - top).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter().map(|v| v / total).collect()
}

/// The gradient of [`energy`] at an ndarray view, as an `Array1`.
fn energy_gradient_ndarray(x: ArrayView1<f64>, w: &Array1<f64>) -> Array1<f64> {
    // A view that is not contiguous (a column of a row-major matrix) has no
    // slice: `as_standard_layout` borrows a contiguous view and copies any other.
    let x = x.as_standard_layout();
    let mut d_x = Array1::zeros(x.len());
    energy_vjp(
        x.as_slice().expect("standard layout"),
        d_x.as_slice_mut().expect("a new array is contiguous"),
        w.as_slice().expect("a new array is contiguous"),
        1.0,
    );
    d_x
}

/// The strides of an ndarray matrix as the `usize`s [`least_squares`] takes.
fn ndarray_strides(a: &ArrayView2<f64>) -> (usize, usize) {
    let strides = a.strides();
    let stride = |s: isize| usize::try_from(s).expect("no reversed axes");
    (stride(strides[0]), stride(strides[1]))
}

/// [`least_squares`]'s gradients at an ndarray matrix of any contiguous
/// layout: `d_a` in `a`'s layout, `d_x` as an `Array1`.
fn least_squares_ndarray(
    a: ArrayView2<f64>,
    x: &Array1<f64>,
    b: &Array1<f64>,
) -> (Array2<f64>, Array1<f64>) {
    let (row_stride, col_stride) = ndarray_strides(&a);
    // `map` keeps the memory order of a contiguous array: the shadow has `a`'s strides.
    let mut d_a = a.map(|_| 0.0);
    assert_eq!(d_a.strides(), a.strides());
    let mut d_x = Array1::zeros(x.len());
    least_squares_vjp(
        a.as_slice_memory_order().expect("a contiguous matrix"),
        d_a.as_slice_memory_order_mut()
            .expect("a contiguous matrix"),
        row_stride,
        col_stride,
        x.as_slice().expect("a new array is contiguous"),
        d_x.as_slice_mut().expect("a new array is contiguous"),
        b.as_slice().expect("a new array is contiguous"),
        1.0,
    );
    (d_a, d_x)
}

fn vectors() {
    println!("== vectors: gradients of energy(x) = ½ Σ wᵢ xᵢ² + ln Σ exp(xᵢ)");
    let w_nd = array![1.0, 2.0, 3.0];
    let closed_form = |x: &[f64], w: &[f64]| -> Vec<f64> {
        softmax(x)
            .iter()
            .zip(x.iter().zip(w))
            .map(|(p, (x, w))| w * x + p)
            .collect()
    };

    // ndarray: each row of a row-major matrix is a contiguous `ArrayView1`;
    // a column is not, and is copied.
    let points = array![[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-0.5, 0.0, 1.0]];
    let mut gradients = Array2::zeros(points.raw_dim());
    for (point, mut gradient) in points.rows().into_iter().zip(gradients.rows_mut()) {
        assert!(point.as_slice().is_some(), "a row is borrowed, not copied");
        gradient.assign(&energy_gradient_ndarray(point, &w_nd));
    }
    for (point, gradient) in points.rows().into_iter().zip(gradients.rows()) {
        let x = point.to_vec();
        assert_close(
            "ndarray row      ",
            gradient,
            &closed_form(&x, w_nd.as_slice().unwrap()),
        );
    }
    let column = points.column(1);
    assert!(
        column.as_slice().is_none(),
        "a column of a row-major matrix is strided"
    );
    let d_column = energy_gradient_ndarray(column, &w_nd);
    assert_close(
        "ndarray column   ",
        &d_column,
        &closed_form(&column.to_vec(), w_nd.as_slice().unwrap()),
    );

    // nalgebra: a `DVector` (or a column of a `DMatrix`, which is contiguous)
    // lends its storage; the shadow is a `DVector` and so is the gradient.
    let w = DVector::from_column_slice(w_nd.as_slice().unwrap());
    let x = DVector::from_vec(vec![0.5, -1.0, 2.0]);
    let mut d_x = DVector::zeros(x.len());
    energy_vjp(x.as_slice(), d_x.as_mut_slice(), w.as_slice(), 1.0);
    let want = w.component_mul(&x) + DVector::from_vec(softmax(x.as_slice()));
    assert_close("nalgebra DVector ", &d_x, &want);
    // The same numbers through the same generated code: the same bits as ndarray's.
    assert_eq!(d_x.as_slice(), gradients.row(0).as_slice().unwrap());

    // A statically sized `Vector3` lends its array storage the same way.
    let x3 = Vector3::new(0.5, -1.0, 2.0);
    let mut d_x3 = Vector3::zeros();
    energy_vjp(x3.as_slice(), d_x3.as_mut_slice(), w.as_slice(), 1.0);
    assert_eq!(d_x3.as_slice(), d_x.as_slice());
    println!("nalgebra Vector3 : the same bits as the DVector");
}

fn matrices() {
    println!("== matrices: gradients of ½ ‖A x − b‖², the matrix in each crate's layout");
    let a_rows = [[1.0, 2.0], [-0.5, 0.75], [3.0, -1.0]];
    let (x, b) = ([0.25, -1.5], [1.0, 0.0, -2.0]);

    // ndarray, row-major (its default): strides (2, 1).
    let a = Array2::from_shape_fn((3, 2), |(i, j)| a_rows[i][j]);
    let (x_nd, b_nd) = (Array1::from_vec(x.to_vec()), Array1::from_vec(b.to_vec()));
    let (d_a, d_x) = least_squares_ndarray(a.view(), &x_nd, &b_nd);
    let r = a.dot(&x_nd) - &b_nd;
    assert_close("ndarray d_x (row-major)   ", &d_x, &a.t().dot(&r));
    let outer = Array2::from_shape_fn((3, 2), |(i, j)| r[i] * x[j]);
    assert_close("ndarray d_A (row-major)   ", &d_a, &outer);

    // ndarray, column-major (`.f()`): strides (1, 3), the same matrix.
    let a_f = Array2::from_shape_fn((3, 2).f(), |(i, j)| a_rows[i][j]);
    assert_eq!(a_f.strides(), &[1, 3]);
    let (d_a_f, d_x_f) = least_squares_ndarray(a_f.view(), &x_nd, &b_nd);
    assert_eq!(d_a_f, d_a, "the same gradient whatever the layout");
    assert_eq!(d_x_f, d_x);
    println!("ndarray column-major      : the same bits as row-major");

    // nalgebra, column-major: strides (1, 3) too.
    let a_na = DMatrix::from_fn(3, 2, |i, j| a_rows[i][j]);
    let (x_na, b_na) = (
        DVector::from_column_slice(&x),
        DVector::from_column_slice(&b),
    );
    let (row_stride, col_stride) = a_na.strides();
    let mut d_a_na = DMatrix::zeros(3, 2);
    let mut d_x_na = DVector::zeros(2);
    least_squares_vjp(
        a_na.as_slice(),
        d_a_na.as_mut_slice(),
        row_stride,
        col_stride,
        x_na.as_slice(),
        d_x_na.as_mut_slice(),
        b_na.as_slice(),
        1.0,
    );
    let r_na = &a_na * &x_na - &b_na;
    assert_close(
        "nalgebra d_x              ",
        &d_x_na,
        &(a_na.transpose() * &r_na),
    );
    assert_close(
        "nalgebra d_A (col-major)  ",
        &d_a_na,
        &(&r_na * x_na.transpose()),
    );
    // The same entries as ndarray's, bit for bit, each in its own layout.
    for i in 0..3 {
        for j in 0..2 {
            assert_eq!(d_a_na[(i, j)], d_a[[i, j]]);
        }
    }
    assert_eq!(d_x_na.as_slice(), d_x.as_slice().unwrap());

    // nalgebra's column-major storage with the runtime's row-major primitives.
    let mut d_a_na = DMatrix::zeros(3, 2);
    let mut d_x_na = DVector::zeros(2);
    column_major_square_vjp(
        a_na.as_slice(),
        d_a_na.as_mut_slice(),
        x_na.as_slice(),
        d_x_na.as_mut_slice(),
        3,
        1.0,
    );
    let y = &a_na * &x_na;
    let value = column_major_square(a_na.as_slice(), x_na.as_slice(), 3);
    assert_close("nalgebra ‖A x‖²           ", [&value], [&y.norm_squared()]);
    assert_close(
        "nalgebra ‖A x‖², d_x      ",
        &d_x_na,
        &(a_na.transpose() * &y * 2.0),
    );
    assert_close(
        "nalgebra ‖A x‖², d_A      ",
        &d_a_na,
        &(&y * x_na.transpose() * 2.0),
    );

    // C = A B on column-major storages is the row-major product Cᵀ = Bᵀ Aᵀ.
    let b_mat = DMatrix::from_fn(2, 4, |i, j| (i + 2 * j) as f64 - 1.5);
    let mut c = DMatrix::zeros(3, 4);
    ad_runtime::matmul(b_mat.as_slice(), a_na.as_slice(), c.as_mut_slice(), 4, 2, 3);
    assert_close("matmul, column-major A B  ", &c, &(&a_na * &b_mat));
}

fn vector_outputs() {
    println!("== a Vec output: normalize(x) = x / ‖x‖, by _vjp, _jvp and whole Jacobians");
    let x = DVector::from_vec(vec![3.0, 0.0, 4.0]);
    let seed = DVector::from_vec(vec![1.0, -2.0, 0.5]);
    let tangent = DVector::from_vec(vec![0.0, 1.0, -1.0]);

    // The output `Vec` becomes a `DVector` by moving its buffer; the seed and
    // the tangent are lent as slices like any input.
    let mut d_x = DVector::zeros(3);
    let y = DVector::from_vec(normalize_vjp(
        x.as_slice(),
        d_x.as_mut_slice(),
        seed.as_slice(),
    ));
    let (_, t_y) = normalize_jvp(x.as_slice(), tangent.as_slice());
    let t_y = DVector::from_vec(t_y);
    let r = x.norm();
    let projected = |v: &DVector<f64>| (v - &y * y.dot(v)) / r;
    assert_close("nalgebra y            ", &y, &(&x / r));
    assert_close("nalgebra Jᵀ·seed (vjp)", &d_x, &projected(&seed));
    assert_close("nalgebra J·t (jvp)    ", &t_y, &projected(&tangent));
    // ⟨seed, J t⟩ = ⟨Jᵀ seed, t⟩: the two modes agree.
    assert!((seed.dot(&t_y) - d_x.dot(&tangent)).abs() < 1e-12);

    // ndarray: the same, with `Array1::from_vec`.
    let x_nd = Array1::from_vec(x.as_slice().to_vec());
    let (y_nd, t_y_nd) = normalize_jvp(x_nd.as_slice().unwrap(), tangent.as_slice());
    let (y_nd, t_y_nd) = (Array1::from_vec(y_nd), Array1::from_vec(t_y_nd));
    assert_eq!(y_nd.as_slice().unwrap(), y.as_slice());
    assert_eq!(t_y_nd.as_slice().unwrap(), t_y.as_slice());

    // Whole Jacobians come from `ad_runtime::jacobian` as a row-major `Vec`:
    // an ndarray `Array2` takes it as it is; a `DMatrix` is column-major, so
    // `from_row_slice` copies it into that order.
    let rows = jacobian::reverse(3, 3, |seed, row| {
        normalize_vjp(x.as_slice(), row, seed);
    });
    let j_nd = Array2::from_shape_vec((3, 3), rows.clone()).expect("3 × 3");
    let j_na = DMatrix::from_row_slice(3, 3, &rows);
    let want = (DMatrix::identity(3, 3) - &y * y.transpose()) / r;
    assert_close("nalgebra Jacobian     ", &j_na, &want);
    for i in 0..3 {
        for j in 0..3 {
            assert_eq!(j_nd[[i, j]], j_na[(i, j)]);
        }
    }
    println!("ndarray Jacobian      : the same entries");
}

fn parameters_in_a_vec() {
    println!("== parameters in a Vec<f64>, stepped by ad_runtime::optim, viewed as arrays");
    // `ad_runtime::optim` steps any `Tangent`, such as a `Vec<f64>`, and neither
    // crate's types are one: keep the parameters in a `Vec` and view them.
    let a = DMatrix::from_row_slice(3, 2, &[1.0, 2.0, -0.5, 0.75, 3.0, -1.0]);
    let b = DVector::from_vec(vec![1.0, 0.0, -2.0]);
    let (row_stride, col_stride) = a.strides();
    let mut x = vec![0.0; 2];
    let mut d_x = vec![0.0; 2];
    let mut d_a = DMatrix::zeros(3, 2); // A's adjoint, not used here.
    let mut sgd = Sgd::new(&x, 0.09);
    for _ in 0..200 {
        d_x.set_zero();
        least_squares_vjp(
            a.as_slice(),
            d_a.as_mut_slice(),
            row_stride,
            col_stride,
            &x,
            &mut d_x,
            b.as_slice(),
            1.0,
        );
        sgd.step(&mut x, &d_x);
    }
    // nalgebra's view of the `Vec` against its own solution of the normal equations.
    let x_view = DVectorView::from_slice(&x, 2);
    let ata = a.transpose() * &a;
    let solution = ata.try_inverse().expect("A has full column rank") * a.transpose() * &b;
    assert!((x_view - &solution).norm() < 1e-10, "{x:?} != {solution}");
    println!(
        "gradient descent      : {x:.6?}, nalgebra's solution {:.6?}",
        solution.as_slice()
    );
    // ndarray's view: the residual is orthogonal to A's columns.
    let a_nd = ArrayView2::from_shape((3, 2).f(), a.as_slice()).expect("3 × 2");
    let residual = a_nd.dot(&ArrayView1::from(&x[..])) - ArrayView1::from(b.as_slice());
    let normal = a_nd.t().dot(&residual);
    assert!(normal.iter().all(|v| v.abs() < 1e-10), "Aᵀ r = {normal}");
    println!("ndarray view          : Aᵀ r = {normal:.1e}");
}

fn main() {
    vectors();
    matrices();
    vector_outputs();
    parameters_in_a_vec();
}
