use ad_runtime::differentiate;

#[differentiate]
fn configured(x: f64) -> f64 {
    let mut y = x;
    #[cfg(debug_assertions)]
    {
        y += 1.0;
    }
    #[cfg(test)]
    {
        y *= 2.0;
    }
    #[cfg(any())]
    {
        y = y.sin();
    }
    #[cfg(all())]
    {
        y = y.cos();
    }
    y
}

fn main() {}
