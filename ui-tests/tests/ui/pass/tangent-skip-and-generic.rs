// `#[tangent(skip)]` fields and a struct generic over its float type, in a
// crate that denies warnings: the derive's expansion adds none.
#![deny(warnings)]
#![forbid(unsafe_code)]

use ad_runtime::optim::Adam;
use ad_runtime::{Float, Tangent, differentiate};

/// Public, with a private field type and a skipped name.
#[derive(Clone, Debug, PartialEq, Tangent)]
pub struct Model<T: Float> {
    layer: Layer<T>,
    #[tangent(skip)]
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Tangent)]
struct Layer<T: Float>(Vec<T>, T, #[tangent(skip)] usize);

#[differentiate]
fn response<T: Float>(p: &Model<T>, x: T) -> T {
    let mut s = p.layer.1;
    for i in 0..p.layer.2 {
        s += p.layer.0[i] * x;
    }
    s * s
}

fn main() {
    let mut p = Model {
        layer: Layer(vec![0.5_f32, -1.0], 0.25, 2),
        name: "model".to_string(),
    };
    let mut d_p = p.zero();
    // s = 0.25 + 0.5·2 − 1·2 = −0.75, y = s²: d/dwᵢ = 2 s x = −3, d/db = 2 s = −1.5,
    // d/dx = 2 s (w₀ + w₁) = 0.75.
    let (y, d_x) = response_vjp(&p, &mut d_p, 2.0, 1.0);
    assert_eq!((y, d_x), (0.5625, 0.75));
    assert_eq!(d_p.layer.to_flat(), [-3.0, -3.0, -1.5]);
    assert_eq!((d_p.layer.2, d_p.name.as_str()), (2, "model"));
    let mut adam = Adam::new(&p, 0.1);
    adam.step(&mut p, &d_p);
    // Adam's first step moves each parameter by the rate, against its gradient.
    let moved = p.to_flat();
    for (p, expected) in moved.iter().zip([0.6, -0.9, 0.35]) {
        assert!((p - expected).abs() < 1e-6, "{moved:?}");
    }
    assert_eq!(p.name, "model");
}
