use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let g = |v: f64| v * v;
    assert!(g(x) >= 0.0);
    g(x)
}

fn main() {}
