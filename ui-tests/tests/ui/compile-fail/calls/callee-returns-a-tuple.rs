use ad_runtime::differentiate;

#[differentiate]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

#[differentiate]
fn f(x: f64, y: f64) -> f64 {
    polar(x, y).0 * 2.0
}

fn main() {}
