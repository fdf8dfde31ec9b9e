// A crate-root module called `ad_runtime`, with items named like the runtime's,
// does not capture the generated code: it names `::ad_runtime`, the crate.
#![deny(warnings)]
#![forbid(unsafe_code)]

mod ad_runtime {
    // Decoys: a generated `ad_runtime::__private::…` or `ad_runtime::dot` resolved
    // here would not compile, or would give NaN.
    pub(crate) mod __private {}

    pub(crate) fn dot(_x: &[f64], _y: &[f64]) -> f64 {
        f64::NAN
    }
}

/// `⟨xs, xs⟩ sin a`, with the runtime's `dot` named by its absolute path.
#[::ad_runtime::differentiate]
fn f(a: f64, xs: &[f64]) -> f64 {
    let t1 = ::ad_runtime::dot(xs, xs);
    t1 * a.sin()
}

fn main() {
    assert!(ad_runtime::dot(&[], &[]).is_nan());
    let xs = [1.0, -2.0];
    let mut d_xs = [0.0; 2];
    let (out, d_a) = f_vjp(0.5, &xs, &mut d_xs, 1.0);
    assert_eq!(out, f(0.5, &xs));
    assert!((d_a - 5.0 * 0.5_f64.cos()).abs() < 1e-12);
    let s = 0.5_f64.sin();
    assert!((d_xs[0] - 2.0 * s).abs() < 1e-12 && (d_xs[1] + 4.0 * s).abs() < 1e-12);
}
