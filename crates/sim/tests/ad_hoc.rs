//! Vasudevan-Kurose-Towsley mobile ad hoc election (docs/reference/algorithms/ad-hoc.md): the exact count `4m − n + 1` of one
//! diffusing computation on fixed networks, concurrent initiators agreeing on the strongest, the time bound, a
//! lost leader replaced, and mobility: leader availability while nodes move, convergence once they stop.

mod common;

use common::{config, run, run_ok, units};
use elect_algos::Params;
use elect_core::{NodeId, Property};
use elect_scenario::{Delay, Ids, InitiatorSpec, MobilitySpec, NodeAt, Radius, SimConfig, TopologyKind};
use elect_sim::simulate;
use proptest::prelude::*;

fn topologies() -> Vec<(TopologyKind, usize)> {
    vec![
        (TopologyKind::Grid { w: 5, h: 4 }, 20),
        (TopologyKind::Torus { w: 4, h: 5 }, 20),
        (TopologyKind::RandomRegular { k: 3 }, 24),
        (TopologyKind::RandomRegular { k: 4 }, 17),
        (TopologyKind::Chordal { k: 3 }, 15),
        (TopologyKind::Tree, 25),
        (TopologyKind::Ring, 12),
        (TopologyKind::Complete, 9),
        (TopologyKind::Line, 7),
        (TopologyKind::Star, 8),
    ]
}

fn ad_hoc(kind: &TopologyKind, n: usize, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    config("ad-hoc", n, |c| {
        c.topology = Some(kind.clone());
        c.ids = Ids::Random;
        f(c);
    })
}

#[test]
fn one_computation_costs_exactly_4m_minus_n_plus_1() {
    for (kind, n) in topologies() {
        for seed in 1..=4 {
            for delay in [Delay::Constant(units(1)), "uniform:1..9".parse().unwrap()] {
                let cfg = ad_hoc(&kind, n, |c| {
                    c.seed = seed;
                    c.initiators = InitiatorSpec::Random(1);
                    c.delay = delay;
                });
                let r = run_ok(&cfg);
                let (n, m) = (n as u64, r.edges);
                let tree = 2 * m - (n - 1);
                let counts = [r.messages.kind("election"), r.messages.kind("ack"), r.messages.kind("leader")];
                assert_eq!(counts, [tree, tree, n - 1], "{}", r.reproduce);
                assert_eq!(r.messages.total, 4 * m - n + 1, "{}", r.reproduce);
                assert_eq!(r.leader, Some(NodeId(n as u32)), "{}", r.reproduce);
                assert!(r.agreed && r.terminated && r.bounds[0].held && r.bounds[0].measured == r.bounds[0].value);
            }
        }
    }
}

#[test]
fn one_computation_ends_within_3_ecc_plus_2_under_unit_delay() {
    for (kind, n) in topologies() {
        for seed in 1..=4 {
            let cfg = ad_hoc(&kind, n, |c| {
                c.seed = seed;
                c.initiators = InitiatorSpec::Random(1);
            });
            let scenario = elect_scenario::Scenario::build(&cfg).unwrap();
            let root = scenario.initiators.iter().position(|&b| b).unwrap() as u32;
            let ecc = scenario.graph.eccentricity(root);
            let r = run_ok(&cfg);
            assert!(
                r.elected_at.unwrap().0 <= units(3 * ecc + 2),
                "{} > 3·{ecc} + 2: {}",
                r.elected_at.unwrap(),
                r.reproduce
            );
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(1000))]

    /// Concurrent initiators, random delays, any family: everybody ends with the strongest process.
    #[test]
    fn concurrent_initiators_agree_on_the_strongest(
        family in 0usize..10, k in 1usize..8, seed in 0u64..1_000_000, unordered in any::<bool>()
    ) {
        let (kind, n) = topologies().swap_remove(family);
        let cfg = ad_hoc(&kind, n, |c| {
            c.seed = seed;
            c.initiators = InitiatorSpec::Random(k.min(n));
            c.delay = "uniform:1..5".parse().unwrap();
            c.fifo = !unordered;
        });
        let r = run_ok(&cfg);
        prop_assert!(r.agreed && r.terminated, "{}", r.reproduce);
        prop_assert_eq!(r.leader, Some(NodeId(n as u32)), "{}", r.reproduce);
    }
}

#[test]
fn attributes_rank_before_ids() {
    let cfg = ad_hoc(&TopologyKind::Grid { w: 3, h: 3 }, 9, |c| {
        c.ids = Ids::Ascending;
        c.attrs = "2=50,7=40".parse().unwrap();
    });
    assert_eq!(run_ok(&cfg).leader, Some(NodeId(2)));
}

#[test]
fn a_crashed_leader_is_replaced_once_heartbeats_stop() {
    let cfg = ad_hoc(&TopologyKind::Torus { w: 4, h: 4 }, 16, |c| {
        c.params = Params::parse(["heartbeat=3"]).unwrap();
        c.crashes.push(NodeAt { id: NodeId(16), at: units(60) });
    });
    let r = run_ok(&cfg);
    assert!(r.properties.skipped.is_empty(), "{:?}", r.properties.skipped);
    assert_eq!(r.leader, Some(NodeId(15)), "{}", r.reproduce);
    assert!(r.messages.kind("heartbeat") > 0);
}

/// A mobile run: nodes move until `moving`; the run ends at `end`, or once it must have settled.
fn mobile(n: usize, seed: u64, speed: f64, moving: u64, end: Option<u64>) -> SimConfig {
    config("ad-hoc", n, |c| {
        c.topology = Some(TopologyKind::Geometric { r: Radius(0.15) });
        c.ids = Ids::Random;
        c.seed = seed;
        c.initiators = InitiatorSpec::Random(1);
        c.mobility = Some(MobilitySpec { speed, pause: units(5) });
        c.mobility_until = Some(units(moving));
        c.until = end.map(units);
    })
}

#[test]
fn moving_nodes_mostly_follow_the_best_node_of_their_component() {
    let r = run(&mobile(120, 3, 0.0005, 1500, Some(1500)));
    let m = r.mobility.expect("a mobile run reports availability");
    assert!(m.link_changes > 100, "{m:?}");
    assert!(m.availability > 0.8 && m.availability <= 1.0 && m.availability_min <= m.availability, "{m:?}");
    assert!(m.elections >= 1);
    assert!(r.bounds.is_empty(), "closed forms do not apply while links change");
}

#[test]
fn once_nodes_stop_every_component_converges_to_its_best_node() {
    for seed in 1..=10 {
        let cfg = mobile(80, seed, 0.002, 600, None);
        let r = run(&cfg);
        assert!(r.properties.skipped.is_empty(), "not judged: {:?}\n{}", r.properties.skipped, r.reproduce);
        assert!(
            r.properties.checked.iter().any(|(p, _)| *p == Property::ComponentLeader.name()),
            "{:?}",
            r.properties.checked
        );
        assert!(r.ok(), "{:?}\nreproduce: {}", r.properties.violations, r.reproduce);
    }
}

#[test]
fn mobile_runs_repeat_bit_for_bit() {
    let cfg = mobile(60, 9, 0.003, 300, Some(400));
    let (a, b) = (simulate(&cfg, None).unwrap(), simulate(&cfg, None).unwrap());
    assert_eq!(a, b);
    let other = simulate(&mobile(60, 10, 0.003, 300, Some(400)), None).unwrap();
    assert_ne!(a.mobility, other.mobility);
}

#[test]
fn mobility_needs_a_geometric_graph_and_an_end() {
    let err = |f: &dyn Fn(&mut SimConfig)| {
        let mut cfg = mobile(20, 1, 0.01, 10, Some(20));
        f(&mut cfg);
        simulate(&cfg, None).unwrap_err().to_string()
    };
    assert!(
        err(&|c| c.topology = Some(TopologyKind::Grid { w: 4, h: 5 }))
            .contains("geometric:R topology, not of a grid:4x5")
    );
    assert!(
        err(&|c| {
            c.mobility_until = None;
            c.until = None;
        })
        .contains("never let a run end")
    );
    assert!(err(&|c| c.algorithm = "bully".into()).contains("bully runs on a complete topology"));
}
