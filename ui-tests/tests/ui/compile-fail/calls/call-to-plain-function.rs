use ad_runtime::differentiate;

fn square(v: f64) -> f64 {
    v * v
}

#[differentiate]
fn f(x: f64) -> f64 {
    square(x) + 1.0
}

fn main() {}
