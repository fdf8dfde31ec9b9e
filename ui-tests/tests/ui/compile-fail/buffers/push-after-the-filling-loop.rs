use ad_runtime::differentiate;

// A `Vec` made in a loop is filled by the `for` after it only if nothing
// pushes onto it afterwards: its length must be that loop's trip count.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut t = 0.0;
    for _ in 0..2 {
        let mut tmp = Vec::new();
        for &x in xs {
            tmp.push(x);
        }
        tmp.push(1.0);
        t += tmp.iter().sum::<f64>();
    }
    t
}

fn main() {}
