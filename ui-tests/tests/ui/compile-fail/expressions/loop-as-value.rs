use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    let _unit = for _ in 0..n {
        y *= x;
    };
    y
}

fn main() {}
