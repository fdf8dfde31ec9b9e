use ad_runtime::differentiate;

#[differentiate]
fn product(v: Vec<f64>) -> f64 {
    v[0] * v[1]
}

fn main() {}
