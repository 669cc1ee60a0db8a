//! The plain states a member holds besides its timing, its leases and its voters: where it stands with its
//! question after it started knowing no epoch ([`Asking`]), whether it takes part in elections ([`Away`]), and the
//! leadership it shows ([`Leadership`]).

use elect_core::{Epoch, NodeId};
use serde::{Deserialize, Serialize};

/// Where a member that started knowing no epoch stands with its question (see [`super::asking`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Asking {
    /// It knew an epoch when it started, or has had its answers: it may grant.
    Answered,
    /// The round trip is not over.
    Waiting,
    /// The round trip is over, but it has not heard from enough members yet (`Fixed::quorum`).
    Short,
}

/// Whether the member takes part in elections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Away {
    /// It does.
    Present,
    /// It resigned, and sits out until the resign hold is over.
    Resigned,
    /// It left for good.
    Left,
    /// It must never lead: it takes no part, from its start (its algorithm does not even start).
    Never,
    /// It started, and sits out until its takeover delay is over (its algorithm starts then).
    Waiting,
    /// It stands aside for a transfer to `to`, which the leader of epoch `from` handed over to: until `to` has
    /// taken over (claimed an epoch above `from`) and then stopped leading, or until the deadline (`due`) if `to`
    /// has not taken over by then.
    Aside {
        /// The member that should lead.
        to: NodeId,
        /// The epoch of the leader that handed over.
        from: Epoch,
        /// The deadline has come and `to` had taken over.
        due: bool,
    },
    /// It is not a voter of the configuration it holds (a learner not added yet, or a member removed): it takes no
    /// part until a configuration makes it one (see [`super::voters`]).
    Outside,
}

/// The leadership a member shows: the leader it follows (or is) and the fencing epoch of that leadership grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Leadership {
    /// The leader, or `None` while there is none this member can vouch for (an election, a leader whose grant it
    /// has not heard yet).
    pub leader: Option<NodeId>,
    /// The fencing epoch of the leader's grant; with no leader, that of the last leader this member knew (after a
    /// restart: the highest epoch it had seen; [`Epoch::ZERO`] if none). It never goes backwards.
    pub epoch: Epoch,
}
