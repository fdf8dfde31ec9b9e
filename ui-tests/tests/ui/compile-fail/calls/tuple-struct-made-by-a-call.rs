use ad_runtime::differentiate;

struct Pt(f64, f64);

// A tuple struct made by a call is a value the macro cannot see into; a
// struct with named fields bound by a `let` is read by its fields.
#[differentiate]
fn radius(a: f64, b: f64) -> f64 {
    let p = Pt(a, b);
    p.0.hypot(p.1)
}

fn main() {
    let _ = radius(3.0, 4.0);
}
