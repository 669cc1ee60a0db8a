#![doc = include_str!("../../../docs/reference/algorithms/ad-hoc.md")]

use std::collections::BTreeSet;

use elect_core::{
    Check, Command, Cx, Duration, Epoch, InT, Notice, Peers, Port, Process, Property, Rank, Setup, Shape, Span, Status,
    View,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::params::{ParamError, ParamInfo, Params};

const HEARTBEAT: ParamInfo = ParamInfo {
    name: "heartbeat",
    values: "0|K",
    default: "auto",
    help: "the leader floods a heartbeat every K·T (0: never); auto: every 4T on mobile networks, never on fixed ones",
};

/// The index of a diffusing computation: a larger `num` wins, then the stronger origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Src {
    /// The origin's election counter.
    pub num: u64,
    /// The origin.
    pub origin: Rank,
}

/// `(3, 7)`: the computation's `num`, then its origin.
impl std::fmt::Display for Src {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.num, self.origin)
    }
}

/// The messages of the ad hoc election.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Joins the receiver to computation `src`.
    Election {
        /// The computation.
        src: Src,
    },
    /// Answers an election: `Some` from a child with its subtree's strongest process, `None` from a process
    /// already in the computation.
    Ack {
        /// The computation.
        src: Src,
        /// The subtree's strongest process.
        best: Option<Rank>,
    },
    /// The leader of computation `src`, or of a component met on the way.
    Leader {
        /// The computation.
        src: Src,
        /// The leader.
        leader: Rank,
    },
    /// The leader is alive.
    Heartbeat {
        /// The leader.
        leader: Rank,
        /// Its sequence number.
        seq: u64,
    },
}

elect_core::message_kinds!(
    Msg { Election => "election", Ack => "ack", Leader => "leader", Heartbeat => "heartbeat" },
    describe = Msg::text
);

impl Msg {
    /// `election (3, 7)`, `ack (3, 7), best 9`, `leader 9 of (3, 7)`, `heartbeat 4 of leader 9`.
    fn text(&self) -> String {
        match self {
            Self::Election { src } => format!("election {src}"),
            Self::Ack { src, best: Some(best) } => format!("ack {src}, best {best}"),
            Self::Ack { src, best: None } => format!("ack {src}, not a child"),
            Self::Leader { src, leader } => format!("leader {leader} of {src}"),
            Self::Heartbeat { leader, seq } => format!("heartbeat {seq} of leader {leader}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const START: &str = "start an election";
const JOIN: &str = "join the computation, flood election";
const SAME: &str = "same computation, ack as no child";
const LARGER: &str = "leave for a larger computation";
const SMALLER: &str = "ignore a smaller computation";
const CHILD: &str = "ack from a child, keep the best";
const NOT_CHILD: &str = "ack from a non-child";
const STALE_ACK: &str = "ignore an ack of no pending link";
const ACK_PARENT: &str = "subtree done, ack the parent";
const ROOT_DONE: &str = "root done, announce the leader";
const TAKE_LEADER: &str = "take the leader, pass it down";
const BUSY: &str = "ignore it during an election";
const ADOPT: &str = "adopt a stronger leader, flood it";
const TEACH: &str = "answer a weaker leader with ours";
const SAME_LEADER: &str = "same leader, nothing to do";
const ELECT_WEAKER: &str = "told of a weaker leader, elect";
const BEAT: &str = "leader sends a heartbeat";
const RELAY_BEAT: &str = "leader alive, relay the heartbeat";
const OLD_BEAT: &str = "ignore a heartbeat already seen";
const LOST: &str = "no heartbeat, start an election";
const STALL: &str = "election stalled, start again";
const OLD_TIMER: &str = "ignore a timer no longer due";
const LISTEN: &str = "start, wait to hear of a leader";
const UNKNOWN_LINK: &str = "ignore a link not reported yet";
const LINK_UP_ELECTION: &str = "new neighbour, extend the computation";
const LINK_UP: &str = "new neighbour, tell it the leader";
const LINK_DOWN: &str = "neighbour lost, stop waiting for it";
const PARENT_LOST: &str = "parent lost, finish as root";
const LINK_GONE: &str = "neighbour lost, forget it";

/// Every message names processes by their ranks.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let src = |src: &Src| roster.rank(src.origin, "the computation's origin is not a process");
        match self {
            Self::Election { src: s } => src(s),
            Self::Ack { src: s, best } => {
                src(s)?;
                best.map_or(Ok(()), |b| roster.rank(b, "the best candidate is not a process"))
            }
            Self::Leader { src: s, leader } => {
                src(s)?;
                roster.rank(*leader, "the leader is not a process")
            }
            Self::Heartbeat { leader, .. } => roster.rank(*leader, "the leader is not a process"),
        }
    }
}

/// The timers of the ad hoc election.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Timer {
    /// The leader's next heartbeat.
    Beat,
    /// No heartbeat for too long: the leader is lost.
    Lost,
    /// The election has not ended in time.
    Stall,
}

/// The algorithm's configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdHoc {
    /// Heartbeat period in units of `T`: `None` for the default (mobile networks only), `Some(0)` for never.
    pub heartbeat: Option<InT>,
}

/// One process of the ad hoc election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AdHocProcess {
    me: Rank,
    /// Which links work now.
    up: Vec<bool>,
    in_election: bool,
    src: Option<Src>,
    parent: Option<Port>,
    pending: BTreeSet<Port>,
    children: BTreeSet<Port>,
    best: Rank,
    leader: Option<Rank>,
    /// The largest computation number seen.
    num: u64,
    /// Heartbeat period, loss timeout and election timeout (`None`: no heartbeats).
    beat: Option<(Duration, Duration, Duration)>,
    /// The last heartbeat sequence number sent (leader) or relayed (follower), for its leader.
    seq: u64,
}

impl AdHocProcess {
    fn ports(&self) -> impl Iterator<Item = Port> + '_ {
        self.up.iter().enumerate().filter(|&(_, &up)| up).map(|(i, _)| Port(i as u32))
    }

    /// The computation this process last took part in, or its own next one if none: what it tags a `leader`
    /// message with outside an election.
    fn known_src(&self) -> Src {
        self.src.unwrap_or(Src { num: self.num, origin: self.me })
    }

    fn start_election(&mut self, cx: &mut Cx<'_, Self>) {
        self.num += 1;
        self.join(cx, Src { num: self.num, origin: self.me }, None);
    }

    fn join(&mut self, cx: &mut Cx<'_, Self>, src: Src, parent: Option<Port>) {
        self.num = self.num.max(src.num);
        self.in_election = true;
        self.src = Some(src);
        self.parent = parent;
        self.best = self.me;
        self.children.clear();
        self.pending = self.ports().filter(|&p| Some(p) != parent).collect();
        for &p in &self.pending {
            cx.send(p, Msg::Election { src });
        }
        if let Some((_, _, stall)) = self.beat {
            cx.cancel_timer(Timer::Beat);
            cx.set_timer(Timer::Stall, Span::exactly(stall));
        }
        self.maybe_done(cx);
    }

    fn maybe_done(&mut self, cx: &mut Cx<'_, Self>) {
        if !self.in_election || !self.pending.is_empty() {
            return;
        }
        let src = self.src.expect("an election has a computation");
        match self.parent {
            Some(p) => {
                cx.rule(ACK_PARENT);
                cx.send(p, Msg::Ack { src, best: Some(self.best) });
            }
            None => {
                cx.rule(ROOT_DONE);
                let best = self.best;
                self.finish(cx, best);
                for &c in &self.children {
                    cx.send(c, Msg::Leader { src, leader: best });
                }
            }
        }
    }

    /// The election ends here with `leader`.
    fn finish(&mut self, cx: &mut Cx<'_, Self>, leader: Rank) {
        self.in_election = false;
        cx.cancel_timer(Timer::Stall);
        self.adopt(cx, leader);
    }

    /// Follows `leader` from now on.
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, leader: Rank) {
        let changed = self.leader != Some(leader);
        self.leader = Some(leader);
        if changed {
            self.seq = 0;
        }
        if leader == self.me {
            if changed {
                cx.notify(Notice::Elected { epoch: self.src.map_or(Epoch::ZERO, |s| Epoch::from_bits(s.num)) });
            }
            if let Some((period, ..)) = self.beat {
                cx.cancel_timer(Timer::Lost);
                cx.set_timer(Timer::Beat, Span::exactly(period));
            }
        } else if let Some((_, lost, _)) = self.beat {
            cx.cancel_timer(Timer::Beat);
            cx.set_timer(Timer::Lost, Span::exactly(lost));
        }
    }

    fn on_election(&mut self, cx: &mut Cx<'_, Self>, from: Port, s: Src) {
        self.num = self.num.max(s.num);
        match self.src {
            _ if !self.in_election && self.src != Some(s) => {
                cx.rule(JOIN);
                self.join(cx, s, Some(from));
            }
            Some(cur) if s > cur => {
                cx.rule(LARGER);
                self.join(cx, s, Some(from));
            }
            Some(cur) if s == cur => {
                cx.rule(SAME);
                cx.send(from, Msg::Ack { src: s, best: None });
            }
            _ => cx.rule(SMALLER), // A smaller computation: `from` will get this one's flood.
        }
    }

    fn on_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, s: Src, best: Option<Rank>) {
        if !self.in_election || self.src != Some(s) || !self.pending.remove(&from) {
            return cx.rule(STALE_ACK);
        }
        if let Some(b) = best {
            cx.rule(CHILD);
            self.children.insert(from);
            self.best = self.best.max(b);
        } else {
            cx.rule(NOT_CHILD);
        }
        self.maybe_done(cx);
    }

    fn on_leader(&mut self, cx: &mut Cx<'_, Self>, from: Port, s: Src, l: Rank) {
        if self.in_election {
            // Only this computation's announcement, down its tree, ends the election here.
            if self.src == Some(s) && self.parent == Some(from) {
                cx.rule(TAKE_LEADER);
                self.finish(cx, l);
                for &c in &self.children {
                    cx.send(c, Msg::Leader { src: s, leader: l });
                }
            } else {
                cx.rule(BUSY);
            }
            return;
        }
        self.merge(cx, from, l);
    }

    /// The merge rule: adopt a stronger leader and spread it, teach a weaker one.
    fn merge(&mut self, cx: &mut Cx<'_, Self>, from: Port, l: Rank) {
        match self.leader {
            Some(mine) if l < mine => {
                cx.rule(TEACH);
                cx.send(from, Msg::Leader { src: self.known_src(), leader: mine });
            }
            Some(mine) if l == mine => cx.rule(SAME_LEADER),
            // Told of a leader weaker than itself: only an election finds the component's strongest.
            None if l < self.me => {
                cx.rule(ELECT_WEAKER);
                self.start_election(cx);
            }
            _ => {
                cx.rule(ADOPT);
                self.adopt(cx, l);
                let src = self.known_src();
                for p in self.ports().filter(|&p| p != from).collect::<Vec<_>>() {
                    cx.send(p, Msg::Leader { src, leader: l });
                }
            }
        }
    }

    fn on_heartbeat(&mut self, cx: &mut Cx<'_, Self>, from: Port, leader: Rank, seq: u64) {
        if self.in_election {
            return cx.rule(BUSY);
        }
        if self.leader != Some(leader) {
            return self.merge(cx, from, leader);
        }
        if leader == self.me || seq <= self.seq {
            return cx.rule(OLD_BEAT);
        }
        cx.rule(RELAY_BEAT);
        self.seq = seq;
        if let Some((_, lost, _)) = self.beat {
            cx.set_timer(Timer::Lost, Span::exactly(lost));
        }
        for p in self.ports().filter(|&p| p != from).collect::<Vec<_>>() {
            cx.send(p, Msg::Heartbeat { leader, seq });
        }
    }
}

impl Process for AdHocProcess {
    type Msg = Msg;
    type Timer = Timer;
    type Durable = ();

    fn on_start(&mut self, cx: &mut Cx<'_, Self>, _: Option<()>) {
        // A process that hears of no leader in time looks for one.
        if let Some((_, lost, _)) = self.beat {
            cx.rule(LISTEN);
            cx.set_timer(Timer::Lost, Span::exactly(lost));
        }
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        if !self.up[from.index()] {
            return cx.rule(UNKNOWN_LINK); // The link layer has not reported this link yet (or no longer does).
        }
        match msg {
            Msg::Election { src } => self.on_election(cx, from, src),
            Msg::Ack { src, best } => self.on_ack(cx, from, src, best),
            Msg::Leader { src, leader } => self.on_leader(cx, from, src, leader),
            Msg::Heartbeat { leader, seq } => self.on_heartbeat(cx, from, leader, seq),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Timer) {
        match timer {
            Timer::Beat if self.leader == Some(self.me) && !self.in_election => {
                if let Some((period, ..)) = self.beat {
                    cx.rule(BEAT);
                    self.seq += 1;
                    for p in self.ports().collect::<Vec<_>>() {
                        cx.send(p, Msg::Heartbeat { leader: self.me, seq: self.seq });
                    }
                    cx.set_timer(Timer::Beat, Span::exactly(period));
                }
            }
            Timer::Lost if !self.in_election && self.leader != Some(self.me) => {
                cx.rule(LOST);
                self.leader = None;
                self.start_election(cx);
            }
            Timer::Stall if self.in_election => {
                cx.rule(STALL);
                self.start_election(cx);
            }
            _ => cx.rule(OLD_TIMER),
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            cx.rule(START);
            self.start_election(cx);
        }
    }

    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        if self.up[port.index()] == up {
            return;
        }
        self.up[port.index()] = up;
        let src = self.src;
        match (up, self.in_election, src) {
            (true, true, Some(src)) => {
                cx.rule(LINK_UP_ELECTION);
                self.pending.insert(port);
                cx.send(port, Msg::Election { src });
            }
            (true, false, _) => {
                if let Some(leader) = self.leader {
                    cx.rule(LINK_UP);
                    let src = self.known_src();
                    cx.send(port, Msg::Leader { src, leader });
                }
            }
            (false, true, _) => {
                cx.rule(LINK_DOWN);
                self.pending.remove(&port);
                self.children.remove(&port);
                if self.parent == Some(port) {
                    cx.rule(PARENT_LOST);
                    // The orphaned subtree finishes on its own, this process its root: its result meets the
                    // rest of the network through the merge rule.
                    self.parent = None;
                }
                self.maybe_done(cx);
            }
            _ => {
                cx.rule(LINK_GONE);
                self.children.remove(&port);
            }
        }
    }

    /// `waiting for a leader`, `in an election: computation (3, 7), parent 5, awaiting 2, 4, best 9`, `leader`,
    /// `follower: leader 9`.
    fn view(&self, peers: &Peers<'_>) -> View {
        if self.in_election {
            let src = self.src.expect("an election has a computation");
            return View::new("in an election")
                .with("computation", src)
                .with_some("parent", self.parent.map(|p| peers.list([p])))
                .with_some("awaiting", (!self.pending.is_empty()).then(|| peers.list(self.pending.iter().copied())))
                .with("best", self.best);
        }
        match self.leader {
            None => View::new("waiting for a leader"),
            Some(leader) if leader == self.me => View::new("leader"),
            Some(leader) => View::new("follower").with("leader", leader),
        }
    }

    fn describe_timer(timer: &Timer) -> String {
        match timer {
            Timer::Beat => "next heartbeat",
            Timer::Lost => "waiting for a heartbeat",
            Timer::Stall => "election deadline",
        }
        .to_owned()
    }

    fn status(&self) -> Status {
        let leader = self.leader.map(Rank::id);
        if self.in_election {
            Status { leader, ..Status::election(Epoch::ZERO) }
        } else {
            Status::normal(leader, Epoch::ZERO)
        }
    }

    fn parent(&self) -> Option<Port> {
        self.parent
    }
}

static INFO: Info = Info {
    name: "ad-hoc",
    aliases: &["vkt", "mobile"],
    title: "Vasudevan-Kurose-Towsley mobile ad hoc election",
    model: "any network whose links come and go; FIFO links while they last; a leader per connected component",
    seed: "S000 (Vasudevan, Kurose, Towsley, ICNP 2004)",
    needs: Needs::Connected,
    timing: Timing::Synchronous,
    links: LinkOrder::Any,
    elects: Elects::PerComponent,
    lockstep: false,
    params: &[HEARTBEAT],
    rules: &[
        LISTEN,
        START,
        JOIN,
        SAME,
        LARGER,
        SMALLER,
        CHILD,
        NOT_CHILD,
        STALE_ACK,
        ACK_PARENT,
        ROOT_DONE,
        TAKE_LEADER,
        BUSY,
        ADOPT,
        TEACH,
        SAME_LEADER,
        ELECT_WEAKER,
        BEAT,
        RELAY_BEAT,
        OLD_BEAT,
        LOST,
        STALL,
        OLD_TIMER,
        UNKNOWN_LINK,
        LINK_UP_ELECTION,
        LINK_UP,
        LINK_DOWN,
        PARENT_LOST,
        LINK_GONE,
    ],
    showcase: Showcase {
        initiators: Initiators::OneRandom,
        crash_strongest: false,
        describe: "random ids on a random 4-regular graph, one initiator",
    },
};

impl Algorithm for AdHoc {
    type Process = AdHocProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        let heartbeat = match params.get(HEARTBEAT.name) {
            None | Some("auto") => None,
            Some(k) => Some(
                k.parse::<u64>()
                    .map_err(|_| "expected auto or a whole number of delay bounds T".to_owned())
                    .and_then(|k| crate::params::check_multiple(k).map_err(|e| e.to_string()))
                    .map_err(|reason| ParamError::Invalid { key: HEARTBEAT.name, value: k.to_owned(), reason })?,
            ),
        };
        Ok(Self { heartbeat })
    }

    fn build(&self, setup: &Setup<'_>) -> AdHocProcess {
        let mobile = setup.shape == Shape::Mobile;
        let t = setup.delay_bound.unwrap_or(Duration::from_ticks(1));
        let period = self.heartbeat.unwrap_or(InT(if mobile { 4 } else { 0 }));
        let hops = setup.diameter.map_or(setup.neighbors.len() as u64 + 1, u64::from);
        let hops = hops.max(1);
        let beat =
            (period > InT::ZERO).then(|| (t * period, t * (period * 2 + 2 * hops), t * (period * 2 + 5 * hops + 2)));
        AdHocProcess {
            me: setup.rank,
            up: vec![!mobile; setup.neighbors.len()],
            in_election: false,
            src: None,
            parent: None,
            pending: BTreeSet::new(),
            children: BTreeSet::new(),
            best: setup.rank,
            leader: None,
            num: 0,
            beat,
            seq: 0,
        }
    }

    fn checks(&self) -> Vec<Check> {
        vec![Check::at_end(Property::Validity), Check::at_end(Property::ComponentLeader)]
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        let ecc = facts.initiator_eccentricity.or(facts.diameter).unwrap_or(facts.nodes);
        t * (3 * ecc + 2)
    }

    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        let period = self.heartbeat.unwrap_or(InT(4));
        let hops = facts.diameter.unwrap_or(facts.nodes);
        // A lost leader is noticed within 2H + 2DT; the election that follows takes at most 3D + 2 hops, the
        // merge floods another D.
        (period > InT::ZERO).then(|| t * (period * 2 + 2 * hops + 4 * hops + 2 + period))
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        if f.initiators != 1 {
            return Vec::new();
        }
        let (n, m) = (f.nodes, f.edges);
        vec![Bound {
            name: "one initiator: 4m - n + 1 election + ack + leader".into(),
            measure: Measure::Kinds(&["election", "ack", "leader"]),
            // Saturating: a graph of one process (or one with fewer links than a tree) has no count to subtract from.
            value: (4 * m + 1).saturating_sub(n),
        }]
    }
}

impl AdHocProcess {
    /// The current computation's tree: the parent port, if any (for checks and pictures).
    pub fn parent(&self) -> Option<Port> {
        self.parent
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Event, Instant, Message, Neighbor, NodeId, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let neighbors = [
            Neighbor { port: Port(0), id: NodeId(7), rank: rank(7) },
            Neighbor { port: Port(1), id: NodeId(3), rank: rank(3) },
        ];
        let setup = Setup {
            id: NodeId(5),
            rank: rank(5),
            neighbors: &neighbors,
            ring: None,
            ring_order: &[],
            shape: Shape::Other,
            delay_bound: Some(Duration::from_ticks(10)),
            diameter: Some(2),
            suspected: &[],
        };
        let peers = Peers(&neighbors);
        let mut effects = Vec::new();
        let mut step = |p: &mut AdHocProcess, event| {
            effects.clear();
            driver::handle(p, Instant::ZERO, event, &mut effects)
        };
        let msg = |port, msg| Event::Message { from: Port(port), msg };
        let mut p = AdHoc::default().build(&setup);
        assert_eq!(p.view(&peers).to_string(), "waiting for a leader");
        assert_eq!(step(&mut p, Event::Command(Command::Initiate)), Some("start an election"));
        assert_eq!(p.view(&peers).to_string(), "in an election: computation (1, 5), awaiting 7, 3, best 5");
        let src = Src { num: 1, origin: rank(5) };
        assert_eq!(Msg::Election { src }.describe(), "election (1, 5)");
        assert_eq!(
            step(&mut p, msg(1, Msg::Ack { src, best: Some(rank(3)) })),
            Some("ack from a child, keep the best")
        );
        assert_eq!(p.view(&peers).to_string(), "in an election: computation (1, 5), awaiting 7, best 5");
        assert_eq!(step(&mut p, msg(0, Msg::Ack { src, best: None })), Some("root done, announce the leader"));
        assert_eq!(p.view(&peers).to_string(), "leader");
        assert_eq!(step(&mut p, msg(0, Msg::Ack { src, best: None })), Some("ignore an ack of no pending link"));
        assert_eq!(step(&mut p, msg(0, Msg::Election { src })), Some("same computation, ack as no child"));
        let other = Src { num: 1, origin: rank(7) };
        assert_eq!(
            step(&mut p, msg(0, Msg::Leader { src: other, leader: rank(9) })),
            Some("adopt a stronger leader, flood it")
        );
        assert_eq!(p.view(&peers).to_string(), "follower: leader 9");
        assert_eq!(Msg::Ack { src, best: Some(rank(9)) }.describe(), "ack (1, 5), best 9");
        assert_eq!(Msg::Ack { src, best: None }.describe(), "ack (1, 5), not a child");
        assert_eq!(Msg::Leader { src: other, leader: rank(9) }.describe(), "leader 9 of (1, 7)");
        assert_eq!(Msg::Heartbeat { leader: rank(9), seq: 4 }.describe(), "heartbeat 4 of leader 9");

        // A process reached by a computation joins it under the sender.
        let mut q = AdHoc::default().build(&setup);
        let joined = step(&mut q, msg(0, Msg::Election { src: Src { num: 2, origin: rank(7) } }));
        assert_eq!(joined, Some("join the computation, flood election"));
        assert_eq!(q.view(&peers).to_string(), "in an election: computation (2, 7), parent 7, awaiting 3, best 5");
        assert_eq!(step(&mut q, msg(1, Msg::Election { src })), Some("ignore a smaller computation"));
        assert_eq!(AdHocProcess::describe_timer(&Timer::Beat), "next heartbeat");
    }
}
