//! The driver contract, written once: how one handler of one process runs and how its effects are carried out,
//! the order of a recovery, and how a timer's duration is drawn from its [`Span`].
//!
//! Every driver (the simulator, the model checker, the network runtime, and the wrappers that drive an algorithm
//! inside a process: the leader monitor, the deployed member) runs a process the same way, in two phases:
//!
//! 1. [`handle`]: feed one [`Event`] to the process at `now`; its effects are recorded in a buffer.
//! 2. [`carry_out`]: hand the effects, in the order they were recorded, to the driver's [`Host`], which says what
//!    differs between drivers: where a sent message goes, how a timer is kept, where durable state is written,
//!    what a notice does.
//!
//! The two phases are apart because a driver usually owns its processes and its network in one value: the
//! process is borrowed for the first phase only, the driver for the second. The buffer is the driver's, reused
//! from step to step, so that no step allocates.
//!
//! A driver that can take a message while the process is borrowed (the simulator, in a plain run, builds it in its
//! event queue) runs phase 1 with [`handle_sending`] and an [`Outbox`]: the sends the handler makes before any
//! other effect go there at once, and the rest wait in the buffer for phase 2, so the order still holds.
//!
//! ```
//! use std::borrow::Cow;
//! use elect_core::driver::{self, Host};
//! use elect_core::{Command, Cx, Epoch, Event, Instant, Notice, Port, Process, Span, Status};
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! struct Hello;
//! #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
//! enum Msg { Hi }
//! elect_core::message_kinds!(Msg { Hi => "hi" });
//! # impl elect_core::Validate for Msg {
//! #     fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> { Ok(()) }
//! # }
//! impl Process for Hello {
//!     type Msg = Msg;
//!     type Timer = ();
//!     type Durable = ();
//!     fn on_message(&mut self, _: &mut Cx<'_, Self>, _: Port, _: Msg) {}
//!     fn on_command(&mut self, cx: &mut Cx<'_, Self>, _: Command) { cx.send(Port(0), Msg::Hi) }
//!     fn status(&self) -> Status { Status::election(Epoch::ZERO) }
//! }
//!
//! /// A driver that only counts what is sent.
//! struct Count(usize);
//! impl Host<Hello> for Count {
//!     fn send(&mut self, _: Port, _: Cow<'_, Msg>) { self.0 += 1 }
//!     fn set_timer(&mut self, _: (), _: Span) {}
//!     fn cancel_timer(&mut self, _: ()) {}
//!     fn persist(&mut self, _: ()) {}
//!     fn notify(&mut self, _: Notice) {}
//! }
//!
//! let (mut p, mut effects, mut host) = (Hello, Vec::new(), Count(0));
//! driver::handle(&mut p, Instant::ZERO, Event::Command(Command::Initiate), &mut effects);
//! driver::carry_out(&mut host, &mut effects);
//! assert_eq!(host.0, 1);
//! assert!(effects.is_empty(), "the buffer is left empty for the next step");
//! ```

use std::borrow::Cow;
use std::ops::RangeInclusive;

use crate::{
    Command, Cx, Duration, Effect, EffectOf, Event, EventOf, Instant, Notice, Outbox, Port, Process, Span, step,
};

/// What a driver does with each kind of effect: the part of the contract that differs between drivers.
///
/// [`carry_out`] calls these in the order the handler recorded its effects. A host must make a
/// [`Host::persist`] durable before the next [`Host::send`] of the same step leaves the process (the runtime writes
/// the state file first; the simulator and the checker keep it in memory).
pub trait Host<P: Process> {
    /// `msg` leaves over the link at `to`. It is borrowed from the effect buffer when it owns no heap memory (the
    /// host copies it only as it queues it), and owned otherwise.
    fn send(&mut self, to: Port, msg: Cow<'_, P::Msg>);

    /// Arms `timer` to fire after a duration from `after` (drawn with [`Span::draw`] by drivers that run in time;
    /// the checker explores the span's ends), replacing its pending deadline.
    fn set_timer(&mut self, timer: P::Timer, after: Span);

    /// Disarms `timer`; nothing happens if it is not armed.
    fn cancel_timer(&mut self, timer: P::Timer);

    /// `durable` survives a crash: a restart hands it back to [`Process::on_start`].
    fn persist(&mut self, durable: P::Durable);

    /// The process tells its environment something.
    fn notify(&mut self, notice: Notice);
}

/// Phase 1 of a step: `process` handles `event` at `now`, recording its effects in `effects` (which the driver
/// passes empty and keeps between steps). Returns the rule the handler said it applied ([`Cx::rule`]), for
/// drivers that show steps; others ignore it.
#[inline(always)]
pub fn handle<P: Process>(
    process: &mut P,
    now: Instant,
    event: EventOf<P>,
    effects: &mut Vec<EffectOf<P>>,
) -> Option<&'static str> {
    let mut cx = Cx::new(now, effects);
    step(process, &mut cx, event);
    cx.applied()
}

/// Phase 1 of a step for a driver that takes messages as they are sent: as [`handle`], but each send the handler
/// makes before any other effect goes straight to `outbox` instead of the buffer (a message written once, where
/// the driver keeps it, instead of written to the buffer and copied out of it). The effects left in `effects`,
/// and the sends after them, are carried out by [`carry_out`] as usual; taken together, the driver sees every
/// effect in the order the handler made it.
#[inline(always)]
pub fn handle_sending<P: Process>(
    process: &mut P,
    now: Instant,
    event: EventOf<P>,
    effects: &mut Vec<EffectOf<P>>,
    outbox: &mut dyn Outbox<P::Msg>,
) -> Option<&'static str> {
    let mut cx = Cx::with_outbox(now, effects, outbox);
    step(process, &mut cx, event);
    cx.applied()
}

/// Phase 2 of a step: carries out `effects` through `host`, in order, and leaves the buffer empty.
///
/// A message that owns nothing is handed to the host in place, borrowed from the buffer: copied at once, it would
/// be read in wider pieces than the handler wrote it, and such a read waits for the handler's stores to reach the
/// cache instead of taking their values on the way (in the simulator's loop this once cost a third of the time).
#[inline(always)]
pub fn carry_out<P: Process, H: Host<P> + ?Sized>(host: &mut H, effects: &mut Vec<EffectOf<P>>) {
    if std::mem::needs_drop::<P::Msg>() {
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { to, msg } => host.send(to, Cow::Owned(msg)),
                other => other_effect(host, other),
            }
        }
    } else {
        for effect in effects.iter() {
            match effect {
                Effect::Send { to, msg } => host.send(*to, Cow::Borrowed(msg)),
                other => other_effect(host, other.clone()),
            }
        }
        effects.clear();
    }
}

/// Every effect but a send.
#[inline]
fn other_effect<P: Process, H: Host<P> + ?Sized>(host: &mut H, effect: EffectOf<P>) {
    match effect {
        Effect::Send { to, msg } => host.send(to, Cow::Owned(msg)),
        Effect::SetTimer { timer, after } => host.set_timer(timer, after),
        Effect::CancelTimer { timer } => host.cancel_timer(timer),
        Effect::Persist(durable) => host.persist(durable),
        Effect::Notify(notice) => host.notify(notice),
    }
}

/// A driver's view of one process coming back: how it runs one event there (its own step, with whatever it counts,
/// traces and judges), and how it tells the neighbours.
pub trait Restart<P: Process> {
    /// Runs `event` at the restarted process and carries out its effects.
    fn run(&mut self, event: EventOf<P>);

    /// The link layer's view: the process's live neighbours see its links come back up (unless their processes
    /// do not hear links, [`Process::HEARS_LINKS`]). Drivers whose links do not come and go may do nothing.
    fn tell_neighbors(&mut self);
}

/// The recovery sequence, the same in every driver. The driver has already built a fresh process from its
/// `Setup` in place of the crashed one (a crash drops the process value, its timers and its undelivered inputs);
/// then, all at the same instant:
///
/// 1. [`Process::on_start`] with the last state the process made durable (`None` on a first start);
/// 2. the links that are up now, on networks whose links come and go (`up`, by port), each as an
///    [`Event::Link`];
/// 3. the neighbours see its links come back ([`Restart::tell_neighbors`]);
/// 4. [`Command::Initiate`]: a recovered process starts an election.
///
/// A process that does not hear links ([`Process::HEARS_LINKS`]) is told of none, in step 2 or, by the driver, in
/// step 3: on a real network a restarted member starts and initiates, and its peers learn of it from its packets.
///
/// Building and `on_start` are one step: nothing observes the process in between, so properties are judged on the
/// state `on_start` leaves.
pub fn recover<P: Process>(
    driver: &mut impl Restart<P>,
    restored: Option<P::Durable>,
    up: impl IntoIterator<Item = Port>,
) {
    driver.run(Event::Start { restored });
    if P::HEARS_LINKS {
        for port in up {
            driver.run(Event::Link { port, up: true });
        }
    }
    driver.tell_neighbors();
    driver.run(Event::Command(Command::Initiate));
}

impl Span {
    /// A duration from this span: its only value when it has one, otherwise `uniform(min..=max)` in ticks, with
    /// the driver's own seeded generator (processes never draw).
    #[inline]
    pub fn draw(self, uniform: impl FnOnce(RangeInclusive<u64>) -> u64) -> Duration {
        let (min, max) = (self.min.ticks(), self.max.ticks());
        Duration::from_ticks(if min == max { min } else { uniform(min..=max) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Recorder;

    #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
    enum Msg {
        Text { s: String },
        Other {},
    }
    crate::message_kinds!(Msg { Text => "text", Other => "other" });
    impl crate::Validate for Msg {
        fn validate(&self, _: &crate::Roster<'_>) -> Result<(), crate::Invalid> {
            Ok(())
        }
    }

    impl Process for Recorder {
        type Msg = Msg;
        type Timer = u8;
        type Durable = u8;
        fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<u8>) {
            cx.persist(restored.unwrap_or(0) + 1);
        }
        fn on_message(&mut self, cx: &mut Cx<'_, Self>, _: Port, _: Msg) {
            cx.send(Port(0), Msg::Other {});
            cx.send(Port(1), Msg::Other {});
            cx.notify(Notice::Pulse { pulse: 2 });
            cx.send(Port(2), Msg::Other {});
        }
        fn on_command(&mut self, cx: &mut Cx<'_, Self>, _: Command) {
            cx.set_timer(1, Span::exactly(Duration::TICK));
            cx.send(Port(0), Msg::Text { s: "a".into() });
            cx.cancel_timer(1);
            cx.notify(Notice::Pulse { pulse: 1 });
        }
        fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
            cx.send(port, Msg::Text { s: format!("link {up}") });
        }
        fn status(&self) -> Status {
            Status::election(crate::Epoch::ZERO)
        }
    }

    #[derive(Default)]
    struct Log(Vec<String>);

    impl Host<Recorder> for Log {
        fn send(&mut self, to: Port, msg: Cow<'_, Msg>) {
            self.0.push(format!("send {} {msg:?}", to.0));
        }
        fn set_timer(&mut self, timer: u8, after: Span) {
            self.0.push(format!("set {timer:?} {}", after.min.ticks()));
        }
        fn cancel_timer(&mut self, timer: u8) {
            self.0.push(format!("cancel {timer:?}"));
        }
        fn persist(&mut self, durable: u8) {
            self.0.push(format!("persist {durable}"));
        }
        fn notify(&mut self, notice: Notice) {
            self.0.push(format!("notify {notice:?}"));
        }
    }

    struct Restarting {
        process: Recorder,
        effects: Vec<EffectOf<Recorder>>,
        log: Log,
    }

    impl Restart<Recorder> for Restarting {
        fn run(&mut self, event: EventOf<Recorder>) {
            handle(&mut self.process, Instant::ZERO, event, &mut self.effects);
            carry_out(&mut self.log, &mut self.effects);
        }
        fn tell_neighbors(&mut self) {
            self.log.0.push("neighbours told".into());
        }
    }

    #[test]
    fn effects_are_carried_out_in_the_order_they_were_recorded() {
        let mut r = Restarting { process: Recorder, effects: Vec::new(), log: Log::default() };
        r.run(Event::Command(Command::Initiate));
        assert_eq!(r.log.0, ["set 1 1", "send 0 Text { s: \"a\" }", "cancel 1", "notify Pulse { pulse: 1 }",]);
        assert!(r.effects.is_empty());
    }

    impl Outbox<Msg> for Log {
        fn send(&mut self, to: Port, msg: Msg) {
            self.0.push(format!("sent at once {} {msg:?}", to.0));
        }
    }

    #[test]
    fn sends_go_to_the_outbox_until_another_effect_is_recorded_and_the_order_holds() {
        let (mut effects, mut log) = (Vec::new(), Log::default());
        let message = Event::Message { from: Port(0), msg: Msg::Other {} };
        handle_sending(&mut Recorder, Instant::ZERO, message, &mut effects, &mut log);
        assert_eq!(log.0, ["sent at once 0 Other", "sent at once 1 Other"]);
        carry_out(&mut log, &mut effects);
        assert_eq!(log.0[2..], ["notify Pulse { pulse: 2 }", "send 2 Other"]);

        // The first effect is a timer: every send after it waits in the buffer behind it.
        let mut log = Log::default();
        handle_sending(&mut Recorder, Instant::ZERO, Event::Command(Command::Initiate), &mut effects, &mut log);
        assert!(log.0.is_empty(), "{:?}", log.0);
        carry_out(&mut log, &mut effects);
        assert_eq!(log.0, ["set 1 1", "send 0 Text { s: \"a\" }", "cancel 1", "notify Pulse { pulse: 1 }"]);
    }

    #[test]
    fn a_recovery_starts_from_the_durable_state_reports_links_tells_the_neighbours_then_initiates() {
        let mut r = Restarting { process: Recorder, effects: Vec::new(), log: Log::default() };
        recover(&mut r, Some(4), [Port(2)]);
        assert_eq!(r.log.0[0], "persist 5");
        assert_eq!(r.log.0[1], "send 2 Text { s: \"link true\" }");
        assert_eq!(r.log.0[2], "neighbours told");
        assert_eq!(r.log.0[3], "set 1 1");
        assert_eq!(r.log.0.len(), 7);
    }

    #[test]
    fn a_span_with_one_value_needs_no_draw() {
        let exact = Span::exactly(Duration::from_ticks(7));
        assert_eq!(exact.draw(|_| unreachable!("nothing to draw")), Duration::from_ticks(7));
        let range = Span::between(Duration::from_ticks(2), Duration::from_ticks(9));
        assert_eq!(range.draw(|r| *r.end()), Duration::from_ticks(9));
        assert_eq!(range.draw(|r| *r.start()), Duration::from_ticks(2));
    }
}
