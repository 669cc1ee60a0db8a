//! No input can hang elect or take the machine's memory: each hostile input ends within seconds, with exit status
//! 2 and one line naming the problem (or a bounded, partial result), and the memory it takes stays bounded.
//!
//! Peak memory is the child's resident high-water mark (`VmHWM` in `/proc/PID/status`), sampled while it runs.

mod common;

use std::time::Duration;

use common::Ran;

const MIB: u64 = 1 << 20;

/// Runs `elect ARGS`, failing if it is still running after `limit` or takes more than 2 GiB.
fn run(args: &[&str], limit: Duration) -> Ran {
    let r = common::run(args, limit, 2 << 30);
    assert!(!r.killed, "elect {args:?} still ran after {:?} (peak {} MiB)", r.took, r.peak / MIB);
    r
}

/// Asserts that `elect ARGS` exits 2 within seconds, with one line on stderr that contains `problem`, and took
/// less than `memory` bytes.
fn refused(args: &[&str], problem: &str, memory: u64) {
    let r = run(args, Duration::from_secs(20));
    assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
    assert!(r.stderr.contains(problem), "{args:?}: stderr does not name '{problem}': {}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    assert!(r.took < Duration::from_secs(10), "{args:?} took {:?}", r.took);
    assert!(r.peak < memory, "{args:?} took {} MiB", r.peak / MIB);
}

#[test]
fn devices_are_not_read_as_files() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("plot.svg");
    let svg = svg.to_str().unwrap();
    for args in [
        &["sim", "-a", "bully", "-t", "file:/dev/zero"][..],
        &["plot", "--input", "/dev/zero", "--out", svg],
        &["sim", "--scenario", "/dev/zero"],
        &["sim", "--replay", "/dev/zero"],
        &["check", "--scenario", "/dev/zero"],
    ] {
        refused(args, "/dev/zero: not a regular file", 100 * MIB);
    }
    refused(&["sim", "--scenario", dir.path().to_str().unwrap()], "not a regular file", 100 * MIB);
}

#[test]
fn files_over_the_limit_are_refused_and_the_limit_can_be_raised() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("ring.toml");
    std::fs::write(&scenario, "algorithm = \"chang-roberts\"\nnodes = 5\n").unwrap();
    let path = scenario.to_str().unwrap();
    refused(&["sim", "--scenario", path, "--max-file-size", "256"], "larger than the limit of 16 bytes", 100 * MIB);
    let r = run(&["sim", "--scenario", path, "--max-file-size", "1K"], Duration::from_secs(20));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    refused(&["sim", "--scenario", path, "--max-file-size", "lots"], "not a size", 100 * MIB);
    // A scenario file may be a 16th of the bound: reading TOML takes about a hundred times a file's size.
    let ids: Vec<String> = (1..=700_000).map(|i| i.to_string()).collect();
    std::fs::write(&scenario, format!("algorithm = \"chang-roberts\"\nids = [{}]\n", ids.join(","))).unwrap();
    refused(&["check", "--scenario", path], "larger than the limit of 4 MiB (a scenario file may be 1/16", 100 * MIB);
    let r = run(&["sim", "--scenario", path, "--max-file-size", "128M"], Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn the_checker_stops_at_its_memory_bound() {
    let r =
        run(&["check", "-a", "bully", "-n", "20", "--max-memory", "200M", "--max-disk", "0"], Duration::from_secs(60));
    assert!(r.stdout.contains("stopped: memory"), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("cut short by --max-memory"), "{}", r.stdout);
    assert_eq!(r.code, Some(1), "a partial verdict is not a proof: {}", r.stderr);
    assert!(r.peak < 400 * MIB, "peak {} MiB", r.peak / MIB);
    let states: u64 = r.stdout.split("states").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(states > 1000, "it explored what fits: {}", r.stdout);
}

#[test]
fn the_checker_keeps_its_bounds_at_dozens_of_members() {
    // One state of these has thousands of successors of hundreds of kilobytes each, and choosing who may crash
    // filtered every subset of the members: the search overran 200M by gigabytes and --max-time 5 by minutes,
    // and with --monitor died on a failed allocation.
    for (n, extra) in [("40", &[][..]), ("64", &["--monitor"][..]), ("64", &["--exact"][..]), ("48", &["--dfs"][..])] {
        let args = [&["check", "-a", "bully", "-n", n, "--max-memory", "200M", "--max-time", "5"][..], extra].concat();
        let r = run(&args, Duration::from_secs(30));
        assert_eq!(r.code, Some(1), "{args:?}: a partial verdict is not a proof: {}", r.stderr);
        assert!(r.stdout.contains("verdict     not proven"), "{args:?}: {}", r.stdout);
        assert!(r.peak < 300 * MIB, "{args:?}: peak {} MiB", r.peak / MIB);
    }
}

#[test]
fn the_checker_keeps_its_waiting_states_on_disk_up_to_its_disk_bound() {
    // Past a quarter of --max-memory the waiting states go to disk, where --max-disk stops them.
    let args = ["check", "-a", "chang-roberts", "-n", "9", "--ids", "descending", "--network", "unordered"];
    let args = [&args[..], &["--reduction", "none", "--max-memory", "200M", "--max-disk", "8M", "--verbose"]].concat();
    let r = run(&args, Duration::from_secs(60));
    assert!(
        r.stdout.contains("stopped: disk (the waiting states on disk would pass --max-disk"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.contains("cut short by --max-disk"), "{}", r.stdout);
    assert!(r.stdout.contains("MiB of waiting states on disk"), "{}", r.stdout);
    assert_eq!(r.code, Some(1), "a partial verdict is not a proof: {}", r.stderr);
    assert!(r.peak < 400 * MIB, "peak {} MiB", r.peak / MIB);
    refused(&["check", "-a", "bully", "-n", "3", "--max-disk", "lots"], "not a size", 100 * MIB);
}

#[test]
fn sizes_beyond_a_subcommands_limit_are_refused() {
    let limit = 200 * MIB;
    refused(&["check", "-a", "chang-roberts", "-n", "33554432"], "more than the 64 elect check accepts", limit);
    refused(&["sim", "-a", "chang-roberts", "-n", "33554432", "--ids", "random"], "--max-nodes", limit);
    refused(&["sim", "-a", "ad-hoc", "-n", "1000000", "-t", "geometric:1.5"], "expected links", limit);
    refused(
        &["sim", "-a", "ad-hoc", "-n", "4000000", "-t", "random-regular:1000"],
        "random regular graphs of up to",
        limit,
    );
    refused(&["bench", "--serve", "127.0.0.1:9", "--clients", "100000"], "give 1 to 1024 (a thread each)", limit);
    refused(&["bench", "--serve", "nonsense"], "--serve nonsense: not host:port", limit);
    refused(&["sweep", "--algorithms", "chang-roberts", "--nodes", "33554432"], "--max-nodes", limit);
    refused(
        &["sweep", "--algorithms", "lelann", "--nodes", "8", "--seeds", "18446744073709551615"],
        "--max-runs",
        limit,
    );
    refused(&["sweep", "--algorithms", "lelann", "--nodes", "8", "--seeds", "1000000000"], "--max-runs", limit);
    refused(
        &["sweep", "--algorithms", "lelann,cr", "--nodes", "8..1024", "--seeds", "9223372036854775807"],
        "2^64",
        limit,
    );
    refused(&["sim", "-a", "lelann", "-n", "100", "--max-nodes", "10"], "more than the 10 elect sim accepts", limit);
}

#[test]
fn threads_are_capped() {
    refused(&["check", "-a", "chang-roberts", "-n", "3", "--threads", "100000"], "--threads 100000", 100 * MIB);
    refused(&["sweep", "--algorithms", "lelann", "--nodes", "8", "--threads", "100000"], "--threads", 100 * MIB);
}

#[test]
fn a_sweeps_memory_does_not_grow_with_its_runs() {
    let sweep = |seeds: &str| {
        let args = ["sweep", "--algorithms", "lelann", "--nodes", "8", "--seeds", seeds, "--out", "/dev/null"];
        let r = run(&args, Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        r.peak
    };
    let (few, many) = (sweep("1000"), sweep("50000"));
    assert!(many < few + 16 * MIB, "1000 runs: {} MiB, 50000 runs: {} MiB", few / MIB, many / MIB);
}

#[test]
fn a_sweep_streams_its_rows_in_order() {
    let r = run(
        &["sweep", "--algorithms", "lelann,cr", "--nodes", "4..16", "--seeds", "3", "--threads", "2"],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let keys: Vec<String> =
        r.stdout.lines().skip(1).map(|l| l.split(',').take(4).collect::<Vec<_>>().join(",")).collect();
    let mut expected = Vec::new();
    for algorithm in ["lelann", "chang-roberts"] {
        for n in [4, 8, 16] {
            for seed in 1..=3 {
                expected.push(format!("{algorithm},,{n},{seed}"));
            }
        }
    }
    assert_eq!(keys, expected);
    let header = r.stdout.lines().next().unwrap();
    assert!(
        header.starts_with("algorithm,synchronizer,n_processes,seed,messages_total,") && header.ends_with(",ok"),
        "{header}"
    );
}

#[test]
fn a_plot_of_a_row_with_no_processes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    std::fs::write(
        &csv,
        "algorithm,synchronizer,n,seed,messages,elected_at,declared_at,end_time,bound,bound_value,bound_measured\n\
         lelann,,0,1,16,3,,3,,,\n",
    )
    .unwrap();
    let svg = dir.path().join("plot.svg");
    refused(&["plot", "--input", csv.to_str().unwrap(), "--out", svg.to_str().unwrap()], "n = 0", 100 * MIB);
}

#[test]
fn a_missing_required_flag_is_named_with_the_usage() {
    for (args, flag) in [
        (&["sim", "-n", "3"][..], "--algorithm <ALGORITHM>"),
        (&["plot", "--input", "x.csv"], "--out <FILE>"),
        (&["node", "--id", "1", "--algorithm", "bully", "--data-dir", "d"], "--listen <ADDR>"),
    ] {
        let r = run(args, Duration::from_secs(20));
        assert_eq!(r.code, Some(2), "{args:?}");
        let mut lines = r.stderr.lines();
        let first = lines.next().unwrap();
        assert!(first.contains("required arguments were not provided") && first.contains(flag), "{}", r.stderr);
        assert!(lines.next().is_some_and(|l| l.starts_with("Usage: elect ")), "{}", r.stderr);
    }
}

#[test]
fn a_cluster_refuses_a_data_directory_it_cannot_write() {
    // /sys refuses new files whoever asks, root included.
    let r = run(
        &["cluster", "-n", "3", "-a", "bully", "--kill-leader", "1", "--keep-data", "/sys"],
        Duration::from_secs(20),
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("--keep-data /sys is not writable"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn a_member_refuses_peers_it_cannot_reach_and_a_data_directory_that_is_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let base = ["node", "--id", "1", "--listen", "127.0.0.1:7001", "--algorithm", "bully"];
    for (extra, problem) in [
        (&["--peer", "2=127.0.0.1:7001", "--data-dir", data][..], "this member's own --listen address"),
        (&["--peer", "2=127.0.0.1:0", "--data-dir", data], "port 0"),
        (&["--peer", "2=[::1]:7002", "--data-dir", data], "an IPv6 address, but --listen 127.0.0.1:7001 is IPv4"),
        (&["--peer", "2=127.0.0.1:7002", "--data-dir", file.to_str().unwrap()], "not a directory: "),
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        refused(&args, problem, 100 * MIB);
    }
}

#[test]
fn a_recovery_must_follow_a_crash() {
    refused(
        &["sim", "-a", "bully", "-n", "4", "--crash", "2@10", "--recover", "2@5"],
        "must follow a crash",
        100 * MIB,
    );
    let r = run(&["sim", "-a", "bully", "-n", "4", "--crash", "2@5", "--recover", "2@10"], Duration::from_secs(20));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn a_counterexample_file_is_checked_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("cx.json");
    let saved = saved.to_str().unwrap();
    let found = run(
        &["check", "-a", "bully", "-n", "4", "--timed", "--delay-bound", "0.4", "--save", saved],
        Duration::from_secs(60),
    );
    assert_eq!(found.code, Some(1), "{}", found.stderr);
    let good: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    let replays = run(&["sim", "--replay", saved], Duration::from_secs(20));
    assert_eq!(replays.code, Some(1), "the violation reproduces: {}", replays.stderr);
    let steps = good["actions"].as_array().unwrap().len();
    let cases: [(&str, serde_json::Value, &str); 4] = [
        ("property", "no-such-property".into(), "its property: bully promises no property 'no-such-property'"),
        ("loop_start", steps.into(), "its loop_start"),
        ("actions", serde_json::json!([]), "its actions: no step"),
        ("surplus", 1.into(), "unknown field `surplus`"),
    ];
    for (field, value, problem) in cases {
        let mut bad = good.clone();
        bad[field] = value;
        let path = dir.path().join(format!("{field}.json"));
        std::fs::write(&path, bad.to_string()).unwrap();
        refused(&["sim", "--replay", path.to_str().unwrap()], problem, 100 * MIB);
    }
}

#[test]
fn flags_are_checked_before_the_work() {
    let limit = 200 * MIB;
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("missing").join("plot.svg");
    let nowhere = nowhere.to_str().unwrap();
    let sweep = ["sweep", "--algorithms", "chang-roberts", "-n", "8..1048576"];
    refused(&[&sweep[..], &["--plot", nowhere]].concat(), "no directory", limit);
    refused(&[&sweep[..], &["--plot", "plot.pdf"]].concat(), "use a .svg or .png file", limit);
    refused(&[&sweep[..], &["--out", dir.path().to_str().unwrap()]].concat(), "a directory, where a file goes", limit);
    refused(&[&sweep[..], &["--bound", "0/0"]].concat(), "\"0/0\" is NaN at n = 8", limit);
    refused(&[&sweep[..], &["--bound", "n/(n-16)"]].concat(), "is inf at n = 16", limit);
    refused(&[&sweep[..], &["--metric", "speed"]].concat(), "(possible values: election, messages, time)", limit);
    let swarm = ["check", "-a", "bully", "-n", "4", "--swarm", "0/2", "--out", nowhere];
    refused(&swarm, "no directory", limit);
}
