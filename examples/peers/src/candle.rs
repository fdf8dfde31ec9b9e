//! The workloads that candle can express as whole-tensor programs (W1, W2, W3, W4,
//! `lse`, `llsq`), each returning the value and the gradient from candle's autograd
//! (`Tensor::backward`) on the CPU, in `f64`.
//!
//! `ode`, `gmm` and `lstm` are not written here: see `docs/performance.md`.

use candle_core::{D, DType, Device, Result, Tensor, Var};

/// Value and gradient of `f` at `x`, a vector of `x.len()` entries.
fn value_and_gradient(x: &[f64], f: impl Fn(&Tensor) -> Result<Tensor>) -> Result<(f64, Vec<f64>)> {
    let var = Var::from_slice(x, x.len(), &Device::Cpu)?;
    let out = f(var.as_tensor())?;
    let grads = out.backward()?;
    let g = grads
        .get(var.as_tensor())
        .expect("a gradient")
        .to_vec1::<f64>()?;
    Ok((out.to_scalar::<f64>()?, g))
}

/// W1: `Σ (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)²`.
pub fn rosenbrock(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    let n = x.len();
    value_and_gradient(x, |x| {
        let head = x.narrow(0, 0, n - 1)?;
        let tail = x.narrow(0, 1, n - 1)?;
        let a = head.affine(-1.0, 1.0)?;
        let b = (tail - head.sqr()?)?;
        a.sqr()?.sum_all()? + (b.sqr()?.sum_all()? * 100.0)?
    })
}

/// The constants of W2: the batch as a `32 × 784` tensor and the labels one-hot.
pub struct MlpData {
    x: Tensor,
    one_hot: Tensor,
}

impl MlpData {
    /// Builds the tensors once, outside the timed code.
    pub fn new(x: &[f64], labels: &[usize], n_in: usize, n_classes: usize) -> Result<MlpData> {
        let n = labels.len();
        let mut one_hot = vec![0.0; n * n_classes];
        for (s, &c) in labels.iter().enumerate() {
            one_hot[s * n_classes + c] = 1.0;
        }
        Ok(MlpData {
            x: Tensor::from_slice(x, (n, n_in), &Device::Cpu)?,
            one_hot: Tensor::from_slice(&one_hot, (n, n_classes), &Device::Cpu)?,
        })
    }
}

/// W2: the MLP loss with the weights flat in one variable.
pub fn mlp(params: &[f64], data: &MlpData) -> Result<(f64, Vec<f64>)> {
    let (n_in, n_hidden, n_classes) = (784, 128, 10);
    value_and_gradient(params, |p| {
        let w1 = p.narrow(0, 0, n_hidden * n_in)?.reshape((n_hidden, n_in))?;
        let b1 = p.narrow(0, n_hidden * n_in, n_hidden)?;
        let w2_at = n_hidden * n_in + n_hidden;
        let w2 = p
            .narrow(0, w2_at, n_classes * n_hidden)?
            .reshape((n_classes, n_hidden))?;
        let b2 = p.narrow(0, w2_at + n_classes * n_hidden, n_classes)?;
        let h = data.x.matmul(&w1.t()?)?.broadcast_add(&b1)?.tanh()?;
        let z = h.matmul(&w2.t()?)?.broadcast_add(&b2)?;
        let lse = z.log_sum_exp(D::Minus1)?;
        let picked = (z * &data.one_hot)?.sum(D::Minus1)?;
        (lse - picked)?.mean_all()
    })
}

/// W3 on two scalar (0-dimensional) variables.
pub fn w3(x: f64, y: f64) -> Result<(f64, f64, f64)> {
    let vx = Var::from_tensor(&Tensor::new(x, &Device::Cpu)?)?;
    let vy = Var::from_tensor(&Tensor::new(y, &Device::Cpu)?)?;
    let (x, y) = (vx.as_tensor(), vy.as_tensor());
    let num = ((x.sin()? * y.exp()?)? + x.sqr()?.affine(1.0, 1.0)?.log()?)?;
    let out = (num / y.sqr()?.affine(1.0, 1.0)?)?;
    let grads = out.backward()?;
    let d_x = grads.get(x).expect("a gradient").to_scalar::<f64>()?;
    let d_y = grads.get(y).expect("a gradient").to_scalar::<f64>()?;
    Ok((out.to_scalar::<f64>()?, d_x, d_y))
}

/// W4 and `lse`: candle's `log_sum_exp` (shifted by the maximum inside).
pub fn lse(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    value_and_gradient(x, |x| x.log_sum_exp(0))
}

/// The constants of `llsq`: the `n × m` matrix of powers `tᵢʲ` and the targets.
pub struct LlsqData {
    powers: Tensor,
    targets: Tensor,
}

impl LlsqData {
    /// Builds the tensors once, outside the timed code.
    pub fn new(m: usize, n: usize) -> Result<LlsqData> {
        let mut powers = Vec::with_capacity(n * m);
        let mut targets = Vec::with_capacity(n);
        for i in 0..n {
            let t = -1.0 + (i as f64) * 2.0 / ((n - 1) as f64);
            targets.push(if t > 0.0 {
                1.0
            } else if t < 0.0 {
                -1.0
            } else {
                0.0
            });
            let mut power = 1.0;
            for _ in 0..m {
                powers.push(power);
                power *= t;
            }
        }
        Ok(LlsqData {
            powers: Tensor::from_slice(&powers, (n, m), &Device::Cpu)?,
            targets: Tensor::from_slice(&targets, (n, 1), &Device::Cpu)?.to_dtype(DType::F64)?,
        })
    }
}

/// `llsq`: `½ ‖s − T x‖²`.
pub fn llsq(x: &[f64], data: &LlsqData) -> Result<(f64, Vec<f64>)> {
    let m = x.len();
    value_and_gradient(x, |x| {
        let fit = data.powers.matmul(&x.reshape((m, 1))?)?;
        (data.targets.clone() - fit)?.sqr()?.sum_all()? * 0.5
    })
}
