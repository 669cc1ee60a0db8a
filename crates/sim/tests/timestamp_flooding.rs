//! Chow, Luo and Newman-Wolfe's timestamped flooding (S002): exact counts for one initiator, the time bound, the
//! end state (a spanning tree rooted at the earliest initiator) and the bounds for several initiators.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{config, ids, initiators, run_ok, units};
use elect_algos::timestamp_flooding::{TimestampFlooding, TimestampFloodingProcess};
use elect_algos::{Algorithm, Facts};
use elect_core::{Duration, NodeId, Prefer};
use elect_scenario::{
    Delay, EdgeFile, Ids, InitiatorSpec, NodeAt, Radius, Scenario, SimConfig, TICKS_PER_UNIT, TopologyKind,
};
use elect_sim::{Report, Sim};
use proptest::prelude::*;

const NAME: &str = "timestamp-flooding";

/// The families with one initiator, each with a size it fits.
fn families() -> Vec<(TopologyKind, usize)> {
    vec![
        (TopologyKind::Grid { w: 4, h: 5 }, 20),
        (TopologyKind::Torus { w: 4, h: 5 }, 20),
        (TopologyKind::RandomRegular { k: 3 }, 20),
        (TopologyKind::RandomRegular { k: 4 }, 21),
        (TopologyKind::Chordal { k: 2 }, 17),
        (TopologyKind::Chordal { k: 5 }, 10),
        (TopologyKind::Tree, 25),
        (TopologyKind::Complete, 12),
        (TopologyKind::Ring, 15),
        (TopologyKind::Line, 9),
        (TopologyKind::Star, 8),
        (TopologyKind::Geometric { r: Radius(0.55) }, 16),
    ]
}

/// Whether the family has bounded degree (the model of S002, where the empirical bound holds).
fn bounded_degree(topology: &TopologyKind) -> bool {
    !matches!(topology, TopologyKind::Complete | TopologyKind::Geometric { .. })
}

/// The graph of `links` on `nodes` positions, without a file.
fn edges(nodes: usize, links: &[(u32, u32)]) -> TopologyKind {
    TopologyKind::File(EdgeFile { path: "inline".into(), nodes, links: Arc::new(links.to_vec()) })
}

/// Runs `cfg` on a simulator whose processes stay inspectable.
fn simulate(cfg: &SimConfig) -> (Sim<TimestampFlooding>, Report) {
    let scenario = Scenario::build(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.command_line()));
    let mut sim = Sim::new(TimestampFlooding, scenario);
    sim.run().unwrap();
    let report = sim.report();
    (sim, report)
}

/// The winner: the initiator with the smallest id (every initiator starts at time 0).
fn earliest(sim: &Sim<TimestampFlooding>) -> NodeId {
    let sc = sim.scenario();
    (0..sc.len()).filter(|&i| sc.initiators[i] && sim.is_up(i)).map(|i| sc.ids[i]).min().expect("someone initiates")
}

/// Checks the end state of docs/reference/algorithms/timestamp-flooding.md on the live processes themselves, and returns a description of
/// the first problem.
fn end_state(sim: &Sim<TimestampFlooding>, report: &Report) -> Result<(), String> {
    let sc = sim.scenario();
    let procs: &[TimestampFloodingProcess] = sim.processes();
    let live: Vec<usize> = (0..sc.len()).filter(|&i| sim.is_up(i)).collect();
    let n = live.len();
    let winner = earliest(sim);
    let root = sc.ids.iter().position(|&id| id == winner).unwrap();
    if !report.terminated || !report.ok() {
        return Err(format!("terminated {} violations {:?}", report.terminated, report.properties.violations));
    }
    if report.leader != Some(winner) || !report.agreed {
        return Err(format!("leader {:?} (agreed {}), expected {winner}", report.leader, report.agreed));
    }
    let parent = |i: usize| procs[i].parent().map(|p| sc.graph.far_end(i as u32, p.0).node as usize);
    let roots: Vec<usize> = live.iter().copied().filter(|&i| procs[i].parent().is_none()).collect();
    if roots != [root] {
        return Err(format!("positions without a parent: {roots:?}, expected only {root}"));
    }
    for &i in &live {
        let p = &procs[i];
        if p.leader() != Some(winner) || !p.voted() {
            return Err(format!("position {i}: leader {:?}, voted {}", p.leader(), p.voted()));
        }
        // Following parents from anywhere reaches the root in fewer than n hops: no cycle.
        let (mut at, mut hops) = (i, 0);
        while let Some(up) = parent(at) {
            if !sim.is_up(up) {
                return Err(format!("position {at} has the dead position {up} as parent"));
            }
            (at, hops) = (up, hops + 1);
            if hops >= n {
                return Err(format!("the parent pointers from position {i} go round a cycle"));
            }
        }
        if at != root {
            return Err(format!("the parent pointers from position {i} end at {at}, not at the root {root}"));
        }
    }
    // Every process knows its children as exactly those that chose it as parent.
    let chosen: BTreeSet<(usize, usize)> = live.iter().filter_map(|&i| parent(i).map(|p| (p, i))).collect();
    let known: BTreeSet<(usize, usize)> = live
        .iter()
        .flat_map(|&j| procs[j].children().map(move |c| (j, sc.graph.far_end(j as u32, c.0).node as usize)))
        .collect();
    if chosen != known {
        return Err(format!("children {known:?} but parents {chosen:?}"));
    }
    // Every process but the root voted exactly once. With one campaign the announcement goes down the tree
    // once; with several, a late a27 reply can make a process that has voted count a neighbour as a child for a
    // while, and an announcement passing then goes to that neighbour as well.
    let tree = n as u64 - 1;
    let (votes, leaders) = (report.messages.kind("vote"), report.messages.kind("leader"));
    let one = report.initiators == 1;
    if votes != tree || leaders < tree || (one && leaders != tree) {
        return Err(format!("{votes} votes and {leaders} announcements for n - 1 = {tree}"));
    }
    Ok(())
}

/// The largest eccentricity among the initiators of `cfg`, by breadth-first search.
fn initiator_eccentricity(cfg: &SimConfig) -> u64 {
    let sc = Scenario::build(cfg).unwrap();
    (0..sc.len() as u32).filter(|&i| sc.initiators[i as usize]).map(|i| sc.graph.eccentricity(i)).max().unwrap()
}

#[test]
fn one_initiator_costs_exactly_4m_on_every_family_under_unit_and_random_delays() {
    let mut runs = 0;
    for (topology, n) in families() {
        for seed in 1..=6 {
            for delay in [Delay::default(), Delay::Uniform(units(1), units(9))] {
                let cfg = config(NAME, n, |c| {
                    c.topology = Some(topology.clone());
                    c.ids = Ids::Random;
                    c.initiators = InitiatorSpec::Random(1);
                    c.seed = seed;
                    c.delay = delay;
                });
                let (sim, r) = simulate(&cfg);
                end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
                let (n, m) = (n as u64, r.edges);
                let counts = [("cfl", 2 * m - (n - 1)), ("ack-parent", n - 1), ("ack-sibling", 2 * (m + 1 - n))];
                for (kind, expected) in counts.into_iter().chain([("vote", n - 1), ("leader", n - 1)]) {
                    assert_eq!(r.messages.kind(kind), expected, "{kind}: {}", r.reproduce);
                }
                assert_eq!(r.messages.total, 4 * m, "{}", r.reproduce);
                assert!(r.bounds.iter().all(|b| b.held && b.measured <= b.value), "{:?}", r.bounds);
                assert_eq!(r.bounds[0].measured, r.bounds[0].value, "the headline bound is exact");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 12 * 6 * 2);
}

#[test]
fn under_unit_delays_one_initiator_is_done_by_three_times_its_eccentricity_plus_two() {
    for (topology, n) in families() {
        for seed in 1..=6 {
            let cfg = config(NAME, n, |c| {
                c.topology = Some(topology.clone());
                c.initiators = InitiatorSpec::Random(1);
                c.seed = seed;
            });
            let r = run_ok(&cfg);
            let ecc = initiator_eccentricity(&cfg);
            let at = r.elected_at.unwrap().ticks();
            assert!(at <= (3 * ecc + 2) * TICKS_PER_UNIT, "{at} ticks with ecc {ecc}: {}", r.reproduce);
        }
    }
}

/// Whether the processes other than position `dead` are connected.
fn connected_without(sc: &Scenario, dead: u32) -> bool {
    let n = sc.len() as u32;
    let start = (0..n).find(|&i| i != dead).unwrap();
    let (mut seen, mut stack) = (BTreeSet::from([start]), vec![start]);
    while let Some(i) = stack.pop() {
        for p in 0..sc.graph.degree(i) {
            let j = sc.graph.far_end(i, p).node;
            if j != dead && seen.insert(j) {
                stack.push(j);
            }
        }
    }
    seen.len() as u32 == n - 1
}

#[test]
fn with_the_old_leader_crashed_one_initiator_costs_exactly_4m_over_the_links_that_remain() {
    let mut runs = 0;
    for (topology, n) in families() {
        for seed in 1..=6 {
            let cfg = config(NAME, n, |c| {
                c.topology = Some(topology.clone());
                c.ids = Ids::Random;
                c.crashes.push(NodeAt { id: NodeId(n as u32), at: 0 });
                c.initiators = InitiatorSpec::Random(1);
                c.seed = seed;
                c.delay = Delay::Uniform(units(1), units(9));
            });
            let sc = Scenario::build(&cfg).unwrap();
            let dead = sc.ids.iter().position(|&id| id == NodeId(n as u32)).unwrap() as u32;
            if n < 3 || !connected_without(&sc, dead) {
                continue;
            }
            let (sim, r) = simulate(&cfg);
            end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
            // The dead process's links are gone: nobody sends it anything.
            let (n, m) = (n as u64 - 1, r.edges - u64::from(sc.graph.degree(dead)));
            let counts = [("cfl", 2 * m - (n - 1)), ("ack-parent", n - 1), ("ack-sibling", 2 * (m + 1 - n))];
            for (kind, expected) in counts {
                assert_eq!(r.messages.kind(kind), expected, "{kind}: {}", r.reproduce);
            }
            assert_eq!(r.messages.total, 4 * m, "{}", r.reproduce);
            runs += 1;
        }
    }
    assert!(runs >= 50, "{runs}");
}

#[test]
fn the_neighbours_of_the_crashed_old_leader_initiate_and_the_smallest_id_among_them_wins() {
    for (topology, n) in families() {
        for seed in 1..=4 {
            let mut cfg = config(NAME, n, |c| {
                c.topology = Some(topology.clone());
                c.ids = Ids::Random;
                c.crashes.push(NodeAt { id: NodeId(n as u32), at: 0 });
                c.seed = seed;
                c.delay = Delay::Uniform(units(1), units(9));
            });
            let sc = Scenario::build(&cfg).unwrap();
            let dead = sc.ids.iter().position(|&id| id == NodeId(n as u32)).unwrap() as u32;
            if !connected_without(&sc, dead) {
                continue;
            }
            let noticed: BTreeSet<NodeId> =
                (0..sc.graph.degree(dead)).map(|p| sc.ids[sc.graph.far_end(dead, p).node as usize]).collect();
            cfg.initiators = InitiatorSpec::List(noticed.iter().copied().collect());
            let (sim, r) = simulate(&cfg);
            end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
            assert_eq!(r.leader, noticed.first().copied(), "{}", r.reproduce);
            let headline = if noticed.len() == 1 || bounded_degree(&topology) { 0 } else { 1 };
            assert!(r.bounds[headline].held, "{:?}", r.bounds);
        }
    }
}

#[test]
fn a_single_process_elects_itself_without_a_message() {
    let r = run_ok(&config(NAME, 1, |c| c.topology = Some(TopologyKind::Complete)));
    assert_eq!((r.leader, r.messages.total, r.elected_at.map(|t| t.ticks())), (Some(NodeId(1)), 0, Some(0)));
}

#[test]
fn equal_timestamps_go_to_the_smaller_initiator_id_whatever_the_ranking() {
    for prefer in [Prefer::Highest, Prefer::Lowest] {
        for seed in 1..=5 {
            let cfg = config(NAME, 12, |c| {
                c.topology = Some(TopologyKind::Ring);
                c.ids = ids(&[4, 9, 2, 12, 7, 1, 5, 11, 3, 8, 10, 6]);
                c.initiators = initiators(&[9, 3, 7, 12]);
                c.prefer = prefer;
                c.seed = seed;
                c.delay = Delay::Uniform(units(1), units(9));
            });
            let (sim, r) = simulate(&cfg);
            end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
            assert_eq!(r.leader, Some(NodeId(3)));
            assert_eq!(r.expected_leader, Some(NodeId(3)));
        }
    }
}

#[test]
fn two_floods_collide_in_the_middle_of_a_line() {
    // Initiators at both ends of a line of 7: the floods meet at the middle, and the winner's campaign then
    // reverses the loser's half of the line.
    let cfg = config(NAME, 7, |c| {
        c.topology = Some(TopologyKind::Line);
        c.ids = ids(&[5, 1, 2, 3, 4, 6, 7]);
        c.initiators = initiators(&[5, 7]);
    });
    let (sim, r) = simulate(&cfg);
    end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
    assert_eq!(r.leader, Some(NodeId(5)));
    // On a line every link carries each campaign once each way at most.
    assert!(r.messages.kind("cfl") <= 4 * r.edges, "{:?}", r.messages);
    // Everybody ends on the winner's campaign: the loser and its half were conquered before they could vote.
    assert!(sim.processes().iter().all(|p| p.key().map(|k| k.initiator) == Some(NodeId(5))));
}

#[test]
fn a_losing_initiator_is_conquered_after_its_subtree_has_voted() {
    // A broom: the winner at one end of a path 0–…–6, the loser at position 6 with a triangle of leaves 7, 8.
    // Under unit delays the leaves vote for the loser at time 3; the winner's flood reaches it at time 6.
    let links = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (6, 8), (7, 8)];
    let cfg = config(NAME, 9, |c| {
        c.topology = Some(edges(9, &links));
        c.ids = Ids::Ascending;
        c.initiators = initiators(&[1, 7]);
    });
    let (sim, r) = simulate(&cfg);
    end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
    assert_eq!(r.leader, Some(NodeId(1)));
    let initiator_of = |i: usize| sim.processes()[i].key().unwrap().initiator;
    // The leaves reported under the losing campaign and were never asked again; the rest follow the winner.
    assert_eq!((initiator_of(7), initiator_of(8)), (NodeId(7), NodeId(7)));
    assert!((0..=6).all(|i| initiator_of(i) == NodeId(1)));
    // The loser's new parent is its neighbour towards the winner; its leaves stay its children.
    let loser = &sim.processes()[6];
    assert_eq!(loser.parent().map(|p| sim.scenario().graph.far_end(6, p.0).node), Some(5));
}

#[test]
fn a_process_that_has_voted_answers_a_better_campaign_as_a_sibling() {
    // The winner (id 1) at 0 reaches 2 through 1 at time 2; the loser (id 5) at 4 reaches 2 and 3 at time 1.
    // At time 2, 2 first re-parents towards the winner, then answers 3's copy of the losing campaign with the
    // winning one (a27), while 3, having heard from everybody, votes for the loser. The better campaign reaches
    // 3 from 2 after its vote: E7, an ack-sibling. Then 3's parent, conquered in turn, passes it on (E6).
    let links = [(0, 1), (1, 2), (2, 3), (2, 4), (3, 4)];
    let cfg = config(NAME, 5, |c| {
        c.topology = Some(edges(5, &links));
        c.ids = Ids::Ascending;
        c.initiators = initiators(&[1, 5]);
    });
    let buf = common::SharedBuf::default();
    let scenario = Scenario::build(&cfg).unwrap();
    let mut sim = Sim::new(TimestampFlooding, scenario);
    sim.trace_to(Box::new(buf.clone()));
    sim.run().unwrap();
    let r = sim.report();
    end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
    let sends: Vec<serde_json::Value> = String::from_utf8(buf.bytes())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["ev"] == "send" && l["node"] == 4)
        .collect();
    let kinds: Vec<&str> = sends.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ack-parent", "cfl", "ack-sibling", "vote", "ack-sibling", "ack-parent"], "{sends:?}");
    assert_eq!(sends[4]["to"], 3);
    assert_eq!(sends[4]["msg"], serde_json::json!({"ack-sibling": {"key": {"time": 0, "initiator": 1}}}));
    assert_eq!(
        (sends[5]["to"].clone(), sends[5]["msg"]["ack-parent"]["key"]["initiator"].clone()),
        (5.into(), 1.into())
    );
    assert_eq!(sim.processes()[3].parent().map(|p| sim.scenario().graph.far_end(3, p.0).node), Some(4));
    assert_eq!(r.leader, Some(NodeId(1)));
}

#[test]
fn a_late_acknowledgement_of_an_older_campaign_is_not_taken_for_an_answer_to_the_current_one() {
    // Process 3 moves from campaign 2 to campaign 1 and sends it to 5; 5's ack-sibling for campaign 2 arrives
    // afterwards, and its answer to campaign 1 only at 14.6. Taking the old answer for a new one (no E8), 3 voted
    // without 5, the root declared itself at 10.8, and 5 never heard who won.
    let cfg = config(NAME, 7, |c| {
        c.topology = Some(TopologyKind::RandomRegular { k: 4 });
        c.ids = Ids::Random;
        c.initiators = InitiatorSpec::Random(6);
        c.seed = 69584;
        c.delay = Delay::Exp(units(2));
        c.crashes.push(NodeAt { id: NodeId(7), at: 0 });
    });
    let (sim, r) = simulate(&cfg);
    end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
    assert_eq!(r.leader, Some(NodeId(1)));
}

#[test]
fn complete_graphs_with_every_process_initiating_elect_over_many_siblings() {
    for seed in 1..=10 {
        let cfg = config(NAME, 16, |c| {
            c.topology = Some(TopologyKind::Complete);
            c.ids = Ids::Random;
            c.seed = seed;
            c.delay = Delay::Uniform(units(1), units(9));
        });
        let (sim, r) = simulate(&cfg);
        end_state(&sim, &r).unwrap_or_else(|e| panic!("{e}: {}", r.reproduce));
        let (n, m, k) = (16, r.edges, 16);
        assert_eq!(r.bounds[0].value, 4 * m + k * (n - 1), "{:?}", r.bounds[0]);
        assert!(r.bounds[1].held && r.bounds[1].value == 2 * k * m, "{:?}", r.bounds[1]);
        assert!(r.bounds[2].name.starts_with("S002"), "the paper's bound is reported: {:?}", r.bounds);
    }
}

#[test]
fn dense_graphs_with_many_initiators_exceed_the_empirical_bound_but_not_the_proven_one() {
    // A complete graph of 30, everybody initiating: processes re-parent many times, each time telling all their
    // children. The empirical bound is exceeded and reported so; the run is fine and the proven bound holds.
    let r = run_ok(&config(NAME, 30, |c| {
        c.topology = Some(TopologyKind::Complete);
        c.ids = Ids::Random;
        c.seed = 29;
    }));
    assert!(!r.bounds[0].held && r.bounds[0].measured > r.bounds[0].value, "{:?}", r.bounds[0]);
    assert!(r.bounds[1].held, "{:?}", r.bounds[1]);
}

#[test]
fn the_papers_bound_is_reported_honestly_and_does_not_fail_the_run() {
    // Every process of a complete graph initiating: the a27 replies the paper leaves out push cfl + vote +
    // leader past 2m + k(n-1) + 2(n-1), while every property holds.
    let cfg = config(NAME, 20, |c| {
        c.topology = Some(TopologyKind::Complete);
        c.delay = Delay::Uniform(units(1), units(9));
    });
    let r = run_ok(&cfg);
    let paper = &r.bounds[2];
    assert!(!paper.held && paper.measured > paper.value, "{paper:?}");
    assert!(r.bounds[1].held);
}

#[test]
fn off_its_fifo_model_a_run_still_ends_and_says_what_broke() {
    // Reordered acknowledgements made children links form a cycle here, and the announcement went round it for
    // ever until each process passed it on only once.
    for seed in 1..=25 {
        let cfg = config(NAME, 16, |c| {
            c.topology = Some("random-regular:4".parse().unwrap());
            c.ids = Ids::Random;
            c.seed = seed;
            c.delay = Delay::Uniform(units(1), units(9));
            c.fifo = false;
            c.max_events = 200_000;
        });
        let r = elect_sim::simulate(&cfg, None).unwrap();
        assert!(r.terminated, "{}", r.reproduce);
        // Once per process, to each of its children: at most once per link end.
        assert!(r.messages.kind("leader") <= 2 * r.edges, "{}", r.reproduce);
    }
}

/// A random connected topology of the families, and its size.
fn topology() -> impl Strategy<Value = (TopologyKind, usize)> {
    prop_oneof![
        (2u32..6, 2u32..6).prop_map(|(w, h)| (TopologyKind::Grid { w, h }, (w * h) as usize)),
        (3u32..6, 3u32..6).prop_map(|(w, h)| (TopologyKind::Torus { w, h }, (w * h) as usize)),
        (4usize..13).prop_map(|half| (TopologyKind::RandomRegular { k: 3 }, 2 * half)),
        (5usize..25).prop_map(|n| (TopologyKind::RandomRegular { k: 4 }, n)),
        (4usize..25).prop_map(|n| (TopologyKind::Chordal { k: 2 }, n)),
        (1usize..25).prop_map(|n| (TopologyKind::Tree, n)),
        (1usize..14).prop_map(|n| (TopologyKind::Complete, n)),
        (1usize..25).prop_map(|n| (TopologyKind::Ring, n)),
        (1usize..15).prop_map(|n| (TopologyKind::Line, n)),
        (1usize..15).prop_map(|n| (TopologyKind::Star, n)),
        (2usize..20).prop_map(|n| (TopologyKind::Geometric { r: Radius(0.6) }, n)),
    ]
}

fn delay() -> impl Strategy<Value = Delay> {
    prop_oneof![
        Just(Delay::default()),
        Just(Delay::Uniform(units(1), units(9))),
        (1u64..5).prop_map(|b| Delay::Uniform(1, units(b))),
        Just(Delay::Exp(units(2))),
    ]
}

proptest! {
    // Geometric draws, and networks without their old leader, are sometimes disconnected: rejected draws.
    #![proptest_config(common::proptest_config(2000))]

    /// Random families, sizes, initiator sets, delays, seeds, with or without the old leader crashed from the
    /// start: the earliest initiator, and only it, is elected; everybody agrees; the run terminates with a
    /// spanning tree of the live processes rooted at the leader; cfl stays within the proven bound, and within
    /// the empirical one on bounded-degree families; and the election ends within the time the algorithm
    /// announces.
    #[test]
    fn random_runs_elect_the_earliest_initiator_over_a_spanning_tree(
        (topology, n) in topology(),
        k in 1usize..8,
        delay in delay(),
        seed in 0u64..1_000_000,
        crash in any::<bool>(),
    ) {
        let crash = crash && n >= 3;
        let sparse = bounded_degree(&topology);
        let cfg = config(NAME, n, |c| {
            c.topology = Some(topology);
            c.ids = Ids::Random;
            c.initiators = if k >= n { InitiatorSpec::All } else { InitiatorSpec::Random(k) };
            c.seed = seed;
            c.delay = delay;
            if crash {
                c.crashes.push(NodeAt { id: NodeId(n as u32), at: 0 });
            }
        });
        // A geometric draw may fall apart, and so may a network without its old leader.
        let Ok(sc) = Scenario::build(&cfg) else { return Err(TestCaseError::reject("disconnected")) };
        let dead = sc.ids.iter().position(|&id| id == NodeId(n as u32)).unwrap() as u32;
        prop_assume!(!crash || connected_without(&sc, dead));
        let (sim, r) = simulate(&cfg);
        if let Err(problem) = end_state(&sim, &r) {
            return Err(TestCaseError::fail(format!("{problem}: {}", r.reproduce)));
        }
        let (n, m, k) = (n as u64, r.edges, r.initiators as u64);
        let cfl = r.messages.kind("cfl");
        prop_assert!(cfl <= 2 * k * m, "{:?}: {}", r.messages, r.reproduce);
        prop_assert!(!sparse || cfl <= 4 * m + k * (n - 1), "{:?}: {}", r.messages, r.reproduce);
        // The reported bounds agree: the headline one holds where it applies, the second always.
        prop_assert!(r.bounds[1].held && (r.bounds[0].held || (k > 1 && !sparse)), "{:?}", r.bounds);
        if k == 1 {
            let m_live = if crash { m - u64::from(sc.graph.degree(dead)) } else { m };
            prop_assert_eq!(r.messages.total, 4 * m_live, "{}", r.reproduce);
        }
        if let Some(t) = delay.bound() {
            let facts = Facts::new(n, m, k);
            let limit = TimestampFlooding.election_time(&facts, Duration::from_ticks(t)).ticks();
            let at = r.elected_at.unwrap().ticks();
            prop_assert!(at <= limit, "elected at {} ticks, announced {}: {}", at, limit, r.reproduce);
        }
    }
}
