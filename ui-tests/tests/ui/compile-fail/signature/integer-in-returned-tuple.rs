use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> (f64, i32) {
    (x * x, 1)
}

fn main() {}
