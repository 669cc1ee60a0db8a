//! Ring repair (S000, S001). On a logical ring over a complete graph, every message of the algorithm sent round the
//! ring goes to the nearest live process in that direction, as `ring{epoch, forward, msg}`, and its receiver
//! acknowledges it (`hop-ack`). A message not acknowledged within a round trip went to a dead process: the sender
//! marks it dead and starts a new epoch naming it, so that everybody who joins skips it. The receiver of a message
//! that skipped processes marks them dead too, and the algorithm sees every message arrive from its ring
//! neighbour. A process that takes every other for dead hands its ring messages back to itself, a bounded number
//! per step.

use elect_core::{Cx, Epoch, Event, NodeId, Port, Span};

use super::messages::{MonitorMsg, MonitorTimer};
use super::process::{Monitored, Msg};
use super::rule;
use crate::algorithm::Algorithm;

/// The most ring messages a process that takes every other for dead hands to itself in one step (see
/// `deliver_to_self`): an honest election on a ring of one sends a handful.
const ALONE_BUDGET: u32 = 256;

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
