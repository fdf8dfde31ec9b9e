use ad_runtime::differentiate;

#[differentiate]
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

#[differentiate]
fn polar_or_not(x: f64, y: f64) -> (f64, f64) {
    if x < 0.0 {
        let t = polar(x, y);
        return t;
    }
    (x, y)
}

fn main() {}
