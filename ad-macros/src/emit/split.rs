//! The split API: `f_forward`, which runs `f` and returns its output with its
//! pullback, a closure holding what the adjoint needs.
//!
//! It is emitted from the same IR as `_vjp` (differentiated with respect to
//! every float parameter): the instructions before the first adjoint one run
//! in `f_forward`, the rest in the closure, which captures by move the values
//! it reads. Tapes are read back with `TapeReader`, so the closure is `Fn`
//! and can run once per seed.
//!
//! ```text
//! fn f_forward(x: f64, xs: &[f64]) -> (f64, impl Fn(&[f64], &mut [f64], f64) -> f64 + use<>) {
//!     let s = …;
//!     (out, move |xs: &[f64], d_xs: &mut [f64], d_out: f64| -> f64 { …; d_x })
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Ident, ItemFn, Type};

use super::{Emitter, Prec, allows, ident};
use crate::ir::{Function, Inst, Role, Ty, Value};
use crate::lower::Signature;

/// What emission of the split API changes.
pub(super) struct Mode {
    /// `Fn(&[f64], &mut [f64], f64) -> f64`: the pullback's trait, for a
    /// recursive call's boxed pullback.
    pub(super) pullback_ty: TokenStream,
}

/// `f_forward`: attributes, signature and body.
pub(crate) fn forward(
    item: &ItemFn,
    sig: &Signature,
    func: &Function,
    primal_len: usize,
    entry: Entry,
) -> TokenStream {
    let pullback_ty = pullback_trait(sig);
    let header = forward_header(item, sig, &pullback_ty, entry, None);
    let body = forward_body(sig, func, primal_len, entry, pullback_ty);
    quote! {
        #header {
            #body
        }
    }
}

/// `f_forward` and `f_forward_all` of the same IR (no `wrt`): one body
/// under both headers, emitted once. Only the handling of a buffer of rows
/// (flat in `_forward_all`) tells their bodies apart.
pub(crate) fn forward_and_all(
    item: &ItemFn,
    sig: &Signature,
    func: &Function,
    primal_len: usize,
) -> TokenStream {
    if sig.params.iter().any(|param| param.rows.is_some()) {
        let user = forward(item, sig, func, primal_len, Entry::Forward);
        let all = forward(item, sig, func, primal_len, Entry::All);
        return quote!(#user #all);
    }
    let pullback_ty = pullback_trait(sig);
    let (forward, all) = (
        forward_header(item, sig, &pullback_ty, Entry::Forward, None),
        forward_header(item, sig, &pullback_ty, Entry::All, None),
    );
    let body = forward_body(sig, func, primal_len, Entry::Forward, pullback_ty);
    quote! {
        #forward {
            #body
        }
        #all {
            #body
        }
    }
}

/// The body of `f_forward` (or `f_forward_all`).
fn forward_body(
    sig: &Signature,
    func: &Function,
    primal_len: usize,
    entry: Entry,
    pullback_ty: TokenStream,
) -> TokenStream {
    let mut emitter = Emitter::new(func);
    emitter.split = Some(Mode { pullback_ty });
    emitter.split_body(sig, adjoint_start(func, primal_len), entry)
}

/// Which split entry point: the user's `f_forward`, which honours `wrt` as
/// `_vjp` does, or `f_forward_all`, with every float parameter active,
/// which the generated code of callers calls (a caller may pass active
/// values anywhere).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    Forward,
    All,
}

impl Entry {
    /// What the entry's name appends to the function's.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Entry::Forward => "_forward",
            Entry::All => "_forward_all",
        }
    }
}

/// `f_forward`'s name (or `f_forward_all`'s): `f` followed by the suffix.
pub(crate) fn forward_ident(sig: &Signature, entry: Entry) -> Ident {
    Ident::new(
        &format!("{}{}", sig.ident.unraw(), entry.suffix()),
        sig.ident.span(),
    )
}

/// Attributes and signature of `f_forward` (or `f_forward_all`).
pub(crate) fn forward_header(
    item: &ItemFn,
    sig: &Signature,
    pullback_ty: &TokenStream,
    entry: Entry,
    rule: Option<(&TokenStream, &TokenStream)>,
) -> TokenStream {
    let vis = &item.vis;
    let generics = &item.sig.generics;
    let where_clause = &generics.where_clause;
    let kept = super::header::kept_attrs(item);
    let name = forward_ident(sig, entry);
    let hidden = (entry == Entry::All).then(|| {
        quote! {
            #[doc(hidden)]
        }
    });
    let params = sig.params.iter().map(|param| {
        let ident = ident(&param.name, param.span);
        // Callers hold a buffer of rows flat, and pass it so (not `Vec`
        // rows, which no caller passes on).
        let flat_rows = param
            .rows
            .as_ref()
            .is_some_and(crate::lower::RowsParam::passed_flat);
        let ty = match entry == Entry::All && flat_rows {
            true => &param.ty,
            false => param.outer_ty(),
        };
        quote!(#ident: #ty)
    });
    let output = &sig.output;
    let doc = [
        format!(
            " The forward part of [`{}`], generated by `#[differentiate]`: runs it and returns its output and its pullback.",
            sig.ident
        ),
        String::new(),
        " The pullback takes each buffer parameter as this call left it, followed by its"
            .to_owned(),
        " shadow if its elements are floats, then the seed (`()` if the function returns"
            .to_owned(),
        " nothing). It adds the buffers' adjoints into their shadows and returns the adjoints"
            .to_owned(),
        " of the float parameters taken by value. It can be called any number of times.".to_owned(),
    ];
    let allows = allows();
    // The pullback captures values of type `T`, nothing borrowed (a
    // method's too: it takes `self_` again). A method in an `impl` with
    // type parameters of its own is not supported: `use<…>` would have to
    // name them, and the macro cannot see them.
    let float_param = &sig.float_param;
    let mut pullback = quote!(impl #pullback_ty + use<#float_param>);
    // A custom rule's pullback, for callers, with how to build it from the
    // arguments taken by value (`args`, a tuple type) and the output: a
    // caller in a loop keeps the builder rather than make the call again
    // (`ad_runtime`'s `kept.rs`).
    if let Some((args, out)) = rule {
        pullback = quote! {
            ::ad_runtime::__private::Rule<#args, #out, impl ::ad_runtime::__private::Build<#args, #out, Pullback = #pullback> + use<#float_param>>
        };
    }
    // `#[inline]`: compiled only where it is called. A library's public
    // functions are compiled in the library whether called or not, and a
    // caller of `f` calls `f_vjp` far more often than the split API, which
    // would otherwise double the machine code of every `#[differentiate]`d
    // function (docs/performance.md, "Compile cost").
    quote! {
        #(#[doc = #doc])*
        #hidden
        #(#kept)*
        #allows
        #[inline]
        #vis fn #name #generics (#(#params),*) -> (#output, #pullback) #where_clause
    }
}

/// What the pullback takes, name and type: the buffers again (`&mut` ones as
/// `&`), each float buffer's shadow after it, then the seed (unnamed `()` for
/// a function returning nothing).
fn pullback_inputs(sig: &Signature) -> Vec<(Option<Ident>, TokenStream)> {
    let mut inputs = Vec::new();
    for param in sig
        .params
        .iter()
        .filter(|param| param.ir_ty.is_by_reference())
    {
        let name = ident(&param.name, param.span);
        // An array taken by value is read as a slice: a caller may hold
        // the array it passed in a `Vec` (made in a loop).
        let row = param.rows.as_ref().map(|_| match &param.ty {
            Type::Reference(flat) => match &*flat.elem {
                Type::Slice(slice) => &*slice.elem,
                _ => unreachable!("rows are flattened into a slice"),
            },
            _ => unreachable!("rows are taken by reference"),
        });
        // A buffer of rows is read flat, as the body reads it.
        let array_elem = match (&param.by_value, row) {
            (_, Some(row)) => Some(row),
            (Some(Type::Array(array)), None) => Some(&*array.elem),
            _ => None,
        };
        if let Some(elem) = array_elem {
            inputs.push((Some(name), quote!(&[#elem])));
            if let Some(shadow) = &param.shadow {
                let name = ident(&shadow.name, param.span);
                inputs.push((Some(name), quote!(&mut [#elem])));
            }
            continue;
        }
        inputs.push((Some(name), shared(&param.ty)));
        if let Some(shadow) = &param.shadow {
            let name = ident(&shadow.name, param.span);
            inputs.push((Some(name), shadow.ty.to_token_stream()));
        }
    }
    inputs.push(match &sig.seed_ty {
        Some(seed) => (
            Some(ident(&sig.seed_name, sig.ident.span())),
            seed.to_token_stream(),
        ),
        None => (None, quote!(())),
    });
    inputs
}

/// `Fn(&[f64], &mut [f64], f64) -> f64`: the pullback's trait.
pub(crate) fn pullback_trait(sig: &Signature) -> TokenStream {
    let tys = pullback_inputs(sig).into_iter().map(|(_, ty)| ty);
    let adjoints = adjoint_types(sig);
    quote!(Fn(#(#tys),*) #adjoints)
}

/// `xs: &[f64], d_xs: &mut [f64], d_out: f64`: the pullback closure's
/// parameters.
pub(crate) fn pullback_params(sig: &Signature) -> Vec<TokenStream> {
    pullback_inputs(sig)
        .into_iter()
        .map(|(name, ty)| match name {
            Some(name) => quote!(#name: #ty),
            None => quote!(_: #ty),
        })
        .collect()
}

/// `-> T`: the adjoints the pullback returns, one type or a tuple; nothing
/// for none.
pub(crate) fn adjoint_types(sig: &Signature) -> TokenStream {
    let tys: Vec<&Type> = scalar_actives(sig).map(|param| &param.ty).collect();
    match tys.as_slice() {
        [] => TokenStream::new(),
        [single] => quote!(-> #single),
        tys => quote!(-> (#(#tys),*)),
    }
}

fn scalar_actives(sig: &Signature) -> impl Iterator<Item = &crate::lower::SigParam> {
    sig.params
        .iter()
        .filter(|param| param.role == Role::Active && !param.ir_ty.is_by_reference())
}

/// `&mut [f64]` → `&[f64]`: the pullback reads the contents only.
pub(crate) fn shared(ty: &Type) -> TokenStream {
    match ty {
        Type::Reference(reference) => {
            let elem = &reference.elem;
            quote!(&#elem)
        }
        ty => ty.to_token_stream(),
    }
}

/// Whether an instruction of `insts`, or of a region in them, reads `value`
/// (but for the tuple `_vjp` returns, which the split API does not build).
fn reads(func: &Function, insts: &[Value], value: Value) -> bool {
    insts.iter().any(|&inst| {
        (inst != func.ret && func.inst(inst).operands().contains(&value))
            || func
                .regions(inst)
                .iter()
                .any(|region| region.yields.contains(&value) || reads(func, &region.insts, value))
    })
}

/// Where the adjoint begins in the body of `_vjp`: the reverse pass appends
/// it after the primal, into which it only inserts tapes, copies of buffers
/// and values carried out of branches.
fn adjoint_start(func: &Function, primal_len: usize) -> usize {
    func.body
        .insts
        .iter()
        .position(|&value| {
            value.index() >= primal_len
                && !matches!(
                    func.inst(value),
                    Inst::TapeNew { .. } | Inst::CloneBuf { .. }
                )
                // The returned buffer's length, for its seed's check.
                && !matches!(func.inst(value), Inst::Len(of) if of.index() < primal_len)
                && !matches!(func.inst(value), Inst::Extract(of, _) if of.index() < primal_len)
        })
        .unwrap_or(func.body.insts.len())
}

impl Emitter<'_> {
    /// The primal statements, then `(out, move |…| { adjoint })`.
    fn split_body(&self, sig: &Signature, start: usize, entry: Entry) -> TokenStream {
        let func = self.func;
        let rows_flat = entry == Entry::All;
        let mut stmts = super::header::by_value_prologue(sig, false, &[], rows_flat);
        stmts.extend(self.prologue());
        let (primal, adjoint) = func.body.insts.split_at(start);
        stmts.extend(
            self.stmts(&crate::ir::Region {
                insts: primal.to_vec(),
                yields: Vec::new(),
            })
            .into_token_stream(),
        );
        let (out, adjoints) = self.outputs(sig);
        let span = sig.ident.span();
        let out = match out {
            // The closure may read a returned local buffer: return a copy.
            Some(out)
                if matches!(func.ty(out), Ty::Buf(_))
                    && !func.is_param(out)
                    && reads(func, adjoint, out) =>
            {
                let out = self.expr(out).at(Prec::Postfix);
                quote_spanned!(span=> #out.clone())
            }
            Some(out) => self.expr(out).at(Prec::Or),
            None => quote!(()),
        };
        // The closure's parameters shadow the function's buffers: it borrows
        // nothing, and its names are those `_vjp` gives them.
        let params = pullback_params(sig);
        let tapes: Vec<TokenStream> = primal
            .iter()
            .filter(|&&value| matches!(func.inst(value), Inst::TapeNew { .. }))
            .map(|&tape| self.expr(tape).tokens)
            .collect();
        // One `let` for all of them in a long function (see `stmts`).
        let readers = if self.declare_first && !tapes.is_empty() {
            quote_spanned!(span=> let (#(mut #tapes,)*) = (#(#tapes.reader(),)*);)
        } else {
            quote_spanned!(span=> #(let mut #tapes = #tapes.reader();)*)
        };
        let adjoint_stmts = self.stmts(&crate::ir::Region {
            insts: adjoint.to_vec(),
            yields: Vec::new(),
        });
        let adjoints: Vec<TokenStream> = adjoints
            .iter()
            .map(|&value| self.expr(value).at(Prec::Or))
            .collect();
        let result = match adjoints.as_slice() {
            [] => TokenStream::new(),
            [single] => single.clone(),
            adjoints => quote!((#(#adjoints),*)),
        };
        let adjoint_ty = adjoint_types(sig);
        // `&mut` rows that are `Vec`s get what the primal wrote.
        stmts.extend(super::header::rows_epilogue(
            sig,
            true,
            false,
            &[],
            rows_flat,
        ));
        stmts.extend(quote_spanned! {span=>
            (#out, move |#(#params),*| #adjoint_ty {
                #readers
                #adjoint_stmts
                #result
            })
        });
        stmts
    }

    /// The primal output (`None` for `()`) and the scalar adjoints that
    /// `_vjp` returns.
    fn outputs(&self, sig: &Signature) -> (Option<Value>, Vec<Value>) {
        let func = self.func;
        let has_out = sig.seed_ty.is_some();
        let n = usize::from(has_out) + scalar_actives(sig).count();
        let mut values = match (n, func.inst(func.ret)) {
            (1, _) => vec![func.ret],
            (_, Inst::Tuple(elems)) => elems.clone(),
            _ => unreachable!("`_vjp` returns a tuple"),
        };
        let out = has_out.then(|| values.remove(0));
        (out, values)
    }
}
