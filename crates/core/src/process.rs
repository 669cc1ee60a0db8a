//! The sans-IO `Process` trait: every algorithm is a deterministic state machine that the simulator, the model
//! checker and the network runtime drive unchanged.
//!
//! A handler takes `&mut self`, one input and a [`Cx`] that records the effects; it never does I/O, reads a clock,
//! spawns, or holds a random generator. Randomized timeouts are a [`Span`] the driver draws from.
//!
//! # The driver contract
//!
//! 1. Effects are applied in the order they were recorded. A [`Effect::Persist`] is durable before any later
//!    [`Effect::Send`] of the same step leaves the process.
//! 2. [`Effect::SetTimer`] replaces the pending deadline of the same timer kind (the same `Timer` value);
//!    [`Effect::CancelTimer`] is idempotent. Processes tolerate a timer that fires after they stopped caring.
//! 3. `now` never goes backwards for a process.
//! 4. The network delivers what the driver's network model says (the simulator: reliable FIFO links by default).
//! 5. A crash drops the process value, its timers and its undelivered inputs. A restart builds a fresh process
//!    from its [`Setup`] and calls [`Process::on_start`] with the last persisted durable state, then delivers
//!    [`Command::Initiate`]. Building and `on_start` are one step: nothing observes the process in between
//!    (properties are judged on the state `on_start` leaves).
//!
//! The contract is written once, in [`crate::driver`]: every driver runs a handler with [`crate::driver::handle`],
//! carries its effects out with [`crate::driver::carry_out`] through its own [`crate::driver::Host`], and restarts a
//! process with [`crate::driver::recover`].

use std::borrow::Cow;
use std::fmt::Debug;
use std::hash::Hash;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Duration, Epoch, Instant, NodeId, Peers, Rank, Span, Status, StatusKey, Validate, View};

/// A local link end: the index of a neighbour in [`Setup::neighbors`].
///
/// Links are named by ports, not by the peer's id, because two distinct links may join the same pair of processes
/// (a bidirectional ring of two nodes) or a process to itself (a ring of one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Port(pub u32);

impl Port {
    /// The position of this port in [`Setup::neighbors`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One end of a link as the process sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Neighbor {
    /// The local port of the link.
    pub port: Port,
    /// The process at the other end.
    pub id: NodeId,
    /// Its rank.
    pub rank: Rank,
}

/// Ring orientation, given to processes on a ring: unidirectional algorithms send to `next`
/// (from position `i` to `i + 1`); bidirectional ones use both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingPorts {
    /// The clockwise neighbour's port.
    pub next: Port,
    /// The counter-clockwise neighbour's port.
    pub prev: Port,
}

/// The shape of the network a process is in: lets infrastructure (the leader monitor) pick how to spread a
/// message to everybody.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A ring: pass it on round the ring.
    Ring,
    /// A complete graph: everybody is a neighbour.
    Complete,
    /// Anything else: flood it.
    Other,
    /// A mobile network: every other process has a port, but a link works only while the two are in range. No
    /// link is up until the driver reports it with [`Process::on_link`], and it reports every change after.
    Mobile,
}

/// What a driver tells a process when it builds it. Borrowed: a process keeps only what it needs.
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    /// Own id.
    pub id: NodeId,
    /// Own rank under the run's ranking.
    pub rank: Rank,
    /// Every link of this process, indexed by [`Port`]. On a complete graph this is the list of all other
    /// processes (the Bully model's "ids known to everybody").
    pub neighbors: &'a [Neighbor],
    /// The ring orientation, when the topology is a ring or a logical ring over a complete graph.
    pub ring: Option<RingPorts>,
    /// On a logical ring over a complete graph, the ports of the other processes in ring order starting with
    /// `ring.next`, so that a process can skip a dead successor (S000, S001); empty otherwise.
    pub ring_order: &'a [Port],
    /// The shape of the network.
    pub shape: Shape,
    /// The bound `T` on one-way message delay, when the network model has one. Timeout-based algorithms derive
    /// their timeouts from it.
    pub delay_bound: Option<Duration>,
    /// The network's diameter `D` (or an upper bound on it), when the driver knows it: synchronous flooding
    /// algorithms run that many rounds.
    pub diameter: Option<u32>,
    /// Processes the environment's failure detector believes crashed when it builds this process: the leader
    /// monitor builds each epoch's instance naming the leader whose silence opened the epoch (and keeps a suspect
    /// that is alive out of that epoch). An algorithm may wait for no answer from them (S001's "knows its id is the
    /// highest"). Drivers name none when they build processes themselves.
    pub suspected: &'a [NodeId],
}

/// A [`Setup`] a process owns: what a process that runs another one keeps for its whole life (the leader monitor,
/// the deployed member), so that it can build a fresh instance of the algorithm it runs whenever it needs one.
/// It keeps everything but the suspects, which each build names for itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnedSetup {
    /// Own id.
    pub id: NodeId,
    /// Own rank.
    pub rank: Rank,
    /// Every link, indexed by [`Port`].
    pub neighbors: Vec<Neighbor>,
    /// The ring orientation, if any.
    pub ring: Option<RingPorts>,
    /// The other processes in ring order, on a logical ring over a complete graph.
    pub ring_order: Vec<Port>,
    /// The shape of the network.
    pub shape: Shape,
    /// The delay bound `T`, if the network model has one.
    pub delay_bound: Option<Duration>,
    /// The network's diameter, if the driver knows it.
    pub diameter: Option<u32>,
}

impl Setup<'_> {
    /// This setup, owned (without its suspects).
    pub fn to_owned(&self) -> OwnedSetup {
        OwnedSetup {
            id: self.id,
            rank: self.rank,
            neighbors: self.neighbors.to_vec(),
            ring: self.ring,
            ring_order: self.ring_order.to_vec(),
            shape: self.shape,
            delay_bound: self.delay_bound,
            diameter: self.diameter,
        }
    }
}

impl OwnedSetup {
    /// The setup to build a process with, suspecting nobody.
    pub fn setup(&self) -> Setup<'_> {
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

/// A local request from outside the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    /// Start an election: at initialization, after detecting a leader failure, or after recovering.
    Initiate,
    /// Give up leadership (processes that do not lead ignore it).
    Resign,
    /// Leave for good (a graceful shutdown): give up leadership, tell the others, and take no further part.
    /// Algorithms ignore it; the deployed member acts on it.
    Leave,
    /// Hand leadership over to member `to`: a leader asks the members that would outrank `to` to stand aside
    /// while `to` takes over, and resigns. Algorithms ignore it; the deployed member acts on it.
    Transfer {
        /// The member that should lead next.
        to: NodeId,
    },
    /// Make member `id` a voter: a leader changes the voting configuration, one member at a time. Algorithms
    /// ignore it; the deployed member acts on it.
    AddVoter {
        /// The member to add.
        id: NodeId,
    },
    /// Make member `id` a voter no more. Algorithms ignore it; the deployed member acts on it.
    RemoveVoter {
        /// The member to remove.
        id: NodeId,
    },
}

/// Something a process wants its environment to know, besides its [`Status`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "notice")]
pub enum Notice {
    /// This process performed the algorithm's "I am the leader" action (P-Unique counts these).
    Elected {
        /// The epoch it was elected in.
        epoch: Epoch,
    },
    /// This process took pulse `pulse` of a synchronous algorithm on a synchronizer: drivers measure the
    /// synchronizer's set-up and per-pulse time from these.
    Pulse {
        /// The round, from 1.
        pulse: u32,
    },
    /// This process stopped leading under `epoch` (the deployed member's fencing epoch): from now on, writes
    /// fenced with it must be refused.
    Ended {
        /// The epoch of the leadership that ended.
        epoch: Epoch,
    },
    /// The leadership this process shows changed: its leader (`None` while it can vouch for none) and that
    /// leadership's fencing epoch (the deployed member's view, which applications read).
    Shows {
        /// The leader it shows.
        leader: Option<NodeId>,
        /// The fencing epoch of that leadership; with no leader, that of the last one (it never goes backwards).
        epoch: Epoch,
    },
}

/// An effect recorded by a handler, for the driver to carry out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Effect<M, T, D> {
    /// Send `msg` over the link at `to`.
    Send {
        /// The local port of the link.
        to: Port,
        /// The message.
        msg: M,
    },
    /// Arm `timer` to fire after a duration drawn from `after`, replacing its pending deadline.
    SetTimer {
        /// The timer kind.
        timer: T,
        /// The range the driver draws the duration from.
        after: Span,
    },
    /// Disarm `timer` (no effect if it is not armed).
    CancelTimer {
        /// The timer kind.
        timer: T,
    },
    /// Make `D` durable: it survives a crash and is handed back to [`Process::on_start`] on recovery.
    Persist(D),
    /// Tell the environment something.
    Notify(Notice),
}

/// An input to a process, as drivers store, trace and replay it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event<M, T, D> {
    /// The process starts (or restarts, with its durable state).
    Start {
        /// The last persisted state, on recovery.
        restored: Option<D>,
    },
    /// A message arrived on a link.
    Message {
        /// The local port it arrived on.
        from: Port,
        /// The message.
        msg: M,
    },
    /// A timer fired.
    Timer(T),
    /// A local command.
    Command(Command),
    /// The link at `port` came up or went down (mobile networks).
    Link {
        /// The local port.
        port: Port,
        /// Whether it works now.
        up: bool,
    },
}

/// A message type: one enum per algorithm with struct variants.
///
/// Leaf message enums implement it with [`message_kinds!`](crate::message_kinds); wrappers (the leader monitor,
/// synchronizers) compose the kinds of the messages they carry with their own. Every message type also says, next
/// to its definition, what a message from outside must be before a handler sees it ([`Validate`]).
pub trait Message: Clone + Debug + Eq + Hash + Send + Sync + Serialize + DeserializeOwned + Validate + 'static {
    /// The stable, lower-case kind names used for counting (`election`, `ok`, `token`, ...), in
    /// [`Message::kind_index`] order.
    fn kinds() -> Cow<'static, [&'static str]>;

    /// The index of this message's kind in [`Message::kinds`].
    fn kind_index(&self) -> usize;

    /// This message's kind name.
    fn kind(&self) -> &'static str;

    /// The message in a line, in the words of the algorithm's notes (`probe(id 5, phase 1, hop 2)`, `token 7`,
    /// `ok`): what pictures and paths show. The default is its kind.
    fn describe(&self) -> String {
        self.kind().to_owned()
    }

    /// The message's size in bytes in the runtime's wire encoding (postcard), where the type can work it out
    /// faster than encoding it: the simulator counts every message's bits, so a ring algorithm's few-field
    /// messages say it from their fields ([`varint_len`]). `None` (the default): encode it to know. A size given
    /// must be the encoding's exactly; the simulator's tests hold every message type to it, and a debug build
    /// checks it on every message it sends.
    fn wire_size(&self) -> Option<u64> {
        None
    }
}

/// The bytes postcard's varint takes to hold `v` (seven bits a byte, at least one byte): the encoding of every
/// unsigned integer wider than a byte, of an enum's variant index, and of a length.
///
/// That is `⌈b / 7⌉` for the `b` significant bits of `v` (at least one), computed as `(9b + 64) / 64`: equal for
/// every `b` from 1 to 64 (the simulator's tests hold it to postcard's encoding at every length), in a multiply-add
/// and a shift where dividing by 7 takes two multiplications and a correction. The simulator pays it on every
/// message it sends.
#[inline(always)]
pub const fn varint_len(v: u64) -> u64 {
    let bits = 64 - (v | 1).leading_zeros();
    ((bits * 9 + 64) >> 6) as u64
}

/// Implements [`Message`] for an enum, naming each variant's kind in order:
///
/// ```
/// #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
/// enum Msg { Token { id: u32 }, Elected { id: u32 } }
/// elect_core::message_kinds!(Msg { Token => "token", Elected => "elected" });
/// # impl elect_core::Validate for Msg {
/// #     fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> { Ok(()) }
/// # }
///
/// use elect_core::Message;
/// assert_eq!(Msg::Elected { id: 1 }.kind(), "elected");
/// assert_eq!(Msg::Elected { id: 1 }.kind_index(), 1);
/// assert_eq!(&*Msg::kinds(), ["token", "elected"]);
/// ```
///
/// A message type that reads better than its kind alone names an inherent method that describes it
/// ([`Message::describe`]):
///
/// ```
/// # #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
/// # enum Msg { Token { id: u32 } }
/// # impl elect_core::Validate for Msg {
/// #     fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> { Ok(()) }
/// # }
/// impl Msg {
///     fn text(&self) -> String {
///         match self { Msg::Token { id } => format!("token {id}") }
///     }
/// }
/// elect_core::message_kinds!(Msg { Token => "token" }, describe = Msg::text);
/// # use elect_core::Message;
/// assert_eq!(Msg::Token { id: 5 }.describe(), "token 5");
/// ```
#[macro_export]
macro_rules! message_kinds {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }, describe = $describe:path) => {
        $crate::message_kinds!(@impl $ty { $($variant => $name),+ } fn describe(&self) -> String { $describe(self) });
    };
    (
        $ty:ty { $($variant:ident => $name:literal),+ $(,)? },
        describe = $describe:path,
        wire_size = $wire_size:path $(,)?
    ) => {
        $crate::message_kinds!(
            @impl $ty { $($variant => $name),+ }
            fn describe(&self) -> String { $describe(self) }
            #[inline(always)]
            fn wire_size(&self) -> Option<u64> { Some($wire_size(self)) }
        );
    };
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        $crate::message_kinds!(@impl $ty { $($variant => $name),+ });
    };
    (@impl $ty:ty { $($variant:ident => $name:literal),+ } $($extra:item)*) => {
        impl $crate::Message for $ty {
            fn kinds() -> ::std::borrow::Cow<'static, [&'static str]> {
                ::std::borrow::Cow::Borrowed(&[$($name),+])
            }

            fn kind_index(&self) -> usize {
                let mut index = 0;
                $(
                    if let Self::$variant { .. } = self {
                        return index;
                    }
                    index += 1;
                )+
                unreachable!("{index} kinds and no match")
            }

            fn kind(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => $name),+
                }
            }

            $($extra)*
        }
    };
}

/// The effect type of process `P`.
pub type EffectOf<P> = Effect<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;
/// The event type of process `P`.
pub type EventOf<P> = Event<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;

/// An election algorithm at one process.
///
/// The bounds are those of all three drivers together (the model checker clones, hashes and compares processes;
/// the runtime sends them across threads and serializes messages), so that every algorithm runs under every
/// driver by construction.
pub trait Process: Clone + Debug + Eq + Hash + Send + Sync + 'static {
    /// The algorithm's messages.
    type Msg: Message;
    /// Timer kinds; one pending deadline per value.
    type Timer: Copy + Debug + Eq + Ord + Hash + Send + Sync + Serialize + DeserializeOwned + 'static;
    /// State that survives crashes (`()` if none).
    type Durable: Clone + Debug + Eq + Hash + Send + Sync + Serialize + DeserializeOwned + 'static;

    /// Whether drivers tell the process of its links going down and coming up ([`Process::on_link`]). A process
    /// deployed on a real network says `false`: nothing there reports links, so the simulator and the checker do
    /// not either, and drive it as the runtime does.
    const HEARS_LINKS: bool = true;

    /// The process starts, or restarts with `restored` after a crash.
    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Self::Durable>) {
        let _ = (cx, restored);
    }

    /// A message arrived on port `from`.
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg);

    /// A timer fired.
    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Self::Timer) {
        let _ = (cx, timer);
    }

    /// A local command arrived.
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command);

    /// The link at `port` came up or went down: the link layer's neighbour discovery on networks whose links come
    /// and go ([`Shape::Mobile`]), and on fixed networks a neighbour's crash or recovery, or a link fault, as the
    /// simulator and the checker model them (never for a process that does not hear links,
    /// [`Process::HEARS_LINKS`]).
    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        let _ = (cx, port, up);
    }

    /// The algorithm-agnostic view of this process.
    fn status(&self) -> Status;

    /// This process as its algorithm's notes describe it: its role or phase and the values the notes talk about
    /// (the id it carries, its hop count, its alias, its group and coordinator). `peers` names the process at the
    /// far end of each port. Drivers only call it to show a process; the default is [`View::of_status`].
    fn view(&self, peers: &Peers<'_>) -> View {
        let _ = peers;
        View::of_status(&self.status())
    }

    /// `timer` in a few words (`waiting for an ok`, `next heartbeat`). The default spells out its Rust name.
    fn describe_timer(timer: &Self::Timer) -> String {
        crate::view::words(&format!("{timer:?}"))
    }

    /// This process's status in a form that is cheap to read and compare, for drivers that look for a change of
    /// status around every step (the simulator checks properties only when it sees one): equal keys stand for
    /// equal statuses, so a driver that sees the key unchanged knows the status is, and unpacks the key
    /// ([`StatusKey::status`]) only when it changed. The default is the status itself; an algorithm whose status
    /// is a function of a couple of its fields returns those fields instead.
    #[inline(always)]
    fn status_key(&self) -> impl StatusKey + use<Self> {
        self.status()
    }

    /// The link to this process's parent in the spanning tree its algorithm builds (flooding and diffusing
    /// computations), or `None` at a root, before it is reached, and for algorithms that build no tree. Drivers
    /// only read it for traces and pictures.
    fn parent(&self) -> Option<Port> {
        None
    }
}

/// Where a driver takes a step's messages as they are sent ([`crate::driver::handle_sending`]): what
/// [`crate::driver::Host::send`] does with a message, for the sends a handler makes before any other effect.
pub trait Outbox<M> {
    /// `msg` leaves over the link at `to`.
    fn send(&mut self, to: Port, msg: M);
}

/// The context of one handler call: the current time and the effect buffer.
pub struct Cx<'a, P: Process> {
    now: Instant,
    effects: &'a mut Vec<EffectOf<P>>,
    /// Where a send goes at once while no other effect of the step waits in `effects`, for a driver that takes
    /// messages as they are sent ([`crate::driver::handle_sending`]).
    outbox: Option<&'a mut dyn Outbox<P::Msg>>,
    rule: Option<&'static str>,
}

impl<'a, P: Process> Cx<'a, P> {
    /// A context at `now` that appends effects to `effects`.
    pub fn new(now: Instant, effects: &'a mut Vec<EffectOf<P>>) -> Self {
        Self { now, effects, outbox: None, rule: None }
    }

    /// A context at `now` that hands each send to `outbox` as it is made, as long as no other effect has been
    /// recorded in `effects` before it; from the first other effect on, sends are recorded after it, so that the
    /// driver still sees the step's effects in the order the handler made them.
    pub fn with_outbox(now: Instant, effects: &'a mut Vec<EffectOf<P>>, outbox: &'a mut dyn Outbox<P::Msg>) -> Self {
        Self { now, effects, outbox: Some(outbox), rule: None }
    }

    /// Names the rule of the algorithm this handler applies ("forward a larger id", "own id returned: elected"),
    /// in the words of the algorithm's chapter in the book, which lists each one. A later call replaces an
    /// earlier one: a handler names the rule that decided what it did. Costs one store; drivers read it with
    /// [`Cx::applied`] to show beside the step.
    #[inline(always)]
    pub fn rule(&mut self, rule: &'static str) {
        self.rule = Some(rule);
    }

    /// The rule this handler named last, if any.
    pub fn applied(&self) -> Option<&'static str> {
        self.rule
    }

    /// The current virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Sends `msg` over the link at `to`.
    #[inline]
    pub fn send(&mut self, to: Port, msg: P::Msg) {
        match &mut self.outbox {
            Some(outbox) if self.effects.is_empty() => outbox.send(to, msg),
            _ => self.effects.push(Effect::Send { to, msg }),
        }
    }

    /// Arms `timer` to fire after `after`, replacing its pending deadline.
    pub fn set_timer(&mut self, timer: P::Timer, after: Span) {
        self.effects.push(Effect::SetTimer { timer, after });
    }

    /// Disarms `timer`.
    pub fn cancel_timer(&mut self, timer: P::Timer) {
        self.effects.push(Effect::CancelTimer { timer });
    }

    /// Makes `durable` survive crashes.
    pub fn persist(&mut self, durable: P::Durable) {
        self.effects.push(Effect::Persist(durable));
    }

    /// Tells the environment something.
    pub fn notify(&mut self, notice: Notice) {
        self.effects.push(Effect::Notify(notice));
    }
}

/// Feeds one event to a process: the single entry point of every handler call ([`crate::driver::handle`]).
/// Always inlined, as `handle` is: a dispatch of a few instructions, which the simulator's loop must not pay a
/// call for (left to the compiler, whether it was inlined changed with unrelated edits to the loop).
#[inline(always)]
pub fn step<P: Process>(process: &mut P, cx: &mut Cx<'_, P>, event: EventOf<P>) {
    match event {
        Event::Start { restored } => process.on_start(cx, restored),
        Event::Message { from, msg } => process.on_message(cx, from, msg),
        Event::Timer(timer) => process.on_timer(cx, timer),
        Event::Command(cmd) => process.on_command(cx, cmd),
        Event::Link { port, up } => process.on_link(cx, port, up),
    }
}
