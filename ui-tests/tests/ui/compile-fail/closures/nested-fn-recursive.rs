use ad_runtime::differentiate;

// Inlining a `fn` that calls itself would never end.
#[differentiate]
fn f(x: f64) -> f64 {
    fn power(v: f64, n: u32) -> f64 {
        if n == 0 { 1.0 } else { v * power(v, n - 1) }
    }
    power(x, 3)
}

fn main() {}
