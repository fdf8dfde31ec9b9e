use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    loop {
        break x * x;
    }
}

fn main() {}
