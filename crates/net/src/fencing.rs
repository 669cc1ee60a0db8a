//! Leadership as applications see it.
//!
//! The member's process ([`elect_algos::member`]) numbers every leadership grant with a **fencing epoch** in the
//! ballot format of [`elect_core::epoch`] (`round << 32 | member id`), higher than every epoch it has heard of and
//! unique to it, and durable before it is used; a follower shows a leader only with the leader's grant, and only if
//! no newer epoch is known. So the `(leader, epoch)` a member publishes never goes backwards, even across
//! restarts, and two grants never share an epoch. The runtime hands what the process tells it to the application:
//! a grant as [`LeaderEvent::StartedLeading`], its end as [`LeaderEvent::StoppedLeading`], and every change of the
//! leadership it shows as [`LeaderEvent::LeaderChanged`] and in the [`crate::Node::leadership`] watch.

pub use elect_algos::member::Leadership;
use elect_core::Epoch;

/// A change of leadership, in order. `StartedLeading` and `StoppedLeading` strictly alternate, starting with
/// `StartedLeading`, and a `StoppedLeading` names the epoch its `StartedLeading` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeaderEvent {
    /// This member became leader under fencing epoch `epoch`.
    StartedLeading {
        /// The fencing epoch of the grant.
        epoch: Epoch,
    },
    /// This member stopped leading under `epoch`: from now on, writes fenced with it must be refused.
    StoppedLeading {
        /// The fencing epoch of the grant that ended.
        epoch: Epoch,
    },
    /// The published [`Leadership`] changed (for leaders too, after their `StartedLeading`).
    LeaderChanged(Leadership),
}
