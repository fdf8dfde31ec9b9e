use ad_runtime::differentiate;

// `std::mem::swap` of elements of two buffers: the message names what is
// supported, `v.swap(i, j)` within one buffer and a temporary across two.
#[differentiate]
fn exchanged(x: &[f64]) -> f64 {
    let mut a = x.to_vec();
    let mut b = vec![0.0; x.len()];
    for i in 0..x.len() {
        if a[i] > 0.0 {
            std::mem::swap(&mut a[i], &mut b[i]);
        }
    }
    a[0] - 2.0 * b[0]
}

fn main() {
    let _ = exchanged(&[2.0, -1.0]);
}
