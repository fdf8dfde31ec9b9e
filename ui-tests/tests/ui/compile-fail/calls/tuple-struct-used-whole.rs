use ad_runtime::differentiate;

struct Pt(f64, f64);

impl Pt {
    fn norm(&self) -> f64 {
        self.0.hypot(self.1)
    }
}

// A tuple struct made by a call is a local per field when it is read by
// its fields (`p.0.hypot(p.1)`); a method call uses it whole.
#[differentiate]
fn radius(a: f64, b: f64) -> f64 {
    let p = Pt(a, b);
    p.norm()
}

fn main() {
    let _ = radius(3.0, 4.0);
}
