use ad_runtime::differentiate;

#[differentiate(hvp)]
fn energy(p: [f64; 2]) -> f64 {
    p[0] * p[0] * p[1]
}

fn main() {}
