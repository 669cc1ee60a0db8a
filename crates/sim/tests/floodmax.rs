//! FloodMax and OptFloodMax on general networks (docs/reference/algorithms/floodmax.md): exact counts and times, the same run under
//! random delays, and the diameter they need.

mod common;

use common::{config, ids, run_ok, units};
use elect_algos::Params;
use elect_core::{NodeId, Prefer};
use elect_scenario::{Ids, Scenario, SimConfig, TopologyKind};
use elect_sim::{Report, simulate};

/// The topologies of the exact-count tests, with their sizes.
fn topologies() -> Vec<(TopologyKind, usize)> {
    let parse = |s: &str| s.parse::<TopologyKind>().unwrap();
    vec![
        (TopologyKind::Ring, 12),
        (TopologyKind::Ring, 13),
        (TopologyKind::Complete, 10),
        (TopologyKind::Line, 9),
        (TopologyKind::Star, 10),
        (TopologyKind::Grid { w: 5, h: 4 }, 20),
        (TopologyKind::Torus { w: 5, h: 4 }, 20),
        (parse("random-regular:3"), 24),
        (parse("random-regular:4"), 25),
        (parse("chordal:2"), 16),
        (TopologyKind::Tree, 20),
        (parse("geometric:0.45"), 30),
    ]
}

fn flood(algorithm: &str, topology: &TopologyKind, n: usize, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    config(algorithm, n, |c| {
        c.topology = Some(topology.clone());
        f(c);
    })
}

/// `(2m, D)` of a finished run.
fn links_and_diameter(r: &Report) -> (u64, u64) {
    (2 * r.edges, r.diameter.expect("the simulator measures the diameter of these graphs"))
}

/// A reference run of the synchronous algorithm on `cfg`'s graph: every round at once, no clock, no simulator.
/// Returns the messages sent and every process's final maximum, by position.
fn reference(cfg: &SimConfig, rounds: u64, opt: bool) -> (u64, Vec<NodeId>) {
    let sc = Scenario::build(cfg).unwrap();
    let n = sc.len();
    let mut max = sc.ranks.clone();
    let mut came_from: Vec<Option<u32>> = vec![None; n];
    let mut changed = vec![true; n];
    let mut sent = 0;
    for _ in 0..rounds {
        // Per receiver: the strongest id received this round, on the lowest port that delivered it.
        let mut best: Vec<Option<(elect_core::Rank, u32)>> = vec![None; n];
        for i in 0..n {
            if opt && !changed[i] {
                continue;
            }
            for port in 0..sc.graph.degree(i as u32) {
                if opt && came_from[i] == Some(port) {
                    continue;
                }
                sent += 1;
                let end = sc.graph.far_end(i as u32, port);
                let offer = (max[i], end.port);
                let b = &mut best[end.node as usize];
                if b.is_none_or(|(r, p)| offer.0 > r || (offer.0 == r && offer.1 < p)) {
                    *b = Some(offer);
                }
            }
        }
        for i in 0..n {
            changed[i] = false;
            if let Some((r, p)) = best[i].filter(|&(r, _)| r > max[i]) {
                (max[i], came_from[i], changed[i]) = (r, Some(p), true);
            }
        }
    }
    (sent, max.iter().map(|r| r.id()).collect())
}

#[test]
fn floodmax_sends_exactly_d_times_2m_and_everybody_knows_the_strongest_at_d_t() {
    for (topology, n) in topologies() {
        for (seed, arrangement) in [(1, Ids::Random), (2, Ids::Ascending), (3, Ids::Descending), (4, Ids::Random)] {
            let cfg = flood("floodmax", &topology, n, |c| {
                c.seed = seed;
                c.ids = arrangement;
            });
            let r = run_ok(&cfg);
            let (two_m, d) = links_and_diameter(&r);
            assert!(d >= 1);
            assert_eq!(r.messages.kind("max"), two_m * d, "{}", r.reproduce);
            assert_eq!(r.messages.total, two_m * d, "max is the only kind");
            assert_eq!(r.leader, Some(NodeId(n as u32)), "{}", r.reproduce);
            assert!(r.agreed);
            assert_eq!(r.elected_at.map(|t| t.0), Some(units(d)), "{}", r.reproduce);
            assert_eq!(r.declared_at.map(|t| t.0), Some(units(d)), "{}", r.reproduce);
            assert_eq!((r.bounds[0].value, r.bounds[0].measured), (two_m * d, two_m * d));
            assert!(r.terminated);
        }
    }
}

#[test]
fn random_delays_up_to_t_change_nothing_but_the_length_of_a_round() {
    for (topology, n) in topologies() {
        for seed in 1..=3 {
            for algorithm in ["floodmax", "opt-floodmax"] {
                let unit = flood(algorithm, &topology, n, |c| {
                    c.seed = seed;
                    c.ids = Ids::Random;
                });
                let random = SimConfig { delay: "uniform:1..3".parse().unwrap(), ..unit.clone() };
                let (a, b) = (run_ok(&unit), run_ok(&random));
                let (_, d) = links_and_diameter(&a);
                assert_eq!(b.leader, Some(NodeId(n as u32)), "{}", b.reproduce);
                assert_eq!(b.messages.by_kind, a.messages.by_kind, "{}", b.reproduce);
                assert_eq!(b.elected_at.map(|t| t.0), Some(units(3 * d)), "rounds of T = 3: {}", b.reproduce);
                assert!(b.agreed);
            }
        }
    }
}

#[test]
fn an_upper_bound_on_the_diameter_runs_that_many_rounds() {
    let line = TopologyKind::Line;
    for (topology, n) in [(&line, 6), (&TopologyKind::Grid { w: 4, h: 3 }, 12), (&TopologyKind::Complete, 7)] {
        for extra in [0, 1, 5] {
            let measured = run_ok(&flood("floodmax", topology, n, |c| c.ids = Ids::Random));
            let (two_m, d) = links_and_diameter(&measured);
            let bound = d + extra;
            let cfg = flood("floodmax", topology, n, |c| {
                c.ids = Ids::Random;
                c.params = Params::parse([format!("diameter={bound}").as_str()]).unwrap();
            });
            let r = run_ok(&cfg);
            assert_eq!(r.messages.kind("max"), two_m * bound, "{}", r.reproduce);
            assert_eq!(r.elected_at.map(|t| t.0), Some(units(bound)));
            assert_eq!(r.bounds[0].value, two_m * bound);
            assert_eq!(r.leader, Some(NodeId(n as u32)));
        }
    }
    // n − 1, Lynch's bound when the diameter is unknown.
    let cfg = flood("floodmax", &TopologyKind::Grid { w: 5, h: 4 }, 20, |c| {
        c.params = Params::parse(["diameter=19"]).unwrap();
    });
    assert_eq!(run_ok(&cfg).messages.kind("max"), 2 * 31 * 19);
}

#[test]
fn a_bound_below_the_diameter_is_caught_by_the_property_checker() {
    // On a line of 6 with ascending ids, 2 rounds leave the far end believing in 3.
    let cfg = flood("floodmax", &TopologyKind::Line, 6, |c| c.params = Params::parse(["diameter=2"]).unwrap());
    let r = simulate(&cfg, None).unwrap();
    assert!(!r.ok() && !r.agreed);
    assert_eq!(r.messages.kind("max"), 2 * 5 * 2);
}

#[test]
fn opt_floodmax_sends_between_2m_and_d_times_2m_as_the_reference_run_does() {
    for (topology, n) in topologies() {
        for (seed, arrangement) in [(1, Ids::Random), (2, Ids::Ascending), (3, Ids::Descending), (5, Ids::Random)] {
            let cfg = flood("opt-floodmax", &topology, n, |c| {
                c.seed = seed;
                c.ids = arrangement;
            });
            let r = run_ok(&cfg);
            let (two_m, d) = links_and_diameter(&r);
            let sent = r.messages.kind("max");
            assert!((two_m..=two_m * d).contains(&sent), "{sent} not in [{two_m}, {}]: {}", two_m * d, r.reproduce);
            let (expected, maxima) = reference(&cfg, d, true);
            assert_eq!(sent, expected, "{}", r.reproduce);
            assert!(maxima.iter().all(|&m| m == NodeId(n as u32)));
            assert_eq!(r.leader, Some(NodeId(n as u32)), "{}", r.reproduce);
            assert!(r.agreed);
            assert_eq!(r.elected_at.map(|t| t.0), Some(units(d)));
            // The reference FloodMax agrees with the formula too.
            assert_eq!(reference(&cfg, d, false).0, two_m * d);
        }
    }
}

#[test]
fn opt_floodmax_sends_2m_when_every_process_already_holds_the_maximum_after_round_1() {
    // A star with the strongest id at the centre: round 1 costs 2m; after it, only the leaves' maximum changed,
    // and they do not send it back to the centre it came from.
    let cfg = flood("opt-floodmax", &TopologyKind::Star, 8, |c| c.ids = ids(&[8, 1, 2, 3, 4, 5, 6, 7]));
    let r = run_ok(&cfg);
    assert_eq!(r.messages.kind("max"), 2 * 7);
    assert_eq!(r.leader, Some(NodeId(8)));
}

#[test]
fn the_ranking_decides_who_is_strongest() {
    let cfg = flood("floodmax", &TopologyKind::Grid { w: 3, h: 3 }, 9, |c| {
        c.ids = Ids::Random;
        c.prefer = Prefer::Lowest;
    });
    let r = run_ok(&cfg);
    assert_eq!(r.leader, Some(NodeId(1)));
    assert_eq!(r.messages.kind("max"), 2 * 12 * 4);
}

#[test]
fn one_process_leads_at_once_without_a_message() {
    let r = run_ok(&flood("floodmax", &TopologyKind::Complete, 1, |_| {}));
    assert_eq!((r.leader, r.messages.total, r.elected_at.map(|t| t.0)), (Some(NodeId(1)), 0, Some(0)));
}

#[test]
fn a_missing_or_bad_diameter_is_refused() {
    for algorithm in ["floodmax", "opt-floodmax"] {
        for bad in ["diameter=0", "diameter=-1", "diameter=two"] {
            let cfg = config(algorithm, 9, |c| c.params = Params::parse([bad]).unwrap());
            let err = simulate(&cfg, None).unwrap_err().to_string();
            assert!(err.contains(&format!("parameter {bad} is invalid")) && err.contains("at least 1"), "{err}");
        }
        // A disconnected network has no diameter: the simulator refuses it.
        let cfg = flood(algorithm, &"geometric:0.1".parse().unwrap(), 30, |_| {});
        let err = simulate(&cfg, None).unwrap_err().to_string();
        assert!(err.contains("disconnected") && err.contains(algorithm), "{err}");
    }
}
