use ad_runtime::Tangent;

#[derive(Clone, Tangent)]
struct Layer {
    w: Vec<f64>,
    #[tangent(skp)]
    n_in: usize,
}

fn main() {}
