use ad_runtime::differentiate;

#[differentiate]
fn f(w: &[f64], x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    let mut y = vec![0.0; 2];
    ad_runtime::matvec(w, &v, &mut y, 2, 2);
    v[0] = 0.0;
    y[0] + y[1] + v[1]
}

fn main() {}
