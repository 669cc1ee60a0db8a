#![doc = include_str!("../../../docs/internals/member.md")]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elect_core::driver::{self, Host};
use elect_core::{
    Check, Command, Cx, Duration, EffectOf, Epoch, Event, EventOf, Invalid, Message, Neighbor, NodeId, Notice, Peers,
    Port, Process, Property, RingPorts, Roster, Setup, Shape, Span, State, Status, Validate, View, When, Winner,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Driver, Elects, Facts, Info, Measure, Needs};
use crate::monitor::{LeaderMonitor, MonitorConfig, MonitorNetwork};
use crate::params::{ParamError, ParamInfo, Params};

/// The member's timing, in multiples of the delay bound `T`, and the resign hold. (A member that starts knowing no
/// epoch asks for a round trip, `2T + ε`: see the module documentation.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberConfig {
    /// A claim stays live this many `T` after its claimer's last packet: the leader monitor's suspicion time,
    /// `heartbeat + 2`.
    pub claim_ttl: u64,
    /// The algorithm must keep this member leader this many `T` before it grants itself an epoch.
    pub settle: u64,
    /// How long a member that resigned sits out before it takes part in elections again.
    pub resign_hold: Duration,
    /// A flaw planted on purpose, to show that the checker and the simulator find it (`--param monitor-bug=...`).
    pub bug: Option<Bug>,
}

impl MemberConfig {
    /// The timing of a member whose leader monitor beats every `heartbeat·T`.
    pub fn new(heartbeat: u64, resign_hold: Duration) -> Self {
        Self { claim_ttl: heartbeat + 2, settle: 1, resign_hold, bug: None }
    }
}

/// A flaw planted in the deployed process on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bug {
    /// `same-epoch`: a new grant reuses the highest epoch the member has seen (the grant it replaces) instead of
    /// the one after it, so a new leader may hold the epoch of the old one.
    SameEpoch,
    /// `deaf-leaders`: two leaders of one of the leader monitor's epochs ignore each other's heartbeats, as the
    /// monitor did before it settled them: after a one-way fault the cluster may never agree again.
    DeafLeaders,
}

/// The parameter that plants a [`Bug`]. It belongs to the member, not to the algorithm, so drivers take it out of
/// the algorithm's parameters ([`Bug::take`]) before they look the algorithm up.
pub const BUG_PARAM: ParamInfo = ParamInfo {
    name: "monitor-bug",
    values: "same-epoch or deaf-leaders",
    default: "none",
    help: "plant a flaw in the deployed member (only with --monitor): same-epoch makes a new leadership grant \
           reuse the epoch it replaces; deaf-leaders makes two leaders of one monitor epoch ignore each other",
};

impl Bug {
    /// Takes `monitor-bug` out of `params`: the flaw it names, if any, and the algorithm's own parameters.
    pub fn take(params: &Params) -> Result<(Option<Self>, Params), ParamError> {
        let (value, rest) = params.without(BUG_PARAM.name);
        let bug = match value.as_deref() {
            None | Some("none") => None,
            Some("same-epoch") => Some(Self::SameEpoch),
            Some("deaf-leaders") => Some(Self::DeafLeaders),
            Some(other) => {
                return Err(ParamError::Invalid {
                    key: BUG_PARAM.name,
                    value: other.to_owned(),
                    reason: format!("expected one of: {}", BUG_PARAM.values),
                });
            }
        };
        Ok((bug, rest))
    }
}

/// The rules the member names as it applies them ([`Cx::rule`]), each stated in the member's chapter of the book
/// ("Rules, step by step"). A packet of the election shows the rule of the monitor or the algorithm that handled it.
pub mod rule {
    /// A packet its sender sent before it last restarted is dropped: what it says is out of date.
    pub const OLD_INCARNATION: &str = "drop a packet from before a restart";
    /// A packet of the election (or a leader's notice that it leaves) goes to the leader monitor and the algorithm, which name their own rules; a member whose leader leaves elects again at once.
    pub const PASS: &str = "hand the packet to the monitor";
    /// A member that resigned or left takes no part in elections; it still corrects a stale grant and answers questions.
    pub const AWAY: &str = "sitting out, take no part";
    /// An announcement tells this member of a newer epoch, or of a leader's new grant; a member that knows a newer epoch than the sender tells it so.
    pub const ANNOUNCE: &str = "hear a newer epoch or grant";
    /// A member that started knowing no epoch asks the others; each answers with the highest epoch it knows.
    pub const ANSWER: &str = "answer a question about epochs";
    /// A timer armed before the algorithm was restarted, or while sitting out, does nothing.
    pub const OLD_TIMER: &str = "ignore a timer of an earlier instance";
    /// Another member's claim to lead was not renewed within its life: this member no longer counts it.
    pub const CLAIM: &str = "a claim expired";
    /// The algorithm kept this member leader for the settling wait: it makes itself a fencing grant and announces it.
    pub const SETTLE: &str = "leadership settled, grant it";
    /// The answers to a starting member's question did not reach a majority in a round trip: it asks again.
    pub const ASKED: &str = "too few answers, ask again";
    /// A member that resigned has sat out its hold: it takes part in elections again.
    pub const WAKE: &str = "resign hold over, rejoin";

    /// Every rule, in the order the chapter lists them.
    pub const ALL: &[&str] = &[OLD_INCARNATION, PASS, AWAY, ANNOUNCE, ANSWER, OLD_TIMER, CLAIM, SETTLE, ASKED, WAKE];
}

/// The leadership a member shows: the leader it follows (or is) and the fencing epoch of that leadership grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Leadership {
    /// The leader, or `None` while there is none this member can vouch for (an election, a leader whose grant it
    /// has not heard yet).
    pub leader: Option<NodeId>,
    /// The fencing epoch of the leader's grant; with no leader, that of the last leader this member knew (after a
    /// restart: the highest epoch it had seen; 0 if none). It never goes backwards.
    pub epoch: u64,
}

/// A member's packet: its header, and an algorithm message or one of the member's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "M: Serialize + DeserializeOwned")]
pub struct Packet<M> {
    /// The sender's incarnation.
    pub incarnation: u64,
    /// The highest fencing epoch the sender knows.
    pub seen: Epoch,
    /// The fencing epoch of the sender's current grant, if it leads.
    pub lead: Option<Epoch>,
    /// The payload.
    pub body: Body<M>,
}

/// What a packet carries besides its header.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum Body<M> {
    /// A message of the election algorithm.
    Algorithm(M),
    /// Only the header matters: a new grant (`lead`), or a correction (`seen`).
    Announce,
    /// The sender is leaving (it resigned or shuts down): if it was your leader, elect another now.
    Leaving,
    /// The sender started knowing no epoch and asks for the highest each member knows: it is answered with an
    /// `announce` (see the module documentation).
    Ask,
}

impl<M: Message> Message for Packet<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        let mut kinds = M::kinds().into_owned();
        kinds.extend_from_slice(MEMBER_KINDS);
        Cow::Owned(kinds)
    }

    fn kind_index(&self) -> usize {
        match &self.body {
            Body::Algorithm(msg) => msg.kind_index(),
            Body::Announce => M::kinds().len(),
            Body::Leaving => M::kinds().len() + 1,
            Body::Ask => M::kinds().len() + 2,
        }
    }

    fn kind(&self) -> &'static str {
        match &self.body {
            Body::Algorithm(msg) => msg.kind(),
            Body::Announce => "announce",
            Body::Leaving => "leaving",
            Body::Ask => "ask",
        }
    }

    fn describe(&self) -> String {
        match (&self.body, self.lead) {
            (Body::Algorithm(msg), _) => msg.describe(),
            (Body::Announce, Some(lead)) => format!("announce: I lead under grant {lead}"),
            (Body::Announce, None) => format!("announce: I have seen epoch {}", self.seen),
            (Body::Leaving, _) => "leaving".to_owned(),
            (Body::Ask, _) => "ask: which epochs do you know?".to_owned(),
        }
    }
}

/// A packet's header holds epochs a member may accept: what the sender has seen, and its grant, which it started
/// itself, in a round it has seen; an algorithm message is valid for the algorithm.
impl<M: Message> Validate for Packet<M> {
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
        roster.epoch(self.seen, "seen is beyond the last round")?;
        if let Some(lead) = self.lead {
            roster.ensure(lead <= self.seen, "the grant is above the epochs its sender has seen")?;
            roster.ensure(lead.round() >= 1 && lead.starter() == roster.from, "the grant is not its sender's own")?;
        }
        match &self.body {
            Body::Algorithm(msg) => msg.validate(roster),
            Body::Announce | Body::Leaving | Body::Ask => Ok(()),
        }
    }
}

/// A member's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberTimer<T> {
    /// The algorithm's timer, armed by its instance `life` (a resignation restarts the algorithm; the timers of
    /// its earlier instance are then ignored).
    Inner {
        /// The instance that armed it.
        life: u32,
        /// The algorithm's timer.
        timer: T,
    },
    /// The claim of the member at this port has expired: it was silent for the claim's life.
    Claim(Port),
    /// The algorithm has kept this member leader for the settling wait.
    Settle,
    /// The resign hold is over.
    Wake,
    /// A member that started knowing no epoch has waited a round trip for the answers to its question.
    Asked,
}

/// What a member keeps on stable storage.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "D: Serialize + DeserializeOwned")]
pub struct Saved<D> {
    /// Its incarnation.
    pub incarnation: u64,
    /// The highest fencing epoch it has heard of or granted.
    pub seen: Epoch,
    /// The algorithm's durable state.
    pub inner: Option<D>,
}

/// Where a member that started knowing no epoch stands with its question (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Asking {
    /// It knew an epoch when it started, or has had its answers: it may grant.
    Answered,
    /// The round trip is not over.
    Waiting,
    /// The round trip is over, but it has not heard from enough members yet (`Kept::quorum`).
    Short,
}

/// Whether the member takes part in elections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Away {
    /// It does.
    Present,
    /// It resigned, and sits out until the resign hold is over.
    Resigned,
    /// It left for good.
    Left,
}

/// The parts of a member's [`Setup`] it keeps, to rebuild its algorithm.
#[derive(Debug)]
struct Kept {
    id: NodeId,
    rank: elect_core::Rank,
    neighbors: Vec<Neighbor>,
    ring: Option<RingPorts>,
    ring_order: Vec<Port>,
    shape: Shape,
    delay_bound: Option<Duration>,
    diameter: Option<u32>,
    claim_ttl: Duration,
    settle: Duration,
    /// How long a member that starts knowing no epoch waits for answers: a round trip, `2T + ε`.
    ask: Duration,
    /// How many other members a member that starts knowing no epoch must have heard from before it grants
    /// anything: with itself, a majority of the members, `⌊n/2⌋`.
    quorum: usize,
    resign_hold: Duration,
    bug: Option<Bug>,
}

impl Kept {
    fn setup(&self) -> Setup<'_> {
        Setup {
            id: self.id,
            rank: self.rank,
            neighbors: &self.neighbors,
            ring: self.ring,
            ring_order: &self.ring_order,
            shape: self.shape,
            delay_bound: self.delay_bound,
            diameter: self.diameter,
            suspected: &[],
        }
    }
}

/// The algorithm a member runs, wrapped in everything a member decides besides (see the module documentation).
#[derive(Clone, Debug)]
pub struct Deployed<A> {
    /// The algorithm (the leader monitor around a single-leader algorithm, or the Invitation algorithm).
    pub inner: A,
    /// The member's timing.
    pub config: MemberConfig,
}

impl<A: Algorithm> Deployed<A> {
    /// `inner`, run as a member with `config`'s timing.
    pub fn new(inner: A, config: MemberConfig) -> Self {
        Self { inner, config }
    }
}

/// One member.
#[derive(Debug)]
pub struct Member<A: Algorithm> {
    algorithm: Arc<A>,
    setup: Arc<Kept>,
    inner: A::Process,
    /// The algorithm's instance: one more after each restart of it.
    life: u32,
    incarnation: u64,
    seen: Epoch,
    /// The `seen` last made durable.
    saved_seen: Epoch,
    grant: Option<Epoch>,
    /// The latest claim of each other member that leads, and whether it is live (its claimer was heard from
    /// within the claim's life).
    claims: BTreeMap<NodeId, (Epoch, bool)>,
    /// The latest incarnation heard from each member.
    heard: BTreeMap<NodeId, u64>,
    /// The algorithm names this member leader; `settled` once it has for the settling wait.
    leading: bool,
    settled: bool,
    /// Whether it started knowing no epoch and still waits for the answers to its question before it grants
    /// anything.
    asking: Asking,
    published: Leadership,
    away: Away,
    /// The algorithm's last durable state.
    durable: Option<<A::Process as Process>::Durable>,
    effects: Vec<EffectOf<A::Process>>,
}

impl<A: Algorithm> Clone for Member<A> {
    fn clone(&self) -> Self {
        Self {
            algorithm: self.algorithm.clone(),
            setup: self.setup.clone(),
            inner: self.inner.clone(),
            life: self.life,
            incarnation: self.incarnation,
            seen: self.seen,
            saved_seen: self.saved_seen,
            grant: self.grant,
            claims: self.claims.clone(),
            heard: self.heard.clone(),
            leading: self.leading,
            settled: self.settled,
            asking: self.asking,
            published: self.published,
            away: self.away,
            durable: self.durable.clone(),
            effects: Vec::new(),
        }
    }
}

impl<A: Algorithm> Member<A> {
    /// The state members are compared and hashed by: everything but the fixed configuration and scratch space.
    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (
        &A::Process,
        (u32, u64, Epoch, Epoch, Option<Epoch>),
        (&BTreeMap<NodeId, (Epoch, bool)>, &BTreeMap<NodeId, u64>),
        (bool, bool, Asking, Leadership, Away),
        &Option<<A::Process as Process>::Durable>,
    ) {
        (
            &self.inner,
            (self.life, self.incarnation, self.seen, self.saved_seen, self.grant),
            (&self.claims, &self.heard),
            (self.leading, self.settled, self.asking, self.published, self.away),
            &self.durable,
        )
    }

    /// The algorithm's process.
    pub fn inner(&self) -> &A::Process {
        &self.inner
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

    /// Checks a packet that arrived on `from` from outside, as every driver that receives packets from a network
    /// must before it hands one over (see [`elect_core::Validate`]): `Err` says what is wrong with it, and the
    /// packet must then be dropped unread.
    pub fn validate(&self, from: Port, packet: &Packet<<A::Process as Process>::Msg>) -> Result<(), Invalid> {
        let sender = self.setup.neighbors.get(from.index()).ok_or(Invalid("no member is at the port it came from"))?;
        packet.validate(&Roster {
            me: self.setup.id,
            rank: self.setup.rank,
            neighbors: &self.setup.neighbors,
            from: sender.id,
        })
    }

    fn peer(&self, port: Port) -> NodeId {
        self.setup.neighbors[port.index()].id
    }

    /// Whether member `peer` is stronger than this one.
    fn stronger(&self, peer: NodeId) -> bool {
        self.setup.neighbors.iter().any(|n| n.id == peer && n.rank > self.setup.rank)
    }

    fn saved(&self) -> Saved<<A::Process as Process>::Durable> {
        Saved { incarnation: self.incarnation, seen: self.seen, inner: self.durable.clone() }
    }

    fn persist(&mut self, cx: &mut Cx<'_, Self>) {
        self.saved_seen = self.seen;
        cx.persist(self.saved());
    }

    fn packet(&self, body: Body<<A::Process as Process>::Msg>) -> Packet<<A::Process as Process>::Msg> {
        Packet { incarnation: self.incarnation, seen: self.seen, lead: self.grant, body }
    }

    /// Asks every other member for the highest epoch it knows, and waits a round trip for the answers.
    fn ask(&self, cx: &mut Cx<'_, Self>) {
        cx.set_timer(MemberTimer::Asked, Span::exactly(self.setup.ask));
        self.broadcast(cx, Body::Ask);
    }

    /// Sends `body` to every other member.
    fn broadcast(&self, cx: &mut Cx<'_, Self>, body: Body<<A::Process as Process>::Msg>) {
        for n in &self.setup.neighbors {
            cx.send(n.port, self.packet(body.clone()));
        }
    }

    /// Runs one handler of the algorithm and carries its effects out through the member.
    fn run(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<A::Process>) {
        let mut effects = std::mem::take(&mut self.effects);
        if let Some(rule) = driver::handle(&mut self.inner, cx.now(), event, &mut effects) {
            cx.rule(rule);
        }
        let mut outer = Outer {
            cx,
            life: self.life,
            header: (self.incarnation, self.seen, self.grant),
            durable: &mut self.durable,
            saved_seen: &mut self.saved_seen,
        };
        driver::carry_out(&mut outer, &mut effects);
        self.effects = effects;
    }

    /// A packet from `port` said its sender has seen `seen` and leads under `lead`: the claim is noted (and lives
    /// for the claim's life), and `seen` grows. Returns whether the sender leads under an epoch older than one
    /// this member knows (it is then told).
    fn hear(&mut self, cx: &mut Cx<'_, Self>, port: Port, seen: Epoch, lead: Option<Epoch>) -> bool {
        let peer = self.peer(port);
        match lead {
            Some(claim) => {
                self.claims.insert(peer, (claim, true));
                cx.set_timer(MemberTimer::Claim(port), Span::exactly(self.setup.claim_ttl + Duration::TICK));
            }
            None => {
                if self.claims.remove(&peer).is_some() {
                    cx.cancel_timer(MemberTimer::Claim(port));
                }
            }
        }
        self.seen = self.seen.max(seen).max(lead.unwrap_or(Epoch::ZERO));
        lead.is_some_and(|claim| claim < self.seen)
    }

    /// Reads the algorithm's view of the leader and decides: grants, ends grants, and works out what to show. A
    /// grown `seen` is durable before anything is told; then the notices, then a new grant's announcement.
    fn decide(&mut self, cx: &mut Cx<'_, Self>) {
        let me = self.setup.id;
        let status = self.inner.status();
        let view = match status.state {
            State::Normal if self.away == Away::Present => status.leader,
            _ => None,
        };
        let leads = view == Some(me);
        // Only the live claims of stronger members hold this member back: the algorithm elects the strongest live
        // member, so while it has two leaders the stronger one keeps (or takes) the grant, and a weaker claim is
        // outbid (it is above `seen`, so a grant below it is replaced at once, as any stale grant is).
        let rival = self
            .claims
            .iter()
            .filter(|&(&peer, &(_, live))| live && self.stronger(peer))
            .map(|(_, &(claim, _))| claim)
            .max();
        // A grant made over a stale epoch is replaced at once, whatever lower claims there are.
        let mut floor = Epoch::ZERO;
        let mut ended = None;
        if let Some(g) = self.grant {
            let superseded = rival.is_some_and(|r| r > g);
            if !leads || superseded || g < self.seen {
                self.grant = None;
                ended = Some(g);
                if leads && !superseded {
                    floor = g;
                }
            }
        }
        if leads != self.leading {
            self.leading = leads;
            self.settled = leads && self.setup.settle == Duration::ZERO;
            if !leads {
                cx.cancel_timer(MemberTimer::Settle);
            } else if !self.settled {
                cx.set_timer(MemberTimer::Settle, Span::exactly(self.setup.settle));
            }
        }
        // A live rival's claim holds a grant back until it expires (its timer decides again); so does the
        // settling wait.
        let mut granted = None;
        if self.asking == Asking::Short && self.heard.len() >= self.setup.quorum {
            self.asking = Asking::Answered;
        }
        let answered = self.asking == Asking::Answered;
        if leads && self.grant.is_none() && self.settled && answered && rival.is_none_or(|r| r < floor) {
            // Past the last round there is no epoch to grant (valid epochs leave 2³¹ rounds above them; see
            // `elect_core::epoch`): the member leads nobody rather than reuse one.
            let g = match self.setup.bug {
                Some(Bug::SameEpoch) if self.seen > Epoch::ZERO => Some(self.seen),
                _ => self.seen.next(me),
            };
            if let Some(g) = g {
                self.seen = self.seen.max(g);
                self.grant = Some(g);
                granted = Some(g);
            }
        }
        let shown = match (view, self.grant) {
            (_, Some(g)) => Leadership { leader: Some(me), epoch: g.bits() },
            (Some(l), None) => match self.claims.get(&l) {
                Some(&(claim, _)) if l != me && claim >= self.seen => {
                    Leadership { leader: Some(l), epoch: claim.bits() }
                }
                _ => Leadership { leader: None, epoch: self.published.epoch },
            },
            // A member sitting out follows the newest live claim: it takes no part, but it knows who leads.
            (None, None) if self.away != Away::Present => self
                .claims
                .iter()
                .filter(|&(_, &(claim, live))| live && claim >= self.seen)
                .max_by_key(|&(_, &(claim, _))| claim)
                .map_or(Leadership { leader: None, epoch: self.published.epoch }, |(&l, &(claim, _))| Leadership {
                    leader: Some(l),
                    epoch: claim.bits(),
                }),
            (None, None) => Leadership { leader: None, epoch: self.published.epoch },
        };
        if self.seen > self.saved_seen {
            self.persist(cx);
        }
        if let Some(epoch) = ended {
            cx.notify(Notice::Ended { epoch: epoch.bits() });
        }
        if let Some(epoch) = granted {
            cx.notify(Notice::Elected { epoch: epoch.bits() });
        }
        if shown != self.published {
            debug_assert!(shown.epoch >= self.published.epoch, "shown epochs never go backwards");
            self.published = shown;
            cx.notify(Notice::Shows { leader: shown.leader, epoch: shown.epoch });
        }
        if granted.is_some() {
            self.broadcast(cx, Body::Announce);
        }
    }

    /// Stops taking part in elections: until the resign hold is over (`hold`), or for good.
    fn sit_out(&mut self, cx: &mut Cx<'_, Self>, hold: Option<Duration>) {
        match hold {
            Some(hold) => {
                self.away = Away::Resigned;
                cx.set_timer(MemberTimer::Wake, Span::exactly(hold));
            }
            None => {
                self.away = Away::Left;
                cx.cancel_timer(MemberTimer::Wake);
            }
        }
        self.decide(cx);
        self.broadcast(cx, Body::Leaving);
    }

    /// Back from sitting out: a fresh instance of the algorithm, restarted from its durable state as after a
    /// crash, which initiates.
    fn rejoin(&mut self, cx: &mut Cx<'_, Self>) {
        self.away = Away::Present;
        self.life += 1;
        self.inner = self.algorithm.build(&self.setup.setup());
        self.run(cx, Event::Start { restored: self.durable.clone() });
        self.run(cx, Event::Command(Command::Initiate));
        self.decide(cx);
    }
}

/// The member as the host of its algorithm: every message leaves with the member's header, timers are tagged
/// with the algorithm's instance, durable state is saved with the member's own, and the algorithm's "I am the
/// leader" notices give way to the member's grants.
struct Outer<'a, 'b, 'c, A: Algorithm> {
    cx: &'a mut Cx<'b, Member<A>>,
    life: u32,
    header: (u64, Epoch, Option<Epoch>),
    durable: &'c mut Option<<A::Process as Process>::Durable>,
    saved_seen: &'c mut Epoch,
}

impl<A: Algorithm> Host<A::Process> for Outer<'_, '_, '_, A> {
    fn send(&mut self, to: Port, msg: Cow<'_, <A::Process as Process>::Msg>) {
        let (incarnation, seen, lead) = self.header;
        self.cx.send(to, Packet { incarnation, seen, lead, body: Body::Algorithm(msg.into_owned()) });
    }

    fn set_timer(&mut self, timer: <A::Process as Process>::Timer, after: Span) {
        self.cx.set_timer(MemberTimer::Inner { life: self.life, timer }, after);
    }

    fn cancel_timer(&mut self, timer: <A::Process as Process>::Timer) {
        self.cx.cancel_timer(MemberTimer::Inner { life: self.life, timer });
    }

    fn persist(&mut self, durable: <A::Process as Process>::Durable) {
        let (incarnation, seen, _) = self.header;
        *self.durable = Some(durable);
        *self.saved_seen = seen;
        self.cx.persist(Saved { incarnation, seen, inner: self.durable.clone() });
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
    type Msg = Packet<<A::Process as Process>::Msg>;
    type Timer = MemberTimer<<A::Process as Process>::Timer>;
    type Durable = Saved<<A::Process as Process>::Durable>;

    /// A member learns of a peer's crash from the leader monitor's timeouts and of its restart from its packets:
    /// the network it runs on reports no links.
    const HEARS_LINKS: bool = false;

    /// A new incarnation, durable before the first packet; `seen` and the algorithm's state as they were saved.
    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Self::Durable>) {
        let saved = restored.unwrap_or(Saved { incarnation: 0, seen: Epoch::ZERO, inner: None });
        // The driver restores at most a state file's incarnation or the time in milliseconds, far below the top.
        self.incarnation = saved.incarnation.saturating_add(1);
        self.seen = saved.seen;
        self.published = Leadership { leader: None, epoch: saved.seen.bits() };
        self.durable = saved.inner.clone();
        self.persist(cx);
        if self.seen == Epoch::ZERO {
            // It knows no epoch: it asks, and grants nothing until the answers had time to come back.
            self.asking = Asking::Waiting;
            self.ask(cx);
        }
        self.run(cx, Event::Start { restored: saved.inner });
        self.decide(cx);
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, packet: Self::Msg) {
        let peer = self.peer(from);
        match self.heard.get(&peer) {
            Some(&latest) if packet.incarnation < latest => return cx.rule(rule::OLD_INCARNATION), // Sent before a restart.
            Some(&latest) if packet.incarnation == latest => {}
            _ => {
                self.heard.insert(peer, packet.incarnation);
            }
        }
        let stale_lead = self.hear(cx, from, packet.seen, packet.lead);
        // A member sitting out takes no part: it corrects only a leader's stale grant (and answers a question, below:
        // it still counts towards the asker's majority, since it remembers what it has seen).
        let behind = stale_lead || (self.away == Away::Present && packet.seen < self.seen);
        let present = self.away == Away::Present;
        // A question is answered, except by a member waiting for the answers to its own: the question it sent
        // everybody when it started answers (and if that was lost, the asker asks again).
        let asked = matches!(packet.body, Body::Ask) && self.asking != Asking::Waiting;
        cx.rule(match &packet.body {
            Body::Algorithm(_) | Body::Leaving if !present => rule::AWAY,
            Body::Algorithm(_) | Body::Leaving => rule::PASS,
            Body::Announce => rule::ANNOUNCE,
            Body::Ask => rule::ANSWER,
        });
        match packet.body {
            Body::Algorithm(msg) if present => self.run(cx, Event::Message { from, msg }),
            Body::Leaving if present && self.inner.status().leader == Some(peer) => {
                self.run(cx, Event::Command(Command::Initiate));
            }
            _ => {}
        }
        self.decide(cx);
        if behind || asked {
            // Tell the sender about the newer epoch this member knows: a straggler catches up, a leader under an
            // older grant makes itself a newer one, an asker hears one more member.
            cx.send(from, self.packet(Body::Announce));
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Self::Timer) {
        match timer {
            MemberTimer::Inner { life, timer } if life == self.life && self.away == Away::Present => {
                self.run(cx, Event::Timer(timer));
            }
            MemberTimer::Inner { .. } => return cx.rule(rule::OLD_TIMER), // Of an earlier instance, or sitting out.
            MemberTimer::Claim(port) => {
                cx.rule(rule::CLAIM);
                let peer = self.peer(port);
                if let Some((_, live)) = self.claims.get_mut(&peer) {
                    *live = false;
                }
            }
            MemberTimer::Settle => {
                cx.rule(rule::SETTLE);
                self.settled = self.leading;
            }
            MemberTimer::Asked if self.asking != Asking::Answered => {
                cx.rule(rule::ASKED);
                self.asking = Asking::Short;
                if self.heard.len() < self.setup.quorum && self.away != Away::Left {
                    // Too few answers: a question or an answer was lost, or a peer was down. It asks again.
                    self.ask(cx);
                }
            }
            MemberTimer::Asked => {}
            MemberTimer::Wake if self.away == Away::Resigned => {
                cx.rule(rule::WAKE);
                return self.rejoin(cx);
            }
            MemberTimer::Wake => return,
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
            // A member that does not lead has nothing to give up.
            Command::Resign if self.grant.is_some() && self.away == Away::Present => {
                self.run(cx, Event::Command(Command::Resign));
                self.sit_out(cx, Some(self.setup.resign_hold));
            }
            Command::Resign => {}
            Command::Leave if self.away != Away::Left => {
                if self.grant.is_some() {
                    self.run(cx, Event::Command(Command::Resign));
                }
                self.sit_out(cx, None);
            }
            Command::Leave => {}
        }
    }

    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        self.run(cx, Event::Link { port, up });
        self.decide(cx);
    }

    /// The algorithm's state, with the leadership the member shows: the leader whose grant it vouches for, and
    /// that grant's fencing epoch.
    fn status(&self) -> Status {
        let inner = self.inner.status();
        Status { leader: self.published.leader, epoch: self.published.epoch, ..inner }
    }

    fn parent(&self) -> Option<Port> {
        self.inner.parent()
    }

    /// The algorithm's view (inside the leader monitor), with the member's own part: the fencing epoch of its
    /// grant when it leads, and whether it sits out.
    fn view(&self, peers: &Peers<'_>) -> View {
        let view = match self.away {
            Away::Present => self.inner.view(peers),
            Away::Resigned => View::new("sitting out (resigned)"),
            Away::Left => View::new("left"),
        };
        view.with_some("grant", self.grant)
    }

    fn describe_timer(timer: &Self::Timer) -> String {
        match timer {
            MemberTimer::Inner { timer, .. } => A::Process::describe_timer(timer),
            MemberTimer::Claim(_) => "a claim's life".to_owned(),
            MemberTimer::Settle => "settling wait".to_owned(),
            MemberTimer::Wake => "end of the resign hold".to_owned(),
            MemberTimer::Asked => "answers to the question due".to_owned(),
        }
    }
}

/// The member's own message kinds, after the algorithm's (in the order of [`Packet::kind_index`]), which
/// closed-form bounds of one election leave out.
const MEMBER_KINDS: &[&str] = &["announce", "leaving", "ask"];
/// The kinds of the messages the leader monitor and the member add around an algorithm's: the monitor's
/// (`heartbeat`, `join`, `hop-ack`, `pre-vote`, `pre-vote-reply`) then the member's own (spelled out, as a bound's
/// measure is a static list; a test checks that it is their concatenation).
pub const MEMBER_AND_MONITOR_KINDS: &[&str] =
    &["heartbeat", "join", "hop-ack", "pre-vote", "pre-vote-reply", "announce", "leaving", "ask"];

impl<A: Algorithm> Algorithm for Deployed<A> {
    type Process = Member<A>;
    const INFO: &'static Info = A::INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(A::from_params(params)?, MemberConfig::new(2, Duration::ZERO)))
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        self.inner.validate(ids)
    }

    fn build(&self, setup: &Setup<'_>) -> Member<A> {
        let t = setup.delay_bound.expect("a member needs a delay bound; drivers check it");
        debug_assert!(setup.shape == Shape::Complete, "members form a full mesh; drivers check it");
        let kept = Kept {
            id: setup.id,
            rank: setup.rank,
            neighbors: setup.neighbors.to_vec(),
            ring: setup.ring,
            ring_order: setup.ring_order.to_vec(),
            shape: setup.shape,
            delay_bound: setup.delay_bound,
            diameter: setup.diameter,
            claim_ttl: t * self.config.claim_ttl,
            settle: t * self.config.settle,
            ask: t * 2 + Duration::TICK,
            // With itself, a majority of the `n` members: `⌊n/2⌋` others, `⌈(n − 1)/2⌉`.
            quorum: setup.neighbors.len().div_ceil(2),
            resign_hold: self.config.resign_hold,
            bug: self.config.bug,
        };
        Member {
            inner: self.inner.build(&kept.setup()),
            algorithm: Arc::new(self.inner.clone()),
            setup: Arc::new(kept),
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
            published: Leadership { leader: None, epoch: 0 },
            away: Away::Present,
            durable: None,
            effects: Vec::new(),
        }
    }

    /// What a member promises: fencing epochs unique to one grant (P-Unique on the member's grants) always, and
    /// once the run has settled, the algorithm's own end-of-run properties and, for single-leader algorithms, every
    /// live member showing one live leader.
    fn checks(&self) -> Vec<Check> {
        let mut checks = vec![Check::always(Property::Uniqueness)];
        checks.extend(self.inner.checks().into_iter().filter(|c| c.when == When::AtEnd));
        if A::INFO.elects == Elects::OneLeader {
            for property in [Property::Agreement, Property::LiveLeader] {
                if !checks.contains(&Check::at_end(property)) {
                    checks.push(Check::at_end(property));
                }
            }
        }
        checks
    }

    fn winner(&self) -> Winner {
        self.inner.winner()
    }

    /// One election, then the settling wait before the grant (no earlier than the end of a first start's
    /// question, a round trip) and the grant's announcement.
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        let grant = (self.inner.election_time(facts, t) + t * self.config.settle).max(t * 2 + Duration::TICK);
        grant + t
    }

    /// The algorithm's settling time, then a rival's claim may live out its life, then the settling wait and the
    /// grant's announcement.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        let inner = self.inner.settle_time(facts, delay_bound)?;
        Some(inner + t * (self.config.claim_ttl + self.config.settle + 2) + Duration::TICK)
    }

    /// The algorithm's bounds, not counting the member's own packets (nor the leader monitor's).
    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        let mut bounds = self.inner.bounds(facts);
        for bound in &mut bounds {
            bound.measure = match bound.measure {
                Measure::Messages => Measure::AllBut(MEMBER_KINDS),
                Measure::AllBut(_) => Measure::AllBut(MEMBER_AND_MONITOR_KINDS),
                kinds @ Measure::Kinds(_) => kinds,
            };
        }
        bounds
    }
}

/// How a member's algorithm is timed: what the leader monitor's timing depends on besides the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// The leader's heartbeat period, in multiples of `T`.
    pub heartbeat: u64,
    /// How long a member that resigned sits out.
    pub resign_hold: Duration,
    /// A planted flaw, if any.
    pub bug: Option<Bug>,
}

impl Timing {
    /// Heartbeats every `heartbeat·T`, a resign hold of `resign_hold`, no planted flaw.
    pub fn new(heartbeat: u64, resign_hold: Duration) -> Self {
        Self { heartbeat, resign_hold, bug: None }
    }
}

/// A consumer of the process a member runs, which needs to know it is one (the network runtime reads the member's
/// incarnation and leadership). Any [`Driver`] is one through [`dispatch`].
pub trait MemberDriver {
    /// What driving produces.
    type Output;
    /// Runs `member`.
    fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> Self::Output;
}

/// A [`Driver`] as a [`MemberDriver`].
struct AsDriver<D>(D);

impl<D: Driver> MemberDriver for AsDriver<D> {
    type Output = D::Output;
    fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> D::Output {
        self.0.drive(member)
    }
}

/// A driver of the process a member runs: hands [`MemberDriver::drive_member`] the algorithm wrapped as a member,
/// in the leader monitor if it elects one leader (the Invitation algorithm keeps groups and finds failed
/// coordinators itself). The runtime, the simulator's and the checker's `--monitor` all go through it, so all
/// three run one process.
pub struct Deploy<D> {
    /// The driver.
    pub driver: D,
    /// The members' timing.
    pub timing: Timing,
    /// The network the members form, for the leader monitor's timing.
    pub network: MonitorNetwork,
}

impl<D: MemberDriver> Driver for Deploy<D> {
    type Output = D::Output;

    fn drive<A: Algorithm>(self, algorithm: A) -> D::Output {
        let config =
            MemberConfig { bug: self.timing.bug, ..MemberConfig::new(self.timing.heartbeat, self.timing.resign_hold) };
        if A::INFO.elects == Elects::OneLeader {
            let monitor = MonitorConfig {
                deaf_leaders: self.timing.bug == Some(Bug::DeafLeaders),
                ..MonitorConfig::for_network(&algorithm, &self.network, self.timing.heartbeat)
            };
            self.driver.drive_member(Deployed::new(LeaderMonitor::new(algorithm, monitor), config))
        } else {
            self.driver.drive_member(Deployed::new(algorithm, config))
        }
    }
}

/// Looks `name` up and hands `driver` the process a member runs it as ([`Deploy`]): the member's own parameter
/// (`monitor-bug`) is taken out of `params`, the rest go to the algorithm.
pub fn dispatch<D: Driver>(
    name: &str,
    params: &Params,
    timing: Timing,
    network: MonitorNetwork,
    driver: D,
) -> Result<D::Output, crate::RegistryError> {
    dispatch_member(name, params, timing, network, AsDriver(driver))
}

/// [`dispatch`] for a [`MemberDriver`].
pub fn dispatch_member<D: MemberDriver>(
    name: &str,
    params: &Params,
    timing: Timing,
    network: MonitorNetwork,
    driver: D,
) -> Result<D::Output, crate::RegistryError> {
    let (bug, params) = Bug::take(params)?;
    crate::registry::dispatch(name, &params, Deploy { driver, timing: Timing { bug, ..timing }, network })
}

/// How long a member of a simulated or model-checked cluster sits out after it resigns, in multiples of `T`.
pub const RESIGN_HOLD: u64 = 10;

/// The algorithms a member can run ([`deployable`]), in presentation order.
pub fn deployable_algorithms() -> impl Iterator<Item = &'static Info> {
    crate::registry::all().iter().copied().filter(|info| deployable(info).is_ok())
}

/// Why a member cannot run an algorithm ([`deployable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotDeployable {
    /// It elects a leader per connected component of a mobile network.
    #[error("{0} elects a leader per connected component of a mobile network; members form a full mesh")]
    PerComponent(&'static str),
    /// It floods a general graph.
    #[error("{0} floods a general graph; members form a full mesh, where the complete-graph and ring algorithms run")]
    GeneralGraph(&'static str),
    /// It runs in lock-step rounds from time 0.
    #[error("{0} runs in lock-step rounds from time 0; members start and restart apart")]
    Lockstep(&'static str),
}

/// Whether a member can run `info`'s algorithm: on a full mesh, an algorithm for a complete graph or a ring (over
/// the members' logical ring), electing one leader or one per group. `Err` says why not.
pub fn deployable(info: &Info) -> Result<(), NotDeployable> {
    if info.elects == Elects::PerComponent {
        return Err(NotDeployable::PerComponent(info.name));
    }
    if info.needs == Needs::Connected {
        return Err(NotDeployable::GeneralGraph(info.name));
    }
    if info.lockstep {
        return Err(NotDeployable::Lockstep(info.name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::hash::DefaultHasher;

    use elect_core::{Effect, Instant};

    use super::*;
    use crate::algorithm::{Initiators, Showcase};

    /// A test algorithm whose view of the leader the tests set: each message it gets, and each timer, is a
    /// [`Script`] it obeys.
    #[derive(Clone, Debug)]
    struct Scripted;

    /// What the test algorithm is told to believe.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    enum Script {
        /// You are the leader: on becoming it, say so and tell everybody, as a coordinator would.
        Lead,
        /// Follow this member.
        Follow(NodeId),
        /// There is no leader: an election is on.
        Elect,
    }
    elect_core::message_kinds!(Script { Lead => "lead", Follow => "follow", Elect => "elect" });
    impl elect_core::Validate for Script {
        fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
            Ok(())
        }
    }

    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct ScriptedProcess {
        me: NodeId,
        others: Vec<Port>,
        status: Status,
        /// How many times it was told to initiate, over all its instances (it is its durable state).
        initiated: u32,
        /// Whether this instance was told to resign.
        resigned: bool,
    }

    impl ScriptedProcess {
        fn obey(&mut self, cx: &mut Cx<'_, Self>, script: Script) {
            let was_leader = self.status.leader == Some(self.me);
            self.status = match script {
                Script::Lead => Status::normal(Some(self.me), 0),
                Script::Follow(leader) => Status::normal(Some(leader), 0),
                Script::Elect => Status::election(0),
            };
            if script == Script::Lead && !was_leader {
                cx.notify(Notice::Elected { epoch: 0 });
                for &port in &self.others {
                    cx.send(port, Script::Follow(self.me));
                }
            }
        }
    }

    impl Process for ScriptedProcess {
        type Msg = Script;
        type Timer = Script;
        type Durable = u32;

        fn on_start(&mut self, _: &mut Cx<'_, Self>, restored: Option<u32>) {
            self.initiated = restored.unwrap_or(0);
        }

        fn on_message(&mut self, cx: &mut Cx<'_, Self>, _: Port, script: Script) {
            self.obey(cx, script);
        }

        fn on_timer(&mut self, cx: &mut Cx<'_, Self>, script: Script) {
            self.obey(cx, script);
        }

        /// Resigning is only recorded: the member, not the algorithm, must stop showing its leadership.
        fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
            match cmd {
                Command::Initiate => {
                    self.initiated += 1;
                    cx.persist(self.initiated);
                }
                Command::Resign => self.resigned = true,
                Command::Leave => {}
            }
        }

        fn status(&self) -> Status {
            self.status
        }
    }

    static INFO: Info = Info {
        name: "scripted",
        aliases: &[],
        title: "a test algorithm",
        model: "any",
        seed: "none",
        needs: Needs::Complete,
        timing: crate::algorithm::Timing::Synchronous,
        links: crate::algorithm::LinkOrder::Any,
        elects: Elects::OneLeader,
        lockstep: false,
        params: &[],
        rules: &[],
        showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "" },
    };

    impl Algorithm for Scripted {
        type Process = ScriptedProcess;
        const INFO: &'static Info = &INFO;

        fn from_params(_: &Params) -> Result<Self, ParamError> {
            Ok(Self)
        }

        fn build(&self, setup: &Setup<'_>) -> ScriptedProcess {
            ScriptedProcess {
                me: setup.id,
                others: setup.neighbors.iter().map(|n| n.port).collect(),
                status: Status::election(0),
                initiated: 0,
                resigned: false,
            }
        }

        fn checks(&self) -> Vec<Check> {
            Vec::new()
        }

        fn election_time(&self, _: &Facts, t: Duration) -> Duration {
            t
        }

        fn bounds(&self, _: &Facts) -> Vec<Bound> {
            Vec::new()
        }
    }

    type Node = Member<Scripted>;
    type Effects = Vec<EffectOf<Node>>;

    const A: NodeId = NodeId(1);
    const B: NodeId = NodeId(2);
    const C: NodeId = NodeId(3);
    /// The delay bound: the settling wait is `T`, a claim lives `(2 + 2)·T`.
    const T: Duration = Duration::from_ticks(1000);
    const HOLD: Duration = Duration::from_ticks(10_000);

    /// Fencing epoch `round.member`.
    fn ballot(round: u32, member: NodeId) -> Epoch {
        Epoch::of(round, member)
    }

    /// Member `me` of the complete graph on A, B and C (its ports lead to the other two in the order of their ids),
    /// not started yet.
    fn build(me: NodeId, config: MemberConfig) -> Node {
        build_among(me, &[A, B, C], config)
    }

    /// Member `me` of the complete graph on `members` (ids from 1 up, in order; its ports lead to the others in
    /// the order of their ids), not started yet.
    fn build_among(me: NodeId, members: &[NodeId], config: MemberConfig) -> Node {
        crate::testing::on_complete_graph(me, members, T, |setup| Deployed::new(Scripted, config).build(setup))
    }

    /// Member `me`, started from `restored`, past the question a member that knows no epoch asks at its start.
    fn start(me: NodeId, restored: Option<Saved<u32>>) -> Node {
        let mut m = build(me, MemberConfig::new(2, HOLD));
        step(&mut m, Event::Start { restored });
        step(&mut m, Event::Timer(MemberTimer::Asked));
        m
    }

    fn step_at(m: &mut Node, now: u64, event: EventOf<Node>) -> Effects {
        let mut effects = Vec::new();
        driver::handle(m, Instant::from_ticks(now), event, &mut effects);
        effects
    }

    fn step(m: &mut Node, event: EventOf<Node>) -> Effects {
        step_at(m, 0, event)
    }

    /// The port at which `me` hears `peer`.
    fn port(me: NodeId, peer: NodeId) -> Port {
        Port(if peer < me { peer.0 - 1 } else { peer.0 - 2 })
    }

    /// `m` gets `packet` from `peer`.
    fn hear(m: &mut Node, peer: NodeId, packet: Packet<Script>) -> Effects {
        let from = port(m.setup.id, peer);
        step(m, Event::Message { from, msg: packet })
    }

    /// A packet of incarnation 1 of a sender that has seen `seen` and leads under `lead`.
    fn packet(seen: Epoch, lead: Option<Epoch>, body: Body<Script>) -> Packet<Script> {
        Packet { incarnation: 1, seen, lead, body }
    }

    /// An algorithm message from a sender that has seen no epoch and does not lead.
    fn says(script: Script) -> Packet<Script> {
        packet(Epoch::ZERO, None, Body::Algorithm(script))
    }

    /// `m`'s algorithm makes it leader (on a message from `by`) and keeps it so for the settling wait: the
    /// effects of the wait's end.
    fn settle_as_leader(m: &mut Node, by: NodeId) -> Effects {
        hear(m, by, says(Script::Lead));
        step(m, Event::Timer(MemberTimer::Settle))
    }

    fn notices(effects: &Effects) -> Vec<Notice> {
        effects.iter().filter_map(|e| if let Effect::Notify(n) = e { Some(*n) } else { None }).collect()
    }

    fn elected(effects: &Effects) -> Vec<Epoch> {
        notices(effects)
            .into_iter()
            .filter_map(|n| if let Notice::Elected { epoch } = n { Some(Epoch::from_bits(epoch)) } else { None })
            .collect()
    }

    fn sends(effects: &Effects) -> Vec<(Port, Packet<Script>)> {
        effects
            .iter()
            .filter_map(|e| if let Effect::Send { to, msg } = e { Some((*to, msg.clone())) } else { None })
            .collect()
    }

    fn timers_set(effects: &Effects) -> Vec<(MemberTimer<Script>, Span)> {
        effects
            .iter()
            .filter_map(|e| if let Effect::SetTimer { timer, after } = e { Some((*timer, *after)) } else { None })
            .collect()
    }

    /// What a member sends to each other member, by port: one packet with this header and body.
    fn to_everybody(
        incarnation: u64,
        seen: Epoch,
        lead: Option<Epoch>,
        body: Body<Script>,
    ) -> Vec<(Port, Packet<Script>)> {
        [Port(0), Port(1)].map(|p| (p, Packet { incarnation, seen, lead, body: body.clone() })).to_vec()
    }

    fn hash(m: &Node) -> u64 {
        let mut h = DefaultHasher::new();
        m.hash(&mut h);
        h.finish()
    }

    #[test]
    fn a_new_incarnation_is_one_more_than_the_restored_one_and_durable_at_start() {
        let mut a = build(A, MemberConfig::new(2, HOLD));
        let effects = step(&mut a, Event::Start { restored: None });
        // It knows no epoch: it asks (see below).
        let question = Packet { incarnation: 1, seen: Epoch::ZERO, lead: None, body: Body::Ask };
        assert_eq!(
            effects,
            [
                Effect::Persist(Saved { incarnation: 1, seen: Epoch::ZERO, inner: None }),
                Effect::SetTimer { timer: MemberTimer::Asked, after: Span::exactly(T * 2 + Duration::TICK) },
                Effect::Send { to: port(A, B), msg: question.clone() },
                Effect::Send { to: port(A, C), msg: question },
            ]
        );
        assert_eq!(
            (a.incarnation(), a.seen(), a.leadership()),
            (1, Epoch::ZERO, Leadership { leader: None, epoch: 0 })
        );

        let mut b = build(B, MemberConfig::new(2, HOLD));
        let restored = Saved { incarnation: 4, seen: ballot(2, C), inner: Some(7) };
        let effects = step(&mut b, Event::Start { restored: Some(restored) });
        assert_eq!(effects, [Effect::Persist(Saved { incarnation: 5, seen: ballot(2, C), inner: Some(7) })]);
        assert_eq!((b.incarnation(), b.seen()), (5, ballot(2, C)));
        assert_eq!(
            b.leadership(),
            Leadership { leader: None, epoch: ballot(2, C).bits() },
            "the last epoch it had seen"
        );
        assert_eq!(b.inner().initiated, 7, "the algorithm restarts from its durable state");
    }

    #[test]
    fn a_leader_grants_itself_an_epoch_above_all_it_has_seen() {
        let mut c = start(C, Some(Saved { incarnation: 1, seen: ballot(4, A), inner: None }));
        // The algorithm's own "I am the leader" gives way to the member's grant: only the settling wait starts,
        // and the algorithm's coordinator messages leave with the member's header.
        let effects = hear(&mut c, A, says(Script::Lead));
        assert_eq!(notices(&effects), []);
        assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
        // A, which has seen no epoch, is told of the one C knows.
        let mut expected = to_everybody(2, ballot(4, A), None, Body::Algorithm(Script::Follow(C)));
        expected.push((port(C, A), Packet { incarnation: 2, seen: ballot(4, A), lead: None, body: Body::Announce }));
        assert_eq!(sends(&effects), expected);

        let effects = step(&mut c, Event::Timer(MemberTimer::Settle));
        let granted = ballot(5, C);
        assert_eq!(elected(&effects), [granted]);
        assert_eq!(sends(&effects), to_everybody(2, granted, Some(granted), Body::Announce));
        assert_eq!((c.grant(), c.seen()), (Some(granted), granted));
        assert_eq!(c.leadership(), Leadership { leader: Some(C), epoch: granted.bits() });
        // Still leading: nothing new (but A, whose packet shows no epoch, is told the grant).
        let correction = Packet { incarnation: 2, seen: granted, lead: Some(granted), body: Body::Announce };
        assert_eq!(hear(&mut c, A, says(Script::Lead)), [Effect::Send { to: port(C, A), msg: correction }]);

        let effects = hear(&mut c, A, says(Script::Elect));
        let ended = [Notice::Ended { epoch: granted.bits() }, Notice::Shows { leader: None, epoch: granted.bits() }];
        assert_eq!(notices(&effects), ended);
        assert_eq!(c.grant(), None);
    }

    #[test]
    fn a_grown_seen_is_durable_before_the_notices_and_the_announcement_that_depend_on_it() {
        // A follower hears its leader's grant.
        let mut a = start(A, None);
        hear(&mut a, B, says(Script::Follow(B)));
        let effects = hear(&mut a, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
        let shows = Notice::Shows { leader: Some(B), epoch: ballot(1, B).bits() };
        let persist = effects.iter().position(|e| matches!(e, Effect::Persist(s) if s.seen == ballot(1, B)));
        let notify = effects.iter().position(|e| *e == Effect::Notify(shows));
        assert!(persist.is_some() && persist < notify, "{effects:?}");

        // A leader hears of a newer epoch and grants itself one above it.
        let mut b = start(B, None);
        settle_as_leader(&mut b, A);
        let effects = hear(&mut b, A, packet(ballot(7, C), None, Body::Announce));
        let granted = ballot(8, B);
        let mut expected = vec![
            Effect::Persist(Saved { incarnation: 1, seen: granted, inner: None }),
            Effect::Notify(Notice::Ended { epoch: ballot(1, B).bits() }),
            Effect::Notify(Notice::Elected { epoch: granted.bits() }),
            Effect::Notify(Notice::Shows { leader: Some(B), epoch: granted.bits() }),
        ];
        let announce = to_everybody(1, granted, Some(granted), Body::Announce);
        expected.extend(announce.into_iter().map(|(to, msg)| Effect::Send { to, msg }));
        assert_eq!(effects, expected);
    }

    #[test]
    fn a_follower_vouches_only_for_the_newest_grant_and_corrects_older_ones() {
        let mut a = start(A, None);
        // The algorithm names B before B's grant arrived: no leader yet.
        assert_eq!(hear(&mut a, B, says(Script::Follow(B))), []);
        assert_eq!(a.leadership(), Leadership { leader: None, epoch: 0 });
        let effects = hear(&mut a, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
        assert_eq!(a.leadership(), Leadership { leader: Some(B), epoch: ballot(1, B).bits() });
        assert_eq!(sends(&effects), []);
        // C has seen a newer epoch: B's grant is stale, and B must hear of it.
        hear(&mut a, C, packet(ballot(3, C), None, Body::Announce));
        assert_eq!(a.leadership(), Leadership { leader: None, epoch: ballot(1, B).bits() });
        let effects = hear(&mut a, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
        let correction = Packet { incarnation: 1, seen: ballot(3, C), lead: None, body: Body::Announce };
        assert_eq!(sends(&effects), [(port(A, B), correction)]);
        assert_eq!(a.leadership(), Leadership { leader: None, epoch: ballot(1, B).bits() });
        // B's newer grant.
        let effects = hear(&mut a, B, packet(ballot(4, B), Some(ballot(4, B)), Body::Announce));
        assert_eq!(a.leadership(), Leadership { leader: Some(B), epoch: ballot(4, B).bits() });
        assert_eq!(sends(&effects), []);
    }

    #[test]
    fn a_superseded_leader_stops_and_grants_itself_a_newer_epoch() {
        let mut b = start(B, None);
        assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(1, B)]);
        // A still claims an older grant: a lower claim, live or not, does not hold B back.
        hear(&mut b, A, packet(ballot(1, A), Some(ballot(1, A)), Body::Announce));
        assert_eq!(b.grant(), Some(ballot(1, B)));
        let effects = hear(&mut b, C, packet(ballot(7, C), None, Body::Announce));
        let replaced = [Notice::Ended { epoch: ballot(1, B).bits() }, Notice::Elected { epoch: ballot(8, B).bits() }];
        assert_eq!(notices(&effects)[..2], replaced);
        assert_eq!(b.grant(), Some(ballot(8, B)));
    }

    #[test]
    fn two_leaders_do_not_outbid_each_other_and_a_live_rival_keeps_its_grant() {
        // C leads under 6.3; B comes back from a crash, the algorithm makes it leader before it heard of C.
        let mut b = start(B, Some(Saved { incarnation: 1, seen: ballot(1, B), inner: None }));
        assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(2, B)]);
        // B hears C claim a higher grant: B stops and grants nothing while C's claim is live.
        let claim = packet(ballot(6, C), Some(ballot(6, C)), Body::Announce);
        let effects = hear(&mut b, C, claim.clone());
        let stopped =
            [Notice::Ended { epoch: ballot(2, B).bits() }, Notice::Shows { leader: None, epoch: ballot(2, B).bits() }];
        assert_eq!(notices(&effects), stopped);
        assert_eq!(b.grant(), None);
        assert_eq!(notices(&hear(&mut b, C, claim)), [], "C's claim is still live");
        // C stops claiming (it follows B now): B grants itself an epoch above C's.
        assert_eq!(elected(&hear(&mut b, C, packet(ballot(6, C), None, Body::Announce))), [ballot(7, B)]);

        // C, meanwhile, hears B's old, lower claim: it keeps its grant, and tells B of its epoch.
        let mut c = start(C, None);
        settle_as_leader(&mut c, A);
        let effects = hear(&mut c, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
        assert_eq!(notices(&effects), []);
        assert_eq!(c.grant(), Some(ballot(1, C)));
        let correction = Packet { incarnation: 1, seen: ballot(1, C), lead: Some(ballot(1, C)), body: Body::Announce };
        assert_eq!(sends(&effects), [(port(C, B), correction)]);
    }

    #[test]
    fn a_silent_rivals_claim_expires() {
        let mut b = start(B, None);
        let effects = hear(&mut b, C, packet(ballot(6, C), Some(ballot(6, C)), Body::Announce));
        let life = Span::exactly(T * 4 + Duration::TICK);
        assert_eq!(timers_set(&effects), [(MemberTimer::Claim(port(B, C)), life)], "(heartbeat + 2)·T, then a tick");
        assert_eq!(elected(&settle_as_leader(&mut b, A)), []);
        assert_eq!(b.grant(), None);
        let effects = step(&mut b, Event::Timer(MemberTimer::Claim(port(B, C))));
        assert_eq!(elected(&effects), [ballot(7, B)]);
    }

    #[test]
    fn a_member_grants_only_once_the_algorithm_kept_it_leader_for_the_settling_time() {
        let mut a = start(A, None);
        let effects = hear(&mut a, B, says(Script::Lead));
        assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
        assert_eq!(elected(&effects), []);
        // It led for a moment only (another epoch's coordinator arrived): nothing granted, the wait starts over.
        let effects = hear(&mut a, B, says(Script::Follow(B)));
        assert_eq!(effects, [Effect::CancelTimer { timer: MemberTimer::Settle }]);
        assert_eq!(step(&mut a, Event::Timer(MemberTimer::Settle)), [], "a wait that ended too late");
        let effects = hear(&mut a, B, says(Script::Lead));
        assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
        assert_eq!(elected(&effects), []);
        assert_eq!(elected(&step(&mut a, Event::Timer(MemberTimer::Settle))), [ballot(1, A)]);
    }

    #[test]
    fn a_packet_of_an_older_incarnation_of_its_sender_changes_nothing() {
        let mut a = start(A, None);
        hear(
            &mut a,
            B,
            Packet { incarnation: 3, seen: Epoch::ZERO, lead: None, body: Body::Algorithm(Script::Follow(B)) },
        );
        let before = a.clone();
        let old = Packet { incarnation: 2, seen: ballot(9, B), lead: Some(ballot(9, B)), body: Body::Announce };
        assert_eq!(hear(&mut a, B, old.clone()), []);
        assert_eq!(a, before);
        assert_eq!(a.seen(), Epoch::ZERO);
        // The same packet from its newer incarnation is heard.
        hear(&mut a, B, Packet { incarnation: 4, ..old });
        assert_eq!(a.leadership(), Leadership { leader: Some(B), epoch: ballot(9, B).bits() });
    }

    #[test]
    fn a_resigning_leader_ends_its_grant_tells_everybody_and_sits_out() {
        let mut b = start(B, None);
        settle_as_leader(&mut b, A);
        let effects = step(&mut b, Event::Command(Command::Resign));
        assert!(b.inner().resigned, "the algorithm is told");
        let ended =
            [Notice::Ended { epoch: ballot(1, B).bits() }, Notice::Shows { leader: None, epoch: ballot(1, B).bits() }];
        assert_eq!(notices(&effects), ended);
        assert_eq!(sends(&effects), to_everybody(1, ballot(1, B), None, Body::Leaving));
        assert_eq!(timers_set(&effects), [(MemberTimer::Wake, Span::exactly(HOLD))]);
        assert_eq!(b.grant(), None);
        // While it sits out, the algorithm hears nothing: neither its timers nor the others' messages.
        let timer = MemberTimer::Inner { life: 0, timer: Script::Elect };
        assert_eq!(step(&mut b, Event::Timer(timer)), []);
        assert_eq!(hear(&mut b, C, says(Script::Follow(C))), []);
        assert_eq!(b.inner().status(), Status::normal(Some(B), 0));
        assert_eq!(b.leadership(), Leadership { leader: None, epoch: ballot(1, B).bits() });
    }

    #[test]
    fn after_the_resign_hold_the_algorithm_restarts_from_its_durable_state() {
        let mut b = start(B, None);
        step(&mut b, Event::Command(Command::Initiate));
        settle_as_leader(&mut b, A);
        step(&mut b, Event::Command(Command::Resign));
        let effects = step(&mut b, Event::Timer(MemberTimer::Wake));
        // A fresh instance, restarted from its durable state, which initiates.
        assert_eq!((b.inner().initiated, b.inner().resigned), (2, false));
        assert_eq!(b.inner().status(), Status::election(0));
        assert_eq!(effects, [Effect::Persist(Saved { incarnation: 1, seen: ballot(1, B), inner: Some(2) })]);
        // The timers of its earlier instance are ignored; the new one's are not.
        assert_eq!(step(&mut b, Event::Timer(MemberTimer::Inner { life: 0, timer: Script::Lead })), []);
        let effects = step(&mut b, Event::Timer(MemberTimer::Inner { life: 1, timer: Script::Lead }));
        assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
        assert_eq!(elected(&step(&mut b, Event::Timer(MemberTimer::Settle))), [ballot(2, B)]);
    }

    #[test]
    fn resigning_a_member_that_does_not_lead_does_nothing() {
        let mut a = start(A, None);
        hear(&mut a, B, says(Script::Follow(B)));
        let before = a.clone();
        assert_eq!(step(&mut a, Event::Command(Command::Resign)), []);
        assert_eq!(a, before);
        assert!(!a.inner().resigned);
    }

    #[test]
    fn a_member_that_leaves_sits_out_for_good() {
        let mut b = start(B, None);
        settle_as_leader(&mut b, A);
        let effects = step(&mut b, Event::Command(Command::Leave));
        assert!(b.inner().resigned, "the algorithm is told to resign");
        assert_eq!(notices(&effects)[0], Notice::Ended { epoch: ballot(1, B).bits() });
        assert_eq!(sends(&effects), to_everybody(1, ballot(1, B), None, Body::Leaving));
        assert_eq!(timers_set(&effects), [], "no end to the hold");
        let before = b.clone();
        for event in [
            Event::Timer(MemberTimer::Wake),
            Event::Command(Command::Initiate),
            Event::Command(Command::Leave),
            Event::Timer(MemberTimer::Inner { life: 0, timer: Script::Lead }),
        ] {
            assert_eq!(step(&mut b, event.clone()), [], "{event:?}");
        }
        assert_eq!(hear(&mut b, A, says(Script::Lead)), []);
        assert_eq!(b, before);
    }

    #[test]
    fn a_leaving_leader_makes_the_algorithm_initiate() {
        let mut a = start(A, None);
        hear(&mut a, B, says(Script::Follow(B)));
        hear(&mut a, C, packet(Epoch::ZERO, None, Body::Leaving));
        assert_eq!(a.inner().initiated, 0, "C was not its leader");
        let effects = hear(&mut a, B, packet(Epoch::ZERO, None, Body::Leaving));
        assert_eq!(a.inner().initiated, 1);
        assert_eq!(effects, [Effect::Persist(Saved { incarnation: 1, seen: Epoch::ZERO, inner: Some(1) })]);
    }

    #[test]
    fn the_planted_same_epoch_flaw_makes_a_grant_reuse_the_epoch_it_replaces() {
        for (bug, granted) in [(None, ballot(5, B)), (Some(Bug::SameEpoch), ballot(4, A))] {
            let mut b = build(B, MemberConfig { bug, ..MemberConfig::new(2, HOLD) });
            step(&mut b, Event::Start { restored: Some(Saved { incarnation: 1, seen: ballot(4, A), inner: None }) });
            assert_eq!(elected(&settle_as_leader(&mut b, C)), [granted], "{bug:?}");
        }
    }

    #[test]
    fn members_that_differ_only_in_when_things_happened_are_equal() {
        let run = |times: [u64; 5], events: usize| {
            let mut b = build(B, MemberConfig::new(2, HOLD));
            let claim = packet(ballot(6, C), Some(ballot(6, C)), Body::Announce);
            let script = [
                Event::Start { restored: Some(Saved { incarnation: 1, seen: ballot(1, A), inner: None }) },
                Event::Message { from: port(B, C), msg: claim },
                Event::Message { from: port(B, A), msg: says(Script::Lead) },
                Event::Timer(MemberTimer::Settle),
                Event::Timer(MemberTimer::Claim(port(B, C))),
            ];
            for (at, event) in times.into_iter().zip(script).take(events) {
                step_at(&mut b, at, event);
            }
            b
        };
        let early = run([0, 1, 2, 3, 4], 5);
        let late = run([100, 2_000, 2_500, 3_500, 6_001], 5);
        assert_eq!(early.grant(), Some(ballot(7, B)));
        assert_eq!(early, late);
        assert_eq!(hash(&early), hash(&late));
        assert_ne!(early, run([0, 1, 2, 3, 4], 4), "the claim's expiry is in the state");
    }

    #[test]
    fn a_member_that_knows_no_epoch_asks_and_grants_nothing_until_the_answers_are_in() {
        // Its state was lost: the driver restores only an incarnation floor.
        let mut c = build(C, MemberConfig::new(2, HOLD));
        let effects = step(
            &mut c,
            Event::Start { restored: Some(Saved { incarnation: 90_000, seen: Epoch::ZERO, inner: None }) },
        );
        assert_eq!(c.incarnation(), 90_001, "newer than every incarnation it had");
        let persist = effects.iter().position(|e| matches!(e, Effect::Persist(s) if s.incarnation == 90_001));
        let first_send = effects.iter().position(|e| matches!(e, Effect::Send { .. }));
        assert!(persist.is_some() && persist < first_send, "the incarnation is durable first: {effects:?}");
        let question = Packet { incarnation: 90_001, seen: Epoch::ZERO, lead: None, body: Body::Ask };
        assert_eq!(sends(&effects), [(port(C, A), question.clone()), (port(C, B), question)]);
        assert_eq!(timers_set(&effects), [(MemberTimer::Asked, Span::exactly(T * 2 + Duration::TICK))]);
        // The algorithm makes it leader at once; it grants nothing while the question is out.
        assert_eq!(elected(&settle_as_leader(&mut c, A)), []);
        // A's answer: it has seen 6.B.
        assert_eq!(elected(&hear(&mut c, A, packet(ballot(6, B), None, Body::Announce))), []);
        // The round trip is over: its grant is above what its peers know.
        assert_eq!(elected(&step(&mut c, Event::Timer(MemberTimer::Asked))), [ballot(7, C)]);
        // A member that knows an epoch asks nothing.
        let mut b = build(B, MemberConfig::new(2, HOLD));
        let effects =
            step(&mut b, Event::Start { restored: Some(Saved { incarnation: 3, seen: ballot(2, A), inner: None }) });
        assert_eq!(sends(&effects), []);
        assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(3, B)]);
    }

    #[test]
    fn a_packet_stamped_with_an_older_epoch_is_answered_with_the_newer_one() {
        let mut a = start(A, Some(Saved { incarnation: 1, seen: ballot(5, C), inner: None }));
        // B asks (or straggles): it has seen nothing newer than 2.B.
        let effects = hear(&mut a, B, packet(ballot(2, B), None, Body::Algorithm(Script::Follow(C))));
        let correction = Packet { incarnation: 2, seen: ballot(5, C), lead: None, body: Body::Announce };
        assert_eq!(sends(&effects), [(port(A, B), correction)]);
        // A sender that knows as much is not answered.
        assert_eq!(sends(&hear(&mut a, C, packet(ballot(5, C), None, Body::Announce))), []);
    }

    #[test]
    fn a_question_is_answered_even_by_a_member_that_knows_no_epoch_unless_it_is_asking_too() {
        let question = |incarnation| Packet { incarnation, seen: Epoch::ZERO, lead: None, body: Body::Ask };
        let answer = |incarnation| Packet { incarnation, seen: Epoch::ZERO, lead: None, body: Body::Announce };
        // A and B started together, knowing no epoch: their questions cross, and neither answers the other's.
        let mut a = build(A, MemberConfig::new(2, HOLD));
        step(&mut a, Event::Start { restored: None });
        assert_eq!(sends(&hear(&mut a, B, question(1))), []);
        // B restarts (still before any grant) once A's round trip is over: A answers, though it knows no epoch,
        // for the answer tells B that one more member knows none.
        step(&mut a, Event::Timer(MemberTimer::Asked));
        assert_eq!(sends(&hear(&mut a, B, question(2))), [(port(A, B), answer(1))]);
        // The answer is no question: B, past its own round trip, does not answer it.
        let mut b = build(B, MemberConfig::new(2, HOLD));
        step(&mut b, Event::Start { restored: Some(Saved { incarnation: 1, seen: Epoch::ZERO, inner: None }) });
        assert_eq!(sends(&hear(&mut b, A, answer(1))), []);
        // With A, B is a majority of the three: its round trip over, it asks nobody again.
        assert_eq!(sends(&step(&mut b, Event::Timer(MemberTimer::Asked))), []);
        assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(1, B)]);
    }

    #[test]
    fn a_member_short_of_answers_asks_again_and_answers_the_questions_of_others() {
        let question = |incarnation| Packet { incarnation, seen: Epoch::ZERO, lead: None, body: Body::Ask };
        let members = [A, B, C, NodeId(4), NodeId(5)];
        // A, among five, knows no epoch: it needs two others. While it waits, B's question goes unanswered.
        let mut a = build_among(A, &members, MemberConfig::new(2, HOLD));
        step(&mut a, Event::Start { restored: None });
        assert_eq!(sends(&hear(&mut a, B, question(1))), []);
        // Its round trip is over with one answer (B's question): it asks everybody again.
        let effects = step(&mut a, Event::Timer(MemberTimer::Asked));
        assert_eq!(sends(&effects).len(), 4);
        assert!(sends(&effects).iter().all(|(_, p)| p.body == Body::Ask));
        // Short of answers itself, it answers C's question now; a question of an older incarnation of B's, none.
        let answer = Packet { incarnation: 1, seen: Epoch::ZERO, lead: None, body: Body::Announce };
        assert_eq!(sends(&hear(&mut a, C, question(1))), [(port(A, C), answer)]);
        hear(&mut a, B, question(3));
        assert_eq!(sends(&hear(&mut a, B, question(2))), [], "sent before B restarted");
        // With B and C it has its majority: it asks nobody again, and may grant.
        assert_eq!(sends(&step(&mut a, Event::Timer(MemberTimer::Asked))), []);
        assert_eq!(elected(&settle_as_leader(&mut a, C)), [ballot(1, A)]);
    }

    #[test]
    fn the_kinds_left_out_of_bounds_are_the_monitors_then_the_members() {
        use crate::monitor::MONITOR_KINDS;
        assert_eq!(MEMBER_AND_MONITOR_KINDS, [MONITOR_KINDS, MEMBER_KINDS].concat());
        let kinds = Packet::<crate::monitor::MonitorMsg<Script>>::kinds();
        assert!(kinds.ends_with(&[MONITOR_KINDS, MEMBER_KINDS].concat()), "{kinds:?}");
    }

    #[test]
    fn a_member_that_left_asks_nobody_again() {
        let mut c = build(C, MemberConfig::new(2, HOLD));
        step(&mut c, Event::Start { restored: Some(Saved { incarnation: 4, seen: Epoch::ZERO, inner: None }) });
        step(&mut c, Event::Command(Command::Leave));
        assert_eq!(sends(&step(&mut c, Event::Timer(MemberTimer::Asked))), []);
    }

    /// The algorithm's timer that makes it leader: a member's algorithm that hears from nobody elects itself.
    const LEAD_ALONE: MemberTimer<Script> = MemberTimer::Inner { life: 0, timer: Script::Lead };

    #[test]
    fn a_member_that_lost_its_state_and_hears_nobody_grants_itself_nothing() {
        // C lost its state and can reach no peer: its question goes unanswered.
        let mut c = build(C, MemberConfig::new(2, HOLD));
        step(&mut c, Event::Start { restored: Some(Saved { incarnation: 90_000, seen: Epoch::ZERO, inner: None }) });
        // The round trip is over, with no answer: it asks again.
        let question = Packet { incarnation: 90_001, seen: Epoch::ZERO, lead: None, body: Body::Ask };
        let effects = step(&mut c, Event::Timer(MemberTimer::Asked));
        assert_eq!(sends(&effects), [(port(C, A), question.clone()), (port(C, B), question)]);
        assert_eq!(timers_set(&effects), [(MemberTimer::Asked, Span::exactly(T * 2 + Duration::TICK))]);
        // Its algorithm, alone, makes it leader and keeps it so: it would have granted itself 1.C, an epoch as low
        // as they come (perhaps one it granted before it lost its state). It grants nothing, and shows no leader.
        let effects = step(&mut c, Event::Timer(LEAD_ALONE));
        assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
        assert_eq!(elected(&step(&mut c, Event::Timer(MemberTimer::Settle))), []);
        assert_eq!((c.grant(), c.leadership()), (None, Leadership { leader: None, epoch: 0 }));
        assert_eq!(elected(&step(&mut c, Event::Timer(LEAD_ALONE))), [], "still nobody heard");
        // B is reachable again: it has seen 6.A. With B, C is a majority of the three: it grants above 6.A.
        assert_eq!(elected(&hear(&mut c, B, packet(ballot(6, A), None, Body::Announce))), [ballot(7, C)]);
        assert_eq!(c.leadership(), Leadership { leader: Some(C), epoch: ballot(7, C).bits() });
    }

    #[test]
    fn a_member_that_lost_its_state_grants_only_once_it_heard_from_a_majority_and_the_round_trip_is_over() {
        const D: NodeId = NodeId(4);
        const E: NodeId = NodeId(5);
        let five = [A, B, C, D, E];
        // E, among five, lost its state: with itself, two others make a majority.
        let mut e = build_among(E, &five, MemberConfig::new(2, HOLD));
        let effects = step(
            &mut e,
            Event::Start { restored: Some(Saved { incarnation: 90_000, seen: Epoch::ZERO, inner: None }) },
        );
        assert_eq!(sends(&effects).len(), 4, "it asks all four others");
        step(&mut e, Event::Timer(LEAD_ALONE));
        step(&mut e, Event::Timer(MemberTimer::Settle));
        // One answer (A has seen 3.B) within the round trip, then the round trip is over: not enough.
        assert_eq!(elected(&hear(&mut e, A, packet(ballot(3, B), None, Body::Announce))), []);
        assert_eq!(elected(&step(&mut e, Event::Timer(MemberTimer::Asked))), []);
        assert_eq!(e.grant(), None);
        // A second answer (B has seen 5.D): E grants above the highest epoch the two know.
        assert_eq!(elected(&hear(&mut e, B, packet(ballot(5, D), None, Body::Announce))), [ballot(6, E)]);

        // Two answers within the round trip are not enough either: the round trip must be over, so that every
        // reachable member's answer is in.
        let mut e = build_among(E, &five, MemberConfig::new(2, HOLD));
        step(&mut e, Event::Start { restored: Some(Saved { incarnation: 90_000, seen: Epoch::ZERO, inner: None }) });
        step(&mut e, Event::Timer(LEAD_ALONE));
        step(&mut e, Event::Timer(MemberTimer::Settle));
        assert_eq!(elected(&hear(&mut e, A, packet(ballot(3, B), None, Body::Announce))), []);
        assert_eq!(elected(&hear(&mut e, B, packet(ballot(2, B), None, Body::Announce))), []);
        assert_eq!(elected(&hear(&mut e, C, packet(ballot(8, D), None, Body::Announce))), []);
        assert_eq!(elected(&step(&mut e, Event::Timer(MemberTimer::Asked))), [ballot(9, E)]);

        // A member that kept its state needs no answer at all, even alone.
        let mut e = build_among(E, &five, MemberConfig::new(2, HOLD));
        step(&mut e, Event::Start { restored: Some(Saved { incarnation: 4, seen: ballot(2, A), inner: None }) });
        step(&mut e, Event::Timer(LEAD_ALONE));
        assert_eq!(elected(&step(&mut e, Event::Timer(MemberTimer::Settle))), [ballot(3, E)]);
    }

    #[test]
    fn a_stronger_leader_outbids_a_weaker_straggler_that_leads_under_a_newer_epoch() {
        // C leads under 1.C. A was cut off, elected itself on its side under 2.A, and comes back claiming it.
        let mut c = start(C, None);
        assert_eq!(elected(&settle_as_leader(&mut c, B)), [ballot(1, C)]);
        let effects = hear(&mut c, A, packet(ballot(2, A), Some(ballot(2, A)), Body::Announce));
        // C keeps leading, at once under an epoch above A's (no gap, no election), durable before it is told,
        // and tells everybody: A, hearing a stronger member's higher claim, stops.
        let granted = ballot(3, C);
        let mut expected = vec![
            Effect::Persist(Saved { incarnation: 1, seen: granted, inner: None }),
            Effect::Notify(Notice::Ended { epoch: ballot(1, C).bits() }),
            Effect::Notify(Notice::Elected { epoch: granted.bits() }),
            Effect::Notify(Notice::Shows { leader: Some(C), epoch: granted.bits() }),
        ];
        expected.extend(
            to_everybody(1, granted, Some(granted), Body::Announce)
                .into_iter()
                .map(|(to, msg)| Effect::Send { to, msg }),
        );
        let claim_life = Span::exactly(T * 4 + Duration::TICK);
        expected.insert(0, Effect::SetTimer { timer: MemberTimer::Claim(port(C, A)), after: claim_life });
        assert_eq!(effects, expected);
        // A's claim, live or not, does not hold C back: a weaker member's claim never does.
        let mut c = start(C, None);
        hear(&mut c, A, packet(ballot(2, A), Some(ballot(2, A)), Body::Announce));
        assert_eq!(elected(&settle_as_leader(&mut c, B)), [ballot(3, C)]);

        // A, meanwhile, hears C's claim above its own: it stops, and grants nothing while C's claim is live, though
        // its algorithm still names it leader.
        let mut a = start(A, None);
        assert_eq!(elected(&settle_as_leader(&mut a, B)), [ballot(1, A)]);
        let effects = hear(&mut a, C, packet(ballot(3, C), Some(ballot(3, C)), Body::Announce));
        let stopped =
            [Notice::Ended { epoch: ballot(1, A).bits() }, Notice::Shows { leader: None, epoch: ballot(1, A).bits() }];
        assert_eq!(notices(&effects), stopped);
        assert_eq!(a.grant(), None);
        assert_eq!(elected(&hear(&mut a, B, says(Script::Lead))), []);
        // Its algorithm follows C: so does A.
        hear(&mut a, C, packet(ballot(3, C), Some(ballot(3, C)), Body::Algorithm(Script::Follow(C))));
        assert_eq!(a.leadership(), Leadership { leader: Some(C), epoch: ballot(3, C).bits() });
    }
}
