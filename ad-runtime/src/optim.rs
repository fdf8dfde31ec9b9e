//! Optimisers over parameters of any [`Tangent`] type: [`Sgd`] (with momentum) and
//! [`Adam`].
//!
//! An optimiser is made once, from the parameters it will update, which gives it
//! the size of its state; each [`step`](Adam::step) then takes the parameters and
//! their gradient (the shadow `_vjp` filled) and updates the parameters in place,
//! allocating nothing. The state is kept flat, one float per float of the
//! parameters in the [flat order](crate::tangent#the-flat-view), so one optimiser
//! serves a parameter struct of nested layers as well as a `Vec<f64>`.
//!
//! A training loop clears the shadow with [`Tangent::set_zero`] (`_vjp` adds into
//! it), runs `_vjp`, and steps:
//!
//! ```
//! use ad_runtime::optim::Adam;
//! use ad_runtime::{Tangent, differentiate};
//!
//! #[derive(Clone, Debug, Tangent)]
//! struct Line {
//!     slope: f64,
//!     offset: f64,
//! }
//!
//! /// The squared error of the line on the points `(xs[i], ys[i])`.
//! #[differentiate(wrt(p))]
//! fn loss(p: &Line, xs: &[f64], ys: &[f64]) -> f64 {
//!     let mut s = 0.0;
//!     for i in 0..xs.len() {
//!         let r = p.slope * xs[i] + p.offset - ys[i];
//!         s += r * r;
//!     }
//!     s
//! }
//!
//! let (xs, ys) = ([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 5.0, 7.0]); // y = 2x + 1
//! let mut p = Line { slope: 0.0, offset: 0.0 };
//! let mut d_p = p.zero();
//! let mut adam = Adam::new(&p, 0.1);
//! for _ in 0..1000 {
//!     d_p.set_zero();
//!     loss_vjp(&p, &mut d_p, &xs, &ys, 1.0);
//!     adam.step(&mut p, &d_p);
//! }
//! assert!((p.slope - 2.0).abs() < 1e-3 && (p.offset - 1.0).abs() < 1e-3, "{p:?}");
//! ```

use crate::{Float, Tangent};

/// Stochastic gradient descent with (heavy-ball) momentum.
///
/// With learning rate `η` and momentum `μ`, each step updates the velocity `v`
/// (zero at first) and the parameters `p` with the gradient `g`:
///
/// ```text
/// v ← μ v + g
/// p ← p − η v
/// ```
///
/// the convention of PyTorch's `SGD` without dampening. With `μ = 0` (the default),
/// it is plain gradient descent, `p ← p − η g`.
///
/// # Example
///
/// ```
/// use ad_runtime::optim::Sgd;
///
/// // Minimise f(p) = (p₀ − 3)² + 10 p₁², whose gradient is (2 (p₀ − 3), 20 p₁).
/// let mut p = vec![0.0_f64, 1.0];
/// let mut g = vec![0.0; 2];
/// let mut sgd = Sgd::new(&p, 0.02).with_momentum(0.9);
/// for _ in 0..300 {
///     g[0] = 2.0 * (p[0] - 3.0);
///     g[1] = 20.0 * p[1];
///     sgd.step(&mut p, &g);
/// }
/// assert!((p[0] - 3.0).abs() < 1e-6 && p[1].abs() < 1e-6, "{p:?}");
/// ```
#[derive(Clone, Debug)]
pub struct Sgd<S: Float> {
    rate: S,
    momentum: S,
    /// The velocity `v`, in the flat order of the parameters.
    velocity: Vec<S>,
}

impl<S: Float> Sgd<S> {
    /// An optimiser for parameters shaped like `params`, with learning rate `rate` and
    /// no momentum. Allocates the velocity, one float per parameter.
    ///
    /// ```
    /// use ad_runtime::optim::Sgd;
    ///
    /// let mut p = [1.0_f32, -2.0];
    /// let mut sgd = Sgd::new(&p, 0.5);
    /// sgd.step(&mut p, &[2.0, 2.0]);
    /// assert_eq!(p, [0.0, -3.0]);
    /// ```
    pub fn new<P: Tangent<Scalar = S>>(params: &P, rate: S) -> Self {
        Sgd {
            rate,
            momentum: S::ZERO,
            velocity: vec![S::ZERO; params.len()],
        }
    }

    /// The same optimiser with momentum `momentum` (`μ`, usually 0.9).
    ///
    /// ```
    /// use ad_runtime::optim::Sgd;
    ///
    /// let mut p = vec![0.0];
    /// let mut sgd = Sgd::new(&p, 1.0).with_momentum(0.5);
    /// sgd.step(&mut p, &vec![1.0]); // v = 1
    /// sgd.step(&mut p, &vec![1.0]); // v = 0.5 · 1 + 1
    /// assert_eq!(p, [-2.5]);
    /// ```
    #[must_use]
    pub fn with_momentum(self, momentum: S) -> Self {
        Sgd { momentum, ..self }
    }

    /// The learning rate `η`.
    ///
    /// ```
    /// use ad_runtime::optim::Sgd;
    ///
    /// assert_eq!(Sgd::new(&0.0_f64, 0.1).rate(), 0.1);
    /// ```
    pub fn rate(&self) -> S {
        self.rate
    }

    /// Changes the learning rate, for a schedule; the velocity is kept.
    ///
    /// ```
    /// use ad_runtime::optim::Sgd;
    ///
    /// let mut sgd = Sgd::new(&0.0_f64, 0.1);
    /// sgd.set_rate(0.05);
    /// assert_eq!(sgd.rate(), 0.05);
    /// ```
    pub fn set_rate(&mut self, rate: S) {
        self.rate = rate;
    }

    /// One step: updates the velocity with the gradient `grad` and moves `params`,
    /// in place, without allocating.
    ///
    /// # Panics
    ///
    /// Panics if `params` or `grad` does not hold as many floats as the parameters
    /// the optimiser was made for, or if their shapes differ.
    ///
    /// ```
    /// use ad_runtime::optim::Sgd;
    ///
    /// let mut p = 1.0_f64;
    /// Sgd::new(&p, 0.25).step(&mut p, &2.0);
    /// assert_eq!(p, 0.5);
    /// ```
    #[track_caller]
    pub fn step<P: Tangent<Scalar = S>>(&mut self, params: &mut P, grad: &P) {
        assert_state_len("Sgd", self.velocity.len(), params.len());
        let Sgd {
            rate,
            momentum,
            ref mut velocity,
        } = *self;
        let mut velocity = velocity.iter_mut();
        params.zip_map_floats(grad, |p, g| {
            let v = velocity.next().expect("one velocity per parameter");
            *v = momentum * *v + g;
            p - rate * *v
        });
    }
}

/// Adam (Kingma and Ba, 2015): steps scaled per parameter by running averages of the
/// gradient and of its square.
///
/// With learning rate `η`, decay rates `β₁`, `β₂` and `ε`, step `t = 1, 2, …`
/// updates the moments `m`, `v` (zero at first) and the parameters `p` with the
/// gradient `g`:
///
/// ```text
/// m ← β₁ m + (1 − β₁) g
/// v ← β₂ v + (1 − β₂) g²
/// p ← p − η m̂ / (√v̂ + ε),   where m̂ = m / (1 − β₁ᵗ), v̂ = v / (1 − β₂ᵗ)
/// ```
///
/// as in the paper and PyTorch's `Adam`. The defaults are `β₁ = 0.9`,
/// `β₂ = 0.999`, `ε = 1e-8`. The first steps move each parameter by about `η`
/// against the sign of its gradient, whatever the gradient's scale.
///
/// # Example
///
/// ```
/// use ad_runtime::optim::Adam;
///
/// // Minimise f(p) = (p₀ − 3)² + 100 (p₁ + 1)²: badly scaled, which Adam absorbs.
/// let mut p = vec![0.0_f64, 0.0];
/// let mut g = vec![0.0; 2];
/// let mut adam = Adam::new(&p, 0.05);
/// for _ in 0..2000 {
///     g[0] = 2.0 * (p[0] - 3.0);
///     g[1] = 200.0 * (p[1] + 1.0);
///     adam.step(&mut p, &g);
/// }
/// assert!((p[0] - 3.0).abs() < 1e-3 && (p[1] + 1.0).abs() < 1e-3, "{p:?}");
/// ```
#[derive(Clone, Debug)]
pub struct Adam<S: Float> {
    rate: S,
    beta1: S,
    beta2: S,
    epsilon: S,
    /// `β₁ᵗ` and `β₂ᵗ` after `t` steps.
    beta1_power: S,
    beta2_power: S,
    /// The number of steps taken, `t`.
    steps: u64,
    /// The first moment `m`, in the flat order of the parameters.
    m: Vec<S>,
    /// The second moment `v`, in the flat order of the parameters.
    v: Vec<S>,
}

impl<S: Float> Adam<S> {
    /// An optimiser for parameters shaped like `params`, with learning rate `rate`
    /// and the default `β₁ = 0.9`, `β₂ = 0.999`, `ε = 1e-8`. Allocates the two
    /// moments, one float each per parameter.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// let mut p = vec![1.0_f64, 1.0];
    /// let mut adam = Adam::new(&p, 0.1);
    /// adam.step(&mut p, &vec![4.0, -0.001]);
    /// // The first step moves each parameter by the rate, against its gradient.
    /// assert!((p[0] - 0.9).abs() < 1e-6 && (p[1] - 1.1).abs() < 1e-4, "{p:?}");
    /// ```
    pub fn new<P: Tangent<Scalar = S>>(params: &P, rate: S) -> Self {
        let n = params.len();
        Adam {
            rate,
            beta1: S::from_f64(0.9),
            beta2: S::from_f64(0.999),
            epsilon: S::from_f64(1e-8),
            beta1_power: S::ONE,
            beta2_power: S::ONE,
            steps: 0,
            m: vec![S::ZERO; n],
            v: vec![S::ZERO; n],
        }
    }

    /// The same optimiser with decay rates `beta1` (`β₁`, for the gradient's average)
    /// and `beta2` (`β₂`, for its square's), each in `[0, 1)`.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// let adam = Adam::new(&vec![0.0_f64; 3], 1e-3).with_betas(0.8, 0.99);
    /// assert_eq!(adam.betas(), (0.8, 0.99));
    /// ```
    #[must_use]
    pub fn with_betas(self, beta1: S, beta2: S) -> Self {
        Adam {
            beta1,
            beta2,
            ..self
        }
    }

    /// The same optimiser with `epsilon` (`ε`), the term that keeps the step finite
    /// where the gradient's average square is near zero.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// let adam = Adam::new(&0.0_f32, 1e-3).with_epsilon(1e-6);
    /// assert_eq!(adam.epsilon(), 1e-6);
    /// ```
    #[must_use]
    pub fn with_epsilon(self, epsilon: S) -> Self {
        Adam { epsilon, ..self }
    }

    /// The learning rate `η`.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// assert_eq!(Adam::new(&0.0_f64, 0.01).rate(), 0.01);
    /// ```
    pub fn rate(&self) -> S {
        self.rate
    }

    /// Changes the learning rate, for a schedule; the moments are kept.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// let mut adam = Adam::new(&0.0_f64, 0.01);
    /// adam.set_rate(0.001);
    /// assert_eq!(adam.rate(), 0.001);
    /// ```
    pub fn set_rate(&mut self, rate: S) {
        self.rate = rate;
    }

    /// The decay rates `(β₁, β₂)`.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// assert_eq!(Adam::new(&0.0_f64, 0.01).betas(), (0.9, 0.999));
    /// ```
    pub fn betas(&self) -> (S, S) {
        (self.beta1, self.beta2)
    }

    /// `ε`.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// assert_eq!(Adam::new(&0.0_f64, 0.01).epsilon(), 1e-8);
    /// ```
    pub fn epsilon(&self) -> S {
        self.epsilon
    }

    /// The number of steps taken, `t`.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// let mut p = 0.0_f64;
    /// let mut adam = Adam::new(&p, 0.01);
    /// adam.step(&mut p, &1.0);
    /// assert_eq!(adam.steps(), 1);
    /// ```
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// One step: updates the moments with the gradient `grad` and moves `params`, in
    /// place, without allocating.
    ///
    /// # Panics
    ///
    /// Panics if `params` or `grad` does not hold as many floats as the parameters
    /// the optimiser was made for, or if their shapes differ.
    ///
    /// ```
    /// use ad_runtime::optim::Adam;
    ///
    /// let mut p = [0.0_f32; 2];
    /// let mut adam = Adam::new(&p, 0.5);
    /// adam.step(&mut p, &[1.0, -3.0]);
    /// assert!((p[0] + 0.5).abs() < 1e-6 && (p[1] - 0.5).abs() < 1e-6, "{p:?}");
    /// ```
    #[track_caller]
    pub fn step<P: Tangent<Scalar = S>>(&mut self, params: &mut P, grad: &P) {
        assert_state_len("Adam", self.m.len(), params.len());
        self.steps += 1;
        self.beta1_power *= self.beta1;
        self.beta2_power *= self.beta2;
        let Adam {
            rate,
            beta1,
            beta2,
            epsilon,
            beta1_power,
            beta2_power,
            ref mut m,
            ref mut v,
            ..
        } = *self;
        let (correction1, correction2) = (S::ONE - beta1_power, S::ONE - beta2_power);
        let mut moments = m.iter_mut().zip(v.iter_mut());
        params.zip_map_floats(grad, |p, g| {
            let (m, v) = moments.next().expect("one moment per parameter");
            *m = beta1 * *m + (S::ONE - beta1) * g;
            *v = beta2 * *v + (S::ONE - beta2) * g * g;
            let m_hat = *m / correction1;
            let v_hat = *v / correction2;
            p - rate * m_hat / (v_hat.sqrt() + epsilon)
        });
    }
}

/// Panics unless the parameters hold as many floats as the optimiser's state.
#[track_caller]
fn assert_state_len(optimiser: &str, state: usize, params: usize) {
    assert_eq!(
        state, params,
        "{optimiser}::step: the parameters hold {params} floats but the optimiser was made for {state}"
    );
}

#[cfg(test)]
mod tests {
    use super::{Adam, Sgd};
    use crate::Tangent;

    /// The gradient of `f(p) = Σᵢ aᵢ (pᵢ − cᵢ)²`, a quadratic with its minimum at `c`.
    fn quadratic_gradient(a: &[f64], c: &[f64], p: &[f64], g: &mut [f64]) {
        for i in 0..p.len() {
            g[i] = 2.0 * a[i] * (p[i] - c[i]);
        }
    }

    const A: [f64; 3] = [1.0, 10.0, 0.1];
    const C: [f64; 3] = [3.0, -1.0, 0.5];

    #[test]
    fn sgd_without_momentum_is_gradient_descent() {
        let mut p = vec![1.0, 2.0];
        let mut sgd = Sgd::new(&p, 0.1);
        sgd.step(&mut p, &vec![1.0, -2.0]);
        assert_eq!(p, [0.9, 2.2]);
        sgd.step(&mut p, &vec![1.0, -2.0]);
        assert_eq!(p, [0.8, 2.4000000000000004]);
    }

    #[test]
    fn sgd_momentum_accumulates_the_velocity() {
        // v₁ = g₁, v₂ = μ v₁ + g₂, v₃ = μ v₂ + g₃, with μ = 0.5 and η = 1.
        let mut p = 0.0_f64;
        let mut sgd = Sgd::new(&p, 1.0).with_momentum(0.5);
        let mut trajectory = Vec::new();
        for g in [4.0, 2.0, -8.0] {
            sgd.step(&mut p, &g);
            trajectory.push(p);
        }
        // v = 4, 4, -6: p = -4, -8, -2.
        assert_eq!(trajectory, [-4.0, -8.0, -2.0]);
    }

    #[test]
    fn sgd_with_momentum_converges_on_a_quadratic() {
        let mut p = vec![0.0; 3];
        let mut g = vec![0.0; 3];
        let mut sgd = Sgd::new(&p, 0.04).with_momentum(0.9);
        for _ in 0..2000 {
            quadratic_gradient(&A, &C, &p, &mut g);
            sgd.step(&mut p, &g);
        }
        for i in 0..3 {
            assert!((p[i] - C[i]).abs() < 1e-8, "{p:?}");
        }
    }

    #[test]
    fn momentum_converges_faster_than_plain_descent_when_badly_conditioned() {
        let distance_after = |momentum: f64| {
            let mut p = vec![0.0; 3];
            let mut g = vec![0.0; 3];
            let mut sgd = Sgd::new(&p, 0.04).with_momentum(momentum);
            for _ in 0..200 {
                quadratic_gradient(&A, &C, &p, &mut g);
                sgd.step(&mut p, &g);
            }
            (0..3).map(|i| (p[i] - C[i]).abs()).fold(0.0, f64::max)
        };
        let (plain, heavy) = (distance_after(0.0), distance_after(0.9));
        // Without momentum the flat direction (a = 0.1) closes 0.8% a step: 0.5 · 0.992²⁰⁰ ≈ 0.1.
        assert!(
            heavy < 1e-3 && plain > 0.05,
            "plain {plain}, momentum {heavy}"
        );
    }

    #[test]
    fn adam_first_steps_match_hand_computed_values() {
        // η = 0.1, β₁ = 0.9, β₂ = 0.999, ε = 1e-8, from p = 1 with gradients 2, −1, 0.5:
        //
        // t = 1: m = 0.2,   v = 0.004,       m̂ = 0.2 / 0.1 = 2,
        //        v̂ = 0.004 / 0.001 = 4,      p = 1 − 0.1 · 2 / (2 + 1e-8) = 0.9000000005
        // t = 2: m = 0.08,  v = 0.004996,    m̂ = 0.08 / 0.19 = 0.4210526316,
        //        v̂ = 0.004996 / 0.001999 = 2.4992496248,
        //        p = 0.9000000005 − 0.1 · 0.4210526316 / 1.5809015 = 0.8733662967
        // t = 3: m = 0.122, v = 0.005241004, m̂ = 0.122 / 0.271 = 0.4501845018,
        //        v̂ = 0.005241004 / 0.002997001 = 1.7487494999,
        //        p = 0.8733662967 − 0.1 · 0.4501845018 / 1.3224029 = 0.8393233821
        let mut p = 1.0_f64;
        let mut adam = Adam::new(&p, 0.1);
        let mut trajectory = Vec::new();
        for g in [2.0, -1.0, 0.5] {
            adam.step(&mut p, &g);
            trajectory.push(p);
        }
        let hand = [0.900_000_000_5, 0.873_366_296_7, 0.839_323_382_1];
        for (step, (p, hand)) in trajectory.iter().zip(hand).enumerate() {
            assert!((p - hand).abs() < 1e-10, "step {}: {p} vs {hand}", step + 1);
        }
        assert_eq!(adam.steps(), 3);
    }

    #[test]
    fn adam_moves_each_parameter_by_the_rate_at_first_whatever_the_scale() {
        let mut p = vec![0.0_f64, 0.0, 0.0];
        let mut adam = Adam::new(&p, 0.01);
        adam.step(&mut p, &vec![1e6, -1e-3, 0.0]);
        // g / √(g²) = ±1, up to ε; a zero gradient does not move.
        assert!((p[0] + 0.01).abs() < 1e-12, "{p:?}");
        assert!((p[1] - 0.01).abs() < 1e-6, "{p:?}");
        assert_eq!(p[2], 0.0);
    }

    #[test]
    fn adam_converges_on_a_badly_scaled_quadratic() {
        let mut p = vec![0.0; 3];
        let mut g = vec![0.0; 3];
        let mut adam = Adam::new(&p, 0.05);
        for step in 0..5000 {
            if step == 3000 {
                adam.set_rate(0.005);
            }
            quadratic_gradient(&A, &C, &p, &mut g);
            adam.step(&mut p, &g);
        }
        for i in 0..3 {
            assert!((p[i] - C[i]).abs() < 1e-4, "{p:?}");
        }
    }

    #[test]
    fn adam_in_f32() {
        let mut p = [0.0_f32; 2];
        let mut adam = Adam::new(&p, 0.05_f32);
        for _ in 0..3000 {
            let g = [2.0 * (p[0] - 1.5), 2.0 * (p[1] + 0.5)];
            adam.step(&mut p, &g);
        }
        assert!(
            (p[0] - 1.5).abs() < 1e-3 && (p[1] + 0.5).abs() < 1e-3,
            "{p:?}"
        );
    }

    #[test]
    fn a_step_with_parameters_of_another_size_panics() {
        let result = std::panic::catch_unwind(|| {
            let mut adam = Adam::new(&vec![0.0; 2], 0.1);
            let mut p = vec![0.0; 3];
            let g = p.zero();
            adam.step(&mut p, &g);
        });
        assert!(result.is_err(), "a step with 3 parameters for 2 must panic");
    }
}
