//! `elect check`'s counterexample as it prints it and as its viewer replays it: the messages in flight at the
//! start (step 0), every step of the path, and the scenario's faults, each a step of its own.

use std::process::Command;

fn elect(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_elect")).args(args).output().expect("elect runs");
    assert_eq!(o.status.code(), Some(1), "a violation: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The numbered lines of a printed path, as (number, text).
fn steps(out: &str) -> Vec<(usize, String)> {
    out.lines()
        .filter_map(|l| {
            let (n, rest) = l.trim_start().split_once(". ")?;
            Some((n.parse().ok()?, rest.to_owned()))
        })
        .collect()
}

/// The number of steps the path's header announces.
fn announced(out: &str) -> usize {
    let header = out.lines().find(|l| l.starts_with("shortest path (")).expect("a path");
    header["shortest path (".len()..].split(' ').next().unwrap().parse().unwrap()
}

/// The trace records of the viewer `elect check --html` wrote.
fn viewer_records(args: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("path.html");
    let mut all = args.to_vec();
    all.extend(["--html", html.to_str().unwrap()]);
    elect(&all);
    let page = std::fs::read_to_string(&html).unwrap();
    // The space-time picture counts the path's steps across, not time, and has no seed.
    assert!(page.contains("across: the path&#39;s steps"), "the space-time picture counts steps");
    assert!(page.contains("a path the checker found") && !page.contains("time in units"));
    let data = page.split("id=\"elect-data\">").nth(1).unwrap().split("</script>").next().unwrap();
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    data["records"].as_array().unwrap().clone()
}

/// The steps the viewer counts in `records`: every record but the run, the end, and what follows a step (the
/// messages a crash for good drops among them).
fn viewer_steps(records: &[serde_json::Value]) -> usize {
    const FOLLOWS: [&str; 9] = ["send", "status", "parent", "rule", "view", "notice", "violation", "arm", "disarm"];
    let follows = |r: &serde_json::Value| FOLLOWS.contains(&r["ev"].as_str().unwrap()) || r["reason"] == "crash";
    records.iter().filter(|r| !["run", "end"].contains(&r["ev"].as_str().unwrap()) && !follows(r)).count()
}

/// Checks that every timer that fires in `records` was set before, and not cancelled since (a crash cancels them
/// all), as the viewer draws it; returns how many were set and how many fired.
fn timers_set_before_they_fire(records: &[serde_json::Value]) -> (usize, usize) {
    let mut set: Vec<(u64, String)> = Vec::new();
    let (mut armed, mut fired) = (0, 0);
    for r in records {
        let key = || (r["node"].as_u64().unwrap(), r["text"].as_str().unwrap().to_owned());
        match r["ev"].as_str().unwrap() {
            "arm" => {
                armed += 1;
                set.retain(|k| *k != key());
                set.push(key());
            }
            "disarm" => {
                assert!(set.contains(&key()), "a timer cancelled that was not set: {r}");
                set.retain(|k| *k != key());
            }
            "timer" => {
                fired += 1;
                assert!(set.contains(&key()), "a timer fired that was not set: {r}");
                set.retain(|k| *k != key());
            }
            "crash" => set.retain(|k| k.0 != r["node"].as_u64().unwrap()),
            _ => {}
        }
    }
    (armed, fired)
}

#[test]
fn the_path_starts_with_the_messages_in_flight_and_the_viewer_shows_each_step() {
    let args = ["check", "-a", "bully", "-n", "3", "--crashes", "1"];
    let out = elect(&args);
    let numbered = steps(&out);
    assert_eq!(numbered[0].0, 0, "{out}");
    assert_eq!(numbered[0].1, "at the start, in flight:", "{out}");
    // One message a line, under step 0.
    let after = out.lines().skip_while(|l| !l.ends_with("0. at the start, in flight:")).nth(1).unwrap();
    assert!(after.trim_start().starts_with("election (epoch 1.1) from 1 to 2"), "{out}");
    assert_eq!(numbered.len() - 1, announced(&out), "{out}");
    let records = viewer_records(&args);
    assert_eq!(records[0]["steps"], true);
    assert_eq!(viewer_steps(&records), announced(&out), "the viewer shows as many steps as the path");
    // This path's crash is for good: what was on its way to the crashed process is dropped with it, not left in
    // flight.
    let crash = records.iter().position(|r| r["ev"] == "crash").expect("the path crashes a process");
    assert_eq!(records[crash + 1]["ev"], "drop", "{:?}", &records[crash..]);
    assert_eq!(records[crash + 1]["reason"], "crash");
    assert_eq!(records[crash + 1]["node"], records[crash]["node"]);
    // The timers the processes set, from the start.
    let (armed, _) = timers_set_before_they_fire(&records);
    assert!(records.iter().take_while(|r| r["ev"] != "deliver").any(|r| r["ev"] == "arm"), "{records:?}");
    assert!(armed >= 3, "{records:?}");
    // The messages in flight at the start are sent at time 0, before the first step, and all arrive or stay.
    let first = records.iter().position(|r| !["run", "status", "send"].contains(&r["ev"].as_str().unwrap()));
    let start = &records[1..first.unwrap()];
    assert!(start.iter().filter(|r| r["ev"] == "send").count() >= 3, "{start:?}");
    assert!(start.iter().all(|r| r["t"].as_f64() == Some(0.0)), "{start:?}");
    let delivered = records.iter().filter(|r| r["ev"] == "deliver").count();
    let first_step = &numbered[1].1;
    assert!(first_step.contains(" receives "), "{first_step}");
    assert!(delivered >= numbered.iter().filter(|(_, s)| s.contains(" receives ")).count());
    // Every delivery follows its send.
    for r in records.iter().filter(|r| r["ev"] == "deliver") {
        let sent = records.iter().find(|s| s["ev"] == "send" && s["id"] == r["id"]).expect("its send");
        assert!(sent["t"].as_f64() < r["t"].as_f64(), "{sent} before {r}");
    }
}

#[test]
fn the_scenarios_faults_are_steps_of_the_printed_path_and_of_the_viewer() {
    let args = ["check", "--scenario", "stoller", "--timed"];
    let out = elect(&args);
    let numbered = steps(&out);
    assert_eq!(numbered.last().unwrap().0, announced(&out), "{out}");
    assert_eq!(numbered[0].1, "at the start, in flight: nothing");
    let at = |text: &str| numbered.iter().position(|(_, s)| s == text).unwrap_or_else(|| panic!("{text}:\n{out}"));
    let crash = at("1 crashes");
    assert_eq!(numbered[crash - 1].1, "time passes to 30");
    assert_eq!(numbered[crash + 1].1, "the link 1-3 goes down");
    assert_eq!(numbered[at("1 recovers") - 1].1, "time passes to 33");
    // 443 of the model's steps, and 3 faults.
    assert_eq!(announced(&out), 446, "{out}");
    let records = viewer_records(&args);
    assert_eq!(viewer_steps(&records), 446);
    let crash = records.iter().find(|r| r["ev"] == "crash").unwrap();
    assert_eq!((crash["node"].as_u64(), crash["t"].as_f64()), (Some(1), Some(numbered[at("1 crashes")].0 as f64)));
    let link = records.iter().find(|r| r["ev"] == "link").unwrap();
    assert_eq!(link["t"].as_f64(), Some(crash["t"].as_f64().unwrap() + 1.0), "{link}");
    assert_eq!((&link["both_ways"], &link["up"]), (&true.into(), &false.into()), "{link}");
    assert!(records.iter().any(|r| r["ev"] == "recover" && r["node"] == 1));
    let (armed, fired) = timers_set_before_they_fire(&records);
    assert!(fired > 0 && armed >= fired, "{armed} timers set, {fired} fired");
}
