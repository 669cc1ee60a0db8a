//! One member, [`Member`], and the [`Process`] impl that hands each input to the rule it belongs to and ends every
//! step in [`Member::decide`]. The member drives its algorithm as any driver drives a process ([`Hosted`]), through
//! [`Outer`]: every message leaves with the member's header, timers are tagged with the algorithm's instance (a
//! resignation restarts the algorithm, and the timers of its earlier instance are then ignored), durable state is
//! saved with the member's own, and the algorithm's "I am the leader" notices give way to the member's grants.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elect_core::driver::Host;
use elect_core::{
    Command, Cx, Duration, Epoch, Event, EventOf, Invalid, NodeId, Notice, Peers, Port, Process, Rank, Roster, Span,
    Status, Validate, View,
};

use super::config::Fixed;
use super::lease::Leases;
use super::packet::{Body, MemberTimer, Packet, Saved};
use super::replies::Replies;
use super::rule;
use super::state::{Asking, Away, Leadership};
use super::voters::{Membership, VoterChange, Voters};
use crate::algorithm::Algorithm;
use crate::hosted::Hosted;

/// The algorithm's message, timer and durable state types.
pub(super) type Msg<A> = <<A as Algorithm>::Process as Process>::Msg;
type Timer<A> = <<A as Algorithm>::Process as Process>::Timer;
pub(super) type Durable<A> = <<A as Algorithm>::Process as Process>::Durable;

/// One member.
#[derive(Clone, Debug)]
pub struct Member<A: Algorithm> {
    /// The algorithm's instance.
    pub(super) inner: Hosted<A>,
    pub(super) fixed: Arc<Fixed>,
    /// The algorithm's instance: one more after each restart of it.
    pub(super) life: u32,
    pub(super) incarnation: u64,
    /// The highest fencing epoch it has heard of or granted.
    pub(super) seen: Epoch,
    /// The `seen` last made durable.
    pub(super) saved_seen: Epoch,
    /// Its grant, while it leads.
    pub(super) grant: Option<Epoch>,
    /// The latest claim of each other member that leads, and whether it is live (its claimer was heard from
    /// within the claim's life).
    pub(super) claims: BTreeMap<NodeId, (Epoch, bool)>,
    /// The latest incarnation heard from each member.
    pub(super) heard: BTreeMap<NodeId, u64>,
    /// The algorithm names this member leader; `settled` once it has for the settling wait.
    pub(super) leading: bool,
    pub(super) settled: bool,
    /// Whether it started knowing no epoch and still waits for the answers to its question before it grants
    /// anything.
    pub(super) asking: Asking,
    pub(super) published: Leadership,
    pub(super) away: Away,
    /// The algorithm's last durable state.
    pub(super) durable: Option<Durable<A>>,
    /// The lease mode's rounds and promise (empty when it is off).
    pub(super) lease: Leases,
    /// The voting configuration it holds, and the change of the voters it makes, if it does.
    pub(super) membership: Membership,
    /// The senders heard at this instant, answered once its packets have all arrived.
    pub(super) replies: Replies,
}

impl<A: Algorithm> Member<A> {
    /// A member running `algorithm`, with `fixed` for its whole life, not started yet.
    pub(super) fn new(algorithm: A, fixed: Fixed) -> Self {
        let away = if fixed.no_lead { Away::Never } else { Away::Present };
        let lease = Leases::new(fixed.lease.as_ref());
        let membership = Membership::new(fixed.voters.clone());
        Self {
            inner: Hosted::new(algorithm, &fixed.setup.setup()),
            fixed: Arc::new(fixed),
            life: 0,
            incarnation: 0,
            seen: Epoch::ZERO,
            saved_seen: Epoch::ZERO,
            grant: None,
            claims: BTreeMap::new(),
            heard: BTreeMap::new(),
            leading: false,
            settled: false,
            asking: Asking::Answered,
            published: Leadership { leader: None, epoch: Epoch::ZERO },
            away,
            durable: None,
            lease,
            membership,
            replies: Replies::default(),
        }
    }

    /// The state members are compared and hashed by: everything but the fixed configuration and scratch space.
    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (
        &A::Process,
        (u32, u64, Epoch, Epoch, Option<Epoch>),
        (&BTreeMap<NodeId, (Epoch, bool)>, &BTreeMap<NodeId, u64>),
        (bool, bool, Asking, Leadership, Away),
        &Option<Durable<A>>,
        (&Leases, &Membership, &Replies),
    ) {
        (
            self.inner.key(),
            (self.life, self.incarnation, self.seen, self.saved_seen, self.grant),
            (&self.claims, &self.heard),
            (self.leading, self.settled, self.asking, self.published, self.away),
            &self.durable,
            (&self.lease, &self.membership, &self.replies),
        )
    }

    /// The algorithm's process.
    pub fn inner(&self) -> &A::Process {
        self.inner.process()
    }

    /// This member's incarnation (0 before it started).
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The highest fencing epoch it has heard of or granted.
    pub fn seen(&self) -> Epoch {
        self.seen
    }

    /// Its current grant, if it leads.
    pub fn grant(&self) -> Option<Epoch> {
        self.grant
    }

    /// The leadership it shows.
    pub fn leadership(&self) -> Leadership {
        self.published
    }

    /// The member at the far end of `port`.
    pub(super) fn peer(&self, port: Port) -> NodeId {
        self.fixed.setup.neighbors[port.index()].id
    }

    /// Whether member `peer` is stronger than this one.
    pub(super) fn stronger(&self, peer: NodeId) -> bool {
        self.rank_of(peer).is_some_and(|rank| rank > self.fixed.setup.rank)
    }

    /// The rank of member `peer`, if it is another member.
    pub(super) fn rank_of(&self, peer: NodeId) -> Option<Rank> {
        self.fixed.setup.neighbors.iter().find(|n| n.id == peer).map(|n| n.rank)
    }

    /// Makes the member's state durable: its incarnation, `seen` and the algorithm's last durable state.
    pub(super) fn persist(&mut self, cx: &mut Cx<'_, Self>) {
        self.saved_seen = self.seen;
        cx.persist(Saved {
            incarnation: self.incarnation,
            seen: self.seen,
            inner: self.durable.clone(),
            voters: self.saved_voters(),
        });
    }

    /// The voting configuration to save: none while it is the one the member started with.
    fn saved_voters(&self) -> Option<Voters> {
        self.membership.voters.to_save()
    }

    /// Runs one event at the algorithm and carries its effects out through the member ([`Outer`]).
    pub(super) fn run(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<A::Process>) {
        let now = cx.now();
        let mut outer = Outer {
            cx: &mut *cx,
            life: self.life,
            header: (self.incarnation, self.seen, self.grant),
            silent: self.silenced(),
            durable: &mut self.durable,
            saved_seen: &mut self.saved_seen,
            voters: &self.membership.voters,
        };
        if let Some(rule) = self.inner.step(now, event, &mut outer) {
            cx.rule(rule);
        }
    }

    /// Checks a packet that arrived on `from` from outside, as every driver that receives packets from a network
    /// must before it hands one over (see [`elect_core::Validate`]): `Err` says what is wrong with it, and the
    /// packet must then be dropped unread.
    pub fn validate(&self, from: Port, packet: &Packet<Msg<A>>) -> Result<(), Invalid> {
        let setup = &self.fixed.setup;
        let sender = setup.neighbors.get(from.index()).ok_or(Invalid("no member is at the port it came from"))?;
        packet.validate(&Roster { me: setup.id, rank: setup.rank, neighbors: &setup.neighbors, from: sender.id })
    }

    /// A packet with this member's header.
    pub(super) fn packet(&self, body: Body<Msg<A>>) -> Packet<Msg<A>> {
        Packet {
            incarnation: self.incarnation,
            seen: self.seen,
            lead: self.grant,
            config: self.membership.voters.id,
            body,
        }
    }

    /// Sends `body` to every other member.
    pub(super) fn broadcast(&self, cx: &mut Cx<'_, Self>, body: Body<Msg<A>>) {
        for n in &self.fixed.setup.neighbors {
            cx.send(n.port, self.packet(body.clone()));
        }
    }
}

/// The member as the host of its algorithm (see the module documentation).
struct Outer<'a, 'b, 'c, A: Algorithm> {
    cx: &'a mut Cx<'b, Member<A>>,
    life: u32,
    header: (u64, Epoch, Option<Epoch>),
    /// The member's lease lapsed: the algorithm's messages are not sent (see [`super::lease`]).
    silent: bool,
    durable: &'c mut Option<Durable<A>>,
    saved_seen: &'c mut Epoch,
    voters: &'c Voters,
}

impl<A: Algorithm> Host<A::Process> for Outer<'_, '_, '_, A> {
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        if self.silent {
            return;
        }
        let (incarnation, seen, lead) = self.header;
        let (config, body) = (self.voters.id, Body::Algorithm(msg.into_owned()));
        self.cx.send(to, Packet { incarnation, seen, lead, config, body });
    }

    fn set_timer(&mut self, timer: Timer<A>, after: Span) {
        self.cx.set_timer(MemberTimer::Inner { life: self.life, timer }, after);
    }

    fn cancel_timer(&mut self, timer: Timer<A>) {
        self.cx.cancel_timer(MemberTimer::Inner { life: self.life, timer });
    }

    fn persist(&mut self, durable: Durable<A>) {
        let (incarnation, seen, _) = self.header;
        *self.durable = Some(durable);
        *self.saved_seen = seen;
        let voters = self.voters.to_save();
        self.cx.persist(Saved { incarnation, seen, inner: self.durable.clone(), voters });
    }

    fn notify(&mut self, notice: Notice) {
        if !matches!(notice, Notice::Elected { .. }) {
            self.cx.notify(notice);
        }
    }
}

impl<A: Algorithm> PartialEq for Member<A> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<A: Algorithm> Eq for Member<A> {}

impl<A: Algorithm> Hash for Member<A> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl<A: Algorithm> Process for Member<A> {
    type Msg = Packet<Msg<A>>;
    type Timer = MemberTimer<Timer<A>>;
    type Durable = Saved<Durable<A>>;

    /// A member learns of a peer's crash from the leader monitor's timeouts and of its restart from its packets:
    /// the network it runs on reports no links.
    const HEARS_LINKS: bool = false;

    /// A new incarnation, durable before the first packet; `seen` and the algorithm's state as they were saved.
    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Self::Durable>) {
        self.start(cx, restored);
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, packet: Self::Msg) {
        let peer = self.peer(from);
        if self.sent_before_a_restart(cx, peer, packet.incarnation) {
            return;
        }
        // A learner makes itself known to each new leader (it sends nothing else), so that the leader may add it.
        let introduce = self.away == Away::Outside
            && packet.lead.is_some_and(|lead| self.claims.get(&peer).is_none_or(|&(claim, _)| claim != lead));
        self.hear(cx, from, packet.seen, packet.lead);
        let newest = packet.lead.is_some_and(|lead| lead >= self.seen);
        if !matches!(packet.body, Body::Config { .. }) {
            self.compare_configs(cx, from, packet.config, newest);
        }
        // The member a transfer named may have stopped leading: then those standing aside for it take part again.
        let rejoined = self.end_aside(cx);
        let present = self.away == Away::Present;
        let asked = matches!(packet.body, Body::Ask) && self.answers_questions();
        cx.rule(match &packet.body {
            Body::Algorithm(_) | Body::Leaving if !present => rule::AWAY,
            Body::Algorithm(_) | Body::Leaving => rule::PASS,
            Body::Announce => rule::ANNOUNCE,
            Body::Ask => rule::ANSWER,
            Body::Lease { .. } => rule::BACK,
            Body::LeaseAck { .. } => rule::BACKED,
            Body::Transfer { .. } => rule::TRANSFER,
            Body::Config { .. } => rule::CONFIG,
            Body::ConfigAck { .. } => rule::CONFIG_ACK,
        });
        if rejoined {
            cx.rule(rule::ASIDE_OVER);
        }
        // The sender is told what it missed once the instant's packets are all in (see `super::replies`).
        if self.replies.note(from, packet.seen, packet.lead, asked || introduce) {
            cx.set_timer(MemberTimer::Answer, Span::exactly(Duration::ZERO));
        }
        let lead = packet.lead;
        match packet.body {
            Body::Algorithm(msg) if present => self.run(cx, Event::Message { from, msg }),
            Body::Leaving if present && self.inner().status().leader == Some(peer) => {
                self.run(cx, Event::Command(Command::Initiate));
            }
            Body::Lease { round } => self.on_lease(cx, from, round, packet.config),
            Body::LeaseAck { round } => self.on_lease_ack(cx, from, round),
            Body::Transfer { to } => self.on_transfer(cx, lead, to),
            Body::Config { voters } => self.on_config(cx, from, lead, voters),
            Body::ConfigAck { id } => self.on_config_ack(cx, from, id),
            _ => {}
        }
        self.decide(cx);
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Self::Timer) {
        // A timer fires once the instant's packets are all in: whichever fires first sends the answers owed, before
        // anything it sends of its own, so that the timers of one instant may fire in any order and send alike.
        if timer != MemberTimer::Answer && self.replies.owing() {
            cx.cancel_timer(MemberTimer::Answer);
            self.answer(cx);
        }
        match timer {
            MemberTimer::Inner { life, timer } if life == self.life && self.away == Away::Present => {
                self.run(cx, Event::Timer(timer));
            }
            MemberTimer::Inner { .. } => return cx.rule(rule::OLD_TIMER), // Of an earlier instance, or sitting out.
            MemberTimer::Claim(port) => {
                cx.rule(rule::CLAIM);
                self.claim_expired(port);
                if self.end_aside(cx) {
                    cx.rule(rule::ASIDE_OVER);
                }
            }
            MemberTimer::Settle => {
                cx.rule(rule::SETTLE);
                self.settled = self.leading;
            }
            MemberTimer::Asked if self.asking != Asking::Answered => self.on_asked(cx),
            MemberTimer::Asked => {}
            MemberTimer::Wake if matches!(self.away, Away::Resigned | Away::Waiting) => {
                cx.rule(rule::WAKE);
                return self.rejoin(cx);
            }
            MemberTimer::Wake if matches!(self.away, Away::Aside { .. }) => {
                cx.rule(rule::DEADLINE);
                self.transfer_due(cx);
            }
            MemberTimer::Wake => return,
            MemberTimer::Renew => self.on_renew(cx),
            MemberTimer::Hold(slot) => self.on_hold(cx, slot),
            MemberTimer::Promise => self.on_promise(cx),
            MemberTimer::Grace => self.on_grace(cx),
            MemberTimer::Change => self.on_change_due(cx),
            MemberTimer::Answer => return self.answer(cx),
        }
        self.decide(cx);
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        match cmd {
            Command::Initiate if self.away == Away::Present => {
                self.run(cx, Event::Command(Command::Initiate));
                self.decide(cx);
            }
            Command::Initiate => {}
            Command::Resign => self.resign(cx),
            Command::Leave => self.leave(cx),
            Command::Transfer { to } => self.transfer(cx, to),
            Command::AddVoter { id } => self.change_voters(cx, VoterChange::Add(id)),
            Command::RemoveVoter { id } => self.change_voters(cx, VoterChange::Remove(id)),
        }
    }

    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        self.run(cx, Event::Link { port, up });
        self.decide(cx);
    }

    /// The algorithm's state, with the leadership the member shows: the leader whose grant it vouches for, and
    /// that grant's fencing epoch. A member sitting out (a learner, say) whose algorithm does not run is in the
    /// state its algorithm was left in; following a leader, it is normal, as a process that follows one.
    fn status(&self) -> Status {
        let inner = self.inner().status();
        let state = match (self.away, self.published.leader) {
            (Away::Present, _) | (_, None) => inner.state,
            (_, Some(_)) => elect_core::State::Normal,
        };
        Status { state, leader: self.published.leader, epoch: self.published.epoch, ..inner }
    }

    fn parent(&self) -> Option<Port> {
        self.inner().parent()
    }

    /// The algorithm's view (inside the leader monitor), with the member's own part: the fencing epoch of its
    /// grant when it leads, and whether it sits out.
    fn view(&self, peers: &Peers<'_>) -> View {
        let view = match self.away {
            Away::Present => self.inner().view(peers),
            Away::Resigned => View::new("sitting out (resigned)"),
            Away::Left => View::new("left"),
            Away::Never => View::new("never leads (no-lead)"),
            Away::Waiting => View::new("sitting out (takeover delay)"),
            Away::Aside { .. } => View::new("standing aside (transfer)"),
            Away::Outside => View::new("not a voter (learner)"),
        };
        view.with_some("grant", self.grant).with_some("lease", self.lease_standing())
    }

    fn describe_timer(timer: &Self::Timer) -> String {
        match timer {
            MemberTimer::Inner { timer, .. } => A::Process::describe_timer(timer),
            MemberTimer::Claim(_) => "a claim's life".to_owned(),
            MemberTimer::Settle => "settling wait".to_owned(),
            MemberTimer::Wake => "end of the resign hold, or a transfer's deadline".to_owned(),
            MemberTimer::Asked => "answers to the question due".to_owned(),
            MemberTimer::Renew => "next lease round".to_owned(),
            MemberTimer::Hold(slot) => format!("end of the hold of lease slot {slot}"),
            MemberTimer::Promise => "end of the promise to back one leader".to_owned(),
            MemberTimer::Grace => "end of the grace to get a lease".to_owned(),
            MemberTimer::Change => "answers to the configuration due".to_owned(),
            MemberTimer::Answer => "the instant's packets all in: answers out".to_owned(),
        }
    }
}
