use ad_runtime::differentiate;

type Real = f64;

#[differentiate]
fn f(x: f32) -> f64 {
    x as Real
}

fn main() {}
