use ad_runtime::differentiate;

struct Spring;

impl Spring {
    #[differentiate]
    fn energy(&mut self, x: f64) -> f64 {
        0.5 * x * x
    }
}

fn main() {
    let _ = Spring.energy(1.0);
    // The stub keeps the parameters the signature accepted.
    let (_out, _d_x): (f64, f64) = Spring::energy_vjp(1.0, 1.0);
}
