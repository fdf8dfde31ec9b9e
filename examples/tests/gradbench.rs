//! The GradBench tool: recorded message exchanges with the binary, then each eval's
//! objective and gradient against finite differences, the dot-product test and a
//! closed form or an independent implementation of its published definition.

// Numeric code written with index loops, as the evals are.
#![allow(clippy::needless_range_loop)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use ad_examples::gradbench::{
    self, Runs, ba, det, gmm, hello, kmeans, llsq, lse, lstm, ode, particle, saddle,
};
use ad_runtime::check;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Recorded exchanges.

/// Runs the binary on `input`, returning its exit success, standard output and error.
fn run_tool(input: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gradbench"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gradbench binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("the tool reads its input");
    let out = child.wait_with_output().expect("the tool ends");
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        String::from_utf8(out.stderr).expect("UTF-8 errors"),
    )
}

/// Whether two JSON values agree, numbers within a mixed relative tolerance; the
/// path to the first difference otherwise. `timings` are compared separately.
fn agree(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (e.as_f64().unwrap(), a.as_f64().unwrap());
            let error = (e - a).abs() / e.abs().max(a.abs()).max(1.0);
            if error <= 1e-10 {
                Ok(())
            } else {
                Err(format!("{path}: expected {e:e}, got {a:e}"))
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{path}: expected {} entries, got {}",
                    e.len(),
                    a.len()
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .try_for_each(|(i, (e, a))| agree(e, a, &format!("{path}[{i}]")))
        }
        (Value::Object(e), Value::Object(a)) => {
            let keys = |o: &serde_json::Map<String, Value>| {
                let mut k: Vec<String> = o.keys().filter(|k| *k != "timings").cloned().collect();
                k.sort();
                k
            };
            if keys(e) != keys(a) {
                return Err(format!(
                    "{path}: expected fields {:?}, got {:?}",
                    keys(e),
                    keys(a)
                ));
            }
            keys(e)
                .iter()
                .try_for_each(|k| agree(&e[k], &a[k], &format!("{path}.{k}")))
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// Checks the `timings` of a response to `message`: only `"evaluate"` entries, at
/// least `min_runs` of them (and at least one), adding up to at least `min_seconds`;
/// with `min_seconds` zero, exactly as many as the recorded response has.
fn check_timings(message: &Value, expected: &Value, actual: &Value) -> Result<(), String> {
    let id = &message["id"];
    let (Some(expected), Some(actual)) = (expected.get("timings"), actual.get("timings")) else {
        return match (expected.get("timings"), actual.get("timings")) {
            (None, None) => Ok(()),
            (e, a) => Err(format!("id {id}: timings expected {e:?}, got {a:?}")),
        };
    };
    let actual = actual
        .as_array()
        .ok_or(format!("id {id}: timings is not an array"))?;
    let mut total = 0.0;
    for timing in actual {
        if timing["name"] != "evaluate" || !timing["nanoseconds"].is_u64() {
            return Err(format!("id {id}: bad timing {timing}"));
        }
        total += timing["nanoseconds"].as_f64().unwrap() * 1e-9;
    }
    let runs = Runs::of(&message["input"]).map_err(|e| format!("id {id}: {e}"))?;
    let least = runs.min_runs.ceil().max(1.0) as usize;
    if actual.len() < least {
        return Err(format!(
            "id {id}: {} timings for min_runs {}",
            actual.len(),
            runs.min_runs
        ));
    }
    if total < runs.min_seconds {
        return Err(format!(
            "id {id}: {total} s in all for min_seconds {}",
            runs.min_seconds
        ));
    }
    let recorded = expected.as_array().map_or(0, Vec::len);
    if runs.min_seconds == 0.0 && (actual.len() != recorded || actual.len() != least) {
        return Err(format!(
            "id {id}: {} timings, recorded {recorded}, min_runs {}",
            actual.len(),
            runs.min_runs
        ));
    }
    Ok(())
}

/// Plays `tests/gradbench/<name>.in.jsonl` to the binary and compares its answers
/// with `<name>.out.jsonl`, line by line.
fn replay(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gradbench");
    let input = std::fs::read_to_string(dir.join(format!("{name}.in.jsonl"))).unwrap();
    let recorded = std::fs::read_to_string(dir.join(format!("{name}.out.jsonl"))).unwrap();
    let (ok, output, errors) = run_tool(&input);
    assert!(ok, "the tool failed: {errors}");
    let messages: Vec<Value> = input
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let expected: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let actual: Vec<Value> = output
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        actual.len(),
        messages.len(),
        "one response per message:\n{output}"
    );
    assert_eq!(
        expected.len(),
        messages.len(),
        "one recorded response per message"
    );
    for ((message, expected), actual) in messages.iter().zip(&expected).zip(&actual) {
        assert_eq!(actual["id"], message["id"], "responses come in order");
        if let Err(e) = agree(expected, actual, "response") {
            panic!("{name}, id {}: {e}", message["id"]);
        }
        if let Err(e) = check_timings(message, expected, actual) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn recorded_exchange_hello() {
    replay("hello");
}

#[test]
fn recorded_exchange_llsq() {
    replay("llsq");
}

#[test]
fn recorded_exchange_lse() {
    replay("lse");
}

#[test]
fn recorded_exchange_ode() {
    replay("ode");
}

#[test]
fn recorded_exchange_gmm() {
    replay("gmm");
}

#[test]
fn recorded_exchange_lstm() {
    replay("lstm");
}

#[test]
fn recorded_exchange_kmeans() {
    replay("kmeans");
}

#[test]
fn recorded_exchange_det() {
    replay("det");
}

#[test]
fn recorded_exchange_ba() {
    replay("ba");
}

#[test]
fn recorded_exchange_saddle_and_particle() {
    replay("nested");
}

#[test]
fn recorded_exchange_errors() {
    replay("errors");
}

#[test]
fn the_comparison_catches_a_wrong_output_and_a_wrong_number_of_timings() {
    let message = json!({"id": 3, "kind": "evaluate", "input": {"min_runs": 2, "min_seconds": 0}});
    let timing = json!({"name": "evaluate", "nanoseconds": 5});
    let two = json!({"id": 3, "success": true, "output": [1.0], "timings": [timing, timing]});
    let one = json!({"id": 3, "success": true, "output": [1.0], "timings": [timing]});
    let off =
        json!({"id": 3, "success": true, "output": [1.0 + 1e-6], "timings": [timing, timing]});
    assert!(agree(&two, &two, "r").is_ok() && check_timings(&message, &two, &two).is_ok());
    assert!(agree(&two, &off, "r").is_err());
    assert!(check_timings(&message, &two, &one).is_err());
    assert!(
        check_timings(&message, &one, &one).is_err(),
        "fewer than min_runs"
    );
}

#[test]
fn a_line_that_is_not_json_ends_the_session_with_an_error() {
    let (ok, output, errors) = run_tool("{\"id\":0,\"kind\":\"start\"}\nnot json\n");
    assert!(!ok);
    assert_eq!(output.trim(), r#"{"id":0,"tool":"ad"}"#);
    assert!(errors.contains("not JSON"), "{errors}");
}

#[test]
fn runs_accept_integers_and_floats_and_default_to_one_run() {
    let int = Runs::of(&json!({"min_runs": 3, "min_seconds": 0})).unwrap();
    let float = Runs::of(&json!({"min_runs": 3.0, "min_seconds": 0.0})).unwrap();
    assert_eq!(int, float);
    assert_eq!(int.run(|| 1).1.len(), 3);
    assert_eq!(Runs::of(&json!(2.5)).unwrap().run(|| 1).1.len(), 1);
    assert_eq!(
        Runs::of(&json!({"min_runs": 2.5}))
            .unwrap()
            .run(|| 1)
            .1
            .len(),
        3
    );
    let (_, timings) = Runs::of(&json!({"min_runs": 1, "min_seconds": 0.01}))
        .unwrap()
        .run(|| std::thread::sleep(std::time::Duration::from_millis(2)));
    let total: u64 = timings.iter().map(|t| t.nanoseconds).sum();
    assert!(timings.len() >= 2 && total >= 10_000_000, "{timings:?}");
    assert!(Runs::of(&json!({"min_runs": "3"})).is_err());
}

#[test]
fn define_answers_success_for_the_served_modules_only() {
    for module in gradbench::MODULES {
        let response = gradbench::respond(&json!({"id": 1, "kind": "define", "module": module}));
        assert_eq!(response, json!({"id": 1, "success": true}));
    }
    let response = gradbench::respond(&json!({"id": 2, "kind": "define", "module": "ht"}));
    assert_eq!(response["success"], false);
}

// ---------------------------------------------------------------------------
// hello

#[test]
fn hello_square_and_double() {
    assert_eq!(hello::square(3.0), 9.0);
    assert_eq!(hello::double(3.0), 6.0);
    check::gradient(
        |p| hello::square(p[0]),
        |p| vec![hello::double(p[0])],
        &[1.7],
    )
    .assert_within(1e-8);
    check::dot_product_scalar(
        |p| hello::square(p[0]),
        |p| vec![hello::double(p[0])],
        &[-0.3],
    )
    .assert_within(1e-8);
}

// ---------------------------------------------------------------------------
// llsq

/// `∇y = Aᵀ(A x − s)` with `A[i][j] = tᵢʲ`: the normal-equations form.
fn llsq_closed_form(x: &[f64], n: usize) -> (f64, Vec<f64>) {
    let mut grad = vec![0.0; x.len()];
    let mut value = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n - 1) as f64;
        let s = if t == 0.0 { 0.0 } else { t.signum() };
        let fit: f64 = x
            .iter()
            .enumerate()
            .map(|(j, xj)| xj * t.powi(j as i32))
            .sum();
        value += 0.5 * (fit - s) * (fit - s);
        for j in 0..x.len() {
            grad[j] += (fit - s) * t.powi(j as i32);
        }
    }
    (value, grad)
}

#[test]
fn llsq_matches_its_closed_form_finite_differences_and_the_dot_product_test() {
    let x = [0.3, -1.2, 0.7, 2.0, -0.4];
    for n in [2, 7, 10] {
        let (value, grad) = llsq_closed_form(&x, n);
        assert!((llsq::primal(&x, n) - value).abs() <= 1e-12 * value.max(1.0));
        for (g, c) in llsq::gradient(&x, n).iter().zip(&grad) {
            assert!((g - c).abs() <= 1e-12 * c.abs().max(1.0), "{g} vs {c}");
        }
        check::gradient(|p| llsq::primal(p, n), |p| llsq::gradient(p, n), &x).assert_within(1e-7);
        check::dot_product_scalar(|p| llsq::primal(p, n), |p| llsq::gradient(p, n), &x)
            .assert_within(1e-7);
    }
}

// ---------------------------------------------------------------------------
// lse

#[test]
fn lse_gradient_is_the_softmax_and_passes_the_checks() {
    let x: [f64; 5] = [0.5, -2.0, 3.25, 3.25, 1.0];
    let total: f64 = x.iter().map(|v| v.exp()).sum();
    assert!((lse::primal(&x) - total.ln()).abs() < 1e-13);
    for (g, v) in lse::gradient(&x).iter().zip(&x) {
        assert!((g - v.exp() / total).abs() < 1e-15, "{g}");
    }
    let y = [0.5, -2.0, 3.0, 1.0];
    check::gradient(lse::primal, lse::gradient, &y).assert_within(1e-8);
    check::dot_product_scalar(lse::primal, lse::gradient, &y).assert_within(1e-8);
    // Stable where the naive formula overflows.
    assert_eq!(lse::gradient(&[1000.0, 1000.0]), vec![0.5, 0.5]);
    assert!((lse::primal(&[1000.0, 1000.0]) - (1000.0 + 2f64.ln())).abs() < 1e-12);
}

// ---------------------------------------------------------------------------
// ode

#[test]
fn ode_is_exact_for_the_polynomial_solution_and_its_gradient_too() {
    // yᵢ(t) = x₀⋯xᵢ tⁱ⁺¹ / (i+1)!; fourth-order Runge–Kutta is exact up to degree 4.
    let x = [0.7, -1.3, 2.1, 0.4];
    for s in [1, 3, 10] {
        let y = ode::primal(&x, s);
        let mut product = 1.0;
        let mut factorial = 1.0;
        for i in 0..4 {
            product *= x[i];
            factorial *= (i + 1) as f64;
            let exact = product * 2f64.powi(i as i32 + 1) / factorial;
            assert!(
                (y[i] - exact).abs() < 1e-13,
                "s = {s}, y[{i}] = {} vs {exact}",
                y[i]
            );
        }
        let grad = ode::gradient(&x, s);
        for j in 0..4 {
            let exact = product / x[j] * 16.0 / 24.0;
            assert!((grad[j] - exact).abs() < 1e-13, "s = {s}, grad[{j}]");
        }
    }
}

#[test]
fn ode_gradient_and_full_vjp_pass_finite_differences_and_the_dot_product_test() {
    let x = [0.9, 0.4, -0.8, 1.1, 0.3, -0.6, 0.5];
    let s = 5;
    let last = |p: &[f64]| *ode::primal(p, s).last().unwrap();
    check::gradient(last, |p| ode::gradient(p, s), &x).assert_within(1e-7);
    let vjp = |p: &[f64], v: &[f64]| {
        let mut d_x = vec![0.0; p.len()];
        ode::primal_vjp(p, &mut d_x, s, v);
        d_x
    };
    check::vjp(|p| ode::primal(p, s), vjp, &x).assert_within(1e-7);
    check::dot_product(|p| ode::primal(p, s), vjp, &x).assert_within(1e-7);
}

// ---------------------------------------------------------------------------
// gmm

/// A GMM input in the published (jagged) layout, or in the C++ reference's flat one.
fn gmm_input(d: usize, k: usize, n: usize, jagged: bool) -> Value {
    let mut seed = 12345_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut matrix = |rows: usize, cols: usize| -> Vec<Vec<f64>> {
        (0..rows)
            .map(|_| (0..cols).map(|_| next()).collect())
            .collect()
    };
    let x = matrix(n, d);
    let mu = matrix(k, d);
    let q = matrix(k, d);
    let alpha = matrix(1, k).remove(0);
    let l: Value = if jagged {
        (0..k)
            .map(|_| {
                matrix(d, d)
                    .into_iter()
                    .enumerate()
                    .map(|(r, row)| row[..r].to_vec())
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
            .into()
    } else {
        matrix(k, d * (d - 1) / 2).into()
    };
    json!({"d": d, "k": k, "n": n, "x": x, "m": 2, "gamma": 0.7, "alpha": alpha, "mu": mu, "q": q, "l": l})
}

/// `Qₖ` as a dense row-major matrix, from a parsed problem.
fn dense_q(p: &gmm::Problem, c: usize) -> Vec<f64> {
    let (d, tri) = (p.d, p.d * (p.d - 1) / 2);
    let mut q = vec![0.0; d * d];
    for r in 0..d {
        q[r * d + r] = p.q[c * d + r].exp();
        for j in 0..r {
            q[r * d + j] = p.l[c * tri + r * (r - 1) / 2 + j];
        }
    }
    q
}

/// The determinant of a dense matrix by Gaussian elimination with partial pivoting.
fn determinant(mut a: Vec<f64>, d: usize) -> f64 {
    let mut det = 1.0;
    for col in 0..d {
        let pivot = (col..d)
            .max_by(|&i, &j| a[i * d + col].abs().total_cmp(&a[j * d + col].abs()))
            .unwrap();
        if pivot != col {
            for j in 0..d {
                a.swap(pivot * d + j, col * d + j);
            }
            det = -det;
        }
        det *= a[col * d + col];
        for i in col + 1..d {
            let f = a[i * d + col] / a[col * d + col];
            for j in col..d {
                a[i * d + j] -= f * a[col * d + j];
            }
        }
    }
    det
}

/// The log posterior straight from the published definition: the mixture of
/// Gaussian densities with precision matrices `Pₖ` (`Qₖ Qₖᵀ` in the jagged layout,
/// `Qₖᵀ Qₖ` in the flat one), times the Wishart densities `W_D(Pₖ; γ⁻² I, D + m + 1)`,
/// each computed with explicit matrices and determinants.
fn gmm_by_definition(p: &gmm::Problem) -> f64 {
    use std::f64::consts::PI;
    let d = p.d;
    let precision: Vec<Vec<f64>> = (0..p.k)
        .map(|c| {
            let q = dense_q(p, c);
            let mut pm = vec![0.0; d * d];
            for i in 0..d {
                for j in 0..d {
                    pm[i * d + j] = (0..d)
                        .map(|r| match p.layout {
                            gmm::Layout::Jagged => q[i * d + r] * q[j * d + r],
                            gmm::Layout::Flat => q[r * d + i] * q[r * d + j],
                        })
                        .sum();
                }
            }
            pm
        })
        .collect();
    let total: f64 = p.alpha.iter().map(|a| a.exp()).sum();
    let mut log_likelihood = 0.0;
    for i in 0..p.n {
        let mut density = 0.0;
        for c in 0..p.k {
            let v: Vec<f64> = (0..d).map(|j| p.x[i * d + j] - p.mu[c * d + j]).collect();
            let mut quad = 0.0;
            for a in 0..d {
                for b in 0..d {
                    quad += v[a] * precision[c][a * d + b] * v[b];
                }
            }
            let det = determinant(precision[c].clone(), d);
            density += p.alpha[c].exp() / total
                * (det / (2.0 * PI).powi(d as i32)).sqrt()
                * (-0.5 * quad).exp();
        }
        log_likelihood += density.ln();
    }
    let dof = d as f64 + p.m + 1.0;
    let mut log_prior = 0.0;
    for c in 0..p.k {
        let det = determinant(precision[c].clone(), d);
        let trace: f64 = (0..d).map(|j| precision[c][j * d + j]).sum();
        let ln_det_v = -2.0 * d as f64 * p.gamma.ln();
        log_prior += 0.5 * (dof - d as f64 - 1.0) * det.ln()
            - 0.5 * p.gamma * p.gamma * trace
            - 0.5 * dof * d as f64 * 2f64.ln()
            - 0.5 * dof * ln_det_v
            - gmm::ln_multigamma(0.5 * dof, d as f64);
    }
    log_likelihood + log_prior
}

#[test]
fn ln_gamma_matches_known_values() {
    let ln_pi = std::f64::consts::PI.ln();
    assert!((gmm::ln_gamma(0.5) - 0.5 * ln_pi).abs() < 1e-14);
    assert!(gmm::ln_gamma(1.0).abs() < 1e-14 && gmm::ln_gamma(2.0).abs() < 1e-14);
    assert!((gmm::ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    assert!((gmm::ln_gamma(0.1) - 2.252_712_651_734_206).abs() < 1e-13);
    // Γ₂(a) = √π Γ(a) Γ(a − ½).
    let a = 2.3;
    let expected = 0.5 * ln_pi + gmm::ln_gamma(a) + gmm::ln_gamma(a - 0.5);
    assert!((gmm::ln_multigamma(a, 2.0) - expected).abs() < 1e-13);
}

#[test]
fn gmm_objective_is_the_published_log_posterior_in_both_layouts() {
    for (d, k, n) in [(1, 1, 3), (2, 3, 4), (4, 2, 5)] {
        for jagged in [true, false] {
            let p = gmm::Problem::from_input(&gmm_input(d, k, n, jagged)).unwrap();
            let value = p.objective();
            let expected = gmm_by_definition(&p);
            assert!(
                (value - expected).abs() < 1e-10 * expected.abs().max(1.0),
                "d {d}, k {k}, n {n}, jagged {jagged}: {value} vs {expected}"
            );
        }
    }
}

#[test]
fn gmm_one_component_in_one_dimension_has_a_closed_form_gradient() {
    let input = json!({"d": 1, "k": 1, "n": 3, "x": [[0.5], [-1.0], [2.0]], "m": 3, "gamma": 1.5,
        "alpha": [0.7], "mu": [[0.2]], "q": [[-0.3]], "l": [[[]]]});
    let p = gmm::Problem::from_input(&input).unwrap();
    let g = p.gradient();
    let (mu, q, gamma, m) = (0.2, -0.3_f64, 1.5, 3.0);
    let xs = [0.5, -1.0, 2.0];
    let e2q = (2.0 * q).exp();
    let d_mu: f64 = xs.iter().map(|x| e2q * (x - mu)).sum();
    let d_q =
        3.0 - e2q * xs.iter().map(|x| (x - mu) * (x - mu)).sum::<f64>() - gamma * gamma * e2q + m;
    assert!(
        g.alpha[0].abs() < 1e-15,
        "one weight: lse(α) − α is constant"
    );
    assert!((g.mu[0] - d_mu).abs() < 1e-13, "{} vs {d_mu}", g.mu[0]);
    assert!((g.q[0] - d_q).abs() < 1e-13, "{} vs {d_q}", g.q[0]);
}

/// The parameters of a problem as one vector, in the order `alpha, mu, q, l`.
fn gmm_point(p: &gmm::Problem) -> Vec<f64> {
    [&p.alpha[..], &p.mu, &p.q, &p.l].concat()
}

/// The problem `p` with its parameters replaced by the vector `v` ([`gmm_point`]).
fn gmm_at(p: &gmm::Problem, v: &[f64]) -> gmm::Problem {
    let mut at = p.clone();
    let (alpha, rest) = v.split_at(p.alpha.len());
    let (mu, rest) = rest.split_at(p.mu.len());
    let (q, l) = rest.split_at(p.q.len());
    (at.alpha, at.mu, at.q, at.l) = (alpha.to_vec(), mu.to_vec(), q.to_vec(), l.to_vec());
    at
}

#[test]
fn gmm_gradient_passes_finite_differences_and_the_dot_product_test() {
    for jagged in [true, false] {
        let p = gmm::Problem::from_input(&gmm_input(3, 2, 4, jagged)).unwrap();
        let f = |v: &[f64]| gmm_at(&p, v).objective();
        let grad = |v: &[f64]| {
            let g = gmm_at(&p, v).gradient();
            [g.alpha, g.mu, g.q, g.l].concat()
        };
        check::gradient(f, grad, &gmm_point(&p)).assert_within(1e-6);
        check::dot_product_scalar(f, grad, &gmm_point(&p)).assert_within(1e-6);
    }
}

#[test]
fn gmm_output_mirrors_the_input_layout() {
    for jagged in [true, false] {
        let input = gmm_input(4, 2, 3, jagged);
        let out = gmm::evaluate("jacobian", &input).unwrap().output;
        for field in ["alpha", "mu", "q", "l"] {
            let shape = |v: &Value| -> Vec<usize> {
                v.as_array().map_or(vec![], |a| {
                    a.iter()
                        .map(|e| {
                            e.as_array().map_or(0, |r| {
                                r.iter()
                                    .map(|x| x.as_array().map_or(1, Vec::len))
                                    .sum::<usize>()
                                    + 1000 * r.len()
                            })
                        })
                        .collect()
                })
            };
            assert_eq!(
                shape(&out[field]),
                shape(&input[field]),
                "{field}, jagged {jagged}"
            );
        }
    }
}

#[test]
fn gmm_flat_l_is_read_column_after_column() {
    // d = 4: the column order (1,0) (2,0) (3,0) (2,1) (3,1) (3,2) differs from the row
    // order (1,0) (2,0) (2,1) (3,0) (3,1) (3,2).
    let mut input = gmm_input(4, 1, 2, false);
    input["l"] = json!([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]);
    let p = gmm::Problem::from_input(&input).unwrap();
    assert_eq!(p.l, vec![1.0, 2.0, 4.0, 3.0, 5.0, 6.0]);
    let out = gmm::evaluate("jacobian", &input).unwrap().output;
    let g = p.gradient();
    let expected = [g.l[0], g.l[1], g.l[3], g.l[2], g.l[4], g.l[5]];
    let got: Vec<f64> = out["l"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(got, expected);
}

// ---------------------------------------------------------------------------
// lstm

/// An LSTM input with `l` layers of `b` cells and `c` steps, as the eval sends it.
fn lstm_input(l: usize, b: usize, c: usize) -> Value {
    let value = |i: usize| ((i * 7919 % 101) as f64 / 101.0 - 0.5) * 0.8;
    let main: Vec<Vec<f64>> = (0..2 * l)
        .map(|r| (0..4 * b).map(|j| value(r * 31 + j)).collect())
        .collect();
    let extra: Vec<Vec<f64>> = (0..3)
        .map(|r| (0..b).map(|j| 1.0 + value(500 + r * 13 + j)).collect())
        .collect();
    let state: Vec<Vec<f64>> = (0..2 * l)
        .map(|r| (0..b).map(|j| value(900 + r * 11 + j)).collect())
        .collect();
    let sequence: Vec<Vec<f64>> = (0..c)
        .map(|t| {
            (0..b)
                .map(|j| if (t + j) % b == 0 { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    json!({"main_params": main, "extra_params": extra, "state": state, "sequence": sequence})
}

/// Flattens the rows of a JSON matrix.
fn rows_of(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect()
}

#[test]
fn lstm_one_cell_one_step_has_a_closed_form() {
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let main = [0.3, -0.2, 0.5, 0.7, 0.1, 0.2, -0.3, 0.05];
    let extra = [1.2, 0.8, -0.1];
    let (h0, c0) = (0.4, -0.6);
    let (s0, s1) = (1.0, 0.5);
    let input = s0 * extra[0];
    let forget = sigmoid(input * main[0] + main[4]);
    let ingate = sigmoid(h0 * main[1] + main[5]);
    let outgate = sigmoid(input * main[2] + main[6]);
    let change = (h0 * main[3] + main[7]).tanh();
    let cell = c0 * forget + ingate * change;
    let y = outgate * cell.tanh() * extra[1] + extra[2];
    let expected = -s1 * (y - (y.exp() + 2.0).ln());
    let value = lstm::objective(&main, &extra, &[h0, c0], &[s0, s1], 1, 1, 2);
    assert!((value - expected).abs() < 1e-15, "{value} vs {expected}");
}

#[test]
fn lstm_jacobian_passes_finite_differences_and_the_dot_product_test() {
    for (l, b, c) in [(1, 2, 3), (2, 3, 4)] {
        let input = lstm_input(l, b, c);
        let main = rows_of(&input["main_params"]);
        let extra = rows_of(&input["extra_params"]);
        let state = rows_of(&input["state"]);
        let sequence = rows_of(&input["sequence"]);
        let n_main = main.len();
        let f = |p: &[f64]| lstm::objective(&p[..n_main], &p[n_main..], &state, &sequence, l, b, c);
        let grad =
            |p: &[f64]| lstm::jacobian(&p[..n_main], &p[n_main..], &state, &sequence, l, b, c);
        let point = [main.clone(), extra.clone()].concat();
        check::gradient(f, grad, &point).assert_within(1e-7);
        check::dot_product_scalar(f, grad, &point).assert_within(1e-7);
        let out = lstm::evaluate("jacobian", &input).unwrap().output;
        assert_eq!(out.as_array().unwrap().len(), 8 * l * b + 3 * b);
    }
}

// ---------------------------------------------------------------------------
// kmeans

/// Points in `[0, 1)^d` from a fixed sequence; the last `k` are the centroids,
/// as the eval makes them (so that no cluster is empty).
fn kmeans_problem(n: usize, k: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let points: Vec<f64> = (0..n * d)
        .map(|i| ((i as f64 * 0.618_033_988_75).fract() + (i as f64 * 0.37).sin().abs()) / 2.0)
        .collect();
    let centroids = points[(n - k) * d..].to_vec();
    (points, centroids)
}

#[test]
fn kmeans_direction_moves_each_centroid_to_the_mean_of_its_points() {
    let (n, k, d) = (60, 4, 3);
    let (points, centroids) = kmeans_problem(n, k, d);
    // The cost and the assignment by definition.
    let mut cost = 0.0;
    let mut sums = vec![0.0; k * d];
    let mut counts = vec![0.0; k];
    for p in points.chunks_exact(d) {
        let dist = |c: &[f64]| c.iter().zip(p).map(|(c, p)| (c - p) * (c - p)).sum::<f64>();
        let nearest = (0..k)
            .min_by(|&a, &b| {
                dist(&centroids[a * d..][..d]).total_cmp(&dist(&centroids[b * d..][..d]))
            })
            .unwrap();
        cost += dist(&centroids[nearest * d..][..d]);
        counts[nearest] += 1.0;
        for j in 0..d {
            sums[nearest * d + j] += p[j];
        }
    }
    assert!((kmeans::cost(&points, &centroids, d) - cost).abs() <= 1e-12 * cost);
    // Newton's step on a diagonal quadratic: J / H = c − mean of its points.
    let dir = kmeans::dir(&points, &centroids, d);
    for c in 0..k {
        for j in 0..d {
            let expected = centroids[c * d + j] - sums[c * d + j] / counts[c];
            assert!(
                (dir[c * d + j] - expected).abs() < 1e-12,
                "{} vs {expected}",
                dir[c * d + j]
            );
        }
    }
    // The gradient against finite differences and the dot-product test.
    let gradient = |c: &[f64]| {
        let mut d_c = vec![0.0; c.len()];
        kmeans::cost_vjp(&points, c, &mut d_c, d, 1.0);
        d_c
    };
    check::gradient(|c| kmeans::cost(&points, c, d), gradient, &centroids).assert_within(1e-7);
    check::dot_product_scalar(|c| kmeans::cost(&points, c, d), gradient, &centroids)
        .assert_within(1e-7);
    // `H · 1` is the diagonal: central differences of the gradient along
    // each coordinate give one diagonal entry and zeros elsewhere.
    let ones = vec![1.0; k * d];
    let (mut g, mut h) = (vec![0.0; k * d], vec![0.0; k * d]);
    kmeans::cost_hvp(&points, &centroids, &ones, &mut g, &mut h, d);
    for i in 0..k * d {
        let step = 1e-6;
        let mut plus = centroids.clone();
        let mut minus = centroids.clone();
        plus[i] += step;
        minus[i] -= step;
        let column: Vec<f64> = gradient(&plus)
            .iter()
            .zip(gradient(&minus))
            .map(|(a, b)| (a - b) / (2.0 * step))
            .collect();
        for (r, entry) in column.iter().enumerate() {
            let expected = if r == i { h[i] } else { 0.0 };
            assert!(
                (entry - expected).abs() < 1e-6,
                "H[{r}][{i}] = {entry}, expected {expected}"
            );
        }
        assert_eq!(h[i], 2.0 * counts[i / d]);
    }
}

// ---------------------------------------------------------------------------
// det

#[test]
fn det_is_the_determinant_and_its_gradient_the_cofactors() {
    assert_eq!(det::primal(&[2.5], 1), 2.5);
    assert_eq!(det::gradient(&[2.5], 1), vec![1.0]);
    assert_eq!(det::primal(&[1.0, 2.0, 3.0, 4.0], 2), -2.0);
    assert_eq!(
        det::gradient(&[1.0, 2.0, 3.0, 4.0], 2),
        vec![4.0, -3.0, -2.0, 1.0]
    );
    for ell in [3, 5, 6] {
        let a: Vec<f64> = (0..ell * ell)
            .map(|i| ((i as f64) * 0.77).sin() + 0.1)
            .collect();
        let value = det::primal(&a, ell);
        let lu = determinant(a.clone(), ell);
        assert!(
            (value - lu).abs() <= 1e-12 * lu.abs().max(1.0),
            "{value} vs {lu}"
        );
        // ∂ det / ∂aᵢⱼ is the cofactor: det A · (A⁻¹)ⱼᵢ, here by replacing
        // row i with the unit vector eⱼ.
        let gradient = det::gradient(&a, ell);
        for i in 0..ell {
            for j in 0..ell {
                let mut b = a.clone();
                for c in 0..ell {
                    b[i * ell + c] = if c == j { 1.0 } else { 0.0 };
                }
                let cofactor = determinant(b, ell);
                let got = gradient[i * ell + j];
                assert!(
                    (got - cofactor).abs() <= 1e-12 * cofactor.abs().max(1.0),
                    "{got} vs {cofactor}"
                );
            }
        }
        check::gradient(|a| det::primal(a, ell), |a| det::gradient(a, ell), &a).assert_within(1e-7);
        check::dot_product_scalar(|a| det::primal(a, ell), |a| det::gradient(a, ell), &a)
            .assert_within(1e-7);
    }
}

// ---------------------------------------------------------------------------
// ba

/// The camera, point, weight and feature of ADBench's smallest data file's
/// kind: a rotation, a centre, a focal length, a principal point, distortion.
fn ba_input(n: usize, m: usize, p: usize) -> Value {
    json!({
        "n": n, "m": m, "p": p,
        "cam": [-0.0175, 0.0126, -0.0052, -0.82, 0.61, 2.45, 399.75, 0.33, -0.12, -3.2e-7, 9.1e-13],
        "x": [-0.61, 0.57, -1.85],
        "w": 0.7,
        "feat": [-332.65, 262.09],
    })
}

/// The block parameters of one observation as a flat point `(cam…, x…, w)`.
fn ba_block(point: &[f64], feat: &[f64]) -> Vec<f64> {
    ba::reprojection_error(&point[..11], &point[11..14], point[14], feat).to_vec()
}

#[test]
fn ba_block_is_the_jacobian_of_the_reprojection_error() {
    let input = ba_input(1, 1, 1);
    let cam: Vec<f64> = serde_json::from_value(input["cam"].clone()).unwrap();
    let x: Vec<f64> = serde_json::from_value(input["x"].clone()).unwrap();
    let feat = [-332.65, 262.09];
    for rotation in [[-0.0175, 0.0126, -0.0052], [0.0, 0.0, 0.0]] {
        let mut point: Vec<f64> = cam.clone();
        point[..3].copy_from_slice(&rotation);
        point.extend(&x);
        point.push(0.7);
        // Closed form at zero rotation, zero distortion: the pinhole
        // w · (f · (X − C)ₓ / (X − C)_z + u₀ − feat).
        if rotation == [0.0; 3] {
            let mut pinhole = point.clone();
            pinhole[9] = 0.0;
            pinhole[10] = 0.0;
            let (dx, dz) = (x[0] - cam[3], x[2] - cam[5]);
            let expected = 0.7 * (cam[6] * dx / dz + cam[7] - feat[0]);
            assert!((ba_block(&pinhole, &feat)[0] - expected).abs() < 1e-9);
        }
        // The 2 × 15 block of one `_jvp_lanes`, row by row against finite
        // differences, and each entry against `_jvp` along its parameter.
        let problem = ba::Problem {
            cams: point[..11].to_vec(),
            points: point[11..14].to_vec(),
            weights: vec![point[14]],
            obs: vec![(0, 0)],
            feats: feat.to_vec(),
        };
        let sparse = ba::jacobian(&problem);
        assert_eq!(sparse.rows, vec![0, 15, 30, 31]);
        assert_eq!(sparse.cols[..15], (0..15).collect::<Vec<_>>()[..]);
        for r in 0..2 {
            let row = &sparse.vals[15 * r..15 * (r + 1)];
            check::gradient(|q| ba_block(q, &feat)[r], |_| row.to_vec(), &point)
                .assert_within(1e-6);
            for (l, &entry) in row.iter().enumerate() {
                let mut u = [0.0; 15];
                u[l] = 1.0;
                let (_, t) = ba::reprojection_error_jvp(
                    &point[..11],
                    &u[..11],
                    &point[11..14],
                    &u[11..14],
                    point[14],
                    u[14],
                    &feat,
                );
                assert_eq!(entry.to_bits(), t[r].to_bits());
            }
        }
        assert_eq!(sparse.vals[30], -2.0 * 0.7);
        // The block times a direction against central differences of the
        // residuals along it.
        let u: Vec<f64> = (0..15).map(|i| ((i * 7 % 5) as f64 - 2.0) * 1e-3).collect();
        let ju: Vec<f64> = (0..2)
            .map(|r| (0..15).map(|l| sparse.vals[15 * r + l] * u[l]).sum())
            .collect();
        let plus: Vec<f64> = point.iter().zip(&u).map(|(p, u)| p + 1e-4 * u).collect();
        let minus: Vec<f64> = point.iter().zip(&u).map(|(p, u)| p - 1e-4 * u).collect();
        for r in 0..2 {
            let fd = (ba_block(&plus, &feat)[r] - ba_block(&minus, &feat)[r]) / 2e-4;
            assert!(
                (fd - ju[r]).abs() <= 1e-6 * fd.abs().max(1.0),
                "{fd} vs {}",
                ju[r]
            );
        }
    }
}

#[test]
fn ba_sparse_layout_follows_adbench() {
    let (n, m, p) = (2, 3, 20);
    let evaluation = gradbench::evaluate("ba", "jacobian", &ba_input(n, m, p)).unwrap();
    let output = &evaluation.output;
    let rows: Vec<usize> = serde_json::from_value(output["rows"].clone()).unwrap();
    let cols: Vec<usize> = serde_json::from_value(output["cols"].clone()).unwrap();
    let vals: Vec<f64> = serde_json::from_value(output["vals"].clone()).unwrap();
    // The first 30 offsets (rows of 15 entries), then the last: 2p rows of
    // 15 and p rows of one.
    let mut expected_rows: Vec<usize> = (0..30).map(|r| 15 * r).collect();
    expected_rows.push(2 * p * 15 + p);
    assert_eq!(rows, expected_rows);
    // Observation 0: camera 0's 11 columns, point 0's 3 after the n
    // cameras, weight 0's after the m points; the last entry is the last
    // weight's.
    let first: Vec<usize> = (0..11)
        .chain(11 * n..11 * n + 3)
        .chain([11 * n + 3 * m])
        .collect();
    assert_eq!(cols[..15], first[..]);
    assert_eq!(cols[15..30], first[..]);
    assert_eq!(cols[30], 11 * n + 3 * m + p - 1);
    assert_eq!((cols.len(), vals.len()), (31, 31));
    assert_eq!(vals[30], -2.0 * 0.7);
    let objective = gradbench::evaluate("ba", "objective", &ba_input(n, m, p))
        .unwrap()
        .output;
    assert_eq!(objective["reproj_error"]["repeated"], p);
    assert_eq!(
        objective["w_err"],
        json!({"element": 1.0 - 0.7 * 0.7, "repeated": p})
    );
}

// ---------------------------------------------------------------------------
// saddle and particle: nested differentiation

/// GradBench's expected outputs (its `saddle` and `particle` evals compare
/// every tool with these).
const SADDLE: f64 = 8.246_324_826_140_356e-6;
const PARTICLE: f64 = 0.207_191_874_648_611_6;

#[test]
fn saddle_in_all_four_combinations_gives_the_published_point() {
    for (name, saddle) in [
        ("ff", saddle::ff as fn([f64; 2]) -> [f64; 4]),
        ("fr", saddle::fr),
        ("rf", saddle::rf),
        ("rr", saddle::rr),
    ] {
        let point = saddle([1.0, 1.0]);
        for v in point {
            assert!((v - SADDLE).abs() <= 1e-12 * SADDLE, "{name}: {point:?}");
        }
    }
}

#[test]
fn particle_in_all_four_combinations_gives_the_published_control() {
    for (name, particle) in [
        ("ff", particle::ff as fn(f64) -> f64),
        ("fr", particle::fr),
        ("rf", particle::rf),
        ("rr", particle::rr),
    ] {
        let w = particle(0.0);
        assert!((w - PARTICLE).abs() <= 1e-12, "{name}: {w}");
    }
}

#[test]
fn the_nested_derivatives_agree_with_finite_differences() {
    // The derivative of the flight's cost in `w`, four ways.
    let w = 0.1;
    let h = 1e-6;
    let fd = (particle::naive_euler_r(w + h) - particle::naive_euler_r(w - h)) / (2.0 * h);
    let ways = [
        particle::naive_euler_f_jvp(w, 1.0).1,
        particle::naive_euler_r_jvp(w, 1.0).1,
        particle::naive_euler_f_vjp(w, 1.0).1,
        particle::naive_euler_r_vjp(w, 1.0).1,
    ];
    for d in ways {
        assert!(
            (d - fd).abs() <= 1e-6 * fd.abs().max(1.0),
            "{ways:?} vs {fd}"
        );
    }
    // The inner maximum's gradient in x: maxᵧ f(x, y) = x₁² + x₂², so 2x.
    let (x1, x2) = (0.3, -0.4);
    let (_, d_x1, d_x2, _, _) = saddle::inner_max_r_vjp(x1, x2, 1.0, 1.0, 1.0);
    let (_, t) = saddle::inner_max_f_jvp(x1, 1.0, x2, 0.5, 1.0, 0.0, 1.0, 0.0);
    assert!((d_x1 - 2.0 * x1).abs() < 1e-9 && (d_x2 - 2.0 * x2).abs() < 1e-9);
    assert!((t - (2.0 * x1 + x2)).abs() < 1e-9);
}
