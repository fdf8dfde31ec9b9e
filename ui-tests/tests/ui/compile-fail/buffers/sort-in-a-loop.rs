use ad_runtime::differentiate;

#[differentiate]
fn medians(x: &[f64], windows: usize) -> f64 {
    let mut total = 0.0;
    for w in 0..windows {
        let mut v = x.to_vec();
        v[0] += w as f64;
        v.sort_by(f64::total_cmp);
        total += v[1];
    }
    total
}

fn main() {}
