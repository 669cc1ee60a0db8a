//! Garcia-Molina's Invitation algorithm (docs/reference/algorithms/invitation.md): the cost of a merge, Assertion 3 after every event
//! under any faults, Stoller's Assertion 4′ after a stable interval, and Stoller's counterexample to Assertion 4.

mod common;

use common::{config, run, units};
use elect_algos::Algorithm;
use elect_algos::invitation::Invitation;
use elect_core::{NodeId, Property};
use elect_scenario::{Delay, Link, LinkDown, Loss, NodeAt, Partition, Probability, SimConfig, Window};
use elect_sim::Report;
use proptest::prelude::*;

/// τ of Assertion 4′ for `n` processes and unit delays, in ticks.
fn tau(n: usize) -> u64 {
    let facts = elect_algos::Facts::new(n as u64, 0, n as u64);
    Invitation::default().settle_time(&facts, Some(elect_core::Duration::from_ticks(units(1)))).unwrap().ticks()
}

fn violated(r: &Report, p: Property) -> bool {
    r.properties.violations.iter().any(|v| v.property == p)
}

fn judged(r: &Report, p: Property) -> bool {
    r.properties.checked.iter().any(|&(name, _)| name == p.name())
        && r.properties.skipped.iter().all(|s| s.property != p)
}

#[test]
fn n_singletons_merge_for_4_n_minus_1_messages() {
    for n in 2..=12 {
        let r = run(&config("invitation", n, |c| c.until = Some(tau(n))));
        assert!(r.ok(), "{:?}\n{}", r.properties.violations, r.reproduce);
        assert_eq!(r.leader, Some(NodeId(n as u32)), "the strongest merges first: {}", r.reproduce);
        for kind in ["invitation", "accept", "ready", "ack"] {
            assert_eq!(r.messages.kind(kind), n as u64 - 1, "{kind}: {}", r.reproduce);
        }
        assert!(judged(&r, Property::A4) && judged(&r, Property::A4Prime), "{:?}", r.properties.skipped);
    }
}

#[test]
fn a_check_costs_n_minus_1_questions_and_the_live_processes_answers() {
    // Stop just after the first check round of the merged group: every coordinator's first check (at check·T)
    // asks the n − 1 others, and all n answer each other; no member has timed out yet.
    let n = 5;
    let r = run(&config("invitation", n, |c| c.until = Some(units(10) + units(2) + 2)));
    assert_eq!(r.messages.kind("are-you-coordinator"), (n * (n - 1)) as u64);
    assert_eq!(r.messages.kind("are-you-coordinator-reply"), (n * (n - 1)) as u64);
    assert_eq!(r.messages.kind("are-you-there"), 0);
}

fn stoller(f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    config("invitation", 3, |c| {
        c.prefer = elect_core::Prefer::Lowest;
        c.crashes.push(NodeAt { id: NodeId(1), at: units(30) });
        c.link_downs.push("1-3@30".parse().unwrap());
        c.recoveries.push(NodeAt { id: NodeId(1), at: units(33) });
        c.until = Some(units(33) + tau(3));
        f(c);
    })
}

#[test]
fn stollers_counterexample_breaks_assertion_4_but_not_4_prime() {
    let cfg = stoller(|_| {});
    let scenario = elect_scenario::Scenario::build(&cfg).unwrap();
    let mut sim = elect_sim::Sim::new(Invitation::default(), scenario);
    sim.run().unwrap();
    let r = sim.report();
    // The groups the slide shows: {1, 2} under 1, and {3} alone.
    let groups: Vec<(NodeId, Option<NodeId>)> = sim
        .processes()
        .iter()
        .zip(&sim.scenario().ids)
        .map(|(p, &id)| (id, elect_core::Process::status(p).leader))
        .collect();
    assert_eq!(groups, [(NodeId(1), Some(NodeId(1))), (NodeId(2), Some(NodeId(1))), (NodeId(3), Some(NodeId(3)))]);
    assert!(violated(&r, Property::A4), "{}", r.reproduce);
    assert!(judged(&r, Property::A4Prime) && !violated(&r, Property::A4Prime), "{:?}", r.properties);
    assert!(!violated(&r, Property::A3));
}

#[test]
fn the_report_carries_each_process_s_final_status_and_whether_it_is_crashed() {
    let cfg = stoller(|c| c.crashes.push(NodeAt { id: NodeId(2), at: units(40) }));
    let scenario = elect_scenario::Scenario::build(&cfg).unwrap();
    let mut sim = elect_sim::Sim::new(Invitation::default(), scenario);
    sim.run().unwrap();
    let r = sim.report();
    let from_engine: Vec<elect_sim::FinalStatus> = (0..3)
        .map(|i| elect_sim::FinalStatus {
            node: sim.scenario().ids[i],
            status: elect_core::Process::status(&sim.processes()[i]),
            crashed: !sim.is_up(i),
        })
        .collect();
    assert_eq!(r.statuses, from_engine);
    let crashed: Vec<NodeId> = r.statuses.iter().filter(|s| s.crashed).map(|s| s.node).collect();
    assert_eq!(crashed, [NodeId(2)], "1 recovered at 33; 2 crashed at 40");
    assert_eq!(r.statuses, run(&cfg).statuses, "simulate reports the same statuses");
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("statuses").is_none(), "the JSON report stays the size it was");
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Other interleavings of Stoller's scenario may end in other groupings; every one keeps A3 and A4′.
    #[test]
    fn every_interleaving_of_stollers_scenario_keeps_a3_and_4_prime(seed in any::<u64>()) {
        let cfg = stoller(|c| {
            c.seed = seed;
            c.delay = Delay::Uniform(units(1) / 10, units(1));
        });
        let r = run(&cfg);
        prop_assert!(!violated(&r, Property::A3), "{}", r.reproduce);
        prop_assert!(judged(&r, Property::A4Prime) && !violated(&r, Property::A4Prime), "{:?}\n{}", r.properties, r.reproduce);
    }
}

/// A random fault schedule on `n` processes within `0..horizon` (units).
#[derive(Clone, Debug)]
struct Schedule {
    crashes: Vec<(u32, u64)>,
    recoveries: Vec<(u32, u64)>,
    links: Vec<(u32, u32, bool, u64, Option<u64>)>,
    partition: Option<(Vec<bool>, u64, Option<u64>)>,
}

fn schedule(n: u32, horizon: u64) -> impl Strategy<Value = Schedule> {
    let node = 1..=n;
    let time = 1..horizon;
    (
        prop::collection::vec((node.clone(), time.clone()), 0..3),
        prop::collection::vec((node.clone(), time.clone()), 0..3),
        prop::collection::vec((node.clone(), node, any::<bool>(), time.clone(), prop::option::of(time.clone())), 0..3),
        prop::option::of((prop::collection::vec(any::<bool>(), n as usize), time.clone(), prop::option::of(time))),
    )
        .prop_map(|(crashes, recoveries, links, partition)| Schedule { crashes, recoveries, links, partition })
}

impl Schedule {
    fn apply(&self, c: &mut SimConfig) {
        let at = units;
        c.crashes = self.crashes.iter().map(|&(id, t)| NodeAt { id: NodeId(id), at: at(t) }).collect();
        c.recoveries = self.recoveries.iter().map(|&(id, t)| NodeAt { id: NodeId(id), at: at(t) }).collect();
        c.link_downs = self
            .links
            .iter()
            .filter(|&&(a, b, ..)| a != b)
            .map(|&(a, b, one_way, from, until)| LinkDown {
                link: Link { a: NodeId(a), b: NodeId(b), one_way },
                window: window(at(from), until.map(at)),
            })
            .collect();
        if let Some((sides, from, until)) = &self.partition {
            let side = |s: bool| -> Vec<NodeId> {
                (0..sides.len()).filter(|&i| sides[i] == s).map(|i| NodeId(i as u32 + 1)).collect()
            };
            let (a, b) = (side(true), side(false));
            if !a.is_empty() && !b.is_empty() {
                c.partitions.push(Partition {
                    groups: vec![a, b],
                    one_way: false,
                    window: window(at(*from), until.map(at)),
                });
            }
        }
    }

    /// The time of the last fault, in ticks.
    fn last(&self) -> u64 {
        let ends = self.links.iter().map(|l| l.4.unwrap_or(0).max(l.3));
        let part = self.partition.iter().map(|p| p.2.unwrap_or(0).max(p.1));
        let all = self.crashes.iter().chain(&self.recoveries).map(|c| c.1).chain(ends).chain(part);
        units(all.max().unwrap_or(0) + 1)
    }
}

fn window(from: u64, until: Option<u64>) -> Window {
    Window { from, until: until.filter(|&u| u > from) }
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    /// Assertion 3 after every event, whatever crashes, recoveries, link failures, partitions and losses do.
    #[test]
    fn assertion_3_holds_after_every_event_under_random_faults(
        seed in any::<u64>(),
        n in 2u32..7,
        faults in schedule(6, 150),
        loss in 0u32..300_000,
        duplicate in 0u32..100_000,
    ) {
        let cfg = config("invitation", n as usize, |c| {
            c.seed = seed;
            c.delay = Delay::Uniform(units(1) / 10, units(1));
            faults.apply(c);
            c.crashes.retain(|f| f.id.0 <= n);
            c.recoveries.retain(|f| f.id.0 <= n);
            common::keep_recoveries_after_crashes(c);
            c.link_downs.retain(|f| f.link.a.0 <= n && f.link.b.0 <= n);
            c.partitions.clear();
            c.losses = vec![Loss { link: None, p: Probability(loss) }];
            c.duplicate = Probability(duplicate);
            c.until = Some(units(300));
        });
        let r = run(&cfg);
        prop_assert!(!violated(&r, Property::A3), "{:?}\nseed {seed}; reproduce with: {}", r.properties.violations, r.reproduce);
    }

    /// Once the faults stop (links that stay down are a stable fact too), after τ everybody is NORMAL in its
    /// coordinator's group, connected to it, and there are no more groups than a minimum clique cover.
    #[test]
    fn assertion_4_prime_holds_after_a_stable_interval(
        seed in any::<u64>(),
        faults in schedule(6, 100),
    ) {
        let cfg = config("invitation", 6, |c| {
            c.seed = seed;
            c.delay = Delay::Uniform(units(1) / 10, units(1));
            faults.apply(c);
            common::keep_recoveries_after_crashes(c);
            c.until = Some(faults.last() + tau(6));
        });
        let r = run(&cfg);
        prop_assert!(!violated(&r, Property::A3), "{:?}\n{}", r.properties.violations, r.reproduce);
        prop_assert!(judged(&r, Property::A4Prime), "{:?}\n{}", r.properties.skipped, r.reproduce);
        prop_assert!(!violated(&r, Property::A4Prime), "{:?}\nseed {seed}; reproduce with: {}", r.properties.violations, r.reproduce);
    }
}
