//! What a run found: the figures, the failed rounds and the checks' findings, as one JSON object or as a table
//! with a few lines after it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::history::{Overlap, Regression, SameEpoch, StaleWrite};
use elect_core::Epoch;
use serde::Serialize;

use super::nemesis::NemesisRound;
use super::plan::Fault;

/// Why a run stopped before its last round.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Stopped {
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// The first election did not end.
    NoFirstLeader {
        /// How long the run waited for it.
        after_ms: f64,
    },
    /// After a round, the cluster did not become stable again.
    Unsettled {
        /// The round after which it did not.
        round: u32,
        /// How long the run waited for it.
        after_ms: f64,
    },
    /// A member process ended without being killed.
    MemberExited {
        /// The member's id.
        member: u32,
        /// How it ended (its exit status or signal, and its last words).
        detail: String,
    },
    /// Something went wrong in this process (spawning, signalling).
    Error {
        /// What went wrong.
        detail: String,
    },
}

/// A failed round.
#[derive(Clone, Debug, Serialize)]
pub struct FailedRound {
    /// The round, from 1.
    pub round: u32,
    /// The leader the fault was done to, and its epoch.
    pub leader: u32,
    /// The leader's epoch.
    pub epoch: Epoch,
    /// What each survivor reported when the round timed out (`leader@epoch`, `-` for no line yet).
    pub views: BTreeMap<u32, String>,
}

/// A measured round.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    /// The round, from 1.
    pub round: u32,
    /// The leader that was killed or paused.
    pub leader: u32,
    /// Its epoch.
    pub epoch: Epoch,
    /// The leader every survivor agreed on.
    pub new_leader: u32,
    /// Its epoch.
    pub new_epoch: Epoch,
    /// From the signal to the line that completed the survivors' agreement.
    pub failover_ms: f64,
    /// From the restart (or SIGCONT) to the agreement of every member that then held for the quiet period.
    pub rejoin_ms: Option<f64>,
}

/// A member claiming leadership under an epoch lower than one already granted.
#[derive(Clone, Debug, Serialize)]
pub struct StaleClaim {
    /// The member that claimed.
    pub member: u32,
    /// The epoch it claimed under.
    pub epoch: Epoch,
    /// The highest epoch granted when the claim was seen.
    pub highest: Epoch,
    /// How long the member went on reporting the claim (`None`: until the end of the run).
    pub lasted_ms: Option<f64>,
}

/// Percentiles (nearest rank), maximum and mean of the samples, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Summary {
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The largest sample.
    pub max: f64,
    /// The mean, to a microsecond.
    pub mean: f64,
}

impl Summary {
    /// The summary of `samples`, none if there are none.
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = |q: f64| sorted[((q * sorted.len() as f64 - 1e-9).ceil() as usize).clamp(1, sorted.len()) - 1];
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        Some(Self {
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
            max: sorted[sorted.len() - 1],
            mean: (mean * 1e3).round() / 1e3,
        })
    }
}

/// What one change of the voters did, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct ChangeRound {
    /// The round it was asked in.
    pub round: u32,
    /// `add ID` or `remove ID`.
    pub change: String,
    /// The fault in force when it was first asked.
    pub under: String,
    /// The voters before it.
    pub before: Vec<u32>,
    /// The voters the leader holds after it.
    pub after: Vec<u32>,
    /// How many times it was asked (1, or 2 when the first failed).
    pub tries: u32,
    /// From the first ask to the end of the one that succeeded (`None`: none did).
    pub done_ms: Option<f64>,
    /// How long, from the first ask to the end of the last, the members expected to agree had no live leader they
    /// agreed on.
    pub leaderless_ms: f64,
}

/// A duration in milliseconds, to a microsecond.
pub(super) fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// The fencing store's verdicts.
#[derive(Serialize)]
pub struct Writes {
    /// Writes the store accepted.
    pub accepted: usize,
    /// Writes it refused as stale.
    pub rejected: usize,
}

/// What the nemesis did.
#[derive(Serialize)]
pub struct NemesisReport {
    /// The kinds of fault, taking turns.
    pub kinds: Vec<String>,
    /// How long each fault held before it was healed.
    pub hold_ms: f64,
    /// After each heal, until every member followed one live leader.
    pub recovery_ms: Option<Summary>,
    /// Each round, in order.
    pub rounds: Vec<NemesisRound>,
}

/// The JSON report; the text table shows the same figures.
#[derive(Serialize)]
pub struct Report {
    /// The members' algorithm.
    pub algorithm: &'static str,
    /// How many members.
    pub nodes: u32,
    /// What was done to the leader.
    pub fault: Fault,
    /// Whether the members ran in the lease mode.
    pub lease: bool,
    /// The leader's heartbeat period.
    pub heartbeat_ms: u64,
    /// `T`, half the heartbeat period.
    pub delay_bound_ms: u64,
    /// The members' seed.
    pub seed: u64,
    /// Rounds asked for.
    pub rounds: u32,
    /// From the start of the processes to the first leader every member agreed on.
    pub first_election_ms: Option<f64>,
    /// Over the measured rounds; `null` when none was.
    pub failover_ms: Option<Summary>,
    /// One per measured round, in order.
    pub samples_ms: Vec<f64>,
    /// The rounds that did not end in time.
    pub failed_rounds: Vec<FailedRound>,
    /// How many epochs had more than one leader named under them (each is in `double_leaders`).
    pub same_epoch_leaders: usize,
    /// How many times a member showed an epoch lower than one it showed before (each is in `regressions`).
    pub epoch_regressions: usize,
    /// How many writes the fencing store accepted under an epoch lower than one it had accepted before (each is in
    /// `stale_writes`).
    pub stale_writes_accepted: usize,
    /// The writes the leaders made to the fencing store, by verdict.
    pub writes: Writes,
    /// The fraction of the time, from the first stable leader to the end, during which the members that could
    /// reach one another (the majority while a nemesis fault held) agreed on a live leader among them.
    pub availability: Option<f64>,
    /// How long two or more members both said they led, in any epochs (a killed or paused member says nothing
    /// while it is down).
    pub leaders_overlap: Overlap,
    /// Busy threads while measuring.
    pub cpu_load: usize,
    /// The nemesis's rounds, with `--nemesis`.
    pub nemesis: Option<NemesisReport>,
    /// The voters the members started with (members 1 to this; the others started as learners).
    pub voters: u32,
    /// Each change of the voters, with `--change-voters`.
    pub changes: Vec<ChangeRound>,
    /// Every epoch with two leaders named under it.
    pub double_leaders: Vec<SameEpoch>,
    /// Every epoch that went backwards at a member.
    pub regressions: Vec<Regression>,
    /// Every stale write the fencing store accepted.
    pub stale_writes: Vec<StaleWrite>,
    /// Every stale claim of leadership (harmless to a store that checks epochs; reported, not a failure).
    pub stale_claims: Vec<StaleClaim>,
    /// Why the run ended early, if it did.
    pub stopped: Option<Stopped>,
    /// Each measured round.
    pub details: Vec<Round>,
    /// Every member process started, and every `elect voters` (all killed and reaped before the report is printed).
    pub pids: Vec<u32>,
    /// The members' data directories and logs (removed at the end unless --keep-data).
    pub data_dir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!((s.p50, s.p90, s.p99, s.max, s.mean), (50.0, 90.0, 99.0, 100.0, 50.5));
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.p50, s.p90, s.p99, s.max), (2.0, 3.0, 3.0, 3.0));
        assert!(Summary::of(&[]).is_none());
    }
}
