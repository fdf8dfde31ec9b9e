use ad_runtime::differentiate;

fn square(x: &f64) -> f64 {
    x * x
}

#[differentiate]
fn f(x: f64) -> f64 {
    square(&x)
}

fn main() {}
