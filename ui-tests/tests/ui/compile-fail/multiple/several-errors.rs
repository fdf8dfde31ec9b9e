use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    for w in std::iter::successors(Some(1.0), |v| Some(v * 2.0)).take(2) {
        y *= x * w;
    }
    println!("{y}");
    let z = x.next_up();
    y + z
}

fn main() {}
