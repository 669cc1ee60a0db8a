//! An algorithm taken as an [`elect_algos::AnyAlgorithm`] (as the model checker takes it) runs as the algorithm
//! itself does: the same seed gives the same trace, event for event, plain, in the leader monitor, and as a
//! member; and so does a round algorithm on a synchronizer taken as an [`elect_algos::AnySynchronized`].

use std::io::Write;
use std::sync::{Arc, Mutex};

use elect_algos::monitor::Bare;
use elect_algos::{Driver, Elects, Needs, member};
use elect_core::{InT, NodeId, Winner};
use elect_scenario::{Delay, Ids, InitiatorSpec, Monitor, NodeAt, Scenario, SimConfig, TICKS_PER_UNIT, TopologyKind};

use crate::{Observers, Run};

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How a run is handed its algorithm.
#[derive(Clone, Copy, Debug)]
enum Taken {
    Plain,
    Bare,
    Member,
    /// On the scenario's synchronizer.
    Synchronized,
}

/// The trace of `config`'s run, with the algorithm as itself or as an `AnyAlgorithm`, but for its first line
/// (the run's header, which lists the message kinds: an `AnyAlgorithm`'s are every algorithm's).
fn trace(config: &SimConfig, taken: Taken, any: bool) -> Vec<String> {
    let buf = Buf::default();
    let scenario = Scenario::build(config).unwrap();
    let run = Run { scenario, observers: Observers { trace: Some(Box::new(buf.clone())), progress: None } };
    let (name, params) = (&config.algorithm, &config.params);
    let network = run.scenario.monitor_network();
    let report = match (taken, any) {
        (Taken::Plain, false) => elect_algos::dispatch(name, params, run),
        (Taken::Plain, true) => elect_algos::dispatch_any(name, params, run),
        (Taken::Bare, false) => {
            elect_algos::dispatch(name, params, Bare { driver: run, network, heartbeat: InT(2) }).map(|r| r.unwrap())
        }
        (Taken::Bare, true) => {
            let bare = Bare { driver: run, network, heartbeat: InT(2) };
            elect_algos::dispatch_any(name, params, bare).map(|r| r.unwrap())
        }
        (Taken::Synchronized, any) => {
            let choice = run.scenario.synchronizer.expect("a synchronizer");
            if any {
                elect_algos::dispatch_synchronized_any(name, params, choice, run)
            } else {
                elect_algos::dispatch_synchronized(name, params, choice, run)
            }
        }
        (Taken::Member, any) => {
            let timing = member::DeployTiming::new(InT(2), network.delay_bound * member::RESIGN_HOLD);
            if any {
                member::dispatch_any(name, params, timing, network, run)
            } else {
                member::dispatch(name, params, timing, network, run)
            }
        }
    };
    report.unwrap().unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<String> = text.lines().skip(1).map(str::to_owned).collect();
    assert!(lines.len() > 10, "{config:?} {taken:?}: the trace is written");
    lines
}

fn same_trace(config: &SimConfig, taken: Taken) {
    let (own, any) = (trace(config, taken, false), trace(config, taken, true));
    for (k, (own, any)) in own.iter().zip(&any).enumerate() {
        assert_eq!(own, any, "{} {taken:?}: line {} differs", config.command_line(), k + 2);
    }
    assert_eq!(own.len(), any.len(), "{} {taken:?}", config.command_line());
}

fn config(name: &str, seed: u64) -> SimConfig {
    let info = elect_algos::lookup(name).unwrap();
    let mut c = SimConfig::new(name, 7);
    c.seed = seed;
    c.ids = Ids::Random;
    c.initiators = if info.lockstep { InitiatorSpec::All } else { InitiatorSpec::Random(2) };
    c.delay = Delay::Uniform(TICKS_PER_UNIT / 2, TICKS_PER_UNIT);
    c
}

#[test]
fn every_algorithm_runs_as_itself_when_taken_as_any_algorithm() {
    for (seed, info) in (1..).zip(elect_algos::registry::all()) {
        same_trace(&config(info.name, seed), Taken::Plain);
    }
}

#[test]
fn in_the_leader_monitor_and_as_a_member_too() {
    for (seed, info) in (1..).zip(elect_algos::registry::all()) {
        let mut c = config(info.name, seed);
        c.crashes.push(NodeAt { id: NodeId(7), at: 30 * TICKS_PER_UNIT });
        c.until = Some(200 * TICKS_PER_UNIT);
        if info.needs == Needs::Ring {
            c.topology = Some(TopologyKind::Complete);
        }
        if member::deployable(info).is_ok() {
            c.monitor = Some(Monitor::member(InT(2)));
            same_trace(&c, Taken::Member);
        }
        let winner = elect_algos::dispatch(info.name, &c.params, WinnerOf).unwrap();
        if info.elects == Elects::OneLeader && !info.lockstep && winner != Winner::EarliestInitiator {
            c.monitor = Some(Monitor { heartbeat: InT(2), bare: true });
            same_trace(&c, Taken::Bare);
        }
    }
}

#[test]
fn every_round_algorithm_on_every_synchronizer_runs_as_itself_when_taken_as_any_synchronized() {
    let mut seed = 0;
    for info in elect_algos::registry::all().iter().filter(|info| elect_algos::runs_on_synchronizers(info.name)) {
        for spec in ["abd", "alpha", "beta", "gamma:2"] {
            seed += 1;
            let mut c = config(info.name, seed);
            c.synchronizer = Some(spec.parse().unwrap());
            same_trace(&c, Taken::Synchronized);
        }
    }
    assert_eq!(seed, 12, "three round algorithms, four synchronizers");
}

struct WinnerOf;

impl Driver for WinnerOf {
    type Output = Winner;
    fn drive<A: elect_algos::Algorithm>(self, algorithm: A) -> Winner {
        algorithm.winner()
    }
}

#[test]
fn the_text_form_is_the_algorithms_own_and_is_not_read_back() {
    use elect_algos::any::{AnyMsg, AnyTimer};
    use elect_algos::bully;
    let own = bully::Msg::Ok { epoch: elect_core::Epoch::of(2, NodeId(5)) };
    let any = AnyMsg::Bully(own.clone());
    assert_eq!(serde_json::to_string(&any).unwrap(), serde_json::to_string(&own).unwrap());
    let timer = AnyTimer::Bully(bully::Timer::CoordinatorDeadline);
    let text = serde_json::to_string(&timer).unwrap();
    assert_eq!(text, serde_json::to_string(&bully::Timer::CoordinatorDeadline).unwrap());
    let err = serde_json::from_str::<AnyTimer>(&text).unwrap_err().to_string();
    assert!(err.contains("AnyTimer is written in text as its algorithm's own"), "{err}");
}
