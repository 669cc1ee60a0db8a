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

mod fleet;
mod load;
mod measure;
mod nemesis;
mod netns;
mod plan;
mod report;
mod store;

use std::io::{self, Write};
use std::sync::mpsc;

use anyhow::Context;

pub(crate) use plan::ClusterArgs;

use crate::outcome::Outcome;
use fleet::{Data, watch_for_interrupts};
use measure::Bench;
use report::Stopped;

pub(crate) fn run(args: &ClusterArgs) -> anyhow::Result<Outcome> {
    let plan = plan::plan(args)?;
    let exe = std::env::current_exe().context("cannot find the elect executable")?;
    let data = Data::new(args.keep_data.as_deref())?;
    let (events, inbox) = mpsc::channel();
    watch_for_interrupts(events.clone());
    let net = match plan.fault {
        plan::Fault::Nemesis => Some(netns::Net::create(plan.nodes as usize)?),
        _ => None,
    };
    let store_dir =
        tempfile::Builder::new().prefix("elect-fencing-").tempdir().context("cannot create a temporary directory")?;
    let mut bench = Bench::new(&plan, exe, data.path(), store_dir.path(), events, inbox, net)
        .context("cannot serve the fencing store")?;
    let result = bench.run();
    // Every child is killed and reaped before the report is printed and before the data directory is removed.
    bench.fleet.stop_all();
    let report = bench.report(result, data.path());
    drop(bench);
    drop(data);
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        report.write_text(&mut out)?;
    }
    out.flush()?;
    Ok(if report.stopped == Some(Stopped::Interrupted) {
        Outcome::Interrupted
    } else if report.failed_rounds.is_empty()
        && report.double_leaders.is_empty()
        && report.regressions.is_empty()
        && report.stale_writes.is_empty()
        && report.stopped.is_none()
    {
        Outcome::Held
    } else {
        Outcome::Violated
    })
}
