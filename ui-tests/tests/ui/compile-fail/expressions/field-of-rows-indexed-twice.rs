use ad_runtime::{differentiate, Tangent};

#[derive(Tangent)]
pub struct Bodies {
    pub pos: Vec<[f64; 2]>,
    pub mass: Vec<f64>,
}

// The attribute does not see that `pos` holds rows.
#[differentiate]
fn spread(b: &Bodies) -> f64 {
    b.pos[0][0] * b.mass[0]
}

fn main() {}
