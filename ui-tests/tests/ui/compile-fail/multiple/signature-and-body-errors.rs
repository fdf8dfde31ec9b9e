use ad_runtime::differentiate;

#[differentiate(wrt(x, z))]
fn f(x: f64, _scale: &f64) -> f64 {
    let mut y = x;
    for w in [1.0, 2.0].iter() {
        y *= x * w;
    }
    y * x.next_up()
}

fn main() {}
