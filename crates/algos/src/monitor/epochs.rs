//! Epochs: entering them, and catching up. Each epoch runs a fresh instance of the algorithm, and every message of
//! the algorithm carries its epoch: a message of a newer epoch makes the receiver join it, one of an older epoch is
//! stale (a leader answers it with a heartbeat of its own, so that the sender catches up). An epoch is above every
//! epoch its process was in before it crashed, because the process keeps a durable reservation ahead of every
//! round it enters, written before anything of a new round leaves ([`RESERVED_ROUNDS`] rounds a write). A process
//! back from a crash never joins an election that may be over: it starts the epoch after the first newer one it
//! hears of; on a complete graph, a process that hears the heartbeat of a newer epoch from a stronger leader
//! follows it there without an election.

use elect_core::{Command, Cx, Epoch, Event, Instant, NodeId, Port, Process, Setup};

use super::messages::{MonitorMsg, MonitorTimer};
use super::process::{Monitored, Msg};
use super::rule;
use crate::algorithm::Algorithm;

/// How many rounds past the one it enters a process reserves with one write (see the module documentation).
pub const RESERVED_ROUNDS: u32 = 16;

impl<A: Algorithm> Monitored<A> {
    /// Makes sure `epoch`'s round is within the durable reservation, before anything of `epoch` is sent: if it is
    /// beyond it, reserves [`RESERVED_ROUNDS`] rounds past it (one write).
    pub(super) fn reserve(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if epoch.round() > self.reserved.round() {
            self.reserved = epoch.saturating_ahead(RESERVED_ROUNDS, self.fixed.setup.id);
            cx.persist((self.reserved, None));
        }
    }

    /// Starts the epoch after `epoch`, started because `down` failed (if it did). Past the last round there is
    /// none: the process stays where it is (valid epochs leave 2³¹ rounds above them; see `elect_core::epoch`).
    pub(super) fn start_after(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        if let Some(next) = epoch.next(self.fixed.setup.id) {
            self.start_epoch(cx, next, down);
        }
    }

    /// Leaves the current epoch for `epoch`, started because `down` failed (if it was), with a fresh instance of
    /// the algorithm, which initiates.
    pub(super) fn start_epoch(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        self.leave_for(cx, epoch, down, true);
    }

    /// Leaves the current epoch for `epoch` with a fresh instance of the algorithm, which initiates if `initiate`.
    fn leave_for(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>, initiate: bool) {
        self.reserve(cx, epoch);
        if self.beating {
            // A leader that moves on takes its followers along, rather than leaving them to suspect it.
            self.announce(cx, &MonitorMsg::Join { epoch, down });
        }
        self.enter_epoch(cx, epoch, down, initiate);
    }

    /// Enters `epoch` with a fresh instance of the algorithm, which initiates if `initiate` (and otherwise waits:
    /// a straggler that adopts the epoch's leader takes no part in its election).
    pub(super) fn enter_epoch(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>, initiate: bool) {
        let me = self.fixed.setup.id;
        // The epoch's instance is told whose silence opened it, so that it waits for no answer from that process
        // (see the module documentation), unless this process still hears that one as its leader.
        let heard = if self.watching { self.shown().leader } else { None };
        let suspected = down.filter(|&d| d != me && Some(d) != heard);
        self.reserve(cx, epoch);
        self.forget_leader(cx);
        self.adopted = None;
        if let Some(d) = down.filter(|&d| d != me) {
            self.ring.dead.insert(d);
        }
        // Whoever started the epoch was alive then (a recovered process rejoins the ring this way).
        self.ring.dead.remove(&epoch.starter());
        self.epoch = epoch;
        self.instance = epoch;
        self.down = down;
        self.seq = 0;
        // What was sent in the old epoch is stale wherever it is, and the new election gets its own time.
        self.ring.unacked.clear();
        cx.cancel_timer(MonitorTimer::Hop);
        self.waiting = false;
        cx.cancel_timer(MonitorTimer::Stall);
        self.inner.rebuild(&Setup { suspected: suspected.as_slice(), ..self.fixed.algorithm_setup() });
        self.step_inner(cx, Event::Start { restored: None });
        let down: Vec<Port> = self.links_down.iter().copied().collect();
        for port in down {
            self.step_inner(cx, Event::Link { port, up: false });
        }
        if initiate {
            self.step_inner(cx, Event::Command(Command::Initiate));
        }
        self.sync(cx);
        self.deliver_to_self(cx);
    }

    /// A new epoch: whatever this process vouched for, and asked about, was of the old one.
    pub(super) fn forget_leader(&mut self, cx: &mut Cx<'_, Self>) {
        self.kept = 0;
        if self.fresh {
            self.fresh = false;
            cx.cancel_timer(MonitorTimer::Quiet);
        }
        if self.poll.take().is_some() {
            cx.cancel_timer(MonitorTimer::Poll);
        }
    }

    /// This process heard of `epoch`, newer than its own, while catching up: it starts the round after it.
    pub(super) fn catch_up(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        self.catching_up = false;
        self.start_after(cx, epoch, None);
        cx.rule(rule::CATCH_UP);
    }

    /// This process heard, on `from`, the heartbeat of `epoch`, newer than its own, from a leader stronger than
    /// it: it follows that leader in that epoch, without an election (the epoch's is over, and would elect the
    /// same leader).
    pub(super) fn adopt(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>, from: Port) {
        self.catching_up = false;
        self.enter_epoch(cx, epoch, down, false);
        self.follow(cx, from, 1);
        cx.rule(rule::ADOPT);
    }

    /// A message of an older epoch than this process's arrived on `from`. A leader answers it with a heartbeat of
    /// its own epoch, so that the straggler catches up at once (on a complete graph, where a heartbeat says whose
    /// it is).
    pub(super) fn answer_stale(&self, cx: &mut Cx<'_, Self>, from: Port) {
        cx.rule(rule::STALE);
        if self.beating && !self.relayed() {
            cx.send(from, MonitorMsg::Heartbeat { epoch: self.epoch, seq: 1, down: self.down });
        }
    }

    /// A `join` of `epoch`, opened because `down` failed (if it was), arrived on `from` (this process is not the
    /// one it names, nor catching up): a newer epoch is joined, and passed on the way heartbeats are.
    pub(super) fn on_join(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, down: Option<NodeId>) {
        if epoch > self.epoch {
            self.start_epoch(cx, epoch, down);
            self.relay(cx, from, &MonitorMsg::Join { epoch, down });
            cx.rule(rule::JOIN);
        } else {
            cx.rule(rule::SEEN); // Already there.
        }
    }

    /// Meets the epoch of an algorithm's message from `from`: a message of an older epoch is answered with this
    /// one, a newer epoch is caught up with (while catching up) or entered. Whether the message is then for this
    /// epoch's algorithm.
    pub(super) fn meet_epoch(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, down: Option<NodeId>) -> bool {
        if epoch < self.epoch {
            self.answer_stale(cx, from);
            return false;
        }
        if epoch > self.epoch && self.catching_up {
            self.catch_up(cx, epoch);
            return false;
        }
        if epoch > self.epoch {
            self.start_epoch(cx, epoch, down);
        }
        true
    }

    /// A message of the algorithm, of `epoch`, arrived on `from`. One of a newer epoch opens it here: the fresh
    /// instance initiates (every process that hears of an election takes part in it) unless the message alone
    /// engages it in the election already under way: a coordinator's announcement ends the election at this
    /// process, a halt makes it wait for the new coordinator, a call to elect makes it take part. Initiating as
    /// well would start a second election that elects the same leader.
    pub(super) fn on_inner(
        &mut self,
        cx: &mut Cx<'_, Self>,
        from: Port,
        epoch: Epoch,
        down: Option<NodeId>,
        msg: Msg<A>,
    ) {
        if epoch > self.epoch && !self.catching_up {
            self.leave_for(cx, epoch, down, false);
            let inner_from = self.ring.incoming(&self.fixed, from);
            if !self.engaged_by(cx.now(), inner_from, &msg) {
                self.run(cx, Event::Command(Command::Initiate));
            }
        } else if !self.meet_epoch(cx, from, epoch, down) {
            return;
        }
        cx.rule(rule::DELIVER);
        let from = self.ring.incoming(&self.fixed, from);
        self.run(cx, Event::Message { from, msg });
    }

    /// Whether `msg` on `from` alone would engage the algorithm's instance, fresh in its epoch, in the election:
    /// make it follow a leader (a coordinator's announcement), take part (a call to elect) or wait for one (a
    /// halt): its status changes. Tried on a copy, whose effects are dropped.
    fn engaged_by(&self, now: Instant, from: Port, msg: &Msg<A>) -> bool {
        let mut probe = self.inner.process().clone();
        let before = probe.status();
        let mut effects = Vec::new();
        elect_core::driver::handle(&mut probe, now, Event::Message { from, msg: msg.clone() }, &mut effects);
        probe.status() != before
    }
}
