use ad_runtime::differentiate;

#[allow(unused_unsafe)] // The block is what is rejected, not whether it is needed.
#[differentiate]
fn f(x: f64) -> f64 {
    unsafe { x * x }
}

fn main() {}
