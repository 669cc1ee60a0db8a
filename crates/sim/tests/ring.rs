//! Exact message counts and times of the ring algorithms (the lelann, chang-roberts and ring-participant chapters of docs/reference/algorithms/).

mod common;

use common::{config, ids, ids_of, initiators, permutations, run_ok, units};
use elect_algos::chang_roberts::ChangRoberts;
use elect_algos::lelann::LeLann;
use elect_core::NodeId;
use elect_scenario::{Attrs, Delay, Ids, InitiatorSpec, Scenario};
use elect_sim::Sim;

/// Hops from position `p`, clockwise, to the first id in `competitors` stronger than `ids[p]`.
fn dist(ids: &[NodeId], p: usize, competes: impl Fn(usize) -> bool) -> u64 {
    let n = ids.len();
    (1..n).find(|&h| competes((p + h) % n) && ids[(p + h) % n] > ids[p]).map_or(n as u64, |h| h as u64)
}

/// Chang–Roberts's per-arrangement count (its chapter's Cost section), generalized to a subset of initiators under S003's rule: the strongest
/// initiator's token goes all the way round; every other initiator's token dies at the first stronger initiator.
fn chang_roberts_tokens(ids: &[NodeId], initiator: &[bool]) -> u64 {
    let winner = (0..ids.len()).filter(|&p| initiator[p]).max_by_key(|&p| ids[p]).unwrap();
    let others: u64 =
        (0..ids.len()).filter(|&p| initiator[p] && p != winner).map(|p| dist(ids, p, |q| initiator[q])).sum();
    ids.len() as u64 + others
}

#[test]
fn chang_roberts_ascending_and_descending_rings_of_16() {
    let asc = run_ok(&config("chang-roberts", 16, |_| {}));
    assert_eq!(asc.messages.kind("token"), 31);
    assert_eq!(asc.messages.kind("elected"), 16);
    let desc = run_ok(&config("chang-roberts", 16, |c| c.ids = Ids::Descending));
    assert_eq!(desc.messages.kind("token"), 136);
    assert_eq!(desc.leader, Some(NodeId(16)));
}

#[test]
fn chang_roberts_matches_the_reference_table() {
    // Reference values: n, CR ascending, CR descending.
    let table = [
        (1, 1, 1),
        (2, 3, 3),
        (3, 5, 6),
        (4, 7, 10),
        (5, 9, 15),
        (6, 11, 21),
        (7, 13, 28),
        (8, 15, 36),
        (16, 31, 136),
        (32, 63, 528),
    ];
    for (n, asc, desc) in table {
        assert_eq!(run_ok(&config("chang-roberts", n, |_| {})).messages.kind("token"), asc, "ascending n={n}");
        let d = run_ok(&config("chang-roberts", n, |c| c.ids = Ids::Descending));
        assert_eq!(d.messages.kind("token"), desc, "descending n={n}");
    }
}

#[test]
fn chang_roberts_follows_the_per_arrangement_formula_on_random_rings() {
    for n in [2, 3, 5, 8, 13, 21, 34, 64] {
        for seed in 1..=40 {
            let cfg = config("chang-roberts", n, |c| {
                c.ids = Ids::Random;
                c.seed = seed;
            });
            let expected = chang_roberts_tokens(&ids_of(&cfg), &vec![true; n]);
            let report = run_ok(&cfg);
            assert_eq!(report.messages.kind("token"), expected, "{}", report.reproduce);
            assert_eq!(report.messages.kind("elected"), n as u64);
            assert_eq!(report.leader, Some(NodeId(n as u32)));
        }
    }
}

#[test]
fn chang_roberts_with_some_initiators_elects_the_strongest_initiator() {
    for seed in 1..=60 {
        let n = 24;
        let cfg = config("chang-roberts", n, |c| {
            c.ids = Ids::Random;
            c.initiators = InitiatorSpec::Random(1 + seed as usize % 7);
            c.seed = seed;
        });
        let scenario = Scenario::build(&cfg).unwrap();
        let report = run_ok(&cfg);
        assert_eq!(report.messages.kind("token"), chang_roberts_tokens(&scenario.ids, &scenario.initiators));
        let strongest = (0..n).filter(|&p| scenario.initiators[p]).map(|p| scenario.ids[p]).max();
        assert_eq!(report.leader, strongest, "{}", report.reproduce);
    }
}

#[test]
fn chang_roberts_mean_over_all_arrangements_of_six_is_n_h_n() {
    let n = 6u64;
    let total: u64 = permutations(&[1, 2, 3, 4, 5, 6])
        .iter()
        .map(|p| run_ok(&config("chang-roberts", 6, |c| c.ids = ids(p))).messages.kind("token"))
        .sum();
    // n·H_n·n! = n · Σ_k n!/k, an integer.
    let factorial: u64 = (1..=n).product();
    let expected: u64 = n * (1..=n).map(|k| factorial / k).sum::<u64>();
    assert_eq!(total, expected);
    assert_eq!(total as f64 / factorial as f64, 14.7);
}

#[test]
fn chang_roberts_times_under_unit_delay() {
    for n in [1, 2, 7, 16] {
        let r = run_ok(&config("chang-roberts", n, |c| c.ids = Ids::Random));
        assert_eq!(r.elected_at.unwrap().ticks(), units(2 * n as u64), "everybody knows at 2n (n={n})");
    }
}

#[test]
fn chang_roberts_counts_do_not_depend_on_random_delays() {
    for seed in 1..=20 {
        let cfg = config("chang-roberts", 20, |c| {
            c.ids = Ids::Random;
            c.seed = seed;
        });
        let unit = run_ok(&cfg);
        let random = run_ok(&config("chang-roberts", 20, |c| {
            *c = cfg.clone();
            c.delay = Delay::Uniform(units(1), units(9));
        }));
        assert_eq!(unit.messages, random.messages);
    }
}

#[test]
fn ring_participant_single_initiator_costs_2n_plus_d() {
    let n = 10u32;
    for d in 0..n {
        // Ascending ids: the strongest (id n) sits at position n-1; the initiator d hops upstream of it.
        let initiator = (n - 1 + n - d) % n + 1;
        let r = run_ok(&config("ring-participant", n as usize, |c| c.initiators = initiators(&[initiator])));
        assert_eq!(r.messages.kind("election"), u64::from(n + d), "d={d}");
        assert_eq!(r.messages.kind("elected"), u64::from(n), "d={d}");
        assert_eq!(r.leader, Some(NodeId(n)));
        assert_eq!(r.end_time.ticks(), units(u64::from(2 * n + d)), "time 2n + d (d={d})");
        assert!(r.bounds[0].held && r.bounds[0].value == u64::from(3 * n - 1));
    }
}

#[test]
fn ring_participant_ranks_by_attribute_then_id() {
    // Node 3 has the best attribute; ids 4 and 5 tie on attribute 0 with everybody else.
    let r = run_ok(&config("ring-participant", 5, |c| c.attrs = "3=9".parse::<Attrs>().unwrap()));
    assert_eq!(r.leader, Some(NodeId(3)));
    let tie = run_ok(&config("ring-participant", 5, |c| c.attrs = "2=4,4=4".parse::<Attrs>().unwrap()));
    assert_eq!(tie.leader, Some(NodeId(4)), "equal attributes: the larger id wins");
    let lowest = run_ok(&config("ring-participant", 5, |c| {
        c.attrs = "2=4,4=4".parse::<Attrs>().unwrap();
        c.prefer = elect_core::Prefer::Lowest;
    }));
    assert_eq!(lowest.leader, Some(NodeId(1)), "smallest (attr, id) wins");
}

#[test]
fn ring_participant_with_every_initiator_adds_n_to_chang_roberts() {
    for seed in 1..=30 {
        let cfg = config("ring-participant", 16, |c| {
            c.ids = Ids::Random;
            c.seed = seed;
        });
        let r = run_ok(&cfg);
        assert_eq!(r.messages.kind("election"), chang_roberts_tokens(&ids_of(&cfg), &[true; 16]));
        assert_eq!(r.messages.kind("elected"), 16);
    }
}

#[test]
fn lelann_costs_two_l_per_initiator_and_everybody_learns_leader_and_members() {
    let n = 10;
    for k in 1..=n {
        let cfg = config("lelann", n, |c| {
            c.ids = Ids::Random;
            c.initiators = InitiatorSpec::Random(k);
            c.seed = k as u64;
        });
        let scenario = Scenario::build(&cfg).unwrap();
        let mut sim = Sim::new(LeLann, scenario.clone());
        sim.run().unwrap();
        let r = sim.report();
        assert!(r.ok(), "{:?}", r.properties.violations);
        assert_eq!(r.messages.total, 2 * k as u64 * n as u64);
        assert_eq!(r.messages.kind("election"), k as u64 * n as u64);
        assert_eq!(r.leader, Some(NodeId(n as u32)));
        for node in sim.processes() {
            let members = node.members();
            let start = scenario.ids.iter().position(|&id| id == members[0]).unwrap();
            let ring_order: Vec<NodeId> = (0..n).map(|h| scenario.ids[(start + h) % n]).collect();
            assert_eq!(members, ring_order, "members in ring order from an initiator");
        }
    }
}

#[test]
fn a_broken_chang_roberts_is_caught_with_its_seed() {
    let cfg = config("chang-roberts", 8, |c| {
        c.ids = Ids::Random;
        c.seed = 7;
        c.params = elect_algos::Params::parse(["bug=forward-smaller"]).unwrap();
    });
    let r = elect_sim::simulate(&cfg, None).unwrap();
    let violated: Vec<_> = r.properties.violations.iter().map(|v| v.property.name()).collect();
    assert!(violated.contains(&"safety") && violated.contains(&"uniqueness"), "{violated:?}");
    assert_eq!(r.properties.safety, elect_sim::Verdict::Violated);
    assert!(r.reproduce.contains("--seed 7") && r.reproduce.contains("--param bug=forward-smaller"), "{}", r.reproduce);
    // The correct algorithm on the same ring is fine.
    let mut fixed = cfg.clone();
    fixed.params = elect_algos::Params::new();
    assert!(run_ok(&fixed).ok());
    let _ = ChangRoberts::default();
}
