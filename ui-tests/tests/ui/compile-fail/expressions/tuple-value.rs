use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, y: f64) -> f64 {
    let p = (x, y);
    p.0 * p.1
}

fn main() {}
