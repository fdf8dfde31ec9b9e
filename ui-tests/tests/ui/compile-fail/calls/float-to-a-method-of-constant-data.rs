use ad_runtime::differentiate;

struct Weight(f64);

impl Weight {
    fn apply(&self, x: f64) -> f64 {
        self.0 * x
    }
}

fn weight(k: usize) -> Weight {
    Weight(k as f64 * 0.5)
}

#[differentiate]
fn f(x: f64) -> f64 {
    let w = weight(2);
    w.apply(x)
}

fn main() {}
