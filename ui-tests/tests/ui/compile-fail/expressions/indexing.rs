use ad_runtime::differentiate;

fn weights() -> [f64; 2] {
    [1.0, 2.0]
}

// A table outside the function is read in place (`WEIGHTS[1]`); what a
// call returns is not a buffer the macro can index.
#[differentiate]
fn f(x: f64) -> f64 {
    x * weights()[1]
}

fn main() {}
