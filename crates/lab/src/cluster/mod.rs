//! `elect cluster`: N `elect node` processes on loopback; the leader killed (SIGKILL) or paused (SIGSTOP) again and
//! again, and the time until every survivor reports the same new leader and epoch.
//!
//! The members are child processes of this executable, each with a port the OS chose, a data directory of its own
//! and the same seed. One thread per member reads its stdout lines (one per leadership change) and stamps each on
//! arrival with a monotonic clock. A round: the cluster is stable (every member reports the same leader `L` and
//! epoch `e`, and nothing changed for a quiet period); `L` is killed or stopped at `t0`; the round ends at the
//! arrival `t1` of the line that makes every survivor report the same leader other than `L` with an epoch above
//! `e`; `t1 - t0` is the sample. `L` is then restarted with the same data directory (or continued) and the next
//! round waits for the cluster to be stable again.
//!
//! Every line is checked: two members named leader in the same epoch is a double leader (exit 1). A member that
//! claims leadership under an epoch lower than the highest granted so far (a paused leader that resumes still
//! believing it leads) is a stale claim: fencing makes it harmless to a store that checks epochs, so it is
//! reported and counted, not a failure.
//!
//! Children are killed on every way out: the end of the run, an error, a panic (a drop guard), Ctrl-C and SIGTERM.

mod changes;
mod fleet;
mod load;
mod measure;
mod nemesis;
mod netns;
mod plan;
mod report;
mod store;

use std::sync::mpsc;

use anyhow::Context;

pub use nemesis::NemesisRound;
pub use plan::{Fault, Request};
pub use report::{ChangeRound, FailedRound, NemesisReport, Report, Round, StaleClaim, Stopped, Summary, Writes};

use fleet::{Data, watch_for_interrupts};
use measure::Bench;

/// Runs `request`: checks it ([`crate::BadRequest`] if it cannot run), starts the members as `elect node`
/// processes of this executable, runs the rounds, and kills and reaps every member before it returns the report.
pub fn run(request: &Request) -> anyhow::Result<Report> {
    let plan = plan::plan(request)?;
    let exe = std::env::current_exe().context("cannot find the elect executable")?;
    let data = Data::new(request.keep_data.as_deref())?;
    let (events, inbox) = mpsc::channel();
    watch_for_interrupts(events.clone());
    let net = match plan.fault {
        Fault::Nemesis => Some(netns::Net::create(plan.nodes as usize)?),
        _ => None,
    };
    let store_dir =
        tempfile::Builder::new().prefix("elect-fencing-").tempdir().context("cannot create a temporary directory")?;
    let mut bench = Bench::new(&plan, exe, data.path(), store_dir.path(), events, inbox, net)
        .context("cannot serve the fencing store")?;
    let result = bench.run();
    // Every child is killed and reaped before the report is returned and before the data directory is removed.
    bench.fleet.abandon_changes();
    bench.fleet.stop_all();
    let report = bench.report(result, data.path());
    drop(bench);
    drop(data);
    Ok(report)
}

impl Report {
    /// Whether the run was stopped by Ctrl-C or SIGTERM.
    pub fn interrupted(&self) -> bool {
        self.stopped == Some(Stopped::Interrupted)
    }

    /// Whether every round ended and every check held: no failed round, no two leaders in one epoch, no epoch
    /// going backwards, no stale write accepted, and the run not stopped early.
    pub fn held(&self) -> bool {
        self.failed_rounds.is_empty()
            && self.double_leaders.is_empty()
            && self.regressions.is_empty()
            && self.stale_writes.is_empty()
            && self.stopped.is_none()
            && self.changes.iter().all(|c| c.done_ms.is_some())
    }
}
