use ad_runtime::custom_vjp;

#[custom_vjp]
fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

fn main() {}
