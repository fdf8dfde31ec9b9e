// `mut` bindings in `match` arms and `()` arms in a statement `match`.
use ad_runtime::differentiate;

#[differentiate]
fn scaled(x: f64, n: i32) -> f64 {
    match n {
        0 => x,
        mut m => {
            m += 1;
            x * m as f64
        }
    }
}

#[differentiate]
fn squared_when_zero(x: f64, n: i32) -> f64 {
    let mut y = x;
    match n {
        0 => y = x * x,
        _ => (),
    }
    y
}

fn main() {
    assert_eq!(scaled_vjp(1.5, 0, 1.0), (scaled(1.5, 0), 1.0));
    assert_eq!(scaled_vjp(1.5, 2, 1.0), (scaled(1.5, 2), 3.0));
    assert_eq!(squared_when_zero_vjp(1.5, 0, 1.0), (squared_when_zero(1.5, 0), 3.0));
    assert_eq!(squared_when_zero_vjp(1.5, 7, 1.0), (squared_when_zero(1.5, 7), 1.0));
}
