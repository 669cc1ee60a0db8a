//! The task that drives one member's process with real time, a UDP socket and a state file: the I/O shell around
//! [`elect_algos::member::Member`], which decides everything a member does.
//!
//! One loop waits for the first of: a request from the [`crate::Node`] handle, a datagram, or the earliest timer
//! deadline. Each input is one step of the process, run with the driver contract ([`elect_core::driver`]): the
//! process handles the event, then its effects are carried out in order through [`Shell`], the runtime's host.
//! Timers go into a table of deadlines (one per timer kind, drawn from the timer's span with the member's seeded
//! generator); sends and state writes are queued as operations and then performed in order, so that a `Persist` is
//! written to the state file before any later send of the same step leaves (a step that persists twice writes
//! once, before its next send or at its end). After every step the runtime hands the member's leadership notices
//! to the application and publishes its status. The member starts (or restarts) in the order every driver follows,
//! [`elect_core::driver::recover`], before the task is spawned; the task's first act is that start's writes and
//! sends, the new incarnation first.
//!
//! A datagram is accepted only if it passes, in order: the wire's checks (version, tag, shape, cluster, recipient;
//! [`crate::wire::decode`]), a known sender other than this member, in a keyless cluster a source address that is
//! the sender's (as configured, or as its name last resolved: without a tag, the address is all that ties a
//! packet to its sender), every field holding a value a member sends ([`Member::validate`]: dropped as `invalid`
//! and counted by kind otherwise, and logged at most once a minute), and the sender's replay window
//! ([`crate::replay`]). Only then does it reach the process.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use elect_algos::Algorithm;
use elect_algos::member::{ChangeReport, ChangeState, Leadership, Member, MemberTimer, Saved, VoterChange};
use elect_core::driver::{self, Host, Restart};
use elect_core::{Command, EffectOf, Event, EventOf, Instant, NodeId, Notice, Port, Process, Span};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant as Clock;
use tracing::{debug, info, warn};

use crate::auth::ClusterKey;
use crate::error::NodeError;
use crate::fencing::LeaderEvent;
use crate::mesh::Mesh;
use crate::replay::{Admitted, Window};
use crate::socket::Socket;
use crate::stats::Counters;
use crate::status::Board;
use crate::store::{Store, Stored};
use crate::wire::{self, Drop, Envelope};

/// How often an invalid packet is logged as a warning, at most.
const INVALID_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// A request from the handle to the task.
#[derive(Debug)]
pub(crate) enum Request {
    Resign,
    /// Hand leadership over to this member.
    Transfer(elect_core::NodeId),
    /// Change the voters, and say how it went once it has (or was refused, or given up).
    Voters(VoterChange, oneshot::Sender<ChangeReport>),
    Shutdown,
}

/// One runtime tick is a microsecond of real time.
fn to_std(d: elect_core::Duration) -> std::time::Duration {
    std::time::Duration::from_micros(d.ticks())
}

type Msg<A> = <Member<A> as Process>::Msg;
type Timer<A> = <Member<A> as Process>::Timer;
type Durable<A> = <<A as Algorithm>::Process as Process>::Durable;

/// Something a step asked for that waits on I/O, in the order it asked.
enum Op<A: Algorithm> {
    /// Write this durable state to the state file.
    Save(Saved<Durable<A>>),
    /// Send a packet to the member at the port.
    Send(Port, Msg<A>),
}

/// How the member reaches its peers.
pub(crate) struct Transport {
    pub(crate) socket: Socket,
    pub(crate) addrs: BTreeMap<NodeId, SocketAddr>,
    pub(crate) cluster: u64,
    pub(crate) key: Option<ClusterKey>,
    /// Each member's replay window: its latest incarnation, and the sequence numbers accepted in it.
    pub(crate) windows: BTreeMap<NodeId, Window>,
    /// This member's packet counter in its incarnation.
    pub(crate) seq: u64,
    /// Whether an unauthenticated packet has been logged (once is enough: the counter has the rest).
    pub(crate) told_unauthenticated: bool,
    /// When an invalid packet was last logged as a warning, and how many were dropped since (logged at most once
    /// a minute: the counters have every one).
    pub(crate) told_invalid: Option<(Clock, u64)>,
    /// New addresses of members given by name ([`crate::resolve`]), if any were.
    pub(crate) updates: Option<mpsc::UnboundedReceiver<(NodeId, SocketAddr)>>,
    pub(crate) buf: Vec<u8>,
    pub(crate) out: Vec<u8>,
}

/// What the application sees of the member.
pub(crate) struct Outlets {
    pub(crate) requests: mpsc::UnboundedReceiver<Request>,
    pub(crate) events: mpsc::UnboundedSender<LeaderEvent>,
    pub(crate) leadership: watch::Sender<Leadership>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) board: Arc<Board>,
}

/// When a timer fires: by the clock, and in the process's own ticks (what a scripted runner checks).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    at: Clock,
    /// How long after the step that armed it: the clock's deadline counts from the end of that step's writes and
    /// sends ([`Runner::settle`]).
    wait: std::time::Duration,
    pub(crate) tick: Instant,
}

/// Everything the task owns.
pub(crate) struct Runner<A: Algorithm> {
    pub(crate) process: Member<A>,
    pub(crate) mesh: Mesh,
    pub(crate) transport: Transport,
    pub(crate) store: Store,
    pub(crate) stored: Stored,
    pub(crate) outlets: Outlets,
    /// The effect buffer, reused from step to step.
    effects: Vec<EffectOf<Member<A>>>,
    pub(crate) timers: BTreeMap<Timer<A>, Deadline>,
    /// The timers the current step armed, whose deadlines count from the end of its writes and sends.
    armed: Vec<Timer<A>>,
    /// Timer jitter, from a logged seed.
    rng: ChaCha8Rng,
    origin: Clock,
    /// The time a scripted runner is at, in place of the clock's ([`crate::scripted`]).
    pub(crate) scripted: Option<Instant>,
    /// A durable state recorded and not yet written.
    pending: Option<Saved<Durable<A>>>,
    ops: Vec<Op<A>>,
    notices: Vec<Notice>,
    /// Since when this member has shown no leader (it has not since its start, or it lost its leader).
    leaderless_since: Option<Clock>,
    /// The last leadership with a leader this member showed.
    last_led: Option<Leadership>,
    /// The changes of the voters asked through [`Request::Voters`] and not over yet, with where to say how they went.
    asked: Vec<(VoterChange, oneshot::Sender<ChangeReport>)>,
}

impl<A: Algorithm> Runner<A> {
    /// A runner for `process`, whose clock starts now.
    pub(crate) fn new(
        process: Member<A>,
        mesh: Mesh,
        transport: Transport,
        (store, stored): (Store, Stored),
        outlets: Outlets,
        rng: ChaCha8Rng,
    ) -> Self {
        let now = Clock::now();
        Self {
            process,
            mesh,
            transport,
            store,
            stored,
            outlets,
            effects: Vec::new(),
            timers: BTreeMap::new(),
            armed: Vec::new(),
            rng,
            origin: now,
            scripted: None,
            pending: None,
            ops: Vec::new(),
            notices: Vec::new(),
            leaderless_since: Some(now),
            last_led: None,
            asked: Vec::new(),
        }
    }

    fn me(&self) -> NodeId {
        self.mesh.me()
    }

    fn now(&self) -> Instant {
        if let Some(now) = self.scripted {
            return now;
        }
        Instant::from_ticks(u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    /// Starts the member as every driver starts or recovers a process ([`driver::recover`]): it starts from what it
    /// last made durable (a new incarnation), is told of no link (a member hears none: its peers learn of it from
    /// its packets), and initiates. Called before the task is spawned, so that the handle knows the incarnation;
    /// the task performs the steps' writes and sends when it starts ([`Self::run`]), in order, the new incarnation
    /// first.
    pub(crate) fn recover(&mut self, restored: Saved<Durable<A>>) {
        driver::recover(&mut Recovery(self), Some(restored), []);
    }

    /// Only the first step of [`Self::recover`], for a runner whose script runs the rest of the recovery itself,
    /// one step at a time, as the simulator's trace records it ([`crate::scripted`]).
    pub(crate) fn start(&mut self, restored: Saved<Durable<A>>) {
        Recovery(self).run(Event::Start { restored: Some(restored) });
    }

    /// Runs the member until it is shut down (`Ok`) or cannot go on safely (a failed state write).
    pub(crate) async fn run(mut self) -> Result<(), NodeError> {
        self.settle().await?;
        loop {
            let deadline = self.timers.values().map(|d| d.at).min();
            if self.lease_ran_out() {
                // A member woken from a pause ends a lease that ran out before it reads anything.
                self.on_deadline().await?;
                continue;
            }
            tokio::select! {
                request = self.outlets.requests.recv() => match request {
                    Some(Request::Resign) => {
                        if self.process.grant().is_none() {
                            info!("asked to resign, but not leading");
                        }
                        self.step(Event::Command(Command::Resign)).await?;
                    }
                    Some(Request::Transfer(to)) => {
                        if self.process.grant().is_none() {
                            info!(to = to.0, "asked to hand leadership over, but not leading");
                        } else {
                            info!(to = to.0, "handing leadership over");
                        }
                        self.step(Event::Command(Command::Transfer { to })).await?;
                    }
                    Some(Request::Voters(change, reply)) => {
                        info!(%change, "asked to change the voters");
                        self.asked.push((change, reply));
                        self.step(Event::Command(match change {
                            VoterChange::Add(id) => Command::AddVoter { id },
                            VoterChange::Remove(id) => Command::RemoveVoter { id },
                        }))
                        .await?;
                        if let Some(report) = self.process.change_report()
                            && matches!(report.state, ChangeState::Refused(_))
                            && let Some((_, reply)) = self.asked.pop()
                        {
                            info!(%change, outcome = ?report.state, "change of the voters refused");
                            let _ = reply.send(report);
                        }
                    }
                    Some(Request::Shutdown) | None => {
                        self.step(Event::Command(Command::Leave)).await?;
                        info!("member left");
                        return Ok(());
                    }
                },
                received = self.transport.socket.recv_from(&mut self.transport.buf) => match received {
                    Ok((len, from)) => self.on_packet(len, from).await?,
                    Err(e) => {
                        // Some systems report an unreachable peer on the next receive; the network is lossy anyway.
                        self.outlets.counters.receive_error();
                        debug!(error = %e, "receive failed");
                    }
                },
                () = tokio::time::sleep_until(deadline.unwrap_or_else(Clock::now)), if deadline.is_some() => {
                    self.on_deadline().await?;
                }
                Some((peer, addr)) = next_update(&mut self.transport.updates) => {
                    self.transport.addrs.insert(peer, addr);
                }
            }
        }
    }

    /// In the lease mode, whether the lease this member holds has run out and its timer is still to fire.
    fn lease_ran_out(&self) -> bool {
        let deadline = self.process.lease_timer().and_then(|t| self.timers.get(&t));
        deadline.is_some_and(|d| d.at <= Clock::now())
    }

    /// Runs one event at the current time, carries out its effects, and publishes what changed.
    pub(crate) async fn step(&mut self, event: EventOf<Member<A>>) -> Result<(), NodeError> {
        let now = self.now();
        self.step_at(now, event);
        self.settle().await
    }

    /// The process handles `event` at `now`; its effects are carried out through the shell (timers at once, sends
    /// and writes queued).
    fn step_at(&mut self, now: Instant, event: EventOf<Member<A>>) {
        driver::handle(&mut self.process, now, event, &mut self.effects);
        let mut shell = Shell {
            now,
            timers: &mut self.timers,
            armed: &mut self.armed,
            rng: &mut self.rng,
            pending: &mut self.pending,
            ops: &mut self.ops,
            notices: &mut self.notices,
        };
        driver::carry_out(&mut shell, &mut self.effects);
    }

    /// Performs what the last step queued, in order (a pending write before the next send, and at the end), starts
    /// the clocks of the timers it armed, then publishes the member's leadership.
    ///
    /// A timer counts from the end of the step's writes and sends, not from its start: a write waits for the disk
    /// (and, on a busy machine, for the scheduler), and a timer that guards the step's sends (an RPC's `2T + ε`)
    /// must not run out before they have even left, or a live peer would be taken for a dead one.
    pub(crate) async fn settle(&mut self) -> Result<(), NodeError> {
        for op in std::mem::take(&mut self.ops) {
            match op {
                Op::Save(saved) => self.write(saved).await?,
                Op::Send(port, msg) => self.send(port, msg).await,
            }
        }
        if let Some(saved) = self.pending.take() {
            self.write(saved).await?;
        }
        let now = Clock::now();
        for timer in self.armed.drain(..) {
            if let Some(deadline) = self.timers.get_mut(&timer) {
                deadline.at = now + deadline.wait;
            }
        }
        self.publish();
        Ok(())
    }

    /// Replaces the state file with `saved` (in the blocking pool) and waits until it is durable.
    async fn write(&mut self, saved: Saved<Durable<A>>) -> Result<(), NodeError> {
        self.stored.incarnation = saved.incarnation;
        self.stored.seen = saved.seen.bits();
        self.stored.durable = match &saved.inner {
            Some(inner) => postcard::to_allocvec(inner).expect("durable states always encode"),
            None => Vec::new(),
        };
        self.stored.voters = saved.voters;
        let store = self.store.clone();
        let stored = self.stored.clone();
        let started = Clock::now();
        tokio::task::spawn_blocking(move || store.save(&stored))
            .await
            .map_err(|e| NodeError::Task(e.to_string()))??;
        self.outlets.counters.wrote();
        // The member waits for every write: on a busy disk, they are where its time goes.
        debug!(took = ?started.elapsed(), "state written");
        Ok(())
    }

    /// Sends `msg` to the member at `port`.
    async fn send(&mut self, port: Port, msg: Msg<A>) {
        let Some(to) = self.mesh.peer(port) else {
            warn!(?port, "send on a port that leads nowhere");
            return;
        };
        let Some(&addr) = self.transport.addrs.get(&to) else {
            // A member given by a name that does not resolve yet (the resolver warns of it).
            debug!(%to, "send to a member without an address");
            return;
        };
        let kind = elect_core::Message::kind_index(&msg);
        let t = &mut self.transport;
        t.seq += 1;
        let envelope =
            Envelope { version: wire::PROTOCOL_VERSION, cluster: t.cluster, from: self.mesh.me(), to, seq: t.seq, msg };
        if let Err(e) = wire::encode(&envelope, t.key.as_ref(), &mut t.out) {
            warn!(error = %e, "a packet did not encode");
            return;
        }
        match t.socket.send_to(&t.out, addr).await {
            Ok(_) => {
                self.outlets.counters.sent(kind);
                debug!(%to, seq = t.seq, msg = ?envelope.msg, "sent");
            }
            Err(e) => {
                self.outlets.counters.send_error();
                debug!(error = %e, %to, "send failed");
            }
        }
    }

    /// The checks a datagram must pass: it decodes as a packet of this cluster and version addressed here (with
    /// the right tag in a keyed cluster), from another member, in its latest incarnation, and is not a replay.
    /// Returns it with the port of its sender, or why it is dropped. Nothing is remembered of a dropped packet.
    fn accept(&mut self, len: usize, addr: SocketAddr) -> Result<(Envelope<Msg<A>>, Port), Drop> {
        let me = self.me();
        let t = &mut self.transport;
        let bytes = t.buf.get(..len).ok_or(Drop::Malformed)?;
        let envelope = wire::decode::<Msg<A>>(bytes, t.cluster, me, t.key.as_ref())?;
        let from = envelope.from;
        let port = self.mesh.port_of(from).ok_or(Drop::UnknownSender)?;
        if t.key.is_none() && t.addrs.get(&from) != Some(&addr) {
            return Err(Drop::WrongAddress);
        }
        if let Err(why) = self.process.validate(port, &envelope.msg) {
            let kind = elect_core::Message::kind(&envelope.msg);
            self.outlets.counters.invalid(elect_core::Message::kind_index(&envelope.msg));
            let now = Clock::now();
            match &mut t.told_invalid {
                Some((at, since)) if now.duration_since(*at) < INVALID_LOG_EVERY => {
                    *since += 1;
                    debug!(%from, kind, %why, "invalid packet dropped");
                }
                told => {
                    let since = told.map_or(0, |(_, n)| n);
                    *told = Some((now, 0));
                    warn!(
                        %from,
                        kind,
                        %why,
                        more_since_last_told = since,
                        "a packet holding a value no member sends was dropped (a member with a bug, another version or \
                         a damaged disk, or a forger?); such packets are counted in \
                         elect_packets_invalid_total{{kind=...}}"
                    );
                }
            }
            return Err(Drop::Invalid);
        }
        let incarnation = envelope.msg.incarnation;
        // Last: the window moves only for a packet that passed every other check.
        match t.windows.get_mut(&from) {
            Some(window) => {
                if window.admit(incarnation, envelope.seq)? == Admitted::Restarted {
                    info!(%from, incarnation, "member restarted");
                }
            }
            None => {
                t.windows.insert(from, Window::first(incarnation, envelope.seq)?);
            }
        }
        Ok((envelope, port))
    }

    pub(crate) async fn on_packet(&mut self, len: usize, addr: SocketAddr) -> Result<(), NodeError> {
        let (envelope, port) = match self.accept(len, addr) {
            Ok(accepted) => accepted,
            Err(Drop::Invalid) => return Ok(()), // Counted and logged by kind.
            Err(reason) => {
                self.outlets.counters.dropped(reason);
                debug!(from = %addr, reason = reason.name(), "packet dropped");
                if reason == Drop::Unauthenticated && !self.transport.told_unauthenticated {
                    // Once: a member with another key (or none) is the usual cause, and worth a line in the log.
                    self.transport.told_unauthenticated = true;
                    warn!(
                        from = %addr,
                        "a packet without the right tag was dropped (a member with another cluster key, or none?); \
                         such packets are counted in elect_packets_dropped_total{{reason=\"unauthenticated\"}}"
                    );
                }
                return Ok(());
            }
        };
        let from = envelope.from;
        self.outlets.counters.received(elect_core::Message::kind_index(&envelope.msg));
        self.outlets.board.contact(from);
        debug!(%from, seq = envelope.seq, msg = ?envelope.msg, "received");
        self.step(Event::Message { from: port, msg: envelope.msg }).await
    }

    /// Fires every timer that is due, earliest first.
    async fn on_deadline(&mut self) -> Result<(), NodeError> {
        let now = Clock::now();
        while let Some((timer, _)) =
            self.timers.iter().filter(|&(_, d)| d.at <= now).min_by_key(|&(_, d)| d.at).map(|(&t, d)| (t, d.at))
        {
            self.timers.remove(&timer);
            debug!(?timer, "timer");
            self.step(Event::Timer(timer)).await?;
        }
        Ok(())
    }

    /// Hands the step's leadership notices to the application, and publishes the status snapshot, the watch value
    /// and the leadership metrics.
    /// Publishes the voters and the change being made, and answers the requests whose change is over.
    fn publish_voters(&mut self) {
        let report = self.process.change_report();
        self.outlets.board.set_voters(self.process.voters(), self.process.changing(), report);
        // A refusal is answered where the request is handled; a change that ended answers the first request for it.
        let Some(report) = report.filter(|r| matches!(r.state, ChangeState::Done(_) | ChangeState::Failed(_))) else {
            return;
        };
        if let Some(i) = self.asked.iter().position(|(change, _)| *change == report.change) {
            let (change, reply) = self.asked.swap_remove(i);
            info!(%change, outcome = ?report.state, "change of the voters over");
            let _ = reply.send(report);
        }
    }

    fn publish(&mut self) {
        let me = self.me();
        for notice in std::mem::take(&mut self.notices) {
            let event = match notice {
                Notice::Elected { epoch } => {
                    info!(epoch = %epoch, "started leading");
                    LeaderEvent::StartedLeading { epoch }
                }
                Notice::Ended { epoch } => {
                    info!(epoch = %epoch, "stopped leading");
                    LeaderEvent::StoppedLeading { epoch }
                }
                Notice::Shows { leader, epoch } => {
                    debug!(leader = ?leader.map(|l| l.0), epoch = %epoch, "leadership");
                    LeaderEvent::LeaderChanged(Leadership { leader, epoch })
                }
                Notice::Pulse { .. } => continue,
            };
            let _ = self.outlets.events.send(event);
        }
        self.publish_voters();
        let shown = self.process.leadership();
        let state = self.process.status().state;
        let lease = self.process.lease_timer().and_then(|t| self.timers.get(&t)).map(|d| d.at);
        self.outlets.board.set_lease(lease);
        self.outlets.board.publish(state, shown);
        if *self.outlets.leadership.borrow() == shown {
            return;
        }
        self.outlets.counters.shows(me, shown);
        match shown.leader {
            Some(_) => {
                if let Some(since) = self.leaderless_since.take() {
                    let took = since.elapsed();
                    self.outlets.counters.election_took(took);
                    debug!(?took, "a leader after an election");
                }
                if self.last_led != Some(shown) {
                    self.last_led = Some(shown);
                    self.outlets.counters.leader_changed();
                }
            }
            None => {
                self.leaderless_since.get_or_insert_with(Clock::now);
            }
        }
        self.outlets.leadership.send_if_modified(|l| std::mem::replace(l, shown) != shown);
    }
}

/// The runner as the driver of its member's (re)start ([`driver::recover`]). Time 0 is the start: a process that
/// starts with no durable state at time 0 is a first start, not a late joiner, and every step of the recovery runs
/// then. Each step's effects are carried out through the shell, and a state it records is queued for writing at
/// its end, as [`Runner::settle`] would write it: a step's write comes before the next step's sends.
struct Recovery<'r, A: Algorithm>(&'r mut Runner<A>);

impl<A: Algorithm> Restart<Member<A>> for Recovery<'_, A> {
    fn run(&mut self, event: EventOf<Member<A>>) {
        let runner = &mut *self.0;
        runner.step_at(Instant::ZERO, event);
        if let Some(saved) = runner.pending.take() {
            runner.ops.push(Op::Save(saved));
        }
    }

    /// Nothing reports links on a real network: the peers learn of the member from its packets.
    fn tell_neighbors(&mut self) {}
}

/// The next new address of a member given by name; never, if none was.
async fn next_update(
    updates: &mut Option<mpsc::UnboundedReceiver<(NodeId, SocketAddr)>>,
) -> Option<(NodeId, SocketAddr)> {
    match updates {
        Some(updates) => updates.recv().await,
        None => std::future::pending().await,
    }
}

/// The runtime as the host of the member's effects: a timer is a deadline drawn from its span with the member's
/// seeded generator (its clock starts once the step's writes and sends are done: [`Runner::settle`]); sends are
/// queued in order, each after a write of the durable state recorded before it, if any (a step that persists twice
/// before a send writes once); notices are kept for the application.
struct Shell<'a, A: Algorithm> {
    now: Instant,
    timers: &'a mut BTreeMap<Timer<A>, Deadline>,
    armed: &'a mut Vec<Timer<A>>,
    rng: &'a mut ChaCha8Rng,
    pending: &'a mut Option<Saved<Durable<A>>>,
    ops: &'a mut Vec<Op<A>>,
    notices: &'a mut Vec<Notice>,
}

impl<A: Algorithm> Host<Member<A>> for Shell<'_, A> {
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        if let Some(saved) = self.pending.take() {
            self.ops.push(Op::Save(saved));
        }
        self.ops.push(Op::Send(to, msg.into_owned()));
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
        *self.pending = Some(durable);
    }

    fn notify(&mut self, notice: Notice) {
        self.notices.push(notice);
    }
}
