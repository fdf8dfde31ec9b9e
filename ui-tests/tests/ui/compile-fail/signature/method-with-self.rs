use ad_runtime::differentiate;

struct Spring {
    k: f64,
}

impl Spring {
    #[differentiate]
    fn energy(&self, x: f64) -> f64 {
        0.5 * x * x
    }
}

fn main() {
    let _ = Spring { k: 1.0 }.k;
}
