#![doc = include_str!("../../../docs/internals/monitor.md")]

use std::borrow::Cow;
use std::collections::{BTreeSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elect_core::{
    Check, Command, Cx, Duration, Effect, EffectOf, Epoch, Instant, Invalid, Message, Neighbor, NodeId, Notice, Peers,
    Port, Process, Property, Rank, RingPorts, Roster, Setup, Shape, Span, State, Status, Validate, View, Winner,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Driver, Facts, Info, Measure, Needs};
use crate::params::{ParamError, Params};

/// How many rounds past the one it enters a process reserves with one write (see the module documentation).
pub const RESERVED_ROUNDS: u32 = 16;

/// How many times a pre-vote asks, a round trip apart, while answers are missing (see the module documentation).
pub const PRE_VOTE_TRIES: u8 = 3;

/// After this many pre-votes in a row found that a majority hears the leader, a follower confirms a contrary one
/// before it deposes the leader (see `Monitored::kept`).
pub const KEPT: u8 = 2;

/// The monitor's timing, in multiples of the delay bound `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonitorConfig {
    /// The leader sends a heartbeat every `heartbeat·T`.
    pub heartbeat: u64,
    /// A follower suspects its leader after `timeout·T` without a heartbeat (plus its stagger); it must exceed the
    /// heartbeat period plus the time a heartbeat takes to arrive.
    pub timeout: u64,
    /// A follower waits `stagger·T` longer per process stronger than it (other than the leader) before it
    /// suspects: the time the `join` of a stronger follower takes to reach it.
    pub stagger: u64,
    /// Extra time, for the first heartbeat of an epoch: a follower may learn the leader before the leader does
    /// (an announcement that passes it on its way round the ring), so this covers the rest of an election.
    pub grace: u64,
    /// A flaw planted on purpose: two leaders of one epoch ignore each other's heartbeats (the monitor before it
    /// settled them), so that the checker shows the run that never agrees again.
    pub deaf_leaders: bool,
}

impl MonitorConfig {
    /// Heartbeats every `heartbeat·T`, a timeout that covers a heartbeat crossing `hops` links, suspicion
    /// staggered by the time a `join` takes to cross them, and a grace of one election of `election·T`.
    pub fn new(heartbeat: u64, hops: u64, election: u64) -> Self {
        Self { heartbeat, timeout: heartbeat + hops + 1, stagger: hops, grace: election, deaf_leaders: false }
    }

    /// The timing of `algorithm`'s monitor on `network`, with heartbeats every `heartbeat·T`: a timeout that covers
    /// the longest path a heartbeat takes, and a grace of one election (on a logical ring, with the time a message
    /// may wait at each dead process, `2T + ε` in either direction). The simulator, the checker and the runtime
    /// all time the monitor here.
    pub fn for_network<A: Algorithm>(algorithm: &A, network: &MonitorNetwork, heartbeat: u64) -> Self {
        let t = network.delay_bound;
        let mut election = algorithm.election_time(&network.facts, t).ticks().div_ceil(t.ticks().max(1));
        if network.logical_ring {
            election += 5 * network.facts.nodes;
        }
        Self::new(heartbeat, network.hops, election)
    }
}

/// What the leader monitor's timing depends on besides the algorithm: see [`MonitorConfig::for_network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonitorNetwork {
    /// The facts of a failure-free run (nodes, edges, initiators).
    pub facts: Facts,
    /// The longest path a heartbeat takes, in hops.
    pub hops: u64,
    /// Whether a ring algorithm runs on a logical ring over a complete graph (its messages may wait at dead
    /// processes).
    pub logical_ring: bool,
    /// The delay bound `T`.
    pub delay_bound: Duration,
}

/// An algorithm wrapped in the leader monitor.
#[derive(Clone, Debug)]
pub struct LeaderMonitor<A> {
    /// The election algorithm.
    pub inner: A,
    /// The monitor's timing.
    pub config: MonitorConfig,
}

/// Messages: the algorithm's, tagged with an epoch, and heartbeats.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum MonitorMsg<M> {
    /// A message of the election algorithm in `epoch`.
    Inner {
        /// The epoch of the election it belongs to.
        epoch: Epoch,
        /// The process whose failure started the epoch, if one did (not for a recovery or a first election).
        down: Option<NodeId>,
        /// The algorithm's message.
        msg: M,
    },
    /// A message of the election algorithm in `epoch`, sent round a logical ring to the next live process
    /// (`forward`) or the previous one; the receiver acknowledges it.
    Ring {
        /// The epoch of the election it belongs to.
        epoch: Epoch,
        /// The process whose failure started the epoch, if one did.
        down: Option<NodeId>,
        /// Sent to the next live process, or to the previous one.
        forward: bool,
        /// The algorithm's message.
        msg: M,
    },
    /// "Your `ring` message of `epoch` arrived."
    HopAck {
        /// The epoch of the acknowledged message.
        epoch: Epoch,
    },
    /// The leader of `epoch` is alive.
    Heartbeat {
        /// The leader's epoch.
        epoch: Epoch,
        /// The heartbeat's number, for forwarding each once.
        seq: u64,
        /// The process whose failure started the epoch, if one did, as its `join` and its election's messages
        /// name it: a process that enters the epoch on a heartbeat names it in its own messages too.
        down: Option<NodeId>,
    },
    /// A leader left its epoch for `epoch`: its followers should follow instead of suspecting it.
    Join {
        /// The epoch to join.
        epoch: Epoch,
        /// The process whose failure started it, if one did.
        down: Option<NodeId>,
    },
    /// "Do you still hear `leader`, the leader of `epoch`?": the pre-vote of a follower that no longer hears its
    /// leader, before it opens a new epoch (see the module documentation).
    PreVote {
        /// The epoch of the leader it asks about.
        epoch: Epoch,
        /// The leader.
        leader: NodeId,
    },
    /// The answer to a pre-vote of `epoch`: whether the sender heard the leader within the last heartbeat period
    /// and a half (or is that leader).
    PreVoteReply {
        /// The epoch asked about.
        epoch: Epoch,
        /// Whether it hears the leader.
        hears: bool,
    },
}

/// The rules the leader monitor names as it applies them ([`Cx::rule`]), each stated in the monitor's chapter of the
/// book ("Rules, step by step"). A message of the current epoch shows the rule of the algorithm that handled it.
pub mod rule {
    /// A process starts (or restarts) and opens the epoch after the newest it knows, with a fresh instance of the algorithm that initiates.
    pub const START: &str = "start the next epoch";
    /// The leader tells every follower it is alive, and arms its next heartbeat.
    pub const BEAT: &str = "leader sends a heartbeat";
    /// A follower hears its leader's heartbeat: it vouches for the leader for the quiet time and watches it again.
    pub const ALIVE: &str = "heartbeat heard, the leader is alive";
    /// A heartbeat or join this process has already seen (or its own heartbeat, back) changes nothing.
    pub const SEEN: &str = "ignore what was already seen";
    /// A process whose election ended without it follows the epoch's leader when it hears its heartbeat.
    pub const FOLLOW: &str = "follow the leader of this epoch";
    /// A leader hears another leader's heartbeat in its own epoch (a timing fault let both win): it opens the next epoch, whose election has one winner.
    pub const TWO_LEADERS: &str = "two leaders in one epoch, start the next";
    /// The leader this process follows carried its leadership into a newer epoch; the follower follows it there without an election.
    pub const RENUMBER: &str = "follow the leader into its newer epoch";
    /// A leader hears a weaker leader's newer epoch: it carries its own leadership above it, and everybody follows it there.
    pub const RESTAMP: &str = "carry leadership above a weaker epoch";
    /// A heartbeat of a newer epoch comes from a leader weaker than the one this process follows: it keeps following the stronger one.
    pub const STRONGER_LEADER: &str = "keep following a stronger leader";
    /// A heartbeat of a newer epoch comes from a stronger process: that election is over, and this process follows its leader without one.
    pub const ADOPT: &str = "adopt the leader of a newer epoch";
    /// A process back from a crash hears of a newer epoch: it opens the epoch after it, so that it never joins an election that may be over.
    pub const CATCH_UP: &str = "catch up, start the epoch after";
    /// A join names an epoch newer than this process's: it leaves its epoch for that one, with a fresh instance of the algorithm.
    pub const JOIN: &str = "join a newer epoch";
    /// A message of the current epoch goes to the epoch's instance of the algorithm, which names its own rule.
    pub const DELIVER: &str = "hand the message to the election";
    /// A message of an older epoch is stale and changes nothing; a leader answers it with a heartbeat, so that the sender catches up.
    pub const STALE: &str = "drop a message of an older epoch";
    /// A process that an epoch names as failed takes no part in it: it opens the next epoch (or, leading, carries its leadership above it).
    pub const DISOWN: &str = "taken for failed, leave that epoch";
    /// A timer armed by an instance this process has left, or for a role it no longer has, does nothing.
    pub const OLD_TIMER: &str = "ignore a timer that is no longer due";
    /// A follower that has not heard its leader for its suspicion time asks every other process whether it still hears the leader (a pre-vote).
    pub const ASK: &str = "suspect the leader, ask the others";
    /// Some answers to a pre-vote did not come within a round trip: the follower asks again, since a lost packet is likelier than a dead process.
    pub const ASK_AGAIN: &str = "answers missing, ask again";
    /// The leader, or a follower that heard the leader within the quiet time, answers that it hears the leader.
    pub const VOUCH: &str = "answer a pre-vote, yes";
    /// A process that has not heard the leader lately answers that it does not hear it.
    pub const NO_VOUCH: &str = "answer a pre-vote, no";
    /// An answer to this follower's pre-vote is counted; no majority either way yet.
    pub const COUNT: &str = "count a pre-vote answer";
    /// A majority of the processes hear the leader: this follower keeps following it, and asks again if it hears nothing for one more heartbeat period.
    pub const KEEP: &str = "a majority hears the leader, keep it";
    /// A follower kept twice in a row by the others finds nobody hears the leader: it asks once more a heartbeat period later, in case the whole machine stalled.
    pub const CONFIRM: &str = "confirm a contrary pre-vote later";
    /// Nobody (or no majority) hears the leader: the follower opens a new epoch that names the leader as failed and tells everybody to join it.
    pub const DEPOSE: &str = "suspect the leader, open a new epoch";
    /// No heartbeat for the quiet time: this follower no longer vouches that it hears its leader.
    pub const QUIET: &str = "quiet time over, stop vouching";
    /// No leader came out of the epoch's election in time: the process opens the next epoch.
    pub const STALL: &str = "election stuck, start the next epoch";
    /// The next process on the ring acknowledged a ring message, so it is alive.
    pub const HOP_ACK: &str = "ring hop acknowledged";
    /// A ring message went unacknowledged for a round trip: its receiver is taken for dead, the ring closes over it, and a new epoch starts.
    pub const SKIP_DEAD: &str = "ring successor silent, skip it";

    /// A process that takes every other for dead hands ring messages to itself; one that would go round for ever
    /// (a stronger process's token, forged or sent before it died) is dropped, and the stall timer starts the next
    /// epoch if no leader comes of the election.
    pub const ROUND_FOREVER: &str = "alone, drop a message that never ends";

    /// Every rule, in the order the chapter lists them.
    pub const ALL: &[&str] = &[
        START,
        BEAT,
        ALIVE,
        SEEN,
        FOLLOW,
        TWO_LEADERS,
        RENUMBER,
        RESTAMP,
        STRONGER_LEADER,
        ADOPT,
        CATCH_UP,
        JOIN,
        DELIVER,
        STALE,
        DISOWN,
        OLD_TIMER,
        ASK,
        ASK_AGAIN,
        VOUCH,
        NO_VOUCH,
        COUNT,
        KEEP,
        CONFIRM,
        DEPOSE,
        QUIET,
        STALL,
        HOP_ACK,
        SKIP_DEAD,
        ROUND_FOREVER,
    ];
}

/// The most ring messages a process that takes every other for dead hands to itself in one step (see
/// `deliver_to_self`): an honest election on a ring of one sends a handful.
const ALONE_BUDGET: u32 = 256;

/// The monitor's own message kinds, after the algorithm's (in the order of [`MonitorMsg::kind_index`]), which
/// closed-form bounds of one election leave out.
pub(crate) const MONITOR_KINDS: &[&str] = &["heartbeat", "join", "hop-ack", "pre-vote", "pre-vote-reply"];

impl<M: Message> Message for MonitorMsg<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        let mut kinds = M::kinds().into_owned();
        kinds.extend_from_slice(MONITOR_KINDS);
        Cow::Owned(kinds)
    }

    fn kind_index(&self) -> usize {
        match self {
            Self::Inner { msg, .. } | Self::Ring { msg, .. } => msg.kind_index(),
            Self::Heartbeat { .. } => M::kinds().len(),
            Self::Join { .. } => M::kinds().len() + 1,
            Self::HopAck { .. } => M::kinds().len() + 2,
            Self::PreVote { .. } => M::kinds().len() + 3,
            Self::PreVoteReply { .. } => M::kinds().len() + 4,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Inner { msg, .. } | Self::Ring { msg, .. } => msg.kind(),
            Self::Heartbeat { .. } => "heartbeat",
            Self::Join { .. } => "join",
            Self::HopAck { .. } => "hop-ack",
            Self::PreVote { .. } => "pre-vote",
            Self::PreVoteReply { .. } => "pre-vote-reply",
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::Inner { epoch, msg, .. } => format!("{} (epoch {epoch})", msg.describe()),
            Self::Ring { epoch, msg, .. } => format!("{} (epoch {epoch}, ring hop)", msg.describe()),
            Self::HopAck { epoch } => format!("hop-ack (epoch {epoch})"),
            Self::Heartbeat { epoch, .. } => format!("heartbeat (epoch {epoch})"),
            Self::Join { epoch, down: Some(down) } => format!("join epoch {epoch} ({down} failed)"),
            Self::Join { epoch, down: None } => format!("join epoch {epoch}"),
            Self::PreVote { leader, .. } => format!("pre-vote: do you hear {leader}?"),
            Self::PreVoteReply { hears: true, .. } => "pre-vote-reply: yes".to_owned(),
            Self::PreVoteReply { hears: false, .. } => "pre-vote-reply: no".to_owned(),
        }
    }
}

/// Every epoch is one a process may accept, every process a message names as failed is a member, and the
/// algorithm's message is valid for the algorithm.
impl<M: Message> Validate for MonitorMsg<M> {
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
        let (epoch, down) = match self {
            Self::Inner { epoch, down, msg } | Self::Ring { epoch, down, msg, .. } => {
                msg.validate(roster)?;
                (*epoch, *down)
            }
            Self::Heartbeat { epoch, down, .. } | Self::Join { epoch, down } => (*epoch, *down),
            Self::PreVote { epoch, leader } => (*epoch, Some(*leader)),
            Self::HopAck { epoch } | Self::PreVoteReply { epoch, .. } => (*epoch, None),
        };
        roster.epoch(epoch, "the epoch is beyond the last round")?;
        down.map_or(Ok(()), |d| roster.member(d, "the process it names is not a member"))
    }
}

/// Timers: the algorithm's (of one epoch), the leader's heartbeat, and the follower's watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MonitorTimer<T> {
    /// The algorithm's timer, armed by the instance of the algorithm built in `epoch`.
    Inner {
        /// The epoch the instance that armed it was built in; once the process has built another, it is ignored.
        epoch: Epoch,
        /// The algorithm's timer.
        timer: T,
    },
    /// Time for the leader's next heartbeat.
    Beat,
    /// No heartbeat for the timeout: suspect the leader.
    Watch,
    /// The oldest unacknowledged ring message is overdue: its receiver is dead.
    Hop,
    /// No leader for the first timeout: the election is stuck.
    Stall,
    /// No heartbeat from the leader for a heartbeat period and a half: this follower no longer vouches that it hears
    /// it.
    Quiet,
    /// A try of a pre-vote is over: the answers that could come are in.
    Poll,
}

/// What a monitored process needs to rebuild its algorithm for a new epoch.
#[derive(Debug)]
struct Owned {
    id: NodeId,
    rank: Rank,
    neighbors: Vec<Neighbor>,
    ring: Option<RingPorts>,
    ring_order: Vec<Port>,
    shape: Shape,
    delay_bound: Option<Duration>,
    diameter: Option<u32>,
    heartbeat: Duration,
    timeout: Duration,
    /// The timeout before the first heartbeat of an epoch.
    first_timeout: Duration,
    /// The extra suspicion time per stronger process.
    stagger: Duration,
    /// Whether the monitor finds dead ring neighbours (ring algorithms on a logical ring over a complete graph).
    hops: bool,
    /// How long a ring message may go unacknowledged: `2T + ε`.
    hop_timeout: Duration,
    /// The planted flaw of [`MonitorConfig::deaf_leaders`].
    deaf_leaders: bool,
    /// Whether a follower that suspects its leader holds a pre-vote first: on a complete graph of three processes
    /// or more, where the others can vouch for the leader.
    pre_vote: bool,
    /// A follower vouches that it hears its leader while its last heartbeat is this recent: `(heartbeat + 1.5)·T`.
    quiet: Duration,
}

impl Owned {
    /// The algorithm's setup. When the monitor repairs the ring, the algorithm does not see the ring order: it
    /// sends to its ring neighbours and the monitor finds the live ones.
    fn setup(&self) -> Setup<'_> {
        Setup {
            id: self.id,
            rank: self.rank,
            neighbors: &self.neighbors,
            ring: self.ring,
            ring_order: if self.hops { &[] } else { &self.ring_order },
            shape: self.shape,
            delay_bound: self.delay_bound,
            diameter: self.diameter,
            suspected: &[],
        }
    }
}

/// A ring message waiting for its acknowledgement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Unacked<M> {
    /// The port it left by.
    port: Port,
    /// When it is overdue.
    deadline: Instant,
    /// Its direction round the ring.
    forward: bool,
    /// The algorithm's message.
    msg: M,
}

/// One monitored process.
#[derive(Debug)]
pub struct Monitored<A: Algorithm> {
    algorithm: Arc<A>,
    setup: Arc<Owned>,
    inner: A::Process,
    epoch: Epoch,
    /// The process whose failure started this epoch.
    down: Option<NodeId>,
    /// The last heartbeat sent (as leader) or forwarded (as follower) in this epoch.
    seq: u64,
    /// Processes believed dead (for ring repair).
    dead: BTreeSet<NodeId>,
    /// Links the link layer reports down: every fresh instance of the algorithm is told again.
    links_down: BTreeSet<Port>,
    /// Ring messages sent and not yet acknowledged, oldest first.
    unacked: VecDeque<Unacked<<A::Process as Process>::Msg>>,
    /// Ring messages to itself, while every other process is dead (scratch space, empty between steps).
    alone: VecDeque<(bool, <A::Process as Process>::Msg)>,
    /// The durable reservation: an epoch whose round is at least that of every epoch this process has entered.
    reserved: Epoch,
    beating: bool,
    watching: bool,
    /// Waiting, without a leader, for an election to end.
    waiting: bool,
    /// Back from a crash (or started late): until it has started an epoch newer than any it heard of, it must
    /// not join an epoch whose election may be over.
    catching_up: bool,
    /// The leader of this epoch, followed without taking part in its election (a straggler that caught up).
    adopted: Option<NodeId>,
    /// The epoch the algorithm's instance was built in, which tags its timers: a leader that carries its
    /// leadership into a newer epoch without an election, and its followers with it, keep their instances.
    instance: Epoch,
    /// A heartbeat of the leader it follows arrived within the quiet time: it vouches that it hears the leader.
    fresh: bool,
    /// The pre-vote under way, if this follower suspects its leader.
    poll: Option<Poll>,
    /// How many pre-votes in a row (up to [`KEPT`]) found a majority that heard the leader, with no heartbeat since.
    /// From [`KEPT`] on, this follower cannot hear a leader the others hear, and a pre-vote that finds the contrary
    /// is confirmed once, a heartbeat period later, before it deposes the leader: a stall of the whole machine (a
    /// virtual machine descheduled, a leader paused for a moment) makes every process miss a heartbeat at once, and
    /// one such moment in the seconds of a bad link must not depose a leader the others hear. After a crash a
    /// follower may be kept once (another one heard the last heartbeat a little later), and pays no more for this.
    kept: u8,
    effects: Vec<EffectOf<A::Process>>,
}

/// A pre-vote: a follower that no longer hears `suspect` asks the others whether they do (see the module
/// documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Poll {
    suspect: NodeId,
    /// The try, from 1 to [`PRE_VOTE_TRIES`].
    tries: u8,
    /// Who answered, at its latest answer in any try of this pre-vote, that it hears the suspect, and who that it
    /// does not: an answer stays counted when the follower asks again, so that on a lossy network the tries add up
    /// instead of each starting from nothing.
    yes: BTreeSet<Port>,
    no: BTreeSet<Port>,
}

impl<A: Algorithm> Clone for Monitored<A> {
    fn clone(&self) -> Self {
        Self {
            algorithm: self.algorithm.clone(),
            setup: self.setup.clone(),
            inner: self.inner.clone(),
            epoch: self.epoch,
            down: self.down,
            seq: self.seq,
            dead: self.dead.clone(),
            links_down: self.links_down.clone(),
            unacked: self.unacked.clone(),
            alone: VecDeque::new(),
            reserved: self.reserved,
            beating: self.beating,
            watching: self.watching,
            waiting: self.waiting,
            catching_up: self.catching_up,
            adopted: self.adopted,
            instance: self.instance,
            fresh: self.fresh,
            poll: self.poll.clone(),
            kept: self.kept,
            effects: Vec::new(),
        }
    }
}

impl<A: Algorithm> Monitored<A> {
    /// The state the monitor compares and hashes: everything but the fixed configuration and scratch space.
    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (
        &A::Process,
        (Epoch, Epoch, Option<NodeId>, u64),
        (&BTreeSet<NodeId>, &BTreeSet<Port>),
        &VecDeque<Unacked<<A::Process as Process>::Msg>>,
        Epoch,
        ([bool; 5], u8, Option<NodeId>, &Option<Poll>),
    ) {
        let flags = [self.beating, self.watching, self.waiting, self.catching_up, self.fresh];
        let known = (&self.dead, &self.links_down);
        (
            &self.inner,
            (self.epoch, self.instance, self.down, self.seq),
            known,
            &self.unacked,
            self.reserved,
            (flags, self.kept, self.adopted, &self.poll),
        )
    }

    /// This process heard of `epoch`, newer than its own, while catching up: it starts the round after it.
    fn catch_up(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        self.catching_up = false;
        self.start_after(cx, epoch, None);
        cx.rule(rule::CATCH_UP);
    }

    /// Starts the epoch after `epoch`, started because `down` failed (if it did). Past the last round there is
    /// none: the process stays where it is (valid epochs leave 2³¹ rounds above them; see `elect_core::epoch`).
    fn start_after(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        if let Some(next) = epoch.next(self.setup.id) {
            self.start_epoch(cx, next, down);
        }
    }

    /// The wrapped algorithm's process.
    pub fn inner(&self) -> &A::Process {
        &self.inner
    }

    /// The current epoch.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    fn leads(&self) -> bool {
        let s = self.inner.status();
        s.state == State::Normal && s.leader == Some(self.setup.id)
    }

    /// The algorithm's status, or, while this process follows a leader it adopted and the algorithm names no other
    /// one, that leader's (the algorithm may be bringing it into the leader's group meanwhile: Garcia-Molina's
    /// coordinator halts and appoints it, and it follows that leader throughout).
    fn shown(&self) -> Status {
        let inner = self.inner.status();
        match self.adopted {
            Some(leader) if inner.leader.is_none_or(|l| l == leader) => {
                Status { state: State::Normal, leader: Some(leader), ..inner }
            }
            _ => inner,
        }
    }

    /// How much longer than the timeout this process waits before it suspects its leader: `stagger` per process
    /// stronger than it, other than the leader it watches (see the module documentation).
    fn stagger(&self) -> Duration {
        let leader = self.shown().leader;
        let me = self.setup.rank;
        let stronger = self.setup.neighbors.iter().filter(|n| n.rank > me && Some(n.id) != leader).count();
        self.setup.stagger * stronger as u64
    }

    /// A message of an older epoch than this process's arrived on `from`. A leader answers it with a heartbeat of
    /// its own epoch, so that the straggler catches up at once (on a complete graph, where a heartbeat says whose
    /// it is).
    fn answer_stale(&self, cx: &mut Cx<'_, Self>, from: Port) {
        cx.rule(rule::STALE);
        if self.beating && !self.relayed() {
            cx.send(from, MonitorMsg::Heartbeat { epoch: self.epoch, seq: 1, down: self.down });
        }
    }

    /// This process heard, on `from`, the heartbeat of `epoch`, newer than its own, from a leader stronger than
    /// it: it follows that leader in that epoch, without an election (the epoch's is over, and would elect the
    /// same leader).
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>, from: Port) {
        self.catching_up = false;
        self.enter_epoch(cx, epoch, down, false);
        self.follow(cx, from, 1);
        cx.rule(rule::ADOPT);
    }

    /// Follows the leader at `from`, whose heartbeat `seq` it heard, in this process's epoch.
    fn follow(&mut self, cx: &mut Cx<'_, Self>, from: Port, seq: u64) {
        self.adopted = Some(self.neighbor(from));
        self.seq = seq;
        self.heard_leader(cx);
        self.sync(cx);
    }

    /// A heartbeat of the leader this process follows arrived: it vouches that it hears the leader for the quiet
    /// time, and a pre-vote about the leader is over (it watches the leader again).
    fn heard_leader(&mut self, cx: &mut Cx<'_, Self>) {
        self.fresh = true;
        self.kept = 0;
        cx.set_timer(MonitorTimer::Quiet, Span::exactly(self.setup.quiet));
        if self.poll.take().is_some() {
            cx.cancel_timer(MonitorTimer::Poll);
            self.watching = true;
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.setup.timeout + self.stagger()));
        }
    }

    /// This follower suspects its leader `suspect`: it asks every other process whether it still hears it (try
    /// `tries` of the pre-vote, keeping the answers of the tries before it), and waits a round trip for the answers.
    fn ask_about(&mut self, cx: &mut Cx<'_, Self>, suspect: NodeId, tries: u8, before: Option<Poll>) {
        cx.rule(if tries == 1 { rule::ASK } else { rule::ASK_AGAIN });
        let (yes, no) = before.map_or_else(Default::default, |p| (p.yes, p.no));
        self.poll = Some(Poll { suspect, tries, yes, no });
        for k in 0..self.setup.neighbors.len() {
            cx.send(self.setup.neighbors[k].port, MonitorMsg::PreVote { epoch: self.epoch, leader: suspect });
        }
        cx.set_timer(MonitorTimer::Poll, Span::exactly(self.setup.hop_timeout));
    }

    /// A pre-vote of `epoch` about `leader` arrived on `from`: the answer is whether this process is that leader,
    /// or follows it in that epoch and heard it within the quiet time. A leader also beats at once to the asker,
    /// which may have lost its heartbeats.
    fn on_pre_vote(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, leader: NodeId) {
        let me = leader == self.setup.id && self.beating;
        let hears = epoch == self.epoch && (me || (self.fresh && self.shown().leader == Some(leader)));
        cx.send(from, MonitorMsg::PreVoteReply { epoch, hears });
        if epoch < self.epoch || (me && epoch == self.epoch) {
            self.answer_stale(cx, from);
        }
        cx.rule(if hears { rule::VOUCH } else { rule::NO_VOUCH });
    }

    /// An answer to this process's pre-vote of `epoch` arrived on `from`. Once a majority of the processes (the
    /// leader's own answer counts) hear the leader, this one keeps following it, and asks again if it hears nothing
    /// for one more heartbeat period; once too few are left who could, it opens a new epoch.
    fn on_pre_vote_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, hears: bool) {
        cx.rule(rule::COUNT);
        let Some(poll) = self.poll.as_mut().filter(|_| epoch == self.epoch) else { return };
        if hears {
            poll.no.remove(&from);
            poll.yes.insert(from);
        } else {
            poll.yes.remove(&from);
            poll.no.insert(from);
        }
        let voters = self.setup.neighbors.len();
        // A majority of the processes: the `voters` others and this one.
        let processes = voters + 1;
        let majority = processes / 2 + 1;
        // A process that heard the leader within the quiet time vouches that it is alive, and a live leader hears
        // itself: it counts among those who hear it even if its own answer cannot reach this follower.
        let suspect = self.setup.neighbors.iter().find(|n| n.id == poll.suspect).map(|n| n.port);
        let vouched = !poll.yes.is_empty() && suspect.is_some_and(|s| !poll.yes.contains(&s));
        if poll.yes.len() + usize::from(vouched) >= majority {
            self.poll = None;
            cx.cancel_timer(MonitorTimer::Poll);
            self.kept = (self.kept + 1).min(KEPT);
            cx.rule(rule::KEEP);
            self.watching = true;
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.setup.heartbeat));
        } else if voters - poll.no.len() < majority {
            let suspect = poll.suspect;
            self.poll = None;
            cx.cancel_timer(MonitorTimer::Poll);
            self.nobody_hears(cx, suspect);
        }
    }

    /// A pre-vote found that no majority hears the leader `suspect`: this follower deposes it, unless the pre-vote
    /// before it found the contrary [`KEPT`] times in a row; then it asks once more, a heartbeat period later.
    fn nobody_hears(&mut self, cx: &mut Cx<'_, Self>, suspect: NodeId) {
        if std::mem::take(&mut self.kept) >= KEPT {
            cx.rule(rule::CONFIRM);
            self.watching = true;
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.setup.heartbeat));
        } else {
            self.depose(cx, Some(suspect));
        }
    }

    /// This follower no longer hears its leader `suspect` (and, after a pre-vote, neither does a majority): it
    /// opens a new epoch naming the leader as failed, and tells everybody at once, so that they join it rather
    /// than suspect on their own.
    fn depose(&mut self, cx: &mut Cx<'_, Self>, suspect: Option<NodeId>) {
        let Some(epoch) = self.epoch.next(self.setup.id) else { return };
        self.reserve(cx, epoch);
        self.announce(cx, &MonitorMsg::Join { epoch, down: suspect });
        self.start_epoch(cx, epoch, suspect);
        cx.rule(rule::DEPOSE);
    }

    fn neighbor(&self, port: Port) -> NodeId {
        self.setup.neighbors[port.index()].id
    }

    /// The nearest live process in ring order after (`forward`) or before this one.
    fn live_neighbor(&self, forward: bool) -> Option<Port> {
        let order = &self.setup.ring_order;
        let alive = |p: &&Port| !self.dead.contains(&self.neighbor(**p));
        if forward { order.iter().find(alive).copied() } else { order.iter().rev().find(alive).copied() }
    }

    /// The ring to repair: ring algorithms on a logical ring over a complete graph, once somebody is dead.
    fn repaired_ring(&self) -> Option<RingPorts> {
        let repairable = A::INFO.needs == Needs::Ring && !self.setup.ring_order.is_empty() && !self.dead.is_empty();
        self.setup.ring.filter(|_| repairable)
    }

    /// The port a message of the algorithm sent to `to` really leaves by (skipping dead ring neighbours).
    fn outgoing(&self, to: Port) -> Port {
        match self.repaired_ring() {
            Some(ring) => {
                if to == ring.next {
                    self.live_neighbor(true).unwrap_or(to)
                } else if to == ring.prev {
                    self.live_neighbor(false).unwrap_or(to)
                } else {
                    to
                }
            }
            _ => to,
        }
    }

    /// The port the algorithm should see a message arriving on `from` as coming from.
    fn incoming(&self, from: Port) -> Port {
        match self.repaired_ring() {
            Some(ring) => {
                if Some(from) == self.live_neighbor(false) {
                    ring.prev
                } else if Some(from) == self.live_neighbor(true) {
                    ring.next
                } else {
                    from
                }
            }
            _ => from,
        }
    }

    /// Sends a message of the algorithm to `to`: tagged with the epoch, and on a logical ring to the live ring
    /// neighbour in that direction, tracked until it is acknowledged.
    fn send(&mut self, cx: &mut Cx<'_, Self>, to: Port, msg: <A::Process as Process>::Msg) {
        let ring = self.setup.ring.filter(|r| self.setup.hops && (to == r.next || to == r.prev));
        match ring {
            Some(r) => self.send_round(cx, to == r.next, msg),
            None => cx.send(self.outgoing(to), MonitorMsg::Inner { epoch: self.epoch, down: self.down, msg }),
        }
    }

    /// Sends `msg` to the next (or previous) live process on the ring, or back to this one if it is alone.
    fn send_round(&mut self, cx: &mut Cx<'_, Self>, forward: bool, msg: <A::Process as Process>::Msg) {
        let Some(port) = self.live_neighbor(forward) else {
            self.alone.push_back((forward, msg));
            return;
        };
        if self.unacked.is_empty() {
            cx.set_timer(MonitorTimer::Hop, Span::exactly(self.setup.hop_timeout));
        }
        let deadline = cx.now() + self.setup.hop_timeout;
        self.unacked.push_back(Unacked { port, deadline, forward, msg: msg.clone() });
        cx.send(port, MonitorMsg::Ring { epoch: self.epoch, down: self.down, forward, msg });
    }

    /// A ring message arrived on `from` and skipped the processes between its sender and this one: they are dead
    /// (as far as the sender knows). Returns the port the algorithm sees it arrive on: its ring neighbour's.
    fn arrived_round(&mut self, from: Port, forward: bool) -> Port {
        let order = &self.setup.ring_order;
        if let Some(i) = order.iter().position(|&p| p == from) {
            // Forward, the sender is this process's live predecessor, so those after it in ring order (between it
            // and this process) are dead; backward, those before it.
            let skipped = if forward { &order[i + 1..] } else { &order[..i] };
            let ids: Vec<NodeId> = skipped.iter().map(|&p| self.neighbor(p)).collect();
            self.dead.extend(ids);
        }
        let ring = self.setup.ring.expect("ring messages travel on rings");
        if forward { ring.prev } else { ring.next }
    }

    /// An acknowledgement of a ring message of `epoch` arrived on `from`.
    fn on_hop_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch) {
        if epoch < self.instance || epoch > self.epoch {
            // Messages of an instance this process has left are no longer tracked. (Those its instance sent before
            // it carried its leadership into a newer epoch still are.)
            return;
        }
        cx.rule(rule::HOP_ACK);
        if let Some(i) = self.unacked.iter().position(|u| u.port == from) {
            self.unacked.remove(i);
            if i == 0 {
                self.rearm_hop(cx);
            }
        }
    }

    /// The oldest unacknowledged ring message is overdue: its receiver is dead. Whatever state it held for the
    /// election is lost with it, so (S001's recipe) the ring is repaired and a new run starts: a new epoch that
    /// names the dead process, so that everybody who joins skips it.
    fn on_hop_timeout(&mut self, cx: &mut Cx<'_, Self>) {
        let now = cx.now();
        match self.unacked.front().filter(|u| u.deadline <= now).map(|u| u.port) {
            Some(port) => {
                let dead = self.neighbor(port);
                self.dead.insert(dead);
                self.start_after(cx, self.epoch, Some(dead));
                cx.rule(rule::SKIP_DEAD);
            }
            None => self.rearm_hop(cx),
        }
    }

    /// Arms the timer for the oldest unacknowledged ring message, or cancels it.
    fn rearm_hop(&self, cx: &mut Cx<'_, Self>) {
        match self.unacked.front() {
            Some(u) => cx.set_timer(MonitorTimer::Hop, Span::exactly(u.deadline.saturating_since(cx.now()))),
            None => cx.cancel_timer(MonitorTimer::Hop),
        }
    }

    /// Hands the algorithm the ring messages it sent while every other process is dead.
    fn deliver_to_self(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(ring) = self.setup.ring else { return };
        // Handling one may send more; an election on a ring of one ends after a few. A message that would go round
        // for ever (the token of a stronger process, forged or sent by one that died since) is dropped after
        // `ALONE_BUDGET`: no handler call may run for ever. If no leader comes of the election, the stall timer
        // starts the next epoch, with a fresh instance that holds no such message.
        let mut left = ALONE_BUDGET;
        while let Some((forward, msg)) = self.alone.pop_front() {
            if left == 0 {
                self.alone.clear();
                return cx.rule(rule::ROUND_FOREVER);
            }
            left -= 1;
            let from = if forward { ring.prev } else { ring.next };
            self.run_once(cx, |p, cx| p.on_message(cx, from, msg));
        }
    }

    /// Runs one handler of the algorithm and carries its effects out through the monitor.
    fn run(&mut self, cx: &mut Cx<'_, Self>, f: impl FnOnce(&mut A::Process, &mut Cx<'_, A::Process>)) {
        self.run_once(cx, f);
        self.deliver_to_self(cx);
    }

    fn run_once(&mut self, cx: &mut Cx<'_, Self>, f: impl FnOnce(&mut A::Process, &mut Cx<'_, A::Process>)) {
        let mut effects = std::mem::take(&mut self.effects);
        let mut inner_cx = Cx::new(cx.now(), &mut effects);
        f(&mut self.inner, &mut inner_cx);
        if let Some(rule) = inner_cx.applied() {
            cx.rule(rule);
        }
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { to, msg } => self.send(cx, to, msg),
                Effect::SetTimer { timer, after } => {
                    cx.set_timer(MonitorTimer::Inner { epoch: self.instance, timer }, after)
                }
                Effect::CancelTimer { timer } => cx.cancel_timer(MonitorTimer::Inner { epoch: self.instance, timer }),
                // Never read back: see the module documentation (reserved rounds).
                Effect::Persist(_) => {}
                Effect::Notify(Notice::Elected { .. }) => cx.notify(Notice::Elected { epoch: self.epoch.bits() }),
                Effect::Notify(notice) => cx.notify(notice),
            }
        }
        self.effects = effects;
        self.sync(cx);
    }

    /// Starts heartbeats when this process leads, watches its leader when it follows one, and watches the
    /// election when it has no leader.
    fn sync(&mut self, cx: &mut Cx<'_, Self>) {
        let follows = self.shown().leader.is_some();
        // Without a leader the process waits for the election to end; if it does not within the first timeout (a
        // candidate died in it), it starts another.
        if !follows && !self.waiting {
            self.waiting = true;
            cx.set_timer(MonitorTimer::Stall, Span::exactly(self.setup.first_timeout));
        } else if follows && self.waiting {
            self.waiting = false;
            cx.cancel_timer(MonitorTimer::Stall);
        }
        if self.leads() {
            if !self.beating {
                if self.poll.take().is_some() {
                    cx.cancel_timer(MonitorTimer::Poll);
                }
                self.beating = true;
                self.watching = false;
                cx.cancel_timer(MonitorTimer::Watch);
                self.beat(cx);
            }
        } else {
            if self.beating {
                self.beating = false;
                cx.cancel_timer(MonitorTimer::Beat);
            }
            if follows && !self.watching {
                self.watching = true;
                let wait = if self.seq == 0 { self.setup.first_timeout } else { self.setup.timeout };
                cx.set_timer(MonitorTimer::Watch, Span::exactly(wait + self.stagger()));
            } else if !follows && self.watching {
                self.watching = false;
                cx.cancel_timer(MonitorTimer::Watch);
            }
        }
    }

    /// Sends `msg` from the leader to everybody: to every neighbour, or round the ring.
    fn announce(&self, cx: &mut Cx<'_, Self>, msg: &MonitorMsg<<A::Process as Process>::Msg>) {
        match self.setup.shape {
            Shape::Ring => cx.send(self.setup.ring.map_or(Port(0), |r| r.next), msg.clone()),
            _ => {
                for k in 0..self.setup.neighbors.len() {
                    cx.send(self.setup.neighbors[k].port, msg.clone());
                }
            }
        }
    }

    /// Passes on a leader's announcement that arrived on `from`: round the ring, or flooded (on a complete graph
    /// everybody got it from the leader).
    fn relay(&self, cx: &mut Cx<'_, Self>, from: Port, msg: &MonitorMsg<<A::Process as Process>::Msg>) {
        match self.setup.shape {
            Shape::Complete => {}
            Shape::Ring => cx.send(self.setup.ring.map_or(from, |r| r.next), msg.clone()),
            Shape::Other | Shape::Mobile => {
                for k in 0..self.setup.neighbors.len() {
                    let port = self.setup.neighbors[k].port;
                    if port != from {
                        cx.send(port, msg.clone());
                    }
                }
            }
        }
    }

    /// Whether heartbeats are passed on from process to process (and so numbered, to pass each on once). On a
    /// complete graph each comes straight from the leader and carries the number 1: a leader's state then comes
    /// back to what it was after every beat, so a checker sees periodic behaviour close into a cycle.
    fn relayed(&self) -> bool {
        self.setup.shape != Shape::Complete
    }

    /// Sends the next heartbeat and arms the one after.
    fn beat(&mut self, cx: &mut Cx<'_, Self>) {
        self.seq = if self.relayed() { self.seq.saturating_add(1) } else { 1 };
        self.announce(cx, &MonitorMsg::Heartbeat { epoch: self.epoch, seq: self.seq, down: self.down });
        cx.set_timer(MonitorTimer::Beat, Span::exactly(self.setup.heartbeat));
        cx.rule(rule::BEAT);
    }

    /// The rank of process `id`, if it is a neighbour.
    fn rank_of(&self, id: NodeId) -> Option<Rank> {
        self.setup.neighbors.iter().find(|n| n.id == id).map(|n| n.rank)
    }

    /// Carries this process's leadership (or its following of a leader) into `epoch` without an election: the
    /// algorithm's instance stays, only the epoch its messages carry changes.
    fn renumber(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        self.forget_leader(cx);
        self.reserve(cx, epoch);
        self.catching_up = false;
        self.epoch = epoch;
        self.down = down;
    }

    /// A new epoch: whatever this process vouched for, and asked about, was of the old one.
    fn forget_leader(&mut self, cx: &mut Cx<'_, Self>) {
        self.kept = 0;
        if self.fresh {
            self.fresh = false;
            cx.cancel_timer(MonitorTimer::Quiet);
        }
        if self.poll.take().is_some() {
            cx.cancel_timer(MonitorTimer::Poll);
        }
    }

    /// Makes sure `epoch`'s round is within the durable reservation, before anything of `epoch` is sent: if it is
    /// beyond it, reserves [`RESERVED_ROUNDS`] rounds past it (one write).
    fn reserve(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if epoch.round() > self.reserved.round() {
            self.reserved = epoch.saturating_ahead(RESERVED_ROUNDS, self.setup.id);
            cx.persist((self.reserved, None));
        }
    }

    /// This leader heard the heartbeat of `epoch`, newer than its own, from a weaker leader (a straggler that led a
    /// side of a partition, or a process that elected itself while it could not hear this one). An election would
    /// elect this process again (the straggler won its side, this one is stronger), so it holds none: it carries
    /// its leadership into the epoch after `epoch` and beats at once, and every process that hears it follows it
    /// there (the straggler and its followers adopt it, its own followers carry on with it).
    fn restamp(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        let Some(next) = epoch.next(self.setup.id) else { return };
        self.renumber(cx, next, None);
        cx.notify(Notice::Elected { epoch: self.epoch.bits() });
        self.beat(cx);
    }

    /// Whether a message of `epoch`, started because `down` failed, names this process, alive, as the one that
    /// failed: a follower suspected it (a lost heartbeat or two). On a complete graph the process takes no part in
    /// that epoch ([`Self::disown`]): its election need not wait for the suspect ([`Setup::suspected`]), so the
    /// suspect must not elect itself in it too. (With ring repair, a process taken for dead rejoins the ring
    /// instead, unless it leads.)
    fn named_down(&self, epoch: Epoch, down: Option<NodeId>) -> bool {
        epoch > self.epoch && down == Some(self.setup.id) && !self.relayed() && (self.beating || !self.setup.hops)
    }

    /// This process, alive, heard of `epoch`, opened because it was taken for failed ([`Self::named_down`]). A
    /// leader carries its leadership above the epoch ([`Self::restamp`]): an election in it would elect this
    /// process again, and everybody who joined the epoch follows it there (on a complete graph its heartbeats say
    /// whose they are). Any other process starts the epoch after it, which everybody joins.
    fn disown(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if self.beating {
            self.restamp(cx, epoch)
        } else {
            self.catch_up(cx, epoch)
        }
        cx.rule(rule::DISOWN);
    }

    fn on_heartbeat(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, seq: u64, down: Option<NodeId>) {
        if epoch > self.epoch {
            return self.on_newer_heartbeat(cx, from, epoch, down);
        }
        if epoch < self.epoch {
            return self.answer_stale(cx, from); // A leader cut off (or paused) that does not know it was replaced.
        }
        if epoch == self.epoch && self.leads() && !self.relayed() && !self.setup.deaf_leaders {
            // Another process leads this epoch too: a timing fault (a one-way link, a partition that healed) let
            // two processes elect themselves in one epoch, each deaf to the other's election. Neither would ever
            // give way (each takes the other's heartbeats for its own epoch's), so this one starts the next epoch,
            // which everybody joins: its election has one winner.
            self.start_after(cx, self.epoch, None);
            return cx.rule(rule::TWO_LEADERS);
        }
        if epoch != self.epoch || self.leads() || (self.relayed() && seq <= self.seq) {
            return cx.rule(rule::SEEN); // An older epoch's leader, our own heartbeat back, or one already seen.
        }
        if !self.relayed() && self.shown().leader.is_none() && self.setup.neighbors[from.index()].rank > self.setup.rank
        {
            // The election of this epoch ended without this process (what would have told it was lost): it
            // follows the epoch's leader instead of stalling into a new election.
            self.follow(cx, from, seq);
            return cx.rule(rule::FOLLOW);
        }
        cx.rule(rule::ALIVE);
        self.seq = seq;
        if self.shown().leader == Some(self.neighbor(from)) {
            self.heard_leader(cx);
        }
        if self.watching {
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.setup.timeout + self.stagger()));
        }
        self.relay(cx, from, &MonitorMsg::Heartbeat { epoch, seq, down });
    }

    /// A heartbeat of `epoch`, newer than this process's, arrived on `from`. The world moved on while this process
    /// was away (or the epoch it started lost to a newer one), or a straggler that led on its own came back.
    fn on_newer_heartbeat(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, down: Option<NodeId>) {
        if self.named_down(epoch, down) && !self.beating {
            // Taken for failed in that epoch, whose elections need not wait for it: following its leader there, its
            // instance could later elect it in that epoch too (Garcia-Molina's own timeouts run elections). It opens
            // the next epoch instead.
            return self.catch_up(cx, epoch);
        }
        if !self.relayed() {
            // On a complete graph the heartbeat comes from the leader of `epoch` itself.
            let sender = self.setup.neighbors[from.index()];
            let me = self.setup.rank;
            let leader = self.shown().leader;
            if leader == Some(sender.id) && sender.rank > me && !self.beating {
                // The leader it follows carried its leadership into a newer epoch: it follows it there.
                self.renumber(cx, epoch, down);
                cx.rule(rule::RENUMBER);
                self.seq = 1;
                self.heard_leader(cx);
                if self.watching {
                    cx.set_timer(MonitorTimer::Watch, Span::exactly(self.setup.timeout + self.stagger()));
                }
                return;
            }
            if self.beating && sender.rank < me {
                self.restamp(cx, epoch);
                return cx.rule(rule::RESTAMP);
            }
            if self.watching && leader.and_then(|l| self.rank_of(l)).is_some_and(|l| l > sender.rank) {
                // It follows a live leader stronger than the sender: that leader carries its leadership above the
                // sender's epoch when the two hear each other, and this process follows it then.
                return cx.rule(rule::STRONGER_LEADER);
            }
            if sender.rank > me {
                // That epoch's election is over, and its leader would win again: follow it without an election.
                return self.adopt(cx, epoch, down, from);
            }
        }
        // Otherwise start the next epoch rather than run an election inside a decided one (two leaders would then
        // share it).
        self.catch_up(cx, epoch);
    }

    /// Leaves the current epoch for `epoch`, started because `down` failed (if it was), with a fresh instance of
    /// the algorithm, which initiates.
    fn start_epoch(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        self.reserve(cx, epoch);
        if self.beating {
            // A leader that moves on takes its followers along, rather than leaving them to suspect it.
            self.announce(cx, &MonitorMsg::Join { epoch, down });
        }
        self.enter_epoch(cx, epoch, down, true);
    }

    /// Enters `epoch` with a fresh instance of the algorithm, which initiates if `initiate` (and otherwise waits:
    /// a straggler that adopts the epoch's leader takes no part in its election).
    fn enter_epoch(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>, initiate: bool) {
        // The epoch's instance is told whose silence opened it, so that it waits for no answer from that process
        // (see the module documentation), unless this process still hears that one as its leader.
        let heard = if self.watching { self.shown().leader } else { None };
        let suspected = down.filter(|&d| d != self.setup.id && Some(d) != heard);
        self.reserve(cx, epoch);
        self.forget_leader(cx);
        self.adopted = None;
        if let Some(d) = down.filter(|&d| d != self.setup.id) {
            self.dead.insert(d);
        }
        // Whoever started the epoch was alive then (a recovered process rejoins the ring this way).
        self.dead.remove(&epoch.starter());
        self.epoch = epoch;
        self.instance = epoch;
        self.down = down;
        self.seq = 0;
        // What was sent in the old epoch is stale wherever it is, and the new election gets its own time.
        self.unacked.clear();
        cx.cancel_timer(MonitorTimer::Hop);
        self.waiting = false;
        cx.cancel_timer(MonitorTimer::Stall);
        self.inner = self.algorithm.build(&Setup { suspected: suspected.as_slice(), ..self.setup.setup() });
        let down: Vec<Port> = self.links_down.iter().copied().collect();
        self.run(cx, |p, cx| {
            p.on_start(cx, None);
            for port in down {
                p.on_link(cx, port, false);
            }
            if initiate {
                p.on_command(cx, Command::Initiate);
            }
        });
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
    type Msg = MonitorMsg<<A::Process as Process>::Msg>;
    type Timer = MonitorTimer<<A::Process as Process>::Timer>;
    /// The reservation (see the module documentation), and a place for the algorithm's durable state, which is
    /// no longer written (`None`; files written before hold the epoch and that state, and read the same).
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
                self.reserve(cx, Epoch::of(1, self.setup.id));
                self.run(cx, |p, cx| p.on_start(cx, None));
            }
        }
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg) {
        self.dead.remove(&self.neighbor(from));
        match msg {
            MonitorMsg::Heartbeat { epoch, seq, down } => self.on_heartbeat(cx, from, epoch, seq, down),
            MonitorMsg::Join { epoch, .. } if epoch > self.epoch && self.catching_up => self.catch_up(cx, epoch),
            MonitorMsg::Join { epoch, down } | MonitorMsg::Inner { epoch, down, .. }
                if self.named_down(epoch, down) =>
            {
                self.disown(cx, epoch);
            }
            MonitorMsg::Join { epoch, down } if epoch > self.epoch => {
                self.start_epoch(cx, epoch, down);
                self.relay(cx, from, &MonitorMsg::Join { epoch, down });
                cx.rule(rule::JOIN);
            }
            MonitorMsg::Join { .. } => cx.rule(rule::SEEN), // Already there.
            MonitorMsg::Inner { epoch, .. } if epoch < self.epoch => self.answer_stale(cx, from), // A stale epoch.
            MonitorMsg::Inner { epoch, .. } if epoch > self.epoch && self.catching_up => self.catch_up(cx, epoch),
            MonitorMsg::Inner { epoch, down, msg } => {
                if epoch > self.epoch {
                    self.start_epoch(cx, epoch, down);
                }
                cx.rule(rule::DELIVER);
                let from = self.incoming(from);
                self.run(cx, |p, cx| p.on_message(cx, from, msg));
            }
            MonitorMsg::Ring { epoch, down, forward, msg } => {
                cx.send(from, MonitorMsg::HopAck { epoch });
                cx.rule(rule::DELIVER);
                if self.named_down(epoch, down) {
                    return self.disown(cx, epoch);
                }
                if epoch < self.epoch {
                    return self.answer_stale(cx, from); // A stale epoch.
                }
                if epoch > self.epoch && self.catching_up {
                    return self.catch_up(cx, epoch);
                }
                if epoch > self.epoch {
                    self.start_epoch(cx, epoch, down);
                }
                let from = self.arrived_round(from, forward);
                self.run(cx, |p, cx| p.on_message(cx, from, msg));
            }
            MonitorMsg::HopAck { epoch } => self.on_hop_ack(cx, from, epoch),
            MonitorMsg::PreVote { epoch, leader } => self.on_pre_vote(cx, from, epoch, leader),
            MonitorMsg::PreVoteReply { epoch, hears } => self.on_pre_vote_reply(cx, from, epoch, hears),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Self::Timer) {
        match timer {
            MonitorTimer::Inner { epoch, timer } if epoch == self.instance => {
                self.run(cx, |p, cx| p.on_timer(cx, timer));
            }
            MonitorTimer::Inner { .. } => cx.rule(rule::OLD_TIMER), // Armed by an instance this process has left.
            MonitorTimer::Beat if self.beating => self.beat(cx),
            MonitorTimer::Watch if self.watching => {
                self.watching = false;
                match self.shown().leader {
                    Some(suspect) if self.setup.pre_vote && suspect != self.setup.id && self.poll.is_none() => {
                        self.ask_about(cx, suspect, 1, None);
                    }
                    suspect => self.depose(cx, suspect),
                }
            }
            MonitorTimer::Quiet => {
                self.fresh = false;
                cx.rule(rule::QUIET);
            }
            MonitorTimer::Poll => {
                if let Some(poll) = self.poll.take() {
                    if poll.tries < PRE_VOTE_TRIES {
                        self.ask_about(cx, poll.suspect, poll.tries + 1, Some(poll));
                    } else {
                        // Too few answers, a round trip apart, PRE_VOTE_TRIES times: nobody vouches for the leader.
                        self.nobody_hears(cx, poll.suspect);
                    }
                }
            }
            MonitorTimer::Stall if self.waiting => {
                self.waiting = false;
                self.start_after(cx, self.epoch, None);
                cx.rule(rule::STALL);
            }
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
            Command::Resign | Command::Leave => self.run(cx, |p, cx| p.on_command(cx, cmd)),
        }
    }

    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        if up {
            self.links_down.remove(&port);
        } else {
            self.links_down.insert(port);
        }
        self.run(cx, |p, cx| p.on_link(cx, port, up));
    }

    fn status(&self) -> Status {
        Status { epoch: self.epoch.bits(), ..self.shown() }
    }

    /// The algorithm's own view of this epoch's instance, with the epoch, the leader it follows without an
    /// election (if it adopted one), and the leader it is asking about in a pre-vote.
    fn view(&self, peers: &Peers<'_>) -> View {
        let view = self.inner.view(peers);
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

/// A driver of an algorithm inside the leader monitor alone (`--bare-monitor`), timed for `network`. An algorithm
/// that elects the earliest initiator cannot run in it: `Err` says why.
pub struct Bare<D> {
    /// The driver.
    pub driver: D,
    /// What the monitor's timing depends on.
    pub network: MonitorNetwork,
    /// The heartbeat period, in multiples of `T`.
    pub heartbeat: u64,
}

impl<D: Driver> Driver for Bare<D> {
    type Output = Result<D::Output, crate::algorithm::ElectsEarliest>;

    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        if algorithm.winner() == Winner::EarliestInitiator {
            return Err(crate::algorithm::ElectsEarliest(A::INFO.name));
        }
        let config = MonitorConfig::for_network(&algorithm, &self.network, self.heartbeat);
        Ok(self.driver.drive(LeaderMonitor::new(algorithm, config)))
    }
}

impl<A: Algorithm> LeaderMonitor<A> {
    /// `inner`, re-elected when its leader fails, with `config`'s timing.
    pub fn new(inner: A, config: MonitorConfig) -> Self {
        Self { inner: inner.monitored(), config }
    }
}

impl<A: Algorithm> Algorithm for LeaderMonitor<A> {
    type Process = Monitored<A>;
    const INFO: &'static Info = A::INFO;

    /// The algorithm's own parameters, with heartbeats every `2T` and a one-hop timeout.
    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(A::from_params(params)?, MonitorConfig::new(2, 1, 5)))
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        self.inner.validate(ids)
    }

    fn build(&self, setup: &Setup<'_>) -> Monitored<A> {
        let t = setup.delay_bound.expect("the leader monitor needs a delay bound; drivers check it");
        // A ring algorithm alone on a complete graph (a cluster of one member) has a ring of itself: the monitor
        // hands every message it sends round the ring back to it, as to a process whose every neighbour is dead.
        // On a logical ring of two, both neighbours are the same process: the algorithm is given a port of its own
        // for each direction (the monitor sends both round the ring), so that it tells its two sides apart.
        let alone = A::INFO.needs == Needs::Ring && setup.shape == Shape::Complete && setup.neighbors.is_empty();
        let logical = A::INFO.needs == Needs::Ring && !setup.ring_order.is_empty();
        let ring = match setup.ring {
            _ if alone => Some(RingPorts { next: Port(0), prev: Port(1) }),
            Some(r) if logical && r.next == r.prev => {
                Some(RingPorts { next: r.next, prev: Port(setup.neighbors.len() as u32) })
            }
            ring => ring,
        };
        let owned = Owned {
            id: setup.id,
            rank: setup.rank,
            neighbors: setup.neighbors.to_vec(),
            ring,
            ring_order: setup.ring_order.to_vec(),
            shape: setup.shape,
            delay_bound: setup.delay_bound,
            diameter: setup.diameter,
            heartbeat: t * self.config.heartbeat,
            timeout: t * self.config.timeout + Duration::TICK,
            first_timeout: t * (self.config.timeout + self.config.grace) + Duration::TICK,
            stagger: t * self.config.stagger,
            hops: alone || logical,
            hop_timeout: t * 2 + Duration::TICK,
            deaf_leaders: self.config.deaf_leaders,
            pre_vote: setup.shape == Shape::Complete && setup.neighbors.len() >= 2,
            quiet: t * (self.config.heartbeat + 1),
        };
        Monitored {
            inner: self.inner.build(&owned.setup()),
            algorithm: Arc::new(self.inner.clone()),
            setup: Arc::new(owned),
            epoch: Epoch::ZERO,
            down: None,
            seq: 0,
            dead: BTreeSet::new(),
            links_down: BTreeSet::new(),
            unacked: VecDeque::new(),
            alone: VecDeque::new(),
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
            effects: Vec::new(),
        }
    }

    /// The algorithm's properties, except that its safety is judged once the run has settled: between a
    /// leader's crash and its detection, followers still name the dead leader. P-Unique holds per epoch.
    fn checks(&self) -> Vec<Check> {
        let mut checks: Vec<Check> = self
            .inner
            .checks()
            .into_iter()
            .map(|c| if c.property == Property::Safety { Check::at_end(Property::Safety) } else { c })
            .collect();
        if !checks.contains(&Check::always(Property::Uniqueness)) {
            checks.push(Check::always(Property::Uniqueness));
        }
        checks
    }

    /// Every live process takes part in a re-election (but one named as failed, which opens the next), so the
    /// strongest live process wins.
    fn winner(&self) -> Winner {
        Winner::StrongestLive
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        self.inner.election_time(facts, t)
    }

    /// A leader's crash is noticed within a heartbeat period plus the timeout; then one election, and its first
    /// heartbeat.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        // The weakest follower waits a stagger per stronger process before it suspects.
        let stagger = self.config.stagger * facts.nodes.saturating_sub(1);
        let detect = self.config.heartbeat + self.config.timeout + stagger + self.config.grace + 1;
        // On a logical ring, a message may wait 2T + ε at each dead process, once in each direction.
        let skips = (t * 2 + Duration::TICK) * (2 * facts.nodes.saturating_sub(facts.live));
        Some(t * detect + self.inner.election_time(facts, t) + skips)
    }

    /// A re-election has no closed form; the bounds of one election apply to runs without faults, not counting
    /// heartbeats.
    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        if facts.crashes_during_run > 0 {
            return Vec::new();
        }
        // Every process that hears of the election takes part in it.
        let mut bounds = self.inner.bounds(&Facts { initiators: facts.nodes, ..*facts });
        for bound in &mut bounds {
            if bound.measure == Measure::Messages {
                bound.measure = Measure::AllBut(MONITOR_KINDS);
            }
        }
        bounds
    }
}

#[cfg(test)]
mod tests {
    use elect_core::driver;
    use elect_core::{Effect, Event, EventOf};

    use super::*;
    use crate::bully::Bully;

    type Node = Monitored<Bully>;
    type Effects = Vec<EffectOf<Node>>;

    const A: NodeId = NodeId(1);
    const B: NodeId = NodeId(2);
    const C: NodeId = NodeId(3);

    /// Process `me` of Bully under the monitor on the complete graph on A, B and C, not started yet.
    fn build(me: NodeId) -> Node {
        let monitor = LeaderMonitor::new(Bully::from_params(&Params::default()).unwrap(), MonitorConfig::new(2, 1, 5));
        crate::testing::on_complete_graph(me, &[A, B, C], Duration::from_ticks(1000), |setup| monitor.build(setup))
    }

    fn step(p: &mut Node, event: EventOf<Node>) -> Effects {
        let mut effects = Vec::new();
        driver::handle(p, Instant::ZERO, event, &mut effects);
        effects
    }

    /// What the step made durable, in order.
    fn persisted(effects: &Effects) -> Vec<Epoch> {
        effects.iter().filter_map(|e| if let Effect::Persist((r, _)) = e { Some(*r) } else { None }).collect()
    }

    /// Whether the step's first effect that leaves the process (a send) comes after its last write.
    fn written_before_sent(effects: &Effects) -> bool {
        let last_write = effects.iter().rposition(|e| matches!(e, Effect::Persist(_)));
        let first_send = effects.iter().position(|e| matches!(e, Effect::Send { .. }));
        matches!((last_write, first_send), (Some(w), Some(s)) if w < s)
    }

    fn join(p: &mut Node, from: NodeId, epoch: Epoch) -> Effects {
        let from = p.setup.neighbors.iter().find(|n| n.id == from).unwrap().port;
        step(p, Event::Message { from, msg: MonitorMsg::Join { epoch, down: None } })
    }

    #[test]
    fn one_write_reserves_the_rounds_ahead_and_a_process_writes_again_only_beyond_them() {
        let mut b = build(B);
        assert_eq!(persisted(&step(&mut b, Event::Start { restored: None })), [Epoch::of(RESERVED_ROUNDS + 1, B)]);
        let started = step(&mut b, Event::Command(Command::Initiate));
        assert_eq!((b.epoch(), persisted(&started)), (Epoch::of(1, B), vec![]), "round 1 is reserved");
        assert!(started.iter().any(|e| matches!(e, Effect::Send { .. })), "its election starts at once");
        // Joining epochs of other processes, up to the last reserved round, writes nothing.
        assert!(persisted(&join(&mut b, C, Epoch::of(5, C))).is_empty());
        assert!(persisted(&join(&mut b, A, Epoch::of(RESERVED_ROUNDS + 1, A))).is_empty());
        // Beyond it, the next reservation is durable before anything of the new epoch leaves.
        let beyond = join(&mut b, C, Epoch::of(RESERVED_ROUNDS + 2, C));
        assert_eq!(persisted(&beyond), [Epoch::of(2 * RESERVED_ROUNDS + 2, B)]);
        assert!(written_before_sent(&beyond), "{beyond:?}");
        assert_eq!(b.epoch(), Epoch::of(RESERVED_ROUNDS + 2, C));
    }

    #[test]
    fn a_recovered_process_starts_above_every_epoch_it_was_in_and_reserves_before_it_tells_anyone() {
        let mut b = build(B);
        step(&mut b, Event::Start { restored: None });
        step(&mut b, Event::Command(Command::Initiate));
        join(&mut b, C, Epoch::of(9, C));
        let reserved = Epoch::of(RESERVED_ROUNDS + 1, B);
        // It crashes; its durable state is its reservation.
        let mut again = build(B);
        assert!(persisted(&step(&mut again, Event::Start { restored: Some((reserved, None)) })).is_empty());
        assert!(again.epoch() >= Epoch::of(9, C), "the epoch it shows does not go backwards");
        let started = step(&mut again, Event::Command(Command::Initiate));
        assert_eq!(again.epoch(), Epoch::of(RESERVED_ROUNDS + 2, B), "above every round it reserved");
        assert_eq!(persisted(&started), [Epoch::of(2 * RESERVED_ROUNDS + 2, B)]);
        assert!(written_before_sent(&started), "{started:?}");
        // An epoch it may have been in before the crash is stale now.
        assert!(persisted(&join(&mut again, C, Epoch::of(RESERVED_ROUNDS + 1, C))).is_empty());
        assert_eq!(again.epoch(), Epoch::of(RESERVED_ROUNDS + 2, B));
    }

    #[test]
    fn a_follower_that_suspects_its_leader_reserves_before_its_join_leaves() {
        let mut a = build(A);
        step(&mut a, Event::Start { restored: Some((Epoch::of(RESERVED_ROUNDS, A), None)) });
        step(&mut a, Event::Command(Command::Initiate));
        let reserved = 2 * RESERVED_ROUNDS + 1;
        assert_eq!(a.reserved, Epoch::of(reserved, A));
        // C, stronger, beats in the last reserved round: A follows it without an election, and without a write.
        let from = a.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
        let heartbeat = MonitorMsg::Heartbeat { epoch: Epoch::of(reserved, C), seq: 1, down: None };
        assert!(persisted(&step(&mut a, Event::Message { from, msg: heartbeat })).is_empty());
        assert_eq!(a.status().leader, Some(C));
        // C falls silent, and B does not hear it either: A starts the next round, beyond its reservation, and tells
        // everybody.
        let suspected = suspect(&mut a, C, B);
        assert_eq!(a.epoch(), Epoch::of(reserved + 1, A));
        assert_eq!(persisted(&suspected), [Epoch::of(reserved + 1 + RESERVED_ROUNDS, A)]);
        let first_send = suspected.iter().find(|e| matches!(e, Effect::Send { .. }));
        assert!(matches!(first_send, Some(Effect::Send { msg: MonitorMsg::Join { .. }, .. })), "{suspected:?}");
        assert!(written_before_sent(&suspected), "{suspected:?}");
    }

    /// `p`'s watch on its leader `leader` runs out: it asks the others whether they hear it, and nothing else.
    /// Then `other` answers that it does not: the returned step.
    fn suspect(p: &mut Node, leader: NodeId, other: NodeId) -> Effects {
        let asked = step(p, Event::Timer(MonitorTimer::Watch));
        let epoch = p.epoch();
        let questions: Vec<NodeId> = asked
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, msg: MonitorMsg::PreVote { epoch: e, leader: l } }
                    if *e == epoch && *l == leader =>
                {
                    Some(p.neighbor(*to))
                }
                _ => None,
            })
            .collect();
        assert_eq!(questions.len(), 2, "a question to each other process: {asked:?}");
        assert!(persisted(&asked).is_empty() && p.status().leader == Some(leader), "{asked:?}");
        let from = p.setup.neighbors.iter().find(|n| n.id == other).unwrap().port;
        step(p, Event::Message { from, msg: MonitorMsg::PreVoteReply { epoch, hears: false } })
    }

    /// B, having followed C, stops hearing it (its watch runs out) or hears that A did.
    fn follower_of_c() -> Node {
        let mut b = build(B);
        step(&mut b, Event::Start { restored: None });
        step(&mut b, Event::Command(Command::Initiate));
        let from = b.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
        step(
            &mut b,
            Event::Message { from, msg: MonitorMsg::Heartbeat { epoch: Epoch::of(1, C), seq: 1, down: None } },
        );
        assert_eq!(b.status().leader, Some(C));
        b
    }

    /// Whether the step sends the algorithm's `coordinator` (B bullies A).
    fn claims(effects: &Effects) -> bool {
        effects.iter().any(|e| {
            matches!(e, Effect::Send { msg: MonitorMsg::Inner { msg: crate::bully::Msg::Coordinator { .. }, .. }, .. })
        })
    }

    #[test]
    fn a_follower_deaf_to_a_leader_the_others_hear_keeps_following_it() {
        let mut b = follower_of_c();
        let epoch = b.epoch();
        step(&mut b, Event::Timer(MonitorTimer::Watch));
        // A heard C lately: with C, a majority hears it. B keeps following C in its epoch, and looks again one
        // heartbeat period later.
        let a = b.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
        let kept = step(&mut b, Event::Message { from: a, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
        assert_eq!((b.epoch(), b.status().leader), (epoch, Some(C)), "{kept:?}");
        assert!(kept.iter().all(|e| !matches!(e, Effect::Send { .. })), "{kept:?}");
        let watch = Span::exactly(b.setup.heartbeat);
        assert!(kept.contains(&Effect::SetTimer { timer: MonitorTimer::Watch, after: watch }), "{kept:?}");
        // It still hears nothing; asked again, A still hears C: B has been kept twice in a row.
        step(&mut b, Event::Timer(MonitorTimer::Watch));
        let again = step(&mut b, Event::Message { from: a, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
        assert!(again.contains(&Effect::SetTimer { timer: MonitorTimer::Watch, after: watch }), "{again:?}");
        // This time A does not hear C either. The pre-votes before found the contrary, so B confirms it once, a
        // heartbeat period later (the whole machine may have stalled).
        let confirming = suspect(&mut b, C, A);
        assert_eq!((b.epoch(), b.status().leader), (epoch, Some(C)), "{confirming:?}");
        assert!(confirming.contains(&Effect::SetTimer { timer: MonitorTimer::Watch, after: watch }), "{confirming:?}");
        // A still does not hear C: B opens a new epoch.
        let suspected = suspect(&mut b, C, A);
        assert_eq!((b.epoch(), b.status().leader), (Epoch::of(2, B), Some(B)), "{suspected:?}");
    }

    #[test]
    fn a_follower_asks_again_while_answers_are_missing_then_moves_on() {
        let mut b = follower_of_c();
        step(&mut b, Event::Timer(MonitorTimer::Watch));
        for _ in 1..PRE_VOTE_TRIES {
            let again = step(&mut b, Event::Timer(MonitorTimer::Poll));
            let asked = again.iter().filter(|e| matches!(e, Effect::Send { msg: MonitorMsg::PreVote { .. }, .. }));
            assert_eq!((asked.count(), b.status().leader), (2, Some(C)), "{again:?}");
        }
        step(&mut b, Event::Timer(MonitorTimer::Poll));
        assert_eq!((b.epoch(), b.status().leader), (Epoch::of(2, B), Some(B)));
    }

    #[test]
    fn the_answers_of_every_try_of_a_pre_vote_add_up() {
        // Five processes; 4 follows 5 and suspects it. A majority is three: 4's own word does not count, so two
        // others who hear 5 keep it (with 5 vouched for), whichever try their answers came in.
        let ids = [NodeId(1), NodeId(2), NodeId(3), NodeId(4), NodeId(5)];
        let monitor = LeaderMonitor::new(Bully::from_params(&Params::default()).unwrap(), MonitorConfig::new(2, 1, 5));
        let mut d: Node =
            crate::testing::on_complete_graph(ids[3], &ids, Duration::from_ticks(1000), |setup| monitor.build(setup));
        step(&mut d, Event::Start { restored: None });
        step(&mut d, Event::Command(Command::Initiate));
        let port = |d: &Node, id: NodeId| d.setup.neighbors.iter().find(|n| n.id == id).unwrap().port;
        let (one, two, five) = (port(&d, ids[0]), port(&d, ids[1]), port(&d, ids[4]));
        let beat = MonitorMsg::Heartbeat { epoch: Epoch::of(1, ids[4]), seq: 1, down: None };
        step(&mut d, Event::Message { from: five, msg: beat });
        let epoch = d.epoch();
        step(&mut d, Event::Timer(MonitorTimer::Watch));
        // 1 hears 5 on the first try; 2's answer to it is lost, and it answers the second.
        step(&mut d, Event::Message { from: one, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
        assert!(d.poll.is_some(), "one answer is no majority");
        step(&mut d, Event::Timer(MonitorTimer::Poll));
        step(&mut d, Event::Message { from: two, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
        assert!(d.poll.is_none(), "1's answer to the first try and 2's to the second make a majority");
        assert_eq!((d.epoch(), d.status().leader), (epoch, Some(ids[4])), "4 keeps following 5");
    }

    #[test]
    fn only_the_leader_and_followers_that_heard_it_lately_vouch_for_it() {
        let mut b = follower_of_c();
        let epoch = b.epoch();
        let a = b.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
        let ask = |b: &mut Node| {
            let asked = MonitorMsg::PreVote { epoch, leader: C };
            step(b, Event::Message { from: a, msg: asked })
                .into_iter()
                .find_map(|e| match e {
                    Effect::Send { msg: MonitorMsg::PreVoteReply { hears, .. }, .. } => Some(hears),
                    _ => None,
                })
                .unwrap()
        };
        assert!(ask(&mut b), "B heard C's heartbeat");
        step(&mut b, Event::Timer(MonitorTimer::Quiet));
        assert!(!ask(&mut b), "B heard nothing for the quiet time");
    }

    #[test]
    fn the_strongest_survivor_claims_at_once_without_waiting_for_the_leader_it_suspects() {
        let mut b = follower_of_c();
        let suspected = suspect(&mut b, C, A);
        assert_eq!(b.epoch(), Epoch::of(2, B));
        assert!(claims(&suspected), "B claims in the step that suspects C: {suspected:?}");
        assert_eq!(b.status().leader, Some(B));
        // C still hears of the election, in case it is alive (it then carries its leadership above the epoch).
        let told = suspected.iter().any(
            |e| matches!(e, Effect::Send { to, msg: MonitorMsg::Inner { down: Some(C), .. } } if b.neighbor(*to) == C),
        );
        assert!(told, "{suspected:?}");
    }

    #[test]
    fn a_process_that_still_hears_the_suspect_waits_for_its_answer() {
        let mut b = follower_of_c();
        let from = b.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
        let epoch = Epoch::of(2, A);
        let joined = step(&mut b, Event::Message { from, msg: MonitorMsg::Join { epoch, down: Some(C) } });
        assert_eq!(b.epoch(), epoch);
        assert!(!claims(&joined), "B waits for C's answer: {joined:?}");
        assert_eq!(b.status().leader, None);
    }

    #[test]
    fn a_process_taken_for_failed_takes_no_part_in_that_epoch_and_opens_the_next() {
        // B runs an election (it waits for C's answer), so it does not beat; A takes it for failed.
        let mut b = build(B);
        step(&mut b, Event::Start { restored: None });
        step(&mut b, Event::Command(Command::Initiate));
        assert_eq!(b.status().leader, None);
        let from = b.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
        let epoch = Epoch::of(3, A);
        let named = step(&mut b, Event::Message { from, msg: MonitorMsg::Join { epoch, down: Some(B) } });
        let next = epoch.next(B).unwrap();
        assert_eq!(b.epoch(), next, "B takes no part in an epoch whose election does not wait for it");
        // Its election in the next epoch tells the others (C first: B is weaker).
        let opens = named
            .iter()
            .any(|e| matches!(e, Effect::Send { msg: MonitorMsg::Inner { epoch, .. }, .. } if *epoch == next));
        assert!(opens, "{named:?}");
    }

    #[test]
    fn a_process_taken_for_failed_does_not_follow_the_leader_of_that_epoch() {
        let mut b = build(B);
        step(&mut b, Event::Start { restored: None });
        step(&mut b, Event::Command(Command::Initiate));
        let from = b.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
        let epoch = Epoch::of(3, C);
        step(&mut b, Event::Message { from, msg: MonitorMsg::Heartbeat { epoch, seq: 1, down: Some(B) } });
        assert_eq!(b.epoch(), epoch.next(B).unwrap(), "B opens the epoch after the one that named it");
        // A heartbeat of an epoch that names another process is followed as before.
        let mut a = build(A);
        step(&mut a, Event::Start { restored: None });
        step(&mut a, Event::Command(Command::Initiate));
        let from = a.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
        step(&mut a, Event::Message { from, msg: MonitorMsg::Heartbeat { epoch, seq: 1, down: Some(B) } });
        assert_eq!((a.epoch(), a.status().leader), (epoch, Some(C)));
    }
}
