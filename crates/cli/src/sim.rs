//! `elect sim`: one run, reported as text or as the JSON object of DESIGN.md.

mod groups;
mod pictures;

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use elect_scenario::{Attrs, DEFAULT_MAX_EVENTS, Loss, Probability, ScenarioFile, SimConfig, format_time, parse_time};
use elect_sim::{Judgement, Report, SimError, SyncReport};

use crate::flag_text;
use crate::limits::{self, Limits};
use crate::outcome::{BadInput, Outcome};
use crate::progress;
use crate::scenario_flags::{DESCRIBED_BY_A_FILE, ScenarioArgs};

#[derive(Args, Debug, serde::Deserialize)]
#[command(mut_arg("algorithm", |a| a.required_unless_present("replay")))]
pub(crate) struct SimArgs {
    /// Run the scenario in this TOML file, or the one of this name that ships with elect (`elect list
    /// --scenarios`; a path has a / or ends in .toml), and check the ending it documents; only --seed, --judge,
    /// --only, --json, --trace and the pictures (--svg, --topology-svg, --html, --shiviz) may be given with it.
    #[arg(long, value_name = "FILE|NAME", value_hint = clap::ValueHint::FilePath, conflicts_with_all = DESCRIBED_BY_A_FILE, conflicts_with_all = SIM_SCENARIO_FLAGS)]
    pub(crate) scenario: Option<PathBuf>,
    /// Re-run a counterexample saved by `elect check --save FILE`, step by step, showing each status change and
    /// judging every state as the checker did; only --json and --html may be given with it.
    #[arg(long, value_name = "FILE", conflicts_with_all = DESCRIBED_BY_A_FILE, conflicts_with_all = SIM_SCENARIO_FLAGS, conflicts_with = "scenario")]
    pub(crate) replay: Option<PathBuf>,
    #[serde(flatten)]
    #[command(flatten)]
    pub(crate) scenario_args: ScenarioArgs,
    /// Crash whoever leads at time T (repeatable).
    #[arg(long = "crash-leader-at", value_name = "T", value_parser = parse_time)]
    #[serde(deserialize_with = "flag_text::times")]
    pub(crate) crash_leader_at: Vec<u64>,
    /// Lose messages: P everywhere, A-B:P on one link (both ways), A>B:P one way (repeatable).
    #[arg(long = "loss", value_name = "P|A-B:P|A>B:P")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) losses: Vec<Loss>,
    /// Deliver each message twice with probability P.
    #[arg(long, value_name = "P", default_value = "0")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) duplicate: Probability,
    /// Stop at time T; properties promised "at end" are judged then if the run has settled. Algorithms that
    /// never fall silent (periodic checks, the monitor's heartbeats) stop by default once they must have settled
    /// after the last fault.
    #[arg(long, value_name = "T", value_parser = parse_time)]
    #[serde(deserialize_with = "flag_text::maybe_time")]
    pub(crate) until: Option<u64>,
    /// (attr, id) ranking: ID=VALUE,... or random:MAX; the attribute decides first, the id breaks ties.
    #[arg(long)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) attr: Option<Attrs>,
    /// fifo: every directed link delivers in sending order; unordered: random delays may reorder messages.
    #[arg(long, value_parser = ["fifo", "unordered"], default_value = "fifo")]
    pub(crate) links: String,
    /// Stop after this many events and report the run as not terminating.
    #[arg(long, default_value_t = DEFAULT_MAX_EVENTS, allow_negative_numbers = true)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) max_events: u64,
    /// Move the nodes of a geometric:R topology by the random-waypoint model: waypoint:SPEED (distance per time
    /// unit in the unit square), or waypoint:SPEED:PAUSE; links follow the radio range R.
    #[arg(long, value_name = "MODEL")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) mobility: Option<elect_scenario::MobilitySpec>,
    /// With --mobility: the nodes stop moving at time T (then the run settles and is judged).
    #[arg(long, value_name = "T", value_parser = parse_time, requires = "mobility")]
    #[serde(deserialize_with = "flag_text::maybe_time")]
    pub(crate) mobility_until: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write the JSON-lines trace of every event to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<PathBuf>,
    /// Draw the space-time diagram to FILE (SVG): a line per process, messages as arrows coloured by kind,
    /// crashes, recoveries and leaders marked; runs of more than 64 processes or 5000 messages get a summary.
    #[arg(long, value_name = "FILE")]
    pub(crate) svg: Option<PathBuf>,
    /// Draw the topology to FILE (SVG): the nodes with their ids and final state, the leader highlighted, and
    /// each node's parent in its algorithm's tree (flooding and ad hoc algorithms).
    #[arg(long, value_name = "FILE")]
    pub(crate) topology_svg: Option<PathBuf>,
    /// Write a self-contained HTML viewer of the run to FILE: the topology and the space-time diagram side by
    /// side, stepping through the events (no network access; open it in any browser).
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    #[serde(flatten)]
    #[command(flatten)]
    pub(crate) labels: crate::labels::LabelArgs,
    /// Export the run to FILE in ShiViz's log format (every event with its vector clock; ShiViz's default
    /// parsing expression on the first line).
    #[arg(long, value_name = "FILE")]
    pub(crate) shiviz: Option<PathBuf>,
    /// Refuse runs of more processes than this: each takes a few hundred bytes, and the simulator runs up to
    /// 33554432 on a machine with the memory.
    #[arg(long, value_name = "N", default_value_t = limits::CLI.sim_nodes)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) max_nodes: usize,
    /// Read no --replay file larger than this many bytes (a size like 64M or 1G), and no --scenario file larger
    /// than a 16th of it (reading TOML takes about a hundred times a file's size in memory); only regular files
    /// are read.
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes, default_value_t = limits::CLI.file_bytes)]
    #[serde(deserialize_with = "flag_text::bytes")]
    pub(crate) max_file_size: u64,
}

/// The flags of `elect sim` alone that describe a run, which a scenario file describes instead (with
/// [`DESCRIBED_BY_A_FILE`]).
const SIM_SCENARIO_FLAGS: [&str; 9] =
    ["crash_leader_at", "losses", "duplicate", "until", "attr", "links", "max_events", "mobility", "mobility_until"];

/// What clap's definitions of [`SimArgs`] say one flag needs of another, for a request (`elect serve`).
pub(crate) const NEEDS: flag_text::Needs =
    flag_text::Needs { requires: &[("mobility_until", "mobility")], unless: &[("algorithm", &["scenario", "replay"])] };

impl SimArgs {
    /// The limits, as the flags set them.
    fn limits(&self) -> Limits {
        Limits { file_bytes: self.max_file_size, sim_nodes: self.max_nodes, ..Limits::cli() }
    }

    pub(crate) fn config(&self) -> anyhow::Result<(SimConfig, Option<ScenarioFile>)> {
        if let Some(path) = &self.scenario {
            let text = crate::presets::read(&self.limits(), path)?;
            crate::program::from_scenario_file(path, &text)?;
            let mut file =
                ScenarioFile::parse(&path.display().to_string(), &text).map_err(|e| BadInput(e.to_string()))?;
            if let Some(seed) = self.scenario_args.seed {
                file.config.seed = seed;
            }
            file.config.judge.extend(self.scenario_args.judge.iter().copied());
            file.config.only.extend(self.scenario_args.only.iter().copied());
            return Ok((file.config.clone(), Some(file)));
        }
        let mut cfg = self.scenario_args.config()?;
        cfg.crash_leader_at = self.crash_leader_at.clone();
        cfg.losses = self.losses.clone();
        cfg.duplicate = self.duplicate;
        cfg.until = self.until;
        cfg.attrs = self.attr.clone().unwrap_or_default();
        cfg.max_events = self.max_events;
        cfg.fifo = self.links == "fifo";
        cfg.mobility = self.mobility;
        cfg.mobility_until = self.mobility_until;
        Ok((cfg, None))
    }
}

/// What a run needs besides its flags: a progress callback, and a trace sink of the caller's own (beside the
/// trace file and the pictures the flags ask for).
#[derive(Default)]
pub(crate) struct Hooks {
    pub(crate) progress: Option<elect_sim::ProgressFn>,
    pub(crate) trace: Option<Box<dyn Write + Send>>,
}

/// One run as `elect sim` makes it, before anything is printed: its configuration, the scenario file it came
/// from, and its report (what `--json` prints). The trace file and the pictures the flags ask for are written.
pub(crate) struct Simulated {
    pub(crate) cfg: SimConfig,
    pub(crate) file: Option<ScenarioFile>,
    pub(crate) report: Report,
}

/// Runs what `args` describe (not `--replay`), as `elect sim` and `elect serve` do.
pub(crate) fn simulate(args: &SimArgs, hooks: Hooks) -> anyhow::Result<Simulated> {
    let (cfg, file) = args.config()?;
    Limits::nodes(cfg.nodes, args.max_nodes, "elect sim")?;
    let to_stdout = args.trace.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if to_stdout && args.json {
        return Err(BadInput("--trace - and --json both write to standard output; give --trace a file".into()).into());
    }
    let trace: Option<Box<dyn Write + Send>> = match &args.trace {
        None => None,
        Some(_) if to_stdout => Some(Box::new(BufWriter::new(io::stdout()))),
        Some(path) => {
            let file = limits::create(path, "trace file")?;
            Some(Box::new(BufWriter::new(file)))
        }
    };
    let trace = match (trace, hooks.trace) {
        (Some(a), Some(b)) => Some(Box::new(pictures::Tee(a, b)) as Box<dyn Write + Send>),
        (a, b) => a.or(b),
    };
    let pictures = pictures::Pictures::new(
        args.svg.as_deref(),
        args.topology_svg.as_deref(),
        args.html.as_deref(),
        args.shiviz.as_deref(),
        args.labels.read()?,
    );
    pictures.check(cfg.nodes)?;
    let trace = pictures.tee(trace);
    let observers = elect_sim::Observers { trace, progress: hooks.progress };
    let report = match elect_sim::simulate_with(&cfg, observers) {
        Ok(report) => report,
        Err(SimError::Config(e)) => return Err(BadInput(e.to_string()).into()),
        Err(e) => return Err(e.into()),
    };
    pictures.write(&cfg)?;
    Ok(Simulated { cfg, file, report })
}

pub(crate) fn run(args: &SimArgs) -> anyhow::Result<Outcome> {
    if let Some(path) = &args.replay {
        return crate::replay::replay(path, args.json, args.html.as_deref(), &args.labels.read()?, &args.limits());
    }
    let to_stdout = args.trace.as_deref().is_some_and(|p| p.as_os_str() == "-");
    let spinner = progress::spinner();
    let hooks = Hooks { progress: Some(progress::reporter(&spinner)), trace: None };
    let result = simulate(args, hooks);
    spinner.finish_and_clear();
    let Simulated { cfg, file, report } = result?;
    crate::program::stop_if_failed()?;
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else if !to_stdout {
        if let Some(description) = file.as_ref().and_then(|f| f.description.as_deref()) {
            writeln!(out, "{}\n", description.trim())?;
        }
        // The text names the groups of an algorithm that keeps several, from the processes' final statuses.
        let groups = groups::wanted(&cfg).then(|| groups::line(&report.statuses)).flatten();
        write_text(&mut out, &cfg, &report, groups.as_deref())?;
    }
    let judgements =
        match file.as_ref().and_then(|f| f.expect.as_ref()) {
            Some(expect) => Some(elect_sim::judge(expect, &report).map_err(|e| {
                BadInput(format!("{}: {e}", args.scenario.as_deref().unwrap_or(Path::new("")).display()))
            })?),
            None => None,
        };
    if let (Some(judgements), false) = (&judgements, args.json || to_stdout) {
        write_judgements(&mut out, judgements)?;
    }
    out.flush()?;
    Ok(outcome(judgements.as_deref(), &report))
}

/// Held when the scenario's expectations were met, or when it has none and every property held; what was missed
/// goes to standard error, with the seed and the command that reproduces the run.
fn outcome(judgements: Option<&[Judgement]>, report: &Report) -> Outcome {
    if let Some(judgements) = judgements {
        let missed: Vec<&Judgement> = judgements.iter().filter(|j| !j.met()).collect();
        if missed.is_empty() {
            return Outcome::Held;
        }
        for j in missed {
            eprintln!("expected {}, got {}", j.expected, j.actual.as_deref().unwrap_or_default());
        }
        eprintln!("seed {}; reproduce with: {}", report.seed, report.reproduce);
        return Outcome::Violated;
    }
    if !report.ok() {
        for v in &report.properties.violations {
            eprintln!("violation: {} ({}) at t={}: {}", v.property, v.cite, v.time, v.detail);
        }
        eprintln!("seed {}; reproduce with: {}", report.seed, report.reproduce);
        return Outcome::Violated;
    }
    Outcome::Held
}

fn write_judgements(out: &mut impl Write, judgements: &[Judgement]) -> io::Result<()> {
    let missed = judgements.iter().filter(|j| !j.met()).count();
    let verdict = if missed == 0 { "ended as expected".to_owned() } else { format!("{missed} NOT as expected") };
    writeln!(out, "scenario    {verdict} ({} expectations)", judgements.len())?;
    for j in judgements {
        match &j.actual {
            None => writeln!(out, "            {}: yes", j.expected)?,
            Some(actual) => writeln!(out, "            {}: NO, got {actual}", j.expected)?,
        }
    }
    Ok(())
}

fn write_text(out: &mut impl Write, cfg: &SimConfig, r: &Report, groups: Option<&str>) -> io::Result<()> {
    let shape = if r.topology == "complete" { "complete graph" } else { &r.topology };
    // A bound told to the timeouts is said beside the delays it may be wrong about (`--delay-bound`).
    let told = cfg.delay_bound.map_or_else(String::new, |b| format!(", timeouts assume {}", format_time(b.ticks())));
    writeln!(
        out,
        "{} on a {shape} of {} (ids {}, {} initiator{}, delay {}{told}, seed {})",
        r.algorithm,
        r.nodes,
        cfg.ids,
        r.initiators,
        if r.initiators == 1 { "" } else { "s" },
        r.delay,
        r.seed
    )?;
    if !["ring", "complete", "line", "star"].contains(&r.topology.as_str()) {
        let diameter = r.diameter.map_or_else(|| "not measured".to_owned(), |d| d.to_string());
        let parts = if r.components == 1 { String::new() } else { format!(", {} disconnected parts", r.components) };
        writeln!(out, "network     {} links, diameter {diameter}{parts}", r.edges)?;
    }
    match (r.leader, r.elected_at) {
        (Some(leader), Some(at)) => {
            writeln!(out, "leader      {leader} (all {} live processes agree; the last learned it at t={at})", r.live)?
        }
        _ => writeln!(out, "leader      none agreed ({} live processes)", r.live)?,
    }
    if let Some(groups) = groups {
        writeln!(out, "groups      {groups}")?;
    }
    let kinds: Vec<String> = r.messages.by_kind.iter().map(|(k, c)| format!("{k} {c}")).collect();
    writeln!(
        out,
        "messages    {} ({}), {} bits, {} events, ended at t={}{}",
        r.messages.total,
        kinds.join(", "),
        r.bits,
        r.events,
        r.end_time,
        if r.terminated { "" } else { " without becoming quiescent" }
    )?;
    if r.lost > 0 || r.duplicated > 0 {
        writeln!(out, "network     {} lost, {} duplicated, {} delivered", r.lost, r.duplicated, r.delivered)?;
    }
    if let Some(m) = &r.mobility {
        writeln!(
            out,
            "mobility    right leader {:.1}% of the time on average (worst node {:.1}%), {} elections, {} link changes, {} part{} at the end",
            100.0 * m.availability,
            100.0 * m.availability_min,
            m.elections,
            m.link_changes,
            m.components_at_end,
            if m.components_at_end == 1 { "" } else { "s" }
        )?;
    }
    if let Some(s) = &r.synchronizer {
        write_synchronizer(out, s)?;
    }
    write_verdicts(out, r)
}

/// The synchronizer's line: what its set-up built and what it cost, set-up apart.
fn write_synchronizer(out: &mut impl Write, s: &SyncReport) -> io::Result<()> {
    let mut built = Vec::new();
    if let Some(root) = s.summary.root {
        built.push(format!("root {root}"));
    }
    if let Some(h) = s.summary.tree_height {
        built.push(format!("tree height {h}"));
    }
    if let (Some(c), Some(hc), Some(p)) = (s.summary.clusters, s.summary.cluster_height, s.summary.preferred_links) {
        let (cs, ps) = (if c == 1 { "" } else { "s" }, if p == 1 { "" } else { "s" });
        built.push(format!("{c} cluster{cs} of height <= {hc}, {p} preferred link{ps}"));
    }
    let built = if built.is_empty() { String::new() } else { format!(" ({})", built.join(", ")) };
    writeln!(
        out,
        "synchronizer {}{built}: set-up {} messages, first pulse at t={}; {} pulses in {} (the last took {}): {} \
         algorithm messages, {} acks, {} control",
        s.summary.name,
        s.setup_messages,
        s.setup_time,
        s.pulses,
        s.pulse_time,
        s.last_pulse_time,
        s.algorithm_messages,
        s.acks,
        s.control_messages
    )
}

/// The bounds against what was measured, and the properties' verdicts.
fn write_verdicts(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if r.bounds.is_empty() {
        writeln!(out, "bounds      none (no closed form applies to this run)")?;
    }
    for (i, b) in r.bounds.iter().enumerate() {
        let label = if i == 0 { "bounds" } else { "" };
        let verdict = if b.held { "held" } else { "EXCEEDED" };
        writeln!(out, "{label:<12}{}: {} <= {} {verdict}", b.name, b.measured, b.value)?;
    }
    let checked: Vec<String> = r
        .properties
        .checked
        .iter()
        .map(|&(name, when)| {
            let when = if when == elect_core::When::Always { "always" } else { "at end" };
            let verdict = if r.properties.violations.iter().any(|v| v.property.name() == name) {
                "VIOLATED"
            } else if r.properties.skipped.iter().any(|s| s.property.name() == name) {
                "not judged"
            } else {
                "held"
            };
            format!("{name} {verdict} ({when})")
        })
        .collect();
    writeln!(out, "properties  {}", checked.join(", "))?;
    for s in &r.properties.skipped {
        writeln!(out, "            {} not judged: {}", s.property, s.reason)?;
    }
    Ok(())
}
