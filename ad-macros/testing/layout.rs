//! The crate's layout: its folders depend on each other without cycles,
//! and the IR depends on nothing (so every transformation can build on it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of `src/` (a folder or a file) and the other
/// top-level modules its code names as `crate::…`.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut deps = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(&src).expect("under src/");
            let module = relative
                .components()
                .next()
                .and_then(|first| first.as_os_str().to_str())
                .map(|first| first.trim_end_matches(".rs").to_owned())
                .expect("a module name");
            let text = std::fs::read_to_string(&path).expect("a source file");
            let named: &mut BTreeSet<String> = deps.entry(module.clone()).or_default();
            for (position, _) in text.match_indices("crate::") {
                let rest = &text[position + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    named.insert(name);
                }
            }
        }
    }
    deps
}

#[test]
fn folders_depend_on_each_other_without_cycles() {
    let deps = dependencies();
    // Depth-first search for a cycle, reporting its path.
    fn visit(
        module: &str,
        deps: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(module) {
            return;
        }
        if let Some(start) = path.iter().position(|seen| seen == module) {
            panic!("import cycle: {} -> {module}", path[start..].join(" -> "));
        }
        path.push(module.to_owned());
        for next in deps.get(module).into_iter().flatten() {
            visit(next, deps, path, done);
        }
        path.pop();
        done.insert(module.to_owned());
    }
    let mut done = BTreeSet::new();
    for module in deps.keys() {
        visit(module, &deps, &mut Vec::new(), &mut done);
    }
    assert!(
        deps["ir"].is_empty(),
        "the IR names other modules: {:?}",
        deps["ir"]
    );
    // The stages a newcomer should see in `ls src`.
    for stage in [
        "lower", "ir", "analysis", "reverse", "emit", "expand", "diag",
    ] {
        assert!(deps.contains_key(stage), "no `{stage}` module");
    }
}
