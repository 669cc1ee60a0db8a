//! The checker's own guarantees: proofs on small rings, the counterexamples it must find (FIFO-dependent
//! algorithms on reordering links, Bully's split brain, Stoller's scenario, a broken Franklin), timed and untimed
//! timers, fault budgets, cycles, replays, and a reduction that changes no verdict.

use elect_algos::{Algorithm, Bound, Facts, Info, Initiators, Needs, ParamError, Params, Showcase, Timing};
use elect_check::{
    CheckConfig, Network, Order, Outcome, Step, check, check_algorithm, check_every_arrangement, replay,
};
use elect_core::{Check, Command, Cx, Duration, Epoch, Message, Port, Process, Property, Setup, Span, Status};
use elect_scenario::{Ids, Monitor, SimConfig};
use serde::{Deserialize, Serialize};

fn run(algorithm: &str, n: usize, ids: Ids, network: Network) -> Outcome {
    run_with(algorithm, n, |c| {
        c.sim.ids = ids;
        c.network = network;
    })
}

fn run_with(algorithm: &str, n: usize, f: impl FnOnce(&mut CheckConfig)) -> Outcome {
    let mut config = CheckConfig::new(SimConfig::new(algorithm, n));
    f(&mut config);
    check(&config).unwrap_or_else(|e| panic!("{algorithm} on {n}: {e}"))
}

fn result<'a>(o: &'a Outcome, property: &str) -> &'a str {
    o.verdicts.iter().find(|v| v.property == property).unwrap_or_else(|| panic!("no verdict on {property}")).result
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
                    assert!(o.verdicts.iter().all(|v| v.result == "held"), "{algorithm}: {:?}", o.verdicts);
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
        assert_eq!(result(&o, "liveness"), "violated");
        assert!(!c.path.is_empty() && c.path.len() as u32 <= o.depth, "{algorithm}: {c:?}");
        assert!(!o.ok());
    }
}

#[test]
fn bully_is_correct_under_its_synchronous_model_and_splits_without_it() {
    // Timed: delays within T, timeouts from T. Every interleaving elects the strongest, once per epoch.
    for n in [3, 4] {
        let o = run_with("bully", n, |c| c.timed = true);
        assert!(o.ok(), "n={n}: {:?}", o.counterexample);
        assert!(o.states > 10);
    }
    // Untimed: a timeout may fire before the answer it waits for, and two processes declare themselves
    // coordinator in one epoch (split brain).
    let o = run_with("bully", 3, |_| {});
    let c = o.counterexample.expect("untimed timeouts break Bully");
    assert_eq!(c.property, "uniqueness", "{c:?}");
    assert!(c.path.iter().any(|s| matches!(s, Step::Timer { .. })), "{:?}", c.path);
    // Timed, but told a delay bound below the real delays: the timeouts are too short, and two processes end up
    // leading (the weaker one's followers never learn of the stronger).
    let o = run_with("bully", 4, |c| {
        c.timed = true;
        c.sim.delay_bound = Some(elect_core::Duration::from_ticks(400));
    });
    let c = o.counterexample.expect("timeouts shorter than the delays break Bully");
    assert_eq!(c.property, "safety", "{c:?}");
    assert!(c.path.iter().any(|s| matches!(s, Step::Timer { .. })), "{:?}", c.path);
    assert!(c.path.iter().any(|s| matches!(s, Step::Wait { .. })), "time passes in a timed path: {:?}", c.path);
}

#[test]
fn one_crash_on_five_processes_is_judged_in_seconds() {
    // Chang-Roberts: a crashed relay swallows the tokens.
    let cr = run_with("chang-roberts", 5, |c| c.crashes = 1);
    let c = cr.counterexample.expect("a crashed relay swallows the tokens");
    assert_eq!(c.property, "liveness");
    assert!(c.path.iter().any(|s| matches!(s, Step::Crash { .. })), "{:?}", c.path);
    assert!(cr.states < 10_000, "one crash on five stays small: {}", cr.states);
    // Bully, timed: a candidate that crashes during the election is replaced; a coordinator that crashes after
    // it is never noticed (nothing watches it without the leader monitor), so "at end" safety fails.
    let bully = run_with("bully", 5, |c| {
        c.timed = true;
        c.crashes = 1;
    });
    let c = bully.counterexample.expect("nobody notices a crashed coordinator");
    assert_eq!(c.property, "safety", "{c:?}");
    let crash = c.path.iter().position(|s| matches!(s, Step::Crash { .. })).expect("the path has the crash");
    assert!(
        c.path[..crash]
            .iter()
            .any(|s| matches!(s, Step::Deliver { msg, .. } if msg.to_lowercase().starts_with("coordinator"))),
        "the coordinator was announced before it crashed: {:?}",
        c.path
    );
}

#[test]
fn a_recovering_bully_process_is_elected_again() {
    // The strongest may crash and come back once: whatever the moment, every run that settles elects it.
    let o = run_with("bully", 3, |c| {
        c.timed = true;
        c.crashes = 1;
        c.recoveries = 1;
        c.keep_going = true;
    });
    assert!(o.complete && o.states > 100, "{} states", o.states);
    assert_eq!(result(&o, "uniqueness"), "held", "{:?}", o.more);
    assert!(o.leader_reachable);
    assert!(o.verdicts.iter().all(|v| v.result != "unknown"), "{:?}", o.verdicts);
    assert!(
        o.counterexample.iter().chain(&o.more).all(|c| c.path.iter().any(|s| matches!(s, Step::Crash { .. }))),
        "only crashes break anything"
    );
}

#[test]
fn stollers_scenario_breaks_assertion_4_and_keeps_4_prime() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/stoller.toml")).unwrap();
    let sim = elect_scenario::ScenarioFile::parse("stoller.toml", &text).unwrap().config;
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    config.keep_going = true;
    let o = check(&config).unwrap();
    assert!(o.complete);
    assert_eq!(result(&o, "a4"), "violated", "{:?}", o.verdicts);
    assert_eq!(result(&o, "a4-prime"), "held");
    assert_eq!(result(&o, "a3"), "held");
    let c = o.counterexample.expect("A4 fails");
    assert!(c.detail.contains("{2, 3}"), "{}", c.detail);
    // Scheduled faults need time.
    config.timed = false;
    assert!(check(&config).unwrap_err().to_string().contains("--timed"));
}

#[test]
fn a_franklin_that_forgets_buffered_probes_elects_nobody_on_1_3_2_4() {
    let broken = run_with("franklin", 4, |c| {
        c.sim.ids = "1,3,2,4".parse().unwrap();
        c.sim.params = Params::parse(["bug=forget-buffered"]).unwrap();
    });
    let c = broken.counterexample.expect("the forgotten probe leaves everybody waiting");
    assert_eq!(c.property, "liveness");
    let correct = run_with("franklin", 4, |c| c.sim.ids = "1,3,2,4".parse().unwrap());
    assert!(correct.ok(), "{:?}", correct.counterexample);
}

#[test]
fn unique_state_counts_of_chang_roberts_without_reduction() {
    // Descending ids, every process initiating, reordering links: the counts `elect check --reduction none`
    // reports, pinned so that a change of the state's representation or of the search shows.
    let counts: Vec<u64> = (3..=6)
        .map(|n| {
            run_with("chang-roberts", n, |c| {
                c.sim.ids = Ids::Descending;
                c.network = Network::Unordered;
                c.reduce = false;
            })
            .states
        })
        .collect();
    assert_eq!(counts, [42, 216, 1320, 9360]);
}

/// Everything a reduction must not change.
fn verdicts_of(o: &Outcome) -> String {
    let c = o.counterexample.as_ref().map(|c| c.property);
    format!("{:?} {:?} {} {} {}", o.verdicts, c, o.leader_reachable, o.complete, o.terminal)
}

#[test]
fn partial_order_reduction_changes_no_verdict() {
    let mut cases: Vec<(&str, usize, Ids, Network, bool)> = Vec::new();
    for n in [3, 4] {
        for ids in [Ids::Ascending, Ids::Descending, Ids::Random] {
            for a in ["chang-roberts", "lelann", "ring-participant", "hirschberg-sinclair", "franklin", "peterson"] {
                for network in [Network::Fifo, Network::Unordered, Network::Lossy] {
                    cases.push((a, n, ids.clone(), network, false));
                }
            }
        }
    }
    cases.extend([
        ("bully", 3, Ids::Ascending, Network::Fifo, false),
        ("timestamp-flooding", 3, Ids::Random, Network::Fifo, false),
        ("timestamp-flooding", 3, Ids::Random, Network::Unordered, false),
        ("chang-roberts", 5, Ids::Random, Network::Fifo, true),
        ("chang-roberts", 5, Ids::Random, Network::Unordered, false),
        ("chang-roberts", 5, Ids::Descending, Network::Lossy, false),
        ("lelann", 5, Ids::Random, Network::Fifo, false),
        ("peterson", 5, Ids::Random, Network::Fifo, false),
        ("ring-participant", 5, Ids::Random, Network::Fifo, false),
        ("hirschberg-sinclair", 5, Ids::Random, Network::Unordered, false),
    ]);
    let mut saved = 0;
    for (algorithm, n, ids, network, crash) in cases {
        let on = |reduce| {
            run_with(algorithm, n, |c| {
                c.sim.ids = ids.clone();
                c.network = network;
                c.reduce = reduce;
                c.crashes = u8::from(crash);
            })
        };
        let (full, reduced) = (on(false), on(true));
        assert_eq!(verdicts_of(&full), verdicts_of(&reduced), "{algorithm} n={n} {ids} {network:?}");
        assert!(reduced.states <= full.states);
        saved += full.states - reduced.states;
    }
    assert!(saved > 0);
    // One-way rings on FIFO links are the reduction's best case: one delivery at a time.
    let on = |reduce| {
        run_with("chang-roberts", 7, |c| {
            c.sim.ids = Ids::Descending;
            c.reduce = reduce;
        })
    };
    let (full, reduced) = (on(false), on(true));
    assert_eq!(full.states, 1437);
    assert!(reduced.states < 40, "{}", reduced.states);
    assert_eq!(verdicts_of(&full), verdicts_of(&reduced));
}

#[test]
fn depth_first_search_reaches_the_same_verdicts() {
    for (algorithm, network, timed) in [
        ("chang-roberts", Network::Unordered, false),
        ("peterson", Network::Unordered, false),
        ("bully", Network::Fifo, true),
        ("invitation", Network::Fifo, true),
    ] {
        let on = |order| {
            run_with(algorithm, 3, |c| {
                c.network = network;
                c.timed = timed;
                c.order = order;
                c.keep_going = true;
            })
        };
        let (bfs, dfs) = (on(Order::Bfs), on(Order::Dfs));
        assert_eq!(bfs.verdicts, dfs.verdicts, "{algorithm}");
        assert_eq!(bfs.states, dfs.states, "{algorithm}: both visit every state");
    }
}

#[test]
fn a_shuffled_depth_first_search_visits_every_state_with_the_same_verdicts() {
    for (algorithm, network, timed) in [("peterson", Network::Unordered, false), ("bully", Network::Fifo, true)] {
        let on = |shuffle: Option<u64>| {
            run_with(algorithm, 3, |c| {
                c.network = network;
                c.timed = timed;
                c.order = Order::Dfs;
                c.shuffle = shuffle;
                c.keep_going = true;
            })
        };
        let plain = on(None);
        for seed in [1, 2, 3] {
            let shuffled = on(Some(seed));
            assert_eq!(plain.verdicts, shuffled.verdicts, "{algorithm}, seed {seed}");
            assert_eq!(plain.states, shuffled.states, "{algorithm}, seed {seed}: both visit every state");
        }
    }
}

#[test]
fn a_visited_state_costs_bytes_not_kilobytes() {
    let mut sim = SimConfig::new("bully", 4);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    config.crashes = 1;
    let o = check(&config).unwrap();
    assert!(o.ok() && o.states > 5_000, "{} states", o.states);
    let m = &o.memory;
    // About 40 bytes, and up to 70 where the vectors have just doubled their capacity.
    assert!(m.visited_bytes_per_state >= 20.0 && m.visited_bytes_per_state <= 70.0, "{m:?}");
    assert!(m.edges_bytes_per_state > 0.0, "a timed run of the member keeps its edges: {m:?}");
    assert!(m.frontier_peak >= 1 && m.frontier_peak < o.states, "{m:?}");
    // A process passes through far fewer states of its own than the system does.
    assert!(m.process_states >= 3 && m.process_states * 4 < o.states, "{m:?}");
    assert!(m.messages >= 1 && m.messages < m.process_states, "{m:?}");
    let s = o.states as f64;
    assert_eq!(m.collision_odds, s * (s - 1.0) / 2f64.powi(65));
}

#[test]
fn the_exact_mode_finds_the_same_states_and_verdicts() {
    let member = |exact: bool, bug: bool| {
        let mut sim = SimConfig::new("bully", 3);
        sim.monitor = Some(Monitor::member(elect_core::InT(2)));
        if bug {
            sim.params = Params::parse(["monitor-bug=same-epoch"]).unwrap();
        }
        let mut config = CheckConfig::new(sim);
        (config.timed, config.crashes, config.exact) = (true, 1, exact);
        check(&config).unwrap()
    };
    let ring = |exact: bool| {
        run_with("chang-roberts", 6, |c| (c.network, c.reduce, c.exact) = (Network::Unordered, false, exact))
    };
    for (fingerprints, exact) in [
        (ring(false), ring(true)),
        (member(false, false), member(true, false)),
        (member(false, true), member(true, true)),
    ] {
        assert_eq!(
            (fingerprints.states, fingerprints.transitions, verdicts_of(&fingerprints)),
            (exact.states, exact.transitions, verdicts_of(&exact))
        );
        assert_eq!(fingerprints.counterexample.map(|c| c.path), exact.counterexample.map(|c| c.path));
        assert!(exact.memory.exact && exact.memory.collision_odds == 0.0);
        // Every state kept whole costs more than its fingerprint.
        assert!(exact.memory.visited_bytes_per_state > fingerprints.memory.visited_bytes_per_state + 30.0);
    }
}

#[test]
fn a_saved_counterexample_replays_to_the_same_violation() {
    for (algorithm, timed, bound) in [("bully", false, None), ("bully", true, Some(400)), ("peterson", false, None)] {
        let mut config = CheckConfig::new(SimConfig::new(algorithm, 4));
        config.timed = timed;
        config.sim.delay_bound = bound.map(elect_core::Duration::from_ticks);
        if algorithm == "peterson" {
            config.network = Network::Unordered;
        }
        let o = check(&config).unwrap();
        let c = o.counterexample.expect("a violation");
        let r = replay(&config, &c.actions).unwrap();
        assert_eq!(r.steps.len(), c.path.len());
        assert!(r.steps.iter().zip(&c.path).all(|(r, s)| r.step == *s), "the same steps");
        assert!(r.last.iter().any(|v| v.property.name() == c.property), "{algorithm}: {:?}", r.last);
        // Twice: bit for bit the same.
        let again = replay(&config, &c.actions).unwrap();
        assert_eq!(format!("{r:?}"), format!("{again:?}"));
        // A path from another scenario is refused, not followed.
        config.sim.ids = Ids::Descending;
        let refused = replay(&config, &c.actions);
        assert!(refused.is_err() || refused.unwrap().steps.len() == c.path.len());
    }
}

#[test]
fn bad_scenarios_are_refused() {
    let mut sim = SimConfig::new("ad-hoc", 4);
    sim.topology = Some("geometric:0.9".parse().unwrap());
    sim.mobility = Some("waypoint:0.01".parse().unwrap());
    let err = check(&CheckConfig::new(sim)).unwrap_err().to_string();
    assert!(err.contains("the checker cannot drive moving nodes"), "{err}");
    assert!(
        check(&CheckConfig::new(SimConfig::new("paxos", 3))).unwrap_err().to_string().contains("unknown algorithm")
    );
    let mut sim = SimConfig::new("chang-roberts", 3);
    sim.delay = elect_scenario::Delay::Exp(1000);
    assert!(check(&CheckConfig::new(sim)).unwrap_err().to_string().contains("bounded delays"));
}

#[test]
fn a_lost_token_leaves_chang_roberts_without_a_leader() {
    let lossy = run_with("chang-roberts", 3, |c| c.network = Network::Lossy);
    let c = lossy.counterexample.expect("a lost token is never replaced");
    assert_eq!(c.property, "liveness");
    assert!(c.path.iter().any(|s| matches!(s, Step::Lose { .. })), "{:?}", c.path);
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
        assert!(on(1).same_as(&on(2)), "{algorithm}");
    }
}

/// A ring algorithm that never elects: every initiator sends a token round the ring for ever.
#[derive(Clone, Debug, Default)]
struct Carousel;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Rider {
    next: Port,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Token(u32);

impl elect_core::Validate for Token {
    fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        Ok(())
    }
}

impl Message for Token {
    fn kinds() -> std::borrow::Cow<'static, [&'static str]> {
        std::borrow::Cow::Borrowed(&["token"])
    }
    fn kind_index(&self) -> usize {
        0
    }
    fn kind(&self) -> &'static str {
        "token"
    }
}

impl Process for Rider {
    type Msg = Token;
    type Timer = ();
    type Durable = ();
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _: Port, _: Token) {
        cx.send(self.next, Token(0));
    }
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, _: Command) {
        cx.send(self.next, Token(0));
    }
    fn status(&self) -> Status {
        Status::election(Epoch::ZERO)
    }
}

static CAROUSEL: Info = Info {
    name: "chang-roberts",
    aliases: &[],
    title: "carousel",
    model: "a ring",
    seed: "none",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    links: elect_algos::LinkOrder::Any,
    elects: elect_algos::Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[],
    showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "" },
};

/// The parts of a test algorithm that do not matter to the checker.
macro_rules! test_algorithm {
    ($algorithm:ty, $process:ty, $default:expr, |$me:ident, $setup:ident| $build:expr, $checks:expr) => {
        impl Algorithm for $algorithm {
            type Process = $process;
            const INFO: &'static Info = &CAROUSEL;
            fn from_params(_: &Params) -> Result<Self, ParamError> {
                Ok($default)
            }
            fn build(&self, $setup: &Setup<'_>) -> $process {
                let $me = self;
                $build
            }
            fn checks(&self) -> Vec<Check> {
                $checks
            }
            fn election_time(&self, facts: &Facts, t: elect_core::Duration) -> elect_core::Duration {
                t * facts.nodes
            }
            fn bounds(&self, _: &Facts) -> Vec<Bound> {
                Vec::new()
            }
        }
    };
}

test_algorithm!(
    Carousel,
    Rider,
    Self,
    |_me, setup| Rider { next: setup.ring.unwrap().next },
    vec![Check::at_end(Property::Liveness)]
);

/// A ring algorithm that sends each initiator's number once round the ring, every process noting the numbers
/// that pass: in the order they come (so its deliveries do not commute), or as a sorted list (so they do).
#[derive(Clone, Debug)]
struct Ledger {
    in_order: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Clerk {
    next: Port,
    me: u32,
    in_order: bool,
    seen: Vec<u32>,
}

impl Process for Clerk {
    type Msg = Token;
    type Timer = ();
    type Durable = ();
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _: Port, Token(x): Token) {
        if self.seen.contains(&x) {
            return;
        }
        if x != self.me {
            cx.send(self.next, Token(x));
        }
        let at = if self.in_order { self.seen.len() } else { self.seen.partition_point(|&y| y < x) };
        self.seen.insert(at, x);
    }
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, _: Command) {
        cx.send(self.next, Token(self.me));
    }
    fn status(&self) -> Status {
        Status::election(Epoch::ZERO)
    }
}

test_algorithm!(
    Ledger,
    Clerk,
    Self { in_order: true },
    |me, setup| Clerk { next: setup.ring.unwrap().next, me: setup.id.0, in_order: me.in_order, seen: Vec::new() },
    Vec::new()
);

#[test]
fn deliveries_are_taken_in_one_order_only_where_the_order_cannot_matter() {
    let on = |in_order: bool, reduce: bool| {
        let mut config = CheckConfig::new(SimConfig::new("chang-roberts", 4));
        config.network = Network::Unordered;
        config.reduce = reduce;
        check_algorithm(Ledger { in_order }, &config).unwrap()
    };
    // Noted in order: every process can end with its numbers in several orders, and every such end is reached.
    let (full, reduced) = (on(true, false), on(true, true));
    assert_eq!(reduced.commuting.map(|c| c.processes), Some(0));
    assert!(full.terminal > 1);
    assert_eq!(verdicts_of(&full), verdicts_of(&reduced));
    // Noted as a set: one end, reached by one order of deliveries out of all of them.
    let (full, reduced) = (on(false, false), on(false, true));
    assert_eq!(reduced.commuting.map(|c| c.processes), Some(4));
    assert_eq!((full.terminal, reduced.terminal), (1, 1));
    assert_eq!(verdicts_of(&full), verdicts_of(&reduced));
    // Each of the four numbers goes once round the ring: one path of 16 deliveries.
    assert_eq!((reduced.states, reduced.transitions), (17, 16));
    assert_eq!(full.states, 625, "5⁴: each number at any of its five places, independently");
}

#[test]
fn chang_roberts_on_ten_reordering_processes_is_one_path_of_its_messages() {
    // The speed target's case: ids descending along the ring, every process initiating. Deliveries commute at
    // every process, so the search follows one order of the n(n+1)/2 tokens and n announcements.
    for n in [5usize, 10] {
        let o = run_with("chang-roberts", n, |c| {
            c.sim.ids = Ids::Descending;
            c.network = Network::Unordered;
        });
        assert!(o.ok(), "{:?}", o.counterexample);
        assert!(o.verdicts.iter().all(|v| v.result == "held"), "{:?}", o.verdicts);
        assert_eq!(o.commuting.map(|c| c.processes), Some(n));
        let messages = (n * (n + 1) / 2 + n) as u64;
        assert_eq!((o.transitions, o.states, o.terminal), (messages, messages + 1, 1));
    }
}

#[test]
fn a_run_that_goes_round_a_cycle_for_ever_breaks_eventually() {
    for order in [Order::Bfs, Order::Dfs] {
        let mut config = CheckConfig::new(SimConfig::new("chang-roberts", 3));
        config.order = order;
        let o = check_algorithm(Carousel, &config).unwrap();
        assert!(o.complete && o.terminal == 0, "no run ends: {o:?}");
        let c = o.counterexample.clone().expect("a cycle without a leader");
        assert_eq!(c.property, "liveness");
        let start = c.loop_start.expect("a lasso");
        assert!(start < c.path.len(), "the cycle has steps: {c:?}");
        assert!(c.detail.contains("cycle"), "{}", c.detail);
        assert_eq!(result(&o, "leader"), "violated", "nobody is ever elected");
    }
}

#[test]
fn rotating_the_ring_with_its_ids_changes_no_outcome() {
    // The symmetry `check_every_arrangement` uses: all 24 arrangements of 4 ids, checked one by one, give the
    // same outcome (states, transitions, verdicts) within each rotation class.
    for (algorithm, network) in
        [("chang-roberts", Network::Unordered), ("franklin", Network::Fifo), ("hirschberg-sinclair", Network::Fifo)]
    {
        let mut classes: std::collections::BTreeMap<Vec<u32>, String> = std::collections::BTreeMap::new();
        let mut ids = vec![1u32, 2, 3, 4];
        for _ in 0..24 {
            let o = run_with(algorithm, 4, |c| {
                c.sim.ids = Ids::List(ids.iter().map(|&i| elect_core::NodeId(i)).collect());
                c.network = network;
                c.reduce = false;
            });
            let at = ids.iter().position(|&i| i == 1).unwrap();
            let mut canonical = ids.clone();
            canonical.rotate_left(at);
            let summary = format!("{} {} {} {:?}", o.states, o.transitions, o.terminal, o.verdicts);
            let first = classes.entry(canonical.clone()).or_insert_with(|| summary.clone());
            assert_eq!(*first, summary, "{algorithm}: {ids:?} differs from its rotation {canonical:?}");
            next(&mut ids);
        }
        assert_eq!(classes.len(), 6);
        let mut config = CheckConfig::new(SimConfig::new(algorithm, 4));
        config.network = network;
        let every = check_every_arrangement(&config).unwrap();
        assert_eq!((every.arrangements, every.checked.len()), (24, 6));
        assert!(every.ok() && every.symmetry.is_some());
    }
    // The broken Franklin fails in the class of 1,3,2,4, which the classes' representatives include.
    let mut config = CheckConfig::new(SimConfig::new("franklin", 4));
    config.sim.params = Params::parse(["bug=forget-buffered"]).unwrap();
    config.sim.topology = Some(elect_scenario::TopologyKind::Ring);
    let every = check_every_arrangement(&config).unwrap();
    assert!(!every.ok());
    assert!(
        every.checked.iter().any(|(ids, o)| ids.iter().map(|i| i.0).collect::<Vec<_>>() == [1, 3, 2, 4] && !o.ok())
    );
}

fn next(v: &mut [u32]) {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else { return };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).unwrap();
    v.swap(i - 1, j);
    v[i..].reverse();
}

/// An algorithm whose strongest process never lets time pass: each time its timer fires, it switches its status
/// and arms the timer again, due at once.
#[derive(Clone, Debug, Default)]
struct Spin;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Spinner {
    spins: bool,
    on: bool,
}

impl Process for Spinner {
    type Msg = Token;
    type Timer = ();
    type Durable = ();
    fn on_message(&mut self, _: &mut Cx<'_, Self>, _: Port, _: Token) {}
    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, (): ()) {
        self.on = !self.on;
        cx.set_timer((), Span::exactly(Duration::ZERO));
    }
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, _: Command) {
        if self.spins {
            cx.set_timer((), Span::exactly(Duration::ZERO));
        }
    }
    fn status(&self) -> Status {
        Status::election(Epoch::from_bits(u64::from(self.on)))
    }
}

impl Algorithm for Spin {
    type Process = Spinner;
    const INFO: &'static Info = &CAROUSEL;
    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }
    fn build(&self, setup: &Setup<'_>) -> Spinner {
        Spinner { spins: setup.id.0 == 2, on: false }
    }
    fn checks(&self) -> Vec<Check> {
        Vec::new()
    }
    fn election_time(&self, _: &Facts, t: Duration) -> Duration {
        t
    }
    fn settle_time(&self, _: &Facts, _: Option<Duration>) -> Option<Duration> {
        Some(Duration::from_ticks(1_000))
    }
    fn bounds(&self, _: &Facts) -> Vec<Bound> {
        Vec::new()
    }
}

#[test]
fn a_cycle_before_a_timed_run_settles_is_explored_without_the_reduction() {
    // The reduction hides status changes until a timed run settles, which is sound because time passes on every
    // cycle and the settling time only runs down. A timer armed due at once, again and again, makes a cycle where
    // time stands still: the search finds it and explores the full graph.
    let mut config = CheckConfig::new(SimConfig::new("chang-roberts", 2));
    config.timed = true;
    let o = check_algorithm(Spin, &config).unwrap();
    assert!(o.complete, "{o:?}");
    assert_eq!(o.reduction_note, Some("the state graph may have cycles: explored again without reduction"));
}

#[test]
fn chang_roberts_written_as_a_program_explores_as_the_built_in_one() {
    use elect_algos::program::{Program, example::ChangRobertsInJson};
    // Without the reduction, so that every interleaving is a state of its own (with it, a ring is a handful).
    for (n, network) in [(4, Network::Unordered), (5, Network::Unordered), (5, Network::Fifo)] {
        let config = || {
            let mut c = CheckConfig::new(SimConfig::new("chang-roberts", n));
            c.sim.ids = Ids::Random;
            c.network = network;
            c.reduce = false;
            c
        };
        let built_in = check(&config()).unwrap();
        let stepper = Box::new(ChangRobertsInJson { forward_smaller: false });
        let program = Program::load("in-json", stepper, &Params::new()).unwrap();
        let mine = check_algorithm(program.clone(), &config()).unwrap();
        assert_eq!(program.failure(), None);
        assert!(mine.complete && built_in.complete);
        assert_eq!((mine.states, mine.transitions), (built_in.states, built_in.transitions), "n = {n}");
        assert_eq!(verdicts_of(&mine), verdicts_of(&built_in), "n = {n}");
    }
}
