//! van Steen's ring skipping dead processes on a logical ring over a complete graph (S000; docs/reference/algorithms/lelann.md):
//! acknowledgements, `2T + ε` timeouts, and the process before a dead initiator closing its election.

mod common;

use common::{config, ids, initiators, run, run_ok, units};
use elect_algos::lelann::LeLann;
use elect_algos::{Algorithm, Facts};
use elect_core::{Duration, NodeId};
use elect_scenario::{Delay, Ids, InitiatorSpec, NodeAt, Scenario, SimConfig, TopologyKind};
use elect_sim::{Report, Sim};
use proptest::prelude::*;

fn crash(id: u32, at: u64) -> NodeAt {
    NodeAt { id: NodeId(id), at }
}

/// `lelann` on a complete graph of `n`, ids ascending by position unless `f` says otherwise.
fn complete(n: usize, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    config("lelann", n, |c| {
        c.topology = Some(TopologyKind::Complete);
        f(c);
    })
}

fn election_and_coordinator(r: &Report) -> u64 {
    r.messages.kind("election") + r.messages.kind("coordinator")
}

/// Election and coordinator messages, and acks, for `k` elections among `live` processes when `hits` messages
/// were sent to the `dead`: `2kL + hits` and `2kL`, except that a process left alone sends nothing to itself (one
/// live process: only its election's attempts on each dead process, `hits = dead`).
fn expected_counts(k: u64, live: u64, dead: u64, hits: u64) -> (u64, u64) {
    if live == 1 { (dead, 0) } else { (2 * k * live + hits, 2 * k * live) }
}

/// The strongest id not crashed in `cfg`.
fn strongest_live(cfg: &SimConfig) -> NodeId {
    let scenario = Scenario::build(cfg).unwrap();
    scenario.ids.iter().copied().filter(|id| cfg.crashes.iter().all(|c| c.id != *id)).max().unwrap()
}

#[test]
fn figure_6_21_p7_down_p6_and_p3_initiate_elects_6() {
    // van Steen's Figure 6.21: ids 0..7 clockwise, P7 crashed, P6 and P3 start elections at once; unit delays.
    //
    // P6 sends election{6} to P7 at t=0. No ack comes, so at 2T+ε = 2.001 P6 marks P7 dead and resends it to
    // P0; it goes round 0 → 1 → … → 5 → 6 (7 hops) and P6 announces coordinator{6} over 7 live hops. P3's
    // election reaches P6 at t=3, after the detection, so it goes 3 → 4 → 5 → 6 → 0 → 1 → 2 → 3 and its
    // announcement likewise: 7 hops each, nothing sent to P7. Hence:
    //   election    = (1 to P7 + 7) + 7            = 15
    //   coordinator = 7 + 7                        = 14
    //   election + coordinator = 2·k·L_live + 1 = 2·2·7 + 1 = 29 (one message hit P7)
    //   ack         = one per delivered election or coordinator = 29 − 1 = 28
    let cfg = complete(8, |c| {
        c.ids = ids(&[0, 1, 2, 3, 4, 5, 6, 7]);
        c.crashes.push(crash(7, 0));
        c.initiators = initiators(&[6, 3]);
    });
    let scenario = Scenario::build(&cfg).unwrap();
    let mut sim = Sim::new(LeLann, scenario);
    sim.run().unwrap();
    let r = sim.report();
    assert!(r.ok() && r.terminated, "{:?}\nreproduce: {}", r.properties.violations, r.reproduce);
    assert_eq!((r.leader, r.agreed, r.live), (Some(NodeId(6)), true, 7));
    assert_eq!(r.messages.kind("election"), 15);
    assert_eq!(r.messages.kind("coordinator"), 14);
    assert_eq!(r.messages.kind("ack"), 28);
    assert_eq!(r.messages.total, 57);
    // P2 is the last to learn, from P6's announcement: 2.001 + 7 + 3.
    assert_eq!(r.elected_at.unwrap().ticks(), units(12) + 1);
    let bound = &r.bounds[0];
    assert!(bound.held && bound.measured == 29 && bound.value == 2 * 2 * 8, "{bound:?}");
    // Every live process holds the live members in ring order from one of the two initiators.
    let live: Vec<NodeId> = (0..7).map(NodeId).collect();
    for node in &sim.processes()[..7] {
        let members = node.members();
        let start = members[0].0 as usize;
        let rotated: Vec<NodeId> = (0..7).map(|h| live[(start + h) % 7]).collect();
        assert_eq!(members, rotated);
        assert!(start == 6 || start == 3);
    }
}

#[test]
fn three_dead_in_a_row_cost_one_message_and_one_timeout_each() {
    // Ids 0..9, 4, 5 and 6 down, P0 initiates. P3 tries 4, 5, 6 in turn (three timeouts of 2T+ε), then the
    // election goes on to 7, 8, 9 and back to 0: 3 + 3 + 4 = 10 elections. The announcement follows the live
    // ring (P3 knows): 7 coordinators. 2·1·7 + 3 = 17 in all, and 14 acks.
    let cfg = complete(10, |c| {
        c.ids = ids(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        c.crashes.extend([crash(4, 0), crash(5, 0), crash(6, 0)]);
        c.initiators = initiators(&[0]);
    });
    let r = run_ok(&cfg);
    assert_eq!(r.leader, Some(NodeId(9)));
    assert_eq!(r.messages.kind("election"), 10);
    assert_eq!(r.messages.kind("coordinator"), 7);
    assert_eq!(r.messages.kind("ack"), 14);
    // The election takes 7 hops and three timeouts of 2T+ε; the announcement reaches P9 last, 6 hops later.
    assert_eq!(r.elected_at.unwrap().ticks(), units(7 + 3 * 2 + 6) + 3);
}

#[test]
fn dead_processes_in_a_row_including_the_strongest_elect_the_strongest_live() {
    for n in [4u32, 7, 10] {
        for first in 0..n {
            for run_length in 1..n {
                let dead: Vec<u32> = (0..run_length).map(|h| 1 + (first + h) % n).collect();
                for initiator in (1..=n).filter(|id| !dead.contains(id)) {
                    let cfg = complete(n as usize, |c| {
                        c.crashes.extend(dead.iter().map(|&id| crash(id, 0)));
                        c.initiators = initiators(&[initiator]);
                    });
                    let r = run_ok(&cfg);
                    assert_eq!(r.leader, Some(strongest_live(&cfg)), "{}", r.reproduce);
                    let (live, dead) = (u64::from(n - run_length), u64::from(run_length));
                    let (sent, acks) = expected_counts(1, live, dead, dead);
                    assert_eq!(election_and_coordinator(&r), sent, "{}", r.reproduce);
                    assert_eq!(r.messages.kind("ack"), acks, "{}", r.reproduce);
                }
            }
        }
    }
}

#[test]
fn a_process_left_alone_elects_itself() {
    let r = run_ok(&complete(4, |c| {
        c.crashes.extend([crash(1, 0), crash(2, 0), crash(4, 0)]);
        c.initiators = initiators(&[3]);
    }));
    assert_eq!(r.leader, Some(NodeId(3)));
    assert_eq!((r.messages.kind("election"), r.messages.kind("coordinator"), r.messages.kind("ack")), (3, 0, 0));
}

#[test]
fn with_nobody_down_each_initiator_costs_exactly_2n_plus_as_many_acks() {
    for n in [3usize, 4, 5, 8, 13] {
        for seed in 1..=12u64 {
            let k = 1 + (seed as usize * 7) % n;
            for delay in [Delay::Constant(units(1)), Delay::Uniform(units(1) / 4, units(3))] {
                let r = run_ok(&complete(n, |c| {
                    c.ids = Ids::Random;
                    c.initiators = InitiatorSpec::Random(k);
                    c.seed = seed;
                    c.delay = delay;
                }));
                let two_k_n = 2 * (k * n) as u64;
                assert_eq!(election_and_coordinator(&r), two_k_n, "{}", r.reproduce);
                assert_eq!(r.messages.kind("election"), (k * n) as u64, "{}", r.reproduce);
                assert_eq!(r.messages.kind("ack"), two_k_n, "{}", r.reproduce);
                assert_eq!(r.leader, Some(NodeId(n as u32)));
                let bound = &r.bounds[0];
                assert!(bound.held && bound.measured == two_k_n && bound.value == two_k_n, "{bound:?}");
            }
        }
    }
}

#[test]
fn on_a_plain_ring_there_are_no_acks() {
    let r = run_ok(&config("lelann", 8, |c| c.initiators = initiators(&[2, 5])));
    assert_eq!((r.messages.kind("ack"), r.messages.total), (0, 2 * 2 * 8));
    let swallowed = run(&config("lelann", 8, |c| {
        c.crashes.push(crash(8, 0));
        c.initiators = initiators(&[2]);
    }));
    assert_eq!(swallowed.messages.kind("ack"), 0);
    assert_eq!(swallowed.leader, None, "no link leads round the dead process");
}

#[test]
fn a_relay_crashing_during_the_election_is_skipped() {
    // Ids 1..8 ascending; 5 is neither the strongest nor an initiator. It crashes at every half unit through both
    // rounds, with the election in flight towards it, passed it, or the announcement around it.
    for initiators_list in [&[2][..], &[2, 7], &[6]] {
        for half_units in 1..=36 {
            for delay in [Delay::Constant(units(1)), Delay::Uniform(units(1) / 2, units(1))] {
                let cfg = complete(8, |c| {
                    c.crashes.push(crash(5, units(half_units) / 2));
                    c.initiators = initiators(initiators_list);
                    c.delay = delay;
                });
                let r = run_ok(&cfg);
                assert_eq!((r.leader, r.live), (Some(NodeId(8)), 7), "{}", r.reproduce);
                assert!(r.bounds[0].held, "{}", r.reproduce);
            }
        }
    }
}

#[test]
fn an_initiator_crashing_during_its_own_election_is_taken_over() {
    // The only initiator crashes before its election comes back (at 8 units): the live process before it
    // finds it dead, closes the election and announces the strongest of the others. Crashing 8, the strongest,
    // elects 7; crashing 3 still elects 8.
    // With delays of 0.5..1 the election may be back at 4: crash before that.
    let delays = [(Delay::Constant(units(1)), 15), (Delay::Uniform(units(1) / 2, units(1)), 7)];
    for (initiator, expected) in [(8, 7), (3, 8)] {
        for (delay, last) in delays {
            for half_units in 1..=last {
                let cfg = complete(8, |c| {
                    c.crashes.push(crash(initiator, units(half_units) / 2));
                    c.initiators = initiators(&[initiator]);
                    c.delay = delay;
                });
                let r = run_ok(&cfg);
                assert!(r.terminated);
                assert_eq!((r.leader, r.live), (Some(NodeId(expected)), 7), "{}", r.reproduce);
                assert!(r.bounds[0].held, "{}", r.reproduce);
            }
        }
    }
}

#[test]
fn a_dead_initiator_behind_a_dead_predecessor_is_closed_two_timeouts_later() {
    // 2 is down from the start; 3 initiates and crashes at 1.5. The election comes round to 1, which finds 2
    // dead, then 3: it closes the election itself and announces 8 to the five others.
    let cfg = complete(8, |c| {
        c.crashes.extend([crash(2, 0), crash(3, units(3) / 2)]);
        c.initiators = initiators(&[3]);
    });
    let r = run_ok(&cfg);
    assert_eq!((r.leader, r.live), (Some(NodeId(8)), 6));
    // Elections: 3 → 4 → … → 8 → 1 (6), then 1 → 2 and 1 → 3 (2 hits). Coordinator: 1 → 4 → … → 8 → 1 (6).
    assert_eq!(r.messages.kind("election"), 8);
    assert_eq!(r.messages.kind("coordinator"), 6);
    assert_eq!(r.messages.kind("ack"), 12);
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Any set of processes down from the start, any ids, any initiators among the live, random delays within
    /// the bound: everyone live ends with the strongest live process, and the run falls silent.
    #[test]
    fn random_crash_sets_elect_the_strongest_live(
        (order, down, starts) in (3usize..=12).prop_flat_map(|n| (
            Just((1..=n as u32).collect::<Vec<u32>>()).prop_shuffle(),
            prop::collection::vec(any::<bool>(), n),
            prop::collection::vec(any::<bool>(), n),
        )),
        seed in 0u64..10_000,
        spread in 0u64..=4,
    ) {
        let n = order.len();
        prop_assume!(down.iter().any(|&d| !d));
        let live_at = |p: usize| !down[p];
        let mut starters: Vec<u32> = (0..n).filter(|&p| live_at(p) && starts[p]).map(|p| order[p]).collect();
        if starters.is_empty() {
            starters.push(order[(0..n).find(|&p| live_at(p)).unwrap()]);
        }
        let cfg = complete(n, |c| {
            c.ids = ids(&order);
            c.crashes.extend((0..n).filter(|&p| down[p]).map(|p| crash(order[p], 0)));
            c.initiators = initiators(&starters);
            c.seed = seed;
            c.delay = Delay::Uniform(units(1) / 5, units(1) + units(spread));
        });
        let r = run_ok(&cfg);
        prop_assert_eq!(r.leader, Some(strongest_live(&cfg)), "{}", r.reproduce);
        prop_assert!(r.agreed && r.terminated);
        prop_assert!(r.bounds[0].held, "{:?} {}", r.bounds[0], r.reproduce);
        let k = starters.len() as u64;
        let live = (0..n).filter(|&p| live_at(p)).count() as u64;
        let dead = n as u64 - live;
        // Every dead process is hit by the first message its live predecessor passes on, and by at most one
        // message of each election: its predecessor knows it dead before the election goes on.
        let sent = election_and_coordinator(&r);
        let (least, acks) = expected_counts(k, live, dead, dead);
        let (most, _) = expected_counts(k, live, dead, k * dead);
        prop_assert!(least <= sent && sent <= most, "{} not in {}..={}: {}", sent, least, most, r.reproduce);
        prop_assert_eq!(r.messages.kind("ack"), acks, "{}", r.reproduce);
        let facts = Facts { live, ..Facts::new(n as u64, r.edges, k) };
        let t = Duration::from_ticks(units(1) + units(spread));
        let elected = r.elected_at.unwrap().ticks();
        prop_assert!(elected <= LeLann.election_time(&facts, t).ticks(), "{} late: {}", elected, r.reproduce);
    }

    /// One relay (not the strongest, not an initiator) crashes at a random time: the strongest live process is
    /// still everybody's leader.
    #[test]
    fn a_relay_crashing_at_any_time_is_skipped(
        n in 3u32..=10,
        seed in 0u64..10_000,
        victim_pick in any::<prop::sample::Index>(),
        at in 1u64..=units(30),
        k_pick in 0usize..3,
    ) {
        // At most n − 2 initiators: at least one process is neither an initiator nor the strongest.
        let k = 1 + k_pick % (n as usize - 2);
        let cfg = complete(n as usize, |c| {
            c.ids = Ids::Random;
            c.seed = seed;
            c.initiators = InitiatorSpec::Random(k);
            c.delay = Delay::Uniform(units(1) / 5, units(1));
        });
        let scenario = Scenario::build(&cfg).unwrap();
        let relays: Vec<NodeId> = (0..n as usize)
            .filter(|&p| !scenario.initiators[p] && scenario.ids[p] != NodeId(n))
            .map(|p| scenario.ids[p])
            .collect();
        let victim = relays[victim_pick.index(relays.len())];
        let mut cfg = cfg;
        cfg.crashes.push(NodeAt { id: victim, at });
        let r = run_ok(&cfg);
        prop_assert_eq!(r.leader, Some(NodeId(n)), "{}", r.reproduce);
        prop_assert!(r.bounds[0].held, "{}", r.reproduce);
    }
}
