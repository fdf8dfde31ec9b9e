use ad_runtime::custom_vjp;

#[custom_vjp(doubled_rule)]
fn doubled(xs: &[f64]) -> Vec<f64> {
    xs.iter().map(|x| 2.0 * x).collect()
}

fn doubled_rule(_xs: &[f64], _d_xs: &mut [f64], _out: Vec<f64>, _d_out: &[f64]) {}

fn main() {}
