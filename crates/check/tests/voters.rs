//! Changes of the voters, explored: one member added (3 → 4 voters) or removed (4 → 3), and one of each in turn,
//! with a crash at any moment, in the lease mode and without; and the planted flaw `hasty-change`, which a change
//! of each kind in one instant, under a partition, shows.

use elect_algos::Params;
use elect_check::{CheckConfig, Fault, Outcome, Step, check, replay};
use elect_scenario::{Monitor, SimConfig};

/// Four members running `algorithm`'s deployed process, timed, as `configure` sets them up.
fn four(algorithm: &str, configure: impl FnOnce(&mut CheckConfig)) -> (CheckConfig, Outcome) {
    let mut sim = SimConfig::new(algorithm, 4);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    configure(&mut config);
    let outcome = check(&config).unwrap_or_else(|e| panic!("{algorithm}: {e}"));
    (config, outcome)
}

fn verdict(o: &Outcome, property: &str) -> &'static str {
    o.verdicts.iter().find(|v| v.property == property).map_or("not judged", |v| v.result)
}

fn params(lease: bool, more: &[&str]) -> Params {
    let lease = lease.then_some("lease=on");
    Params::parse(lease.into_iter().chain(more.iter().copied())).unwrap()
}

#[test]
fn a_change_of_the_voters_keeps_one_grant_per_epoch_and_one_leader_under_a_crash_at_any_moment() {
    // (the voters the members start with, the member added, the member removed)
    let changes = [(Some("voters=1,2,3"), Some("4@20"), None), (None, None, Some("1@20"))];
    for algorithm in ["bully", "garcia-molina"] {
        for lease in [false, true] {
            for (voters, add, remove) in changes {
                let (_, o) = four(algorithm, |c| {
                    c.crashes = 1;
                    c.sim.params = params(lease, voters.as_slice());
                    c.sim.add_voters.extend(add.map(|a| a.parse::<elect_scenario::NodeAt>().unwrap()));
                    c.sim.remove_voters.extend(remove.map(|r| r.parse::<elect_scenario::NodeAt>().unwrap()));
                });
                let case = format!("{algorithm}, lease {lease}, add {add:?}, remove {remove:?}");
                assert!(o.ok() && o.complete, "{case}: {:?}", o.counterexample);
                let mut held = vec!["uniqueness", "liveness", "agreement", "live-leader"];
                if lease {
                    held.push("one-leader");
                }
                for property in held {
                    assert_eq!(verdict(&o, property), "held", "{case}: {property}");
                }
                // A learner does not lead, however strong: the strongest live process leading is not judged.
                assert_eq!(verdict(&o, "safety"), "not judged", "{case}");
            }
        }
    }
}

#[test]
fn a_hasty_change_is_found_two_leaders_at_once_and_the_path_replays() {
    // 4 is added and 1 removed in one instant, while 1 and 2 are cut off from 3 and 4: done as soon as the leader
    // holds it, the second change leaves 1 and 2 with the voters 1, 2 and 3, of which they are a majority, and 3
    // and 4 with 2, 3 and 4, of which they are one.
    let setup = |bug: &'static [&'static str]| {
        move |c: &mut CheckConfig| {
            let mut more = vec!["voters=1,2,3"];
            more.extend(bug);
            c.sim.params = params(true, &more);
            c.sim.add_voters.push("4@20".parse().unwrap());
            c.sim.remove_voters.push("1@20".parse().unwrap());
            c.sim.partitions.push("1,2|3,4@19".parse().unwrap());
            c.sim.only = vec![elect_core::Property::OneLeader, elect_core::Property::Uniqueness];
        }
    };
    for algorithm in ["bully", "garcia-molina"] {
        let (_, o) = four(algorithm, setup(&[]));
        assert!(o.ok() && o.complete, "{algorithm}: {:?}", o.counterexample);
        assert_eq!(verdict(&o, "one-leader"), "held", "{algorithm}");

        let (c, o) = four(algorithm, setup(&["monitor-bug=hasty-change"]));
        let found = o.counterexample.unwrap_or_else(|| panic!("{algorithm}: the planted flaw is not found"));
        assert_eq!(found.property, "one-leader", "{algorithm}");
        assert!(found.detail.contains("both say they lead"), "{algorithm}: {}", found.detail);
        let changes: Vec<&Fault> = found
            .path
            .iter()
            .flat_map(|s| if let Step::Wait { faults, .. } = s { faults.as_slice() } else { &[] })
            .filter(|f| matches!(f, Fault::Voters { .. }))
            .collect();
        assert_eq!(changes.len(), 2, "{algorithm}: both changes are steps of the path: {changes:?}");
        assert_eq!(changes[0].to_string(), "the voters change (add 4), asked of 1, 2, 3, 4");
        let r = replay(&c, &found.actions).unwrap();
        let last = r.steps.last().unwrap();
        assert!(last.violations.iter().any(|v| v.property.name() == "one-leader"), "{algorithm}");
    }
}
