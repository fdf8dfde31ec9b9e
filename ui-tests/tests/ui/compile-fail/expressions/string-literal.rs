use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let _s = "text";
    x
}

fn main() {}
