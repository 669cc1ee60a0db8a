//! No file of a crate imports from a file that imports from it.

use super::*;

/// The module path of a source file of a crate (`a::b` for `src/a/b.rs` and `src/a/b/mod.rs`; empty for the root).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let parts: Vec<&str> = match parts.last().map(String::as_str) {
        Some("mod") => parts[..parts.len() - 1].iter().map(String::as_str).collect(),
        Some("lib" | "main") if parts.len() == 1 => Vec::new(),
        _ => parts.iter().map(String::as_str).collect(),
    };
    parts.join("::")
}

/// Every module path a file's code names, from the crate's root (`crate::a::b`), with `use` groups expanded:
/// `crate::{a, b::{c, d}}` names `crate::a`, `crate::b::c` and `crate::b::d`. Besides `crate::` paths, it resolves
/// `self::` and `super::` paths against `module` (the file's own module, `crate` for the root), and paths that start
/// with a module the file declares (`children`: `mod lease;` then `lease::Lease`). A glob names its module.
fn named_paths(code: &str, module: &str, children: &BTreeSet<String>) -> Vec<String> {
    fn expand(prefix: &str, text: &str, out: &mut Vec<String>) {
        // `text` starts right after a `::`: a name, a `{...}` group, or `*`.
        if let Some(rest) = text.strip_prefix('{') {
            let mut depth = 0;
            let mut start = 0;
            let mut end = rest.len();
            for (i, c) in rest.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = i;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(prefix, rest[start..i].trim_start(), out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(prefix, rest[start..end].trim_start(), out);
            return;
        }
        let name: String = text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() || name == "self" {
            out.push(prefix.to_owned());
            return;
        }
        let path = format!("{prefix}::{name}");
        match text[name.len()..].strip_prefix("::") {
            Some(rest) => expand(&path, rest, out),
            None => out.push(path),
        }
    }
    let own: Vec<&str> = module.split("::").collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let before = code[..i].chars().last();
        // `elect_crate::`, `$crate::`, `other::self::`: not a path of this crate that starts here.
        let starts = !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':');
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !starts || word.is_empty() || !rest[word.len()..].starts_with("::") {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let mut after = &rest[word.len() + 2..];
        let base = match word.as_str() {
            "crate" => Some("crate".to_owned()),
            "self" => Some(module.to_owned()),
            "super" => {
                let mut up = 1;
                while let Some(more) = after.strip_prefix("super::") {
                    (up, after) = (up + 1, more);
                }
                Some(own[..own.len().saturating_sub(up).max(1)].join("::"))
            }
            child if children.contains(child) => Some(format!("{module}::{child}")),
            _ => None,
        };
        if let Some(base) = base {
            expand(&base, after, &mut out);
        }
        i += word.len();
    }
    out
}

/// The modules a file declares (`mod name;`, `pub(crate) mod name;`, ...), inline test modules aside.
fn declared_modules(code: &str) -> BTreeSet<String> {
    code.split(';')
        .filter_map(|statement| {
            let words: Vec<&str> = statement.split_whitespace().collect();
            match words.as_slice() {
                [.., "mod", name] => Some((*name).to_owned()),
                _ => None,
            }
        })
        .collect()
}

/// The files of the crate whose sources are in `src` each file imports from, test modules at a file's end aside.
fn file_imports_in(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = rust_files(src);
    let name_of = |f: &Path| f.strip_prefix(src).unwrap().display().to_string();
    let module_path = |f: &Path| match module_of(src, f).as_str() {
        "" => "crate".to_owned(),
        m => format!("crate::{m}"),
    };
    let modules: BTreeMap<String, String> = files.iter().map(|f| (module_path(f), name_of(f))).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let name = name_of(file);
        let text = fs::read_to_string(file).unwrap();
        // A file's unit tests (`#[cfg(test)] mod tests` at its end) may take from anywhere.
        let text = text.split("\n#[cfg(test)]\nmod tests").next().unwrap_or("");
        // A `use` list may span lines: read the code as one line.
        let joined: String = text.lines().map(|l| code(l).to_owned() + " ").collect();
        let mut to = BTreeSet::new();
        for path in named_paths(&joined, &module_path(file), &declared_modules(&joined)) {
            let mut parts: Vec<&str> = path.split("::").collect();
            while !parts.is_empty() {
                // The crate's root is its front door: a path through its re-exports names no file of its own.
                if parts == ["crate"] {
                    break;
                }
                if let Some(target) = modules.get(&parts.join("::")) {
                    if *target != name {
                        to.insert(target.clone());
                    }
                    break;
                }
                parts.pop();
            }
        }
        graph.insert(name, to);
    }
    graph
}

/// The files of crate `krate` each file imports from.
fn file_imports(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let graph = file_imports_in(&root().join("crates").join(krate).join("src"));
    let prefix = format!("crates/{krate}/src/");
    let named = |f: &String| format!("{prefix}{f}");
    graph.iter().map(|(f, to)| (named(f), to.iter().map(named).collect())).collect()
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn paths_are_resolved_from_the_crate_root() {
    let none = BTreeSet::new();
    let code = "use crate::{a, b::{c, d::*}}; let x = crate::e::f(); elect_crate::g; $crate::h";
    let paths = named_paths(code, "crate", &none);
    assert_eq!(paths, ["crate::a", "crate::b::c", "crate::b::d", "crate::e::f"]);
    let children: BTreeSet<String> = ["lease".to_owned()].into();
    let code = "use super::*; use super::super::x::Y; use self::z::{self, W}; use lease::L; use other::lease::M;";
    let paths = named_paths(code, "crate::m::n", &children);
    assert_eq!(paths, ["crate::m", "crate::x::Y", "crate::m::n::z", "crate::m::n::z::W", "crate::m::n::lease::L"]);
    assert_eq!(
        declared_modules("mod a; pub(crate) mod b; #[cfg(test)] mod tests; let m = 1;"),
        ["a", "b", "tests"].map(String::from).into()
    );
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
            .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
}

/// A crate with a parent and child that import from each other through `super::` and a declared module's path:
/// the check sees the circle.
#[test]
fn a_planted_circle_through_super_is_found() {
    let dir = std::env::temp_dir().join(format!("elect-tidy-planted-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod parent;\nmod apart;\n");
    write("parent.rs", "mod child;\nuse child::Part;\npub(crate) struct Whole;\n");
    write("parent/child.rs", "use super::Whole;\npub(crate) struct Part;\n");
    write("apart.rs", "use crate::parent::Whole;\n");
    let graph = file_imports_in(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(cycles(&graph), [["parent.rs", "parent/child.rs"]], "{graph:?}");
}

/// A part of a crate owns its state and returns what its caller must do (a parent and the children it holds, as
/// `monitor/process.rs` and `monitor/poll.rs`), so no file imports, however indirectly, from a file that imports
/// from it. A child that needs its parent's vocabulary takes it from a sibling that holds it (`property/terms.rs`).
#[test]
fn no_file_of_a_crate_imports_from_a_file_that_imports_from_it() {
    let mut found = Vec::new();
    for krate in LIBRARIES.iter().chain(&["lab", "cli"]) {
        for cycle in cycles(&file_imports(krate)) {
            found.push(cycle.join(" → "));
        }
    }
    assert!(
        found.is_empty(),
        "files that import from each other, in a circle (through crate::, self::, super:: or a \
        declared module's path):\n{}",
        found.join("\n")
    );
}
