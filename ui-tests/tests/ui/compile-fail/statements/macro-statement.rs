use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    println!("{x}");
    x * x
}

fn main() {}
