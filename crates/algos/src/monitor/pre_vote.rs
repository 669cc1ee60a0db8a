//! The pre-vote. On a complete graph of three processes or more, a follower that suspects its leader asks every
//! other process whether it still hears it before it opens a new epoch: one process that cannot hear a leader the
//! others hear (a bad link, a one-way fault) deposes nobody. A process vouches for the leader if it is that leader,
//! or follows it in that epoch and heard it within the quiet time. A majority that hears the leader keeps it (the
//! leader counts, since a process that heard it lately vouches that it is alive); so many noes that a majority can
//! no longer say yes depose it. Answers that do not all come within a round trip are asked for again, up to
//! [`PRE_VOTE_TRIES`] times, and the answers of every try add up. A follower kept [`KEPT`] times in a row with no
//! heartbeat since confirms a contrary pre-vote once, a heartbeat period later, before it deposes the leader.

use elect_core::{Cx, Epoch, NodeId, Port, Span};

use super::messages::{MonitorMsg, MonitorTimer};
use super::poll::{Count, KEPT, PRE_VOTE_TRIES, Poll};
use super::process::Monitored;
use super::rule;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Monitored<A> {
    /// This follower suspects its leader `suspect`: it asks every other process whether it still hears it (try
    /// `tries` of the pre-vote, keeping the answers of the tries before it), and waits a round trip for the answers.
    pub(super) fn ask_about(&mut self, cx: &mut Cx<'_, Self>, suspect: NodeId, tries: u8, before: Option<Poll>) {
        cx.rule(if tries == 1 { rule::ASK } else { rule::ASK_AGAIN });
        let (yes, no) = before.map_or_else(Default::default, |p| (p.yes, p.no));
        self.poll = Some(Poll { suspect, tries, yes, no });
        for n in &self.fixed.setup.neighbors {
            cx.send(n.port, MonitorMsg::PreVote { epoch: self.epoch, leader: suspect });
        }
        cx.set_timer(MonitorTimer::Poll, Span::exactly(self.fixed.hop_timeout));
    }

    /// A pre-vote of `epoch` about `leader` arrived on `from`: the answer is whether this process is that leader,
    /// or follows it in that epoch and heard it within the quiet time. A leader also beats at once to the asker,
    /// which may have lost its heartbeats.
    pub(super) fn on_pre_vote(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, leader: NodeId) {
        let me = leader == self.fixed.setup.id && self.beating;
        let hears = epoch == self.epoch && (me || (self.fresh && self.shown().leader == Some(leader)));
        cx.send(from, MonitorMsg::PreVoteReply { epoch, hears });
        if epoch < self.epoch || (me && epoch == self.epoch) {
            self.answer_stale(cx, from);
        }
        cx.rule(if hears { rule::VOUCH } else { rule::NO_VOUCH });
    }

    /// An answer to this process's pre-vote of `epoch` arrived on `from`. Once a majority of the processes (the
    /// leader's own answer counts) hear the leader, this one keeps following it, and asks again if it hears nothing
    /// for one more heartbeat period; once too few are left who could, it opens a new epoch.
    pub(super) fn on_pre_vote_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch, hears: bool) {
        cx.rule(rule::COUNT);
        let neighbors = &self.fixed.setup.neighbors;
        let Some(poll) = self.poll.as_mut().filter(|_| epoch == self.epoch) else { return };
        let suspect = neighbors.iter().find(|n| n.id == poll.suspect).map(|n| n.port);
        match poll.count(from, hears, neighbors.len(), suspect) {
            Count::Kept => {
                self.poll = None;
                cx.cancel_timer(MonitorTimer::Poll);
                self.kept = (self.kept + 1).min(KEPT);
                cx.rule(rule::KEEP);
                self.watching = true;
                cx.set_timer(MonitorTimer::Watch, Span::exactly(self.fixed.heartbeat));
            }
            Count::Deposed(suspect) => {
                self.poll = None;
                cx.cancel_timer(MonitorTimer::Poll);
                self.nobody_hears(cx, suspect);
            }
            Count::Open => {}
        }
    }

    /// A try of the pre-vote is over: it asks again while it has tries left; after the last, nobody vouches for the
    /// leader.
    pub(super) fn on_poll(&mut self, cx: &mut Cx<'_, Self>) {
        if let Some(poll) = self.poll.take() {
            if poll.tries < PRE_VOTE_TRIES {
                self.ask_about(cx, poll.suspect, poll.tries + 1, Some(poll));
            } else {
                self.nobody_hears(cx, poll.suspect);
            }
        }
    }

    /// A pre-vote found that no majority hears the leader `suspect`: this follower deposes it, unless the pre-votes
    /// before it found the contrary [`KEPT`] times in a row; then it asks once more, a heartbeat period later.
    fn nobody_hears(&mut self, cx: &mut Cx<'_, Self>, suspect: NodeId) {
        if std::mem::take(&mut self.kept) >= KEPT {
            cx.rule(rule::CONFIRM);
            self.watching = true;
            cx.set_timer(MonitorTimer::Watch, Span::exactly(self.fixed.heartbeat));
        } else {
            self.depose(cx, Some(suspect));
        }
    }
}
