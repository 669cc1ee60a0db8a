//! # The deployed member: everything `elect node` decides, as one sans-IO process
//!
//! A member of a real cluster runs more than an election algorithm: it numbers leadership with fencing epochs,
//! tells the others of its grants, restarts as a new incarnation, resigns, and leaves. [`Member`] is all of it,
//! wrapped around the algorithm a member runs (the leader monitor around a single-leader algorithm, the
//! Invitation algorithm on its own; [`Deploy`] chooses), so that the simulator and the model checker run exactly
//! the process the network runtime runs. The runtime (`elect-net`) is only its I/O shell: sockets, the clock,
//! the state file, keys and HTTP.
//!
//! Members form a full mesh (a complete graph): every member hears every other directly.
//!
//! **Packets.** Every message carries a header: the sender's incarnation, `seen` (the highest fencing epoch it
//! has heard of) and `lead` (its own grant, if it leads). Besides the algorithm's messages there are two of the
//! member's own: `announce` (only the header matters: a new grant, or a correction to a leader whose grant is
//! older than an epoch the sender knows) and `leaving` (the sender resigned or shuts down: if it was your leader,
//! elect another now).
//!
//! **Incarnations.** A member's incarnation is one more than the one it last made durable, and is durable before
//! its first packet. A packet of an older incarnation of its sender than one already heard was sent before the
//! sender restarted; it is dropped unread.
//!
//! **Fencing epochs.** The algorithms' own epochs are not fencing tokens: the Invitation algorithm's group ids are
//! unique but not ordered in time, and a restarted member may start over from a small number. So the member keeps
//! its own, in the ballot format of [`elect_core::epoch`] (`round << 32 | member id`):
//!
//! - `seen`, the highest fencing epoch it has heard of, is durable before anything that depends on it is told.
//! - When the algorithm has made this member leader (its status is `Normal` with itself as leader) and kept it so
//!   for the delay bound `T`, the member grants itself `epoch::next(seen, me)`: higher than anything it has heard
//!   of, and unique to it (its id is in the low bits). The wait of `T` lets a concurrent election's announcement
//!   arrive first: after a leader fails, every member that noticed starts an epoch of its own, and for a moment
//!   each may lead its own.
//! - A follower shows the leader its algorithm names, with that leader's grant, only once it has heard the grant
//!   and the grant is the highest epoch it knows; otherwise it shows no leader (keeping the last epoch) and tells
//!   the leader the higher epoch it knows.
//! - A leader that hears of an epoch higher than its grant stops leading and grants itself a new epoch above it.
//! - While the algorithm has two leaders at once, the newer grant wins: a leader that hears another member *claim*
//!   a higher grant stops leading, and a member the algorithm makes leader grants itself nothing while another
//!   member's claim is live. A claim is live until its claimer has been silent for the leader monitor's suspicion
//!   time, `(heartbeat + 2)·T`, or says it no longer leads.
//!
//! So the leadership a member shows never goes backwards, even across restarts, two grants never share an epoch,
//! and every grant is higher than every grant its member heard of before. The member's grants are its elections:
//! it reports each with [`Notice::Elected`], so P-Unique is judged on fencing epochs, and it shows the leadership
//! of its grant (or of the grant it follows) in its [`Status`].
//!
//! **Resigning and leaving.** `Resign` makes a leader give leadership up: the algorithm is told, the member stops
//! leading, tells the others (`leaving`), and takes no part in elections for the resign hold; then it restarts
//! its algorithm from its durable state, as after a crash. `Leave` (a graceful shutdown) does the same for good.
//!
//! **Time.** The member keeps no instant in its state: a claim's life, the wait before a grant and the resign hold
//! are timers, so two members that differ only in when things happened are equal (the model checker relies on it).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elect_core::driver::{self, Host};
use elect_core::{
    Check, Command, Cx, Duration, EffectOf, Event, EventOf, Message, Neighbor, NodeId, Notice, Port, Process, Property,
    RingPorts, Setup, Shape, Span, State, Status, When, Winner, epoch,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Driver, Elects, Facts, Info, Measure, Needs};
use crate::monitor::{LeaderMonitor, MonitorConfig, MonitorNetwork};
use crate::params::{ParamError, ParamInfo, Params};

/// The member's timing, in multiples of the delay bound `T`, and the resign hold.
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
    pub seen: u64,
    /// The fencing epoch of the sender's current grant, if it leads.
    pub lead: Option<u64>,
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
}

impl<M: Message> Message for Packet<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        let mut kinds = M::kinds().into_owned();
        kinds.extend(["announce", "leaving"]);
        Cow::Owned(kinds)
    }

    fn kind_index(&self) -> usize {
        match &self.body {
            Body::Algorithm(msg) => msg.kind_index(),
            Body::Announce => M::kinds().len(),
            Body::Leaving => M::kinds().len() + 1,
        }
    }

    fn kind(&self) -> &'static str {
        match &self.body {
            Body::Algorithm(msg) => msg.kind(),
            Body::Announce => "announce",
            Body::Leaving => "leaving",
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
}

/// What a member keeps on stable storage.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "D: Serialize + DeserializeOwned")]
pub struct Saved<D> {
    /// Its incarnation.
    pub incarnation: u64,
    /// The highest fencing epoch it has heard of or granted.
    pub seen: u64,
    /// The algorithm's durable state.
    pub inner: Option<D>,
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
    seen: u64,
    /// The `seen` last made durable.
    saved_seen: u64,
    grant: Option<u64>,
    /// The latest claim of each other member that leads, and whether it is live (its claimer was heard from
    /// within the claim's life).
    claims: BTreeMap<NodeId, (u64, bool)>,
    /// The latest incarnation heard from each member.
    heard: BTreeMap<NodeId, u64>,
    /// The algorithm names this member leader; `settled` once it has for the settling wait.
    leading: bool,
    settled: bool,
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
        (u32, u64, u64, u64, Option<u64>),
        (&BTreeMap<NodeId, (u64, bool)>, &BTreeMap<NodeId, u64>),
        (bool, bool, Leadership, Away),
        &Option<<A::Process as Process>::Durable>,
    ) {
        (
            &self.inner,
            (self.life, self.incarnation, self.seen, self.saved_seen, self.grant),
            (&self.claims, &self.heard),
            (self.leading, self.settled, self.published, self.away),
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
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Its current grant, if it leads.
    pub fn grant(&self) -> Option<u64> {
        self.grant
    }

    /// The leadership it shows.
    pub fn leadership(&self) -> Leadership {
        self.published
    }

    fn peer(&self, port: Port) -> NodeId {
        self.setup.neighbors[port.index()].id
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

    /// Sends `body` to every other member.
    fn broadcast(&self, cx: &mut Cx<'_, Self>, body: Body<<A::Process as Process>::Msg>) {
        for n in &self.setup.neighbors {
            cx.send(n.port, self.packet(body.clone()));
        }
    }

    /// Runs one handler of the algorithm and carries its effects out through the member.
    fn run(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<A::Process>) {
        let mut effects = std::mem::take(&mut self.effects);
        driver::handle(&mut self.inner, cx.now(), event, &mut effects);
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
    fn hear(&mut self, cx: &mut Cx<'_, Self>, port: Port, seen: u64, lead: Option<u64>) -> bool {
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
        self.seen = self.seen.max(seen).max(lead.unwrap_or(0));
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
        let rival = self.claims.values().filter(|&&(_, live)| live).map(|&(claim, _)| claim).max();
        // A grant made over a stale epoch is replaced at once, whatever lower claims there are.
        let mut floor = 0;
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
        if leads && self.grant.is_none() && self.settled && rival.is_none_or(|r| r < floor) {
            let g = match self.setup.bug {
                Some(Bug::SameEpoch) if self.seen > 0 => self.seen,
                _ => epoch::next(self.seen, me),
            };
            self.seen = self.seen.max(g);
            self.grant = Some(g);
            granted = Some(g);
        }
        let shown = match (view, self.grant) {
            (_, Some(g)) => Leadership { leader: Some(me), epoch: g },
            (Some(l), None) => match self.claims.get(&l) {
                Some(&(claim, _)) if l != me && claim >= self.seen => Leadership { leader: Some(l), epoch: claim },
                _ => Leadership { leader: None, epoch: self.published.epoch },
            },
            (None, None) => Leadership { leader: None, epoch: self.published.epoch },
        };
        if self.seen > self.saved_seen {
            self.persist(cx);
        }
        if let Some(epoch) = ended {
            cx.notify(Notice::Ended { epoch });
        }
        if let Some(epoch) = granted {
            cx.notify(Notice::Elected { epoch });
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
    header: (u64, u64, Option<u64>),
    durable: &'c mut Option<<A::Process as Process>::Durable>,
    saved_seen: &'c mut u64,
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

    /// A new incarnation, durable before the first packet; `seen` and the algorithm's state as they were saved.
    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Self::Durable>) {
        let saved = restored.unwrap_or(Saved { incarnation: 0, seen: 0, inner: None });
        self.incarnation = saved.incarnation + 1;
        self.seen = saved.seen;
        self.published = Leadership { leader: None, epoch: saved.seen };
        self.durable = saved.inner.clone();
        self.persist(cx);
        self.run(cx, Event::Start { restored: saved.inner });
        self.decide(cx);
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, packet: Self::Msg) {
        let peer = self.peer(from);
        match self.heard.get(&peer) {
            Some(&latest) if packet.incarnation < latest => return, // Sent before its sender restarted.
            Some(&latest) if packet.incarnation == latest => {}
            _ => {
                self.heard.insert(peer, packet.incarnation);
            }
        }
        let stale_lead = self.hear(cx, from, packet.seen, packet.lead);
        let present = self.away == Away::Present;
        match packet.body {
            Body::Algorithm(msg) if present => self.run(cx, Event::Message { from, msg }),
            Body::Leaving if present && self.inner.status().leader == Some(peer) => {
                self.run(cx, Event::Command(Command::Initiate));
            }
            _ => {}
        }
        self.decide(cx);
        if stale_lead {
            // Tell that leader about the newer epoch this member knows: it makes itself a newer grant.
            cx.send(from, self.packet(Body::Announce));
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Self::Timer) {
        match timer {
            MemberTimer::Inner { life, timer } if life == self.life && self.away == Away::Present => {
                self.run(cx, Event::Timer(timer));
            }
            MemberTimer::Inner { .. } => return, // Armed by an earlier instance, or while sitting out.
            MemberTimer::Claim(port) => {
                let peer = self.peer(port);
                if let Some((_, live)) = self.claims.get_mut(&peer) {
                    *live = false;
                }
            }
            MemberTimer::Settle => self.settled = self.leading,
            MemberTimer::Wake if self.away == Away::Resigned => return self.rejoin(cx),
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
}

/// The member's own message kinds, which closed-form bounds of one election leave out.
const MEMBER_KINDS: &[&str] = &["announce", "leaving"];
/// The member's and the leader monitor's message kinds.
const MEMBER_AND_MONITOR_KINDS: &[&str] = &["heartbeat", "join", "hop-ack", "announce", "leaving"];

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
            resign_hold: self.config.resign_hold,
            bug: self.config.bug,
        };
        Member {
            inner: self.inner.build(&kept.setup()),
            algorithm: Arc::new(self.inner.clone()),
            setup: Arc::new(kept),
            life: 0,
            incarnation: 0,
            seen: 0,
            saved_seen: 0,
            grant: None,
            claims: BTreeMap::new(),
            heard: BTreeMap::new(),
            leading: false,
            settled: false,
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

    /// One election, then the settling wait before the grant and the grant's announcement.
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        self.inner.election_time(facts, t) + t * (self.config.settle + 1)
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

/// Whether a member can run `info`'s algorithm: on a full mesh, an algorithm for a complete graph or a ring (over
/// the members' logical ring), electing one leader or one per group. `Err` says why not.
pub fn deployable(info: &Info) -> Result<(), String> {
    if info.elects == Elects::PerComponent {
        return Err(format!(
            "{} elects a leader per connected component of a mobile network; members form a full mesh",
            info.name
        ));
    }
    if info.needs == Needs::Connected {
        return Err(format!(
            "{} floods a general graph; members form a full mesh, where the complete-graph and ring algorithms run",
            info.name
        ));
    }
    if info.lockstep {
        return Err(format!("{} runs in lock-step rounds from time 0; members start and restart apart", info.name));
    }
    Ok(())
}
