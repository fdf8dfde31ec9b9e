use ad_runtime::custom_vjp;

#[custom_vjp(norm_rule)]
fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

fn norm_rule(a: [f64; 3], out: f64, d_out: f64) -> [f64; 3] {
    [d_out * a[0] / out, d_out * a[1] / out, d_out * a[2] / out]
}

fn main() {}
