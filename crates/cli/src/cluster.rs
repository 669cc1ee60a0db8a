//! `elect cluster`: the flags, and the report as text or JSON. The harness that runs the members, does the faults
//! and judges what they said is `elect_lab::cluster`.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;
use elect_lab::cluster::{ChangeRound, Fault, NemesisReport, Report, Request, Stopped, Summary};

use crate::outcome::Outcome;
use crate::table::Table;

#[derive(Args)]
pub(crate) struct ClusterArgs {
    /// How many members (2 to 64), with ids 1 to N.
    #[arg(long, short)]
    nodes: u32,
    /// The election algorithm: bully, garcia-molina, invitation, or a ring algorithm.
    #[arg(long, short)]
    algorithm: String,
    /// An algorithm parameter, given to every member (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// The leader's heartbeat period, in milliseconds. Members run with `--delay-bound-ms T --heartbeat 2`, where
    /// T = MS/2 (an odd MS is rounded up to the next even number): the leader sends a heartbeat every 2·T and a
    /// follower suspects it after 4·T (two periods) without one. The default, 10 ms, gives T = 5 ms.
    #[arg(long = "heartbeat", value_name = "MS", default_value_t = 10)]
    heartbeat_ms: u64,
    /// Kill the leader with SIGKILL this many times, restarting it each time with its data directory (the
    /// default, with 10 rounds, when neither this nor --pause-leader is given).
    #[arg(long, value_name = "ROUNDS", conflicts_with = "pause_leader")]
    kill_leader: Option<u32>,
    /// Pause the leader with SIGSTOP this many times, continuing it (SIGCONT) once the others agree on another.
    #[arg(long, value_name = "ROUNDS", conflicts_with = "nemesis")]
    pause_leader: Option<u32>,
    /// Run every member in a Linux network namespace of its own (veth pairs on a bridge) and, in each round, inject
    /// a fault, hold it for --nemesis-hold, then heal it: `partition-leader` (the leader cut off from everyone),
    /// `split` (the leader and a minority cut off from the majority), `one-way` (the leader hears the others but
    /// is not heard), `deaf-leader` (the leader is heard by all but hears nobody: with --lease the others must elect
    /// another, since nobody's backing reaches it), `deaf` (one follower hears nothing from the leader; everybody
    /// else hears everybody), `loss:P` (every packet between members dropped with probability P), `pause` (SIGSTOP, then
    /// SIGCONT the leader), `kill` (SIGKILL, then restart the leader on its data directory), `mixed` (a random
    /// sequence of all of them, from --seed). Several kinds take turns. Faults are nftables rules inside the
    /// namespaces; needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN) and the programs `ip` and `nft`
    /// (scripts/install-nemesis). Everything created is removed at the end.
    #[arg(long, value_name = "KIND[,KIND...]", value_delimiter = ',', conflicts_with = "kill_leader")]
    nemesis: Vec<String>,
    /// How many faults the nemesis injects (default 10).
    #[arg(long, value_name = "R", requires = "nemesis")]
    nemesis_rounds: Option<u32>,
    /// How long each fault holds before it is healed, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000, requires = "nemesis")]
    nemesis_hold: u64,
    /// Keep K threads busy while measuring, each sweeping a buffer several times the size of the last-level cache
    /// (as a parallel build does), at normal priority.
    #[arg(long, value_name = "K", default_value_t = 0)]
    cpu_load: usize,
    /// A round that does not end within this many milliseconds fails (the run goes on, and exits with 1).
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    round_timeout: u64,
    /// The seed of every member's timer jitter (`elect node --seed`), so runs repeat as far as real time allows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the members' data directories and logs in DIR (DIR/ID and DIR/ID.log) instead of a temporary
    /// directory removed at the end. Existing state files there are reused.
    #[arg(long, value_name = "DIR")]
    keep_data: Option<PathBuf>,
    /// Authenticate the members' packets with the cluster key derived from this file (`elect node --key-file`).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Print one JSON object (the figures and the raw samples) instead of the table.
    #[arg(long)]
    json: bool,
    /// Run every member in the lease mode (`elect node --lease`): a member leads only while a majority backs it,
    /// so no two members say they lead at one instant. A member paused for longer than its lease does not lead
    /// when it is continued (its lease ran out, and it says so before anything else).
    #[arg(long)]
    lease: bool,
    /// The members 1 to K start as voters, the others as learners (`elect node --voters`) [default: every member].
    #[arg(long, value_name = "K")]
    voters: Option<u32>,
    /// In every round, while the fault holds, change the voters as an operator would (`elect voters`, from where
    /// every member's HTTP endpoint can be reached whatever the fault): grow them by one member, up to every member,
    /// then shrink them by one, removing the leader (which hands leadership over first), back down to --voters K,
    /// and again. A change that fails is asked again once after the heal; one that fails twice fails the run. The
    /// report gives, for each change, how long it took and how long the members had no leader meanwhile. Needs
    /// --voters K, at least 3 and below --nodes.
    #[arg(long, requires = "voters")]
    change_voters: bool,
}

impl ClusterArgs {
    /// The request the lab runs: the flags as they are (it checks them).
    fn request(&self) -> Request {
        Request {
            nodes: self.nodes,
            algorithm: self.algorithm.clone(),
            params: self.params.clone(),
            heartbeat_ms: self.heartbeat_ms,
            kill_leader: self.kill_leader,
            pause_leader: self.pause_leader,
            nemesis: self.nemesis.clone(),
            nemesis_rounds: self.nemesis_rounds,
            nemesis_hold: self.nemesis_hold,
            cpu_load: self.cpu_load,
            round_timeout: self.round_timeout,
            seed: self.seed,
            keep_data: self.keep_data.clone(),
            key_file: self.key_file.clone(),
            lease: self.lease,
            voters: self.voters,
            change_voters: self.change_voters,
        }
    }
}

/// Runs the cluster and prints its report: exit status 0 when every round ended and every check held.
pub(crate) fn run(args: &ClusterArgs) -> anyhow::Result<Outcome> {
    let report = elect_lab::cluster::run(&args.request())?;
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        report.write_text(&mut out)?;
    }
    out.flush()?;
    Ok(if report.interrupted() {
        Outcome::Interrupted
    } else if report.held() {
        Outcome::Held
    } else {
        Outcome::Violated
    })
}

/// A part of the report as text.
trait Text {
    fn write_text(&self, out: &mut impl Write) -> io::Result<()>;
}

impl Text for Report {
    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
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
            "{} members{}, {}{}, heartbeat {} ms (T = {} ms), seed {}: {fault}, {} rounds",
            self.nodes,
            if self.voters < self.nodes {
                format!(" (1 to {} voting at the start)", self.voters)
            } else {
                String::new()
            },
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
        table(self).write(out)?;
        if let Some(n) = &self.nemesis {
            n.write_text(out)?;
        }
        if !self.changes.is_empty() {
            self.changes.write_text(out)?;
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
        write_findings(self, out)
    }
}

/// The figures, in one row.
fn table(report: &Report) -> Table {
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
    let figure =
        |f: fn(&Summary) -> f64| report.failover_ms.as_ref().map_or_else(|| "-".to_owned(), |s| format!("{:.1}", f(s)));
    table.row(vec![
        report.samples_ms.len().to_string(),
        report.failed_rounds.len().to_string(),
        figure(|s| s.p50),
        figure(|s| s.p90),
        figure(|s| s.p99),
        figure(|s| s.max),
        figure(|s| s.mean),
        report.double_leaders.len().to_string(),
        report.stale_claims.len().to_string(),
    ]);
    table
}

/// A line for each failed round and each double leader, one for the stale claims, and why the run stopped
/// early.
fn write_findings(report: &Report, out: &mut impl Write) -> io::Result<()> {
    for f in &report.failed_rounds {
        let views: Vec<String> = f.views.iter().map(|(id, v)| format!("{id}: {v}")).collect();
        writeln!(
            out,
            "round {} failed: no agreement after leader {} (epoch {}) went down; survivors saw {}",
            f.round,
            f.leader,
            f.epoch,
            views.join(", ")
        )?;
    }
    for r in &report.regressions {
        writeln!(
            out,
            "EPOCH REGRESSION: member {} showed epoch {} after {} (at {:.1} ms)",
            r.member, r.to, r.from, r.at_ms
        )?;
    }
    for d in &report.double_leaders {
        let by: Vec<String> = d.named_by.iter().map(|(m, l)| format!("{m} named {l}")).collect();
        writeln!(out, "DOUBLE LEADER in epoch {}: {}", d.epoch, by.join(", "))?;
    }
    if !report.stale_claims.is_empty() {
        let lasted: Vec<f64> = report.stale_claims.iter().filter_map(|s| s.lasted_ms).collect();
        let how_long = Summary::of(&lasted)
            .map_or_else(String::new, |s| format!(", for {:.1} ms at the median and {:.1} ms at most", s.p50, s.max));
        writeln!(
            out,
            "stale claims: {} times a member still claimed leadership under an epoch older than the newest \
             grant{how_long} (a store that checks fencing epochs refuses its writes; --json lists each)",
            report.stale_claims.len()
        )?;
    }
    if let Some(stopped) = &report.stopped {
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

impl Text for Vec<ChangeRound> {
    /// One line per change of the voters.
    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let mut table =
            Table::new(vec!["ROUND", "CHANGE", "UNDER", "VOTERS AFTER", "TRIES", "DONE MS", "NO LEADER MS"]);
        let ids = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        for c in self {
            table.row(vec![
                c.round.to_string(),
                c.change.clone(),
                c.under.clone(),
                ids(&c.after),
                c.tries.to_string(),
                c.done_ms.map_or_else(|| "NOT DONE".to_owned(), |v| format!("{v:.1}")),
                format!("{:.1}", c.leaderless_ms),
            ]);
        }
        table.write(out)?;
        let done: Vec<f64> = self.iter().filter_map(|c| c.done_ms).collect();
        let leaderless: Vec<f64> = self.iter().map(|c| c.leaderless_ms).collect();
        write!(out, "changes of the voters: {} of {} done", done.len(), self.len())?;
        if let (Some(d), Some(l)) = (Summary::of(&done), Summary::of(&leaderless)) {
            write!(
                out,
                "; done in p50 {:.1} ms, max {:.1} ms; no leader p50 {:.1} ms, max {:.1} ms",
                d.p50, d.max, l.p50, l.max
            )?;
        }
        writeln!(out)?;
        for c in self.iter().filter(|c| c.done_ms.is_none()) {
            writeln!(
                out,
                "CHANGE NOT DONE in round {}: {} (tried {} times; the changes' log in the data directory says why)",
                c.round, c.change, c.tries
            )?;
        }
        Ok(())
    }
}

impl Text for NemesisReport {
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
                format!("{}@{}", r.leader, r.epoch),
                opt(r.failover_ms),
                r.recovery_ms.map_or_else(|| "NOT RECOVERED".to_owned(), |v| format!("{v:.1}")),
                format!("{:.1}", r.leaderless_ms),
                r.after.map_or_else(|| "-".to_owned(), |(l, e)| format!("{l}@{e}")),
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
