use ad_runtime::differentiate;

// An iterator kept in a variable is a position in the buffer: a macro
// cannot be given it.
#[differentiate]
fn f(xs: &[f64]) -> f64 {
    let mut it = xs.iter();
    let first = *it.next().unwrap();
    println!("{:?}", it);
    first
}

fn main() {}
