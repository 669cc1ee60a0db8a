#![doc = include_str!("../../../docs/reference/algorithms/timestamp-flooding.md")]

use elect_core::{
    Check, Command, Cx, Duration, Epoch, Instant, NodeId, Notice, Peers, Port, Process, Setup, Status, View, When,
    Winner,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::election_checks;
use crate::params::{ParamError, Params};

/// The algorithm's configuration (it has no parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimestampFlooding;

/// A campaign: when its initiator started it, then the initiator's id. The smallest key wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key {
    /// The initiator's virtual time when it initiated.
    pub time: Instant,
    /// The initiator.
    pub initiator: NodeId,
}

/// `(0, 12)`: the timestamp in ticks, then the initiator.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.time.ticks(), self.initiator)
    }
}

/// Timestamped-flooding messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// Campaign-For-Leader: the sender's best campaign.
    Cfl {
        /// The campaign.
        key: Key,
    },
    /// "You are my parent in this campaign."
    AckParent {
        /// The campaign.
        key: Key,
    },
    /// "Same campaign, but I am not your child."
    AckSibling {
        /// The campaign.
        key: Key,
    },
    /// The sender's subtree is done.
    Vote,
    /// The winner, announced down the tree.
    Leader {
        /// The winner.
        id: NodeId,
    },
}

elect_core::message_kinds!(Msg {
    Cfl => "cfl",
    AckParent => "ack-parent",
    AckSibling => "ack-sibling",
    Vote => "vote",
    Leader => "leader",
}, describe = Msg::text);

impl Msg {
    /// `cfl (0, 12)`, `ack-parent (0, 12)`, `vote`, `leader 12`.
    fn text(&self) -> String {
        match self {
            Self::Cfl { key } => format!("cfl {key}"),
            Self::AckParent { key } => format!("ack-parent {key}"),
            Self::AckSibling { key } => format!("ack-sibling {key}"),
            Self::Vote => "vote".to_owned(),
            Self::Leader { id } => format!("leader {id}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const INITIATE: &str = "initiate, flood own campaign";
const REACHED: &str = "already reached, do not initiate";
const VISIT: &str = "first campaign, join it and flood";
const SAME_SIBLING: &str = "same key, answer as a sibling";
const SAME_PARENT: &str = "same key from the parent, ignore";
const WORSE: &str = "worse key, answer with ours";
const CHILD: &str = "ack-parent, a child";
const SIBLING: &str = "ack-sibling, a sibling";
const STALE: &str = "ignore a stale acknowledgement";
const PARENT_BETTER: &str = "better key from the parent, pass it on";
const REPARENT: &str = "better key, re-parent towards it";
const VOTED_SIBLING: &str = "voted already, answer as a sibling";
const COUNT_VOTE: &str = "count a child's vote";
const VOTE: &str = "subtree done, vote to the parent";
const ELECTED: &str = "every child voted, elected";
const LEARN: &str = "learn the leader, pass it down";
const AGAIN: &str = "ignore a repeated announcement";
const GONE: &str = "ignore a neighbour that is gone";
const LINK_DOWN: &str = "neighbour gone, stop waiting for it";
const LINK_UP: &str = "ignore a link coming back";

/// Every message names processes that exist.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match self {
            Self::Cfl { key } | Self::AckParent { key } | Self::AckSibling { key } => {
                roster.member(key.initiator, "the initiator is not a process")
            }
            Self::Leader { id } => roster.member(*id, "the leader is not a process"),
            Self::Vote => Ok(()),
        }
    }
}

/// What a process knows about one of its links, as bits.
mod link {
    /// The neighbour is a child (`CR`).
    pub(super) const CHILD: u8 = 1;
    /// The neighbour is a sibling (`SB`).
    pub(super) const SIBLING: u8 = 1 << 1;
    /// The neighbour's relation is unknown (`UNK`).
    pub(super) const UNKNOWN: u8 = 1 << 2;
    /// The neighbour has voted (`REPLIED`).
    pub(super) const REPLIED: u8 = 1 << 3;
    /// The neighbour has been sent `cfl{cur}` (`sent`).
    pub(super) const SENT: u8 = 1 << 4;
    /// The link layer reported the neighbour gone: it has left `NEIB`.
    pub(super) const GONE: u8 = 1 << 5;

    /// Whether a link with these bits keeps its process from voting.
    pub(super) fn blocks(bits: u8) -> bool {
        bits & UNKNOWN != 0 || bits & (CHILD | REPLIED) == CHILD
    }
}

/// One process of timestamped flooding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimestampFloodingProcess {
    me: NodeId,
    /// Per port, the [`link`] bits.
    links: Box<[u8]>,
    /// Links in `UNK` or in `CR − REPLIED`: the process may vote when there are none.
    blocking: u32,
    /// `cur`; `None` until the process is visited.
    cur: Option<Key>,
    parent: Option<Port>,
    voted: bool,
    leader: Option<NodeId>,
}

impl TimestampFloodingProcess {
    /// The best campaign this process has seen, once it has been reached by one.
    pub fn key(&self) -> Option<Key> {
        self.cur
    }

    /// The link to its parent in the spanning tree; `None` at a campaign's root (and before it is reached).
    pub fn parent(&self) -> Option<Port> {
        self.parent
    }

    /// Its children, as it last knew them (`CR`).
    pub fn children(&self) -> impl Iterator<Item = Port> + '_ {
        self.ports_with(|bits| bits & link::CHILD != 0)
    }

    /// Whether it has voted (the root "votes" by declaring itself).
    pub fn voted(&self) -> bool {
        self.voted
    }

    /// The leader it knows.
    pub fn leader(&self) -> Option<NodeId> {
        self.leader
    }

    fn ports_with(&self, pick: impl Fn(u8) -> bool + 'static) -> impl Iterator<Item = Port> + '_ {
        self.links.iter().enumerate().filter(move |&(_, &bits)| pick(bits)).map(|(p, _)| Port(p as u32))
    }

    /// Sets the bits `set` and clears the bits `clear` of link `port`.
    fn mark(&mut self, port: Port, set: u8, clear: u8) {
        let bits = &mut self.links[port.index()];
        let before = *bits;
        *bits = (before & !clear) | set;
        self.blocking = self.blocking - u32::from(link::blocks(before)) + u32::from(link::blocks(*bits));
    }

    /// `send_cfl(j)` [E5]: sends `cfl{cur}` over `port` unless it already went there (or the neighbour is gone).
    fn send_cfl(&mut self, cx: &mut Cx<'_, Self>, port: Port) {
        if self.links[port.index()] & (link::SENT | link::GONE) == 0 {
            self.links[port.index()] |= link::SENT;
            let key = self.cur.expect("only a visited process campaigns");
            cx.send(port, Msg::Cfl { key });
        }
    }

    /// Whether an acknowledgement of `key` from `port` is stale (E8): it answers an older campaign, and the port
    /// has been sent the current one (or brought it), so a fresh answer is on its way.
    fn is_stale(&self, port: Port, key: Key) -> bool {
        self.cur != Some(key) && self.links[port.index()] & link::SENT != 0
    }

    /// `sent := {from}` (or `∅` for an initiator): `cur` just changed.
    fn reset_sent(&mut self, from: Option<Port>) {
        for bits in self.links.iter_mut() {
            *bits &= !link::SENT;
        }
        if let Some(from) = from {
            self.links[from.index()] |= link::SENT;
        }
    }

    /// `send_cfl` to every link picked by `pick`.
    fn spread(&mut self, cx: &mut Cx<'_, Self>, pick: impl Fn(u8) -> bool) {
        for p in 0..self.links.len() {
            if pick(self.links[p]) {
                self.send_cfl(cx, Port(p as u32));
            }
        }
    }

    /// `send_cfl to CR − REPLIED`.
    fn spread_to_children(&mut self, cx: &mut Cx<'_, Self>) {
        self.spread(cx, |bits| bits & (link::CHILD | link::REPLIED) == link::CHILD);
    }

    /// Adopts `key` from `from` as the new best campaign, with `from` as parent (a1, E6, a13).
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, from: Port, key: Key) {
        self.cur = Some(key);
        self.parent = Some(from);
        self.reset_sent(Some(from));
        cx.send(from, Msg::AckParent { key });
    }

    fn on_cfl(&mut self, cx: &mut Cx<'_, Self>, from: Port, c: Key) {
        let Some(cur) = self.cur else {
            // a1: first visit.
            cx.rule(VISIT);
            self.adopt(cx, from, c);
            self.mark(from, 0, link::UNKNOWN);
            self.spread(cx, |_| true);
            return;
        };
        if c < cur && self.parent == Some(from) {
            // E6: the parent brings a better campaign; only the key changes.
            cx.rule(PARENT_BETTER);
            self.adopt(cx, from, c);
            self.spread_to_children(cx);
        } else if c < cur && self.voted {
            // E7: this subtree has reported already.
            cx.rule(VOTED_SIBLING);
            cx.send(from, Msg::AckSibling { key: c });
            self.mark(from, link::SIBLING, link::UNKNOWN | link::CHILD);
        } else if c < cur {
            // a13 with E1 and E2: re-parent towards the better campaign; the old parent becomes a child.
            cx.rule(REPARENT);
            let old = self.parent;
            self.adopt(cx, from, c);
            self.mark(from, 0, link::CHILD | link::SIBLING | link::UNKNOWN);
            if let Some(old) = old {
                self.mark(old, link::CHILD, 0);
            }
            self.spread_to_children(cx);
        } else if c == cur {
            // a21 with E2, E3 and E5.
            if self.parent != Some(from) {
                cx.rule(SAME_SIBLING);
                cx.send(from, Msg::AckSibling { key: c });
                self.mark(from, link::SIBLING, link::UNKNOWN | link::CHILD);
            } else {
                cx.rule(SAME_PARENT);
            }
        } else {
            // a27 with E5: answer a worse campaign with ours; the sender will become a child.
            cx.rule(WORSE);
            self.send_cfl(cx, from);
            self.mark(from, link::CHILD, link::UNKNOWN | link::SIBLING);
        }
    }

    /// E4: the vote test, after every event.
    fn try_vote(&mut self, cx: &mut Cx<'_, Self>) {
        if self.cur.is_none() || self.voted || self.blocking > 0 {
            return;
        }
        self.voted = true;
        match self.parent {
            Some(parent) => {
                cx.rule(VOTE);
                cx.send(parent, Msg::Vote);
            }
            None => {
                cx.rule(ELECTED);
                self.leader = Some(self.me);
                cx.notify(Notice::Elected { epoch: Epoch::ZERO });
                self.announce(cx, self.me);
            }
        }
    }

    /// Sends `leader{id}` to every child.
    fn announce(&self, cx: &mut Cx<'_, Self>, id: NodeId) {
        for port in self.children() {
            cx.send(port, Msg::Leader { id });
        }
    }
}

impl Process for TimestampFloodingProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        if self.links[from.index()] & link::GONE != 0 {
            return cx.rule(GONE);
        }
        match msg {
            Msg::Cfl { key } => self.on_cfl(cx, from, key),
            // E8: the answer to an older campaign, when the current one has gone to the same neighbour too.
            Msg::AckParent { key } | Msg::AckSibling { key } if self.is_stale(from, key) => cx.rule(STALE),
            Msg::AckParent { .. } => {
                cx.rule(CHILD);
                self.mark(from, link::CHILD, link::UNKNOWN | link::SIBLING);
            }
            Msg::AckSibling { .. } => {
                cx.rule(SIBLING);
                self.mark(from, link::SIBLING, link::UNKNOWN | link::CHILD);
            }
            Msg::Vote => {
                cx.rule(COUNT_VOTE);
                self.mark(from, link::REPLIED, 0);
            }
            // Passed on once: off its FIFO model, reordered acks can leave the children links in a cycle.
            Msg::Leader { id } if self.leader == Some(id) => cx.rule(AGAIN),
            Msg::Leader { id } => {
                cx.rule(LEARN);
                self.leader = Some(id);
                self.announce(cx, id);
            }
        }
        self.try_vote(cx);
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        // E0: a process already reached by a campaign does not start its own.
        if cmd == Command::Initiate && self.cur.is_some() {
            cx.rule(REACHED);
        } else if cmd == Command::Initiate {
            cx.rule(INITIATE);
            self.cur = Some(Key { time: cx.now(), initiator: self.me });
            self.parent = None;
            self.reset_sent(None);
            self.spread(cx, |_| true);
            self.try_vote(cx);
        }
    }

    /// A neighbour the link layer reports gone (the crashed old leader) leaves `NEIB` for the rest of the run:
    /// nobody waits for its answer or its vote, and no campaign is sent to it. A link coming back is ignored.
    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        if !up {
            cx.rule(LINK_DOWN);
            self.mark(port, link::GONE, link::UNKNOWN | link::CHILD | link::SIBLING);
            self.try_vote(cx);
        } else {
            cx.rule(LINK_UP);
        }
    }

    /// `not reached`, `campaigning: timestamp 0, candidate 12, parent 7, waiting for 3, 9`, `voted: ...`, then
    /// `leader` or `follower: leader 12`.
    fn view(&self, peers: &Peers<'_>) -> View {
        let Some(cur) = self.cur else { return View::new("not reached") };
        match self.leader {
            Some(leader) if leader == self.me => return View::new("leader"),
            Some(leader) => return View::new("follower").with("leader", leader),
            None => {}
        }
        let blocking: Vec<Port> = self.ports_with(link::blocks).collect();
        let waiting = (!blocking.is_empty()).then(|| peers.list(blocking));
        View::new(if self.voted { "voted" } else { "campaigning" })
            .with("timestamp", cur.time.ticks())
            .with("candidate", cur.initiator)
            .with_some("parent", self.parent.map(|p| peers.list([p])))
            .with_some("waiting for", waiting)
    }

    fn describe_timer((): &()) -> String {
        "no timer (it only waits for messages)".to_owned()
    }

    fn status(&self) -> Status {
        match (self.leader, self.cur) {
            (Some(leader), _) => Status::normal(Some(leader), Epoch::ZERO),
            (None, None) => Status::normal(None, Epoch::ZERO),
            (None, Some(_)) => Status::election(Epoch::ZERO),
        }
    }

    fn parent(&self) -> Option<Port> {
        self.parent
    }
}

static INFO: Info = Info {
    name: "timestamp-flooding",
    aliases: &["clnw"],
    title: "Chow-Luo-Newman-Wolfe timestamped flooding",
    model: "any connected graph (bounded degree), asynchronous reliable FIFO links, the earliest initiator wins",
    seed: "S002",
    needs: Needs::Connected,
    timing: Timing::Asynchronous,
    links: LinkOrder::Fifo,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[
        INITIATE,
        REACHED,
        VISIT,
        SAME_SIBLING,
        SAME_PARENT,
        WORSE,
        CHILD,
        SIBLING,
        STALE,
        PARENT_BETTER,
        REPARENT,
        VOTED_SIBLING,
        COUNT_VOTE,
        VOTE,
        ELECTED,
        LEARN,
        AGAIN,
        GONE,
        LINK_DOWN,
        LINK_UP,
    ],
    showcase: Showcase {
        initiators: Initiators::NeighborsOfCrashed,
        crash_strongest: true,
        describe: "the old leader crashed; its neighbours notice and initiate",
    },
};

impl Algorithm for TimestampFlooding {
    type Process = TimestampFloodingProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> TimestampFloodingProcess {
        let degree = setup.neighbors.len();
        TimestampFloodingProcess {
            me: setup.id,
            links: vec![link::UNKNOWN; degree].into_boxed_slice(),
            blocking: degree as u32,
            cur: None,
            parent: None,
            voted: false,
            leader: None,
        }
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn winner(&self) -> Winner {
        Winner::EarliestInitiator
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // Every message takes at most t: the flood reaches everybody within (n − 1)·t (the diameter of the live
        // processes, which may exceed D once the old leader is gone), the answers come back within 2t more, and
        // votes climb and the announcement descends a tree of depth at most n − 1. Each losing campaign the
        // winner has to conquer can add as much again.
        let hops = facts.nodes.saturating_sub(1);
        t * ((3 * hops + 2) * facts.initiators.max(1))
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        let (n, m, k) = (f.nodes, f.edges, f.initiators);
        let tree = n.saturating_sub(1);
        let paper = Bound {
            name: "S002: cfl+vote+leader <= 2m+k(n-1)+2(n-1) (first-visit and re-parenting cfl only)".into(),
            measure: Measure::Kinds(&["cfl", "vote", "leader"]),
            value: 2 * m + k * tree + 2 * tree,
        };
        if k == 1 {
            vec![
                Bound { name: "k=1: exactly 4m messages".into(), measure: Measure::Messages, value: 4 * m },
                Bound {
                    name: "k=1: exactly 2m-(n-1) cfl".into(),
                    measure: Measure::Kinds(&["cfl"]),
                    value: (2 * m).saturating_sub(tree),
                },
                paper,
            ]
        } else {
            vec![
                Bound {
                    name: "cfl <= 4m+k(n-1) (empirical, bounded degree)".into(),
                    measure: Measure::Kinds(&["cfl"]),
                    value: 4 * m + k * tree,
                },
                Bound {
                    name: "cfl <= 2km (each campaign at most once per link and direction)".into(),
                    measure: Measure::Kinds(&["cfl"]),
                    value: 2 * k * m,
                },
                paper,
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Effect, EffectOf, Event, Message, Neighbor, Ranking, Shape, driver};

    use super::*;

    /// A process with id `me` and neighbours of ids `nbrs`, one per port.
    fn node(me: u32, nbrs: &[u32]) -> TimestampFloodingProcess {
        let ranking = Ranking::default();
        let neighbors: Vec<Neighbor> = nbrs
            .iter()
            .enumerate()
            .map(|(p, &id)| Neighbor { port: Port(p as u32), id: NodeId(id), rank: ranking.rank(NodeId(id)) })
            .collect();
        TimestampFlooding.build(&Setup {
            id: NodeId(me),
            rank: ranking.rank(NodeId(me)),
            neighbors: &neighbors,
            ring: None,
            ring_order: &[],
            shape: Shape::Other,
            delay_bound: None,
            diameter: None,
            suspected: &[],
        })
    }

    fn key(time: u64, initiator: u32) -> Key {
        Key { time: Instant::from_ticks(time), initiator: NodeId(initiator) }
    }

    fn deliver(node: &mut TimestampFloodingProcess, from: u32, msg: Msg) -> Vec<EffectOf<TimestampFloodingProcess>> {
        let mut effects = Vec::new();
        node.on_message(&mut Cx::new(Instant::from_ticks(5), &mut effects), Port(from), msg);
        effects
    }

    fn initiate(node: &mut TimestampFloodingProcess, at: u64) -> Vec<EffectOf<TimestampFloodingProcess>> {
        let mut effects = Vec::new();
        node.on_command(&mut Cx::new(Instant::from_ticks(at), &mut effects), Command::Initiate);
        effects
    }

    fn sends(effects: &[EffectOf<TimestampFloodingProcess>]) -> Vec<(u32, Msg)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, msg } => Some((to.0, msg.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn keys_order_by_time_then_by_the_smaller_initiator_id() {
        assert!(key(0, 9) < key(1, 1));
        assert!(key(3, 2) < key(3, 7));
        assert_eq!(Msg::Vote.kind(), "vote");
        assert_eq!(&*Msg::kinds(), ["cfl", "ack-parent", "ack-sibling", "vote", "leader"]);
    }

    #[test]
    fn an_initiator_stamps_its_campaign_with_the_time_and_floods_it() {
        let mut p = node(4, &[1, 2, 3]);
        let out = sends(&initiate(&mut p, 7));
        let k = key(7, 4);
        assert_eq!(out, [(0, Msg::Cfl { key: k }), (1, Msg::Cfl { key: k }), (2, Msg::Cfl { key: k })]);
        assert_eq!((p.key(), p.parent(), p.status()), (Some(k), None, Status::election(Epoch::ZERO)));
    }

    #[test]
    fn a_lone_initiator_elects_itself_at_once() {
        let mut p = node(1, &[]);
        let effects = initiate(&mut p, 0);
        assert_eq!(effects, [Effect::Notify(Notice::Elected { epoch: Epoch::ZERO })]);
        assert_eq!(p.status(), Status::normal(Some(NodeId(1)), Epoch::ZERO));
    }

    #[test]
    fn a_process_reached_by_a_campaign_does_not_start_its_own() {
        let mut p = node(2, &[1, 3]);
        deliver(&mut p, 0, Msg::Cfl { key: key(0, 1) });
        assert!(initiate(&mut p, 0).is_empty(), "E0");
        assert_eq!(p.key(), Some(key(0, 1)));
    }

    #[test]
    fn a_leaf_acknowledges_and_votes_on_its_first_campaign() {
        let mut p = node(5, &[1]);
        let out = sends(&deliver(&mut p, 0, Msg::Cfl { key: key(0, 1) }));
        assert_eq!(out, [(0, Msg::AckParent { key: key(0, 1) }), (0, Msg::Vote)], "E4: degree-1 leaf");
        assert!(p.voted());
    }

    #[test]
    fn a_better_campaign_reverses_the_tree_and_never_goes_back_where_it_came_from() {
        // 3 initiated and 7 became its child; then 1's campaign arrives from port 1: 3 follows it and passes it on
        // to its child.
        let mut p = node(3, &[7, 8, 9]);
        initiate(&mut p, 0);
        deliver(&mut p, 0, Msg::AckParent { key: key(0, 3) });
        let out = sends(&deliver(&mut p, 1, Msg::Cfl { key: key(0, 1) }));
        assert_eq!(out, [(1, Msg::AckParent { key: key(0, 1) }), (0, Msg::Cfl { key: key(0, 1) })]);
        assert_eq!(p.parent(), Some(Port(1)));
        // A worse campaign from port 2 is answered with the better one, once (E5).
        let out = sends(&deliver(&mut p, 2, Msg::Cfl { key: key(0, 3) }));
        assert_eq!(out, [(2, Msg::Cfl { key: key(0, 1) })]);
        assert!(sends(&deliver(&mut p, 2, Msg::Cfl { key: key(0, 3) })).is_empty());
        assert_eq!(p.children().collect::<Vec<_>>(), [Port(0), Port(2)]);
    }

    #[test]
    fn a_process_that_voted_answers_a_better_campaign_as_a_sibling() {
        let mut p = node(6, &[1, 2]);
        deliver(&mut p, 0, Msg::Cfl { key: key(0, 2) });
        let out = sends(&deliver(&mut p, 1, Msg::Cfl { key: key(0, 2) }));
        assert_eq!(out, [(1, Msg::AckSibling { key: key(0, 2) }), (0, Msg::Vote)]);
        let out = sends(&deliver(&mut p, 1, Msg::Cfl { key: key(0, 1) }));
        assert_eq!(out, [(1, Msg::AckSibling { key: key(0, 1) })], "E7");
        assert_eq!(p.parent(), Some(Port(0)));
        // The announcement goes to the children only (there are none) and ends the election here.
        assert!(sends(&deliver(&mut p, 0, Msg::Leader { id: NodeId(1) })).is_empty());
        assert_eq!(p.status(), Status::normal(Some(NodeId(1)), Epoch::ZERO));
    }

    #[test]
    fn a_late_acknowledgement_of_an_older_campaign_does_not_settle_a_neighbour_asked_again() {
        // 3 initiated and counts 5 as a child (5 sent a worse campaign); 2's campaign, then 1's, re-parent 3, and
        // each goes on to 5. 5's answer to 2's campaign arrives after 1's was sent: E8 ignores it.
        let mut p = node(3, &[5, 2, 1]);
        initiate(&mut p, 0);
        deliver(&mut p, 0, Msg::Cfl { key: key(0, 5) });
        assert_eq!(sends(&deliver(&mut p, 1, Msg::Cfl { key: key(0, 2) }))[1], (0, Msg::Cfl { key: key(0, 2) }));
        assert_eq!(sends(&deliver(&mut p, 2, Msg::Cfl { key: key(0, 1) }))[1], (0, Msg::Cfl { key: key(0, 1) }));
        deliver(&mut p, 1, Msg::AckParent { key: key(0, 1) });
        assert!(sends(&deliver(&mut p, 0, Msg::AckSibling { key: key(0, 2) })).is_empty(), "no vote yet");
        assert_eq!(p.children().collect::<Vec<_>>(), [Port(0), Port(1)], "5 is still awaited");
        deliver(&mut p, 0, Msg::AckParent { key: key(0, 1) });
        deliver(&mut p, 0, Msg::Vote);
        assert_eq!(sends(&deliver(&mut p, 1, Msg::Vote)), [(2, Msg::Vote)]);
    }

    #[test]
    fn a_neighbour_reported_gone_is_neither_asked_nor_awaited() {
        let mut p = node(2, &[9, 1]);
        let mut effects = Vec::new();
        p.on_link(&mut Cx::new(Instant::ZERO, &mut effects), Port(0), false);
        assert!(effects.is_empty());
        assert_eq!(sends(&initiate(&mut p, 0)), [(1, Msg::Cfl { key: key(0, 2) })]);
        deliver(&mut p, 1, Msg::AckParent { key: key(0, 2) });
        let effects = deliver(&mut p, 1, Msg::Vote);
        assert_eq!(effects[0], Effect::Notify(Notice::Elected { epoch: Epoch::ZERO }));
        assert_eq!(sends(&effects), [(1, Msg::Leader { id: NodeId(2) })]);
        assert!(deliver(&mut p, 0, Msg::Cfl { key: key(0, 1) }).is_empty(), "nothing comes from a gone neighbour");
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let peers = |nbrs: &[u32]| -> Vec<Neighbor> {
            let ranking = Ranking::default();
            let id = |p: usize| NodeId(nbrs[p]);
            (0..nbrs.len()).map(|p| Neighbor { port: Port(p as u32), id: id(p), rank: ranking.rank(id(p)) }).collect()
        };
        let mut effects = Vec::new();
        let mut step = |p: &mut TimestampFloodingProcess, at: u64, event| {
            effects.clear();
            driver::handle(p, Instant::from_ticks(at), event, &mut effects)
        };
        let msg = |port, msg| Event::Message { from: Port(port), msg };
        let (mut p, near) = (node(4, &[1, 2, 3]), peers(&[1, 2, 3]));
        let view = |p: &TimestampFloodingProcess| p.view(&Peers(&near)).to_string();
        assert_eq!(view(&p), "not reached");
        assert_eq!(step(&mut p, 7, Event::Command(Command::Initiate)), Some("initiate, flood own campaign"));
        assert_eq!(view(&p), "campaigning: timestamp 7, candidate 4, waiting for 1, 2, 3");
        assert_eq!(Msg::Cfl { key: key(7, 4) }.describe(), "cfl (7, 4)");
        assert_eq!(step(&mut p, 8, msg(0, Msg::AckParent { key: key(7, 4) })), Some("ack-parent, a child"));
        assert_eq!(step(&mut p, 8, msg(1, Msg::AckSibling { key: key(7, 4) })), Some("ack-sibling, a sibling"));
        assert_eq!(view(&p), "campaigning: timestamp 7, candidate 4, waiting for 1, 3");
        assert_eq!(step(&mut p, 9, msg(2, Msg::Cfl { key: key(9, 3) })), Some("worse key, answer with ours"));
        assert_eq!(step(&mut p, 9, msg(0, Msg::Vote)), Some("count a child's vote"));
        assert_eq!(view(&p), "campaigning: timestamp 7, candidate 4, waiting for 3");
        step(&mut p, 10, msg(2, Msg::AckParent { key: key(7, 4) }));
        assert_eq!(step(&mut p, 11, msg(2, Msg::Vote)), Some("every child voted, elected"));
        assert_eq!(view(&p), "leader");

        let (mut q, near) = (node(6, &[1, 2]), peers(&[1, 2]));
        let view = |q: &TimestampFloodingProcess| q.view(&Peers(&near)).to_string();
        assert_eq!(step(&mut q, 5, msg(0, Msg::Cfl { key: key(0, 2) })), Some("first campaign, join it and flood"));
        assert_eq!(view(&q), "campaigning: timestamp 0, candidate 2, parent 1, waiting for 2");
        assert_eq!(step(&mut q, 5, msg(1, Msg::Cfl { key: key(0, 2) })), Some("subtree done, vote to the parent"));
        assert_eq!(view(&q), "voted: timestamp 0, candidate 2, parent 1");
        assert_eq!(step(&mut q, 5, Event::Command(Command::Initiate)), Some("already reached, do not initiate"));
        assert_eq!(step(&mut q, 6, msg(0, Msg::Leader { id: NodeId(2) })), Some("learn the leader, pass it down"));
        assert_eq!(view(&q), "follower: leader 2");
        assert_eq!(step(&mut q, 7, msg(0, Msg::Leader { id: NodeId(2) })), Some("ignore a repeated announcement"));
        assert_eq!(Msg::AckSibling { key: key(0, 2) }.describe(), "ack-sibling (0, 2)");
        assert_eq!(Msg::Leader { id: NodeId(2) }.describe(), "leader 2");
    }

    #[test]
    fn bounds_are_exact_for_one_initiator_and_empirical_for_several() {
        let one = TimestampFlooding.bounds(&Facts::new(9, 12, 1));
        assert_eq!(one[0].value, 48);
        assert_eq!(one[1].value, 2 * 12 - 8);
        assert_eq!(one[2].value, 2 * 12 + 8 + 2 * 8);
        let three = TimestampFlooding.bounds(&Facts::new(9, 12, 3));
        assert_eq!(three[0].value, 4 * 12 + 3 * 8);
        assert_eq!(three[0].measure, Measure::Kinds(&["cfl"]));
        assert_eq!(three[1].value, 2 * 3 * 12);
        assert!(three[2].name.starts_with("S002"));
    }
}
