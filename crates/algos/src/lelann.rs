#![doc = include_str!("../../../docs/reference/algorithms/lelann.md")]

use std::collections::VecDeque;

use elect_core::{
    Check, Command, Cx, Duration, Instant, NodeId, Peers, Port, Process, Rank, Setup, Span, Status, StatusKey, View,
    When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::params::{ParamError, Params};
use crate::{Learned, election_checks, ring_ports};

/// The algorithm's configuration (it has no parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeLann;

/// van Steen ring messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// Collects the ids of the ring, starting at `initiator`.
    Election {
        /// Who started this election.
        initiator: Rank,
        /// The processes passed so far, in ring order.
        ids: Vec<Rank>,
    },
    /// Announces the result of `initiator`'s election.
    Coordinator {
        /// Who started the election (or closed it, when its initiator died).
        initiator: Rank,
        /// The strongest id collected.
        leader: Rank,
        /// Every process of the ring, in ring order from the initiator.
        members: Vec<Rank>,
    },
    /// "I received your oldest unacknowledged `election` or `coordinator`."
    Ack,
}

elect_core::message_kinds!(
    Msg { Election => "election", Coordinator => "coordinator", Ack => "ack" },
    describe = Msg::text
);

/// `ids` as a list (`3, 6, 8`).
fn list(ids: &[Rank]) -> String {
    ids.iter().map(Rank::to_string).collect::<Vec<_>>().join(", ")
}

impl Msg {
    /// `election(initiator 3, ids 3, 6)`, `coordinator(initiator 3, leader 8, members 3, 6, 8)`, `ack`.
    fn text(&self) -> String {
        match self {
            Self::Election { initiator, ids } => format!("election(initiator {initiator}, ids {})", list(ids)),
            Self::Coordinator { initiator, leader, members } => {
                format!("coordinator(initiator {initiator}, leader {leader}, members {})", list(members))
            }
            Self::Ack => "ack".to_owned(),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const START: &str = "send election with own id";
const APPEND: &str = "append own id and forward";
const ANNOUNCE: &str = "own election returned, announce";
const PASS_ON: &str = "pass the announcement on";
const CAME_HOME: &str = "announcement came home";
const ACK: &str = "an ack clears the oldest message";
const SKIP: &str = "no ack, skip the dead successor";
const CLOSE: &str = "close a dead initiator's election";
const DROP_DEAD: &str = "drop a dead initiator's announcement";
const WENT_ROUND: &str = "drop an election that went round";
const STALE: &str = "ignore a stale ack timer";
const AGAIN: &str = "ignore a second initiate";

/// An election carries its initiator and the members it passed, each once (no more than there are); an
/// announcement names a leader among the members it lists.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let distinct = |ids: &[Rank]| ids.iter().enumerate().all(|(i, r)| !ids[..i].contains(r));
        let listed = |ids: &[Rank]| {
            !ids.is_empty() && ids.len() <= roster.nodes() && ids.iter().all(|&r| roster.rank_of(r.id()) == Some(r))
        };
        match self {
            Self::Election { initiator, ids } => {
                roster.rank(*initiator, "the initiator is not a member")?;
                roster.ensure(listed(ids) && distinct(ids), "the ids are not one to a member list")?;
                roster.ensure(ids.contains(initiator), "the ids leave out the initiator")
            }
            Self::Coordinator { initiator, leader, members } => {
                roster.rank(*initiator, "the initiator is not a member")?;
                roster.ensure(listed(members) && distinct(members), "the members are not one to a member list")?;
                roster.ensure(members.contains(leader), "the leader is not among the members")
            }
            Self::Ack => Ok(()),
        }
    }
}

impl Msg {
    /// Who started the election this message belongs to; `None` for an acknowledgement.
    fn initiator(&self) -> Option<Rank> {
        match self {
            Self::Election { initiator, .. } | Self::Coordinator { initiator, .. } => Some(*initiator),
            Self::Ack => None,
        }
    }
}

/// van Steen ring timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// `2T + ε` after the oldest unacknowledged message was sent: no `ack` means the successor is dead.
    AckDeadline,
}

/// The failure detector of a logical ring over a complete graph: acknowledgements and a `2T + ε` timeout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Detector {
    /// The other processes in ring order from the clockwise neighbour: their ports and ranks.
    ring: Box<[(Port, Rank)]>,
    /// The index in `ring` of the successor; every process before it is dead.
    succ: usize,
    /// `2T + ε`: a live successor's `ack` comes back within `2T`.
    wait: Duration,
    /// The messages sent to the successor and not yet acknowledged, oldest first, with their deadlines.
    unacked: VecDeque<(Instant, Msg)>,
}

impl Detector {
    /// The successor's port; `None` when every other process is dead.
    fn successor(&self) -> Option<Port> {
        self.ring.get(self.succ).map(|&(port, _)| port)
    }

    /// Whether the process ranked `rank` is dead, so that a message forwarded now would skip over it.
    fn skips(&self, rank: Rank) -> bool {
        self.ring.iter().take(self.succ).any(|&(_, r)| r == rank)
    }

    /// The deadline of the oldest unacknowledged message.
    fn deadline(&self) -> Option<Instant> {
        self.unacked.front().map(|&(at, _)| at)
    }
}

/// One process of van Steen's ring election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeLannProcess {
    me: Rank,
    next: Port,
    initiated: bool,
    involved: bool,
    leader: Option<Rank>,
    members: Vec<Rank>,
    /// Present on a logical ring over a complete graph with a delay bound.
    detector: Option<Box<Detector>>,
}

impl LeLannProcess {
    /// The member list learned from the last announcement, in ring order from its initiator.
    pub fn members(&self) -> Vec<NodeId> {
        self.members.iter().map(|r| r.id()).collect()
    }

    /// Keeps the strongest leader announced: concurrent elections over a changing membership can announce
    /// different ones (see its chapter, `docs/reference/algorithms/lelann.md`).
    fn adopt(&mut self, leader: Rank, members: &[Rank]) {
        if self.leader.is_none_or(|l| leader >= l) {
            self.leader = Some(leader);
            self.members.clear();
            self.members.extend_from_slice(members);
        }
    }

    /// A message of an election arrived here (over a link, or having come round to a process left alone).
    fn receive(&mut self, cx: &mut Cx<'_, Self>, msg: Msg) {
        match msg {
            Msg::Election { initiator, ids } if initiator == self.me => {
                cx.rule(ANNOUNCE);
                // It carries at least its initiator (checked on arrival from outside; this process put it there).
                let Some(&leader) = ids.iter().max() else { return };
                self.adopt(leader, &ids);
                self.route(cx, Msg::Coordinator { initiator, leader, members: ids });
            }
            // A process is in an election's list once: one that finds itself there already sees a message that went
            // round without its initiator closing it, and drops it.
            Msg::Election { ids, .. } if ids.contains(&self.me) => cx.rule(WENT_ROUND),
            Msg::Election { initiator, mut ids } => {
                cx.rule(APPEND);
                self.involved = true;
                ids.push(self.me);
                self.route(cx, Msg::Election { initiator, ids });
            }
            Msg::Coordinator { initiator, .. } if initiator == self.me => cx.rule(CAME_HOME), // It has gone round once.
            Msg::Coordinator { initiator, leader, members } => {
                cx.rule(PASS_ON);
                self.adopt(leader, &members);
                self.route(cx, Msg::Coordinator { initiator, leader, members });
            }
            Msg::Ack => cx.rule(ACK),
        }
    }

    /// Sends `msg` on to the successor, keeping it until acknowledged; closes or drops it if it would skip over
    /// its dead initiator.
    fn route(&mut self, cx: &mut Cx<'_, Self>, msg: Msg) {
        let Some(detector) = self.detector.as_deref_mut() else {
            return cx.send(self.next, msg);
        };
        let Some(initiator) = msg.initiator() else { return };
        if detector.skips(initiator) {
            // The message has gone round without its initiator.
            if let Msg::Election { mut ids, .. } = msg {
                cx.rule(CLOSE);
                ids.retain(|&r| r != initiator);
                let Some(&leader) = ids.iter().max() else { return }; // It carries at least the forwarder.
                self.adopt(leader, &ids);
                self.route(cx, Msg::Coordinator { initiator: self.me, leader, members: ids });
            } else {
                cx.rule(DROP_DEAD);
            }
            return;
        }
        match detector.successor() {
            Some(port) => {
                detector.unacked.push_back((cx.now() + detector.wait, msg.clone()));
                cx.send(port, msg);
            }
            // Every other process is dead, so the message's initiator is this process: it has come round.
            None => self.receive(cx, msg),
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.detector.as_ref().and_then(|d| d.deadline())
    }

    /// Points the timer at the oldest deadline if it is no longer `armed`.
    fn rearm(&self, cx: &mut Cx<'_, Self>, armed: Option<Instant>) {
        let oldest = self.deadline();
        if oldest != armed {
            match oldest {
                Some(at) => cx.set_timer(Timer::AckDeadline, Span::exactly(at.saturating_since(cx.now()))),
                None => cx.cancel_timer(Timer::AckDeadline),
            }
        }
    }
}

impl Process for LeLannProcess {
    type Msg = Msg;
    type Timer = Timer;
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        let armed = self.deadline();
        match msg {
            Msg::Ack => {
                cx.rule(ACK);
                if let Some(detector) = self.detector.as_deref_mut() {
                    detector.unacked.pop_front();
                }
            }
            msg => {
                if self.detector.is_some() {
                    cx.send(from, Msg::Ack);
                }
                self.receive(cx, msg);
            }
        }
        self.rearm(cx, armed);
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, Timer::AckDeadline: Timer) {
        cx.rule(STALE);
        let Some(detector) = self.detector.as_deref_mut() else { return };
        match detector.deadline() {
            None => return, // Everything was acknowledged.
            Some(at) if at > cx.now() => return self.rearm(cx, None),
            Some(_) => {}
        }
        cx.rule(SKIP);
        // The successor is dead: the next process in ring order takes over everything unacknowledged.
        detector.succ += 1;
        let unacked = std::mem::take(&mut detector.unacked);
        for (_, msg) in unacked {
            self.route(cx, msg);
        }
        self.rearm(cx, None);
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && !self.initiated {
            cx.rule(START);
            let armed = self.deadline();
            self.initiated = true;
            self.involved = true;
            self.route(cx, Msg::Election { initiator: self.me, ids: vec![self.me] });
            self.rearm(cx, armed);
        } else if cmd == Command::Initiate {
            cx.rule(AGAIN);
        }
    }

    /// `initiator: leader 8, successor 6, unacked 1, members 5, 6, 8`: whether it initiated or took part, the
    /// leader and members announced to it, and with the failure detector its successor and what it has not had
    /// acknowledged.
    fn view(&self, peers: &Peers<'_>) -> View {
        let role = match (self.initiated, self.involved) {
            (true, _) => "initiator",
            (false, true) => "participant",
            (false, false) => "idle",
        };
        let mut view = View::new(role).with_some("leader", self.leader);
        if let Some(detector) = self.detector.as_deref() {
            let successor = detector.successor().and_then(|port| peers.id(port));
            view = view.with("successor", successor.map_or_else(|| "none".to_owned(), |id| id.to_string()));
            if !detector.unacked.is_empty() {
                view = view.with("unacked", detector.unacked.len());
            }
        }
        if !self.members.is_empty() {
            view = view.with("members", list(&self.members));
        }
        view
    }

    fn describe_timer(Timer::AckDeadline: &Timer) -> String {
        "waiting for an ack".to_owned()
    }

    fn status(&self) -> Status {
        self.status_key().status()
    }

    /// The leader learned, or whether this process takes part in an election: all its status depends on.
    #[inline(always)]
    fn status_key(&self) -> impl StatusKey + use<> {
        Learned { leader: self.leader, electing: self.involved }
    }
}

static INFO: Info = Info {
    name: "lelann",
    aliases: &["van-steen"],
    title: "van Steen's ring (S000's LeLann-Chang-Roberts)",
    model: "logical unidirectional ring, asynchronous reliable links, concurrent elections allowed; skips dead \
            processes by ack and timeout on a complete graph with a delay bound",
    seed: "S000",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[START, APPEND, ANNOUNCE, PASS_ON, CAME_HOME, ACK, SKIP, CLOSE, DROP_DEAD, WENT_ROUND, STALE, AGAIN],
    showcase: Showcase {
        initiators: Initiators::OneRandom,
        crash_strongest: false,
        describe: "random ids, one initiator",
    },
};

impl Algorithm for LeLann {
    type Process = LeLannProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> LeLannProcess {
        let detector = setup.delay_bound.filter(|_| !setup.ring_order.is_empty()).map(|t| {
            Box::new(Detector {
                ring: setup.ring_order.iter().map(|&port| (port, setup.neighbors[port.index()].rank)).collect(),
                succ: 0,
                wait: t * 2 + Duration::TICK,
                unacked: VecDeque::new(),
            })
        });
        LeLannProcess {
            me: setup.rank,
            next: ring_ports(setup).next,
            initiated: false,
            involved: false,
            leader: None,
            members: Vec::new(),
            detector,
        }
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, false)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // The election message goes round once, then the announcement: `n` hops each. A position that is down
        // costs the election a `2T + ε` timeout instead of a hop, and the announcement nothing (its predecessor
        // already skips it): `ε` more per dead position.
        t * (2 * facts.nodes) + Duration::TICK * facts.nodes.saturating_sub(facts.live)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        // Each election and its announcement reach every position at most once, dead or alive; a process that
        // recovers during the run initiates once more. Acknowledgements are not counted.
        let (name, elections) = match f.crashes_during_run {
            0 => ("2kn election+coordinator messages", f.initiators),
            faults => ("2(k+f)n election+coordinator messages, f faults after 0", f.initiators + faults),
        };
        vec![Bound {
            name: name.into(),
            measure: Measure::Kinds(&["election", "coordinator"]),
            value: 2 * elections * f.nodes,
        }]
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Event, Message, Neighbor, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    /// Process 5 of the logical ring 5 → 6 → 3 over a complete graph, with the detector (`2T + ε` = 3).
    fn five() -> LeLannProcess {
        let detector = Detector {
            ring: [(Port(0), rank(6)), (Port(1), rank(3))].into(),
            succ: 0,
            wait: Duration::from_ticks(3),
            unacked: VecDeque::new(),
        };
        LeLannProcess {
            me: rank(5),
            next: Port(0),
            initiated: false,
            involved: false,
            leader: None,
            members: Vec::new(),
            detector: Some(Box::new(detector)),
        }
    }

    fn from_3(msg: Msg) -> Event<Msg, Timer, ()> {
        Event::Message { from: Port(1), msg }
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let neighbors = [
            Neighbor { port: Port(0), id: NodeId(6), rank: rank(6) },
            Neighbor { port: Port(1), id: NodeId(3), rank: rank(3) },
        ];
        let peers = Peers(&neighbors);
        let mut p = five();
        let mut effects = Vec::new();
        let mut handle =
            |p: &mut LeLannProcess, at, event| driver::handle(p, Instant::from_ticks(at), event, &mut effects);
        assert_eq!(p.view(&peers).to_string(), "idle: successor 6");
        assert_eq!(handle(&mut p, 0, Event::Command(Command::Initiate)), Some(START));
        assert_eq!(p.view(&peers).to_string(), "initiator: successor 6, unacked 1");
        assert_eq!(handle(&mut p, 1, Event::Command(Command::Initiate)), Some(AGAIN));
        assert_eq!(handle(&mut p, 1, Event::Timer(Timer::AckDeadline)), Some(STALE), "not due before t=3");
        assert_eq!(handle(&mut p, 3, Event::Timer(Timer::AckDeadline)), Some(SKIP));
        assert_eq!(p.view(&peers).to_string(), "initiator: successor 3, unacked 1");
        let other = Msg::Election { initiator: rank(3), ids: vec![rank(3)] };
        assert_eq!(other.describe(), "election(initiator 3, ids 3)");
        assert_eq!(handle(&mut p, 4, from_3(other)), Some(APPEND));
        let back = Msg::Election { initiator: rank(5), ids: vec![rank(5), rank(3)] };
        assert_eq!(handle(&mut p, 5, from_3(back)), Some(ANNOUNCE));
        assert_eq!(p.view(&peers).to_string(), "initiator: leader 5, successor 3, unacked 3, members 5, 3");
        assert_eq!(handle(&mut p, 6, from_3(Msg::Ack)), Some(ACK));
        assert_eq!(p.view(&peers).to_string(), "initiator: leader 5, successor 3, unacked 2, members 5, 3");
        let announced = Msg::Coordinator { initiator: rank(3), leader: rank(5), members: vec![rank(3), rank(5)] };
        assert_eq!(announced.describe(), "coordinator(initiator 3, leader 5, members 3, 5)");
        assert_eq!(handle(&mut p, 7, from_3(announced)), Some(PASS_ON));
        assert_eq!(Msg::Ack.describe(), "ack");
        assert_eq!(LeLannProcess::describe_timer(&Timer::AckDeadline), "waiting for an ack");
    }

    #[test]
    fn elections_and_announcements_of_a_dead_initiator_end_here() {
        let mut p = five();
        p.detector.as_deref_mut().unwrap().succ = 1; // 6 is dead.
        let mut effects = Vec::new();
        let mut handle = |p: &mut LeLannProcess, event| driver::handle(p, Instant::ZERO, event, &mut effects);
        let orphan = Msg::Election { initiator: rank(6), ids: vec![rank(6), rank(3)] };
        assert_eq!(handle(&mut p, from_3(orphan)), Some(CLOSE));
        let orphan = Msg::Coordinator { initiator: rank(6), leader: rank(6), members: vec![rank(6)] };
        assert_eq!(handle(&mut p, from_3(orphan)), Some(DROP_DEAD));
        let round = Msg::Election { initiator: rank(3), ids: vec![rank(3), rank(5)] };
        assert_eq!(handle(&mut p, from_3(round)), Some(WENT_ROUND));
        let home = Msg::Coordinator { initiator: rank(5), leader: rank(5), members: vec![rank(5)] };
        assert_eq!(handle(&mut p, from_3(home)), Some(CAME_HOME));
    }
}
