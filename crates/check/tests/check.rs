//! The checker on the algorithms it can already judge: proofs on small rings, and the counterexamples it must
//! find (FIFO-dependent algorithms on reordering links, Bully with untimed timeouts).

use elect_check::{CheckConfig, Network, Outcome, check};
use elect_sim::{Ids, SimConfig};

fn run(algorithm: &str, n: usize, ids: Ids, network: Network) -> Outcome {
    let mut sim = SimConfig::new(algorithm, n);
    sim.ids = ids;
    let config = CheckConfig { network, max_states: 2_000_000, ..CheckConfig::new(sim) };
    check(&config).unwrap_or_else(|e| panic!("{algorithm} on {n}: {e}"))
}

#[test]
fn ring_algorithms_are_safe_and_elect_on_every_interleaving_of_small_rings() {
    let fifo = ["chang-roberts", "lelann", "ring-participant", "hirschberg-sinclair", "franklin", "peterson"];
    let unordered = ["chang-roberts", "lelann", "hirschberg-sinclair", "franklin"];
    for n in [3, 4] {
        for ids in [Ids::Ascending, Ids::Descending, Ids::Random] {
            for (algorithms, network) in [(&fifo[..], Network::Fifo), (&unordered[..], Network::Unordered)] {
                for algorithm in algorithms {
                    let o = run(algorithm, n, ids.clone(), network);
                    assert!(o.ok(), "{algorithm} n={n} {ids} {network:?}: {:?}", o.counterexample);
                    assert!(o.terminal >= 1 && o.states > 1);
                }
            }
        }
    }
}

#[test]
fn fifo_dependent_algorithms_lose_liveness_on_reordering_links_with_a_shortest_path() {
    for algorithm in ["peterson", "ring-participant"] {
        let o = run(algorithm, 4, Ids::Random, Network::Unordered);
        let c = o.counterexample.as_ref().unwrap_or_else(|| panic!("{algorithm}: no counterexample"));
        assert_eq!(c.property, "liveness", "{algorithm}: {c:?}");
        assert!(!c.path.is_empty() && c.path.len() as u32 <= o.depth, "{algorithm}: {c:?}");
        // Breadth-first: no shorter path to any violation exists, so with one step fewer the search holds.
        assert!(!o.ok());
    }
}

#[test]
fn bully_with_untimed_timeouts_elects_a_weaker_process() {
    let o = run("bully", 3, Ids::Ascending, Network::Fifo);
    let c = o.counterexample.expect("a timeout that fires before the answer it waits for breaks Bully");
    assert_eq!(c.property, "safety");
    assert!(c.path.iter().any(|s| matches!(s, elect_check::Step::Timer { .. })), "{:?}", c.path);
}

#[test]
fn unique_state_counts_of_chang_roberts_without_reduction() {
    // Descending ids, every process initiating, reordering links: the counts `elect check` reports, pinned so
    // that a change of the state's representation or of the search shows.
    let counts: Vec<u64> =
        (3..=6).map(|n| run("chang-roberts", n, Ids::Descending, Network::Unordered).states).collect();
    assert_eq!(counts, [46, 282, 2210, 21326]);
    // FIFO links admit fewer interleavings.
    assert!(run("chang-roberts", 6, Ids::Descending, Network::Fifo).states < counts[3]);
}

#[test]
fn bad_scenarios_are_refused() {
    let mut sim = SimConfig::new("floodmax", 4);
    sim.synchronizer = Some(elect_algos::synchronizers::Spec::Alpha);
    assert!(check(&CheckConfig::new(sim)).unwrap_err().to_string().contains("not supported yet"));
    assert!(
        check(&CheckConfig::new(SimConfig::new("paxos", 3))).unwrap_err().to_string().contains("unknown algorithm")
    );
}

fn run_with(algorithm: &str, n: usize, f: impl FnOnce(&mut CheckConfig)) -> Outcome {
    let mut config = CheckConfig::new(SimConfig::new(algorithm, n));
    f(&mut config);
    check(&config).unwrap_or_else(|e| panic!("{algorithm} on {n}: {e}"))
}

#[test]
fn a_lost_token_or_a_crashed_relay_leaves_chang_roberts_without_a_leader() {
    let lossy = run_with("chang-roberts", 3, |c| c.network = Network::Lossy);
    let c = lossy.counterexample.expect("a lost token is never replaced");
    assert_eq!(c.property, "liveness");
    assert!(c.path.iter().any(|s| matches!(s, elect_check::Step::Lose { .. })), "{:?}", c.path);

    let crash = run_with("chang-roberts", 5, |c| c.crashes = 1);
    let c = crash.counterexample.expect("a crashed relay swallows the tokens");
    assert!(c.path.iter().any(|s| matches!(s, elect_check::Step::Crash { .. })), "{:?}", c.path);
    assert!(crash.states < 10_000, "one crash on five stays small: {}", crash.states);
}

#[test]
fn chang_roberts_shrugs_off_duplicated_tokens() {
    let o = run_with("chang-roberts", 4, |c| {
        c.network = Network::Duplicating;
        c.duplicates = 2;
    });
    assert!(o.ok(), "{:?}", o.counterexample);
    let once = run_with("chang-roberts", 4, |c| c.network = Network::Unordered);
    assert!(o.states > once.states, "duplicates add interleavings");
}

#[test]
fn the_outcome_does_not_depend_on_the_number_of_threads() {
    for (algorithm, network) in [("chang-roberts", Network::Unordered), ("peterson", Network::Unordered)] {
        let on = |threads| {
            run_with(algorithm, 5, |c| {
                c.sim.ids = Ids::Random;
                c.network = network;
                c.threads = Some(threads);
            })
        };
        assert_eq!(on(1), on(2), "{algorithm}");
    }
}
