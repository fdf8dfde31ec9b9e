use ad_runtime::differentiate;

#[differentiate(wrt(x, z))]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {}
