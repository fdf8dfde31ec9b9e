//! The statements of an emitted block, and how a long function lays out
//! its bindings.
//!
//! Every `let` opens a scope nested in the one before it, and rustc's debug
//! info writer (LLVM's `DwarfCompileUnit::createAndAddScopeChildren`)
//! recurses once per level: around 2,500 `let`s in one block overflow its
//! stack, and the adjoint of a few hundred statements has that many. So a
//! function with more than [`LONG`] bindings declares the locals of each
//! block up front, in a single `let` with their types, and assigns each
//! where the IR defines it; the nesting then stays one level per block:
//!
//! ```text
//! let ((s, t1, d_s, …), (…)): ((f64, f64, f64, …), (…));
//! s = x * y;
//! t1 = s.sin();
//! ```
//!
//! The types are written wherever the IR knows them: with `_` in their place
//! rustc's type inference keeps the pending obligations of every local and
//! becomes quadratic (57 s instead of 0.8 s for 20,000 locals). A function
//! with fewer bindings keeps one `let` per value, as a person writes it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;

/// How many bindings a function may have before its blocks declare their
/// locals up front. Well under the ~2,500 nested `let`s that overflow
/// rustc, and well over what a function written by hand binds.
pub(super) const LONG: usize = 500;

/// How many elements one tuple the emitter writes may have (see
/// [`tuple_tree`]).
const CHUNK: usize = 64;

/// A local bound by a `let`.
pub(super) struct Binding {
    pub(super) name: Ident,
    pub(super) mutable: bool,
    /// Its type as the IR knows it, for a declaration made before it is
    /// assigned (`_` where only rustc knows it).
    pub(super) ty: TokenStream,
    /// The annotation of a one-value `let`: `f64` for a literal, whose
    /// float type rustc could not see otherwise.
    pub(super) annotation: Option<TokenStream>,
}

/// What a `let` binds: one local, or the components of a tuple (`_` for
/// those not used).
pub(super) enum Pattern {
    Single(Binding),
    Tuple(Vec<Option<Binding>>),
}

enum Stmt {
    Let {
        pattern: Pattern,
        expr: TokenStream,
        span: Span,
    },
    /// A local assigned by later statements (only when declaring up front).
    Declare(Binding),
    Other(TokenStream),
}

/// The statements of one block, in order.
pub(super) struct Stmts {
    list: Vec<Stmt>,
    /// Whether the block declares its locals up front (the function is long).
    declare_first: bool,
}

impl Stmts {
    pub(super) fn new(declare_first: bool) -> Self {
        Stmts {
            list: Vec::new(),
            declare_first,
        }
    }

    pub(super) fn bind(&mut self, pattern: Pattern, expr: TokenStream, span: Span) {
        self.list.push(Stmt::Let {
            pattern,
            expr,
            span,
        });
    }

    /// A local that statements pushed after it assign: only when locals
    /// are declared up front.
    pub(super) fn declare(&mut self, binding: Binding) {
        assert!(self.declare_first, "a `let` binds a local assigned later");
        self.list.push(Stmt::Declare(binding));
    }

    pub(super) fn declares_first(&self) -> bool {
        self.declare_first
    }

    /// A statement that binds nothing.
    pub(super) fn push(&mut self, tokens: TokenStream) {
        if !tokens.is_empty() {
            self.list.push(Stmt::Other(tokens));
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn bindings(&self) -> impl Iterator<Item = &Binding> {
        self.list.iter().flat_map(|stmt| match stmt {
            Stmt::Let {
                pattern: Pattern::Single(binding),
                ..
            } => vec![binding],
            Stmt::Let {
                pattern: Pattern::Tuple(parts),
                ..
            } => parts.iter().flatten().collect(),
            Stmt::Declare(binding) => vec![binding],
            Stmt::Other(_) => Vec::new(),
        })
    }

    /// `let ((a, mut b, …), …): ((f64, _, …), …);` for every local bound in
    /// this block.
    fn declaration(&self) -> TokenStream {
        let bindings: Vec<&Binding> = self.bindings().collect();
        if bindings.is_empty() {
            return TokenStream::new();
        }
        let names = bindings.iter().map(|binding| {
            let name = &binding.name;
            let mutability = binding.mutable.then(|| quote!(mut));
            quote!(#mutability #name)
        });
        let tys = bindings.iter().map(|binding| binding.ty.clone());
        let names = tuple_tree(names.collect());
        let tys = tuple_tree(tys.collect());
        quote!(let #names: #tys;)
    }
}

/// A tuple of `items` (a pattern, an expression or a type) as a tree of
/// tuples of at most [`CHUNK`] elements: rustc's type checking is quadratic
/// in the length of one tuple (3.3 s for a tuple of 5,000 floats), not in
/// the size of a tree of small ones. At most [`CHUNK`] items stay one
/// tuple, `(a, b)`, as written by hand.
pub(super) fn tuple_tree(items: Vec<TokenStream>) -> TokenStream {
    if items.len() <= CHUNK {
        return quote!((#(#items),*));
    }
    let groups = items
        .chunks(CHUNK)
        .map(|group| quote!((#(#group,)*)))
        .collect();
    tuple_tree(groups)
}

impl ToTokens for Stmts {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        if self.declare_first {
            tokens.extend(self.declaration());
        }
        for stmt in &self.list {
            match stmt {
                Stmt::Other(stmt) => tokens.extend(stmt.clone()),
                Stmt::Declare(_) => {}
                Stmt::Let {
                    pattern,
                    expr,
                    span,
                } => {
                    let span = *span;
                    let stmt = match (self.declare_first, pattern) {
                        (false, Pattern::Single(binding)) => {
                            let name = &binding.name;
                            let mutability = binding.mutable.then(|| quote!(mut));
                            let annotation = binding.annotation.as_ref().map(|ty| quote!(: #ty));
                            quote_spanned!(span=> let #mutability #name #annotation = #expr;)
                        }
                        (false, Pattern::Tuple(parts)) => {
                            let parts = parts.iter().map(|part| match part {
                                Some(binding) => {
                                    let name = &binding.name;
                                    let mutability = binding.mutable.then(|| quote!(mut));
                                    quote!(#mutability #name)
                                }
                                None => quote!(_),
                            });
                            let parts = tuple_tree(parts.collect());
                            quote_spanned!(span=> let #parts = #expr;)
                        }
                        (true, Pattern::Single(binding)) => {
                            let name = &binding.name;
                            quote_spanned!(span=> #name = #expr;)
                        }
                        (true, Pattern::Tuple(parts)) => {
                            let parts = parts.iter().map(|part| match part {
                                Some(binding) => binding.name.to_token_stream(),
                                None => quote!(_),
                            });
                            let parts = tuple_tree(parts.collect());
                            quote_spanned!(span=> #parts = #expr;)
                        }
                    };
                    tokens.extend(stmt);
                }
            }
        }
    }
}
