use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) {
    let _y = x * x;
}

fn main() {}
