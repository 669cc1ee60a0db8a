//! The HTML viewer in a real browser: headless Chromium loads a page `elect sim --html` wrote, and the test reads
//! back the DOM the viewer's script built (`--dump-dom`) at several steps, then saves a screenshot.
//!
//! Chromium comes from Debian's packages (`scripts/install-chromium`), so this test is `#[ignore]`d under a plain
//! `cargo test` and run by `scripts/test` (the README's test command) with `--ignored`. Run alone:
//! `scripts/install-chromium && cargo test -p elect --test browser -- --ignored`. It fails, never skips, when
//! Chromium is missing. `ELECT_CHROMIUM` names another Chromium binary.

#[path = "common/chromium.rs"]
mod chromium;

use std::path::{Path, PathBuf};
use std::process::Command;

use chromium::{HEADLESS, chromium};

/// Runs headless Chromium on `url` with every background connection off and no name resolving, so that the page
/// can fetch nothing; returns its standard output.
fn headless(url: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    // Bounded, so that a browser that hangs fails the test instead of the whole run.
    let output = Command::new("timeout")
        .arg("120")
        .arg(chromium())
        .args(HEADLESS)
        .args(["--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1500,1000"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium starts");
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The value of attribute `name` in the tag that starts at the beginning of `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let tag = &tag[..tag.find('>')?];
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[start..start + tag[start..].find('"')?])
}

/// What the viewer shows at `#step=N`: the step, the node count, and each node's (id, state, leader).
struct Page {
    step: usize,
    nodes: usize,
    in_flight: usize,
    violations: usize,
    rows: Vec<(String, String, String)>,
}

fn page(html: &Path, step: usize) -> Page {
    let dom = headless(&format!("file://{}#step={step}", html.display()), &["--dump-dom"]);
    let body = &dom[dom.find("<body").expect("a body")..];
    let number = |name: &str| attribute(body, name).unwrap_or_else(|| panic!("no {name} on the body")).parse().unwrap();
    let rows = body
        .match_indices("<tr data-node=")
        .map(|(i, _)| {
            let tag = &body[i..];
            let get = |name: &str| attribute(tag, name).unwrap_or_default().to_owned();
            (get("data-node"), get("data-state"), get("data-leader"))
        })
        .collect();
    Page {
        step: number("data-step"),
        nodes: number("data-nodes"),
        in_flight: number("data-in-flight"),
        violations: number("data-violations"),
        rows,
    }
}

/// Writes the viewer of `elect sim ARGS` to `html`; the run must end with exit status `code`.
fn viewer(args: &[&str], html: &Path, code: i32) {
    let made =
        Command::new(env!("CARGO_BIN_EXE_elect")).arg("sim").args(args).arg("--html").arg(html).output().unwrap();
    assert_eq!(made.status.code(), Some(code), "{}", String::from_utf8_lossy(&made.stderr));
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_viewer_steps_through_a_run_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("cr.html");
    viewer(&["-a", "chang-roberts", "-n", "8", "--ids", "descending"], &html, 0);

    let start = page(&html, 0);
    assert_eq!((start.step, start.nodes, start.rows.len()), (0, 8, 8), "eight nodes, one row each");
    assert!(start.rows.iter().all(|(_, state, leader)| state == "normal" && leader.is_empty()));

    // Every node initiates at time 0: a few events in, node 8 is taking part in the election.
    let early = page(&html, 12);
    assert_eq!(early.step, 12);
    let eight = early.rows.iter().find(|(id, ..)| id == "8").expect("a row for node 8");
    assert_eq!(eight.1, "election", "node 8's state changed from normal to election");
    assert!(early.in_flight > 0, "tokens in flight are drawn on the topology");

    // Stepping past the end stops at the last event, where everybody follows 8.
    let end = page(&html, 1_000_000);
    assert!(end.step > 12);
    assert!(end.rows.iter().all(|(_, state, leader)| state == "normal" && leader == "8"), "{:?}", end.rows);
    assert_eq!((start.violations, end.violations), (0, 0));

    // Each process a state card in Chang-Roberts's words, each message in flight a chip with its words on it.
    let dom = headless(&format!("file://{}#step=12", html.display()), &["--dump-dom"]);
    let topology = &dom[dom.find("<svg id=\"topology\"").expect("the topology")..];
    let topology = topology.split("</svg>").next().unwrap();
    assert_eq!(topology.matches("class=\"state-card").count(), 8, "{topology}");
    assert!(topology.contains(">candidate<") && !topology.contains('{'), "cards in the algorithm's words: {topology}");
    // A chip per message in flight, or per few when they would cover each other (its count says how many), or a dot.
    let counted: usize = topology
        .split("data-count=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().parse::<usize>().unwrap())
        .sum();
    let dots = topology.matches("<circle class=\"message\"").count();
    assert!(topology.contains("class=\"message chip\""), "chips: {topology}");
    assert_eq!(counted + dots, early.in_flight, "every message in flight is shown: {topology}");
    assert!(topology.contains(">election(") || topology.contains(">token"), "chips say what they carry: {topology}");

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("viewer.png");
    let _ = std::fs::remove_file(&shot);
    headless(&format!("file://{}#step=30", html.display()), &[&format!("--screenshot={}", shot.display())]);
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "a screenshot of the viewer at {} ({size} bytes)", shot.display());
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_viewer_shows_violations_crashes_and_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let bug = dir.path().join("bug.html");
    viewer(&["-a", "chang-roberts", "-n", "8", "--ids", "random", "--param", "bug=forward-smaller"], &bug, 1);
    let end = page(&bug, 1_000_000);
    assert!(end.violations >= 2, "the broken algorithm's violations are counted: {}", end.violations);
    let faults = dir.path().join("faults.html");
    let run = ["-a", "bully", "-n", "5", "--initiators", "1", "--crash", "5@0", "--partition", "1,2|3,4@1..4"];
    viewer(&run, &faults, 1);
    let start = page(&faults, 1);
    assert_eq!(start.rows.iter().find(|(id, ..)| id == "5").map(|r| r.1.as_str()), Some("down"), "5 crashed at 0");
    assert!(page(&faults, 1_000_000).step > 1, "every record replays to the end");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn a_counterexample_s_viewer_speaks_the_algorithm_s_words() {
    // The checker's shortest disagreement of timed Bully on 4 (its timeouts too short for its delays): at its end
    // 1 and 2 follow 3, which follows 4. The cards say so in Bully's words, as a simulated run's cards do.
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("split.html");
    let made = Command::new(env!("CARGO_BIN_EXE_elect"))
        .args(["check", "-a", "bully", "-n", "4", "--timed", "--delay-bound", "0.4", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(1), "{}", String::from_utf8_lossy(&made.stderr));
    let dom = headless(&format!("file://{}#step=1000000", html.display()), &["--dump-dom"]);
    let topology = &dom[dom.find("<svg id=\"topology\"").expect("the topology")..];
    let topology = topology.split("</svg>").next().unwrap();
    assert_eq!(topology.matches("class=\"state-card").count(), 4, "{topology}");
    let card = |id: u32| {
        let at = topology.find(&format!("data-card=\"{id}\"")).unwrap_or_else(|| panic!("a card for {id}"));
        topology[at..].split("</g>").next().unwrap()
    };
    for (id, leader) in [(1, 3), (2, 3), (3, 4)] {
        let card = card(id);
        assert!(card.contains(">follower<") && card.contains(&format!(">leader {leader}<")), "{id}'s card: {card}");
    }
    assert!(!topology.contains('{'), "no Debug text: {topology}");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_viewer_draws_broken_links_and_invitation_s_groups() {
    let dir = tempfile::tempdir().unwrap();
    let dom = |html: &Path, step: usize| {
        let dom = headless(&format!("file://{}#step={step}", html.display()), &["--dump-dom"]);
        dom[dom.find("<svg id=\"topology\"").expect("the topology")..].split("</svg>").next().unwrap().to_owned()
    };
    // A partition from the start, and a link down one way: red dashes between the sides, orange for 5 → 1.
    let faults = dir.path().join("faults.html");
    let run = ["-a", "bully", "-n", "5", "--partition", "1,2|3,4@0..8", "--link-down", "5>1@0..8", "--until", "20"];
    viewer(&run, &faults, 0);
    let during = dom(&faults, 6);
    // Chromium writes `>` in an attribute as `&gt;`.
    let broken = |value: &str| during.matches(&format!("data-broken=\"{value}\"")).count();
    // Between {1, 2} and {3, 4}: 4 links cut both ways; 5 → 1 one way.
    assert_eq!((broken("both"), broken("5&gt;1")), (4, 1), "{during}");
    assert!(during.contains("5 → 1 is broken (one way)"));
    let healed = dom(&faults, 1_000_000);
    assert!(!healed.contains("data-broken=\"both\""), "the partition healed at 8: {healed}");

    // Invitation's groups: every process ends in one group under 6, drawn as one hull around all six.
    let merge = dir.path().join("merge.html");
    viewer(&["--scenario", "invitation-merge"], &merge, 0);
    let end = dom(&merge, 1_000_000);
    assert_eq!(end.matches("class=\"group\"").count(), 1, "{end}");
    assert!(end.contains(": 1, 2, 3, 4, 5, 6</title>"), "{end}");
}
