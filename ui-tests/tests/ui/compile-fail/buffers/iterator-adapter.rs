use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &[f64]) -> f64 {
    xs.iter().flat_map(|&x| [x, x]).sum()
}

fn main() {}
