use ad_runtime::differentiate;

#[differentiate]
fn configured(x: f64, y: f64) -> f64 {
    let v = [x, #[cfg(debug_assertions)] y];
    v[0]
}

fn main() {}
