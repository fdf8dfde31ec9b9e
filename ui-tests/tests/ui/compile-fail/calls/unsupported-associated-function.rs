use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    f64::next_up(x) * x
}

fn main() {}
