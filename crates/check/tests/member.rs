//! The process a member of `elect node` runs (the member around the leader monitor around the algorithm), and the
//! synchronizers, explored like any algorithm.

use std::fmt::Debug;
use std::sync::Arc;

use elect_algos::rounds::{RoundAlgorithm, RoundCx, Rounds, Synchronous};
use elect_algos::synchronizers::{Spec, Synchronized};
use elect_algos::{Algorithm, Bound, Facts, Info, ParamError, Params};
use elect_check::{CheckConfig, Fault, Network, Outcome, Step, check, check_algorithm, replay};
use elect_core::{Check, Duration, NodeId, Port, Setup, Status};
use elect_scenario::{Monitor, ScenarioFile, SimConfig, TopologyKind};

fn member(algorithm: &str, n: usize, f: impl FnOnce(&mut CheckConfig)) -> Outcome {
    let mut sim = SimConfig::new(algorithm, n);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    if elect_algos::lookup(algorithm).unwrap().needs == elect_algos::Needs::Ring {
        sim.topology = Some(TopologyKind::Complete);
    }
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    f(&mut config);
    check(&config).unwrap_or_else(|e| panic!("{algorithm} on {n}: {e}"))
}

fn scenario(name: &str) -> SimConfig {
    scenario_with(name, "")
}

/// Scenario `name`, with `more` (TOML) after its text.
fn scenario_with(name: &str, more: &str) -> SimConfig {
    let path = format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    ScenarioFile::parse(&path, &format!("{text}{more}")).unwrap().config
}

fn verdicts(o: &Outcome) -> Vec<(&'static str, &'static str)> {
    o.verdicts.iter().map(|v| (v.property, v.result)).collect()
}

#[test]
fn members_keep_one_leader_per_epoch_and_elect_again_after_a_crash() {
    for algorithm in ["bully", "garcia-molina"] {
        let o = member(algorithm, 3, |c| c.crashes = 1);
        assert!(o.ok(), "{algorithm}: {:?}", o.counterexample);
        assert!(o.complete && o.states > 1000, "{algorithm}: {} states", o.states);
        for property in ["uniqueness", "agreement", "live-leader"] {
            assert!(verdicts(&o).contains(&(property, "held")), "{algorithm}: {:?}", o.verdicts);
        }
    }
    // A ring algorithm runs on the members' logical ring, which the monitor repairs around a dead member.
    let o = member("chang-roberts", 3, |c| c.crashes = 1);
    assert!(o.ok(), "{:?}", o.counterexample);
}

#[test]
fn a_leader_that_resigns_hands_over_and_takes_over_again() {
    for algorithm in ["bully", "garcia-molina"] {
        let o = member(algorithm, 3, |c| c.sim.resigns.push("3@10".parse().unwrap()));
        assert!(o.ok(), "{algorithm}: {:?}", o.counterexample);
        assert!(o.complete, "{algorithm}");
        assert!(verdicts(&o).contains(&("live-leader", "held")), "{algorithm}: {:?}", o.verdicts);
    }
}

#[test]
fn a_partition_and_a_one_way_fault_heal_into_one_leader() {
    for name in ["member-partition", "member-one-way", "member-straggler"] {
        for algorithm in ["bully", "garcia-molina"] {
            let mut sim = scenario(name);
            sim.algorithm = algorithm.into();
            let mut config = CheckConfig::new(sim);
            config.timed = true;
            let o = check(&config).unwrap();
            assert!(o.ok(), "{name} {algorithm}: {:?}", o.counterexample);
        }
    }
}

#[test]
fn two_deaf_leaders_of_one_epoch_go_round_a_cycle_for_ever() {
    // The monitor as it was before it settled two leaders of one epoch: after a one-way fault, the strongest
    // member shows no leader for ever. The checker finds a run that goes round a cycle (a lasso). Member 1
    // restarts during the fault, so that everybody joins its new epoch (a suspicion of the leader would not do:
    // the leader, alive, carries its leadership above the suspicious member's epoch instead of joining it).
    let restart = "\n[[fault]]\nat = 8\ncrash = 1\n\n[[fault]]\nat = 12\nrecover = 1\n";
    let mut sim = scenario_with("member-one-way", restart);
    sim.params = Params::parse(["monitor-bug=deaf-leaders"]).unwrap();
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    let o = check(&config).unwrap();
    let c = o.counterexample.expect("a run that never agrees again");
    assert!(c.loop_start.is_some(), "a lasso: {c:?}");
    assert!(c.path.len() > c.loop_start.unwrap(), "the path goes round the cycle once");
    assert!(o.verdicts.iter().any(|v| v.modality == "eventually" && v.result == "violated"), "{:?}", o.verdicts);
}

#[test]
fn a_grant_that_reuses_the_epoch_it_replaces_is_found_and_replays() {
    for n in [3, 5] {
        let mut config = CheckConfig::new({
            let mut sim = SimConfig::new("bully", n);
            sim.monitor = Some(Monitor::member(elect_core::InT(2)));
            sim.params = Params::parse(["monitor-bug=same-epoch"]).unwrap();
            sim
        });
        config.timed = true;
        config.crashes = 1;
        let o = check(&config).unwrap();
        let c = o.counterexample.expect("two grants of one epoch");
        assert_eq!(c.property, "uniqueness");
        assert!(c.detail.contains("both declared themselves leader in epoch"), "{n}: {}", c.detail);
        assert!(c.path.iter().any(|s| matches!(s, Step::Crash { .. })), "the old leader crashed: {:?}", c.path);
        let r = replay(&config, &c.actions).unwrap();
        assert!(r.steps.last().unwrap().violations.iter().any(|v| v.property.name() == "uniqueness"), "{n}");
    }
}

#[test]
fn the_member_on_four_processes_is_proved_in_thousands_of_states() {
    for algorithm in ["bully", "garcia-molina"] {
        let o = member(algorithm, 4, |c| c.crashes = 1);
        assert!(o.ok() && o.complete, "{algorithm}: {:?}", o.counterexample);
        // Until a run settles, the reduction takes one order of the status changes within an instant. Taking
        // every order, as it must where an "always" property reads the statuses, Bully needed 583,179 states.
        assert!(o.states < 50_000, "{algorithm}: {} states", o.states);
    }
}

#[test]
fn untimed_members_are_explored_within_the_bounds_given() {
    let mut sim = SimConfig::new("bully", 3);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let mut config = CheckConfig::new(sim);
    config.max_depth = 6;
    let o = check(&config).unwrap();
    assert!(!o.complete && o.stopped == Some("--max-depth"), "{:?}", o.stopped);
    assert!(o.counterexample.is_none() && o.states > 100, "{:?}", o.counterexample);
    assert!(verdicts(&o).contains(&("uniqueness", "unknown")), "held as far as it looked: {:?}", o.verdicts);
}

#[test]
fn what_the_checker_cannot_drive_is_refused_with_the_reason() {
    let mut sim = SimConfig::new("chang-roberts", 3);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let err = check(&CheckConfig::new(sim)).unwrap_err().to_string();
    assert!(err.contains("members form a full mesh"), "{err}");
}

/// A round algorithm that records the state it leaves each round in (`expected` empty: the lock-step run), or
/// checks, round by round, that it goes through the states the lock-step run went through.
#[derive(Clone, Debug)]
struct Expected<R> {
    inner: R,
    me: NodeId,
    round: usize,
    recorded: Vec<String>,
    expected: Arc<Vec<(NodeId, Vec<String>)>>,
}

impl<R: PartialEq> PartialEq for Expected<R> {
    fn eq(&self, other: &Self) -> bool {
        (&self.inner, self.round, &self.recorded) == (&other.inner, other.round, &other.recorded)
    }
}

impl<R: Eq> Eq for Expected<R> {}

impl<R: std::hash::Hash> std::hash::Hash for Expected<R> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.inner, self.round, &self.recorded).hash(state);
    }
}

impl<R: Rounds> Rounds for Expected<R> {
    type Msg = R::Msg;

    fn round(&mut self, cx: &mut RoundCx<'_, R::Msg>, inbox: &[(Port, R::Msg)]) {
        // A round's messages are a set: their order of arrival is the network's.
        let mut inbox = inbox.to_vec();
        inbox.sort_by_key(|(port, _)| *port);
        self.inner.round(cx, &inbox);
        let state = format!("{:?}", self.inner);
        if self.expected.is_empty() {
            self.recorded.push(state);
        } else {
            let history = &self.expected.iter().find(|(id, _)| *id == self.me).expect("a process of the run").1;
            assert_eq!(
                Some(&state),
                history.get(self.round),
                "process {} left round {} in another state than in the lock-step run",
                self.me,
                self.round + 1
            );
        }
        self.round += 1;
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

/// A round algorithm whose processes record their states (`expected` empty) or check them.
#[derive(Clone, Debug)]
struct Rounded<A> {
    algorithm: A,
    expected: Arc<Vec<(NodeId, Vec<String>)>>,
}

impl<A: RoundAlgorithm> Algorithm for Rounded<A> {
    type Process = Synchronous<Expected<A::Rounds>>;
    const INFO: &'static Info = A::INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self { algorithm: A::from_params(params)?, expected: Arc::default() })
    }

    fn build(&self, setup: &Setup<'_>) -> Self::Process {
        Synchronous::new(self.build_rounds(setup), setup)
    }

    fn checks(&self) -> Vec<Check> {
        self.algorithm.checks()
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        self.algorithm.election_time(facts, t)
    }

    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        self.algorithm.bounds(facts)
    }
}

impl<A: RoundAlgorithm> RoundAlgorithm for Rounded<A> {
    type Rounds = Expected<A::Rounds>;

    fn build_rounds(&self, setup: &Setup<'_>) -> Self::Rounds {
        let inner = self.algorithm.build_rounds(setup);
        Expected { inner, me: setup.id, round: 0, recorded: Vec::new(), expected: self.expected.clone() }
    }
}

#[test]
fn every_interleaving_of_a_synchronized_run_goes_through_the_lock_step_round_states() {
    let floodmax = elect_algos::floodmax::FloodMax::default();
    let mut sim = SimConfig::new("floodmax", 3);
    sim.topology = Some(TopologyKind::Ring);
    sim.ids = elect_scenario::Ids::List(vec![NodeId(2), NodeId(3), NodeId(1)]);
    // The lock-step run, recorded.
    let scenario = elect_scenario::Scenario::build(&sim).unwrap();
    let recording = Rounded { algorithm: floodmax, expected: Arc::default() };
    let mut lockstep = elect_sim::Sim::new(recording, scenario.clone());
    lockstep.run().unwrap();
    let expected: Vec<(NodeId, Vec<String>)> =
        lockstep.processes().iter().zip(&scenario.ids).map(|(p, &id)| (id, p.inner().recorded.clone())).collect();
    assert!(expected.iter().all(|(_, h)| h.len() >= 2), "{expected:?}");
    // Every interleaving on α, with messages overtaking each other, checked round by round.
    let checking = Rounded { algorithm: floodmax, expected: Arc::new(expected) };
    let alpha = Synchronized { algorithm: checking, synchronizer: elect_algos::synchronizers::Alpha };
    let mut config = CheckConfig::new(SimConfig { synchronizer: Some(Spec::Alpha), ..sim.clone() });
    config.network = Network::Unordered;
    let o = check_algorithm(alpha, &config).unwrap();
    assert!(o.ok() && o.complete && o.states > 1000, "{} states: {:?}", o.states, o.counterexample);
    // And through the registry, as `elect check --synchronizer alpha` runs it.
    let o = check(&config).unwrap();
    assert!(o.ok(), "{:?}", o.counterexample);
}

#[test]
fn timed_runs_reduced_one_instant_at_a_time_reach_the_same_verdicts() {
    let judged = |o: &Outcome| {
        let c = o.counterexample.as_ref().map(|c| (c.property, c.loop_start.is_some()));
        format!("{:?} {c:?} {} {}", o.verdicts, o.leader_reachable, o.complete)
    };
    let mut configs: Vec<(&str, CheckConfig)> = Vec::new();
    for algorithm in ["bully", "garcia-molina", "invitation"] {
        let mut sim = SimConfig::new(algorithm, 3);
        sim.monitor = Some(Monitor::member(elect_core::InT(2)));
        let mut c = CheckConfig::new(sim);
        c.timed = true;
        c.crashes = 1;
        configs.push((algorithm, c));
    }
    for algorithm in ["bully", "garcia-molina"] {
        let mut sim = SimConfig::new(algorithm, 3);
        sim.monitor = Some(Monitor::member(elect_core::InT(2)));
        sim.params = Params::parse(["monitor-bug=same-epoch"]).unwrap();
        let mut c = CheckConfig::new(sim);
        (c.timed, c.crashes) = (true, 1);
        configs.push(("same-epoch", c));
    }
    for (name, bug) in [("member-partition", None), ("member-one-way", Some("monitor-bug=deaf-leaders"))] {
        let mut sim = scenario(name);
        if let Some(bug) = bug {
            sim.params = Params::parse([bug]).unwrap();
        }
        let mut c = CheckConfig::new(sim);
        c.timed = true;
        configs.push((name, c));
    }
    let mut sim = SimConfig::new("bully", 3);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let mut c = CheckConfig::new(sim);
    (c.timed, c.crashes, c.recoveries) = (true, 1, 1);
    configs.push(("recovery", c));
    for (name, mut config) in configs {
        config.reduce = false;
        let full = check(&config).unwrap();
        config.reduce = true;
        let reduced = check(&config).unwrap();
        assert_eq!(judged(&full), judged(&reduced), "{name}");
        assert!(reduced.states < full.states, "{name}: {} states against {}", reduced.states, full.states);
    }
}

/// The lease mode keeps one leader at a time where classic members have two: in the timed model, at n = 3, with a
/// crash on top of the partition of `member-partition.toml` (the leader cut off from 5 to 40).
#[test]
fn in_the_lease_mode_no_two_members_lead_at_one_instant_and_outside_it_they_do() {
    for algorithm in ["bully", "garcia-molina"] {
        let mut sim = scenario("member-partition");
        sim.algorithm = algorithm.to_owned();
        sim.params = Params::parse(["lease=on"]).unwrap();
        let mut c = CheckConfig::new(sim.clone());
        (c.timed, c.crashes) = (true, 1);
        let o = check(&c).unwrap();
        assert!(o.ok() && o.complete, "{algorithm}: {:?}", o.counterexample);
        for property in ["uniqueness", "one-leader", "agreement", "live-leader"] {
            assert!(verdicts(&o).contains(&(property, "held")), "{algorithm}: {:?}", o.verdicts);
        }

        // Classic members, judged on the same property: the leader cut off goes on leading beside the new one.
        sim.params = Params::new();
        sim.judge = vec![elect_core::Property::OneLeader];
        let mut c = CheckConfig::new(sim.clone());
        (c.timed, c.crashes) = (true, 1);
        let o = check(&c).unwrap();
        let found = o.counterexample.as_ref().unwrap_or_else(|| panic!("{algorithm}: {:?}", o.verdicts));
        assert_eq!(found.property, "one-leader", "{algorithm}");
        assert!(found.detail.contains("both say they lead"), "{}", found.detail);
        let replayed = replay(&c, &found.actions).unwrap();
        let last = replayed.steps.last().unwrap();
        assert!(last.violations.iter().any(|v| v.property == elect_core::Property::OneLeader), "{algorithm}");

        // The planted flaw of the member is found in the lease mode too.
        sim.judge.clear();
        sim.params = Params::parse(["lease=on", "monitor-bug=same-epoch"]).unwrap();
        let mut c = CheckConfig::new(sim);
        (c.timed, c.crashes) = (true, 1);
        let o = check(&c).unwrap();
        assert_eq!(o.counterexample.map(|c| c.property), Some("uniqueness"), "{algorithm}");
    }
}

/// A leader that hears nobody, from 5 on and for ever (`lease-deaf-leader.toml`), in the lease mode at n = 3: in every
/// interleaving no two members lead at one instant, and 1 and 2, a majority that can talk, end up following a leader
/// among them that leads (`majority-leader`: its lease lapses, it goes quiet, they elect another). The planted flaw
/// of a leader whose lease lapsed beating on as if it held one is found: 1 and 2 keep following 3, and nobody leads.
#[test]
fn in_the_lease_mode_a_majority_elects_another_leader_when_the_leader_hears_nobody() {
    use elect_core::Property::{MajorityLeader, OneLeader};
    for algorithm in ["bully", "garcia-molina"] {
        let mut sim = scenario("lease-deaf-leader");
        sim.algorithm = algorithm.to_owned();
        sim.only = vec![OneLeader, MajorityLeader];
        for network in [Network::Fifo, Network::Unordered] {
            let mut c = CheckConfig::new(sim.clone());
            (c.timed, c.network) = (true, network);
            let o = check(&c).unwrap();
            assert!(o.ok() && o.complete, "{algorithm}, {network:?}: {:?}", o.counterexample);
            assert_eq!(verdicts(&o), [("one-leader", "held"), ("majority-leader", "held"), ("leader", "held")]);
        }

        sim.params = Params::parse(["lease=on", "monitor-bug=lapsed-leader"]).unwrap();
        let mut c = CheckConfig::new(sim);
        c.timed = true;
        let o = check(&c).unwrap();
        let found = o.counterexample.as_ref().unwrap_or_else(|| panic!("{algorithm}: {:?}", o.verdicts));
        assert_eq!(found.property, "majority-leader", "{algorithm}");
        assert!(found.detail.contains("processes {1, 2}, a majority"), "{}", found.detail);
        let replayed = replay(&c, &found.actions).unwrap();
        let last = replayed.steps.last().unwrap();
        assert!(last.violations.iter().any(|v| v.property == MajorityLeader), "{algorithm}");
    }
}

/// A transfer from the leader to the weakest member, checked at n = 3 with a crash: one grant per epoch, one live
/// leader at the end, and in the lease mode one leader at a time; judging safety (the strongest leads) shows the
/// weakest member leading, so the transfer takes effect.
#[test]
fn a_transfer_keeps_one_leader_per_epoch_and_makes_the_member_named_leader() {
    for algorithm in ["bully", "garcia-molina"] {
        for lease in [false, true] {
            let o = member(algorithm, 3, |c| {
                c.sim.transfers.push("3>1@20".parse().unwrap());
                c.crashes = 1;
                if lease {
                    c.sim.params = Params::parse(["lease=on"]).unwrap();
                }
            });
            assert!(o.ok() && o.complete, "{algorithm}, lease {lease}: {:?}", o.counterexample);
            let mut held = vec!["uniqueness", "agreement", "live-leader"];
            if lease {
                held.push("one-leader");
            }
            for property in held {
                assert!(verdicts(&o).contains(&(property, "held")), "{algorithm}: {:?}", o.verdicts);
            }
        }
        let o = member(algorithm, 3, |c| {
            c.sim.transfers.push("3>1@20".parse().unwrap());
            c.sim.judge = vec![elect_core::Property::Safety];
        });
        let found = o.counterexample.unwrap_or_else(|| panic!("{algorithm}: {:?}", o.verdicts));
        assert_eq!(found.property, "safety", "{algorithm}");
        assert!(found.detail.contains("elected 1 but the expected winner is 3"), "{algorithm}: {}", found.detail);
    }
}

/// Garcia-Molina's members at five, with a crash at any moment: the search designates the member that may crash
/// up front, so that the reduction works before the crash too, and completes (it held 8.4 GB without reaching the
/// end before). The planted flaw is found there, and its counterexample replays step by step from the
/// initial state, where any member may crash.
#[test]
fn five_garcia_molina_members_are_checked_in_full_and_the_planted_flaw_is_found() {
    let mut sim = SimConfig::new("garcia-molina", 5);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let mut c = CheckConfig::new(sim.clone());
    (c.timed, c.crashes) = (true, 1);
    let o = check(&c).unwrap();
    assert!(o.ok() && o.complete, "{:?}", o.counterexample);
    assert!(o.states < 1_000_000, "{} states", o.states);

    sim.params = Params::parse(["monitor-bug=same-epoch"]).unwrap();
    let mut c = CheckConfig::new(sim);
    (c.timed, c.crashes) = (true, 1);
    let o = check(&c).unwrap();
    let found = o.counterexample.expect("the planted flaw is found");
    assert_eq!(found.property, "uniqueness");
    assert!(found.path.iter().any(|s| matches!(s, Step::Crash { .. })), "a member crashed: {:?}", found.path);
    let r = replay(&c, &found.actions).unwrap();
    assert!(r.steps.last().unwrap().violations.iter().any(|v| v.property.name() == "uniqueness"));
}

/// A member that crashes and restarts from its state file: the search designates the one member that may crash,
/// whose crash and restart are then steps of its own, and the reduction works around both. The verdicts are the
/// full search's, planted flaws included, with fewer states.
#[test]
fn a_restart_is_a_step_of_its_own_member_and_the_reduction_keeps_the_verdicts() {
    let cases = [
        ("bully", None),
        // With a restart, a grant that reuses an epoch is first found reusing the member's own, from before it.
        ("bully", Some(("same-epoch", "fresh-epoch"))),
        ("garcia-molina", None),
    ];
    for (algorithm, bug) in cases {
        let on = |reduce: bool| {
            member(algorithm, 3, |c| {
                (c.crashes, c.recoveries, c.reduce) = (1, 1, reduce);
                if let Some((bug, _)) = bug {
                    c.sim.params = Params::parse([format!("monitor-bug={bug}").as_str()]).unwrap();
                }
            })
        };
        let (full, reduced) = (on(false), on(true));
        assert!(full.complete && reduced.complete);
        assert_eq!(verdicts(&full), verdicts(&reduced), "{algorithm}, planted flaw: {bug:?}");
        // Bully's member keeps 8,665 states of 68,805; Garcia-Molina's, whose members' timers often fall due at
        // one instant (every order of which is kept), 85,154 of 146,281.
        assert!(reduced.states * 3 < full.states * 2, "{algorithm}: {} against {}", reduced.states, full.states);
        match (&full.counterexample, &reduced.counterexample, bug) {
            (None, None, None) => assert!(reduced.ok(), "{algorithm}"),
            (Some(f), Some(r), Some((_, property))) => {
                assert_eq!(r.property, property);
                // The reduction takes one member's steps at a time within an instant: at the instant of the flaw
                // it may take another member's steps first (here the two others' answers, their timers due then),
                // which the full graph's shortest path does without.
                assert!(f.path.len() <= r.path.len() && r.path.len() <= f.path.len() + 2, "{f:?}\n{r:?}");
            }
            _ => panic!("{algorithm}, planted flaw {bug:?}: the verdicts differ or are not the expected ones"),
        }
    }
}

/// The planted flaw forget-epoch: a leader's grant is not durable when it announces it, so a leader that crashes
/// and restarts before it learns another epoch grants the same epoch again. A member that restarts knowing no epoch
/// asks the others, who know the grant, so the flaw shows only once the member has made another's epoch durable:
/// it takes two crashes and two restarts (the first to let another member lead), found at three members, and the
/// path replays in the simulator's terms.
#[test]
fn a_member_that_forgets_its_grant_on_restart_grants_the_epoch_again_and_is_found() {
    let config = {
        let mut sim = SimConfig::new("bully", 3);
        sim.monitor = Some(Monitor::member(elect_core::InT(2)));
        sim.params = Params::parse(["monitor-bug=forget-epoch"]).unwrap();
        let mut config = CheckConfig::new(sim);
        (config.timed, config.crashes, config.recoveries) = (true, 2, 2);
        config
    };
    let o = check(&config).unwrap();
    let c = o.counterexample.unwrap_or_else(|| panic!("the same epoch granted twice, in {} states", o.states));
    assert_eq!(c.property, "fresh-epoch", "{}", c.detail);
    assert!(c.detail.contains("before it restarted, and again after"), "{}", c.detail);
    let restarts = c.path.iter().filter(|s| matches!(s, Step::Recover { .. })).count();
    assert_eq!(restarts, 2, "a restart to learn another's epoch, one to forget its own: {:?}", c.path);
    let r = replay(&config, &c.actions).unwrap();
    assert!(r.steps.last().unwrap().violations.iter().any(|v| v.property.name() == "fresh-epoch"));
}

/// The same flaw at five members (`member-restart.toml`: the leader 5 crashes at 4, restarts at 5, grants itself
/// 2.5 once it has learned 1.5, crashes at 8 and restarts at 9). Every order of the messages around those faults
/// holds fresh-epoch without the flaw; with it, the shortest path shows 5 granting 2.5 on both sides of its second
/// restart, and replays in the simulator's terms.
#[test]
fn at_five_members_a_leader_that_restarts_twice_grants_fresh_epochs_and_the_forgetful_one_is_found() {
    let mut config = CheckConfig::new(scenario("member-restart"));
    config.timed = true;
    let o = check(&config).unwrap();
    assert!(o.ok() && o.complete, "{:?} {:?}", o.stopped, o.counterexample);
    assert!(verdicts(&o).contains(&("fresh-epoch", "held")), "{:?}", verdicts(&o));

    config.sim.params.insert("monitor-bug", "forget-epoch").unwrap();
    let o = check(&config).unwrap();
    let c = o.counterexample.unwrap_or_else(|| panic!("the same epoch granted twice, in {} states", o.states));
    assert_eq!(c.property, "fresh-epoch", "{}", c.detail);
    assert!(c.detail.contains("node 5 declared itself leader in epoch 2.5 before it restarted"), "{}", c.detail);
    // The scenario's restarts come with the instants they are due at.
    let restarts = c.path.iter().filter_map(|s| if let Step::Wait { faults, .. } = s { Some(faults) } else { None });
    let restarts = restarts.flatten().filter(|f| matches!(f, Fault::Recover { node: NodeId(5) })).count();
    assert_eq!(restarts, 2, "{:?}", c.path);
    let r = replay(&config, &c.actions).unwrap();
    assert!(r.steps.last().unwrap().violations.iter().any(|v| v.property.name() == "fresh-epoch"));
}

/// Drifting clocks (`lease-drift.toml`: a lease of 30 T, a drift bound of 10%, every lease timer at either end of
/// what a clock within the bound may make of it): with the leader 3 cut off, 2 leads only once 3's lease ran out,
/// in every interleaving. The planted flaw no-drift (a hold and a promise of `L`) is found: the promises of 1 and
/// 2 to 3 run out early on fast clocks, 2 gets the backing of both, and leads while 3's slow clock still holds its
/// lease.
#[test]
fn with_drifting_clocks_a_lease_that_ignores_the_drift_bound_overlaps_the_next() {
    use elect_core::Property::OneLeader;
    let mut sim = scenario("lease-drift");
    sim.only = vec![OneLeader];
    let mut c = CheckConfig::new(sim.clone());
    (c.timed, c.max_states) = (true, usize::MAX);
    let o = check(&c).unwrap();
    assert!(o.ok() && o.complete, "{:?} {:?}", o.stopped, o.counterexample);
    assert_eq!(verdicts(&o)[0], ("one-leader", "held"));

    sim.params.insert("monitor-bug", "no-drift").unwrap();
    let mut c = CheckConfig::new(sim);
    c.timed = true;
    let o = check(&c).unwrap();
    let found = o.counterexample.as_ref().unwrap_or_else(|| panic!("{:?}", o.verdicts));
    assert_eq!(found.property, "one-leader");
    assert!(found.detail.contains("both say they lead"), "{}", found.detail);
    let replayed = replay(&c, &found.actions).unwrap();
    assert!(replayed.steps.last().unwrap().violations.iter().any(|v| v.property == OneLeader));
}
