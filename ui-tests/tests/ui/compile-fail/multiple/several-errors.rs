use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    while y < n as f64 {
        y *= x;
    }
    println!("{y}");
    let z = x.floor();
    y + z
}

fn main() {}
