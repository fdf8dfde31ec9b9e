use ad_runtime::differentiate;

struct Point {
    x: f64,
    y: f64,
}

impl Point {
    fn norm(&self) -> f64 {
        self.x.hypot(self.y)
    }
}

// A local struct used only by its fields is supported; one whose method is
// called is not: the macro cannot see into `norm`.
#[differentiate]
fn radius(a: f64, b: f64) -> f64 {
    let p = Point { x: a, y: b };
    p.norm() + p.x
}

fn main() {
    let _ = radius(3.0, 4.0);
}
