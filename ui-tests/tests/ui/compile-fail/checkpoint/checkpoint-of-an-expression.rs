use ad_runtime::{checkpoint, differentiate};

#[differentiate]
fn step(x: f64) -> f64 {
    x.sin()
}

// `checkpoint` marks one call of a differentiated function, not arithmetic.
#[differentiate]
fn rollout(x0: f64, steps: usize) -> f64 {
    let mut x = x0;
    for _ in 0..steps {
        x = checkpoint(step(x) * 0.5);
    }
    x
}

fn main() {}
