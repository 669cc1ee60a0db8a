//! What a run found: the figures, the failed rounds and the checks' findings, as one JSON object or as a table
//! with a few lines after it.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use elect_core::epoch;
use elect_net::history::{Overlap, Regression, SameEpoch, StaleWrite};
use serde::Serialize;

use super::nemesis::NemesisRound;
use super::plan::Fault;
use crate::table::Table;

/// Why a run stopped before its last round.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub(super) enum Stopped {
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// The first election did not end.
    NoFirstLeader { after_ms: f64 },
    /// After a round, the cluster did not become stable again.
    Unsettled { round: u32, after_ms: f64 },
    /// A member process ended without being killed.
    MemberExited { member: u32, detail: String },
    /// Something went wrong in this process (spawning, signalling).
    Error { detail: String },
}

/// A failed round.
#[derive(Clone, Debug, Serialize)]
pub(super) struct FailedRound {
    pub(super) round: u32,
    pub(super) leader: u32,
    pub(super) epoch: u64,
    /// What each survivor reported when the round timed out (`leader@epoch`, `-` for no line yet).
    pub(super) views: BTreeMap<u32, String>,
}

/// A measured round.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Round {
    pub(super) round: u32,
    /// The leader that was killed or paused, and its epoch.
    pub(super) leader: u32,
    pub(super) epoch: u64,
    /// The leader every survivor agreed on, and its epoch.
    pub(super) new_leader: u32,
    pub(super) new_epoch: u64,
    /// From the signal to the line that completed the survivors' agreement.
    pub(super) failover_ms: f64,
    /// From the restart (or SIGCONT) to the agreement of every member that then held for the quiet period.
    pub(super) rejoin_ms: Option<f64>,
}

/// A member claiming leadership under an epoch lower than one already granted.
#[derive(Clone, Debug, Serialize)]
pub(super) struct StaleClaim {
    pub(super) member: u32,
    pub(super) epoch: u64,
    /// The highest epoch granted when the claim was seen.
    pub(super) highest: u64,
    /// How long the member went on reporting the claim (`None`: until the end of the run).
    pub(super) lasted_ms: Option<f64>,
}

/// Percentiles (nearest rank), maximum and mean of the samples, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub(super) struct Summary {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

impl Summary {
    pub(super) fn of(samples: &[f64]) -> Option<Self> {
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

/// The fencing store's verdicts.
#[derive(Serialize)]
pub(super) struct Writes {
    pub(super) accepted: usize,
    pub(super) rejected: usize,
}

/// What the nemesis did.
#[derive(Serialize)]
pub(super) struct NemesisReport {
    pub(super) kinds: Vec<String>,
    pub(super) hold_ms: f64,
    /// After each heal, until every member followed one live leader.
    pub(super) recovery_ms: Option<Summary>,
    pub(super) rounds: Vec<NemesisRound>,
}

/// The JSON report; the text table shows the same figures.
#[derive(Serialize)]
pub(super) struct Report {
    pub(super) algorithm: &'static str,
    pub(super) nodes: u32,
    pub(super) fault: Fault,
    /// Whether the members ran in the lease mode.
    pub(super) lease: bool,
    pub(super) heartbeat_ms: u64,
    pub(super) delay_bound_ms: u64,
    pub(super) seed: u64,
    /// Rounds asked for.
    pub(super) rounds: u32,
    pub(super) first_election_ms: Option<f64>,
    /// Over the measured rounds; `null` when none was.
    pub(super) failover_ms: Option<Summary>,
    /// One per measured round, in order.
    pub(super) samples_ms: Vec<f64>,
    pub(super) failed_rounds: Vec<FailedRound>,
    /// How many epochs had more than one leader named under them (each is in `double_leaders`).
    pub(super) same_epoch_leaders: usize,
    /// How many times a member showed an epoch lower than one it showed before (each is in `regressions`).
    pub(super) epoch_regressions: usize,
    /// How many writes the fencing store accepted under an epoch lower than one it had accepted before (each is in
    /// `stale_writes`).
    pub(super) stale_writes_accepted: usize,
    /// The writes the leaders made to the fencing store, by verdict.
    pub(super) writes: Writes,
    /// The fraction of the time, from the first stable leader to the end, during which the members that could
    /// reach one another (the majority while a nemesis fault held) agreed on a live leader among them.
    pub(super) availability: Option<f64>,
    /// How long two or more members both said they led, in any epochs (a killed or paused member says nothing
    /// while it is down).
    pub(super) leaders_overlap: Overlap,
    /// Busy threads while measuring.
    pub(super) cpu_load: usize,
    /// The nemesis's rounds, with `--nemesis`.
    pub(super) nemesis: Option<NemesisReport>,
    pub(super) double_leaders: Vec<SameEpoch>,
    pub(super) regressions: Vec<Regression>,
    pub(super) stale_writes: Vec<StaleWrite>,
    pub(super) stale_claims: Vec<StaleClaim>,
    /// Why the run ended early, if it did.
    pub(super) stopped: Option<Stopped>,
    /// Each measured round.
    pub(super) details: Vec<Round>,
    /// Every member process started (all killed and reaped before the report is printed).
    pub(super) pids: Vec<u32>,
    /// The members' data directories and logs (removed at the end unless --keep-data).
    pub(super) data_dir: PathBuf,
}

impl Report {
    pub(super) fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let nemesis;
        let fault = match (self.fault, &self.nemesis) {
            (Fault::Kill, _) => "SIGKILL the leader, then restart it",
            (Fault::Pause, _) => "SIGSTOP the leader, then SIGCONT it",
            (Fault::Nemesis, n) => {
                let (kinds, hold) = n.as_ref().map_or((String::new(), 0.0), |n| (n.kinds.join(", "), n.hold_ms));
                nemesis = format!("the nemesis ({kinds}), each fault held {hold:.0} ms and healed");
                &nemesis
            }
        };
        writeln!(
            out,
            "{} members, {}{}, heartbeat {} ms (T = {} ms), seed {}: {fault}, {} rounds",
            self.nodes,
            self.algorithm,
            if self.lease { " in the lease mode" } else { "" },
            self.heartbeat_ms,
            self.delay_bound_ms,
            self.seed,
            self.rounds
        )?;
        if let Some(first) = self.first_election_ms {
            writeln!(out, "first leader agreed on after {first:.1} ms (from the start of the processes)")?;
        }
        self.table().write(out)?;
        if let Some(n) = &self.nemesis {
            n.write_text(out)?;
        }
        writeln!(
            out,
            "fencing store: {} writes accepted, {} refused as stale, {} stale writes accepted; \
             {} epochs with two leaders, {} epoch regressions",
            self.writes.accepted,
            self.writes.rejected,
            self.stale_writes_accepted,
            self.same_epoch_leaders,
            self.epoch_regressions
        )?;
        if let Some(a) = self.availability {
            writeln!(out, "availability: {:.2}% of the time the reachable members agreed on a live leader", 100.0 * a)?;
        }
        let o = self.leaders_overlap;
        if o.stretches == 0 {
            writeln!(out, "two leaders at once: never (no two members both said they led at any instant)")?;
        } else {
            writeln!(
                out,
                "two leaders at once: {:.1} ms in all, {} times, the longest {:.1} ms (members that both said they \
                 led, in any epochs)",
                o.total_ms, o.stretches, o.longest_ms
            )?;
        }
        self.write_findings(out)
    }

    /// The figures, in one row.
    fn table(&self) -> Table {
        let mut table = Table::new(vec![
            "ROUNDS",
            "FAILED",
            "P50 MS",
            "P90 MS",
            "P99 MS",
            "MAX MS",
            "MEAN MS",
            "DOUBLE LEADERS",
            "STALE CLAIMS",
        ]);
        let figure = |f: fn(&Summary) -> f64| {
            self.failover_ms.as_ref().map_or_else(|| "-".to_owned(), |s| format!("{:.1}", f(s)))
        };
        table.row(vec![
            self.samples_ms.len().to_string(),
            self.failed_rounds.len().to_string(),
            figure(|s| s.p50),
            figure(|s| s.p90),
            figure(|s| s.p99),
            figure(|s| s.max),
            figure(|s| s.mean),
            self.double_leaders.len().to_string(),
            self.stale_claims.len().to_string(),
        ]);
        table
    }

    /// A line for each failed round and each double leader, one for the stale claims, and why the run stopped
    /// early.
    fn write_findings(&self, out: &mut impl Write) -> io::Result<()> {
        for f in &self.failed_rounds {
            let views: Vec<String> = f.views.iter().map(|(id, v)| format!("{id}: {v}")).collect();
            writeln!(
                out,
                "round {} failed: no agreement after leader {} (epoch {}) went down; survivors saw {}",
                f.round,
                f.leader,
                epoch::show(f.epoch),
                views.join(", ")
            )?;
        }
        for r in &self.regressions {
            writeln!(
                out,
                "EPOCH REGRESSION: member {} showed epoch {} after {} (at {:.1} ms)",
                r.member,
                epoch::show(r.to),
                epoch::show(r.from),
                r.at_ms
            )?;
        }
        for d in &self.double_leaders {
            let by: Vec<String> = d.named_by.iter().map(|(m, l)| format!("{m} named {l}")).collect();
            writeln!(out, "DOUBLE LEADER in epoch {}: {}", epoch::show(d.epoch), by.join(", "))?;
        }
        if !self.stale_claims.is_empty() {
            let lasted: Vec<f64> = self.stale_claims.iter().filter_map(|s| s.lasted_ms).collect();
            let how_long = Summary::of(&lasted).map_or_else(String::new, |s| {
                format!(", for {:.1} ms at the median and {:.1} ms at most", s.p50, s.max)
            });
            writeln!(
                out,
                "stale claims: {} times a member still claimed leadership under an epoch older than the newest \
                 grant{how_long} (a store that checks fencing epochs refuses its writes; --json lists each)",
                self.stale_claims.len()
            )?;
        }
        if let Some(stopped) = &self.stopped {
            let why = match stopped {
                Stopped::Interrupted => "interrupted".to_owned(),
                Stopped::NoFirstLeader { after_ms } => format!("no stable first leader after {after_ms:.0} ms"),
                Stopped::Unsettled { round, after_ms } => {
                    format!("the cluster was not stable {after_ms:.0} ms after round {round}")
                }
                Stopped::MemberExited { member, detail } => format!("member {member} ended on its own: {detail}"),
                Stopped::Error { detail } => detail.clone(),
            };
            writeln!(out, "stopped early: {why}")?;
        }
        Ok(())
    }
}

impl NemesisReport {
    /// One line per round, then the recovery times.
    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let mut table = Table::new(vec![
            "ROUND",
            "FAULT",
            "LEADER",
            "FAILOVER MS",
            "RECOVERY MS",
            "NO LEADER MS",
            "AFTER",
            "CHANGES",
            "ROUNDS",
        ]);
        let opt = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        for r in &self.rounds {
            table.row(vec![
                r.round.to_string(),
                r.detail.clone(),
                format!("{}@{}", r.leader, epoch::show(r.epoch)),
                opt(r.failover_ms),
                r.recovery_ms.map_or_else(|| "NOT RECOVERED".to_owned(), |v| format!("{v:.1}")),
                format!("{:.1}", r.leaderless_ms),
                r.after.map_or_else(|| "-".to_owned(), |(l, e)| format!("{l}@{}", epoch::show(e))),
                r.side_changes.to_string(),
                r.rounds_used.to_string(),
            ]);
        }
        table.write(out)?;
        if let Some(s) = &self.recovery_ms {
            writeln!(
                out,
                "recovery after a heal: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                s.p50, s.p90, s.p99, s.max
            )?;
        }
        Ok(())
    }
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
