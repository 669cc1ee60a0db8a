//! What a replayed path says besides its steps: the messages in flight at the start, and the scenario's faults,
//! each where its time comes.

use elect_check::{CheckConfig, Fault, Step, check, replay};
use elect_core::NodeId;
use elect_scenario::{ScenarioFile, SimConfig};

#[test]
fn a_replayed_path_starts_with_the_messages_the_processes_sent_as_they_started() {
    let sim = SimConfig::new("bully", 3);
    let config = CheckConfig { crashes: 1, ..CheckConfig::new(sim) };
    let outcome = check(&config).unwrap();
    let c = outcome.counterexample.expect("Bully with a crash breaks a property");
    let r = replay(&config, &c.actions).unwrap();
    assert!(r.start_faults.is_empty());
    // Every process initiates: each sends an election to every stronger one.
    let elections: Vec<(u32, u32)> =
        r.in_flight.iter().filter(|m| m.kind == "election").map(|m| (m.from.0, m.to.0)).collect();
    assert_eq!(elections, [(1, 2), (1, 3), (2, 3)], "{:?}", r.in_flight);
    assert!(r.in_flight.iter().all(|m| !m.json.is_null()), "each message as the trace writes it");
    // The path's first step delivers one of them.
    let Step::Deliver { from, to, msg } = &c.path[0] else { panic!("{:?}", c.path) };
    assert!(r.in_flight.iter().any(|m| (m.from, m.to, &m.msg) == (*from, *to, msg)), "{:?}", r.in_flight);
}

fn stoller() -> CheckConfig {
    let text = include_str!("../../../scenarios/stoller.toml");
    let sim = ScenarioFile::parse("stoller.toml", text).unwrap().config;
    CheckConfig { timed: true, ..CheckConfig::new(sim) }
}

#[test]
fn the_scenarios_faults_are_in_the_path_where_their_time_comes() {
    let config = stoller();
    let c = check(&config).unwrap().counterexample.expect("Stoller's scenario breaks A4");
    let faults: Vec<(String, &[Fault])> = c
        .path
        .iter()
        .filter_map(|s| match s {
            Step::Wait { until, faults } if !faults.is_empty() => Some((until.to_string(), faults.as_slice())),
            _ => None,
        })
        .collect();
    let (one, three) = (NodeId(1), NodeId(3));
    let link = Fault::Link { from: one, to: three, both_ways: true, up: false };
    assert_eq!(
        faults,
        [
            ("30".to_owned(), &[Fault::Crash { node: one }, link][..]),
            ("33".to_owned(), &[Fault::Recover { node: one }][..])
        ]
    );
    let wait = c.path.iter().find(|s| matches!(s, Step::Wait { faults, .. } if faults.len() == 2)).unwrap();
    assert_eq!(wait.to_string(), "time passes to 30, when 1 crashes; the link 1-3 goes down");
    let json = serde_json::to_value(wait).unwrap();
    assert_eq!(json["faults"][0], serde_json::json!({"fault": "crash", "node": 1}), "{json}");
    assert_eq!(json["faults"][1]["fault"], "link", "{json}");
    // A wait that brings no fault says so by having none, in JSON too.
    let quiet = c.path.iter().find(|s| matches!(s, Step::Wait { faults, .. } if faults.is_empty())).unwrap();
    assert!(serde_json::to_value(quiet).unwrap().get("faults").is_none());
    // The replay shows the same steps, and nothing in flight at the start (Invitation waits for its first check).
    let r = replay(&config, &c.actions).unwrap();
    assert_eq!(r.steps.iter().map(|s| s.step.clone()).collect::<Vec<_>>(), c.path);
    assert!(r.in_flight.is_empty() && r.start_faults.is_empty());
}

#[test]
fn faults_at_time_zero_are_told_apart_from_the_path() {
    let mut config = stoller();
    config.sim.crashes.push("3@0".parse().unwrap());
    let r = replay(&config, &[]).unwrap();
    assert_eq!(r.start_faults, [Fault::Crash { node: NodeId(3) }]);
    assert!(r.steps.is_empty());
}
