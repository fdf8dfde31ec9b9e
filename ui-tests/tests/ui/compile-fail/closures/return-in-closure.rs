use ad_runtime::differentiate;

// A guard (`if c { return e; }` before the rest) works; a `return` in a loop does not.
#[differentiate]
fn f(x: f64) -> f64 {
    let g = |v: f64| {
        for k in 0..3 {
            if v * f64::from(k) > 1.0 {
                return v;
            }
        }
        v * v
    };
    g(x)
}

fn main() {}
