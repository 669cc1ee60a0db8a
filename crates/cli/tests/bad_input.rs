//! Hostile command lines, as a table: each row is a command line, the exit status it must end with, a piece of
//! what it must say on standard error, and the seconds it may take. A row that exits 2 must say so on one line
//! that repeats no more than a hundred-odd characters of any value; no row may panic (exit 101) or hang.
//!
//! `{dir}` in a row stands for a directory of fixtures made once for the table: `fifo` (a named pipe that nothing
//! reads or writes), `key` (a key file), `empty` (an empty file), state directories (`fifo-state`, `zero-state`,
//! `huge-state`: a state file that is a named pipe, a link to /dev/zero, a sparse 3 GB file), and counterexample
//! files whose check arguments are hostile (`million.json`, `help.json`).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// One hostile command line and what elect must do with it.
struct Row {
    /// What the row is about (named in failures).
    name: &'static str,
    /// The arguments after `elect`, with `{dir}` for the fixtures' directory.
    args: &'static [&'static str],
    /// The exit status.
    code: i32,
    /// A piece of standard error.
    says: &'static str,
    /// The most seconds it may take.
    seconds: u64,
}

const fn row(name: &'static str, args: &'static [&'static str], code: i32, says: &'static str, seconds: u64) -> Row {
    Row { name, args, code, says, seconds }
}

const MAX: &str = "18446744073709551615";
const LONG_LABEL: &str = "ok=a-label-of-forty-one-characters-is-too-long";
const MEMBER: [&str; 9] = ["node", "--id", "1", "--listen", "127.0.0.1:0", "--peer", "2=127.0.0.1:9", "-a", "bully"];

/// The table. Rows of `elect node` stop once their standard input (empty) closes.
const ROWS: &[Row] = &[
    // Values whose periods overflow virtual time.
    row(
        "heartbeat-max",
        &["sim", "-a", "bully", "-n", "5", "--monitor", "--heartbeat", MAX],
        2,
        "--heartbeat 18446744073709551615 is more than 1000000",
        5,
    ),
    row(
        "check-heartbeat-max",
        &["check", "-a", "bully", "-n", "3", "--monitor", "--heartbeat", MAX],
        2,
        "is more than 1000000",
        5,
    ),
    row(
        "gm-check-max",
        &["sim", "-a", "garcia-molina", "-n", "5", "--param", "check=18446744073709551615"],
        2,
        "parameter check=18446744073709551615 is invalid: at most 1000000",
        5,
    ),
    row(
        "invitation-merge-max",
        &["sim", "-a", "invitation", "-n", "5", "--param", "merge=18446744073709551615"],
        2,
        "parameter merge=18446744073709551615 is invalid: at most 1000000",
        5,
    ),
    row(
        "ad-hoc-heartbeat-max",
        &["sim", "-a", "ad-hoc", "-n", "5", "--param", "heartbeat=18446744073709551615"],
        2,
        "parameter heartbeat=18446744073709551615 is invalid: at most 1000000",
        5,
    ),
    row(
        "check-invitation-timeout",
        &["check", "-a", "invitation", "-n", "3", "--param", "timeout=18446744073709552"],
        2,
        "parameter timeout=18446744073709552 is invalid",
        5,
    ),
    row(
        "delay-bound-long",
        &["sim", "-a", "bully", "-n", "3", "--delay-bound", "1e9"],
        2,
        "the delay bound T = 1000000000 time units is more than the 4000000",
        5,
    ),
    // Time limits beyond what a clock holds.
    row(
        "max-time-1e308",
        &["check", "-a", "bully", "-n", "3", "--max-time", "1e308"],
        2,
        "--max-time 1e308 is more than the longest limit",
        5,
    ),
    row(
        "max-time-max",
        &["check", "-a", "bully", "-n", "3", "--max-time", MAX],
        2,
        "--max-time 1.8446744073709552e19 is more than",
        5,
    ),
    row(
        "serve-max-seconds-1e308",
        &["serve", "--max-seconds", "1e308"],
        2,
        "--max-seconds 1e308 is more than the longest limit",
        5,
    ),
    row(
        "serve-max-seconds-negative",
        &["serve", "--max-seconds", "-1"],
        2,
        "--max-seconds must be a positive number of seconds, not -1",
        5,
    ),
    // Negative values reach the flag's own parser.
    row(
        "loss-negative",
        &["sim", "-a", "bully", "-n", "3", "--loss", "-0.1"],
        2,
        "probability '-0.1' is not between 0 and 1",
        5,
    ),
    row(
        "delay-minus-inf",
        &["sim", "-a", "bully", "-n", "3", "--delay", "-inf"],
        2,
        "for '--delay <DELAY>': malformed delay '-inf'",
        5,
    ),
    row("tour-seed-negative", &["tour", "--seed", "-1"], 2, "invalid value '-1' for '--seed <SEED>'", 5),
    row("sweep-sizes-negative", &["sweep", "--algorithms", "lelann", "-n", "-1..4"], 2, "malformed sizes '-1..4'", 5),
    row(
        "shard-negative",
        &["sweep", "--algorithms", "lelann", "--nodes", "4", "--shard", "-1/2"],
        2,
        "'-1' is not a shard index",
        5,
    ),
    // Files that are not files.
    row(
        "trace-fifo",
        &["sim", "-a", "lelann", "-n", "3", "--trace", "{dir}/fifo"],
        2,
        "a named pipe that nothing reads",
        5,
    ),
    row(
        "node-key-fifo",
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
            "{dir}/data",
            "--key-file",
            "{dir}/fifo",
        ],
        2,
        "the key file {dir}/fifo is not a regular file",
        5,
    ),
    row(
        "cluster-key-fifo",
        &["cluster", "-n", "3", "-a", "bully", "--kill-leader", "1", "--key-file", "{dir}/fifo"],
        2,
        "the key file {dir}/fifo is not a regular file",
        5,
    ),
    row(
        "state-fifo",
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
            "{dir}/fifo-state",
            "--stop-on-stdin-close",
        ],
        0,
        "reason=not a regular file",
        10,
    ),
    row(
        "state-dev-zero",
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
            "{dir}/zero-state",
            "--stop-on-stdin-close",
        ],
        0,
        "reason=not a regular file",
        10,
    ),
    row(
        "state-3gb",
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
            "{dir}/huge-state",
            "--stop-on-stdin-close",
        ],
        0,
        "longer than a state file can be",
        10,
    ),
    row(
        "merge-empty",
        &["merge", "--out", "{dir}/merged.csv", "{dir}/empty"],
        2,
        "{dir}/empty is empty: not a shard file",
        5,
    ),
    // Work that would not end: refused before it starts, or bounded.
    row(
        "replay-million",
        &["sim", "--replay", "{dir}/million.json"],
        2,
        "1000000 processes is more than the 64 elect check accepts",
        5,
    ),
    row(
        "replay-help",
        &["sim", "--replay", "{dir}/help.json"],
        2,
        "its check arguments: --help and --version are not arguments of a check",
        5,
    ),
    row(
        "mobility-forever",
        &[
            "sim",
            "-a",
            "ad-hoc",
            "-n",
            "50",
            "-t",
            "geometric:0.3",
            "--mobility",
            "waypoint:0.000001",
            "--mobility-until",
            "1e12",
        ],
        2,
        "50 nodes moving for 1000000000000 time units",
        5,
    ),
    row(
        "html-millions",
        &["sim", "-a", "chang-roberts", "-n", "4194304", "--svg", "{dir}/big.svg", "--html", "{dir}/big.html"],
        2,
        "--html: the HTML viewer shows at most 1000 processes, and this run has 4194304",
        5,
    ),
    row(
        "topology-svg-millions",
        &["sim", "-a", "chang-roberts", "-n", "4194304", "--topology-svg", "{dir}/big.svg"],
        2,
        "the topology picture shows at most 10000 processes",
        5,
    ),
    row(
        "random-regular-dense",
        &["sim", "-a", "floodmax", "-n", "1000", "-t", "random-regular:998", "--param", "diameter=2"],
        0,
        "",
        15,
    ),
    row(
        "random-regular-dense-no-diameter",
        &["sim", "-a", "floodmax", "-n", "1000", "-t", "random-regular:998"],
        2,
        "too large to measure; give an upper bound with --param diameter=D",
        10,
    ),
    row(
        "every-arrangement-max-time",
        &[
            "check",
            "-a",
            "bully",
            "-n",
            "5",
            "--every-arrangement",
            "--network",
            "duplicating",
            "--crashes",
            "1",
            "--max-time",
            "1",
        ],
        1,
        "",
        6,
    ),
    // Refusals that say what is wrong, in one line.
    row("long-topology", &["sim", "-a", "floodmax", "-n", "3", "-t", "{long}"], 2, "more characters", 5),
    row(
        "long-file-topology",
        &["sim", "-a", "floodmax", "-n", "3", "-t", "file:{dir}/long-line"],
        2,
        "more characters",
        5,
    ),
    // Scenario names and label maps.
    row("scenario-unknown-name", &["sim", "--scenario", "stoler"], 2, "no scenario of that name ships with elect", 5),
    row("check-scenario-unknown-name", &["check", "--scenario", "nope"], 2, "no scenario of that name", 5),
    row("labels-fifo", &["sim", "-a", "bully", "-n", "3", "--labels", "{dir}/fifo"], 2, "label file", 5),
    row("labels-empty-key", &["sim", "-a", "bully", "-n", "3", "--label", "=x"], 2, "'' is not a message kind", 5),
    row("labels-control", &["sim", "-a", "bully", "-n", "3", "--label", "ok=a\u{7}b"], 2, "printable", 5),
    row("labels-long", &["check", "-a", "bully", "-n", "3", "--label", LONG_LABEL], 2, "1 to 40", 5),
];

/// The long value of a row (`{long}`): 131,000 bytes.
fn long() -> String {
    format!("grid:{}", "9".repeat(131_000))
}

/// The fixtures `{dir}` names.
fn fixtures(dir: &Path) {
    let mkfifo = |p: &Path| assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
    mkfifo(&dir.join("fifo"));
    std::fs::write(dir.join("key"), "secret\n").unwrap();
    std::fs::write(dir.join("empty"), "").unwrap();
    for state in ["fifo-state", "zero-state", "huge-state", "data"] {
        std::fs::create_dir(dir.join(state)).unwrap();
    }
    mkfifo(&dir.join("fifo-state/state"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero-state/state")).unwrap();
    std::fs::File::create(dir.join("huge-state/state")).unwrap().set_len(3 << 30).unwrap();
    // A topology file of one line of 10 MB.
    std::fs::write(dir.join("long-line"), "7".repeat(10 << 20)).unwrap();
    // A counterexample file as `elect check --save` writes it, with other check arguments.
    let saved = dir.join("saved.json");
    let ran = common::run(
        &["check", "-a", "bully", "-n", "3", "--save", saved.to_str().unwrap()],
        Duration::from_secs(20),
        1 << 30,
    );
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let good: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let counterexample = |check: &[&str]| {
        let mut file = good.clone();
        file["check"] = serde_json::json!(check);
        file.to_string()
    };
    std::fs::write(
        dir.join("million.json"),
        counterexample(&["-a", "bully", "-n", "1000000", "--max-nodes", "2000000"]),
    )
    .unwrap();
    std::fs::write(dir.join("help.json"), counterexample(&["-a", "bully", "-n", "3", "--help"])).unwrap();
}

#[test]
fn every_hostile_command_line_ends_in_time_and_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    let root = dir.path().to_str().unwrap();
    let long = long();
    let mut failed = Vec::new();
    for r in ROWS {
        let args: Vec<String> =
            r.args.iter().map(|a| if *a == "{long}" { long.clone() } else { a.replace("{dir}", root) }).collect();
        let ran = common::run(&args, Duration::from_secs(r.seconds), 1 << 30);
        let says = r.says.replace("{dir}", root);
        let mut wrong = Vec::new();
        if ran.killed {
            wrong.push(format!("still running after {} s, or over 1 GiB (peak {} MiB)", r.seconds, ran.peak >> 20));
        }
        if ran.code != Some(r.code) {
            wrong.push(format!("exit {:?}, not {}", ran.code, r.code));
        }
        if !ran.stderr.contains(&says) {
            wrong.push(format!("standard error does not say '{says}'"));
        }
        if ran.stderr.contains("panicked") {
            wrong.push("a panic".to_owned());
        }
        if r.code == 2 && (ran.stderr.lines().count() != 1 || ran.stderr.len() > 800) {
            wrong.push(format!(
                "{} lines, {} bytes, where one short line is due",
                ran.stderr.lines().count(),
                ran.stderr.len()
            ));
        }
        if !wrong.is_empty() {
            let err: String = ran.stderr.chars().take(600).collect();
            failed.push(format!("{}: {} ({:.1} s)\n  stderr: {err}", r.name, wrong.join("; "), ran.took.as_secs_f64()));
        }
    }
    assert!(failed.is_empty(), "{} of {} rows failed:\n{}", failed.len(), ROWS.len(), failed.join("\n"));
}

#[test]
fn bare_elect_lists_the_commands_on_standard_error() {
    let ran = common::run::<&str>(&[], Duration::from_secs(5), 1 << 30);
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(ran.stdout.is_empty());
    for command in ["sim", "check", "sweep", "merge", "node", "serve"] {
        assert!(ran.stderr.lines().any(|l| l.trim_start().starts_with(command)), "{command}: {}", ran.stderr);
    }
}

#[test]
fn a_member_reads_no_more_of_a_state_file_than_one_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::File::create(dir.path().join("data/state")).unwrap().set_len(3 << 30).unwrap();
    let data = dir.path().join("data");
    let mut args: Vec<String> = MEMBER.iter().map(|s| (*s).to_owned()).collect();
    args.extend(["--data-dir".to_owned(), data.to_str().unwrap().to_owned(), "--stop-on-stdin-close".to_owned()]);
    let ran = common::run(&args, Duration::from_secs(10), 200 << 20);
    assert!(!ran.killed && ran.code == Some(0), "peak {} MiB: {}", ran.peak >> 20, ran.stderr);
    assert!(ran.peak < 100 << 20, "peak {} MiB", ran.peak >> 20);
    assert!(data.join("state.damaged").exists(), "set aside");
}

#[path = "common/server.rs"]
mod server;

/// The same values through `elect serve`'s API: 400 naming them, and a request past its time limit stops its work,
/// so the next requests are served.
#[test]
fn the_server_refuses_the_same_values_and_stops_work_past_its_time_limit() {
    let server = server::Server::start(&["--max-seconds", "1", "--max-requests", "2"]);
    for (method, path, body, says) in [
        (
            "GET",
            "/api/sim?algorithm=bully&nodes=5&monitor=&heartbeat=18446744073709551615",
            None,
            "is more than 1000000",
        ),
        ("GET", "/api/sim?algorithm=garcia-molina&nodes=5&param=check%3D18446744073709551615", None, "at most 1000000"),
        ("GET", "/api/check?algorithm=bully&nodes=3&max-time=1e308", None, "more characters …]"),
        (
            "POST",
            "/api/explore",
            Some(r#"{"algorithm": "bully", "nodes": 3, "monitor": true, "heartbeat": "18446744073709551615"}"#),
            "is more than 1000000",
        ),
    ] {
        let reply = server.request(method, path, body);
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert!(reply.body.contains(says), "{path}: {}", reply.body);
    }
    let slow = "/api/check?algorithm=bully&nodes=5&every-arrangement=&network=duplicating&crashes=1";
    let addr = server.addr.clone();
    let both: Vec<_> = (0..2)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || server::request(&addr, "GET", slow, None))
        })
        .collect();
    for reply in both {
        let reply = reply.join().unwrap();
        assert_eq!(reply.status, 400, "{}", reply.body);
    }
    // Their work stopped with their answers: a small run is served at once.
    std::thread::sleep(Duration::from_millis(500));
    let reply = server.get("/api/sim?algorithm=bully&nodes=5");
    assert_eq!(reply.status, 200, "{}", reply.body);
}
