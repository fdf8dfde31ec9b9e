//! The `lstm` eval: the loss of ADBench's LSTM, whose weight matrices are diagonal.
//!
//! With `l` layers of `b` cells and a sequence of `c` one-hot-like vectors of `b`
//! entries, each step feeds `sequence[t] ⊙ in_weight` through the layers (each cell
//! `i` of a layer has the gates `forget = σ(inputᵢ w_f + b_f)`, `ingate = σ(hᵢ w_i +
//! b_i)`, `outgate = σ(inputᵢ w_o + b_o)`, `change = tanh(hᵢ w_c + b_c)`, then
//! `cell = cell · forget + ingate · change`, `h = outgate · tanh(cell)`), predicts
//! `y = h_last ⊙ out_weight + out_bias`, normalises it by ADBench's
//! `ln(Σ exp(y) + 2)`, and scores it against `sequence[t + 1]`. The loss is minus
//! the mean score over the `(c − 1) b` entries.
//!
//! Input (all matrices arrays of rows): `main_params` has `2l` rows of `4b`: for
//! layer `j`, row `2j` holds the weights and row `2j + 1` the biases of the gates
//! forget, ingate, outgate, change, `b` each; `extra_params` has 3 rows of `b`:
//! `in_weight`, `out_weight`, `out_bias`; `state` has `2l` rows of `b`: row `2j`
//! the hidden state and row `2j + 1` the cell state of layer `j`; `sequence` has
//! `c` rows of `b`. `objective` returns the loss; `jacobian` its gradient with
//! respect to `main_params` then `extra_params`, each flattened row after row.

use ad_runtime::differentiate;
use serde::Deserialize;
use serde_json::Value;

use super::{Evaluation, flatten, parse, timed, unknown_function};

/// The loss, for `l ≥ 1` layers of `b` cells and `c ≥ 2` steps; the buffers are the
/// input's matrices flattened row after row.
#[differentiate(wrt(main_params, extra_params))]
pub fn objective(
    main_params: &[f64],
    extra_params: &[f64],
    state: &[f64],
    sequence: &[f64],
    l: usize,
    b: usize,
    c: usize,
) -> f64 {
    let mut hidden = vec![0.0; l * b];
    let mut cell = vec![0.0; l * b];
    for j in 0..l {
        for i in 0..b {
            hidden[j * b + i] = state[2 * j * b + i];
            cell[j * b + i] = state[(2 * j + 1) * b + i];
        }
    }
    let mut y = vec![0.0; b];
    let mut total = 0.0;
    for t in 0..c - 1 {
        for j in 0..l {
            let w = 8 * j * b;
            for i in 0..b {
                let input = if j == 0 {
                    sequence[t * b + i] * extra_params[i]
                } else {
                    hidden[(j - 1) * b + i]
                };
                let h = hidden[j * b + i];
                let forget = 1.0
                    / (1.0 + (-(input * main_params[w + i] + main_params[w + 4 * b + i])).exp());
                let ingate = 1.0
                    / (1.0 + (-(h * main_params[w + b + i] + main_params[w + 5 * b + i])).exp());
                let outgate = 1.0
                    / (1.0
                        + (-(input * main_params[w + 2 * b + i] + main_params[w + 6 * b + i]))
                            .exp());
                let change = (h * main_params[w + 3 * b + i] + main_params[w + 7 * b + i]).tanh();
                let next = cell[j * b + i] * forget + ingate * change;
                cell[j * b + i] = next;
                hidden[j * b + i] = outgate * next.tanh();
            }
        }
        let mut sum = 0.0;
        for i in 0..b {
            y[i] = hidden[(l - 1) * b + i] * extra_params[b + i] + extra_params[2 * b + i];
            sum += y[i].exp();
        }
        let norm = (sum + 2.0).ln();
        for i in 0..b {
            total += sequence[(t + 1) * b + i] * (y[i] - norm);
        }
    }
    -total / (((c - 1) * b) as f64)
}

/// The gradient of [`objective`] with respect to `main_params` then `extra_params`,
/// concatenated, from its `_vjp`.
#[must_use]
pub fn jacobian(
    main_params: &[f64],
    extra_params: &[f64],
    state: &[f64],
    sequence: &[f64],
    l: usize,
    b: usize,
    c: usize,
) -> Vec<f64> {
    let mut d_main = vec![0.0; main_params.len()];
    let mut d_extra = vec![0.0; extra_params.len()];
    objective_vjp(
        main_params,
        &mut d_main,
        extra_params,
        &mut d_extra,
        state,
        sequence,
        l,
        b,
        c,
        1.0,
    );
    d_main.extend_from_slice(&d_extra);
    d_main
}

/// The input of both functions, as the eval sends it.
#[derive(Deserialize)]
struct Input {
    main_params: Vec<Vec<f64>>,
    extra_params: Vec<Vec<f64>>,
    state: Vec<Vec<f64>>,
    sequence: Vec<Vec<f64>>,
}

/// The input flattened, with its dimensions.
struct Problem {
    main_params: Vec<f64>,
    extra_params: Vec<f64>,
    state: Vec<f64>,
    sequence: Vec<f64>,
    l: usize,
    b: usize,
    c: usize,
}

impl Problem {
    fn new(input: Input) -> Result<Problem, String> {
        let rows = input.main_params.len();
        if rows == 0 || !rows.is_multiple_of(2) {
            return Err(format!("`main_params` must have 2l ≥ 2 rows, not {rows}"));
        }
        let l = rows / 2;
        let width = input.main_params[0].len();
        if width == 0 || !width.is_multiple_of(4) {
            return Err(format!(
                "`main_params` rows must have 4b ≥ 4 entries, not {width}"
            ));
        }
        let b = width / 4;
        let c = input.sequence.len();
        if c < 2 {
            return Err(format!("`sequence` must have at least 2 rows, not {c}"));
        }
        Ok(Problem {
            main_params: flatten("main_params", &input.main_params, 2 * l, 4 * b)?,
            extra_params: flatten("extra_params", &input.extra_params, 3, b)?,
            state: flatten("state", &input.state, 2 * l, b)?,
            sequence: flatten("sequence", &input.sequence, c, b)?,
            l,
            b,
            c,
        })
    }
}

/// Answers an `evaluate` message of module `lstm`.
///
/// # Errors
///
/// If the input does not have the eval's format or the function is not `objective`
/// or `jacobian`.
pub fn evaluate(function: &str, input: &Value) -> Result<Evaluation, String> {
    let p = Problem::new(parse(input)?)?;
    let args = (&p.main_params, &p.extra_params, &p.state, &p.sequence);
    match function {
        "objective" => timed(input, || {
            objective(args.0, args.1, args.2, args.3, p.l, p.b, p.c)
        }),
        "jacobian" => timed(input, || {
            jacobian(args.0, args.1, args.2, args.3, p.l, p.b, p.c)
        }),
        _ => Err(unknown_function("lstm", function)),
    }
}
