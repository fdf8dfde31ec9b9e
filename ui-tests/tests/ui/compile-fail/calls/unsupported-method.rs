use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    x.midpoint(1.0) * x
}

fn main() {}
