use ad_runtime::custom_vjp;

// The rule must take `(x, out, d_out)` and return `d_x`: it forgot the output.
#[custom_vjp(softplus_rule)]
fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

fn softplus_rule(x: f64, d_out: f64) -> f64 {
    d_out / (1.0 + (-x).exp())
}

fn main() {}
