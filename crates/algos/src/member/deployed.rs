//! The deployed process as an [`Algorithm`]: [`Deployed`] builds members, and says what a member promises and
//! how long it takes. A member's grants are unique to one epoch at every moment (P-Unique on its grants); once a
//! run has settled, the algorithm's own end-of-run properties hold and, for single-leader algorithms, every live
//! member shows one live leader. Closed-form bounds of one election leave out the member's own packets (and the
//! leader monitor's).

use elect_core::{Check, Duration, InT, NodeId, Property, Setup, Shape, When, Winner};

use super::config::{Fixed, MemberConfig};
use super::packet::{MEMBER_AND_MONITOR_KINDS, MEMBER_KINDS};
use super::process::Member;
use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Measure};
use crate::params::{ParamError, Params};

/// The algorithm a member runs, wrapped in everything a member decides besides (see the module documentation).
#[derive(Clone, Debug)]
pub struct Deployed<A> {
    /// The algorithm (the leader monitor around a single-leader algorithm, or the Invitation algorithm).
    pub inner: A,
    /// The member's timing.
    pub config: MemberConfig,
}

impl<A: Algorithm> Deployed<A> {
    /// `inner`, run as a member with `config`'s timing.
    pub fn new(inner: A, config: MemberConfig) -> Self {
        Self { inner, config }
    }
}

impl<A> Deployed<A> {
    /// In the lease mode, the longest a member may wait for the others' promises to another leader to run out (and
    /// then for its next round): a promise (as long as a drifting clock may make it), and `T`.
    fn lease_wait(&self, t: Duration) -> Option<Duration> {
        let lease = self.config.lease?;
        let timing = super::lease::LeaseTiming::new(&lease, self.config.heartbeat, t);
        Some(timing.span(timing.promise).max + t)
    }

    /// In the lease mode, how long a leader that no majority backs any more may go on speaking before it goes
    /// quiet (and the leader monitor's suspicion starts): its lease's hold and the lapsed grace, or a new leader's
    /// fresh grace, whichever is longer; and how long a quiet leader may then say nothing (a promise time), which
    /// delays the meeting of two quiet leaders when a partition heals.
    fn lease_quiet(&self, t: Duration) -> Option<Duration> {
        let lease = self.config.lease?;
        let timing = super::lease::LeaseTiming::new(&lease, self.config.heartbeat, t);
        let (hold, promise) = (timing.span(timing.hold).max, timing.span(timing.promise).max);
        Some((hold + timing.lapsed_grace).max(timing.fresh_grace) + promise)
    }
}

impl<A: Algorithm> Algorithm for Deployed<A> {
    type Process = Member<A>;
    const INFO: &'static Info = A::INFO;
    const INFO_AT_RUN_TIME: bool = A::INFO_AT_RUN_TIME;

    fn info(&self) -> &'static Info {
        self.inner.info()
    }

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(A::from_params(params)?, MemberConfig::new(InT(2), Duration::ZERO)))
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        self.inner.validate(ids)
    }

    fn build(&self, setup: &Setup<'_>) -> Member<A> {
        debug_assert!(setup.shape == Shape::Complete, "members form a full mesh; drivers check it");
        Member::new(self.inner.clone(), Fixed::new(&self.config, setup))
    }

    /// What a member promises: fencing epochs unique to one grant (P-Unique on the member's grants) always, and
    /// once the run has settled, the algorithm's own end-of-run properties and, for single-leader algorithms, every
    /// live member showing one live leader. In the lease mode, one leader at a time always, and for single-leader
    /// algorithms, once the run has settled, a leader among every majority that can talk (`majority-leader`).
    fn checks(&self) -> Vec<Check> {
        let mut checks = vec![Check::always(Property::Uniqueness), Check::always(Property::FreshEpoch)];
        if self.config.lease.is_some() {
            checks.push(Check::always(Property::OneLeader));
            if self.inner.info().elects == Elects::OneLeader {
                checks.push(Check::at_end(Property::MajorityLeader));
            }
        }
        checks.extend(self.inner.checks().into_iter().filter(|c| c.when == When::AtEnd));
        if self.inner.info().elects == Elects::OneLeader {
            for property in [Property::Agreement, Property::LiveLeader] {
                if !checks.contains(&Check::at_end(property)) {
                    checks.push(Check::at_end(property));
                }
            }
        }
        checks
    }

    fn winner(&self) -> Winner {
        self.inner.winner()
    }

    /// One election, then the settling wait before the grant (no earlier than the end of a first start's
    /// question, a round trip) and the grant's announcement.
    /// In the lease mode, no earlier than a round trip after the promises members make at their start ran out.
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        let grant = (self.inner.election_time(facts, t) + t * self.config.settle).max(t * 2 + Duration::TICK);
        let leased = self.lease_wait(t).map_or(Duration::ZERO, |wait| wait + t * 2 + Duration::TICK);
        grant.max(leased) + t
    }

    /// The algorithm's settling time, then a rival's claim may live out its life, then the settling wait and the
    /// grant's announcement. In the lease mode, the leader monitor starts to suspect a leader that no majority backs
    /// only once it has gone quiet, and the new leader may wait for the promises to it to run out.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        let inner = self.inner.settle_time(facts, delay_bound)?;
        let quiet = self.lease_quiet(t).unwrap_or(Duration::ZERO);
        let leased = self.lease_wait(t).map_or(Duration::ZERO, |wait| quiet + wait + t * 3);
        Some(inner + t * (self.config.claim_ttl + self.config.settle + 2) + leased + Duration::TICK)
    }

    /// The algorithm's bounds, not counting the member's own packets (nor the leader monitor's).
    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        let mut bounds = self.inner.bounds(facts);
        for bound in &mut bounds {
            bound.measure = match bound.measure {
                Measure::Messages => Measure::AllBut(MEMBER_KINDS),
                Measure::AllBut(_) => Measure::AllBut(MEMBER_AND_MONITOR_KINDS),
                kinds @ Measure::Kinds(_) => kinds,
            };
        }
        bounds
    }
}
