//! A traced run says when each timer is set and when it will fire (`arm`), and when one is cancelled (`disarm`):
//! every timer that fires was armed for that very instant, and none is armed for the past. The viewer draws each
//! timer set as an arc draining until it fires from these records.

mod common;

use std::collections::HashMap;

use common::{SharedBuf, config, units};
use elect_core::NodeId;
use elect_scenario::{Delay, Monitor, NodeAt};
use elect_sim::simulate;

#[test]
fn every_timer_that_fires_was_armed_for_that_instant() {
    // Bully under the monitor, its leader crashing: heartbeats, watches and election timeouts set, re-set,
    // cancelled and fired.
    let cfg = config("bully", 5, |c| {
        c.monitor = Some(Monitor::member(elect_core::InT(4)));
        c.delay = Delay::Uniform(units(1) / 2, units(3));
        c.crashes.push(NodeAt { id: NodeId(5), at: units(20) });
        c.until = Some(units(80));
    });
    let buf = SharedBuf::default();
    simulate(&cfg, Some(Box::new(buf.clone()))).unwrap();
    let lines: Vec<serde_json::Value> =
        String::from_utf8(buf.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Per (node, timer in words), the instant it is armed for.
    let mut armed: HashMap<(u64, String), f64> = HashMap::new();
    let (mut arms, mut fired, mut disarms) = (0, 0, 0);
    for l in &lines {
        let key = || (l["node"].as_u64().unwrap(), l["text"].as_str().unwrap().to_owned());
        let t = l["t"].as_f64().unwrap_or(0.0);
        match l["ev"].as_str().unwrap() {
            "arm" => {
                let at = l["at"].as_f64().unwrap();
                assert!(at >= t, "a timer armed for the past: {l}");
                armed.insert(key(), at);
                arms += 1;
            }
            "disarm" => {
                assert!(armed.remove(&key()).is_some(), "a timer cancelled that was not set: {l}");
                disarms += 1;
            }
            "timer" => {
                assert_eq!(armed.remove(&key()), Some(t), "a timer fired at another instant than it was set for: {l}");
                fired += 1;
            }
            "crash" => armed.retain(|(node, _), _| *node != l["node"].as_u64().unwrap()),
            _ => {}
        }
    }
    assert!(arms > 20 && fired > 5 && disarms > 0, "{arms} armed, {fired} fired, {disarms} cancelled");
}

#[test]
fn an_untraced_run_is_the_same_run() {
    let cfg = config("bully", 6, |c| {
        c.monitor = Some(Monitor::member(elect_core::InT(4)));
        c.crashes.push(NodeAt { id: NodeId(6), at: units(10) });
        c.until = Some(units(60));
    });
    let traced = simulate(&cfg, Some(Box::new(SharedBuf::default()))).unwrap();
    let plain = simulate(&cfg, None).unwrap();
    assert_eq!(
        (traced.events, traced.messages.total, traced.leader, traced.end_time),
        (plain.events, plain.messages.total, plain.leader, plain.end_time)
    );
}
