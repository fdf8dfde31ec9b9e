use ad_runtime::differentiate;

#[derive(Clone, Copy)]
enum Act {
    Relu,
    Leaky(f64),
}

#[differentiate]
fn act(x: f64, kind: Act) -> f64 {
    match kind {
        Act::Relu => x.max(0.0),
        Act::Leaky(slope) => x.max(slope * x),
    }
}

fn main() {
    let _ = act(1.0, Act::Leaky(0.1));
}
