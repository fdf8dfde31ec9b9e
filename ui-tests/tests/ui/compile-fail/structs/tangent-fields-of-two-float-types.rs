use ad_runtime::Tangent;

#[derive(Clone, Tangent)]
struct Params {
    w: Vec<f64>,
    b: f32,
}

fn main() {}
