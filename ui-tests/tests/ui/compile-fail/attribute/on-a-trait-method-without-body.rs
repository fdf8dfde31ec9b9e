use ad_runtime::differentiate;

trait Model {
    #[differentiate]
    fn energy(x: f64) -> f64;
}

fn main() {}
