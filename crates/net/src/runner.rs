//! The task that drives one member's process with real time, a UDP socket and a state file: the I/O shell around
//! [`elect_algos::member::Member`], which decides everything a member does.
//!
//! One loop waits for the first of: a request from the [`crate::Node`] handle, a datagram, or the earliest timer
//! deadline. Each input is one step of the process, run with the driver contract ([`elect_core::driver`]): the
//! process handles the event, then its effects are carried out in order through the runtime's host
//! ([`crate::hosted`], which holds the process behind an interface, so that this task is compiled once).
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
//! packet to its sender), every field holding a value a member sends
//! ([`elect_algos::member::Member::validate`]: dropped as `invalid` and counted by kind otherwise, and logged at
//! most once a minute), and the sender's replay window ([`crate::replay`]). Only then does it reach the process.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use elect_algos::member::{ChangeReport, ChangeState, Leadership, VoterChange};
use elect_core::{Command, Instant, NodeId, Notice, Port};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant as Clock;
use tracing::{debug, info, warn};

use crate::auth::ClusterKey;
use crate::error::NodeError;
use crate::fencing::LeaderEvent;
use crate::hosted::{Hosted, Input, Op, Outgoing, Queued, Restored, ToWrite};
use crate::mesh::Mesh;
use crate::replay::{Admitted, Window};
use crate::socket::Socket;
use crate::stats::Counters;
use crate::status::Board;
use crate::store::{Store, Stored};
use crate::wire::{self, Drop};

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

/// Everything the task owns.
pub(crate) struct Runner {
    /// The member's process and what is typed by its algorithm.
    pub(crate) hosted: Box<dyn Hosted>,
    pub(crate) mesh: Mesh,
    pub(crate) transport: Transport,
    pub(crate) store: Store,
    pub(crate) stored: Stored,
    pub(crate) outlets: Outlets,
    origin: Clock,
    /// The time a scripted runner is at, in place of the clock's ([`crate::scripted`]).
    pub(crate) scripted: Option<Instant>,
    /// What the steps queued and the runner has not yet performed or published.
    queued: Queued,
    /// Since when this member has shown no leader (it has not since its start, or it lost its leader).
    leaderless_since: Option<Clock>,
    /// The last leadership with a leader this member showed.
    last_led: Option<Leadership>,
    /// The changes of the voters asked through [`Request::Voters`] and not over yet, with where to say how they went.
    asked: Vec<(VoterChange, oneshot::Sender<ChangeReport>)>,
}

impl Runner {
    /// A runner for `hosted`, whose clock starts now.
    pub(crate) fn new(
        hosted: Box<dyn Hosted>,
        mesh: Mesh,
        transport: Transport,
        (store, stored): (Store, Stored),
        outlets: Outlets,
    ) -> Self {
        let now = Clock::now();
        Self {
            hosted,
            mesh,
            transport,
            store,
            stored,
            outlets,
            origin: now,
            scripted: None,
            queued: Queued::default(),
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

    /// Starts the member as every driver starts or recovers a process ([`elect_core::driver::recover`]): it starts
    /// from what it last made durable (a new incarnation), is told of no link (a member hears none: its peers learn
    /// of it from its packets), and initiates. Called before the task is spawned, so that the handle knows the
    /// incarnation; the task performs the steps' writes and sends when it starts ([`Self::run`]), in order, the new
    /// incarnation first.
    pub(crate) fn recover(&mut self, restored: Restored) {
        self.hosted.recover(restored, &mut self.queued);
    }

    /// Only the first step of [`Self::recover`], for a runner whose script runs the rest of the recovery itself,
    /// one step at a time, as the simulator's trace records it ([`crate::scripted`]).
    pub(crate) fn start(&mut self, restored: Restored) {
        self.hosted.start(restored, &mut self.queued);
    }

    /// Runs the member until it is shut down (`Ok`) or cannot go on safely (a failed state write).
    pub(crate) async fn run(mut self) -> Result<(), NodeError> {
        self.settle().await?;
        loop {
            let deadline = self.hosted.next_deadline();
            if self.lease_ran_out() {
                // A member woken from a pause ends a lease that ran out before it reads anything.
                self.on_deadline().await?;
                continue;
            }
            tokio::select! {
                request = self.outlets.requests.recv() => match request {
                    Some(Request::Resign) => {
                        if !self.hosted.leads() {
                            info!("asked to resign, but not leading");
                        }
                        self.step(Input::Command(Command::Resign)).await?;
                    }
                    Some(Request::Transfer(to)) => {
                        if self.hosted.leads() {
                            info!(to = to.0, "handing leadership over");
                        } else {
                            info!(to = to.0, "asked to hand leadership over, but not leading");
                        }
                        self.step(Input::Command(Command::Transfer { to })).await?;
                    }
                    Some(Request::Voters(change, reply)) => {
                        info!(%change, "asked to change the voters");
                        self.asked.push((change, reply));
                        self.step(Input::Command(match change {
                            VoterChange::Add(id) => Command::AddVoter { id },
                            VoterChange::Remove(id) => Command::RemoveVoter { id },
                        }))
                        .await?;
                        if let Some(report) = self.hosted.change_report()
                            && matches!(report.state, ChangeState::Refused(_))
                            && let Some((_, reply)) = self.asked.pop()
                        {
                            info!(%change, outcome = ?report.state, "change of the voters refused");
                            let _ = reply.send(report);
                        }
                    }
                    Some(Request::Shutdown) | None => {
                        self.step(Input::Command(Command::Leave)).await?;
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
        self.hosted.lease_deadline().is_some_and(|at| at <= Clock::now())
    }

    /// Runs one step at the current time, carries out its effects, and publishes what changed.
    pub(crate) async fn step(&mut self, input: Input) -> Result<(), NodeError> {
        let now = self.now();
        self.hosted.step(now, input, &mut self.queued);
        self.settle().await
    }

    /// Performs what the last step queued, in order (a pending write before the next send, and at the end), starts
    /// the clocks of the timers it armed, then publishes the member's leadership.
    ///
    /// A timer counts from the end of the step's writes and sends, not from its start: a write waits for the disk
    /// (and, on a busy machine, for the scheduler), and a timer that guards the step's sends (an RPC's `2T + ε`)
    /// must not run out before they have even left, or a live peer would be taken for a dead one.
    pub(crate) async fn settle(&mut self) -> Result<(), NodeError> {
        for op in std::mem::take(&mut self.queued.ops) {
            match op {
                Op::Save(saved) => self.write(saved).await?,
                Op::Send(outgoing) => self.send(outgoing).await,
            }
        }
        if let Some(saved) = self.queued.pending.take() {
            self.write(saved).await?;
        }
        self.hosted.start_armed(Clock::now());
        self.publish();
        Ok(())
    }

    /// Replaces the state file with `saved` (in the blocking pool) and waits until it is durable.
    async fn write(&mut self, saved: ToWrite) -> Result<(), NodeError> {
        self.stored.incarnation = saved.incarnation;
        self.stored.seen = saved.seen.bits();
        self.stored.durable = saved.durable;
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

    /// Sends `outgoing` to the member at its port.
    async fn send(&mut self, outgoing: Outgoing) {
        let Outgoing { port, kind, bytes, shown } = outgoing;
        let Some(to) = self.mesh.peer(port) else {
            warn!(?port, "send on a port that leads nowhere");
            return;
        };
        let Some(&addr) = self.transport.addrs.get(&to) else {
            // A member given by a name that does not resolve yet (the resolver warns of it).
            debug!(%to, "send to a member without an address");
            return;
        };
        let me = self.mesh.me();
        let t = &mut self.transport;
        t.seq += 1;
        if let Err(e) = wire::encode_parts((t.cluster, me, to, t.seq), &bytes, t.key.as_ref(), &mut t.out) {
            warn!(error = %e, "a packet did not encode");
            return;
        }
        match t.socket.send_to(&t.out, addr).await {
            Ok(_) => {
                self.outlets.counters.sent(kind);
                debug!(%to, seq = t.seq, msg = shown.as_deref().unwrap_or_default(), "sent");
            }
            Err(e) => {
                self.outlets.counters.send_error();
                debug!(error = %e, %to, "send failed");
            }
        }
    }

    /// The checks a datagram must pass: it decodes as a packet of this cluster and version addressed here (with
    /// the right tag in a keyed cluster), from another member, in its latest incarnation, and is not a replay.
    /// Returns its sender's id and port, or why it is dropped; the packet waits in [`Hosted`] for its step.
    /// Nothing is remembered of a dropped packet.
    fn accept(&mut self, len: usize, addr: SocketAddr) -> Result<(NodeId, u64, Port), Drop> {
        let me = self.me();
        let t = &mut self.transport;
        let bytes = t.buf.get(..len).ok_or(Drop::Malformed)?;
        let received = self.hosted.decode(bytes, t.cluster, me, t.key.as_ref())?;
        let from = received.from;
        let port = self.mesh.port_of(from).ok_or(Drop::UnknownSender)?;
        if t.key.is_none() && t.addrs.get(&from) != Some(&addr) {
            return Err(Drop::WrongAddress);
        }
        if let Err(invalid) = self.hosted.validate(port) {
            let (kind, why) = (invalid.kind, invalid.why);
            self.outlets.counters.invalid(invalid.index);
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
        // Last: the window moves only for a packet that passed every other check.
        match t.windows.get_mut(&from) {
            Some(window) => {
                if window.admit(received.incarnation, received.seq)? == Admitted::Restarted {
                    info!(%from, incarnation = received.incarnation, "member restarted");
                }
            }
            None => {
                t.windows.insert(from, Window::first(received.incarnation, received.seq)?);
            }
        }
        self.outlets.counters.received(received.kind);
        Ok((from, received.seq, port))
    }

    pub(crate) async fn on_packet(&mut self, len: usize, addr: SocketAddr) -> Result<(), NodeError> {
        let (from, seq, port) = match self.accept(len, addr) {
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
        self.outlets.board.contact(from);
        debug!(%from, seq, msg = %self.hosted.shown(), "received");
        self.step(Input::Received(port)).await
    }

    /// Fires every timer that is due, earliest first.
    async fn on_deadline(&mut self) -> Result<(), NodeError> {
        let now = Clock::now();
        while self.hosted.take_due(now) {
            self.step(Input::Timer).await?;
        }
        Ok(())
    }

    /// Publishes the voters and the change being made, and answers the requests whose change is over.
    fn publish_voters(&mut self) {
        let report = self.hosted.change_report();
        self.outlets.board.set_voters(self.hosted.voters(), self.hosted.changing(), report);
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

    /// Hands the step's leadership notices to the application, and publishes the status snapshot, the watch value
    /// and the leadership metrics.
    fn publish(&mut self) {
        let me = self.me();
        for notice in std::mem::take(&mut self.queued.notices) {
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
        let shown = self.hosted.leadership();
        let state = self.hosted.status().state;
        self.outlets.board.set_lease(self.hosted.lease_deadline());
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

/// The next new address of a member given by name; never, if none was.
async fn next_update(
    updates: &mut Option<mpsc::UnboundedReceiver<(NodeId, SocketAddr)>>,
) -> Option<(NodeId, SocketAddr)> {
    match updates {
        Some(updates) => updates.recv().await,
        None => std::future::pending().await,
    }
}
