//! GradBench's protocol: one JSON message per line in, one response per line out.
//!
//! The eval sends `start`, `define`, `evaluate` and `analysis` messages, each with an
//! `id`; the tool answers every message with the same `id`. `define` is answered with
//! `success` (whether the module is served), `evaluate` with `success`, the `output`
//! and `timings`, or `success: false` and an `error`; anything else with the `id`
//! alone. `start` also gets the tool's name.

use std::io::{self, BufRead, Write};

use serde::Serialize;
use serde_json::Value;

use super::{MODULES, Timing, evaluate};

/// The tool's name, given in the answer to `start`.
pub const TOOL: &str = "ad";

/// A response; absent fields are left out of the JSON.
#[derive(Serialize)]
struct Response {
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    success: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<Vec<Timing>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Response {
    fn to(id: Value) -> Response {
        Response {
            id,
            tool: None,
            success: None,
            output: None,
            timings: None,
            error: None,
        }
    }

    fn failure(mut self, error: String) -> Response {
        self.success = Some(false);
        self.error = Some(error);
        self
    }
}

/// The response to one message, as a JSON value.
#[must_use]
pub fn respond(message: &Value) -> Value {
    let response = response(message);
    serde_json::to_value(response).expect("a response is plain JSON")
}

fn response(message: &Value) -> Response {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let reply = Response::to(id);
    let text = |field: &str| message.get(field).and_then(Value::as_str).unwrap_or("");
    match text("kind") {
        "start" => Response {
            tool: Some(TOOL),
            ..reply
        },
        "define" => {
            let module = text("module");
            if MODULES.contains(&module) {
                Response {
                    success: Some(true),
                    ..reply
                }
            } else {
                reply.failure(format!("unknown module `{module}`"))
            }
        }
        "evaluate" => {
            let input = message.get("input").unwrap_or(&Value::Null);
            match evaluate(text("module"), text("function"), input) {
                Ok(evaluation) => Response {
                    success: Some(true),
                    output: Some(evaluation.output),
                    timings: Some(evaluation.timings),
                    ..reply
                },
                Err(error) => reply.failure(error),
            }
        }
        _ => reply,
    }
}

/// Answers every message read from `input`, one line each, on `output`, until the
/// input ends. Blank lines are skipped.
///
/// # Errors
///
/// If reading or writing fails, or a line is not JSON: there is no `id` to answer
/// it with, so the session cannot go on.
pub fn serve(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = serde_json::from_str(&line).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a message is not JSON ({e}): {line}"),
            )
        })?;
        serde_json::to_writer(&mut output, &response(&message))?;
        writeln!(output)?;
        output.flush()?;
    }
    Ok(())
}
