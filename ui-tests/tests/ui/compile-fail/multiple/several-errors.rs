use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    for w in [1.0, 2.0].iter() {
        y *= x * w;
    }
    println!("{y}");
    let z = x.next_up();
    y + z
}

fn main() {}
