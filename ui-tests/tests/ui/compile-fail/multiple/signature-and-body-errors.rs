use ad_runtime::differentiate;

#[differentiate(wrt(x, z))]
fn f(x: f64, _scale: &f64) -> f64 {
    let mut y = x;
    loop {
        y *= x;
        if y > 10.0 {
            break;
        }
    }
    y * x.floor()
}

fn main() {}
