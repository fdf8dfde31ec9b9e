use ad_runtime::differentiate;

#[derive(Clone, Copy)]
enum Act {
    Relu,
    Tanh,
}

#[differentiate]
fn act(x: f64, kind: Act) -> f64 {
    match kind {
        Act::Relu => x.max(0.0),
        Act::Tanh => x.tanh(),
    }
}

#[differentiate]
fn twice(x: f64, kind: Act) -> f64 {
    act(act(x, kind), Act::Tanh)
}

fn main() {
    let _ = twice(1.0, Act::Relu);
}
