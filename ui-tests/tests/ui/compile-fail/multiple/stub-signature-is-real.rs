use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    x.next_up() * x
}

fn gradient(x: f64) -> f64 {
    let (_, d_x) = f_vjp(x);
    d_x
}

fn main() {}
