//! Every algorithm as one type: [`AnyAlgorithm`], an enum over the built-in algorithms and a program, whose
//! process, messages, timers and durable state are enums over theirs ([`AnyProcess`], [`AnyMsg`], [`AnyTimer`],
//! [`AnyDurable`]). Each method is forwarded to the algorithm the value holds; a process's step runs the
//! algorithm's own handler and carries its effects out into the outer step, each wrapped in its variant, as a
//! process hosted in another is (`hosted.rs`). [`AnySynchronized`] is the same for every round algorithm on every
//! synchronizer (twelve types), with [`AnySynchronizedProcess`] and its kin.
//!
//! A driver generic over [`Algorithm`] is compiled once for every algorithm it is handed, and once more for every
//! wrapper around each (the leader monitor, the member). The simulator wants that: its loop runs hundreds of
//! millions of steps a second, and an algorithm's handlers inlined into it are what make it fast. So does the
//! model checker for an algorithm alone and for a member: forwarding each step through the enum cost
//! Chang-Roberts's full search about 15% of its time, and the deployed members' searches 5 to 15%. Inside the
//! leader monitor alone (`--bare-monitor`), a mode for looking at the monitor, the checker takes the algorithm as
//! an `AnyAlgorithm` ([`crate::dispatch_any`]) and builds its search there once instead of once per algorithm.
//! [`crate::member::dispatch_any`] does the same for a member, for a driver whose speed does not depend on it. On a
//! synchronizer, a mode for learning the synchronizers on a few processes, the checker takes the algorithm as an
//! `AnySynchronized` ([`crate::dispatch_synchronized_any`]): one search for the twelve.
//!
//! One run holds one algorithm, so every message, timer and durable state a process is handed is of its own
//! variant; one of another (which no driver makes) is ignored.
//!
//! # Held in place or boxed
//!
//! An enum is as large as its largest variant, and the checker copies a process each time it steps one. So
//! [`AnyProcess`] holds a process in place when it is small (Bully's, the largest, is 120 bytes; Chang-Roberts's
//! 24), and in a box when it is much larger than that (Garcia-Molina's, the Invitation algorithm's, mobile ad hoc
//! election's: 176 to 272 bytes), marked `[boxed]` in the registry's list: a box costs an allocation per copy, and
//! a process held in place that large would make every algorithm's copies that large. The same goes for
//! [`AnySynchronizedProcess`]: ABD's and α's nodes are held in place (136 bytes), β's and γ's, which keep their
//! spanning tree and clusters (296 to 312 bytes), are boxed. The build fails if an enum holding a process in place
//! passes [`HELD_IN_PLACE`].
//!
//! # Serialized
//!
//! In a text form (JSON: traces, paths), a message, timer or durable state is written as its algorithm's own, so
//! that what a driver shows does not depend on how it took the algorithm. It cannot be read back from there (the
//! text does not say whose it is), and reading one fails with an error. In a binary form (postcard: the checker's
//! frontier on disk) it is its variant's index, then the value, and reads back as it was.

use std::borrow::{Borrow, BorrowMut, Cow};
use std::sync::OnceLock;

use elect_core::driver::{self, Host};
use elect_core::{
    Check, Command, Cx, Duration, EffectOf, Event, EventOf, Invalid, Message, NodeId, Notice, Outbox, Peers, Port,
    Process, Roster, Setup, Span, Status, Validate, View, Winner,
};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::algorithm::{Algorithm, Bound, Facts, Info, SyncSummary};
use crate::params::{ParamError, Params};

/// The largest an [`AnyProcess`] or an [`AnySynchronizedProcess`] may be, in bytes: a process larger than this is
/// held in a box.
pub const HELD_IN_PLACE: usize = 144;

type ProcessOf<A> = <A as Algorithm>::Process;
type MsgOf<A> = <ProcessOf<A> as Process>::Msg;
type TimerOf<A> = <ProcessOf<A> as Process>::Timer;
type DurableOf<A> = <ProcessOf<A> as Process>::Durable;

/// Serde for an enum over the algorithms' messages, timers or durable states: see the module documentation.
macro_rules! serde_by_variant {
    ($any:ident, $which:ident, $of:ident, $($variant:ident: $algorithm:ty),*) => {
        impl Serialize for $any {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if s.is_human_readable() {
                    return match self {
                        $(Self::$variant(value) => value.serialize(s),)*
                    };
                }
                match self {
                    $(Self::$variant(value) => {
                        s.serialize_newtype_variant(stringify!($any), $which::$variant as u32, stringify!($variant), value)
                    })*
                }
            }
        }

        impl<'de> Deserialize<'de> for $any {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                /// The binary form: the variant's index, then the value.
                #[derive(Deserialize)]
                enum Tagged {
                    $($variant($of<$algorithm>),)*
                }
                if d.is_human_readable() {
                    return Err(D::Error::custom(concat!(
                        "a value of ",
                        stringify!($any),
                        " is written in text as its algorithm's own, which does not say whose it is: it is read \
                         back only from its binary form"
                    )));
                }
                Ok(match Tagged::deserialize(d)? {
                    $(Tagged::$variant(value) => Self::$variant(value),)*
                })
            }
        }
    };
}

/// How [`AnyProcess`] holds an algorithm's process: in place, or in a box (`[boxed]`).
macro_rules! held {
    ($algorithm:ty) => { ProcessOf<$algorithm> };
    ($algorithm:ty, boxed) => { Box<ProcessOf<$algorithm>> };
}

/// An enum over algorithms as one algorithm (see the module documentation), named
/// `[Algorithm, Process, Msg, Timer, Durable, Which, kind_table]`, whose info before it runs is `$info`; the variants
/// listed in `grows` (a program's) declare their kinds as they run, and come after the others.
macro_rules! define_any {
    (
        $(#[$doc:meta])*
        [$($names:ident),*],
        info: $info:expr,
        grows: [$($grows:ident: $grows_algorithm:ty),*],
        $($variant:ident: $algorithm:ty $([$held:ident])?),* $(,)?
    ) => {
        define_any!(
            @all $(#[$doc])* [$($names),*], info: $info, grows: [$($grows: $grows_algorithm),*],
            $($variant: $algorithm $([$held])?,)* $($grows: $grows_algorithm,)*
        );
    };
    (
        @all $(#[$doc:meta])*
        [$alg:ident, $proc:ident, $msg:ident, $timer:ident, $durable:ident, $which:ident, $table:ident],
        info: $info:expr,
        grows: [$($grows:ident: $grows_algorithm:ty),*],
        $($variant:ident: $algorithm:ty $([$held:ident])?),* $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub enum $alg {
            $(
                #[allow(missing_docs)]
                $variant($algorithm),
            )*
        }

        /// The process of its algorithm.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $proc {
            $(
                #[allow(missing_docs)]
                $variant(held!($algorithm $(, $held)?)),
            )*
        }

        /// A message of its algorithm.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $msg {
            $(
                #[allow(missing_docs)]
                $variant(MsgOf<$algorithm>),
            )*
        }

        /// A timer of its algorithm.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $timer {
            $(
                #[allow(missing_docs)]
                $variant(TimerOf<$algorithm>),
            )*
        }

        /// The durable state of its algorithm's process.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $durable {
            $(
                #[allow(missing_docs)]
                $variant(DurableOf<$algorithm>),
            )*
        }

        /// The variants, numbered in order.
        #[derive(Clone, Copy)]
        enum $which {
            $($variant,)*
        }

        serde_by_variant!($msg, $which, MsgOf, $($variant: $algorithm),*);
        serde_by_variant!($timer, $which, TimerOf, $($variant: $algorithm),*);
        serde_by_variant!($durable, $which, DurableOf, $($variant: $algorithm),*);

        // Every algorithm hears its links, as the enum says it does (a process that does not, the member, wraps
        // an enum of algorithms instead of being one).
        const _: () = { $(assert!(<ProcessOf<$algorithm> as Process>::HEARS_LINKS);)* };

        // Every process enum is as large as the largest process held in place (see the module documentation).
        const _: () = assert!(
            std::mem::size_of::<$proc>() <= HELD_IN_PLACE,
            "a process this large goes in a box: mark its algorithm [boxed] in registered!"
        );

        impl Algorithm for $alg {
            type Process = $proc;
            const INFO: &'static Info = $info;
            const INFO_AT_RUN_TIME: bool = true;

            fn info(&self) -> &'static Info {
                match self {
                    $(Self::$variant(a) => a.info(),)*
                }
            }

            fn from_params(_: &Params) -> Result<Self, ParamError> {
                Err(ParamError::Invalid {
                    key: "algorithm",
                    value: "any".to_owned(),
                    reason: "an algorithm of any kind is found by its name (elect_algos::dispatch_any)".to_owned(),
                })
            }

            fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
                match self {
                    $(Self::$variant(a) => a.validate(ids),)*
                }
            }

            fn build(&self, setup: &Setup<'_>) -> $proc {
                match self {
                    $(Self::$variant(a) => $proc::$variant(a.build(setup).into()),)*
                }
            }

            fn checks(&self) -> Vec<Check> {
                match self {
                    $(Self::$variant(a) => a.checks(),)*
                }
            }

            fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
                match self {
                    $(Self::$variant(a) => a.election_time(facts, t),)*
                }
            }

            fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
                match self {
                    $(Self::$variant(a) => a.settle_time(facts, delay_bound),)*
                }
            }

            fn one_way(&self) -> bool {
                match self {
                    $(Self::$variant(a) => a.one_way(),)*
                }
            }

            fn monitored(self) -> Self {
                match self {
                    $(Self::$variant(a) => Self::$variant(a.monitored()),)*
                }
            }

            fn winner(&self) -> Winner {
                match self {
                    $(Self::$variant(a) => a.winner(),)*
                }
            }

            fn bounds(&self, facts: &Facts) -> Vec<Bound> {
                match self {
                    $(Self::$variant(a) => a.bounds(facts),)*
                }
            }

            fn synchronizer(&self, processes: &[$proc]) -> Option<SyncSummary> {
                match self {
                    $(Self::$variant(a) => {
                        let own: Vec<_> = processes
                            .iter()
                            .filter_map(|p| match p {
                                $proc::$variant(p) => Some(Borrow::<ProcessOf<$algorithm>>::borrow(p).clone()),
                                #[allow(unreachable_patterns)]
                                _ => None,
                            })
                            .collect();
                        a.synchronizer(&own)
                    })*
                }
            }
        }

        impl $alg {
            /// `algorithm` as its variant, if it is one of them: a driver handed an algorithm by its type finds its
            /// variant by that type.
            pub fn of<A: Algorithm>(algorithm: A) -> Option<Self> {
                let any: &dyn std::any::Any = &algorithm;
                $(
                    if let Some(a) = any.downcast_ref::<$algorithm>() {
                        return Some(Self::$variant(a.clone()));
                    }
                )*
                None
            }
        }

        impl $proc {
            /// One step of the algorithm's own process, its effects carried out into `cx` (an event of another
            /// algorithm is ignored: see the module documentation).
            fn step(&mut self, cx: &mut Cx<'_, Self>, event: EventOf<Self>) {
                match self {
                    $(Self::$variant(p) => {
                        let event = match event {
                            Event::Start { restored } => Event::Start {
                                restored: match restored {
                                    Some($durable::$variant(d)) => Some(d),
                                    _ => None,
                                },
                            },
                            Event::Message { from, msg: $msg::$variant(msg) } => Event::Message { from, msg },
                            Event::Timer($timer::$variant(timer)) => Event::Timer(timer),
                            Event::Command(cmd) => Event::Command(cmd),
                            Event::Link { port, up } => Event::Link { port, up },
                            #[allow(unreachable_patterns)]
                            _ => return,
                        };
                        let wrap = Wrap { cx, msg: $msg::$variant, timer: $timer::$variant, durable: $durable::$variant };
                        forward(BorrowMut::<ProcessOf<$algorithm>>::borrow_mut(p), event, wrap)
                    })*
                }
            }
        }

        impl Process for $proc {
            type Msg = $msg;
            type Timer = $timer;
            type Durable = $durable;

            fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<$durable>) {
                self.step(cx, Event::Start { restored })
            }

            fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: $msg) {
                self.step(cx, Event::Message { from, msg })
            }

            fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: $timer) {
                self.step(cx, Event::Timer(timer))
            }

            fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
                self.step(cx, Event::Command(cmd))
            }

            fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
                self.step(cx, Event::Link { port, up })
            }

            #[inline]
            fn status(&self) -> Status {
                match self {
                    $(Self::$variant(p) => p.status(),)*
                }
            }

            fn view(&self, peers: &Peers<'_>) -> View {
                match self {
                    $(Self::$variant(p) => p.view(peers),)*
                }
            }

            fn describe_timer(timer: &$timer) -> String {
                match timer {
                    $($timer::$variant(t) => <ProcessOf<$algorithm> as Process>::describe_timer(t),)*
                }
            }

            fn parent(&self) -> Option<Port> {
                match self {
                    $(Self::$variant(p) => p.parent(),)*
                }
            }
        }

        impl Validate for $msg {
            fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
                match self {
                    $(Self::$variant(m) => m.validate(roster),)*
                }
            }
        }

        /// Where each variant's kinds start in the message's `kinds`, and the kinds of the algorithms that do not
        /// grow theirs, each algorithm's after the one before (a program's, which grow as programs declare them,
        /// come last).
        fn $table() -> &'static (Vec<usize>, Vec<&'static str>) {
            static TABLE: OnceLock<(Vec<usize>, Vec<&'static str>)> = OnceLock::new();
            const GROWS: &[&str] = &[$(stringify!($grows)),*];
            TABLE.get_or_init(|| {
                let (mut starts, mut kinds) = (Vec::new(), Vec::new());
                $(
                    starts.push(kinds.len());
                    if !GROWS.contains(&stringify!($variant)) {
                        kinds.extend(<MsgOf<$algorithm> as Message>::kinds().iter().copied());
                    }
                )*
                (starts, kinds)
            })
        }

        impl Message for $msg {
            fn kinds() -> Cow<'static, [&'static str]> {
                let own = &$table().1;
                #[allow(unused_mut)]
                let mut grown: Vec<&'static str> = Vec::new();
                $(grown.extend(<MsgOf<$grows_algorithm> as Message>::kinds().iter().copied());)*
                if grown.is_empty() {
                    Cow::Borrowed(own)
                } else {
                    Cow::Owned(own.iter().chain(grown.iter()).copied().collect())
                }
            }

            #[inline]
            fn kind_index(&self) -> usize {
                match self {
                    $(Self::$variant(m) => $table().0[$which::$variant as usize] + m.kind_index(),)*
                }
            }

            #[inline]
            fn kind(&self) -> &'static str {
                match self {
                    $(Self::$variant(m) => m.kind(),)*
                }
            }

            fn describe(&self) -> String {
                match self {
                    $(Self::$variant(m) => m.describe(),)*
                }
            }

            /// Its algorithm's message's size and the variant's index before it, as postcard writes it.
            fn wire_size(&self) -> Option<u64> {
                match self {
                    $(Self::$variant(m) => Some(elect_core::varint_len($which::$variant as u64) + m.wire_size()?),)*
                }
            }
        }
    };
}

/// Every built-in algorithm and a program.
macro_rules! any_algorithm {
    ($($variant:ident: $algorithm:ty $([$held:ident])?),* $(,)?) => {
        define_any!(
            /// Every algorithm as one type (see the module documentation).
            [AnyAlgorithm, AnyProcess, AnyMsg, AnyTimer, AnyDurable, Which, kind_table],
            info: &crate::program::INFO,
            grows: [Program: crate::program::Program],
            $($variant: $algorithm $([$held])?,)*
        );
    };
}

crate::registered::registered!(any_algorithm);

/// Every round algorithm on every synchronizer.
macro_rules! any_synchronized {
    ($($variant:ident: $round:ty [$synchronizer:ident] $([$held:ident])?),* $(,)?) => {
        define_any!(
            /// Every round algorithm on every synchronizer as one type (see the module documentation).
            [AnySynchronized, AnySynchronizedProcess, AnySynchronizedMsg, AnySynchronizedTimer,
                AnySynchronizedDurable, WhichSynchronized, synchronized_kind_table],
            info: &SYNCHRONIZED,
            grows: [],
            $(
                $variant: crate::synchronizers::Synchronized<$round, crate::synchronizers::$synchronizer>
                    $([$held])?,
            )*
        );
    };
}

crate::registered::synchronized!(any_synchronized);

/// What an [`AnySynchronized`] is before it says which algorithm on which synchronizer it holds.
static SYNCHRONIZED: Info = Info {
    name: "synchronized",
    title: "a round algorithm on a synchronizer",
    model: "the round algorithm's, on the synchronizer's network",
    timing: crate::Timing::Asynchronous,
    ..crate::program::INFO
};

/// Where a hosted algorithm's effects go: into the outer step, each wrapped in the algorithm's variant.
struct Wrap<'c, 'a, P: Process, O: Process> {
    cx: &'c mut Cx<'a, O>,
    msg: fn(P::Msg) -> O::Msg,
    timer: fn(P::Timer) -> O::Timer,
    durable: fn(P::Durable) -> O::Durable,
}

impl<P: Process, O: Process> Host<P> for Wrap<'_, '_, P, O> {
    fn send(&mut self, to: Port, msg: Cow<'_, P::Msg>) {
        self.cx.send(to, (self.msg)(msg.into_owned()))
    }

    fn set_timer(&mut self, timer: P::Timer, after: Span) {
        self.cx.set_timer((self.timer)(timer), after)
    }

    fn cancel_timer(&mut self, timer: P::Timer) {
        self.cx.cancel_timer((self.timer)(timer))
    }

    fn persist(&mut self, durable: P::Durable) {
        self.cx.persist((self.durable)(durable))
    }

    fn notify(&mut self, notice: Notice) {
        self.cx.notify(notice)
    }
}

impl<P: Process, O: Process> Outbox<P::Msg> for Wrap<'_, '_, P, O> {
    fn send(&mut self, to: Port, msg: P::Msg) {
        self.cx.send(to, (self.msg)(msg))
    }
}

/// `process` handles `event`, and its effects, in order, and the rule it named go to the outer step. The sends
/// it makes before any other effect go straight there, so that a step that only sends buffers nothing.
fn forward<P: Process, O: Process>(process: &mut P, event: EventOf<P>, mut wrap: Wrap<'_, '_, P, O>) {
    let mut effects: Vec<EffectOf<P>> = Vec::new();
    let now = wrap.cx.now();
    if let Some(rule) = driver::handle_sending(process, now, event, &mut effects, &mut wrap) {
        wrap.cx.rule(rule);
    }
    driver::carry_out(&mut wrap, &mut effects);
}

#[cfg(test)]
mod tests;
