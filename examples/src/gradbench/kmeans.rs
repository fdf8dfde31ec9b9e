//! The `kmeans` eval: the k-means cost and its Newton direction.
//!
//! `cost(P, C) = Σᵢ minⱼ ‖Cⱼ − Pᵢ‖²` over `n` points and `k` centroids of
//! dimension `d`. The input is `{points: double[][], centroids: double[][]}`
//! plus `Runs`; `cost` returns the number, `dir` the Newton direction
//! `J · H⁻¹` with respect to the centroids, as `k` rows of `d`.
//!
//! The Hessian of the cost in the centroids is diagonal (each point pulls on
//! the one centroid nearest to it, coordinate by coordinate), so its diagonal
//! is `H · 1`: one call of the generated `_hvp` along the direction of all
//! ones gives the gradient `J` and that diagonal at once.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::{Evaluation, flatten, parse, rows, timed, unknown_function};

/// `Σᵢ minⱼ ‖cⱼ − pᵢ‖²`, the points and centroids as flat rows of `d`.
#[differentiate(vjp, hvp, wrt(centroids))]
pub fn cost(points: &[f64], centroids: &[f64], d: usize) -> f64 {
    let mut total = 0.0;
    for p in points.chunks_exact(d) {
        let mut closest = f64::INFINITY;
        for c in centroids.chunks_exact(d) {
            let mut dist = 0.0;
            for j in 0..d {
                let diff = c[j] - p[j];
                dist += diff * diff;
            }
            closest = closest.min(dist);
        }
        total += closest;
    }
    total
}

/// The Newton direction `J · H⁻¹` of [`cost`] in the centroids, from one
/// `_hvp` along the direction of all ones (`H` is diagonal: `H · 1` is its
/// diagonal).
#[must_use]
pub fn dir(points: &[f64], centroids: &[f64], d: usize) -> Vec<f64> {
    let ones = vec![1.0; centroids.len()];
    let mut gradient = vec![0.0; centroids.len()];
    let mut diagonal = vec![0.0; centroids.len()];
    cost_hvp(points, centroids, &ones, &mut gradient, &mut diagonal, d);
    gradient.iter().zip(&diagonal).map(|(j, h)| j / h).collect()
}

/// The input of both functions.
#[derive(Deserialize)]
struct Input {
    points: Vec<Vec<f64>>,
    centroids: Vec<Vec<f64>>,
}

/// Answers an `evaluate` message of module `kmeans`.
///
/// # Errors
///
/// If the input does not have the eval's format (no points, rows of
/// different lengths), or the function is not `cost` or `dir`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let Input { points, centroids } = parse(input)?;
    let d = points.first().map_or(0, Vec::len);
    if d == 0 {
        return Err("`points` must hold points of at least one coordinate".to_owned());
    }
    let points = flatten("points", &points, points.len(), d)?;
    let centroids = flatten("centroids", &centroids, centroids.len(), d)?;
    match function {
        "cost" => timed(input, || cost(&points, &centroids, d)),
        "dir" => timed(input, || rows(&dir(&points, &centroids, d), d)),
        _ => Err(unknown_function("kmeans", function)),
    }
}
