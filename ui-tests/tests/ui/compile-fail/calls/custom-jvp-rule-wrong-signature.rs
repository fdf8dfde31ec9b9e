use ad_runtime::custom_jvp;

// The rule must take `(x, t_x)` and return `(out, t_out)`: it returns the
// tangent alone.
#[custom_jvp(softplus_rule)]
fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

fn softplus_rule(x: f64, t_x: f64) -> f64 {
    t_x / (1.0 + (-x).exp())
}

fn main() {}
