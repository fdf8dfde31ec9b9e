use ad_runtime::differentiate;

#[differentiate]
fn f(x: &f64, y: f64) -> f64 {
    y * 2.0
}

fn main() {}
