use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let g = |v: f64| {
        if v < 0.0 {
            return 0.0;
        }
        v * v
    };
    g(x)
}

fn main() {}
