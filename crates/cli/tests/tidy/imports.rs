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

/// Every path a `crate::` expression names, with `use` groups expanded: `crate::{a, b::{c, d}}` names `a`, `b::c`
/// and `b::d`.
fn crate_paths(code: &str) -> Vec<String> {
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
        if name.is_empty() {
            if !prefix.is_empty() {
                out.push(prefix.to_owned());
            }
            return;
        }
        let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}::{name}") };
        match text[name.len()..].strip_prefix("::") {
            Some(rest) => expand(&path, rest, out),
            None => out.push(path),
        }
    }
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `elect_crate::`, `$crate::`
        }
        expand("", &code[i + "crate::".len()..], &mut out);
    }
    out
}

/// The files of crate `krate` each file imports from (through `crate::` paths), test modules at a file's end aside.
fn file_imports(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("crates").join(krate).join("src");
    let files = rust_files(&src);
    let modules: BTreeMap<String, String> =
        files.iter().map(|f| (module_of(&src, f), f.strip_prefix(root()).unwrap().display().to_string())).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let text = fs::read_to_string(file).unwrap();
        // A file's unit tests (`#[cfg(test)] mod tests` at its end) may take from anywhere.
        let text = text.split("\n#[cfg(test)]\nmod tests").next().unwrap_or("");
        // A `use` list may span lines: read the code as one line.
        let joined: String = text.lines().map(|l| code(l).to_owned() + " ").collect();
        let mut to = BTreeSet::new();
        for path in crate_paths(&joined) {
            let mut parts: Vec<&str> = path.split("::").collect();
            while !parts.is_empty() {
                if let Some(target) = modules.get(&parts.join("::")) {
                    if *target != name && !parts.is_empty() {
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
fn crate_paths_expand_use_groups() {
    let paths = crate_paths("use crate::{a, b::{c, d::*}}; let x = crate::e::f(); elect_crate::g; $crate::h");
    assert_eq!(paths, ["a", "b::c", "b::d", "e::f"]);
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
            .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
}

#[test]
fn no_file_of_a_crate_imports_from_a_file_that_imports_from_it() {
    let mut found = Vec::new();
    for krate in LIBRARIES.iter().chain(&["cli"]) {
        for cycle in cycles(&file_imports(krate)) {
            found.push(cycle.join(" → "));
        }
    }
    assert!(found.is_empty(), "files that import from each other, in a circle:\n{}", found.join("\n"));
}
