//! The process protocol's JSON Schema, which its reference publishes (`docs/reference/protocol.schema.json`),
//! against the real thing: every request elect sends and every answer the Python Chang-Roberts gives, in a
//! simulation and in a check, fits it; and answers elect refuses, it refuses too.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("docs/reference/protocol.schema.json")).unwrap();
    jsonschema::draft202012::new(&serde_json::from_str(&text).unwrap()).expect("the schema compiles")
}

/// The lines exchanged with the Python Chang-Roberts while elect runs `args`.
fn traffic(args: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lines");
    let program =
        format!("exec:python3 crates/cli/tests/programs/logging.py {} examples/python/chang_roberts.py", log.display());
    let (command, rest) = args.split_first().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_elect"))
        .current_dir(root())
        .args([command, "-a", &program])
        .args(rest)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&log).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn every_request_and_answer_of_a_run_and_of_a_check_fits_the_schema() {
    let schema = schema();
    let mut lines = traffic(&["sim", "-n", "6", "--ids", "random"]);
    lines.extend(traffic(&["check", "-n", "3", "--network", "unordered", "--reduction", "none"]));
    let types: std::collections::BTreeSet<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(types, ["init", "init_ok", "step", "step_ok"].into(), "every kind of line was seen");
    let events: std::collections::BTreeSet<&str> = lines.iter().filter_map(|l| l["event"]["type"].as_str()).collect();
    assert_eq!(events, ["command", "message", "start"].into());
    for line in &lines {
        let errors: Vec<String> = schema.iter_errors(line).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{line}: {errors:?}");
    }
}

#[test]
fn answers_elect_refuses_the_schema_refuses() {
    let schema = schema();
    let ok = json!({
        "type": "step_ok", "in_reply_to": 3, "state": { "role": "relay" },
        "send": [{ "dest": 0, "body": { "type": "token", "id": 7 } }],
        "set_timers": [{ "timer": "wake", "after": 2.5 }], "cancel_timers": ["wake"], "persist": { "seen": 7 },
        "status": { "state": "election", "leader": null, "epoch": 2 }, "elected": false, "rule": "relay",
        "view": { "role": "relay", "values": [["id", 7]] },
    });
    assert!(schema.is_valid(&ok), "{:?}", schema.iter_errors(&ok).map(|e| e.to_string()).collect::<Vec<_>>());
    let broken = |f: &dyn Fn(&mut Value)| {
        let mut v = ok.clone();
        f(&mut v);
        v
    };
    for (what, answer) in [
        ("an unknown field", broken(&|v| v["colour"] = json!("red"))),
        ("no in_reply_to", broken(&|v| drop(v.as_object_mut().unwrap().remove("in_reply_to")))),
        ("no status", broken(&|v| drop(v.as_object_mut().unwrap().remove("status")))),
        ("a status of its own", broken(&|v| v["status"]["state"] = json!("leading"))),
        ("a body without a type", broken(&|v| v["send"][0]["body"] = json!({ "id": 7 }))),
        ("a negative port", broken(&|v| v["send"][0]["dest"] = json!(-1))),
        ("a timer in the past", broken(&|v| v["set_timers"][0]["after"] = json!(-1))),
        ("a view of 17 values", broken(&|v| v["view"]["values"] = json!(vec![json!(["x", 1]); 17]))),
    ] {
        assert!(!schema.is_valid(&answer), "{what}: {answer}");
    }
}
