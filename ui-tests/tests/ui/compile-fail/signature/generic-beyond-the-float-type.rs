use ad_runtime::Float;
use ad_runtime::differentiate;

// One type parameter, the float type, is supported; a second is not.
#[differentiate]
fn f<T: Float, S: Copy>(x: T, s: S) -> T {
    let _ = s;
    x * x
}

fn main() {}
