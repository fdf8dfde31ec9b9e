use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    // The names the rejected pattern binds raise no further error at `x[n]`.
    let Some(n) = x.len().checked_sub(1) else {
        return 0.0;
    };
    x[n]
}

fn main() {}
