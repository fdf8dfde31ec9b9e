//! Fits a multinomial logistic regression to the Iris data set with argmin's
//! L-BFGS, the gradient coming from `#[differentiate]`.
//!
//! The model is linear: 3 logits, one per species, from 4 standardized flower
//! measurements, `z = x·W + b`. Its loss is the mean softmax cross-entropy
//! over all 150 flowers plus a small L2 penalty on `W` (setosa is linearly
//! separable, so without it the weights would grow forever), written as plain
//! Rust over slices. `#[differentiate(wrt(params))]` generates `loss_vjp`.
//!
//! [`VjpProblem`] is the adapter: it makes any `_vjp` closure an argmin
//! problem, a [`CostFunction`] and a [`Gradient`] over `Vec<f64>`, so every
//! gradient-based solver of argmin can use it. argmin asks for the cost and the
//! gradient in separate calls, nearly always at the same point; one `_vjp`
//! returns both, so the adapter runs it once per point.
//!
//! The example checks the gradient against finite differences, runs L-BFGS
//! with a Moré-Thuente line search, printing the loss and the gradient's norm
//! every 5 iterations, and asserts that it converged: argmin reports
//! convergence, the gradient vanishes, the training accuracy is that of a
//! linear model on Iris, and the mean predicted probability of each species is
//! its frequency, 1/3 (a property of the exact optimum with free biases).
//!
//! The data comes from the `iris` feature of the `linfa-datasets` crate, which
//! bundles it. docs/ecosystem.md explains the adapter.
//!
//! Run with `cargo run --example lbfgs`.

use std::cell::{Cell, RefCell};

use ad_runtime::{check, differentiate};
use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{
    CostFunction, Error, Executor, Gradient, IterState, KV, State, TerminationReason,
};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use ndarray::{Array2, Axis};

/// Features per flower: sepal length and width, petal length and width.
const N_IN: usize = 4;
/// Classes: setosa, versicolor, virginica.
const N_CLASSES: usize = 3;
/// The weight of the L2 penalty `½ λ ‖W‖²`.
const L2: f64 = 1e-3;

/// The penalized mean cross-entropy of a linear softmax classifier.
///
/// `params` holds `W` (`n_in × n_classes`, row-major) then the `n_classes`
/// biases `b`; `x` holds one row of `n_in` features per sample (row-major) and
/// `labels[s]` is the class of sample `s`. Only `params` is differentiated:
/// the data and `l2` are constants.
#[differentiate(wrt(params))]
fn loss(params: &[f64], x: &[f64], labels: &[usize], l2: f64) -> f64 {
    let n = labels.len();
    let n_in = x.len() / n;
    let n_classes = params.len() / (n_in + 1);
    let w = &params[..n_in * n_classes];
    let b = &params[n_in * n_classes..];

    // Logits for the whole batch: Z = X W + b, n × n_classes.
    let mut z = vec![0.0; n * n_classes];
    ad_runtime::matmul(x, w, &mut z, n, n_in, n_classes);
    for s in 0..n {
        for c in 0..n_classes {
            z[s * n_classes + c] += b[c];
        }
    }

    // Cross-entropy of sample s: -ln softmax(z_s)[label] = logsumexp(z_s) - z_s[label].
    let mut total = 0.0;
    for s in 0..n {
        let row = &z[s * n_classes..(s + 1) * n_classes];
        total += ad_runtime::logsumexp(row) - row[labels[s]];
    }
    total / n as f64 + 0.5 * l2 * ad_runtime::dot(w, w)
}

/// An argmin problem over `Vec<f64>` whose cost and gradient come from one
/// vector-Jacobian product.
///
/// `vjp(params, gradient)` adds the gradient of the loss at `params` into the
/// zeroed `gradient` and returns the loss: a generated `_vjp` with the seed 1.
/// argmin asks for the cost and then the gradient at each point it tries (and
/// L-BFGS asks for the gradient again at the point it accepts), so the last
/// point, its loss and its gradient are kept: each point costs one `_vjp`.
struct VjpProblem<F> {
    vjp: F,
    /// The last point evaluated, its loss and its gradient.
    last: RefCell<(Vec<f64>, f64, Vec<f64>)>,
    /// How many times `vjp` ran.
    runs: Cell<u64>,
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> VjpProblem<F> {
    fn new(vjp: F) -> Self {
        VjpProblem {
            vjp,
            last: RefCell::new((Vec::new(), f64::NAN, Vec::new())),
            runs: Cell::new(0),
        }
    }

    /// Runs `vjp` at `params` unless it is the last point evaluated.
    fn evaluate(&self, params: &[f64]) {
        let mut last = self.last.borrow_mut();
        let (point, loss, gradient) = &mut *last;
        if point.as_slice() == params {
            return;
        }
        point.clear();
        point.extend_from_slice(params);
        gradient.clear();
        gradient.resize(params.len(), 0.0);
        *loss = (self.vjp)(params, gradient);
        self.runs.set(self.runs.get() + 1);
    }
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> CostFunction for VjpProblem<F> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, params: &Vec<f64>) -> Result<f64, Error> {
        self.evaluate(params);
        Ok(self.last.borrow().1)
    }
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> Gradient for VjpProblem<F> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, params: &Vec<f64>) -> Result<Vec<f64>, Error> {
        self.evaluate(params);
        Ok(self.last.borrow().2.clone())
    }
}

/// The state L-BFGS keeps over `Vec<f64>`.
type LbfgsState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// An argmin observer printing the loss and the gradient's norm.
struct Progress;

impl Observe<LbfgsState> for Progress {
    fn observe_iter(&mut self, state: &LbfgsState, _kv: &KV) -> Result<(), Error> {
        let gradient = state.get_gradient().map_or(f64::NAN, |g| norm(g));
        println!(
            "iteration {:3}  loss {:.8}  |gradient| {gradient:.2e}",
            state.get_iter(),
            state.get_cost()
        );
        Ok(())
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The training data: standardized features, row-major, and the class labels.
struct Data {
    x: Array2<f64>,
    labels: Vec<usize>,
}

impl Data {
    /// Loads Iris and standardizes each feature to mean 0 and variance 1.
    fn iris() -> Self {
        let iris = linfa_datasets::iris();
        let records = iris.records();
        let mean = records.mean_axis(Axis(0)).expect("Iris has flowers");
        let sd = records.std_axis(Axis(0), 0.0);
        let x = (records - &mean) / &sd;
        assert_eq!(x.ncols(), N_IN);
        Data {
            x,
            labels: iris.targets().to_vec(),
        }
    }

    /// The features as one row-major slice, without a copy.
    fn features(&self) -> &[f64] {
        self.x
            .as_slice()
            .expect("a new array is in row-major order")
    }
}

/// The predicted probabilities, one row of `N_CLASSES` per sample.
fn probabilities(params: &[f64], data: &Data) -> Vec<f64> {
    let (w, b) = params.split_at(N_IN * N_CLASSES);
    let mut p = vec![0.0; data.labels.len() * N_CLASSES];
    ad_runtime::matmul(
        data.features(),
        w,
        &mut p,
        data.labels.len(),
        N_IN,
        N_CLASSES,
    );
    for row in p.chunks_mut(N_CLASSES) {
        for (z, b) in row.iter_mut().zip(b) {
            *z += b;
        }
        let logits = row.to_vec();
        ad_runtime::softmax(&logits, row);
    }
    p
}

fn main() -> Result<(), Error> {
    let data = Data::iris();
    let n_params = N_IN * N_CLASSES + N_CLASSES;
    println!(
        "Iris: {} flowers, {N_IN} features, {N_CLASSES} classes; {n_params} parameters",
        data.labels.len()
    );
    let loss_at = |params: &[f64]| loss(params, data.features(), &data.labels, L2);
    let loss_vjp_at = |params: &[f64], gradient: &mut [f64]| {
        loss_vjp(params, gradient, data.features(), &data.labels, L2, 1.0)
    };

    // Check the generated gradient against finite differences before trusting
    // it, at a point away from zero where every term matters.
    let probe: Vec<f64> = (0..n_params).map(|i| 0.3 * (i as f64).sin()).collect();
    let gradient_check = check::gradient(
        loss_at,
        |params| {
            let mut gradient = vec![0.0; params.len()];
            loss_vjp_at(params, &mut gradient);
            gradient
        },
        &probe,
    );
    println!("{gradient_check}");
    gradient_check.assert_within(1e-6);

    let problem = VjpProblem::new(loss_vjp_at);
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-8)?
        .with_tolerance_cost(0.0)?;
    let result = Executor::new(problem, solver)
        .configure(|state| {
            state
                .param(vec![0.0; n_params])
                .max_iters(200)
                .counting(true)
        })
        .add_observer(Progress, ObserverMode::Every(5))
        .run()?;

    let state = result.state();
    let params = state.get_best_param().expect("L-BFGS ran").clone();
    let final_loss = state.get_best_cost();
    let counts = state.get_func_counts();
    let runs = result
        .problem()
        .problem
        .as_ref()
        .map_or(0, |p| p.runs.get());
    println!(
        "{} after {} iterations: loss {final_loss:.8}; argmin asked for {} costs and {} gradients, loss_vjp ran {runs} times",
        state.get_termination_status(),
        state.get_iter(),
        counts.get("cost_count").copied().unwrap_or(0),
        counts.get("gradient_count").copied().unwrap_or(0),
    );

    // Converged, by argmin's criterion and by the gradient itself.
    assert_eq!(
        state.get_termination_reason(),
        Some(&TerminationReason::SolverConverged),
        "L-BFGS did not converge"
    );
    let mut gradient = vec![0.0; n_params];
    loss_vjp_at(&params, &mut gradient);
    assert!(
        norm(&gradient) < 1e-6,
        "|gradient| {:.2e} at the end",
        norm(&gradient)
    );
    // From ln 3 ≈ 1.0986 at zero weights (every species 1/3) to about 0.1024.
    assert!(final_loss < 0.11, "loss {final_loss:.4} is not below 0.11");

    // A linear model separates Iris but for a few versicolor and virginica.
    let probabilities = probabilities(&params, &data);
    let correct = probabilities
        .chunks(N_CLASSES)
        .zip(&data.labels)
        .filter(|&(row, &label)| (0..N_CLASSES).all(|c| row[c] <= row[label]))
        .count();
    let accuracy = correct as f64 / data.labels.len() as f64;
    println!("training accuracy {:.1}%", 100.0 * accuracy);
    assert!(
        accuracy > 0.95,
        "training accuracy {:.1}%",
        100.0 * accuracy
    );

    // At the optimum the biases' gradient, the mean of (predicted - observed)
    // probabilities, is zero: each species is predicted with mean probability
    // 50/150. This checks the fit without the generated gradient.
    for c in 0..N_CLASSES {
        let mean =
            probabilities.iter().skip(c).step_by(N_CLASSES).sum::<f64>() / data.labels.len() as f64;
        println!("mean predicted probability of class {c}: {mean:.9}");
        assert!((mean - 1.0 / 3.0).abs() < 1e-6, "class {c}: {mean}");
    }
    Ok(())
}
