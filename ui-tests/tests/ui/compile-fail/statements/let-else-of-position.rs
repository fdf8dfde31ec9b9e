use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let Some(i) = x.iter().position(|&v| v > 0.0) else {
        return 0.0;
    };
    x[i]
}

fn main() {}
