use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    let mut y = x;
    let mut k = n;
    while let 1.. = k {
        y *= 2.0;
        k -= 1;
    }
    y
}

fn main() {}
