use ad_runtime::differentiate;

// `g` has only `g_vjp`: a function differentiated with `jvp` calls `g_jvp`.
#[differentiate]
fn g(x: f64) -> f64 {
    x.sin()
}

#[differentiate(jvp)]
fn f(x: f64) -> f64 {
    g(x) * x
}

fn main() {}
