use ad_runtime::custom_vjp;

#[custom_vjp(sum_rule)]
fn sum_of_rows(pts: &[[f64; 2]]) -> f64 {
    pts.iter().map(|p| p[0] + p[1]).sum()
}

fn sum_rule(pts: &[[f64; 2]], d_pts: &mut [[f64; 2]], _out: f64, d_out: f64) {
    for d in d_pts.iter_mut() {
        d[0] += d_out;
        d[1] += d_out;
    }
    let _ = pts;
}

fn main() {}
