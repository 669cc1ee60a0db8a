//! `elect sweep` and `elect plot`: message complexity across sizes and seeds, in CSV and as a picture.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use elect_algos::synchronizers::Spec;
use elect_scenario::{Delay, Ids, InitiatorSpec, SimConfig};
use elect_sim::{CsvWriter, Row, Shard, SimError, Sizes, Streamed, Sweep};
use elect_viz::{Metric, Point, complexity_plot};
use indicatif::{ProgressBar, ProgressStyle};

use crate::flag_text;
use crate::limits::{self, Limits};
use crate::outcome::{BadInput, Outcome};
use crate::shard::{self, Atomic, Chosen};

#[derive(Args, Debug, serde::Deserialize)]
pub(crate) struct SweepArgs {
    /// Algorithms, comma-separated (see `elect list`).
    #[arg(long, value_delimiter = ',', required = true)]
    pub(crate) algorithms: Vec<String>,
    /// Sizes: a list and doubling ranges, e.g. 8..1048576 (8, 16, ..., 1048576) or 10,100,1000.
    #[arg(long, short)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) nodes: Sizes,
    /// Seeds 1..=K per algorithm and size.
    #[arg(long, default_value_t = 1)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) seeds: u64,
    /// A topology that scales with n: ring, complete, line, star, random-regular:K, chordal:K, tree or
    /// geometric:R [default: each algorithm's own].
    #[arg(long, short)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) topology: Option<elect_scenario::TopologyKind>,
    /// ascending, descending or random (a list of ids cannot fit every size).
    #[arg(long, default_value = "random")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) ids: Ids,
    /// Who starts: all, random:K, weakest or strongest.
    #[arg(long, default_value = "all")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) initiators: InitiatorSpec,
    /// Message delay: a constant, uniform:A..B, or exp:MEAN.
    #[arg(long, default_value = "1")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) delay: Delay,
    /// Run each algorithm written in rounds on each of these synchronizers, comma-separated: lockstep (no
    /// synchronizer), abd, alpha, beta[@ROOT], gamma[:K][@ROOT]; the other algorithms run once, as they are.
    #[arg(long, value_delimiter = ',', value_parser = parse_synchronizer)]
    #[serde(deserialize_with = "synchronizers")]
    pub(crate) synchronizers: Vec<Option<Spec>>,
    /// Threads (default: every core; at most 256).
    #[arg(long)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) threads: Option<usize>,
    /// Refuse runs of more processes than this: a run takes a few hundred bytes per process, and one runs on each
    /// thread at a time.
    #[arg(long, value_name = "N", default_value_t = limits::CLI.sim_nodes)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) max_nodes: usize,
    /// Refuse sweeps of more runs than this (algorithms × synchronizers × sizes × seeds). Rows are written as they
    /// come, so memory does not grow with the runs (but --plot keeps one point per run).
    #[arg(long, value_name = "N", default_value_t = limits::CLI.sweep_runs)]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) max_runs: u64,
    /// Write the CSV to FILE instead of standard output. A shard writes FILE's name with `.shard-I-of-N` before its
    /// extension instead.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Hold every run to a bound on its messages, a formula of n such as `n*(n+1)/2 + n` or `2*n*log2(n)`
    /// (numbers, n, the operators `+ - * / ^`, parentheses, log2): for algorithms without a bound of their own (a
    /// program's), it fills the bound columns, and a run over it counts as failed. An algorithm's own bound is kept.
    #[arg(long, value_name = "FORMULA")]
    pub(crate) bound: Option<String>,
    /// Run only shard I of N (I from 0): the runs whose position in the CSV is I mod N, written atomically to a
    /// file of their own (see --out; `sweep-DIGEST.shard-I-of-N.csv` without it), for `elect merge`. Without it,
    /// a copy of a batch array job takes its shard from the scheduler: SLURM_ARRAY_TASK_ID (with _MIN, _STEP,
    /// _COUNT), JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs, with --shard-count) or AWS_BATCH_JOB_ARRAY_INDEX
    /// (with AWS_BATCH_JOB_ARRAY_SIZE).
    #[arg(long, value_name = "I/N")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) shard: Option<Shard>,
    /// The number of shards, where the scheduler does not say it (Kubernetes: the Job's `completions`).
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) shard_count: Option<u64>,
    /// Also draw a plot against n to FILE (.svg or .png): by default election messages per process with each
    /// algorithm's bound (see --metric).
    #[arg(long, value_name = "FILE")]
    pub(crate) plot: Option<PathBuf>,
    /// What --plot shows against n.
    #[arg(long, value_enum, default_value_t = MetricArg::Election)]
    #[serde(deserialize_with = "flag_text::choice")]
    pub(crate) metric: MetricArg,
}

/// What a plot shows against n.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum MetricArg {
    /// Election messages per process, as each algorithm's headline bound counts them, with the bound.
    Election,
    /// All messages per process (a synchronizer's acks and control messages included).
    Messages,
    /// The time until every process knows the leader.
    Time,
}

impl From<MetricArg> for Metric {
    fn from(m: MetricArg) -> Self {
        match m {
            MetricArg::Election => Self::Election,
            MetricArg::Messages => Self::Messages,
            MetricArg::Time => Self::Time,
        }
    }
}

fn synchronizers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Option<Spec>>, D::Error> {
    flag_text::each_by(d, parse_synchronizer)
}

fn parse_synchronizer(s: &str) -> Result<Option<Spec>, elect_algos::synchronizers::SyncError> {
    if matches!(s.trim(), "lockstep" | "none") { Ok(None) } else { s.parse().map(Some) }
}

#[derive(Args)]
pub(crate) struct PlotArgs {
    /// A CSV written by `elect sweep`.
    #[arg(long, short, value_name = "FILE")]
    input: PathBuf,
    /// The picture to write (.svg or .png).
    #[arg(long, short, value_name = "FILE")]
    out: PathBuf,
    /// The title [default: after the metric].
    #[arg(long)]
    title: Option<String>,
    /// What to show against n.
    #[arg(long, value_enum, default_value_t = MetricArg::Election)]
    metric: MetricArg,
    /// Read no CSV larger than this many bytes (a size like 64M or 1G); only regular files are read.
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes, default_value_t = limits::CLI.file_bytes)]
    max_file_size: u64,
}

fn title(metric: MetricArg) -> &'static str {
    match metric {
        MetricArg::Election => "Election messages per process",
        MetricArg::Messages => "Messages per process",
        MetricArg::Time => "Time until every process knows the leader",
    }
}

fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{bar:40} {percent:>3}% of the work · {msg} [{elapsed}, ~{eta} left]")
        .expect("a valid template");
    bar.set_style(style);
    bar
}

pub(crate) fn sweep(args: &SweepArgs) -> anyhow::Result<Outcome> {
    let threads = check_flags(args)?;
    let chosen = shard::choose(args.shard, args.shard_count, &|name| std::env::var(name).ok())?;
    let sweep = plan(args)?;
    let seen = stream(args, &sweep, threads, chosen.as_ref())?;
    if let Some(path) = &args.plot {
        complexity_plot(&seen.points, title(args.metric), path, args.metric.into())
            .map_err(|e| BadInput(e.to_string()))?;
    }
    Ok(seen.report(&sweep.template))
}

/// Refuses the flags a sweep cannot run whatever the algorithms (a list of ids, too many threads, a topology of a
/// fixed size, more processes than --max-nodes), and returns the number of threads.
fn check_flags(args: &SweepArgs) -> anyhow::Result<Option<usize>> {
    if matches!(args.ids, Ids::List(_)) {
        return Err(BadInput("a sweep needs ascending, descending or random ids, not a list".into()).into());
    }
    let threads = Limits::cli().threads(args.threads)?;
    if let Some(size) = args.topology.as_ref().and_then(elect_scenario::TopologyKind::fixed_size) {
        return Err(BadInput(format!(
            "a {} topology has {size} nodes whatever --nodes says; a sweep needs one that scales with n",
            args.topology.as_ref().expect("checked")
        ))
        .into());
    }
    if let Some(&n) = args.nodes.0.last() {
        Limits::nodes(n, args.max_nodes, "elect sweep")?;
    }
    if let Some(path) = &args.plot {
        crate::limits::output_place("--plot", path, &["svg", "png"])?;
    }
    if let Some(path) = &args.out {
        crate::limits::output_place("--out", path, &[])?;
    }
    Ok(threads)
}

/// The sweep the flags ask for, checked: no more runs than --max-runs, and every run one the simulator accepts.
fn plan(args: &SweepArgs) -> anyhow::Result<Sweep> {
    let mut template = SimConfig::new("", 1);
    template.topology = args.topology.clone();
    template.ids = args.ids.clone();
    template.initiators = args.initiators.clone();
    template.delay = args.delay;
    let sweep = Sweep {
        algorithms: args.algorithms.clone(),
        sizes: args.nodes.clone(),
        seeds: args.seeds,
        synchronizers: args.synchronizers.clone(),
        template,
    };
    let runs = sweep.runs().map_err(|e| BadInput(e.to_string()))?;
    match runs {
        Some(runs) if runs <= args.max_runs => {}
        _ => {
            return Err(BadInput(format!(
                "{} runs is more than the {} a sweep accepts (raise it with --max-runs)",
                runs.map_or_else(|| "more than 2^64".to_owned(), |r| r.to_string()),
                args.max_runs
            ))
            .into());
        }
    }
    sweep.check().map_err(|e| BadInput(e.to_string()))?;
    Ok(sweep)
}

/// Runs `sweep` on `threads` threads with a progress bar, writing each row to the CSV as it comes, and returns
/// what it kept of the rows.
fn stream(args: &SweepArgs, sweep: &Sweep, threads: Option<usize>, chosen: Option<&Chosen>) -> anyhow::Result<Seen> {
    let part = chosen.map_or(Shard::ALL, |c| c.shard);
    let bound = args.bound.as_deref().map(elect_grade::Formula::parse).transpose();
    let bound = bound.map_err(|e| BadInput(format!("--bound: {e}")))?;
    if let Some(bound) = &bound {
        bound.finite_at(sweep.sizes.0.iter().map(|&n| n as u64)).map_err(|e| BadInput(format!("--bound: {e}")))?;
    }
    let bar = progress_bar(sweep.work_of(part).map_err(|e| BadInput(e.to_string()))?);
    let mut atomic = None;
    let mut out: Option<Box<dyn Write>> = Some(match (chosen, &args.out) {
        (Some(chosen), out) => {
            let digest = sweep.digest();
            let path = shard::path(out.as_deref(), &digest, chosen.shard);
            eprintln!("{chosen}: {} runs of sweep {digest} to {}", part.runs_of(total_runs(sweep)?), path.display());
            let file = Atomic::create(&path)?;
            let mut w = BufWriter::new(file.writer()?);
            w.write_all(elect_sim::shard::first_line(&digest, chosen.shard, total_runs(sweep)?).as_bytes())?;
            atomic = Some((file, path));
            Box::new(w)
        }
        (None, Some(path)) => Box::new(BufWriter::new(crate::limits::create(path, "CSV file")?)),
        (None, None) => Box::new(io::stdout().lock()),
    });
    let written = atomic
        .as_ref()
        .map(|(_, p)| p.as_path())
        .or(args.out.as_deref())
        .map_or_else(|| "the CSV".to_owned(), |p| p.display().to_string());
    let mut seen = Seen::default();
    let mut csv: Option<CsvWriter<Box<dyn Write>>> = None;
    let streamed = sweep.stream(
        part,
        threads,
        &|p| {
            bar.set_position(p.work);
            let rate = p.runs as f64 / bar.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{}/{} runs, {rate:.1} runs/s", p.runs, p.total_runs));
        },
        &mut |item| -> anyhow::Result<()> {
            match item {
                Streamed::Kinds(kinds) => {
                    csv = Some(CsvWriter::new(out.take().expect("one header"), kinds.to_vec())?);
                }
                Streamed::Row(mut row) => {
                    if let Some(bound) = &bound {
                        hold_to(&mut row, bound);
                    }
                    csv.as_mut().expect("the header comes first").write(&row)?;
                    seen.add(*row, args.plot.is_some().then_some(args.metric));
                }
            }
            Ok(())
        },
    );
    bar.finish_and_clear();
    match streamed {
        Err(e) => match e.downcast::<SimError>() {
            Ok(SimError::Config(e)) => Err(BadInput(e.to_string()).into()),
            Ok(e) => Err(e.into()),
            Err(e) => Err(e.context(format!("cannot write {written}"))),
        },
        Ok(()) => {
            if let Some(csv) = csv {
                csv.finish().with_context(|| format!("cannot write {written}"))?;
            }
            if let Some((file, _)) = atomic {
                file.commit()?;
            }
            Ok(seen)
        }
    }
}

fn total_runs(sweep: &Sweep) -> anyhow::Result<u64> {
    Ok(sweep.runs().map_err(|e| BadInput(e.to_string()))?.expect("checked by plan"))
}

/// The plot's view of a sweep row.
fn point(row: &Row, metric: Metric) -> Point {
    let (measured, bound) = match metric {
        Metric::Election => (
            row.bound_measured.unwrap_or(row.messages) as f64,
            row.bound.clone().zip(row.bound_value.map(|v| v as f64)),
        ),
        Metric::Messages => (row.messages as f64, None),
        Metric::Time => (row.elected_at.unwrap_or(row.end_time).units(), None),
    };
    Point::new(row.algorithm, row.synchronizer.as_deref(), row.n, measured, bound)
}

/// What a sweep keeps of its rows as they stream by: how many there were, the first that violated a property, and
/// with --plot a point per row.
#[derive(Default)]
struct Seen {
    rows: u64,
    bad: u64,
    first_bad: Vec<Row>,
    points: Vec<Point>,
}

impl Seen {
    fn add(&mut self, row: Row, metric: Option<MetricArg>) {
        self.rows += 1;
        if let Some(metric) = metric {
            self.points.push(point(&row, metric.into()));
        }
        if !row.ok {
            self.bad += 1;
            if self.first_bad.len() < 5 {
                self.first_bad.push(row);
            }
        }
    }

    /// Names the runs that violated a property, with the commands that reproduce them.
    fn report(&self, template: &SimConfig) -> Outcome {
        if self.bad == 0 {
            return Outcome::Held;
        }
        eprintln!("{} of {} runs violated a property or the bound; the first ones:", self.bad, self.rows);
        for r in &self.first_bad {
            let mut cfg = template.clone();
            cfg.algorithm = r.algorithm.to_owned();
            cfg.synchronizer = r.synchronizer.as_deref().and_then(|s| s.parse().ok());
            cfg.nodes = r.n;
            cfg.seed = r.seed;
            eprintln!("  reproduce with: {}", cfg.command_line());
        }
        Outcome::Violated
    }
}

/// Fills a row without a bound of its own with `bound` at its size; a run that sent more fails.
fn hold_to(row: &mut Row, bound: &elect_grade::Formula) {
    if row.bound.is_some() {
        return;
    }
    let value = bound.at(row.n as u64).floor().max(0.0) as u64;
    row.bound = Some(bound.to_string());
    row.bound_value = Some(value);
    row.bound_measured = Some(row.messages);
    if row.messages > value {
        row.ok = false;
    }
}

pub(crate) fn plot(args: &PlotArgs) -> anyhow::Result<Outcome> {
    let limits = Limits { file_bytes: args.max_file_size, ..Limits::cli() };
    let text = limits.read_file(&args.input, "sweep CSV")?;
    let points = elect_viz::read_csv(text.as_bytes(), args.metric.into())
        .map_err(|e| BadInput(format!("{}: {e}", args.input.display())))?;
    let title = args.title.as_deref().unwrap_or(title(args.metric));
    complexity_plot(&points, title, &args.out, args.metric.into()).map_err(|e| BadInput(e.to_string()))?;
    io::stdout().flush()?;
    Ok(Outcome::Held)
}
