//! The task that drives one member's `Process` with real time, a UDP socket and a state file.
//!
//! One loop waits for the first of: a request from the [`crate::Node`] handle, a datagram, or the earliest timer
//! deadline. Each input is one step of the process; its effects are carried out in order: sends go on the wire,
//! timers go into a table of deadlines (one per timer kind, drawn from the timer's span with the member's seeded
//! generator), and a `Persist` is written to the state file before any later send of the same step leaves (the
//! write is deferred to the next send or the end of the step, so a step that persists twice writes once). After
//! every step the runtime reads the process's status and updates leadership and fencing ([`crate::fencing`]), the
//! status snapshot of `GET /status` and the leadership metrics.
//!
//! A datagram is accepted only if it passes, in order: the wire's checks (version, tag, shape, cluster, recipient;
//! [`crate::wire::decode`]), a known sender other than this member, and the sender's replay window
//! ([`crate::replay`]). Only then does anything in it count: the window moves, the sender's claims reach fencing,
//! and its message reaches the process.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use elect_algos::Algorithm;
use elect_core::{Command, Cx, Effect, EffectOf, Instant, NodeId, Port, Process, Span, State};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant as Clock;
use tracing::{debug, info, trace, warn};

use crate::auth::ClusterKey;
use crate::fencing::{Fencing, LeaderEvent, Leadership};
use crate::mesh::Mesh;
use crate::node::{NodeError, Request};
use crate::replay::{Admitted, Window};
use crate::stats::Counters;
use crate::status::Board;
use crate::store::{Store, Stored};
use crate::wire::{self, Body, Drop, Envelope};

/// One runtime tick is a microsecond of real time.
fn to_std(d: elect_core::Duration) -> std::time::Duration {
    std::time::Duration::from_micros(d.ticks())
}

/// A packet of algorithm `A`.
type Packet<A> = Envelope<<<A as Algorithm>::Process as Process>::Msg>;

/// Everything the task owns.
pub(crate) struct Runner<A: Algorithm> {
    pub(crate) algorithm: A,
    pub(crate) mesh: Mesh,
    pub(crate) delay_bound: elect_core::Duration,
    pub(crate) addrs: BTreeMap<NodeId, SocketAddr>,
    pub(crate) socket: UdpSocket,
    pub(crate) cluster: u64,
    pub(crate) key: Option<ClusterKey>,
    pub(crate) store: Store,
    pub(crate) stored: Stored,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) resign_hold: std::time::Duration,
    /// How long another member's leadership claim stays live after its last packet.
    pub(crate) claim_ttl: elect_core::Duration,
    pub(crate) requests: mpsc::UnboundedReceiver<Request>,
    pub(crate) events: mpsc::UnboundedSender<LeaderEvent>,
    pub(crate) leadership: watch::Sender<Leadership>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) board: Arc<Board>,
    pub(crate) state: Option<Live<A::Process>>,
}

/// The per-run state, built when the task starts.
pub(crate) struct Live<P: Process> {
    process: P,
    effects: Vec<EffectOf<P>>,
    timers: BTreeMap<P::Timer, Clock>,
    /// A durable state recorded and not yet written.
    pending: Option<P::Durable>,
    /// Sitting out after a resignation, until this instant.
    dormant_until: Option<Clock>,
    origin: Clock,
    seq: u64,
    fencing: Fencing,
    /// When to look at leadership again: a grant waits for a rival's claim to expire.
    recheck: Option<Clock>,
    /// Each member's replay window: its latest incarnation, and the sequence numbers accepted in it.
    windows: BTreeMap<NodeId, Window>,
    /// Since when this member has shown no leader (it has not since its start, or it lost its leader).
    leaderless_since: Option<Clock>,
    /// The last leadership with a leader this member showed.
    last_led: Option<Leadership>,
    /// Whether an unauthenticated packet has been logged (once is enough: the counter has the rest).
    told_unauthenticated: bool,
    buf: Vec<u8>,
    out: Vec<u8>,
}

impl<A: Algorithm> Runner<A> {
    fn me(&self) -> NodeId {
        self.mesh.setup(self.delay_bound).id
    }

    /// Runs the member until it is shut down (`Ok`) or cannot go on safely (a failed state write).
    pub(crate) async fn run(mut self, restored: Option<<A::Process as Process>::Durable>) -> Result<(), NodeError> {
        let me = self.me();
        let process = self.algorithm.build(&self.mesh.setup(self.delay_bound));
        self.state = Some(Live {
            process,
            effects: Vec::new(),
            timers: BTreeMap::new(),
            pending: None,
            dormant_until: None,
            origin: Clock::now(),
            seq: 0,
            fencing: Fencing::new(me, self.stored.seen, self.claim_ttl, self.delay_bound),
            recheck: None,
            windows: BTreeMap::new(),
            leaderless_since: Some(Clock::now()),
            last_led: None,
            told_unauthenticated: false,
            buf: vec![0; wire::MAX_PACKET],
            out: Vec::new(),
        });
        // Time 0 is the start: a process that starts with no durable state at time 0 is a first start, not a
        // late joiner.
        self.step_at(Instant::ZERO, |p, cx| {
            p.on_start(cx, restored);
            p.on_command(cx, Command::Initiate);
        })
        .await?;
        loop {
            let deadline = self.next_deadline();
            let live = self.state.as_mut().expect("running");
            tokio::select! {
                request = self.requests.recv() => match request {
                    Some(Request::Resign) => self.resign().await?,
                    Some(Request::Shutdown) | None => {
                        self.leave().await?;
                        info!("member left");
                        return Ok(());
                    }
                },
                received = self.socket.recv_from(&mut live.buf) => match received {
                    Ok((len, from)) => self.on_packet(len, from).await?,
                    Err(e) => {
                        // Some systems report an unreachable peer on the next receive; the network is lossy anyway.
                        self.counters.receive_error();
                        debug!(error = %e, "receive failed");
                    }
                },
                () = tokio::time::sleep_until(deadline.unwrap_or_else(Clock::now)), if deadline.is_some() => {
                    self.on_deadline().await?;
                }
            }
        }
    }

    fn live(&mut self) -> &mut Live<A::Process> {
        self.state.as_mut().expect("running")
    }

    fn next_deadline(&self) -> Option<Clock> {
        let live = self.state.as_ref().expect("running");
        live.timers.values().copied().chain(live.dormant_until).chain(live.recheck).min()
    }

    fn now(&self) -> Instant {
        let live = self.state.as_ref().expect("running");
        Instant::from_ticks(u64::try_from(live.origin.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    /// Runs one handler at the current time.
    async fn step(&mut self, f: impl FnOnce(&mut A::Process, &mut Cx<'_, A::Process>)) -> Result<(), NodeError> {
        let now = self.now();
        self.step_at(now, f).await
    }

    /// Runs one handler at `now` and carries its effects out, then updates leadership.
    async fn step_at(
        &mut self,
        now: Instant,
        f: impl FnOnce(&mut A::Process, &mut Cx<'_, A::Process>),
    ) -> Result<(), NodeError> {
        let live = self.live();
        let mut effects = std::mem::take(&mut live.effects);
        f(&mut live.process, &mut Cx::new(now, &mut effects));
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { to, msg } => {
                    self.flush().await?;
                    self.send(to, Body::Algorithm(msg)).await;
                }
                Effect::SetTimer { timer, after } => {
                    let wait = self.draw(after);
                    self.live().timers.insert(timer, Clock::now() + wait);
                }
                Effect::CancelTimer { timer } => {
                    self.live().timers.remove(&timer);
                }
                Effect::Persist(durable) => self.live().pending = Some(durable),
                Effect::Notify(notice) => debug!(?notice, "notice"),
            }
        }
        self.live().effects = effects;
        self.flush().await?;
        self.sync_leadership().await
    }

    /// A duration from `span`, drawn with the member's seeded generator.
    fn draw(&mut self, span: Span) -> std::time::Duration {
        let ticks = if span.min == span.max {
            span.min.ticks()
        } else {
            self.rng.random_range(span.min.ticks()..=span.max.ticks())
        };
        to_std(elect_core::Duration::from_ticks(ticks))
    }

    /// Writes the durable state recorded so far, if any.
    async fn flush(&mut self) -> Result<(), NodeError> {
        let Some(durable) = self.live().pending.take() else { return Ok(()) };
        self.stored.durable = postcard::to_allocvec(&durable).expect("durable states always encode");
        self.save().await
    }

    /// Replaces the state file with `self.stored` (in the blocking pool) and waits until it is durable.
    async fn save(&mut self) -> Result<(), NodeError> {
        let store = self.store.clone();
        let stored = self.stored.clone();
        tokio::task::spawn_blocking(move || store.save(&stored))
            .await
            .map_err(|e| NodeError::Task(e.to_string()))??;
        self.counters.wrote();
        Ok(())
    }

    /// Sends `body` to the member at `port`.
    async fn send(&mut self, port: Port, body: Body<<A::Process as Process>::Msg>) {
        let Some(to) = self.mesh.peer(port) else {
            warn!(?port, "send on a port that leads nowhere");
            return;
        };
        let me = self.me();
        let Some(&addr) = self.addrs.get(&to) else {
            warn!(%to, "send to a member without an address");
            return;
        };
        let cluster = self.cluster;
        let incarnation = self.stored.incarnation;
        let kind = body.kind_index();
        let live = self.live();
        live.seq += 1;
        let envelope = Envelope {
            version: wire::PROTOCOL_VERSION,
            cluster,
            from: me,
            to,
            incarnation,
            seq: live.seq,
            seen: live.fencing.seen(),
            lead: live.fencing.grant(),
            body,
        };
        let mut out = std::mem::take(&mut live.out);
        if let Err(e) = wire::encode(&envelope, self.key.as_ref(), &mut out) {
            warn!(error = %e, "a packet did not encode");
        } else {
            match self.socket.send_to(&out, addr).await {
                Ok(_) => self.counters.sent(kind),
                Err(e) => {
                    self.counters.send_error();
                    debug!(error = %e, %to, "send failed");
                }
            }
        }
        self.live().out = out;
    }

    /// Sends `body` to every other member.
    async fn broadcast(&mut self, body: Body<<A::Process as Process>::Msg>) {
        for k in 0..self.mesh.members().len().saturating_sub(1) {
            self.send(Port(k as u32), body.clone()).await;
        }
    }

    /// The checks a datagram must pass: it decodes as a packet of this cluster and version addressed here (with
    /// the right tag in a keyed cluster), from another member, in its latest incarnation, and is not a replay.
    /// Returns it with the port of its sender, or why it is dropped. Nothing is remembered of a dropped packet.
    fn accept(&mut self, len: usize) -> Result<(Packet<A>, Port), Drop> {
        let me = self.me();
        let live = self.state.as_mut().expect("running");
        let bytes = live.buf.get(..len).ok_or(Drop::Malformed)?;
        let envelope = wire::decode::<<A::Process as Process>::Msg>(bytes, self.cluster, me, self.key.as_ref())?;
        let from = envelope.from;
        let port = self.mesh.port_of(from).ok_or(Drop::UnknownSender)?;
        // Last: the window moves only for a packet that passed every other check.
        match live.windows.get_mut(&from) {
            Some(window) => {
                if window.admit(envelope.incarnation, envelope.seq)? == Admitted::Restarted {
                    info!(%from, incarnation = envelope.incarnation, "member restarted");
                }
            }
            None => {
                live.windows.insert(from, Window::first(envelope.incarnation, envelope.seq)?);
            }
        }
        Ok((envelope, port))
    }

    async fn on_packet(&mut self, len: usize, addr: SocketAddr) -> Result<(), NodeError> {
        let (envelope, port) = match self.accept(len) {
            Ok(accepted) => accepted,
            Err(reason) => {
                self.counters.dropped(reason);
                debug!(from = %addr, reason = reason.name(), "packet dropped");
                let live = self.live();
                if reason == Drop::Unauthenticated && !live.told_unauthenticated {
                    // Once: a member with another key (or none) is the usual cause, and worth a line in the log.
                    live.told_unauthenticated = true;
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
        let live = self.live();
        let now = Instant::from_ticks(u64::try_from(live.origin.elapsed().as_micros()).unwrap_or(u64::MAX));
        let stale_lead = live.fencing.heard(from, envelope.seen, envelope.lead, now);
        let dormant = live.dormant_until.is_some();
        self.counters.received(envelope.body.kind_index());
        self.board.contact(from);
        trace!(%from, seq = envelope.seq, "packet");
        match envelope.body {
            Body::Algorithm(msg) if !dormant => self.step(|p, cx| p.on_message(cx, port, msg)).await?,
            Body::Leaving if !dormant && self.live().process.status().leader == Some(from) => {
                info!(%from, "the leader left: electing another");
                self.step(|p, cx| p.on_command(cx, Command::Initiate)).await?;
            }
            _ => self.sync_leadership().await?,
        }
        if stale_lead {
            // Tell that leader about the newer epoch this member knows: it makes itself a newer grant.
            self.send(port, Body::Announce).await;
        }
        Ok(())
    }

    /// Fires every timer that is due, earliest first, and ends a sit-out that is over.
    async fn on_deadline(&mut self) -> Result<(), NodeError> {
        let now = Clock::now();
        let live = self.live();
        if live.recheck.is_some_and(|t| t <= now) {
            live.recheck = None;
            self.sync_leadership().await?;
        }
        let live = self.live();
        if live.dormant_until.is_some_and(|t| t <= now) {
            live.dormant_until = None;
            info!("back from sitting out: taking part in elections again");
            return self.rejoin().await;
        }
        while let Some((timer, _)) = {
            let live = self.live();
            live.timers.iter().filter(|&(_, &at)| at <= now).min_by_key(|&(_, &at)| at).map(|(&t, &at)| (t, at))
        } {
            self.live().timers.remove(&timer);
            self.step(|p, cx| p.on_timer(cx, timer)).await?;
        }
        Ok(())
    }

    /// Builds the process afresh and restarts it from its last durable state, as after a crash.
    async fn rejoin(&mut self) -> Result<(), NodeError> {
        let restored = postcard::from_bytes(&self.stored.durable).ok();
        let process = self.algorithm.build(&self.mesh.setup(self.delay_bound));
        let live = self.live();
        live.process = process;
        live.timers.clear();
        self.step(|p, cx| {
            p.on_start(cx, restored);
            p.on_command(cx, Command::Initiate);
        })
        .await
    }

    /// Gives leadership up: the algorithm is told, the member stops leading, tells the others, and takes no part
    /// in elections for the resign hold, so that another member is elected. A member that does not lead ignores it.
    async fn resign(&mut self) -> Result<(), NodeError> {
        if self.live().fencing.grant().is_none() {
            info!("asked to resign, but not leading");
            return Ok(());
        }
        self.step(|p, cx| p.on_command(cx, Command::Resign)).await?;
        let hold = self.resign_hold;
        self.sit_out(Clock::now() + hold).await?;
        info!(?hold, "resigned");
        self.broadcast(Body::Leaving).await;
        Ok(())
    }

    /// Shuts down gracefully: resigns if leading, then tells the others it is leaving.
    async fn leave(&mut self) -> Result<(), NodeError> {
        if self.live().fencing.grant().is_some() {
            self.step(|p, cx| p.on_command(cx, Command::Resign)).await?;
        }
        self.sit_out(Clock::now() + std::time::Duration::from_secs(86_400)).await?;
        self.broadcast(Body::Leaving).await;
        Ok(())
    }

    /// Freezes the process until `until`: no timers, no messages, no leadership.
    async fn sit_out(&mut self, until: Clock) -> Result<(), NodeError> {
        let live = self.live();
        live.dormant_until = Some(until);
        live.timers.clear();
        self.sync_leadership().await
    }

    /// Reads the process's status and updates fencing: persists a grown `seen`, then hands out events, announces
    /// a new grant, and publishes.
    async fn sync_leadership(&mut self) -> Result<(), NodeError> {
        let me = self.me();
        let now = self.now();
        let live = self.live();
        let status = live.process.status();
        let view = match status.state {
            State::Normal if live.dormant_until.is_none() => status.leader,
            _ => None,
        };
        let decision = live.fencing.decide(view, now);
        live.recheck = decision.recheck.map(|at| live.origin + to_std(at.saturating_since(Instant::ZERO)));
        let seen = live.fencing.seen();
        let shown = live.fencing.published();
        if seen > self.stored.seen {
            self.stored.seen = seen;
            self.save().await?;
        }
        for event in decision.events {
            match event {
                LeaderEvent::StartedLeading { epoch } => {
                    info!(epoch = %elect_core::epoch::show(epoch), "started leading")
                }
                LeaderEvent::StoppedLeading { epoch } => {
                    info!(epoch = %elect_core::epoch::show(epoch), "stopped leading")
                }
                LeaderEvent::LeaderChanged(l) => {
                    debug!(leader = ?l.leader.map(|l| l.0), epoch = %elect_core::epoch::show(l.epoch), "leadership")
                }
            }
            let _ = self.events.send(event);
        }
        if decision.announce {
            debug!(%me, "announcing the grant");
            self.broadcast(Body::Announce).await;
        }
        self.observe(status.state, shown);
        self.leadership.send_if_modified(|l| std::mem::replace(l, shown) != shown);
        Ok(())
    }

    /// Publishes the status snapshot, and updates the leadership metrics when the shown leadership changes.
    fn observe(&mut self, state: State, shown: Leadership) {
        let me = self.me();
        self.board.publish(state, shown);
        if *self.leadership.borrow() == shown {
            return;
        }
        self.counters.shows(me, shown);
        let live = self.state.as_mut().expect("running");
        match shown.leader {
            Some(_) => {
                if let Some(since) = live.leaderless_since.take() {
                    let took = since.elapsed();
                    self.counters.election_took(took);
                    debug!(?took, "a leader after an election");
                }
                if live.last_led != Some(shown) {
                    live.last_led = Some(shown);
                    self.counters.leader_changed();
                }
            }
            None => {
                live.leaderless_since.get_or_insert_with(Clock::now);
            }
        }
    }
}
