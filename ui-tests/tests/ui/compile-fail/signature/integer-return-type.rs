use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> i32 {
    (x * x) as i32
}

fn main() {}
