//! A monitored process, [`Monitored`]: one instance of the algorithm per epoch, run inside the monitor, and the
//! [`Process`] impl that hands each input to the rule it belongs to. The instance is driven as any driver drives a
//! process ([`Hosted`]): its effects are carried out through [`Outer`], which sends its messages tagged with the
//! epoch (round the ring when the monitor repairs it), tags its timers with the epoch it was built in, drops its
//! durable state (a recovered process starts a fresh instance: see the reserved rounds) and stamps its "I am the
//! leader" notices with the monitor's epoch, so that P-Unique is judged per election.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elect_core::driver::Host;
use elect_core::{Command, Cx, Epoch, Event, EventOf, NodeId, Notice, Peers, Port, Process, Span, Status, View};

use super::config::Fixed;
use super::messages::{MonitorMsg, MonitorTimer};
use super::poll::Poll;
use super::repair::{RingRepair, Unacked};
use super::rule;
use crate::algorithm::Algorithm;
use crate::hosted::Hosted;

/// The algorithm's message and timer types.
pub(super) type Msg<A> = <<A as Algorithm>::Process as Process>::Msg;
type Timer<A> = <<A as Algorithm>::Process as Process>::Timer;

/// One monitored process.
#[derive(Clone, Debug)]
pub struct Monitored<A: Algorithm> {
    /// This epoch's instance of the algorithm.
    pub(super) inner: Hosted<A>,
    pub(super) fixed: Arc<Fixed>,
    pub(super) epoch: Epoch,
    /// The process whose failure started this epoch.
    pub(super) down: Option<NodeId>,
    /// The last heartbeat sent (as leader) or forwarded (as follower) in this epoch.
    pub(super) seq: u64,
    /// What ring repair knows: the processes believed dead, the ring messages not yet acknowledged.
    pub(super) ring: RingRepair<Msg<A>>,
    /// Links the link layer reports down: every fresh instance of the algorithm is told again.
    pub(super) links_down: BTreeSet<Port>,
    /// The durable reservation: an epoch whose round is at least that of every epoch this process has entered.
    pub(super) reserved: Epoch,
    /// It leads, and sends heartbeats.
    pub(super) beating: bool,
    /// It follows a leader, and watches for its heartbeats.
    pub(super) watching: bool,
    /// Waiting, without a leader, for an election to end.
    pub(super) waiting: bool,
    /// Back from a crash (or started late): until it has started an epoch newer than any it heard of, it must
    /// not join an epoch whose election may be over.
    pub(super) catching_up: bool,
    /// The leader of this epoch, followed without taking part in its election (a straggler that caught up).
    pub(super) adopted: Option<NodeId>,
    /// The epoch the algorithm's instance was built in, which tags its timers: a leader that carries its
    /// leadership into a newer epoch without an election, and its followers with it, keep their instances.
    pub(super) instance: Epoch,
    /// A heartbeat of the leader it follows arrived within the quiet time: it vouches that it hears the leader.
    pub(super) fresh: bool,
    /// The pre-vote under way, if this follower suspects its leader.
    pub(super) poll: Option<Poll>,
    /// How many pre-votes in a row (up to [`super::KEPT`]) found a majority that heard the leader, with no
    /// heartbeat since (see `pre_vote`).
    pub(super) kept: u8,
}

impl<A: Algorithm> Monitored<A> {
    /// A process of `algorithm` that has not started, with `fixed` for its whole life.
    pub(super) fn new(algorithm: A, fixed: Fixed) -> Self {
        Self {
            inner: Hosted::new(algorithm, &fixed.algorithm_setup()),
            fixed: Arc::new(fixed),
            epoch: Epoch::ZERO,
            down: None,
            seq: 0,
            ring: RingRepair::default(),
            links_down: BTreeSet::new(),
            reserved: Epoch::ZERO,
            beating: false,
            watching: false,
            waiting: false,
            catching_up: false,
            adopted: None,
            instance: Epoch::ZERO,
            fresh: false,
            poll: None,
            kept: 0,
        }
    }

    /// The state the monitor compares and hashes: everything but the fixed configuration and scratch space.
    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (
        &A::Process,
        (Epoch, Epoch, Option<NodeId>, u64),
        (&BTreeSet<NodeId>, &BTreeSet<Port>),
        &std::collections::VecDeque<Unacked<Msg<A>>>,
        Epoch,
        ([bool; 5], u8, Option<NodeId>, &Option<Poll>),
    ) {
        let flags = [self.beating, self.watching, self.waiting, self.catching_up, self.fresh];
        let known = (&self.ring.dead, &self.links_down);
        (
            self.inner.key(),
            (self.epoch, self.instance, self.down, self.seq),
            known,
            &self.ring.unacked,
            self.reserved,
            (flags, self.kept, self.adopted, &self.poll),
        )
    }

    /// The wrapped algorithm's process.
    pub fn inner(&self) -> &A::Process {
        self.inner.process()
    }

    /// The current epoch.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The process at the far end of `port`.
    pub(super) fn neighbor(&self, port: Port) -> NodeId {
        self.fixed.neighbor(port)
    }

    /// Runs one event at the algorithm's instance, then hands it the ring messages it sent to itself, if every
    /// other process is dead.
    pub(super) fn run(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<A::Process>) {
        self.run_once(cx, event);
        self.deliver_to_self(cx);
    }

    /// Runs one event at the algorithm's instance, its effects carried out through the monitor, then updates the
    /// monitor's role to what the instance says now.
    pub(super) fn run_once(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<A::Process>) {
        self.step_inner(cx, event);
        self.sync(cx);
    }

    /// One event at the algorithm's instance, its effects carried out through [`Outer`].
    pub(super) fn step_inner(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<A::Process>) {
        let now = cx.now();
        let mut outer = Outer {
            cx: &mut *cx,
            fixed: &self.fixed,
            ring: &mut self.ring,
            epoch: self.epoch,
            down: self.down,
            instance: self.instance,
        };
        if let Some(rule) = self.inner.step(now, event, &mut outer) {
            cx.rule(rule);
        }
    }
}

/// The monitor as the host of its algorithm's instance (see the module documentation).
struct Outer<'a, 'b, 'c, A: Algorithm> {
    cx: &'a mut Cx<'b, Monitored<A>>,
    fixed: &'c Fixed,
    ring: &'c mut RingRepair<Msg<A>>,
    epoch: Epoch,
    down: Option<NodeId>,
    instance: Epoch,
}

impl<A: Algorithm> Host<A::Process> for Outer<'_, '_, '_, A> {
    /// Tagged with the epoch, and on a logical ring sent to the live ring neighbour in that direction, tracked
    /// until it is acknowledged.
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        let msg = msg.into_owned();
        let ring = self.fixed.setup.ring.filter(|r| self.fixed.hops && (to == r.next || to == r.prev));
        match ring {
            Some(r) => {
                let forward = to == r.next;
                if let Some((port, first)) = self.ring.route(self.fixed, self.cx.now(), forward, &msg) {
                    if first {
                        self.cx.set_timer(MonitorTimer::Hop, Span::exactly(self.fixed.hop_timeout));
                    }
                    self.cx.send(port, MonitorMsg::Ring { epoch: self.epoch, down: self.down, forward, msg });
                }
            }
            None => {
                let port = self.ring.outgoing(self.fixed, to);
                self.cx.send(port, MonitorMsg::Inner { epoch: self.epoch, down: self.down, msg });
            }
        }
    }

    fn set_timer(&mut self, timer: Timer<A>, after: Span) {
        self.cx.set_timer(MonitorTimer::Inner { epoch: self.instance, timer }, after);
    }

    fn cancel_timer(&mut self, timer: Timer<A>) {
        self.cx.cancel_timer(MonitorTimer::Inner { epoch: self.instance, timer });
    }

    /// Never read back: see the reserved rounds in the module documentation.
    fn persist(&mut self, _: <A::Process as Process>::Durable) {}

    fn notify(&mut self, notice: Notice) {
        match notice {
            Notice::Elected { .. } => self.cx.notify(Notice::Elected { epoch: self.epoch }),
            notice => self.cx.notify(notice),
        }
    }
}

impl<A: Algorithm> PartialEq for Monitored<A> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<A: Algorithm> Eq for Monitored<A> {}

impl<A: Algorithm> Hash for Monitored<A> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl<A: Algorithm> Process for Monitored<A> {
    type Msg = MonitorMsg<Msg<A>>;
    type Timer = MonitorTimer<Timer<A>>;
    /// The reservation (see the module documentation), and a place for the algorithm's durable state, which the
    /// monitor never writes (`None`): a recovered process starts a fresh instance.
    type Durable = (Epoch, Option<<A::Process as Process>::Durable>);

    /// A recovering process takes its reservation as its epoch; the driver's `Initiate` then starts the next one,
    /// above every epoch it was in. Until it has heard of the newest epoch and started the one after, it is
    /// catching up. A process starting afresh reserves its first rounds.
    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Self::Durable>) {
        match restored {
            Some((reserved, _)) => {
                self.epoch = reserved;
                self.instance = reserved;
                self.reserved = reserved;
                self.catching_up = true;
            }
            None => {
                self.catching_up = cx.now() > elect_core::Instant::ZERO;
                self.reserve(cx, Epoch::of(1, self.fixed.setup.id));
                self.run(cx, Event::Start { restored: None });
            }
        }
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg) {
        self.ring.dead.remove(&self.neighbor(from));
        match msg {
            MonitorMsg::Heartbeat { epoch, seq, down } => self.on_heartbeat(cx, from, epoch, seq, down),
            MonitorMsg::Join { epoch, .. } if epoch > self.epoch && self.catching_up => self.catch_up(cx, epoch),
            MonitorMsg::Join { epoch, down } | MonitorMsg::Inner { epoch, down, .. }
                if self.named_down(epoch, down) =>
            {
                self.disown(cx, epoch);
            }
            MonitorMsg::Join { epoch, down } => self.on_join(cx, from, epoch, down),
            MonitorMsg::Inner { epoch, down, msg } => self.on_inner(cx, from, epoch, down, msg),
            MonitorMsg::Ring { epoch, down, forward, msg } => self.on_ring(cx, from, (epoch, down), forward, msg),
            MonitorMsg::HopAck { epoch } => self.on_hop_ack(cx, from, epoch),
            MonitorMsg::PreVote { epoch, leader } => self.on_pre_vote(cx, from, epoch, leader),
            MonitorMsg::PreVoteReply { epoch, hears } => self.on_pre_vote_reply(cx, from, epoch, hears),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Self::Timer) {
        match timer {
            MonitorTimer::Inner { epoch, timer } if epoch == self.instance => self.run(cx, Event::Timer(timer)),
            MonitorTimer::Inner { .. } => cx.rule(rule::OLD_TIMER), // Armed by an instance this process has left.
            MonitorTimer::Beat if self.beating => self.beat(cx),
            MonitorTimer::Watch if self.watching => self.on_watch(cx),
            MonitorTimer::Quiet => self.on_quiet(cx),
            MonitorTimer::Poll => self.on_poll(cx),
            MonitorTimer::Stall if self.waiting => self.on_stall(cx),
            MonitorTimer::Hop => self.on_hop_timeout(cx),
            MonitorTimer::Beat | MonitorTimer::Watch | MonitorTimer::Stall => cx.rule(rule::OLD_TIMER),
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        match cmd {
            Command::Initiate => {
                self.start_after(cx, self.epoch, None);
                cx.rule(rule::START);
            }
            Command::Resign | Command::Leave | Command::Transfer { .. } => self.run(cx, Event::Command(cmd)),
            // The deployed member changes its voters; the monitor is not told.
            Command::AddVoter { .. } | Command::RemoveVoter { .. } => {}
        }
    }

    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        if up {
            self.links_down.remove(&port);
        } else {
            self.links_down.insert(port);
        }
        self.run(cx, Event::Link { port, up });
    }

    fn status(&self) -> Status {
        Status { epoch: self.epoch, ..self.shown() }
    }

    /// The algorithm's own view of this epoch's instance, with the epoch, the leader it follows without an
    /// election (if it adopted one), and the leader it is asking about in a pre-vote.
    fn view(&self, peers: &Peers<'_>) -> View {
        let view = self.inner().view(peers);
        // The algorithm's own epoch is the monitor's (its instance was built in it), shown once.
        let view = if view.get("epoch").is_some() { view } else { view.with("epoch", self.epoch) };
        let view = match self.adopted {
            Some(leader) if !view.values.iter().any(|v| v.name == "leader") => view.with("leader", leader),
            _ => view,
        };
        view.with_some("asking about", self.poll.as_ref().map(|p| p.suspect))
    }

    fn describe_timer(timer: &Self::Timer) -> String {
        match timer {
            MonitorTimer::Inner { timer, .. } => A::Process::describe_timer(timer),
            MonitorTimer::Beat => "next heartbeat".to_owned(),
            MonitorTimer::Watch => "suspicion time".to_owned(),
            MonitorTimer::Hop => "ring hop deadline".to_owned(),
            MonitorTimer::Stall => "election deadline".to_owned(),
            MonitorTimer::Quiet => "quiet time".to_owned(),
            MonitorTimer::Poll => "pre-vote answers due".to_owned(),
        }
    }
}
