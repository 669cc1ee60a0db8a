//! `elect tour`: every algorithm in its showcase scenario, in one table.

use std::io::{self, Write};

use clap::Args;
use elect_algos::{Info, registry};
use elect_scenario::{ConfigError, SimConfig};
use elect_sim::{Report, SimError};

use crate::outcome::{BadInput, Outcome};
use crate::table::Table;

#[derive(Args)]
pub(crate) struct TourArgs {
    /// Processes per run (at least 2).
    #[arg(long, short, default_value_t = 16, allow_negative_numbers = true)]
    nodes: usize,
    /// The root seed (ids are a random arrangement drawn from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print a JSON array of the runs' reports instead of the table.
    #[arg(long)]
    json: bool,
}

/// Why the tour skips an algorithm at this size.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Skipped {
    /// Its showcase runs on a complete graph, past the largest one simulated.
    Complete,
    /// It runs as many rounds as the diameter, which is not measured on a random graph this large.
    Diameter,
}

impl Skipped {
    /// Why, as the tour prints it.
    fn reason(self) -> String {
        match self {
            Self::Complete => format!("complete graphs go up to {} nodes", elect_scenario::MAX_COMPLETE_NODES),
            Self::Diameter => "their rounds, and the synchronizers', need the diameter, too costly to measure on a \
                               random graph this large"
                .to_owned(),
        }
    }
}

/// An algorithm the tour skips, and why.
type SkippedOne = (&'static str, Skipped);

/// An algorithm and its run in its showcase scenario.
type Showcase = (&'static &'static Info, Report);

pub(crate) fn run(args: &TourArgs) -> anyhow::Result<Outcome> {
    if args.nodes < 2 {
        return Err(BadInput("the tour needs at least 2 nodes".into()).into());
    }
    let (reports, skipped) = showcases(args)?;
    let synced = synchronized(args)?;
    let mut out = io::stdout().lock();
    if args.json {
        let all: Vec<_> = reports.iter().map(|(_, r)| r).chain(&synced).collect();
        serde_json::to_writer_pretty(&mut out, &all)?;
        writeln!(out)?;
    } else {
        write_text(&mut out, args, &reports, &synced, &skipped)?;
    }
    out.flush()?;
    let violated = reports.iter().any(|(_, r)| !r.ok()) || synced.iter().any(|r| !r.ok());
    Ok(if violated { Outcome::Violated } else { Outcome::Held })
}

/// Every algorithm in its showcase scenario, and the names of those skipped because their complete graph would be
/// too large, or the diameter their rounds need too costly to measure.
fn showcases(args: &TourArgs) -> anyhow::Result<(Vec<Showcase>, Vec<SkippedOne>)> {
    let mut reports = Vec::new();
    let mut skipped = Vec::new();
    for info in registry::all() {
        if info.needs == elect_algos::Needs::Complete && args.nodes > elect_scenario::MAX_COMPLETE_NODES {
            skipped.push((info.name, Skipped::Complete));
            continue;
        }
        let cfg = SimConfig::showcase(info, args.nodes, args.seed);
        match elect_sim::simulate(&cfg, None) {
            Ok(report) => reports.push((info, report)),
            Err(SimError::Config(ConfigError::NoDiameter { .. })) => skipped.push((info.name, Skipped::Diameter)),
            Err(SimError::Config(e)) => return Err(BadInput(e.to_string()).into()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok((reports, skipped))
}

/// FloodMax on each synchronizer, in the showcase scenario of FloodMax.
fn synchronized(args: &TourArgs) -> anyhow::Result<Vec<Report>> {
    let floodmax = elect_algos::lookup("floodmax").expect("floodmax is registered");
    let mut synced = Vec::new();
    for spec in ["abd", "alpha", "beta", "gamma"] {
        let mut cfg = SimConfig::showcase(floodmax, args.nodes, args.seed);
        cfg.synchronizer = Some(spec.parse().expect("a valid synchronizer"));
        match elect_sim::simulate(&cfg, None) {
            Ok(report) => synced.push(report),
            // Skipped with FloodMax itself, which says why.
            Err(SimError::Config(ConfigError::NoDiameter { .. })) => return Ok(Vec::new()),
            Err(SimError::Config(e)) => return Err(BadInput(e.to_string()).into()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(synced)
}

/// The showcase table, FloodMax's synchronizer table, what was skipped, and how to run any of it.
fn write_text(
    out: &mut impl Write,
    args: &TourArgs,
    reports: &[Showcase],
    synced: &[Report],
    skipped: &[(&str, Skipped)],
) -> io::Result<()> {
    showcase_table(reports).write(out)?;
    writeln!(
        out,
        "COUNTED: the messages the bound counts, only the kinds its formula names (garcia-molina's counts its \
         election RPCs, not the are-you-normal checks a coordinator goes on sending; chang-roberts's its tokens, \
         not the announcement)."
    )?;
    if let Some(r) = synced.first() {
        writeln!(
            out,
            "\nfloodmax on an asynchronous network, {} n={} (m={}, D={}): each synchronizer's set-up apart from its \
             pulses",
            r.topology,
            r.nodes,
            r.edges,
            r.diameter.map_or_else(|| "?".to_owned(), |d| d.to_string())
        )?;
        synchronizer_table(reports, synced).write(out)?;
    }
    for why in [Skipped::Complete, Skipped::Diameter] {
        let names: Vec<&str> = skipped.iter().filter(|(_, w)| *w == why).map(|(n, _)| *n).collect();
        if !names.is_empty() {
            writeln!(out, "\nskipped ({}): {}", why.reason(), names.join(", "))?;
        }
    }
    writeln!(out, "\nseed {}; times in message-delay units; `elect sim --help` runs any of these your way.", args.seed)
}

/// Each algorithm in its showcase scenario: leader, messages, the count its bound is about against the bound, time,
/// properties.
fn showcase_table(reports: &[Showcase]) -> Table {
    let mut table = Table::new(vec![
        "ALGORITHM",
        "TOPOLOGY",
        "SCENARIO",
        "LEADER",
        "MESSAGES",
        "COUNTED",
        "BOUND",
        "HELD",
        "TIME",
        "PROPERTIES",
    ]);
    for (info, r) in reports {
        let bound = r.bounds.first();
        let violated: Vec<String> = r.properties.violations.iter().map(|v| v.property.to_string()).collect();
        table.row(vec![
            r.algorithm.to_owned(),
            format!("{} n={}", r.topology, r.nodes),
            info.showcase.describe.to_owned(),
            r.leader.map_or_else(|| "none".to_owned(), |l| l.to_string()),
            r.messages.total.to_string(),
            bound.map_or_else(|| "-".to_owned(), |b| b.measured.to_string()),
            bound.map_or_else(|| "-".to_owned(), |b| format!("{} = {}", b.name, b.value)),
            bound.map_or("-", |b| if b.held { "yes" } else { "NO" }).to_owned(),
            r.elected_at.map_or_else(|| "-".to_owned(), |t| t.to_string()),
            if violated.is_empty() { "held".to_owned() } else { format!("VIOLATED: {}", violated.join(", ")) },
        ]);
    }
    table
}

/// FloodMax in lock-step and on each synchronizer: messages by role and time.
fn synchronizer_table(reports: &[Showcase], synced: &[Report]) -> Table {
    let mut table = Table::new(vec![
        "SYNCHRONIZER",
        "BUILT",
        "SET-UP",
        "ALGORITHM",
        "ACKS",
        "CONTROL",
        "MESSAGES",
        "PULSES",
        "TIME",
        "LAST PULSE",
        "PROPERTIES",
    ]);
    if let Some((_, r)) = reports.iter().find(|(info, _)| info.name == "floodmax") {
        let time = r.elected_at.map_or_else(|| "-".to_owned(), |t| t.to_string());
        let total = r.messages.total.to_string();
        let held = if r.ok() { "held" } else { "VIOLATED" }.to_owned();
        let none = || "-".to_owned();
        table.row(vec![
            "lock-step".into(),
            none(),
            none(),
            total.clone(),
            none(),
            none(),
            total,
            none(),
            time,
            none(),
            held,
        ]);
    }
    for r in synced {
        let Some(s) = &r.synchronizer else { continue };
        let mut built = Vec::new();
        if let Some(h) = s.summary.tree_height {
            built.push(format!("h={h}"));
        }
        if let (Some(c), Some(p)) = (s.summary.clusters, s.summary.preferred_links) {
            built.push(format!("c={c} P={p}"));
        }
        table.row(vec![
            s.summary.name.to_owned(),
            if built.is_empty() { "-".to_owned() } else { built.join(" ") },
            format!("{} by t={}", s.setup_messages, s.setup_time),
            s.algorithm_messages.to_string(),
            s.acks.to_string(),
            s.control_messages.to_string(),
            r.messages.total.to_string(),
            s.pulses.to_string(),
            r.elected_at.map_or_else(|| "-".to_owned(), |t| t.to_string()),
            s.last_pulse_time.to_string(),
            if r.ok() { "held" } else { "VIOLATED" }.to_owned(),
        ]);
    }
    table
}
