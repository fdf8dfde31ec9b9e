use ad_runtime::differentiate;

// A tuple variable is read and assigned by element; printed as a whole it
// would need a tuple value.
#[differentiate]
fn f(x: f64, y: f64) -> f64 {
    let p = (x, y);
    println!("{p:?}");
    p.0 * p.1
}

fn main() {}
