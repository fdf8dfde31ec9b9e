//! Long and deeply nested functions, as generated numerical code writes them
//! (unrolled kernels, code from symbolic tools, long physics steps), with
//! an independent reference for their value and gradient.
//!
//! Each family is a sequence of statements drawn from a small cycle, with
//! constants that vary with the statement's position, so that no two
//! neighbours are alike. [`Family::source`] writes the Rust function;
//! [`Family::directional`] runs the same computation in forward-mode dual
//! numbers, with no macro involved, and is what the generated `_vjp` must
//! match.

use std::fmt::Write as _;

/// A dual number: a value and its derivative along one direction.
#[derive(Clone, Copy, Debug)]
struct Dual {
    v: f64,
    d: f64,
}

impl Dual {
    fn constant(v: f64) -> Dual {
        Dual { v, d: 0.0 }
    }
    fn add(self, o: Dual) -> Dual {
        Dual {
            v: self.v + o.v,
            d: self.d + o.d,
        }
    }
    fn mul(self, o: Dual) -> Dual {
        Dual {
            v: self.v * o.v,
            d: self.d * o.v + self.v * o.d,
        }
    }
    fn scale(self, c: f64) -> Dual {
        Dual {
            v: self.v * c,
            d: self.d * c,
        }
    }
    fn sin(self) -> Dual {
        Dual {
            v: self.v.sin(),
            d: self.d * self.v.cos(),
        }
    }
    fn tanh(self) -> Dual {
        let t = self.v.tanh();
        Dual {
            v: t,
            d: self.d * (1.0 - t * t),
        }
    }
    fn ln(self) -> Dual {
        Dual {
            v: self.v.ln(),
            d: self.d / self.v,
        }
    }
}

/// The constants of statement `i` in variant `variant` (a branch's other
/// side uses other constants).
fn constants(i: usize, variant: usize) -> (f64, f64) {
    let decay = 0.999 - (i % 7) as f64 * 1e-4 - variant as f64 * 1e-3;
    let freq = 3.0 + (i % 5) as f64 * 0.1 + variant as f64 * 0.5;
    (decay, freq)
}

/// Rust for statement `i` of the cycle, over the variables `a`, `b`, `t`.
///
/// The `let t` and its use are a block of their own: thousands of `let`s in
/// one block crash rustc on the function alone, before any macro (each `let`
/// nests a scope, and LLVM's debug info recurses per level).
fn statement(out: &mut String, i: usize, variant: usize) {
    let (decay, freq) = constants(i, variant);
    match i % 4 {
        0 => writeln!(out, "a = a * {decay:?} + (b * {freq:?}).sin() * 0.001;"),
        1 => writeln!(out, "b = b + a.tanh() * 0.01;"),
        2 => writeln!(out, "{{\nlet t = a * a + b * b + 1.0;"),
        _ => writeln!(out, "a = a + t.ln() * 0.001;\n}}"),
    }
    .expect("writing to a String");
}

/// Statements `0..n`, with the last block closed.
fn statements(out: &mut String, n: usize, variant: usize) {
    for i in 0..n {
        statement(out, i, variant);
    }
    if n % 4 == 3 {
        out.push_str("}\n");
    }
}

/// Statement `i`, run on dual numbers.
fn step(i: usize, variant: usize, a: &mut Dual, b: &mut Dual, t: &mut Dual) {
    let (decay, freq) = constants(i, variant);
    match i % 4 {
        0 => *a = a.scale(decay).add(b.scale(freq).sin().scale(0.001)),
        1 => *b = b.add(a.tanh().scale(0.01)),
        2 => *t = a.mul(*a).add(b.mul(*b)).add(Dual::constant(1.0)),
        _ => *a = a.add(t.ln().scale(0.001)),
    }
}

/// A family of long or deeply nested functions.
#[derive(Clone, Copy, Debug)]
pub enum Family {
    /// `fn name(a0: f64, b0: f64) -> f64`: `n` statements in a row.
    StraightLine { n: usize },
    /// `fn name(xs: &[f64], b0: f64) -> f64`: `n` statements in the body of
    /// a loop over `xs`, carrying `b` and summing `a`.
    InALoop { n: usize },
    /// `fn name(a0: f64, b0: f64) -> f64`: `n / 2` statements in each
    /// branch of an `if a0 > b0`, with different constants.
    InBranches { n: usize },
    /// `fn name(a0: f64, b0: f64) -> f64`: one expression `depth` calls
    /// deep, `((a0 * c + b0).sin() * c + b0).sin() …`.
    NestedExpression { depth: usize },
    /// `fn name(xs: &[f64], b0: f64) -> f64`: `depth` loops over `0..2`
    /// nested in each other, the innermost updating `s` from `xs[i_k]`.
    NestedLoops { depth: usize },
}

impl Family {
    /// Whether the function takes a buffer `xs` (and a scalar `b0`) rather
    /// than two scalars `a0`, `b0`.
    pub fn takes_a_buffer(self) -> bool {
        matches!(self, Family::InALoop { .. } | Family::NestedLoops { .. })
    }

    /// The function, named `name`.
    pub fn source(self, name: &str) -> String {
        let mut out = String::new();
        match self {
            Family::StraightLine { n } => {
                writeln!(out, "fn {name}(a0: f64, b0: f64) -> f64 {{").unwrap();
                out.push_str("let mut a = a0;\nlet mut b = b0;\n");
                statements(&mut out, n, 0);
                out.push_str("a + b\n}\n");
            }
            Family::InALoop { n } => {
                writeln!(out, "fn {name}(xs: &[f64], b0: f64) -> f64 {{").unwrap();
                out.push_str("let mut b = b0;\nlet mut s = 0.0;\nfor i in 0..xs.len() {\nlet mut a = xs[i];\n");
                statements(&mut out, n, 0);
                out.push_str("s += a;\n}\ns + b\n}\n");
            }
            Family::InBranches { n } => {
                writeln!(out, "fn {name}(a0: f64, b0: f64) -> f64 {{").unwrap();
                out.push_str("let mut a = a0;\nlet mut b = b0;\nif a0 > b0 {\n");
                statements(&mut out, n / 2, 0);
                out.push_str("} else {\n");
                statements(&mut out, n / 2, 1);
                out.push_str("}\na + b\n}\n");
            }
            Family::NestedExpression { depth } => {
                let mut expr = String::from("a0");
                for i in 0..depth {
                    let (decay, _) = constants(i, 0);
                    expr = format!("({expr} * {decay:?} + b0).sin()");
                }
                writeln!(out, "fn {name}(a0: f64, b0: f64) -> f64 {{\n{expr}\n}}").unwrap();
            }
            Family::NestedLoops { depth } => {
                writeln!(out, "fn {name}(xs: &[f64], b0: f64) -> f64 {{").unwrap();
                out.push_str("let mut s = b0;\n");
                for k in 0..depth {
                    writeln!(out, "for i{k} in 0..2 {{").unwrap();
                }
                let index: Vec<String> = (0..depth).map(|k| format!("i{k}")).collect();
                writeln!(
                    out,
                    "s = (s * 0.9 + xs[({}) % xs.len()]).sin();",
                    index.join(" + ")
                )
                .unwrap();
                for _ in 0..depth {
                    out.push_str("}\n");
                }
                out.push_str("s\n}\n");
            }
        }
        out
    }

    /// The function's value at `(a0, b0)` (or `(xs, b0)`) and its
    /// derivative along the direction `(da0, db0)` (or `(dxs, db0)`), by
    /// dual numbers. The first input is a slice of one element for the
    /// scalar families.
    pub fn directional(self, x: &[f64], b0: f64, dx: &[f64], db0: f64) -> (f64, f64) {
        let dual = |v: f64, d: f64| Dual { v, d };
        let out = match self {
            Family::StraightLine { n } => {
                let (mut a, mut b, mut t) = (dual(x[0], dx[0]), dual(b0, db0), Dual::constant(0.0));
                for i in 0..n {
                    step(i, 0, &mut a, &mut b, &mut t);
                }
                a.add(b)
            }
            Family::InALoop { n } => {
                let (mut b, mut s) = (dual(b0, db0), Dual::constant(0.0));
                for (&xi, &dxi) in x.iter().zip(dx) {
                    let (mut a, mut t) = (dual(xi, dxi), Dual::constant(0.0));
                    for i in 0..n {
                        step(i, 0, &mut a, &mut b, &mut t);
                    }
                    s = s.add(a);
                }
                s.add(b)
            }
            Family::InBranches { n } => {
                let variant = usize::from(x[0] <= b0);
                let (mut a, mut b, mut t) = (dual(x[0], dx[0]), dual(b0, db0), Dual::constant(0.0));
                for i in 0..n / 2 {
                    step(i, variant, &mut a, &mut b, &mut t);
                }
                a.add(b)
            }
            Family::NestedExpression { depth } => {
                let (mut e, b) = (dual(x[0], dx[0]), dual(b0, db0));
                for i in 0..depth {
                    let (decay, _) = constants(i, 0);
                    e = e.scale(decay).add(b).sin();
                }
                e
            }
            Family::NestedLoops { depth } => {
                let mut s = dual(b0, db0);
                for trip in 0..1_usize << depth {
                    // The indices i0…i(depth-1) of this trip, outermost first,
                    // each 0 or 1: their sum is the number of ones in `trip`.
                    let index = trip.count_ones() as usize % x.len();
                    s = s.scale(0.9).add(dual(x[index], dx[index])).sin();
                }
                s
            }
        };
        (out.v, out.d)
    }
}
