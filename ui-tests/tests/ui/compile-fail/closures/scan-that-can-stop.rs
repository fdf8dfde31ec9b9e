use ad_runtime::differentiate;

// `scan` whose closure can end the iteration: the macro lowers `scan` to a
// loop over every item.
#[differentiate]
fn until_negative(x: &[f64]) -> f64 {
    x.iter()
        .scan(0.0, |s, &v| {
            *s += v;
            if *s < 0.0 { None } else { Some(*s) }
        })
        .sum()
}

fn main() {}
