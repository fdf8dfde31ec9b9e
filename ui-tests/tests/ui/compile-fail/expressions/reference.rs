use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let _r = &x;
    x * 2.0
}

fn main() {}
