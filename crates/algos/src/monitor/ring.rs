//! Ring repair (S000, S001). On a logical ring over a complete graph, every message of the algorithm sent round the
//! ring goes to the nearest live process in that direction, as `ring{epoch, forward, msg}`, and its receiver
//! acknowledges it (`hop-ack`). A message not acknowledged within a round trip went to a dead process: the sender
//! marks it dead and starts a new epoch naming it, so that everybody who joins skips it. The receiver of a message
//! that skipped processes marks them dead too, and the algorithm sees every message arrive from its ring
//! neighbour. A process that takes every other for dead hands its ring messages back to itself, a bounded number
//! per step.

use std::collections::{BTreeSet, VecDeque};

use elect_core::{Cx, Epoch, Event, Instant, NodeId, Port, RingPorts, Span};

use super::config::Fixed;
use super::messages::{MonitorMsg, MonitorTimer};
use super::process::{Monitored, Msg};
use super::rule;
use crate::algorithm::Algorithm;

/// The most ring messages a process that takes every other for dead hands to itself in one step (see
/// `deliver_to_self`): an honest election on a ring of one sends a handful.
const ALONE_BUDGET: u32 = 256;

/// A ring message waiting for its acknowledgement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Unacked<M> {
    /// The port it left by.
    port: Port,
    /// When it is overdue.
    deadline: Instant,
    /// Its direction round the ring.
    forward: bool,
    /// The algorithm's message.
    msg: M,
}

/// What ring repair knows.
#[derive(Clone, Debug)]
pub(super) struct RingRepair<M> {
    /// Processes believed dead.
    pub(super) dead: BTreeSet<NodeId>,
    /// Ring messages sent and not yet acknowledged, oldest first.
    pub(super) unacked: VecDeque<Unacked<M>>,
    /// Ring messages to itself, while every other process is dead (scratch space, empty between steps).
    alone: VecDeque<(bool, M)>,
}

impl<M> Default for RingRepair<M> {
    fn default() -> Self {
        Self { dead: BTreeSet::new(), unacked: VecDeque::new(), alone: VecDeque::new() }
    }
}

impl<M: Clone> RingRepair<M> {
    /// The nearest live process in ring order after (`forward`) or before this one.
    fn live_neighbor(&self, fixed: &Fixed, forward: bool) -> Option<Port> {
        let order = &fixed.setup.ring_order;
        let alive = |p: &&Port| !self.dead.contains(&fixed.neighbor(**p));
        if forward { order.iter().find(alive).copied() } else { order.iter().rev().find(alive).copied() }
    }

    /// The ring to repair: ring algorithms on a logical ring over a complete graph, once somebody is dead.
    fn repaired_ring(&self, fixed: &Fixed) -> Option<RingPorts> {
        let repairable = fixed.ring_algorithm && !fixed.setup.ring_order.is_empty() && !self.dead.is_empty();
        fixed.setup.ring.filter(|_| repairable)
    }

    /// The port a message of the algorithm sent to `to` really leaves by (skipping dead ring neighbours).
    pub(super) fn outgoing(&self, fixed: &Fixed, to: Port) -> Port {
        match self.repaired_ring(fixed) {
            Some(ring) => {
                if to == ring.next {
                    self.live_neighbor(fixed, true).unwrap_or(to)
                } else if to == ring.prev {
                    self.live_neighbor(fixed, false).unwrap_or(to)
                } else {
                    to
                }
            }
            _ => to,
        }
    }

    /// The port the algorithm should see a message arriving on `from` as coming from.
    pub(super) fn incoming(&self, fixed: &Fixed, from: Port) -> Port {
        match self.repaired_ring(fixed) {
            Some(ring) => {
                if Some(from) == self.live_neighbor(fixed, false) {
                    ring.prev
                } else if Some(from) == self.live_neighbor(fixed, true) {
                    ring.next
                } else {
                    from
                }
            }
            _ => from,
        }
    }

    /// A ring message arrived on `from` and skipped the processes between its sender and this one: they are dead
    /// (as far as the sender knows). Returns the port the algorithm sees it arrive on: its ring neighbour's.
    fn arrived_round(&mut self, fixed: &Fixed, from: Port, forward: bool) -> Port {
        let order = &fixed.setup.ring_order;
        if let Some(i) = order.iter().position(|&p| p == from) {
            // Forward, the sender is this process's live predecessor, so those after it in ring order (between it
            // and this process) are dead; backward, those before it.
            let skipped = if forward { &order[i + 1..] } else { &order[..i] };
            self.dead.extend(skipped.iter().map(|&p| fixed.neighbor(p)));
        }
        let ring = fixed.setup.ring.expect("ring messages travel on rings");
        if forward { ring.prev } else { ring.next }
    }
}

/// Sends `msg`, a message of the algorithm of `epoch` (opened because `down` failed), to the next (or previous)
/// live process on the ring, tracked in `ring` until it is acknowledged, or back to this one if it is alone.
pub(super) fn send_round<A: Algorithm>(
    ring: &mut RingRepair<Msg<A>>,
    cx: &mut Cx<'_, Monitored<A>>,
    fixed: &Fixed,
    (epoch, down): (Epoch, Option<NodeId>),
    forward: bool,
    msg: Msg<A>,
) {
    let Some(port) = ring.live_neighbor(fixed, forward) else {
        ring.alone.push_back((forward, msg));
        return;
    };
    if ring.unacked.is_empty() {
        cx.set_timer(MonitorTimer::Hop, Span::exactly(fixed.hop_timeout));
    }
    let deadline = cx.now() + fixed.hop_timeout;
    ring.unacked.push_back(Unacked { port, deadline, forward, msg: msg.clone() });
    cx.send(port, MonitorMsg::Ring { epoch, down, forward, msg });
}

impl<A: Algorithm> Monitored<A> {
    /// A message of the algorithm of `epoch` (opened because `down` failed) arrived round the ring on `from`: it is
    /// acknowledged whatever its epoch, then handled as any message of the algorithm.
    pub(super) fn on_ring(
        &mut self,
        cx: &mut Cx<'_, Self>,
        from: Port,
        (epoch, down): (Epoch, Option<NodeId>),
        forward: bool,
        msg: Msg<A>,
    ) {
        cx.send(from, MonitorMsg::HopAck { epoch });
        cx.rule(rule::DELIVER);
        if self.named_down(epoch, down) {
            return self.disown(cx, epoch);
        }
        if !self.meet_epoch(cx, from, epoch, down) {
            return;
        }
        let from = self.ring.arrived_round(&self.fixed, from, forward);
        self.run(cx, Event::Message { from, msg });
    }

    /// An acknowledgement of a ring message of `epoch` arrived on `from`. Only the messages of this process's
    /// instance are tracked, including those it sent before it carried its leadership into a newer epoch.
    pub(super) fn on_hop_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch) {
        if epoch < self.instance || epoch > self.epoch {
            return;
        }
        cx.rule(rule::HOP_ACK);
        if let Some(i) = self.ring.unacked.iter().position(|u| u.port == from) {
            self.ring.unacked.remove(i);
            if i == 0 {
                self.rearm_hop(cx);
            }
        }
    }

    /// The oldest unacknowledged ring message is overdue: its receiver is dead. Whatever state it held for the
    /// election is lost with it, so (S001's recipe) the ring is repaired and a new run starts: a new epoch that
    /// names the dead process, so that everybody who joins skips it.
    pub(super) fn on_hop_timeout(&mut self, cx: &mut Cx<'_, Self>) {
        let now = cx.now();
        match self.ring.unacked.front().filter(|u| u.deadline <= now).map(|u| u.port) {
            Some(port) => {
                let dead = self.neighbor(port);
                self.ring.dead.insert(dead);
                self.start_after(cx, self.epoch, Some(dead));
                cx.rule(rule::SKIP_DEAD);
            }
            None => self.rearm_hop(cx),
        }
    }

    /// Arms the timer for the oldest unacknowledged ring message, or cancels it.
    fn rearm_hop(&self, cx: &mut Cx<'_, Self>) {
        match self.ring.unacked.front() {
            Some(u) => cx.set_timer(MonitorTimer::Hop, Span::exactly(u.deadline.saturating_since(cx.now()))),
            None => cx.cancel_timer(MonitorTimer::Hop),
        }
    }

    /// Hands the algorithm the ring messages it sent while every other process is dead.
    ///
    /// Handling one may send more; an election on a ring of one ends after a few. A message that would go round for
    /// ever (the token of a stronger process, forged or sent by one that died since) is dropped after
    /// [`ALONE_BUDGET`]: no handler call may run for ever. If no leader comes of the election, the stall timer starts
    /// the next epoch, with a fresh instance that holds no such message.
    pub(super) fn deliver_to_self(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(ring) = self.fixed.setup.ring else { return };
        let mut left = ALONE_BUDGET;
        while let Some((forward, msg)) = self.ring.alone.pop_front() {
            if left == 0 {
                self.ring.alone.clear();
                return cx.rule(rule::ROUND_FOREVER);
            }
            left -= 1;
            let from = if forward { ring.prev } else { ring.next };
            self.run_once(cx, Event::Message { from, msg });
        }
    }
}
