use ad_runtime::{Tangent, differentiate};

trait Loss {
    fn loss(&self, x: &[f64]) -> f64;
}

#[derive(Clone, Tangent)]
struct Mse {
    target: Vec<f64>,
}

// The generated `loss_vjp` cannot live in a trait impl (rustc's E0407):
// differentiate an inherent method and call it from the trait's
// (docs/errors.md#rustc-method-not-member-of-trait).
impl Loss for Mse {
    #[differentiate(wrt(x))]
    fn loss(&self, x: &[f64]) -> f64 {
        x.iter().zip(&self.target).map(|(a, b)| (a - b).powi(2)).sum()
    }
}

fn main() {}
