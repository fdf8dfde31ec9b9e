//! Programs the random program generator (`ad_testkit::programs`) found wrong or
//! rejected, shrunk by it, each checked against its closed form, finite
//! differences and the dot-product test.

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar};

/// A loop that overwrites `x` with a constant: with no trip, the seed of `x`
/// reaches its initial value (the adjoint was 0 for `n = 0`).
#[differentiate]
fn overwritten_by_a_constant(a: f64, n: usize) -> f64 {
    let mut x = a * a;
    for i in 0..n {
        x = i as f64;
    }
    x
}

#[test]
fn a_zero_trip_loop_passes_the_seed_through() {
    for n in [0, 1, 3] {
        let grad = check_scalar(
            |p| overwritten_by_a_constant(p[0], n),
            |p, s| {
                let (out, d_a) = overwritten_by_a_constant_vjp(p[0], n, s);
                (out, vec![d_a])
            },
            &[3.0],
        );
        let expected = if n == 0 { 6.0 } else { 0.0 };
        assert_close(&grad, &[expected]);
    }
}

/// An `if` that writes a buffer which never reaches the output, and assigns a
/// variable that is not read afterwards (its expansion did not compile).
#[differentiate]
#[allow(unused_assignments)]
fn writes_that_do_not_matter(a: f64, xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    let mut x = a;
    if a > 0.5 {
        x -= 0.5;
        v[0] += x;
    }
    a * v[1]
}

#[test]
fn an_if_kept_for_its_writes_yields_nothing() {
    let grad = check_scalar(
        |p| writes_that_do_not_matter(p[0], &p[1..]),
        |p, s| {
            let mut d_xs = vec![0.0; 2];
            let (out, d_a) = writes_that_do_not_matter_vjp(p[0], &p[1..], &mut d_xs, s);
            let mut grad = vec![d_a];
            grad.extend(d_xs);
            (out, grad)
        },
        &[0.75, 1.5, -2.0],
    );
    assert_close(&grad, &[-2.0, 0.0, 0.75]);
}

/// A cast on the left of `<` (printed without its parentheses, it did not
/// parse), a typed literal bound to a variable, and a literal assigned to a
/// variable, both used as method receivers (their type was lost).
#[differentiate]
#[allow(unused_assignments)]
fn literals_and_casts(a0: f64, n: usize) -> f64 {
    let x: f64 = 0.5;
    let mut y = a0;
    y = -0.25;
    let z = if (n as f64) < a0 { a0 } else { 2.0 * a0 };
    x.abs() * z + y.abs() * a0
}

#[test]
fn casts_and_literals_keep_their_types() {
    for (a0, n) in [(3.0, 2), (0.5, 2)] {
        let grad = check_scalar(
            |p| literals_and_casts(p[0], n),
            |p, s| {
                let (out, d) = literals_and_casts_vjp(p[0], n, s);
                (out, vec![d])
            },
            &[a0],
        );
        let expected = if (n as f64) < a0 {
            0.5 + 0.25
        } else {
            1.0 + 0.25
        };
        assert_close(&grad, &[expected]);
    }
}

/// A parameter struct passed to a callee inside a loop. Its shadow was
/// carried by the adjoint loop like a float adjoint (`let d_p_1 = d_p;` then
/// `&mut d_p_1`), and the expansion of this valid function did not compile
/// (E0596). A struct's shadow, like a buffer's, is changed in place.
mod struct_shadow_in_a_loop {
    use super::*;
    use ad_runtime::Tangent;

    #[derive(Clone, Tangent)]
    pub(super) struct Line {
        pub(super) w: Vec<f64>,
        pub(super) b: f64,
    }

    #[differentiate]
    fn response(line: &Line, x: f64) -> f64 {
        line.w.iter().map(|w| (w * x + line.b).tanh()).sum()
    }

    #[differentiate]
    pub(super) fn loss(line: &Line, xs: &[f64]) -> f64 {
        xs.iter().map(|&x| response(line, x).powi(2)).sum::<f64>() + line.b * line.b
    }
}

#[test]
fn a_struct_passed_to_a_callee_in_a_loop() {
    use struct_shadow_in_a_loop::{Line, loss, loss_vjp};
    let xs = [0.3, -0.8, 1.1];
    let at = |p: &[f64]| Line {
        w: p[..2].to_vec(),
        b: p[2],
    };
    let grad = check_scalar(
        |p| loss(&at(p), &xs),
        |p, s| {
            let line = at(p);
            let mut d_line = Line {
                w: vec![0.0; 2],
                b: 0.0,
            };
            let out = loss_vjp(&line, &mut d_line, &xs, &mut [0.0; 3], s);
            let mut grad = d_line.w;
            grad.push(d_line.b);
            (out, grad)
        },
        &[0.5, -1.0, 0.2],
    );
    // ∂/∂b = Σ 2 rₓ Σⱼ sech²(wⱼ x + b) + 2b.
    let (w, b) = ([0.5, -1.0], 0.2);
    let d_b: f64 = xs
        .iter()
        .map(|&x| {
            let r: f64 = w.iter().map(|wj| (wj * x + b).tanh()).sum();
            let s: f64 = w.iter().map(|wj| 1.0 - (wj * x + b).tanh().powi(2)).sum();
            2.0 * r * s
        })
        .sum::<f64>()
        + 2.0 * b;
    assert_close(&grad[2..], &[d_b]);
}

#[differentiate]
fn pair_distance(a: &[f64], b: &[f64]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// One buffer passed twice to a callee in a loop, as two ranges: the second
/// range's scratch shadow was made in the loop, where the IR allowed no
/// buffer (the macro panicked).
#[differentiate]
fn pairwise_inverse_distances(x: &[f64]) -> f64 {
    let mut e = 0.0;
    for i in 0..x.len() / 2 {
        for j in (i + 1)..x.len() / 2 {
            e += 1.0 / pair_distance(&x[2 * i..2 * i + 2], &x[2 * j..2 * j + 2]);
        }
    }
    e
}

/// Ranges of a constant buffer passed to a callee in a loop: their scratch
/// shadow was made before the loop from a range made in it (the macro
/// panicked). Each range now gets the same range of one scratch shadow.
#[differentiate(wrt(c))]
fn distances_to_fixed_points(c: &[f64], ring: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..ring.len() / 2 {
        s += pair_distance(c, &ring[2 * i..2 * i + 2]);
    }
    s
}

#[test]
fn ranges_passed_to_a_callee_in_a_loop() {
    let x = [0.0, 0.0, 1.0, 0.5, -0.5, 2.0];
    let grad = check_scalar(
        pairwise_inverse_distances,
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = pairwise_inverse_distances_vjp(p, &mut d, seed);
            (out, d)
        },
        &x,
    );
    // ∂/∂p_i Σ 1/r_ij = Σ_j (p_j − p_i) / r_ij³.
    let mut expected = vec![0.0; 6];
    for i in 0..3 {
        for j in 0..3 {
            if i != j {
                let r = pair_distance(&x[2 * i..2 * i + 2], &x[2 * j..2 * j + 2]);
                for k in 0..2 {
                    expected[2 * i + k] += (x[2 * j + k] - x[2 * i + k]) / r.powi(3);
                }
            }
        }
    }
    assert_close(&grad, &expected);

    let ring = [1.0, 0.0, 0.0, 1.0, -1.0, 0.5];
    let c = [0.2, 0.3];
    let grad = check_scalar(
        |p| distances_to_fixed_points(p, &ring),
        |p, seed| {
            let mut d = vec![0.0; p.len()];
            let out = distances_to_fixed_points_vjp(p, &mut d, &ring, seed);
            (out, d)
        },
        &c,
    );
    // ∂/∂c Σ |c − r_i| = Σ (c − r_i) / |c − r_i|.
    let mut expected = [0.0; 2];
    for r in ring.chunks(2) {
        let d = pair_distance(&c, r);
        for k in 0..2 {
            expected[k] += (c[k] - r[k]) / d;
        }
    }
    assert_close(&grad, &expected);
}
