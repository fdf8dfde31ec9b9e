use ad_runtime::differentiate;

macro_rules! square {
    ($e:expr) => {
        $e * $e
    };
}

#[differentiate]
fn f(x: f64) -> f64 {
    1.0 + square!(x)
}

fn main() {}
