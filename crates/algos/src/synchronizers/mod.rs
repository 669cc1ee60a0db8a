#![doc = include_str!("../../../../docs/reference/synchronizers/index.md")]

mod abd;
mod alpha;
mod clusters;
mod pulses;

use std::fmt::{self, Debug};
use std::str::FromStr;

use elect_core::{Check, Duration, NodeId, Process, Setup, Winner};

pub use abd::{AbdMsg, AbdNode};
pub use alpha::{AlphaMsg, AlphaNode};
pub use clusters::{ClusterMsg, ClusterNode, LinkKey};

pub use crate::algorithm::SyncSummary;
use crate::algorithm::{Algorithm, Bound, Driver, Facts, Info, Timing};
use crate::params::{ParamError, Params};
use crate::rounds::{RoundAlgorithm, Rounds};
use pulses::*;

/// Every rule the synchronizers name for their own steps (ABD, α, then β and γ), in the order a run meets them;
/// the synchronizers' chapter states each. A synchronized algorithm's [`Info::rules`] are the algorithm's.
pub const RULES: &[&str] = &[
    TAKE_PULSE,
    IGNORE_INITIATE,
    START_HEARD,
    FILE,
    DROP,
    ACK,
    COUNT_ACK,
    SAFE,
    HEARD_SAFE,
    NOT_ROOT,
    ROOT_EXPLORE,
    JOIN_TREE,
    EXPLORED,
    ECHO,
    ECHO_UP,
    HEAD,
    JOIN_CLUSTER,
    HELLO,
    LINKS,
    LINKS_UP,
    CHILD_SAFE,
    SAFE_UP,
    CLUSTER_SAFE,
    PASS_CLUSTER_SAFE,
    NEIGHBOUR_SAFE,
    CHILD_READY,
    READY_UP,
];

/// Which synchronizer, as `--synchronizer` names it: `abd`, `alpha`, `beta[@ROOT]`, `gamma[:K][@ROOT]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spec {
    /// Asynchronous bounded delay: pulses on the local clock, `2d` apart.
    Abd,
    /// Acks and `safe` to every neighbour.
    Alpha,
    /// A spanning tree from `root`: convergecast of `safe`, broadcast of the next pulse.
    Beta {
        /// The tree's root; by default the smallest initiating id.
        root: Option<NodeId>,
    },
    /// Clusters of at least `cluster` processes with β inside and α between them.
    Gamma {
        /// The least cluster size `K` (the root's cluster may be smaller); by default `⌈√n⌉`.
        cluster: Option<u32>,
        /// The tree's root; by default the smallest initiating id.
        root: Option<NodeId>,
    },
}

impl Spec {
    /// The syntax `--synchronizer` accepts.
    pub const SYNTAX: &'static str = "abd, alpha, beta[@ROOT] or gamma[:K][@ROOT]";

    /// The synchronizer's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Abd => "abd",
            Self::Alpha => "alpha",
            Self::Beta { .. } => "beta",
            Self::Gamma { .. } => "gamma",
        }
    }

    /// Whether it needs a bound on message delay.
    pub fn timing(self) -> Timing {
        if self == Self::Abd { Timing::Synchronous } else { Timing::Asynchronous }
    }

    /// The root given, if any.
    pub fn root(self) -> Option<NodeId> {
        match self {
            Self::Beta { root } | Self::Gamma { root, .. } => root,
            Self::Abd | Self::Alpha => None,
        }
    }

    /// Fills in the defaults for a run on `n` processes whose initiators are `initiators`: the root is the
    /// smallest initiating id, the least cluster size `⌈√n⌉`. Errors name what is wrong.
    pub fn resolve(self, n: usize, initiators: &[NodeId]) -> Result<Choice, SyncError> {
        let root = |given: Option<NodeId>| -> Result<NodeId, SyncError> {
            match given {
                Some(root) if initiators.contains(&root) => Ok(root),
                Some(root) => Err(SyncError::RootNotInitiator { name: self.name(), root }),
                None => initiators.iter().copied().min().ok_or(SyncError::NoInitiator(self.name())),
            }
        };
        Ok(match self {
            Self::Abd => Choice::Abd,
            Self::Alpha => Choice::Alpha,
            Self::Beta { root: given } => Choice::Beta { root: root(given)? },
            Self::Gamma { cluster, root: given } => {
                let k = cluster.unwrap_or_else(|| (n as f64).sqrt().ceil().max(1.0) as u32);
                Choice::Gamma { cluster: k, root: root(given)? }
            }
        })
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        if let Self::Gamma { cluster: Some(k), .. } = self {
            write!(f, ":{k}")?;
        }
        if let Some(root) = self.root() {
            write!(f, "@{}", root.0)?;
        }
        Ok(())
    }
}

impl FromStr for Spec {
    type Err = SyncError;

    fn from_str(s: &str) -> Result<Self, SyncError> {
        let bad = |why: &'static str| SyncError::Invalid { text: s.to_owned(), why };
        let (head, root) = match s.trim().split_once('@') {
            Some((_, root)) if root.contains(':') => return Err(bad("the cluster size K comes before @ROOT")),
            Some((head, root)) => {
                let root = root.trim().parse::<u32>().map_err(|_| bad("the root must be a process id"))?;
                (head.trim(), Some(NodeId(root)))
            }
            None => (s.trim(), None),
        };
        let (name, arg) = match head.split_once(':') {
            Some((name, arg)) => (name.trim(), Some(arg.trim())),
            None => (head, None),
        };
        let spec = match name.to_ascii_lowercase().as_str() {
            "abd" => Self::Abd,
            "alpha" | "α" => Self::Alpha,
            "beta" | "β" => Self::Beta { root },
            "gamma" | "γ" => {
                let cluster = arg
                    .map(|k| {
                        k.parse::<u32>()
                            .ok()
                            .filter(|&k| k >= 1)
                            .ok_or_else(|| bad("K must be a whole number of processes, at least 1"))
                    })
                    .transpose()?;
                return Ok(Self::Gamma { cluster, root });
            }
            _ => return Err(bad("unknown synchronizer")),
        };
        if arg.is_some() {
            return Err(bad("only gamma takes a cluster size"));
        }
        if root.is_some() && !matches!(spec, Self::Beta { .. }) {
            return Err(bad("only beta and gamma have a root"));
        }
        Ok(spec)
    }
}

/// Why a synchronizer cannot run as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// `--synchronizer` names none, or in a form [`Spec`] does not take.
    #[error("invalid synchronizer '{text}': {why} (expected {syntax})", syntax = Spec::SYNTAX)]
    Invalid {
        /// What was given.
        text: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A root given that does not initiate.
    #[error(
        "the {name} synchronizer's root {root} must initiate: it starts the set-up (add it to --initiators, or leave \
         the root out to use the smallest initiator)"
    )]
    RootNotInitiator {
        /// The synchronizer.
        name: &'static str,
        /// The root given.
        root: NodeId,
    },
    /// No initiator to be the root.
    #[error("the {0} synchronizer needs an initiator to be its root")]
    NoInitiator(&'static str),
    /// A root that is not a process of the run.
    #[error("the root {0} is not a process of this run")]
    RootNotAProcess(NodeId),
    /// A synchronizer built without its root.
    #[error("the synchronizer has no root")]
    NoRoot,
}

/// A synchronizer with its defaults resolved for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Choice {
    /// ABD.
    Abd,
    /// α.
    Alpha,
    /// β from `root`.
    Beta {
        /// The root.
        root: NodeId,
    },
    /// γ with clusters of at least `cluster` processes, from `root`.
    Gamma {
        /// The least cluster size.
        cluster: u32,
        /// The root.
        root: NodeId,
    },
}

/// A synchronizer: how to wrap a round algorithm's process.
pub trait Synchronizer: Clone + Debug + Send + Sync + 'static {
    /// One process of a synchronized algorithm.
    type Node<R: Rounds>: Process;

    /// Whether it needs a delay bound.
    const TIMING: Timing;

    /// Wraps one process of the algorithm.
    fn node<R: Rounds>(&self, inner: R, setup: &Setup<'_>) -> Self::Node<R>;

    /// What the set-up built, from the processes at the end of a run.
    fn summary<R: Rounds>(&self, nodes: &[Self::Node<R>]) -> SyncSummary;

    /// Whether `ids` suits it (a root that exists).
    fn validate(&self, ids: &[NodeId]) -> Result<(), SyncError> {
        let _ = ids;
        Ok(())
    }
}

/// A round algorithm `A` run on synchronizer `S`: itself an [`Algorithm`], which drivers run like any other.
#[derive(Clone, Debug)]
pub struct Synchronized<A, S> {
    /// The algorithm.
    pub algorithm: A,
    /// The synchronizer.
    pub synchronizer: S,
}

impl<A: RoundAlgorithm, S: Synchronizer + Default> Algorithm for Synchronized<A, S> {
    type Process = S::Node<A::Rounds>;
    const INFO: &'static Info = &Info { timing: S::TIMING, lockstep: false, ..*A::INFO };

    /// The algorithm from `params` on the synchronizer's defaults; drivers build [`Synchronized`] directly with
    /// the synchronizer they resolved ([`dispatch_synchronized`](crate::registry::dispatch_synchronized)).
    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self { algorithm: A::from_params(params)?, synchronizer: S::default() })
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        self.algorithm.validate(ids)?;
        self.synchronizer.validate(ids).map_err(|e| ParamError::Invalid {
            key: "synchronizer",
            value: format!("{:?}", self.synchronizer),
            reason: e.to_string(),
        })
    }

    fn build(&self, setup: &Setup<'_>) -> Self::Process {
        self.synchronizer.node(self.algorithm.build_rounds(setup), setup)
    }

    fn checks(&self) -> Vec<Check> {
        self.algorithm.checks()
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // Generous: the set-up (a few sweeps of the network) and every pulse at its slowest (4h + 3 delays).
        let rounds = self.algorithm.election_time(facts, t).ticks().div_ceil(t.ticks().max(1));
        t * (4 * facts.nodes + 3) * (rounds + 2)
    }

    fn winner(&self) -> Winner {
        self.algorithm.winner()
    }

    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        self.algorithm.bounds(facts)
    }

    fn synchronizer(&self, processes: &[Self::Process]) -> Option<SyncSummary> {
        Some(self.synchronizer.summary(processes))
    }
}

/// ABD: the delay bound comes from the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Abd;

/// α.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Alpha;

/// β (`gamma = false`: one cluster) or γ: the set-up's root and the least cluster size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clusters<const GAMMA: bool> {
    /// The root of the spanning tree.
    pub root: Option<NodeId>,
    /// γ: the least cluster size (at least 1).
    pub cluster: u32,
}

/// β.
pub type Beta = Clusters<false>;
/// γ.
pub type Gamma = Clusters<true>;

impl Synchronizer for Abd {
    type Node<R: Rounds> = AbdNode<R>;
    const TIMING: Timing = Timing::Synchronous;

    fn node<R: Rounds>(&self, inner: R, setup: &Setup<'_>) -> AbdNode<R> {
        AbdNode::new(inner, setup)
    }

    fn summary<R: Rounds>(&self, _: &[AbdNode<R>]) -> SyncSummary {
        SyncSummary { name: "abd", setup_kinds: &["start"], ..SyncSummary::default() }
    }
}

impl Synchronizer for Alpha {
    type Node<R: Rounds> = AlphaNode<R>;
    const TIMING: Timing = Timing::Asynchronous;

    fn node<R: Rounds>(&self, inner: R, setup: &Setup<'_>) -> AlphaNode<R> {
        AlphaNode::new(inner, setup)
    }

    fn summary<R: Rounds>(&self, _: &[AlphaNode<R>]) -> SyncSummary {
        SyncSummary { name: "alpha", control_kinds: &["safe"], ..SyncSummary::default() }
    }
}

impl<const GAMMA: bool> Synchronizer for Clusters<GAMMA> {
    type Node<R: Rounds> = ClusterNode<R, GAMMA>;
    const TIMING: Timing = Timing::Asynchronous;

    fn node<R: Rounds>(&self, inner: R, setup: &Setup<'_>) -> ClusterNode<R, GAMMA> {
        let k = if GAMMA { self.cluster.max(1) } else { u32::MAX };
        ClusterNode::new(inner, setup, Some(setup.id) == self.root, k)
    }

    fn summary<R: Rounds>(&self, nodes: &[ClusterNode<R, GAMMA>]) -> SyncSummary {
        clusters::summary(self.root, nodes)
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), SyncError> {
        match self.root {
            Some(root) if ids.contains(&root) => Ok(()),
            Some(root) => Err(SyncError::RootNotAProcess(root)),
            None => Err(SyncError::NoRoot),
        }
    }
}

/// Runs `choice` on `driver` with the round algorithm `algorithm`.
pub(crate) fn drive<A: RoundAlgorithm, D: Driver>(algorithm: A, choice: Choice, driver: D) -> D::Output {
    match choice {
        Choice::Abd => driver.drive(Synchronized { algorithm, synchronizer: Abd }),
        Choice::Alpha => driver.drive(Synchronized { algorithm, synchronizer: Alpha }),
        Choice::Beta { root } => {
            driver.drive(Synchronized { algorithm, synchronizer: Beta { root: Some(root), cluster: u32::MAX } })
        }
        Choice::Gamma { cluster, root } => {
            driver.drive(Synchronized { algorithm, synchronizer: Gamma { root: Some(root), cluster } })
        }
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Command, Event, Instant, Message, Neighbor, Peers, Port, Prefer, Rank, Shape, driver};

    use super::*;
    use crate::floodmax::{FloodMax, Msg};
    use crate::rounds::RoundTimer;

    /// Process `me` with one neighbour, `other`, on port 0, running FloodMax for two rounds.
    fn with_one_neighbour<T>(me: u32, other: u32, build: impl FnOnce(&Setup<'_>) -> T) -> (T, Vec<Neighbor>) {
        let rank = |id| Rank::new(Prefer::Highest, 0, NodeId(id));
        let neighbors = vec![Neighbor { port: Port(0), id: NodeId(other), rank: rank(other) }];
        let setup = Setup {
            id: NodeId(me),
            rank: rank(me),
            neighbors: &neighbors,
            ring: None,
            ring_order: &[],
            shape: Shape::Other,
            delay_bound: Some(Duration::from_ticks(10)),
            diameter: Some(2),
            suspected: &[],
        };
        (build(&setup), neighbors)
    }

    fn step<P: Process>(p: &mut P, event: elect_core::EventOf<P>) -> Option<&'static str> {
        driver::handle(p, Instant::ZERO, event, &mut Vec::new())
    }

    fn max(id: u32) -> Msg {
        Msg::Max { uid: Rank::new(Prefer::Highest, 0, NodeId(id)) }
    }

    #[test]
    fn they_describe_themselves_in_their_own_words() {
        let flood = FloodMax { diameter: Some(2) };
        // α: the algorithm's round names a step that takes a pulse, α's own rules the others.
        let (mut p, neighbors) = with_one_neighbour(5, 9, |s| Alpha.node(flood.build_rounds(s), s));
        let peers = Peers(&neighbors);
        assert_eq!(p.view(&peers).to_string(), "asleep");
        assert_eq!(step(&mut p, Event::Command(Command::Initiate)), Some("send own id on every link"));
        assert_eq!(p.view(&peers).to_string(), "flooding: max 5, pulse 1");
        assert_eq!(step(&mut p, Event::Message { from: Port(0), msg: AlphaMsg::Ack }), Some(SAFE));
        let alg = AlphaMsg::Alg { pulse: 1, msg: max(9) };
        assert_eq!(alg.describe(), "pulse 1: max 9");
        assert_eq!(step(&mut p, Event::Message { from: Port(0), msg: alg }), Some(ACK));
        let safe = AlphaMsg::Safe { pulse: 1, last: false };
        assert_eq!(
            step(&mut p, Event::Message { from: Port(0), msg: safe }),
            Some("raise max to a stronger id, send it")
        );
        assert_eq!(p.view(&peers).to_string(), "flooding: max 9, pulse 2");
        assert_eq!(step(&mut p, Event::Command(Command::Initiate)), Some(IGNORE_INITIATE));
        assert_eq!(AlphaMsg::<Msg>::Safe { pulse: 3, last: true }.describe(), "safe(3, last)");
        assert_eq!(AlphaMsg::<Msg>::Ack.describe(), "ack");

        // ABD: a start wakes a process, which takes pulse 1 at once.
        let (mut p, _) = with_one_neighbour(5, 9, |s| Abd.node(flood.build_rounds(s), s));
        assert_eq!(
            step(&mut p, Event::Message { from: Port(0), msg: AbdMsg::Start }),
            Some("send own id on every link")
        );
        assert_eq!(step(&mut p, Event::Message { from: Port(0), msg: AbdMsg::Start }), Some(START_HEARD));
        let alg = AbdMsg::Alg { pulse: 1, msg: max(9) };
        assert_eq!(step(&mut p, Event::Message { from: Port(0), msg: alg }), Some(FILE));
        assert_eq!(AbdNode::<crate::floodmax::Flooder>::describe_timer(&RoundTimer::NextRound), "next pulse");

        // β: the set-up's echo, then pulse 1.
        let beta = Beta { root: Some(NodeId(5)), cluster: u32::MAX };
        let (mut root, _) = with_one_neighbour(5, 9, |s| beta.node(flood.build_rounds(s), s));
        let (mut leaf, _) = with_one_neighbour(9, 5, |s| beta.node(flood.build_rounds(s), s));
        assert_eq!(step(&mut leaf, Event::Command(Command::Initiate)), Some(NOT_ROOT));
        assert_eq!(step(&mut root, Event::Command(Command::Initiate)), Some(ROOT_EXPLORE));
        let explore = ClusterMsg::Explore { depth: 0 };
        assert_eq!(explore.describe(), "explore(depth 0)");
        assert_eq!(step(&mut leaf, Event::Message { from: Port(0), msg: explore }), Some(ECHO_UP));
        let echo = ClusterMsg::Echo { open: 1 };
        assert_eq!(echo.describe(), "echo(open 1)");
        assert_eq!(step(&mut root, Event::Message { from: Port(0), msg: echo }), Some("send own id on every link"));
        assert_eq!(step(&mut root, Event::Message { from: Port(0), msg: ClusterMsg::Ack }), Some(COUNT_ACK));
        let safe = ClusterMsg::<Msg, false>::Safe { pulse: 1, last: false, halted: true };
        assert_eq!(safe.describe(), "safe(1, halted)");
        assert_eq!(ClusterMsg::<Msg, true>::Pulse { pulse: 4, last: true }.describe(), "pulse(4, last)");
    }

    #[test]
    fn every_rule_is_listed_once() {
        for (i, rule) in RULES.iter().enumerate() {
            assert!(!RULES[..i].contains(rule), "{rule} twice");
            assert!(rule.len() <= 40 && !rule.contains(':'), "{rule}");
        }
    }

    #[test]
    fn specs_parse_and_print_back() {
        for s in ["abd", "alpha", "beta", "beta@3", "gamma", "gamma:4", "gamma:4@7", "gamma@2"] {
            let spec: Spec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
        assert_eq!("gamma:1".parse::<Spec>(), Ok(Spec::Gamma { cluster: Some(1), root: None }));
        assert_eq!(" gamma : 2 ".parse::<Spec>(), Ok(Spec::Gamma { cluster: Some(2), root: None }));
        assert!("gamma@3:2".parse::<Spec>().unwrap_err().to_string().contains("K comes before @ROOT"));
        for bad in ["delta", "gamma:0", "gamma:x", "gamma:99999999999", "alpha:3", "alpha@2", "beta@x", "beta:2"] {
            let err = bad.parse::<Spec>().unwrap_err().to_string();
            assert!(err.starts_with(&format!("invalid synchronizer '{bad}'")), "{err}");
        }
    }

    #[test]
    fn defaults_resolve_to_the_smallest_initiator_and_root_n_clusters() {
        let ids = [NodeId(5), NodeId(2), NodeId(9)];
        assert_eq!(Spec::Beta { root: None }.resolve(3, &ids), Ok(Choice::Beta { root: NodeId(2) }));
        assert_eq!(
            Spec::Gamma { cluster: None, root: Some(NodeId(9)) }.resolve(10, &ids),
            Ok(Choice::Gamma { cluster: 4, root: NodeId(9) })
        );
        let err = Spec::Beta { root: Some(NodeId(4)) }.resolve(3, &ids).unwrap_err().to_string();
        assert!(err.contains("root 4 must initiate"), "{err}");
        assert!(Spec::Beta { root: None }.resolve(3, &[]).is_err());
        assert_eq!(Spec::Abd.resolve(3, &[]), Ok(Choice::Abd));
    }

    #[test]
    fn a_neighbour_that_said_last_is_not_waited_for_after_it() {
        let mut h = Heard::default();
        assert!(!h.done_with(1));
        h.safe(2, false);
        assert!(h.done_with(2) && !h.done_with(3) && h.needs(5));
        h.safe(3, true);
        assert!(h.done_with(9) && h.needs(3) && !h.needs(4));
    }
}
