//! Fencing epochs and grants. A member that its algorithm names leader, and keeps leader for the settling wait,
//! grants itself a fencing epoch above every epoch it has seen, makes the grown `seen` durable, and announces the
//! grant; no two grants share an epoch. A grant ends when the algorithm stops naming the member, when a stronger
//! member's live claim is above it, or when the member hears of a newer epoch (then it is replaced at once). Only
//! the live claims of stronger members hold a grant back: the algorithm elects the strongest live member, so of two
//! leaders the stronger keeps (or takes) the grant. A member shows the leader whose grant it can vouch for, the
//! newest it knows, and the epochs it shows never go backwards. Every step ends in [`Member::decide`], which reads
//! the algorithm's view and tells, in order: the durable `seen`, the ended grant, the new one, what it shows, and
//! the new grant's announcement.

use elect_core::{Cx, Duration, Epoch, NodeId, Notice, Port, Process, Span, State};

use super::config::Bug;
use super::packet::{Body, MemberTimer};
use super::process::Member;
use super::state::{Asking, Away, Leadership};
use crate::algorithm::Algorithm;

impl<A: Algorithm> Member<A> {
    /// A packet from `port` said its sender has seen `seen` and leads under `lead`: the claim is noted (and lives
    /// for the claim's life), and `seen` grows.
    pub(super) fn hear(&mut self, cx: &mut Cx<'_, Self>, port: Port, seen: Epoch, lead: Option<Epoch>) {
        let peer = self.peer(port);
        match lead {
            Some(claim) => {
                self.claims.insert(peer, (claim, true));
                cx.set_timer(MemberTimer::Claim(port), Span::exactly(self.fixed.claim_ttl + Duration::TICK));
            }
            None => {
                if self.claims.remove(&peer).is_some() {
                    cx.cancel_timer(MemberTimer::Claim(port));
                }
            }
        }
        self.seen = self.seen.max(seen).max(lead.unwrap_or(Epoch::ZERO));
    }

    /// The claim of the member at `port` was not renewed within its life: it no longer holds this member back.
    pub(super) fn claim_expired(&mut self, port: Port) {
        let peer = self.peer(port);
        if let Some((_, live)) = self.claims.get_mut(&peer) {
            *live = false;
        }
    }

    /// Reads the algorithm's view of the leader and decides: grants, ends grants, and works out what to show. A
    /// grown `seen` is durable before anything is told; then the notices, then a new grant's announcement.
    pub(super) fn decide(&mut self, cx: &mut Cx<'_, Self>) {
        let view = self.named_leader();
        let leads = view == Some(self.fixed.setup.id);
        let rival = self.rival();
        let (ended, floor) = self.end_grant(leads, rival);
        self.track_leading(cx, leads);
        self.count_answers();
        let answered = self.asking == Asking::Answered;
        // A live rival's claim holds a grant back until it expires (its timer decides again); so does the
        // settling wait.
        let may_grant = leads
            && self.grant.is_none()
            && self.settled
            && answered
            && self.leased()
            && rival.is_none_or(|r| r < floor);
        let granted = if may_grant { self.grant_epoch() } else { None };
        let shown = self.shown(view);
        self.tell(cx, ended, granted, shown);
        self.change_needs_a_leader(cx);
    }

    /// The leader the algorithm names, while this member takes part and the algorithm's election is over.
    fn named_leader(&self) -> Option<NodeId> {
        let status = self.inner().status();
        match status.state {
            State::Normal if self.away == Away::Present => status.leader,
            _ => None,
        }
    }

    /// The highest live claim of a member stronger than this one. Only those hold this member back: the algorithm
    /// elects the strongest live member, so while it has two leaders the stronger one keeps (or takes) the grant,
    /// and a weaker claim is outbid (it is above `seen`, so a grant below it is replaced at once, as any stale grant
    /// is).
    fn rival(&self) -> Option<Epoch> {
        self.claims
            .iter()
            .filter(|&(&peer, &(_, live))| live && self.stronger(peer))
            .map(|(_, &(claim, _))| claim)
            .max()
    }

    /// Ends the grant if the member no longer leads, a stronger member's live claim is above it, or it is older
    /// than an epoch the member has seen. Returns the grant ended, and the floor a live rival's claim must stay
    /// below for the member to grant itself a new epoch at once: the stale grant replaced, if it still leads and
    /// nobody outbid it (whatever lower claims there are).
    fn end_grant(&mut self, leads: bool, rival: Option<Epoch>) -> (Option<Epoch>, Epoch) {
        let Some(g) = self.grant else { return (None, Epoch::ZERO) };
        let superseded = rival.is_some_and(|r| r > g);
        if !leads || superseded || g < self.seen || !self.leased() {
            self.grant = None;
            let floor = if leads && !superseded { g } else { Epoch::ZERO };
            (Some(g), floor)
        } else {
            (None, Epoch::ZERO)
        }
    }

    /// Follows whether the algorithm names this member leader: the settling wait starts when it does, and ends
    /// when it stops.
    fn track_leading(&mut self, cx: &mut Cx<'_, Self>, leads: bool) {
        if leads != self.leading {
            self.leading = leads;
            self.settled = leads && self.fixed.settle == Duration::ZERO;
            if !leads {
                cx.cancel_timer(MemberTimer::Settle);
            } else if !self.settled {
                cx.set_timer(MemberTimer::Settle, Span::exactly(self.fixed.settle));
            }
        }
        // In the lease mode it asks for a lease once the algorithm has kept it leader for the settling wait: a
        // member named leader for a moment (a concurrent election's loser) does not promise itself its own backing.
        let epoch = self.inner().status().epoch;
        self.lease_follows(cx, leads && self.settled, epoch);
    }

    /// A new grant, the epoch after every epoch this member has seen. Past the last round there is no epoch to
    /// grant (valid epochs leave 2³¹ rounds above them; see `elect_core::epoch`): the member leads nobody rather
    /// than reuse one.
    fn grant_epoch(&mut self) -> Option<Epoch> {
        let g = match self.fixed.bug {
            Some(Bug::SameEpoch) if self.seen > Epoch::ZERO => Some(self.seen),
            _ => self.seen.next(self.fixed.setup.id),
        }?;
        self.seen = self.seen.max(g);
        self.grant = Some(g);
        Some(g)
    }

    /// The leadership to show, with `view` the leader the algorithm names: its own grant; the named leader's
    /// claim, if it is the newest epoch this member knows; while sitting out, the newest live claim; otherwise no
    /// leader, under the last epoch shown.
    fn shown(&self, view: Option<NodeId>) -> Leadership {
        let me = self.fixed.setup.id;
        let none = Leadership { leader: None, epoch: self.published.epoch };
        match (view, self.grant) {
            (_, Some(g)) => Leadership { leader: Some(me), epoch: g },
            (Some(l), None) => match self.claims.get(&l) {
                Some(&(claim, _)) if l != me && claim >= self.seen => Leadership { leader: Some(l), epoch: claim },
                _ => none,
            },
            // A member sitting out follows the newest live claim: it takes no part, but it knows who leads.
            (None, None) if self.away != Away::Present => self
                .claims
                .iter()
                .filter(|&(_, &(claim, live))| live && claim >= self.seen)
                .max_by_key(|&(_, &(claim, _))| claim)
                .map_or(none, |(&l, &(claim, _))| Leadership { leader: Some(l), epoch: claim }),
            (None, None) => none,
        }
    }

    /// Tells what `decide` decided, in order: a grown `seen` is durable first, then the grant `ended`, the grant
    /// `granted`, the leadership `shown` if it changed, and last the new grant's announcement.
    fn tell(&mut self, cx: &mut Cx<'_, Self>, ended: Option<Epoch>, granted: Option<Epoch>, shown: Leadership) {
        // The planted flaw forget-epoch leaves a new grant to be made durable later, with whatever comes next.
        let forget = self.fixed.bug == Some(Bug::ForgetEpoch) && granted.is_some();
        if self.seen > self.saved_seen && !forget {
            self.persist(cx);
        }
        if let Some(epoch) = ended {
            cx.notify(Notice::Ended { epoch });
        }
        if let Some(epoch) = granted {
            cx.notify(Notice::Elected { epoch });
        }
        if shown != self.published {
            debug_assert!(shown.epoch >= self.published.epoch, "shown epochs never go backwards");
            self.published = shown;
            cx.notify(Notice::Shows { leader: shown.leader, epoch: shown.epoch });
        }
        if granted.is_some() {
            self.broadcast(cx, Body::Announce);
            self.replies.announced(self.seen, self.grant);
        }
    }
}
