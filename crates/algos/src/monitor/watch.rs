//! Heartbeats. A process's role follows what its instance of the algorithm says ([`Monitored::sync`]): the leader
//! sends a heartbeat every heartbeat period, a follower watches for its leader's, and a process without a leader
//! watches the election instead (the stall timer). Heartbeats go straight to every process on a complete graph
//! (always numbered 1, so that a leader's state comes back to what it was after each beat), round the ring on a
//! ring, and are flooded elsewhere (numbered, so that each is passed on once). A heartbeat of the current epoch
//! keeps the follower watching; on a complete graph it also settles two leaders of one epoch, and lets a process
//! whose election ended without it follow the epoch's leader.

use elect_core::{Cx, Epoch, NodeId, Port, Process, Shape, Span, State, Status};

use super::messages::{MonitorMsg, MonitorTimer};
use super::process::{Monitored, Msg};
use super::rule;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Monitored<A> {
    /// Whether the algorithm's instance names this process leader.
    pub(super) fn leads(&self) -> bool {
        let s = self.inner().status();
        s.state == State::Normal && s.leader == Some(self.fixed.setup.id)
    }

    /// The algorithm's status, or, while this process follows a leader it adopted and the algorithm names no other
    /// one, that leader's (the algorithm may be bringing it into the leader's group meanwhile: Garcia-Molina's
    /// coordinator halts and appoints it, and it follows that leader throughout).
    pub(super) fn shown(&self) -> Status {
        let inner = self.inner().status();
        match self.adopted {
            Some(leader) if inner.leader.is_none_or(|l| l == leader) => {
                Status { state: State::Normal, leader: Some(leader), ..inner }
            }
            _ => inner,
        }
    }

    /// Starts heartbeats when this process leads, watches its leader when it follows one, and watches the
    /// election when it has no leader.
    pub(super) fn sync(&mut self, cx: &mut Cx<'_, Self>) {
        let follows = self.shown().leader.is_some();
        // Without a leader the process waits for the election to end; if it does not within the first timeout (a
        // candidate died in it), it starts another.
        if !follows && !self.waiting {
            self.waiting = true;
            cx.set_timer(MonitorTimer::Stall, Span::exactly(self.fixed.first_timeout));
        } else if follows && self.waiting {
            self.waiting = false;
            cx.cancel_timer(MonitorTimer::Stall);
        }
        if self.leads() {
            if !self.beating {
                self.start_beating(cx);
            }
        } else {
            if self.beating {
                self.beating = false;
                cx.cancel_timer(MonitorTimer::Beat);
            }
            if follows && !self.watching {
                self.watching = true;
                let wait = if self.seq == 0 { self.fixed.first_timeout } else { self.fixed.timeout };
                cx.set_timer(MonitorTimer::Watch, Span::exactly(wait + self.stagger()));
            } else if !follows && self.watching {
                self.watching = false;
                cx.cancel_timer(MonitorTimer::Watch);
            }
        }
    }

    /// This process became leader: a pre-vote it held is over, it watches nobody, and it beats at once.
    fn start_beating(&mut self, cx: &mut Cx<'_, Self>) {
        if self.poll.take().is_some() {
            cx.cancel_timer(MonitorTimer::Poll);
        }
        self.beating = true;
        self.watching = false;
        cx.cancel_timer(MonitorTimer::Watch);
        self.beat(cx);
    }

    /// Sends `msg` from the leader to everybody: to every neighbour, or round the ring.
    pub(super) fn announce(&self, cx: &mut Cx<'_, Self>, msg: &MonitorMsg<Msg<A>>) {
        let setup = &self.fixed.setup;
        match setup.shape {
            Shape::Ring => cx.send(setup.ring.map_or(Port(0), |r| r.next), msg.clone()),
            _ => {
                for n in &setup.neighbors {
                    cx.send(n.port, msg.clone());
                }
            }
        }
    }

    /// Passes on a leader's announcement that arrived on `from`: round the ring, or flooded (on a complete graph
    /// everybody got it from the leader).
    pub(super) fn relay(&self, cx: &mut Cx<'_, Self>, from: Port, msg: &MonitorMsg<Msg<A>>) {
        let setup = &self.fixed.setup;
        match setup.shape {
            Shape::Complete => {}
            Shape::Ring => cx.send(setup.ring.map_or(from, |r| r.next), msg.clone()),
            Shape::Other | Shape::Mobile => {
                for n in setup.neighbors.iter().filter(|n| n.port != from) {
                    cx.send(n.port, msg.clone());
                }
            }
        }
    }

    /// Whether heartbeats are passed on from process to process (and so numbered, to pass each on once). On a
    /// complete graph each comes straight from the leader and carries the number 1: a leader's state then comes
    /// back to what it was after every beat, so a checker sees periodic behaviour close into a cycle.
    pub(super) fn relayed(&self) -> bool {
        self.fixed.setup.shape != Shape::Complete
    }

    /// Sends the next heartbeat and arms the one after.
    pub(super) fn beat(&mut self, cx: &mut Cx<'_, Self>) {
        self.seq = if self.relayed() { self.seq.saturating_add(1) } else { 1 };
        self.announce(cx, &MonitorMsg::Heartbeat { epoch: self.epoch, seq: self.seq, down: self.down });
        cx.set_timer(MonitorTimer::Beat, Span::exactly(self.fixed.heartbeat));
        cx.rule(rule::BEAT);
    }

    /// A heartbeat of `epoch`, numbered `seq`, arrived on `from`. A newer epoch's is a matter of epochs
    /// ([`Self::on_newer_heartbeat`]), an older one's is stale; one of this epoch is the leader's, alive.
    pub(super) fn on_heartbeat(
        &mut self,
        cx: &mut Cx<'_, Self>,
        from: Port,
        epoch: Epoch,
        seq: u64,
        down: Option<NodeId>,
    ) {
        if epoch > self.epoch {
            return self.on_newer_heartbeat(cx, from, epoch, down);
        }
        if epoch < self.epoch {
            return self.answer_stale(cx, from); // A leader cut off (or paused) that does not know it was replaced.
        }
        if self.leads() && !self.relayed() && !self.fixed.deaf_leaders {
            // Another process leads this epoch too: a timing fault (a one-way link, a partition that healed) let
            // two processes elect themselves in one epoch, each deaf to the other's election. Neither would ever
            // give way (each takes the other's heartbeats for its own epoch's), so this one starts the next epoch,
            // which everybody joins: its election has one winner.
            self.start_after(cx, self.epoch, None);
            return cx.rule(rule::TWO_LEADERS);
        }
        if self.leads() || (self.relayed() && seq <= self.seq) {
            return cx.rule(rule::SEEN); // Our own heartbeat back, or one already seen.
        }
        let sender = self.fixed.setup.neighbors[from.index()];
        if !self.relayed() && self.shown().leader.is_none() && sender.rank > self.fixed.setup.rank {
            // The election of this epoch ended without this process (what would have told it was lost): it
            // follows the epoch's leader instead of stalling into a new election.
            self.follow(cx, from, seq);
            return cx.rule(rule::FOLLOW);
        }
        cx.rule(rule::ALIVE);
        self.seq = seq;
        if self.shown().leader == Some(sender.id) {
            self.heard_leader(cx);
        }
        if self.watching {
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.fixed.timeout + self.stagger()));
        }
        self.relay(cx, from, &MonitorMsg::Heartbeat { epoch, seq, down });
    }

    /// Follows the leader at `from`, whose heartbeat `seq` it heard, in this process's epoch.
    pub(super) fn follow(&mut self, cx: &mut Cx<'_, Self>, from: Port, seq: u64) {
        self.adopted = Some(self.neighbor(from));
        self.seq = seq;
        self.heard_leader(cx);
        self.sync(cx);
    }

    /// A heartbeat of the leader this process follows arrived: it vouches that it hears the leader for the quiet
    /// time, and a pre-vote about the leader is over (it watches the leader again).
    pub(super) fn heard_leader(&mut self, cx: &mut Cx<'_, Self>) {
        self.fresh = true;
        self.kept = 0;
        cx.set_timer(MonitorTimer::Quiet, Span::exactly(self.fixed.quiet));
        if self.poll.take().is_some() {
            cx.cancel_timer(MonitorTimer::Poll);
            self.watching = true;
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.fixed.timeout + self.stagger()));
        }
    }

    /// No heartbeat for the quiet time: this follower no longer vouches that it hears its leader.
    pub(super) fn on_quiet(&mut self, cx: &mut Cx<'_, Self>) {
        self.fresh = false;
        cx.rule(rule::QUIET);
    }
}
