use ad_runtime::differentiate;

#[differentiate(jvp)]
fn g(x: f64) -> f64 {
    x.sin()
}

// The twin of `f_jvp` would be forward mode over a call of `g_jvp_all`:
// not supported yet (the twin of `f_vjp` supports calls of `hvp` callees).
#[differentiate(jvp, nested)]
fn f(x: f64) -> f64 {
    g(x) * x
}

fn main() {}
