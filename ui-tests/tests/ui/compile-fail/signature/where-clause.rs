use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64
where
    f64: Copy,
{
    x * x
}

fn main() {}
