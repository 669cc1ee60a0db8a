//! `elect cluster` end to end: small failover runs with real processes, bad input, and no process left behind.

use std::path::Path;
use std::process::{Command, Output};

fn elect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elect")).args(args).output().expect("elect runs")
}

/// Runs `elect cluster ARGS --json` and returns its exit status and report.
fn cluster(args: &[&str]) -> (i32, serde_json::Value) {
    let o = elect(&[&["cluster", "--json"], args].concat());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().expect("an exit status"), report)
}

/// Whether process `pid` still runs (a zombie would count: children must be reaped too).
fn alive(pid: u64) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The run measured `rounds` failovers, saw no double leader, and left no process or directory behind.
fn check(code: i32, report: &serde_json::Value, rounds: usize) {
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["samples_ms"].as_array().unwrap().len(), rounds, "{report:#}");
    assert_eq!(report["double_leaders"], serde_json::json!([]), "{report:#}");
    assert_eq!(report["failed_rounds"], serde_json::json!([]), "{report:#}");
    assert!(report["stopped"].is_null(), "{report:#}");
    let summary = &report["failover_ms"];
    let (p50, max) = (summary["p50"].as_f64().unwrap(), summary["max"].as_f64().unwrap());
    assert!(0.0 < p50 && p50 <= max, "{summary}");
    for round in report["details"].as_array().unwrap() {
        assert_ne!(round["new_leader"], round["leader"], "{round}");
        assert!(round["new_epoch"].as_u64() > round["epoch"].as_u64(), "{round}");
    }
    let pids = report["pids"].as_array().unwrap();
    // Three members, plus one restart per killed leader.
    assert!(pids.len() >= 3, "{report:#}");
    if cfg!(target_os = "linux") {
        for pid in pids {
            assert!(!alive(pid.as_u64().unwrap()), "member process {pid} outlived the run");
        }
    }
    let data = report["data_dir"].as_str().unwrap();
    assert!(!Path::new(data).exists(), "{data} was not removed");
}

#[test]
fn killing_the_bully_leader_three_times_measures_three_failovers() {
    let (code, report) = cluster(&["--nodes", "3", "--algorithm", "bully", "--kill-leader", "3"]);
    check(code, &report, 3);
    assert_eq!(report["fault"], "kill");
    assert_eq!(report["pids"].as_array().unwrap().len(), 3 + 3, "one restart per round");
    // Bully: the strongest survivor takes over, and the strongest member takes back over when it restarts.
    for round in report["details"].as_array().unwrap() {
        assert_eq!((round["leader"].as_u64(), round["new_leader"].as_u64()), (Some(3), Some(2)), "{round}");
    }
}

#[test]
fn pausing_the_leader_twice_measures_two_failovers_and_the_resumed_leader_is_fenced() {
    let (code, report) = cluster(&["--nodes", "3", "--algorithm", "bully", "--pause-leader", "2"]);
    check(code, &report, 2);
    assert_eq!(report["fault"], "pause");
    assert_eq!(report["pids"].as_array().unwrap().len(), 3, "paused members are continued, not restarted");
    // A resumed leader may go on claiming its old epoch for a moment: reported as a stale claim, below the
    // epoch granted meanwhile.
    for claim in report["stale_claims"].as_array().unwrap() {
        assert!(claim["epoch"].as_u64() < claim["highest"].as_u64(), "{claim}");
    }
}

#[test]
fn the_table_names_the_figures() {
    let o = elect(&["cluster", "--nodes", "2", "--algorithm", "garcia-molina", "--kill-leader", "1"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    for column in ["ROUNDS", "FAILED", "P50 MS", "P90 MS", "P99 MS", "MAX MS", "MEAN MS", "DOUBLE LEADERS"] {
        assert!(stdout.contains(column), "{column}: {stdout}");
    }
    assert!(stdout.contains("2 members, garcia-molina, heartbeat 10 ms (T = 5 ms)"), "{stdout}");
}

#[test]
fn bad_input_exits_2_with_one_clear_line_before_starting_anything() {
    let cases: [(&[&str], &str); 11] = [
        (&["--nodes", "1", "--algorithm", "bully"], "--nodes must be between 2 and 64"),
        (&["--nodes", "65", "--algorithm", "bully"], "--nodes must be between 2 and 64"),
        (&["--nodes", "3", "--algorithm", "paxos"], "unknown algorithm 'paxos'"),
        (&["--nodes", "3", "--algorithm", "floodmax"], "does not run over a full mesh"),
        (&["--nodes", "3", "--algorithm", "bully", "--heartbeat", "0"], "--heartbeat must be at least 1 ms"),
        (&["--nodes", "3", "--algorithm", "bully", "--round-timeout", "0"], "--round-timeout must be at least 1 ms"),
        (&["--nodes", "3", "--algorithm", "bully", "--param", "nonsense=1"], "nonsense"),
        (&["--nodes", "3", "--algorithm", "bully", "--kill-leader", "1", "--pause-leader", "1"], "cannot be used with"),
        (&["--nodes", "3", "--algorithm", "bully", "--key-file", "/nonexistent/key"], "/nonexistent/key"),
        (&["--nodes", "2", "--algorithm", "bully", "--lease"], "--lease needs at least 3 members"),
        (&["--nodes", "3", "--algorithm", "bully", "--param", "lease=on"], "a member takes --lease"),
    ];
    for (args, expected) in cases {
        let o = elect(&[&["cluster"], args].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected) && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn rounds_that_time_out_fail_the_run_and_still_leave_nothing_behind() {
    // No failover takes 1 ms: the suspicion time alone is 20 ms.
    let (code, report) =
        cluster(&["--nodes", "3", "--algorithm", "bully", "--kill-leader", "2", "--round-timeout", "1"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["failed_rounds"].as_array().unwrap().len(), 2, "{report:#}");
    assert_eq!(report["samples_ms"], serde_json::json!([]));
    assert!(report["failover_ms"].is_null());
    for pid in report["pids"].as_array().unwrap() {
        assert!(!alive(pid.as_u64().unwrap()), "member process {pid} outlived the run");
    }
    assert!(!Path::new(report["data_dir"].as_str().unwrap()).exists());
}

#[test]
fn a_keyed_cluster_fails_over_with_every_packet_authenticated() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "a shared secret\n").unwrap();
    let (code, report) =
        cluster(&["--nodes", "3", "--algorithm", "bully", "--kill-leader", "2", "--key-file", key.to_str().unwrap()]);
    check(code, &report, 2);
}

/// The state and parent process id of `pid`, from `/proc/PID/stat` (the fields after the parenthesised name).
#[cfg(target_os = "linux")]
fn stat(pid: u32) -> Option<(String, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    Some((fields.next()?.to_owned(), fields.next()?.parse().ok()?))
}

/// Whether `pid` runs: an orphan that exited may stay a zombie until whatever adopted it reaps it.
#[cfg(target_os = "linux")]
fn running(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != "Z")
}

#[cfg(target_os = "linux")]
#[test]
fn members_go_down_with_a_cluster_command_killed_by_sigkill() {
    use std::time::{Duration, Instant};
    let keep = tempfile::tempdir().unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_elect"))
        .args(["cluster", "--nodes", "3", "--algorithm", "bully", "--kill-leader", "100000", "--keep-data"])
        .arg(keep.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let members = |of: u32| -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| stat(pid).is_some_and(|(_, parent)| parent == of))
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while seen.len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        seen = members(run.id());
    }
    assert!(seen.len() >= 3, "the members did not start: {seen:?}");
    run.kill().unwrap(); // SIGKILL: nothing in the cluster command runs.
    run.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.iter().any(|&pid| running(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = seen.iter().copied().filter(|&pid| running(pid)).collect();
    assert!(left.is_empty(), "members {left:?} outlived their cluster command");
}

/// The network namespaces whose names say that process `pid` created them.
fn namespaces_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().expect("`ip` runs (scripts/install-nemesis)");
    let prefix = format!("elect-{pid}-");
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with(&prefix)).map(str::to_owned).collect()
}

/// Runs `elect cluster --json ARGS` to its end and returns its process id, exit status and report.
/// Nemesis runs one at a time: they judge real time (no two members leading at one instant), and two five-member
/// clusters on a 2-core machine would judge the scheduler as much as the members.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cluster_pid(args: &[&str]) -> (u32, i32, serde_json::Value) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let child = Command::new(env!("CARGO_BIN_EXE_elect"))
        .args([&["cluster", "--json"], args].concat())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("elect runs");
    let pid = child.id();
    let o = child.wait_with_output().expect("elect ends");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&o.stderr)));
    (pid, o.status.code().expect("an exit status"), report)
}

/// Every nemesis round recovered, the history broke nothing, and the namespaces are gone.
fn check_nemesis(pid: u32, code: i32, report: &serde_json::Value, rounds: usize) {
    assert_eq!(code, 0, "{report:#}");
    let nemesis = &report["nemesis"]["rounds"];
    assert_eq!(nemesis.as_array().unwrap().len(), rounds, "{report:#}");
    for r in nemesis.as_array().unwrap() {
        assert!(r["recovery_ms"].as_f64().is_some(), "round not recovered: {r}");
    }
    for field in ["same_epoch_leaders", "epoch_regressions", "stale_writes_accepted"] {
        assert_eq!(report[field], 0, "{field}: {report:#}");
    }
    assert_eq!(report["failed_rounds"], serde_json::json!([]), "{report:#}");
    let availability = report["availability"].as_f64().unwrap();
    assert!(0.0 < availability && availability <= 1.0, "{availability}");
    assert!(namespaces_of(pid).is_empty(), "namespaces left behind: {:?}", namespaces_of(pid));
}

/// Three Bully members; the leader cut off, muted, killed and paused in turn, 1 s each.
const FOUR_FAULTS: [&str; 10] = [
    "--nodes",
    "3",
    "--algorithm",
    "bully",
    "--nemesis",
    "partition-leader,one-way,kill,pause",
    "--nemesis-rounds",
    "4",
    "--nemesis-hold",
    "1000",
];

#[test]
fn the_nemesis_cuts_off_mutes_kills_and_pauses_the_leader_and_the_cluster_recovers_every_time() {
    let (pid, code, report) = cluster_pid(&FOUR_FAULTS);
    check_nemesis(pid, code, &report, 4);
    let kinds: Vec<&str> =
        report["nemesis"]["rounds"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["partition-leader", "one-way", "kill", "pause"]);
    // Cut off, the old leader goes on saying it leads while the majority elects another: classic election's split
    // brain, measured (the fencing epochs keep it safe for a resource that checks them).
    let overlap = &report["leaders_overlap"];
    let (total, longest) = (overlap["total_ms"].as_f64().unwrap(), overlap["longest_ms"].as_f64().unwrap());
    assert!(overlap["stretches"].as_u64().unwrap() >= 1 && longest >= 500.0 && total >= longest, "{overlap}");
    // Every fault took the leader away, and the others elected another while it held.
    for r in report["nemesis"]["rounds"].as_array().unwrap() {
        assert!(r["failover_ms"].as_f64().is_some_and(|f| f < 1000.0), "{r}");
    }
    assert_eq!(report["samples_ms"].as_array().unwrap().len(), 4, "{report:#}");
    assert!(report["writes"]["accepted"].as_u64().unwrap() > 0, "the leaders wrote: {report:#}");
}

#[test]
fn the_nemesis_splits_and_drops_packets_and_garcia_molina_recovers() {
    let (pid, code, report) = cluster_pid(&[
        "--nodes",
        "5",
        "--algorithm",
        "garcia-molina",
        "--nemesis",
        "split,loss:0.2",
        "--nemesis-rounds",
        "2",
        "--nemesis-hold",
        "800",
    ]);
    check_nemesis(pid, code, &report, 2);
    let split = &report["nemesis"]["rounds"][0];
    assert!(split["detail"].as_str().unwrap().starts_with("split {"), "{split}");
}

#[test]
fn bad_nemesis_input_is_refused_with_one_line() {
    for (args, says) in [
        (&["--nemesis", "flood"][..], "unknown --nemesis kind `flood`"),
        (&["--nemesis", "loss:2"][..], "loss:2: P must be above 0 and at most 1"),
        (&["--nemesis", "kill", "--nemesis-rounds", "0"][..], "at least 1"),
        (&["--nemesis", "kill", "--kill-leader", "3"][..], "cannot be used with"),
        (&["--cpu-load", "100000"][..], "--cpu-load must be at most"),
    ] {
        let o = elect(&[&["cluster", "--nodes", "3", "--algorithm", "bully"], args].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn in_the_lease_mode_no_two_members_say_they_lead_at_once_through_every_fault() {
    let (pid, code, report) = cluster_pid(&[&FOUR_FAULTS[..], &["--lease"]].concat());
    check_nemesis(pid, code, &report, 4);
    // The faults that gave two leaders for most of their hold in the classic mode (the test above) give none: the
    // leader cut off, muted or paused stops leading when its lease runs out, before the others may elect another.
    let overlap = &report["leaders_overlap"];
    assert_eq!((overlap["total_ms"].as_f64(), overlap["stretches"].as_u64()), (Some(0.0), Some(0)), "{overlap}");
    for r in report["nemesis"]["rounds"].as_array().unwrap() {
        assert!(r["failover_ms"].as_f64().is_some_and(|f| f < 1000.0), "{r}");
    }
    assert_eq!(report["lease"], true, "{report:#}");
}

/// A leader that hears nobody but is heard (`deaf-leader`): in the classic mode it leads on and nothing changes; in the
/// lease mode no backing reaches it, its lease lapses, it goes quiet, and the other two elect one of them well within
/// the bound of the lease guide (about 90 ms with these timings; 500 ms leaves room for a busy machine), with never
/// two members leading at once.
#[test]
fn a_leader_that_hears_nobody_leads_on_in_the_classic_mode_and_gives_way_in_the_lease_mode() {
    let deaf = ["--nodes", "3", "--algorithm", "bully", "--nemesis", "deaf-leader", "--nemesis-hold", "1000"];
    let (pid, code, report) = cluster_pid(&[&deaf[..], &["--nemesis-rounds", "1"]].concat());
    check_nemesis(pid, code, &report, 1);
    let r = &report["nemesis"]["rounds"][0];
    assert_eq!((r["failover_ms"].as_f64(), r["side_changes"].as_u64()), (None, Some(0)), "{r}");
    assert_eq!(r["leader"], r["after"][0], "{r}");

    let (pid, code, report) = cluster_pid(&[&deaf[..], &["--nemesis-rounds", "2", "--lease"]].concat());
    check_nemesis(pid, code, &report, 2);
    let overlap = &report["leaders_overlap"];
    assert_eq!((overlap["total_ms"].as_f64(), overlap["stretches"].as_u64()), (Some(0.0), Some(0)), "{overlap}");
    for r in report["nemesis"]["rounds"].as_array().unwrap() {
        assert!(r["failover_ms"].as_f64().is_some_and(|f| f < 500.0), "{r}");
        assert!(r["leaderless_ms"].as_f64().is_some_and(|f| f < 1000.0), "{r}");
    }
}

/// Invitation beside a member deaf to its coordinator: the deaf member's pre-votes find the others hear the
/// coordinator, it stays in the group, and the others' leadership does not change; as published
/// (`pre-vote=false`) it forms a group of its own again and again, each a newer epoch the others hear of.
#[test]
fn an_invitation_member_deaf_to_its_coordinator_changes_nothing_for_the_others() {
    let deaf = ["--nodes", "4", "--algorithm", "invitation", "--nemesis", "deaf", "--nemesis-hold", "1000"];
    let changes = |extra: &[&str]| {
        let (pid, code, report) = cluster_pid(&[&deaf[..], &["--nemesis-rounds", "1"], extra].concat());
        check_nemesis(pid, code, &report, 1);
        report["nemesis"]["rounds"][0].clone()
    };
    // With the pre-vote the coordinator leads throughout; as published, the deaf member's own group may even win.
    let r = changes(&[]);
    assert_eq!((r["side_changes"].as_u64(), &r["leader"]), (Some(0), &r["after"][0]), "{r}");
    let published = changes(&["--param", "pre-vote=false"])["side_changes"].as_u64().unwrap();
    assert!(published > 10, "as published, the others' leadership changed only {published} times");
}

/// Every change of the voters was done, each at its first or second try, and the voters went through `cycle`.
fn check_changes(report: &serde_json::Value, cycle: &[&str]) {
    let changes = report["changes"].as_array().unwrap();
    let asked: Vec<&str> = changes.iter().map(|c| c["change"].as_str().unwrap()).collect();
    assert_eq!(asked, cycle, "{report:#}");
    for c in changes {
        assert!(c["done_ms"].as_f64().is_some(), "a change not done: {c}");
        assert!(c["leaderless_ms"].as_f64().is_some_and(|l| l >= 0.0), "{c}");
        let after: Vec<u64> = c["after"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        let before: Vec<u64> = c["before"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        let (what, id) = c["change"].as_str().unwrap().split_once(' ').unwrap();
        let id: u64 = id.parse().unwrap();
        // What the leader holds afterwards: the voters before, with the member added or removed.
        let mut expected = before.clone();
        if what == "add" {
            expected.push(id);
            expected.sort_unstable();
        } else {
            expected.retain(|&v| v != id);
        }
        assert_eq!(after, expected, "{c}");
    }
}

#[test]
fn the_voters_grow_and_shrink_while_the_leader_is_killed_and_every_change_is_done() {
    let (code, report) = cluster(&[
        "--nodes",
        "5",
        "--algorithm",
        "bully",
        "--lease",
        "--voters",
        "3",
        "--change-voters",
        "--kill-leader",
        "4",
    ]);
    check(code, &report, 4);
    assert_eq!(report["voters"], 3);
    // Three to five and back, one member per round; each shrink removes the member elected while the leader was
    // down.
    let changes = report["changes"].as_array().unwrap();
    let sizes: Vec<usize> = changes.iter().map(|c| c["after"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, [4, 5, 4, 3], "{report:#}");
    let cycle: Vec<&str> = changes.iter().map(|c| c["change"].as_str().unwrap()).collect();
    assert_eq!(cycle[..2], ["add 4", "add 5"], "{report:#}");
    for (c, round) in changes.iter().zip(report["details"].as_array().unwrap()) {
        if c["change"].as_str().unwrap().starts_with("remove") {
            assert_eq!(c["change"], format!("remove {}", round["new_leader"]), "{c} {round}");
        }
    }
    check_changes(&report, &cycle);
    assert_eq!(report["leaders_overlap"]["stretches"], 0, "{report:#}");
}

/// Five Bully members in the lease mode, voters 1, 2 and 3 at the start: grown to five and shrunk back to three,
/// and again, one member per round, while the nemesis cuts the leader off, mutes it, pauses it, kills it, splits
/// the cluster and drops packets.
#[test]
fn under_the_nemesis_the_voters_grow_to_five_and_shrink_to_three_with_never_two_leaders_at_once() {
    let (pid, code, report) = cluster_pid(&[
        "--nodes",
        "5",
        "--algorithm",
        "bully",
        "--lease",
        "--voters",
        "3",
        "--change-voters",
        "--nemesis",
        "partition-leader,one-way,pause,kill,split,deaf-leader,loss:0.2,deaf",
        "--nemesis-rounds",
        "8",
        "--nemesis-hold",
        "600",
    ]);
    check_nemesis(pid, code, &report, 8);
    let changes = report["changes"].as_array().unwrap();
    let sizes: Vec<usize> = changes.iter().map(|c| c["after"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, [4, 5, 4, 3, 4, 5, 4, 3], "{report:#}");
    let cycle: Vec<&str> = changes.iter().map(|c| c["change"].as_str().unwrap()).collect();
    check_changes(&report, &cycle);
    let overlap = &report["leaders_overlap"];
    assert_eq!((overlap["total_ms"].as_f64(), overlap["stretches"].as_u64()), (Some(0.0), Some(0)), "{overlap}");
    for pid in report["pids"].as_array().unwrap() {
        assert!(!alive(pid.as_u64().unwrap()), "process {pid} outlived the run");
    }
}

#[test]
fn bad_voters_input_is_refused_with_one_line() {
    for (args, says) in [
        (&["--nodes", "5", "--voters", "9"][..], "--voters must be between 1 and --nodes (5), not 9"),
        (&["--nodes", "5", "--voters", "2", "--lease"][..], "--lease needs at least 3 voters, not 2"),
        (&["--nodes", "5", "--change-voters"][..], "--voters <K>"),
        (&["--nodes", "5", "--voters", "5", "--change-voters"][..], "give --voters below --nodes (5)"),
        (&["--nodes", "5", "--voters", "2", "--change-voters"][..], "--voters of at least 3, not 2"),
    ] {
        let o = elect(&[&["cluster", "--algorithm", "bully"], args].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
