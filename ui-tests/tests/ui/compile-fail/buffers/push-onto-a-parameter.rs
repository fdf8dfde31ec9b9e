use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64, out: &mut Vec<f64>) {
    out.push(x * x);
}

fn main() {}
