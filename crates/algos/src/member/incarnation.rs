//! Incarnations and stale packets. A member's incarnation is one more than the one its driver restores, and is
//! durable before its first packet; a packet of an older incarnation of its sender than one already heard was sent
//! before the sender restarted, and is dropped unread. A packet stamped with an older epoch than one this member
//! knows (a lower `seen`, or a grant below an epoch it has seen) is answered with an `announce` of its own `seen`
//! (and grant), once the instant's packets are all in ([`super::replies`]): a straggler catches up at once instead
//! of acting on what it missed.

use std::sync::Arc;

use elect_core::{Cx, Duration, Epoch, Event, NodeId, Span};

use super::packet::{Body, MemberTimer, Saved};
use super::process::{Durable, Member};
use super::rule;
use super::state::{Asking, Away, Leadership};
use super::voters::Membership;
use crate::algorithm::Algorithm;

impl<A: Algorithm> Member<A> {
    /// A new incarnation, durable before the first packet; `seen` and the algorithm's state as they were saved. A
    /// member that knows no epoch asks the others before anything else.
    pub(super) fn start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Saved<Durable<A>>>) {
        let saved = restored.unwrap_or(Saved { incarnation: 0, seen: Epoch::ZERO, inner: None, voters: None });
        // The driver restores at most a state file's incarnation or the time in milliseconds, far below the top.
        self.incarnation = saved.incarnation.saturating_add(1);
        self.seen = saved.seen;
        self.published = Leadership { leader: None, epoch: saved.seen };
        self.durable = saved.inner.clone();
        self.membership = Membership::new(saved.voters.map_or_else(|| self.fixed.voters.clone(), Arc::new));
        if !self.votes() && self.away == Away::Present {
            // A learner, or a member removed: it follows the voters' leader until a configuration adds it.
            self.away = Away::Outside;
        }
        self.persist(cx);
        self.start_lease(cx);
        if self.seen == Epoch::ZERO {
            // It knows no epoch: it asks, and grants nothing until the answers had time to come back.
            self.asking = Asking::Waiting;
            self.ask(cx);
        }
        if self.away == Away::Present && self.fixed.takeover_after > Duration::ZERO {
            // It follows the others for its takeover delay before it takes part (`rejoin` starts its algorithm).
            self.away = Away::Waiting;
            cx.set_timer(MemberTimer::Wake, Span::exactly(self.fixed.takeover_after));
        }
        if self.away == Away::Present {
            self.run(cx, Event::Start { restored: saved.inner });
        }
        self.decide(cx);
    }

    /// A packet of `incarnation` arrived from `peer`: whether its sender has restarted since it sent it (and it
    /// is dropped). Otherwise its incarnation is the latest heard from `peer`.
    pub(super) fn sent_before_a_restart(&mut self, cx: &mut Cx<'_, Self>, peer: NodeId, incarnation: u64) -> bool {
        match self.heard.get(&peer) {
            Some(&latest) if incarnation < latest => {
                cx.rule(rule::OLD_INCARNATION);
                true
            }
            Some(&latest) if incarnation == latest => false,
            _ => {
                self.heard.insert(peer, incarnation);
                false
            }
        }
    }

    /// The packets of this instant have all arrived: each sender that is behind this member (it leads under a
    /// grant older than an epoch this member knows, or, while this member takes part, it has seen less), or that
    /// must be answered anyway, is told what this member knows, once (see [`super::replies`]). A straggler catches
    /// up, a leader under an older grant makes itself a newer one, an asker hears one more member. A member
    /// sitting out corrects only a leader's stale grant. Nobody is told again what this member announced to all at
    /// this instant, if it knows nothing newer since.
    pub(super) fn answer(&mut self, cx: &mut Cx<'_, Self>) {
        cx.rule(rule::TELL);
        let (owed, announced) = self.replies.take();
        if announced == Some((self.seen, self.grant)) {
            return;
        }
        for (port, shown) in owed {
            let stale_lead = shown.lead.is_some_and(|lead| lead < self.seen);
            if stale_lead || (self.away == Away::Present && shown.seen < self.seen) || shown.answer {
                cx.send(port, self.packet(Body::Announce));
            }
        }
    }
}
