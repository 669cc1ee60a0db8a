//! The fault model: crashes and recoveries, loss, duplication, links down, partitions, `--until`, and an
//! inaccurate failure detector.

mod common;

use common::{SharedBuf, config, initiators, run, run_ok, units};
use elect_algos::bully::Bully;
use elect_core::{NodeId, Process};
use elect_scenario::{Delay, Monitor, NodeAt, Scenario, SimConfig};
use elect_sim::{Report, Sim, simulate};

fn at(id: u32, time: u64) -> NodeAt {
    NodeAt { id: NodeId(id), at: units(time) }
}

fn trace_of(cfg: &SimConfig) -> (Report, Vec<serde_json::Value>) {
    let buf = SharedBuf::default();
    let report = simulate(cfg, Some(Box::new(buf.clone()))).unwrap();
    let lines = String::from_utf8(buf.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (report, lines)
}

#[test]
fn a_recovering_bully_holds_an_election_in_a_newer_round_and_wins() {
    for crash in [0, 5] {
        let cfg = config("bully", 8, |c| {
            c.initiators = initiators(&[1]);
            c.crashes.push(at(8, crash));
            c.recoveries.push(at(8, 10));
        });
        let mut sim = Sim::new(Bully::default(), Scenario::build(&cfg).unwrap());
        sim.run().unwrap();
        let r = sim.report();
        assert!(r.ok(), "{:?}", r.properties.violations);
        assert_eq!(r.leader, Some(NodeId(8)), "{}", r.reproduce);
        // 8 came back and bullied everybody in an epoch of its own: a new round if it had seen round 1, round 1
        // if it was down from the start (its epoch still differs from the one 7 led).
        let status = sim.processes()[7].status();
        let round = if crash == 0 { 1 } else { 2 };
        assert_eq!((status.epoch.round(), status.epoch.starter()), (round, NodeId(8)));
        assert!(sim.processes().iter().all(|p| p.status().epoch == status.epoch));
        assert_eq!(sim.durable()[7], Some(status.epoch), "the epoch is on stable storage");
    }
}

#[test]
fn lost_messages_are_counted_and_drawn_from_the_seed() {
    let lossy = |seed| {
        run(&config("lelann", 8, |c| {
            c.seed = seed;
            c.losses.push("0.2".parse().unwrap());
        }))
    };
    let (a, b) = (lossy(3), lossy(3));
    assert_eq!(a, b, "the same seed loses the same messages");
    assert!(a.lost > 0 && a.delivered + a.lost == a.messages.total, "{a:?}");
    let everything = run(&config("lelann", 8, |c| c.losses.push("1".parse().unwrap())));
    assert_eq!((everything.lost, everything.delivered), (everything.messages.total, 0));
    assert!(!everything.ok(), "nobody learns a leader");
}

#[test]
fn one_way_loss_affects_one_direction_only() {
    // Processes 4 and 5 are neighbours on the ring; 4 sends clockwise to 5, never the other way.
    let forward = run(&config("chang-roberts", 6, |c| c.losses.push("4>5:1".parse().unwrap())));
    assert!(forward.lost > 0);
    let backward = run_ok(&config("chang-roberts", 6, |c| c.losses.push("5>4:1".parse().unwrap())));
    assert_eq!(backward.lost, 0);
}

#[test]
fn duplicated_messages_are_delivered_twice() {
    let r = run(&config("lelann", 5, |c| {
        c.duplicate = "1".parse().unwrap();
        c.initiators = initiators(&[1]);
        c.max_events = 10_000;
    }));
    assert!(r.duplicated > 0 && r.duplicated == r.messages.total, "{r:?}");
    assert_eq!(r.delivered, 2 * r.messages.total);
}

#[test]
fn a_link_down_loses_what_crosses_it_until_it_heals() {
    let cfg = config("chang-roberts", 4, |c| c.link_downs.push("2-3@0..1.5".parse().unwrap()));
    let (r, trace) = trace_of(&cfg);
    assert_eq!(r.lost, 1, "2's token to 3 at t=0 is lost; later messages cross after t=1.5");
    assert!(trace.iter().any(|l| l["ev"] == "drop" && l["reason"] == "link-down" && l["from"] == 2 && l["node"] == 3));
    let ups: Vec<bool> = trace.iter().filter(|l| l["ev"] == "link").map(|l| l["up"].as_bool().unwrap()).collect();
    assert_eq!(ups, [false, true]);
    let bad = Scenario::build(&config("chang-roberts", 5, |c| c.link_downs.push("1-3@0".parse().unwrap())));
    assert!(bad.unwrap_err().to_string().contains("there is no link 1-3 on a ring topology"));
}

#[test]
fn partitions_cut_between_groups_and_heal() {
    let cfg = config("bully", 6, |c| {
        c.initiators = initiators(&[1, 4]);
        c.partitions.push("1,2,3|4,5,6@0..10".parse().unwrap());
    });
    let (r, trace) = trace_of(&cfg);
    assert!(r.lost > 0);
    assert!(trace.iter().filter(|l| l["ev"] == "drop").all(|l| l["reason"] == "partition"));
    // Each side elects its own strongest, and without a failure detector nothing reunites them after the heal.
    let mut sim = Sim::new(Bully::default(), Scenario::build(&cfg).unwrap());
    sim.run().unwrap();
    let leaders: Vec<Option<NodeId>> = sim.processes().iter().map(|p| p.status().leader).collect();
    assert_eq!(leaders, [3, 3, 3, 6, 6, 6].map(|l| Some(NodeId(l))));
    assert!(r.properties.violations.iter().any(|v| v.property.name() == "agreement"));
    let one_way = config("bully", 4, |c| {
        c.initiators = initiators(&[1]);
        c.partitions.push("1,2>3,4@0".parse().unwrap());
    });
    let r = run(&one_way);
    assert!(r.lost > 0 && r.leader.is_none(), "1 and 2 never hear back from 3 and 4: {r:?}");
}

#[test]
fn until_stops_the_run_and_unsettled_properties_are_skipped_with_a_reason() {
    let r = simulate(
        &config("bully", 8, |c| {
            c.initiators = initiators(&[1]);
            c.crashes.push(at(8, 0));
            c.until = Some(units(3));
        }),
        None,
    )
    .unwrap();
    assert!(!r.terminated && r.ok());
    assert_eq!(r.end_time.ticks(), units(3));
    assert!(!r.properties.skipped.is_empty());
    assert!(
        r.properties.skipped.iter().all(|s| s.reason.contains("before it became quiescent")),
        "{:?}",
        r.properties.skipped
    );
}

#[test]
fn crash_leader_at_crashes_whoever_leads_then() {
    let cfg = config("chang-roberts", 6, |c| {
        c.ids = common::ids(&[3, 6, 1, 5, 2, 4]);
        c.crash_leader_at.push(units(20));
    });
    let (r, trace) = trace_of(&cfg);
    assert!(trace.iter().any(|l| l["ev"] == "crash" && l["node"] == 6 && l["t"] == 20));
    let violated: Vec<&str> = r.properties.violations.iter().map(|v| v.property.name()).collect();
    assert!(violated.contains(&"live-leader"), "without the monitor nobody re-elects: {violated:?}");
}

#[test]
fn an_inaccurate_failure_detector_lets_two_processes_lead_in_one_epoch() {
    // Messages take one unit, but processes time out as if they took 0.3.
    let r = run(&config("bully", 5, |c| {
        c.initiators = initiators(&[1]);
        c.delay_bound = Some(elect_core::Duration::from_ticks(units(3) / 10));
    }));
    let uniqueness = r.properties.violations.iter().find(|v| v.property.name() == "uniqueness").expect("caught");
    assert!(uniqueness.detail.contains("both declared themselves leader"), "{}", uniqueness.detail);
    assert!(r.reproduce.contains("--delay-bound 0.3"), "{}", r.reproduce);
    // The same run with an accurate bound is fine.
    assert!(run_ok(&config("bully", 5, |c| c.initiators = initiators(&[1]))).ok());
}

#[test]
fn faults_are_deterministic_under_random_delays() {
    let cfg = config("bully", 9, |c| {
        c.seed = 11;
        c.delay = Delay::Uniform(units(1) / 5, units(1));
        c.losses.push("0.05".parse().unwrap());
        c.duplicate = "0.05".parse().unwrap();
        c.crashes.push(at(9, 3));
        c.recoveries.push(at(9, 30));
        c.partitions.push("1,2|3,4,5@5..12".parse().unwrap());
        c.monitor = Some(Monitor::member(elect_core::InT(2)));
        c.until = Some(units(200));
    });
    let (a, trace_a) = trace_of(&cfg);
    let (b, trace_b) = trace_of(&cfg);
    assert_eq!(trace_a, trace_b);
    assert_eq!(a, b);
}
