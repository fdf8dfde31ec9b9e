//! The IR text form.
//!
//! ```text
//! fn f(%0 x, %1 y) -> %3 {
//!     %0: f64 = param 0 active        ; x
//!     %1: f64 = param 1 active        ; y
//!     %2: f64 = add %0, %1            ; s
//!     %3: f64 = mul %2, %2
//! }
//! ```

use std::fmt::Write;

use super::{Const, Function, Inst, LoopRange, Mode, NewBuf, Region, Role, Ty, UnOp, Value};

pub(super) fn function(func: &Function) -> String {
    let mut out = String::new();
    let params: Vec<String> = func
        .params
        .iter()
        .map(|param| format!("{} {}", value(param.value), param.name))
        .collect();
    let _ = writeln!(
        out,
        "fn {}({}) -> {} {{",
        func.name,
        params.join(", "),
        value(func.ret)
    );
    region(func, &func.body, 1, &mut out);
    out.push_str("}\n");
    out
}

fn region(func: &Function, region_: &Region, depth: usize, out: &mut String) {
    let indent = "    ".repeat(depth);
    for &id in &region_.insts {
        let text = format!(
            "{indent}{}: {} = {}",
            value(id),
            ty(func.ty(id)),
            inst(func, id)
        );
        let mut notes = Vec::new();
        if let Some(name) = func.name(id) {
            notes.push(name.to_owned());
        }
        if let Some(primal) = func.adjoint_of[id.index()] {
            notes.push(format!("adjoint of {}", value(primal)));
        }
        if notes.is_empty() {
            let _ = writeln!(out, "{text}");
        } else {
            let _ = writeln!(out, "{text:<44} ; {}", notes.join(", "));
        }
        match func.inst(id) {
            Inst::If { then, els, .. } => {
                self::region(func, then, depth + 1, out);
                let _ = writeln!(out, "{indent}}} else {{");
                self::region(func, els, depth + 1, out);
                let _ = writeln!(out, "{indent}}}");
            }
            Inst::For { body, .. } | Inst::While { body, .. } => {
                self::region(func, body, depth + 1, out);
                let _ = writeln!(out, "{indent}}}");
            }
            _ => {}
        }
    }
    if !region_.yields.is_empty() || depth > 1 {
        let _ = writeln!(out, "{indent}yield {}", values(&region_.yields));
    }
}

fn range(loop_range: &LoopRange) -> String {
    let dots = if loop_range.inclusive { "..=" } else { ".." };
    let mut text = format!("{}{dots}{}", value(loop_range.start), value(loop_range.end));
    if let Some(step) = loop_range.step {
        let _ = write!(text, " step {}", value(step));
    }
    if loop_range.reversed {
        text.push_str(" rev");
    }
    if let Some(checkpoint) = loop_range.checkpoint {
        let _ = match checkpoint.budget {
            crate::ir::Budget::Snapshots(k) => write!(text, " checkpoint(snapshots {})", value(k)),
            crate::ir::Budget::Bytes(b) => write!(text, " checkpoint(memory {})", value(b)),
        };
        if let Some(primal) = checkpoint.reverses {
            let _ = write!(text, " reverses {}", value(primal));
        }
    }
    text
}

fn value(id: Value) -> String {
    format!("%{}", id.0)
}

fn values(ids: &[Value]) -> String {
    ids.iter()
        .map(|&id| value(id))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ty(ty_: &Ty) -> String {
    match ty_ {
        Ty::F32 => "f32".to_owned(),
        Ty::F64 => "f64".to_owned(),
        Ty::Float => "float".to_owned(),
        Ty::Int => "int".to_owned(),
        Ty::Bool => "bool".to_owned(),
        Ty::Unknown => "?".to_owned(),
        Ty::Tuple(elems) => format!("({})", elems.iter().map(ty).collect::<Vec<_>>().join(", ")),
        Ty::Tape(elem) => format!("tape<{}>", ty(elem)),
        Ty::Unit => "()".to_owned(),
        Ty::Buf(elem) => format!("[{}]", ty(elem)),
        Ty::Pullback => "pullback".to_owned(),
        Ty::Struct => "struct".to_owned(),
        Ty::Option(elem) => format!("option<{}>", ty(elem)),
        Ty::Lanes(elem) => format!("lanes<{}>", ty(elem)),
    }
}

fn inst(func: &Function, id: Value) -> String {
    match func.inst(id) {
        Inst::Param(index) => {
            let role = match func.params[*index as usize].role {
                Role::Active => "active",
                Role::Constant => "constant",
                Role::Seed => "seed",
                Role::Shadow => "shadow",
            };
            let mutable = if func.params[*index as usize].mutable {
                " mut"
            } else {
                ""
            };
            format!("param {index} {role}{mutable}")
        }
        Inst::Const(Const::Lit(lit)) => format!("const {lit}"),
        Inst::Const(Const::Bool(b)) => format!("const {b}"),
        Inst::Const(Const::Path(path)) => format!("const {}", path.to_string().replace(' ', "")),
        Inst::Const(Const::Zero) => "const zero".to_owned(),
        Inst::Unary(UnOp::Neg, arg) => format!("neg {}", value(*arg)),
        Inst::Unary(UnOp::Not, arg) => format!("not {}", value(*arg)),
        Inst::Binary(op, lhs, rhs) => format!("{} {}, {}", op.name(), value(*lhs), value(*rhs)),
        Inst::Cast(arg, to) => format!("cast {} as {}", value(*arg), to.name()),
        Inst::Prim(prim, args) => format!("{} {}", prim.name(), values(args)),
        Inst::Pullback(prim, args) => format!("pullback.{} {}", prim.name(), values(args)),
        Inst::Curvature(prim, args) => format!("curvature.{} {}", prim.name(), values(args)),
        Inst::Detach(arg) => format!("detach {}", value(*arg)),
        Inst::Some(arg) => format!("some {}", value(*arg)),
        Inst::Field { base, path } => format!("field {}.{}", value(*base), dotted(path)),
        Inst::FieldUpdate {
            base,
            path,
            value: added,
        } => {
            format!(
                "field {}.{} add= {}",
                value(*base),
                dotted(path),
                value(*added)
            )
        }
        Inst::Tuple(elems) => format!("tuple {}", values(elems)),
        Inst::Extract(tuple, index) => format!("extract {}.{index}", value(*tuple)),
        Inst::If { cond, .. } => format!("if {} {{", value(*cond)),
        Inst::For {
            range: loop_range,
            inits,
            ..
        } => {
            format!(
                "for {} carry [{}] {{",
                self::range(loop_range),
                values(inits)
            )
        }
        Inst::While { inits, .. } => format!("while carry [{}] {{", values(inits)),
        Inst::Arg(index) => format!("arg {index}"),
        Inst::TapeNew { capacity: None } => "tape.new".to_owned(),
        Inst::TapeNew {
            capacity: Some(loop_range),
        } => format!("tape.new for {}", self::range(loop_range)),
        Inst::Push(tape, pushed) => format!("push {}, {}", value(*tape), value(*pushed)),
        Inst::TapeReserve {
            tape,
            range: loop_range,
        } => format!(
            "tape.reserve {} for {}",
            value(*tape),
            self::range(loop_range)
        ),
        Inst::Pop(tape) => format!("pop {}", value(*tape)),
        Inst::Load(buf, index) => format!("load {}[{}]", value(*buf), value(*index)),
        Inst::Store(buf, index, stored) => format!(
            "store {}[{}] = {}",
            value(*buf),
            value(*index),
            value(*stored)
        ),
        Inst::Update(op, buf, index, stored) => format!(
            "store {}[{}] {}= {}",
            value(*buf),
            value(*index),
            op.name(),
            value(*stored)
        ),
        Inst::Len(buf) => format!("len {}", value(*buf)),
        Inst::NewBuf(NewBuf::Vec { fill, len }) => {
            format!("buf.vec [{}; {}]", value(*fill), value(*len))
        }
        Inst::NewBuf(NewBuf::Array { fill, len }) => format!(
            "buf.array [{}; {}]",
            value(*fill),
            len.to_string().replace(' ', "")
        ),
        Inst::NewBuf(NewBuf::Empty { capacity: None }) => "buf.empty".to_owned(),
        Inst::NewBuf(NewBuf::Output) => "buf.output".to_owned(),
        Inst::NewBuf(NewBuf::Empty {
            capacity: Some(capacity),
        }) => format!("buf.empty capacity {}", value(*capacity)),
        Inst::PushElem(buf, pushed) => format!("push.elem {}, {}", value(*buf), value(*pushed)),
        Inst::CloneBuf { src, .. } => format!("buf.copy {}", value(*src)),
        Inst::Call(callee, args) => format!("call {} {}", callee.name(), values(args)),
        Inst::Slice { buf, start, len } => {
            format!("slice {}[{}; {}]", value(*buf), value(*start), value(*len))
        }
        Inst::Effect { mac, args } => {
            let name = mac.tokens.clone().into_iter().next();
            let name = name.map(|name| name.to_string()).unwrap_or_default();
            format!("effect {name}! {}", values(args))
        }
        Inst::Shadow { of } => format!("shadow {}", value(*of)),
        Inst::SeedCopy { len, seed } => {
            format!("seed.copy {} len {}", value(*seed), value(*len))
        }
        Inst::PopShadow(shadow) => format!("pop.shadow {}", value(*shadow)),
        Inst::Forward { callee, args, kept } => {
            let call = &func.user_calls[*callee as usize];
            let path = quote::ToTokens::to_token_stream(&call.path)
                .to_string()
                .replace(' ', "");
            let into = if call.into { " into" } else { "" };
            let kept = kept.map_or_else(String::new, |kept| match kept.out {
                Some(out) => format!(" kept {} out {}", value(kept.value), value(out)),
                None => format!(" kept {}", value(kept.value)),
            });
            format!("forward{into} {path} {}{kept}", moded(args))
        }
        Inst::Keep(pullback, None) => format!("keep {}", value(*pullback)),
        Inst::Keep(pullback, Some(out)) => format!("keep {} out {}", value(*pullback), value(*out)),
        Inst::Apply { pullback, args } => format!("apply {} {}", value(*pullback), moded(args)),
    }
}

/// `a.b.c`.
fn dotted(path: &[syn::Member]) -> String {
    path.iter()
        .map(|member| match member {
            syn::Member::Named(ident) => ident.to_string(),
            syn::Member::Unnamed(index) => index.index.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Operands with the way each is passed: `%1, &%2, &mut %3`.
fn moded(args: &[(Value, Mode)]) -> String {
    args.iter()
        .map(|&(arg, mode)| match mode {
            Mode::Val => value(arg),
            Mode::Ref => format!("&{}", value(arg)),
            Mode::Mut => format!("&mut {}", value(arg)),
            Mode::Copy => format!("copy {}", value(arg)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
