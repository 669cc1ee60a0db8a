//! `elect sweep` and `elect plot`: message complexity across sizes and seeds, in CSV and as a picture.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use elect_algos::synchronizers::Spec;
use elect_sim::{Delay, Ids, InitiatorSpec, Row, SimConfig, SimError, Sizes, Sweep, write_csv};
use elect_viz::{Metric, Point, complexity_plot};
use indicatif::{ProgressBar, ProgressStyle};

use crate::{BadInput, Outcome};

#[derive(Args)]
pub(crate) struct SweepArgs {
    /// Algorithms, comma-separated (see `elect list`).
    #[arg(long, value_delimiter = ',', required = true)]
    algorithms: Vec<String>,
    /// Sizes: a list and doubling ranges, e.g. 8..1048576 (8, 16, ..., 1048576) or 10,100,1000.
    #[arg(long, short)]
    nodes: Sizes,
    /// Seeds 1..=K per algorithm and size.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// A topology that scales with n: ring, complete, line, star, random-regular:K, chordal:K, tree or
    /// geometric:R [default: each algorithm's own].
    #[arg(long, short)]
    topology: Option<elect_sim::TopologyKind>,
    /// ascending, descending or random (a list of ids cannot fit every size).
    #[arg(long, default_value = "random")]
    ids: Ids,
    /// Who starts: all, random:K, weakest or strongest.
    #[arg(long, default_value = "all")]
    initiators: InitiatorSpec,
    /// Message delay: a constant, uniform:A..B, or exp:MEAN.
    #[arg(long, default_value = "1")]
    delay: Delay,
    /// Run each algorithm written in rounds on each of these synchronizers, comma-separated: lockstep (no
    /// synchronizer), abd, alpha, beta[@ROOT], gamma[:K][@ROOT]; the other algorithms run once, as they are.
    #[arg(long, value_delimiter = ',', value_parser = parse_synchronizer)]
    synchronizers: Vec<Option<Spec>>,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Write the CSV to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also draw a plot against n to FILE (.svg or .png): by default election messages per process with each
    /// algorithm's bound (see --metric).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// What --plot shows against n.
    #[arg(long, value_enum, default_value_t = MetricArg::Election)]
    metric: MetricArg,
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

fn parse_synchronizer(s: &str) -> Result<Option<Spec>, String> {
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
    let style = ProgressStyle::with_template("{bar:40} {percent:>3}% of the work · {msg} [{elapsed} / ~{eta}]")
        .expect("a valid template");
    bar.set_style(style);
    bar
}

pub(crate) fn sweep(args: &SweepArgs) -> anyhow::Result<Outcome> {
    if matches!(args.ids, Ids::List(_)) {
        return Err(BadInput("a sweep needs ascending, descending or random ids, not a list".into()).into());
    }
    if args.threads == Some(0) {
        return Err(BadInput("--threads must be at least 1".into()).into());
    }
    if let Some(size) = args.topology.as_ref().and_then(elect_sim::TopologyKind::fixed_size) {
        return Err(BadInput(format!(
            "a {} topology has {size} nodes whatever --nodes says; a sweep needs one that scales with n",
            args.topology.as_ref().expect("checked")
        ))
        .into());
    }
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
    let configs = sweep.configs().map_err(|e| BadInput(e.to_string()))?;
    let total_runs = configs.len() as u64;
    let total_work: u64 = configs.iter().map(|c| c.nodes as u64).sum();
    let bar = progress_bar(total_work);
    let rows = sweep.run(args.threads, &|p| {
        bar.set_position(p.work);
        bar.set_message(format!("{}/{} runs", p.runs, p.total_runs));
    });
    bar.finish_and_clear();
    let rows = match rows {
        Ok(rows) => rows,
        Err(SimError::Config(e)) => return Err(BadInput(e.to_string()).into()),
        Err(e) => return Err(e.into()),
    };
    debug_assert_eq!(rows.len() as u64, total_runs);
    match &args.out {
        Some(path) => {
            let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            write_csv(&rows, BufWriter::new(file)).with_context(|| format!("cannot write {}", path.display()))?;
        }
        None => write_csv(&rows, io::stdout().lock()).context("cannot write the CSV")?,
    }
    if let Some(path) = &args.plot {
        let points: Vec<Point> = rows.iter().map(|r| Point::from_row(r, args.metric.into())).collect();
        complexity_plot(&points, title(args.metric), path, args.metric.into()).map_err(|e| BadInput(e.to_string()))?;
    }
    Ok(report_violations(&rows, &sweep.template))
}

/// Names the runs that violated a property, with the commands that reproduce them.
fn report_violations(rows: &[Row], template: &SimConfig) -> Outcome {
    let bad: Vec<&Row> = rows.iter().filter(|r| !r.ok).collect();
    if bad.is_empty() {
        return Outcome::Held;
    }
    eprintln!("{} of {} runs violated a property; the first ones:", bad.len(), rows.len());
    for r in bad.iter().take(5) {
        let mut cfg = template.clone();
        cfg.algorithm = r.algorithm.to_owned();
        cfg.synchronizer = r.synchronizer.as_deref().and_then(|s| s.parse().ok());
        cfg.nodes = r.n;
        cfg.seed = r.seed;
        eprintln!("  reproduce with: {}", cfg.command_line());
    }
    Outcome::Violated
}

pub(crate) fn plot(args: &PlotArgs) -> anyhow::Result<Outcome> {
    let file = File::open(&args.input).with_context(|| format!("cannot open {}", args.input.display()))?;
    let points = elect_viz::read_csv(BufReader::new(file), args.metric.into())
        .map_err(|e| BadInput(format!("{}: {e}", args.input.display())))?;
    let title = args.title.as_deref().unwrap_or(title(args.metric));
    complexity_plot(&points, title, &args.out, args.metric.into()).map_err(|e| BadInput(e.to_string()))?;
    io::stdout().flush()?;
    Ok(Outcome::Held)
}
