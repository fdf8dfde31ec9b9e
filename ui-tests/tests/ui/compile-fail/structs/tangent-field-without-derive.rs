use ad_runtime::Tangent;

// `Layer` has no `#[derive(Tangent)]`: the error is at the field that holds it.
#[derive(Clone)]
struct Layer {
    w: Vec<f64>,
}

#[derive(Clone, Tangent)]
struct Network {
    hidden: Layer,
    temperature: f64,
}

fn main() {}
