use ad_runtime::custom_jvp;

#[custom_jvp]
fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

fn main() {}
