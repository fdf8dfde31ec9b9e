use ad_runtime::differentiate;

/// Not `Copy`: the generated functions may pass it more than once.
#[derive(PartialEq)]
enum Loss {
    L2,
    L1,
}

#[differentiate]
fn loss(r: f64, kind: Loss) -> f64 {
    if kind == Loss::L2 { r * r } else { r.abs() }
}

#[differentiate]
fn total(x: &[f64], kind: Loss) -> f64 {
    loss(x[0] - x[1], kind)
}

fn main() {
    let _ = total(&[1.0, 2.0], Loss::L1);
}
