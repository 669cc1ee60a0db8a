//! A crash with no recovery left drops what is on its way to the crashed process; a replayed step says which
//! messages it dropped (`lost`), so that every view can show them lost rather than let them vanish.

use elect_check::{Action, CheckConfig, replay};
use elect_scenario::SimConfig;

#[test]
fn a_crash_for_good_says_what_it_dropped() {
    let sim = SimConfig::new("bully", 3);
    let config = CheckConfig { crashes: 1, ..CheckConfig::new(sim) };
    // At the start the elections of 1 and 2 are on their way to 3; 3 (position 2) crashes at once.
    let r = replay(&config, &[Action::Crash { node: 2 }]).unwrap();
    let to_3: Vec<_> = r.in_flight.iter().filter(|m| m.to.0 == 3).map(|m| (m.from.0, m.msg.clone())).collect();
    assert!(!to_3.is_empty(), "{:?}", r.in_flight);
    let mut lost: Vec<_> = r.steps[0].lost.iter().map(|m| (m.from.0, m.msg.clone())).collect();
    lost.sort();
    let mut expected = to_3;
    expected.sort();
    assert_eq!(lost, expected, "the crash drops exactly what was on its way to 3");
    assert!(r.steps[0].sent.is_empty());
}

#[test]
fn with_a_recovery_left_nothing_is_dropped_at_the_crash() {
    let sim = SimConfig::new("bully", 3);
    let config = CheckConfig { crashes: 1, recoveries: 1, ..CheckConfig::new(sim) };
    let r = replay(&config, &[Action::Crash { node: 2 }]).unwrap();
    assert!(r.steps[0].lost.is_empty(), "{:?}", r.steps[0].lost);
}
