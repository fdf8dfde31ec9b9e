use ad_runtime::differentiate;

// A buffer of rows is read by rows: a copy of it is not supported.
#[differentiate]
fn first_x(pts: &[[f64; 2]]) -> f64 {
    let copy = pts.to_vec();
    copy[0][0]
}

fn main() {}
