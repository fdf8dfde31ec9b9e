use ad_runtime::Tangent;

// A size beside the weights: not a parameter, so it must be skipped.
#[derive(Clone, Tangent)]
struct Layer {
    w: Vec<f64>,
    n_in: usize,
}

fn main() {}
