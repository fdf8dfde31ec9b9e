use ad_runtime::differentiate;

// Settings by value: their numbers are read as constants, but a field used
// as a buffer is not supported.
#[derive(Clone)]
struct Settings {
    weights: Vec<f64>,
    scale: f64,
}

#[differentiate]
fn weighted(x: &[f64], cfg: Settings) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += cfg.weights[i] * x[i] * cfg.scale;
    }
    s
}

fn main() {}
