//! Algorithms written as programs (`--algorithm exec:PROGRAM`), end to end: the Python Chang-Roberts of
//! `examples/python` gives what the built-in one gives, in runs and in every interleaving; grading tells the right
//! program from the three wrong ones with counterexamples; and a program that misbehaves in any of the ways a
//! program can is stopped with an error that names the step, never a hang, and its process is reaped.
//!
//! The programs need python3 (scripts/install-python installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn elect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elect")).current_dir(root()).args(args).output().expect("elect runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CHANG_ROBERTS: &str = "exec:examples/python/chang_roberts.py";

fn sim_json(algorithm: &str, seed: u64) -> Value {
    let seed = seed.to_string();
    let o = elect(&["sim", "-a", algorithm, "-n", "8", "--ids", "random", "--seed", &seed, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{algorithm} seed {seed}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_python_chang_roberts_counts_and_elects_as_the_built_in_one_on_twenty_arrangements() {
    for seed in 1..=20 {
        let (mine, built_in) = (sim_json(CHANG_ROBERTS, seed), sim_json("chang-roberts", seed));
        for key in ["leader", "agreed", "elected_at", "delivered", "events"] {
            assert_eq!(mine[key], built_in[key], "seed {seed}: {key}");
        }
        assert_eq!(mine["messages"], built_in["messages"], "seed {seed}: the total and each kind's count");
        assert_eq!(mine["properties"]["violations"], Value::Array(vec![]), "seed {seed}");
        assert_eq!(mine["properties"]["checked"], built_in["properties"]["checked"], "seed {seed}");
    }
}

fn states(algorithm: &str, extra: &[&str]) -> (u64, u64, String) {
    let mut args = vec!["check", "-a", algorithm, "-n", "5", "--ids", "random", "--json"];
    args.extend_from_slice(extra);
    let o = elect(&args);
    assert_eq!(o.status.code(), Some(0), "{algorithm} {extra:?}: {}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["states"].as_u64().unwrap(), v["transitions"].as_u64().unwrap(), v["verdicts"].to_string())
}

#[test]
fn the_python_chang_roberts_explores_the_same_states_as_the_built_in_one_at_five() {
    for extra in [&["--reduction", "none", "--network", "unordered"][..], &["--reduction", "none"], &[]] {
        let (mine, built_in) = (states(CHANG_ROBERTS, extra), states("chang-roberts", extra));
        assert_eq!(mine, built_in, "{extra:?}");
    }
    // Without the reduction, on links that reorder: every interleaving, as many states as the built-in's.
    assert_eq!(states(CHANG_ROBERTS, &["--reduction", "none", "--network", "unordered"]).0, 352);
}

fn grade(program: &str, format: &str) -> Output {
    let assignment = "examples/python/assignment/chang-roberts.toml";
    elect(&["grade", assignment, "--program", program, "--format", format])
}

/// The example assignment at sizes that keep a wrong program's grading short (forwarding every token costs 2n²
/// messages, each a step of the program).
fn grade_small(program: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("examples/python/assignment/chang-roberts.toml")).unwrap();
    let text = text.replace("sizes = [8, 64, 256]", "sizes = [8, 32]").replace("sizes = [3, 4, 5]", "sizes = [3, 4]");
    assert!(text.contains("sizes = [8, 32]") && text.contains("sizes = [3, 4]"), "{text}");
    let assignment = dir.path().join("small.toml");
    std::fs::write(&assignment, text).unwrap();
    elect(&["grade", assignment.to_str().unwrap(), "--program", program, "--format", "json"])
}

#[test]
fn grading_passes_the_right_program_and_catches_each_wrong_one_with_a_counterexample() {
    let o = grade(CHANG_ROBERTS, "json");
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["passed"], true);
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 18, "3 sizes × 5 arrangements simulated, 3 sizes checked");
    assert!(cases.iter().all(|c| c["passed"] == true));

    // Each wrong program: the failure it is caught by, and where the checker finds it, its path.
    // A property's failure replays as a violation (exit 1); a bound's, as a run that sends too many.
    for (wrong, problem, by_checker) in [
        ("forwards_smaller", "uniqueness violated", true),
        ("never_announces", "liveness violated", true),
        ("announces_twice", "16 elected messages; the bound n allows 8 at n=8", false),
    ] {
        let program = format!("exec:examples/python/wrong/{wrong}.py");
        let o = grade_small(&program);
        assert_eq!(o.status.code(), Some(1), "{wrong}: {}", text(&o.stderr));
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        let failed: Vec<&Value> = report["cases"].as_array().unwrap().iter().filter(|c| c["passed"] == false).collect();
        assert!(!failed.is_empty(), "{wrong}");
        let first = failed[0];
        assert!(first["problems"][0].as_str().unwrap().contains(problem), "{wrong}: {first}");
        // The replay command fails the same way.
        let command = first["command"].as_str().unwrap();
        let args: Vec<&str> = command.split(' ').skip(1).collect();
        let replay = elect(&args);
        let expected = if by_checker { 1 } else { 0 };
        assert_eq!(replay.status.code(), Some(expected), "{wrong}: {command}: {}", text(&replay.stderr));
        if !by_checker {
            assert!(text(&replay.stdout).contains(", elected 16)"), "{wrong}: {}", text(&replay.stdout));
        }
        if by_checker {
            let checked = failed.iter().find(|c| c["name"].as_str().unwrap().starts_with("check")).expect(wrong);
            let path = checked["counterexample"].as_array().unwrap();
            assert!(!path.is_empty() && path[0].as_str().unwrap().contains(" receives "), "{wrong}: {checked}");
        }
    }
}

#[test]
fn a_grading_report_in_junit_names_every_case_and_each_failure_with_its_replay() {
    let o = grade("exec:examples/python/wrong/never_announces.py", "junit");
    assert_eq!(o.status.code(), Some(1));
    let xml = text(&o.stdout);
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"elect grade\" tests=\"18\"")
    );
    assert_eq!(xml.matches("<testcase ").count(), 18);
    assert_eq!(xml.matches("<failure ").count(), xml.matches("</failure>").count());
    assert!(xml.contains("replay with: elect check --algorithm exec:examples/python/wrong/never_announces.py"));
    assert!(xml.contains("{&quot;id&quot;:"), "message bodies are escaped: {xml}");
}

/// A bad program run as the algorithm of a small simulation: exit 2 and what elect said.
fn bad(program: &str, extra: &[&str]) -> String {
    let path = format!("exec:crates/cli/tests/programs/{program}.py");
    let mut args = vec!["sim", "-a", &path, "-n", "3", "--program-timeout", "2000"];
    args.extend_from_slice(extra);
    let started = std::time::Instant::now();
    let o = elect(&args);
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "{program} took {:?}", started.elapsed());
    assert_eq!(o.status.code(), Some(2), "{program}: {}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(text(&o.stdout), "", "{program}: no report of a run that stopped");
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{program}: {err}");
    err
}

#[test]
fn a_program_that_misbehaves_is_stopped_with_the_step_the_process_and_the_event() {
    let start = r#"process 1, given {"durable":null,"type":"start"}"#;
    for (program, says) in [
        ("hangs", format!("failed at step 1: {start}: it did not answer within 2000 ms (--program-timeout)")),
        ("garbage", format!("failed at step 1: {start}: its answer is not step_ok")),
        ("huge_line", format!("failed at step 1: {start}: it wrote a line longer than 1048576 bytes")),
        ("out_of_order", format!("failed at step 1: {start}: it answered step 0 when asked step 1")),
        ("not_deterministic", format!("failed at step 1: {start}: it is not deterministic: asked this step twice")),
    ] {
        let err = bad(program, &[]);
        assert!(
            err.contains(&format!("error: exec:crates/cli/tests/programs/{program}.py {says}")),
            "{program}: {err}"
        );
    }
    // Later steps name the steps before them.
    let err = bad("crashes", &[]);
    // Its fifth request is the third step, asked twice (steps are asked twice at first).
    assert!(err.contains(r#"failed at step 3: process 3, given {"durable":null,"type":"start"}"#), "{err}");
    assert!(err.contains("it exited with status 3 instead of answering"), "{err}");
    assert!(err.contains("the steps before it:\n  step 1: process 1, given {\"durable\":null,\"type\":\"start\"}\n  step 2: process 2"), "{err}");
    let err = bad("bad_port", &[]);
    assert!(
        err.contains(r#"given {"command":"initiate","type":"command"}: it sends to port 7; its ports are 0 to 1"#),
        "{err}"
    );
    let err = bad("bad_init", &[]);
    assert!(err.contains("bad_init.py: it speaks protocol 2; elect speaks 1"), "{err}");
    // Limits are flags, checked.
    let err = bad("hangs", &["--program-max-line", "12"]);
    assert!(err.contains("--program-max-line 12: from 1K to 256M"), "{err}");
    let o = elect(&["sim", "-a", "exec:crates/cli/tests/programs/garbage.py", "-n", "3", "--program-timeout", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--program-timeout 0: from 1 to 3600000 ms"), "{}", text(&o.stderr));
}

#[test]
fn a_program_that_does_not_exist_or_cannot_run_is_named() {
    let err = bad("no_such_program", &[]);
    assert!(err.contains("cannot start crates/cli/tests/programs/no_such_program.py: No such file"), "{err}");
    let o = elect(&["sim", "-a", "exec:", "-n", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("exec: needs the path of a program to run"), "{}", text(&o.stderr));
}

/// The processes whose command line names `needle`, other than this test's own.
fn running(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let cmdline = text(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && !cmdline.contains("cargo") && !cmdline.contains("/deps/program-") {
            found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[test]
fn a_program_that_hangs_is_killed_and_reaped() {
    // A copy of its own, so that no other test's program is counted.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("hangs_until_reaped.py");
    std::fs::copy(root().join("crates/cli/tests/programs/hangs.py"), &copy).unwrap();
    let algorithm = format!("exec:python3 {}", copy.display());
    let o = elect(&["sim", "-a", &algorithm, "-n", "3", "--program-timeout", "300"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("it did not answer within 300 ms"), "{}", text(&o.stderr));
    // elect waited for it, so neither it nor a zombie of it is left.
    assert_eq!(running("hangs_until_reaped.py"), Vec::<String>::new());
}

/// The latest `leader` each member printed, by id, until `done` holds or 15 s pass.
fn watch(
    rx: &std::sync::mpsc::Receiver<(usize, Value)>,
    latest: &mut [Option<u64>; 3],
    done: impl Fn(&[Option<u64>; 3]) -> bool,
) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !done(latest) {
        let Ok((id, v)) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) else {
            return false;
        };
        latest[id - 1] = v["leader"].as_u64();
    }
    true
}

#[test]
fn three_members_running_the_python_chang_roberts_elect_and_fail_over() {
    use std::io::{BufRead, BufReader};
    let ports: Vec<u16> =
        (0..3).map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut children = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let id = i + 1;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_elect"));
        cmd.current_dir(root()).args(["node", "--id", &id.to_string(), "--listen", &format!("127.0.0.1:{port}")]);
        cmd.args(["--algorithm", CHANG_ROBERTS, "--data-dir", dir.path().join(id.to_string()).to_str().unwrap()]);
        for (j, p) in ports.iter().enumerate().filter(|&(j, _)| j != i) {
            cmd.args(["--peer", &format!("{}=127.0.0.1:{p}", j + 1)]);
        }
        let mut child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::null()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send((id, serde_json::from_str::<Value>(&line).unwrap()));
            }
        });
        children.push(child);
    }
    let mut latest = [None; 3];
    let elected = watch(&rx, &mut latest, |l| l.iter().all(|&l| l == Some(3)));
    // The leader's machine fails: its member and the program it started.
    let _ = children[2].kill();
    let _ = children[2].wait();
    let failed_over = elected && watch(&rx, &mut latest, |l| l[..2].iter().all(|&l| l == Some(2)));
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(elected, "the three did not agree on 3: {latest:?}");
    assert!(failed_over, "1 and 2 did not agree on 2 after 3 failed: {latest:?}");
}

#[test]
fn a_sweep_holds_a_program_to_the_bound_the_user_states() {
    let sweep = |program: &str| {
        elect(&["sweep", "--algorithms", program, "-n", "8,16", "--ids", "descending", "--bound", "n*(n+1)/2 + n"])
    };
    let o = sweep(CHANG_ROBERTS);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    // Ids descending: the worst case, n(n+1)/2 tokens and n announcements, exactly the bound.
    assert!(csv.contains(",8,1,44,36,8,") && csv.contains(",n*(n+1)/2 + n,44,44,"), "{csv}");
    assert!(csv.contains(",16,1,152,136,16,") && csv.contains(",n*(n+1)/2 + n,152,152,"), "{csv}");
    let o = sweep("exec:examples/python/wrong/announces_twice.py");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("2 of 2 runs violated a property or the bound"), "{}", text(&o.stderr));
}

#[test]
fn a_program_slow_to_start_has_time_for_its_first_answer_and_the_timeout_for_each_step() {
    let slow = "exec:crates/cli/tests/programs/slow_start.py";
    let o = elect(&["sim", "-a", slow, "-n", "4", "--program-timeout", "300"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("leader"), "{}", text(&o.stdout));
}

#[test]
fn a_file_starts_no_program_the_command_line_does_not_name() {
    // A scenario file and a saved counterexample may name a program as their algorithm; reading one must not run
    // it. A program that would leave a mark if it ran, named by a scenario file: refused, and no mark.
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("ran");
    let program = format!("exec:/usr/bin/touch {}", mark.display());
    let scenario = dir.path().join("s.toml");
    std::fs::write(&scenario, format!("algorithm = {:?}\nnodes = 3\n", program)).unwrap();
    let scenario = scenario.display().to_string();
    for command in ["sim", "check"] {
        let o = elect(&[command, "--scenario", &scenario]);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(&format!("give --allow-program {program}")), "{}", text(&o.stderr));
        assert!(!mark.exists(), "elect {command} ran the program a scenario file names");
    }
    // An assignment whose reference is such a program: refused the same way. One with no cases: refused too.
    let assignment = dir.path().join("a.toml");
    std::fs::write(&assignment, format!("title = \"t\"\nreference = {program:?}\n[check]\nsizes = [3]\n")).unwrap();
    let o = elect(&["grade", assignment.to_str().unwrap(), "--program", "chang-roberts"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("give --allow-program"), "{}", text(&o.stderr));
    assert!(!mark.exists(), "elect grade ran the program an assignment names");
    std::fs::write(&assignment, "title = \"t\"\nreference = \"chang-roberts\"\n").unwrap();
    let o = elect(&["grade", assignment.to_str().unwrap(), "--program", "chang-roberts"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("grades nothing"), "{}", text(&o.stderr));
    // A counterexample of a wrong program, saved: its replay needs the program named, and then runs as before.
    let saved = dir.path().join("cx.json").display().to_string();
    let wrong = "exec:examples/python/wrong/forwards_smaller.py";
    let o = elect(&["check", "-a", wrong, "-n", "3", "--save", &saved]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let o = elect(&["sim", "--replay", &saved]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains(&format!("give --allow-program {wrong}")), "{}", text(&o.stderr));
    let o = elect(&["sim", "--replay", &saved, "--allow-program", wrong]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("uniqueness"), "{}", text(&o.stdout));
    // Edited to name another program, the file is refused the same way.
    let forged = std::fs::read_to_string(&saved).unwrap().replace(wrong, &program);
    std::fs::write(&saved, forged).unwrap();
    let o = elect(&["sim", "--replay", &saved, "--allow-program", wrong]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(!mark.exists(), "elect sim --replay ran the program a counterexample names");
}
