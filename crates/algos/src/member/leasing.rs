//! A member's steps in the lease mode (see [`super::lease`]): seeking, renewing and losing its own lease, backing
//! other members' rounds under its promise, and keeping its algorithm silent once its lease lapsed.

use std::collections::BTreeSet;

use elect_core::{Cx, Epoch, NodeId, Port, Process, Span};

use super::config::Bug;
use super::lease::{Promise, Slot, Standing};
use super::packet::{Body, MemberTimer};
use super::process::Member;
use super::rule;
use super::state::Away;
use super::voters::ConfigId;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Member<A> {
    /// Whether the algorithm must say nothing: the member's lease lapsed (unless the planted flaw `lapsed-leader`
    /// lets it speak on).
    pub(super) fn silenced(&self) -> bool {
        self.lease.lapsed() && self.fixed.bug != Some(Bug::LapsedLeader)
    }

    /// Whether this member may lead: without leases, always; with them, while it holds one.
    pub(super) fn leased(&self) -> bool {
        self.fixed.lease.is_none() || self.lease.held()
    }

    /// The timer whose end ends this member's lease, while it holds one: a runtime tells applications when that
    /// is.
    pub fn lease_timer(&self) -> Option<MemberTimer<<A::Process as elect_core::Process>::Timer>> {
        self.lease.last_held().map(MemberTimer::Hold)
    }

    /// A member that starts backs nobody until a promise it may have made before it stopped has run out.
    pub(super) fn start_lease(&mut self, cx: &mut Cx<'_, Self>) {
        if let Some(timing) = self.fixed.lease {
            self.lease.promise = Promise::Starting;
            cx.set_timer(MemberTimer::Promise, timing.span(timing.promise));
        }
    }

    /// Whether this member seeks a lease (`seeks`: the algorithm has kept it leader for the settling wait), and
    /// `epoch`, the algorithm's epoch: a member that starts to seek one asks at once, for the fresh grace; one named
    /// leader in another epoch than the one it last sought a lease in starts afresh, unless it holds one; one that
    /// no longer seeks stops asking.
    pub(super) fn lease_follows(&mut self, cx: &mut Cx<'_, Self>, seeks: bool, epoch: Epoch) {
        let Some(timing) = self.fixed.lease else { return };
        let standing = self.lease.standing;
        if !seeks {
            if standing != Standing::Idle {
                self.lease.standing = Standing::Idle;
                cx.cancel_timer(MemberTimer::Grace);
            }
            if self.lease.renewing {
                self.lease.renewing = false;
                cx.cancel_timer(MemberTimer::Renew);
            }
            return;
        }
        let anew = standing == Standing::Idle || (epoch != self.lease.sought_in && standing != Standing::Holding);
        self.lease.sought_in = epoch;
        if anew {
            self.lease.standing = Standing::Seeking;
            cx.set_timer(MemberTimer::Grace, Span::exactly(timing.fresh_grace));
            if !self.lease.renewing {
                self.renew(cx);
            }
        }
    }

    /// Follows what the rounds' holds say: a member that seeks a lease and got one holds it; one that held it and
    /// lost it (its last backed round ran out) says nothing more, asks again at once and every `T`, for the lapsed
    /// grace.
    fn reckon(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(timing) = self.fixed.lease else { return };
        match (self.lease.standing, self.lease.held()) {
            (Standing::Seeking | Standing::Lapsed | Standing::Quiet, true) => {
                self.lease.standing = Standing::Holding;
                cx.cancel_timer(MemberTimer::Grace);
            }
            (Standing::Holding, false) => {
                self.lease.standing = Standing::Lapsed;
                cx.set_timer(MemberTimer::Grace, Span::exactly(timing.lapsed_grace));
                self.renew(cx);
            }
            _ => {}
        }
    }

    /// The grace ran out with no lease held: the member goes quiet (see [`super::lease`]), unless the planted flaw
    /// `lapsed-leader` keeps it asking, and its algorithm speaking, as if nothing had happened. A quiet member tries
    /// again, as a new leader, a promise time later: two leaders that went quiet on the two sides of a partition
    /// would otherwise never hear of each other once it heals.
    pub(super) fn on_grace(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(timing) = self.fixed.lease else { return };
        match self.lease.standing {
            Standing::Seeking | Standing::Lapsed if self.fixed.bug != Some(Bug::LapsedLeader) => {
                cx.rule(rule::QUIET);
                self.lease.standing = Standing::Quiet;
                cx.set_timer(MemberTimer::Grace, Span::exactly(timing.promise));
                if self.lease.renewing {
                    self.lease.renewing = false;
                    cx.cancel_timer(MemberTimer::Renew);
                }
            }
            Standing::Quiet => {
                cx.rule(rule::TRY_AGAIN);
                self.lease.standing = Standing::Seeking;
                cx.set_timer(MemberTimer::Grace, Span::exactly(timing.fresh_grace));
                self.renew(cx);
            }
            _ => cx.rule(rule::QUIET),
        }
    }

    /// What the member's view shows of its own lease, in the lease mode.
    pub(super) fn lease_standing(&self) -> Option<&'static str> {
        self.fixed.lease.map(|_| self.lease.standing.name())
    }

    /// Sends the next round, backs it itself if its promise lets it, and arms the next: a heartbeat period later
    /// while it holds a lease, `T` while it seeks one.
    pub(super) fn renew(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(timing) = self.fixed.lease else { return };
        let Some(round) = self.lease.round.checked_add(1) else {
            // 2⁶⁴ rounds: no fresh number is left, and a reused one could be taken for an answer to the new round.
            self.lease.renewing = false;
            return;
        };
        self.lease.round = round;
        let index = (round % timing.slots) as usize;
        // The round it replaces, if it still ran, gives up its hold early: the lease may only end sooner.
        self.lease.slots[index] = Slot { round, running: true, held: false, backers: BTreeSet::new() };
        cx.set_timer(MemberTimer::Hold(index as u8), timing.span(timing.hold));
        let me = self.fixed.setup.id;
        if self.promise_to(cx, me) {
            self.backed(round, me);
            // A majority of one: a member alone holds the lease it backs itself.
            if self.lease.held() && self.lease.standing != Standing::Holding {
                self.lease.standing = Standing::Holding;
                cx.cancel_timer(MemberTimer::Grace);
            }
        }
        self.broadcast(cx, Body::Lease { round });
        let next = if self.lease.held() { timing.renew } else { timing.retry };
        self.lease.renewing = true;
        cx.set_timer(MemberTimer::Renew, Span::exactly(next));
    }

    /// The renewal timer: while the algorithm still names this member leader, the next round.
    pub(super) fn on_renew(&mut self, cx: &mut Cx<'_, Self>) {
        cx.rule(rule::RENEW);
        self.lease.renewing = false;
        if self.leading && self.settled && self.lease.standing != Standing::Quiet {
            self.renew(cx);
        }
    }

    /// Member `peer` asks to be backed in `round`: backed, if this member's promise lets it and its algorithm names
    /// no other leader. (A leader that went quiet on its own side of a fault, and asks again, does not take the
    /// backing of a member that follows the leader the others elected since, while that one seeks its lease.) A
    /// member that sits out (standing aside for a transfer, resigned, waiting) hears nothing of its algorithm's
    /// elections: what its algorithm names is stale, and it backs anyone its promise lets it.
    /// A member whose voting configuration is newer than the asker's (`config`) does not back it: the asker
    /// counts its majority among voters that may have changed.
    pub(super) fn on_lease(&mut self, cx: &mut Cx<'_, Self>, from: Port, round: u64, config: ConfigId) {
        let peer = self.peer(from);
        if config < self.membership.voters.id {
            return;
        }
        let other = self.away == Away::Present
            && self.inner().status().leader.is_some_and(|leader| leader != peer)
            && self.fixed.bug != Some(Bug::LapsedLeader);
        if self.fixed.lease.is_some() && !other && self.promise_to(cx, peer) {
            cx.send(from, self.packet(Body::LeaseAck { round }));
        }
    }

    /// Member `peer` backed `round`.
    pub(super) fn on_lease_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, round: u64) {
        let peer = self.peer(from);
        self.backed(round, peer);
        self.reckon(cx);
    }

    /// `by` backed `round`: if it is one of the rounds whose hold still runs, a majority of backers makes it hold.
    fn backed(&mut self, round: u64, by: NodeId) {
        let Some(timing) = self.fixed.lease else { return };
        let slot = &mut self.lease.slots[(round % timing.slots) as usize];
        if slot.round == round && slot.running {
            slot.backers.insert(by);
            // A majority of the voters of the configuration it holds (itself among them, as it backs itself).
            slot.held |= self.membership.voters.is_majority(&slot.backers);
        }
    }

    /// Promises to back `peer` (perhaps itself) and nobody else for the promise time from now, if the promise it
    /// made last lets it: whether it did.
    fn promise_to(&mut self, cx: &mut Cx<'_, Self>, peer: NodeId) -> bool {
        let Some(timing) = self.fixed.lease else { return false };
        match self.lease.promise {
            Promise::Free => {}
            Promise::To(other) if other == peer => {}
            Promise::To(_) | Promise::Starting => return false,
        }
        self.lease.promise = Promise::To(peer);
        cx.set_timer(MemberTimer::Promise, timing.span(timing.promise));
        true
    }

    /// The hold of the round in `slot` ran out: it no longer holds a lease.
    pub(super) fn on_hold(&mut self, cx: &mut Cx<'_, Self>, slot: u8) {
        cx.rule(rule::HOLD);
        if let Some(s) = self.lease.slots.get_mut(usize::from(slot)) {
            s.running = false;
            s.held = false;
        }
        self.reckon(cx);
    }

    /// The promise ran out: this member may back anyone.
    pub(super) fn on_promise(&mut self, cx: &mut Cx<'_, Self>) {
        cx.rule(rule::PROMISE);
        self.lease.promise = Promise::Free;
    }

    /// A member that sits out gives its lease up at once (its grant has ended), and asks for none.
    pub(super) fn give_up_lease(&mut self, cx: &mut Cx<'_, Self>) {
        for (i, slot) in self.lease.slots.iter_mut().enumerate() {
            if slot.running {
                (slot.running, slot.held) = (false, false);
                cx.cancel_timer(MemberTimer::Hold(i as u8));
            }
        }
        self.lease_follows(cx, false, Epoch::ZERO);
    }
}
