//! Resigning, leaving and handing over. A leader that resigns ends its grant, tells everybody it is leaving (a
//! member whose leader leaves elects again at once, without waiting to suspect it) and sits out for the resign hold;
//! then it takes part again with a fresh instance of its algorithm, restarted from its durable state as after a
//! crash. A member that leaves does the same for good. A member that does not lead has nothing to give up. While it
//! sits out, its algorithm hears nothing; the member still corrects a stale grant, answers questions, and shows the
//! newest live claim. A member that must never lead (`--no-lead`) sits out in the same way for its whole life, from
//! its start, without telling anyone: to the others it is a member that never answers in an election. A member with a
//! takeover delay sits out the same way for that long after each start, then takes part as after a resign hold.
//!
//! A leader asked to hand leadership over to member `X` tells everybody (`transfer`), then resigns. `X` starts an
//! election; every member that its algorithm would put before `X` (a higher rank), the old leader included, stands
//! aside: it sits out so that `X` wins. A member standing aside takes part again when `X`, having taken over,
//! stops leading (its claim lapses), or at the deadline (the resign hold after the transfer) if `X` has not taken
//! over by then: the fallback is an ordinary election. A transfer is heard only from the leader of the newest epoch
//! a member knows.

use elect_core::{Command, Cx, Duration, Epoch, Event, NodeId, Span};

use super::packet::{Body, MemberTimer};
use super::process::Member;
use super::state::Away;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Member<A> {
    /// Asked to resign: a leader that takes part tells its algorithm, and sits out for the resign hold.
    pub(super) fn resign(&mut self, cx: &mut Cx<'_, Self>) {
        if self.grant.is_some() && self.away == Away::Present {
            self.run(cx, Event::Command(Command::Resign));
            self.sit_out(cx, Some(self.fixed.resign_hold));
        }
    }

    /// Asked to leave: a leader tells its algorithm to resign, and the member sits out for good.
    pub(super) fn leave(&mut self, cx: &mut Cx<'_, Self>) {
        if self.away != Away::Left {
            if self.grant.is_some() {
                self.run(cx, Event::Command(Command::Resign));
            }
            self.sit_out(cx, None);
        }
    }

    /// Asked to hand leadership over to member `to`: a leader that takes part tells everybody (while its grant still
    /// vouches for the request), then resigns and stands aside like the members that would outrank `to`. Naming
    /// itself, or no member, does nothing.
    pub(super) fn transfer(&mut self, cx: &mut Cx<'_, Self>, to: NodeId) {
        let named = self.rank_of(to).is_some();
        let Some(grant) = self.grant else { return };
        if self.away == Away::Present && named {
            self.broadcast(cx, Body::Transfer { to });
            self.run(cx, Event::Command(Command::Resign));
            self.stand_aside(cx, to, grant);
        }
    }

    /// The leader of epoch `lead` hands leadership over to `to`. Heard only from the leader of the
    /// newest epoch this member knows: `to` starts an election, a member that would outrank it stands aside, and
    /// the others follow the election `to` starts. A member standing aside for an earlier transfer (the leader
    /// that hands over now took over then) does the same: it stands aside for `to` instead, or takes part again.
    pub(super) fn on_transfer(&mut self, cx: &mut Cx<'_, Self>, lead: Option<Epoch>, to: NodeId) {
        let Some(lead) = lead.filter(|&lead| lead >= self.seen) else { return };
        let aside = matches!(self.away, Away::Aside { .. });
        if !aside && self.away != Away::Present {
            return;
        }
        if self.outranks(to) {
            if self.leading {
                self.run(cx, Event::Command(Command::Resign));
            }
            self.stand_aside(cx, to, lead);
        } else if aside {
            // Back with a fresh instance, which initiates: the member named wins that election too.
            self.rejoin(cx);
        } else if to == self.fixed.setup.id {
            self.run(cx, Event::Command(Command::Initiate));
        }
    }

    /// Stands aside for a transfer to `to` from the leader of epoch `from`, until the deadline at least.
    fn stand_aside(&mut self, cx: &mut Cx<'_, Self>, to: NodeId, from: Epoch) {
        let led = self.leading;
        self.away = Away::Aside { to, from, due: false };
        cx.set_timer(MemberTimer::Wake, Span::exactly(self.fixed.resign_hold));
        self.give_up_lease(cx);
        self.decide(cx);
        if led {
            self.broadcast(cx, Body::Leaving);
        }
    }

    /// A transfer's deadline came: a member standing aside goes on standing aside while the member it stands aside
    /// for leads under an epoch above the one handed over, and takes part again otherwise.
    pub(super) fn transfer_due(&mut self, cx: &mut Cx<'_, Self>) {
        if let Away::Aside { to, from, .. } = self.away {
            if self.took_over(to, from) {
                self.away = Away::Aside { to, from, due: true };
            } else {
                self.rejoin(cx);
            }
        }
    }

    /// Whether a member standing aside past the deadline should take part again: the member it stood aside for has
    /// stopped leading. Then it does.
    pub(super) fn end_aside(&mut self, cx: &mut Cx<'_, Self>) -> bool {
        let over = matches!(self.away, Away::Aside { to, from, due: true } if !self.took_over(to, from));
        if over {
            self.rejoin(cx);
        }
        over
    }

    /// Whether member `to` holds a live claim above epoch `from`.
    fn took_over(&self, to: NodeId, from: Epoch) -> bool {
        self.claims.get(&to).is_some_and(|&(claim, live)| live && claim > from)
    }

    /// Whether the algorithm ranks this member above member `peer`.
    fn outranks(&self, peer: NodeId) -> bool {
        self.rank_of(peer).is_some_and(|rank| rank < self.fixed.setup.rank)
    }

    /// Stops taking part in elections: until the resign hold is over (`hold`), or for good.
    fn sit_out(&mut self, cx: &mut Cx<'_, Self>, hold: Option<Duration>) {
        match hold {
            Some(hold) => {
                self.away = Away::Resigned;
                cx.set_timer(MemberTimer::Wake, Span::exactly(hold));
            }
            None => {
                self.away = Away::Left;
                cx.cancel_timer(MemberTimer::Wake);
            }
        }
        self.give_up_lease(cx);
        self.decide(cx);
        self.broadcast(cx, Body::Leaving);
    }

    /// No longer a voter: a leader gives its grant up and tells the others it leaves; the member sits out until a
    /// configuration makes it a voter again.
    pub(super) fn step_out(&mut self, cx: &mut Cx<'_, Self>) {
        let led = self.leading;
        if self.grant.is_some() {
            self.run(cx, Event::Command(Command::Resign));
        }
        self.away = Away::Outside;
        cx.cancel_timer(MemberTimer::Wake);
        self.give_up_lease(cx);
        self.decide(cx);
        if led {
            self.broadcast(cx, Body::Leaving);
        }
    }

    /// Back from sitting out: a fresh instance of the algorithm, restarted from its durable state as after a
    /// crash, which initiates.
    pub(super) fn rejoin(&mut self, cx: &mut Cx<'_, Self>) {
        self.away = Away::Present;
        self.life += 1;
        self.inner.rebuild(&self.fixed.setup.setup());
        self.run(cx, Event::Start { restored: self.durable.clone() });
        self.run(cx, Event::Command(Command::Initiate));
        self.decide(cx);
    }
}
