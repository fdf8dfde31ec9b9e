use ad_runtime::Tangent;

#[derive(Tangent)]
enum Params {
    A(f64),
}

fn main() {}
