// `#[checkpoint]` goes on a loop at the top level of the body, with
// `snapshots = k` or `memory = "…"`.
use ad_runtime::differentiate;

#[differentiate]
fn nested(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        #[checkpoint(snapshots = 4)]
        for _ in 0..n {
            y = y.sin();
        }
    }
    y
}

#[differentiate]
fn on_a_let(x: f64) -> f64 {
    #[checkpoint(snapshots = 4)]
    let y = x * 0.5;
    y
}

#[differentiate]
fn unknown_argument(x: f64, n: usize) -> f64 {
    let mut y = x;
    #[checkpoint(every = 4)]
    for _ in 0..n {
        y = y.sin();
    }
    y
}

#[differentiate]
fn unknown_unit(x: f64, n: usize) -> f64 {
    let mut y = x;
    #[checkpoint(memory = "64 parsecs")]
    for _ in 0..n {
        y = y.sin();
    }
    y
}

#[differentiate]
fn given_twice(x: f64, n: usize) -> f64 {
    let mut y = x;
    #[checkpoint(snapshots = 4)]
    #[checkpoint(snapshots = 8)]
    for _ in 0..n {
        y = y.sin();
    }
    y
}

#[differentiate]
fn a_float_count(x: f64, n: usize) -> f64 {
    let mut y = x;
    #[checkpoint(snapshots = x)]
    for _ in 0..n {
        y = y.sin();
    }
    y
}

fn main() {}
