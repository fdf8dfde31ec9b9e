use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    match n {
        0 => x,
        mut m => {
            m += 1;
            x * m as f64
        }
    }
}

fn main() {}
