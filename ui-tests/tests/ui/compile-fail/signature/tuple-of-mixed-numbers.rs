use ad_runtime::differentiate;

// Floats with an integer in one tuple: its adjoint would not be a tuple of
// floats.
#[differentiate]
fn f(state: (f64, usize)) -> f64 {
    state.0 * state.1 as f64
}

fn main() {}
