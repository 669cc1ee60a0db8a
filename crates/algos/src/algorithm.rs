//! What an algorithm is to whatever runs it: the [`Algorithm`] trait; what `elect list` and the drivers know about
//! an algorithm ([`Info`] and the types it is made of); the facts about a run and the closed-form bounds it is held
//! to ([`Facts`], [`Bound`]); what a synchronizer reports ([`SyncSummary`]); and the [`Driver`] that runs an
//! algorithm once the registry has found it by name.

use std::fmt::Debug;

use elect_core::{Check, Duration, NodeId, Process, Setup, Winner};
use serde::Serialize;

use crate::params::{ParamError, ParamInfo, Params};

/// The topology an algorithm's model needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// A ring; the process is given its [`elect_core::RingPorts`].
    Ring,
    /// A complete graph: every process can send to every other.
    Complete,
    /// Any connected graph; the process knows only its neighbours.
    Connected,
}

impl Needs {
    /// The topology name the algorithm runs on by default.
    pub fn natural_topology(self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Complete => "complete",
            Self::Connected => "any connected graph (default random-regular:4)",
        }
    }
}

/// Whether the algorithm relies on a known bound on message delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Correct under any finite delays.
    Asynchronous,
    /// Uses timeouts derived from a known delay bound `T` (a perfect failure detector when delays respect it).
    Synchronous,
}

/// What an algorithm elects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elects {
    /// One leader for every process.
    OneLeader,
    /// One coordinator per group, several groups side by side (the Invitation algorithm): it finds failures
    /// and merges groups by itself, so the leader monitor does not apply.
    PerGroup,
    /// One leader per connected component of the network (mobile ad hoc election).
    PerComponent,
}

/// Who initiates in the algorithm's showcase scenario (the `tour`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initiators {
    /// Every process.
    All,
    /// One process, chosen by the run's seed.
    OneRandom,
    /// The weakest live process.
    Weakest,
    /// The neighbours of the crashed old leader (the strongest process, crashed from the start): the processes
    /// that notice its failure (Chow, Luo and Newman-Wolfe's failure-driven re-election).
    NeighborsOfCrashed,
}

/// The scenario that shows an algorithm at its most characteristic.
#[derive(Clone, Copy, Debug)]
pub struct Showcase {
    /// Who initiates.
    pub initiators: Initiators,
    /// Whether the strongest process is crashed from the start (the old coordinator failed).
    pub crash_strongest: bool,
    /// One line describing the scenario.
    pub describe: &'static str,
}

/// The order an algorithm needs its links to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkOrder {
    /// Any order: a message may overtake another on the same link.
    Any,
    /// First in, first out on every link: its model assumes it, and it may go wrong without it.
    Fifo,
}

/// What `elect list` and the drivers know about an algorithm.
#[derive(Debug)]
pub struct Info {
    /// The canonical name (CLI, JSON, registry).
    pub name: &'static str,
    /// Accepted short names.
    pub aliases: &'static [&'static str],
    /// The name people know it by.
    pub title: &'static str,
    /// Network and failure model, in a phrase.
    pub model: &'static str,
    /// The seed document(s) it comes from.
    pub seed: &'static str,
    /// The topology it needs.
    pub needs: Needs,
    /// Whether it relies on a delay bound.
    pub timing: Timing,
    /// The order its links must keep for it to be correct.
    pub links: LinkOrder,
    /// One leader, or one coordinator per group.
    pub elects: Elects,
    /// Whether it runs in lock-step rounds that every process starts together at time 0 (synchronous
    /// algorithms: every process initiates, no leader monitor restarts it).
    pub lockstep: bool,
    /// Parameters it takes.
    pub params: &'static [ParamInfo],
    /// The rules its handlers name as they apply them ([`elect_core::Cx::rule`]), each stated in a sentence in
    /// its chapter of the book, under "Rules, step by step": what a step shows beside itself.
    pub rules: &'static [&'static str],
    /// Its showcase scenario.
    pub showcase: Showcase,
}

/// Facts about a run that closed-form bounds are functions of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// `n`: processes.
    pub nodes: u64,
    /// `m`: undirected links.
    pub edges: u64,
    /// `k`: initiators.
    pub initiators: u64,
    /// Processes alive at the end.
    pub live: u64,
    /// Crashes after time 0 (each can start another election).
    pub crashes_during_run: u64,
    /// `D`, the diameter, when the driver knows it.
    pub diameter: Option<u64>,
    /// The largest eccentricity among the initiators, when the driver knows it.
    pub initiator_eccentricity: Option<u64>,
}

impl Facts {
    /// The facts of a failure-free run on `nodes` processes and `edges` links with `initiators` initiators.
    pub fn new(nodes: u64, edges: u64, initiators: u64) -> Self {
        Self {
            nodes,
            edges,
            initiators,
            live: nodes,
            crashes_during_run: 0,
            diameter: None,
            initiator_eccentricity: None,
        }
    }
}

/// What a bound constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// All messages.
    Messages,
    /// Messages of the listed kinds.
    Kinds(&'static [&'static str]),
    /// Messages of every kind but the listed ones.
    AllBut(&'static [&'static str]),
}

/// A closed-form bound of an algorithm (its chapter's Cost section in `docs/reference/algorithms/`), for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The formula and its meaning, e.g. "worst case n(n+1)/2 tokens".
    pub name: String,
    /// What is counted.
    pub measure: Measure,
    /// The bound's value for this run: the count must not exceed it.
    pub value: u64,
}

/// What a synchronized run reports about its synchronizer besides message counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SyncSummary {
    /// `abd`, `alpha`, `beta` or `gamma`.
    pub name: &'static str,
    /// The message kinds of the set-up phase.
    #[serde(skip)]
    pub setup_kinds: &'static [&'static str],
    /// The kinds of its per-pulse control messages (acks apart).
    #[serde(skip)]
    pub control_kinds: &'static [&'static str],
    /// The root of the spanning tree (β, γ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<NodeId>,
    /// The height `h` of the spanning tree the set-up built (β, γ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_height: Option<u32>,
    /// `c`: clusters (γ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<u32>,
    /// The largest height of a cluster's tree, `h_c` (γ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_height: Option<u32>,
    /// `P`: preferred links between adjacent clusters (γ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_links: Option<u64>,
}

/// An election algorithm: its configuration (parsed parameters) and how to build its processes.
pub trait Algorithm: Clone + Debug + Send + Sync + 'static {
    /// The per-process state machine.
    type Process: Process;

    /// What the registry knows about it.
    const INFO: &'static Info;

    /// Whether it says what it is only when it runs ([`Self::info`]), so that [`Self::INFO`] does not describe it:
    /// a driver that picks its code by `INFO` at compile time must ask `info()` instead.
    const INFO_AT_RUN_TIME: bool = false;

    /// What this configuration of it is: [`Self::INFO`], but for an algorithm that says what it is only when it
    /// runs (a program, which names itself and its rules).
    fn info(&self) -> &'static Info {
        Self::INFO
    }

    /// Builds the configuration from validated parameters.
    fn from_params(params: &Params) -> Result<Self, ParamError>;

    /// Checks the parameters against the run's ids (a parameter naming a process that does not exist).
    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        let _ = ids;
        Ok(())
    }

    /// Builds one process.
    fn build(&self, setup: &Setup<'_>) -> Self::Process;

    /// The properties it promises, and when.
    fn checks(&self) -> Vec<Check>;

    /// An upper bound on how long one election takes, from its first initiation until every process knows the
    /// leader, when no process fails and every message takes at most `t`. Used to size what waits for an
    /// election (the leader monitor's settling time).
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration;

    /// How long after the last fault the algorithm is guaranteed to have settled, given the delay bound `T`
    /// processes are told (the `τ` of Stoller's A4′): "at end" properties of a run stopped at `--until` are
    /// judged only if it was stable that long. `None` for algorithms that settle by falling silent.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let _ = (facts, delay_bound);
        None
    }

    /// Whether its processes send only on their ring's `next` port (unidirectional ring algorithms). The model
    /// checker's partial-order reduction relies on it, and stops with an error if a process sends elsewhere.
    fn one_way(&self) -> bool {
        false
    }

    /// The configuration to run inside the leader monitor, which watches the leader itself (heartbeats, and a
    /// pre-vote before it deposes a leader that a majority still hears). An algorithm with a failure detector of
    /// its own for a leader it follows turns that detector off here, so that one member's bad link cannot depose
    /// the leader behind the monitor's back. The others run unchanged.
    fn monitored(self) -> Self
    where
        Self: Sized,
    {
        self
    }

    /// Whom it elects.
    fn winner(&self) -> Winner {
        Winner::StrongestLive
    }

    /// Its closed-form message bounds for a run; the first is the headline bound.
    fn bounds(&self, facts: &Facts) -> Vec<Bound>;

    /// When it runs on a synchronizer: what the synchronizer's set-up built, from the processes at the end of a
    /// run (`None` for every other algorithm).
    fn synchronizer(&self, processes: &[Self::Process]) -> Option<SyncSummary> {
        let _ = processes;
        None
    }
}

/// A consumer of algorithms: the simulator, the model checker, the runtime.
pub trait Driver {
    /// What driving produces.
    type Output;
    /// Runs algorithm `algorithm`.
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output;
}

/// Why the leader monitor alone (`monitor::Bare`) cannot run an algorithm: it elects the earliest initiator, not
/// the strongest process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0} elects the earliest initiator, not the strongest process, so the monitor's epochs (one initiator each) \
     cannot be judged; its own re-election starts from the neighbours of a crashed leader: --crash ID@0"
)]
pub struct ElectsEarliest(pub &'static str);
