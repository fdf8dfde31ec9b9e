use ad_runtime::differentiate;

#[differentiate]
fn f(xs: &Vec<f64>) -> f64 {
    let v = xs.clone();
    v[0]
}

fn main() {}
