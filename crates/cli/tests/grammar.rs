//! The command line's grammar under random input: flag lists, values and scenario files drawn by proptest. Whatever
//! the input, `elect` exits 0, 1 or 2, never panics, and, for the small inputs drawn here, ends within seconds and
//! takes a bounded amount of memory.
//!
//! The default suite runs a few dozen cases; `cargo test -p elect --test grammar -- --ignored` runs many more.

mod common;

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// The most a small input may take: wall-clock time (a debug build) and resident memory.
const TIME: Duration = Duration::from_secs(30);
const MEMORY: u64 = 400 << 20;

/// Values any flag may be given: well-formed ones of each kind and hostile ones.
fn value() -> impl Strategy<Value = String> {
    const FIXED: &[&str] = &[
        "-1",
        "18446744073709551615",
        "1e309",
        "NaN",
        "",
        "0.5",
        "/dev/zero",
        "random",
        "all",
        "ring",
        "complete",
        "grid:2x3",
        "geometric:0.7",
        "uniform:1..3",
        "2@1",
        "1-2@1..3",
        "1,2|3@0..2",
        "3,1,2",
    ];
    prop_oneof![
        (0u32..8).prop_map(|n| n.to_string()),
        proptest::sample::select(FIXED).prop_map(String::from),
        "[a-z0-9:@.,|>=-]{0,12}",
    ]
}

/// The flags drawn from (those that could start a long run are left to a fixed suffix): those of a scenario, and
/// each subcommand's own.
const SCENARIO: &[&str] = &["--algorithm", "--nodes", "--topology", "--ids", "--initiators", "--seed", "--delay"];
const SIM: &[&str] = &[
    "--crash",
    "--recover",
    "--crash-leader-at",
    "--resign",
    "--transfer",
    "--loss",
    "--duplicate",
    "--link-down",
    "--partition",
    "--prefer",
    "--attr",
    "--param",
    "--links",
    "--synchronizer",
    "--max-nodes",
    "--max-file-size",
];
const CHECK: &[&str] = &[
    "--network",
    "--crashes",
    "--recoveries",
    "--duplicates",
    "--threads",
    "--max-depth",
    "--max-nodes",
    "--max-memory",
    "--max-disk",
    "--param",
];
const SWEEP: &[&str] = &["--algorithms", "--seeds", "--threads", "--max-runs"];
const SWITCHES: &[&str] =
    &["--json", "--monitor", "--bare-monitor", "--timed", "--dfs", "--keep-going", "--exact", "--help"];
const ALGORITHMS: &[&str] =
    &["bully", "chang-roberts", "lelann", "floodmax", "invitation", "ad-hoc", "franklin", "garcia-molina", "paxos"];

/// One flag: a switch, or one of `lists`' flags with a value.
fn flag(lists: &[&'static [&'static str]]) -> impl Strategy<Value = Vec<String>> {
    let flags: Vec<&'static str> = lists.concat();
    prop_oneof![
        1 => proptest::sample::select(SWITCHES).prop_map(|s| vec![s.to_owned()]),
        4 => (proptest::sample::select(flags), value()).prop_map(|(f, v)| vec![f.to_owned(), v]),
    ]
}

/// A small scenario file: each line kept or not, some values hostile.
fn scenario() -> impl Strategy<Value = String> {
    let algorithm = proptest::sample::select(ALGORITHMS);
    let nodes = prop_oneof![(0u32..7).prop_map(|n| n.to_string()), Just("-3".to_owned()), Just("\"x\"".to_owned())];
    let extra = proptest::sample::subsequence(
        vec![
            "topology = \"ring\"",
            "topology = \"file:/dev/zero\"",
            "ids = [3, 1, 2]",
            "ids = \"random\"",
            "initiators = [1]",
            "until = 20",
            "delay = \"uniform:1..2\"",
            "loss = 0.2",
            "seed = 7",
            "surplus = 1",
            "[[fault]]\nat = 1\ncrash = 2",
            "[[fault]]\nat = 2\nrecover = 2",
            "[expect]\nleader = 3",
        ],
        0..5,
    );
    (algorithm, nodes, extra).prop_map(|(a, n, extra)| {
        let (tables, keys): (Vec<&str>, Vec<&str>) = extra.into_iter().partition(|l| l.starts_with('['));
        format!("algorithm = \"{a}\"\nnodes = {n}\n{}\n{}\n", keys.join("\n"), tables.join("\n"))
    })
}

/// A command line, and the scenario file it reads (written to `SCENARIO` in its arguments), if any.
fn command() -> impl Strategy<Value = (Vec<String>, Option<String>)> {
    let sim = (proptest::sample::select(ALGORITHMS), 1u32..9, proptest::collection::vec(flag(&[SCENARIO, SIM]), 0..5))
        .prop_map(|(a, n, flags)| {
            let mut args = vec!["sim".into(), "-a".into(), a.into(), "-n".into(), n.to_string()];
            args.extend(flags.into_iter().flatten());
            args.extend(["--max-events".into(), "200000".into()]);
            (args, None)
        });
    let check =
        (proptest::sample::select(ALGORITHMS), 1u32..5, proptest::collection::vec(flag(&[SCENARIO, CHECK]), 0..4))
            .prop_map(|(a, n, flags)| {
                let mut args = vec!["check".into(), "-a".into(), a.into(), "-n".into(), n.to_string()];
                args.extend(flags.into_iter().flatten());
                args.extend(["--max-states".into(), "20000".into(), "--max-time".into(), "5".into()]);
                (args, None)
            });
    let sweep = (proptest::collection::vec(flag(&[SCENARIO, SWEEP]), 0..4), 1u32..4).prop_map(|(flags, seeds)| {
        let mut args =
            vec!["sweep".into(), "--algorithms".into(), "lelann,cr".into(), "--nodes".into(), "4..16".into()];
        args.extend(flags.into_iter().flatten());
        args.extend(["--seeds".into(), seeds.to_string()]);
        (args, None)
    });
    let file = (scenario(), proptest::collection::vec(flag(&[&["--seed", "--max-file-size"]]), 0..2)).prop_map(
        |(text, flags)| {
            let mut args = vec!["sim".into(), "--scenario".into(), "SCENARIO".into()];
            args.extend(flags.into_iter().flatten());
            (args, Some(text))
        },
    );
    let words = proptest::collection::vec(
        prop_oneof![value(), proptest::sample::select([SCENARIO, SIM].concat()).prop_map(String::from)],
        0..6,
    )
    .prop_map(|mut w| {
        let sub = ["sim", "check", "sweep", "plot", "list", "node", "cluster", "bogus"][w.len() % 8];
        w.insert(0, sub.to_owned());
        (w, None)
    });
    prop_oneof![3 => sim, 2 => check, 1 => sweep, 2 => file, 1 => words]
}

/// Runs `cases` command lines, drawn from a fixed seed (so that the default suite gives the same verdict on every
/// run) or, for the longer run, from a fresh one each time.
fn grammar(cases: u32, fixed_seed: bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenario.toml");
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let mut runner = if fixed_seed {
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
    } else {
        TestRunner::new(config)
    };
    runner
        .run(&command(), |(mut args, text)| {
            if let Some(text) = text {
                std::fs::write(&file, text).unwrap();
            }
            for a in &mut args {
                if a == "SCENARIO" {
                    *a = file.to_str().unwrap().to_owned();
                }
            }
            let common::Ran { code, stderr, took, peak, .. } = common::run(&args, TIME, MEMORY);
            prop_assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
            prop_assert!(
                matches!(code, Some(0..=2)),
                "{args:?}: exit {code:?} after {took:?}, peak {} MiB: {stderr}",
                peak >> 20
            );
            if code == Some(2) {
                prop_assert!(stderr.lines().count() <= 2 && !stderr.trim().is_empty(), "{args:?}: {stderr}");
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn any_command_line_ends_quickly_with_0_1_or_2() {
    grammar(64, true);
}

#[test]
fn a_graph_of_one_process_is_simulated_for_every_algorithm() {
    // `sim -a ad-hoc -n 1` once overflowed computing its message bound.
    for algorithm in elect_algos::registry::all().iter().map(|info| info.name) {
        let args = ["sim", "-a", algorithm, "-n", "1", "--max-events", "200000"].map(str::to_owned);
        let common::Ran { code, stderr, .. } = common::run(&args, TIME, MEMORY);
        assert!(matches!(code, Some(0..=2)) && !stderr.contains("panicked"), "{args:?}: {code:?} {stderr}");
    }
}

#[test]
#[ignore = "a longer run of the same property: cargo test -p elect --test grammar -- --ignored"]
fn any_command_line_ends_quickly_with_0_1_or_2_at_length() {
    grammar(1000, false);
}
