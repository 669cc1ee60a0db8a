//! Why a check could not run: a scenario every driver refuses, or one the checker cannot explore, one variant per
//! problem. Each message names the problem in one line, for an error and exit status 2.

use elect_algos::{ElectsEarliest, ParamError, RegistryError};
use elect_scenario::ConfigError;

/// Why a check could not run (every variant is bad input).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The scenario is invalid for the simulator too.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An unknown algorithm, or parameters it does not take.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A parameter the algorithm cannot use with these ids.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The leader monitor alone cannot run this algorithm.
    #[error(transparent)]
    BareMonitor(#[from] ElectsEarliest),
    /// `--mobility`.
    #[error(
        "the checker cannot drive moving nodes: links that come and go with positions are drawn from a seed, step \
         by step, which is the simulator's work (elect sim --mobility)"
    )]
    Mobility,
    /// Delays without an upper bound.
    #[error("the checker needs bounded delays: constant:D or uniform:A..B")]
    UnboundedDelay,
    /// `--timed` with delays of zero ticks.
    #[error("--timed needs delays of at least one tick")]
    ZeroDelay,
    /// Loss or duplication probabilities, or `--crash-leader`.
    #[error(
        "loss and duplication probabilities and --crash-leader are the simulator's; the checker explores them with \
         --network lossy|duplicating and --crashes"
    )]
    SimulatorFaults,
    /// Faults at given times in an untimed check.
    #[error(
        "scheduled faults (crashes, recoveries, resignations, transfers, link faults, partitions at given times) need \
         --timed; untimed checks take fault budgets instead (--crashes, --recoveries)"
    )]
    ScheduledUntimed,
    /// More link faults or partitions than a state can record.
    #[error("the checker takes at most 64 link faults and 64 partitions")]
    TooManyFaults,
    /// A replayed path with a step that cannot be taken.
    #[error(
        "step {step} of the path ({action}) cannot be taken in this scenario: the file was made for another \
         scenario or another version of the algorithm"
    )]
    NotEnabled {
        /// The step, from 1.
        step: usize,
        /// The action, as its `Debug` form shows it.
        action: String,
    },
    /// `check_every_arrangement` on too few or too many ids.
    #[error("every arrangement of {0} ids is too many to check (2 to 9)")]
    Arrangements(usize),
}
