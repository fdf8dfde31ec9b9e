//! Newton's method with conjugate gradients, driven by `_hvp`.
//!
//! Minimises the extended Rosenbrock function in 100 dimensions. Each Newton
//! step solves `H p = −∇f` by conjugate gradients, where every product `H v`
//! is one call of the generated `rosenbrock_hvp` (forward mode over reverse
//! mode): the Hessian is never formed. A backtracking line search keeps each
//! step a descent step, and a negative curvature direction ends CG early
//! (Steihaug's rule), as trust-region Newton-CG does.
//!
//! Run with `cargo run --example newton`.

use ad_runtime::differentiate;

/// The extended Rosenbrock function (Moré, Garbow and Hillstrom): 50
/// Rosenbrock valleys, one per pair of coordinates, written as numeric Rust
/// usually is.
#[differentiate(vjp, hvp)]
fn rosenbrock(x: &[f64]) -> f64 {
    x.chunks_exact(2)
        .map(|p| (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2))
        .sum()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// `H v` at `x`, and (as a by-product of the same pass) the gradient.
fn hessian_times(x: &[f64], v: &[f64]) -> Vec<f64> {
    let (mut grad, mut hv) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    rosenbrock_hvp(x, v, &mut grad, &mut hv);
    hv
}

/// Solves `H p = −g` approximately by conjugate gradients (Steihaug): stops
/// at a relative residual of `tol`, or at a direction of negative curvature.
/// Returns the step and the number of Hessian-vector products.
fn newton_step(x: &[f64], g: &[f64], tol: f64) -> (Vec<f64>, usize) {
    let n = x.len();
    let mut p = vec![0.0; n];
    let mut r: Vec<f64> = g.iter().map(|g| -g).collect();
    let mut d = r.clone();
    let mut rr = dot(&r, &r);
    let stop = tol * tol * rr;
    for k in 0..n {
        let hd = hessian_times(x, &d);
        let curvature = dot(&d, &hd);
        if curvature <= 0.0 {
            // Negative curvature: the steepest descent step if nothing yet.
            if k == 0 {
                return (r, 1);
            }
            return (p, k + 1);
        }
        let alpha = rr / curvature;
        for i in 0..n {
            p[i] += alpha * d[i];
            r[i] -= alpha * hd[i];
        }
        let rr_next = dot(&r, &r);
        if rr_next <= stop {
            return (p, k + 1);
        }
        let beta = rr_next / rr;
        rr = rr_next;
        for i in 0..n {
            d[i] = r[i] + beta * d[i];
        }
    }
    (p, n)
}

fn main() {
    let n = 100;
    // The classic start, (−1.2, 1) in each pair.
    let mut x: Vec<f64> = [-1.2, 1.0].iter().copied().cycle().take(n).collect();
    let mut grad = vec![0.0; n];
    let mut products = 0;
    println!("Newton-CG on the {n}-dimensional Rosenbrock function");
    for iteration in 0..100 {
        grad.fill(0.0);
        let f = rosenbrock_vjp(&x, &mut grad, 1.0);
        let norm = dot(&grad, &grad).sqrt();
        if iteration % 5 == 0 || norm < 1e-10 {
            println!(
                "  iteration {iteration:3}: f = {f:.3e}, |∇f| = {norm:.3e}, H·v products so far: {products}"
            );
        }
        if norm < 1e-10 {
            break;
        }
        let (step, used) = newton_step(&x, &grad, norm.sqrt().min(0.5));
        products += used;
        // Backtracking (Armijo) line search along the Newton step.
        let slope = dot(&grad, &step);
        let mut t = 1.0;
        loop {
            let trial: Vec<f64> = x.iter().zip(&step).map(|(x, s)| x + t * s).collect();
            if rosenbrock(&trial) <= f + 1e-4 * t * slope || t < 1e-12 {
                x = trial;
                break;
            }
            t *= 0.5;
        }
    }
    let f = rosenbrock(&x);
    let error = x.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
    println!(
        "minimum f = {f:.3e} at max |x - 1| = {error:.3e}, with {products} Hessian-vector products"
    );
    assert!(f < 1e-16 && error < 1e-8, "Newton-CG did not converge");
}
