use ad_runtime::differentiate;

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

#[differentiate]
fn f(x: f64) -> f64 {
    let y = square!(x);
    y + x
}

fn main() {}
