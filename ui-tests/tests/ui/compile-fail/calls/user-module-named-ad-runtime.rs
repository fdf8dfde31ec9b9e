mod user {
    use ::ad_runtime::differentiate;

    /// Shadows the runtime crate inside `user`: `ad_runtime::dot` below is this one.
    mod ad_runtime {
        pub fn dot(x: &[f64], y: &[f64]) -> f64 {
            x[0] * y[0]
        }
    }

    #[differentiate]
    pub fn f(xs: &[f64]) -> f64 {
        ad_runtime::dot(xs, xs)
    }
}

fn main() {
    let _ = user::f(&[1.0]);
}
