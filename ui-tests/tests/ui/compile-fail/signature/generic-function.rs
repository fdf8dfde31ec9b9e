use ad_runtime::Float;
use ad_runtime::differentiate;

#[differentiate]
fn f<T: Float>(x: T) -> T {
    x * x
}

fn main() {}
