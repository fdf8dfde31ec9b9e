use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) {
    let _y = x * x;
}

fn main() {
    let (_out, _d_x) = f_vjp(1.0, 1.0);
}
