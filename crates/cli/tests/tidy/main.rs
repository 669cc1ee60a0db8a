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

mod book;
mod imports;
mod reference;
mod size;

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
const LIBRARIES: [&str; 8] = ["core", "algos", "scenario", "sim", "check", "viz", "net", "grade"];

/// The drivers' and the pictures' crates, whose results repeat for one input, and the crates they are built on.
const DETERMINISTIC: [&str; 7] = ["core", "algos", "scenario", "sim", "check", "viz", "grade"];

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
const GRAPH: [(&str, &[&str]); 12] = [
    ("crates/core", &[]),
    ("crates/algos", &["elect-core"]),
    ("crates/scenario", &["elect-algos", "elect-core"]),
    ("crates/sim", &["elect-algos", "elect-core", "elect-scenario"]),
    ("crates/check", &["elect-algos", "elect-core", "elect-scenario"]),
    ("crates/viz", &["elect-algos", "elect-core", "elect-scenario"]),
    ("crates/net", &["elect-algos", "elect-core"]),
    ("crates/lab", &["elect-algos", "elect-core", "elect-net"]),
    ("crates/grade", &["elect-algos", "elect-check", "elect-core", "elect-scenario", "elect-sim"]),
    (
        "crates/cli",
        &[
            "elect-algos",
            "elect-check",
            "elect-core",
            "elect-grade",
            "elect-lab",
            "elect-net",
            "elect-scenario",
            "elect-sim",
            "elect-viz",
        ],
    ),
    ("examples/fencing-store", &["elect-core", "elect-net"]),
    ("examples/rust-program", &["elect"]),
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
        for dep in ["rand", "rand_chacha", "tokio", "postcard"] {
            assert!(!crate_dependencies(krate).contains(dep), "{dep} in the dependencies of {krate}, a sans-IO crate");
        }
    }
    // JSON is the process protocol's encoding (pure parsing and writing, no I/O): in algos only the protocol's
    // module speaks it; every other algorithm's messages are typed, and the network's wire format is the runtime's.
    for (file, n, code) in code_lines("algos") {
        let protocol = file.starts_with("crates/algos/src/program");
        assert!(protocol || !code.contains("serde_json"), "{file}:{n}: JSON outside the process protocol: {code}");
    }
    assert!(!crate_dependencies("core").contains("serde_json"), "serde_json in the dependencies of core");
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
    let mut dirs: Vec<PathBuf> = ["core", "algos", "scenario", "sim", "check", "viz", "net", "grade", "cli"]
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
const HASHED: [(&str, &[&str]); 6] = [
    ("crates/scenario/src/draw.rs", &["linked"]),
    ("crates/check/src/model.rs", &["walks"]),
    ("crates/check/src/search.rs", &["seen"]),
    ("crates/check/src/search/tests.rs", &["seen", "full"]),
    ("crates/check/src/commute.rs", &["known_states", "known_msgs"]),
    ("crates/check/src/reduce.rs", &["seen"]),
];

/// The loops over a hashed collection whose result does not depend on the order (each entry written to the slot
/// its value names, say): none today, since the visited set keeps its fingerprints in a vector by state number.
const ORDER_FREE: [(&str, &str); 0] = [];

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
