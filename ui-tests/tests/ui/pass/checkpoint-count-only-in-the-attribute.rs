// A parameter named only by `#[checkpoint(snapshots = k)]` is used: the
// function the macro emits unchanged, without the attribute, still names it.
// Also when the function comes from a `macro_rules!` and the attribute from
// its invocation (other hygiene).
#![deny(warnings)]

use ad_runtime::differentiate;

#[differentiate]
fn decay(x: f64, n: usize, k: usize) -> f64 {
    let mut y = x;
    #[checkpoint(snapshots = k.max(2))]
    for _ in 0..n {
        y = y.sin() * 1.01;
    }
    y
}

macro_rules! stepped {
    ($name:ident, $ck:meta) => {
        #[differentiate]
        fn $name(x: f64, n: usize, snapshots: usize) -> f64 {
            let mut y = x;
            #[$ck]
            while y > 0.1 && n > 0 {
                y *= 0.5;
            }
            y
        }
    };
}
stepped!(stepped, checkpoint(snapshots = snapshots));

fn main() {
    let (y, d_x) = decay_vjp(0.5, 10, 3, 1.0);
    assert_eq!(y, decay(0.5, 10, 3));
    assert!(d_x > 0.0);
    let (z, d_z) = stepped_vjp(0.9, 1, 4, 1.0);
    assert_eq!((z, d_z), (0.05625, 0.0625));
}
