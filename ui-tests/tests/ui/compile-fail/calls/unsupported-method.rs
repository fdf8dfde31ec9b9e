use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    x.next_up() * x
}

fn main() {}
