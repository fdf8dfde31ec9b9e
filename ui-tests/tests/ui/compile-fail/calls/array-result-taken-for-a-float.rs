use ad_runtime::differentiate;

#[differentiate]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[differentiate]
fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

// `n` is only passed on by value: the macro cannot tell it is an array.
#[differentiate]
fn area(a: [f64; 3], b: [f64; 3]) -> f64 {
    let n = cross(a, b);
    0.5 * norm(n)
}

fn main() {}
