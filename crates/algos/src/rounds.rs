#![doc = include_str!("../../../docs/reference/rounds.md")]

use std::borrow::Cow;
use std::fmt::Debug;
use std::hash::Hash;

use elect_core::{Command, Cx, Duration, Instant, Message, Notice, Peers, Port, Process, Setup, Span, Status, View};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::algorithm::Algorithm;

/// The rules a process in lock-step rounds names for its own steps ([`Synchronous`]); a round names the rule of
/// the algorithm. Each algorithm in rounds lists them among its rules, and its chapter states them.
pub mod rule {
    /// The process initiates: it takes its first round at the next multiple of `T`.
    pub const INITIATE: &str = "initiate, wait for the round to begin";
    /// A message of the current round waits in the inbox for the next round.
    pub const KEEP: &str = "keep the message for the next round";
    /// A process that has taken no round yet joins the round of the first message it receives.
    pub const JOIN: &str = "join the sender's round";
    /// A process whose algorithm halted takes no more rounds and ignores messages.
    pub const HALTED: &str = "halted, ignore the message";
    /// A process that is already awake ignores another initiation.
    pub const AGAIN: &str = "already awake, ignore the initiation";

    /// Every rule of the rounds layer, in the order a run meets them.
    pub const RULES: &[&str] = &[INITIATE, KEEP, JOIN, HALTED, AGAIN];
}

/// A synchronous algorithm at one process: one call of [`Rounds::round`] per round.
pub trait Rounds: Clone + Debug + Eq + Hash + Send + Sync + 'static {
    /// The algorithm's messages.
    type Msg: Message;

    /// Round [`RoundCx::round`]: `inbox` holds the messages sent to this process in the previous round (empty in
    /// round 1), by the port they arrived on, in arrival order; messages sent through `cx` belong to this round.
    fn round(&mut self, cx: &mut RoundCx<'_, Self::Msg>, inbox: &[(Port, Self::Msg)]);

    /// The algorithm-agnostic view of this process.
    fn status(&self) -> Status;

    /// Whether this process is done: it takes no more rounds and ignores further messages.
    fn halted(&self) -> bool;

    /// This process as its algorithm's notes describe it ([`Process::view`]); the layer that runs it adds the
    /// round or pulse. The default is [`View::of_status`].
    fn view(&self, peers: &Peers<'_>) -> View {
        let _ = peers;
        View::of_status(&self.status())
    }

    /// The round this process will halt in, when it knows it in advance and sends nothing in it (FloodMax
    /// decides in round `D' + 1`). Synchronizers use it to tell neighbours one pulse early that they need not wait
    /// for this process any more, which spares a last pulse of control messages; `None` (the default) when the
    /// process learns it is done only by halting.
    fn final_round(&self) -> Option<u32> {
        None
    }

    /// Whether, having taken round `round`, this process sends nothing from round `round + 1` on: it has halted,
    /// or its next round is its silent [final round](Rounds::final_round).
    fn quiet_after(&self, round: u32) -> bool {
        self.halted() || self.final_round() == Some(round.saturating_add(1))
    }
}

/// An [`Algorithm`] written in rounds: the synchronizers build its round processes and run
/// them on asynchronous networks (see [`crate::synchronizers`]).
pub trait RoundAlgorithm: Algorithm {
    /// The algorithm at one process.
    type Rounds: Rounds;

    /// Builds one process's round algorithm.
    fn build_rounds(&self, setup: &Setup<'_>) -> Self::Rounds;
}

/// What a round did besides changing state: sends and notices, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RoundEffect<M> {
    /// Send `msg` over the link at `to`.
    Send {
        /// The local port of the link.
        to: Port,
        /// The message.
        msg: M,
    },
    /// Tell the environment something.
    Notify(Notice),
}

/// The context of one round: its number, the time, and the effects it records for the layer that runs it.
pub struct RoundCx<'a, M> {
    round: u32,
    now: Instant,
    effects: &'a mut Vec<RoundEffect<M>>,
    rule: Option<&'static str>,
}

impl<'a, M> RoundCx<'a, M> {
    /// A context for round `round` at `now` that appends effects to `effects`.
    pub fn new(round: u32, now: Instant, effects: &'a mut Vec<RoundEffect<M>>) -> Self {
        Self { round, now, effects, rule: None }
    }

    /// Names the rule of the algorithm this round applies, as [`Cx::rule`] does for a handler.
    #[inline(always)]
    pub fn rule(&mut self, rule: &'static str) {
        self.rule = Some(rule);
    }

    /// The rule this round named last, if any.
    pub fn applied(&self) -> Option<&'static str> {
        self.rule
    }

    /// The round being taken, from 1.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The current time (algorithms count rounds; this is for traces and diagnostics).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Sends `msg` over the link at `to` in this round.
    pub fn send(&mut self, to: Port, msg: M) {
        self.effects.push(RoundEffect::Send { to, msg });
    }

    /// Tells the environment something.
    pub fn notify(&mut self, notice: Notice) {
        self.effects.push(RoundEffect::Notify(notice));
    }
}

/// A message of a synchronous algorithm with the round that sent it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "M: Serialize + DeserializeOwned")]
pub struct RoundMsg<M> {
    /// The round that sent it.
    pub round: u32,
    /// The algorithm's message.
    pub msg: M,
}

/// Valid as the message it carries.
impl<M: Message> elect_core::Validate for RoundMsg<M> {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        self.msg.validate(roster)
    }
}

/// Counted as the message it carries.
impl<M: Message> Message for RoundMsg<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        M::kinds()
    }

    fn kind_index(&self) -> usize {
        self.msg.kind_index()
    }

    fn kind(&self) -> &'static str {
        self.msg.kind()
    }

    /// `round 3: token 7`.
    fn describe(&self) -> String {
        format!("round {}: {}", self.round, self.msg.describe())
    }
}

/// The one timer of a synchronous process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundTimer {
    /// Time for the next round: every message of the last one has arrived.
    NextRound,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Neither initiated nor woken by a message.
    Asleep,
    /// Taking rounds: the timer for the next one is armed.
    Running,
    /// The algorithm halted.
    Halted,
}

/// A synchronous algorithm run in rounds of length `T` on the driver's clock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Synchronous<R: Rounds> {
    inner: R,
    /// The round length `T`, in ticks (at least one).
    t: u64,
    /// The last round taken; 0 before the first.
    round: u32,
    phase: Phase,
    /// Messages received since the last round.
    inbox: Vec<(Port, R::Msg)>,
    /// Scratch space for one round's effects (empty between steps).
    effects: Vec<RoundEffect<R::Msg>>,
}

impl<R: Rounds> Synchronous<R> {
    /// Runs `inner` in rounds of length `T`, the delay bound in `setup`.
    ///
    /// # Panics
    /// If `setup` has no delay bound; drivers check [`crate::Timing::Synchronous`] first.
    pub fn new(inner: R, setup: &Setup<'_>) -> Self {
        let t =
            setup.delay_bound.expect("a synchronous algorithm needs a delay bound; drivers check Timing::Synchronous");
        Self { inner, t: t.ticks().max(1), round: 0, phase: Phase::Asleep, inbox: Vec::new(), effects: Vec::new() }
    }

    /// The algorithm.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// The last round taken (0 before the first).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// Arms the timer for the next round at the first multiple of `T` at or after now.
    fn wake(&mut self, cx: &mut Cx<'_, Self>) {
        self.phase = Phase::Running;
        let now = cx.now().ticks();
        let wait = now.div_ceil(self.t) * self.t - now;
        cx.set_timer(RoundTimer::NextRound, Span::exactly(Duration::from_ticks(wait)));
    }

    /// Takes the next round, and arms the timer for the one after unless the algorithm halted.
    fn take_round(&mut self, cx: &mut Cx<'_, Self>) {
        self.round = self.round.saturating_add(1);
        let mut inbox = std::mem::take(&mut self.inbox);
        let mut effects = std::mem::take(&mut self.effects);
        let mut round_cx = RoundCx::new(self.round, cx.now(), &mut effects);
        self.inner.round(&mut round_cx, &inbox);
        if let Some(rule) = round_cx.applied() {
            cx.rule(rule);
        }
        for effect in effects.drain(..) {
            match effect {
                RoundEffect::Send { to, msg } => cx.send(to, RoundMsg { round: self.round, msg }),
                RoundEffect::Notify(notice) => cx.notify(notice),
            }
        }
        inbox.clear();
        (self.inbox, self.effects) = (inbox, effects);
        if self.inner.halted() {
            self.phase = Phase::Halted;
        } else {
            cx.set_timer(RoundTimer::NextRound, Span::exactly(Duration::from_ticks(self.t)));
        }
    }
}

impl<R: Rounds> Process for Synchronous<R> {
    type Msg = RoundMsg<R::Msg>;
    type Timer = RoundTimer;
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg) {
        if self.phase == Phase::Halted {
            return cx.rule(rule::HALTED);
        }
        if self.round == 0 {
            // Not started yet: join the sender's round.
            cx.rule(rule::JOIN);
            self.round = msg.round;
            if self.phase == Phase::Asleep {
                self.wake(cx);
            }
        } else {
            cx.rule(rule::KEEP);
        }
        self.inbox.push((from, msg.msg));
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, _: RoundTimer) {
        if self.phase == Phase::Running {
            self.take_round(cx);
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && self.phase == Phase::Asleep {
            cx.rule(rule::INITIATE);
            self.wake(cx);
        } else if cmd == Command::Initiate {
            cx.rule(rule::AGAIN);
        }
    }

    fn status(&self) -> Status {
        self.inner.status()
    }

    /// The algorithm's view, with the last round taken (`flooding: max 9, round 3`).
    fn view(&self, peers: &Peers<'_>) -> View {
        let view = self.inner.view(peers);
        if self.round == 0 { view } else { view.with("round", self.round) }
    }

    fn describe_timer(timer: &RoundTimer) -> String {
        match timer {
            RoundTimer::NextRound => "next round".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Effect, EffectOf, NodeId, Prefer, Rank, Shape};

    use super::*;

    /// Counts rounds, echoes every message back, and halts after round 3.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Echo {
        heard: Vec<(u32, Port, u8)>,
        rounds: u32,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    enum Msg {
        Ping { n: u8 },
        Pong { n: u8 },
    }
    elect_core::message_kinds!(Msg { Ping => "ping", Pong => "pong" });
    impl elect_core::Validate for Msg {
        fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
            Ok(())
        }
    }

    impl Rounds for Echo {
        type Msg = Msg;
        fn round(&mut self, cx: &mut RoundCx<'_, Msg>, inbox: &[(Port, Msg)]) {
            self.rounds = cx.round();
            for (port, msg) in inbox {
                let (Msg::Ping { n } | Msg::Pong { n }) = *msg;
                self.heard.push((cx.round(), *port, n));
            }
            if cx.round() < 3 {
                cx.send(Port(0), Msg::Pong { n: cx.round() as u8 });
            }
        }
        fn status(&self) -> Status {
            Status::election(elect_core::Epoch::ZERO)
        }
        fn halted(&self) -> bool {
            self.rounds >= 3
        }
    }

    fn node() -> Synchronous<Echo> {
        let setup = Setup {
            id: NodeId(1),
            rank: Rank::new(Prefer::Highest, 0, NodeId(1)),
            neighbors: &[],
            ring: None,
            ring_order: &[],
            shape: Shape::Other,
            delay_bound: Some(Duration::from_ticks(10)),
            diameter: None,
            suspected: &[],
        };
        Synchronous::new(Echo { heard: Vec::new(), rounds: 0 }, &setup)
    }

    fn step(
        p: &mut Synchronous<Echo>,
        at: u64,
        f: impl FnOnce(&mut Synchronous<Echo>, &mut Cx<'_, Synchronous<Echo>>),
    ) -> Vec<EffectOf<Synchronous<Echo>>> {
        let mut effects = Vec::new();
        f(p, &mut Cx::new(Instant::from_ticks(at), &mut effects));
        effects
    }

    fn timer(after: u64) -> EffectOf<Synchronous<Echo>> {
        Effect::SetTimer { timer: RoundTimer::NextRound, after: Span::exactly(Duration::from_ticks(after)) }
    }

    #[test]
    fn the_wrapper_counts_as_the_message_it_carries() {
        let msg = RoundMsg { round: 4, msg: Msg::Pong { n: 1 } };
        assert_eq!((msg.kind(), msg.kind_index()), ("pong", 1));
        assert_eq!(&*RoundMsg::<Msg>::kinds(), ["ping", "pong"]);
    }

    #[test]
    fn the_wrapper_describes_its_steps_and_adds_the_round_to_the_view() {
        let mut p = node();
        let handle =
            |p: &mut Synchronous<Echo>, event| elect_core::driver::handle(p, Instant::ZERO, event, &mut Vec::new());
        let ping =
            |round| elect_core::Event::Message { from: Port(0), msg: RoundMsg { round, msg: Msg::Ping { n: 1 } } };
        assert_eq!(p.view(&Peers(&[])).to_string(), "election");
        assert_eq!(handle(&mut p, ping(2)), Some(rule::JOIN));
        assert_eq!(handle(&mut p, ping(2)), Some(rule::KEEP));
        assert_eq!(handle(&mut p, elect_core::Event::Command(Command::Initiate)), Some(rule::AGAIN));
        handle(&mut p, elect_core::Event::Timer(RoundTimer::NextRound));
        assert_eq!(p.view(&Peers(&[])).to_string(), "election: round 3");
        assert_eq!(handle(&mut p, ping(3)), Some(rule::HALTED));
        assert_eq!(RoundMsg { round: 3, msg: Msg::Pong { n: 1 } }.describe(), "round 3: pong");
        assert_eq!(Synchronous::<Echo>::describe_timer(&RoundTimer::NextRound), "next round");
        assert_eq!(handle(&mut node(), elect_core::Event::Command(Command::Initiate)), Some(rule::INITIATE));
    }

    #[test]
    fn an_initiator_takes_rounds_on_multiples_of_t_until_it_halts() {
        let mut p = node();
        assert_eq!(step(&mut p, 0, |p, cx| p.on_command(cx, Command::Initiate)), [timer(0)]);
        let sent = step(&mut p, 0, |p, cx| p.on_timer(cx, RoundTimer::NextRound));
        let pong = |round, n| Effect::Send { to: Port(0), msg: RoundMsg { round, msg: Msg::Pong { n } } };
        assert_eq!(sent, [pong(1, 1), timer(10)]);
        step(&mut p, 7, |p, cx| p.on_message(cx, Port(2), RoundMsg { round: 1, msg: Msg::Ping { n: 9 } }));
        assert_eq!(step(&mut p, 10, |p, cx| p.on_timer(cx, RoundTimer::NextRound)), [pong(2, 2), timer(10)]);
        assert_eq!(step(&mut p, 20, |p, cx| p.on_timer(cx, RoundTimer::NextRound)), []);
        assert_eq!(p.inner().heard, [(2, Port(2), 9)]);
        assert_eq!(p.round(), 3);
        assert_eq!(
            step(&mut p, 25, |p, cx| p.on_message(cx, Port(0), RoundMsg { round: 3, msg: Msg::Ping { n: 1 } })),
            []
        );
        assert_eq!(step(&mut p, 26, |p, cx| p.on_command(cx, Command::Initiate)), []);
    }

    #[test]
    fn a_sleeper_joins_the_round_of_the_first_message_at_the_next_multiple_of_t() {
        let mut p = node();
        let ping = RoundMsg { round: 4, msg: Msg::Ping { n: 5 } };
        assert_eq!(step(&mut p, 33, |p, cx| p.on_message(cx, Port(1), ping)), [timer(7)]);
        // Initiated later in the same round, or another message of the round: nothing new.
        assert_eq!(step(&mut p, 35, |p, cx| p.on_command(cx, Command::Initiate)), []);
        assert_eq!(step(&mut p, 40, |p, cx| p.on_timer(cx, RoundTimer::NextRound)), []);
        assert_eq!(p.round(), 5);
        assert_eq!(p.inner().heard, [(5, Port(1), 5)]);
        // A message arriving exactly on a multiple of T is for the round that starts then.
        let mut q = node();
        assert_eq!(
            step(&mut q, 20, |p, cx| p.on_message(cx, Port(0), RoundMsg { round: 2, msg: Msg::Ping { n: 1 } })),
            [timer(0)]
        );
    }

    #[test]
    fn an_initiator_between_two_multiples_of_t_joins_a_round_it_hears_of_first() {
        let mut p = node();
        assert_eq!(step(&mut p, 12, |p, cx| p.on_command(cx, Command::Initiate)), [timer(8)]);
        step(&mut p, 15, |p, cx| p.on_message(cx, Port(0), RoundMsg { round: 1, msg: Msg::Ping { n: 3 } }));
        let sent = step(&mut p, 20, |p, cx| p.on_timer(cx, RoundTimer::NextRound));
        assert_eq!(sent[0], Effect::Send { to: Port(0), msg: RoundMsg { round: 2, msg: Msg::Pong { n: 2 } } });
    }
}
