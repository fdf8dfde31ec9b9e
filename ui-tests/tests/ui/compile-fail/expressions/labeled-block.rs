use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let y = 'clamp: {
        if x > 1.0 {
            break 'clamp 1.0;
        }
        x
    };
    y * y
}

fn main() {}
