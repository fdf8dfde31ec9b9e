use ad_runtime::differentiate;

#[differentiate]
fn g(x: f64) -> f64 {
    x.sin()
}

// `_hvp` calls `g_jvp_all` and `g_hvp_all`, which only `hvp` on `g` makes.
#[differentiate(vjp, hvp)]
fn f(x: f64) -> f64 {
    g(x) * x
}

fn main() {}
