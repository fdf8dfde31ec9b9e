// Forward mode's expansion is accepted by a crate that denies warnings:
// loops, branches, buffers, a `&mut` buffer, a struct, a call and a custom rule.
#![deny(warnings)]
#![forbid(unsafe_code)]

use ad_runtime::{Tangent, custom_jvp, differentiate};

#[derive(Clone, Tangent)]
struct Params {
    w: Vec<f64>,
    b: f64,
}

#[custom_jvp(square_rule)]
fn square(x: f64) -> f64 {
    x * x
}

fn square_rule(x: f64, t_x: f64) -> (f64, f64) {
    (x * x, 2.0 * x * t_x)
}

#[differentiate(jvp)]
fn model(p: &Params, xs: &[f64], ys: &mut [f64], flag: bool) -> f64 {
    let mut hidden = vec![0.0; xs.len()];
    for (h, (&x, &w)) in hidden.iter_mut().zip(xs.iter().zip(&p.w)) {
        *h = (w * x + p.b).tanh();
    }
    let mut total = 0.0;
    for i in 0..ys.len() {
        ys[i] = if flag { hidden[i] * ys[i] } else { hidden[i] };
        total += square(ys[i]);
    }
    let mut steps = 0;
    while total > 1.0 && steps < 10 {
        total *= 0.5;
        steps += 1;
    }
    total
}

fn main() {
    let p = Params { w: vec![0.5, -1.0], b: 0.1 };
    let t_p = Params { w: vec![0.0, 0.0], b: 1.0 };
    let xs = [0.3, 0.7];
    let mut ys = [1.0, 2.0];
    let mut t_ys = [0.0, 0.0];
    let (out, t_out) = model_jvp(&p, &t_p, &xs, &[0.0; 2], &mut ys, &mut t_ys, true);
    let mut ys_again = [1.0, 2.0];
    assert_eq!(out, model(&p, &xs, &mut ys_again, true));
    assert_eq!(ys, ys_again);
    // Along `b`, by finite differences.
    let h = 1e-6;
    let shifted = |b: f64| {
        let p = Params { w: p.w.clone(), b };
        model(&p, &xs, &mut [1.0, 2.0], true)
    };
    let fd = (shifted(0.1 + h) - shifted(0.1 - h)) / (2.0 * h);
    assert!((t_out - fd).abs() < 1e-6, "{t_out} vs {fd}");
}
