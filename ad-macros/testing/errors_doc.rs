//! docs/errors.md follows the catalogue of messages, `diag::msg`.
//!
//! Every message of the catalogue (a `const` or a function of `mod msg`) has
//! one entry in docs/errors.md: an anchor named after it, the message quoted
//! word for word (a function's `format!` template, with `{name}` where it
//! fills something in), and the construct, why and rewrite. The page names
//! nothing the catalogue does not have. Anchors with a `-` are the page's own
//! entries for rustc's messages, outside the catalogue.

use std::collections::BTreeMap;

use syn::visit::Visit;

const CATALOGUE: &str = include_str!("../src/diag.rs");
const ERRORS_MD: &str = include_str!("../../docs/errors.md");

/// The parts every entry has, after the quoted message.
const PARTS: [&str; 3] = ["- **Construct:**", "- **Why:**", "- **Rewrite:**"];

/// Each message of `mod msg` in ad-macros/src/diag.rs by its name.
fn catalogue() -> BTreeMap<String, String> {
    catalogue_of(CATALOGUE)
}

/// Each message of `mod msg` in `source` by its name: a constant's text, or
/// the `format!` template of a function, with `{{`/`}}` unescaped.
fn catalogue_of(source: &str) -> BTreeMap<String, String> {
    let file = syn::parse_file(source).expect("ad-macros/src/diag.rs parses");
    let items = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Mod(module) if module.ident == "msg" => module.content.as_ref(),
            _ => None,
        })
        .map(|(_, items)| items)
        .expect("ad-macros/src/diag.rs has `mod msg { … }`");
    let mut messages = BTreeMap::new();
    for item in items {
        let (name, text) = match item {
            syn::Item::Const(constant) => {
                let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) = &*constant.expr
                else {
                    panic!("msg::{} is not a string literal", constant.ident);
                };
                (constant.ident.to_string(), text.value())
            }
            syn::Item::Fn(function) => {
                let mut template = FormatTemplate(None);
                template.visit_block(&function.block);
                let text = template.0.unwrap_or_else(|| {
                    panic!(
                        "msg::{} builds its message without `format!(\"…\")`; \
                         errors_doc.rs reads the template from there",
                        function.sig.ident
                    )
                });
                (function.sig.ident.to_string(), unescape_braces(&text))
            }
            _ => continue,
        };
        messages.insert(name, text);
    }
    messages
}

/// The template of the first `format!` in a function body.
struct FormatTemplate(Option<String>);

impl<'ast> Visit<'ast> for FormatTemplate {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if self.0.is_none() && mac.path.is_ident("format") {
            let template = mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
                let template: syn::LitStr = input.parse()?;
                input.parse::<proc_macro2::TokenStream>()?;
                Ok(template)
            });
            self.0 = template.ok().map(|template| template.value());
        }
    }
}

/// `{{` and `}}` of a format string as the message shows them.
fn unescape_braces(template: &str) -> String {
    template.replace("{{", "{").replace("}}", "}")
}

/// One `<a id="NAME"></a>` of errors.md and the text up to the next anchor.
struct Entry<'a> {
    name: &'a str,
    body: &'a str,
}

impl Entry<'_> {
    /// The first `> ` line: the quoted message.
    fn quote(&self) -> Option<&str> {
        self.body
            .lines()
            .find_map(|line| line.strip_prefix("> "))
            .map(str::trim_end)
    }
}

/// The catalogue's entries of errors.md: anchors whose id has no `-`.
fn entries(doc: &str) -> Vec<Entry<'_>> {
    const OPEN: &str = "<a id=\"";
    let mut entries = Vec::new();
    let mut rest = doc;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let name_end = after.find('"').expect("an anchor's id ends with `\"`");
        let name = &after[..name_end];
        let body_end = after.find(OPEN).unwrap_or(after.len());
        if !name.contains('-') {
            entries.push(Entry {
                name,
                body: &after[name_end..body_end],
            });
        }
        rest = &after[name_end..];
    }
    entries
}

/// What docs/errors.md gets wrong about the catalogue, each problem with
/// what to write to fix it.
fn problems(catalogue: &BTreeMap<String, String>, doc: &str) -> Vec<String> {
    let entries = entries(doc);
    let mut problems = Vec::new();
    let mut seen = BTreeMap::new();
    for entry in &entries {
        *seen.entry(entry.name).or_insert(0) += 1;
        let Some(message) = catalogue.get(entry.name) else {
            problems.push(format!(
                "docs/errors.md has an entry `<a id=\"{}\"></a>`, but ad-macros/src/diag.rs has no \
                 `msg::{}`: remove the entry, or rename its anchor to the message's new name",
                entry.name, entry.name
            ));
            continue;
        };
        if entry.quote() != Some(message.as_str()) {
            problems.push(format!(
                "the entry `<a id=\"{}\"></a>` of docs/errors.md must quote the message as \
                 ad-macros/src/diag.rs has it; its first `> ` line should be\n> {}\n\
                 (and check that the construct, why and rewrite still hold)",
                entry.name, message
            ));
        }
        for part in PARTS {
            if !entry.body.contains(part) {
                problems.push(format!(
                    "the entry `<a id=\"{}\"></a>` of docs/errors.md has no `{part}` line",
                    entry.name
                ));
            }
        }
    }
    for (name, count) in seen {
        if count > 1 {
            problems.push(format!(
                "docs/errors.md has {count} entries `<a id=\"{name}\"></a>`; keep one"
            ));
        }
    }
    for (name, message) in catalogue {
        if !entries.iter().any(|entry| entry.name == name) {
            problems.push(format!(
                "docs/errors.md has no entry for `msg::{name}`; add one in the section it belongs \
                 to:\n\n<a id=\"{name}\"></a>\n\n### <the construct, in a few words>\n\n> {message}\n\n\
                 - **Construct:** <what the user wrote, with an example>\n\
                 - **Why:** <why it is not supported, or what went wrong>\n\
                 - **Rewrite:** <what to write instead>\n"
            ));
        }
    }
    problems
}

#[test]
fn errors_md_has_one_entry_per_message_of_the_catalogue() {
    let catalogue = catalogue();
    assert!(
        catalogue.len() > 50,
        "read only {} messages from ad-macros/src/diag.rs: has `mod msg` moved?",
        catalogue.len()
    );
    let problems = problems(&catalogue, ERRORS_MD);
    assert!(
        problems.is_empty(),
        "docs/errors.md does not follow the catalogue of messages, ad-macros/src/diag.rs:\n\n{}",
        problems.join("\n\n")
    );
}

/// The check itself: each kind of drift is caught, and named.
#[test]
fn each_kind_of_drift_is_reported() {
    let catalogue = BTreeMap::from([
        ("KEPT".to_owned(), "a message".to_owned()),
        ("ADDED".to_owned(), "a new message".to_owned()),
    ]);
    let entry = |name: &str, quote: &str| {
        format!(
            "<a id=\"{name}\"></a>\n\n### T\n\n> {quote}\n\n- **Construct:** c\n- **Why:** w\n- **Rewrite:** r\n"
        )
    };
    let good = entry("KEPT", "a message") + &entry("ADDED", "a new message");
    assert_eq!(problems(&catalogue, &good), Vec::<String>::new());

    let missing = entry("KEPT", "a message");
    let reported = problems(&catalogue, &missing);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(
        reported[0].contains("no entry for `msg::ADDED`"),
        "{reported:?}"
    );
    assert!(reported[0].contains("> a new message"), "{reported:?}");

    let stale = good.clone() + &entry("REMOVED", "an old message");
    let reported = problems(&catalogue, &stale);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].contains("no `msg::REMOVED`"), "{reported:?}");

    let reworded = entry("KEPT", "an old wording") + &entry("ADDED", "a new message");
    let reported = problems(&catalogue, &reworded);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].contains("> a message"), "{reported:?}");

    let twice = good.clone() + &entry("KEPT", "a message");
    assert_eq!(problems(&catalogue, &twice).len(), 1);

    let incomplete = good.replace("- **Why:** w\n", "");
    assert_eq!(problems(&catalogue, &incomplete).len(), 2);

    // rustc's messages have anchors with a `-` and are not the catalogue's.
    let rustc = good + "<a id=\"rustc-mismatched-types\"></a>\n\n> mismatched types\n";
    assert_eq!(problems(&catalogue, &rustc), Vec::<String>::new());
}

#[test]
fn messages_are_constants_and_format_templates_of_mod_msg() {
    let source = r#"
        pub(crate) struct Ctxt;
        impl Ctxt {
            pub(crate) fn error_at(&self) {}
        }
        pub(crate) mod msg {
            pub(crate) const PLAIN: &str =
                "a \"quoted\" message";
            /// `{name}` is filled in.
            pub(crate) fn built(name: &str) -> String {
                let shown = name.replace(' ', "");
                format!("`{shown}` in {{ braces }}, {}", 1)
            }
        }
    "#;
    let catalogue = catalogue_of(source);
    assert_eq!(
        catalogue,
        BTreeMap::from([
            ("PLAIN".to_owned(), "a \"quoted\" message".to_owned()),
            ("built".to_owned(), "`{shown}` in { braces }, {}".to_owned()),
        ])
    );
}
