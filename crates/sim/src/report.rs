//! The result of a run, as data: the object `elect sim --json` prints. The engine builds it at the end of a run
//! (`crate::finish`).

use serde::{Serialize, Serializer};

use elect_core::{NodeId, Property, Skipped, Status, Violation, When};

use elect_scenario::Time;

/// Message counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Messages {
    /// All messages sent.
    pub total: u64,
    /// Per kind, in the algorithm's order, zeros included.
    #[serde(serialize_with = "as_map")]
    pub by_kind: Vec<(&'static str, u64)>,
}

impl Messages {
    /// The count of messages of `kind` (0 for a kind the algorithm does not have).
    pub fn kind(&self, kind: &str) -> u64 {
        self.by_kind.iter().find(|(k, _)| *k == kind).map_or(0, |&(_, c)| c)
    }
}

fn as_map<S: Serializer, V: Serialize>(pairs: &[(&'static str, V)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// Whether a group of properties held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every property of the group held.
    Held,
    /// At least one was violated.
    Violated,
}

/// A property violation, with when it was seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ViolationReport {
    /// The property's name.
    pub property: Property,
    /// The book section that defines it (`Property::source`, a heading of `docs/reference/properties.md`): its own
    /// field in JSON, `cite`.
    pub cite: &'static str,
    /// When it was seen.
    pub time: Time,
    /// A process whose state breaks it.
    pub node: Option<NodeId>,
    /// What went wrong.
    pub detail: String,
}

impl ViolationReport {
    pub(crate) fn new(time: u64, v: Violation) -> Self {
        Self { property: v.property, cite: v.property.source(), time: Time(time), node: v.node, detail: v.detail }
    }
}

/// The property verdicts of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Properties {
    /// Every safety property checked held.
    pub safety: Verdict,
    /// Every liveness property checked held.
    pub liveness: Verdict,
    /// What was violated, in the order it was seen.
    pub violations: Vec<ViolationReport>,
    /// The properties checked, and when (`always` or `at-end`).
    #[serde(serialize_with = "as_map")]
    pub checked: Vec<(&'static str, When)>,
    /// Promised properties that could not be judged, and why (e.g. the run ended before it settled).
    pub skipped: Vec<Skipped>,
}

/// A closed-form bound and whether the run kept it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BoundReport {
    /// The formula.
    pub name: String,
    /// Its value for this run.
    pub value: u64,
    /// What the run counted.
    pub measured: u64,
    /// `measured <= value`.
    pub held: bool,
    /// The message kinds it counts (every kind, for a bound on all messages).
    pub kinds: Vec<&'static str>,
}

/// What a run on a mobile network measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MobilityReport {
    /// The mean over nodes of the fraction of the run each followed the strongest live node of its connected
    /// component (Vasudevan, Kurose and Towsley's metric).
    pub availability: f64,
    /// The smallest such fraction of any node.
    pub availability_min: f64,
    /// Leader declarations: how many times a node found itself the leader.
    pub elections: u64,
    /// Links that came up or went down.
    pub link_changes: u64,
    /// Connected components at the end.
    pub components_at_end: usize,
}

/// What a run on a synchronizer measured: the set-up apart from the pulses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyncReport {
    /// The synchronizer and what its set-up built (tree height, clusters, preferred links).
    #[serde(flatten)]
    pub summary: elect_algos::synchronizers::SyncSummary,
    /// Messages of the set-up (ABD's `start`; β's and γ's tree and clusters).
    pub setup_messages: u64,
    /// When the first process took pulse 1 (the set-up's time, from the start of the run).
    pub setup_time: Time,
    /// The highest pulse any process took.
    pub pulses: u32,
    /// The algorithm's own messages.
    pub algorithm_messages: u64,
    /// Acknowledgements of algorithm messages.
    pub acks: u64,
    /// Other per-pulse control messages (`safe`, `cluster-safe`, `ready`, `pulse`).
    pub control_messages: u64,
    /// From the first process's pulse 1 to the first process's last pulse.
    pub pulse_time: Time,
    /// From the first process's last-but-one pulse to the first process's last: the time of one pulse once the
    /// start-up skew is absorbed.
    pub last_pulse_time: Time,
}

/// Where one process stands at the end of a run: its last status, and whether it is crashed. A crashed process
/// keeps the status it crashed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalStatus {
    /// The process's id.
    pub node: NodeId,
    /// Its status when the run ended (or when it crashed).
    pub status: Status,
    /// Whether it is crashed at the end.
    pub crashed: bool,
}

/// Everything a run measured and checked.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The algorithm's canonical name.
    pub algorithm: &'static str,
    /// The topology, as `--topology` names it.
    pub topology: String,
    /// `n`.
    pub nodes: usize,
    /// `m`: undirected links.
    pub edges: u64,
    /// `D`: the diameter, `null` when the network is disconnected or too large to measure.
    pub diameter: Option<u64>,
    /// Connected components of the network (1 when connected).
    pub components: usize,
    /// The root seed.
    pub seed: u64,
    /// The id every live process agrees on, if they do.
    pub leader: Option<NodeId>,
    /// Whether every live process has the same leader.
    pub agreed: bool,
    /// When the last live process learned the agreed leader.
    pub elected_at: Option<Time>,
    /// When a process last performed the algorithm's "I am the leader" action (detection), if it has one.
    pub declared_at: Option<Time>,
    /// Message counts.
    pub messages: Messages,
    /// Bits sent: each message's size in the wire encoding (postcard), times 8.
    pub bits: u64,
    /// Messages delivered to a live process (messages to crashed processes are sent but not delivered).
    pub delivered: u64,
    /// Messages lost (to loss, a link down or a partition).
    pub lost: u64,
    /// Messages the network delivered twice.
    pub duplicated: u64,
    /// Events processed: message deliveries, timer expiries, commands and faults.
    pub events: u64,
    /// Property verdicts.
    pub properties: Properties,
    /// Closed-form bounds, headline first.
    pub bounds: Vec<BoundReport>,
    /// On a synchronizer: its costs, set-up apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronizer: Option<SyncReport>,
    /// On a mobile network: how often nodes had the right leader.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mobility: Option<MobilityReport>,
    /// `k`: processes that received `Initiate`.
    pub initiators: usize,
    /// Processes alive at the end.
    pub live: usize,
    /// The delay model.
    pub delay: String,
    /// `fifo` or `unordered` links.
    pub links: &'static str,
    /// The time of the last event.
    pub end_time: Time,
    /// Whether the run became quiescent within its event budget.
    pub terminated: bool,
    /// When the run was to stop if still busy: `--until`, or by default, for algorithms that never fall silent,
    /// the settling time after the last fault.
    pub until: Option<Time>,
    /// The process the algorithm should have elected.
    pub expected_leader: Option<NodeId>,
    /// The command that reproduces this run.
    pub reproduce: String,
    /// Each process's final status, by position, read from the engine's state at the end (not from a trace).
    /// Not part of the JSON report, whose size does not grow with the processes.
    #[serde(skip)]
    pub statuses: Vec<FinalStatus>,
}

impl Report {
    /// Whether every checked property held.
    pub fn ok(&self) -> bool {
        self.properties.violations.is_empty()
    }
}
