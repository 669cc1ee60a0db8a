//! What of a member is typed by its algorithm, behind one interface: [`Hosted`], implemented for every algorithm
//! by [`HostedMember`]. The runner ([`crate::runner`]) holds a `Box<dyn Hosted>`, so that its task (the event loop,
//! the state writes, the sends, the checks of a datagram, the publishing) is compiled once, not once per algorithm:
//! only what must know the algorithm's types is. That is the process ([`Member`]) and its steps, the driver
//! contract's host that carries out its effects ([`elect_core::driver`]), the table of its timers' deadlines, and
//! the encoding of its messages and durable state. A step's messages and state writes leave it encoded, in order,
//! as [`Op`]s for the runner to perform.
//!
//! The runtime's speed is the network's and the disk's: a step is microseconds against a heartbeat of
//! milliseconds, so the call through the interface costs nothing a member can measure. The model checker and the
//! simulator, whose speed is the steps', run the member as its own type.

use std::borrow::Cow;
use std::collections::BTreeMap;

use elect_algos::Algorithm;
use elect_algos::member::{ChangeReport, Leadership, Member, MemberTimer, Saved, VoterChange, Voters};
use elect_core::Status;
use elect_core::driver::{self, Host, Restart};
use elect_core::{Command, EffectOf, Epoch, Event, EventOf, Instant, Message, NodeId, Notice, Port, Process, Span};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use tokio::time::Instant as Clock;
use tracing::{Level, debug, warn};

use crate::auth::ClusterKey;
use crate::wire::{self, Drop};

type Msg<A> = <Member<A> as Process>::Msg;
type Timer<A> = <Member<A> as Process>::Timer;
type Durable<A> = <<A as Algorithm>::Process as Process>::Durable;

/// One runtime tick is a microsecond of real time.
fn to_std(d: elect_core::Duration) -> std::time::Duration {
    std::time::Duration::from_micros(d.ticks())
}

/// A durable state to write to the state file, with the algorithm's own part encoded as the file keeps it.
#[derive(Clone, Debug)]
pub(crate) struct ToWrite {
    pub(crate) incarnation: u64,
    pub(crate) seen: Epoch,
    /// The algorithm's durable state, postcard-encoded; empty when it has persisted none.
    pub(crate) durable: Vec<u8>,
    pub(crate) voters: Option<Voters>,
}

/// What the state file held when the member started: [`ToWrite`]'s fields, read back.
pub(crate) type Restored = ToWrite;

/// Something a step asked for that waits on I/O, in the order it asked.
pub(crate) enum Op {
    /// Write this durable state to the state file.
    Save(ToWrite),
    /// Send a packet to the member at the port.
    Send(Outgoing),
}

/// A packet to send, encoded ([`wire::encode_parts`] puts it in its envelope).
pub(crate) struct Outgoing {
    pub(crate) port: Port,
    /// Its kind's index, for the counters.
    pub(crate) kind: usize,
    /// The member's packet, postcard-encoded.
    pub(crate) bytes: Vec<u8>,
    /// The packet as the debug log shows it, when that log is on.
    pub(crate) shown: Option<String>,
}

/// What a step's effects leave for the runner, in order: operations, the durable state recorded after the last
/// send (written at the step's end), and notices for the application.
#[derive(Default)]
pub(crate) struct Queued {
    pub(crate) ops: Vec<Op>,
    pub(crate) pending: Option<ToWrite>,
    pub(crate) notices: Vec<Notice>,
}

/// What a step's input is. A message and a timer are the ones [`Hosted::decode`] and [`Hosted::take_due`] (or
/// [`Hosted::take_scripted`]) last took.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Input {
    Command(Command),
    /// The message last decoded, from the member at this port.
    Received(Port),
    /// The timer last taken.
    Timer,
}

/// A decoded datagram's header: its sender, its sequence number and its sender's incarnation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Received {
    pub(crate) from: NodeId,
    pub(crate) seq: u64,
    pub(crate) incarnation: u64,
    /// Its kind's index, for the counters.
    pub(crate) kind: usize,
}

/// Why a decoded packet is refused: a field holds a value no member sends ([`elect_core::Validate`]).
#[derive(Debug)]
pub(crate) struct Invalid {
    pub(crate) kind: &'static str,
    pub(crate) index: usize,
    pub(crate) why: String,
}

/// When a timer fires: by the clock, and in the process's own ticks (what a scripted runner checks).
#[derive(Clone, Copy, Debug)]
struct Deadline {
    at: Clock,
    /// How long after the step that armed it: the clock's deadline counts from the end of that step's writes and
    /// sends ([`Hosted::start_armed`]).
    wait: std::time::Duration,
    tick: Instant,
}

/// The member's process and all that is typed by its algorithm, as the runner sees it (see the module
/// documentation).
pub(crate) trait Hosted: Send {
    /// Runs one step of the process at `now`, and carries out its effects: timers into the table, writes, sends and
    /// notices into `queued`.
    fn step(&mut self, now: Instant, input: Input, queued: &mut Queued);

    /// Starts the member from `restored` as every driver starts or recovers a process ([`driver::recover`]): it
    /// starts (a new incarnation above `restored`'s), is told of no link (a member hears none: its peers learn of
    /// it from its packets), and initiates. Each step's write is queued before the next step's sends.
    fn recover(&mut self, restored: Restored, queued: &mut Queued);

    /// Only the first step of [`Self::recover`], for a runner whose script runs the rest itself.
    fn start(&mut self, restored: Restored, queued: &mut Queued);

    /// Decodes a datagram addressed to `me` of `cluster` ([`wire::decode`]) and keeps its packet for the step that
    /// receives it.
    fn decode(&mut self, bytes: &[u8], cluster: u64, me: NodeId, key: Option<&ClusterKey>) -> Result<Received, Drop>;

    /// Whether the packet last decoded holds only values a member sends, from the member at `port`.
    fn validate(&self, port: Port) -> Result<(), Invalid>;

    /// The packet last decoded, as the debug log shows it.
    fn shown(&self) -> String;

    /// The packet of a datagram addressed to `to`, as the simulator's trace writes it (for a script).
    fn decode_to_json(&self, bytes: &[u8], cluster: u64, to: NodeId, key: Option<&ClusterKey>) -> Value;

    /// The earliest timer deadline.
    fn next_deadline(&self) -> Option<Clock>;

    /// In the lease mode, the deadline of the lease this member holds.
    fn lease_deadline(&self) -> Option<Clock>;

    /// Takes the earliest timer due by `now` out of the table, for the next [`Input::Timer`]; `false` if none is.
    fn take_due(&mut self, now: Clock) -> bool;

    /// Takes the armed timer the simulator's trace writes as `timer` out of the table, due at `now` of the
    /// member's clock, for the next [`Input::Timer`]; why not, if it is not armed or due then.
    fn take_scripted(&mut self, timer: &Value, now: Instant) -> Result<(), String>;

    /// Starts the clocks of the timers the last steps armed, from `now`.
    fn start_armed(&mut self, now: Clock);

    /// Whether the member holds a grant: it leads.
    fn leads(&self) -> bool;
    fn leadership(&self) -> Leadership;
    fn status(&self) -> Status;
    fn incarnation(&self) -> u64;
    fn voters(&self) -> &Voters;
    fn changing(&self) -> Option<VoterChange>;
    fn change_report(&self) -> Option<ChangeReport>;
}

/// [`Hosted`] for the member of algorithm `A`.
pub(crate) struct HostedMember<A: Algorithm> {
    process: Member<A>,
    /// The effect buffer, reused from step to step.
    effects: Vec<EffectOf<Member<A>>>,
    timers: BTreeMap<Timer<A>, Deadline>,
    /// The timers the steps armed since the last [`Hosted::start_armed`].
    armed: Vec<Timer<A>>,
    /// Timer jitter, from a logged seed.
    rng: ChaCha8Rng,
    received: Option<Msg<A>>,
    due: Option<Timer<A>>,
}

impl<A: Algorithm> HostedMember<A> {
    pub(crate) fn new(process: Member<A>, rng: ChaCha8Rng) -> Self {
        Self {
            process,
            effects: Vec::new(),
            timers: BTreeMap::new(),
            armed: Vec::new(),
            rng,
            received: None,
            due: None,
        }
    }

    /// The message kinds of the algorithm's member, in their counting order.
    pub(crate) fn kinds() -> Vec<&'static str> {
        <Msg<A> as Message>::kinds().into_owned()
    }

    /// A durable state as the state file keeps it: the algorithm's part postcard-encoded ([`Self::saved`] reads it
    /// back).
    fn to_write(saved: Saved<Durable<A>>) -> ToWrite {
        let durable = match &saved.inner {
            Some(inner) => postcard::to_allocvec(inner).expect("durable states always encode"),
            None => Vec::new(),
        };
        ToWrite { incarnation: saved.incarnation, seen: saved.seen, durable, voters: saved.voters }
    }

    /// A durable state read back from the state file ([`Self::to_write`]); the algorithm's part is left out, with a
    /// warning, if it does not decode.
    fn saved(restored: Restored) -> Saved<Durable<A>> {
        let inner = if restored.durable.is_empty() {
            None
        } else {
            match postcard::from_bytes(&restored.durable) {
                Ok(durable) => Some(durable),
                Err(e) => {
                    warn!(error = %e, "the algorithm's durable state does not decode: starting without it");
                    None
                }
            }
        };
        Saved { incarnation: restored.incarnation, seen: restored.seen, inner, voters: restored.voters }
    }

    /// The process handles `event` at `now`; its effects are carried out through the shell.
    fn handle(&mut self, now: Instant, event: EventOf<Member<A>>, queued: &mut Queued) {
        driver::handle(&mut self.process, now, event, &mut self.effects);
        let mut shell: Shell<'_, A> =
            Shell { now, timers: &mut self.timers, armed: &mut self.armed, rng: &mut self.rng, queued };
        driver::carry_out(&mut shell, &mut self.effects);
    }
}

impl<A: Algorithm> Hosted for HostedMember<A> {
    fn step(&mut self, now: Instant, input: Input, queued: &mut Queued) {
        let event = match input {
            Input::Command(cmd) => Event::Command(cmd),
            Input::Received(from) => match self.received.take() {
                Some(msg) => Event::Message { from, msg },
                None => return,
            },
            Input::Timer => match self.due.take() {
                Some(timer) => Event::Timer(timer),
                None => return,
            },
        };
        self.handle(now, event, queued);
    }

    fn recover(&mut self, restored: Restored, queued: &mut Queued) {
        driver::recover(&mut Recovery { hosted: self, queued }, Some(Self::saved(restored)), []);
    }

    fn start(&mut self, restored: Restored, queued: &mut Queued) {
        Recovery { hosted: self, queued }.run(Event::Start { restored: Some(Self::saved(restored)) });
    }

    fn decode(&mut self, bytes: &[u8], cluster: u64, me: NodeId, key: Option<&ClusterKey>) -> Result<Received, Drop> {
        let envelope = wire::decode::<Msg<A>>(bytes, cluster, me, key)?;
        let received = Received {
            from: envelope.from,
            seq: envelope.seq,
            incarnation: envelope.msg.incarnation,
            kind: envelope.msg.kind_index(),
        };
        self.received = Some(envelope.msg);
        Ok(received)
    }

    fn validate(&self, port: Port) -> Result<(), Invalid> {
        let Some(msg) = &self.received else { return Ok(()) };
        self.process.validate(port, msg).map_err(|why| Invalid {
            kind: msg.kind(),
            index: msg.kind_index(),
            why: why.to_string(),
        })
    }

    fn shown(&self) -> String {
        self.received.as_ref().map(|msg| format!("{msg:?}")).unwrap_or_default()
    }

    fn decode_to_json(&self, bytes: &[u8], cluster: u64, to: NodeId, key: Option<&ClusterKey>) -> Value {
        match wire::decode::<Msg<A>>(bytes, cluster, to, key) {
            Ok(envelope) => serde_json::to_value(&envelope.msg).unwrap_or_default(),
            Err(e) => Value::String(format!("undecodable: {}", e.name())),
        }
    }

    fn next_deadline(&self) -> Option<Clock> {
        self.timers.values().map(|d| d.at).min()
    }

    fn lease_deadline(&self) -> Option<Clock> {
        self.process.lease_timer().and_then(|t| self.timers.get(&t)).map(|d| d.at)
    }

    fn take_due(&mut self, now: Clock) -> bool {
        let due = self.timers.iter().filter(|&(_, d)| d.at <= now).min_by_key(|&(_, d)| d.at).map(|(&t, _)| t);
        let Some(timer) = due else { return false };
        self.timers.remove(&timer);
        debug!(?timer, "timer");
        self.due = Some(timer);
        true
    }

    fn take_scripted(&mut self, timer: &Value, now: Instant) -> Result<(), String> {
        let armed = self.timers.iter().find(|(t, _)| serde_json::to_value(t).ok().as_ref() == Some(timer));
        let Some((&armed, deadline)) = armed else {
            return Err(format!("timer {timer} is not armed"));
        };
        if deadline.tick != now {
            return Err(format!(
                "timer {armed:?} is due at {} of the member's clock, not {}",
                deadline.tick.ticks(),
                now.ticks()
            ));
        }
        self.timers.remove(&armed);
        self.due = Some(armed);
        Ok(())
    }

    fn start_armed(&mut self, now: Clock) {
        for timer in self.armed.drain(..) {
            if let Some(deadline) = self.timers.get_mut(&timer) {
                deadline.at = now + deadline.wait;
            }
        }
    }

    fn leads(&self) -> bool {
        self.process.grant().is_some()
    }

    fn leadership(&self) -> Leadership {
        self.process.leadership()
    }

    fn status(&self) -> Status {
        self.process.status()
    }

    fn incarnation(&self) -> u64 {
        self.process.incarnation()
    }

    fn voters(&self) -> &Voters {
        self.process.voters()
    }

    fn changing(&self) -> Option<VoterChange> {
        self.process.changing()
    }

    fn change_report(&self) -> Option<ChangeReport> {
        self.process.change_report()
    }
}

/// The member as the driver of its own (re)start ([`driver::recover`]). Time 0 is the start: a process that starts
/// with no durable state at time 0 is a first start, not a late joiner, and every step of the recovery runs then.
/// A state a step records is queued for writing at its end, as the runner writes it at a step's end: a step's write
/// comes before the next step's sends.
struct Recovery<'r, A: Algorithm> {
    hosted: &'r mut HostedMember<A>,
    queued: &'r mut Queued,
}

impl<A: Algorithm> Restart<Member<A>> for Recovery<'_, A> {
    fn run(&mut self, event: EventOf<Member<A>>) {
        self.hosted.handle(Instant::ZERO, event, self.queued);
        if let Some(saved) = self.queued.pending.take() {
            self.queued.ops.push(Op::Save(saved));
        }
    }

    /// Nothing reports links on a real network: the peers learn of the member from its packets.
    fn tell_neighbors(&mut self) {}
}

/// The runtime as the host of the member's effects: a timer is a deadline drawn from its span with the member's
/// seeded generator (its clock starts once the step's writes and sends are done: [`Hosted::start_armed`]); sends
/// are queued in order, each after a write of the durable state recorded before it, if any (a step that persists
/// twice before a send writes once); notices are kept for the application.
struct Shell<'a, A: Algorithm> {
    now: Instant,
    timers: &'a mut BTreeMap<Timer<A>, Deadline>,
    armed: &'a mut Vec<Timer<A>>,
    rng: &'a mut ChaCha8Rng,
    queued: &'a mut Queued,
}

impl<A: Algorithm> Host<Member<A>> for Shell<'_, A> {
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        if let Some(saved) = self.queued.pending.take() {
            self.queued.ops.push(Op::Save(saved));
        }
        let bytes = match postcard::to_allocvec(msg.as_ref()) {
            Ok(bytes) => bytes,
            Err(e) => {
                warn!(error = %e, "a packet did not encode");
                return;
            }
        };
        let shown = tracing::enabled!(target: "elect_net::runner", Level::DEBUG).then(|| format!("{msg:?}"));
        self.queued.ops.push(Op::Send(Outgoing { port: to, kind: msg.kind_index(), bytes, shown }));
    }

    fn set_timer(&mut self, timer: Timer<A>, after: Span) {
        let wait = after.draw(|range| self.rng.random_range(range));
        let at = Clock::now() + to_std(wait);
        self.timers.insert(timer, Deadline { at, wait: to_std(wait), tick: self.now + wait });
        // A lease's hold counts from before the round it guards was sent, never from later: it may only end
        // sooner than the promises of the members that back it.
        if !matches!(timer, MemberTimer::Hold(_)) {
            self.armed.push(timer);
        }
    }

    fn cancel_timer(&mut self, timer: Timer<A>) {
        self.timers.remove(&timer);
    }

    fn persist(&mut self, durable: Saved<Durable<A>>) {
        self.queued.pending = Some(HostedMember::<A>::to_write(durable));
    }

    fn notify(&mut self, notice: Notice) {
        self.queued.notices.push(notice);
    }
}
