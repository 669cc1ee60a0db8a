//! Carrying leadership over. When an election could only elect the leader there is again, none is held: the
//! leader moves into a newer epoch with its instance of the algorithm and beats at once, and its followers follow
//! it there, keeping theirs. This happens on a complete graph, where a heartbeat says whose it is, when a stronger
//! leader hears a weaker leader's heartbeat of a newer epoch (a straggler that led a side of a partition), and when
//! a live leader hears of an epoch that names it as failed (a follower missed its heartbeats). A process that an
//! epoch names as failed takes no part in that epoch, since its election need not wait for it: a leader carries its
//! leadership above the epoch, any other process starts the epoch after it.

use elect_core::{Cx, Epoch, NodeId, Notice, Port, Span};

use super::messages::MonitorTimer;
use super::process::Monitored;
use super::rule;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Monitored<A> {
    /// Carries this process's leadership (or its following of a leader) into `epoch` without an election: the
    /// algorithm's instance stays, only the epoch its messages carry changes.
    fn renumber(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        self.forget_leader(cx);
        self.reserve(cx, epoch);
        self.catching_up = false;
        self.epoch = epoch;
        self.down = down;
    }

    /// This leader heard the heartbeat of `epoch`, newer than its own, from a weaker leader (a straggler that led a
    /// side of a partition, or a process that elected itself while it could not hear this one). An election would
    /// elect this process again (the straggler won its side, this one is stronger), so it holds none: it carries
    /// its leadership into the epoch after `epoch` and beats at once, and every process that hears it follows it
    /// there (the straggler and its followers adopt it, its own followers carry on with it).
    fn restamp(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        let Some(next) = epoch.next(self.fixed.setup.id) else { return };
        self.renumber(cx, next, None);
        cx.notify(Notice::Elected { epoch: self.epoch });
        self.beat(cx);
    }

    /// Whether a message of `epoch`, started because `down` failed, names this process, alive, as the one that
    /// failed: a follower suspected it (a lost heartbeat or two). On a complete graph the process takes no part in
    /// that epoch ([`Self::disown`]): its election need not wait for the suspect ([`elect_core::Setup::suspected`]),
    /// so the suspect must not elect itself in it too. (With ring repair, a process taken for dead rejoins the ring
    /// instead, unless it leads.)
    pub(super) fn named_down(&self, epoch: Epoch, down: Option<NodeId>) -> bool {
        epoch > self.epoch && down == Some(self.fixed.setup.id) && !self.relayed() && (self.beating || !self.fixed.hops)
    }

    /// This process, alive, heard of `epoch`, opened because it was taken for failed ([`Self::named_down`]). A
    /// leader carries its leadership above the epoch ([`Self::restamp`]): an election in it would elect this
    /// process again, and everybody who joined the epoch follows it there (on a complete graph its heartbeats say
    /// whose they are). Any other process starts the epoch after it, which everybody joins.
    pub(super) fn disown(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if self.beating {
            self.restamp(cx, epoch)
        } else {
            self.catch_up(cx, epoch)
        }
        cx.rule(rule::DISOWN);
    }

    /// A heartbeat of `epoch`, newer than this process's, arrived on `from`. The world moved on while this process
    /// was away (or the epoch it started lost to a newer one), or a straggler that led on its own came back.
    pub(super) fn on_newer_heartbeat(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, down: Option<NodeId>) {
        if self.named_down(epoch, down) && !self.beating {
            // Taken for failed in that epoch, whose elections need not wait for it: following its leader there, its
            // instance could later elect it in that epoch too (Garcia-Molina's own timeouts run elections). It opens
            // the next epoch instead.
            return self.catch_up(cx, epoch);
        }
        if !self.relayed() {
            // On a complete graph the heartbeat comes from the leader of `epoch` itself.
            let sender = self.fixed.setup.neighbors[from.index()];
            let me = self.fixed.setup.rank;
            let leader = self.shown().leader;
            if leader == Some(sender.id) && sender.rank > me && !self.beating {
                return self.follow_renumbered(cx, epoch, down);
            }
            if self.beating && sender.rank < me {
                self.restamp(cx, epoch);
                return cx.rule(rule::RESTAMP);
            }
            if self.watching && leader.and_then(|l| self.fixed.rank_of(l)).is_some_and(|l| l > sender.rank) {
                // It follows a live leader stronger than the sender: that leader carries its leadership above the
                // sender's epoch when the two hear each other, and this process follows it then.
                return cx.rule(rule::STRONGER_LEADER);
            }
            if sender.rank > me {
                // That epoch's election is over, and its leader would win again: follow it without an election.
                return self.adopt(cx, epoch, down, from);
            }
        }
        // Otherwise start the next epoch rather than run an election inside a decided one (two leaders would then
        // share it).
        self.catch_up(cx, epoch);
    }

    /// The leader this process follows carried its leadership into `epoch`, newer than this process's: it follows
    /// it there, and has just heard it.
    fn follow_renumbered(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, down: Option<NodeId>) {
        self.renumber(cx, epoch, down);
        cx.rule(rule::RENUMBER);
        self.seq = 1;
        self.heard_leader(cx);
        if self.watching {
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.fixed.timeout + self.stagger()));
        }
    }
}
