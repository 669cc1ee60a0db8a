//! The member's timing and its planted flaws. A member waits multiples of the delay bound `T`: a rival's claim
//! lives as long as the leader monitor's suspicion time after its claimer's last packet, the algorithm must keep a
//! member leader for the settling wait before it grants itself an epoch, and a member that starts knowing no epoch
//! waits a round trip for the answers to its question. A flaw is planted only on request
//! (`--param monitor-bug=...`), to show that the checker and the simulator find it.

use std::sync::Arc;

use elect_core::{Duration, InT, NodeId, OwnedSetup, Setup};

use super::lease::{Lease, LeaseTiming};
use super::voters::Voters;
use crate::params::{ParamError, ParamInfo, Params};

/// The member's timing, in multiples of the delay bound `T`, and the resign hold. (A member that starts knowing no
/// epoch asks for a round trip, `2T + ε`: see the module documentation.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberConfig {
    /// A claim stays live this many `T` after its claimer's last packet: the leader monitor's suspicion time,
    /// `heartbeat + 2`.
    pub claim_ttl: InT,
    /// The algorithm must keep this member leader this many `T` before it grants itself an epoch.
    pub settle: InT,
    /// How long a member that resigned sits out before it takes part in elections again.
    pub resign_hold: Duration,
    /// A flaw planted on purpose, to show that the checker and the simulator find it (`--param monitor-bug=...`).
    pub bug: Option<Bug>,
    /// The member must never lead: it takes no part in elections, for its whole life, and shows the newest live
    /// claim of the others, as a member sitting out does.
    pub no_lead: bool,
    /// After each start, the member sits out this long before it takes part in elections (zero: it takes part at
    /// once). A member the algorithm prefers (Bully's strongest) then takes leadership back only once it has run
    /// that long, so one that crashes again and again does not make the leadership flap.
    pub takeover_after: Duration,
    /// The leader monitor's heartbeat period, in multiples of `T`: in the lease mode, a leader renews its lease as
    /// often.
    pub heartbeat: InT,
    /// The lease mode, if it is on: leadership held only while a majority backs it (see [`super::lease`]).
    pub lease: Option<Lease>,
    /// The voters a member holds until it learns or saves another configuration (see [`super::voters`]): `None`,
    /// every member. Every member of a cluster must start with the same.
    pub voters: Option<Arc<[NodeId]>>,
}

impl MemberConfig {
    /// The timing of a member whose leader monitor beats every `heartbeat·T`.
    pub fn new(heartbeat: InT, resign_hold: Duration) -> Self {
        Self {
            claim_ttl: heartbeat + 2,
            settle: InT(1),
            resign_hold,
            bug: None,
            no_lead: false,
            takeover_after: Duration::ZERO,
            heartbeat,
            lease: None,
            voters: None,
        }
    }
}

/// A flaw planted in the deployed process on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bug {
    /// `same-epoch`: a new grant reuses the highest epoch the member has seen (the grant it replaces) instead of
    /// the one after it, so a new leader may hold the epoch of the old one.
    SameEpoch,
    /// `deaf-leaders`: two leaders of one of the leader monitor's epochs ignore each other's heartbeats instead of
    /// settling which one leads: after a one-way fault the cluster may never agree again.
    DeafLeaders,
    /// `lapsed-leader`: a leader whose lease lapsed, or that no majority backs, goes on asking for one, its
    /// algorithm goes on beating as if it held one, and members back any leader their promise lets them, whichever
    /// they follow: the others keep following it or keep backing it, and a majority cut off from it by a one-way
    /// fault may never lead.
    LapsedLeader,
    /// `forget-epoch`: a member does not make its own grant durable before it announces it (only with the next
    /// epoch it learns from another member), so a member that restarts in between may grant the same epoch again.
    ForgetEpoch,
    /// `no-drift`: in the lease mode, a leader holds a round for `L` and a backer promises `L` (and a tick), as if
    /// every clock kept real time, instead of `L/(1+ρ)` and `L(1+ρ)`: once clocks drift, a backer's promise may run
    /// out before the lease it backed, and two members lead at once.
    NoDrift,
    /// `hasty-change`: a leader changes the voters without making sure a majority holds the configuration it
    /// changes, and counts a change done as soon as it holds the new configuration itself: the next change may
    /// start while most members hold a configuration two members away, whose majorities miss the new one's.
    HastyChange,
}

/// The parameter that plants a [`Bug`]. It belongs to the member, not to the algorithm, so drivers take it out of
/// the algorithm's parameters ([`Bug::take`]) before they look the algorithm up.
pub const BUG_PARAM: ParamInfo = ParamInfo {
    name: "monitor-bug",
    values: "same-epoch, deaf-leaders, lapsed-leader, forget-epoch, no-drift or hasty-change",
    default: "none",
    help: "plant a flaw in the deployed member (only with --monitor): same-epoch makes a new leadership grant \
           reuse the epoch it replaces; deaf-leaders makes two leaders of one monitor epoch ignore each other; \
           lapsed-leader (with lease) makes a leader whose lease lapsed go on beating as if it held one; \
           forget-epoch makes a new grant durable only later, so a member that restarts may grant it again; \
           no-drift (with lease) makes a lease ignore the drift bound, which clocks=drifting shows; hasty-change \
           makes a change of the voters done before a majority holds it",
};

impl Bug {
    /// Takes `monitor-bug` out of `params`: the flaw it names, if any, and the algorithm's own parameters.
    pub fn take(params: &Params) -> Result<(Option<Self>, Params), ParamError> {
        let (value, rest) = params.without(BUG_PARAM.name);
        let bug = match value.as_deref() {
            None | Some("none") => None,
            Some("same-epoch") => Some(Self::SameEpoch),
            Some("deaf-leaders") => Some(Self::DeafLeaders),
            Some("lapsed-leader") => Some(Self::LapsedLeader),
            Some("forget-epoch") => Some(Self::ForgetEpoch),
            Some("no-drift") => Some(Self::NoDrift),
            Some("hasty-change") => Some(Self::HastyChange),
            Some(other) => {
                return Err(ParamError::Invalid {
                    key: BUG_PARAM.name,
                    value: other.to_owned(),
                    reason: format!("expected one of: {}", BUG_PARAM.values),
                });
            }
        };
        Ok((bug, rest))
    }
}

/// What a member keeps for its whole life: its setup (to rebuild its algorithm after it resigned) and its timing in
/// ticks.
#[derive(Debug)]
pub(super) struct Fixed {
    pub(super) setup: OwnedSetup,
    pub(super) claim_ttl: Duration,
    pub(super) settle: Duration,
    /// How long a member that starts knowing no epoch waits for answers: a round trip, `2T + ε`.
    pub(super) ask: Duration,
    /// The voting configuration it holds until it has saved another: the voters `MemberConfig::voters` names, or
    /// every member.
    pub(super) voters: Arc<Voters>,
    pub(super) resign_hold: Duration,
    pub(super) bug: Option<Bug>,
    pub(super) no_lead: bool,
    pub(super) takeover_after: Duration,
    pub(super) lease: Option<LeaseTiming>,
}

impl Fixed {
    /// The fixed part of a member built from `setup` and timed by `config`.
    pub(super) fn new(config: &MemberConfig, setup: &Setup<'_>) -> Self {
        let t = setup.delay_bound.expect("a member needs a delay bound; drivers check it");
        Self {
            setup: setup.to_owned(),
            claim_ttl: t * config.claim_ttl,
            settle: t * config.settle,
            ask: t * 2 + Duration::TICK,
            voters: Arc::new(config.voters.clone().map_or_else(
                || Voters::initial(setup.neighbors.iter().map(|n| n.id).chain([setup.id]).collect()),
                |voters| Voters::initial(voters.to_vec()),
            )),
            resign_hold: config.resign_hold,
            bug: config.bug,
            no_lead: config.no_lead,
            takeover_after: config.takeover_after,
            lease: config.lease.map(|lease| {
                let timing = LeaseTiming::new(&lease, config.heartbeat, t);
                match config.bug {
                    Some(Bug::NoDrift) => timing.without_margin(&lease, config.heartbeat, t),
                    _ => timing,
                }
            }),
        }
    }
}
