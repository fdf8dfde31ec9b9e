use ad_runtime::differentiate;

#[differentiate]
unsafe fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
