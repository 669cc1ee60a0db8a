//! # van Steen's ring election (S000, which calls it "LeLann-Chang-Roberts")
//!
//! **Model.** A logical unidirectional ring; any process may start an election, several may run at once; channels are
//! asynchronous and reliable (and FIFO, which the detector relies on). Every process knows the structure of the ring
//! and a failed process is detectable (S000), so a process can skip a dead successor. On a logical ring over a complete
//! graph with a known delay bound `T` the detector is an acknowledgement with a `2T + ε` timeout, accurate as long as
//! delays respect `T`. On a plain ring topology (or without a delay bound) there is no detector: a crash swallows what
//! is sent to the crashed process.
//!
//! **Messages.** `election{initiator, ids}` goes once around the ring and collects every id it passes;
//! `coordinator{initiator, leader, members}` goes once around with the result and the membership list. With the
//! detector, `ack` answers every `election` and `coordinator` over the link it came on.
//!
//! **Rules.** An initiator sends `election{me, [me]}`. Others append their id and forward. When its election
//! comes back, the initiator picks the strongest id as leader and sends `coordinator`; every other process adopts
//! the leader and the member list and forwards it; the initiator drops it when it comes back (the announcement
//! stops at the initiator, as DESIGN.md decides). "Send" and "forward" go to the successor: the closest process
//! in ring order not known to be dead.
//!
//! **Skipping dead processes.** A process keeps the messages it sent to its successor until they are
//! acknowledged (acknowledgements come back in order, so each acknowledges the oldest outstanding), each with a
//! deadline `2T + ε` after it was sent. When the oldest deadline passes unacknowledged the successor is dead:
//! the process remembers it for good and sends every unacknowledged message again, in order, to the next process
//! in ring order, which may turn out dead in turn. A message that would skip over its own (dead) initiator has
//! gone round without it: an `election{o, L}` closes at this process, which announces
//! `coordinator{me, max(L∖o), L∖o}` itself (that announcement stops when it comes back here), and a
//! `coordinator{o, …}` is dropped. A process that finds every other process dead treats what it would send as
//! having come round to it.
//!
//! **Guarantees.** With no process failing during the run (processes may be down from the start), every live
//! process ends knowing the strongest live process as leader and the live members in ring order, whatever the
//! number of concurrent elections (they all compute the same maximum), and the run falls silent. A relay that
//! crashes during an election loses nothing: what it received it passed on at once, and what it had not
//! acknowledged its predecessor sends on past it. An initiator that crashes during its own election is taken
//! over by the live process before it, which announces the strongest of the others. When the membership changes
//! during concurrent elections they can announce different leaders; a process keeps the strongest leader
//! announced to it (ALGORITHMS.md §3.1), so a leader that crashes after an announcement named it stays the leader
//! of those who heard it. Limits: a process that crashes while its own successor is dead and not yet detected
//! takes its unacknowledged messages down with it, so neighbouring crashes within `2T + ε` of each other can
//! stall an election; a skipped process stays skipped, so one that recovers is never sent anything again and
//! does not learn the leader; delays beyond `T`, lost acknowledgements or reordering links make live processes
//! look dead and duplicate messages.
//!
//! **Cost.** When nobody is down, exactly `2·L` election and coordinator messages per initiator on a ring of `L`
//! processes (S000: "always 2N", best = worst), `2k·L` for `k` concurrent initiators. Each message sent to a dead
//! process adds one, and a `2T + ε` wait before the message goes on; the first message a dead process's
//! predecessor passes on hits it, and then at most one message of each election (its predecessor knows it dead
//! before the election goes on), so `d` dead processes add between `d` and `k·d`. A process left alone sends
//! nothing to itself: its election costs only its `d` attempts. An election and its announcement each reach every
//! one of the `n` positions at most once, always moving forward, so the headline bound counts at most `2k·n`
//! election and coordinator messages whoever is down (`2k·L` when nobody is), plus `2n` for each fault after time
//! 0 (a process that recovers initiates again). The detector adds one `ack` per delivered `election` or
//! `coordinator`: exactly `2k·L` when nobody is down; the bound leaves them out. Time: everybody knows the leader
//! within `2n·T + d·ε` of the first initiation (`2L` hops, and a `2T + ε` timeout in place of the election's hop
//! to each dead position; the announcement skips them at once).
//! Messages grow to `L` ids, so the bit complexity is Θ(L²) per election.

use std::collections::VecDeque;

use elect_core::{
    Check, Command, Cx, Duration, Instant, NodeId, Port, Process, Rank, Setup, Span, Status, StatusKey, When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
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

elect_core::message_kinds!(Msg { Election => "election", Coordinator => "coordinator", Ack => "ack" });

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
    /// different ones (ALGORITHMS.md §3.1).
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
                // It carries at least its initiator (checked on arrival from outside; this process put it there).
                let Some(&leader) = ids.iter().max() else { return };
                self.adopt(leader, &ids);
                self.route(cx, Msg::Coordinator { initiator, leader, members: ids });
            }
            // A process is in an election's list once: one that finds itself there already sees a message that went
            // round without its initiator closing it, and drops it.
            Msg::Election { ids, .. } if ids.contains(&self.me) => {}
            Msg::Election { initiator, mut ids } => {
                self.involved = true;
                ids.push(self.me);
                self.route(cx, Msg::Election { initiator, ids });
            }
            Msg::Coordinator { initiator, .. } if initiator == self.me => {} // It has gone round once.
            Msg::Coordinator { initiator, leader, members } => {
                self.adopt(leader, &members);
                self.route(cx, Msg::Coordinator { initiator, leader, members });
            }
            Msg::Ack => {}
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
                ids.retain(|&r| r != initiator);
                let Some(&leader) = ids.iter().max() else { return }; // It carries at least the forwarder.
                self.adopt(leader, &ids);
                self.route(cx, Msg::Coordinator { initiator: self.me, leader, members: ids });
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
        let Some(detector) = self.detector.as_deref_mut() else { return };
        match detector.deadline() {
            None => return, // Everything was acknowledged.
            Some(at) if at > cx.now() => return self.rearm(cx, None),
            Some(_) => {}
        }
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
            let armed = self.deadline();
            self.initiated = true;
            self.involved = true;
            self.route(cx, Msg::Election { initiator: self.me, ids: vec![self.me] });
            self.rearm(cx, armed);
        }
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
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
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
