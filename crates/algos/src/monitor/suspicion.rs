//! Suspicion, staggered by rank. A follower that hears nothing from its leader for its suspicion time,
//! `timeout·T + k·stagger·T` with `k` the processes stronger than it other than that leader, suspects it: on a
//! complete graph of three or more it first asks the others (the pre-vote), elsewhere it deposes the leader at
//! once, opening a new epoch that names the leader as failed and telling everybody to join it. The strongest live
//! follower suspects first, and its `join` reaches every weaker one before their own suspicion time is up, so a
//! failure costs one epoch, won by the process that started it. A process without a leader waits one election
//! (the first timeout) before it gives up on the election and starts the next epoch.

use elect_core::{Cx, Duration, NodeId};

use super::messages::MonitorMsg;
use super::process::Monitored;
use super::rule;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Monitored<A> {
    /// How much longer than the timeout this process waits before it suspects its leader: `stagger` per process
    /// stronger than it, other than the leader it watches (see the module documentation).
    pub(super) fn stagger(&self) -> Duration {
        let leader = self.shown().leader;
        let me = self.fixed.setup.rank;
        let stronger = self.fixed.setup.neighbors.iter().filter(|n| n.rank > me && Some(n.id) != leader).count();
        self.fixed.stagger * stronger as u64
    }

    /// The suspicion time ran out without a heartbeat: the follower asks the others about its leader (a
    /// pre-vote), unless it cannot (not on a complete graph of three or more, or a pre-vote is under way), or it has
    /// no leader to ask about; then it deposes the leader at once.
    pub(super) fn on_watch(&mut self, cx: &mut Cx<'_, Self>) {
        self.watching = false;
        match self.shown().leader {
            Some(suspect) if self.fixed.pre_vote && suspect != self.fixed.setup.id && self.poll.is_none() => {
                self.ask_about(cx, suspect, 1, None);
            }
            suspect => self.depose(cx, suspect),
        }
    }

    /// This follower no longer hears its leader `suspect` (and, after a pre-vote, neither does a majority): it
    /// opens a new epoch naming the leader as failed, and tells everybody at once, so that they join it rather
    /// than suspect on their own.
    pub(super) fn depose(&mut self, cx: &mut Cx<'_, Self>, suspect: Option<NodeId>) {
        let Some(epoch) = self.epoch.next(self.fixed.setup.id) else { return };
        self.reserve(cx, epoch);
        self.announce(cx, &MonitorMsg::Join { epoch, down: suspect });
        self.start_epoch(cx, epoch, suspect);
        cx.rule(rule::DEPOSE);
    }

    /// No leader came out of this epoch's election within the first timeout (a candidate died in it): the process
    /// starts the next epoch.
    pub(super) fn on_stall(&mut self, cx: &mut Cx<'_, Self>) {
        self.waiting = false;
        self.start_after(cx, self.epoch, None);
        cx.rule(rule::STALL);
    }
}
