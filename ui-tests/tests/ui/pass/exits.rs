// Loop labels, `loop` with `break value`, and early `return`, including from
// inside a branch used as a value.
#![deny(warnings)]

use ad_runtime::differentiate;

#[differentiate]
fn labeled(x: f64, n: usize) -> f64 {
    let mut y = x;
    'rows: for i in 0..n {
        if i == 2 {
            break 'rows;
        }
        y *= x;
    }
    y
}

#[differentiate]
fn loop_value(x: f64) -> f64 {
    loop {
        break x * x;
    }
}

#[differentiate]
fn clipped(x: f64) -> f64 {
    if x < 0.0 {
        return 0.0;
    }
    x * x
}

#[differentiate]
fn returns_from_else(x: f64) -> f64 {
    let y = if x > 0.0 { x.sqrt() } else { return 0.0 };
    y * y
}

fn main() {
    // Two iterations run: y = x³.
    assert_eq!(labeled_vjp(2.0, 5, 1.0), (labeled(2.0, 5), 12.0));
    assert_eq!(loop_value_vjp(3.0, 1.0), (loop_value(3.0), 6.0));
    assert_eq!(clipped_vjp(-1.0, 1.0), (clipped(-1.0), 0.0));
    assert_eq!(clipped_vjp(3.0, 1.0), (clipped(3.0), 6.0));
    assert_eq!(returns_from_else_vjp(-2.0, 1.0), (returns_from_else(-2.0), 0.0));
    let (out, d_x) = returns_from_else_vjp(4.0, 1.0);
    assert_eq!(out, returns_from_else(4.0));
    assert!((d_x - 1.0).abs() < 1e-15);
}
