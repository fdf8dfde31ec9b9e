use ad_runtime::{differentiate, Tangent};

#[derive(Tangent)]
pub struct Particle {
    pub pos: [f64; 2],
    pub mass: f64,
}

// An array of structs: the fields go as buffers of their own.
#[differentiate]
fn energy(ps: &[Particle]) -> f64 {
    ps[0].mass * ps[1].mass
}

fn main() {}
