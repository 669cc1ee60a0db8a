//! The `elect` binary end to end: output contract, exit statuses, error messages.

use std::process::{Command, Output};

fn elect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elect")).args(args).output().expect("elect runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let o = elect(args);
    let value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code().unwrap(), value)
}

#[test]
fn the_tour_runs_every_algorithm_and_everything_holds() {
    let o = elect(&["tour"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for info in elect_algos::registry::all() {
        let row = out.lines().find(|l| l.starts_with(info.name)).unwrap_or_else(|| panic!("no row for {}", info.name));
        assert!(row.ends_with("held"), "{row}");
        // Every bound held; algorithms that never fall silent (periodic checks) have none.
        assert!(row.contains(" yes ") || info.name == "invitation", "bound held: {row}");
    }
    assert!(out.contains("bully") && out.contains("239"), "W2 on 16 nodes costs 16^2-16-1 = 239:\n{out}");
    // A bound beside the count it is about: Garcia-Molina's counts election RPCs, not the periodic checks.
    let gm: Vec<&str> = out.lines().find(|l| l.starts_with("garcia-molina")).unwrap().split_whitespace().collect();
    assert_eq!(gm[gm.iter().position(|w| *w == "396").unwrap() + 1], "309", "{gm:?}");
    assert!(out.contains("COUNTED: the messages the bound counts"), "{out}");
}

#[test]
fn sim_json_follows_the_contract() {
    let (code, v) = json(&["sim", "--algorithm", "chang-roberts", "--nodes", "8", "--ids", "descending", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["algorithm"], "chang-roberts");
    assert_eq!(v["topology"], "ring");
    assert_eq!(v["nodes"], 8);
    assert_eq!(v["edges"], 8);
    assert_eq!(v["seed"], 1);
    assert_eq!(v["leader"], 8);
    assert_eq!(v["agreed"], true);
    assert_eq!(v["elected_at"], 16);
    assert_eq!(v["messages"], serde_json::json!({"total": 44, "by_kind": {"token": 36, "elected": 8}}));
    assert_eq!(v["bits"], 44 * 16, "a token or an elected message is two bytes on the wire");
    assert_eq!(v["events"], 52);
    assert_eq!(v["properties"]["safety"], "held");
    assert_eq!(v["properties"]["liveness"], "held");
    assert_eq!(v["properties"]["violations"], serde_json::json!([]));
    assert_eq!(
        v["bounds"][0],
        serde_json::json!({"name": "worst case n(n+1)/2 tokens", "value": 36, "measured": 36, "held": true, "kinds": ["token"]})
    );
}

#[test]
fn aliases_are_accepted_and_the_canonical_name_reported() {
    let (_, v) = json(&["sim", "-a", "cr", "-n", "4", "--json"]);
    assert_eq!(v["algorithm"], "chang-roberts");
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["sim", "--algorithm", "paxos", "--nodes", "3"], "unknown algorithm 'paxos'"),
        // Two sources give this name to two algorithms: the error names both, and which to run for each.
        (&["sim", "--algorithm", "lcr", "--nodes", "3"], "run it as lelann; Lynch's LCR is Chang-Roberts"),
        (&["sim", "--algorithm", "bully", "--nodes", "0"], "--nodes must be at least 1"),
        (
            &["sim", "--algorithm", "chang-roberts", "--nodes", "5", "--topology", "star"],
            "runs on a ring topology, not on a star",
        ),
        (&["sim", "--algorithm", "chang-roberts", "--nodes", "3", "--ids", "1,2,x"], "'x' is not a node id"),
        (&["sim", "--algorithm", "chang-roberts", "--nodes", "3", "--ids", "1,2,2"], "duplicate id 2"),
        (&["sim", "--algorithm", "chang-roberts", "--nodes", "3", "--initiators", "9"], "initiator 9 is not a node"),
        (&["sim", "--algorithm", "bully", "--nodes", "3", "--crash", "7@1"], "crashed node 7 is not a node"),
        (&["sim", "--algorithm", "bully", "--nodes", "3", "--param", "variant=s999"], "unknown variant 's999'"),
        (&["sim", "--algorithm", "bully", "--nodes", "3", "--delay", "exp:1"], "unbounded"),
        (&["sim", "--algorithm", "lelann", "--nodes", "3", "--delay", "uniform:5..1"], "the range is empty"),
        (&["sim", "--algorithm", "lelann"], "--nodes is required"),
        (
            &["sim", "--algorithm", "lelann", "--nodes", "3", "--trace", "/nonexistent/dir/trace.jsonl"],
            "cannot create the trace file",
        ),
    ];
    for (args, expected) in cases {
        let o = elect(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err:?} does not name {expected:?}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}

#[test]
fn a_violation_exits_1_with_the_seed_and_a_command_that_reproduces_it() {
    let args =
        ["sim", "-a", "chang-roberts", "-n", "8", "--ids", "random", "--seed", "3", "--param", "bug=forward-smaller"];
    let o = elect(&args);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("violation: safety (docs/reference/properties.md#safety)"), "{err}");
    assert!(err.contains("violation: uniqueness"), "{err}");
    let reproduce = err.lines().find_map(|l| l.split_once("reproduce with: ")).map(|(_, cmd)| cmd.to_owned()).unwrap();
    assert!(err.contains("seed 3;"), "{err}");
    // The printed command reproduces the run exactly.
    let mut again: Vec<&str> = reproduce.split_whitespace().skip(1).collect();
    again.push("--json");
    let (code, replay) = json(&again);
    let mut original: Vec<&str> = args.to_vec();
    original.push("--json");
    let (_, first) = json(&original);
    assert_eq!(code, 1);
    assert_eq!(replay, first);
}

#[test]
fn the_trace_is_written_as_json_lines() {
    let dir = std::env::temp_dir().join(format!("elect-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.jsonl");
    let o = elect(&[
        "sim",
        "-a",
        "bully",
        "-n",
        "4",
        "--crash",
        "4@0",
        "--initiators",
        "1",
        "--trace",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.iter().any(|l| l["ev"] == "crash" && l["node"] == 4));
    assert!(lines.iter().any(|l| l["ev"] == "drop" && l["node"] == 4), "messages to the crashed node are dropped");
    assert!(lines.iter().any(|l| l["ev"] == "timer" && l["timer"] == "ok-deadline"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn list_names_every_algorithm_with_its_parameters() {
    let o = elect(&["list", "--long"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for name in ["bully", "lelann", "chang-roberts", "ring-participant", "--param variant=s001|s000"] {
        assert!(out.contains(name), "{name} missing from:\n{out}");
    }
}

#[test]
fn a_run_that_needs_exactly_its_event_budget_terminates() {
    // W2 on 8 nodes takes 51 events; cancelled timers left in the queue are not pending work.
    let args = ["sim", "-a", "bully", "-n", "8", "--crash", "8@0", "--initiators", "1", "--json", "--max-events"];
    let (code, v) = json(&[&args[..], &["51"]].concat());
    assert_eq!((code, &v["terminated"]), (0, &serde_json::json!(true)));
    let (code, v) = json(&[&args[..], &["50"]].concat());
    assert_eq!((code, &v["terminated"]), (1, &serde_json::json!(false)));
}

#[test]
fn clap_errors_are_one_line_too() {
    for args in [
        &["sim", "-a", "cr", "-n", "-5"][..],
        &["sim", "-a", "cr", "-n", "3", "--ids", "1,,3"],
        &["sim", "--frobnicate"],
    ] {
        let o = elect(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn sweep_writes_csv_and_a_plot() {
    let dir = std::env::temp_dir().join(format!("elect-cli-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg, png) = (dir.join("s.csv"), dir.join("s.svg"), dir.join("s.png"));
    let o = elect(&[
        "sweep",
        "--algorithms",
        "hs,franklin,peterson",
        "--nodes",
        "8..64",
        "--seeds",
        "2",
        "--out",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 1 + 3 * 4 * 2);
    assert!(text.lines().skip(1).all(|l| l.ends_with(",true")), "{text}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("franklin"));
    let o = elect(&["plot", "--input", csv.to_str().unwrap(), "--out", png.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    // Standard output gets the CSV when there is no --out.
    let o = elect(&["sweep", "--algorithms", "cr", "--nodes", "4,8", "--seeds", "1"]);
    assert_eq!(stdout(&o).lines().count(), 3);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sweep_and_plot_refuse_bad_input_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["sweep", "--algorithms", "bully", "--nodes", "8..8192"], "complete graphs of up to 4096"),
        (&["sweep", "--algorithms", "paxos", "--nodes", "8"], "unknown algorithm 'paxos'"),
        (&["sweep", "--algorithms", "cr", "--nodes", "64..8"], "is empty"),
        (&["sweep", "--algorithms", "cr", "--nodes", "8", "--ids", "1,2"], "not a list"),
        (&["sweep", "--algorithms", "cr", "--nodes", "8", "--plot", "x.gif"], "use a .svg or .png"),
        (&["plot", "--input", "/nonexistent.csv", "--out", "x.svg"], "the sweep CSV /nonexistent.csv: cannot read it"),
    ];
    for (args, expected) in cases {
        let o = elect(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected) && err.lines().count() == 1, "{args:?}: {err:?}");
    }
}

#[test]
fn a_synchronizer_runs_a_round_algorithm_and_reports_its_set_up_apart() {
    let base = ["sim", "--algorithm", "floodmax", "--topology", "grid:4x4", "--ids", "random", "--json"];
    let (code, v) = json(&[&base[..], &["--synchronizer", "beta"]].concat());
    assert_eq!(code, 0, "{v}");
    let s = &v["synchronizer"];
    // m = 24, n = 16, D = 6: set-up 2m + (n - 1); per pulse 2m max, 2m acks, (n - 1) safe and (n - 1) pulse.
    assert_eq!((s["name"].as_str(), s["setup_messages"].as_u64()), (Some("beta"), Some(63)));
    assert_eq!(s["control_messages"].as_u64(), Some(2 * 15 * 6));
    assert_eq!(v["messages"]["total"].as_u64(), Some(63 + 4 * 24 * 6 + 2 * 15 * 6));
    let (_, lockstep) = json(&base);
    assert!(lockstep.get("synchronizer").is_none(), "lock-step runs have no synchronizer section");
    let o = elect(&["sim", "-a", "floodmax", "--topology", "grid:4x4", "--synchronizer", "gamma:3"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("synchronizer gamma (root 1, tree height"), "{}", stdout(&o));
}

#[test]
fn bad_synchronizers_exit_2_naming_the_problem() {
    for (args, needle) in [
        (&["--algorithm", "floodmax", "--synchronizer", "delta"][..], "invalid synchronizer 'delta'"),
        (&["--algorithm", "chang-roberts", "--synchronizer", "alpha"][..], "chang-roberts is not written in rounds"),
        (&["--algorithm", "floodmax", "--synchronizer", "beta@3", "--initiators", "1"][..], "root 3 must initiate"),
        (&["--algorithm", "floodmax", "--synchronizer", "abd", "--delay", "exp:2"][..], "unbounded"),
    ] {
        let o = elect(&[&["sim", "--nodes", "6"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn a_sweep_compares_synchronizers_and_plots_messages_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("s.csv"), dir.path().join("time.svg"));
    let o = elect(&[
        "sweep",
        "--algorithms",
        "floodmax",
        "--nodes",
        "8..16",
        "--topology",
        "random-regular:3",
        "--synchronizers",
        "lockstep,alpha,gamma:2",
        "--out",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
        "--metric",
        "time",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let labels: Vec<&str> = text.lines().skip(1).map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(labels, ["", "", "alpha", "alpha", "gamma:2", "gamma:2"]);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("floodmax on alpha") && picture.contains("time until every process knows the leader"));
    let o = elect(&[
        "plot",
        "-i",
        csv.to_str().unwrap(),
        "-o",
        dir.path().join("m.svg").to_str().unwrap(),
        "--metric",
        "messages",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_saved_counterexample_replays_in_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("split.json");
    let file = file.to_str().unwrap();
    let html = dir.path().join("split.html");
    let html = html.to_str().unwrap();
    let o =
        elect(&["check", "-a", "bully", "-n", "4", "--timed", "--delay-bound", "0.4", "--save", file, "--html", html]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("elect sim --replay"), "{}", stdout(&o));
    // The counterexample as a viewer: the same self-contained page `elect sim --html` writes.
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        page.contains("<html") && page.contains("checker path") && page.contains("\"deliver\""),
        "{}",
        &page[..200]
    );
    // Each process's state in Bully's words, as a simulated run's viewer has it.
    assert!(page.contains("\"ev\":\"view\"") && page.contains("\"role\":\"coordinator\""), "{}", &page[..200]);
    let replayed = dir.path().join("replayed.html");
    let o = elect(&["sim", "--replay", file, "--html", replayed.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&replayed).unwrap(), page, "the replay draws the same page");
    let o = elect(&["sim", "--replay", file]);
    assert_eq!(o.status.code(), Some(1), "the violation reproduces: {}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("time passes") && out.contains("VIOLATED safety"), "{out}");
    let (code, v) = json(&["sim", "--replay", file, "--json"]);
    assert_eq!(code, 1);
    assert!(!v["steps"].as_array().unwrap().is_empty() && !v["last"].as_array().unwrap().is_empty(), "{v}");
    // A damaged file is bad input, not a crash.
    std::fs::write(file, "{\"format\": \"elect-counterexample\"}").unwrap();
    let o = elect(&["sim", "--replay", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a counterexample file"), "{}", stderr(&o));
    let o = elect(&["sim", "--replay", file, "--algorithm", "bully"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn check_proves_small_rings_and_prints_the_shortest_path_to_a_violation() {
    let (code, v) =
        json(&["check", "--algorithm", "chang-roberts", "--nodes", "4", "--network", "unordered", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["complete"].as_bool(), v["leader_reachable"].as_bool()), (Some(true), Some(true)));
    assert!(v["states"].as_u64().unwrap() > 1 && v["counterexample"].is_null());
    assert_eq!(v["commuting"]["processes"].as_u64(), Some(4), "{v}");
    let o = elect(&["check", "-a", "chang-roberts", "-n", "4", "--network", "unordered"]);
    assert!(!stdout(&o).contains("commute") && !stdout(&o).contains("fingerprint"), "{}", stdout(&o));
    let o = elect(&["check", "-a", "chang-roberts", "-n", "4", "--network", "unordered", "-v"]);
    assert!(stdout(&o).contains("deliveries commute at 4 of 4 processes"), "{}", stdout(&o));
    assert!(stdout(&o).contains("bytes per visited state") && stdout(&o).contains("fingerprint"), "{}", stdout(&o));
    let o = elect(&["check", "--algorithm", "bully", "--nodes", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("uniqueness VIOLATED") && out.contains("shortest path") && out.contains("timer"), "{out}");
    let o = elect(&["check", "--algorithm", "bully", "--nodes", "3", "--timed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("timed") && stdout(&o).contains("verdict     held"), "{}", stdout(&o));
    let o = elect(&["check", "--algorithm", "chang-roberts", "--nodes", "3", "--network", "carrier-pigeon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown network 'carrier-pigeon'"), "{}", stderr(&o));
}

#[test]
fn the_checkers_benchmark_reports_its_states() {
    let (code, v) = json(&["bench", "--scenario", "check-cr-10", "--repeat", "1", "--json"]);
    assert_eq!(code, 0, "{v}");
    // One order of Chang-Roberts's 65 messages on a descending ring of 10.
    assert_eq!((v[0]["states"].as_u64(), v[0]["delivered"].as_u64()), (Some(66), Some(65)), "{v}");
    // The checker's steps are not queue events: no bare loop beside them.
    assert!(v[0].get("bare_loop_per_second").is_none(), "{v}");
}

#[test]
fn a_simulator_benchmark_reports_the_bare_event_loop_beside_it() {
    let (code, v) = json(&["bench", "--scenario", "bully-w2", "--repeat", "1", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v[0]["delivered"].as_u64(), Some(998_000), "{v}");
    let bare = v[0]["bare_loop_per_second"].as_f64().expect("a bare loop rate");
    assert!(bare.is_finite() && bare > 0.0, "{v}");
}

#[test]
fn the_new_monitor_and_synchronizer_flags_refuse_bad_input_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["sim", "-a", "floodmax", "-n", "4", "--monitor"], "--monitor: floodmax floods a general graph"),
        (&["sim", "-a", "chang-roberts", "-n", "4", "--monitor"], "members form a full mesh: use --topology complete"),
        (&["check", "-a", "chang-roberts", "-n", "3", "--monitor"], "members form a full mesh"),
        (&["sim", "-a", "invitation", "-n", "4", "--bare-monitor"], "--bare-monitor is for algorithms that elect one"),
        (&["check", "-a", "ad-hoc", "-n", "3", "--monitor"], "per connected component"),
        (&["check", "-a", "floodmax", "-n", "3", "--synchronizer", "delta"], "invalid synchronizer 'delta'"),
        (&["check", "-a", "bully", "-n", "3", "--synchronizer", "alpha"], "bully is not written in rounds"),
        (&["check", "-a", "bully", "-n", "3", "--param", "monitor-bug=same-epoch"], "it needs --monitor"),
        (&["sim", "-a", "bully", "-n", "3", "--param", "monitor-bug=same-epoch"], "it needs --monitor"),
        (
            &["sim", "-a", "bully", "-n", "3", "--param", "lease=on"],
            "lease mode of the deployed member (as --lease does): it needs --monitor",
        ),
        (&["check", "-a", "bully", "-n", "3", "--lease"], "--param lease sets the lease mode"),
        (&["sim", "-a", "bully", "-n", "3", "--transfer", "3>3@5"], "hands leadership from one process to another"),
        (&["sim", "-a", "bully", "-n", "3", "--transfer", "3-1@5"], "expected FROM>TO@TIME"),
        (&["check", "-a", "bully", "-n", "3", "--monitor", "--transfer", "3>7@5"], "7 is not a node"),
        (&["check", "-a", "bully", "-n", "3", "--monitor", "--transfer", "3>1@5"], "transfers, link faults"),
        (&["sim", "--scenario", "member-partition", "--lease"], "cannot be used with '--lease'"),
        (&["check", "-a", "bully", "-n", "3", "--monitor", "--param", "lease=2"], "a lease must be at least 5T"),
        (&["sim", "-a", "bully", "-n", "3", "--monitor", "--param", "max-drift-ppm=9"], "add lease=on"),
        (&["check", "-a", "bully", "-n", "3", "--monitor", "--param", "clocks=drifting"], "add lease=on"),
        (&["check", "-a", "bully", "-n", "3", "--judge", "one-leaders"], "'one-leaders' is no property"),
        (
            &[
                "node",
                "--id",
                "1",
                "--listen",
                "127.0.0.1:0",
                "-a",
                "bully",
                "--data-dir",
                "/tmp/x",
                "--lease-length",
                "9",
            ],
            "--lease",
        ),
        (
            &["check", "-a", "bully", "-n", "3", "--monitor", "--param", "monitor-bug=later"],
            "monitor-bug=later is invalid",
        ),
        (&["sim", "-a", "bully", "-n", "3", "--heartbeat", "3"], "--heartbeat times the leader monitor"),
        (&["check", "-a", "bully", "-n", "3", "--heartbeat", "3"], "--heartbeat times the leader monitor"),
        (&["sim", "-a", "bully", "-n", "3", "--monitor", "--bare-monitor"], "cannot be used with"),
        (
            &[
                "node",
                "--id",
                "1",
                "--listen",
                "127.0.0.1:0",
                "--peer",
                "2=127.0.0.1:9",
                "-a",
                "bully",
                "--data-dir",
                "/tmp/x",
                "--param",
                "monitor-bug=same-epoch",
            ],
            "a member never runs it",
        ),
    ];
    refused_with_one_line(cases);
}

#[test]
fn the_voters_flags_refuse_bad_input_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["sim", "-a", "bully", "-n", "4", "--add-voter", "4@20"], "they need --monitor"),
        (&["sim", "-a", "bully", "-n", "4", "--monitor", "--param", "voters=1,9"], "9 is not a"),
        (&["sim", "-a", "bully", "-n", "4", "--monitor", "--param", "voters=1,1"], "1 is named twice"),
        (&["sim", "-a", "bully", "-n", "4", "--monitor", "--param", "voters=1,x"], "parameter voters=1,x is invalid"),
        (&["check", "-a", "bully", "-n", "4", "--monitor", "--remove-voter", "5@9"], "5 is not a"),
        (&["sim", "-a", "bully", "-n", "4", "--monitor", "--add-voter", "4"], "--add-voter"),
    ];
    refused_with_one_line(cases);
}

/// Each of `cases` (arguments, and what the error names) exits 2 with one line naming the problem.
fn refused_with_one_line(cases: &[(&[&str], &str)]) {
    for (args, expected) in cases {
        let o = elect(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err:?} does not name {expected:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn check_monitor_finds_the_planted_flaw_and_sim_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let faults = |crashes: &'static str, recoveries: &'static str| {
        vec!["-a", "bully", "-n", "3", "--monitor", "--crashes", crashes, "--recoveries", recoveries]
    };
    let flaws = [
        ("same-epoch", faults("1", "0"), "uniqueness", "both declared themselves leader"),
        ("forget-epoch", vec!["--scenario", "member-restart"], "fresh-epoch", "before it restarted, and again after"),
        ("no-drift", vec!["--scenario", "lease-drift", "--only", "one-leader"], "one-leader", "both say they lead"),
        (
            "hasty-change",
            vec!["--scenario", "voters-change", "--only", "one-leader"],
            "one-leader",
            "both say they lead",
        ),
    ];
    for (flaw, run, property, detail) in flaws {
        let saved = dir.path().join(format!("{flaw}.json"));
        let html = dir.path().join(format!("{flaw}.html"));
        let saved_arg = saved.to_str().unwrap();
        let bug = format!("monitor-bug={flaw}");
        let mut args = vec!["check", "--timed", "--param", &bug, "--save", saved_arg, "--html", html.to_str().unwrap()];
        args.extend(run);
        let o = elect(&args);
        assert_eq!(o.status.code(), Some(1), "{flaw}: {}", stderr(&o));
        assert!(stdout(&o).contains(&format!("{property} VIOLATED")), "{flaw}: {}", stdout(&o));
        let (code, replay) = json(&["sim", "--replay", saved_arg, "--json"]);
        assert_eq!(code, 1, "{flaw}");
        assert!(replay.to_string().contains(detail), "{flaw}: {replay}");
        assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"), "{flaw}");
    }
    // Without the flaw the same search holds.
    let o = elect(&["check", "-a", "bully", "-n", "3", "--monitor", "--timed", "--crashes", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}
