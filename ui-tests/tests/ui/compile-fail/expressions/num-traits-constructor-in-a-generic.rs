// `T::from(2.0)` and `T::zero()` are num-traits habits; `ad_runtime::Float`
// writes them `T::from_f64(2.0)` and `T::ZERO`.
use ad_runtime::{Float, differentiate};

#[differentiate]
fn half<T: Float>(x: T) -> T {
    x / T::from(2.0)
}

#[differentiate]
fn start<T: Float>(x: T) -> T {
    T::zero() + x
}

fn main() {}
