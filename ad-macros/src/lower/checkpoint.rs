//! `#[checkpoint(snapshots = k)]` and `#[checkpoint(memory = "64 MiB")]` on
//! a `for` loop: the budget is computed before the loop and recorded on its
//! range; the reverse pass and the emitter do the rest (see
//! `emit/checkpoint.rs`).

use syn::parse::ParseStream;
use syn::{Attribute, Expr, Ident, LitStr, Token};

use super::{Lower, Poison};
use crate::diag::msg;
use crate::ir::{Budget, Checkpoint, Const, Inst, Ty};

/// Whether `attr` is ours: `#[checkpoint(…)]` or `#[ad_runtime::checkpoint(…)]`.
pub(crate) fn is_checkpoint(attr: &Attribute) -> bool {
    let path = attr.path();
    path.segments
        .last()
        .is_some_and(|segment| segment.ident == "checkpoint")
        && (path.segments.len() == 1
            || (path.segments.len() == 2 && path.segments[0].ident == "ad_runtime"))
}

/// What the attribute says, before lowering.
enum Limit {
    Snapshots(Expr),
    Bytes(u64, proc_macro2::Span),
}

impl Lower<'_> {
    /// The checkpoint of a `for` loop with `attrs`, its budget lowered
    /// here (before the loop); `None` without the attribute.
    pub(super) fn checkpoint_of(
        &mut self,
        attrs: &[Attribute],
    ) -> Result<Option<Checkpoint>, Poison> {
        let mut found = attrs.iter().filter(|attr| is_checkpoint(attr));
        let Some(attr) = found.next() else {
            return Ok(None);
        };
        if let Some(again) = found.next() {
            self.cx.error_spanned_by(again, msg::CHECKPOINT_TWICE);
            return Err(Poison);
        }
        if self.builder.depth() != 0 || !self.loops.is_empty() {
            self.cx.error_spanned_by(attr, msg::CHECKPOINT_NESTED);
            return Err(Poison);
        }
        let limit = match attr.parse_args_with(parse_limit) {
            Ok(limit) => limit,
            Err(error) => {
                self.cx.push(error);
                return Err(Poison);
            }
        };
        let budget = match limit {
            Limit::Snapshots(expr) => Budget::Snapshots(self.scalar_expr(&expr)?),
            Limit::Bytes(bytes, span) => {
                let Ok(bytes) = usize::try_from(bytes) else {
                    self.cx.error_spanned_by(attr, msg::CHECKPOINT_MEMORY);
                    return Err(Poison);
                };
                let bytes = Const::Lit(proc_macro2::Literal::usize_suffixed(bytes));
                Budget::Bytes(self.push(Inst::Const(bytes), Ty::Int, span))
            }
        };
        // An integer (or what only rustc knows the type of, as
        // `k.max(2)`), not a float or a `bool`.
        if let Budget::Snapshots(value) = budget
            && !matches!(self.ty(value), Ty::Int | Ty::Unknown)
        {
            self.cx.error_spanned_by(attr, msg::CHECKPOINT_ARGS);
            return Err(Poison);
        }
        Ok(Some(Checkpoint {
            budget,
            reverses: None,
        }))
    }
}

/// `snapshots = expr` or `memory = "64 MiB"`.
fn parse_limit(input: ParseStream<'_>) -> syn::Result<Limit> {
    let key: Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    let limit = if key == "snapshots" {
        Limit::Snapshots(input.parse()?)
    } else if key == "memory" {
        let text: LitStr = input.parse()?;
        match bytes(&text.value()) {
            Some(bytes) => Limit::Bytes(bytes, text.span()),
            None => return Err(syn::Error::new(text.span(), msg::CHECKPOINT_MEMORY)),
        }
    } else {
        return Err(syn::Error::new(key.span(), msg::CHECKPOINT_ARGS));
    };
    if !input.is_empty() {
        return Err(syn::Error::new(input.span(), msg::CHECKPOINT_ARGS));
    }
    Ok(limit)
}

/// `"64 MiB"`, `"1.5 GB"`, `"4096"` (bytes) as a number of bytes.
fn bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.replace('_', "").parse().ok()?;
    let scale: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = number * scale;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (1.0..9e18).contains(&bytes).then_some(bytes as u64)
}

/// The expression of `snapshots = expr`, if the attribute is that and the
/// expression is not a literal: what the primal, without the attribute,
/// must still name so that its variables are used.
pub(crate) fn snapshots_expr(attr: &Attribute) -> Option<Expr> {
    match attr.parse_args_with(parse_limit) {
        Ok(Limit::Snapshots(expr)) if !matches!(expr, Expr::Lit(_)) => Some(expr),
        _ => None,
    }
}

/// The attributes `#[checkpoint]` may not stand on: anywhere but a `for`.
pub(crate) fn misplaced(attrs: &[Attribute]) -> Option<&Attribute> {
    attrs.iter().find(|attr| is_checkpoint(attr))
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn memory_sizes() {
        assert_eq!(bytes("64 MiB"), Some(64 << 20));
        assert_eq!(bytes("1.5GB"), Some(1_500_000_000));
        assert_eq!(bytes("4096"), Some(4096));
        assert_eq!(bytes("2 KiB"), Some(2048));
        assert_eq!(bytes("64 parsecs"), None);
        assert_eq!(bytes("0 MiB"), None);
    }
}
