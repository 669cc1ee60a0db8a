//! Leadership as applications see it, and the fencing epochs that number it.
//!
//! The algorithms' own epochs are not fencing tokens: the Invitation algorithm's group ids are unique but not
//! ordered in time, and a member restarted with an old state file may start over from a small number. So the
//! runtime derives its own **fencing epoch**, in the ballot format of [`elect_core::epoch`]
//! (`round << 32 | member id`):
//!
//! - Every member keeps `seen`, the highest fencing epoch it has heard of, on stable storage.
//! - When the algorithm has made a member leader (its status is `Normal` with itself as leader) and kept it so
//!   for the delay bound `T`, the member grants itself `epoch::next(seen, me)`: higher than anything it has heard of, and unique to it (its id is in the low
//!   bits; its own grants only grow, because `seen` is persisted before the grant is used or announced). The wait
//!   of `T` lets a concurrent election's announcement arrive first: after a leader fails, every member that
//!   noticed starts an epoch of its own, and for a moment each may lead its own (Bully's `election` goes only to
//!   stronger members, so the weaker epochs hear of the strongest one only from its `coordinator`).
//! - Every packet carries the sender's `seen` and, if it leads, its grant (`lead`); a new grant is announced to
//!   every member at once.
//! - A follower shows the leader its algorithm names, with that leader's grant, only once it has heard the grant
//!   and the grant is the highest epoch it knows; otherwise it shows no leader (keeping the last epoch) and tells
//!   the leader the higher epoch it knows.
//! - A leader that hears of an epoch higher than its grant (it was granted by a member that had been away and had
//!   not heard of the latest epoch yet) stops leading and grants itself a new epoch above it.
//! - While the algorithm has two leaders at once (a member back from a crash or a pause has not yet been told of
//!   the newer leader), the newer grant wins: a leader that hears another member *claim* a higher grant stops
//!   leading, and a member the algorithm makes leader grants itself nothing while another member's claim is live.
//!   A claim is live until its claimer has been silent for the leader monitor's suspicion time, `(heartbeat +
//!   2)·T`, or says it no longer leads. So two leaders never outbid each other in a loop: the incumbent keeps
//!   its grant until the algorithm settles.
//!
//! So the `(leader, epoch)` a member publishes never goes backwards, even across restarts, two grants never share
//! an epoch, and every grant is higher than every grant its member heard of before.

use std::collections::BTreeMap;

use elect_core::{Duration, Instant, NodeId, epoch};

/// The leader a member follows (or is) and the fencing epoch of that leadership grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leadership {
    /// The leader, or `None` while there is none this member can vouch for (an election, a leader whose grant
    /// it has not heard yet).
    pub leader: Option<NodeId>,
    /// The fencing epoch of the leader's grant; with no leader, that of the last leader this member knew (after a
    /// restart: the highest epoch it had seen; 0 if none). It never goes backwards.
    pub epoch: u64,
}

/// A change of leadership, in order. `StartedLeading` and `StoppedLeading` strictly alternate, starting with
/// `StartedLeading`, and a `StoppedLeading` names the epoch its `StartedLeading` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeaderEvent {
    /// This member became leader under fencing epoch `epoch`.
    StartedLeading {
        /// The fencing epoch of the grant.
        epoch: u64,
    },
    /// This member stopped leading under `epoch`: from now on, writes fenced with it must be refused.
    StoppedLeading {
        /// The fencing epoch of the grant that ended.
        epoch: u64,
    },
    /// The published [`Leadership`] changed (for leaders too, after their `StartedLeading`).
    LeaderChanged(Leadership),
}

/// What [`Fencing::decide`] asks the runtime to do, in order: persist `seen` if it grew, then hand out the events,
/// announce a new grant, and publish the leadership.
#[derive(Debug, Default)]
pub(crate) struct Decision {
    pub(crate) events: Vec<LeaderEvent>,
    /// A new grant to announce to every member.
    pub(crate) announce: bool,
    /// A grant was held back by a live claim: decide again at this time, when it expires.
    pub(crate) recheck: Option<Instant>,
}

/// One member's fencing state.
#[derive(Debug)]
pub(crate) struct Fencing {
    me: NodeId,
    seen: u64,
    grant: Option<u64>,
    /// The latest grant each member claimed in its packets, and when.
    claims: BTreeMap<NodeId, (u64, Instant)>,
    /// How long a claim stays live after its claimer's last packet.
    ttl: Duration,
    /// How long the algorithm must keep this member leader before it grants itself an epoch.
    settle: Duration,
    /// Since when the algorithm has named this member leader.
    leading_since: Option<Instant>,
    published: Leadership,
}

impl Fencing {
    /// Member `me`, which has seen fencing epochs up to `seen` (from its state file); claims stay live for `ttl`,
    /// and the algorithm must keep this member leader for `settle` before it grants.
    pub(crate) fn new(me: NodeId, seen: u64, ttl: Duration, settle: Duration) -> Self {
        let published = Leadership { leader: None, epoch: seen };
        Self { me, seen, grant: None, claims: BTreeMap::new(), ttl, settle, leading_since: None, published }
    }

    /// The highest fencing epoch heard of or granted.
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    /// This member's current grant, if it leads.
    pub(crate) fn grant(&self) -> Option<u64> {
        self.grant
    }

    /// What this member publishes.
    pub(crate) fn published(&self) -> Leadership {
        self.published
    }

    /// A packet from `from` said it has seen `seen` and leads under `lead`. Returns whether the sender leads under
    /// an epoch older than one this member knows (the runtime then tells it).
    pub(crate) fn heard(&mut self, from: NodeId, seen: u64, lead: Option<u64>, now: Instant) -> bool {
        match lead {
            Some(claim) => self.claims.insert(from, (claim, now)),
            None => self.claims.remove(&from),
        };
        self.seen = self.seen.max(seen).max(lead.unwrap_or(0));
        lead.is_some_and(|claim| claim < self.seen)
    }

    /// The algorithm now names `view` as leader (`None` during an election, or while this member sits out):
    /// grants, ends grants, and works out what to publish.
    pub(crate) fn decide(&mut self, view: Option<NodeId>, now: Instant) -> Decision {
        let mut decision = Decision::default();
        let leads = view == Some(self.me);
        let ttl = self.ttl;
        let rival = self
            .claims
            .iter()
            .filter(|&(&id, &(_, at))| id != self.me && now.saturating_since(at) <= ttl)
            .map(|(_, &(claim, _))| claim)
            .max();
        // A grant made over a stale epoch is replaced at once, whatever lower claims there are.
        let mut floor = 0;
        if let Some(g) = self.grant {
            let superseded = rival.is_some_and(|r| r > g);
            if !leads || superseded || g < self.seen {
                self.grant = None;
                decision.events.push(LeaderEvent::StoppedLeading { epoch: g });
                if leads && !superseded {
                    floor = g;
                }
            }
        }
        self.leading_since = if leads { Some(self.leading_since.unwrap_or(now)) } else { None };
        let settled_at = self.leading_since.map(|t| t + self.settle);
        if leads && self.grant.is_none() && rival.is_some_and(|r| r >= floor) {
            let live = self.claims.iter().filter(|&(&id, &(_, at))| id != self.me && now.saturating_since(at) <= ttl);
            decision.recheck = live.map(|(_, &(_, at))| at + ttl + Duration::TICK).max();
        } else if leads && self.grant.is_none() && settled_at.is_some_and(|t| t > now) {
            decision.recheck = settled_at;
        } else if leads && self.grant.is_none() {
            let g = epoch::next(self.seen, self.me);
            self.seen = g;
            self.grant = Some(g);
            decision.events.push(LeaderEvent::StartedLeading { epoch: g });
            decision.announce = true;
        }
        let shown = match (view, self.grant) {
            (_, Some(g)) => Leadership { leader: Some(self.me), epoch: g },
            (Some(l), None) => match self.claims.get(&l) {
                Some(&(claim, _)) if l != self.me && claim >= self.seen => Leadership { leader: Some(l), epoch: claim },
                _ => Leadership { leader: None, epoch: self.published.epoch },
            },
            (None, None) => Leadership { leader: None, epoch: self.published.epoch },
        };
        if shown != self.published {
            debug_assert!(shown.epoch >= self.published.epoch, "published epochs never go backwards");
            self.published = shown;
            decision.events.push(LeaderEvent::LeaderChanged(shown));
        }
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: NodeId = NodeId(1);
    const B: NodeId = NodeId(2);
    const C: NodeId = NodeId(3);
    const NOW: Instant = Instant::ZERO;
    const TTL: Duration = Duration::from_ticks(100);

    fn starts(d: &Decision) -> Vec<u64> {
        d.events
            .iter()
            .filter_map(|e| if let LeaderEvent::StartedLeading { epoch } = e { Some(*epoch) } else { None })
            .collect()
    }

    #[test]
    fn a_leader_grants_itself_an_epoch_above_all_it_has_seen() {
        let mut f = Fencing::new(C, epoch::next(4 << 32, A), TTL, Duration::ZERO);
        let d = f.decide(Some(C), NOW);
        assert_eq!(starts(&d), [epoch::next(5 << 32, C)]);
        assert!(d.announce);
        assert_eq!(f.published(), Leadership { leader: Some(C), epoch: 6 << 32 | 3 });
        // Still leading: nothing new.
        assert!(f.decide(Some(C), NOW).events.is_empty());
        let d = f.decide(None, NOW);
        assert_eq!(
            d.events,
            [
                LeaderEvent::StoppedLeading { epoch: 6 << 32 | 3 },
                LeaderEvent::LeaderChanged(Leadership { leader: None, epoch: 6 << 32 | 3 })
            ]
        );
    }

    #[test]
    fn a_follower_vouches_only_for_the_newest_grant_and_corrects_older_ones() {
        let mut f = Fencing::new(A, 0, TTL, Duration::ZERO);
        // The algorithm names B before B's grant arrived: no leader yet.
        assert_eq!(f.decide(Some(B), NOW).events, []);
        assert!(!f.heard(B, 1 << 32 | 2, Some(1 << 32 | 2), NOW));
        assert_eq!(
            f.decide(Some(B), NOW).events,
            [LeaderEvent::LeaderChanged(Leadership { leader: Some(B), epoch: 1 << 32 | 2 })]
        );
        // C has seen a newer epoch: B's grant is stale, and B must hear of it.
        assert!(!f.heard(C, 3 << 32 | 1, None, NOW));
        assert!(f.heard(B, 1 << 32 | 2, Some(1 << 32 | 2), NOW));
        let d = f.decide(Some(B), NOW);
        assert_eq!(d.events, [LeaderEvent::LeaderChanged(Leadership { leader: None, epoch: 1 << 32 | 2 })]);
        f.heard(B, 4 << 32 | 2, Some(4 << 32 | 2), NOW);
        assert_eq!(
            f.decide(Some(B), NOW).events,
            [LeaderEvent::LeaderChanged(Leadership { leader: Some(B), epoch: 4 << 32 | 2 })]
        );
    }

    #[test]
    fn a_superseded_leader_stops_and_grants_itself_a_newer_epoch() {
        let mut f = Fencing::new(B, 0, TTL, Duration::ZERO);
        assert_eq!(starts(&f.decide(Some(B), NOW)), [1 << 32 | 2]);
        f.heard(A, 7 << 32 | 3, None, NOW);
        let d = f.decide(Some(B), NOW);
        assert_eq!(d.events[0], LeaderEvent::StoppedLeading { epoch: 1 << 32 | 2 });
        assert_eq!(starts(&d), [8 << 32 | 2]);
    }

    #[test]
    fn two_leaders_do_not_outbid_each_other_and_a_live_rival_keeps_its_grant() {
        // C leads under 6.3; B comes back from a crash, the algorithm makes it leader before it heard of C.
        let mut b = Fencing::new(B, 1 << 32 | 2, TTL, Duration::ZERO);
        assert_eq!(starts(&b.decide(Some(B), NOW)), [2 << 32 | 2]);
        // B hears C claim a higher grant: B stops and grants nothing while C's claim is live.
        b.heard(C, 6 << 32 | 3, Some(6 << 32 | 3), NOW);
        let d = b.decide(Some(B), NOW);
        assert_eq!(d.events[0], LeaderEvent::StoppedLeading { epoch: 2 << 32 | 2 });
        assert!(starts(&d).is_empty() && b.grant().is_none());
        assert!(b.decide(Some(B), Instant::from_ticks(100)).events.is_empty(), "still live at the TTL");
        // C stops claiming (it follows B now): B grants itself an epoch above C's.
        b.heard(C, 6 << 32 | 3, None, Instant::from_ticks(50));
        assert_eq!(starts(&b.decide(Some(B), Instant::from_ticks(50))), [7 << 32 | 2]);

        // C, meanwhile, hears B's old, lower claim: it keeps its grant (and tells B of its epoch).
        let mut c = Fencing::new(C, 0, TTL, Duration::ZERO);
        assert_eq!(starts(&c.decide(Some(C), NOW)), [1 << 32 | 3]);
        assert!(c.heard(B, 1 << 32 | 2, Some(1 << 32 | 2), NOW));
        assert!(c.decide(Some(C), NOW).events.is_empty());
    }

    #[test]
    fn a_silent_rivals_claim_expires() {
        let mut b = Fencing::new(B, 0, TTL, Duration::ZERO);
        b.heard(C, 6 << 32 | 3, Some(6 << 32 | 3), NOW);
        let d = b.decide(Some(B), Instant::from_ticks(100));
        assert!(starts(&d).is_empty());
        assert_eq!(d.recheck, Some(Instant::from_ticks(101)));
        assert_eq!(starts(&b.decide(Some(B), Instant::from_ticks(101))), [7 << 32 | 2]);
    }

    #[test]
    fn a_member_grants_only_once_the_algorithm_kept_it_leader_for_the_settling_time() {
        let mut f = Fencing::new(A, 0, TTL, Duration::from_ticks(10));
        let d = f.decide(Some(A), NOW);
        assert!(starts(&d).is_empty());
        assert_eq!(d.recheck, Some(Instant::from_ticks(10)));
        // It led for a moment only (another epoch's coordinator arrived): nothing granted, the wait starts over.
        assert!(f.decide(None, Instant::from_ticks(5)).events.is_empty());
        assert!(starts(&f.decide(Some(A), Instant::from_ticks(12))).is_empty());
        assert_eq!(starts(&f.decide(Some(A), Instant::from_ticks(22))), [1 << 32 | 1]);
    }
}
