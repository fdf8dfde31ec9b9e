use ad_runtime::differentiate;

// A `Vec<Vec<f64>>` collected in a loop: its rows' width is not known
// before the loop, where the buffer would be made.
#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..2 {
        let m: Vec<Vec<f64>> = (0..2).map(|i| (0..2).map(|j| x[i + j + k]).collect()).collect();
        s += m[1][1];
    }
    s
}

fn main() {}
