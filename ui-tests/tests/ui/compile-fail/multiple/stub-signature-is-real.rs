use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    x.midpoint(1.0) * x
}

fn gradient(x: f64) -> f64 {
    let (_, d_x) = f_vjp(x);
    d_x
}

fn main() {}
