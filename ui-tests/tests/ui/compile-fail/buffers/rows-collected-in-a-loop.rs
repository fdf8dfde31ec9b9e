use ad_runtime::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..2 {
        let pts: Vec<[f64; 2]> = x.windows(2).map(|w| [w[0] * k as f64, w[1]]).collect();
        s += pts.iter().map(|p| p[0] * p[1]).sum::<f64>();
    }
    s
}

fn main() {}
