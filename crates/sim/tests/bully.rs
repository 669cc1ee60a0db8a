//! Exact counts and turnaround times of the textbook Bully algorithm (docs/reference/algorithms/bully.md).
//!
//! The spec numbers processes `0..N-1`; here position `i` has id `i + 1`, so "process k" of the spec is id `k + 1`.

mod common;

use common::{config, initiators, run_ok, units};
use elect_algos::Params;
use elect_core::NodeId;
use elect_scenario::{Delay, NodeAt, SimConfig};
use elect_sim::Report;
use proptest::prelude::*;

const N: usize = 8;

fn bully(f: impl FnOnce(&mut SimConfig)) -> Report {
    run_ok(&config("bully", N, f))
}

fn counts(r: &Report) -> (u64, u64, u64) {
    (r.messages.kind("election"), r.messages.kind("ok"), r.messages.kind("coordinator"))
}

fn crash_at_start(id: u32) -> NodeAt {
    NodeAt { id: NodeId(id), at: 0 }
}

#[test]
fn w2_the_strongest_crashed_and_the_weakest_detects_it() {
    let r = bully(|c| {
        c.crashes.push(crash_at_start(8));
        c.initiators = initiators(&[1]);
    });
    assert_eq!(counts(&r), (28, 21, 6));
    assert_eq!(r.messages.total, 55, "N^2 - N - 1");
    assert_eq!(r.leader, Some(NodeId(7)));
    assert_eq!(r.elected_at.unwrap().ticks(), units(4) + 1, "4T + ε");
}

#[test]
fn w1_everybody_alive_and_the_weakest_starts() {
    let r = bully(|c| c.initiators = initiators(&[1]));
    assert_eq!(counts(&r), (28, 28, 7));
    assert_eq!(r.messages.total, 63, "N^2 - 1");
    assert_eq!(r.leader, Some(NodeId(8)));
    assert_eq!(r.elected_at.unwrap().ticks(), units(2), "2T");
}

#[test]
fn w1_with_s000s_variant_costs_n_times_n_minus_one() {
    let r = bully(|c| {
        c.initiators = initiators(&[1]);
        c.params = Params::parse(["variant=s000"]).unwrap();
    });
    assert_eq!(counts(&r), (28, 21, 7));
    assert_eq!(r.messages.total, 56, "N(N-1)");
    assert_eq!(r.leader, Some(NodeId(8)));
    assert_eq!(r.elected_at.unwrap().ticks(), units(2), "2T");
    assert_eq!(r.bounds[0].value, 56);
}

#[test]
fn b1_the_second_strongest_detects_the_crash_without_knowing() {
    let r = bully(|c| {
        c.crashes.push(crash_at_start(8));
        c.initiators = initiators(&[7]);
    });
    assert_eq!(counts(&r), (1, 0, 6));
    assert_eq!(r.leader, Some(NodeId(7)));
    assert_eq!(r.elected_at.unwrap().ticks(), units(3) + 1, "3T + ε");
}

#[test]
fn b2_the_second_strongest_knows_it_is_the_strongest_alive() {
    let r = bully(|c| {
        c.crashes.push(crash_at_start(8));
        c.initiators = initiators(&[7]);
        c.params = Params::parse(["known-dead=8"]).unwrap();
    });
    assert_eq!(counts(&r), (0, 0, 6));
    assert_eq!(r.messages.total, N as u64 - 2);
    assert_eq!(r.elected_at.unwrap().ticks(), units(1), "T");
}

#[test]
fn b3_the_strongest_recovers_and_announces_itself() {
    for variant in ["s001", "s000"] {
        let r = bully(|c| {
            c.initiators = initiators(&[8]);
            c.params = Params::parse([format!("variant={variant}").as_str()]).unwrap();
        });
        assert_eq!(counts(&r), (0, 0, 7), "{variant}");
        assert_eq!(r.elected_at.unwrap().ticks(), units(1), "T ({variant})");
    }
}

#[test]
fn every_process_initiating_stays_within_one_election() {
    let r = bully(|_| {});
    assert_eq!(counts(&r), (28, 28, 7), "each process sends election at most once per epoch");
    assert!(r.bounds[0].held);
}

/// The general formula of the chapter's Cost section for one election started by `s` (0-based) among the live set `alive` (0-based).
fn formula(n: u64, alive: &[u64], s: u64) -> (u64, u64, u64) {
    let up = || alive.iter().copied().filter(move |&k| k >= s);
    let election = up().map(|k| n - 1 - k).sum();
    let ok = up().map(|k| alive.iter().filter(|&&j| j > k).count() as u64).sum();
    (election, ok, *alive.iter().max().unwrap())
}

proptest! {
    #![proptest_config(common::proptest_config(120))]

    /// Any live set, any live initiator: the exact counts, and the strongest live process wins everywhere.
    #[test]
    fn one_election_follows_the_general_formula(n in 2usize..12, mut dead in prop::collection::vec(any::<bool>(), 12), pick in any::<prop::sample::Index>()) {
        if dead[..n].iter().all(|&d| d) {
            dead[0] = false; // Somebody must be alive to start.
        }
        let alive: Vec<u64> = (0..n as u64).filter(|&k| !dead[k as usize]).collect();
        let s = alive[pick.index(alive.len())];
        let cfg = config("bully", n, |c| {
            c.crashes = (0..n as u32).filter(|&k| dead[k as usize]).map(|k| crash_at_start(k + 1)).collect();
            c.initiators = initiators(&[s as u32 + 1]);
        });
        let r = run_ok(&cfg);
        prop_assert_eq!(counts(&r), formula(n as u64, &alive, s), "{}", r.reproduce);
        prop_assert_eq!(r.leader, Some(NodeId(*alive.iter().max().unwrap() as u32 + 1)));
    }

    /// Under random delays within the bound, the winner is still the strongest live process everywhere.
    #[test]
    fn random_delays_within_the_bound_still_elect_the_strongest(seed in 0u64..1000, n in 2usize..10, crash_top in any::<bool>()) {
        let cfg = config("bully", n, |c| {
            c.seed = seed;
            c.delay = Delay::Uniform(units(1) / 10, units(1));
            let strongest = if crash_top { n - 1 } else { n };
            c.initiators = initiators(&[1 + (seed as usize % strongest) as u32]);
            if crash_top {
                c.crashes.push(crash_at_start(n as u32));
            }
        });
        let r = run_ok(&cfg);
        let strongest = if crash_top { n - 1 } else { n };
        prop_assert_eq!(r.leader, Some(NodeId(strongest as u32)), "{}", r.reproduce);
        let (election, ok, coordinator) = counts(&r);
        let pairs = (n * (n - 1) / 2) as u64;
        prop_assert!(election <= pairs && ok <= pairs, "{}", r.reproduce);
        prop_assert_eq!(coordinator, strongest as u64 - 1, "{}", r.reproduce);
    }
}

#[test]
fn a_candidate_that_dies_between_ok_and_coordinator_is_replaced_by_the_next_strongest() {
    // W2, but 7 crashes at t=3: it answered ok at t=1 and t=2 and would announce at 3T + ε.
    let r = run_ok(&config("bully", N, |c| {
        c.crashes.push(crash_at_start(8));
        c.crashes.push(NodeAt { id: NodeId(7), at: units(3) });
        c.initiators = initiators(&[1]);
    }));
    assert_eq!(r.leader, Some(NodeId(6)));
    assert_eq!(r.live, 6);
    // Epoch 1: 28 elections, 21 oks, no coordinator. Node 1's 4T + ε wait for a coordinator expires at
    // 2 + 4.001; epoch 2 costs 27 elections, 15 oks and 5 coordinators, and 6's announcement lands 4T + ε later.
    assert_eq!(counts(&r), (28 + 27, 21 + 15, 5));
    assert_eq!(r.elected_at.unwrap().ticks(), units(6) + 1 + units(4) + 1);
    assert!(r.bounds.is_empty(), "no one-election bound applies to a run with two elections");
}

#[test]
fn concurrent_initiators_agree_on_the_strongest_live_process() {
    for seed in 1..=40 {
        let n = 10;
        let r = run_ok(&config("bully", n, |c| {
            c.seed = seed;
            c.ids = elect_scenario::Ids::Random;
            c.crashes.push(crash_at_start(10));
            c.initiators = elect_scenario::InitiatorSpec::Random(1 + seed as usize % 9);
            c.delay = Delay::Uniform(units(1) / 2, units(1));
        }));
        assert_eq!(r.leader, Some(NodeId(9)), "{}", r.reproduce);
        let (election, ok, coordinator) = counts(&r);
        let pairs = (n * (n - 1) / 2) as u64;
        assert!(election <= pairs && ok <= pairs, "{}", r.reproduce);
        assert_eq!(coordinator, 8, "the winner addresses every weaker id once ({})", r.reproduce);
    }
}
