use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f32 {
    x * 2.0
}

fn main() {}
