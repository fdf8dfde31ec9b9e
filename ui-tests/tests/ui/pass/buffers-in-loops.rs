// Buffers made inside loops and branches expand to code that a crate
// denying warnings accepts, and each iteration sees a fresh buffer.
#![deny(warnings)]

use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64], flag: bool) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        let mut w = vec![0.0; n];
        w[i] = x[i] * x[i];
        let copy = x.to_vec();
        let pair = [x[i], copy[n - 1 - i]];
        s += w.iter().sum::<f64>() + pair[0] * pair[1];
    }
    if flag {
        let v = vec![s; 2];
        s = v[0] * v[1];
    }
    s
}

fn main() {
    let x = [0.5, -1.0, 2.0];
    for flag in [false, true] {
        let mut d = [0.0; 3];
        let out = f_vjp(&x, &mut d, flag, 1.0);
        assert_eq!(out, f(&x, flag));
        let h = 1e-6;
        for j in 0..3 {
            let mut p = x;
            p[j] += h;
            let mut m = x;
            m[j] -= h;
            let fd = (f(&p, flag) - f(&m, flag)) / (2.0 * h);
            assert!((fd - d[j]).abs() < 1e-5 * fd.abs().max(1.0), "{j}: {fd} vs {}", d[j]);
        }
    }
}
