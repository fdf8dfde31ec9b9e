//! Expressions: one IR value as Rust tokens, parenthesized only where
//! precedence needs it.

use std::collections::HashMap;

use proc_macro2::{Group, Literal, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;
use syn::ext::IdentExt;

use super::{Emitter, Form, ident};
use crate::ir::{BinOp, BindingKind, Const, Inst, Mode, NewBuf, Region, Scalar, Ty, UnOp, Value};

/// Binding strength of an emitted expression, weakest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Prec {
    Or,
    And,
    Compare,
    BitOr,
    BitXor,
    BitAnd,
    Shift,
    Sum,
    Product,
    Cast,
    Prefix,
    Postfix,
}

pub(super) struct Expr {
    pub(super) tokens: TokenStream,
    pub(super) prec: Prec,
}

impl Expr {
    /// The tokens, parenthesized if they bind weaker than `min`.
    pub(super) fn at(self, min: Prec) -> TokenStream {
        let tokens = self.tokens;
        if self.prec < min {
            quote!((#tokens))
        } else {
            tokens
        }
    }
}

impl Emitter<'_> {
    pub(super) fn expr(&self, value: Value) -> Expr {
        if self.is_receiver(value) {
            // The split API takes the receiver as `self_: &Self`, which its
            // pullback takes again: a method's `f_forward` is an associated
            // function, called `Self::f_forward(self, …)`.
            let tokens = match self.split {
                Some(_) => ident("self", self.func.span(value)).into_token_stream(),
                None => quote!(self),
            };
            return Expr {
                tokens,
                prec: Prec::Postfix,
            };
        }
        match &self.forms[value.index()] {
            Form::Bound(name) | Form::Component(Some(name)) => Expr {
                tokens: ident(name, self.func.span(value)).into_token_stream(),
                prec: Prec::Postfix,
            },
            Form::Carried(name) => Expr {
                tokens: ident(name, self.func.span(value)).into_token_stream(),
                prec: Prec::Postfix,
            },
            Form::Inline => self.inst_expr(value),
            Form::Component(None) => unreachable!("an unused component is used"),
        }
    }

    /// Whether `value` is the `&self` of a method.
    pub(super) fn is_receiver(&self, value: Value) -> bool {
        matches!(self.func.inst(value), Inst::Param(_))
            && self.func.name(value) == Some("self")
            && *self.func.ty(value) == Ty::Struct
    }

    pub(super) fn inst_expr(&self, value: Value) -> Expr {
        let func = self.func;
        let span = func.span(value);
        let postfix = |tokens| Expr {
            tokens,
            prec: Prec::Postfix,
        };
        match func.inst(value) {
            Inst::Param(_) => unreachable!("parameters are bound"),
            Inst::Const(Const::Lit(lit)) => postfix(lit.to_token_stream()),
            Inst::Const(Const::Bool(b)) => postfix(quote_spanned!(span=> #b)),
            Inst::Const(Const::Path(path)) => postfix(path.clone()),
            Inst::Const(Const::Zero) => postfix(match func.ty(value) {
                Ty::Lanes(elem) => {
                    let elem = self.float_tokens(elem);
                    let k = &func.lanes;
                    quote_spanned!(span=> __ad::Lanes::<#elem, #k>::ZERO)
                }
                Ty::Float if let Some(param) = &func.float_param => {
                    quote_spanned!(span=> <#param as ::ad_runtime::Float>::ZERO)
                }
                Ty::Int => quote_spanned!(span=> 0),
                Ty::Bool => quote_spanned!(span=> false),
                Ty::F32 | Ty::F64 | Ty::Float => quote_spanned!(span=> 0.0),
                // A placeholder never read, of a type only rustc knows.
                _ => quote_spanned!(span=> ::core::default::Default::default()),
            }),
            Inst::Unary(op, arg) => {
                let arg_expr = self.expr(*arg);
                // `-(-x)`, never `--x`.
                let min = if arg_expr.prec == Prec::Prefix {
                    Prec::Postfix
                } else {
                    Prec::Prefix
                };
                let arg = arg_expr.at(min);
                let tokens = match op {
                    UnOp::Neg => quote_spanned!(span=> -#arg),
                    UnOp::Not => quote_spanned!(span=> !#arg),
                };
                Expr {
                    tokens,
                    prec: Prec::Prefix,
                }
            }
            Inst::Binary(op, lhs, rhs) => self.binary(*op, *lhs, *rhs, span),
            Inst::Cast(arg, _) if let Ty::Lanes(_) = func.ty(*arg) => {
                // Lane by lane, to the width of the value cast.
                let Ty::Lanes(to) = func.ty(value) else {
                    unreachable!("the cast of lanes is lanes")
                };
                let (from, to) = (self.float_tokens(func.ty(*arg)), self.float_tokens(to));
                let arg = self.expr(*arg).at(Prec::Or);
                let k = &func.lanes;
                postfix(quote_spanned!(span=> __ad::lanes::cast::<#from, #to, #k>(#arg)))
            }
            Inst::Cast(arg, to) if func.float_param.is_some() => self.generic_cast(*arg, *to, span),
            Inst::Cast(arg, to) => {
                let to_ident = Ident::new(to.name(), span);
                // `bool as f64` is not Rust; `f64::from(b)` is.
                if *func.ty(*arg) == Ty::Bool && to.ty().is_float() {
                    let arg = self.expr(*arg).at(Prec::Or);
                    return postfix(quote_spanned!(span=> #to_ident::from(#arg)));
                }
                let arg = self.expr(*arg).at(Prec::Cast);
                Expr {
                    tokens: quote_spanned!(span=> #arg as #to_ident),
                    prec: Prec::Cast,
                }
            }
            Inst::Prim(prim, args) => {
                let method = Ident::new(prim.name(), span);
                let rest = args[1..].iter().map(|&arg| self.expr(arg).at(Prec::Or));
                let receiver_ty = func.ty(value).scalar().filter(|_| self.is_literal(args[0]));
                match receiver_ty {
                    // `2.0.sin()` does not compile; `f64::sin(2.0)` does.
                    Some(scalar) => {
                        let ty = Ident::new(scalar.name(), span);
                        let receiver = self.expr(args[0]).at(Prec::Or);
                        postfix(quote_spanned!(span=> #ty::#method(#receiver, #(#rest),*)))
                    }
                    None => {
                        let receiver = self.expr(args[0]).at(Prec::Postfix);
                        postfix(quote_spanned!(span=> #receiver.#method(#(#rest),*)))
                    }
                }
            }
            Inst::Pullback(prim, args) => {
                let rule = Ident::new(prim.name(), span);
                // Seeded with lanes (vector forward mode): the lanes' rule.
                let lanes = args
                    .last()
                    .is_some_and(|&seed| matches!(func.ty(seed), Ty::Lanes(_)))
                    .then(|| quote_spanned!(span=> lanes::));
                let args = args.iter().map(|&arg| self.expr(arg).at(Prec::Or));
                postfix(quote_spanned!(span=> __ad::#lanes #rule(#(#args),*)))
            }
            Inst::Curvature(prim, args) => {
                let rule = Ident::new(prim.name(), span);
                let args = args.iter().map(|&arg| self.expr(arg).at(Prec::Or));
                postfix(quote_spanned!(span=> __ad::curvature::#rule(#(#args),*)))
            }
            Inst::Detach(arg) => self.expr(*arg),
            Inst::Tuple(elems) => {
                let elems = elems.iter().map(|&elem| self.expr(elem).at(Prec::Or));
                postfix(quote_spanned!(span=> (#(#elems),*)))
            }
            Inst::If { cond, then, els } => {
                let cond = self.expr(*cond).at(Prec::Or);
                let then = self.block(then, span);
                let els = match self.tail_if(els) {
                    // `else { if … }` is `else if …`.
                    Some(position)
                        if self
                            .stmts(&Region {
                                insts: els.insts[..position].to_vec(),
                                yields: Vec::new(),
                            })
                            .is_empty() =>
                    {
                        self.inst_expr(els.insts[position]).tokens
                    }
                    _ => self.block(els, span),
                };
                // An `if` kept for what it writes in one branch only.
                let empty = |block: &TokenStream| matches!(syn::parse2::<syn::Block>(block.clone()), Ok(block) if block.stmts.is_empty());
                if empty(&els) {
                    return postfix(quote_spanned!(span=> if #cond #then));
                }
                postfix(quote_spanned!(span=> if #cond #then else #els))
            }
            Inst::For { .. } | Inst::While { .. } | Inst::Arg(_) => {
                unreachable!("loops are statements")
            }
            Inst::TapeNew { capacity } => {
                // Tapes reuse storage from the runtime's pools: of scalars,
                // or of other values (pullbacks, saved arrays) by type.
                let pooled = matches!(func.ty(value), Ty::Tape(elem) if elem.is_scalar());
                let capacity = capacity.as_ref().map(|range| {
                    let iter = self.range(range, span);
                    quote_spanned!(span=> (#iter).size_hint().0)
                });
                postfix(match (pooled, capacity) {
                    (true, None) => quote_spanned!(span=> __ad::Tape::new()),
                    (true, Some(capacity)) => {
                        quote_spanned!(span=> __ad::Tape::with_capacity(#capacity))
                    }
                    (false, None) => quote_spanned!(span=> __ad::Tape::recycled(0)),
                    (false, Some(capacity)) => {
                        quote_spanned!(span=> __ad::Tape::recycled(#capacity))
                    }
                })
            }
            Inst::TapeReserve { tape, range } => {
                let tape = self.expr(*tape).at(Prec::Postfix);
                let iter = self.range(range, span);
                postfix(quote_spanned!(span=> #tape.reserve((#iter).size_hint().0)))
            }
            Inst::Push(tape, pushed) => {
                let tape = self.expr(*tape).at(Prec::Postfix);
                let pushed = self.expr(*pushed).at(Prec::Or);
                // In a `for`, the tape has room for every push (made with
                // capacity, or reserved before the loop): no push grows it.
                // A checkpointed loop's tape holds one iteration at a time.
                let reserved = matches!(
                    self.places[value.index()],
                    crate::ir::Place::In(owner, _)
                        if matches!(func.inst(owner), Inst::For { range, .. } if range.checkpoint.is_none())
                );
                if reserved {
                    postfix(quote_spanned!(span=> #tape.push_reserved(#pushed)))
                } else {
                    postfix(quote_spanned!(span=> #tape.push(#pushed)))
                }
            }
            Inst::Pop(tape) => {
                let tape = self.expr(*tape).at(Prec::Postfix);
                // A pullback that may run again reads its tapes without
                // taking the values (`TapeReader::pop` gives a reference).
                let copied = self.split.is_some()
                    && match func.ty(value) {
                        Ty::Tuple(elems) => elems.iter().all(Ty::is_scalar),
                        ty => ty.is_scalar(),
                    };
                if copied {
                    Expr {
                        tokens: quote_spanned!(span=> *#tape.pop()),
                        prec: Prec::Prefix,
                    }
                } else {
                    postfix(quote_spanned!(span=> #tape.pop()))
                }
            }
            Inst::Extract(tuple, index) => {
                let tuple = self.expr(*tuple).at(Prec::Postfix);
                let index = Literal::u32_unsuffixed(*index);
                postfix(quote_spanned!(span=> #tuple.#index))
            }
            Inst::Load(buf, index) => {
                let (buf, index) = self.access(value, *buf, *index);
                postfix(quote_spanned!(span=> #buf[#index]))
            }
            Inst::Store(buf, index, stored) => {
                let (buf, index) = self.access(value, *buf, *index);
                let stored = self.expr(*stored).at(Prec::Or);
                postfix(quote_spanned!(span=> #buf[#index] = #stored))
            }
            Inst::Update(op, buf, index, stored) => {
                let (buf, index) = self.access(value, *buf, *index);
                let stored = self.expr(*stored).at(Prec::Or);
                postfix(match op {
                    BinOp::Sub => quote_spanned!(span=> #buf[#index] -= #stored),
                    _ => quote_spanned!(span=> #buf[#index] += #stored),
                })
            }
            Inst::Len(buf) => {
                let buf = self.expr(*buf).at(Prec::Postfix);
                postfix(quote_spanned!(span=> #buf.len()))
            }
            Inst::NewBuf(NewBuf::Vec { fill, len }) => {
                let fill = self.expr(*fill).at(Prec::Or);
                let len = self.expr(*len).at(Prec::Or);
                postfix(quote_spanned!(span=> ::std::vec![#fill; #len]))
            }
            Inst::NewBuf(NewBuf::Array { fill, len }) => {
                let fill = self.expr(*fill).at(Prec::Or);
                postfix(quote_spanned!(span=> [#fill; #len]))
            }
            // `Vec::<f64>::new()` where the elements' type is known: an
            // element may be read before the first push (`out.last()` in
            // the loop that pushes), and the user's annotation, which
            // told rustc, is not kept.
            Inst::NewBuf(NewBuf::Empty { capacity: None }) => {
                let elem = self.vec_elem(value);
                postfix(quote_spanned!(span=> ::std::vec::Vec #elem::new()))
            }
            Inst::NewBuf(NewBuf::Output) => postfix(quote_spanned!(span=> __ad::output_buffer())),
            Inst::NewBuf(NewBuf::Empty {
                capacity: Some(capacity),
            }) => {
                let elem = self.vec_elem(value);
                let capacity = self.expr(*capacity).at(Prec::Or);
                postfix(quote_spanned!(span=> ::std::vec::Vec #elem::with_capacity(#capacity)))
            }
            Inst::Effect { mac, args } => {
                let mut args = args.iter().map(|&arg| self.expr(arg));
                let mut lets = Vec::new();
                let mut inline = HashMap::new();
                for binding in &mac.bindings {
                    let name = &binding.name;
                    let mut next = || args.next().expect("an argument per binding");
                    // Bound even when the value has the same name: the
                    // macro's tokens are the user's, and hygiene keeps them
                    // from seeing the generated function's bindings.
                    let first = next();
                    lets.push(match binding.kind {
                        BindingKind::Inline { receiver } => {
                            let prec = if receiver { Prec::Postfix } else { Prec::Or };
                            inline.insert(name.to_string(), first.at(prec));
                            continue;
                        }
                        BindingKind::Value => {
                            let value = first.at(Prec::Or);
                            quote_spanned!(span=> let #name = #value;)
                        }
                        BindingKind::Ref => {
                            let value = first.at(Prec::Prefix);
                            quote_spanned!(span=> let #name = &#value;)
                        }
                        BindingKind::Slice => {
                            let buf = first.at(Prec::Postfix);
                            quote_spanned!(span=> let #name = &#buf[..];)
                        }
                        BindingKind::View => {
                            let buf = first.at(Prec::Postfix);
                            let start = next().at(Prec::Or);
                            let len = next().at(Prec::Or);
                            quote_spanned!(span=> let #name = &#buf[#start..][..#len];)
                        }
                        BindingKind::Rows => {
                            let buf = first.at(Prec::Postfix);
                            let start = next().at(Prec::Or);
                            let len = next().at(Prec::Or);
                            let width = next().at(Prec::Or);
                            quote_spanned!(span=>
                                let #name = #buf[#start..][..#len].as_chunks::<{ #width }>().0;
                            )
                        }
                        BindingKind::Tuple(n) => {
                            let elems = std::iter::once(first)
                                .chain((1..n).map(|_| next()))
                                .map(|elem| elem.at(Prec::Or));
                            quote_spanned!(span=> let #name = (#(#elems),*);)
                        }
                    });
                }
                let tokens = &substituted(mac.tokens.clone(), &inline);
                postfix(if lets.is_empty() {
                    tokens.clone()
                } else {
                    quote_spanned!(span=> { #(#lets)* #tokens })
                })
            }
            // A place: `&` or `&mut` is added where it is passed.
            Inst::Slice { buf, start, len } => {
                let buf = self.expr(*buf).at(Prec::Postfix);
                let start = self.expr(*start).at(Prec::Or);
                let len = self.expr(*len).at(Prec::Or);
                postfix(quote_spanned!(span=> #buf[#start..][..#len]))
            }
            Inst::PushElem(buf, pushed) => {
                let buf = self.expr(*buf).at(Prec::Postfix);
                let pushed = self.expr(*pushed).at(Prec::Or);
                postfix(quote_spanned!(span=> #buf.push(#pushed)))
            }
            // A snapshot: an array copied on the stack, a slice or `Vec` into
            // a `Vec`; both read as slices.
            Inst::CloneBuf {
                src, saved: true, ..
            } => {
                let src = self.argument(*src, Mode::Ref);
                postfix(quote_spanned!(span=> __ad::snapshot(#src)))
            }
            // `let mut v = GW;`: a constant array is copied by naming it.
            Inst::CloneBuf {
                src, clone: true, ..
            } if matches!(func.inst(*src), Inst::Const(_)) => self.expr(*src),
            Inst::CloneBuf { src, clone, .. } => {
                let src = self.expr(*src).at(Prec::Postfix);
                postfix(if *clone {
                    quote_spanned!(span=> #src.clone())
                } else {
                    quote_spanned!(span=> #src.to_vec())
                })
            }
            Inst::Call(callee, args) => {
                let name = Ident::new(callee.name(), span);
                // Of tangent lanes (vector forward mode): the lanes' version.
                let lanes = args
                    .iter()
                    .any(|&arg| matches!(func.ty(arg).elem(), Some(Ty::Lanes(_))));
                let args = args
                    .iter()
                    .zip(callee.modes())
                    .map(|(&arg, &mode)| self.argument(arg, mode));
                postfix(if lanes {
                    quote_spanned!(span=> __ad::lanes::#name(#(#args),*))
                } else if callee.is_primitive() {
                    quote_spanned!(span=> ::ad_runtime::#name(#(#args),*))
                } else {
                    quote_spanned!(span=> __ad::#name(#(#args),*))
                })
            }
            Inst::Shadow { of } => {
                let of = self.argument(*of, Mode::Ref);
                match func.ty(value).elem() {
                    Some(Ty::Lanes(_)) => {
                        let k = &func.lanes;
                        postfix(quote_spanned!(span=> __ad::lanes::zeros_like::<#k, _>(#of)))
                    }
                    _ => postfix(quote_spanned!(span=> __ad::zeros_like(#of))),
                }
            }
            Inst::SeedCopy { len, seed } => {
                // Its length is checked: a `Vec` output's seed is a slice.
                let len = self.expr(*len).at(Prec::Or);
                let seed = self.expr(*seed).at(Prec::Or);
                postfix(quote_spanned!(span=> __ad::seed_copy(#len, #seed)))
            }
            Inst::PopShadow(shadow) => {
                let shadow = self.argument(*shadow, Mode::Mut);
                postfix(quote_spanned!(span=> __ad::pop_shadow(#shadow)))
            }
            Inst::Forward { callee, args, .. } if func.user_calls[*callee as usize].plain => {
                // A call of constants: the function itself, with no pullback.
                let path = &func.user_calls[*callee as usize].path;
                let args = args.iter().map(|&(arg, mode)| self.argument(arg, mode));
                let call = quote_spanned!(span=> #path(#(#args),*));
                match self.bare_call(value) {
                    true => postfix(call),
                    false => postfix(quote_spanned!(span=> (#call, ()))),
                }
            }
            Inst::Forward { callee, args, kept } => {
                let call = &func.user_calls[*callee as usize];
                let path = &call.path;
                let forward = entry_path(path, call.suffix);
                // A buffer output moved into the buffer made for it (and, in
                // `_jvp`, its tangent into the tangent's).
                let into = match (call.into, call.suffix) {
                    (false, _) => 0,
                    (true, "_jvp_all" | "_jvp_lanes_all") => 2,
                    (true, _) => 1,
                };
                let (into, args) = args.split_at(into);
                let into: Vec<_> = into
                    .iter()
                    .map(|&(arg, mode)| self.argument(arg, mode))
                    .collect();
                let by_value: Vec<(Value, Mode)> = args
                    .iter()
                    .copied()
                    .filter(|&(_, mode)| mode == Mode::Val)
                    .collect();
                let args = args.iter().map(|&(arg, mode)| self.argument(arg, mode));
                let mut call = quote_spanned!(span=> #forward(#(#args),*));
                match into.as_slice() {
                    [] => {}
                    [buf] => call = quote_spanned!(span=> __ad::returned_into(#buf, #call)),
                    [buf, tangent] => {
                        call =
                            quote_spanned!(span=> __ad::returned_into_jvp(#buf, #tangent, #call));
                    }
                    _ => unreachable!("one buffer and its tangent"),
                }
                // Made again for its pullback, unless the primal kept it.
                if let Some(kept) = kept {
                    call = self.rebuilt(kept, &by_value, call, span);
                }
                // A float result that is used: the macro's guess, checked.
                let used = self.extracts[value.index()]
                    .iter()
                    .any(|&(index, part)| index == 0 && self.uses[part.index()] > 0);
                if let Ty::Tuple(parts) = func.ty(value)
                    && parts.first().is_some_and(Ty::is_float)
                    && used
                {
                    call = quote_spanned!(span=> __ad::float_result(#call));
                }
                match &self.split {
                    // A function calling itself keeps its callee's pullback in
                    // its own: boxed, or its type would contain itself.
                    Some(mode) if calls_itself(path, &func.name) => {
                        let pullback_ty = &mode.pullback_ty;
                        postfix(quote_spanned! {span=>
                            {
                                let (out, pullback) = #call;
                                (out, ::std::boxed::Box::new(pullback) as ::std::boxed::Box<dyn #pullback_ty>)
                            }
                        })
                    }
                    _ => postfix(call),
                }
            }
            Inst::Field { base, path } => {
                let base = self.expr(*base).at(Prec::Postfix);
                postfix(quote_spanned!(span=> #base #(.#path)*))
            }
            Inst::FieldUpdate { base, path, value } => {
                let base = self.expr(*base).at(Prec::Postfix);
                let value = self.expr(*value).at(Prec::Or);
                postfix(quote_spanned!(span=> #base #(.#path)* += #value))
            }
            Inst::Keep(pullback, out) => {
                let pullback = self.expr(*pullback).at(Prec::Or);
                let out = out.map(|out| {
                    let out = self.expr(out).at(Prec::Or);
                    quote!(, #out)
                });
                postfix(quote_spanned!(span=> __ad::keep!(#pullback #out)))
            }
            Inst::Some(wrapped) => {
                let wrapped = self.expr(*wrapped).at(Prec::Or);
                postfix(quote_spanned!(span=> ::core::option::Option::Some(#wrapped)))
            }
            Inst::Apply { pullback, args } => {
                let optional = matches!(func.ty(*pullback), Ty::Option(_));
                let mut pullback = self.expr(*pullback).at(Prec::Postfix);
                // Carried out of the branch that called it, which the
                // adjoint's branch mirrors: it is `Some` here.
                if optional {
                    pullback = quote_spanned!(span=> #pullback.as_ref().unwrap());
                }
                let args = args.iter().map(|&(arg, mode)| self.argument(arg, mode));
                postfix(quote_spanned!(span=> #pullback(#(#args),*)))
            }
        }
    }

    /// A call made again in the adjoint for its pullback, `call`, given
    /// what the primal kept of it: `__ad::rebuilt(kept, (args…), out, ||
    /// call)`, which builds a custom rule's pullback from the arguments
    /// taken by value and the output (see [`crate::ir::Kept`]).
    fn rebuilt(
        &self,
        kept: &crate::ir::Kept,
        by_value: &[(Value, Mode)],
        call: TokenStream,
        span: Span,
    ) -> TokenStream {
        let args_by_value = by_value.iter().map(|&(arg, mode)| self.argument(arg, mode));
        let mut value = self.expr(kept.value).at(Prec::Or);
        // Carried out of the branch that made the call, which the
        // adjoint's branch mirrors: it is `Some` here.
        if let Ty::Option(_) = self.func.ty(kept.value) {
            let option = self.expr(kept.value).at(Prec::Postfix);
            value = quote_spanned!(span=> #option.as_ref().unwrap());
        }
        let out = match kept.out {
            Some(out) => self.expr(out).at(Prec::Or),
            None => quote!(()),
        };
        quote_spanned!(span=> __ad::rebuilt(#value, (#(#args_by_value,)*), #out, || #call))
    }

    /// A conversion in a function generic over `T: Float`, through the
    /// runtime's trait: `T::from_f64(x)`, `x.to_f64()`, and `as` between
    /// other types.
    pub(super) fn generic_cast(&self, arg: Value, to: Scalar, span: Span) -> Expr {
        let func = self.func;
        let param = func.float_param.as_ref().expect("a generic function");
        let from = func.ty(arg);
        let postfix = |tokens| Expr {
            tokens,
            prec: Prec::Postfix,
        };
        if to == Scalar::Float {
            let arg = match from {
                Ty::F64 => self.expr(arg).at(Prec::Or),
                Ty::Bool => {
                    let arg = self.expr(arg).at(Prec::Or);
                    quote_spanned!(span=> f64::from(#arg))
                }
                _ => {
                    let arg = self.expr(arg).at(Prec::Cast);
                    quote_spanned!(span=> #arg as f64)
                }
            };
            return postfix(quote_spanned!(span=> <#param as ::ad_runtime::Float>::from_f64(#arg)));
        }
        let to_ident = Ident::new(to.name(), span);
        if *from == Ty::Float {
            let arg = self.expr(arg).at(Prec::Or);
            let to_f64 = quote_spanned!(span=> ::ad_runtime::Float::to_f64(#arg));
            if to == Scalar::F64 {
                return postfix(to_f64);
            }
            return Expr {
                tokens: quote_spanned!(span=> #to_f64 as #to_ident),
                prec: Prec::Cast,
            };
        }
        if *from == Ty::Bool && to.ty().is_float() {
            let arg = self.expr(arg).at(Prec::Or);
            return postfix(quote_spanned!(span=> #to_ident::from(#arg)));
        }
        let arg = self.expr(arg).at(Prec::Cast);
        Expr {
            tokens: quote_spanned!(span=> #arg as #to_ident),
            prec: Prec::Cast,
        }
    }

    /// `::<f64>` for a `Vec` made empty whose elements are floats (or
    /// `bool`s): what the user's `let v: Vec<f64> = Vec::new();` told
    /// rustc. Nothing for elements whose type only rustc knows.
    fn vec_elem(&self, buf: Value) -> TokenStream {
        match self.func.ty(buf) {
            Ty::Buf(elem) if matches!(**elem, Ty::F64 | Ty::F32 | Ty::Float) => {
                let elem = self.float_tokens(elem);
                quote!(::<#elem>)
            }
            Ty::Buf(elem) if **elem == Ty::Bool => quote!(::<bool>),
            _ => TokenStream::new(),
        }
    }

    /// The float type of a float (or of lanes of one): `f64`, `f32`, the
    /// function's `T`, or `_` for a width left to inference.
    fn float_tokens(&self, ty: &Ty) -> TokenStream {
        match ty {
            Ty::Lanes(elem) => self.float_tokens(elem),
            Ty::F64 => quote!(f64),
            Ty::F32 => quote!(f32),
            _ => match &self.func.float_param {
                Some(param) => param.to_token_stream(),
                None => quote!(_),
            },
        }
    }

    /// A buffer passed by `&` or `&mut` (a parameter is a reference already),
    /// or a value.
    pub(super) fn argument(&self, value: Value, mode: Mode) -> TokenStream {
        let tokens = self.expr(value).at(Prec::Or);
        if let Ty::Option(_) = self.func.ty(value) {
            // A copy carried out of the branch that made it, which the
            // adjoint's branch mirrors: it is `Some` here.
            let tokens = self.expr(value).at(Prec::Postfix);
            return quote!(#tokens.as_deref().unwrap());
        }
        match mode {
            Mode::Ref | Mode::Mut if self.func.is_param(value) => tokens,
            Mode::Ref => quote!(&#tokens),
            Mode::Mut => quote!(&mut #tokens),
            Mode::Val => tokens,
            // The callee's parameter type says the array's length.
            Mode::Copy => {
                let buf = self.argument(value, Mode::Ref);
                quote!(::ad_runtime::__private::to_array(#buf))
            }
        }
    }

    pub(super) fn binary(&self, op: BinOp, lhs: Value, rhs: Value, span: Span) -> Expr {
        self.binary_of(op, self.expr(lhs), self.expr(rhs), span)
    }

    /// `lhs op rhs`, parenthesized as precedence needs.
    pub(super) fn binary_of(&self, op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
        let prec = match op {
            BinOp::Add | BinOp::Sub => Prec::Sum,
            BinOp::Mul | BinOp::Div | BinOp::Rem => Prec::Product,
            BinOp::Shl | BinOp::Shr => Prec::Shift,
            BinOp::BitAnd => Prec::BitAnd,
            BinOp::BitXor => Prec::BitXor,
            BinOp::BitOr => Prec::BitOr,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Prec::Compare,
            BinOp::And => Prec::And,
            BinOp::Or => Prec::Or,
        };
        // Left-associative: the right operand must bind strictly tighter;
        // comparisons do not chain, so both sides must.
        let lhs_min = if prec == Prec::Compare {
            Prec::BitOr
        } else {
            prec
        };
        // `n as f64 < x` parses `f64 <` as generic arguments: parenthesize.
        let lhs = if matches!(op, BinOp::Lt | BinOp::Shl) && lhs.prec == Prec::Cast {
            lhs.at(Prec::Prefix)
        } else {
            lhs.at(lhs_min)
        };
        let rhs = rhs.at(next(prec));
        let tokens = match op {
            BinOp::Add => quote_spanned!(span=> #lhs + #rhs),
            BinOp::Sub => quote_spanned!(span=> #lhs - #rhs),
            BinOp::Mul => quote_spanned!(span=> #lhs * #rhs),
            BinOp::Div => quote_spanned!(span=> #lhs / #rhs),
            BinOp::Rem => quote_spanned!(span=> #lhs % #rhs),
            BinOp::BitAnd => quote_spanned!(span=> #lhs & #rhs),
            BinOp::BitOr => quote_spanned!(span=> #lhs | #rhs),
            BinOp::BitXor => quote_spanned!(span=> #lhs ^ #rhs),
            BinOp::Shl => quote_spanned!(span=> #lhs << #rhs),
            BinOp::Shr => quote_spanned!(span=> #lhs >> #rhs),
            BinOp::Eq => quote_spanned!(span=> #lhs == #rhs),
            BinOp::Ne => quote_spanned!(span=> #lhs != #rhs),
            BinOp::Lt => quote_spanned!(span=> #lhs < #rhs),
            BinOp::Le => quote_spanned!(span=> #lhs <= #rhs),
            BinOp::Gt => quote_spanned!(span=> #lhs > #rhs),
            BinOp::Ge => quote_spanned!(span=> #lhs >= #rhs),
            BinOp::And => quote_spanned!(span=> #lhs && #rhs),
            BinOp::Or => quote_spanned!(span=> #lhs || #rhs),
        };
        Expr { tokens, prec }
    }

    /// Whether a value is written as a literal (possibly negated), whose float
    /// type rustc cannot see from a method call on it.
    pub(super) fn is_literal(&self, value: Value) -> bool {
        self.forms[value.index()] == Form::Inline
            && match self.func.inst(value) {
                Inst::Const(Const::Lit(_)) => true,
                Inst::Unary(UnOp::Neg, arg) | Inst::Detach(arg) => self.is_literal(*arg),
                // `2.0 * 1.5`: as untyped to rustc as its operands.
                Inst::Binary(op, lhs, rhs) if !op.is_comparison() && !op.is_logic() => {
                    self.is_literal(*lhs) && self.is_literal(*rhs)
                }
                _ => false,
            }
    }
}

/// `f_forward` for the path `f` of a function called from differentiated
/// code (`m::f` → `m::f_forward`), located at the user's `f`.
/// Whether a call's path names the function being emitted: `f`, or
/// `Self::f` (a method calling itself, `self.f(…)`).
fn calls_itself(path: &syn::Path, name: &str) -> bool {
    let names: Vec<String> = path
        .segments
        .iter()
        .map(|segment| segment.ident.unraw().to_string())
        .collect();
    match names.as_slice() {
        [only] => only == name,
        [this, only] => this == "Self" && only == name,
        _ => false,
    }
}

pub(super) fn entry_path(path: &syn::Path, suffix: &str) -> syn::Path {
    let mut path = path.clone();
    if let Some(last) = path.segments.last_mut() {
        let name = last.ident.unraw();
        last.ident = Ident::new(&format!("{name}{suffix}"), last.ident.span());
        // `g::<f64>(x)` in vector mode: the lanes' count, the entry point's
        // last generic parameter, is inferred.
        if suffix.contains("lanes")
            && let syn::PathArguments::AngleBracketed(args) = &mut last.arguments
        {
            args.args.push(syn::parse_quote!(_));
        }
    }
    path
}

fn next(prec: Prec) -> Prec {
    match prec {
        Prec::Or => Prec::And,
        Prec::And => Prec::Compare,
        Prec::Compare => Prec::BitOr,
        Prec::BitOr => Prec::BitXor,
        Prec::BitXor => Prec::BitAnd,
        Prec::BitAnd => Prec::Shift,
        Prec::Shift => Prec::Sum,
        Prec::Sum => Prec::Product,
        Prec::Product => Prec::Cast,
        Prec::Cast => Prec::Prefix,
        Prec::Prefix | Prec::Postfix => Prec::Postfix,
    }
}

/// `tokens` with each identifier named in `values` replaced by its tokens.
fn substituted(tokens: TokenStream, values: &HashMap<String, TokenStream>) -> TokenStream {
    if values.is_empty() {
        return tokens;
    }
    tokens
        .into_iter()
        .flat_map(|tree| match tree {
            TokenTree::Ident(ident) if values.contains_key(&ident.to_string()) => {
                values[&ident.to_string()].clone()
            }
            TokenTree::Group(group) => {
                let mut new = Group::new(group.delimiter(), substituted(group.stream(), values));
                new.set_span(group.span());
                TokenTree::Group(new).into()
            }
            tree => tree.into(),
        })
        .collect()
}
