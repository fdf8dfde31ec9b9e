use ad_runtime::differentiate;

// A `fn` in the body is inlined like a closure: it must not be generic.
#[differentiate]
fn f(x: f64) -> f64 {
    fn sq<T: std::ops::Mul<Output = T> + Copy>(v: T) -> T {
        v * v
    }
    sq(x) + 1.0
}

fn main() {}
