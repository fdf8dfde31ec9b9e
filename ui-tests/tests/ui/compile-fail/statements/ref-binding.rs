use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let ref y = x;
    y * 2.0
}

fn main() {}
