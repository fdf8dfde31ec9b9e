use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y *= x;
    }
    println!("{y}");
    let z = x.floor();
    y + z
}

fn main() {}
