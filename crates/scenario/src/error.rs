//! Bad input to a driver: what [`Scenario::build`](crate::Scenario::build) and a sweep refuse, one variant per
//! problem. Each message names the problem in one line, for an error and exit status 2.

use elect_algos::synchronizers::SyncError;
use elect_algos::{ElectsEarliest, ParamError, RegistryError};
use elect_core::{AttrTooLarge, NodeId};

use crate::config::Delay;
use crate::faults::NodeAt;
use crate::time::{Time, format_time};
use crate::topology::{TopologyError, TopologyKind};

/// A configuration the simulator refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// An unknown algorithm, or parameters it does not take.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A parameter the algorithm cannot use with these ids.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// An attribute that does not fit in a rank.
    #[error(transparent)]
    Attr(#[from] AttrTooLarge),
    /// The topology cannot be built as asked.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The synchronizer cannot be set up as asked.
    #[error(transparent)]
    Synchronizer(#[from] SyncError),
    /// The leader monitor alone cannot run this algorithm.
    #[error(transparent)]
    BareMonitor(#[from] ElectsEarliest),
    /// `--monitor` runs a member, and no member runs this algorithm.
    #[error("--monitor: {0}")]
    NotDeployable(#[from] elect_algos::member::NotDeployable),
    /// `--nodes 0`.
    #[error("--nodes must be at least 1")]
    NoNodes,
    /// A recovery that follows no crash of its process.
    #[error(
        "--recover {0}: a recovery must follow a crash of that process (--crash {id}@T with T before {at})",
        id = .0.id, at = format_time(.0.at)
    )]
    Recovery(NodeAt),
    /// A sweep of more runs than can be counted.
    #[error("a sweep of more than 2^64 runs")]
    SweepTooLarge,
    /// `--max-events 0`.
    #[error("--max-events must be at least 1")]
    NoEvents,
    /// `--mobility-until` without `--mobility`.
    #[error("--mobility-until needs --mobility")]
    MobilityUntilAlone,
    /// Nodes that move with nothing to stop the run.
    #[error("nodes that keep moving never let a run end: give --until T, or --mobility-until T to stop them")]
    EndlessMobility,
    /// Nodes that would move for longer than the simulator checks pairs of them.
    #[error(
        "{n} nodes moving for {moves} time units would check {pairs:.1e} pairs of nodes (every pair, once a time \
         unit), more than the {max:.0e} a run may (a few seconds); stop them sooner with --mobility-until or \
         --until, or move fewer nodes",
        pairs = *.moves as f64 * (*.n as f64).powi(2), max = crate::config::MAX_MOBILITY_PAIRS as f64
    )]
    LongMobility {
        /// Moves: time units the nodes move for.
        moves: u64,
        /// Nodes.
        n: usize,
    },
    /// A random topology that came out disconnected, for an algorithm that needs it connected.
    #[error(
        "the {kind} topology drawn for seed {seed} falls into {components} disconnected parts; {algorithm} needs a \
         connected network (try another seed, or a larger range)"
    )]
    Disconnected {
        /// The topology.
        kind: TopologyKind,
        /// The seed it was drawn for.
        seed: u64,
        /// How many parts.
        components: usize,
        /// The algorithm.
        algorithm: &'static str,
    },
    /// An id that names no node.
    #[error("{what} {id} is not a node ({ids})")]
    NotANode {
        /// What the id was given as.
        what: &'static str,
        /// The id.
        id: NodeId,
        /// The run's ids, in a few words.
        ids: String,
    },
    /// A link fault or a loss on a link the topology does not have.
    #[error("there is no link {a}-{b} on a {kind} topology")]
    NoLink {
        /// One end.
        a: NodeId,
        /// The other end.
        b: NodeId,
        /// The topology.
        kind: TopologyKind,
    },
    /// `--synchronizer` for an algorithm not written in rounds.
    #[error("{algorithm} is not written in rounds, so no synchronizer can run it (--synchronizer runs {known})")]
    NotInRounds {
        /// The algorithm.
        algorithm: &'static str,
        /// The algorithms written in rounds.
        known: String,
    },
    /// `--synchronizer` with `--monitor`.
    #[error("a synchronized algorithm runs once, failure-free: --monitor does not apply")]
    SynchronizedMonitor,
    /// `--synchronizer` with `--mobility`.
    #[error("the synchronizers assume fixed links: --mobility does not apply")]
    SynchronizedMobility,
    /// `--synchronizer` with a fault.
    #[error("the synchronizers assume reliable links and no failures: {0} does not apply")]
    SynchronizedFault(&'static str),
    /// The abd synchronizer with unbounded delays.
    #[error(
        "the abd synchronizer spaces pulses 2d apart for a delay bound d, but --delay {0} is unbounded; use a \
         constant or uniform:A..B delay, or give a bound with --delay-bound"
    )]
    AbdUnbounded(Delay),
    /// A synchronous algorithm with unbounded delays.
    #[error(
        "{algorithm} relies on a delay bound T for its timeouts, but --delay {delay} is unbounded; use a constant or \
         uniform:A..B delay, or tell it a bound with --delay-bound"
    )]
    Unbounded {
        /// The algorithm.
        algorithm: &'static str,
        /// The delay given.
        delay: Delay,
    },
    /// `--delay-bound 0`.
    #[error("--delay-bound must be positive")]
    ZeroDelayBound,
    /// The leader monitor with unbounded delays.
    #[error(
        "the leader monitor times heartbeats with a delay bound T, but --delay {0} is unbounded; give one with \
         --delay-bound"
    )]
    MonitorUnbounded(Delay),
    /// `--bare-monitor` for an algorithm that does not elect one leader.
    #[error(
        "{0} elects a leader per group or component and finds failures itself; --bare-monitor is for algorithms \
         that elect one leader (--monitor runs it as a member of `elect node` runs it)"
    )]
    BareMonitorPerGroup(&'static str),
    /// `--monitor` on a topology other than the full mesh.
    #[error(
        "--monitor runs the process a member of `elect node` runs, and members form a full mesh: use --topology \
         complete (ring algorithms run on its logical ring), or --bare-monitor for the leader monitor alone on a \
         {0}"
    )]
    MonitorNeedsMesh(TopologyKind),
    /// The member's planted flaw without `--monitor`.
    #[error("--param {0} plants a flaw in the deployed member: it needs --monitor")]
    BugNeedsMonitor(&'static str),
    /// Voters named or changed without `--monitor`.
    #[error(
        "--param voters, --add-voter and --remove-voter set the voters of the deployed member: they need --monitor"
    )]
    VotersNeedMonitor,
    /// The lease mode without `--monitor`.
    #[error("--param {0} sets the lease mode of the deployed member (as --lease does): it needs --monitor")]
    LeaseNeedsMonitor(&'static str),
    /// A lock-step algorithm whose processes do not all start at time 0.
    #[error(
        "{0} runs in lock-step rounds that every process starts at time 0: use --initiators all, or run it on a \
         synchronizer (--synchronizer alpha)"
    )]
    LockstepInitiators(&'static str),
    /// A lock-step algorithm inside the leader monitor.
    #[error("{0} runs in lock-step rounds from time 0; the leader monitor's epochs restart one process at a time")]
    LockstepMonitor(&'static str),
    /// An algorithm that needs the diameter, on a graph too large to measure.
    #[error(
        "{algorithm} runs D rounds, but the diameter of this {kind} on {n} nodes is too large to measure; give an \
         upper bound with --param diameter=D"
    )]
    NoDiameter {
        /// The algorithm.
        algorithm: &'static str,
        /// The topology.
        kind: TopologyKind,
        /// Its size.
        n: usize,
    },
    /// `--heartbeat 0`.
    #[error("--heartbeat must be at least 1 (a multiple of the delay bound T)")]
    ZeroHeartbeat,
    /// `--heartbeat K` beyond the longest period a parameter may set.
    #[error(
        "--heartbeat {0} is more than {max} (a heartbeat every million delay bounds T at most)",
        max = elect_algos::params::MAX_MULTIPLE
    )]
    LongHeartbeat(u64),
    /// A delay bound so long that the timeouts counted in it would not fit in virtual time.
    #[error(
        "the delay bound T = {0} time units is more than the {max} elect counts timeouts in (a timeout of up to a \
         million T must fit in virtual time); use shorter delays or --delay-bound",
        max = format_time(crate::config::MAX_DELAY_BOUND)
    )]
    LongDelayBound(Time),
    /// A logical ring over a complete graph of fewer than 3 processes.
    #[error("a logical ring over a complete graph needs at least 3 processes ({0} given)")]
    SmallLogicalRing(usize),
    /// An algorithm on a topology it does not run on.
    #[error("{algorithm} runs on a {natural} topology, not on a {kind} (see elect list)")]
    WrongTopology {
        /// The algorithm.
        algorithm: &'static str,
        /// The topology it runs on.
        natural: TopologyKind,
        /// The topology asked for.
        kind: TopologyKind,
    },
    /// `--ids` of the wrong length.
    #[error("--ids lists {listed} ids but --nodes is {n}")]
    IdCount {
        /// How many ids were listed.
        listed: usize,
        /// `--nodes`.
        n: usize,
    },
    /// An id listed twice in `--ids`.
    #[error("duplicate id {0} in --ids")]
    DuplicateId(NodeId),
    /// `--attr random:MAX` beyond the largest attribute.
    #[error("--attr random:{0} exceeds the largest attribute {max}", max = elect_core::Rank::MAX_ATTR)]
    RandomAttrTooLarge(u32),
    /// Every node crashed at time 0.
    #[error("every node is crashed at time 0")]
    AllCrashed,
    /// `--initiators random:K` with K out of range.
    #[error("--initiators random:{k} needs 1 <= K <= {live}{}", up_at_start(.all_up))]
    RandomInitiators {
        /// K.
        k: usize,
        /// The nodes up at time 0.
        live: usize,
        /// Whether every node is up at time 0.
        all_up: bool,
    },
    /// `--initiators neighbors:ID` for a node with no live neighbour.
    #[error("node {0} has no live neighbour to initiate")]
    NoLiveNeighbor(NodeId),
    /// An initiator crashed at time 0.
    #[error("initiator {0} is crashed at time 0 (--crash {0}@0)")]
    InitiatorCrashed(NodeId),
    /// An initiator listed twice.
    #[error("initiator {0} is listed twice")]
    InitiatorTwice(NodeId),
    /// A sweep with nothing to run.
    #[error("a sweep needs at least one algorithm, one size and one seed")]
    EmptySweep,
    /// The sweep's thread pool could not start.
    #[error("cannot start the sweep's threads: {0}")]
    Threads(String),
}

/// How the bound on `K` of `--initiators random:K` reads: all nodes, or those up at time 0.
fn up_at_start(all_up: &bool) -> &'static str {
    if *all_up { "" } else { " nodes up at time 0" }
}
