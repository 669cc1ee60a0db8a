//! Exhaustive model checking of elect's algorithms: every interleaving of the same [`elect_core::Process`]
//! implementations the simulator runs, with no re-modelling.
//!
//! **States.** A state is every process's value (or its crash), the messages in flight on every directed link,
//! the timers each process has armed, what each process made durable (when it may recover), the fault budgets
//! left, and in timed runs how long until each message, timer and scheduled fault is due. States are compared by
//! a 64-bit fingerprint, kept up to date step by step (`model/fingerprints.rs`); two distinct states sharing one is
//! possible in principle and would hide one of them, with odds of about `s² / 2⁶⁵` for `s` states.
//!
//! **Actions.** The initial state is the one after every process started and the initiators initiated, in
//! position order, as the simulator does at time 0. From a state, each of these is one step: a message is delivered
//! (the first of its link on [`Network::Fifo`] links, any of them otherwise), lost ([`Network::Lossy`]) or
//! delivered while a copy stays in flight ([`Network::Duplicating`], within a budget of duplications); an armed timer
//! fires; a live process crashes, while the crash budget lasts; a crashed one recovers from what it made durable,
//! while the recovery budget lasts.
//!
//! **Time.** Untimed (the default), a timer may fire at any moment, as in stateright: right for asynchronous
//! algorithms, and it shows what a timeout-based algorithm does when its timeouts are wrong. Timed
//! ([`CheckConfig::timed`]), the scenario's delay model bounds message delays: a message arrives at its shortest or
//! its longest delay after it was sent, a timer fires at the shortest or longest duration it was armed for, and
//! time passes ([`Action::Wait`]) to the next instant something may happen only once everything due has happened:
//! the synchronous model of Bully and Garcia-Molina. Scheduled faults (a scenario's crashes, recoveries, link
//! faults and partitions) happen at their times. The clock is left out of the fingerprint, so periodic behaviour
//! closes into cycles instead of growing for ever.
//!
//! **Properties.** The algorithm's own promises ([`elect_core::Monitor::check_state`]): "always" properties are
//! judged in every state; "at end" properties as *eventually*: in every final state (nothing left to happen but
//! faults a run need not suffer), and on every cycle of the state graph, since a run that can go round a cycle
//! for ever through a state where one fails never settles. Cycles are judged without fairness, so untimed
//! timeouts that fire again and again while a message waits count as such a run. *Sometimes*: some reachable
//! state has every live process following one leader with the "at end" properties holding (non-vacuity); before
//! a timed run settles, a state where an instant's steps are all taken.
//!
//! **Search.** Breadth-first by default, so the first violation found has a shortest path, or depth-first;
//! batches of the frontier are expanded in parallel on every core (rayon) and merged in order, so results do not
//! depend on the threads. Partial-order reduction (`reduce.rs`) explores one persistent set of steps per state
//! where that is sound, using both the topology and which processes' deliveries commute (`commute.rs`, found by
//! running their handlers); "shortest" is then among the paths the reduced search explores. The graph's edges
//! are kept only when it may have cycles. [`check_every_arrangement`] checks every arrangement of the ids, one
//! per class of arrangements a symmetry of the topology relates.

mod commute;
mod coverage;
mod error;
mod explore;
mod file;
mod intern;
mod memory;
mod model;
mod reduce;
mod search;
pub mod swarm;
mod symmetry;

use std::fmt;

use elect_algos::member;
use elect_algos::monitor::Bare;
use elect_algos::{Algorithm, Driver};
use elect_core::{NodeId, Status, Violation};
use elect_scenario::{Scenario, SimConfig, Time};
use serde::Serialize;

pub use commute::Commutation;
pub use coverage::{Coverage, Sample, coverage};
pub use error::CheckError;
pub use explore::{Choice, Explorer, Found, Goal, LinkNow, ProcessNow, PropertyNow, Snapshot};
pub use file::{CounterexampleFile, FORMAT, FileError};
pub use model::Action;
use model::Model;
pub use symmetry::{Every, check_every_arrangement};

/// What the network may do with a message in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// Each directed link delivers in sending order.
    #[default]
    Fifo,
    /// Any message in flight on a link may arrive next; none is lost or duplicated.
    Unordered,
    /// As unordered, and any message in flight may be lost.
    Lossy,
    /// As unordered, and a message may arrive twice: as often as the duplication budget allows in a run.
    Duplicating,
}

/// A `--network` that names no network.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown network '{0}' (fifo, unordered, lossy or duplicating)")]
pub struct UnknownNetwork(pub String);

impl std::str::FromStr for Network {
    type Err = UnknownNetwork;
    fn from_str(s: &str) -> Result<Self, UnknownNetwork> {
        match s {
            "fifo" => Ok(Self::Fifo),
            "unordered" => Ok(Self::Unordered),
            "lossy" => Ok(Self::Lossy),
            "duplicating" => Ok(Self::Duplicating),
            other => Err(UnknownNetwork(other.to_owned())),
        }
    }
}

/// The order states are explored in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Breadth-first: a violation comes with a shortest path.
    #[default]
    Bfs,
    /// Depth-first: a smaller frontier, and a path that may be longer than needed.
    Dfs,
}

/// A model-checking problem: a scenario as `elect sim` takes it (algorithm, nodes, topology, ids, initiators,
/// delays and, in timed runs, scheduled faults), the network's semantics, fault budgets and bounds on the search.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// The scenario. Its delay model bounds delays in timed runs; its probabilities of loss do not apply (the
    /// checker explores every fate instead, see [`Network`]).
    pub sim: SimConfig,
    /// What links do.
    pub network: Network,
    /// Whether timers and message delays follow the scenario's delay bound (see the crate's documentation).
    pub timed: bool,
    /// How many times a process may crash, at any point.
    pub crashes: u8,
    /// How many times a crashed process may recover, at any point.
    pub recoveries: u8,
    /// On a duplicating network: how many messages may arrive twice in a run.
    pub duplicates: u8,
    /// Breadth- or depth-first.
    pub order: Order,
    /// Explore each state's successors in an order drawn from this seed (by a hash of the seed and each
    /// successor's fingerprint) instead of the order of the enabled steps: the searches of a swarm, each with a
    /// seed of its own, cover different parts of a state space first when none can cover it all.
    pub shuffle: Option<u64>,
    /// Whether to go on after a violation, to judge every property (a state that breaks one is not explored
    /// further).
    pub keep_going: bool,
    /// Whether to explore one persistent set of steps per state where that is sound.
    pub reduce: bool,
    /// Keep every state seen, and tell states apart field by field rather than by their 64-bit fingerprints: no
    /// two states can be taken for one, at the cost of each state seen taking what a waiting state does.
    pub exact: bool,
    /// Stop after this many unique states (the verdict is then partial).
    pub max_states: usize,
    /// Do not explore beyond this many steps.
    pub max_depth: u32,
    /// Stop after this long.
    pub max_time: Option<std::time::Duration>,
    /// Stop as soon as this is set (the verdict is then partial, stopped by `cancelled`): a caller that gave up on
    /// the check (a server whose request passed its time limit, Ctrl-C) sets it from another thread.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Threads (all cores when `None`).
    pub threads: Option<usize>,
    /// Stop when the process's resident memory passes this many bytes (checked after every batch of states; see
    /// `memory.rs`); `None`: no bound.
    pub max_memory: Option<u64>,
    /// Told how the search goes after every batch of states, on the search's thread (a long check shows it).
    pub progress: Option<OnProgress>,
    /// Keep a coordinated sample of at most this many of the states seen ([`Outcome::sample`]): a swarm's
    /// searches sample the same states, and the merge estimates from them how much of the space they covered.
    pub sample: Option<usize>,
    /// Let a breadth-first search keep the states waiting to be expanded on disk once they outgrow their share of
    /// memory; `None` keeps them all in memory.
    pub spill: Option<Spill>,
}

/// Where a breadth-first search keeps the states waiting to be expanded that do not fit their share of memory
/// ([`CheckConfig::spill`]): whole blocks of them, the oldest behind the front one, go to temporary files and come
/// back in their turn, so the order of the search, and every result, is unchanged. The files are unlinked as they
/// are made (nothing is left behind, even if the process is killed) and closed once read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spill {
    /// Bytes of waiting states kept in memory (blocks of 4,096 states, the front one always).
    pub memory: u64,
    /// The most bytes on disk at once: a search that would pass it stops, not proven.
    pub disk: u64,
    /// The directory of the files (the system's temporary directory, `TMPDIR`, when `None`).
    pub dir: Option<std::path::PathBuf>,
}

/// How far a search has come, as [`CheckConfig::progress`] is told.
#[derive(Clone, Copy, Debug, Default)]
pub struct Searching {
    /// Unique states found.
    pub states: u64,
    /// Transitions taken.
    pub transitions: u64,
    /// The longest path to a state expanded so far.
    pub depth: u32,
    /// States found and not yet expanded.
    pub waiting: u64,
    /// Seconds since the check started.
    pub seconds: f64,
}

/// A callback told of a search's progress ([`CheckConfig::progress`]).
#[derive(Clone)]
pub struct OnProgress(pub std::sync::Arc<dyn Fn(&Searching) + Send + Sync>);

impl fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnProgress")
    }
}

impl CheckConfig {
    /// Checks `sim`'s algorithm and scenario with FIFO links, untimed, no fault, breadth-first with reduction,
    /// and generous bounds.
    pub fn new(sim: SimConfig) -> Self {
        Self {
            sim,
            network: Network::Fifo,
            timed: false,
            crashes: 0,
            recoveries: 0,
            duplicates: 1,
            order: Order::Bfs,
            shuffle: None,
            keep_going: false,
            reduce: true,
            exact: false,
            max_states: 2_000_000,
            max_depth: u32::MAX,
            max_time: None,
            cancel: None,
            threads: None,
            max_memory: None,
            progress: None,
            sample: None,
            spill: None,
        }
    }
}

impl CheckConfig {
    /// Whether the caller has given up on this check ([`CheckConfig::cancel`]).
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// Timers, each with its process's id, in their algorithm's words ([`elect_core::Process::describe_timer`]).
pub type Timers = Vec<(NodeId, String)>;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "action")]
pub enum Step {
    /// A message arrived.
    Deliver {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message in a line, in its algorithm's words ([`elect_core::Message::describe`]).
        msg: String,
    },
    /// A message arrived and a copy of it stays in flight.
    Duplicate {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message in a line, in its algorithm's words ([`elect_core::Message::describe`]).
        msg: String,
    },
    /// A message was lost, or reached a process that was down.
    Lose {
        /// The sender.
        from: NodeId,
        /// The receiver it was for.
        to: NodeId,
        /// The message in a line, in its algorithm's words ([`elect_core::Message::describe`]).
        msg: String,
    },
    /// A timer fired.
    Timer {
        /// Its process.
        node: NodeId,
        /// The timer in a few words ([`elect_core::Process::describe_timer`]).
        timer: String,
    },
    /// A process crashed.
    Crash {
        /// Its id.
        node: NodeId,
    },
    /// A crashed process restarted.
    Recover {
        /// Its id.
        node: NodeId,
    },
    /// Time passed (timed runs).
    Wait {
        /// The instant reached.
        until: Time,
        /// The scenario's faults scheduled for that instant, which happen as it is reached, in order: each is a
        /// step of its own where a path is shown (`elect check`'s text, the viewer, the explorer).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        faults: Vec<Fault>,
    },
}

/// A fault the scenario scheduled (a timed run's crashes, recoveries, commands, link faults and partitions), as a
/// path shows it when its time comes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "fault")]
pub enum Fault {
    /// A process crashed.
    Crash {
        /// Its id.
        node: NodeId,
    },
    /// A crashed process restarted from what it made durable.
    Recover {
        /// Its id.
        node: NodeId,
    },
    /// A process was told to resign.
    Resign {
        /// Its id.
        node: NodeId,
    },
    /// A process was told to hand leadership over.
    Transfer {
        /// Its id.
        node: NodeId,
        /// To whom.
        to: NodeId,
    },
    /// Every live process was asked for a change of the voters (the leader makes it, the others refuse it).
    Voters {
        /// The change.
        change: elect_algos::member::VoterChange,
        /// The processes asked: those live then.
        told: Vec<NodeId>,
    },
    /// A link went down or came back up.
    Link {
        /// One end (the sender, one way).
        from: NodeId,
        /// The other end.
        to: NodeId,
        /// Whether both directions changed.
        both_ways: bool,
        /// Whether it came back up.
        up: bool,
    },
    /// A partition started or healed.
    Partition {
        /// The partition, as `--partition` writes it.
        partition: String,
        /// Whether it healed.
        healed: bool,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Crash { node } => write!(f, "{node} crashes"),
            Self::Recover { node } => write!(f, "{node} recovers"),
            Self::Resign { node } => write!(f, "{node} is told to resign"),
            Self::Transfer { node, to } => write!(f, "{node} is told to hand leadership over to {to}"),
            Self::Voters { change, told } => {
                let told: Vec<String> = told.iter().map(ToString::to_string).collect();
                write!(f, "the voters change ({change}), asked of {}", told.join(", "))
            }
            Self::Link { from, to, both_ways, up } => {
                let arrow = if *both_ways { "-" } else { ">" };
                write!(f, "the link {from}{arrow}{to} {}", if *up { "comes back up" } else { "goes down" })
            }
            Self::Partition { partition, healed } => {
                write!(f, "the partition {partition} {}", if *healed { "heals" } else { "starts" })
            }
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Deliver { from, to, msg } => write!(f, "{to} receives {msg} from {from}"),
            Self::Duplicate { from, to, msg } => {
                write!(f, "{to} receives {msg} from {from}, and a copy stays in flight")
            }
            Self::Lose { from, to, msg } => write!(f, "{msg} from {from} to {to} is lost"),
            Self::Timer { node, timer } => write!(f, "{node}'s timer fires ({timer})"),
            Self::Crash { node } => write!(f, "{node} crashes"),
            Self::Recover { node } => write!(f, "{node} recovers"),
            Self::Wait { until, faults } => {
                write!(f, "time passes to {until}")?;
                for (k, fault) in faults.iter().enumerate() {
                    write!(f, "{} {fault}", if k == 0 { ", when" } else { ";" })?;
                }
                Ok(())
            }
        }
    }
}

/// A property that failed, and a path to a state that shows it: the shortest one in a breadth-first search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counterexample {
    /// The property.
    pub property: &'static str,
    /// The book section that defines it (`Property::source`), its own field in JSON.
    pub cite: &'static str,
    /// What is wrong in the last state (or, for a cycle, in the state the cycle starts and ends at).
    pub detail: String,
    /// The steps from the initial state.
    pub path: Vec<Step>,
    /// For a run that never settles: the step the cycle starts at; the path goes round it once.
    pub loop_start: Option<usize>,
    /// The same steps as actions, for a counterexample file that `elect sim --replay` re-runs.
    pub actions: Vec<Action>,
}

/// The verdict on one property.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The property (`leader` for the non-vacuity check).
    pub property: &'static str,
    /// `always`, `eventually` or `sometimes`.
    pub modality: &'static str,
    /// `held`, `violated`, or `unknown` (the search stopped before it could tell).
    pub result: &'static str,
}

/// What a search found.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The algorithm.
    pub algorithm: &'static str,
    /// `n`.
    pub nodes: usize,
    /// The network's semantics.
    pub network: Network,
    /// Whether delays and timers were timed.
    pub timed: bool,
    /// The crash budget.
    pub crashes: u8,
    /// The recovery budget.
    pub recoveries: u8,
    /// Breadth- or depth-first.
    pub order: Order,
    /// `partial-order` or `none`.
    pub reduction: &'static str,
    /// Why the reduction was dropped, if it was.
    pub reduction_note: Option<&'static str>,
    /// With the reduction: which processes' deliveries were found to commute, if the analysis applied.
    pub commuting: Option<Commutation>,
    /// Unique states visited.
    pub states: u64,
    /// Steps taken (edges of the state graph explored).
    pub transitions: u64,
    /// Final states: nothing left to happen but optional faults.
    pub terminal: u64,
    /// The longest path to a state, as the search first reached it (breadth-first: the shortest path's length).
    pub depth: u32,
    /// Whether every reachable state was visited (no bound cut the search short).
    pub complete: bool,
    /// The bound that cut it short, if one did.
    pub stopped: Option<&'static str>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// How the search spent memory.
    pub memory: Memory,
    /// The algorithm's promised properties.
    pub properties: Vec<&'static str>,
    /// One verdict per property, and `leader` (sometimes).
    pub verdicts: Vec<Verdict>,
    /// Whether some reachable state has every live process following one leader, settled.
    pub leader_reachable: bool,
    /// The first violation found, if any.
    pub counterexample: Option<Counterexample>,
    /// With [`CheckConfig::keep_going`]: the first violation of each other property.
    pub more: Vec<Counterexample>,
    /// With [`CheckConfig::sample`]: the states seen, sampled by fingerprint ([`Sample`]).
    #[serde(skip)]
    pub sample: Option<Sample>,
}

/// How a search spent memory. Visited states are kept as 64-bit fingerprints with, for each, how it was first
/// reached (its parent's number, its depth and the step), from which a counterexample's path is rebuilt; only the
/// states waiting to be expanded are kept whole, sharing the processes they have in common (and, in the exact mode,
/// every state seen).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Memory {
    /// Bytes per visited state: its fingerprint, its slot in the table of fingerprints, and how it was reached.
    pub visited_bytes_per_state: f64,
    /// The most states waiting to be expanded at once.
    pub frontier_peak: u64,
    /// Bytes per visited state of the state graph's edges, when they are kept (to judge "eventually" on cycles).
    pub edges_bytes_per_state: f64,
    /// The most bytes of waiting states on disk at once ([`CheckConfig::spill`]).
    pub disk_peak: u64,
    /// Why the waiting states could not be kept on disk, when the search stopped for it.
    pub disk_error: Option<String>,
    /// Distinct process states met, each kept once, which states refer to by number.
    pub process_states: u64,
    /// Distinct messages met, each kept once likewise.
    pub messages: u64,
    /// Whether every state seen was kept, and states told apart field by field ([`CheckConfig::exact`]).
    pub exact: bool,
    /// An upper bound on the odds that two distinct visited states shared a fingerprint, which would have hidden
    /// one of them: `s(s − 1) / 2⁶⁵` for `s` states (0 in the exact mode).
    pub collision_odds: f64,
}

impl Memory {
    /// The odds bound for `states` states.
    pub fn collision_odds(states: u64) -> f64 {
        let s = states as f64;
        s * (s - 1.0).max(0.0) / 2f64.powi(65)
    }
}

impl Outcome {
    /// Whether the search was complete, found no violation, and a leader is reachable.
    pub fn ok(&self) -> bool {
        self.complete && self.counterexample.is_none() && self.leader_reachable
    }

    /// Everything but the wall-clock time and the memory figures, for comparing two searches.
    pub fn same_as(&self, other: &Self) -> bool {
        let strip = |o: &Self| Self { seconds: 0.0, memory: Memory::default(), ..o.clone() };
        format!("{:?}", strip(self)) == format!("{:?}", strip(other))
    }
}

/// Explores every interleaving of `config`'s scenario.
pub fn check(config: &CheckConfig) -> Result<Outcome, CheckError> {
    let scenario = scenario(config)?;
    dispatch(config, &scenario.clone(), Run { scenario, config: config.clone() })
}

/// Explores every interleaving of `config`'s scenario with `algorithm`, an algorithm of one's own: the scenario
/// (topology, ids, initiators) is built as for the registered algorithm `config.sim.algorithm` names.
pub fn check_algorithm<A: Algorithm>(algorithm: A, config: &CheckConfig) -> Result<Outcome, CheckError> {
    Run { scenario: scenario(config)?, config: config.clone() }.drive(algorithm)
}

fn scenario(config: &CheckConfig) -> Result<Scenario, CheckError> {
    if config.sim.mobility.is_some() {
        return Err(CheckError::Mobility);
    }
    Ok(Scenario::build(&config.sim)?)
}

/// Hands `driver` the process `config` names, as the simulator would run it: the algorithm on its synchronizer
/// (`--synchronizer`), as a member of `elect node` runs it (`--monitor`), inside the leader monitor alone
/// (`--bare-monitor`), or as it is.
fn dispatch<D: Driver<Output = Result<T, CheckError>>, T>(
    config: &CheckConfig,
    scenario: &Scenario,
    driver: D,
) -> Result<T, CheckError> {
    let sim = &config.sim;
    // Inside the leader monitor alone (`--bare-monitor`), the algorithm comes as an `AnyAlgorithm`, and on a
    // synchronizer as an `AnySynchronized`: the search is built once for all of them there, not once per algorithm
    // (`elect_algos::any`). Alone and as a member (what `elect node` runs), it comes as itself, so that the search
    // runs its handlers inlined.
    match (scenario.synchronizer, sim.monitor.map(|m| (m.heartbeat, m.bare))) {
        (Some(choice), _) => elect_algos::dispatch_synchronized_any(&sim.algorithm, &sim.params, choice, driver)?,
        (None, Some((heartbeat, true))) => {
            let bare = Bare { driver, network: scenario.monitor_network(), heartbeat };
            elect_algos::dispatch_any(&sim.algorithm, &sim.params, bare)?.map_err(CheckError::BareMonitor)?
        }
        (None, Some((heartbeat, false))) => {
            let network = scenario.monitor_network();
            let hold = network.delay_bound * member::RESIGN_HOLD;
            member::dispatch(&sim.algorithm, &sim.params, member::DeployTiming::new(heartbeat, hold), network, driver)?
        }
        (None, None) => elect_algos::dispatch(&sim.algorithm, &sim.params, driver)?,
    }
}

struct Run {
    scenario: Scenario,
    config: CheckConfig,
}

impl Driver for Run {
    type Output = Result<Outcome, CheckError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.scenario.ids)?;
        Ok(search::run(&Model::new(algorithm, self.scenario, self.config)?))
    }
}

/// A message a step sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sent {
    /// The sender.
    pub from: NodeId,
    /// The receiver.
    pub to: NodeId,
    /// Its kind.
    pub kind: &'static str,
    /// The message in a line, in its algorithm's words ([`elect_core::Message::describe`]).
    pub msg: String,
    /// The message as the simulator's trace writes it.
    #[serde(skip)]
    pub json: serde_json::Value,
}

/// One step of a replayed path, and what it changed.
#[derive(Clone, Debug, Serialize)]
pub struct Replayed {
    /// The step.
    pub step: Step,
    /// The instant it happened at (timed runs; 0 otherwise).
    pub at: Time,
    /// The rule of its algorithm the step applied, as the algorithm's chapter of the book names it (`None` for
    /// steps no handler runs: a loss, a crash, time passing).
    pub rule: Option<&'static str>,
    /// The messages it sent.
    pub sent: Vec<Sent>,
    /// The messages it dropped without delivering them: on their way to a process that crashed and has no
    /// recovery left (the model forgets them at the crash, where the simulator loses them when they are due).
    pub lost: Vec<Sent>,
    /// The timers it set (or set again), by process, in their algorithm's words.
    pub armed: Timers,
    /// The timers it cancelled (a crash's are not listed: a crash clears them all).
    pub disarmed: Timers,
    /// The processes whose status it changed, with their new status.
    pub changed: Vec<(NodeId, Status)>,
    /// The live processes whose view ([`elect_core::Process::view`]) it changed, with their new view.
    pub views: Vec<(NodeId, elect_core::View)>,
    /// The promised properties the state after it breaks ("at end" ones only where nothing is left to happen).
    pub violations: Vec<Violation>,
}

/// A path replayed step by step.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    /// The algorithm.
    pub algorithm: &'static str,
    /// The status of every process at the start, by id.
    pub initial: Vec<(NodeId, Status)>,
    /// The faults the scenario scheduled for time 0, which happened before the first step, in order.
    pub start_faults: Vec<Fault>,
    /// The messages in flight at the start: what the processes sent as they started and the initiators initiated.
    pub in_flight: Vec<Sent>,
    /// The timers set at the start, by process, in their algorithm's words.
    pub timers: Timers,
    /// The steps.
    pub steps: Vec<Replayed>,
    /// The properties the last state breaks, judged as at the end of a run when `settled` says so.
    pub last: Vec<Violation>,
    /// Whether the last state is final (nothing left to happen but optional faults).
    pub settled: bool,
    /// The algorithm's promised properties.
    pub properties: Vec<&'static str>,
}

/// Re-runs `actions` from the initial state of `config`'s scenario, deterministically, judging every state as the
/// search did. A step that is not enabled (a file from another scenario or another version) is an error.
pub fn replay(config: &CheckConfig, actions: &[Action]) -> Result<Replay, CheckError> {
    let scenario = scenario(config)?;
    dispatch(config, &scenario.clone(), Replaying { scenario, config: config.clone(), actions })
}

struct Replaying<'a> {
    scenario: Scenario,
    config: CheckConfig,
    actions: &'a [Action],
}

impl Driver for Replaying<'_> {
    type Output = Result<Replay, CheckError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.scenario.ids)?;
        let mut at = explore::At::new(Model::new(algorithm, self.scenario, self.config)?);
        let initial = at.model.scenario.ids.iter().copied().zip(at.model.statuses(&at.state)).collect();
        let (start_faults, in_flight) = (at.model.start_faults(), at.model.in_flight_sent(&at.state));
        let timers = at.model.timers_set(&at.state);
        let mut steps = Vec::with_capacity(self.actions.len());
        for (k, &action) in self.actions.iter().enumerate() {
            if !at.model.enabled(&at.state, action) {
                return Err(CheckError::NotEnabled { step: k + 1, action: format!("{action:?}") });
            }
            steps.push(at.step(action));
        }
        let settled = at.model.quiescent(&at.state);
        let last = at.model.judge_all(&at.state, true);
        let properties = at.model.checks.iter().map(|c| c.property.name()).collect();
        let algorithm = at.model.algorithm.info().name;
        Ok(Replay { algorithm, initial, start_faults, in_flight, timers, steps, last, settled, properties })
    }
}

/// The deployed member running `algorithm` on `n` processes, as `elect check --monitor` runs it: the unit tests'
/// configuration.
#[cfg(test)]
pub(crate) fn member_sim(algorithm: &str, n: usize) -> SimConfig {
    let mut sim = SimConfig::new(algorithm, n);
    sim.monitor = Some(elect_scenario::Monitor::member(elect_core::InT(2)));
    sim
}
