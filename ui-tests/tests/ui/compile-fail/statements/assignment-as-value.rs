use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut s = x;
    let _unit = s += x;
    s
}

fn main() {}
