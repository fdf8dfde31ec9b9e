use ad_runtime::differentiate;

// Windows of rows are not supported: the rows are read one at a time.
#[differentiate]
fn springs(pts: &[[f64; 2]]) -> f64 {
    pts.windows(2).map(|w| (w[1][0] - w[0][0]).powi(2)).sum()
}

fn main() {}
