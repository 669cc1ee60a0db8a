//! What ring repair knows and decides: the processes believed dead, the ring messages not yet acknowledged, and
//! which live process a ring message goes to. The monitor's steps that use it are in `ring.rs`.

use std::collections::{BTreeSet, VecDeque};

use elect_core::{Instant, NodeId, Port, RingPorts};

use super::config::Fixed;

/// A ring message waiting for its acknowledgement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Unacked<M> {
    /// The port it left by.
    pub(super) port: Port,
    /// When it is overdue.
    pub(super) deadline: Instant,
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
    pub(super) alone: VecDeque<(bool, M)>,
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
    pub(super) fn arrived_round(&mut self, fixed: &Fixed, from: Port, forward: bool) -> Port {
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

    /// Files `msg`, a ring message going `forward` (or backward) at `now`, as sent to the nearest live process that
    /// way, tracked until it is acknowledged: returns the port it leaves by, and whether it is the only one
    /// unacknowledged (so the hop timer must be armed). `None` if every other process is dead: it is kept for this
    /// process itself (see `deliver_to_self`).
    pub(super) fn route(&mut self, fixed: &Fixed, now: Instant, forward: bool, msg: &M) -> Option<(Port, bool)> {
        let Some(port) = self.live_neighbor(fixed, forward) else {
            self.alone.push_back((forward, msg.clone()));
            return None;
        };
        let first = self.unacked.is_empty();
        self.unacked.push_back(Unacked { port, deadline: now + fixed.hop_timeout, forward, msg: msg.clone() });
        Some((port, first))
    }
}
