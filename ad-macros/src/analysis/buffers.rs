//! What the adjoint may read again from a buffer.
//!
//! The adjoint runs after the whole primal, so it sees every buffer as the
//! primal left it. An element read in a loop can be read again by the adjoint
//! (instead of being saved on a tape) if nothing writes into its buffer after
//! the read: no later statement of the body writes it, and neither does the
//! statement holding the read (a loop may write the element in a later
//! iteration). Otherwise the element is saved when it is read, before it can be
//! overwritten. The same holds for a buffer's length and `push`.
//!
//! ```text
//! for j in 0..n { h[j] = … }        h is written by statement 1
//! for j in 0..n { s += h[j] * h[j] } statement 2 reads h: read again
//! for t in 0..k { u[0] = u[0] * x } the read of u[0] shares statement 3
//!                                   with a write: saved on a tape
//! ```

use crate::diag::{Ctxt, msg};
use crate::ir::{Function, Inst, Role, Value};

use super::Activity;

/// Where each buffer is written, by statement of the body.
pub(crate) struct Writes {
    /// For each value, the position in the body of the statement holding it.
    top: Vec<usize>,
    /// For each buffer, the instructions that write it, with their statement.
    writers: Vec<Vec<(usize, Value)>>,
    /// For each buffer, the instructions that push onto it.
    pushers: Vec<Vec<(usize, Value)>>,
    /// Whether a value is a statement of the body (not inside a region).
    is_statement: Vec<bool>,
}

impl Writes {
    /// Whether `buf` holds, when the primal ends, what `reader` read from it.
    pub(crate) fn unchanged_after(&self, buf: Value, reader: Value) -> bool {
        self.none_after(&self.writers[buf.index()], reader)
    }

    /// Whether `buf` has, when the primal ends, the length `reader` read.
    pub(crate) fn len_unchanged_after(&self, buf: Value, reader: Value) -> bool {
        self.none_after(&self.pushers[buf.index()], reader)
    }

    /// Whether none of `writers` runs after `reader`: all are in earlier
    /// statements, or the writer is the reader itself, a statement of its own
    /// (a call that reads what it writes, once).
    fn none_after(&self, writers: &[(usize, Value)], reader: Value) -> bool {
        let position = self.top[reader.index()];
        writers.iter().all(|&(write, writer)| {
            write < position || (writer == reader && self.is_statement[reader.index()])
        })
    }
}

pub(crate) fn writes(func: &Function) -> Writes {
    let n_values = func.insts.len();
    let mut writes = Writes {
        top: vec![0; n_values],
        writers: vec![Vec::new(); n_values],
        pushers: vec![Vec::new(); n_values],
        is_statement: vec![false; n_values],
    };
    for (position, &statement) in func.body.insts.iter().enumerate() {
        writes.is_statement[statement.index()] = true;
        let mut stack = vec![statement];
        while let Some(value) = stack.pop() {
            writes.top[value.index()] = position;
            let inst = func.inst(value);
            for buf in func.bases(inst.written()) {
                writes.writers[buf.index()].push((position, value));
                if matches!(inst, Inst::PushElem(..)) {
                    writes.pushers[buf.index()].push((position, value));
                }
            }
            for region in func.regions(value) {
                stack.extend(&region.insts);
            }
        }
    }
    writes
}

/// Reports what the adjoint could not get right: an active value written into
/// a `&mut` parameter that is not differentiated (it has no shadow to carry
/// the value's adjoint).
pub(crate) fn check(cx: &Ctxt, func: &Function, activity: &Activity) {
    func.walk(&mut |_, value| {
        let inst = func.inst(value);
        for buf in func.bases(inst.written()) {
            let Inst::Param(index) = func.inst(buf) else {
                continue;
            };
            let param = &func.params[*index as usize];
            let writes_varied = inst
                .operands()
                .into_iter()
                .any(|operand| operand != buf && activity.is_varied(operand));
            if param.role != Role::Active && func.ty(buf).is_float_buf() && writes_varied {
                cx.error_at(func.span(value), msg::store_into_constant(&param.name));
            }
        }
    });
}
