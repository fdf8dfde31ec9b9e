use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    let mut y = x;
    match n {
        0 => y = x * x,
        _ => (),
    }
    y
}

fn main() {}
