use ad_runtime::differentiate;

#[differentiate]
fn doubled_norm(mut a: [f64; 3]) -> f64 {
    a[0] *= 2.0;
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

fn main() {}
