use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    (|v: f64| v * v)(x)
}

fn main() {}
