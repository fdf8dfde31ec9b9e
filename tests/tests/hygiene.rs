//! Hygiene: user identifiers that look like the ones the expansion generates
//! (`d_x`, `d_out`, `out`, `t1`, `__ad`, `tape_t`, `i_1`, `d_xs` beside `xs`, …),
//! shadowing across nested scopes, parameters named like runtime items, a user
//! module called `ad_runtime`, and user items named like the runtime's helpers.
//! Each function compiles and is checked three ways: its closed form, finite
//! differences and the dot-product test.
//!
//! The file warns on `clippy::pedantic`, and CI runs clippy with `-D warnings`:
//! the generated `_vjp` functions must raise no pedantic lint. The last
//! functions exist for that: a `while` loop, labeled `break`/`continue`, `match`,
//! `f32` with casts, and the coarse primitives with a tuple output. The one allow
//! (`non_snake_case` on a parameter `Tape`) is on the user's own item, for
//! rustc's lint about the user's own style.

#![warn(clippy::pedantic)]

use ad_runtime::differentiate;
use ad_tests::{assert_close, check_scalar, check_scalar_within, check_vector};

/// A user constant with the name of `std::f64::consts::PI`, and another value:
/// the body of `_vjp` must read this one.
const PI: f64 = 3.0;

/// A user function with the name of the runtime helper that allocates shadows;
/// it returns NaN, so a `_vjp` calling it instead of the runtime's would give NaN
/// adjoints.
fn zeros_like(v: &[f64]) -> Vec<f64> {
    vec![f64::NAN; v.len()]
}

/// A user function with the name of the runtime helper that resets a shadow.
fn zero(v: &mut [f64]) {
    v.fill(f64::NAN);
}

/// A user function with the name of a pullback rule in `ad_runtime::rules`.
fn sin(x: f64) -> f64 {
    x + 1.0
}

/// Scalars named like the generated code: the adjoint `d_x` of `x`, the seed's
/// name `d_out` (so the seed becomes `d_out_`), the output `out`, the
/// intermediates `t1`, `t2`, the rules' module `__ad`, a tape `tape_t`, and
/// `x_bar`, `seed`, `tape`.
///
/// `t1 = x d_x`, `t2 = sin t1 + x_bar`, `out = t2 seed`,
/// `f = (out + tape t1) x + t2 + d_out`.
#[differentiate]
fn scalar_lookalikes(x: f64, d_x: f64, x_bar: f64, seed: f64, tape: f64, d_out: f64) -> f64 {
    let t1 = x * d_x;
    let t2 = t1.sin() + x_bar;
    let out = t2 * seed;
    let __ad = out + tape * t1;
    let __ad_t = __ad * x;
    let tape_t = __ad_t + t2;
    tape_t + d_out
}

fn scalar_lookalikes_closed_form(p: &[f64]) -> Vec<f64> {
    let [x, d_x, x_bar, seed, tape, _] = p else {
        unreachable!("six inputs")
    };
    let t1 = x * d_x;
    let t2 = t1.sin() + x_bar;
    let a = t2 * seed + tape * t1;
    // ∂t2/∂x = cos t1 · d_x, ∂t2/∂d_x = cos t1 · x.
    let (dt2_by_x, dt2_by_d_x) = (t1.cos() * d_x, t1.cos() * x);
    vec![
        (dt2_by_x * seed + tape * d_x) * x + a + dt2_by_x,
        (dt2_by_d_x * seed + tape * x) * x + dt2_by_d_x,
        seed * x + 1.0,
        t2 * x,
        t1 * x,
        1.0,
    ]
}

#[test]
fn scalars_named_like_generated_code() {
    let point = [0.7, -1.3, 0.4, 2.5, -0.8, 1.1];
    let grad = check_scalar(
        |p| scalar_lookalikes(p[0], p[1], p[2], p[3], p[4], p[5]),
        |p, s| {
            // A parameter is called `d_out`, so the seed is `d_out_`.
            let (out, d_x, d_d_x, d_x_bar, d_seed, d_tape, d_d_out) =
                scalar_lookalikes_vjp(p[0], p[1], p[2], p[3], p[4], p[5], s);
            (out, vec![d_x, d_d_x, d_x_bar, d_seed, d_tape, d_d_out])
        },
        &point,
    );
    assert_close(&grad, &scalar_lookalikes_closed_form(&point));
}

/// Both `d_out` and `d_out_` are parameters: the seed is `d_out__`. A parameter
/// `out` has the adjoint the seed would have had, `d_out`.
///
/// `f = out d_out + d_out_² + out`.
#[differentiate]
fn seed_names_taken(out: f64, d_out: f64, d_out_: f64) -> f64 {
    out * d_out + d_out_ * d_out_ + out
}

#[test]
fn seed_is_renamed_past_every_taken_name() {
    let point = [1.5, -0.5, 2.0];
    let grad = check_scalar(
        |p| seed_names_taken(p[0], p[1], p[2]),
        |p, s| {
            let (out, a, b, c) = seed_names_taken_vjp(p[0], p[1], p[2], s);
            (out, vec![a, b, c])
        },
        &point,
    );
    let [out, d_out, d_out_] = point;
    assert_close(&grad, &[d_out + 1.0, out, 2.0 * d_out_]);
    // The seed scales every adjoint.
    let (_, a, b, c) = seed_names_taken_vjp(out, d_out, d_out_, 3.0);
    assert_close(&[a, b, c], &[3.0 * (d_out + 1.0), 3.0 * out, 6.0 * d_out_]);
}

/// A buffer `xs` next to a buffer parameter called `d_xs` (so the shadow of
/// `xs` is `d_xs_`), locals called `sum` and `product` computed with
/// `.iter().sum()` and `.iter().product()`, loop counters `i` and `i_1` (the
/// name of the reversed loop's counter), a local buffer `v` beside a local
/// `d_v`, and a scalar parameter `out`.
///
/// With `n = xs.len() = d_xs.len()`, `S = Σ xs`, `P = Π d_xs`,
/// `T = Σ_i xs_i d_xs_{(i+1) mod n}`, `f = S P + out T + Σ_i v_i` where
/// `v_i = out xs_i` (so `Σ v = out S`).
#[differentiate]
fn buffer_lookalikes(xs: &[f64], d_xs: &[f64], out: f64) -> f64 {
    let sum: f64 = xs.iter().sum();
    let product = d_xs.iter().product::<f64>();
    let mut v = vec![0.0; xs.len()];
    let mut tape_t = 0.0;
    for i in 0..xs.len() {
        let i_1 = (i + 1) % d_xs.len();
        let t1 = xs[i] * d_xs[i_1];
        tape_t += t1 * out;
        v[i] = out * xs[i];
    }
    let d_v: f64 = v.iter().sum();
    sum * product + tape_t + d_v
}

#[test]
fn buffer_named_d_xs_beside_xs() {
    let (xs, d_xs, out) = ([0.5, -1.5, 2.0], [1.5, 0.8, -0.6], 1.3);
    let n = xs.len();
    let point: Vec<f64> = xs.iter().chain(&d_xs).copied().chain([out]).collect();
    let grad = check_scalar(
        |p| buffer_lookalikes(&p[..n], &p[n..2 * n], p[2 * n]),
        |p, s| {
            let (mut shadow_xs, mut shadow_d_xs) = (vec![0.0; n], vec![0.0; n]);
            // The shadow of `xs` is `d_xs_`, then comes `d_xs` and its shadow `d_d_xs`.
            let (value, d_out) = buffer_lookalikes_vjp(
                &p[..n],
                &mut shadow_xs,
                &p[n..2 * n],
                &mut shadow_d_xs,
                p[2 * n],
                s,
            );
            shadow_xs.extend(shadow_d_xs);
            shadow_xs.push(d_out);
            (value, shadow_xs)
        },
        &point,
    );
    let sum: f64 = xs.iter().sum();
    let product: f64 = d_xs.iter().product();
    let mut expected = vec![0.0; 2 * n + 1];
    for i in 0..n {
        let next = (i + 1) % n;
        let prev = (i + n - 1) % n;
        expected[i] = product + out * d_xs[next] + out;
        expected[n + i] = sum * product / d_xs[i] + out * xs[prev];
        expected[2 * n] += xs[i] * d_xs[next] + xs[i];
    }
    assert_close(&grad, &expected);
}

/// The same name rebound in a block, a loop body and both sides of a branch,
/// shadowing the parameters `x` and `y`.
///
/// With `u = x y`, `e` even and `o` odd iterations among `0..n`:
/// `acc = sin u + 2 e (u + 1) + o (u + 1) y` and `f = acc u`.
#[differentiate]
fn shadowing(x: f64, y: f64, n: usize) -> f64 {
    let x = x * y;
    let mut acc = 0.0;
    {
        let x = x.sin();
        acc += x;
    }
    for k in 0..n {
        let x = x + 1.0;
        if k % 2 == 0 {
            let x = x * 2.0;
            acc += x;
        } else {
            let y = x * y;
            acc += y;
        }
    }
    acc * x
}

#[test]
fn shadowing_in_blocks_loops_and_branches() {
    let (x, y) = (0.6, -1.4);
    for n in [0_usize, 1, 4, 5] {
        let grad = check_scalar(
            |p| shadowing(p[0], p[1], n),
            |p, s| {
                let (out, d_x, d_y) = shadowing_vjp(p[0], p[1], n, s);
                (out, vec![d_x, d_y])
            },
            &[x, y],
        );
        let evens = f64::from(u32::try_from(n.div_ceil(2)).unwrap());
        let odds = f64::from(u32::try_from(n / 2).unwrap());
        let xy = x * y;
        let acc = xy.sin() + 2.0 * evens * (xy + 1.0) + odds * (xy + 1.0) * y;
        let acc_by_x = y * (xy.cos() + 2.0 * evens + odds * y);
        let acc_by_y = x * xy.cos() + 2.0 * evens * x + odds * (2.0 * x * y + 1.0);
        assert_close(&grad, &[acc_by_x * xy + acc * y, acc_by_y * xy + acc * x]);
    }
}

/// Parameters named like the runtime's items (`rules`, `Tape`, `dot`, `linalg`,
/// `check`, `__ad`), a local `sum` beside a call to `ad_runtime::sum`, and
/// calls to the runtime's `dot` and `norm2`.
///
/// With `s = ⟨l, l⟩`, `r = |l|`:
/// `f = sin(rules) Tape + e^dot s + atan2(check, r) + __ad Σ l`.
#[differentiate]
// `Tape` is named like the runtime's type on purpose (rustc's style lint).
#[allow(non_snake_case)]
fn runtime_lookalikes(
    rules: f64,
    Tape: f64,
    dot: f64,
    linalg: &[f64],
    check: f64,
    __ad: f64,
) -> f64 {
    let sum = ad_runtime::dot(linalg, linalg);
    let norm = ad_runtime::norm2(linalg);
    rules.sin() * Tape + dot.exp() * sum + check.atan2(norm) + __ad * ad_runtime::sum(linalg)
}

#[test]
fn parameters_named_like_runtime_items() {
    let (rules, tape, dot, check, ad) = (0.9, -1.2, 0.3, 0.7, 1.7);
    let linalg = [0.5, -1.0, 2.0];
    let point: Vec<f64> = [rules, tape, dot, check, ad]
        .into_iter()
        .chain(linalg)
        .collect();
    let grad = check_scalar(
        |p| runtime_lookalikes(p[0], p[1], p[2], &p[5..], p[3], p[4]),
        |p, s| {
            let mut d_linalg = vec![0.0; 3];
            let (out, d_rules, d_tape, d_dot, d_check, d_ad) =
                runtime_lookalikes_vjp(p[0], p[1], p[2], &p[5..], &mut d_linalg, p[3], p[4], s);
            let mut grad = vec![d_rules, d_tape, d_dot, d_check, d_ad];
            grad.extend(d_linalg);
            (out, grad)
        },
        &point,
    );
    let s: f64 = linalg.iter().map(|l| l * l).sum();
    let r = s.sqrt();
    let q = check * check + s;
    let mut expected = vec![
        rules.cos() * tape,
        rules.sin(),
        dot.exp() * s,
        r / q,
        linalg.iter().sum(),
    ];
    expected.extend(
        linalg
            .iter()
            .map(|l| 2.0 * dot.exp() * l - check / q * l / r + ad),
    );
    assert_close(&grad, &expected);
}

/// The user's `PI` (3), not `std::f64::consts::PI`, and a user `fn sin` beside
/// the method `x.sin()`; a local buffer whose shadow the runtime allocates and
/// resets, beside the user's `zeros_like` and `zero`.
///
/// `w = (PI x, x²)`, `w` is overwritten by `w₀ ← w₀ w₁`, and
/// `f = sin x + w₀ + w₁ = sin x + 3 x³ + x²`.
#[differentiate]
fn helper_lookalikes(x: f64) -> f64 {
    let mut w = [PI * x, x * x];
    w[0] *= w[1];
    x.sin() + w[0] + w[1]
}

#[test]
fn items_named_like_runtime_helpers() {
    // The user's items are the ones the plain code sees.
    assert!(zeros_like(&[1.0]).iter().all(|v| v.is_nan()));
    let mut buffer = [1.0];
    zero(&mut buffer);
    assert!(buffer[0].is_nan());
    assert_close(&[sin(1.0)], &[2.0]);

    let x = 0.8;
    let grad = check_scalar(
        |p| helper_lookalikes(p[0]),
        |p, s| {
            let (out, d_x) = helper_lookalikes_vjp(p[0], s);
            (out, vec![d_x])
        },
        &[x],
    );
    assert_close(&grad, &[x.cos() + 9.0 * x * x + 2.0 * x]);
}

/// An in-place update whose buffer `u` sits beside a `&mut` buffer called
/// `d_u` (so the shadow of `u` is `d_u_`), with the element saved on a tape
/// beside a user scalar called `tape_t`.
///
/// `u_i ← u_i - c u_i²`, `d_u_i ← d_u_i u_i` (with the old `u_i`).
#[differentiate]
fn in_place_lookalikes(u: &mut [f64], d_u: &mut [f64], tape_t: f64) {
    for i in 0..u.len() {
        let t = u[i];
        u[i] = t - tape_t * t * t;
        d_u[i] *= t;
    }
}

#[test]
fn in_place_buffer_beside_a_buffer_named_like_its_shadow() {
    let n = 3;
    let point = [0.5, -1.0, 2.0, 1.5, 0.25, -0.75, 0.1];
    let seed = [1.0, 2.0, -1.0, 0.5, -2.0, 3.0];
    let run = |p: &[f64]| {
        let (mut u, mut d_u) = (p[..n].to_vec(), p[n..2 * n].to_vec());
        in_place_lookalikes(&mut u, &mut d_u, p[2 * n]);
        u.extend(d_u);
        u
    };
    let adjoint = check_vector(
        run,
        |p, s| {
            let (mut u, mut d_u) = (p[..n].to_vec(), p[n..2 * n].to_vec());
            let (mut shadow_u, mut shadow_d_u) = (s[..n].to_vec(), s[n..].to_vec());
            let d_tape_t =
                in_place_lookalikes_vjp(&mut u, &mut shadow_u, &mut d_u, &mut shadow_d_u, p[2 * n]);
            u.extend(d_u);
            shadow_u.extend(shadow_d_u);
            shadow_u.push(d_tape_t);
            (u, shadow_u)
        },
        &point,
        &seed,
    );
    let c = point[2 * n];
    let mut expected = vec![0.0; 2 * n + 1];
    for i in 0..n {
        let (u, d) = (point[i], point[n + i]);
        let (su, sd) = (seed[i], seed[n + i]);
        expected[i] = su * (1.0 - 2.0 * c * u) + sd * d;
        expected[n + i] = sd * u;
        expected[2 * n] -= su * u * u;
    }
    assert_close(&adjoint, &expected);
}

/// A user module called `ad_runtime`, whose items have the runtime's names but
/// return NaN: the generated code refers to `::ad_runtime`, so it is not
/// captured. The body names the runtime by its absolute path too.
mod user {
    pub(super) mod ad_runtime {
        /// Not the runtime's `dot`.
        pub(in crate::user) fn dot(_x: &[f64], _y: &[f64]) -> f64 {
            f64::NAN
        }

        /// Not the runtime's private module: a generated `ad_runtime::__private::sin`
        /// would not resolve here.
        pub(in crate::user) mod __private {
            pub(in crate::user) fn sin(_x: f64, _y: f64, _dy: f64) -> f64 {
                f64::NAN
            }
        }
    }

    use ::ad_runtime::differentiate;

    /// `f = ⟨xs, xs⟩ sin a + a²`.
    #[differentiate]
    pub(super) fn shadowed_crate_name(a: f64, xs: &[f64]) -> f64 {
        ::ad_runtime::dot(xs, xs) * a.sin() + a * a
    }

    /// The decoys, for the test to check that they are the user's.
    pub(super) fn decoys() -> [f64; 2] {
        [
            ad_runtime::dot(&[], &[]),
            ad_runtime::__private::sin(0.0, 0.0, 1.0),
        ]
    }
}

#[test]
fn user_module_named_ad_runtime() {
    assert!(user::decoys().iter().all(|v| v.is_nan()));
    let (a, xs) = (0.4, [1.0, -2.0]);
    let point = [a, xs[0], xs[1]];
    let grad = check_scalar(
        |p| user::shadowed_crate_name(p[0], &p[1..]),
        |p, s| {
            let mut d_xs = vec![0.0; 2];
            let (out, d_a) = user::shadowed_crate_name_vjp(p[0], &p[1..], &mut d_xs, s);
            d_xs.insert(0, d_a);
            (out, d_xs)
        },
        &point,
    );
    let s = xs[0] * xs[0] + xs[1] * xs[1];
    assert_close(
        &grad,
        &[
            s * a.cos() + 2.0 * a,
            2.0 * xs[0] * a.sin(),
            2.0 * xs[1] * a.sin(),
        ],
    );
}

/// Halves `out` (a copy of `x`) while it exceeds `tol`, at most 60 times, and
/// adds `tol` per halving: with `k` halvings, `f = x / 2ᵏ + k tol`.
#[differentiate]
fn halvings(x: f64, tol: f64) -> f64 {
    let mut out = x;
    let mut i = 0_u32;
    while out > tol && i < 60 {
        out *= 0.5;
        i += 1;
    }
    out + tol * f64::from(i)
}

#[test]
fn while_loop_with_confusable_names() {
    for (x, tol) in [(10.0, 1.5), (0.5, 1.5), (3.0, 0.5)] {
        let grad = check_scalar(
            |p| halvings(p[0], p[1]),
            |p, s| {
                let (out, d_x, d_tol) = halvings_vjp(p[0], p[1], s);
                (out, vec![d_x, d_tol])
            },
            &[x, tol],
        );
        let mut halved = x;
        let mut k = 0;
        while halved > tol {
            halved *= 0.5;
            k += 1;
        }
        assert_close(&grad, &[0.5_f64.powi(k), f64::from(k)]);
    }
}

/// Labeled loops: row `i` adds `x · i_1` for `i_1 ≤ i`, moves to the next row
/// past the diagonal, and stops everything once `i + i_1 > 6`; then a `match`
/// on `k` transforms the sum.
#[differentiate]
fn labeled_rows(x: f32, n: u32, k: i32) -> f32 {
    let mut acc = x;
    'rows: for i in 0..n {
        for i_1 in 0..n {
            if i_1 > i {
                continue 'rows;
            }
            if i + i_1 > 6 {
                break 'rows;
            }
            #[allow(clippy::cast_precision_loss)] // the user's cast of a small counter
            let weight = i_1 as f32;
            acc += x * weight;
        }
    }
    match k {
        0 => acc,
        1..=3 => acc * acc,
        m if m < 0 => -acc,
        _ => acc.sin(),
    }
}

/// `1 + Σ i_1` over the `(i, i_1)` that `labeled_rows` visits: its sum is
/// `x` times this.
fn labeled_rows_coefficient(n: u32) -> f64 {
    let mut c = 1.0;
    for i in 0..n {
        for i_1 in 0..=i.min(n - 1) {
            if i + i_1 > 6 {
                return c;
            }
            c += f64::from(i_1);
        }
    }
    c
}

#[test]
fn labeled_loops_and_match_in_f32() {
    let x = 0.3_f32;
    for n in [0, 2, 5] {
        for k in [-1, 0, 2, 7] {
            let grad = check_scalar_within(
                1e-3,
                |p| {
                    #[allow(clippy::cast_possible_truncation)] // f32 function, f64 checker
                    let x = p[0] as f32;
                    f64::from(labeled_rows(x, n, k))
                },
                |p, s| {
                    #[allow(clippy::cast_possible_truncation)]
                    let (x, s) = (p[0] as f32, s as f32);
                    let (out, d_x) = labeled_rows_vjp(x, n, k, s);
                    (f64::from(out), vec![f64::from(d_x)])
                },
                &[f64::from(x)],
            );
            let c = labeled_rows_coefficient(n);
            let acc = f64::from(x) * c;
            let expected = match k {
                0 => c,
                1..=3 => 2.0 * acc * c,
                m if m < 0 => -c,
                _ => acc.cos() * c,
            };
            assert!(
                (grad[0] - expected).abs() <= 1e-5 * expected.abs().max(1.0),
                "n = {n}, k = {k}: {} vs {expected}",
                grad[0]
            );
        }
    }
}

/// A layer through the coarse primitives, with a tuple output:
/// `h = W x` (`W` is 2 × 2), `p = softmax(h)`,
/// `f = (logsumexp(h) · out, p₀ + |x|)`.
#[differentiate]
fn layer(w: &[f64], x: &[f64], out: f64) -> (f64, f64) {
    let mut h = vec![0.0; 2];
    ad_runtime::matvec(w, x, &mut h, 2, 2);
    let mut p = vec![0.0; 2];
    ad_runtime::softmax(&h, &mut p);
    (ad_runtime::logsumexp(&h) * out, p[0] + ad_runtime::norm2(x))
}

#[test]
fn coarse_primitives_with_a_tuple_output() {
    let (w, x, out) = ([0.5, -1.0, 1.5, 0.25], [0.8, -0.4], 1.7);
    let point: Vec<f64> = w.iter().chain(&x).copied().chain([out]).collect();
    let seed = [0.6, -1.3];
    let adjoint = check_vector(
        |q| {
            let (a, b) = layer(&q[..4], &q[4..6], q[6]);
            vec![a, b]
        },
        |q, v| {
            let (mut d_w, mut d_x) = (vec![0.0; 4], vec![0.0; 2]);
            let ((a, b), d_out) =
                layer_vjp(&q[..4], &mut d_w, &q[4..6], &mut d_x, q[6], (v[0], v[1]));
            d_w.extend(d_x);
            d_w.push(d_out);
            (vec![a, b], d_w)
        },
        &point,
        &seed,
    );
    // h = W x, p = softmax(h); ∂lse/∂h = p, ∂p₀/∂h = p₀ (e₀ - p), ∂|x|/∂x = x / |x|.
    let hidden = [w[0] * x[0] + w[1] * x[1], w[2] * x[0] + w[3] * x[1]];
    let lse = (hidden[0].exp() + hidden[1].exp()).ln();
    let probs = hidden.map(|value| (value - lse).exp());
    let norm = x[0].hypot(x[1]);
    let d_hidden: Vec<f64> = probs
        .iter()
        .zip([1.0, 0.0])
        .map(|(prob, kronecker)| seed[0] * out * prob + seed[1] * probs[0] * (kronecker - prob))
        .collect();
    let mut expected: Vec<f64> = d_hidden.iter().flat_map(|d| x.map(|xj| d * xj)).collect();
    for j in 0..2 {
        expected.push(d_hidden[0] * w[j] + d_hidden[1] * w[2 + j] + seed[1] * x[j] / norm);
    }
    expected.push(seed[0] * lse);
    assert_close(&adjoint, &expected);
}

/// Early exits lower to `if !exited { … } else { … }`: pedantic stays quiet on
/// the generated code (it raised `if_not_else` and `suspicious_else_formatting`
/// once).
#[differentiate]
fn early_exits(y: f64) -> f64 {
    let z = if y > 1.0 {
        if y > 100.0 {
            return y;
        }
        y
    } else {
        y * y
    };
    z * 2.0
}

#[test]
fn early_exits_under_pedantic() {
    for y in [0.5, 2.0, 200.0] {
        let grad = check_scalar(
            |p| early_exits(p[0]),
            |p, s| {
                let (out, d_y) = early_exits_vjp(p[0], s);
                (out, vec![d_y])
            },
            &[y],
        );
        let expected = if y > 100.0 {
            1.0
        } else if y > 1.0 {
            2.0
        } else {
            4.0 * y
        };
        assert_close(&grad, &[expected]);
    }
}

/// User items named like the runtime's helpers for a buffer returned in a
/// loop; they panic, so a `_vjp` calling them would fail.
#[allow(dead_code)]
fn output_buffer() -> Vec<f64> {
    unreachable!("the runtime's `output_buffer` is meant")
}

#[allow(dead_code)]
fn returned_into(_: &mut Vec<f64>, _: Vec<f64>) {
    unreachable!("the runtime's `returned_into` is meant")
}

#[differentiate]
fn halves(x: &[f64]) -> [f64; 2] {
    [x[0] * 0.5, x[1] * 0.5]
}

/// A buffer returned in a loop: moved into one buffer made before it.
#[differentiate]
fn halved_twice(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..2 {
        let h = halves(x);
        s += h[0] * h[1] * f64::from(k + 1);
    }
    s
}

#[test]
fn buffers_returned_in_a_loop_under_pedantic() {
    // s = 3 x₀ x₁ / 4.
    let grad = check_scalar(
        halved_twice,
        |p, s| {
            let mut d = vec![0.0; 2];
            (halved_twice_vjp(p, &mut d, s), d)
        },
        &[0.8, -1.4],
    );
    assert_close(&grad, &[0.75 * -1.4, 0.75 * 0.8]);
}

/// Rows given as `Vec`s, read and written: the flat copies and the copying
/// back raise no pedantic lint.
#[differentiate]
fn scaled_rows(a: &mut [Vec<f64>], w: &[Vec<f64>], k: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        for j in 0..a[i].len() {
            a[i][j] *= k * w[i][j];
            s += a[i][j];
        }
    }
    s
}

#[test]
fn vec_rows_under_pedantic() {
    let mut a = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
    let w = vec![vec![0.5, 1.0], vec![-1.0, 2.0]];
    let mut d_a = vec![vec![0.0; 2]; 2];
    let mut d_w = vec![vec![0.0; 2]; 2];
    let (s, d_k) = scaled_rows_vjp(&mut a, &mut d_a, &w, &mut d_w, 2.0, 1.0);
    // s = k Σ a w; the rows are scaled in place as the function scales them.
    assert!((s - 2.0 * (0.5 + 2.0 - 3.0 + 8.0)).abs() < 1e-12);
    assert_eq!(a, vec![vec![1.0, 4.0], vec![-6.0, 16.0]]);
    assert!((d_k - (0.5 + 2.0 - 3.0 + 8.0)).abs() < 1e-12);
    assert_eq!(d_w, vec![vec![2.0, 4.0], vec![6.0, 8.0]]);
    assert_eq!(d_a, vec![vec![1.0, 2.0], vec![-2.0, 4.0]]);
}

/// A descent loop whose branches differ only in what the adjoint ignores (a
/// `break`, a step size, a counter): their adjoints and carried tangents are
/// the same, which clippy's `if_same_then_else` must not report on the
/// user's `if`.
#[differentiate(vjp, jvp)]
fn descent(target: f64, start: f64) -> f64 {
    let mut at = start;
    let mut slope = 2.0 * (at - target);
    let mut accepted = 0;
    let mut eta = 0.25;
    let mut steps = 0;
    loop {
        steps += 1;
        if slope.abs() <= 1e-9 || steps > 200 {
            break;
        } else if accepted == 3 {
            eta *= 1.5;
            accepted = 0;
        } else {
            let next = at - eta * slope;
            if (next - target) * (next - target) < (at - target) * (at - target) {
                at = next;
                slope = 2.0 * (at - target);
                accepted += 1;
            } else {
                eta /= 2.0;
                accepted = 0;
            }
        }
    }
    at * at
}

#[test]
fn branches_that_differ_only_in_what_the_adjoint_ignores() {
    // The descent converges to `a` whatever the start: `y² = a²`, with the
    // derivative of the converged point (1 in `a`, 0 in `s`) up to the
    // stopping tolerance.
    let grad = check_scalar(
        |p| descent(p[0], p[1]),
        |p, seed| {
            let (out, d_a, d_s) = descent_vjp(p[0], p[1], seed);
            (out, vec![d_a, d_s])
        },
        &[0.8, -0.3],
    );
    assert!((descent(0.8, -0.3) - 0.64).abs() < 1e-9);
    assert!(
        (grad[0] - 1.6).abs() < 1e-6 && grad[1].abs() < 1e-6,
        "{grad:?}"
    );
    let (_, t) = descent_jvp(0.8, 1.0, -0.3, 0.0);
    assert!((t - grad[0]).abs() < 1e-9);
}

/// The user's `#[allow]` holds for the generated functions too: without it
/// copied, the expansion's copies of `x.len() as f64` and `s == c` would
/// raise pedantic's `cast_precision_loss` and `float_cmp` at the attribute,
/// which the user cannot silence.
#[allow(clippy::cast_precision_loss, clippy::float_cmp)]
#[differentiate]
fn centred_mean(x: &[f64], c: f64) -> f64 {
    let n = x.len() as f64;
    let s: f64 = x.iter().sum();
    if s == c { 0.0 } else { (s - c) / n }
}

#[test]
fn the_users_allows_cover_the_generated_functions() {
    let p = [0.5, -1.0, 2.0, 0.25];
    let grad = check_scalar(
        |p| centred_mean(&p[..3], p[3]),
        |p, seed| {
            let mut d_x = vec![0.0; 3];
            let (out, d_c) = centred_mean_vjp(&p[..3], &mut d_x, p[3], seed);
            d_x.push(d_c);
            (out, d_x)
        },
        &p,
    );
    let third = 1.0 / 3.0;
    assert_close(&grad, &[third, third, third, -third]);
}
