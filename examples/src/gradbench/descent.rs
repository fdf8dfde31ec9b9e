//! The gradient-descent solver of the nested evals `saddle` and `particle`,
//! as GradBench specifies it for every tool (`cpp/gradbench/gd.hpp`): steps
//! of `η` along the negative gradient, accepted while the objective falls
//! (and `η` doubled after ten accepted in a row), `η` halved after a step
//! that does not fall; it stops when the gradient or a step is shorter than
//! `10⁻⁵`. The derivatives it is given come from generated functions.

/// Where the descent from `start` stops, for an objective and its gradient.
pub(super) fn argmin<const N: usize>(
    objective: impl Fn(&[f64; N]) -> f64,
    gradient: impl Fn(&[f64; N]) -> [f64; N],
    start: [f64; N],
) -> [f64; N] {
    let mut x = start;
    let mut fx = objective(&x);
    let mut gx = gradient(&x);
    let mut accepted = 0;
    let mut eta = 1e-5;
    loop {
        if magnitude(&gx) <= 1e-5 {
            return x;
        } else if accepted == 10 {
            eta *= 2.0;
            accepted = 0;
        } else {
            let x_prime: [f64; N] = std::array::from_fn(|j| x[j] - eta * gx[j]);
            let step: [f64; N] = std::array::from_fn(|j| x[j] - x_prime[j]);
            if magnitude(&step) <= 1e-5 {
                return x;
            }
            let fx_prime = objective(&x_prime);
            if fx_prime < fx {
                x = x_prime;
                fx = fx_prime;
                gx = gradient(&x);
                accepted += 1;
            } else {
                eta /= 2.0;
                accepted = 0;
            }
        }
    }
}

/// [`argmin`] of the negated objective.
pub(super) fn argmax<const N: usize>(
    objective: impl Fn(&[f64; N]) -> f64,
    gradient: impl Fn(&[f64; N]) -> [f64; N],
    start: [f64; N],
) -> [f64; N] {
    argmin(|x| -objective(x), |x| gradient(x).map(|g| -g), start)
}

/// `√(Σ vᵢ²)`.
fn magnitude<const N: usize>(v: &[f64; N]) -> f64 {
    v.iter().fold(0.0, |acc, v| acc + v * v).sqrt()
}
