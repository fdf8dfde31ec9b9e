use ad_runtime::{Tangent, differentiate};

#[derive(Clone, Tangent)]
struct Line {
    slope: f64,
    offset: f64,
}

// Vector forward mode has no lanes of a struct's tangent yet.
#[differentiate(jvp_lanes)]
fn at(line: &Line, x: f64) -> f64 {
    line.slope * x + line.offset
}

fn main() {}
