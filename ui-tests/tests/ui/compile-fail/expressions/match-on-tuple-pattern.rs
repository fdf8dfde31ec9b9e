use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    match (n, 1) {
        (0, _) => x,
        _ => x * x,
    }
}

fn main() {}
