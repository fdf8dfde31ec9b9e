use ad_runtime::differentiate;

#[differentiate(wrt(x, z))]
fn f(x: f64, _scale: &f64) -> f64 {
    let mut y = x;
    for w in std::iter::successors(Some(1.0), |v| Some(v * 2.0)).take(2) {
        y *= x * w;
    }
    y * x.next_up()
}

fn main() {}
