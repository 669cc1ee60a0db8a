//! The synchronizers (docs/reference/synchronizers/index.md): the exact counts and times of its FloodMax table, γ's two
//! limits (one cluster is β, clusters of one are α), and the synchronizer's guarantee itself: under random delays
//! and reordering links, every process goes through the same round states as in the lock-step run.

mod common;

use std::fmt::Debug;

use common::{SharedBuf, config, run_ok, units};
use elect_algos::floodmax::{FloodMax, OptFloodMax};
use elect_algos::rounds::{RoundAlgorithm, RoundCx, Rounds, Synchronous};
use elect_algos::sync_lcr::SyncLcr;
use elect_algos::synchronizers::{Abd, Alpha, Beta, Gamma, Spec, Synchronized};
use elect_algos::{Algorithm, Bound, Facts, Info, ParamError, Params};
use elect_core::{Check, Duration, NodeId, Port, Setup, Status};
use elect_scenario::{Delay, InitiatorSpec, Monitor, Scenario, SimConfig, TopologyKind};
use elect_sim::{Report, Sim, simulate};

/// Graphs of several shapes, with their sizes.
fn topologies() -> Vec<(TopologyKind, usize)> {
    let parse = |s: &str| s.parse::<TopologyKind>().unwrap();
    vec![
        (TopologyKind::Ring, 11),
        (TopologyKind::Complete, 7),
        (TopologyKind::Line, 8),
        (TopologyKind::Star, 9),
        (TopologyKind::Grid { w: 4, h: 5 }, 20),
        (TopologyKind::Torus { w: 4, h: 4 }, 16),
        (parse("random-regular:3"), 20),
        (parse("chordal:3"), 14),
        (TopologyKind::Tree, 15),
        (parse("geometric:0.5"), 18),
    ]
}

fn synced(algorithm: &str, sync: &str, topology: &TopologyKind, n: usize, seed: u64) -> SimConfig {
    config(algorithm, n, |c| {
        c.topology = Some(topology.clone());
        c.ids = elect_scenario::Ids::Random;
        c.seed = seed;
        c.synchronizer = Some(sync.parse().unwrap());
    })
}

/// `(m, n, D)` of a run.
fn shape(r: &Report) -> (u64, u64, u64) {
    (r.edges, r.nodes as u64, r.diameter.expect("measured"))
}

fn sync_of(r: &Report) -> &elect_sim::SyncReport {
    r.synchronizer.as_ref().expect("a synchronized run reports its synchronizer")
}

#[test]
fn floodmax_on_alpha_costs_exactly_6md_messages_and_3d_time() {
    for (topology, n) in topologies() {
        for seed in 1..=3 {
            let r = run_ok(&synced("floodmax", "alpha", &topology, n, seed));
            let (m, n, d) = shape(&r);
            assert_eq!(r.messages.kind("max"), 2 * m * d, "{}", r.reproduce);
            assert_eq!(r.messages.kind("ack"), 2 * m * d);
            assert_eq!(r.messages.kind("safe"), 2 * m * d);
            assert_eq!(r.messages.total, 6 * m * d, "{}", r.reproduce);
            let s = sync_of(&r);
            assert_eq!((s.setup_messages, s.setup_time.0, s.pulses), (0, 0, d as u32 + 1));
            assert_eq!(s.pulse_time.0, units(3 * d), "{}", r.reproduce);
            assert_eq!(s.last_pulse_time.0, units(3));
            assert_eq!(r.elected_at.map(|t| t.0), Some(units(3 * d)), "{}", r.reproduce);
            assert_eq!(r.leader, Some(NodeId(n as u32)));
            assert_eq!(r.bounds[0].measured, r.bounds[0].value, "the algorithm's own count is unchanged");
        }
    }
}

#[test]
fn floodmax_on_beta_costs_4md_plus_2_n_minus_1_d_and_d_times_2h_plus_2() {
    for (topology, n) in topologies() {
        for seed in 1..=3 {
            let cfg = synced("floodmax", "beta", &topology, n, seed);
            let r = run_ok(&cfg);
            let (m, n, d) = shape(&r);
            let s = sync_of(&r);
            let h = u64::from(s.summary.tree_height.unwrap());
            // Under unit delays the echo builds a breadth-first tree: its height is the root's eccentricity.
            let sc = Scenario::build(&cfg).unwrap();
            let root = sc.ids.iter().position(|&id| Some(id) == s.summary.root).unwrap() as u32;
            assert_eq!(h, sc.graph.eccentricity(root), "{}", r.reproduce);
            assert_eq!(s.summary.root, Some(NodeId(1)), "the smallest initiator");
            assert_eq!(r.messages.kind("explore") + r.messages.kind("echo"), 2 * m, "the echo: two per link");
            assert_eq!(r.messages.kind("start"), n - 1);
            assert_eq!(s.setup_messages, 2 * m + n - 1);
            assert_eq!(r.messages.kind("safe"), (n - 1) * d);
            assert_eq!(r.messages.kind("pulse"), (n - 1) * d);
            assert_eq!(r.messages.total - s.setup_messages, 4 * m * d + 2 * (n - 1) * d, "{}", r.reproduce);
            assert_eq!(s.pulse_time.0, units(d * (2 * h + 2)), "{}", r.reproduce);
            assert_eq!(r.leader, Some(NodeId(n as u32)));
        }
    }
}

#[test]
fn floodmax_on_gamma_costs_4_n_minus_c_plus_2p_control_messages_a_pulse() {
    for (topology, n) in topologies() {
        for k in [2u32, 3, 5] {
            let r = run_ok(&synced("floodmax", &format!("gamma:{k}"), &topology, n, 1));
            let (m, n, d) = shape(&r);
            let s = sync_of(&r);
            let (c, p) = (u64::from(s.summary.clusters.unwrap()), s.summary.preferred_links.unwrap());
            if k <= 3 && matches!(topology, TopologyKind::Ring | TopologyKind::Line | TopologyKind::Grid { .. }) {
                assert!(c > 1 && p > 0, "{c} clusters of at least {k} on {n} nodes: {}", r.reproduce);
            }
            assert!(c >= 1 && c <= n.div_ceil(u64::from(k).max(1)) + 1, "clusters of at least K but the root's");
            let per_pulse = if p == 0 { 2 * (n - c) } else { 4 * (n - c) + 2 * p };
            assert_eq!(s.control_messages, d * per_pulse, "{}", r.reproduce);
            assert_eq!((s.acks, s.algorithm_messages), (2 * m * d, 2 * m * d));
            assert_eq!(r.messages.kind("explore") + r.messages.kind("echo") + r.messages.kind("hello"), 4 * m);
            assert_eq!(s.setup_messages, 4 * m + 3 * (n - c), "{}", r.reproduce);
            assert_eq!(r.leader, Some(NodeId(n as u32)));
        }
    }
}

#[test]
fn gamma_with_one_cluster_is_beta_and_with_clusters_of_one_is_alpha() {
    for (topology, n) in topologies() {
        let beta = run_ok(&synced("floodmax", "beta", &topology, n, 2));
        let one = run_ok(&synced("floodmax", &format!("gamma:{}", n + 1), &topology, n, 2));
        let (b, o) = (sync_of(&beta), sync_of(&one));
        assert_eq!(o.summary.clusters, Some(1));
        assert_eq!(o.summary.preferred_links, Some(0));
        assert_eq!((o.control_messages, o.acks, o.pulses), (b.control_messages, b.acks, b.pulses), "{}", one.reproduce);
        assert_eq!((o.pulse_time, o.last_pulse_time), (b.pulse_time, b.last_pulse_time), "{}", one.reproduce);

        let alpha = run_ok(&synced("floodmax", "alpha", &topology, n, 2));
        let singles = run_ok(&synced("floodmax", "gamma:1", &topology, n, 2));
        let (a, g) = (sync_of(&alpha), sync_of(&singles));
        assert_eq!(g.summary.clusters, Some(n as u32));
        assert_eq!(g.summary.preferred_links, Some(singles.edges), "every link joins two clusters");
        assert_eq!((g.control_messages, g.acks, g.pulses), (a.control_messages, a.acks, a.pulses));
        // γ's clusters finish their set-up at different times; a few pulses absorb the skew, and then a pulse
        // takes α's three delays.
        if alpha.diameter.unwrap() >= 3 {
            assert_eq!(g.last_pulse_time, a.last_pulse_time, "{}", singles.reproduce);
        }
    }
}

#[test]
fn abd_sends_start_once_and_no_control_with_pulses_2d_apart() {
    for (topology, n) in topologies() {
        for d in [1, 3] {
            let mut cfg = synced("floodmax", "abd", &topology, n, 1);
            cfg.delay = Delay::Constant(units(d));
            let r = run_ok(&cfg);
            let (m, _, diameter) = shape(&r);
            assert_eq!(r.messages.kind("start"), 2 * m, "everybody starts at once: one start per link end");
            assert_eq!(r.messages.kind("max"), 2 * m * diameter);
            assert_eq!(r.messages.total, 2 * m * diameter + 2 * m);
            assert_eq!(sync_of(&r).pulse_time.0, units(2 * d * diameter), "{}", r.reproduce);
            assert_eq!(r.elected_at.map(|t| t.0), Some(units(2 * d * diameter)));
        }
        // One initiator: the others start on its wave, at most d apart from their neighbours; fewer starts.
        let mut cfg = synced("floodmax", "abd", &topology, n, 1);
        cfg.initiators = InitiatorSpec::Random(1);
        let r = run_ok(&cfg);
        assert!(r.messages.kind("start") <= 2 * r.edges);
        assert_eq!(r.leader, Some(NodeId(n as u32)), "{}", r.reproduce);
    }
}

#[test]
fn opt_floodmax_keeps_its_saving_on_beta_but_not_on_alpha() {
    let topology = TopologyKind::Grid { w: 6, h: 6 };
    let flood = |alg: &str, sync: &str| run_ok(&synced(alg, sync, &topology, 36, 4));
    let (fa, oa) = (flood("floodmax", "alpha"), flood("opt-floodmax", "alpha"));
    let (fb, ob) = (flood("floodmax", "beta"), flood("opt-floodmax", "beta"));
    let m = fa.edges;
    assert_eq!(oa.messages.kind("safe"), fa.messages.kind("safe"), "alpha sends 2m safe every pulse regardless");
    assert!(oa.messages.kind("max") < fa.messages.kind("max"));
    assert_eq!(oa.messages.kind("ack"), oa.messages.kind("max"));
    assert_eq!(
        ob.messages.kind("safe") + ob.messages.kind("pulse"),
        fb.messages.kind("safe") + fb.messages.kind("pulse")
    );
    let saving = |f: &Report, o: &Report| 1.0 - o.messages.total as f64 / f.messages.total as f64;
    assert!(saving(&fb, &ob) > saving(&fa, &oa), "the saving survives beta better than alpha (m = {m})");
}

/// A round algorithm that keeps every state it went through, to compare runs round by round.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Recorded<R> {
    inner: R,
    history: Vec<R>,
}

impl<R: Rounds> Rounds for Recorded<R> {
    type Msg = R::Msg;

    fn round(&mut self, cx: &mut RoundCx<'_, R::Msg>, inbox: &[(Port, R::Msg)]) {
        // Sort the inbox: a round's messages are a set; their arrival order is the network's, not the algorithm's.
        let mut inbox = inbox.to_vec();
        inbox.sort_by_key(|(port, _)| *port);
        self.inner.round(cx, &inbox);
        self.history.push(self.inner.clone());
    }

    fn status(&self) -> Status {
        self.inner.status()
    }

    fn halted(&self) -> bool {
        self.inner.halted()
    }

    fn final_round(&self) -> Option<u32> {
        self.inner.final_round()
    }
}

#[derive(Clone, Debug)]
struct Record<A>(A);

impl<A: RoundAlgorithm> Algorithm for Record<A> {
    type Process = Synchronous<Recorded<A::Rounds>>;
    const INFO: &'static Info = A::INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        A::from_params(params).map(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> Self::Process {
        Synchronous::new(self.build_rounds(setup), setup)
    }

    fn checks(&self) -> Vec<Check> {
        self.0.checks()
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        self.0.election_time(facts, t)
    }

    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        self.0.bounds(facts)
    }
}

impl<A: RoundAlgorithm> RoundAlgorithm for Record<A> {
    type Rounds = Recorded<A::Rounds>;

    fn build_rounds(&self, setup: &Setup<'_>) -> Self::Rounds {
        Recorded { inner: self.0.build_rounds(setup), history: Vec::new() }
    }
}

/// Every process's states round by round, by position, in a run of `algorithm` under `cfg`.
fn histories<A: Algorithm>(
    algorithm: A,
    cfg: &SimConfig,
    inner: impl Fn(&A::Process) -> Vec<String>,
) -> Vec<Vec<String>> {
    let scenario = Scenario::build(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.command_line()));
    let mut sim = Sim::new(algorithm, scenario);
    sim.run().unwrap();
    let report = sim.report();
    assert!(report.ok() && report.terminated, "{}", report.reproduce);
    sim.processes().iter().map(inner).collect()
}

fn states<R: Debug>(history: &[R]) -> Vec<String> {
    history.iter().map(|r| format!("{r:?}")).collect()
}

/// Checks that `A` goes through the same round states on every synchronizer, under random delays on links that
/// reorder, with one initiator or all, as in the lock-step run.
fn same_rounds_as_lockstep<A: RoundAlgorithm + Copy>(
    algorithm: A,
    name: &str,
    topology: &TopologyKind,
    n: usize,
    seeds: u64,
) {
    for seed in 1..=seeds {
        let lockstep = config(name, n, |c| {
            c.topology = Some(topology.clone());
            c.ids = elect_scenario::Ids::Random;
            c.seed = seed;
        });
        let reference = histories(Record(algorithm), &lockstep, |p| states(&p.inner().history));
        assert!(reference.iter().all(|h| !h.is_empty()));
        for (spec, initiators) in [
            ("abd", InitiatorSpec::All),
            ("abd", InitiatorSpec::Random(1)),
            ("alpha", InitiatorSpec::All),
            ("alpha", InitiatorSpec::Random(2)),
            ("beta", InitiatorSpec::Random(1)),
            ("gamma:3", InitiatorSpec::Random(1)),
            ("gamma:1", InitiatorSpec::All),
        ] {
            let mut cfg = lockstep.clone();
            cfg.delay = "uniform:1..9".parse().unwrap();
            cfg.fifo = false; // No synchronizer needs FIFO links: messages carry their pulse.
            cfg.initiators = initiators;
            cfg.synchronizer = Some(spec.parse().unwrap());
            let sc = Scenario::build(&cfg).unwrap();
            let record = Record(algorithm);
            let got = match sc.synchronizer.unwrap() {
                elect_algos::synchronizers::Choice::Abd => {
                    histories(Synchronized { algorithm: record, synchronizer: Abd }, &cfg, |p| {
                        states(&p.inner().history)
                    })
                }
                elect_algos::synchronizers::Choice::Alpha => {
                    histories(Synchronized { algorithm: record, synchronizer: Alpha }, &cfg, |p| {
                        states(&p.inner().history)
                    })
                }
                elect_algos::synchronizers::Choice::Beta { root } => histories(
                    Synchronized { algorithm: record, synchronizer: Beta { root: Some(root), cluster: u32::MAX } },
                    &cfg,
                    |p| states(&p.inner().history),
                ),
                elect_algos::synchronizers::Choice::Gamma { cluster, root } => histories(
                    Synchronized { algorithm: record, synchronizer: Gamma { root: Some(root), cluster } },
                    &cfg,
                    |p| states(&p.inner().history),
                ),
            };
            assert_eq!(got, reference, "{spec}: {}", cfg.command_line());
        }
    }
}

#[test]
fn under_random_delays_every_process_goes_through_the_lockstep_round_states() {
    for (topology, n) in topologies() {
        same_rounds_as_lockstep(FloodMax::default(), "floodmax", &topology, n, 20);
        same_rounds_as_lockstep(OptFloodMax::default(), "opt-floodmax", &topology, n, 20);
    }
}

#[test]
fn lcr_in_rounds_halts_process_by_process_and_still_keeps_its_lockstep_rounds() {
    for n in [2, 3, 5, 12, 31] {
        same_rounds_as_lockstep(SyncLcr, "sync-lcr", &TopologyKind::Ring, n, 20);
    }
    // The counts are the algorithm's: the same tokens and announcement on every synchronizer.
    let lockstep = run_ok(&config("sync-lcr", 24, |c| c.ids = elect_scenario::Ids::Random));
    for sync in ["abd", "alpha", "beta", "gamma:4"] {
        let r = run_ok(&synced("sync-lcr", sync, &TopologyKind::Ring, 24, 1));
        assert_eq!(r.bounds, lockstep.bounds, "{}", r.reproduce);
        assert_eq!(r.leader, Some(NodeId(24)));
        assert_eq!(sync_of(&r).algorithm_messages, lockstep.messages.total);
    }
}

#[test]
fn a_synchronized_run_repeats_bit_for_bit() {
    let trace = |sync: &str| {
        let mut cfg = synced("opt-floodmax", sync, &TopologyKind::Tree, 24, 9);
        cfg.delay = "uniform:1..9".parse().unwrap();
        let buf = SharedBuf::default();
        let report = simulate(&cfg, Some(Box::new(buf.clone()))).unwrap();
        (serde_json::to_string(&report).unwrap(), buf.0.lock().unwrap().clone())
    };
    for sync in ["abd", "alpha", "beta", "gamma:4"] {
        let (a, b) = (trace(sync), trace(sync));
        assert_eq!(a, b, "{sync}");
        let notice = br#""notice":"pulse""#;
        assert!(a.1.windows(notice.len()).any(|w| w == notice), "pulses are traced");
    }
}

#[test]
fn what_cannot_run_on_a_synchronizer_is_refused_with_the_reason() {
    let refuse = |cfg: &SimConfig, needle: &str| {
        let err = simulate(cfg, None).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
    };
    let mut cr = config("chang-roberts", 5, |c| c.synchronizer = Some(Spec::Alpha));
    refuse(&cr, "chang-roberts is not written in rounds");
    cr.algorithm = "floodmax".into();
    cr.monitor = Some(Monitor::member(elect_core::InT(4)));
    refuse(&cr, "--monitor does not apply");
    let mut abd = config("floodmax", 5, |c| c.synchronizer = Some(Spec::Abd));
    abd.delay = "exp:2".parse().unwrap();
    refuse(&abd, "abd synchronizer spaces pulses 2d apart");
    abd.synchronizer = Some(Spec::Alpha);
    assert!(simulate(&abd, None).unwrap().ok(), "alpha needs no delay bound");
    let beta = config("floodmax", 5, |c| {
        c.synchronizer = Some(Spec::Beta { root: Some(NodeId(3)) });
        c.initiators = common::initiators(&[1]);
    });
    refuse(&beta, "root 3 must initiate");
    let nobody = config("floodmax", 5, |c| c.synchronizer = Some(Spec::Beta { root: Some(NodeId(9)) }));
    refuse(&nobody, "root 9 is not a node");
    for fault in ["--crash", "--loss", "--duplicate"] {
        let mut cfg = config("floodmax", 5, |c| c.synchronizer = Some(Spec::Alpha));
        match fault {
            "--crash" => cfg.crashes.push("3@1".parse().unwrap()),
            "--loss" => cfg.losses.push("0.1".parse().unwrap()),
            _ => cfg.duplicate = "0.3".parse().unwrap(),
        }
        refuse(&cfg, &format!("{fault} does not apply"));
    }
}

#[test]
fn a_lone_process_takes_all_its_pulses_in_one_step_on_every_synchronizer() {
    for sync in ["abd", "alpha", "beta", "gamma"] {
        let mut cfg = synced("floodmax", sync, &TopologyKind::Line, 1, 1);
        cfg.params = elect_algos::Params::parse(["diameter=100000"]).unwrap();
        let r = run_ok(&cfg);
        assert_eq!((r.leader, sync_of(&r).pulses), (Some(NodeId(1)), 100_001), "{sync}");
    }
}

#[test]
fn lcr_takes_as_many_pulses_on_beta_and_gamma_as_on_alpha() {
    for n in [2, 5, 9] {
        let pulses = |sync: &str| {
            let r = run_ok(&synced("sync-lcr", sync, &TopologyKind::Ring, n, 3));
            (sync_of(&r).pulses, r.messages.kind("elected"))
        };
        let alpha = pulses("alpha");
        assert_eq!(alpha.1, n as u64);
        for sync in ["beta", "gamma:1", "gamma:2"] {
            assert_eq!(pulses(sync), alpha, "{sync} on {n}");
        }
    }
}
