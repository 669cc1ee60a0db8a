//! `elect check`: every interleaving of a small scenario, with the algorithm's own properties; and `elect sim
//! --replay`, which re-runs a counterexample the checker saved.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser};
use elect_check::{
    CheckConfig, Counterexample, CounterexampleFile, Fault, Network, Order, Outcome as Checked, Replay, Sent, Step,
};
use elect_core::{NodeId, Status};
use elect_scenario::{Monitor, Record, Scenario, ScenarioFile, SimConfig, TICKS_PER_UNIT, Time};

use crate::flag_text;
use crate::limits::{self, Limits};
use crate::outcome::{BadInput, Outcome};
use crate::scenario_flags::ScenarioArgs;

/// The flags a scenario file describes instead, which `elect check --scenario` refuses: the others (--algorithm,
/// --nodes, --param, --lease, --monitor, --bare-monitor, --heartbeat, --seed) change or add to the file's.
const FILE_ONLY: [&str; 13] = [
    "topology",
    "ids",
    "initiators",
    "delay",
    "delay_bound",
    "prefer",
    "crash",
    "recover",
    "resign",
    "transfer",
    "link_down",
    "partition",
    "synchronizer",
];

#[derive(Args, Clone, Debug, serde::Deserialize)]
pub(crate) struct CheckArgs {
    /// Check the run of this scenario file, or of the one of this name that ships with elect (`elect list
    /// --scenarios`): its algorithm, processes, delays and, with --timed, its faults at their times. --algorithm,
    /// --nodes, --monitor, --bare-monitor and --heartbeat override the file's, and --param and --lease add to its
    /// parameters;
    /// the other scenario flags may not be given with it.
    #[arg(long, value_name = "FILE|NAME", value_hint = clap::ValueHint::FilePath, conflicts_with_all = FILE_ONLY)]
    pub(crate) scenario: Option<PathBuf>,
    #[serde(flatten)]
    #[command(flatten)]
    pub(crate) scenario_args: ScenarioArgs,
    /// Check every arrangement of the ids 1..n instead of one; on a ring, one per class of rotations (rotating the
    /// positions with their ids is a symmetry: the same system with positions renamed).
    #[arg(long, conflicts_with_all = ["ids", "scenario", "save"])]
    pub(crate) every_arrangement: bool,
    /// fifo: each link delivers in sending order; unordered: any message in flight may arrive next; lossy: as
    /// unordered, and any message may be lost; duplicating: as unordered, and messages may arrive twice
    /// (--duplicates times in a run).
    #[arg(long, default_value = "fifo")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) network: Network,
    /// Timers and delays follow the delay bound (the synchronous model of Bully and Garcia-Molina): a message
    /// takes the shortest or longest delay of --delay, a timer fires when it is due, and time passes only once
    /// everything due has happened. Without it any timer may fire at any moment.
    #[arg(long)]
    pub(crate) timed: bool,
    /// How many times a process may crash, at any moment (crash-stop unless --recoveries).
    #[arg(long, default_value_t = 0)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) crashes: u8,
    /// How many times a crashed process may restart from what it made durable, at any moment.
    #[arg(long, default_value_t = 0)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) recoveries: u8,
    /// With --network duplicating: how many messages may arrive twice in a run.
    #[arg(long, default_value_t = 1)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) duplicates: u8,
    /// Breadth-first (the default): a violation comes with a shortest path.
    #[arg(long, conflicts_with = "dfs")]
    pub(crate) bfs: bool,
    /// Depth-first: a smaller frontier; the path found may be longer than needed.
    #[arg(long)]
    pub(crate) dfs: bool,
    /// Go on after a violation, to judge every property (a state that breaks one is not explored further).
    #[arg(long)]
    pub(crate) keep_going: bool,
    /// Partial-order reduction: por (one persistent set of steps per state where that is sound: steps of
    /// different processes, and deliveries to a process whose handler was found not to care about their order)
    /// or none.
    #[arg(long, value_parser = ["por", "none"], default_value = "por")]
    pub(crate) reduction: String,
    /// Keep every state seen and tell states apart field by field, not by their 64-bit fingerprints, so that no
    /// two distinct states can be taken for one (without it, --verbose bounds the odds of that). Each state seen
    /// then costs what a waiting state does (hundreds of bytes instead of 40 to 70): for runs of a few million
    /// states, or to confirm a verdict.
    #[arg(long)]
    pub(crate) exact: bool,
    /// Stop after this many unique states (the verdict is then partial) [default: no bound of its own: memory
    /// (--max-memory) and time (--max-time) are the bounds a search meets]. A visited state takes 40 to 70 bytes
    /// (its fingerprint and how it was reached); the states waiting to be expanded are kept as numbers into tables
    /// of the distinct process states and messages met, each kept once; --verbose says how much each took.
    #[arg(long)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) max_states: Option<usize>,
    /// Explore no path longer than this many steps (the verdict is then partial).
    #[arg(long)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) max_depth: Option<u32>,
    /// Stop after this many seconds (the verdict is then partial).
    #[arg(long, value_name = "SECONDS")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) max_time: Option<f64>,
    /// Threads (default: every core; at most 256).
    #[arg(long)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) threads: Option<usize>,
    /// Stop when the checker's resident memory passes this size (a size like 512M or 8G; the verdict is then
    /// partial and reported as "stopped: memory"). Measured as the process's resident set, from /proc/self/status,
    /// before each batch of states, whose size is kept to what fits [default: 4G, or half of the machine's memory if
    /// that is less: a search that needs more runs for hours, and is better bounded on purpose].
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes)]
    #[serde(deserialize_with = "flag_text::maybe_bytes")]
    pub(crate) max_memory: Option<u64>,
    /// The most disk a breadth-first search may use for the states waiting to be expanded (a size like 16G; 0
    /// keeps them all in memory). Past a quarter of --max-memory, blocks of them go to temporary files in the
    /// system's temporary directory (TMPDIR), unlinked as they are made and read back in their turn: the search
    /// order and every result are the same, and memory then bounds only the states seen (40 to 70 bytes each). A
    /// search that would pass it stops, reported as "stopped: disk" [default: 16G].
    #[arg(long, value_name = "SIZE", value_parser = disk_size, default_value = "16G")]
    #[serde(deserialize_with = "disk")]
    pub(crate) max_disk: u64,
    /// Refuse scenarios of more processes than this: the states grow exponentially with n.
    #[arg(long, value_name = "N", default_value_t = limits::CLI.check_nodes)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) max_nodes: usize,
    /// Read no file larger than this many bytes (a size like 64M), and no --scenario file larger than a 16th of
    /// it (reading TOML takes about a hundred times a file's size in memory); only regular files are read.
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes, default_value_t = limits::CLI.file_bytes)]
    #[serde(deserialize_with = "flag_text::bytes")]
    pub(crate) max_file_size: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also print the search's own figures: the memory each visited state took, the most states waiting, the
    /// distinct process states and messages kept, the odds that two states shared a fingerprint, and at how many
    /// processes deliveries were found to commute (--json always has them).
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Save a counterexample, if one is found, to FILE (JSON); `elect sim --replay FILE` re-runs it.
    #[arg(long, value_name = "FILE")]
    pub(crate) save: Option<PathBuf>,
    /// Write a counterexample, if one is found, as a self-contained HTML viewer to FILE: the topology and the
    /// space-time diagram side by side, one time unit per step.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Run search I of a swarm of N (I from 0), for a state space no one search covers: a depth-first search that
    /// takes each state's successors in an order drawn from --seed and I, bounded as any check is (--max-memory,
    /// --max-time, --max-states), its result written atomically beside --out FILE (named FILE.swarm-I-of-N.json),
    /// for `elect merge`, which gives the verdict. Exits 0 once the file is written, whatever the search found, so
    /// that a scheduler runs the merge after every search. `--swarm array` takes I and N from a batch scheduler's
    /// array variables, as `elect sweep` takes its shard.
    #[arg(
        long,
        value_name = "I/N",
        requires = "out",
        conflicts_with_all = ["every_arrangement", "bfs", "html", "save"]
    )]
    pub(crate) swarm: Option<String>,
    /// With --swarm array: the number of searches, where the scheduler does not say it (Kubernetes).
    #[arg(long, value_name = "N", requires = "swarm")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) swarm_count: Option<u64>,
    /// With --swarm: where the search's result file goes (its name gets .swarm-I-of-N before the extension).
    #[arg(long, value_name = "FILE", requires = "swarm")]
    pub(crate) out: Option<PathBuf>,
    #[serde(flatten)]
    #[command(flatten)]
    pub(crate) labels: crate::labels::LabelArgs,
}

/// What clap's definitions of [`CheckArgs`] say one flag needs of another, for a request (`elect serve`).
pub(crate) const NEEDS: flag_text::Needs = flag_text::Needs {
    requires: &[("swarm", "out"), ("swarm_count", "swarm"), ("out", "swarm")],
    unless: &[("algorithm", &["scenario"])],
};

impl CheckArgs {
    /// The limits, as the flags set them.
    fn limits(&self) -> Limits {
        Limits {
            file_bytes: self.max_file_size,
            check_nodes: self.max_nodes,
            check_memory: self.max_memory,
            ..Limits::cli()
        }
    }

    /// These arguments with limits no higher than `limits`: a counterexample file's arguments may not raise the
    /// limits of the command that reads it.
    pub(crate) fn bounded_by(mut self, limits: &Limits) -> Self {
        self.max_nodes = self.max_nodes.min(limits.check_nodes);
        self.max_file_size = self.max_file_size.min(limits.file_bytes);
        self
    }

    pub(crate) fn config(&self) -> anyhow::Result<CheckConfig> {
        let limits = self.limits();
        let mut sim = match &self.scenario {
            Some(path) => self.scenario_config(&limits, path)?,
            None => self.scenario_args.config()?,
        };
        if let Some(seed) = self.scenario_args.seed {
            sim.seed = seed;
        }
        Limits::nodes(sim.nodes, limits.check_nodes, "elect check")?;
        let threads = limits.threads(self.threads)?;
        let max_time = self.max_time.map(|s| limits::seconds("--max-time", s)).transpose()?;
        let max_memory = limits.check_memory();
        // The frontier's share of memory: the rest is for the states seen, which cannot leave it.
        let spill = max_memory.filter(|_| self.max_disk > 0).map(|memory| elect_check::Spill {
            memory: memory / 4,
            disk: self.max_disk,
            dir: None,
        });
        Ok(CheckConfig {
            threads,
            max_memory,
            spill,
            network: self.network,
            timed: self.timed,
            crashes: self.crashes,
            recoveries: self.recoveries,
            duplicates: self.duplicates,
            order: if self.dfs { Order::Dfs } else { Order::Bfs },
            keep_going: self.keep_going,
            exact: self.exact,
            reduce: self.reduction == "por",
            max_states: self.max_states.unwrap_or(usize::MAX),
            max_depth: self.max_depth.unwrap_or(u32::MAX),
            max_time,
            ..CheckConfig::new(sim)
        })
    }

    /// The run of the scenario file at `path`, with what --algorithm, --nodes, --param, --lease, --monitor,
    /// --bare-monitor, --heartbeat, --judge and --only change in it.
    fn scenario_config(&self, limits: &Limits, path: &Path) -> anyhow::Result<SimConfig> {
        let text = crate::presets::read(limits, path)?;
        crate::program::from_scenario_file(path, &text)?;
        let mut sim =
            ScenarioFile::parse(&path.display().to_string(), &text).map_err(|e| BadInput(e.to_string()))?.config;
        if let Some(algorithm) = &self.scenario_args.algorithm {
            sim.algorithm.clone_from(algorithm);
        }
        if let Some(n) = self.scenario_args.nodes {
            sim.nodes = n;
        }
        for pair in self.scenario_args.param_pairs() {
            let added = elect_algos::Params::parse([pair]).map_err(|e| BadInput(e.to_string()))?;
            for (key, value) in added.iter() {
                sim.params.insert(key, value).map_err(|e| BadInput(e.to_string()))?;
            }
        }
        sim.judge.extend(self.scenario_args.judge.iter().copied());
        sim.only.extend(self.scenario_args.only.iter().copied());
        if self.scenario_args.monitor || self.scenario_args.bare_monitor {
            let heartbeat =
                self.scenario_args.heartbeat.or(sim.monitor.map(|m| m.heartbeat)).unwrap_or(Monitor::DEFAULT_HEARTBEAT);
            sim.monitor = Some(Monitor { heartbeat, bare: self.scenario_args.bare_monitor });
        } else if let (Some(monitor), Some(k)) = (sim.monitor.as_mut(), self.scenario_args.heartbeat) {
            monitor.heartbeat = k;
        }
        Ok(sim)
    }
}

/// The checker's configuration `args` describe, as `elect check` builds it (`elect serve` runs it the same way).
pub(crate) fn config(args: &CheckArgs) -> anyhow::Result<CheckConfig> {
    args.config()
}

pub(crate) fn run(args: &CheckArgs, argv: &[String]) -> anyhow::Result<Outcome> {
    let config = args.config()?;
    let labels = args.labels.read()?;
    if args.every_arrangement {
        return every(&config, args.json);
    }
    if let (Some(flag), Some(out)) = (&args.swarm, &args.out) {
        let chosen = crate::swarm::choose(flag, args.swarm_count)?;
        return crate::swarm::run(config, &chosen, out, &reproducible(argv));
    }
    let spinner = crate::progress::spinner();
    let config = CheckConfig { progress: Some(crate::progress::searching(&spinner)), ..config };
    let outcome = elect_check::check(&config);
    spinner.finish_and_clear();
    let outcome = outcome.map_err(|e| BadInput(e.to_string()))?;
    crate::program::stop_if_failed()?;
    if let (Some(path), Some(c)) = (&args.save, &outcome.counterexample) {
        let text = CounterexampleFile::new(reproducible(argv), c).to_json();
        limits::write_file(path, "counterexample file", text.as_bytes())?;
    }
    // The path replayed: what it does not say (the start's messages in flight, the faults at time 0).
    let replayed = match &outcome.counterexample {
        Some(c) => Some(elect_check::replay(&config, &c.actions).map_err(|e| BadInput(e.to_string()))?),
        None => None,
    };
    if let (Some(path), Some(c), Some(r)) = (&args.html, &outcome.counterexample, &replayed) {
        viewer(path, &config, r, c.loop_start, &labels)?;
    }
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &outcome)?;
        writeln!(out)?;
    } else {
        text(&mut out, &outcome, replayed.as_ref(), args.save.as_deref(), args.verbose)?;
    }
    Ok(if outcome.ok() { Outcome::Held } else { Outcome::Violated })
}

fn every(config: &CheckConfig, json: bool) -> anyhow::Result<Outcome> {
    let every = elect_check::check_every_arrangement(config).map_err(|e| BadInput(e.to_string()))?;
    crate::program::stop_if_failed()?;
    let mut out = io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &every)?;
        writeln!(out)?;
        return Ok(if every.ok() { Outcome::Held } else { Outcome::Violated });
    }
    let show = |ids: &[elect_core::NodeId]| ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
    writeln!(
        out,
        "arrangements {} checked of {}{}",
        every.checked.len(),
        every.arrangements,
        every.symmetry.map(|s| format!(" (the others are {s} of these)")).unwrap_or_default()
    )?;
    let held = every.checked.iter().filter(|(_, o)| o.ok()).count();
    let states: u64 = every.checked.iter().map(|(_, o)| o.states).sum();
    writeln!(out, "held         {held} of {}; {states} states in all", every.checked.len())?;
    for (ids, o) in every.checked.iter().filter(|(_, o)| !o.ok()) {
        let why = o.counterexample.as_ref().map_or_else(
            || if o.complete { "no leader on any path".to_owned() } else { "cut short".to_owned() },
            |c| format!("{} VIOLATED: {} ({} steps)", c.property, c.detail, c.path.len()),
        );
        writeln!(out, "  ids {}: {why}", show(ids))?;
    }
    if let Some(bound) = every.stopped {
        writeln!(
            out,
            "stopped      by {bound}: the arrangements not listed were not checked (the verdict is partial)"
        )?;
    }
    let verdict = match (every.ok(), every.stopped) {
        (true, _) => "held in every arrangement",
        (false, Some(_)) if every.checked.iter().all(|(_, o)| o.counterexample.is_none()) => "not proven",
        _ => "VIOLATED",
    };
    writeln!(out, "verdict      {verdict}")?;
    Ok(if every.ok() { Outcome::Held } else { Outcome::Violated })
}

/// The check's arguments without those that only shape its output.
pub(crate) fn reproducible(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv {
        if std::mem::take(&mut skip) {
            continue;
        }
        match a.as_str() {
            "--json" | "--verbose" | "-v" => {}
            "--save" => skip = true,
            _ if a.starts_with("--save=") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// The command line a counterexample file records for a check given as flags and their texts (a request of `elect
/// serve`; `None` for a flag that takes no value), which `elect sim --replay` parses again: as [`reproducible`],
/// without --json, --verbose and --save.
pub(crate) fn command_words(flags: &[(String, Option<String>)]) -> Vec<String> {
    let words: Vec<String> = flags
        .iter()
        .map(|(long, text)| text.as_ref().map_or_else(|| format!("--{long}"), |t| format!("--{long}={t}")))
        .collect();
    reproducible(&words)
}

/// The summary of a check: what was checked, how, the states, the verdict per property and any counterexample;
/// with `verbose`, the search's own figures (where deliveries commute, memory, fingerprints) too.
fn text(out: &mut impl Write, o: &Checked, r: Option<&Replay>, saved: Option<&Path>, verbose: bool) -> io::Result<()> {
    let plural = |k: u8, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    writeln!(
        out,
        "checked     {} on {} processes: {} links, {}, {}, {}",
        o.algorithm,
        o.nodes,
        format!("{:?}", o.network).to_lowercase(),
        if o.timed { "timed" } else { "untimed" },
        plural(o.crashes, "crash", "crashes"),
        plural(o.recoveries, "recovery", "recoveries"),
    )?;
    writeln!(
        out,
        "search      {}, {}{}",
        if o.order == Order::Bfs { "breadth-first" } else { "depth-first" },
        if o.reduction == "none" { "no reduction" } else { "partial-order reduction" },
        o.reduction_note.map(|n| format!(" ({n})")).unwrap_or_default()
    )?;
    if let Some(c) = o.commuting.filter(|_| verbose) {
        writeln!(
            out,
            "commuting   deliveries commute at {} of {} processes ({} local states, {} messages tried)",
            c.processes, o.nodes, c.local_states, c.messages
        )?;
    }
    writeln!(
        out,
        "states      {} unique, {} transitions, {} final, depth {}, {:.2} s{}",
        o.states,
        o.transitions,
        o.terminal,
        o.depth,
        o.seconds,
        o.stopped.map(|b| format!(" (cut short by {b}: the verdicts are partial)")).unwrap_or_default()
    )?;
    if verbose {
        memory(out, &o.memory)?;
    }
    if o.stopped == Some("--max-memory") {
        writeln!(
            out,
            "stopped: memory (the search reached --max-memory after {} states, depth {})",
            o.states, o.depth
        )?;
    }
    if let Some(why) = &o.memory.disk_error {
        writeln!(out, "stopped: disk ({why}, after {} states, depth {})", o.states, o.depth)?;
    }
    for (k, v) in o.verdicts.iter().enumerate() {
        let label = if k == 0 { "properties" } else { "" };
        let result = if v.result == "violated" { "VIOLATED" } else { v.result };
        // "at end", as every view says it (the JSON keeps the checker's "eventually").
        let when = if v.modality == "eventually" { "at end" } else { v.modality };
        writeln!(out, "{label:<11} {:<17} {when:<11} {result}", v.property)?;
    }
    match &o.counterexample {
        None => writeln!(out, "verdict     {}", if o.ok() { "held" } else { "not proven" })?,
        Some(c) => counterexample(out, o, c, r, saved)?,
    }
    Ok(())
}

/// A `--max-disk` size: one [`limits::parse_bytes`] takes, or 0.
fn disk<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    flag_text::one_by(d, disk_size)
}

fn disk_size(s: &str) -> Result<u64, String> {
    if s.trim() == "0" { Ok(0) } else { limits::parse_bytes(s) }
}

/// What the search kept (`--verbose`): bytes per visited state, the most states waiting, the tables of distinct
/// process states and messages, and the odds that two states shared a fingerprint.
fn memory(out: &mut impl Write, m: &elect_check::Memory) -> io::Result<()> {
    writeln!(
        out,
        "memory      {:.0} bytes per visited state{}; at most {} states waiting",
        m.visited_bytes_per_state,
        if m.edges_bytes_per_state > 0.0 {
            format!(" and {:.0} for the graph's edges", m.edges_bytes_per_state)
        } else {
            String::new()
        },
        m.frontier_peak,
    )?;
    writeln!(out, "            {} process states and {} messages, each kept once", m.process_states, m.messages)?;
    if m.disk_peak > 0 {
        writeln!(out, "            at most {} MiB of waiting states on disk", m.disk_peak.div_ceil(1 << 20))?;
    }
    if m.exact {
        writeln!(out, "            every state kept and told apart field by field (--exact): none taken for another")
    } else {
        writeln!(out, "            odds that two states shared a fingerprint: at most {:.1e}", m.collision_odds)
    }
}

/// The verdict of a check that found counterexample `c`, replayed as `r`: its path step by step (the messages in
/// flight at the start first, and each scheduled fault a step of its own), the other properties violated, and how
/// to replay it.
fn counterexample(
    out: &mut impl Write,
    o: &Checked,
    c: &Counterexample,
    r: Option<&Replay>,
    saved: Option<&Path>,
) -> io::Result<()> {
    writeln!(out, "verdict     {} VIOLATED: {}", c.property, c.detail)?;
    let kind = if c.loop_start.is_some() { "path to a cycle" } else { "shortest path" };
    let kind = if o.order == Order::Dfs { kind.replace("shortest ", "") } else { kind.to_owned() };
    let start = r.map_or(&[][..], |r| &r.start_faults);
    let steps = shown(start, &c.path);
    writeln!(out, "{kind} ({} steps):", steps.len())?;
    if let Some(r) = r {
        let nothing = if r.in_flight.is_empty() { " nothing" } else { "" };
        writeln!(out, "  {:>3}. at the start, in flight:{nothing}", 0)?;
        for m in &r.in_flight {
            writeln!(out, "         {} from {} to {}", m.msg, m.from, m.to)?;
        }
    }
    for (i, (at, step)) in steps.iter().enumerate() {
        if at.is_some() && c.loop_start == *at {
            writeln!(out, "  --- the cycle, which can repeat for ever:")?;
        }
        writeln!(out, "  {:>3}. {step}", i + 1)?;
    }
    for other in &o.more {
        let steps = shown_len(start, &other.path);
        writeln!(out, "also        {} VIOLATED: {} ({steps} steps)", other.property, other.detail)?;
    }
    match saved {
        Some(p) => writeln!(out, "saved to {}; re-run it with: elect sim --replay {}", p.display(), p.display()),
        None => writeln!(out, "save it with --save FILE; `elect sim --replay FILE` re-runs it"),
    }
}

/// The check arguments of a counterexample file, parsed as `elect check` parses its own.
#[derive(Parser)]
#[command(no_binary_name = true)]
pub(crate) struct Recheck {
    #[command(flatten)]
    pub(crate) args: CheckArgs,
}

/// Writes the HTML viewer of a replayed path to `path`.
pub(crate) fn viewer(
    path: &Path,
    config: &CheckConfig,
    r: &Replay,
    loop_start: Option<usize>,
    labels: &elect_viz::Labels,
) -> anyhow::Result<()> {
    let html = viewer_html(config, r, loop_start, labels)?;
    limits::write_file(path, "viewer", html.as_bytes())?;
    Ok(())
}

/// A trace line of a checked path: messages as the simulator's trace writes them, timers in their words.
type Line = Record<'static, serde_json::Value, String, elect_core::View>;

/// The steps of a replayed path as trace records, one time unit per step: the state at the start (statuses and
/// the messages in flight) at time 0, before any step, then each step at its number, a scheduled fault a step of its
/// own, as [`shown`] numbers them.
struct PathTrace {
    records: Vec<Line>,
    /// Messages in flight: (from, to, msg) → (record index of the send, id), oldest first.
    pending: Vec<((NodeId, NodeId, String), usize, u64)>,
    next_id: u64,
    /// The step being recorded, from 1.
    t: usize,
}

/// Step `k` of a path as a time.
fn unit(k: usize) -> Time {
    Time(k as u64 * TICKS_PER_UNIT)
}

impl PathTrace {
    /// The records of path `r` of `config`'s `scenario` (a cycle from `loop_start`, if any).
    fn of(config: &CheckConfig, scenario: &Scenario, r: &Replay, loop_start: Option<usize>) -> Vec<Line> {
        let cycle = if loop_start.is_some() { ", a cycle" } else { "" };
        let run = Record::Run {
            algorithm: r.algorithm.into(),
            topology: format!("{} (checker path{cycle})", scenario.graph.kind()).into(),
            nodes: scenario.ids.len(),
            seed: config.sim.seed,
            delay: None,
            ids: scenario.ids.clone().into(),
            initiators: None,
            steps: true,
        };
        let mut path = Self { records: vec![run], pending: Vec::new(), next_id: 0, t: 0 };
        let last = shown_len(&r.start_faults, r.steps.iter().map(|s| &s.step)) + 1;
        for fault in &r.start_faults {
            path.t += 1;
            path.fault(fault);
        }
        let t = path.t;
        path.statuses(t, &r.initial);
        for m in &r.in_flight {
            path.send(t, last, m);
        }
        path.timers(t, &r.timers, &[]);
        for s in &r.steps {
            path.t += 1;
            path.step(&s.step);
            let t = path.t;
            if let (
                Some(rule),
                Step::Deliver { to: node, .. } | Step::Duplicate { to: node, .. } | Step::Timer { node, .. },
            ) = (s.rule, &s.step)
            {
                path.records.push(Record::Rule { t: unit(t), node: *node, rule: rule.into() });
            }
            for m in &s.sent {
                path.send(t, last, m);
            }
            path.lost(t, &s.lost);
            path.timers(t, &s.armed, &s.disarmed);
            path.statuses(t, &s.changed);
            path.records.extend(s.views.iter().map(|(node, view)| Record::View {
                t: unit(t),
                node: *node,
                view: view.clone(),
            }));
            for v in &s.violations {
                let (property, node, detail) = (v.property, v.node, v.detail.clone().into());
                path.records.push(Record::Violation { t: unit(t), property, node, detail });
            }
        }
        let (events, messages) = (path.t as u64, path.next_id);
        path.records.push(Record::End { t: unit(last), events, messages, terminated: r.settled });
        path.records
    }

    fn statuses(&mut self, t: usize, changed: &[(NodeId, Status)]) {
        self.records.extend(changed.iter().map(|&(node, s)| Record::Status {
            t: unit(t),
            node,
            state: s.state,
            leader: s.leader,
            epoch: s.epoch,
            group: s.group,
        }));
    }

    /// The send of `from` to `to` of `msg` in flight (left in flight if `keep`), now known to arrive at `t`.
    fn take(&mut self, from: NodeId, to: NodeId, msg: &str, keep: bool, t: usize) -> Option<(usize, u64)> {
        let key = (from, to, msg.to_owned());
        let at = self.pending.iter().position(|(k, ..)| *k == key)?;
        let (_, send, id) = if keep { self.pending[at].clone() } else { self.pending.remove(at) };
        if let Record::Send { at, .. } = &mut self.records[send] {
            *at = unit(t);
        }
        Some((send, id))
    }

    /// The messages step `t` dropped on their way to a process that crashed for good, as drops of that step
    /// (`crash`, the reason the viewer draws with the crash rather than as a step of its own).
    fn lost(&mut self, t: usize, lost: &[elect_check::Sent]) {
        for m in lost {
            if let Some((_, id)) = self.take(m.from, m.to, &m.msg, false, t) {
                self.records.push(Record::Drop { t: unit(t), node: m.to, from: m.from, id, reason: "crash".into() });
            }
        }
    }

    /// The timers step `t` set and cancelled. A path has steps, not times: a timer set is due when the checker
    /// chooses, so it is armed "for" the step it was set at, and the viewer draws it full until it fires.
    fn timers(&mut self, t: usize, armed: &[(NodeId, String)], disarmed: &[(NodeId, String)]) {
        for (node, text) in armed {
            self.records.push(Record::Arm { t: unit(t), node: *node, text: text.clone().into(), at: unit(t) });
        }
        for (node, text) in disarmed {
            self.records.push(Record::Disarm { t: unit(t), node: *node, text: text.clone().into() });
        }
    }

    /// The record of `step`, at step `self.t`, and those of the scheduled faults it brought, a step each.
    fn step(&mut self, step: &Step) {
        let t = self.t;
        let record = match step {
            Step::Deliver { from, to, msg } | Step::Duplicate { from, to, msg } => {
                match self.take(*from, *to, msg, matches!(step, Step::Duplicate { .. }), t) {
                    Some((send, id)) => {
                        let Record::Send { kind, .. } = &self.records[send] else { unreachable!("a send is pending") };
                        let (kind, text) = (kind.clone(), msg.clone().into());
                        Record::Deliver { t: unit(t), node: *to, from: *from, id, kind, text, msg: None }
                    }
                    // Never for a path replayed whole; a note keeps the step a step if it happens.
                    None => Record::Note { t: unit(t), note: step.to_string().into() },
                }
            }
            Step::Lose { from, to, msg } => match self.take(*from, *to, msg, false, t) {
                Some((_, id)) => Record::Drop { t: unit(t), node: *to, from: *from, id, reason: "loss".into() },
                None => Record::Note { t: unit(t), note: step.to_string().into() },
            },
            Step::Timer { node, timer } => {
                Record::Timer { t: unit(t), node: *node, text: timer.clone().into(), timer: timer.clone() }
            }
            Step::Crash { node } => Record::Crash { t: unit(t), node: *node },
            Step::Recover { node } => Record::Recover { t: unit(t), node: *node },
            Step::Wait { until, faults } => {
                self.records.push(Record::Note { t: unit(t), note: format!("time passes to {until}").into() });
                for fault in faults {
                    self.t += 1;
                    self.fault(fault);
                }
                return;
            }
        };
        self.records.push(record);
    }

    /// The record of a scheduled fault at step `self.t`, as the simulator writes it.
    fn fault(&mut self, fault: &Fault) {
        let t = unit(self.t);
        let record = match fault {
            Fault::Crash { node } => Record::Crash { t, node: *node },
            Fault::Recover { node } => Record::Recover { t, node: *node },
            Fault::Resign { node } => Record::Command { t, node: *node, cmd: elect_core::Command::Resign },
            Fault::Transfer { node, to } => {
                Record::Command { t, node: *node, cmd: elect_core::Command::Transfer { to: *to } }
            }
            &Fault::Link { from, to, both_ways, up } => Record::Link { t, from, to, both_ways, up },
            Fault::Voters { change, told } => {
                let cmd = change.command();
                return self.records.extend(told.iter().map(|&node| Record::Command { t, node, cmd }));
            }
            Fault::Partition { partition, healed } => {
                Record::Partition { t, partition: partition.clone().into(), healed: *healed }
            }
        };
        self.records.push(record);
    }

    fn send(&mut self, t: usize, last: usize, m: &Sent) {
        let id = self.next_id;
        let (kind, text) = (m.kind.into(), m.msg.clone().into());
        let send =
            Record::Send { t: unit(t), node: m.from, to: m.to, id, at: unit(last), kind, text, msg: m.json.clone() };
        self.records.push(send);
        self.pending.push(((m.from, m.to, m.msg.clone()), self.records.len() - 1, id));
        self.next_id += 1;
    }
}

/// How many steps a path of `steps`, after the scheduled faults `start` at time 0, shows: each scheduled fault is a
/// step of its own.
pub(crate) fn shown_len<'a>(start: &[Fault], steps: impl IntoIterator<Item = &'a Step>) -> usize {
    let faults = |s: &Step| if let Step::Wait { faults, .. } = s { faults.len() } else { 0 };
    start.len() + steps.into_iter().map(|s| 1 + faults(s)).sum::<usize>()
}

/// The steps of a path as `elect check` prints them, after the scheduled faults `start` at time 0: each step with,
/// when it is one of the path's, its place in the path; time passing, then each scheduled fault it brought.
pub(crate) fn shown(start: &[Fault], steps: &[Step]) -> Vec<(Option<usize>, String)> {
    let mut out: Vec<(Option<usize>, String)> = start.iter().map(|f| (None, f.to_string())).collect();
    for (k, step) in steps.iter().enumerate() {
        match step {
            Step::Wait { until, faults } => {
                out.push((Some(k), format!("time passes to {until}")));
                out.extend(faults.iter().map(|f| (None, f.to_string())));
            }
            _ => out.push((Some(k), step.to_string())),
        }
    }
    out
}

/// The HTML viewer of a replayed path: its steps as trace records, one time unit per step, with the `labels` a
/// lecture gives message kinds and roles.
pub(crate) fn viewer_html(
    config: &CheckConfig,
    r: &Replay,
    loop_start: Option<usize>,
    labels: &elect_viz::Labels,
) -> anyhow::Result<String> {
    let scenario = Scenario::build(&config.sim).map_err(|e| BadInput(e.to_string()))?;
    // Each line through `serde_json::Value`, whose keys are in alphabetical order, as these pages have them.
    let mut text = String::new();
    for record in PathTrace::of(config, &scenario, r, loop_start) {
        text.push_str(&serde_json::to_value(&record)?.to_string());
        text.push('\n');
    }
    let mut run =
        elect_viz::Run::parse(&text, elect_viz::Limits::default()).map_err(|e| BadInput(format!("--html: {e}")))?;
    run.labels = labels.clone();
    let html = elect_viz::html_viewer(&run, &elect_viz::Layout::of(&scenario.graph))
        .map_err(|e| BadInput(format!("--html: {e}")))?;
    Ok(html)
}
