#![doc = include_str!("../../../../docs/reference/synchronizers/beta-gamma.md")]

use std::borrow::Cow;
use std::collections::BTreeMap;

use elect_core::{Command, Cx, Message, NodeId, Peers, Port, Process, Rank, Setup, Status, View};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::pulses::{
    ACK, CHILD_READY, CHILD_SAFE, CLUSTER_SAFE, COUNT_ACK, ECHO, ECHO_UP, EXPLORED, HEAD, HELLO, Heard,
    IGNORE_INITIATE, JOIN_CLUSTER, JOIN_TREE, LINKS, LINKS_UP, NEIGHBOUR_SAFE, NOT_ROOT, PASS_CLUSTER_SAFE, Pulses,
    READY_UP, ROOT_EXPLORE, SAFE_UP, describe_alg, describe_control, kinds, name,
};
use crate::algorithm::SyncSummary;
use crate::rounds::{RoundTimer, Rounds};

/// A link named by its two ends, `(rank, port)` each, the smaller first: both ends compute the same key.
pub type LinkKey = ((Rank, u32), (Rank, u32));

/// The messages of β (`GAMMA = false`) and γ.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum ClusterMsg<M, const GAMMA: bool> {
    /// A message of the algorithm, sent in pulse `pulse`.
    Alg {
        /// The sender's pulse.
        pulse: u32,
        /// The message.
        msg: M,
    },
    /// An algorithm message arrived.
    Ack,
    /// The sender and its cluster subtree are safe for `pulse`; `last`: none of them sends after it.
    Safe {
        /// The pulse.
        pulse: u32,
        /// Whether the subtree is silent from the next pulse on.
        last: bool,
        /// Whether every algorithm in the subtree has halted (no round is left to take).
        halted: bool,
    },
    /// The sender's cluster is safe for `pulse` (down the cluster tree, and over preferred links).
    ClusterSafe {
        /// The pulse.
        pulse: u32,
        /// Whether the cluster is silent from the next pulse on.
        last: bool,
    },
    /// The sender's cluster subtree and the clusters next to it are safe for `pulse`.
    Ready {
        /// The pulse.
        pulse: u32,
    },
    /// Take pulse `pulse`; with `last`, as the final one.
    Pulse {
        /// The pulse.
        pulse: u32,
        /// Whether it is the cluster's last.
        last: bool,
    },
    /// Set-up: join the tree; the sender is at `depth`.
    Explore {
        /// The sender's depth.
        depth: u32,
    },
    /// Set-up: the sender's subtree is done; `open` of its processes are in no cluster yet.
    Echo {
        /// Processes below not yet in a cluster (0: the sender heads a cluster).
        open: u32,
    },
    /// β's set-up is done: take pulse 1.
    Start,
    /// γ set-up: the cluster headed by `head`; the sender is at `depth` in it.
    Cluster {
        /// The head's rank (the cluster's name).
        head: Rank,
        /// The sender's depth in the cluster tree.
        depth: u32,
    },
    /// γ set-up: the sender's cluster, and its port on this link.
    Hello {
        /// The sender's cluster.
        cluster: Rank,
        /// The sender's port.
        port: u32,
    },
    /// γ set-up: the best link from the sender's subtree to each other cluster.
    Links {
        /// `(cluster, link)` pairs.
        best: Vec<(Rank, LinkKey)>,
    },
    /// γ set-up is done in the cluster: its preferred links; take pulse 1.
    Preferred {
        /// The cluster's preferred links.
        links: Vec<LinkKey>,
    },
}

const BETA: &[&str] = &["ack", "safe", "pulse", "explore", "echo", "start"];
const GAMMA_KINDS: &[&str] =
    &["ack", "safe", "cluster-safe", "ready", "pulse", "explore", "echo", "cluster", "hello", "links", "preferred"];
/// β's set-up kinds.
const BETA_SETUP: &[&str] = &["explore", "echo", "start"];
/// γ's set-up kinds.
const GAMMA_SETUP: &[&str] = &["explore", "echo", "cluster", "hello", "links", "preferred"];

impl<M, const GAMMA: bool> ClusterMsg<M, GAMMA> {
    fn own(&self) -> &'static str {
        match self {
            Self::Alg { .. } => "",
            Self::Ack => "ack",
            Self::Safe { .. } => "safe",
            Self::ClusterSafe { .. } => "cluster-safe",
            Self::Ready { .. } => "ready",
            Self::Pulse { .. } => "pulse",
            Self::Explore { .. } => "explore",
            Self::Echo { .. } => "echo",
            Self::Start => "start",
            Self::Cluster { .. } => "cluster",
            Self::Hello { .. } => "hello",
            Self::Links { .. } => "links",
            Self::Preferred { .. } => "preferred",
        }
    }

    fn own_kinds() -> &'static [&'static str] {
        if GAMMA { GAMMA_KINDS } else { BETA }
    }
}

/// The algorithm's message is valid for the algorithm; the synchronizer's own carry nothing to check.
impl<M: Message, const GAMMA: bool> elect_core::Validate for ClusterMsg<M, GAMMA> {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match self {
            Self::Alg { msg, .. } => msg.validate(roster),
            _ => Ok(()),
        }
    }
}

impl<M: Message, const GAMMA: bool> Message for ClusterMsg<M, GAMMA> {
    fn kinds() -> Cow<'static, [&'static str]> {
        kinds::<M>(Self::own_kinds())
    }

    fn kind_index(&self) -> usize {
        match self {
            Self::Alg { msg, .. } => msg.kind_index(),
            other => {
                let own = other.own();
                // β never sends γ's set-up kinds, nor γ β's `start`: every kind sent is listed.
                M::kinds().len() + Self::own_kinds().iter().position(|k| *k == own).unwrap_or(0)
            }
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Alg { msg, .. } => msg.kind(),
            other => other.own(),
        }
    }

    /// `pulse 3: max 9`, `ack`, `safe(3, last)`, `cluster-safe(3)`, `ready(3)`, `pulse(4)`, `explore(depth 1)`,
    /// `echo(open 2)`, `cluster(head 5, depth 1)`, `hello(cluster 5)`, `links(to 3, 8)`, `preferred(2 links)`.
    fn describe(&self) -> String {
        let own = self.own();
        match self {
            Self::Alg { pulse, msg } => describe_alg(*pulse, msg),
            Self::Ack | Self::Start => own.to_owned(),
            Self::Safe { pulse, last, halted } => {
                describe_control(own, *pulse, &[(*last, "last"), (*halted, "halted")])
            }
            Self::ClusterSafe { pulse, last } | Self::Pulse { pulse, last } => {
                describe_control(own, *pulse, &[(*last, "last")])
            }
            Self::Ready { pulse } => describe_control(own, *pulse, &[]),
            Self::Explore { depth } => format!("{own}(depth {depth})"),
            Self::Echo { open } => format!("{own}(open {open})"),
            Self::Cluster { head, depth } => format!("{own}(head {head}, depth {depth})"),
            Self::Hello { cluster, .. } => format!("{own}(cluster {cluster})"),
            Self::Links { best } if best.is_empty() => format!("{own}(none)"),
            Self::Links { best } => {
                let to: Vec<String> = best.iter().map(|(cluster, _)| cluster.to_string()).collect();
                format!("{own}(to {})", to.join(", "))
            }
            Self::Preferred { links } => format!("{own}({} links)", links.len()),
        }
    }
}

/// Where a process stands in one pulse.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct PulseState {
    /// Own messages of the pulse not yet acknowledged.
    unacked: u32,
    /// Cluster children that sent `safe`.
    safe_children: u32,
    /// Whether this process and every cluster child that reported is silent after the pulse.
    quiet: bool,
    /// Whether the algorithm here and at every cluster child that reported has halted.
    halted: bool,
    /// `safe` sent (or, at the head, the cluster found safe).
    safe_sent: bool,
    /// `cluster-safe` from the own cluster, with its `last` flag.
    cluster_safe: Option<bool>,
    /// Cluster children that sent `ready`.
    ready_children: u32,
    /// `ready` sent (or, at the head, the next pulse begun).
    ready_sent: bool,
}

/// One process of a round algorithm on the β (`GAMMA = false`) or γ synchronizer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClusterNode<R: Rounds, const GAMMA: bool> {
    pulses: Pulses<R>,
    me: Rank,
    /// The neighbours' ranks, by port.
    ranks: Vec<Rank>,
    root: bool,
    /// The least cluster size (`u32::MAX` for β: one cluster).
    k: u32,
    // The tree.
    explored: bool,
    parent: Option<Port>,
    depth: u32,
    /// Links not yet answered in the echo.
    pending: u32,
    /// Tree children with the `open` count each reported.
    children: Vec<(Port, u32)>,
    echoed: bool,
    // The cluster.
    head: bool,
    cluster: Option<Rank>,
    cluster_depth: u32,
    /// Per port: the neighbour's cluster and port, from its `hello`.
    hello: Vec<Option<(Rank, u32)>>,
    /// Cluster children whose `links` arrived.
    links_heard: u32,
    links_sent: bool,
    /// The best link to each other cluster from this subtree.
    best: BTreeMap<Rank, LinkKey>,
    /// Own preferred links.
    preferred: Vec<Port>,
    /// At the head: whether the cluster has any preferred link.
    cluster_preferred: bool,
    // The pulses.
    opened: bool,
    done: bool,
    now: PulseState,
    /// Per port: `cluster-safe`s heard over it (used on preferred links).
    across: Vec<Heard>,
}

impl<R: Rounds, const GAMMA: bool> ClusterNode<R, GAMMA> {
    /// Wraps `inner`; `root` says whether this process is the tree's root, `k` is the least cluster size.
    pub fn new(inner: R, setup: &Setup<'_>, root: bool, k: u32) -> Self {
        let degree = setup.neighbors.len();
        Self {
            pulses: Pulses::new(inner),
            me: setup.rank,
            ranks: setup.neighbors.iter().map(|n| n.rank).collect(),
            root,
            k,
            explored: false,
            parent: None,
            depth: 0,
            pending: 0,
            children: Vec::new(),
            echoed: false,
            head: false,
            cluster: None,
            cluster_depth: 0,
            hello: vec![None; if GAMMA { degree } else { 0 }],
            links_heard: 0,
            links_sent: false,
            best: BTreeMap::new(),
            preferred: Vec::new(),
            cluster_preferred: false,
            opened: false,
            done: false,
            now: PulseState::default(),
            across: vec![Heard::default(); if GAMMA { degree } else { 0 }],
        }
    }

    /// The algorithm.
    pub fn inner(&self) -> &R {
        &self.pulses.inner
    }

    /// The last pulse taken.
    pub fn pulse(&self) -> u32 {
        self.pulses.round
    }

    /// The depth in the spanning tree.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether this process heads a cluster (β: only the root).
    pub fn is_head(&self) -> bool {
        self.head
    }

    /// Own preferred links.
    pub fn preferred(&self) -> &[Port] {
        &self.preferred
    }

    fn degree(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// Cluster children: the tree children that head no cluster of their own.
    fn cluster_children(&self) -> impl Iterator<Item = Port> + '_ {
        self.children.iter().filter(|(_, open)| *open > 0).map(|&(port, _)| port)
    }

    fn cluster_child_count(&self) -> u32 {
        self.cluster_children().count() as u32
    }

    fn to_cluster_children(&self, cx: &mut Cx<'_, Self>, msg: &ClusterMsg<R::Msg, GAMMA>) {
        for port in self.cluster_children() {
            cx.send(port, msg.clone());
        }
    }

    // The tree.

    fn explore(&mut self, cx: &mut Cx<'_, Self>, parent: Option<Port>, depth: u32) {
        self.explored = true;
        (self.parent, self.depth) = (parent, depth);
        self.pending = self.degree() - u32::from(parent.is_some());
        for port in (0..self.degree()).map(Port).filter(|&p| Some(p) != parent) {
            cx.send(port, ClusterMsg::Explore { depth });
        }
        self.answered(cx);
    }

    /// One more link answered in the echo; the echo goes up once all are.
    fn answered(&mut self, cx: &mut Cx<'_, Self>) {
        if self.pending > 0 || self.echoed {
            return;
        }
        self.echoed = true;
        let open = 1 + self.children.iter().map(|&(_, open)| open).sum::<u32>();
        self.head = self.root || open >= self.k;
        if let Some(parent) = self.parent {
            cx.rule(ECHO_UP);
            cx.send(parent, ClusterMsg::Echo { open: if self.head { 0 } else { open } });
        }
        if !self.head {
            return;
        }
        if GAMMA {
            cx.rule(HEAD);
            self.join(cx, self.me, 0);
        } else {
            self.to_cluster_children(cx, &ClusterMsg::Start);
            self.open(cx, 1, false);
        }
    }

    // The clusters (γ).

    fn join(&mut self, cx: &mut Cx<'_, Self>, head: Rank, depth: u32) {
        (self.cluster, self.cluster_depth) = (Some(head), depth);
        self.to_cluster_children(cx, &ClusterMsg::Cluster { head, depth });
        for port in 0..self.degree() {
            cx.send(Port(port), ClusterMsg::Hello { cluster: head, port });
        }
        self.links_ready(cx);
    }

    fn link_key(&self, port: u32, far: u32) -> LinkKey {
        let (a, b) = ((self.me, port), (self.ranks[port as usize], far));
        if a <= b { (a, b) } else { (b, a) }
    }

    /// Reports the subtree's best links to other clusters up, or at the head chooses the preferred links, once
    /// every neighbour's cluster and every cluster child's report are known.
    fn links_ready(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(cluster) = self.cluster else { return };
        if self.links_sent || self.links_heard < self.cluster_child_count() || self.hello.iter().any(Option::is_none) {
            return;
        }
        self.links_sent = true;
        for port in 0..self.degree() {
            let (theirs, far) = self.hello[port as usize].expect("every hello arrived");
            if theirs != cluster {
                let key = self.link_key(port, far);
                let best = self.best.entry(theirs).or_insert(key);
                *best = (*best).min(key);
            }
        }
        if self.head {
            let links: Vec<LinkKey> = self.best.values().copied().collect();
            self.cluster_preferred = !links.is_empty();
            self.prefer(&links);
            self.to_cluster_children(cx, &ClusterMsg::Preferred { links });
            self.open(cx, 1, false);
        } else if let Some(parent) = self.parent {
            cx.rule(LINKS_UP);
            cx.send(parent, ClusterMsg::Links { best: self.best.iter().map(|(&c, &k)| (c, k)).collect() });
        }
    }

    fn prefer(&mut self, links: &[LinkKey]) {
        self.preferred = (0..self.degree())
            .filter(|&port| self.hello[port as usize].is_some_and(|(_, far)| links.contains(&self.link_key(port, far))))
            .map(Port)
            .collect();
    }

    // The pulses.

    /// Takes pulse `p`; with `last`, as the final one. [`Self::advance`] then moves it on.
    fn open(&mut self, cx: &mut Cx<'_, Self>, p: u32, last: bool) {
        debug_assert_eq!(p, self.pulses.round + 1);
        self.opened = true;
        let unacked = self.pulses.take(cx, |cx, to, pulse, msg| cx.send(to, ClusterMsg::Alg { pulse, msg }));
        let (quiet, halted) = (self.pulses.quiet(), self.pulses.inner.halted());
        self.now = PulseState { unacked, quiet, halted, ..PulseState::default() };
        self.done = last;
    }

    /// Moves the pulse on as far as what has arrived allows: `safe` and `ready` up the cluster, and at a head the
    /// next pulses, in a loop (a head with nothing to wait for takes many pulses in one step). `before` is the
    /// pulse the step began in.
    fn advance(&mut self, cx: &mut Cx<'_, Self>, before: u32) {
        while let Some(last) = self.ready_for_next(cx, before) {
            if self.now.halted {
                // Every algorithm in the cluster has halted: no round is left to take.
                self.done = true;
                return;
            }
            let p = self.pulses.round + 1;
            self.to_cluster_children(cx, &ClusterMsg::Pulse { pulse: p, last });
            self.open(cx, p, last);
        }
    }

    /// Sends what the current pulse allows; at a head whose cluster may take the next pulse, returns whether it
    /// is the cluster's last.
    fn ready_for_next(&mut self, cx: &mut Cx<'_, Self>, before: u32) -> Option<bool> {
        if !self.opened || self.done {
            return None;
        }
        let p = self.pulses.round;
        if !self.now.safe_sent {
            if self.now.unacked > 0 || self.now.safe_children < self.cluster_child_count() {
                return None;
            }
            self.now.safe_sent = true;
            let (quiet, halted) = (self.now.quiet, self.now.halted);
            if !self.head {
                name(cx, before, p, SAFE_UP);
                let parent = self.parent.expect("a process that heads no cluster has a parent");
                cx.send(parent, ClusterMsg::Safe { pulse: p, last: quiet, halted });
                return None;
            }
            if !self.cluster_preferred {
                return Some(quiet);
            }
            name(cx, before, p, CLUSTER_SAFE);
            self.cluster_safe(cx, quiet);
        }
        let last = self.now.cluster_safe?;
        if self.now.ready_sent
            || self.now.ready_children < self.cluster_child_count()
            || !self.preferred.iter().all(|port| self.across[port.index()].done_with(p))
        {
            return None;
        }
        self.now.ready_sent = true;
        if self.head {
            return Some(last);
        }
        name(cx, before, p, READY_UP);
        let parent = self.parent.expect("a process that heads no cluster has a parent");
        cx.send(parent, ClusterMsg::Ready { pulse: p });
        None
    }

    /// The own cluster is safe: tell the cluster below and the clusters next door.
    fn cluster_safe(&mut self, cx: &mut Cx<'_, Self>, last: bool) {
        let p = self.pulses.round;
        self.now.cluster_safe = Some(last);
        self.to_cluster_children(cx, &ClusterMsg::ClusterSafe { pulse: p, last });
        for &port in &self.preferred {
            if self.across[port.index()].needs(p) {
                cx.send(port, ClusterMsg::ClusterSafe { pulse: p, last });
            }
        }
    }
}

impl<R: Rounds, const GAMMA: bool> Process for ClusterNode<R, GAMMA> {
    type Msg = ClusterMsg<R::Msg, GAMMA>;
    type Timer = RoundTimer;
    type Durable = ();

    // Long: one arm per message of the synchronizer (inside a cluster and between clusters), so that its rules
    // read side by side.
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg) {
        // Each branch names its rule first: a pulse this step takes names the algorithm's rule instead.
        let before = self.pulses.round;
        match msg {
            ClusterMsg::Alg { pulse, msg } => {
                cx.rule(ACK);
                cx.send(from, ClusterMsg::Ack);
                if !self.done {
                    self.pulses.file(pulse, from, msg);
                }
            }
            ClusterMsg::Ack => {
                cx.rule(COUNT_ACK);
                self.now.unacked = self.now.unacked.saturating_sub(1);
            }
            ClusterMsg::Safe { last, halted, .. } => {
                cx.rule(CHILD_SAFE);
                self.now.safe_children += 1;
                self.now.quiet &= last;
                self.now.halted &= halted;
            }
            ClusterMsg::ClusterSafe { pulse, last } => {
                if Some(from) == self.parent && !self.head {
                    cx.rule(PASS_CLUSTER_SAFE);
                    self.cluster_safe(cx, last);
                } else if let Some(heard) = self.across.get_mut(from.index()) {
                    cx.rule(NEIGHBOUR_SAFE);
                    heard.safe(pulse, last);
                }
            }
            ClusterMsg::Ready { .. } => {
                cx.rule(CHILD_READY);
                self.now.ready_children += 1;
            }
            ClusterMsg::Pulse { pulse, last } => {
                self.to_cluster_children(cx, &ClusterMsg::Pulse { pulse, last });
                self.open(cx, pulse, last);
            }
            ClusterMsg::Explore { depth } => {
                if self.explored {
                    cx.rule(EXPLORED);
                    self.pending = self.pending.saturating_sub(1);
                    self.answered(cx);
                } else {
                    cx.rule(JOIN_TREE);
                    self.explore(cx, Some(from), depth + 1);
                }
            }
            ClusterMsg::Echo { open } => {
                cx.rule(ECHO);
                self.children.push((from, open));
                self.pending = self.pending.saturating_sub(1);
                self.answered(cx);
            }
            ClusterMsg::Start => {
                self.to_cluster_children(cx, &ClusterMsg::Start);
                self.open(cx, 1, false);
            }
            ClusterMsg::Cluster { head, depth } => {
                cx.rule(JOIN_CLUSTER);
                self.join(cx, head, depth + 1);
            }
            ClusterMsg::Hello { cluster, port } => {
                cx.rule(HELLO);
                if let Some(slot) = self.hello.get_mut(from.index()) {
                    *slot = Some((cluster, port));
                }
                self.links_ready(cx);
            }
            ClusterMsg::Links { best } => {
                cx.rule(LINKS);
                for (cluster, key) in best {
                    let slot = self.best.entry(cluster).or_insert(key);
                    *slot = (*slot).min(key);
                }
                self.links_heard += 1;
                self.links_ready(cx);
            }
            ClusterMsg::Preferred { links } => {
                self.prefer(&links);
                self.to_cluster_children(cx, &ClusterMsg::Preferred { links });
                self.open(cx, 1, false);
            }
        }
        self.advance(cx, before);
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && self.root && !self.explored {
            cx.rule(ROOT_EXPLORE);
            let before = self.pulses.round;
            self.explore(cx, None, 0);
            self.advance(cx, before);
        } else if cmd == Command::Initiate && self.root {
            cx.rule(IGNORE_INITIATE);
        } else if cmd == Command::Initiate {
            cx.rule(NOT_ROOT);
        }
    }

    fn status(&self) -> Status {
        self.pulses.inner.status()
    }

    fn view(&self, peers: &Peers<'_>) -> View {
        self.pulses.view(peers)
    }

    fn describe_timer(_: &RoundTimer) -> String {
        "no timer (a pulse follows the head's pulse message)".to_owned()
    }
}

/// What the set-up of β or γ built.
pub(crate) fn summary<R: Rounds, const GAMMA: bool>(
    root: Option<NodeId>,
    nodes: &[ClusterNode<R, GAMMA>],
) -> SyncSummary {
    let tree_height = nodes.iter().map(|n| n.depth).max();
    let clusters = nodes.iter().filter(|n| n.head).count() as u32;
    if !GAMMA {
        return SyncSummary {
            name: "beta",
            setup_kinds: BETA_SETUP,
            control_kinds: &["safe", "pulse"],
            root,
            tree_height,
            ..SyncSummary::default()
        };
    }
    SyncSummary {
        name: "gamma",
        setup_kinds: GAMMA_SETUP,
        control_kinds: &["safe", "cluster-safe", "ready", "pulse"],
        root,
        tree_height,
        clusters: Some(clusters),
        cluster_height: nodes.iter().map(|n| n.cluster_depth).max(),
        preferred_links: Some(nodes.iter().map(|n| n.preferred.len() as u64).sum::<u64>() / 2),
    }
}
