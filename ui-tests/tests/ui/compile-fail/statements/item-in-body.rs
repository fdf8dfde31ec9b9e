use ad_runtime::differentiate;

// `use`, `const`, `static` and `fn` items are supported; other items are not.
#[differentiate]
fn f(x: f64) -> f64 {
    const SCALE: f64 = 2.0;
    struct Unit;
    let _ = Unit;
    x * SCALE
}

fn main() {}
