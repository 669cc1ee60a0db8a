//! Garcia-Molina's configuration: the variant of its second phase, its periods in multiples of `T`, and the
//! timing of its RPCs that follows from the delay bound.

use elect_core::{Duration, InT};

#[cfg(doc)]
use crate::algorithm::Algorithm;

/// The algorithm's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GarciaMolina {
    /// Whether the second phase has REORGANIZATION and `ready` (GM's paper) or not (S004's simplification).
    pub ready: bool,
    /// A NORMAL coordinator runs Check every `check·T`.
    pub check: InT,
    /// A process runs Timeout after `timeout·T` without news from its coordinator.
    pub timeout: InT,
    /// How many times an unanswered `new-coordinator` or `ready` call is sent again before it counts as failed.
    pub retries: u32,
    /// Whether a coordinator's Check appoints a weaker process that is not NORMAL alone (rather than electing).
    pub rejoin: bool,
    /// Whether the leader monitor watches the coordinator ([`Algorithm::monitored`]): then a NORMAL member's
    /// Timeout does not call `are-you-there` and elect on its own; the monitor's pre-vote decides.
    pub monitored: bool,
}

impl Default for GarciaMolina {
    fn default() -> Self {
        Self { ready: true, check: InT(10), timeout: InT(20), retries: 2, rejoin: true, monitored: false }
    }
}

impl GarciaMolina {
    /// How long a caller waits for an answer: `2T + ε`.
    pub(super) fn rpc(t: Duration) -> Duration {
        t * 2 + Duration::TICK
    }

    /// How long a process that found a stronger one alive waits to be halted: the rest of the stronger one's
    /// first phase, its HALT round, and its NEW-COORDINATOR's delivery.
    pub(super) fn wait(t: Duration) -> Duration {
        Self::rpc(t) * 2 + t
    }

    /// One election, from the strongest live process's start until it is NORMAL: four RPC rounds.
    pub(super) fn one_election(t: Duration) -> Duration {
        Self::rpc(t) * 4
    }
}
