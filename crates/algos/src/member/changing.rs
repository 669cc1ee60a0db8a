//! A member's steps in changing the voters (see [`super::voters`]): a leader confirms its configuration with a
//! majority, commits the new one and counts its holders; every member takes a newer configuration from the leader of
//! the newest epoch it knows, and sits out while it does not vote.

use std::collections::BTreeSet;
use std::sync::Arc;

use elect_core::{Cx, Epoch, Port, Span};

use super::config::Bug;
use super::packet::{Body, MemberTimer};
use super::process::Member;
use super::rule;
use super::state::Away;
use super::voters::{CHANGE_TRIES, ChangeReport, ChangeState, Changing, ConfigId, VoterChange, Voters};
use crate::algorithm::Algorithm;

impl<A: Algorithm> Member<A> {
    /// The voting configuration this member holds: the newest it knows.
    pub fn voters(&self) -> &Voters {
        &self.membership.voters
    }

    /// The latest change of the voters asked of this member, and how it stands.
    pub fn change_report(&self) -> Option<ChangeReport> {
        self.membership.report
    }

    /// The change of the voters this member, a leader, is making, if any.
    pub fn changing(&self) -> Option<VoterChange> {
        self.membership.changing.as_ref().map(|c| c.change)
    }

    /// Whether this member votes in the configuration it holds.
    pub(super) fn votes(&self) -> bool {
        self.membership.voters.contains(self.fixed.setup.id)
    }

    /// Whether this member, with the members it heard from, is a majority of the voters.
    pub(super) fn heard_majority(&self) -> bool {
        let me = self.fixed.setup.id;
        self.membership.voters.is_majority(self.heard.keys().chain(std::iter::once(&me)))
    }

    /// Asked to change the voters: a leader starts the change (see [`super::voters`]); anything else is refused, and
    /// the reason reported.
    pub(super) fn change_voters(&mut self, cx: &mut Cx<'_, Self>, change: VoterChange) {
        if let Err(reason) = self.may_change(change) {
            self.membership.report = Some(ChangeReport { change, state: ChangeState::Refused(reason) });
            return;
        }
        cx.rule(rule::CHANGE);
        let me = self.fixed.setup.id;
        let target = Voters::clone(&self.membership.voters);
        self.membership.changing =
            Some(Changing { change, target, committing: false, holders: BTreeSet::from([me]), tries: 0 });
        self.membership.report = Some(ChangeReport { change, state: ChangeState::Running });
        self.send_change(cx);
        self.progress(cx);
    }

    /// Why this member may not start `change` now, if it may not.
    fn may_change(&self, change: VoterChange) -> Result<(), &'static str> {
        let voters = &self.membership.voters;
        if self.grant.is_none() || self.away != Away::Present {
            return Err("only the leader changes the voters: ask it (GET /leader names it)");
        }
        if self.membership.changing.is_some() {
            return Err("a change of the voters is in progress: one member at a time");
        }
        match change {
            VoterChange::Add(id) if self.rank_of(id).is_none() => {
                Err("not in the roster: every member must list it among its peers")
            }
            VoterChange::Add(id) if voters.contains(id) => Err("already a voter"),
            VoterChange::Add(id) if !self.heard.contains_key(&id) => {
                Err("never heard from: start it (as a learner) before adding it")
            }
            VoterChange::Remove(id) if !voters.contains(id) => Err("not a voter"),
            VoterChange::Remove(id) if id == self.fixed.setup.id => {
                Err("the leader cannot remove itself: hand leadership over first (POST /transfer)")
            }
            _ => Ok(()),
        }
    }

    /// Sends the change's configuration to every member that does not hold it yet, and waits a round trip.
    fn send_change(&self, cx: &mut Cx<'_, Self>) {
        let Some(changing) = &self.membership.changing else { return };
        for n in &self.fixed.setup.neighbors {
            if !changing.holders.contains(&n.id) {
                cx.send(n.port, self.packet(Body::Config { voters: changing.target.clone() }));
            }
        }
        cx.set_timer(MemberTimer::Change, Span::exactly(self.fixed.ask));
    }

    /// A step of the change has its majority: confirmed, it commits the new configuration; committed, it is done.
    fn progress(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(changing) = &self.membership.changing else { return };
        let added = match changing.change {
            VoterChange::Add(id) => changing.holders.contains(&id),
            VoterChange::Remove(_) => true,
        };
        // Confirming, the holders must also be a majority of the voters the change makes: a change that would
        // leave no majority that answers (one voter of two removed while the other is down) is given up before it
        // takes effect.
        let new_voters_answer = changing.committing
            || changing.target.with(changing.change, changing.target.id).is_majority(&changing.holders);
        let hasty = self.fixed.bug == Some(Bug::HastyChange);
        if !hasty && (!added || !new_voters_answer || !changing.target.is_majority(&changing.holders)) {
            return;
        }
        if changing.committing {
            let id = changing.target.id;
            return self.end_change(cx, ChangeState::Done(id));
        }
        let next = self.grant.and_then(|grant| changing.target.id.next(grant));
        let Some(id) = next else {
            return self.end_change(cx, ChangeState::Failed("no configuration number is left under this grant"));
        };
        let target = changing.target.with(changing.change, id);
        let me = self.fixed.setup.id;
        let change = changing.change;
        self.membership.voters = Arc::new(target.clone());
        self.membership.newest_heard = self.membership.newest_heard.max(id);
        self.membership.changing =
            Some(Changing { change, target, committing: true, holders: BTreeSet::from([me]), tries: 0 });
        self.persist(cx);
        self.send_change(cx);
        self.progress(cx);
    }

    /// The change is over, as `state` says.
    fn end_change(&mut self, cx: &mut Cx<'_, Self>, state: ChangeState) {
        if let Some(changing) = self.membership.changing.take() {
            cx.cancel_timer(MemberTimer::Change);
            self.membership.report = Some(ChangeReport { change: changing.change, state });
        }
    }

    /// A round trip of the change went by short of a majority: the configuration goes again to those that do not
    /// hold it, up to [`CHANGE_TRIES`] round trips a step.
    pub(super) fn on_change_due(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(changing) = &mut self.membership.changing else { return };
        cx.rule(rule::CHANGE_AGAIN);
        changing.tries += 1;
        if changing.tries >= CHANGE_TRIES {
            self.end_change(cx, ChangeState::Failed("no majority of the voters answered within five round trips"));
        } else {
            self.send_change(cx);
        }
    }

    /// A leader whose grant ended before it could commit gives its change up. Once committing, it goes on counting
    /// the holders of the new configuration, which it already made: a member added may well take leadership over
    /// (Bully's strongest does) before its answer comes.
    pub(super) fn change_needs_a_leader(&mut self, cx: &mut Cx<'_, Self>) {
        if self.grant.is_none() && self.membership.changing.as_ref().is_some_and(|c| !c.committing) {
            self.end_change(cx, ChangeState::Failed("leadership ended before the change was committed"));
        }
    }

    /// The member at `from`, which leads under `lead`, holds `voters`: taken if newer and sent by the leader of the
    /// newest epoch this member knows (or to a leader, by anybody); answered with a `config-ack` when that leader
    /// sent it and this member now holds it, with this member's own configuration when it is older.
    pub(super) fn on_config(&mut self, cx: &mut Cx<'_, Self>, from: Port, lead: Option<Epoch>, voters: Voters) {
        let newest = lead.is_some_and(|lead| lead >= self.seen);
        let mine = self.membership.voters.id;
        self.membership.newest_heard = self.membership.newest_heard.max(voters.id);
        if voters.id < mine {
            cx.send(from, self.packet(Body::Config { voters: Voters::clone(&self.membership.voters) }));
            return;
        }
        let adopted = voters.id > mine && (newest || self.grant.is_some());
        if adopted {
            self.adopt(cx, voters);
        }
        let id = self.membership.voters.id;
        if newest && self.membership.newest_heard <= id {
            cx.send(from, self.packet(Body::ConfigAck { id }));
        }
        // Answered first: a member added starts an election it may win at once.
        if adopted {
            self.place(cx);
        }
    }

    /// The member at `from` holds configuration `id`: one more holder, if it is the one the change waits for.
    pub(super) fn on_config_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, id: ConfigId) {
        let peer = self.peer(from);
        if let Some(changing) = &mut self.membership.changing
            && changing.target.id == id
        {
            changing.holders.insert(peer);
            self.progress(cx);
        }
    }

    /// A packet from the member at `from` said it holds configuration `theirs`: noted; if it is older than this
    /// member's and either end leads the newest epoch this member knows (`newest`: the sender does), the sender is
    /// sent this member's configuration. Whether it was.
    pub(super) fn compare_configs(&mut self, cx: &mut Cx<'_, Self>, from: Port, theirs: ConfigId, newest: bool) {
        self.membership.newest_heard = self.membership.newest_heard.max(theirs);
        if theirs < self.membership.voters.id && (newest || self.grant.is_some()) {
            cx.send(from, self.packet(Body::Config { voters: Voters::clone(&self.membership.voters) }));
        }
    }

    /// Takes `voters`, newer than the configuration it held: durable at once; a leader changing the voters gives
    /// its change up. (Then [`Member::place`].)
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, voters: Voters) {
        self.membership.voters = Arc::new(voters);
        self.end_change(cx, ChangeState::Failed("a newer configuration of the voters was found: ask again"));
        self.persist(cx);
    }

    /// Sits out while this member does not vote, and takes part again once it does.
    pub(super) fn place(&mut self, cx: &mut Cx<'_, Self>) {
        match (self.votes(), self.away) {
            (false, Away::Present | Away::Resigned | Away::Waiting | Away::Aside { .. }) => self.step_out(cx),
            (true, Away::Outside) => self.rejoin(cx),
            _ => {}
        }
    }
}
