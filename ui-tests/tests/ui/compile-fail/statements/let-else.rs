use ad_runtime::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    #[allow(irrefutable_let_patterns)]
    let y = x * x else {
        return 0.0;
    };
    y
}

fn main() {}
