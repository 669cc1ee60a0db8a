//! Sharded sweeps: shards chosen by flag or by a batch scheduler's variables, merged into exactly the unsharded CSV.

use std::path::Path;
use std::process::{Command, Output};

const SCHEDULER: [&str; 7] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
    "JOB_COMPLETION_INDEX",
    "AWS_BATCH_JOB_ARRAY_INDEX",
    "AWS_BATCH_JOB_ARRAY_SIZE",
];

/// `elect ARGS` in `dir`, with only the scheduler variables in `env`.
fn elect(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_elect"));
    cmd.current_dir(dir).args(args);
    for name in SCHEDULER {
        cmd.env_remove(name);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn refused(o: &Output, code: i32, says: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(err.contains(says), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

const SWEEP: [&str; 8] = [
    "sweep",
    "--algorithms",
    "chang-roberts,bully,hirschberg-sinclair",
    "--nodes",
    "4..32",
    "--seeds",
    "3",
    "--threads",
];

fn sweep(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args: Vec<&str> = SWEEP.to_vec();
    args.push("2");
    args.extend(extra);
    elect(dir, &args, env)
}

#[test]
fn one_three_and_seven_shards_merge_into_the_bytes_of_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&sweep(d, &["--out", "whole.csv"], &[]));
    let whole = std::fs::read(d.join("whole.csv")).unwrap();
    let header = String::from_utf8_lossy(&whole).lines().next().unwrap().to_owned();
    let columns: Vec<&str> = header.split(',').collect();
    for (i, c) in columns.iter().enumerate() {
        assert!(!columns[..i].contains(c), "column {c} named twice: {header}");
    }
    assert!(header.starts_with("algorithm,synchronizer,n_processes,seed,messages_total,messages_"), "{header}");

    for n in [1u64, 7] {
        let mut files = Vec::new();
        for i in 0..n {
            let err = ok(&sweep(d, &["--out", "part.csv", "--shard", &format!("{i}/{n}")], &[]));
            assert!(err.starts_with(&format!("shard {i}/{n} (from --shard)")), "{err}");
            files.push(format!("part.shard-{i}-of-{n}.csv"));
        }
        let mut args = vec!["merge", "--out", "merged.csv"];
        args.extend(files.iter().rev().map(String::as_str));
        ok(&elect(d, &args, &[]));
        assert!(std::fs::read(d.join("merged.csv")).unwrap() == whole, "{n} shards merged differ");
    }

    // Three copies of an array job, each told its index by a different scheduler.
    let err = ok(&sweep(
        d,
        &[],
        &[
            ("SLURM_ARRAY_TASK_ID", "10"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_STEP", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ],
    ));
    assert!(err.starts_with("shard 0/3 (from SLURM_ARRAY_TASK_ID=10"), "{err}");
    let err = ok(&sweep(d, &["--shard-count", "3"], &[("JOB_COMPLETION_INDEX", "1")]));
    assert!(err.starts_with("shard 1/3 (from JOB_COMPLETION_INDEX=1"), "{err}");
    let err = ok(&sweep(d, &[], &[("AWS_BATCH_JOB_ARRAY_INDEX", "2"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")]));
    assert!(err.starts_with("shard 2/3 (from AWS_BATCH_JOB_ARRAY_INDEX=2"), "{err}");
    // A retried copy overwrites its file, and nothing half-written is left behind.
    ok(&sweep(d, &["--shard-count", "3"], &[("JOB_COMPLETION_INDEX", "1")]));
    let mut shards: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("sweep-"))
        .collect();
    shards.sort();
    assert_eq!(shards.len(), 3, "{shards:?}");
    let digest = shards[0].trim_start_matches("sweep-").split('.').next().unwrap().to_owned();
    for (i, f) in shards.iter().enumerate() {
        assert_eq!(*f, format!("sweep-{digest}.shard-{i}-of-3.csv"), "named after the sweep and the shard");
    }
    assert!(!std::fs::read_dir(d).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with(".elect-")));
    let mut args = vec!["merge", "--out", "merged3.csv"];
    args.extend(shards.iter().map(String::as_str));
    ok(&elect(d, &args, &[]));
    assert!(std::fs::read(d.join("merged3.csv")).unwrap() == whole, "3 shards merged differ");
    // And the merged file plots as any sweep does.
    ok(&elect(d, &["plot", "--input", "merged3.csv", "--out", "plot.svg"], &[]));
    assert!(std::fs::read_to_string(d.join("plot.svg")).unwrap().contains("<svg"));
}

#[test]
fn missing_duplicated_and_foreign_shards_and_shards_that_do_not_exist_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for i in 0..3 {
        ok(&sweep(d, &["--out", "a.csv", "--shard", &format!("{i}/3")], &[]));
    }
    ok(&elect(
        d,
        &["sweep", "--algorithms", "lelann", "--nodes", "4", "--seeds", "3", "--out", "b.csv", "--shard", "1/3"],
        &[],
    ));
    let merge = |files: &[&str]| {
        let mut args = vec!["merge", "--out", "m.csv"];
        args.extend(files);
        elect(d, &args, &[])
    };
    refused(&merge(&["a.shard-0-of-3.csv", "a.shard-2-of-3.csv"]), 1, "shard 1/3 of sweep");
    refused(&merge(&["a.shard-0-of-3.csv", "a.shard-1-of-3.csv", "a.shard-1-of-3.csv"]), 1, "given twice");
    refused(
        &merge(&["a.shard-0-of-3.csv", "b.shard-1-of-3.csv", "a.shard-2-of-3.csv"]),
        1,
        "b.shard-1-of-3.csv is shard 1/3 of sweep",
    );
    std::fs::write(d.join("plain.csv"), "algorithm,n\n").unwrap();
    refused(&merge(&["plain.csv"]), 1, "plain.csv is not a shard file");
    // A shard cut short (a copy killed mid-write never leaves one, but a file may be damaged later).
    let text = std::fs::read_to_string(d.join("a.shard-2-of-3.csv")).unwrap();
    let body = text.trim_end_matches('\n');
    std::fs::write(d.join("cut.csv"), &body[..=body.rfind('\n').unwrap()]).unwrap();
    refused(&merge(&["a.shard-0-of-3.csv", "a.shard-1-of-3.csv", "cut.csv"]), 1, "incomplete");
    assert!(!d.join("m.csv").exists(), "nothing is written when the shards do not merge");

    refused(&sweep(d, &["--shard", "4/4"], &[]), 2, "does not exist");
    refused(&sweep(d, &["--shard", "0/0"], &[]), 2, "at least 1 shard");
    refused(&sweep(d, &[], &[("JOB_COMPLETION_INDEX", "0")]), 2, "--shard-count");
    refused(
        &sweep(d, &[], &[("AWS_BATCH_JOB_ARRAY_INDEX", "5"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")]),
        2,
        "numbered from 0 to 2",
    );
}

/// A swarm: independent searches, each its own file, by flag or by the scheduler's index; the merge's verdict.
#[test]
fn a_swarm_s_searches_merge_into_one_verdict_and_the_shortest_counterexample() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let split = ["check", "-a", "bully", "-n", "4", "--timed", "--delay-bound", "0.4", "--max-states", "3000"];
    for i in 0..3 {
        let at = format!("{i}/4");
        let o = elect(d, &[&split[..], &["--swarm", &at, "--out", "split.json"]].concat(), &[]);
        let err = ok(&o);
        assert!(err.contains(&format!("search {i}/4")) && err.contains("VIOLATED"), "{err}");
    }
    // The fourth takes its number from Slurm's array variables.
    let slurm = [("SLURM_ARRAY_TASK_ID", "13"), ("SLURM_ARRAY_TASK_MIN", "10"), ("SLURM_ARRAY_TASK_COUNT", "4")];
    ok(&elect(d, &[&split[..], &["--swarm", "array", "--out", "split.json"]].concat(), &slurm));
    let files: Vec<String> = (0..4).map(|i| format!("split.swarm-{i}-of-4.json")).collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let o = elect(d, &[&["merge", "--out", "merged.json", "--save", "cex.json"], &files[..]].concat(), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("merged 4 searches") && out.contains("safety VIOLATED"), "{out}");
    let merged: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("merged.json")).unwrap()).unwrap();
    assert_eq!(merged["verdict"], "violated");
    let states: u64 = (0..4)
        .map(|i| {
            let f: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join(files[i])).unwrap()).unwrap();
            f["states"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(merged["states"].as_u64(), Some(states), "coverage adds up");
    let shortest = (0..4)
        .filter_map(|i| {
            let f: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join(files[i])).unwrap()).unwrap();
            f["counterexample"]["actions"].as_array().map(Vec::len)
        })
        .min()
        .unwrap();
    assert_eq!(merged["counterexample"]["actions"].as_array().unwrap().len(), shortest);
    // The kept counterexample replays in the simulator.
    let o = elect(d, &["sim", "--replay", "cex.json"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("VIOLATED safety"));

    // A missing search, one given twice, or one of another check: refused, naming it.
    let refused = |files: &[&str], says: &str| {
        let o = elect(d, &[&["merge", "--out", "m.json"], files].concat(), &[]);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{err}");
    };
    refused(&files[..3], "search 3/4 of the swarm is missing");
    refused(&[files[0], files[0], files[1], files[2]], "given twice");
    ok(&elect(d, &["check", "-a", "bully", "-n", "3", "--timed", "--swarm", "3/4", "--out", "other.json"], &[]));
    refused(&[files[0], files[1], files[2], "other.swarm-3-of-4.json"], "not of the swarm of");

    // A search that completes proves: the merge holds.
    for i in 0..2 {
        let at = format!("{i}/2");
        ok(&elect(d, &["check", "-a", "chang-roberts", "-n", "4", "--swarm", &at, "--out", "cr.json"], &[]));
    }
    let o = elect(d, &["merge", "--out", "cr-merged.json", "cr.swarm-0-of-2.json", "cr.swarm-1-of-2.json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("verdict     held"));
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The sampled fingerprints of a search's result file.
fn sample(file: &serde_json::Value) -> Vec<u64> {
    file["sample"]["fingerprints"].as_array().unwrap().iter().map(|f| f.as_u64().unwrap()).collect()
}

/// Runs every search of a swarm of `count` of the check `args` in `d`, each writing its file beside `out`.
fn run_swarm(d: &Path, args: &[&str], count: u32, out: &str) {
    for i in 0..count {
        ok(&elect(d, &[args, &["--swarm", &format!("{i}/{count}"), "--out", out]].concat(), &[]));
    }
}

/// A swarm's coverage: the distinct states its searches covered and an estimate of the whole space, from the
/// samples in their files; exact once a search completes. The samples of two searches are taken in separate
/// processes, in separate orders, and agree on every state.
#[test]
fn a_swarm_s_merge_says_how_much_of_the_space_its_searches_covered() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Bully over links that deliver in any order branches widely: the searches' orders part early, so each finds
    // many states the others do not (a thin space, as the deployed member's, leaves too few for an estimate).
    let bully = ["check", "-a", "bully", "-n", "4", "--network", "unordered", "--max-states", "4000"];
    run_swarm(d, &bully, 4, "b.json");
    let files: Vec<String> = (0..4).map(|i| format!("b.swarm-{i}-of-4.json")).collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let o = elect(d, &[&["merge", "--out", "merged.json"], &files[..]].concat(), &[]);
    assert_eq!(o.status.code(), Some(1), "no violation found: {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    // Each search saw fewer states than a sample keeps: the samples hold them all, and the figures are exact.
    let (mut union, mut counted) = (std::collections::BTreeMap::<u64, u32>::new(), 0);
    for f in &files {
        let f = json(&d.join(f));
        assert_eq!((f["version"].as_u64(), f["sample"]["exponent"].as_u64()), (Some(2), Some(0)));
        assert_eq!(sample(&f).len() as u64, f["states"].as_u64().unwrap());
        counted += f["states"].as_u64().unwrap();
        for fp in sample(&f) {
            *union.entry(fp).or_default() += 1;
        }
    }
    let distinct = union.len() as u64;
    let (once, twice) = (union.values().filter(|&&k| k == 1).count(), union.values().filter(|&&k| k == 2).count());
    assert!(distinct > 4000 && distinct < counted, "the searches overlap, and each found new states");
    assert!(out.contains(&format!("covered     {distinct} distinct states ({counted} counted over all")), "{out}");
    assert!(out.contains(&format!("{once} seen by one search, {twice} by two")), "{out}");
    let c = &json(&d.join("merged.json"))["coverage"];
    assert_eq!(
        (c["method"].as_str(), c["distinct"].as_u64(), c["exact"].as_bool()),
        (Some("sample"), Some(distinct), Some(true))
    );
    let (space, percent) = (c["space"].as_u64().unwrap(), c["percent"].as_f64().unwrap());
    assert!(space > distinct, "states seen by one search only: some unseen");
    // The percentage is taken of the estimate itself, which `space` rounds to the nearest state.
    let estimate = 100.0 * distinct as f64 / percent;
    assert!(percent > 0.0 && percent < 100.0 && (estimate - space as f64).abs() <= 0.5, "{c}");
    assert!(out.contains("space       at least about ") && out.contains("covered\n"), "{out}");

    // A search that completes knows the space: every state, 100% covered. Its sample holds every state, as the
    // other search's does, found in another order by another process.
    let small = ["check", "-a", "bully", "-n", "3", "--monitor", "--timed", "--crashes", "1"];
    for i in 0..2 {
        ok(&elect(d, &[&small[..], &["--swarm", &format!("{i}/2"), "--out", "s.json"]].concat(), &[]));
    }
    let (a, b) = (json(&d.join("s.swarm-0-of-2.json")), json(&d.join("s.swarm-1-of-2.json")));
    assert!(a["complete"].as_bool().unwrap() && a["seed"] != b["seed"]);
    assert_eq!(sample(&a), sample(&b), "the same states, the same fingerprints");
    let states = a["states"].as_u64().unwrap();
    let o = elect(d, &["merge", "--json", "--out", "s.json", "s.swarm-0-of-2.json", "s.swarm-1-of-2.json"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let c = &serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["coverage"];
    assert_eq!(
        (c["method"].as_str(), c["space"].as_u64(), c["percent"].as_f64()),
        (Some("complete"), Some(states), Some(100.0))
    );
    let o = elect(d, &["merge", "--out", "s.json", "s.swarm-0-of-2.json", "s.swarm-1-of-2.json"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("space       {states} states, 100% covered (search 0 explored every one)")), "{out}");
}

/// A result file of version 1 has no sample: merged, with the coverage unknown. A sample no search could have
/// written is bad input, naming the file and what is wrong.
#[test]
fn a_swarm_s_merge_takes_old_files_and_refuses_broken_samples() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let check = ["check", "-a", "bully", "-n", "4", "--monitor", "--timed", "--crashes", "1", "--max-states", "300"];
    run_swarm(d, &check, 2, "c.json");
    let good = json(&d.join("c.swarm-1-of-2.json"));
    let merge = |second: &serde_json::Value| {
        std::fs::write(d.join("c.swarm-1-of-2.json"), second.to_string()).unwrap();
        elect(d, &["merge", "--out", "m.json", "c.swarm-0-of-2.json", "c.swarm-1-of-2.json"], &[])
    };
    let mut old = good.clone();
    old["version"] = 1.into();
    old.as_object_mut().unwrap().remove("sample");
    let o = merge(&old);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("covered     unknown: search 1's file (version 1) has no sample"), "{out}");

    let broken = |change: &dyn Fn(&mut serde_json::Value), says: &str| {
        let mut f = good.clone();
        change(&mut f);
        refused(&merge(&f), 2, says);
        refused(&merge(&f), 2, "c.swarm-1-of-2.json");
    };
    broken(&|f| f["sample"]["fingerprints"].as_array_mut().unwrap().reverse(), "not in increasing order");
    broken(&|f| f["sample"]["exponent"] = 65.into(), "past 64");
    broken(&|f| f["states"] = 2.into(), "more than the 2 it saw");
    broken(
        &|f| {
            f.as_object_mut().unwrap().remove("sample");
        },
        "has none",
    );
    broken(&|f| f["sample"]["fingerprints"] = (0..70_000).collect::<Vec<u64>>().into(), "more than 65536");
    old["sample"] = good["sample"].clone();
    refused(&merge(&old), 2, "a file of version 1 has no sample");
}
