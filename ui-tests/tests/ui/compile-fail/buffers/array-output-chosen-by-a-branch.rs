use ad_runtime::differentiate;

// A returned `Vec` may be chosen by a branch; an array, whose length its
// type fixes, not yet.
#[differentiate]
fn f(a: f64, b: f64) -> [f64; 2] {
    if a > b { [a * b, a - b] } else { [b.sin(), a.cos()] }
}

fn main() {}
