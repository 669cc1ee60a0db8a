//! Architecture invariants, enforced: `core` and `algos` do no I/O, read no clock, hold no random generator and
//! spawn nothing; dependencies point one way.

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
    files
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
        "tokio",
        "println!",
        "eprintln!",
        "print!(",
    ];
    for krate in ["core", "algos"] {
        for file in rust_files(&root().join("crates").join(krate).join("src")) {
            let text = fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for word in banned {
                    assert!(!code.contains(word), "{}:{}: `{word}` in a sans-IO crate: {line}", file.display(), n + 1);
                }
            }
        }
    }
}

#[test]
fn dependencies_point_one_way() {
    let manifest = |krate: &str| fs::read_to_string(root().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let deps = |krate: &str| {
        let text = manifest(krate);
        text.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap().to_owned()
    };
    assert!(!deps("core").contains("elect-"), "core depends on no other elect crate");
    let algos = deps("algos");
    assert!(algos.contains("elect-core") && !algos.contains("elect-sim"), "algos depends on core only");
    for io in ["rand", "tokio", "serde_json", "postcard"] {
        assert!(!deps("core").contains(io) && !algos.contains(io), "{io} in a sans-IO crate's dependencies");
    }
    assert!(!deps("sim").contains("elect-cli") && !deps("sim").contains("clap"), "only the CLI knows clap");
    // The checker builds on the simulator's scenarios; the simulator knows nothing of the checker.
    assert!(!deps("sim").contains("elect-check"), "sim does not depend on check");
    assert!(!deps("check").contains("clap") && !deps("check").contains("elect-viz"), "check is a library below viz");
    // The runtime builds its own mesh of members: it is a sibling of the simulator and the checker.
    let net = deps("net");
    assert!(
        net.contains("elect-algos") && !net.contains("elect-sim") && !net.contains("elect-check"),
        "net sits on algos"
    );
    assert!(!net.contains("clap") && !net.contains("anyhow"), "net is a library");
    for krate in ["sim", "check"] {
        assert!(!deps(krate).contains("elect-net"), "{krate} does not depend on net");
    }
}
