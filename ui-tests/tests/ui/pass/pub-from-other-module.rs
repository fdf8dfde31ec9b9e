mod model {
    use ad_runtime::differentiate;

    #[differentiate]
    pub fn loss(w: f64, b: f64, x: f64, y: f64) -> f64 {
        let r = w * x + b - y;
        r * r
    }
}

fn main() {
    let (w, b, x, y) = (0.5, 0.1, 2.0, 1.0);
    let (loss, d_w, d_b, d_x, d_y) = model::loss_vjp(w, b, x, y, 1.0);
    assert_eq!(loss, model::loss(w, b, x, y));
    let r = w * x + b - y;
    assert_eq!(
        (d_w, d_b, d_x, d_y),
        (2.0 * r * x, 2.0 * r, 2.0 * r * w, -2.0 * r)
    );
}
