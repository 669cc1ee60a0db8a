//! The architecture invariants of `ARCHITECTURE.md`, enforced by reading the sources and the manifests: the crate
//! graph is the one the document draws; `core` and `algos` do no I/O, read no clock and hold no random generator;
//! only `net` touches the network and only `cli` the command line and the terminal; every random generator is a
//! seeded ChaCha8 stream; hashed collections are only looked into where runs must repeat; pictures are drawn from
//! traces, not from a simulation; algorithm modules do not know the registry; the cluster key cannot be printed;
//! no crate allows unsafe code; no file of a crate imports from a file that imports from it; no file or function is
//! over the size budget without a comment saying why.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The code of a line: everything before a `//` (comments, doc comments and their examples are not code).
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// Every line of code under `crates/KRATE/src`, with its file and line number.
fn code_lines(krate: &str) -> Vec<(String, usize, String)> {
    let mut lines = Vec::new();
    for file in rust_files(&root().join("crates").join(krate).join("src")) {
        let text = fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            lines.push((name.clone(), n + 1, code(line).to_owned()));
        }
    }
    lines
}

/// The crates that are libraries: everything but the `elect` binary.
const LIBRARIES: [&str; 7] = ["core", "algos", "scenario", "sim", "check", "viz", "net"];

/// The drivers' and the pictures' crates, whose results repeat for one input, and the crates they are built on.
const DETERMINISTIC: [&str; 6] = ["core", "algos", "scenario", "sim", "check", "viz"];

/// The dependencies of a manifest (`[dependencies]` and every `[target.'…'.dependencies]`, not dev-dependencies),
/// by name.
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut deps = BTreeSet::new();
    let mut in_deps = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap().trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']');
            let table = header.strip_prefix("target.").map_or(header, |t| t.rsplit_once("'.").map_or(t, |(_, r)| r));
            in_deps = table == "dependencies";
            if let Some(name) = table.strip_prefix("dependencies.") {
                deps.insert(name.to_owned());
            }
            continue;
        }
        if in_deps && !line.is_empty() {
            let name = line.split(|c: char| c == '=' || c == '.' || c.is_whitespace()).next().unwrap();
            deps.insert(name.to_owned());
        }
    }
    deps
}

fn crate_dependencies(krate: &str) -> BTreeSet<String> {
    dependencies(&root().join("crates").join(krate).join("Cargo.toml"))
}

/// The graph `ARCHITECTURE.md` draws: each workspace crate's directory and the elect crates it depends on.
const GRAPH: [(&str, &[&str]); 9] = [
    ("crates/core", &[]),
    ("crates/algos", &["elect-core"]),
    ("crates/scenario", &["elect-algos", "elect-core"]),
    ("crates/sim", &["elect-algos", "elect-core", "elect-scenario"]),
    ("crates/check", &["elect-algos", "elect-core", "elect-scenario"]),
    ("crates/viz", &["elect-algos", "elect-core", "elect-scenario"]),
    ("crates/net", &["elect-algos", "elect-core"]),
    (
        "crates/cli",
        &["elect-algos", "elect-check", "elect-core", "elect-net", "elect-scenario", "elect-sim", "elect-viz"],
    ),
    ("examples/fencing-store", &["elect-core", "elect-net"]),
];

#[test]
fn the_crate_graph_is_the_one_the_architecture_document_draws() {
    let mut members = BTreeSet::new();
    for dir in ["crates", "examples"] {
        for entry in fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.join("Cargo.toml").is_file() {
                members.insert(format!("{dir}/{}", path.file_name().unwrap().to_str().unwrap()));
            }
        }
    }
    let drawn: BTreeSet<String> = GRAPH.iter().map(|(dir, _)| (*dir).to_owned()).collect();
    assert_eq!(members, drawn, "a workspace crate came or went: update the graph in ARCHITECTURE.md and here");
    for (dir, expected) in GRAPH {
        let found: Vec<String> =
            dependencies(&root().join(dir).join("Cargo.toml")).into_iter().filter(|d| d.starts_with("elect")).collect();
        assert_eq!(found, expected, "{dir} depends on other elect crates than ARCHITECTURE.md draws");
    }
    let core: Vec<String> = crate_dependencies("core").into_iter().collect();
    assert_eq!(core, ["serde"], "core depends on serde only");
}

#[test]
fn core_and_algos_do_no_io_read_no_clock_and_hold_no_rng() {
    let banned = [
        "std::fs",
        "std::net",
        "std::io",
        "std::thread",
        "std::process",
        "std::env",
        "std::time",
        "SystemTime",
        "rand::",
        "rand_chacha",
        "tokio",
        "println!",
        "eprintln!",
        "print!(",
    ];
    for krate in ["core", "algos"] {
        for (file, n, code) in code_lines(krate) {
            for word in banned {
                assert!(!code.contains(word), "{file}:{n}: `{word}` in a sans-IO crate: {code}");
            }
        }
        for dep in ["rand", "rand_chacha", "tokio", "serde_json", "postcard"] {
            assert!(!crate_dependencies(krate).contains(dep), "{dep} in the dependencies of {krate}, a sans-IO crate");
        }
    }
}

#[test]
fn only_net_touches_the_network() {
    let banned = ["tokio", "std::net", "UdpSocket", "TcpStream", "TcpListener", "hyper"];
    for krate in DETERMINISTIC {
        for (file, n, code) in code_lines(krate) {
            for word in banned {
                assert!(!code.contains(word), "{file}:{n}: `{word}` outside the runtime: {code}");
            }
        }
        for dep in ["tokio", "hyper", "hyper-util", "http-body-util"] {
            assert!(!crate_dependencies(krate).contains(dep), "{dep} in the dependencies of {krate}");
        }
    }
}

#[test]
fn only_the_cli_knows_the_command_line_and_the_terminal() {
    for krate in LIBRARIES {
        for dep in ["clap", "anyhow", "indicatif", "tracing-subscriber"] {
            assert!(!crate_dependencies(krate).contains(dep), "{dep} in the dependencies of {krate}, a library");
        }
        for (file, n, code) in code_lines(krate) {
            for word in ["print!(", "println!", "dbg!", "stdout()", "stderr()", "stdin()", "process::exit"] {
                assert!(!code.contains(word), "{file}:{n}: `{word}` in a library: {code}");
            }
        }
    }
}

#[test]
fn every_random_generator_is_seeded() {
    let workspace = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let rand = workspace.lines().find(|l| l.starts_with("rand =")).expect("the workspace's rand");
    assert!(rand.contains("default-features = false"), "rand is built without its OS-seeded generators: {rand}");
    let banned = [
        "thread_rng",
        "ThreadRng",
        "rand::rng(",
        "rand::random",
        "OsRng",
        "from_os_rng",
        "from_entropy",
        "StdRng",
        "SmallRng",
        "ChaCha12",
        "ChaCha20",
        "getrandom",
    ];
    let mut dirs: Vec<PathBuf> = ["core", "algos", "scenario", "sim", "check", "viz", "net", "cli"]
        .iter()
        .map(|k| root().join("crates").join(k).join("src"))
        .collect();
    dirs.push(root().join("examples/fencing-store/src"));
    for dir in dirs {
        for file in rust_files(&dir) {
            let text = fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                for word in banned {
                    assert!(
                        !code(line).contains(word),
                        "{}:{}: `{word}`: generators are ChaCha8 streams from a seed",
                        file.display(),
                        n + 1
                    );
                }
            }
        }
    }
}

/// Where the deterministic crates hold hashed collections, and under which names: each is only looked into.
const HASHED: [(&str, &[&str]); 3] = [
    ("crates/scenario/src/draw.rs", &["linked"]),
    ("crates/check/src/search.rs", &["seen"]),
    ("crates/check/src/commute.rs", &["known_states", "known_msgs"]),
];

/// The loops over a hashed collection whose result does not depend on the order: each entry is written to the
/// slot its value names.
const ORDER_FREE: [(&str, &str); 1] = [("crates/check/src/search.rs", "for (&fp, &j) in &seen {")];

#[test]
fn hashed_collections_are_only_looked_into_where_runs_must_repeat() {
    let allowed: BTreeMap<&str, &[&str]> = HASHED.into_iter().collect();
    let methods = [
        "iter()",
        "iter_mut()",
        "into_iter()",
        "keys()",
        "values()",
        "values_mut()",
        "into_keys()",
        "into_values()",
        "drain()",
    ];
    let mut order_free = BTreeSet::new();
    for krate in DETERMINISTIC {
        for (file, n, code) in code_lines(krate) {
            if code.contains("HashMap") || code.contains("HashSet") {
                assert!(
                    allowed.contains_key(file.as_str()),
                    "{file}:{n}: a hashed collection, whose order changes from run to run: use a BTreeMap, a \
                     BTreeSet or a Vec, or list it in HASHED if it is only looked into"
                );
            }
            if ORDER_FREE.contains(&(file.as_str(), code.trim())) {
                order_free.insert((file.clone(), code.trim().to_owned()));
                continue;
            }
            for name in allowed.get(file.as_str()).copied().unwrap_or_default() {
                for method in methods {
                    assert!(!code.contains(&format!("{name}.{method}")), "{file}:{n}: `{name}` iterated: {code}");
                }
                if let Some((_, iterated)) = code.split_once(" in ") {
                    let mut words = iterated.split(|c: char| !(c.is_alphanumeric() || c == '_'));
                    assert!(
                        !(code.trim_start().starts_with("for ") && words.any(|w| w == *name)),
                        "{file}:{n}: `{name}` iterated: {code}"
                    );
                }
            }
        }
    }
    assert_eq!(order_free.len(), ORDER_FREE.len(), "every loop ORDER_FREE lists is still there");
}

#[test]
fn pictures_take_from_the_scenarios_only_topologies_and_trace_records() {
    let allowed = ["Graph", "TopologyKind", "Record"];
    for file in rust_files(&root().join("crates/viz/src")) {
        let text: String = fs::read_to_string(&file).unwrap().lines().map(|l| format!("{}\n", code(l))).collect();
        assert!(
            !text.contains("elect_sim"),
            "{}: pictures are drawn from traces, not from a simulation",
            file.display()
        );
        for after in text.split("elect_scenario::").skip(1) {
            let names: Vec<&str> = match after.strip_prefix('{') {
                Some(list) => list.split('}').next().unwrap().split(',').map(str::trim).collect(),
                None => vec![after.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap()],
            };
            for name in names.into_iter().filter(|n| !n.is_empty()) {
                assert!(
                    allowed.contains(&name),
                    "{}: `elect_scenario::{name}`: pictures are drawn from traces, not from a simulation",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn algorithm_modules_do_not_know_the_registry() {
    // The registry imports the algorithms; the deployed member looks its algorithm up by name through it.
    let knowing = ["crates/algos/src/lib.rs", "crates/algos/src/registry.rs", "crates/algos/src/member.rs"];
    for (file, n, code) in code_lines("algos") {
        if !knowing.contains(&file.as_str()) {
            assert!(!code.contains("registry"), "{file}:{n}: an algorithm module names the registry: {code}");
        }
    }
}

#[test]
fn the_cluster_key_cannot_be_printed() {
    let auth = fs::read_to_string(root().join("crates/net/src/auth.rs")).unwrap();
    let lines: Vec<&str> = auth.lines().map(code).collect();
    let at = lines.iter().position(|l| l.contains("pub struct ClusterKey(")).expect("ClusterKey in auth.rs");
    assert!(!lines[at].contains("(pub"), "the key's bytes are private to auth.rs");
    for attribute in lines[..at].iter().rev().take_while(|l| l.trim_start().starts_with("#[")) {
        assert!(!attribute.contains("Debug"), "ClusterKey's Debug is written by hand, redacted: {attribute}");
    }
    assert!(
        auth.contains("impl fmt::Debug for ClusterKey") && auth.contains("<redacted>"),
        "ClusterKey has a redacted Debug"
    );
    for (file, n, code) in code_lines("net") {
        assert!(!code.contains("Display for ClusterKey"), "{file}:{n}: the cluster key has no Display");
    }
}

#[test]
fn no_crate_allows_unsafe_code() {
    let workspace = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(workspace.contains("unsafe_code = \"forbid\""), "the workspace forbids unsafe code");
    for (dir, _) in GRAPH {
        let manifest = fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[lints]\nworkspace = true"), "{dir} inherits the workspace's lints");
    }
}

/// The repository's own Markdown files (not those of build directories or of other projects).
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    walk(&path, out);
                }
            } else if name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &mut files);
    files.sort();
    files
}

/// A Markdown file's lines outside fenced code blocks, with their numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = &trimmed[..trimmed.len() - trimmed.trim_start_matches(['`', '~']).len()];
        match fence {
            Some(open) if ticks.len() >= open.len() && ticks.starts_with(&open[..1]) => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => lines.push((n + 1, line)),
        }
    }
    lines
}

/// A line without its inline code spans (links inside them are examples, not links).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    for (k, part) in line.split('`').enumerate() {
        if k % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The anchor GitHub and mdBook give a heading: its text without formatting, lower-cased, every character but
/// letters, digits, `-`, `_` and spaces dropped, and spaces made hyphens.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // A link keeps its text.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown file: its headings' (a repeated heading gets `-1`, `-2`, ...) and its `<a id>`s.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (_, line) in prose(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(line[hashes..].trim());
            let count = seen.entry(base.clone()).or_default();
            found.insert(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
            *count += 1;
        }
        let mut rest = line;
        while let Some(at) = rest.find("<a id=\"") {
            let id = &rest[at + 7..];
            let end = id.find('"').unwrap_or(id.len());
            found.insert(id[..end].to_owned());
            rest = &id[end..];
        }
    }
    found
}

/// The destinations of a line's links and images, `[text](dest)`.
fn links(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let dest = &rest[at + 2..];
        let end = dest.find(')').unwrap_or(dest.len());
        let dest = dest[..end].split_whitespace().next().unwrap_or("");
        found.push(dest.trim_matches(['<', '>']).to_owned());
        rest = &rest[at + 2..];
    }
    found
}

/// Checks that `target` (a path from `base`'s directory, with an optional `#anchor`) names a file and a heading
/// of it that exist; returns what is wrong.
fn resolve(base: &Path, target: &str) -> Result<(), String> {
    let (path, anchor) = target.split_once('#').map_or((target, None), |(p, a)| (p, Some(a)));
    let file = if path.is_empty() { base.to_owned() } else { base.parent().unwrap().join(path) };
    if !file.exists() {
        return Err(format!("{} does not exist", file.display()));
    }
    match anchor {
        Some(anchor) if file.extension().is_some_and(|e| e == "md") => {
            let text = fs::read_to_string(&file).unwrap();
            if anchors(&text).contains(anchor) {
                Ok(())
            } else {
                Err(format!("{} has no heading with the anchor #{anchor}", file.display()))
            }
        }
        _ => Ok(()),
    }
}

#[test]
fn headings_make_the_anchors_github_and_mdbook_make() {
    assert_eq!(slug("The test suite"), "the-test-suite");
    assert_eq!(slug("`elect serve` and its HTTP API"), "elect-serve-and-its-http-api");
    assert_eq!(slug("a4-prime"), "a4-prime");
    assert_eq!(slug("Measuring failover: `elect cluster`"), "measuring-failover-elect-cluster");
    assert_eq!(slug("[Bully](bully.md), textbook"), "bully-textbook");
    let text = "# A\n## B\n```sh\n# not a heading\n```\n## B\n<a id=\"s000\"></a>\n";
    assert_eq!(anchors(text), ["a", "b", "b-1", "s000"].map(String::from).into());
}

#[test]
fn every_relative_link_and_anchor_of_the_markdown_files_resolves() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in prose(&text) {
            for dest in links(line) {
                if dest.is_empty() || dest.contains("://") || dest.starts_with("mailto:") {
                    continue;
                }
                if let Err(e) = resolve(&file, &dest) {
                    broken.push(format!("{}:{n}: ({dest}) {e}", file.strip_prefix(root()).unwrap().display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_citation_the_tool_prints_names_a_heading_of_the_book() {
    let readme = root().join("README.md");
    for &property in elect_core::Property::all() {
        let cite = property.source();
        assert!(cite.starts_with("docs/"), "{property} cites {cite}, not a section of the book");
        resolve(&readme, cite).unwrap_or_else(|e| panic!("{property} cites {cite}: {e}"));
    }
    // Any other citation in the code: a string naming a page of the book, with or without its anchor.
    let mut broken = Vec::new();
    for krate in ["core", "algos", "scenario", "sim", "check", "net", "viz", "cli"] {
        for file in rust_files(&root().join("crates").join(krate).join("src")) {
            let text = fs::read_to_string(&file).unwrap();
            let name = file.strip_prefix(root()).unwrap().display().to_string();
            for (n, line) in text.lines().enumerate() {
                // A specification the project was built from, which is not in the repository (spelt apart here so
                // that this file does not name it either).
                let outside = concat!("ALGORITHMS", ".md");
                assert!(!line.contains(outside), "{name}:{}: cites {outside}, which is not in the repository", n + 1);
                let mut rest = line;
                while let Some(at) = rest.find("docs/") {
                    let cite: String =
                        rest[at..].chars().take_while(|c| c.is_alphanumeric() || "/._-#".contains(*c)).collect();
                    rest = &rest[at + 5..];
                    let cite = cite.trim_end_matches('.');
                    // A bare `page.md#` is a prefix the code completes, not a citation.
                    if cite.contains(".md") && !cite.ends_with('#') {
                        if let Err(e) = resolve(&readme, cite) {
                            broken.push(format!("{name}:{}: {cite}: {e}", n + 1));
                        }
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "citations that name no section of the book:\n{}", broken.join("\n"));
}

/// The README is the front door: what elect is, how to run it, and links into the book.
const README_LINES: usize = 150;

#[test]
fn the_readme_stays_within_its_line_budget() {
    let lines = fs::read_to_string(root().join("README.md")).unwrap().lines().count();
    assert!(
        lines <= README_LINES,
        "README.md has {lines} lines, more than {README_LINES}: move the detail into the book"
    );
}

#[test]
fn every_algorithm_has_its_reference_chapter_in_the_book() {
    let summary = fs::read_to_string(root().join("docs/SUMMARY.md")).unwrap();
    for info in elect_algos::registry::all() {
        let chapter = format!("reference/algorithms/{}.md", info.name);
        assert!(root().join("docs").join(&chapter).is_file(), "{} has no chapter docs/{chapter}", info.name);
        assert!(summary.contains(&format!("({chapter})")), "docs/{chapter} is not in docs/SUMMARY.md");
    }
}

#[test]
fn every_code_block_of_the_readme_and_the_book_says_its_language() {
    // trycmd runs a block without an info string as an example, so a bare ``` must be ```text, ```sh, ...
    let mut bare = Vec::new();
    for file in markdown_files() {
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        if name != "README.md" && !name.starts_with("docs/") {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        let mut open = false;
        for (n, line) in text.lines().enumerate() {
            if let Some(info) = line.trim_start().strip_prefix("```") {
                if !open && info.trim().is_empty() {
                    bare.push(format!("{name}:{}", n + 1));
                }
                open = !open;
            }
        }
    }
    assert!(bare.is_empty(), "code blocks without a language (```text, ```sh, ```console, ...):\n{}", bare.join("\n"));
}

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

/// The most lines of code a source file has (those before its test module) and the most lines a function has,
/// unless a comment says why it is longer: `// Long:` and the reason, among the file's first lines for a file, in
/// the comments right above a function for a function.
const FILE_BUDGET: usize = 800;
const FN_BUDGET: usize = 80;
const LONG: &str = "// Long:";

/// Every Rust file of the workspace's crates and examples: sources, tests and benchmarks.
fn workspace_rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for parent in ["crates", "examples"] {
        for member in fs::read_dir(root().join(parent)).unwrap() {
            let member = member.unwrap().path();
            for part in ["src", "tests", "benches"] {
                if member.join(part).is_dir() {
                    files.extend(rust_files(&member.join(part)));
                }
            }
        }
    }
    files
}

/// Each line's change in brace depth, and whether it holds a `;` or a `{`, outside strings, characters and
/// comments (raw strings and strings that span lines included).
fn braces(text: &str) -> Vec<(i64, bool, bool)> {
    #[derive(Clone, Copy, PartialEq)]
    enum In {
        Code,
        Str,
        Raw(usize),
        Block,
    }
    let mut state = In::Code;
    let mut out = Vec::new();
    for line in text.lines() {
        let (mut depth, mut semi, mut open) = (0, false, false);
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match state {
                In::Str => match b[i] {
                    b'\\' => i += 1,
                    b'"' => state = In::Code,
                    _ => {}
                },
                In::Raw(hashes) => {
                    if b[i] == b'"' && b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
                        state = In::Code;
                        i += hashes;
                    }
                }
                In::Block => {
                    if b[i..].starts_with(b"*/") {
                        state = In::Code;
                        i += 1;
                    }
                }
                In::Code => {
                    if b[i..].starts_with(b"//") {
                        break;
                    } else if b[i..].starts_with(b"/*") {
                        state = In::Block;
                    } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
                        let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                        if b.get(i + 1 + hashes) == Some(&b'"') {
                            state = In::Raw(hashes);
                            i += 1 + hashes;
                        }
                    } else if b[i] == b'"' {
                        state = In::Str;
                    } else if b[i] == b'\'' {
                        // A character literal ('{', '\''), not a lifetime ('a).
                        if b.get(i + 1) == Some(&b'\\') {
                            i += 2;
                            while i < b.len() && b[i] != b'\'' {
                                i += 1;
                            }
                        } else if b.get(i + 2) == Some(&b'\'') {
                            i += 2;
                        }
                    } else if b[i] == b'{' {
                        depth += 1;
                        open = true;
                    } else if b[i] == b'}' {
                        depth -= 1;
                    } else if b[i] == b';' {
                        semi = true;
                    }
                }
            }
            i += 1;
        }
        out.push((depth, semi, open));
    }
    out
}

/// The name of the function a line declares, if it declares one.
fn declares(line: &str) -> Option<&str> {
    let mut words = code(line).split_whitespace().peekable();
    while let Some(word) = words.next() {
        match word {
            "pub" | "pub(crate)" | "pub(super)" | "const" | "async" | "unsafe" | "extern" | "\"C\"" | "default" => {}
            "fn" => return words.next().map(|w| w.split(['(', '<']).next().unwrap_or(w)),
            _ => return None,
        }
    }
    None
}

/// The functions of `text` longer than the budget with no reason given: (line, name, lines).
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let depths = braces(text);
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = declares(line) else { continue };
        let (mut depth, mut end, mut body) = (0, None, false);
        for (j, &(d, semi, open)) in depths.iter().enumerate().skip(i) {
            if !body && semi && !open {
                break;
            }
            body |= open;
            depth += d;
            if body && depth <= 0 {
                end = Some(j);
                break;
            }
        }
        let Some(end) = end else { continue };
        let length = end - i + 1;
        let above = lines[..i].iter().rev().take_while(|l| {
            let l = l.trim_start();
            l.starts_with("//") || l.starts_with("#[")
        });
        if length > FN_BUDGET && !above.into_iter().any(|l| l.contains(LONG)) {
            found.push((i + 1, name.to_owned(), length));
        }
    }
    found
}

/// The lines of code of a file: those before its test module.
fn code_length(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines.windows(2).position(|w| w[0] == "#[cfg(test)]" && w[1].starts_with("mod ")).unwrap_or(lines.len())
}

#[test]
fn the_size_budget_finds_long_functions_and_their_reasons() {
    let body = "    let x = '{';\n    let s = \"}}\";\n    let r = r#\"{\"a\": 1}\"#;\n".repeat(30);
    let long = format!("fn long() {{\n{body}}}\n");
    assert_eq!(long_functions(&long), [(1, "long".to_owned(), 92)]);
    assert!(long_functions(&format!("// Long: a table of cases.\n{long}")).is_empty());
    assert!(
        long_functions(&format!("fn short() {{\n}}\ntrait T {{\n    fn f(&self);\n}}\n{}", "\n".repeat(90))).is_empty()
    );
    assert_eq!(code_length("a\nb\n#[cfg(test)]\nmod tests {\n}\n"), 2);
}

#[test]
fn no_file_or_function_is_over_the_size_budget_without_a_reason() {
    let mut found = Vec::new();
    for file in workspace_rust_files() {
        let text = fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display();
        let length = code_length(&text);
        if length > FILE_BUDGET && !text.lines().take(20).any(|l| l.contains(LONG)) {
            found.push(format!("{name}: {length} lines of code (the budget is {FILE_BUDGET})"));
        }
        for (line, function, length) in long_functions(&text) {
            found.push(format!("{name}:{line}: fn {function} has {length} lines (the budget is {FN_BUDGET})"));
        }
    }
    assert!(
        found.is_empty(),
        "over the size budget, with no `{LONG} reason` comment (split it, or say why it is long):\n{}",
        found.join("\n")
    );
}
