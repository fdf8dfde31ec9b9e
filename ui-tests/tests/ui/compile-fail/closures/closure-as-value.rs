use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let g = |v: f64| v * v;
    let h = g;
    h(x)
}

fn main() {}
