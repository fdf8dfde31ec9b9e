//! The `ba` eval: bundle adjustment (ADBench's), its residuals and their
//! sparse Jacobian.
//!
//! `n` cameras of 11 parameters `[r₁ r₂ r₃ C₁ C₂ C₃ f u₀ v₀ k₁ k₂]` (a
//! Rodrigues rotation, the centre, the focal length, the principal point,
//! two radial distortion coefficients), `m` points of 3, and `p`
//! observations, observation `i` of point `i mod m` by camera `i mod n`,
//! each with a weight `wᵢ` and a measured feature. Each observation has the
//! residual `wᵢ · (proj(camera, point) − feature)` (two numbers) and the
//! weight term `1 − wᵢ²`. As in ADBench's data files, the input gives one
//! camera, point, weight and feature, repeated:
//! `{n, m, p, cam: double[11], x: double[3], w: double, feat: double[2]}`
//! plus `Runs`.
//!
//! `objective` returns the residuals, `jacobian` their Jacobian with respect
//! to the cameras, the points and the weights, a `(2p + p) × (11n + 3m + p)`
//! sparse matrix in compressed rows, built as ADBench builds it: the two
//! rows of observation `i` (15 entries each: its camera's 11, its point's
//! 3, its weight), then the `p` rows of the weight terms. Both are reported
//! in the eval's summarised form (the first entries and the repeat count).
//!
//! Each observation's 2 × 15 block is one call of the generated
//! `reprojection_error_jvp_lanes` with 15 lanes, one per parameter: vector
//! forward mode gives the whole block while running the projection once.

use ad_runtime::{Lanes, differentiate};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Evaluation, parse, timed, unknown_function};

/// How many parameters a camera has.
pub const CAMERA: usize = 11;

/// The parameters one observation's residual depends on: its camera's,
/// its point's, its weight.
const BLOCK: usize = CAMERA + 3 + 1;

/// The residual of one observation: `w · (proj(cam, x) − feat)`, where
/// `proj` rotates `x − C` by the Rodrigues vector `r`, divides by depth,
/// applies the radial distortion `1 + k₁ ρ² + k₂ ρ⁴` and the intrinsics.
#[differentiate(jvp, jvp_lanes, wrt(cam, x, w))]
pub fn reprojection_error(cam: &[f64], x: &[f64], w: f64, feat: &[f64]) -> [f64; 2] {
    let (p0, p1, p2) = (x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]);
    let (r0, r1, r2) = (cam[0], cam[1], cam[2]);
    let sq_theta = r0 * r0 + r1 * r1 + r2 * r2;
    let (c0, c1, c2) = if sq_theta != 0.0 {
        let theta = sq_theta.sqrt();
        let (cos, sin) = (theta.cos(), theta.sin());
        let inverse = 1.0 / theta;
        let (w0, w1, w2) = (r0 * inverse, r1 * inverse, r2 * inverse);
        let tmp = (w0 * p0 + w1 * p1 + w2 * p2) * (1.0 - cos);
        (
            p0 * cos + (w1 * p2 - w2 * p1) * sin + w0 * tmp,
            p1 * cos + (w2 * p0 - w0 * p2) * sin + w1 * tmp,
            p2 * cos + (w0 * p1 - w1 * p0) * sin + w2 * tmp,
        )
    } else {
        // Small angles: R ≈ I + [r]ₓ.
        (
            p0 + (r1 * p2 - r2 * p1),
            p1 + (r2 * p0 - r0 * p2),
            p2 + (r0 * p1 - r1 * p0),
        )
    };
    let (u, v) = (c0 / c2, c1 / c2);
    let rho2 = u * u + v * v;
    let distortion = 1.0 + cam[9] * rho2 + cam[10] * rho2 * rho2;
    let (u, v) = (u * distortion, v * distortion);
    [
        w * (u * cam[6] + cam[7] - feat[0]),
        w * (v * cam[6] + cam[8] - feat[1]),
    ]
}

/// The weight term of one observation, `1 − w²`.
#[differentiate(jvp)]
pub fn weight_error(w: f64) -> f64 {
    1.0 - w * w
}

/// A bundle adjustment problem: the cameras, points, weights, observations
/// and features, as flat rows.
pub struct Problem {
    /// Cameras, 11 parameters each.
    pub cams: Vec<f64>,
    /// Points, 3 coordinates each.
    pub points: Vec<f64>,
    /// One weight per observation.
    pub weights: Vec<f64>,
    /// Observation `i` is of point `obs[i].1` by camera `obs[i].0`.
    pub obs: Vec<(usize, usize)>,
    /// The measured feature of each observation, 2 numbers each.
    pub feats: Vec<f64>,
}

/// The residuals of every observation (2 each) and the weight terms.
#[must_use]
pub fn objective(problem: &Problem) -> (Vec<f64>, Vec<f64>) {
    let mut reprojection = Vec::with_capacity(2 * problem.obs.len());
    for (i, &(camera, point)) in problem.obs.iter().enumerate() {
        let cam = &problem.cams[camera * CAMERA..(camera + 1) * CAMERA];
        let x = &problem.points[point * 3..point * 3 + 3];
        let feat = &problem.feats[2 * i..2 * i + 2];
        reprojection.extend(reprojection_error(cam, x, problem.weights[i], feat));
    }
    let weights = problem.weights.iter().map(|&w| weight_error(w)).collect();
    (reprojection, weights)
}

/// A sparse matrix in compressed rows: row `r` holds the entries
/// `rows[r]..rows[r + 1]` of `cols` and `vals`.
#[derive(Debug, Default, PartialEq)]
pub struct SparseRows {
    /// `nrows + 1` offsets into `cols` and `vals`.
    pub rows: Vec<usize>,
    /// The column of each entry.
    pub cols: Vec<usize>,
    /// The value of each entry.
    pub vals: Vec<f64>,
}

impl SparseRows {
    fn push_row(&mut self, entries: impl IntoIterator<Item = (usize, f64)>) {
        for (col, val) in entries {
            self.cols.push(col);
            self.vals.push(val);
        }
        self.rows.push(self.cols.len());
    }
}

/// The Jacobian of [`objective`]'s residuals then weight terms with respect
/// to the cameras, the points, then the weights: one `_jvp_lanes` with 15
/// lanes per observation, one `_jvp` per weight.
#[must_use]
pub fn jacobian(problem: &Problem) -> SparseRows {
    let (n, m) = (problem.cams.len() / CAMERA, problem.points.len() / 3);
    // Lane `l` moves parameter `l` of the block: camera, point, weight.
    let t_cam: [Lanes<f64, BLOCK>; CAMERA] = std::array::from_fn(Lanes::basis);
    let t_x: [Lanes<f64, BLOCK>; 3] = std::array::from_fn(|l| Lanes::basis(CAMERA + l));
    let t_w = Lanes::basis(CAMERA + 3);
    let mut jacobian = SparseRows {
        rows: vec![0],
        ..SparseRows::default()
    };
    for (i, &(camera, point)) in problem.obs.iter().enumerate() {
        let cam = &problem.cams[camera * CAMERA..(camera + 1) * CAMERA];
        let x = &problem.points[point * 3..point * 3 + 3];
        let feat = &problem.feats[2 * i..2 * i + 2];
        let (_, block) =
            reprojection_error_jvp_lanes(cam, &t_cam, x, &t_x, problem.weights[i], t_w, feat);
        for row in block {
            let columns = (0..CAMERA)
                .map(|l| camera * CAMERA + l)
                .chain((0..3).map(|l| n * CAMERA + point * 3 + l))
                .chain([n * CAMERA + 3 * m + i]);
            jacobian.push_row(columns.zip(row.0));
        }
    }
    for (i, &w) in problem.weights.iter().enumerate() {
        let (_, d_w) = weight_error_jvp(w, 1.0);
        jacobian.push_row([(n * CAMERA + 3 * m + i, d_w)]);
    }
    jacobian
}

/// The input of both functions: one camera, point, weight and feature,
/// repeated.
#[derive(Deserialize)]
struct Input {
    n: usize,
    m: usize,
    p: usize,
    cam: Vec<f64>,
    x: Vec<f64>,
    w: f64,
    feat: Vec<f64>,
}

impl Input {
    /// The problem the input stands for, as ADBench expands it.
    fn problem(&self) -> Result<Problem, String> {
        if self.cam.len() != CAMERA || self.x.len() != 3 || self.feat.len() != 2 {
            return Err("`cam`, `x` and `feat` must have 11, 3 and 2 numbers".to_owned());
        }
        if self.n == 0 || self.m == 0 || self.p == 0 {
            return Err("`n`, `m` and `p` must be positive".to_owned());
        }
        Ok(Problem {
            cams: self.cam.repeat(self.n),
            points: self.x.repeat(self.m),
            weights: vec![self.w; self.p],
            obs: (0..self.p).map(|i| (i % self.n, i % self.m)).collect(),
            feats: self.feat.repeat(self.p),
        })
    }
}

/// The eval's summary of the residuals: the first observation's and the
/// count, the first weight term and the count.
fn summarised_objective((reprojection, weights): &(Vec<f64>, Vec<f64>)) -> Value {
    json!({
        "reproj_error": {"elements": &reprojection[..2], "repeated": reprojection.len() / 2},
        "w_err": {"element": weights[0], "repeated": weights.len()},
    })
}

/// The eval's summary of the Jacobian: the first `2 · 15` offsets, columns
/// and values (the first observation's two rows), then the last of each.
fn summarised_jacobian(jacobian: &SparseRows) -> Value {
    fn summary<T: Copy>(all: &[T]) -> Vec<T> {
        let mut kept = all[..(2 * BLOCK).min(all.len())].to_vec();
        kept.extend(all.last());
        kept
    }
    json!({
        "rows": summary(&jacobian.rows),
        "cols": summary(&jacobian.cols),
        "vals": summary(&jacobian.vals),
    })
}

/// Answers an `evaluate` message of module `ba`.
///
/// # Errors
///
/// If the input does not have the eval's format, or the function is not
/// `objective` or `jacobian`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let problem = parse::<Input>(input)?.problem()?;
    match function {
        "objective" => timed(input, || summarised_objective(&objective(&problem))),
        "jacobian" => timed(input, || summarised_jacobian(&jacobian(&problem))),
        _ => Err(unknown_function("ba", function)),
    }
}
