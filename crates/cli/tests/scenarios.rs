//! The scenario files: every one in `scenarios/` ends as it documents, and bad files are refused with the file,
//! the line and the problem.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn elect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elect")).args(args).output().expect("elect runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn shipped() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_scenario_ends_as_its_file_documents() {
    let files = shipped();
    let names: Vec<String> = files.iter().map(|f| f.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    let required =
        ["bully-figure", "van-steen-figure", "stoller", "bully-candidate-crash", "bully-inaccurate-detector"];
    for required in required.into_iter().chain(["garcia-molina-typical", "non-transitive"]) {
        assert!(names.iter().any(|n| n == required), "scenarios/{required}.toml is missing: {names:?}");
    }
    for file in &files {
        let contents = std::fs::read_to_string(file).unwrap();
        assert!(contents.contains("[expect]"), "{} documents no ending", file.display());
        let o = elect(&["sim", "--scenario", file.to_str().unwrap()]);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{}:\n{out}{err}", file.display());
        assert!(out.contains("scenario    ended as expected"), "{}:\n{out}", file.display());
        assert!(!out.contains(": NO"), "{}:\n{out}", file.display());
    }
}

#[test]
fn stollers_scenario_violates_assertion_4_and_keeps_4_prime() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/stoller.toml");
    let o = elect(&["sim", "--scenario", file.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let violated: Vec<&str> =
        v["properties"]["violations"].as_array().unwrap().iter().map(|v| v["property"].as_str().unwrap()).collect();
    assert_eq!(violated, ["a4"]);
    assert_eq!(v["properties"]["checked"]["a4-prime"], "at-end");
    assert_eq!(v["properties"]["skipped"], serde_json::json!([]));
}

#[test]
fn a_scenario_that_ends_otherwise_exits_1_and_says_what_differed() {
    let dir = tempdir();
    let file = dir.join("wrong.toml");
    std::fs::write(&file, "algorithm = \"bully\"\nnodes = 5\n[expect]\nleader = 4\nmessages = 24\n").unwrap();
    let o = elect(&["sim", "--scenario", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.contains("leader 4: NO, got 5"), "{out}");
    assert!(out.contains("messages 24: yes"), "{out}");
    assert!(err.contains("expected leader 4, got 5"), "{err}");
    assert!(err.contains("reproduce with: elect sim --algorithm bully"), "{err}");
}

#[test]
fn the_seed_of_a_scenario_can_be_changed_on_the_command_line() {
    let dir = tempdir();
    let file = dir.join("seeded.toml");
    std::fs::write(&file, "algorithm = \"chang-roberts\"\nnodes = 8\nids = \"random\"\nseed = 4\n").unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["sim", "--scenario", file.to_str().unwrap(), "--json"];
        args.extend(extra);
        let o = elect(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    assert_eq!(run(&[])["seed"], 4);
    assert_eq!(run(&["--seed", "9"])["seed"], 9);
    let o = elect(&["sim", "--scenario", file.to_str().unwrap(), "--nodes", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr).lines().count(), 1, "{}", text(&o.stderr));
}

fn tempdir() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("elect-scenarios-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn bad_scenario_files_exit_2_naming_the_file_the_line_and_the_problem() {
    let dir = tempdir();
    let cases = [
        ("unknown-key.toml", "algorithm = \"bully\"\nnodes = 4\nnoodes = 5\n", 3, "noodes"),
        (
            "no-such-node.toml",
            "algorithm = \"bully\"\nnodes = 4\n\n[[fault]]\nat = 2\ncrash = 9\n",
            4,
            "9 is not a node",
        ),
        ("time.toml", "algorithm = \"bully\"\nnodes = 4\n\n[[fault]]\nat = \"later\"\ncrash = 1\n", 5, "a time"),
        ("negative.toml", "algorithm = \"bully\"\nnodes = 4\nuntil = -3\n", 3, "between 0 and"),
        ("syntax.toml", "algorithm = \"bully\"\nnodes = [4\n", 2, ""),
        ("algorithm.toml", "# a comment\nalgorithm = \"bullie\"\nnodes = 4\n", 2, "unknown algorithm 'bullie'"),
        ("expect.toml", "algorithm = \"bully\"\nnodes = 4\n[expect]\nleader = \"four\"\n", 4, "give an id"),
        ("heal.toml", "algorithm = \"bully\"\nnodes = 4\n[[fault]]\nat = 5\ncrash = 1\nheal = 9\n", 3, "heal"),
        ("link.toml", "algorithm = \"lelann\"\nnodes = 5\n[[fault]]\nat = 5\nlink-down = \"1-3\"\n", 3, "no link 1-3"),
    ];
    for (name, contents, line, problem) in cases {
        let file = dir.join(name);
        std::fs::write(&file, contents).unwrap();
        let o = elect(&["sim", "--scenario", file.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line, no backtrace: {err}");
        let prefix = format!("error: {}:{line}: ", file.display());
        assert!(err.starts_with(&prefix), "{name}: expected '{prefix}...', got {err}");
        assert!(err.contains(problem), "{name}: expected '{problem}' in {err}");
    }
    let o = elect(&["sim", "--scenario", dir.join("absent.toml").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("the scenario file") && err.contains("absent.toml: cannot read it"), "{err}");
}

#[test]
fn an_inaccurate_detector_run_from_flags_exits_1_with_the_seed() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/bully-inaccurate-detector.toml");
    let o = elect(&["sim", "--scenario", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reproduce = v["reproduce"].as_str().unwrap().to_owned();
    assert!(reproduce.contains("--delay-bound 0.3"), "{reproduce}");
    let args: Vec<&str> = reproduce.split_whitespace().skip(1).collect();
    let o = elect(&args);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("violation: uniqueness"), "{err}");
    assert!(err.contains("both declared themselves leader"), "{err}");
    assert!(err.contains("seed 1; reproduce with: elect sim --algorithm bully"), "{err}");
}
