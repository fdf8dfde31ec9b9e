use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    loop {
        y *= x;
        break;
    }
    println!("{y}");
    let z = x.floor();
    y + z
}

fn main() {}
