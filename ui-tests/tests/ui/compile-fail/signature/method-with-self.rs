use ad_runtime::differentiate;

struct Spring {
    k: f64,
}

impl Spring {
    // `&self` is supported; a method that changes its struct is not.
    #[differentiate]
    fn energy(&mut self, x: f64) -> f64 {
        0.5 * self.k * x * x
    }
}

fn main() {
    let _ = Spring { k: 1.0 }.k;
}
